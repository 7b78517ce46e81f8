"""`mcpmini bridge SERVER` on stdio, driven with raw JSON-RPC lines (issue 19, part 1): ids,
cancellation, progress, server requests, both era translations, what cannot be bridged, a
crashing upstream, shutdown, and a stdout that carries nothing but JSON-RPC."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

import pytest

from bridge_helpers import MODERN, StdioBridge, modern_meta
from harness import EXAMPLES, WEATHER, FakeServer, alive, group_members as group, wait_until

LEGACY_CAPS = {"elicitation": {}}
# (the era of the client in front of the bridge, the era of the server behind it)
ERAS = [("legacy", "legacy"), ("legacy", "modern"), ("modern", "legacy"), ("modern", "modern")]
Bridge = Callable[..., StdioBridge]
Upstream = Callable[..., FakeServer]


def begin(b: StdioBridge, era: str) -> None:
    """What a client of ``era`` does first: initialize (legacy); nothing (modern)."""
    if era == "legacy":
        assert "result" in b.initialize(LEGACY_CAPS)


def params(era: str, **fields: Any) -> dict:
    """Request params as a client of ``era`` sends them (2026-07-28: the protocol `_meta`)."""
    if era == "modern":
        fields["_meta"] = {**modern_meta(), **fields.get("_meta", {})}
    return fields


# -- ids, cancellation, progress ----------------------------------------------------------------

def test_ids_are_the_clients_own_and_never_mixed(bridge: Bridge, upstream: Upstream) -> None:
    server = upstream("legacy")
    b = bridge(server)
    begin(b, "legacy")
    assert "result" in b.call("list", "tools/list")
    n = server.requests("tools/list")[0]["id"]   # the upstream's next ids: n+1, n+2, n+3
    # the client's ids cross the upstream's: its first call uses n+2, its second n+1, its third "n+1"
    calls = [(n + 2, 0.6, "first"), (n + 1, 0.3, "second"), (str(n + 1), 0.1, "third")]
    for rid, seconds, text in calls:
        b.request(rid, "tools/call", {"name": "slow", "arguments": {"seconds": seconds, "text": text}})
    replies = [b.next(lambda m: "id" in m) for _ in calls]
    assert [(r["id"], r["result"]["content"][0]["text"]) for r in replies] == [
        (str(n + 1), "third"), (n + 1, "second"), (n + 2, "first")]
    assert [(m["id"], m["params"]["arguments"]["text"]) for m in server.calls()] == [
        (n + 1, "first"), (n + 2, "second"), (n + 3, "third")]


@pytest.mark.parametrize("client_era,server_era", ERAS)
def test_cancelled_reaches_the_upstream(bridge: Bridge, upstream: Upstream, client_era: str, server_era: str) -> None:
    server = upstream(server_era)
    b = bridge(server)
    begin(b, client_era)
    b.request("slow-1", "tools/call", params(client_era, name="slow", arguments={"seconds": 20}))
    call = wait_until(server.calls)
    assert call, b.stderr
    b.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "slow-1"}})
    cancels = wait_until(server.cancels)
    assert [c["params"]["requestId"] for c in cancels] == [call[0]["id"]]
    assert "result" in b.call("after", "tools/list", params(client_era))
    assert not [m for m in b.kept if m.get("id") == "slow-1"]   # a cancelled request is not answered


@pytest.mark.parametrize("client_era,server_era", ERAS)
def test_progress_comes_back_with_the_clients_token(bridge: Bridge, upstream: Upstream, client_era: str,
                                                    server_era: str) -> None:
    server = upstream(server_era)
    b = bridge(server)
    begin(b, client_era)
    for rid, token in (("p1", "token-A"), ("p2", 777)):
        b.request(rid, "tools/call", params(client_era, name="progress", arguments={"steps": 2},
                                            _meta={"progressToken": token}))
        notes = [b.next(lambda m: m.get("method") == "notifications/progress") for _ in range(2)]
        assert [(n["params"]["progressToken"], n["params"]["progress"]) for n in notes] == [(token, 1), (token, 2)]
        assert b.reply(rid)["result"]["content"][0]["text"] == "done after 2 steps"
    assert [c["params"]["_meta"]["progressToken"] for c in server.calls()] == ["token-A", 777]


# -- server requests ----------------------------------------------------------------------------

def test_legacy_elicitation_is_forwarded_and_answered(bridge: Bridge, upstream: Upstream) -> None:
    server = upstream("legacy")
    b = bridge(server)
    begin(b, "legacy")
    b.request("q", "tools/call", {"name": "ask", "arguments": {}})
    asked = b.next(lambda m: m.get("method") == "elicitation/create")
    assert asked["params"]["message"] == "Which city?" and asked["params"]["requestedSchema"]["required"] == ["city"]
    assert not str(asked["id"]).startswith("ask-")   # the bridge's own id, not the server's
    b.send({"jsonrpc": "2.0", "id": asked["id"], "result": {"action": "accept", "content": {"city": "Lima"}}})
    answer = b.reply("q")["result"]["structuredContent"]["answer"]
    assert answer["result"] == {"action": "accept", "content": {"city": "Lima"}}
    # an error answer reaches the upstream as an error
    b.request("q2", "tools/call", {"name": "ask", "arguments": {}})
    asked = b.next(lambda m: m.get("method") == "elicitation/create")
    b.send({"jsonrpc": "2.0", "id": asked["id"], "error": {"code": -1, "message": "user closed the dialog"}})
    assert b.reply("q2")["result"]["structuredContent"]["answer"]["error"]["message"] == "user closed the dialog"


def test_two_questions_at_once_each_get_their_answer(bridge: Bridge, upstream: Upstream) -> None:
    server = upstream("legacy")
    b = bridge(server)
    begin(b, "legacy")
    b.request("a", "tools/call", {"name": "ask", "arguments": {}})
    b.request("b", "tools/call", {"name": "ask", "arguments": {}})
    first, second = (b.next(lambda m: m.get("method") == "elicitation/create") for _ in range(2))
    assert first["id"] != second["id"]
    replies = []
    for asked, city in ((first, "Oslo"), (second, "Rome")):   # one after the other's call ended
        b.send({"jsonrpc": "2.0", "id": asked["id"], "result": {"action": "accept", "content": {"city": city}}})
        replies.append(b.next(lambda m: m.get("id") in ("a", "b")))
    assert {r["result"]["structuredContent"]["answer"]["result"]["content"]["city"] for r in replies} == {"Oslo", "Rome"}


def test_legacy_client_notifications_reach_a_legacy_server(bridge: Bridge, upstream: Upstream) -> None:
    server = upstream("legacy")
    b = bridge(server)
    b.initialize({"roots": {"listChanged": True}})
    assert "result" in b.call(1, "tools/list")
    b.send({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"})
    assert wait_until(lambda: "notifications/roots/list_changed" in server.methods())


def test_input_required_becomes_an_elicitation_for_a_legacy_client(bridge: Bridge, upstream: Upstream) -> None:
    server = upstream("modern")
    b = bridge(server)
    begin(b, "legacy")
    b.request(5, "tools/call", {"name": "ask", "arguments": {}})
    asked = b.next(lambda m: m.get("method") == "elicitation/create")
    assert asked["params"]["requestedSchema"]["required"] == ["city"]
    b.send({"jsonrpc": "2.0", "id": asked["id"], "result": {"action": "accept", "content": {"city": "Oslo"}}})
    result = b.reply(5)["result"]
    assert "resultType" not in result
    assert result["structuredContent"] == {"answers": {"q": {"action": "accept", "content": {"city": "Oslo"}}},
                                           "state": "s1"}
    first, retry = server.calls()
    assert "inputResponses" not in first["params"] and retry["params"]["requestState"] == "s1"


def test_legacy_server_request_becomes_input_required_for_a_modern_client(bridge: Bridge, upstream: Upstream) -> None:
    server = upstream("legacy")
    b = bridge(server)
    first = b.call(1, "tools/call", params("modern", name="ask", arguments={}))["result"]
    assert first["resultType"] == "input_required"
    (key, request), = first["inputRequests"].items()
    assert request["method"] == "elicitation/create" and request["params"]["message"] == "Which city?"
    answer = {"action": "accept", "content": {"city": "Quito"}}
    done = b.call(2, "tools/call", params("modern", name="ask", arguments={}, requestState=first["requestState"],
                                          inputResponses={key: answer}))["result"]
    assert done["resultType"] == "complete"
    assert done["structuredContent"]["answer"]["result"] == answer
    assert len(server.calls()) == 1   # the upstream's one call was resumed, not repeated


def test_an_abandoned_input_request_is_answered_cancel(bridge: Bridge, upstream: Upstream) -> None:
    server = upstream("legacy")
    b = bridge(server, "--timeout", "1")
    assert b.call(1, "tools/call", params("modern", name="ask", arguments={}))["result"]["resultType"] == \
        "input_required"
    # no retry comes: the upstream call times out, and the server's question gets its answer
    answered = wait_until(lambda: [m for m in server.messages() if str(m.get("id")).startswith("ask-")])
    assert [m.get("result") for m in answered] == [{"action": "cancel"}]
    assert b.close() == 0
    assert "never retrieved" not in b.stderr


# -- era translation ----------------------------------------------------------------------------

@pytest.mark.parametrize("asked,answered", [("2025-06-18", "2025-06-18"), ("2099-01-01", "2025-11-25")])
def test_initialize_is_answered_from_discover(bridge: Bridge, upstream: Upstream, asked: str, answered: str) -> None:
    server = upstream("modern")
    b = bridge(server)
    init = b.initialize(LEGACY_CAPS, version=asked)["result"]
    assert init == {"protocolVersion": answered, "serverInfo": {"name": "bridge-upstream", "version": "9.9.9"},
                    "capabilities": {"tools": {}, "resources": {"subscribe": True}, "logging": {}},
                    "instructions": "upstream help"}
    listed = b.call(1, "tools/list")["result"]
    assert not {"resultType", "ttlMs", "cacheScope"} & listed.keys()
    echoed = b.call(2, "tools/call", {"name": "echo", "arguments": {"n": 1}})["result"]["structuredContent"]
    assert echoed["meta"]["io.modelcontextprotocol/protocolVersion"] == MODERN
    assert echoed["meta"]["io.modelcontextprotocol/clientCapabilities"] == LEGACY_CAPS
    assert echoed["meta"]["io.modelcontextprotocol/clientInfo"] == {"name": "raw-legacy", "version": "5"}
    assert "initialize" not in server.methods()


def test_discover_is_answered_from_initialize(bridge: Bridge, upstream: Upstream) -> None:
    server = upstream("legacy")
    b = bridge(server)
    found = b.call(1, "server/discover", params("modern"))["result"]
    assert found == {"resultType": "complete", "ttlMs": 0, "cacheScope": "private", "supportedVersions": [MODERN],
                     "capabilities": {"tools": {}, "resources": {"subscribe": True}, "logging": {}},
                     "instructions": "upstream help",
                     "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "bridge-upstream", "version": "9.9.9"}}}
    listed = b.call(2, "tools/list", params("modern"))["result"]
    assert (listed["resultType"], listed["ttlMs"], listed["cacheScope"]) == ("complete", 0, "private")
    echoed = b.call(3, "tools/call", params("modern", name="echo", arguments={},
                                            _meta={"progressToken": "t"}))["result"]
    assert echoed["resultType"] == "complete"
    assert echoed["structuredContent"]["meta"] == {"progressToken": "t"}   # the protocol keys stripped
    [init] = server.requests("initialize")
    assert init["params"]["clientInfo"] == {"name": "raw-modern", "version": "7"}
    assert init["params"]["capabilities"] == {"elicitation": {"form": {}}}


def test_what_cannot_be_bridged_is_an_error_naming_it(bridge: Bridge, upstream: Upstream) -> None:
    legacy_server = upstream("legacy")
    b = bridge(legacy_server)
    error = b.call(1, "subscriptions/listen", params("modern"))["error"]
    assert error["code"] == -32601 and "subscriptions/listen cannot be bridged" in error["message"]
    # a legacy server request while two calls of a modern client wait: which one asked is unknown
    b.request("slow", "tools/call", params("modern", name="slow", arguments={"seconds": 20}))
    assert wait_until(legacy_server.calls)
    answer = b.call(2, "tools/call", params("modern", name="ask", arguments={}))["result"]["structuredContent"]
    assert "elicitation/create cannot be bridged" in answer["answer"]["error"]["message"]
    modern_server = upstream("modern")
    b = bridge(modern_server)
    begin(b, "legacy")
    error = b.call(1, "resources/subscribe", {"uri": "weather://cities"})["error"]
    assert "resources/subscribe cannot be bridged" in error["message"] and "subscriptions/listen" in error["message"]


# -- failures and shutdown ----------------------------------------------------------------------

@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_upstream_crash_mid_call_is_an_error_then_a_new_upstream(bridge: Bridge, upstream: Upstream, era: str) -> None:
    server = upstream(era)
    b = bridge(server)
    begin(b, era)
    error = b.call(1, "tools/call", params(era, name="crash", arguments={"delay": 0.2, "code": 3}))["error"]
    assert "exited with status 3" in error["message"] and "crashing on purpose" in error["message"]
    assert "result" in b.call(2, "tools/list", params(era))   # the next request reconnects
    assert len(server.starts()) == 2


def stubborn_bridge(bridge: Bridge, upstream: Upstream) -> tuple[StdioBridge, list[int], int]:
    """A bridge whose upstream ignores SIGTERM and stdin's end and has a child (its slow
    call's), with that call in flight: the bridge, the upstream's processes, its process group."""
    server = upstream("legacy", ignore_eof=True, ignore_sigterm=True)
    b = bridge(server)
    begin(b, "legacy")
    b.request(1, "tools/call", {"name": "slow", "arguments": {"seconds": 30}})
    assert wait_until(lambda: server.calls() and server.children())
    [start] = server.starts()
    pids = [start["_start"], *server.children()]
    assert all(alive(p) for p in pids)
    return b, pids, start["pgid"]


def test_stdin_eof_ends_the_bridge_and_its_upstream(bridge: Bridge, upstream: Upstream) -> None:
    b, pids, pgid = stubborn_bridge(bridge, upstream)
    began = time.monotonic()
    assert b.close(timeout=10) == 0
    print(f"bridge exited {time.monotonic() - began:.2f} s after stdin's end")
    assert wait_until(lambda: not group(pgid) and not any(alive(p) for p in pids), 3), group(pgid)
    assert group(b.proc.pid) == []


def test_sigterm_ends_the_bridge_and_its_upstream(bridge: Bridge, upstream: Upstream) -> None:
    b, pids, pgid = stubborn_bridge(bridge, upstream)
    os.kill(b.proc.pid, signal.SIGTERM)
    assert b.proc.wait(10) == 143   # SIGTERM (issue 18)
    assert "Fatal Python error" not in b.stderr   # no thread held a stream's lock at exit
    assert wait_until(lambda: not group(pgid), 3), group(pgid)


@pytest.mark.parametrize("end", ["eof", "sigterm"])
def test_the_end_deletes_a_legacy_http_session(bridge: Bridge, tmp_path: Path, end: str) -> None:
    log = tmp_path / "http.log"
    with open(log, "wb") as sink:
        server = subprocess.Popen([sys.executable, EXAMPLES / "weather_http_server.py", "--port", "0"],
                                  stdout=subprocess.PIPE, stderr=sink, stdin=subprocess.DEVNULL, text=True)
    try:
        b = bridge(server.stdout.readline().strip(), "--protocol", "legacy")
        begin(b, "legacy")
        assert "result" in b.call(1, "tools/list")
        if end == "eof":
            assert b.close() == 0
        else:
            b.proc.terminate()
            assert b.proc.wait(10) == 143   # SIGTERM (issue 18)
        assert "ended by client" in log.read_text()   # its DELETE came before the bridge exited
    finally:
        server.terminate()
        server.wait(10)


def test_stdout_carries_only_jsonrpc(bridge: Bridge, upstream: Upstream) -> None:
    server = upstream("legacy")
    b = bridge(server, "-v", "--trace")
    begin(b, "legacy")
    b.send(b"this is not JSON")
    assert b.next(lambda m: m.get("id", 0) is None)["error"]["code"] == -32700
    assert b.call(1, "tools/call", {"name": "noisy", "arguments": {}})["result"]["content"][0]["text"] == \
        "still here"
    b.request(2, "tools/call", {"name": "log", "arguments": {"data": "a log message"}})
    assert b.next(lambda m: m.get("method") == "notifications/message")["params"]["data"] == "a log message"
    assert "result" in b.reply(2)
    assert b.close() == 0
    for line in b.raw:
        assert json.loads(line)["jsonrpc"] == "2.0", line
    assert "mcpmini: trace" in b.stderr and "Server started on stdout" not in b"".join(b.raw).decode()


def test_a_message_longer_than_many_reads(bridge: Bridge, upstream: Upstream) -> None:
    server = upstream("legacy")
    b = bridge(server)
    begin(b, "legacy")
    text = "长" * (3 << 20)   # 9 MiB of UTF-8 on one line
    echoed = b.call(1, "tools/call", {"name": "echo", "arguments": {"text": text}})
    assert echoed["result"]["structuredContent"]["args"]["text"] == text


def test_what_was_answered_before_stdin_ends_is_written(proc: Callable[..., Any], upstream: Upstream) -> None:
    server = upstream("legacy")
    done = proc("bridge", server.cmdline, input=b"not JSON\n", timeout=30)
    assert done.returncode == 0
    assert json.loads(done.stdout) == {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}}
    assert not server.record.exists()   # nothing asked: no upstream started


def test_eager_connects_at_start_lazy_at_the_first_request(bridge: Bridge, upstream: Upstream) -> None:
    lazy_server, eager_server = upstream("legacy"), upstream("legacy")
    lazy = bridge(lazy_server)
    bridge(eager_server, "--eager")
    assert wait_until(lambda: "notifications/initialized" in eager_server.methods())
    assert not lazy_server.record.exists()
    begin(lazy, "legacy")
    assert lazy_server.record.exists()


@pytest.mark.parametrize("client_era", ["legacy", "modern"])
@pytest.mark.parametrize("server_era", ["legacy", MODERN])
def test_the_example_server_behind_the_bridge(bridge: Bridge, client_era: str, server_era: str) -> None:
    b = bridge([sys.executable, str(WEATHER)], "--protocol", server_era)
    begin(b, client_era)
    called = b.call(1, "tools/call", params(client_era, name="get_forecast", arguments={"city": "Hangzhou"}))
    assert "Hangzhou" in called["result"]["content"][0]["text"]
    read = b.call(2, "resources/read", params(client_era, uri="weather://forecast/Tokyo"))["result"]
    assert "Tokyo" in read["contents"][0]["text"]
    got = b.call(3, "prompts/get", params(client_era, name="umbrella_advice", arguments={"city": "London"}))
    assert len(got["result"]["messages"]) == 2
    assert ("resultType" in read) == (client_era == "modern")
