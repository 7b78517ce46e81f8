"""Tests for the example servers in examples/: weather_server.py (stdio), weather_http_server.py
and demo_model.py, driven over their raw wire formats (JSON-RPC lines, HTTP with urllib).

Every wait has a deadline: stdio reads go through a reader thread and a queue, and every
urllib call has a socket timeout. Servers are started with sys.executable.
"""
from __future__ import annotations

import base64
import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
import urllib.error
import urllib.request
from typing import Any, Iterator

import pytest

import weather_http_server  # examples/ is on pytest's pythonpath, for a few direct unit checks
import weather_server
from harness import EXAMPLES, ROOT

DEADLINE = 20.0  # seconds for any single wait; generous on purpose (machines are noisy)
MODERN = "2026-07-28"
META = {"io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "examples-test", "version": "0"}}
JSON = dict[str, Any]


# -- Helpers -----------------------------------------------------------------------------
class StdioPeer:
    """The client side of a stdio MCP server: JSON lines in, JSON lines out, with deadlines."""

    def __init__(self, argv: list[str]) -> None:
        self._stderr = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self._stderr, cwd=EXAMPLES)
        self.lines: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        for line in iter(self.proc.stdout.readline, b""):
            self.lines.put(line)
        self.lines.put(b"")  # EOF marker

    def stderr_text(self) -> str:
        self._stderr.seek(0)
        return self._stderr.read().decode("utf-8", "replace")

    def send(self, message: Any) -> None:
        data = message if isinstance(message, bytes) else json.dumps(message).encode()
        self.proc.stdin.write(data + b"\n")
        self.proc.stdin.flush()

    def recv(self) -> Any:
        try:
            line = self.lines.get(timeout=DEADLINE)
        except queue.Empty:
            raise AssertionError(f"no message within {DEADLINE}s; stderr:\n{self.stderr_text()}") from None
        assert line, f"server closed stdout; stderr:\n{self.stderr_text()}"
        assert line.endswith(b"\n") and b"\n" not in line[:-1]
        return json.loads(line)

    def request(self, request_id: int, method: str, params: JSON | None = None,
                modern: bool = True) -> tuple[JSON, list[JSON]]:
        """Send a request; return (response, notifications that came before it)."""
        message: JSON = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if modern:
            params = {**(params or {}), "_meta": {**META, **(params or {}).get("_meta", {})}}
        if params is not None:
            message["params"] = params
        self.send(message)
        notes = []
        while True:
            reply = self.recv()
            if "id" in reply:
                assert reply["id"] == request_id, reply
                return reply, notes
            notes.append(reply)

    def close(self) -> int:
        if not self.proc.stdin.closed:
            self.proc.stdin.close()
        try:
            return self.proc.wait(timeout=DEADLINE)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=DEADLINE)
            raise AssertionError("server did not exit after stdin closed") from None
        finally:
            self._stderr.close()


def start_http(script: str, *args: str) -> tuple[subprocess.Popen[bytes], str]:
    """Start an HTTP example on a free port; return (process, the URL it printed)."""
    proc = subprocess.Popen([sys.executable, os.path.join(EXAMPLES, script), "--port", "0", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    first: queue.Queue[bytes] = queue.Queue()
    threading.Thread(target=lambda: first.put(proc.stdout.readline()), daemon=True).start()
    try:
        url = first.get(timeout=DEADLINE).decode().strip()
    except queue.Empty:
        proc.kill()
        raise AssertionError(f"{script} printed no URL within {DEADLINE}s") from None
    assert url.startswith("http://127.0.0.1:"), url
    return proc, url


def stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=DEADLINE)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=DEADLINE)


