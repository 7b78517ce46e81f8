"""Fixtures of the terminal tests: each test in a fresh HOME, XDG dirs and working directory,
with a hard deadline; ``screen(...)`` starts mcpmini on a pty and closes it afterwards."""
from __future__ import annotations

import faulthandler
import os
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

from terminal_harness import Screen

if os.name != "posix":
    pytest.skip("pseudo-terminals are POSIX", allow_module_level=True)


@pytest.fixture(autouse=True)
def work(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Path]:
    for name in ("home", "xdg-config", "xdg-cache", "xdg-state", "work"):
        (tmp_path / name).mkdir()
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for name in ("config", "cache", "state"):
        monkeypatch.setenv(f"XDG_{name.upper()}_HOME", str(tmp_path / f"xdg-{name}"))
    for name in ("MCPMINI_CONFIG", "OPENAI_API_KEY", "OPENAI_BASE_URL", "MCPMINI_MODEL", "BROWSER"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path / "work")
    faulthandler.dump_traceback_later(120, exit=True)
    yield tmp_path / "work"
    faulthandler.cancel_dump_traceback_later()


@pytest.fixture
def screen() -> Iterator[Callable[..., Screen]]:
    made: list[Screen] = []

    def start(*argv: Any, **kwargs: Any) -> Screen:
        made.append(Screen(*argv, **kwargs))
        return made[-1]
    yield start
    for s in made:
        s.close()
