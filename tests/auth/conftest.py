"""The OAuth tests' own fixture (the shared ones are in tests/conftest.py): ``world``, the
fake resource + authorization server."""
from __future__ import annotations

from typing import Iterator

import pytest

from auth_fakes import AuthWorld


@pytest.fixture
def world() -> Iterator[AuthWorld]:
    w = AuthWorld()
    yield w
    w.close()
