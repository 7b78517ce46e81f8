"""The legacy HTTP+SSE transport (2024-11-05): endpoint resolution, same-origin rule,
replies on the stream, the stream closing, the auto fallback and its era cache entry."""
from __future__ import annotations

import asyncio
import json

import pytest

import mcpmini
from harness import run
from http_fakes import FakeHTTPServer, MCPFake, Reply, SSEFake


def sse_client(url, **options):
    config = mcpmini.ServerConfig(name="sse", url=url, type="sse", **options)
    return mcpmini.Client(config, era_cache=False)


@pytest.mark.parametrize("endpoint, expected", [
    ("/messages?session_id=abc", "/messages?session_id=abc"),
    ("messages/?session_id=x", "/messages/?session_id=x"),        # relative to /sse
    ("  /messages?session_id=sp  ", "/messages?session_id=sp"),
])
def test_endpoint_is_resolved_against_the_sse_url(endpoint, expected):
    fake = SSEFake(endpoint=endpoint)
    with FakeHTTPServer(fake) as server:
        async def go():
            async with sse_client(server.url("/sse"), headers={"X-Api-Key": "key-123456"}) as client:
                assert (client.era, client.protocol_version) == ("legacy", "2024-11-05")
                return await client.call_tool("echo", {"text": "over sse"})
        try:
            assert json.loads(mcpmini.result_text(run(go()))) == {"text": "over sse"}
        finally:
            fake.close_stream.set()
    posts = [r for r in server.requests if r.method == "POST"]
    assert [p.rpc_method for p in posts] == ["initialize", "notifications/initialized", "tools/call"]
    assert all(p.path == expected for p in posts)
    assert all(r.headers["X-Api-Key"] == "key-123456" for r in server.requests)   # GET and POSTs
    (get,) = [r for r in server.requests if r.method == "GET"]
    assert get.path == "/sse" and "text/event-stream" in get.headers["Accept"]


@pytest.mark.parametrize("endpoint", [
    "file:///etc/passwd",
    "//other.example/messages",
    "http://other.example/messages",
    "http://127.0.0.1:{other}/messages",
    "https://127.0.0.1:{port}/messages",
    "http://localhost:{port}/messages",
    "javascript:alert(1)",
])
def test_an_endpoint_on_another_origin_is_refused(endpoint):
    with FakeHTTPServer(Reply) as other:
        fake = SSEFake()
        with FakeHTTPServer(fake) as server:
            fake.endpoint = endpoint.format(port=server.port, other=other.port)

            async def go():
                with pytest.raises(mcpmini.ProtocolError, match="refused the HTTP\\+SSE endpoint"):
                    async with sse_client(server.url("/sse")):
                        pass
            try:
                run(go())
            finally:
                fake.close_stream.set()
        assert [r.method for r in server.requests] == ["GET"]
    assert other.requests == []


def test_pending_requests_fail_at_once_when_the_stream_closes():
    inner = MCPFake(sessions=False, call=lambda request, params: None)   # never answers
    fake = SSEFake(inner=inner)
    with FakeHTTPServer(fake) as server:
        async def go():
            async with sse_client(server.url("/sse")) as client:
                calls = [asyncio.ensure_future(client.call_tool("echo", {}, timeout=60)) for _ in range(2)]
                while len(server.by_method("tools/call")) < 2:
                    await asyncio.sleep(0.02)
                fake.close_stream.set()
                done = await asyncio.gather(*calls, return_exceptions=True)
                return done
        try:
            outcomes = run(go(), timeout=20)   # well before the calls' own 60 s timeout
        finally:
            fake.close_stream.set()
    assert all(isinstance(o, mcpmini.ConnectionClosed) for o in outcomes), outcomes
    assert "stream" in str(outcomes[0])


def test_auto_falls_back_to_http_sse_and_remembers_it():
    fake = SSEFake(endpoint="/messages?session_id=auto")
    with FakeHTTPServer(fake) as server:   # POST /sse: 405 (not a Streamable HTTP endpoint)
        async def go():
            async with mcpmini.Client(server.url("/sse")) as client:
                await client.list_tools()
                return client.era, client.era_reason
        try:
            era, reason = run(go())
            assert era == "legacy" and "HTTP+SSE" in reason and "405" in reason
            first = len(server.requests)

            async def again():
                async with mcpmini.Client(server.url("/sse")) as client:
                    return client.protocol_version
            assert run(again()) == "2024-11-05"
        finally:
            fake.close_stream.set()
    later = server.requests[first:]
    assert later[0].method == "GET"    # straight to the stream: no probe, no initialize POST to /sse
    assert all(r.path != "/sse" for r in later if r.method == "POST")


def test_a_get_that_is_not_an_event_stream_fails_clearly():
    with FakeHTTPServer(lambda request: Reply(404, b"nope", content_type="text/plain")) as server:
        async def go():
            with pytest.raises(mcpmini.ConnectionClosed, match="404"):
                async with sse_client(server.url("/sse")):
                    pass
        run(go())
