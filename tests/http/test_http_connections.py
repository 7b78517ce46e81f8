"""Connections: keep-alive reuse (and its one retry), redirects, http and CONNECT proxies,
TLS with SSL_CERT_FILE, total deadlines, dedicated threads; the _http_request primitive."""
from __future__ import annotations

import asyncio
import base64
import concurrent.futures
import json
import shutil
import socket

import pytest

import mcpmini
from harness import run
from http_fakes import (ConnectProxy, FakeHTTPServer, MCPFake, Reply, make_certificates,
                        server_tls_context, sse_event, sse_reply)

TOKEN = "Bearer tok-0123456789abcdef"


async def fetch(method, url, **options):
    """(status, body, final url) of one _http_request."""
    resp = await mcpmini._http_request(method, url, **options)
    try:
        return resp.status, await resp.read(), resp.url
    finally:
        resp.close()


# -- keep-alive -------------------------------------------------------------------------------


@pytest.mark.parametrize("protocol", ["auto", "legacy", "2026-07-28 sse"])
def test_sequential_calls_use_one_connection(protocol):
    """SSE replies too: the stream's end comes a packet after the response, and the next call
    waits for it rather than opening a connection."""
    with FakeHTTPServer(MCPFake(sse=protocol != "auto")) as server:
        async def go():
            async with mcpmini.Client(server.url(), protocol=protocol.split()[0], era_cache=False) as client:
                await client.list_tools()
                warm = server.connections   # legacy: the GET stream may have raced the list
                for i in range(5):
                    result = await client.call_tool("echo", {"text": str(i)})
                    assert json.loads(mcpmini.result_text(result)) == {"text": str(i)}
                return warm
        warm = run(go())
    assert len(server.requests) >= 7
    assert server.connections == warm <= (1 if protocol == "auto" else 2)


def _drop_second_request_on_first_connection(seen: dict):
    def handler(request):
        seen[request.conn] = seen.get(request.conn, 0) + 1
        if request.conn == 1 and seen[1] == 2:
            return None   # the server drops the connection after reading the request
        return Reply(200, b"ok")
    return handler


def test_a_reused_connection_that_fails_is_retried_once_when_the_request_is_safe_to_repeat():
    with FakeHTTPServer(_drop_second_request_on_first_connection({})) as server:
        async def go():
            pool = mcpmini._ConnectionPool()
            try:
                assert (await fetch("POST", server.url(), body=b"1", pool=pool))[:2] == (200, b"ok")
                assert (await fetch("POST", server.url(), body=b"2", pool=pool,
                                    idempotent=True))[:2] == (200, b"ok")
            finally:
                pool.close()
        run(go())
    assert server.connections == 2 and server.dropped == 1
    assert [r.body for r in server.requests] == [b"1", b"2", b"2"]


def test_a_post_that_may_have_reached_the_server_is_never_sent_twice():
    """Issue 12 item 3: the body was read, then the connection closed: it may have run."""
    with FakeHTTPServer(_drop_second_request_on_first_connection({})) as server:
        async def go():
            pool = mcpmini._ConnectionPool()
            try:
                await fetch("POST", server.url(), body=b"1", pool=pool)
                with pytest.raises(mcpmini.ConnectionClosed, match="broke before the answer") as info:
                    await fetch("POST", server.url(), body=b"2", pool=pool)
                assert not isinstance(info.value, mcpmini._NotSent)
            finally:
                pool.close()
        run(go())
    assert [r.body for r in server.requests] == [b"1", b"2"]


def test_a_new_connection_that_fails_is_not_retried():
    def handler(request):
        return None

    with FakeHTTPServer(handler) as server:
        async def go():
            with pytest.raises(mcpmini.ConnectionClosed, match="broke before the answer"):
                await fetch("POST", server.url(), body=b"x", pool=mcpmini._ConnectionPool())
        run(go())
    assert len(server.requests) == 1


def test_an_unread_response_does_not_go_back_to_the_pool():
    with FakeHTTPServer(lambda request: Reply(200, b"x" * 100_000)) as server:
        async def go():
            pool = mcpmini._ConnectionPool()
            resp = await mcpmini._http_request("GET", server.url(), pool=pool)
            resp.close()   # body left unread: the connection is closed, not reused
            assert (await fetch("GET", server.url(), pool=pool))[0] == 200
            pool.close()
        run(go())
    assert server.connections == 2


def test_refused_connection_is_connection_closed():
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()

    async def go():
        with pytest.raises(mcpmini.ConnectionClosed, match="cannot reach"):
            async with mcpmini.Client(f"http://127.0.0.1:{port}/mcp", era_cache=False):
                pass
    run(go())


# -- redirects --------------------------------------------------------------------------------


def redirect_to(target, status=307):
    return lambda request: Reply(status, headers={"Location": target(request)})


