"""The OAuth flow against the fake servers: discovery fallbacks, metadata checks, client id
priority, scope selection, iss/state checks, token endpoint authentication, step-up, migration."""
from __future__ import annotations

import base64

import pytest

import mcpmini
from auth_fakes import AuthWorld, make_client
from harness import run


async def tools(client: mcpmini.Client, call: bool = False) -> list:
    async with client:
        listed = await client.list_tools()
        if call:
            await client.call_tool("echo", {})
        return listed


def test_auth_full_flow_with_dcr(world: AuthWorld) -> None:
    assert [t["name"] for t in run(tools(make_client(world)))] == ["echo"]
    (reg,) = world.registrations
    assert reg["application_type"] == "native" and reg["token_endpoint_auth_method"] == "none"
    assert "refresh_token" in reg["grant_types"]
    (req,) = world.authorize_requests
    assert req["code_challenge_method"] == "S256" and len(req["code_challenge"]) == 43
    assert req["resource"] == world.url and req["client_id"] == "dcr-client-1"
    assert "scope" not in req and req["state"] and req["redirect_uri"] == reg["redirect_uris"][0]
    (tok,) = world.token_requests
    assert tok["resource"] == world.url and tok["redirect_uri"] == req["redirect_uri"]
    assert tok["client_id"] == "dcr-client-1" and tok["_basic"] is None
    mcp_auth = [info["authorization"] for m, p, info in world.log if p == "/mcp"]
    assert mcp_auth[-1].startswith("Bearer access-")
    # no token ever went to metadata or AS endpoints
    assert all(info["authorization"] is None for m, p, info in world.log
               if p != "/mcp" and not p.endswith("/token"))


@pytest.mark.parametrize("prm_at", ["path", "root"])
def test_auth_prm_fallbacks(world: AuthWorld, prm_at: str) -> None:
    world.prm_at = prm_at
    if prm_at == "root":
        world.prm_resource = world.base  # a path prefix of the server URL: accepted
    run(tools(make_client(world)))
    paths = [p for m, p, _ in world.log if "oauth-protected-resource" in p]
    assert paths[0] == "/.well-known/oauth-protected-resource/mcp"
    assert world.authorize_requests[0]["resource"] == (world.prm_resource or world.url)


@pytest.mark.parametrize("form", ["oauth", "oidc", "oidc-append"])
def test_auth_as_metadata_path_insertion(world: AuthWorld, form: str) -> None:
    world.as_path, world.as_forms = "/tenant1", [form]
    run(tools(make_client(world)))
    assert len(world.token_requests) == 1
    assert ("GET", "/.well-known/oauth-authorization-server", {"authorization": None}) not in world.log


def test_auth_issuer_mismatch_refused(world: AuthWorld) -> None:
    world.issuer_override = "https://attacker.example.com"
    with pytest.raises(mcpmini.AuthError, match="issuer"):
        run(tools(make_client(world)))
    assert world.authorize_requests == [] and world.registrations == []


def test_auth_missing_pkce_refused_unless_assumed(world: AuthWorld) -> None:
    world.pkce = None
    with pytest.raises(mcpmini.AuthError, match="PKCE"):
        run(tools(make_client(world)))
    assert world.authorize_requests == []
    run(tools(make_client(world, assume_pkce=True)))
    assert world.authorize_requests[0]["code_challenge_method"] == "S256"


def test_auth_resource_mismatch_refused(world: AuthWorld) -> None:
    world.prm_resource = "https://evil.example.com/mcp"
    with pytest.raises(mcpmini.AuthError, match="evil.example.com"):
        run(tools(make_client(world)))
    assert not any("authorization-server" in p or "openid" in p for _, p, _ in world.log)


def test_auth_pre_registered_client_uses_basic(world: AuthWorld) -> None:
    world.dcr, world.pre_registered = False, ("pre-id", "pre-secret")
    run(tools(make_client(world, client_id="pre-id", client_secret="pre-secret")))
    (tok,) = world.token_requests
    assert tok["_basic"] == "Basic " + base64.b64encode(b"pre-id:pre-secret").decode()
    assert "client_id" not in tok and "client_secret" not in tok
    assert world.registrations == []


def test_auth_no_dcr_names_the_config_keys(world: AuthWorld) -> None:
    world.dcr = False
    with pytest.raises(mcpmini.AuthError, match="clientId"):
        run(tools(make_client(world)))


def test_auth_cimd_preferred_over_dcr(world: AuthWorld) -> None:
    world.cimd = True
    url = "https://client.example.com/mcpmini.json"
    run(tools(make_client(world, client_metadata_url=url)))
    assert world.authorize_requests[0]["client_id"] == url and world.registrations == []
    assert world.token_requests[0]["client_id"] == url


