"""Reconnecting every time (issue 24, items 1 and 2; decision 31): ``reconnect=True`` survives
every crash, not only the first; what may have run is never sent again; a crash loop trips the
circuit breaker (calls fail at once with the cause, then the next one tries again); a reconnect
learns the era and the server's declarations again, and ``Servers``' ``on_event`` reports the
loss, the return and a changed tool list. No timed assertions: counts only."""
from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import sys
import time
from pathlib import Path

import pytest

import mcpmini
from fake_server import PLAIN_TOOLS
from harness import run

MAYBE_RAN = "may or may not have run"

# A legacy stdio server that counts every tools/call it runs (one line per call in COUNT) and,
# every EVERY calls, dies in the middle of writing that call's reply (half a line, then exit).
CRASHY = r'''
import json, os, sys
count, every, calls = sys.argv[1], int(sys.argv[2]), 0
for line in sys.stdin:
    msg = json.loads(line)
    rid, method = msg.get("id"), msg.get("method")
    if rid is None:
        continue
    reply = {"jsonrpc": "2.0", "id": rid}
    if method == "initialize":
        reply["result"] = {"protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}},
                           "serverInfo": {"name": "crashy", "version": str(os.getpid())}}
    elif method == "tools/list":
        reply["result"] = {"tools": [{"name": "count", "inputSchema": {"type": "object"}}]}
    elif method == "tools/call":
        calls += 1
        n = msg["params"]["arguments"]["n"]
        with open(count, "a") as f:
            f.write(f"{n}\n")
        reply["result"] = {"content": [{"type": "text", "text": str(n)}]}
        if calls % every == 0:
            text = json.dumps(reply)
            sys.stdout.write(text[: len(text) // 2])
            sys.stdout.flush()
            os._exit(3)
    elif method == "ping":
        reply["result"] = {}
    else:
        reply["error"] = {"code": -32601, "message": "Method not found"}
    print(json.dumps(reply), flush=True)
'''


def crashy(tmp_path: Path, every: int) -> tuple[list[str], Path]:
    script, count = tmp_path / "crashy.py", tmp_path / "count.txt"
    script.write_text(CRASHY)
    return [sys.executable, str(script), str(count), str(every)], count


def ran(count: Path) -> list[int]:
    return [int(n) for n in count.read_text().split()] if count.exists() else []


def test_a_server_that_crashes_every_300_calls_loses_only_the_calls_in_flight(tmp_path):
    argv, count = crashy(tmp_path, 300)
    failed = []
    with mcpmini.SyncClient(argv, reconnect=True, timeout=30) as client:
        for n in range(3000):
            try:
                assert mcpmini.result_text(client.call_tool("count", {"n": n})) == str(n)
            except mcpmini.ConnectionClosed as exc:
                assert MAYBE_RAN in str(exc), exc
                failed.append(n)
        era, server = client.era, client.server_info
    calls = ran(count)
    assert failed == [n for n in range(299, 3000, 300)]            # the one in flight at each crash
    assert sorted(calls) == list(range(3000))                      # each ran once, none twice
    assert era == "legacy" and server["name"] == "crashy" and server["version"] != ""


def test_a_crash_in_the_middle_of_a_reply_is_never_resent_with_concurrent_calls(tmp_path):
    argv, count = crashy(tmp_path, 7)
    outcomes: dict[int, str] = {}

    async def one(client, n):
        try:
            result = await client.call_tool("count", {"n": n})
            outcomes[n] = "ok" if mcpmini.result_text(result) == str(n) else "wrong"
        except mcpmini.ConnectionClosed as exc:
            outcomes[n] = "maybe" if MAYBE_RAN in str(exc) else f"other: {exc}"

    async def main():
        async with mcpmini.Client(argv, reconnect=True, timeout=30) as client:
            for batch in range(40):
                await asyncio.gather(*(one(client, batch * 5 + i) for i in range(5)))
            return await client.list_tools()      # still usable
    tools = run(main(), timeout=90)
    calls = ran(count)
    assert [t["name"] for t in tools] == ["count"]
    assert set(outcomes.values()) <= {"ok", "maybe"}, {n: o for n, o in outcomes.items() if o not in ("ok", "maybe")}
    assert len(calls) == len(set(calls))                          # none ran twice
    assert {n for n, o in outcomes.items() if o == "ok"} <= set(calls)
    assert sum(o == "maybe" for o in outcomes.values()) >= 1      # the crashes did cut calls


