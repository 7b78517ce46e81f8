"""Issue 18: OAuth under hostile or slow authorization servers — one deadline per auth request
(slowloris on each endpoint in turn), nothing left running, no secret in any form printed,
step-up advice that works, a capped token answer that says so, logout that revokes."""
from __future__ import annotations

import asyncio
import base64
import concurrent.futures
import contextlib
import json
import os
import select
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

import mcpmini
from auth_fakes import AuthWorld, follow
from harness import ROOT, run

SECRET = "s3cr3t/with+special&chars=="


def server(world: AuthWorld, timeout: float = 1.0) -> mcpmini.ServerConfig:
    return mcpmini.ServerConfig(name="demo", url=world.url, timeout=timeout, protocol=mcpmini.MODERN_VERSION)


def config(tmp_path: Path, world: AuthWorld, **oauth: Any) -> str:
    path = tmp_path / "servers.json"
    entry: dict[str, Any] = {"url": world.url, "protocol": mcpmini.MODERN_VERSION, "oauth": {"callbackPort": 0, **oauth}}
    path.write_text(json.dumps({"mcpServers": {"demo": entry}}))
    return str(path)


async def without_executor(coro: Any) -> Any:
    """Run ``coro`` on a loop whose default executor refuses work: no executor thread (which
    asyncio.run and the interpreter wait for at exit) may be used."""
    class Refusing(concurrent.futures.ThreadPoolExecutor):
        def submit(self, *args: Any, **kwargs: Any) -> Any:
            raise AssertionError("the default executor was used")
    asyncio.get_running_loop().set_default_executor(Refusing())
    return await coro


def our_threads() -> list[str]:
    deadline = time.monotonic() + 2   # a DNS check in a daemon thread ends on its own
    while (names := [t.name for t in threading.enumerate() if t.name.startswith("mcpmini")]) \
            and time.monotonic() < deadline:
        time.sleep(0.02)
    return names


def logged_in(world: AuthWorld) -> None:
    run(without_executor(mcpmini.login(server(world, 10), open_browser=follow, callback_port=0)))


def expire_tokens() -> None:
    path = Path(mcpmini._token_store_path())
    data = json.loads(path.read_text())
    for token in data["tokens"].values():
        token["expires_at"] = int(time.time()) - 10
    path.write_text(json.dumps(data))


# -- item 1: one deadline per request, nothing left behind -------------------------------------


@pytest.mark.parametrize("kind", ["prm", "meta", "register", "token"])
def test_a_slowloris_endpoint_ends_the_login_at_its_deadline(world: AuthWorld, kind: str) -> None:
    world.slow, world.slow_interval = {kind}, 0.2   # bytes keep coming: no read ever times out
    started = time.monotonic()
    with pytest.raises(mcpmini.RequestTimeout, match="timed out after 1 s"):
        run(without_executor(mcpmini.login(server(world, 1.0), open_browser=follow, callback_port=0)))
    elapsed = time.monotonic() - started
    print(f"slow {kind}: the login ended after {elapsed:.2f} s (deadline 1 s)")
    assert elapsed < 8   # generous: one deadline, not one per byte
    assert our_threads() == []


def test_a_slow_refresh_without_a_terminal_ends_and_the_process_exits(world: AuthWorld, tmp_path: Path) -> None:
    """The script and CI case: a stored token is refreshed against a slowloris token endpoint."""
    world.refresh = True
    logged_in(world)
    expire_tokens()
    world.slow, world.slow_interval = {"token"}, 0.5
    started = time.monotonic()
    proc = subprocess.run([sys.executable, str(ROOT / "mcpmini.py"), "--config", config(tmp_path, world),
                           "--timeout", "2", "tools", "demo"], stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=60)
    elapsed = time.monotonic() - started
    print(f"tools --timeout 2 with a slow refresh: exit {proc.returncode} after {elapsed:.2f} s")
    assert proc.returncode == 124, proc.stderr
    assert "timed out after 2 s" in proc.stderr and "Traceback" not in proc.stderr
    assert elapsed < 20


