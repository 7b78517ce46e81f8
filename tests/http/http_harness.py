"""Shared helpers for mcpmini's hermetic HTTP tests (pytest only, stdlib servers on 127.0.0.1).
Importing this module makes ``mcpmini`` importable from the checkout."""
from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path
from typing import Any, Awaitable

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
import mcpmini  # noqa: E402

DEADLINE = 30.0       # seconds; every test coroutine runs under it
TEST_DEADLINE = 90.0  # seconds; every test as a whole (SIGALRM), sync parts included


def run(coro: Awaitable[Any], timeout: float = DEADLINE) -> Any:
    """Run a coroutine on a fresh event loop with a hard deadline."""
    async def bounded() -> Any:
        return await asyncio.wait_for(coro, timeout)
    return asyncio.run(bounded())


@pytest.fixture(autouse=True)
def http_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """Per test: its own era cache, and no proxy for loopback (an environment proxy must not
    break the suite); proxy tests set their own variables."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    yield tmp_path
    mcpmini._default_pool.close()   # idle keep-alive connections of _http_request


@pytest.fixture(autouse=True)
def hard_deadline() -> Any:
    """Fail a test that runs longer than TEST_DEADLINE, whatever it is stuck in."""
    if not hasattr(signal, "setitimer"):
        yield
        return

    def expire(signum: int, frame: Any) -> None:
        raise TimeoutError(f"the test exceeded its hard deadline of {TEST_DEADLINE:g} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, TEST_DEADLINE)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
