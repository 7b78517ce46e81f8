"""The HTTP examples send each reply in one write, and each SSE event in one write, with
Nagle's algorithm off (issue 20).

A reply written as headers and then body waits ~40 ms for the client's delayed ACK of the
headers, so a loop of calls managed about 22 a second. These tests count writes, not
milliseconds: the example handlers run in-process on accepted sockets that record every
send (before making it, so a reply the client has read is fully recorded) and whether
TCP_NODELAY was set at the time.
"""
from __future__ import annotations

import contextlib
import http.client
import json
import socket
import threading
from http.server import ThreadingHTTPServer
from typing import Any, Iterator

import demo_model  # examples/ is on pytest's pythonpath
import weather_http_server

TIMEOUT = 20.0
MODERN = "2026-07-28"
META = {"io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "one-write-test", "version": "0"}}


class RecordingSocket(socket.socket):
    """An accepted connection that records each send: its bytes and TCP_NODELAY."""

    def record(self, data: Any) -> None:
        nodelay = self.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
        self.sends.append((bytes(data), bool(nodelay)))

    def send(self, data: Any, *args: Any) -> int:
        self.record(data)
        return super().send(data, *args)

    def sendall(self, data: Any, *args: Any) -> None:
        self.record(data)
        super().sendall(data, *args)


class RecordingServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, handler: type) -> None:
        super().__init__(("127.0.0.1", 0), handler)
        self.accepted: list[RecordingSocket] = []

    def get_request(self) -> tuple[socket.socket, Any]:
        conn, address = super().get_request()
        recording = RecordingSocket(conn.family, conn.type, conn.proto, fileno=conn.detach())
        recording.sends = []
        self.accepted.append(recording)
        return recording, address


