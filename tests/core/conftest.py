"""The core tests' own fixture (the shared ones are in tests/conftest.py)."""
from __future__ import annotations

import pytest

import mcpmini


@pytest.fixture
def fast_probe(monkeypatch: pytest.MonkeyPatch) -> float:
    """Shorten the era probe's timeout so silent servers cost little."""
    monkeypatch.setattr(mcpmini, "PROBE_TIMEOUT", 0.4)
    return 0.4