def test_sigkill_at_random_moments_every_call_succeeds_or_says_it_may_have_run(fake):
    server = fake("modern-only", tools=PLAIN_TOOLS)
    events: list[tuple[str, dict]] = []
    outcomes: dict[int, str] = {}
    kills = 0

    async def caller(servers, first, stop):
        n = first
        while not stop.is_set():
            try:
                result = await servers.call_tool("f", "echo", {"text": str(n)})
                outcomes[n] = "ok" if mcpmini.result_text(result) == json.dumps({"text": str(n)}) else "wrong"
            except mcpmini.ConnectionClosed as exc:
                outcomes[n] = "maybe" if MAYBE_RAN in str(exc) else f"other: {exc}"
            except mcpmini.MCPError as exc:
                outcomes[n] = f"other: {exc!r}"
            n += 4

    async def killer(stop):
        nonlocal kills
        deadline = time.monotonic() + 40
        while kills < 12 and time.monotonic() < deadline:
            while len(server.starts()) <= kills and time.monotonic() < deadline:
                await asyncio.sleep(0.01)     # the next process has started
            served = sum(o == "ok" for o in outcomes.values())
            while sum(o == "ok" for o in outcomes.values()) < served + 3 and time.monotonic() < deadline:
                await asyncio.sleep(0.01)     # and serves calls before it is killed
            await asyncio.sleep(random.uniform(0, 0.05))
            os.kill(server.starts()[-1]["_start"], signal.SIGKILL)
            kills += 1
        stop.set()

    async def main():
        stop = asyncio.Event()
        async with mcpmini.Servers({"f": server.argv}, timeout=30,
                                   on_event=lambda kind, info: events.append((kind, info))) as servers:
            await asyncio.gather(killer(stop), *(caller(servers, i, stop) for i in range(4)))
            # a request safe to repeat is sent again after the reconnect: the last kill is noticed by now
            last = await servers.request("f", "list_tools", refresh=True)
            return servers.clients["f"].era, dict(servers.failed), last

    era, failed, last = run(main(), timeout=90)
    sent = [m["params"]["arguments"]["text"] for m in server.messages() if m.get("method") == "tools/call"]
    others = {n: o for n, o in outcomes.items() if o not in ("ok", "maybe")}
    print(f"{kills} kills, {len(outcomes)} calls, {sum(o == 'maybe' for o in outcomes.values())} may have run")
    assert not others, others
    assert len(sent) == len(set(sent))                                  # no call ran twice
    assert {str(n) for n, o in outcomes.items() if o == "ok"} <= set(sent)
    assert kills >= 3 and len(server.starts()) == kills + 1 and failed == {} and era == "2026-07-28"
    assert [t["name"] for t in last] == ["echo", "slow"]
    kinds = [k for k, _ in events]
    assert kinds.count("server_lost") == kills and kinds.count("server_back") == kills
    assert all(i["server"] == "f" for _, i in events)


def test_a_reconnect_learns_the_server_again_and_reports_a_changed_tool_list(fake):
    server = fake("modern-only", tools=PLAIN_TOOLS, name="first")
    events = []

    async def main():
        # era_cache=False: a remembered era is tried first (and a server that changes its era
        # between two starts is not what this test is about)
        async with mcpmini.Servers({"f": server.argv}, era_cache=False,
                                   on_event=lambda kind, info: events.append((kind, info))) as servers:
            client = servers.clients["f"]
            before = client.era, client.server_info["name"], [t["name"] for t in await servers.list_tools()]
            pid = server.starts()[0]["_start"]
            server.configure("legacy", tools=PLAIN_TOOLS[:1], name="second")   # the next process
            os.kill(pid, signal.SIGKILL)
            while client.connected:
                await asyncio.sleep(0.02)
            result = await servers.call_tool("f", "echo", {"text": "again"})
            after = client.era, client.server_info["name"], [t["name"] for t in await client.list_tools()]
            return before, after, result
    before, after, result = run(main())
    assert before == ("2026-07-28", "first", ["echo", "slow"])
    assert after[1:] == ("second", ["echo"]) and after[0] == "legacy"
    assert mcpmini.result_text(result) == '{"text": "again"}'
    assert [k for k, _ in events] == ["server_lost", "server_back", "tools_changed"]
    assert "removed slow" in events[2][1]["changes"] and events[2][1]["server"] == "f"


