"""The shared test harness itself (conftest.py, harness.py, fake_server.py): what every other
test relies on without checking it."""
from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

import mcpmini
from harness import ROOT, FakeServer, alive, deadline, run, wait_until

HOSTILE = {"MCPMINI_CONFIG": "/nonexistent/mcp.json", "MCPMINI_MODEL": "from-the-machine",
           "OPENAI_API_KEY": "sk-from-the-machine", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1",
           "HTTP_PROXY": "http://127.0.0.1:9", "https_proxy": "http://127.0.0.1:9",
           "ALL_PROXY": "http://127.0.0.1:9", "NO_PROXY": "example.invalid", "PYTHONIOENCODING": "latin-1",
           "MCPMINI_PEERS_DIR": "/kept/for/the/interop/suite"}
REMOVED = set(HOSTILE) - {"NO_PROXY", "MCPMINI_PEERS_DIR"}   # NO_PROXY: set to loopback instead


def test_isolation_gives_each_test_its_own_user_dirs_and_a_clean_environment(tmp_path, work):
    assert os.environ["HOME"] == str(tmp_path / "home")
    for kind in ("config", "cache", "state"):
        assert os.environ[f"XDG_{kind.upper()}_HOME"] == str(tmp_path / f"xdg-{kind}")
    assert Path.cwd() == work == tmp_path / "work"
    assert not REMOVED & os.environ.keys()
    assert os.environ["NO_PROXY"] == os.environ["no_proxy"] == "127.0.0.1,localhost"
    assert mcpmini._secrets == set()


def test_isolation_holds_in_a_hostile_environment():
    """The test above, run by a pytest whose environment has everything isolation removes."""
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
         f"{__file__}::test_isolation_gives_each_test_its_own_user_dirs_and_a_clean_environment"],
        cwd=ROOT, env={**os.environ, **HOSTILE}, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout


def test_deadline_interrupts_whatever_the_test_is_stuck_in():
    with pytest.raises(TimeoutError, match="hard deadline of 0.2 s"):   # a sleep never raises
        with deadline(0.2):
            time.sleep(10)


def test_run_cancels_a_coroutine_at_its_timeout():
    async def forever() -> None:
        await asyncio.sleep(60)
    with pytest.raises(asyncio.TimeoutError):
        run(forever(), timeout=0.2)


def test_both_cli_runners_run_this_checkout(cli, proc):
    code, out, err = cli("--version")
    done = proc("--version", encoding="utf-8")
    assert (code, err) == (0, "") and out == done.stdout == f"mcpmini {mcpmini.__version__}\n"


def test_fake_server_flags_win_over_its_config_and_configure_keeps_the_command_line(fake):
    f = fake("legacy", "--name", "from-a-flag", name="from-the-file")

    async def connect() -> tuple[str, str]:
        async with f.client() as c:
            return c.era, c.server_info["name"]

    assert run(connect()) == ("legacy", "from-a-flag")
    argv = list(f.argv)
    f.configure("modern-only", name="ignored: the flag wins")   # initialize: -32601
    assert run(connect()) == (mcpmini.MODERN_VERSION, "from-a-flag") and f.argv == argv
    assert f.methods()[:2] == ["initialize", "server/discover"]  # the era remembered, then probed


@pytest.fixture
def run_timeout() -> float:
    """This module's default deadline of the ``run`` fixture (as tests/interop sets its own)."""
    return 0.2


def test_the_run_fixture_takes_the_folders_default_deadline(run):
    with pytest.raises(asyncio.TimeoutError):
        run(asyncio.sleep(5))   # under the shared default of 30 s it would end in time
    assert run(asyncio.sleep(0.3, "given"), timeout=5) == "given"   # a deadline of its own wins


def test_a_fake_left_running_is_killed_after_its_test(fake):
    f = fake("modern", "--stubborn")   # deaf to SIGTERM and to the end of its input
    server = subprocess.Popen(f.argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    try:
        assert wait_until(f.started) and alive(server.pid)
        assert f in FakeServer.made
        FakeServer.kill_leftovers()   # what the isolation fixture does after every test
        assert server.wait(10) == -9 and FakeServer.made == []
    finally:
        server.kill()
        server.wait()
