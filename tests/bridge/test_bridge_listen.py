"""`mcpmini bridge --listen` (issue 19, part 2): Streamable HTTP on loopback in front of a stdio
server, driven with http.client: the bearer token, Host and Origin checks, the body cap, legacy
sessions, both eras, SSE replies with progress and server requests, and hanging up."""
from __future__ import annotations

import http.client
import json
import socket
import time
from typing import Callable
from urllib.parse import urlsplit

import pytest

import mcpmini
from bridge_helpers import MODERN, StdioBridge, events, exchange, modern_meta
from harness import FakeServer, group_members as group, wait_until

Bridge = Callable[..., StdioBridge]
Upstream = Callable[..., FakeServer]
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {"elicitation": {}}, "clientInfo": {"name": "http", "version": "1"}}}
MODERN_HEADERS = {"MCP-Protocol-Version": MODERN}


def listen(bridge: Bridge, upstream: Upstream, *options: str,
           era: str = "both") -> tuple[str, str | None, FakeServer]:
    """A `--listen` bridge on a free port: its URL, its token and the upstream."""
    server = upstream(era)
    url, token = bridge(server, "--listen", "127.0.0.1:0", *options).endpoint()
    return url, token, server


def legacy_session(url: str, token: str | None) -> dict[str, str]:
    """initialize + initialized: the headers the session's later requests carry."""
    status, headers, _ = exchange(url, INIT, token=token)
    assert status == 200 and headers["mcp-session-id"]
    session = {"Mcp-Session-Id": headers["mcp-session-id"]}
    assert exchange(url, {"jsonrpc": "2.0", "method": "notifications/initialized"}, token=token,
                    headers=session)[0] == 202
    return session


def modern(rid: object, method: str, _meta: dict | None = None, **params: object) -> dict:
    """A 2026-07-28 request."""
    return {"jsonrpc": "2.0", "id": rid, "method": method, "params": {**params, "_meta": modern_meta(**(_meta or {}))}}


def test_a_bearer_token_is_required(bridge: Bridge, upstream: Upstream) -> None:
    url, token, server = listen(bridge, upstream)
    assert token and len(token) >= 32
    status, headers, _ = exchange(url, INIT)
    assert (status, headers["www-authenticate"]) == (401, "Bearer")
    wrong = token[:-1] + ("y" if token.endswith("x") else "x")   # one character off, never the token
    assert exchange(url, INIT, token=wrong)[0] == 401
    assert not server.record.exists()   # nothing refused reached the server
    assert exchange(url, INIT, token=token)[0] == 200
    chosen, _, _ = listen(bridge, upstream, "--token", "my-own-token-123")
    assert exchange(chosen, INIT, token="my-own-token-123")[0] == 200
    open_url, no_token, _ = listen(bridge, upstream, "--no-auth")
    assert no_token is None and exchange(open_url, INIT)[0] == 200


def test_host_and_origin_must_name_the_listener(bridge: Bridge, upstream: Upstream) -> None:
    url, token, server = listen(bridge, upstream)
    port = urlsplit(url).port
    for bad in ({"Host": "evil.example"}, {"Host": f"attacker.example:{port}"},
                {"Origin": "http://evil.example"}, {"Origin": f"http://rebind.example:{port}"}):
        assert exchange(url, INIT, token=token, headers=bad)[0] == 403, bad
    assert not server.record.exists()
    assert exchange(url, INIT, token=token, headers={"Host": f"localhost:{port}",
                                                     "Origin": f"http://localhost:{port}"})[0] == 200


def test_oversized_bodies_are_refused_unread(bridge: Bridge, upstream: Upstream) -> None:
    url, token, server = listen(bridge, upstream)
    parts = urlsplit(url)
    with socket.create_connection((parts.hostname, parts.port), timeout=10) as sock:
        sock.sendall(f"POST /mcp HTTP/1.1\r\nHost: {parts.netloc}\r\nAuthorization: Bearer {token}\r\n"
                     f"Content-Type: application/json\r\nContent-Length: {mcpmini.MAX_BRIDGE_BODY + 1}\r\n\r\n"
                     .encode() + b"{" * 1024)
        assert sock.recv(1024) == b""   # closed before the body was read
    assert exchange(url, INIT, token=token)[0] == 200   # the listener still serves
    assert server.methods()[-1] != "tools/call"


