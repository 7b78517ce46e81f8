"""Fixtures of mcpmini's command-line tests: isolation, a hard deadline per test, the fake
server, and two ways to run the CLI (``cli``: ``main([...])`` in-process; ``proc``: a real
``python3 mcpmini.py`` subprocess)."""
from __future__ import annotations

import contextlib
import dataclasses
import faulthandler
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

from cli_fakes import MCPMINI, ROOT, Fake, alive

if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # import mcpmini from this checkout

import mcpmini  # noqa: E402

TEST_DEADLINE = 120.0  # seconds; a hung test dumps its stacks and ends the run


@dataclasses.dataclass
class Result:
    """What one CLI run produced."""

    code: int
    out: str
    err: str

    @property
    def error_lines(self) -> list[str]:
        return [line for line in self.err.splitlines() if line.startswith("mcpmini: error: ")]


@pytest.fixture(autouse=True)
def _isolate(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Path]:
    """Fresh HOME, XDG config and cache dirs, a fresh working directory, no MCPMINI_CONFIG,
    no secrets remembered by an earlier test (the redaction set is process-wide), and a hard
    deadline."""
    for name in ("home", "xdg-config", "xdg-cache", "work"):
        (tmp_path / name).mkdir()
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))
    monkeypatch.delenv("MCPMINI_CONFIG", raising=False)
    monkeypatch.delenv("PYTHONIOENCODING", raising=False)
    monkeypatch.chdir(tmp_path / "work")
    if hasattr(mcpmini, "_secrets"):
        monkeypatch.setattr(mcpmini, "_secrets", set())
    faulthandler.dump_traceback_later(TEST_DEADLINE, exit=True)
    yield tmp_path / "work"
    faulthandler.cancel_dump_traceback_later()


@pytest.fixture
def work(_isolate: Path) -> Path:
    """The test's current directory."""
    return _isolate


@pytest.fixture
def user_config(tmp_path: Path) -> Path:
    """Where the user's own config file lives in this test."""
    return tmp_path / "xdg-config" / "mcpmini" / "mcp.json"


@pytest.fixture
def fake(tmp_path: Path) -> Iterator[Callable[..., Fake]]:
    """``fake(*flags, label="fake")`` -> a :class:`Fake` recording into the test's tmp dir.
    Whatever a failed test left running is killed afterwards (after the assertions, so a
    process left behind is still a failure first)."""
    (tmp_path / "fakes").mkdir(exist_ok=True)
    made: list[Fake] = []

    def make(*flags: str, label: str = "fake") -> Fake:
        made.append(Fake(tmp_path / "fakes", *flags, label=label))
        return made[-1]
    yield make
    for server in made:
        for pid in server.pids():
            if alive(pid):
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., Result]:
    """``cli(*argv)`` runs ``mcpmini.main`` in-process and returns code, stdout, stderr."""
    def run(*argv: Any) -> Result:
        capsys.readouterr()
        code = mcpmini.main([str(a) for a in argv])
        out, err = capsys.readouterr()
        return Result(code, out, err)
    return run


def _run_proc(*argv: Any, env: dict[str, str] | None = None, unset: tuple[str, ...] = (),
              timeout: float = 60.0, **kwargs: Any) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items() if k not in unset}
    environ.update(env or {})
    kwargs.setdefault("stdin", subprocess.DEVNULL)
    return subprocess.run([sys.executable, str(MCPMINI), *map(str, argv)], env=environ,
                          capture_output=True, timeout=timeout, **kwargs)


@pytest.fixture
def proc() -> Callable[..., subprocess.CompletedProcess]:
    """``proc(*argv, env=..., unset=..., timeout=...)``: a real ``python3 mcpmini.py`` run
    (bytes out; the environment is this test's isolated one)."""
    return _run_proc
