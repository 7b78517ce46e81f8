"""Token store: 0600 file, keys, absolute expiry, refresh before login, carry-forward,
invalid_grant, and two processes refreshing one rotating refresh token at once."""
from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import mcpmini
from auth_fakes import AuthWorld, follow, make_client
from harness import ROOT, run


def stored(path: Path) -> dict:
    return json.loads(path.read_text())


def expire(path: str) -> None:
    """As if time passed: every stored token expired 10 s ago."""
    data = json.loads(Path(path).read_text())
    for token in data["tokens"].values():
        token["expires_at"] = int(time.time()) - 10
    Path(path).write_text(json.dumps(data))


async def list_tools(client: mcpmini.Client) -> None:
    async with client:
        await client.list_tools()


def test_auth_store_file_private_and_keyed(world: AuthWorld, tmp_path: Path) -> None:
    path = tmp_path / "state" / "oauth.json"
    run(list_tools(make_client(world, store=mcpmini._TokenStore(str(path)))))
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    data = stored(path)
    assert data["servers"][world.url] == {"issuer": world.issuer, "resource": world.url}
    assert list(data["clients"]) == [world.issuer]
    token = data["tokens"][f"{world.issuer} {world.url}"]
    assert token["expires_at"] > time.time() + 3000  # absolute, not expires_in
    assert not list(path.parent.glob("*.lock")) and not list(path.parent.glob("*.tmp"))


def test_auth_default_store_under_state_dir(world: AuthWorld, tmp_path: Path) -> None:
    client = mcpmini.Client(world.url, protocol=mcpmini.MODERN_VERSION, era_cache=False, timeout=10,
                            auth={"interactive": True, "open_browser": follow,
                                  "callback_port": 0})
    run(list_tools(client))
    assert (tmp_path / "xdg-state" / "mcpmini" / "oauth.json").exists()


def test_auth_store_fixes_loose_permissions(tmp_path: Path) -> None:
    path = tmp_path / "oauth.json"
    path.write_text("{}")
    os.chmod(path, 0o644)
    mcpmini._TokenStore(str(path)).load()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_auth_refresh_before_interactive_login(world: AuthWorld, tmp_path: Path) -> None:
    world.refresh = True
    store = str(tmp_path / "oauth.json")
    run(list_tools(make_client(world, store=mcpmini._TokenStore(store))))
    expire(store)
    first = stored(Path(store))["tokens"][f"{world.issuer} {world.url}"]
    # a new process: not interactive, but the stored refresh token is enough
    run(list_tools(make_client(world, store=mcpmini._TokenStore(store), interactive=False)))
    assert len(world.authorize_requests) == 1
    assert [r["grant_type"] for r in world.token_requests] == ["authorization_code", "refresh_token"]
    assert world.token_requests[1]["resource"] == world.url
    second = stored(Path(store))["tokens"][f"{world.issuer} {world.url}"]
    assert second["refresh_token"] != first["refresh_token"]   # rotated and saved


def test_auth_cimd_client_refreshes_again_and_again(world: AuthWorld, tmp_path: Path) -> None:
    """A Client ID Metadata Document client is remembered with each refreshed token: the
    second refresh finds it too (it once lost it, and asked for a new login)."""
    world.refresh, world.cimd = True, True
    url, store = "https://client.example.com/mcpmini.json", str(tmp_path / "oauth.json")
    run(list_tools(make_client(world, store=mcpmini._TokenStore(store), client_metadata_url=url)))
    for _ in range(2):
        expire(store)
        run(list_tools(make_client(world, store=mcpmini._TokenStore(store), interactive=False,
                                   client_metadata_url=url)))
    assert [r["grant_type"] for r in world.token_requests] == [
        "authorization_code", "refresh_token", "refresh_token"]
    assert {r["client_id"] for r in world.token_requests} == {url} and len(world.authorize_requests) == 1


def test_auth_a_token_stored_for_the_same_resource_serves_another_url(world: AuthWorld, tmp_path: Path) -> None:
    """A second URL of the same protected resource (here: with a query) finds the token the
    first one got, after discovery, and is pointed at it: no second authorization."""
    store = mcpmini._TokenStore(str(tmp_path / "oauth.json"))
    run(list_tools(make_client(world, store=store)))
    other = world.url + "?tenant=a"
    run(list_tools(mcpmini.Client(other, protocol=mcpmini.MODERN_VERSION, era_cache=False, timeout=10,
                                  auth={"store": store, "interactive": True, "callback_port": 0,
                                        "open_browser": lambda url: None})))
    assert len(world.authorize_requests) == 1
    assert mcpmini._canonical_url(other) in stored(tmp_path / "oauth.json")["servers"]


def test_auth_refresh_carries_values_forward(world: AuthWorld, tmp_path: Path) -> None:
    world.refresh, world.rotate = True, False
    world.challenge_scope = "mcp:basic"
    store = str(tmp_path / "oauth.json")
    run(list_tools(make_client(world, store=mcpmini._TokenStore(store))))
    expire(store)
    run(list_tools(make_client(world, store=mcpmini._TokenStore(store), interactive=False)))
    token = stored(Path(store))["tokens"][f"{world.issuer} {world.url}"]
    assert token["refresh_token"] == "refresh-2" and token["scope"] == "mcp:basic"


def test_auth_invalid_grant_drops_tokens(world: AuthWorld, tmp_path: Path) -> None:
    world.refresh = True
    store = str(tmp_path / "oauth.json")
    run(list_tools(make_client(world, store=mcpmini._TokenStore(store))))
    expire(store)
    world.refresh_tokens.clear()  # the grant was revoked
    with pytest.raises(mcpmini.AuthError, match="mcpmini login"):
        run(list_tools(make_client(world, store=mcpmini._TokenStore(store), interactive=False)))
    assert stored(Path(store))["tokens"] == {}


REFRESHER = textwrap.dedent("""
    import asyncio, sys
    import mcpmini
    async def main():
        auth = mcpmini._OAuth(sys.argv[1], store=mcpmini._TokenStore(sys.argv[2]))
        headers = await auth.headers(sys.argv[1])
        print(headers.get("Authorization", "none"))
    asyncio.run(main())
""")


def test_auth_two_processes_refresh_once(world: AuthWorld, tmp_path: Path) -> None:
    world.refresh = True   # single-use (rotating) refresh tokens
    store = str(tmp_path / "oauth.json")
    run(list_tools(make_client(world, store=mcpmini._TokenStore(store))))
    expire(store)
    procs = [subprocess.Popen([sys.executable, "-c", REFRESHER, world.url, store], text=True,
                              env={**os.environ, "PYTHONPATH": str(ROOT)},  # imports mcpmini from here
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(2)]
    outs = [p.communicate(timeout=30) for p in procs]
    for out, err in outs:
        assert out.startswith("Bearer access-"), err
    refreshes = [r for r in world.token_requests if r["grant_type"] == "refresh_token"]
    # one redeemed under the lock; the other re-read the store and took the new token
    assert len(refreshes) == 1
    assert outs[0][0] == outs[1][0]
