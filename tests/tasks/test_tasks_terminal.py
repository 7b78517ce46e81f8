"""Tasks on a real terminal (issue 26): the status line, a question mid-task, Ctrl-C."""
from __future__ import annotations

import os
import subprocess

import pytest

from terminal_harness import Screen

if os.name != "posix":
    pytest.skip("pseudo-terminals are POSIX", allow_module_level=True)


@pytest.fixture
def screen():
    made: list[Screen] = []

    def start(*argv, **kwargs) -> Screen:
        made.append(Screen(*argv, **kwargs))
        return made[-1]
    yield start
    for s in made:
        s.close()


def test_the_status_line_shows_the_task_and_its_progress(screen, tasky):
    s = screen("call", tasky("modern", seconds=3).target, "slow", "topic=sun", stdout=subprocess.PIPE)
    s.expect("slow: task working: started · 1 s")
    s.expect("2/2 100% step 2")
    assert s.wait() == 0
    assert s.proc.stdout.read() == b"report on sun\n"


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_a_question_mid_task_is_asked_on_the_terminal(screen, tasky, era):
    s = screen("call", tasky(era, ask=True, seconds=0.4).target, "slow", stdout=subprocess.PIPE)
    s.expect("asks: Which rain?")
    s.expect("[drizzle]: ")
    s.type("sleet\r")
    assert s.wait() == 0
    assert b'"kind": "sleet"' in s.proc.stdout.read()


def test_ctrl_c_cancels_the_task_and_exits_130(screen, tasky):
    server = tasky("legacy", never=True)
    s = screen("call", server.target, "slow")
    s.expect("slow: task working")
    s.type("\x03")
    assert s.wait() == 130
    assert "cancelled task task-1 on the server" in s.text
    assert "tasks/cancel" in server.methods()
