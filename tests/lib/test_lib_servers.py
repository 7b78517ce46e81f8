"""mcpmini.Servers (issue 15, part 1): many servers at once, failure isolation, per-server
timeouts, lists with a ``server`` key, the agent's names, reconnects without resending what
may have run (decision 1), and the heartbeat (server_lost / server_back, calls that fail at
once with the cause)."""
from __future__ import annotations

import asyncio
import os
import signal
import sys
import time

import pytest

import mcpmini
from fake_server import PLAIN_TOOLS
from harness import EXAMPLES, WEATHER as WEATHER_SERVER, run

WEATHER = [sys.executable, str(WEATHER_SERVER)]


async def wait_for(predicate, timeout: float = 10.0):
    """Poll until ``predicate()`` is truthy; its value (None at the deadline)."""
    deadline = time.monotonic() + timeout
    while not (value := predicate()) and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    return value or None


def test_a_failing_and_a_hanging_server_leave_the_others_usable(fake, tmp_path):
    failing = fake(require=str(tmp_path / "missing"), label="broken")   # exits 4 at once
    hanging = fake(silent=True, label="hung")                           # never answers
    events = []

    async def main():
        async with mcpmini.Servers({"weather": WEATHER, "broken": failing.argv, "hung": hanging.argv},
                                   timeout=1.5, on_event=lambda kind, info: events.append((kind, info))) as servers:
            assert list(servers.clients) == ["weather"] and servers.names == ["weather", "broken", "hung"]
            result = await servers.call_tool("weather", "get_forecast", {"city": "Hangzhou"})
            with pytest.raises(mcpmini.ConnectionClosed, match="broken: unavailable: .*cannot start"):
                await servers.call_tool("broken", "anything")
            with pytest.raises(mcpmini.ConfigError, match="no server named 'nope'"):
                await servers.call_tool("nope", "anything")
            return servers.failed, result
    failed, result = run(main())
    assert isinstance(failed["broken"], mcpmini.ConnectionClosed) and "status 4" in str(failed["broken"])
    assert isinstance(failed["hung"], mcpmini.RequestTimeout)     # the per-server timeout
    assert [(k, i["server"]) for k, i in events] == [("server_failed", "broken"), ("server_failed", "hung")]
    assert "Hangzhou" in mcpmini.result_text(result)


def test_an_entry_that_cannot_be_built_is_failed_not_raised(monkeypatch):
    monkeypatch.delenv("LIB_UNSET", raising=False)
    entry = mcpmini.ServerConfig(name="needs-var", command=sys.executable, args=["${LIB_UNSET}"])

    async def main():
        async with mcpmini.Servers([entry, WEATHER]) as servers:
            return servers.failed, list(servers.clients)
    failed, usable = run(main())
    assert isinstance(failed["needs-var"], mcpmini.ConfigError) and "LIB_UNSET" in str(failed["needs-var"])
    assert len(usable) == 1


def test_lists_carry_the_server_and_names_are_the_agents(fake):
    tools = [{"name": "get_forecast", "inputSchema": {"type": "object"}},
             {"name": "dotted.name", "inputSchema": {"type": "object"}}]
    other = fake("legacy", tools=tools, resources=[{"uri": "x://1", "name": "one"}], prompts=[],
                 instructions=None)

    async def main():
        async with mcpmini.Servers(mcpmini.load_config([str(EXAMPLES / "mcp.json")], discover=False)
                                   | {"other": mcpmini.ServerConfig(name="other", command=other.argv[0],
                                                                    args=other.argv[1:])}) as servers:
            return (await servers.list_tools(), await servers.list_resources(),
                    await servers.list_prompts(), servers.qualified_names(), servers.instructions)
    tools_seen, resources, prompts, names, instructions = run(main())
    assert [(t["server"], t["name"]) for t in tools_seen] == [
        ("weather", "get_forecast"), ("other", "get_forecast"), ("other", "dotted.name")]
    assert tools_seen[0]["inputSchema"]["required"] == ["city"]          # as the server sent it
    assert [(r["server"], r["uri"]) for r in resources] == [("weather", "weather://cities"), ("other", "x://1")]
    assert [(p["server"], p["name"]) for p in prompts] == [("weather", "umbrella_advice")]
    assert names == {"weather_get_forecast": ("weather", "get_forecast"),
                     "other_get_forecast": ("other", "get_forecast"),
                     "other_dotted_name": ("other", "dotted.name")}
    assert names == mcpmini._function_names(list(names.values()))       # the agent's mapping
    assert list(instructions) == ["weather"] and "DEMO DATA" in instructions["weather"]


def test_the_same_server_twice_gets_two_names():
    async def main():
        async with mcpmini.Servers([WEATHER, WEATHER]) as servers:
            await servers.list_tools()
            return servers.names, servers.qualified_names()
    names, qualified = run(main())
    assert names[1] == names[0] + "-2" and len(qualified) == 2