def http(method: str, url: str, body: Any = None, headers: dict[str, str] | None = None
         ) -> tuple[int, Any, bytes]:
    """One HTTP exchange: (status, response headers, raw body); HTTP errors are returned too."""
    data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
    request = urllib.request.Request(url, data=data, method=method, headers={
        "Content-Type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=DEADLINE) as response:
            return response.status, response.headers, response.read()
    except urllib.error.HTTPError as exc:
        with exc:
            return exc.code, exc.headers, exc.read()


def sse_data(raw: bytes) -> list[str]:
    """The data fields of the events in an SSE body (enough for these servers' output)."""
    events = []
    for block in raw.decode("utf-8").replace("\r\n", "\n").split("\n\n"):
        data = [line[5:].lstrip(" ") for line in block.split("\n") if line.startswith("data:")]
        if data:
            events.append("\n".join(data))
    return events


# -- weather_server.py over stdio ------------------------------------------------------
@pytest.fixture
def peer() -> Iterator[StdioPeer]:
    p = StdioPeer([sys.executable, os.path.join(EXAMPLES, "weather_server.py")])
    yield p
    if p.proc.poll() is None:
        p.close()


def test_stdio_discover(peer: StdioPeer) -> None:
    reply, _ = peer.request(1, "server/discover")
    result = reply["result"]
    assert result["resultType"] == "complete"
    assert result["supportedVersions"][:2] == [MODERN, "2025-11-25"]
    assert set(result["supportedVersions"]) >= {"2025-06-18", "2025-03-26", "2024-11-05"}
    assert set(result["capabilities"]) >= {"tools", "resources", "prompts"}
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "weather-demo"
    assert isinstance(result["ttlMs"], int) and result["ttlMs"] >= 0
    assert result["cacheScope"] in ("public", "private")


def test_stdio_modern_tools_list_and_call(peer: StdioPeer) -> None:
    reply, _ = peer.request(1, "tools/list")
    result = reply["result"]
    assert result["resultType"] == "complete" and result["ttlMs"] >= 0 and result["cacheScope"]
    [tool] = result["tools"]
    assert tool["name"] == "get_forecast" and "DEMO" in tool["description"]
    schema = tool["inputSchema"]
    assert schema["type"] == "object" and schema["required"] == ["city"]
    assert schema["properties"]["city"]["type"] == "string" and schema["properties"]["city"]["description"]

    # Progress was asked for, so exactly one progress notification precedes the result.
    reply, notes = peer.request(2, "tools/call", {"name": "get_forecast", "arguments": {"city": "Hangzhou"},
                                                  "_meta": {"progressToken": "tok-2"}})
    assert [n["method"] for n in notes] == ["notifications/progress"]
    assert notes[0]["params"]["progressToken"] == "tok-2"
    result = reply["result"]
    assert result["resultType"] == "complete" and result["isError"] is False
    text = result["content"][0]["text"]
    assert "DEMO" in text and "Hangzhou" in text and "rain" in text and "umbrella" in text
    assert result["structuredContent"]["umbrella"] is True

    # The Chinese name finds the same city; no progressToken, no notification.
    reply, notes = peer.request(3, "tools/call", {"name": "get_forecast", "arguments": {"city": "杭州"}})
    assert notes == [] and "Hangzhou" in reply["result"]["content"][0]["text"]


def test_stdio_dry_city_says_no_umbrella(peer: StdioPeer) -> None:
    reply, _ = peer.request(1, "tools/call", {"name": "get_forecast", "arguments": {"city": "北京"}})
    text = reply["result"]["content"][0]["text"]
    assert "Beijing" in text and "no umbrella" in text
    assert not any(word in text.lower() for word in ("rain", "shower", "storm"))


def test_stdio_unknown_city_is_error(peer: StdioPeer) -> None:
    reply, _ = peer.request(1, "tools/call", {"name": "get_forecast", "arguments": {"city": "Atlantis"}})
    result = reply["result"]
    assert result["isError"] is True
    assert "Atlantis" in result["content"][0]["text"] and "Hangzhou" in result["content"][0]["text"]
    # An unknown *tool* is a protocol error instead.
    reply, _ = peer.request(2, "tools/call", {"name": "get_weather", "arguments": {}})
    assert reply["error"]["code"] == -32602


def test_stdio_modern_meta_is_checked(peer: StdioPeer) -> None:
    peer.send({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {}})
    assert peer.recv()["error"]["code"] == -32602  # required _meta keys missing
    bad = {**META, "io.modelcontextprotocol/protocolVersion": "1900-01-01"}
    peer.send({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": bad}})
    error = peer.recv()["error"]
    assert error["code"] == -32022
    assert error["data"]["requested"] == "1900-01-01" and MODERN in error["data"]["supported"]
    reply, _ = peer.request(3, "ping")  # ping no longer exists in 2026-07-28
    assert reply["error"]["code"] == -32601


def test_stdio_legacy_session(peer: StdioPeer) -> None:
    reply, _ = peer.request(1, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                              "clientInfo": {"name": "t", "version": "0"}}, modern=False)
    result = reply["result"]
    assert result["protocolVersion"] == "2025-11-25"
    assert result["serverInfo"]["name"] == "weather-demo" and "tools" in result["capabilities"]
    assert "resultType" not in result
    peer.send({"jsonrpc": "2.0", "method": "notifications/initialized"})  # gets no reply...
    reply, _ = peer.request(2, "ping", modern=False)  # ...so the next message is the ping's
    assert reply["result"] == {}
    reply, notes = peer.request(3, "tools/call", {"name": "get_forecast", "arguments": {"city": "Hangzhou"},
                                                  "_meta": {"progressToken": 3}}, modern=False)
    assert [n["params"]["progressToken"] for n in notes] == [3]
    assert "resultType" not in reply["result"] and "rain" in reply["result"]["content"][0]["text"]
    reply, _ = peer.request(4, "server/discover", modern=False)  # no _meta: refused, not crashed
    assert "error" in reply


@pytest.mark.parametrize("asked, agreed", [
    ("2025-11-25", "2025-11-25"), ("2025-06-18", "2025-06-18"), ("2025-03-26", "2025-03-26"),
    ("2024-11-05", "2024-11-05"), ("2026-07-28", "2025-11-25"), ("1999-01-01", "2025-11-25")])
def test_stdio_legacy_version_negotiation(peer: StdioPeer, asked: str, agreed: str) -> None:
    reply, _ = peer.request(1, "initialize", {"protocolVersion": asked, "capabilities": {},
                                              "clientInfo": {"name": "t", "version": "0"}}, modern=False)
    assert reply["result"]["protocolVersion"] == agreed


def test_stdio_resources(peer: StdioPeer) -> None:
    reply, _ = peer.request(1, "resources/list")
    assert [r["uri"] for r in reply["result"]["resources"]] == ["weather://cities"]
    assert reply["result"]["cacheScope"] and reply["result"]["resultType"] == "complete"
    reply, _ = peer.request(2, "resources/templates/list")
    assert reply["result"]["resourceTemplates"][0]["uriTemplate"] == "weather://forecast/{city}"
    reply, _ = peer.request(3, "resources/read", {"uri": "weather://cities"})
    [content] = reply["result"]["contents"]
    assert content["mimeType"] == "application/json"
    names = {c["name"] for c in json.loads(content["text"])["cities"]}
    assert {"Hangzhou", "Beijing", "Shanghai", "London", "New York", "Tokyo"} <= names
    for uri in ("weather://forecast/Hangzhou", "weather://forecast/杭州",
                "weather://forecast/%E6%9D%AD%E5%B7%9E"):
        reply, _ = peer.request(4, "resources/read", {"uri": uri})
        assert "Hangzhou" in reply["result"]["contents"][0]["text"], uri
    reply, _ = peer.request(5, "resources/read", {"uri": "weather://forecast/Atlantis"})
    assert reply["error"]["code"] == -32602  # 2026-07-28 not-found code
    reply, _ = peer.request(6, "resources/read", {"uri": "weather://nothing"}, modern=False)
    assert reply["error"]["code"] == -32002  # legacy not-found code


def test_stdio_prompt(peer: StdioPeer) -> None:
    reply, _ = peer.request(1, "prompts/list")
    [prompt] = reply["result"]["prompts"]
    assert prompt["name"] == "umbrella_advice" and prompt["arguments"][0]["name"] == "city"
    reply, _ = peer.request(2, "prompts/get", {"name": "umbrella_advice", "arguments": {"city": "Hangzhou"}})
    messages = reply["result"]["messages"]
    assert all(m["role"] == "user" for m in messages)
    assert "umbrella" in messages[0]["content"]["text"]
    assert "rain" in messages[1]["content"]["resource"]["text"]
    reply, _ = peer.request(3, "prompts/get", {"name": "umbrella_advice", "arguments": {}})
    assert reply["error"]["code"] == -32602


def test_stdio_odd_input(peer: StdioPeer) -> None:
    peer.send(b"this is not json")
    reply = peer.recv()
    assert reply["error"]["code"] == -32700 and reply["id"] is None
    peer.send(b"")  # blank lines are skipped
    reply, _ = peer.request(1, "no/such/method")
    assert reply["error"]["code"] == -32601
    reply, _ = peer.request(2, "no/such/method", modern=False)
    assert reply["error"]["code"] == -32601
    # A 2025-03-26 batch: one reply array, notifications get no entry.
    peer.send([{"jsonrpc": "2.0", "id": 7, "method": "ping"},
               {"jsonrpc": "2.0", "method": "notifications/initialized"},
               {"jsonrpc": "2.0", "id": 8, "method": "tools/list"}])
    replies = peer.recv()
    assert [r["id"] for r in replies] == [7, 8]


def test_stdio_exits_when_stdin_closes(peer: StdioPeer) -> None:
    peer.request(1, "tools/list")
    assert peer.close() == 0


def test_city_lookup_and_accept_helpers() -> None:
    assert weather_server.find_city(" new-york ") == "New York"
    assert weather_server.find_city("NYC") == "New York"
    assert weather_server.find_city("杭州市") == "Hangzhou"
    assert weather_server.find_city("Atlantis") is None
    prefers = weather_http_server.prefers_sse
    assert not prefers("application/json, text/event-stream")
    assert prefers("text/event-stream, application/json")
    assert prefers("application/json;q=0.5, text/event-stream")
    assert not prefers("application/json") and not prefers(None) and prefers("text/event-stream")
    encoded = "=?base64?" + base64.b64encode("杭州".encode()).decode() + "?="
    assert weather_http_server.decode_header_value(encoded) == "杭州"
    assert weather_http_server.decode_header_value("plain") == "plain"


# -- weather_http_server.py ------------------------------------------------------------
@pytest.fixture(scope="module")
def mcp_url() -> Iterator[str]:
    proc, url = start_http("weather_http_server.py")
    assert url.endswith("/mcp")
    yield url
    stop(proc)


def modern_post(url: str, method: str, params: JSON | None = None, request_id: int | None = 1,
                headers: dict[str, str] | None = None) -> tuple[int, Any, Any]:
    """POST one 2026-07-28 message with correct headers (overridable); (status, headers, JSON or None)."""
    message: JSON = {"jsonrpc": "2.0", "method": method, "params": {**(params or {}), "_meta": META}}
    if request_id is not None:
        message["id"] = request_id
    base = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": MODERN,
            "Mcp-Method": method}
    status, reply_headers, raw = http("POST", url, message, {**base, **(headers or {})})
    return status, reply_headers, (json.loads(raw) if raw else None)


def test_http_modern_discover_and_call(mcp_url: str) -> None:
    status, headers, body = modern_post(mcp_url, "server/discover")
    assert status == 200 and headers.get_content_type() == "application/json"
    assert MODERN in body["result"]["supportedVersions"] and body["result"]["resultType"] == "complete"
    status, _, body = modern_post(mcp_url, "tools/call", {"name": "get_forecast", "arguments": {"city": "Hangzhou"}},
                                  headers={"Mcp-Name": "get_forecast"})
    assert status == 200 and "umbrella" in body["result"]["content"][0]["text"]
    # A non-ASCII Mcp-Name arrives base64-wrapped.
    uri = "weather://forecast/杭州"
    wrapped = "=?base64?" + base64.b64encode(uri.encode()).decode() + "?="
    status, _, body = modern_post(mcp_url, "resources/read", {"uri": uri}, headers={"Mcp-Name": wrapped})
    assert status == 200 and "Hangzhou" in body["result"]["contents"][0]["text"]


def test_http_modern_errors(mcp_url: str) -> None:
    status, _, body = modern_post(mcp_url, "tools/list", headers={"Mcp-Method": "tools/call"})
    assert status == 400 and body["error"]["code"] == -32020
    status, _, body = modern_post(mcp_url, "tools/call", {"name": "get_forecast", "arguments": {"city": "x"}})
    assert status == 400 and body["error"]["code"] == -32020  # Mcp-Name missing
    status, _, body = modern_post(mcp_url, "tools/call", {"name": "get_forecast", "arguments": {"city": "x"}},
                                  headers={"Mcp-Name": "other_tool"})
    assert status == 400 and body["error"]["code"] == -32020
    status, _, body = modern_post(mcp_url, "tools/list", headers={"MCP-Protocol-Version": "1900-01-01"})
    assert status == 400 and body["error"]["code"] == -32022
    status, _, body = modern_post(mcp_url, "no/such/method")
    assert status == 404 and body["error"]["code"] == -32601
    status, _, body = modern_post(mcp_url, "notifications/cancelled", {"requestId": 1}, request_id=None)
    assert status == 202 and body is None
    status, _, body = modern_post(mcp_url, "tools/call", {"name": "get_forecast", "arguments": {"city": "Atlantis"}},
                                  headers={"Mcp-Name": "get_forecast"})
    assert status == 200 and body["result"]["isError"] is True
    status, _, _ = http("GET", mcp_url, headers={"Accept": "text/event-stream"})
    assert status == 405
    no_meta = {"jsonrpc": "2.0", "id": 5, "method": "tools/list", "params": {}}
    status, _, raw = http("POST", mcp_url, no_meta, {"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/list"})
    assert status == 400 and json.loads(raw)["error"]["code"] == -32602  # required _meta keys missing
    status, _, _ = modern_post(mcp_url, "tools/list", headers={"Origin": "http://evil.example"})
    assert status == 403  # DNS-rebinding guard


def legacy_initialize(url: str, version: str = "2025-11-25") -> str:
    status, headers, raw = http("POST", url, {
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}},
        {"Accept": "application/json, text/event-stream"})
    assert status == 200 and json.loads(raw)["result"]["protocolVersion"] == version
    session_id = headers.get("Mcp-Session-Id")
    assert session_id and all(0x21 <= ord(ch) <= 0x7E for ch in session_id)
    return session_id


def test_http_legacy_session(mcp_url: str) -> None:
    session_id = legacy_initialize(mcp_url)
    base = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}
    with_session = {**base, "Mcp-Session-Id": session_id}
    status, _, raw = http("POST", mcp_url, {"jsonrpc": "2.0", "method": "notifications/initialized"}, with_session)
    assert status == 202 and raw == b""
    status, headers, raw = http("POST", mcp_url, {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                                                  "params": {"name": "get_forecast", "arguments": {"city": "杭州"}}},
                                with_session)
    assert status == 200 and headers.get_content_type() == "application/json"
    assert "rain" in json.loads(raw)["result"]["content"][0]["text"]
    ping = {"jsonrpc": "2.0", "id": 3, "method": "ping"}
    status, _, _ = http("POST", mcp_url, ping, base)
    assert status == 400  # no session id
    status, _, raw = http("POST", mcp_url, ping, {**base, "Mcp-Session-Id": "no-such-session"})
    assert status == 404 and "error" in json.loads(raw)
    status, _, _ = http("DELETE", mcp_url, headers={"Mcp-Session-Id": session_id})
    assert status == 200
    status, _, _ = http("POST", mcp_url, ping, with_session)
    assert status == 404  # the session has ended


