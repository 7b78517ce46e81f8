"""Fixtures of the library tests; the helpers are in ``lib_helpers``."""
from __future__ import annotations

from pathlib import Path
from typing import Callable

import pytest

from lib_helpers import Fake


@pytest.fixture(autouse=True)
def isolate(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Fresh user folders (no era remembered from another test), no config discovered."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    monkeypatch.delenv("MCPMINI_CONFIG", raising=False)
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def fake(tmp_path: Path) -> Callable[..., Fake]:
    """``fake(name="fake", **cfg)``: a lib_fakes server recording into the test's folder."""
    return lambda name="fake", **cfg: Fake(tmp_path / f"{name}.jsonl", **cfg)