@pytest.mark.parametrize("method", ["client_secret_basic", "client_secret_post"])
def test_auth_dcr_assigned_token_auth(world: AuthWorld, method: str) -> None:
    world.dcr_method = method
    run(tools(make_client(world)))
    (tok,) = world.token_requests
    if method == "client_secret_basic":
        assert tok["_basic"] == "Basic " + base64.b64encode(b"dcr-client-1:dcr-secret").decode()
        assert "client_secret" not in tok
    else:
        assert tok["client_secret"] == "dcr-secret" and tok["_basic"] is None


@pytest.mark.parametrize("challenge,supported,expected", [
    ("files:read", ["a", "b"], "files:read"),
    (None, ["a", "b"], "a b"),
    (None, None, None)])
def test_auth_scope_selection(world: AuthWorld, challenge, supported, expected) -> None:
    world.challenge_scope, world.scopes_supported = challenge, supported
    run(tools(make_client(world)))
    assert world.authorize_requests[0].get("scope") == expected


def test_auth_offline_access_only_when_as_lists_it(world: AuthWorld) -> None:
    world.challenge_scope, world.as_scopes = "mcp:basic", ["mcp:basic", "offline_access"]
    run(tools(make_client(world)))
    req = world.authorize_requests[0]
    assert req["scope"] == "mcp:basic offline_access" and req["prompt"] == "consent"


@pytest.mark.parametrize("mode,supported,ok", [
    ("good", True, True), ("missing", True, False), ("wrong", True, False),
    ("normalized", True, False), ("missing", False, True), ("wrong", False, False)])
def test_auth_iss_validation(world: AuthWorld, mode: str, supported: bool, ok: bool) -> None:
    world.iss_mode, world.iss_supported = mode, supported
    if ok:
        run(tools(make_client(world)))
        assert len(world.token_requests) == 1
    else:
        with pytest.raises(mcpmini.AuthError, match="refused the authorization response"):
            run(tools(make_client(world)))
        assert world.token_requests == []


def test_auth_step_up_union_and_bound(world: AuthWorld) -> None:
    world.challenge_scope, world.call_scope = "mcp:basic", "mcp:write"
    run(tools(make_client(world), call=True))
    assert [r.get("scope") for r in world.authorize_requests] == ["mcp:basic", "mcp:basic mcp:write"]
    # a scope the AS never grants: one step-up per request, then the 403 stands (exit 4)
    world2 = AuthWorld()
    try:
        world2.challenge_scope, world2.call_scope, world2.never_grant = "mcp:basic", "admin", {"admin"}
        with pytest.raises(mcpmini.AuthError) as info:
            run(tools(make_client(world2), call=True))
        assert info.value.status == 403 and len(world2.authorize_requests) == 2
    finally:
        world2.close()


def test_auth_plain_403_not_retried(world: AuthWorld) -> None:
    async def scenario() -> None:
        client = make_client(world)
        async with client:
            await client.list_tools()
            world.call_scope = "x"
            world.challenge = lambda *a, **k: 'Bearer error="access_denied"'  # type: ignore[assignment]
            with pytest.raises(mcpmini.AuthError):
                await client.call_tool("echo", {})
    run(scenario())
    assert len(world.authorize_requests) == 1


def test_auth_server_migration_reregisters(world: AuthWorld) -> None:
    async def scenario() -> None:
        client = make_client(world)
        async with client:
            await client.list_tools()
            world.as_path = "/as2"          # PRM now names another AS; old tokens die
            world.tokens.clear()
            await client.list_tools()
    run(scenario())
    assert [r["client_id"] for r in world.authorize_requests] == ["dcr-client-1", "dcr-client-2"]
    assert len(world.registrations) == 2


def test_auth_non_interactive_asks_for_login(world: AuthWorld) -> None:
    with pytest.raises(mcpmini.AuthError, match="mcpmini login"):
        run(tools(make_client(world, interactive=False, login_hint="mcpmini login demo")))
    assert world.authorize_requests == [] and world.registrations == []


def test_auth_token_redirect_not_followed(world: AuthWorld) -> None:
    world.token_redirect = True
    with pytest.raises(mcpmini.AuthError, match="token request"):
        run(tools(make_client(world)))
    assert not any(p == "/elsewhere" for _, p, _ in world.log)


def test_auth_server_without_oauth_keeps_plain_error(world: AuthWorld) -> None:
    world.prm_at = None
    with pytest.raises(mcpmini.AuthError, match="needs a token"):
        run(tools(make_client(world)))


def test_auth_client_credentials_grant(world: AuthWorld) -> None:
    world.dcr, world.pre_registered = False, ("machine", "machine-secret")
    run(tools(make_client(world, grant="client_credentials", client_id="machine",
                          client_secret="machine-secret", interactive=False, open_browser=None)))
    (tok,) = world.token_requests
    assert tok["grant_type"] == "client_credentials" and tok["resource"] == world.url
    assert tok["_basic"] and world.authorize_requests == []
