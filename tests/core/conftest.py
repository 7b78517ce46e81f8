"""Fixtures of mcpmini's hermetic core tests (helpers live in ``core_helpers``)."""
from __future__ import annotations

from pathlib import Path
from typing import Callable

import pytest

from core_helpers import Fake, mcpmini, run

__all__ = ["run"]  # the hard-deadline helper; tests import it from core_helpers


@pytest.fixture(autouse=True)
def _isolate(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A fresh user cache and config directory per test: the era cache never leaks."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))


@pytest.fixture
def fake(tmp_path: Path) -> Callable[..., Fake]:
    """``fake(mode, **options)`` -> a configured :class:`Fake`."""
    return lambda mode="modern", **options: Fake(tmp_path, mode, **options)


@pytest.fixture
def fast_probe(monkeypatch: pytest.MonkeyPatch) -> float:
    """Shorten the era probe's timeout so silent servers cost little."""
    monkeypatch.setattr(mcpmini, "PROBE_TIMEOUT", 0.4)
    return 0.4
