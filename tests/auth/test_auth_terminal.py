"""The OAuth login prompt on a real pseudo-terminal (issue 14, item 1): `login --no-browser`
prints the address to open, reads the address the browser ended on as typed (CR ends it), and
stores the tokens; then a command uses them with no question asked."""
from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from auth_fakes import AuthWorld
from terminal_harness import Screen

pytestmark = pytest.mark.skipif(os.name != "posix", reason="pseudo-terminals are POSIX")


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def test_login_no_browser_on_a_pty(world: AuthWorld, tmp_path: Path) -> None:
    cfg = tmp_path / "servers.json"
    cfg.write_text(json.dumps({"mcpServers": {"demo": {"url": world.url, "protocol": "2026-07-28"}}}))
    s = Screen("--config", cfg, "login", "demo", "--no-browser", "--callback-port", "0")
    try:
        text = s.expect("or paste the address the browser was sent to")
        url = text.split("authorize mcpmini in your browser: ", 1)[1].split()[0]
        try:   # the "browser": it cannot reach our listener, so it shows where it ended up
            urllib.request.build_opener(NoRedirect).open(url, timeout=10)
            raise AssertionError("no redirect")
        except urllib.error.HTTPError as exc:
            s.type(exc.headers["Location"] + "\r")
        s.expect("logged in to demo")
        assert s.wait() == 0, s.text
    finally:
        s.close()
    assert len(world.token_requests) == 1
    s = Screen("--config", cfg, "tools", "demo")
    try:
        assert s.wait() == 0, s.text
    finally:
        s.close()
    assert "echo" in s.text and "authorize" not in s.text and len(world.authorize_requests) == 1