@contextlib.contextmanager
def serving(handler: type) -> Iterator[RecordingServer]:
    server = RecordingServer(handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(TIMEOUT)


def sends_of(server: RecordingServer, conn: int, since: int = 0) -> list[bytes]:
    """The bytes of each send on accepted connection `conn` (from the `since`-th on); every one
    of them must have gone out with TCP_NODELAY set."""
    sends = server.accepted[conn].sends[since:]
    assert all(nodelay for _, nodelay in sends), "a send with Nagle's algorithm on"
    return [data for data, _ in sends]


def assert_one_write(sends: list[bytes], status: int, body: bytes) -> None:
    assert len(sends) == 1, f"the reply took {len(sends)} writes: {sends!r}"
    head, _, rest = sends[0].partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.") and head.split()[1] == str(status).encode()
    assert rest == body


def assert_event_per_write(sends: list[bytes]) -> None:
    """A stream: the headers, then each write holds exactly one whole event."""
    assert sends[0].endswith(b"\r\n\r\n") and b"text/event-stream" in sends[0]
    for data in sends[1:]:
        assert data.endswith(b"\n\n") and data.count(b"\n\n") == 1, data


# -- weather_http_server.py ------------------------------------------------------------
def test_weather_http_server_writes_each_reply_once() -> None:
    with serving(weather_http_server.MCPHandler) as server:
        conn = http.client.HTTPConnection(*server.server_address, timeout=TIMEOUT)

        def exchange(method: str, path: str, message: Any = None, headers: dict[str, str] | None = None
                     ) -> http.client.HTTPResponse:
            before = len(server.accepted[0].sends) if server.accepted else 0
            body = None if message is None else json.dumps(message)
            conn.request(method, path, body, {"Content-Type": "application/json", **(headers or {})})
            response = conn.getresponse()
            assert_one_write(sends_of(server, 0, before), response.status, response.read())
            return response

        modern = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": MODERN}
        call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": "get_forecast", "arguments": {"city": "Hangzhou"}, "_meta": META}}
        assert exchange("POST", "/mcp", call, {**modern, "Mcp-Method": "tools/call",
                                               "Mcp-Name": "get_forecast"}).status == 200
        assert exchange("POST", "/mcp", call, {**modern, "Mcp-Method": "tools/list"}).status == 400
        notification = {"jsonrpc": "2.0", "method": "notifications/initialized", "params": {"_meta": META}}
        assert exchange("POST", "/mcp", notification,
                        {**modern, "Mcp-Method": "notifications/initialized"}).status == 202
        assert exchange("GET", "/mcp").status == 405
        # A legacy session whose client prefers SSE: the events travel in the reply's one write.
        sse_first = {"Accept": "text/event-stream, application/json"}
        response = exchange("POST", "/mcp", {"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}},
            sse_first)
        session = {"Mcp-Session-Id": response.getheader("Mcp-Session-Id")}
        response = exchange("POST", "/mcp", {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
            "name": "get_forecast", "arguments": {"city": "London"}, "_meta": {"progressToken": "p"}}},
            {**sse_first, **session})
        assert response.getheader("Content-Type") == "text/event-stream"
        conn.close()
    assert len(server.accepted) == 1  # all of it on one keep-alive connection


def test_weather_http_server_sends_each_sse_event_once() -> None:
    """The 2024-11-05 stream: a progress notification and the reply, back to back, each in
    its own write (with Nagle on, the second would wait for the ACK of the first)."""
    with serving(weather_http_server.MCPHandler) as server:
        with socket.create_connection(server.server_address, timeout=TIMEOUT) as stream:
            stream.sendall(b"GET /sse HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n")
            lines = stream.makefile("rb")

            def next_event() -> str:
                data = []
                while (line := lines.readline().decode().rstrip("\r\n")) or not data:
                    if line.startswith("data:"):
                        data.append(line[5:].lstrip(" "))
                return "\n".join(data)

            while lines.readline() not in (b"\r\n", b""):  # the headers
                pass
            endpoint = next_event()
            post = http.client.HTTPConnection(*server.server_address, timeout=TIMEOUT)
            post.request("POST", endpoint, json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
                "name": "get_forecast", "arguments": {"city": "Tokyo"}, "_meta": {"progressToken": "t"}}}))
            response = post.getresponse()
            assert_one_write(sends_of(server, 1), 202, response.read())
            post.close()
            assert json.loads(next_event())["method"] == "notifications/progress"
            assert "Tokyo" in json.loads(next_event())["result"]["content"][0]["text"]
            sends = sends_of(server, 0)
        assert_event_per_write(sends)
        events = [data for data in sends[1:] if not data.startswith(b": keepalive")]
        assert len(events) == 3  # endpoint, progress, reply


# -- demo_model.py -----------------------------------------------------------------------
FORECAST_TOOL = [{"type": "function", "function": {
    "name": "weather__get_forecast", "description": "forecast",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]


def test_demo_model_writes_each_reply_and_event_once() -> None:
    question = {"model": demo_model.MODEL, "tools": FORECAST_TOOL,
                "messages": [{"role": "user", "content": "Will it rain in Hangzhou tomorrow?"}]}
    with serving(demo_model.ChatHandler) as server:
        for number, (method, path, body) in enumerate([
                ("GET", "/v1/models", None),
                ("POST", "/v1/chat/completions", question),
                ("POST", "/v1/chat/completions", {"model": demo_model.MODEL, "messages": []}),  # 400
                ("POST", "/v1/chat/completions", {**question, "stream": True})]):
            conn = http.client.HTTPConnection(*server.server_address, timeout=TIMEOUT)
            conn.request(method, path, None if body is None else json.dumps(body),
                         {"Content-Type": "application/json"})
            response = conn.getresponse()
            data = response.read()  # HTTP/1.0: until the server closes, so every send is in
            conn.close()
            sends = sends_of(server, number)
            if body and body.get("stream"):
                assert data.endswith(b"data: [DONE]\n\n")
                assert len(sends) > 3 and b"".join(sends[1:]) == data
                assert_event_per_write(sends)
            else:
                assert_one_write(sends, response.status, data)
