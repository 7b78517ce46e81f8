"""The bridge tests' own fixture (isolation, the deadline, ``fake``, ``upstream`` and ``world``
are tests/conftest.py's): ``bridge(server, *options)`` starts a driven `mcpmini bridge` and kills
its process group at teardown (after the test's own checks that none is left)."""
from __future__ import annotations

from typing import Callable, Iterator

import pytest

from bridge_helpers import StdioBridge
from harness import FakeServer


@pytest.fixture
def bridge() -> Iterator[Callable[..., StdioBridge]]:
    """``bridge(server, *options)``: a started `python3 mcpmini.py bridge [OPTIONS] SERVER`."""
    started: list[StdioBridge] = []

    def start(server: FakeServer | list[str] | str, *options: str) -> StdioBridge:
        started.append(StdioBridge(server, *options))
        return started[-1]
    yield start
    for each in started:
        each.kill()
