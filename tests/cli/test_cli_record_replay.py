"""Record and replay (issue 28; decision 28): ``--record FILE`` appends every JSON-RPC message with
each server as JSON Lines (0600, redacted, no headers or env), and ``mcpmini replay FILE`` is an MCP
server answering from it, on stdio or on loopback HTTP, so a ``check`` or an ``ask`` runs offline."""
from __future__ import annotations

import json
import os
import re
import shlex
import stat
import subprocess
import sys
import threading

import mcpmini
from harness import EXAMPLES, MCPMINI, running, wait_until

WEATHER = shlex.join([sys.executable, str(EXAMPLES / "weather_server.py")])
CALLS = ["--call", "get_forecast", "city=Hangzhou", "--read", "weather://cities",
         "--prompt", "umbrella_advice", "city=Hangzhou"]


def replay(path, *options: str) -> str:
    """The SERVER command line of ``mcpmini replay PATH``."""
    return shlex.join([sys.executable, str(MCPMINI), "replay", str(path), *options])


def lines(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def checklist(out: str) -> list[list[tuple[str, str, str]]]:
    """``check --json`` without what differs between runs: suite names and timings."""
    return [[(c["name"], c["status"], c["detail"]) for c in s["checks"]] for s in json.loads(out)["suites"]]


def test_record_holds_every_message_with_era_and_transport_once_per_connection(cli, tmp_path):
    record = tmp_path / "session.jsonl"
    assert cli("--record", record, "check", WEATHER, *CALLS).code == 0
    assert stat.S_IMODE(os.stat(record).st_mode) == 0o600
    entries = lines(record)
    connections = [e for e in entries if "era" in e]
    assert [(c["era"], c["transport"], c["protocol"]) for c in connections] == [
        ("2026-07-28", "stdio", "2026-07-28"), ("legacy", "stdio", "2025-11-25")]
    messages = [e for e in entries if "message" in e]
    assert len(messages) + len(connections) == len(entries)
    assert all(set(e) == {"t", "server", "direction", "message"} and e["direction"] in ("sent", "received")
               for e in messages)
    offsets = [e["t"] for e in entries]
    assert offsets == sorted(offsets) and offsets[0] >= 0
    methods = [e["message"].get("method") for e in messages if e["direction"] == "sent"]
    for method in ("server/discover", "initialize", "notifications/initialized", "tools/list", "tools/call",
                   "resources/read", "prompts/get"):
        assert method in methods
    cli("--record", record, "tools", WEATHER)   # appended, not replaced
    assert len(lines(record)) > len(entries)


def test_no_header_env_or_known_secret_reaches_the_record(cli, fake, tmp_path):
    server = fake("legacy", "--echo-env", "MY_TOKEN")
    record = tmp_path / "r.jsonl"
    result = cli("--record", record, "-e", "MY_TOKEN=hunter2-very-secret", "call", server.cmdline, "say")
    assert result.code == 0
    text = record.read_text()
    assert "hunter2-very-secret" not in text and "said ***" in text


def test_library_record_keyword(tmp_path):
    record = tmp_path / "lib.jsonl"
    with mcpmini.SyncClient([sys.executable, str(EXAMPLES / "weather_server.py")], record=str(record)) as client:
        client.list_tools()
    assert client.target.record == str(record)
    assert [e["message"]["method"] for e in lines(record) if e.get("direction") == "sent"][-1] == "tools/list"


def test_check_against_replay_gives_the_same_checklist(cli, tmp_path):
    record = tmp_path / "session.jsonl"
    live = cli("--record", record, "check", WEATHER, *CALLS, "--json")
    replayed = cli("check", replay(record), *CALLS, "--json")
    assert live.code == replayed.code == 0
    assert checklist(replayed.out) == checklist(live.out)
    assert [s["name"].rsplit(" ", 1)[1] for s in json.loads(replayed.out)["suites"]] == ["(2026-07-28)", "(2025-11-25)"]


def test_a_recording_of_one_era_lands_auto_mode_in_that_era(cli, tmp_path):
    record = tmp_path / "legacy.jsonl"
    assert cli("--record", record, "--protocol", "legacy", "call", WEATHER, "get_forecast", "city=Tokyo").code == 0
    result = cli("-v", "call", replay(record), "get_forecast", "city=Tokyo")
    assert result.code == 0 and "Tokyo" in result.out and "2025-11-25" in result.err


def test_an_unrecorded_request_names_the_closest_recorded_one(cli, tmp_path):
    record = tmp_path / "session.jsonl"
    cli("--record", record, "call", WEATHER, "get_forecast", "city=Hangzhou")
    result = cli("--json", "call", replay(record), "get_forecast", "city=Beijing")
    error = json.loads(result.out or result.err)["error"] if result.out else result.err
    assert result.code == 1 and "-32602" in str(error) and '"city": "Hangzhou"' in str(error)
    result = cli("read", replay(record), "weather://cities")
    assert result.code == 1 and "-32601" in result.err


def recorded(path, *exchanges) -> None:
    """Write a recording by hand: each exchange is (request, [notifications], response)."""
    entries = [{"t": 0, "server": "hand", "era": "legacy", "protocol": "2025-11-25", "transport": "stdio"}]
    for request, notes, response in exchanges:
        entries += [{"t": 0, "server": "hand", "direction": "sent", "message": request}]
        entries += [{"t": 0, "server": "hand", "direction": "received", "message": m} for m in notes + [response]]
    path.write_text("".join(json.dumps(e) + "\n" for e in entries))


def rpc(rid, method, params=None, **extra):
    return {"jsonrpc": "2.0", "id": rid, "method": method, "params": params or {}, **extra}


def result(rid, value):
    return {"jsonrpc": "2.0", "id": rid, "result": value}


INIT = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}, "serverInfo": {"name": "hand", "version": "1"}}
TOOLS = {"tools": [{"name": "count", "inputSchema": {"type": "object"}}]}