def test_a_crash_loop_opens_the_circuit_breaker_then_the_next_call_tries_again(fake, tmp_path):
    allowed = tmp_path / "may-start"
    allowed.write_text("")
    server = fake("modern-only", tools=PLAIN_TOOLS, require=str(allowed))
    errors = []

    async def main():
        async with mcpmini.Client(server.argv, reconnect=True, timeout=30) as client:
            allowed.unlink()                          # from now on it cannot start
            os.kill(server.starts()[0]["_start"], signal.SIGKILL)
            while client.connected:
                await asyncio.sleep(0.02)
            for _ in range(8):
                try:
                    await client.call_tool("echo", {"text": "x"})
                except mcpmini.ConnectionClosed as exc:
                    errors.append(str(exc))
            allowed.write_text("")
            while True:                               # after the cool-down the next call reconnects
                try:
                    return await client.call_tool("echo", {"text": "back"})
                except mcpmini.ConnectionClosed as exc:
                    assert "not reconnecting for" in str(exc)
                    await asyncio.sleep(0.2)
    result = run(main(), timeout=60)
    assert mcpmini.result_text(result) == '{"text": "back"}'
    # Three failed attempts, then the breaker is open: the other calls fail at once, with the cause.
    assert sum("reconnecting after a lost connection" in e for e in errors) == mcpmini.RECONNECT_FAILURES
    opened = [e for e in errors if "not reconnecting for" in e]
    assert len(opened) == 8 - mcpmini.RECONNECT_FAILURES and all("cannot start" in e for e in opened)
    assert "killed by signal 9" in errors[0] and len(server.starts()) == 2
    assert all(MAYBE_RAN not in e for e in errors)   # none of them was sent


def test_a_client_without_reconnect_stays_down_and_says_what_may_have_run(fake):
    server = fake("modern-only", tools=PLAIN_TOOLS)

    async def main():
        async with mcpmini.Client(server.argv, timeout=30) as client:
            call = asyncio.ensure_future(client.call_tool("slow", {"seconds": 30}))
            while "tools/call" not in server.methods():
                await asyncio.sleep(0.02)
            os.kill(server.starts()[0]["_start"], signal.SIGKILL)
            with pytest.raises(mcpmini.ConnectionClosed, match=MAYBE_RAN):
                await call
            with pytest.raises(mcpmini.ConnectionClosed) as later:
                await client.call_tool("echo", {"text": "x"})
            return str(later.value), client.connected
    later, connected = run(main())
    assert MAYBE_RAN not in later and not connected
    assert len(server.starts()) == 1


def test_the_heartbeat_reconnects_by_the_same_rule(fake, tmp_path):
    """The heartbeat tries a lost server again every beat, but by _Recovery's rule: backoff, then
    the circuit breaker, so a server that cannot start is not started 10 times a second."""
    allowed, attempts = tmp_path / "may-start", tmp_path / "attempts"
    allowed.write_text("")
    server = fake("modern-only", tools=PLAIN_TOOLS, require=str(allowed))
    argv = ["sh", "-c", f'echo x >> "{attempts}"; exec "$0" "$@"', *server.argv]
    events = []

    async def main():
        async with mcpmini.Servers({"f": argv}, heartbeat=0.1,
                                   on_event=lambda kind, info: events.append((kind, info))) as servers:
            allowed.unlink()
            os.kill(server.starts()[0]["_start"], signal.SIGKILL)
            while "f" not in servers.failed:
                await asyncio.sleep(0.02)
            await asyncio.sleep(3.0)               # 30 beats
            tried = len(attempts.read_text().split()) - 1
            allowed.write_text("")
            while "f" in servers.failed:
                await asyncio.sleep(0.05)
            return tried, await servers.call_tool("f", "echo", {"text": "back"})
    tried, result = run(main(), timeout=60)
    print(f"{tried} server starts in 30 heartbeats")
    # attempts at 0, 0.5 s, 1 s later, then the breaker (2 s, 4 s); an attempt may start the
    # server twice (the remembered era, then a probe): without the rule, 30 or more
    assert 1 <= tried <= 8
    assert mcpmini.result_text(result) == '{"text": "back"}'
    assert [k for k, _ in events] == ["server_lost", "server_back"]
