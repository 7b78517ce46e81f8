"""`login`/`logout`, the auth column of `servers`, `info`, the automatic 401 path and exit 4."""
from __future__ import annotations

import json
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

import mcpmini
from auth_fakes import AuthWorld


def config(tmp_path: Path, world: AuthWorld, **oauth: Any) -> str:
    path = tmp_path / "servers.json"
    entry: dict[str, Any] = {"url": world.url, "protocol": mcpmini.MODERN_VERSION}
    if oauth:
        entry["oauth"] = oauth
    path.write_text(json.dumps({"mcpServers": {"demo": entry, "local": {"command": "true"}}}))
    return str(path)


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def paste_back(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Stands in for the user of --no-browser: reads the printed URL, "opens" it elsewhere
    (the 302 is not followed: the browser cannot reach us), pastes the address it ended on."""
    notes: list[str] = []
    monkeypatch.setattr(mcpmini._Output, "note", lambda self, message: notes.append(message))

    class Stdin:
        def readline(self) -> str:
            for _ in range(200):
                urls = [n.split(": ", 2)[-1] for n in notes if "authorize mcpmini in your browser" in n]
                if urls:
                    break
                time.sleep(0.02)
            try:
                urllib.request.build_opener(NoRedirect).open(urls[0], timeout=5)
            except urllib.error.HTTPError as exc:
                return exc.headers["Location"] + "\n"
            raise AssertionError("no redirect")

        def isatty(self) -> bool:
            return True
    monkeypatch.setattr("sys.stdin", Stdin())
    return notes


def test_auth_cli_login_no_browser_then_logout(world: AuthWorld, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch, cli: Any) -> None:
    cfg = config(tmp_path, world)
    notes = paste_back(monkeypatch)
    assert cli("--config", cfg, "login", "demo", "--no-browser", "--callback-port", "0").code == 0
    assert any(n.startswith("mcpmini: logged in to demo") for n in notes), notes
    assert len(world.token_requests) == 1
    store = tmp_path / "xdg-state" / "mcpmini" / "oauth.json"
    assert store.exists()
    # a later command runs with the stored token, without a terminal
    monkeypatch.setattr("sys.stdin", open("/dev/null"))
    r = cli("--config", cfg, "servers")
    assert r.code == 0
    rows = r.out.splitlines()
    assert "logged in" in next(r for r in rows if r.startswith("demo")).split("\t")[-1]
    assert len(next(r for r in rows if r.startswith("local")).split("\t")) == 5  # stdio: no auth column
    r = cli("--config", cfg, "tools", "demo")
    assert r.code == 0 and "echo" in r.out
    assert len(world.authorize_requests) == 1
    assert cli("--config", cfg, "logout", "demo").code == 0
    r = cli("--config", cfg, "servers")
    assert r.code == 0 and "not logged in" in r.out


def test_auth_cli_no_terminal_exit_4(world: AuthWorld, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                     cli: Any) -> None:
    cfg = config(tmp_path, world)
    monkeypatch.setattr("sys.stdin", open("/dev/null"))
    for command in ("tools", "login"):
        r = cli("--config", cfg, command, "demo")
        assert r.code == 4 and "mcpmini login demo" in r.err
    assert world.authorize_requests == [] and world.registrations == []


def test_auth_cli_static_header_turns_oauth_off(world: AuthWorld, tmp_path: Path, cli: Any) -> None:
    path = tmp_path / "servers.json"
    path.write_text(json.dumps({"mcpServers": {"demo": {"url": world.url, "headers": {
        "Authorization": "Bearer static-token-1"}}, "off": {"url": world.url, "oauth": False}}}))
    r = cli("--config", path, "servers")
    assert r.code == 0
    assert "static header" in r.out and "oauth off" in r.out and "static-token-1" not in r.out


def test_auth_cli_config_oauth_keys(world: AuthWorld, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                    cli: Any) -> None:
    monkeypatch.setenv("DEMO_SECRET", "pre-secret")
    world.dcr, world.pre_registered = False, ("pre-id", "pre-secret")
    cfg = config(tmp_path, world, clientId="pre-id", clientSecret="${DEMO_SECRET}", callbackPort=0)
    paste_back(monkeypatch)
    assert cli("--config", cfg, "login", "demo", "--no-browser").code == 0
    assert world.token_requests[0]["_basic"] and world.registrations == []
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"mcpServers": {"x": {"url": world.url, "oauth": {"clientID": "a"}}}}))
    with pytest.raises(mcpmini.ConfigError, match="clientID"):
        mcpmini.load_config([str(bad)])