def test_http_legacy_sse_reply_when_preferred(mcp_url: str) -> None:
    session_id = legacy_initialize(mcp_url, "2025-06-18")
    status, headers, raw = http("POST", mcp_url, {
        "jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "get_forecast", "arguments": {"city": "London"}, "_meta": {"progressToken": "p"}}},
        {"Accept": "text/event-stream, application/json", "Mcp-Session-Id": session_id,
         "MCP-Protocol-Version": "2025-06-18"})
    assert status == 200 and headers.get_content_type() == "text/event-stream"
    progress, reply = [json.loads(d) for d in sse_data(raw)]
    assert progress["method"] == "notifications/progress" and progress["params"]["progressToken"] == "p"
    assert reply["id"] == 2 and "London" in reply["result"]["content"][0]["text"]


def test_http_plus_sse_2024_transport(mcp_url: str) -> None:
    base = mcp_url.rsplit("/mcp", 1)[0]
    request = urllib.request.Request(base + "/sse", headers={"Accept": "text/event-stream"})
    with urllib.request.urlopen(request, timeout=DEADLINE) as stream:

        def next_event() -> tuple[str, str]:
            event, data = "message", []
            while True:
                line = stream.readline().decode().rstrip("\r\n")
                if line.startswith("event:"):
                    event = line[6:].strip()
                elif line.startswith("data:"):
                    data.append(line[5:].lstrip(" "))
                elif line == "" and data:
                    return event, "\n".join(data)

        event, endpoint = next_event()
        assert event == "endpoint" and endpoint.startswith("/messages?session_id=")
        status, _, raw = http("POST", base + endpoint, {
            "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2024-11-05", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}})
        assert status == 202 and raw == b"Accepted"
        event, data = next_event()
        assert event == "message" and json.loads(data)["result"]["protocolVersion"] == "2024-11-05"
        http("POST", base + endpoint, {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                                       "params": {"name": "get_forecast", "arguments": {"city": "Tokyo"}}})
        assert "Tokyo" in json.loads(next_event()[1])["result"]["content"][0]["text"]
    status, _, _ = http("POST", base + "/messages?session_id=unknown", {"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert status == 404


# -- demo_model.py -----------------------------------------------------------------
FORECAST_TOOL = [{"type": "function", "function": {
    "name": "weather__get_forecast", "description": "forecast",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]


@pytest.fixture(scope="module")
def model_url() -> Iterator[str]:
    proc, url = start_http("demo_model.py")
    assert url.endswith("/v1")
    yield url
    stop(proc)


def chat(url: str, body: JSON) -> tuple[int, Any, bytes]:
    return http("POST", url + "/chat/completions", {"model": "demo", **body})


def streamed(raw: bytes) -> tuple[list[JSON], str]:
    """(the chunks, the last data line) of a streamed completion."""
    events = sse_data(raw)
    return [json.loads(e) for e in events[:-1]], events[-1]


def tool_turn(question: str, forecast: str, city: str) -> list[JSON]:
    """A history ending with the tool's answer to the model's get_forecast call."""
    return [{"role": "system", "content": "Be brief."},
            {"role": "user", "content": question},
            {"role": "assistant", "content": None, "tool_calls": [{
                "id": "call_1", "type": "function",
                "function": {"name": "weather__get_forecast", "arguments": json.dumps({"city": city})}}]},
            {"role": "tool", "tool_call_id": "call_1", "content": forecast}]


def test_model_calls_the_tool(model_url: str) -> None:
    status, _, raw = chat(model_url, {"messages": [{"role": "user", "content": "Should I take an umbrella in Hangzhou tomorrow?"}],
                                      "tools": FORECAST_TOOL})
    assert status == 200
    choice = json.loads(raw)["choices"][0]
    assert choice["finish_reason"] == "tool_calls"
    [call] = choice["message"]["tool_calls"]
    assert call["id"] and call["function"]["name"] == "weather__get_forecast"
    assert json.loads(call["function"]["arguments"]) == {"city": "Hangzhou"}


def test_model_streams_a_chinese_tool_call(model_url: str) -> None:
    status, headers, raw = chat(model_url, {"messages": [{"role": "user", "content": "明天杭州要带伞吗？"}],
                                            "tools": FORECAST_TOOL, "stream": True,
                                            "stream_options": {"include_usage": True}})
    assert status == 200 and headers.get_content_type() == "text/event-stream"
    chunks, last = streamed(raw)
    assert last == "[DONE]"
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["total_tokens"] > 0
    deltas = [c["choices"][0] for c in chunks[:-1]]
    assert deltas[-1]["finish_reason"] == "tool_calls"
    calls = [tc for d in deltas for tc in d["delta"].get("tool_calls", [])]
    assert len(calls) >= 3 and {tc["index"] for tc in calls} == {0}
    assert calls[0]["id"] and all(tc["id"] == "" for tc in calls[1:])
    assert calls[0]["function"]["name"] == "weather__get_forecast"
    arguments = "".join(tc["function"].get("arguments", "") for tc in calls)
    assert json.loads(arguments) == {"city": "杭州"}


def test_model_answers_from_the_real_tool_text(model_url: str) -> None:
    rainy = weather_server.forecast_text("Hangzhou")
    status, _, raw = chat(model_url, {"messages": tool_turn("明天杭州要带伞吗？", rainy, "杭州"), "tools": FORECAST_TOOL})
    answer = json.loads(raw)["choices"][0]["message"]["content"]
    assert status == 200 and "带伞" in answer and "杭州" in answer and "不用" not in answer

    dry = weather_server.forecast_text("Beijing")
    status, _, raw = chat(model_url, {"messages": tool_turn("Do I need an umbrella in Beijing tomorrow?", dry, "Beijing"),
                                      "tools": FORECAST_TOOL, "stream": True})
    chunks, last = streamed(raw)
    answer = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks)
    assert last == "[DONE]" and chunks[-1]["choices"][0]["finish_reason"] == "stop"
    assert len(chunks) > 3 and "No umbrella" in answer and "usage" not in chunks[0]

    status, _, raw = chat(model_url, {"messages": tool_turn("Umbrella in Hangzhou tomorrow?", rainy, "Hangzhou")})
    assert "take an umbrella" in json.loads(raw)["choices"][0]["message"]["content"]

    unknown = "Unknown city 'Paris'. This demo only knows: Hangzhou (杭州)."
    status, _, raw = chat(model_url, {"messages": tool_turn("Umbrella in Paris?", unknown, "Paris")})
    assert json.loads(raw)["choices"][0]["message"]["content"].startswith("Sorry")


def test_model_asks_for_the_city(model_url: str) -> None:
    for question, expected in (("Should I take an umbrella tomorrow?", "Which city"), ("明天要带伞吗？", "哪个城市")):
        status, _, raw = chat(model_url, {"messages": [{"role": "user", "content": question}], "tools": FORECAST_TOOL})
        message = json.loads(raw)["choices"][0]["message"]
        assert status == 200 and expected in message["content"] and not message.get("tool_calls")


@pytest.mark.parametrize("body, param", [
    ({"messages": [{"role": "user", "content": "hi"}], "tools": []}, "tools"),
    ({"messages": []}, "messages"),
    ({"messages": [{"role": "user", "content": "hi"}], "stream_options": {"include_usage": True}}, "stream_options"),
    ({"messages": [{"role": "user", "content": "hi"}, {"role": "tool", "tool_call_id": "x", "content": "r"}]},
     "messages[1].tool_call_id"),
    ({"messages": tool_turn("q", "r", "Hangzhou")[:3]}, "messages"),  # tool call never answered
    ({"messages": [{"role": "user", "content": "hi"}],
      "tools": [{"type": "function", "function": {"name": "weather.get_forecast"}}]}, "tools[0].function.name"),
])
def test_model_rejects_malformed_requests(model_url: str, body: JSON, param: str) -> None:
    status, _, raw = chat(model_url, body)
    error = json.loads(raw)["error"]
    assert status == 400 and error["type"] == "invalid_request_error" and error["param"] == param
    assert error["message"]


def test_model_rejects_bad_json_and_missing_model(model_url: str) -> None:
    status, _, raw = http("POST", model_url + "/chat/completions", b"{not json")
    assert status == 400 and "error" in json.loads(raw)
    status, _, raw = http("POST", model_url + "/chat/completions", {"messages": [{"role": "user", "content": "x"}]})
    assert status == 400 and json.loads(raw)["error"]["param"] == "model"


# -- examples/mcp.json and library_example.py ---------------------------------------------
def test_mcp_json_shape() -> None:
    with open(os.path.join(EXAMPLES, "mcp.json"), encoding="utf-8") as f:
        config = json.load(f)
    assert config == {"mcpServers": {"weather": {"command": "python3", "args": ["weather_server.py"], "cwd": "."}}}
    assert os.path.isfile(os.path.join(EXAMPLES, config["mcpServers"]["weather"]["cwd"], "weather_server.py"))


@pytest.mark.skipif(not os.path.exists(os.path.join(ROOT, "mcpmini.py")), reason="mcpmini.py not written yet")
def test_library_example_runs(tmp_path: Any) -> None:
    # Run from an unrelated folder: the example must find both mcpmini and the server itself.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run([sys.executable, os.path.join(EXAMPLES, "library_example.py")], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "get_forecast" in done.stdout
    assert "Hangzhou" in done.stdout and "rain" in done.stdout and "DEMO" in done.stdout