def test_unreadable_bodies_get_400(bridge: Bridge, upstream: Upstream) -> None:
    url, token, _ = listen(bridge, upstream)
    for body in (b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list"', b"[]", b"not JSON", b'{"id": null}'):
        assert exchange(url, body, token=token)[0] == 400, body
    assert exchange(url, INIT, token=token)[0] == 200


def test_legacy_sessions(bridge: Bridge, upstream: Upstream) -> None:
    url, token, _ = listen(bridge, upstream)
    session = legacy_session(url, token)
    tools = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
    assert exchange(url, tools, token=token)[0] == 400                                  # no session
    assert exchange(url, tools, token=token, headers={"Mcp-Session-Id": "made-up"})[0] == 404
    status, headers, body = exchange(url, tools, token=token, headers=session)
    # a client that declared elicitation gets SSE: the server may ask it something on the way
    assert status == 200 and headers["content-type"] == "text/event-stream"
    assert "resultType" not in events(body)[0]["result"]
    assert exchange(url, None, token=token, verb="DELETE", headers=session)[0] == 200
    assert exchange(url, tools, token=token, headers=session)[0] == 404                 # ended
    assert exchange(url, None, token=token, verb="GET")[0] == 405
    assert exchange(url.replace("/mcp", "/other"), tools, token=token)[0] == 404


def test_modern_requests_need_no_session(bridge: Bridge, upstream: Upstream) -> None:
    url, token, server = listen(bridge, upstream, era="legacy")
    status, headers, body = exchange(url, modern(1, "server/discover"), token=token, headers=MODERN_HEADERS)
    found = json.loads(body)["result"]
    assert status == 200 and "mcp-session-id" not in headers
    assert (found["resultType"], found["ttlMs"], found["cacheScope"]) == ("complete", 0, "private")
    called = json.loads(exchange(url, modern(2, "tools/call", name="echo", arguments={"x": 1}), token=token,
                                 headers=MODERN_HEADERS)[2])["result"]
    assert called["resultType"] == "complete" and called["structuredContent"]["args"] == {"x": 1}
    [init] = server.requests("initialize")
    assert init["params"]["clientInfo"] == {"name": "raw-modern", "version": "7"}


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_progress_comes_as_sse_before_the_result(bridge: Bridge, upstream: Upstream, era: str) -> None:
    url, token, _ = listen(bridge, upstream)
    if era == "legacy":
        headers = legacy_session(url, token)
        request = {"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                   "params": {"name": "progress", "arguments": {}, "_meta": {"progressToken": "tk"}}}
    else:
        headers = MODERN_HEADERS
        request = modern(7, "tools/call", name="progress", arguments={}, _meta={"progressToken": "tk"})
    status, sent, body = exchange(url, request, token=token, headers=headers)
    assert status == 200 and sent["content-type"] == "text/event-stream"
    messages = events(body)
    assert [(m["params"]["progressToken"], m["params"]["progress"]) for m in messages[:2]] == [("tk", 1), ("tk", 2)]
    assert messages[2]["id"] == 7 and messages[2]["result"]["content"][0]["text"] == "done after 2 steps"
    assert ("resultType" in messages[2]["result"]) == (era == "modern")


def test_a_server_request_travels_on_the_reply_stream(bridge: Bridge, upstream: Upstream) -> None:
    url, token, _ = listen(bridge, upstream, era="legacy")
    session = legacy_session(url, token)
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=15)
    conn.request("POST", "/mcp", json.dumps({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                                             "params": {"name": "ask", "arguments": {}}}),
                 {"Authorization": f"Bearer {token}", "Content-Type": "application/json", **session})
    stream = conn.getresponse()
    assert stream.getheader("content-type") == "text/event-stream"
    lines = [stream.fp.readline() for _ in range(3)]
    asked = json.loads(lines[1][5:])
    assert asked["method"] == "elicitation/create"
    answer = {"jsonrpc": "2.0", "id": asked["id"], "result": {"action": "accept", "content": {"city": "Bern"}}}
    assert exchange(url, answer, token=token, headers=session)[0] == 202
    result = events(stream.read())[0]
    assert result["id"] == 3 and result["result"]["structuredContent"]["answer"]["result"]["content"] == {"city": "Bern"}
    conn.close()


def test_hanging_up_cancels_the_upstream_call(bridge: Bridge, upstream: Upstream) -> None:
    url, token, server = listen(bridge, upstream, era="modern")
    parts = urlsplit(url)
    body = json.dumps(modern(4, "tools/call", name="slow", arguments={"seconds": 20})).encode()
    with socket.create_connection((parts.hostname, parts.port), timeout=10) as sock:
        sock.sendall(f"POST /mcp HTTP/1.1\r\nHost: {parts.netloc}\r\nAuthorization: Bearer {token}\r\n"
                     f"Content-Type: application/json\r\nMCP-Protocol-Version: {MODERN}\r\n"
                     f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
        call = wait_until(server.calls)
    cancels = wait_until(server.cancels)
    assert [c["params"]["requestId"] for c in cancels] == [call[0]["id"]]


def test_listen_refuses_what_is_not_loopback(capsys: pytest.CaptureFixture[str]) -> None:
    assert mcpmini.main(["bridge", "--listen", "0.0.0.0:8000", "python3 -c pass"]) == 2
    assert "not a loopback address" in capsys.readouterr().err
    assert mcpmini.main(["bridge", "--listen", "127.0.0.1:http", "python3 -c pass"]) == 2
    assert "is not [HOST:]PORT" in capsys.readouterr().err


def test_sigterm_ends_the_listener_and_its_upstream(bridge: Bridge, upstream: Upstream) -> None:
    server = upstream("legacy")
    b = bridge(server, "--listen", "0", "--no-auth", "--eager")
    url, _ = b.endpoint()
    start = wait_until(lambda: next(iter(server.starts()), None))
    b.proc.terminate()
    began = time.monotonic()
    assert b.proc.wait(10) == 143   # SIGTERM (issue 18)
    print(f"--listen bridge exited {time.monotonic() - began:.2f} s after SIGTERM")
    assert wait_until(lambda: not group(start["pgid"]), 3)
