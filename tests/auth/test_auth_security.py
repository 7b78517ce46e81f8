"""Security rules: WWW-Authenticate parsing, SSRF refusals, browser URL checks, origin-bound
tokens, redaction, paste-back parsing, state single use."""
from __future__ import annotations

import pytest

import mcpmini
from auth_fakes import AuthWorld, make_client
from harness import run


def test_auth_challenge_parser_not_fooled() -> None:
    header = ('Basic realm="x", Bearer error="invalid_token", '
              'error_description="try scope=admin, resource_metadata=\\"https://evil\\"", '
              'resource_metadata="https://rs.example/.well-known/oauth-protected-resource", scope="files:read"')
    params = mcpmini._bearer_params(header)
    assert params["scope"] == "files:read"
    assert params["resource_metadata"] == "https://rs.example/.well-known/oauth-protected-resource"
    assert params["error_description"] == 'try scope=admin, resource_metadata="https://evil"'
    assert mcpmini._bearer_params('Basic realm="a"') == {}
    assert mcpmini._bearer_params("Bearer scope=a") == {"scope": "a"}


@pytest.mark.parametrize("url", [
    "http://169.254.169.254/latest/meta-data",   # cloud metadata: always refused
    "https://0.0.0.0/x",
    "https://[fe80::1]/x",
    "https://[::ffff:127.0.0.1]/x",              # loopback in disguise, from a public server
    "https://127.0.0.1/x",
    "https://10.0.0.1/x",
    "http://example.com/x",                      # plain http off loopback
    "javascript:alert(1)",
    "https://user:pw@example.com/x",
    "https://example.com/x#frag",
    "https://example.com/\nx",
])
def test_auth_ssrf_refusals(url: str) -> None:
    with pytest.raises(mcpmini.AuthError, match="refused"):
        mcpmini._check_oauth_url(url, "metadata URL", allow_private=False)


def test_auth_loopback_allowed_for_loopback_server() -> None:
    assert mcpmini._check_oauth_url("http://127.0.0.1:9/x", "u", allow_private=True)
    with pytest.raises(mcpmini.AuthError):  # link-local stays refused even then
        mcpmini._check_oauth_url("http://169.254.169.254/", "u", allow_private=True)


def test_auth_public_server_refuses_loopback_metadata(world: AuthWorld) -> None:
    auth = mcpmini._OAuth("https://mcp.example.com/mcp")
    with pytest.raises(mcpmini.AuthError, match="protected resource metadata"):
        run(auth.discover({"resource_metadata": world.base + "/.well-known/oauth-protected-resource/mcp"}))
    assert world.log == []  # the loopback URL was refused, never fetched


@pytest.mark.parametrize("url", ["-https://x", "javascript:alert(1)", "file:///etc/passwd",
                                 "http://example.com/authorize", "https://a.example/\x1b[2J"])
def test_auth_browser_url_checked(url: str) -> None:
    with pytest.raises(mcpmini.AuthError):
        mcpmini._check_browser_url(url)


def test_auth_token_only_to_its_origin(world: AuthWorld) -> None:
    async def scenario() -> tuple[dict, dict]:
        client = make_client(world)
        async with client:
            await client.list_tools()
            other = await client.auth.headers("http://127.0.0.2:1/mcp")
            same = await client.auth.headers(world.url)
        return other, same
    other, same = run(scenario())
    assert other == {} and same["Authorization"].startswith("Bearer ")


def test_auth_secrets_redacted(world: AuthWorld) -> None:
    world.refresh = True
    world.dcr_method = "client_secret_post"
    run(make_client(world).__aenter__())
    token = next(iter(world.tokens))
    text = mcpmini._redact(f"a {token} b refresh-2 c dcr-secret")
    assert token not in text and "refresh-2" not in text and "dcr-secret" not in text


def test_auth_pasted_redirect() -> None:
    redirect = "http://127.0.0.1:5000/callback"
    assert mcpmini._pasted_query(f"{redirect}?code=c&state=s\n", redirect) == "code=c&state=s"
    assert mcpmini._pasted_query("?code=c&state=s", redirect) == "code=c&state=s"
    with pytest.raises(mcpmini.AuthError):
        mcpmini._pasted_query("http://127.0.0.1:5000/other?code=c", redirect)


def test_auth_paste_back_with_wrong_state_refused(world: AuthWorld) -> None:
    world.iss_supported = False  # so that the state check decides

    def paste() -> str:
        return "http://127.0.0.1:1/callback?code=code-1&state=forged"
    with pytest.raises(mcpmini.AuthError, match="state"):
        run(make_client(world, open_browser=None, paste=paste).__aenter__())
    assert world.token_requests == []


def test_auth_state_and_verifier_fresh_per_attempt(world: AuthWorld) -> None:
    world.challenge_scope, world.call_scope = "a", "b"

    async def scenario() -> None:
        client = make_client(world)
        async with client:
            await client.call_tool("echo", {})
    run(scenario())
    first, second = world.authorize_requests
    assert first["state"] != second["state"] and first["code_challenge"] != second["code_challenge"]