@pytest.mark.skipif(os.name != "posix", reason="POSIX signals")
@pytest.mark.parametrize("signum,code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_one_signal_ends_a_hanging_refresh_at_once(world: AuthWorld, tmp_path: Path, signum: int, code: int) -> None:
    world.refresh = True
    logged_in(world)
    expire_tokens()
    world.slow, world.slow_interval, seen = {"token"}, 0.5, len(world.log)
    proc = subprocess.Popen([sys.executable, str(ROOT / "mcpmini.py"), "--config", config(tmp_path, world),
                             "--timeout", "60", "tools", "demo"], stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 30
        while not any(m == "POST" and p.endswith("/token") for m, p, _ in world.log[seen:]):   # the refresh
            assert time.monotonic() < deadline and proc.poll() is None
            time.sleep(0.05)
        time.sleep(0.3)
        sent = time.monotonic()
        proc.send_signal(signum)
        _, err = proc.communicate(timeout=20)
        print(f"signal {signum}: exit {proc.returncode} after {time.monotonic() - sent:.2f} s")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == code, err
    assert "Traceback" not in err and ("interrupted" if code == 130 else "terminated") in err


@pytest.mark.skipif(os.name != "posix", reason="POSIX signals and terminals")
@pytest.mark.parametrize("signum,code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_login_waiting_for_a_paste_ends_at_one_signal(world: AuthWorld, signum: int, code: int) -> None:
    """`login --no-browser` on a real terminal: the paste reader is a daemon thread blocked in
    a read; one signal still ends the process at once, with nothing left to wait for."""
    import pty
    main_fd, tty = pty.openpty()
    proc = subprocess.Popen([sys.executable, str(ROOT / "mcpmini.py"), "login", world.url, "--no-browser",
                             "--callback-port", "0"], stdin=tty, stdout=tty, stderr=tty, start_new_session=True)
    os.close(tty)
    out = b""
    try:
        deadline = time.monotonic() + 30
        while b"paste the address" not in out:
            assert time.monotonic() < deadline and proc.poll() is None, out
            if select.select([main_fd], [], [], 0.1)[0]:
                out += os.read(main_fd, 4096)
        time.sleep(0.2)
        proc.send_signal(signum)
        proc.wait(timeout=20)
        with contextlib.suppress(OSError):   # EIO once the terminal has no writer left
            while select.select([main_fd], [], [], 0.1)[0]:
                out += os.read(main_fd, 4096)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(main_fd)
    assert proc.returncode == code, out
    assert b"Fatal Python error" not in out and b"Traceback" not in out


def test_the_store_lock_wait_is_bounded_and_keeps_the_loop_running(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mcpmini, "OAUTH_LOCK_WAIT", 0.5)
    store = mcpmini._TokenStore(str(tmp_path / "oauth.json"))
    Path(store.path + ".lock").write_text("12345 0")   # held by another (live) process
    ticks = []

    async def scenario() -> None:
        async def ticker() -> None:
            while True:
                ticks.append(time.monotonic())
                await asyncio.sleep(0.02)
        task = asyncio.ensure_future(ticker())
        try:
            with pytest.raises(mcpmini.AuthError, match="stayed locked"):
                async with store.locked():
                    pass
        finally:
            task.cancel()
    run(without_executor(scenario()))
    assert len(ticks) > 10   # the loop kept running while the lock was awaited


# -- item 2: no secret in another encoding -------------------------------------------------


@pytest.mark.parametrize("method", ["client_secret_basic", "client_secret_post"])
def test_a_secret_echoed_in_any_encoding_is_redacted(world: AuthWorld, tmp_path: Path, method: str,
                                                     monkeypatch: pytest.MonkeyPatch, capsys: Any) -> None:
    monkeypatch.setenv("DEMO_SECRET", SECRET)
    monkeypatch.setattr(mcpmini, "_has_terminal", lambda: True)
    monkeypatch.setattr(mcpmini, "_default_open_browser", follow)
    world.dcr, world.echo_auth, world.auth_methods = False, True, [method]
    cfg = config(tmp_path, world, clientId="pre-id", clientSecret="${DEMO_SECRET}")
    assert mcpmini.main(["-vv", "--trace", "--config", cfg, "login", "demo"]) == 4
    out, err = capsys.readouterr()
    basic = base64.b64encode(f"pre-id:{quote(SECRET, safe='')}".encode()).decode()
    echoed = world.token_requests[0]["_basic"] if method == "client_secret_basic" else world.token_requests[0]["client_secret"]
    assert echoed in (f"Basic {basic}", SECRET)   # the server did get (and echo) the secret
    assert "invalid_client" in err and "***" in err
    for form in (SECRET, basic, quote(SECRET, safe=""), quote(SECRET, safe="").replace("%20", "+")):
        assert form not in out + err


# -- item 3: step-up advice that works -------------------------------------------------------


def test_step_up_scope_is_remembered_named_and_asked_for(world: AuthWorld, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch, capsys: Any) -> None:
    world.scopes_supported, world.call_scope = ["read"], "read write"
    monkeypatch.setattr(mcpmini, "_default_open_browser", follow)
    cfg = config(tmp_path, world)
    monkeypatch.setattr(mcpmini, "_has_terminal", lambda: True)
    assert mcpmini.main(["--config", cfg, "login", "demo"]) == 0
    assert world.authorize_requests[-1]["scope"] == "read"
    monkeypatch.setattr(mcpmini, "_has_terminal", lambda: False)
    capsys.readouterr()
    assert mcpmini.main(["--config", cfg, "call", "demo", "echo"]) == 4
    err = capsys.readouterr().err
    assert "mcpmini login demo --scope 'read write'" in err, err
    monkeypatch.setattr(mcpmini, "_has_terminal", lambda: True)
    assert mcpmini.main(["--config", cfg, "login", "demo"]) == 0   # as advised, without --scope too
    assert world.authorize_requests[-1]["scope"] == "read write"
    monkeypatch.setattr(mcpmini, "_has_terminal", lambda: False)
    assert mcpmini.main(["--config", cfg, "call", "demo", "echo"]) == 0
    assert len(world.authorize_requests) == 2


# -- item 4: an answer over the cap says so ------------------------------------------------------


def test_a_token_answer_over_the_cap_says_so(world: AuthWorld) -> None:
    world.huge_token = True
    with pytest.raises(mcpmini.AuthError, match="token request failed: .*exceeded 1 MiB"):
        run(mcpmini.login(server(world, 10), open_browser=follow, callback_port=0))


# -- item 5: logout revokes ----------------------------------------------------------------------


def test_logout_revokes_then_forgets(world: AuthWorld) -> None:
    world.refresh = world.revocation = True
    logged_in(world)
    token = next(iter(world.tokens))
    said = run(without_executor(mcpmini.logout(server(world))))
    assert said.startswith("revoked at the authorization server")
    assert [(r["token_type_hint"], r["client_id"]) for r in world.revocations] == [
        ("refresh_token", "dcr-client-1"), ("access_token", "dcr-client-1")]
    assert world.revocations[1]["token"] == token
    assert mcpmini.auth_state(server(world)) == "not logged in"
    assert run(mcpmini.logout(server(world))) is None


def test_logout_without_revocation_or_with_a_slow_one_still_forgets(world: AuthWorld) -> None:
    logged_in(world)
    assert "offers no token revocation" in run(mcpmini.logout(server(world)))
    world.revocation, world.slow = True, {"revoke"}
    logged_in(world)
    started = time.monotonic()
    said = run(mcpmini.logout(server(world, 1.0)))
    assert "revoking them failed" in said and "timed out" in said
    assert time.monotonic() - started < 8
    assert mcpmini.auth_state(server(world)) == "not logged in"


def test_cli_logout_says_what_happened(world: AuthWorld, tmp_path: Path, capsys: Any) -> None:
    world.revocation = True
    logged_in(world)
    cfg = config(tmp_path, world)
    assert mcpmini.main(["--config", cfg, "logout", "demo"]) == 0
    assert "logged out of demo: its tokens were revoked at the authorization server" in capsys.readouterr().err
    assert mcpmini.main(["--config", cfg, "logout", "demo"]) == 0
    assert "demo: not logged in" in capsys.readouterr().err