def test_repeats_in_recorded_order_notifications_resent_and_ids_keys_tokens_ignored(tmp_path, run):
    path = tmp_path / "hand.jsonl"
    call = {"name": "count", "arguments": {"b": 2, "a": 1}}
    recorded(path, (rpc(7, "initialize", {"protocolVersion": "2025-11-25"}), [], result(7, INIT)),
             (rpc(8, "tools/list"), [], result(8, TOOLS)),
             (rpc(9, "tools/call", {**call, "_meta": {"progressToken": 9}}),
              [{"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": 9, "progress": 1}},
               {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "hi"}}],
              result(9, {"content": [{"type": "text", "text": "first"}]})),
             (rpc(10, "tools/call", call), [], result(10, {"content": [{"type": "text", "text": "second"}]})))
    progress, logs = [], []

    async def go():
        async with mcpmini.Client(shlex.split(replay(path)), on_log=logs.append, on_progress=progress.append) as client:
            assert client.era == "legacy" and client.server_info["name"] == "hand"
            texts = []
            for _ in range(3):   # the last answer again once they run out
                got = await client.call_tool("count", {"a": 1, "b": 2})
                texts.append(mcpmini.result_text(got))
            return texts
    assert run(go()) == ["first", "second", "second"]
    assert progress and progress[0]["progress"] == 1 and logs[0]["data"] == "hi"


def test_a_file_with_several_servers_needs_server(cli, tmp_path):
    path = tmp_path / "two.jsonl"
    path.write_text("".join(json.dumps({"t": 0, "server": name, "direction": "sent", "message": rpc(1, "ping")})
                            + "\n" for name in ("one", "two")))
    result = cli("replay", path)
    assert result.code == 2 and "--server" in result.err and "one, two" in result.err


