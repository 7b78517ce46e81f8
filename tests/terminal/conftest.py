"""Fixtures of the terminal tests (isolation and deadlines are tests/conftest.py's):
``screen(...)`` starts mcpmini on a pty and closes it afterwards."""
from __future__ import annotations

import os
from typing import Any, Callable, Iterator

import pytest

from terminal_harness import Screen

if os.name != "posix":
    pytest.skip("pseudo-terminals are POSIX", allow_module_level=True)


@pytest.fixture
def screen() -> Iterator[Callable[..., Screen]]:
    made: list[Screen] = []

    def start(*argv: Any, **kwargs: Any) -> Screen:
        made.append(Screen(*argv, **kwargs))
        return made[-1]
    yield start
    for s in made:
        s.close()
