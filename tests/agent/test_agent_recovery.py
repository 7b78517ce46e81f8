"""Servers that fail (issue 5, items 2 and 6): one that cannot start beside one that works,
none that work, a server that crashes after a call (reconnected once, the call retried once,
then marked failed), a shared reconnect for concurrent calls, and who closes what."""
from __future__ import annotations

import sys

import pytest

import mcpmini
from agent_fakes import ScriptedModel, answer, calls
from agent_harness import ECHO_SCHEMA, fake_client, fake_server, received, tool_calls_received
from harness import run

ECHO = {"name": "echo", "inputSchema": ECHO_SCHEMA}


def starts(tmp_path, name="fake"):
    return [m for m in received(tmp_path, name) if "_start" in m]


def test_a_server_that_fails_to_start_is_skipped_and_reported(tmp_path):
    broken = mcpmini.Client([sys.executable, "-c", "import sys; sys.exit(3)"], name="broken", timeout=5)
    missing = mcpmini.Client([str(tmp_path / "no-such-server")], name="missing", timeout=5)
    good = fake_client(tmp_path, [ECHO], name="good")
    events = []
    script = [calls(("good_echo", '{"city": "a"}', "c1")), answer("ok")]
    with ScriptedModel(script) as model:
        transcript = run(mcpmini.run_agent(
            "q", [broken, good, missing], model="m", base_url=model.base_url,
            on_event=lambda kind, info: events.append((kind, info))))
    failed = [(info["server"]) for kind, info in events if kind == "server_failed"]
    assert failed == ["broken", "missing"]
    assert [t["function"]["name"] for t in model.bodies[0]["tools"]] == ["good_echo"]
    assert set(transcript["servers"]["broken"]) == {"error"}
    assert "no-such-server" in transcript["servers"]["missing"]["error"]
    assert transcript["servers"]["good"] == {"tools": ["good_echo"]}
    assert transcript["answer"] == "ok"
    assert good._session is None       # connected by run_agent, so closed by it


def test_no_server_that_works_is_a_connection_error_before_any_model_request(tmp_path):
    broken = mcpmini.Client([sys.executable, "-c", "pass"], name="broken", timeout=5)
    with ScriptedModel([answer("never")]) as model:
        with pytest.raises(mcpmini.ConnectionClosed, match="no MCP server could be used: broken"):
            run(mcpmini.run_agent("q", [broken], model="m", base_url=model.base_url))
    assert model.requests == []


def test_an_unexpandable_config_is_reported_and_skipped(tmp_path, monkeypatch):
    monkeypatch.delenv("AGENT_TEST_UNSET", raising=False)
    entry = mcpmini.ServerConfig(name="needs-var", command=sys.executable, args=["${AGENT_TEST_UNSET}"])
    events = []
    with ScriptedModel([answer("ok")]) as model:
        transcript = run(mcpmini.run_agent(
            "q", [entry, fake_client(tmp_path, [ECHO])], model="m", base_url=model.base_url,
            on_event=lambda kind, info: events.append((kind, info))))
    assert [i["server"] for k, i in events if k == "server_failed"] == ["needs-var"]
    assert "AGENT_TEST_UNSET" in transcript["servers"]["needs-var"]["error"]


def test_a_crashing_server_is_reconnected_once_then_marked_failed(tmp_path):
    client = fake_client(tmp_path, [ECHO], exit_after_calls=1)   # exits after every answer
    # The model takes a moment, so each call finds the server already gone: never sent, so
    # sending it again after the reconnect cannot run it twice (a call that may have reached a
    # dying server is never repeated: tests/http/test_http_hostile.py).
    script = [calls(("fake_echo", '{"city": "1"}', "c1")),
              calls(("fake_echo", '{"city": "2"}', "c2"), delay=0.5),   # dead: reconnect, retry
              calls(("fake_echo", '{"city": "3"}', "c3"), delay=0.5),   # dead again: marked failed
              calls(("fake_echo", '{"city": "4"}', "c4")),              # not tried any more
              answer("gave up")]
    events = []
    with ScriptedModel(script) as model:
        transcript = run(mcpmini.run_agent(
            "q", [client], model="m", base_url=model.base_url,
            on_event=lambda kind, info: events.append((kind, info))))
    answers = [model.bodies[i]["messages"][-1]["content"] for i in range(1, 5)]
    assert answers[0] == answers[1].replace('"2"', '"1"') and '"city": "2"' in answers[1]
    assert answers[2].startswith("Error: the MCP server 'fake' failed")
    assert answers[3].startswith("Error: the MCP server 'fake' is unavailable")
    assert len(starts(tmp_path)) == 2       # the first start and one reconnect
    cities = [c["arguments"]["city"] for c in tool_calls_received(tmp_path)]
    # A call may reach a process that is about to exit (and then be retried on the new one);
    # "4" is never sent: the server was marked failed.
    assert cities[0] == "1" and "2" in cities and "4" not in cities
    assert [i["server"] for k, i in events if k == "server_lost"] == ["fake"]
    assert "failed" in transcript["servers"]["fake"]
    assert transcript["answer"] == "gave up"


def test_concurrent_calls_share_one_reconnect(tmp_path):
    client = fake_client(tmp_path, [ECHO], exit_after_calls=2)
    pair = [calls(("fake_echo", '{"city": "a"}', "c1"), ("fake_echo", '{"city": "b"}', "c2")),
            calls(("fake_echo", '{"city": "c"}', "c3"), ("fake_echo", '{"city": "d"}', "c4"), delay=0.5),
            answer("ok")]
    with ScriptedModel(pair) as model:
        run(mcpmini.run_agent("q", [client], model="m", base_url=model.base_url))
    assert len(starts(tmp_path)) == 2
    assert sorted(c["arguments"]["city"] for c in tool_calls_received(tmp_path)) == ["a", "b", "c", "d"]
    results = [m["content"] for m in model.bodies[2]["messages"] if m["role"] == "tool"]
    assert len(results) == 4 and not any(r.startswith("Error") for r in results)


def test_a_connected_client_stays_open_for_its_owner(tmp_path):
    async def main():
        async with fake_client(tmp_path, [ECHO]) as client:
            with ScriptedModel([answer("ok")]) as model:
                await mcpmini.run_agent("q", [client], model="m", base_url=model.base_url)
            return await client.call_tool("echo", {"city": "x"})
    assert mcpmini.result_text(run(main())) == '{"tool": "echo", "arguments": {"city": "x"}}'


def test_run_agent_takes_a_servers_and_leaves_it_to_its_owner(tmp_path):
    events = []

    async def main():
        servers = mcpmini.Servers({"f": mcpmini.ServerConfig(name="f", **fake_server(tmp_path, [ECHO]).entry()),
                                   "broken": [sys.executable, "-c", "pass"]},
                                  on_event=lambda kind, info: events.append((kind, info)))
        async with servers:
            with ScriptedModel([calls(("f_echo", '{"city": "x"}', "c1")), answer("ok")]) as model:
                transcript = await mcpmini.run_agent("q", servers, model="m", base_url=model.base_url)
            still = await servers.call_tool("f", "echo", {"city": "y"})   # open until its owner leaves
        return transcript, still, servers.clients["f"].connected
    transcript, still, connected = run(main())
    assert transcript["answer"] == "ok" and transcript["tools"] == {"f_echo": {"server": "f", "tool": "echo"}}
    assert "error" in transcript["servers"]["broken"]
    assert "y" in mcpmini.result_text(still) and not connected
    assert [k for k, _ in events] == ["server_failed"]          # reported once, by the Servers