def test_replay_listen_serves_http_with_the_bridge_rules(cli, tmp_path):
    record = tmp_path / "session.jsonl"
    cli("--record", record, "check", WEATHER, "--call", "get_forecast", "city=Hangzhou")
    with running("replay", record, "--listen", "127.0.0.1:0") as server:
        err: list[bytes] = []
        threading.Thread(target=lambda: err.extend(iter(server.stderr.readline, b"")), daemon=True).start()
        line = wait_until(lambda: next((x for x in b"".join(err).decode().splitlines() if " replay on " in x), None))
        url, token = re.search(r"(http://\S+/mcp).*Bearer (\S+)", line).groups()
        refused = cli("call", url, "get_forecast", "city=Hangzhou")
        assert refused.code == 4
        answered = cli("-H", f"Authorization: Bearer {token}", "call", url, "get_forecast", "city=Hangzhou")
        assert answered.code == 0 and "Hangzhou" in answered.out, answered.err


def test_recorded_ask_replays_offline_to_the_same_answer(cli, tmp_path):
    model = subprocess.Popen([sys.executable, EXAMPLES / "demo_model.py"], stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, text=True)
    try:
        base_url = model.stdout.readline().strip()
        record, config = tmp_path / "ask.jsonl", tmp_path / "mcp.json"

        def ask(command: str) -> str:
            argv = shlex.split(command)
            config.write_text(json.dumps({"mcpServers": {"weather": {"command": argv[0], "args": argv[1:]}}}))
            result = cli("--config", config, "--record", record, "ask", "umbrella in Hangzhou tomorrow?",
                         "--server", "weather", "--base-url", base_url, "--model", "demo")
            assert result.code == 0, result.err
            return result.out
        live = ask(WEATHER)
        assert "umbrella" in live.lower()
        record.rename(tmp_path / "kept.jsonl")
        assert ask(replay(tmp_path / "kept.jsonl")) == live
    finally:
        model.terminate()
        model.wait(10)


def test_bridge_records_what_it_exchanges_upstream(tmp_path):
    record = tmp_path / "bridge.jsonl"
    requests = [rpc(1, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                      "clientInfo": {"name": "t", "version": "1"}}),
                {"jsonrpc": "2.0", "method": "notifications/initialized"}, rpc(2, "tools/list")]
    with running("--record", record, "bridge", WEATHER, stdin=subprocess.PIPE, text=True) as bridge:
        bridge.stdin.write("".join(json.dumps(r) + "\n" for r in requests))
        bridge.stdin.flush()
        answers = [json.loads(bridge.stdout.readline()) for _ in range(2)]   # (the test's deadline bounds it)
    assert [a["id"] for a in answers] == [1, 2] and answers[1]["result"]["tools"][0]["name"] == "get_forecast"
    upstream = [e for e in lines(record) if e.get("direction") == "received" and "result" in e["message"]]
    assert any("tools" in e["message"]["result"] for e in upstream)


def test_servers_record_each_server_under_its_name(tmp_path):
    record = tmp_path / "many.jsonl"
    argv = [sys.executable, str(EXAMPLES / "weather_server.py")]
    with mcpmini.SyncServers({"one": argv, "two": argv}, record=str(record)) as servers:
        assert len(servers.list_tools()) == 2
    entries = lines(record)
    assert {e["server"] for e in entries} == {"one", "two"}
    assert sorted(e["server"] for e in entries if "era" in e) == ["one", "two"]


def test_a_denied_call_never_reaches_the_record(cli, tmp_path):
    record = tmp_path / "denied.jsonl"
    result = cli("--record", record, "--deny", "get_*", "call", WEATHER, "get_forecast", "city=Hangzhou")
    assert result.code == 2
    sent = [e["message"].get("method") for e in lines(record) if e.get("direction") == "sent"] \
        if record.exists() else []
    assert "tools/call" not in sent


def test_a_hidden_tool_is_not_in_a_recorded_listing(cli, tmp_path):
    record = tmp_path / "listing.jsonl"
    assert cli("--record", record, "--deny", "get_*", "tools", WEATHER).code == 0
    listings = [e["message"]["result"]["tools"] for e in lines(record) if e.get("direction") == "received"
                and "tools" in e["message"].get("result", {})]
    assert listings and listings[0] == []   # the server's one tool is hidden: not recorded (decision 26)