def test_redirect_within_the_origin_keeps_post_and_credentials():
    fake = MCPFake()

    def handler(request):
        if request.path == "/old":
            return Reply(308, headers={"Location": "/mcp"})
        return fake(request)

    with FakeHTTPServer(handler) as server:
        async def go():
            async with mcpmini.Client(server.url("/old"), headers={"Authorization": TOKEN},
                                      era_cache=False) as client:
                return await client.call_tool("echo", {"text": "moved"})
        assert json.loads(mcpmini.result_text(run(go()))) == {"text": "moved"}
    moved = [r for r in server.requests if r.path == "/mcp"]
    assert moved and all(r.method == "POST" and r.headers["Authorization"] == TOKEN for r in moved)
    old_call, new_call = [r for r in server.requests if r.rpc_method == "tools/call"]
    assert old_call.body == new_call.body


def test_redirect_to_another_origin_is_refused_with_credentials_and_followed_without():
    with FakeHTTPServer(lambda request: Reply(200, b"elsewhere")) as other:
        with FakeHTTPServer(redirect_to(lambda r: other.url("/landing"))) as server:
            async def go():
                with pytest.raises(mcpmini.ProtocolError, match="another origin"):
                    await fetch("POST", server.url(), body=b"{}",
                                headers={"Authorization": TOKEN})
                with pytest.raises(mcpmini.ProtocolError, match="another origin"):
                    await fetch("POST", server.url(), body=b"{}", headers={"X-Api-Key": "k-123456"})
                assert other.requests == []   # the credentials never left
                return await fetch("POST", server.url(), body=b"{}",
                                   headers={"Content-Type": "application/json"})
            status, body, final = run(go())
    assert (status, body, final) == (200, b"elsewhere", other.url("/landing"))
    (landed,) = other.requests
    assert landed.method == "POST" and landed.body == b"{}" and landed.headers.get("Authorization") is None


@pytest.mark.parametrize("status", [301, 302, 303])
def test_a_post_is_not_turned_into_a_get(status):
    with FakeHTTPServer(redirect_to(lambda r: "/other", status)) as server:
        async def go():
            with pytest.raises(mcpmini.ProtocolError, match="307/308"):
                await fetch("POST", server.url(), body=b"{}")
        run(go())
    assert [r.method for r in server.requests] == ["POST"]


def test_get_follows_302_and_redirect_limits():
    def handler(request):
        if request.path == "/loop":
            return Reply(302, headers={"Location": "/loop"})
        if request.path == "/file":
            return Reply(302, headers={"Location": "file:///etc/passwd"})
        if request.path == "/start":
            return Reply(302, headers={"Location": "/end"})
        return Reply(200, b"end")

    with FakeHTTPServer(handler) as server:
        async def go():
            assert (await fetch("GET", server.url("/start")))[:2] == (200, b"end")
            with pytest.raises(mcpmini.ProtocolError, match="more than 5"):
                await fetch("GET", server.url("/loop"))
            with pytest.raises(mcpmini.ProtocolError, match="only http"):
                await fetch("GET", server.url("/file"))
        run(go())
    assert len([r for r in server.requests if r.path == "/loop"]) == 6


# -- proxies and TLS --------------------------------------------------------------------------


def test_http_proxy_gets_absolute_form_requests(monkeypatch):
    with FakeHTTPServer(MCPFake()) as proxy:
        monkeypatch.setenv("HTTP_PROXY", f"http://user:pa%40ss@127.0.0.1:{proxy.port}")
        monkeypatch.setenv("NO_PROXY", "")
        monkeypatch.setenv("no_proxy", "")

        async def go():
            async with mcpmini.Client("http://mcp.example.test:8123/mcp", era_cache=False) as client:
                return await client.call_tool("echo", {"text": "proxied"})
        assert json.loads(mcpmini.result_text(run(go()))) == {"text": "proxied"}
    assert proxy.requests
    for request in proxy.requests:
        assert request.path == "http://mcp.example.test:8123/mcp"
        assert request.headers["Host"] == "mcp.example.test:8123"
        assert request.headers["Proxy-Authorization"] == "Basic " + base64.b64encode(b"user:pa@ss").decode()


def test_no_proxy_is_honoured(monkeypatch):
    with FakeHTTPServer(MCPFake()) as server:
        monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")   # nothing listens there
        async def go():
            async with mcpmini.Client(server.url(), era_cache=False) as client:
                await client.list_tools()
        run(go())
    assert server.requests[0].path == "/mcp"


@pytest.fixture(scope="module")
def certificates(tmp_path_factory):
    if shutil.which("openssl") is None:
        pytest.skip("openssl is needed to make a test certificate")
    return make_certificates(tmp_path_factory.mktemp("certs"))


