"""`mcpmini bridge URL` in front of an OAuth-protected server (issue 19, Auth): a missing login
fails the request at once with an error naming `mcpmini login`, never blocking the stream; after
`login` the stored token is used, by the same bridge too."""
from __future__ import annotations

from typing import Callable

import mcpmini
from auth_fakes import AuthWorld, follow
from bridge_helpers import StdioBridge
from harness import run

INIT = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}


def test_a_needed_login_is_named_then_the_stored_token_is_used(bridge: Callable[..., StdioBridge],
                                                                world: AuthWorld) -> None:
    b = bridge(world.url)
    error = b.call(1, "initialize", INIT)["error"]
    assert f"run `mcpmini login {world.url}`" in error["message"]
    assert b.call(2, "ping")["result"] == {}   # the stream goes on
    run(mcpmini.login(world.url, open_browser=follow, callback_port=0))
    (token,) = world.tokens
    assert b.call(3, "initialize", INIT)["result"]["serverInfo"]["name"] == "auth-fake"
    assert b.call(4, "tools/call", {"name": "echo", "arguments": {}})["result"]["content"][0]["text"] == "ok"
    fresh = bridge(world.url)
    assert "result" in fresh.initialize()
    used = [info["authorization"] for verb, path, info in world.log if path == "/mcp"]
    assert used[-1] == f"Bearer {token}" and used.count(f"Bearer {token}") >= 3
    assert token not in b.stderr + fresh.stderr
    world.tokens.clear()   # revoked mid-session: the next request fails, naming the cure
    error = b.call(5, "tools/call", {"name": "echo", "arguments": {}})["error"]
    assert f"run `mcpmini login {world.url}`" in error["message"]
