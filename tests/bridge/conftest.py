"""Fixtures of the bridge tests: isolated user directories (the bridge subprocesses inherit
them), a hard deadline per test, and ``bridge(server, *options)`` starting a driven
`mcpmini bridge`; at teardown every bridge's process group and every upstream process group
recorded in the test's folder is killed (after the test's own checks that none is left); and
``auth_world``, tests/auth's OAuth-protected server."""
from __future__ import annotations

import contextlib
import faulthandler
import os
import signal
import sys
from pathlib import Path
from typing import Callable, Iterator

import pytest

from bridge_helpers import HERE, StdioBridge, recorded

sys.path.insert(0, str(HERE.parent / "auth"))   # the OAuth fakes of tests/auth
from auth_fakes import AuthWorld  # noqa: E402

TEST_DEADLINE = 90.0   # seconds; a hung test dumps its stacks and ends the run


@pytest.fixture(autouse=True)
def _isolate(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    for name in ("home", "xdg-config", "xdg-cache", "xdg-state"):
        (tmp_path / name).mkdir()
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for name in ("CONFIG", "CACHE", "STATE"):
        monkeypatch.setenv(f"XDG_{name}_HOME", str(tmp_path / f"xdg-{name.lower()}"))
    monkeypatch.delenv("MCPMINI_CONFIG", raising=False)
    monkeypatch.delenv("MCPMINI_OAUTH_FILE", raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    faulthandler.dump_traceback_later(TEST_DEADLINE, exit=True)
    yield
    faulthandler.cancel_dump_traceback_later()


@pytest.fixture
def bridge(tmp_path: Path) -> Iterator[Callable[..., StdioBridge]]:
    """``bridge(server, *options)``: a started `python3 mcpmini.py bridge [OPTIONS] SERVER`."""
    started: list[StdioBridge] = []

    def start(server: list[str] | str, *options: str) -> StdioBridge:
        started.append(StdioBridge(server, *options))
        return started[-1]
    yield start
    for each in started:
        each.kill()
    for record in tmp_path.glob("upstream-*.jsonl"):
        for mark in recorded(record):
            if "_start" in mark:
                with contextlib.suppress(OSError):
                    os.killpg(mark["pgid"], signal.SIGKILL)


@pytest.fixture
def auth_world() -> Iterator[AuthWorld]:
    """tests/auth's OAuth-protected MCP server and its authorization server (2026-07-28)."""
    world = AuthWorld()
    yield world
    world.close()