def test_a_server_that_died_is_reconnected_for_the_next_call(fake):
    server = fake("modern-only", tools=PLAIN_TOOLS)

    async def main():
        async with mcpmini.Servers({"f": server.argv}) as servers:
            await servers.call_tool("f", "echo", {"text": "1"})
            os.kill(server.starts()[0]["_start"], signal.SIGKILL)
            assert await wait_for(lambda: not servers.clients["f"].connected)
            result = await servers.call_tool("f", "echo", {"text": "2"})   # reconnect, then send
            return result, dict(servers.failed)
    result, failed = run(main())
    assert mcpmini.result_text(result) == '{"text": "2"}' and failed == {}
    assert len(server.starts()) == 2


def test_a_call_in_flight_when_the_server_dies_is_not_sent_again(fake):
    server = fake("modern-only", tools=PLAIN_TOOLS)

    async def main():
        async with mcpmini.Servers({"f": server.argv}) as servers:
            call = asyncio.ensure_future(servers.call_tool("f", "slow", {"seconds": 30}))
            assert await wait_for(lambda: "tools/call" in server.methods())
            os.kill(server.starts()[0]["_start"], signal.SIGKILL)
            with pytest.raises(mcpmini.ConnectionClosed, match="may or may not have run"):
                await call
            return dict(servers.failed), servers.clients["f"].connected
    failed, connected = run(main())
    assert failed == {} and connected                     # reconnected for what comes next
    assert server.methods().count("tools/call") == 1      # and never resent


def test_heartbeat_reports_a_lost_server_fails_calls_at_once_and_brings_it_back(fake, tmp_path):
    allowed = tmp_path / "may-start"
    allowed.write_text("")
    server = fake("legacy", tools=PLAIN_TOOLS, require=str(allowed))
    events = []

    async def main():
        async with mcpmini.Servers({"f": server.argv}, heartbeat=0.2,
                                   on_event=lambda kind, info: events.append((kind, info))) as servers:
            assert await wait_for(lambda: "ping" in server.methods())   # idle: pinged (legacy)
            allowed.unlink()                                  # it cannot start again for now
            os.kill(server.starts()[0]["_start"], signal.SIGKILL)
            assert await wait_for(lambda: "f" in servers.failed)
            began = time.monotonic()
            with pytest.raises(mcpmini.ConnectionClosed, match="f: unavailable: .*killed by signal 9"):
                await servers.call_tool("f", "echo")
            waited = time.monotonic() - began
            allowed.write_text("")
            assert await wait_for(lambda: "f" not in servers.failed)
            return waited, await servers.call_tool("f", "echo", {"text": "back"})
    waited, result = run(main())
    print(f"a call to the lost server failed after {waited * 1000:.1f} ms")
    assert [k for k, _ in events] == ["server_lost", "server_back"]
    assert "killed by signal 9" in events[0][1]["error"]
    assert mcpmini.result_text(result) == '{"text": "back"}'


def test_heartbeat_finds_a_hung_server_and_calls_to_it_fail_at_once_with_the_cause(fake):
    server = fake("modern-only", tools=PLAIN_TOOLS, hang_after=1)   # answers server/discover, then nothing
    events = []

    async def main():
        async with mcpmini.Servers({"f": server.argv}, heartbeat=0.3,
                                   on_event=lambda kind, info: events.append((kind, info))) as servers:
            assert await wait_for(lambda: "f" in servers.failed)
            with pytest.raises(mcpmini.ConnectionClosed, match=r"f: unavailable: server/discover timed out"):
                await servers.call_tool("f", "echo")
            return await wait_for(lambda: [k for k, _ in events if k == "server_back"])
    assert run(main(), timeout=20)
    assert events[0][0] == "server_lost" and "timed out" in events[0][1]["error"]
    assert server.methods().count("server/discover") >= 2     # the heartbeat's ping in 2026-07-28
    assert "ping" not in server.methods()


def test_heartbeat_leaves_a_busy_connection_alone(fake):
    server = fake("modern-only", tools=PLAIN_TOOLS)
    events = []

    async def main():
        async with mcpmini.Servers({"f": server.argv}, heartbeat=0.2,
                                   on_event=lambda kind, info: events.append((kind, info))) as servers:
            return await servers.call_tool("f", "slow", {"seconds": 1.5})
    assert mcpmini.result_text(run(main())) == "slept"
    assert events == [] and server.methods().count("server/discover") == 1   # no ping meanwhile


def test_servers_leaves_connected_clients_open_and_closes_its_own():
    async def main():
        async with mcpmini.Client(WEATHER) as mine:
            other = mcpmini.Client(WEATHER)
            async with mcpmini.Servers([mine, other]):
                pass
            return mine.connected, other.connected
    assert run(main()) == (True, False)