def test_https_through_a_connect_proxy(certificates, monkeypatch):
    ca, cert, key = certificates
    proxy = ConnectProxy()
    try:
        with FakeHTTPServer(MCPFake(), tls=server_tls_context(cert, key)) as server:
            monkeypatch.setenv("SSL_CERT_FILE", str(ca))
            monkeypatch.setenv("HTTPS_PROXY", f"http://127.0.0.1:{proxy.port}")
            monkeypatch.setenv("NO_PROXY", "")
            monkeypatch.setenv("no_proxy", "")

            async def go():
                async with mcpmini.Client(server.url(host="localhost"), headers={"Authorization": TOKEN},
                                          era_cache=False) as client:
                    return [await client.call_tool("echo", {"text": str(i)}) for i in range(3)]
            assert len(run(go())) == 3
        assert proxy.targets == [f"localhost:{server.port}"]   # one tunnel, kept alive
        assert all(r.headers["Authorization"] == TOKEN for r in server.requests)
        assert server.connections == 1
    finally:
        proxy.close()


def test_https_direct_and_an_untrusted_certificate(certificates, monkeypatch):
    ca, cert, key = certificates
    with FakeHTTPServer(MCPFake(), tls=server_tls_context(cert, key)) as server:
        async def go():
            async with mcpmini.Client(server.url(), era_cache=False) as client:
                return await client.list_tools()
        monkeypatch.setenv("SSL_CERT_FILE", str(cert.parent / "server.key"))  # trusts nothing
        with pytest.raises(mcpmini.ConnectionClosed, match="SSL_CERT_FILE"):
            run(go())
        monkeypatch.setenv("SSL_CERT_FILE", str(ca))
        assert run(go())


# -- deadlines, threads, the primitive --------------------------------------------------------


def test_the_timeout_is_a_total_deadline_for_a_trickling_body():
    with FakeHTTPServer(lambda request: Reply(200, chunks=[b"x", 0.05] * 400)) as server:
        async def go():
            resp = await mcpmini._http_request("GET", server.url(), timeout=0.5)
            try:
                with pytest.raises(mcpmini.RequestTimeout):
                    await resp.read()
            finally:
                resp.close()
            await asyncio.get_running_loop().run_in_executor(None, server.disconnected.wait, 10)
        run(go())
        assert server.disconnected.is_set()


def test_keep_alive_comments_do_not_keep_a_request_alive():
    with FakeHTTPServer(lambda request: sse_reply([b": keep-alive\n\n", 0.05] * 400)) as server:
        async def go():
            resp = await mcpmini._http_request("POST", server.url(), body=b"{}", timeout=0.5)
            try:
                with pytest.raises(mcpmini.RequestTimeout):
                    async for _ in resp.events():
                        pass
            finally:
                resp.close()
        run(go())


def test_http_request_primitive_events_chunks_and_headers():
    stream = sse_event({"n": 1}) + b"event: custom\ndata: two\ndata: lines\n\n" + sse_event({"n": 3}, id="9")
    pieces = [stream[i:i + 5] for i in range(0, len(stream), 5)]

    def handler(request):
        if request.path == "/sse":
            return sse_reply(pieces, headers={"X-Thing": "yes"})
        if request.path == "/big":
            return Reply(200, b"y" * 5000)
        return Reply(200, chunks=[b"a", b"b", b"c"])

    with FakeHTTPServer(handler) as server:
        async def go():
            resp = await mcpmini._http_request("POST", server.url("/sse"), body=b"{}",
                                               headers={"Accept": "text/event-stream"}, timeout=10)
            assert resp.status == 200 and resp.headers.get("x-thing") == "yes"
            assert resp.media_type == "text/event-stream"
            events = [e async for e in resp.events()]
            resp.close()
            assert events == [("message", '{"n": 1}', ""), ("custom", "two\nlines", ""),
                              ("message", '{"n": 3}', "9")]
            resp = await mcpmini._http_request("GET", server.url("/chunks"), timeout=10)
            assert b"".join([c async for c in resp.chunks()]) == b"abc"
            resp.close()
            resp = await mcpmini._http_request("GET", server.url("/big"), timeout=10)
            with pytest.raises(mcpmini.ProtocolError):
                await resp.read(limit=1000)
            resp.close()
        run(go())


def test_no_default_executor_is_used():
    class Refusing(concurrent.futures.ThreadPoolExecutor):
        def submit(self, *args, **kwargs):
            raise AssertionError("the default executor was used")

    with FakeHTTPServer(MCPFake(sse=True)) as server:
        async def go():
            asyncio.get_running_loop().set_default_executor(Refusing())
            async with mcpmini.Client(server.url(), protocol="legacy", era_cache=False) as client:
                await client.call_tool("echo", {})
        run(go())
