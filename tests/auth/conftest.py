"""Fixtures of mcpmini's OAuth tests: isolation (HOME, XDG dirs, no MCPMINI_OAUTH_FILE), the
fake resource + authorization server (``world``), and ``client(world, **auth)``."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Iterator

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # import mcpmini from this checkout

import mcpmini  # noqa: E402
from auth_fakes import AuthWorld, follow  # noqa: E402


@pytest.fixture(autouse=True)
def _isolate(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Path]:
    for name in ("home", "xdg-config", "xdg-cache", "xdg-state", "work"):
        (tmp_path / name).mkdir()
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg-state"))
    monkeypatch.delenv("MCPMINI_OAUTH_FILE", raising=False)
    monkeypatch.delenv("MCPMINI_CONFIG", raising=False)
    monkeypatch.chdir(tmp_path / "work")
    yield tmp_path


@pytest.fixture
def world() -> Iterator[AuthWorld]:
    w = AuthWorld()
    yield w
    w.close()
