"""The tool policy (issue 27) against server-everything, whose tools carry readOnlyHint and
destructiveHint annotations: `tools` and `call` with --read-only/--allow/--deny (nothing is sent
for a refused call: --trace shows every message), `ask` with a scripted model that calls a
denied tool anyway, and `bridge` driven by the official Python SDK client (mcp 2.x)."""

from __future__ import annotations

import json
import shlex
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Iterator

import pytest

from harness import write_json
from test_interop_bridge import sdk, through_bridge

WRITES = "toggle-simulated-logging"   # readOnlyHint false, destructiveHint false


@pytest.fixture
def everything(everything_cmd: list[str]) -> str:
    return shlex.join(everything_cmd)


@pytest.fixture
def annotated(cli, everything: str) -> dict[str, dict]:
    """Every tool of server-everything, as listed with no policy: name -> annotations."""
    r = cli("tools", everything, "--json")
    assert r.code == 0, r.err
    return {t["name"]: t.get("annotations") or {} for t in json.loads(r.out)}


def read_only(annotated: dict[str, dict]) -> list[str]:
    return [name for name, notes in annotated.items() if notes.get("readOnlyHint") is True]


def test_it_has_tools_on_both_sides_of_read_only(annotated):
    assert "echo" in read_only(annotated) and WRITES in annotated and WRITES not in read_only(annotated)


def test_tools_lists_what_the_server_marks_read_only(cli, everything, annotated):
    r = cli("tools", everything, "--read-only", "--json")
    assert r.code == 0, r.err
    assert [t["name"] for t in json.loads(r.out)] == read_only(annotated)
    hidden = len(annotated) - len(read_only(annotated))
    assert f"the tool policy hid {hidden} tool(s)" in r.err
    r = cli("tools", everything, "--allow", "get-*", "--deny", "get-env", "--json")
    assert [t["name"] for t in json.loads(r.out)] == [n for n in annotated if n.startswith("get-") and n != "get-env"]


def test_a_refused_call_sends_nothing(cli, everything):
    r = cli("--trace", "call", everything, WRITES, "--read-only")
    assert r.code == 2 and f"the tool policy refuses {WRITES!r}" in r.err and "read-only" in r.err
    assert "tools/call" not in r.err   # the trace shows every message sent: no call among them
    r = cli("--trace", "call", everything, "echo", "message=hi", "--read-only", "--deny", "toggle-*")
    assert r.code == 0 and r.out.strip() == "Echo: hi", r.err
    assert '"method":"tools/call"' in r.err.replace(" ", "")


def test_check_lints_every_tool_and_counts_the_hidden(cli, everything, annotated):
    r = cli("check", everything, "--read-only", "--json")
    checks = {c["name"]: c for s in json.loads(r.out)["suites"] for c in s["checks"]}
    assert all(f"tool {name}" in checks for name in annotated)
    hidden = len(annotated) - len(read_only(annotated))
    assert checks["tool policy"]["detail"] == f"it would hide {hidden} of {len(annotated)} tools"


# -- ask: a scripted model calls a denied tool anyway -------------------------------------------------
class _Model(BaseHTTPRequestHandler):
    """Chat Completions, unstreamed: first a call of a tool it was not offered and of echo; then an answer."""
    bodies: list[dict] = []

    def do_POST(self) -> None:   # noqa: N802 (http.server's name)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.bodies.append(body)
        if body["messages"][-1]["role"] == "user":
            message = {"role": "assistant", "content": "", "tool_calls": [
                {"id": f"c{i}", "type": "function", "function": {"name": name, "arguments": arguments}}
                for i, (name, arguments) in enumerate([(f"everything_{WRITES}", "{}"),
                                                       ("everything_echo", '{"message": "hi"}')])]}
        else:
            message = {"role": "assistant", "content": "Done."}
        data = json.dumps({"id": "x", "object": "chat.completion", "model": "m", "choices": [
            {"index": 0, "message": message, "finish_reason": "tool_calls" if "tool_calls" in message else "stop"}]})
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data.encode())

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def model() -> Iterator[str]:
    _Model.bodies = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Model)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/v1"
    finally:
        server.shutdown()
        server.server_close()


def test_ask_never_offers_and_never_runs_a_denied_tool(cli, everything_cmd, model, work):
    write_json(work / "c.json", {"mcpServers": {"everything": {"command": everything_cmd[0],
                                                               "args": everything_cmd[1:], "readOnly": True}}})
    r = cli("--trace", "--config", str(work / "c.json"), "ask", "q", "--model", "m", "--base-url", model,
            "--no-stream", "--deny", "everything/get-env")
    assert r.code == 0 and r.out == "Done.\n", r.err
    offered = [t["function"]["name"] for t in _Model.bodies[0]["tools"]]
    assert "everything_echo" in offered and f"everything_{WRITES}" not in offered
    assert "everything_get-env" not in offered
    refused, echoed = [m for m in _Model.bodies[1]["messages"] if m["role"] == "tool"]
    assert refused["content"].startswith("Error:") and echoed["content"] == "Echo: hi"
    sent = [line for line in r.err.splitlines() if "tools/call" in line and " → " not in line]
    assert sent and all(WRITES not in line for line in sent), sent


# -- bridge: the official SDK client through a least-privilege bridge ----------------------------------
@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_sdk_client_through_the_bridge_sees_and_calls_only_allowed_tools(sdk_python, everything, annotated, mode):
    steps = [["tools"], ["progress", WRITES, {}], ["call", "echo", {"message": "hi"}]]
    got = sdk(sdk_python, mode, through_bridge(everything, "--read-only", "--deny", "get-env"), steps)
    assert got["tools"]["names"] == [n for n in read_only(annotated) if n != "get-env"]
    assert f"the tool policy refuses {WRITES!r}" in got["progress"]["error"]   # a JSON-RPC error
    assert got["call"]["text"] == ["Echo: hi"]
