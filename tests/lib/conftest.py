"""Fixtures of the library tests; the helpers are in ``lib_helpers``."""
from __future__ import annotations

from pathlib import Path
from typing import Callable

import pytest

from lib_helpers import Fake


@pytest.fixture
def fake(tmp_path: Path) -> Callable[..., Fake]:
    """``fake(name="fake", **cfg)``: a lib_fakes server recording into the test's folder."""
    return lambda name="fake", **cfg: Fake(tmp_path / f"{name}.jsonl", **cfg)
