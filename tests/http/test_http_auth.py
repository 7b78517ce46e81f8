"""Auth and configured headers: 401/403 become AuthError (exit 4) with the server's
WWW-Authenticate details and a hint, never retried and never a reason to fall back; tokens
never appear in messages; configured headers go on every request of every transport."""
from __future__ import annotations

import logging

import pytest

import mcpmini
from harness import run
from http_fakes import FakeHTTPServer, MCPFake, Reply, Resumable, SSEFake, json_reply

TOKEN = "s3cr3t-token-0123456789"
METADATA = "https://auth.example/.well-known/oauth-protected-resource"


def refuse(status, challenge):
    def handler(request):
        return Reply(status, b'{"error":"unauthorized"}', content_type="application/json",
                     headers={"WWW-Authenticate": challenge} if challenge else {})
    return handler


def connect_error(url, **options):
    async def go():
        with pytest.raises(mcpmini.AuthError) as info:
            async with mcpmini.Client(url, **options):
                pass
        return info.value
    return run(go())


def test_401_is_an_auth_error_with_details_and_no_fallback(caplog):
    challenge = f'Bearer resource_metadata="{METADATA}", scope="files:read"'
    with FakeHTTPServer(refuse(401, challenge)) as server:
        with caplog.at_level(logging.DEBUG, logger="mcpmini"):
            exc = connect_error(server.url())
    assert exc.status == 401
    assert exc.www_authenticate["resource_metadata"] == METADATA
    assert exc.www_authenticate["scope"] == "files:read"
    assert exc.www_authenticate["scheme"] == "Bearer"
    text = str(exc)
    assert "401" in text and server.url() in text and METADATA in text and "files:read" in text
    assert "token" in text and "Authorization" in text
    # one POST: not retried, no legacy initialize, no HTTP+SSE GET
    assert [(r.method, r.rpc_method) for r in server.requests] == [("POST", "server/discover")]


def test_401_with_a_configured_token_never_shows_the_token(caplog):
    with FakeHTTPServer(refuse(401, 'Bearer error="invalid_token"')) as server:
        url = server.url("/mcp?key=query-secret-value")
        with caplog.at_level(logging.DEBUG, logger="mcpmini"):
            exc = connect_error(url, headers={"Authorization": f"Bearer {TOKEN}"})
    text = str(exc)
    assert "refused" in text and "invalid_token" in text
    assert TOKEN not in text and "query-secret-value" not in text and TOKEN not in exc.url
    assert TOKEN not in caplog.text
    assert server.requests[0].headers["Authorization"] == f"Bearer {TOKEN}"
    assert len(server.requests) == 1


def test_403_insufficient_scope_names_the_scope():
    challenge = f'Bearer error="insufficient_scope", scope="tools:write", resource_metadata="{METADATA}"'
    with FakeHTTPServer(refuse(403, challenge)) as server:
        exc = connect_error(server.url(), headers={"Authorization": f"Bearer {TOKEN}"})
    assert exc.status == 403 and exc.www_authenticate["error"] == "insufficient_scope"
    assert "'tools:write'" in str(exc) and "scope" in str(exc)
    assert len(server.requests) == 1


def test_401_on_a_call_in_the_legacy_era_is_not_retried():
    fake = MCPFake()

    def handler(request):
        if request.rpc_method == "tools/call":
            return Reply(401, headers={"WWW-Authenticate": 'Bearer realm="mcp"'})
        return fake(request)

    with FakeHTTPServer(handler) as server:
        async def go():
            async with mcpmini.Client(server.url(), protocol="legacy", era_cache=False) as client:
                with pytest.raises(mcpmini.AuthError, match="401"):
                    await client.call_tool("echo", {})
        run(go())
    assert len(server.by_method("tools/call")) == 1
    assert len(server.by_method("initialize")) == 1


def test_401_on_the_http_sse_stream():
    with FakeHTTPServer(refuse(401, 'Bearer scope="sse"')) as server:
        config = mcpmini.ServerConfig(name="sse", url=server.url("/sse"), type="sse")
        exc = connect_error(config, era_cache=False)
    assert exc.status == 401 and exc.www_authenticate["scope"] == "sse"


@pytest.mark.parametrize("status, challenge, needle", [
    (401, f'Bearer resource_metadata="{METADATA}"', METADATA),
    (403, 'Bearer error="insufficient_scope", scope="admin"', "'admin'"),
])
def test_cli_exits_4_with_the_details(cli, status, challenge, needle):
    with FakeHTTPServer(refuse(status, challenge)) as server:
        code, _, err = cli("tools", server.url(), "-H", f"Authorization: Bearer {TOKEN}")
    assert code == 4
    assert str(status) in err and needle in err and TOKEN not in err


def test_configured_headers_on_every_request_of_streamable_http():
    """POST (requests, notifications, replies), the resuming GET and the closing DELETE."""
    headers = {"Authorization": f"Bearer {TOKEN}", "X-Api-Key": "key-abcdef"}
    with FakeHTTPServer(Resumable(retry=50)) as server:
        async def go():
            async with mcpmini.Client(server.url(), headers=headers, protocol="legacy",
                                      era_cache=False) as client:
                await client.list_tools()
                return await client.call_tool("echo", {})
        assert mcpmini.result_text(run(go())) == "resumed"
    methods = {r.method for r in server.requests}
    assert methods == {"POST", "GET", "DELETE"}
    for request in server.requests:
        assert request.headers["Authorization"] == f"Bearer {TOKEN}"
        assert request.headers["X-Api-Key"] == "key-abcdef"


def test_configured_headers_from_config_are_expanded_and_sent(monkeypatch):
    monkeypatch.setenv("MCP_TEST_TOKEN", TOKEN)
    fake = SSEFake()
    with FakeHTTPServer(fake) as server:
        config = mcpmini.ServerConfig(name="s", url=server.url("/sse"), type="sse",
                                      headers={"Authorization": "Bearer ${MCP_TEST_TOKEN}"})

        async def go():
            async with mcpmini.Client(config, era_cache=False) as client:
                await client.list_tools()
        try:
            run(go())
        finally:
            fake.close_stream.set()
    assert len(server.requests) >= 3
    assert all(r.headers["Authorization"] == f"Bearer {TOKEN}" for r in server.requests)
    assert mcpmini._redact(f"token {TOKEN}") == "token ***"


def test_a_header_with_a_newline_is_a_config_error():
    with pytest.raises(mcpmini.ConfigError, match="X-Evil"):
        mcpmini._StreamableHTTPTransport("http://127.0.0.1:1/mcp",
                                         headers={"X-Evil": "a\r\nInjected: yes"})


def test_a_json_rpc_body_on_401_is_still_an_auth_error():
    def handler(request):
        return json_reply({"jsonrpc": "2.0", "id": None, "error": {"code": -32001, "message": "no"}}, 401)

    with FakeHTTPServer(handler) as server:
        exc = connect_error(server.url(), era_cache=False)
    assert exc.status == 401
