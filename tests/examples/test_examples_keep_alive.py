"""The example HTTP server reads every request body, whatever its answer (issue 25, item 13):
an answer sent without reading the body left it on the keep-alive connection, where it was
read as the next request (501)."""
from __future__ import annotations

import contextlib
import http.client
import json
import threading
from http.server import ThreadingHTTPServer
from typing import Iterator

import pytest

import weather_http_server  # examples/ is on pytest's pythonpath

MODERN = "2026-07-28"
META = {"io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "keep-alive-test", "version": "0"}}
CALL = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "get_forecast", "arguments": {"city": "Hangzhou"}, "_meta": META}}
HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
           "MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call", "Mcp-Name": "get_forecast"}


@pytest.fixture
def connection() -> Iterator[http.client.HTTPConnection]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), weather_http_server.MCPHandler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    conn = http.client.HTTPConnection(*server.server_address, timeout=20)
    try:
        yield conn
    finally:
        conn.close()
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("method, path, headers, status", [
    ("POST", "/nowhere", {}, 404),
    ("DELETE", "/nowhere", {}, 404),
    ("GET", "/nowhere", {}, 404),
    ("POST", "/messages?session_id=unknown", {}, 404),
    ("POST", "/mcp", {"Origin": "http://evil.example"}, 403),
    ("DELETE", "/mcp", {}, 400),
])
def test_the_next_request_on_the_connection_is_answered(connection, method, path, headers, status):
    body = json.dumps({"padding": "x" * 5000, **CALL})
    with contextlib.closing(connection):
        connection.request(method, path, body, {**HEADERS, **headers})
        first = connection.getresponse()
        first.read()
        assert first.status == status
        connection.request("POST", "/mcp", json.dumps(CALL), HEADERS)   # on the same connection
        second = connection.getresponse()
        text = second.read().decode()
        assert second.status == 200 and "Hangzhou" in text, text
        assert connection.sock is not None   # still the one connection: nothing reconnected


def test_a_body_it_cannot_size_ends_the_connection(connection):
    connection.putrequest("POST", "/nowhere")
    connection.putheader("Transfer-Encoding", "chunked")
    connection.endheaders(b"5\r\nhello\r\n0\r\n\r\n")
    response = connection.getresponse()
    assert response.status == 404 and response.getheader("Connection", "").lower() != "keep-alive"
    response.read()
    assert response.will_close
