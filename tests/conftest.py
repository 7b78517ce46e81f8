"""The fixtures every test folder shares (the plain helpers they are built on are in
``harness.py``):

- ``_isolate`` (autouse): a temporary HOME, XDG config/cache/state dirs and working directory
  (``work``), a clean environment, no secret remembered by an earlier test, a hard deadline
  per test (``test_deadline``; a folder may override it), and no fake server left running.
- ``cli(*argv)``: ``mcpmini.main`` in-process -> ``Result(code, out, err)``; ``proc(*argv)``: a
  real ``python3 mcpmini.py`` process -> ``CompletedProcess``.
- ``fake([MODE], *FLAGS, label=, **options)``: a ``harness.FakeServer`` in the test's tmp dir;
  ``upstream(era)``: one behind ``mcpmini bridge`` (tests/bridge, tests/interop).
- ``run``: ``harness.run`` for tests that take it as a fixture (``run_timeout``: its default
  deadline; a folder may override it).
- ``weather_url``: examples/weather_http_server.py on a free loopback port.
- ``world``: ``auth_fakes.AuthWorld``, an OAuth-protected MCP server and its authorization server.
"""
from __future__ import annotations

import functools
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

import mcpmini
from auth_fakes import AuthWorld
from harness import EXAMPLES, RUN_TIMEOUT, FakeServer, Result, deadline, run as run_bounded, run_cli, run_proc

TEST_DEADLINE = 120.0   # seconds for one whole test, its synchronous parts included
KEPT = ("MCPMINI_PEERS_DIR", "MCPMINI_REQUIRE_INTEROP")   # the test suite's own settings
PROXIES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY")
UPSTREAM_MODES = {"both": "modern", "legacy": "legacy", "modern": "modern-only"}   # fake_server.py's


@pytest.fixture
def test_deadline() -> float | None:
    """How long one test may take before it fails (None: no limit); override per folder."""
    return TEST_DEADLINE


@pytest.fixture(autouse=True)
def _isolate(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, test_deadline: float | None) -> Iterator[Path]:
    """Fresh HOME, XDG config/cache/state dirs and working directory; no MCPMINI_*/OPENAI_*
    settings, no proxy for loopback, no PYTHONIOENCODING, BROWSER or colour settings from the
    machine running the tests;
    no secrets remembered by an earlier test (the redaction set is process-wide); every idle
    pooled HTTP connection closed afterwards; the test's hard deadline; and afterwards every
    process of its fake servers that still runs is killed (``FakeServer.kill_leftovers``)."""
    for name in ("home", "xdg-config", "xdg-cache", "xdg-state", "work"):
        (tmp_path / name).mkdir()
    for name in list(os.environ):
        if name.startswith(("MCPMINI_", "OPENAI_")) and name not in KEPT \
                or name.upper() in PROXIES or name in ("PYTHONIOENCODING", "BROWSER", "NO_COLOR", "FORCE_COLOR"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for kind in ("CONFIG", "CACHE", "STATE"):
        monkeypatch.setenv(f"XDG_{kind}_HOME", str(tmp_path / f"xdg-{kind.lower()}"))
    for name in ("NO_PROXY", "no_proxy"):
        monkeypatch.setenv(name, "127.0.0.1,localhost")
    monkeypatch.chdir(tmp_path / "work")
    monkeypatch.setattr(mcpmini, "_secrets", set())
    with deadline(test_deadline):
        yield tmp_path / "work"
    mcpmini._default_pool.close()
    FakeServer.kill_leftovers()


@pytest.fixture
def work(_isolate: Path) -> Path:
    """The test's current directory."""
    return _isolate


@pytest.fixture
def user_config(tmp_path: Path) -> Path:
    """Where the user's own config file lives in this test."""
    return tmp_path / "xdg-config" / "mcpmini" / "mcp.json"


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., Result]:
    """``cli(*argv)`` runs ``mcpmini.main`` in-process: ``Result(code, out, err)``."""
    return lambda *argv: run_cli(capsys, *argv)


@pytest.fixture
def proc() -> Callable[..., Any]:
    """``proc(*argv, env=, unset=, timeout=, **subprocess_run_kwargs)``: a real ``python3
    mcpmini.py`` run in this test's isolated environment (bytes out)."""
    return run_proc


@pytest.fixture
def run_timeout() -> float:
    """The default deadline of one ``run(coro)``, in seconds; override per folder."""
    return RUN_TIMEOUT


@pytest.fixture
def run(run_timeout: float) -> Callable[..., Any]:
    """The bounded ``run(coro, timeout=run_timeout)`` helper."""
    def bounded(coro: Any, timeout: float = run_timeout) -> Any:
        return run_bounded(coro, timeout)
    return bounded


@pytest.fixture
def fake(tmp_path: Path) -> Callable[..., FakeServer]:
    """``fake([MODE], *FLAGS, label="fake", **options)`` -> a :class:`harness.FakeServer`
    recording into the test's tmp dir (whatever a failed test left running is killed afterwards)."""
    directory = tmp_path / "fakes"
    directory.mkdir()
    return functools.partial(FakeServer, directory)


@pytest.fixture
def upstream(fake: Callable[..., FakeServer]) -> Callable[..., FakeServer]:
    """``upstream(era="both", **options)``: a fake server behind a bridge, speaking the legacy
    era, the modern one or both, each its own recording, with an identity the tests see pass
    the bridge."""
    made: list[FakeServer] = []

    def make(era: str = "both", **options: Any) -> FakeServer:
        made.append(fake(UPSTREAM_MODES[era], label=f"upstream{len(made) + 1}", name="bridge-upstream",
                         instructions="upstream help", ttl_ms=5000,
                         capabilities={"tools": {}, "resources": {"subscribe": True}, "logging": {}}, **options))
        return made[-1]
    return make


@pytest.fixture
def weather_url() -> Iterator[str]:
    """examples/weather_http_server.py on a free 127.0.0.1 port: its /mcp URL."""
    server = subprocess.Popen([sys.executable, str(EXAMPLES / "weather_http_server.py"), "--port", "0"],
                              stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                              text=True)
    try:
        url = server.stdout.readline().strip()  # it prints its endpoint first
        assert url.startswith("http://127.0.0.1:") and url.endswith("/mcp"), url
        yield url
    finally:
        server.kill()
        server.wait(timeout=30)
        server.stdout.close()


@pytest.fixture
def world() -> Iterator[AuthWorld]:
    """The OAuth world of ``auth_fakes.py`` (tests/auth, tests/bridge, tests/interop)."""
    w = AuthWorld()
    yield w
    w.close()
