"""The terminal experience against a real server (server-everything over stdio, legacy): its
elicitation form answered field by field on a real pty, and its progress notifications on the
status line (issue 14, items 1 and 3)."""
from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path

import pytest

from terminal_harness import Screen

pytestmark = pytest.mark.skipif(os.name != "posix", reason="pseudo-terminals are POSIX")


@pytest.fixture(autouse=True)
def in_empty_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def test_everything_elicitation_form_on_a_pty(everything_cmd: list[str]) -> None:
    s = Screen("--timeout", "60", "call", shlex.join(everything_cmd), "trigger-elicitation-request",
               stdout=subprocess.PIPE)
    try:
        s.expect("asks: Please provide inputs for the following fields:")
        s.expect("String (string, required) — Your full, legal name: ")
        s.type("Zoë\r")
        s.expect("Boolean (boolean, y/n) — Agree to the terms and conditions: ")
        s.type("maybe\r")                      # not a boolean: asked again
        s.expect("must be boolean")
        s.type("yes\r")                        # y/yes/n/no/true/false (issue 25, item 3)
        for title, wrong, reason in (("String with default", "", ""), ("String with email format, email", "zoe@",
                                     "must be an email address"), ("String with uri format, uri", "home",
                                     "must be a URI"), ("String with date format, date", "1990-02-40",
                                     "must be a date: YYYY-MM-DD")):
            name, _, form = title.partition(", ")
            s.expect(f"  {name} (string{', ' * bool(form)}{form}) — ")
            if wrong:                          # the format is checked before anything is sent
                s.type(wrong + "\r")
                s.expect(reason)
            s.type("\r")                       # the default, or nothing
        s.expect("Integer (integer 1..100) — ")
        s.expect("[42]: ")
        s.type("101\r")
        s.expect("must be at most 100; try again")
        s.type("\r")
        for _ in range(6):   # a number, four enums, a legacy enum: their defaults
            s.expect("]: ")
            s.type("\r")
        assert "Titled Single Select Enum (hero-1|hero-2|hero-3; hero-1 = Superman" in s.text
        assert s.wait() == 0, s.text
        out = s.proc.stdout.read().decode()
    finally:
        s.close()
    assert "User provided the requested information" in out
    assert "- Name: Zoë" in out and "- Agreed to terms: true" in out and "- Favorite Integer: 42" in out
    assert '"untitledSingleSelectEnum": "Monica"' in out   # a default, sent as given


def test_everything_progress_on_the_status_line(everything_cmd: list[str]) -> None:
    s = Screen("--timeout", "60", "call", shlex.join(everything_cmd), "trigger-long-running-operation",
               "duration:=3", "steps:=3", stdout=subprocess.PIPE)
    try:
        s.expect("waiting for trigger-long-running-operation · 1 s 1/3 33%")
        s.expect(" 2/3 67%")
        assert s.wait() == 0, s.text
        out = s.proc.stdout.read().decode()
    finally:
        s.close()
    assert out.startswith("Long running operation completed.")
    assert s.text.endswith("\r\x1b[K")   # the status line is gone, and it never reached stdout
