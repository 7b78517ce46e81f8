"""The agent tests' own fixture (the shared ones are in tests/conftest.py)."""
from __future__ import annotations

import pytest

import mcpmini


@pytest.fixture
def quick_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    """Retries of the model endpoint wait 10-20 ms instead of seconds."""
    monkeypatch.setattr(mcpmini, "AGENT_BACKOFF", (0.01, 0.02))
