"""`call` with task tools, `tasks`, `task` (issue 26), over stdio and Streamable HTTP, both eras."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from harness import MCPMINI

ERAS = ["legacy", "modern"]


@pytest.mark.parametrize("era", ERAS)
def test_call_runs_a_required_tool_as_a_task_by_itself(cli, tasky, era):
    code, out, err = cli("call", tasky(era).target, "slow", "topic=rain")
    assert (code, out, err) == (0, "report on rain\n", "")


@pytest.mark.parametrize("http", [False, True])
def test_call_outcomes(cli, tasky, http):
    code, out, err = cli("call", tasky("modern", http, fail=True).target, "slow")
    assert code == 1 and "task task-1 failed: the research machine broke" in err
    code, out, err = cli("call", tasky("legacy", http, is_error=True).target, "slow")
    assert code == 1 and out == "report on ?\n" and "isError" in err
    code, out, err = cli("call", tasky("legacy", http, vanish=True).target, "slow")
    assert code == 3 and "task 'task-1' is gone" in err


def test_task_flag_is_a_usage_error_on_a_tool_that_forbids_tasks(cli, tasky):
    server = tasky("legacy")
    code, out, err = cli("call", server.target, "plain", "--task")
    assert code == 2 and "cannot run as a task" in err
    assert "tools/call" not in server.methods()   # nothing sent
    code, out, err = cli("call", server.target, "quick", "--task", "--json")
    assert code == 0 and json.loads(out)["content"][0]["text"] == "report on ?"
    calls = [m["params"] for m in server.record() if m.get("method") == "tools/call"]
    assert [("task" in p) for p in calls] == [True]


@pytest.mark.parametrize("era", ERAS)
def test_wait_runs_out_exit_124_with_how_to_fetch_later(cli, tasky, era):
    server = tasky(era, http=True, never=True)
    code, out, err = cli("call", server.target, "slow", "--wait", "0.5")
    assert code == 124 and "task task-1 is still working after 0.5 s; it runs on" in err
    assert f"mcpmini task {server.target} task-1 --wait" in err
    assert "tasks/cancel" not in server.methods()
    code, out, err = cli("task", server.target, "task-1", "--wait", "0.3")
    assert code == 124


def test_detach_then_tasks_then_task_wait_and_cancel_over_http(cli, tasky):
    server = tasky("legacy", http=True, seconds=1.0)
    code, out, err = cli("call", server.target, "slow", "topic=later", "--detach")
    assert (code, out) == (0, "task-1\n")
    code, out, err = cli("call", server.target, "slow", "--detach", "--json")
    assert code == 0 and json.loads(out)["taskId"] == "task-2"
    code, out, err = cli("tasks", server.target)
    assert code == 0 and out.splitlines()[0].split()[:2] == ["task-1", "working"]
    code, out, err = cli("task", server.target, "task-2", "--cancel")
    assert code == 0 and "task task-2 cancelled (now cancelled)" in err
    code, out, err = cli("task", server.target, "task-2", "--cancel")
    assert code == 0 and "ended already (cancelled)" in err
    code, out, err = cli("task", server.target, "task-1", "--wait")
    assert (code, out) == (0, "report on later\n")
    code, out, err = cli("task", server.target, "task-1", "--json")
    assert code == 0 and json.loads(out)["status"] == "completed"
    code, out, err = cli("task", server.target, "task-2", "--wait")
    assert code == 1 and "task task-2 cancelled: cancelled by request" in err
    code, out, err = cli("task", server.target, "nope")
    assert code == 3 and "'nope' is gone" in err


def test_detach_is_refused_on_a_stdio_server(cli, tasky):
    server = tasky("legacy")
    code, out, err = cli("call", server.target, "slow", "--detach")
    assert code == 2 and "HTTP server" in err and "tools/call" not in server.methods()


def test_tasks_where_the_server_offers_no_list(cli, tasky):
    code, out, err = cli("tasks", tasky("legacy", no_list=True).target)
    assert (code, out) == (0, "") and "offers no task list" in err


@pytest.mark.parametrize("era", ERAS)
def test_questions_while_running_follow_the_elicitation_rules(cli, tasky, era):
    code, out, err = cli("call", tasky(era, ask=True).target, "slow", "--accept-defaults")
    assert code == 0 and '"kind": "drizzle"' in out
    code, out, err = cli("call", tasky(era, ask=True).target, "slow")   # no terminal: declined
    assert code == 0 and '"decline"' in out


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_cancels_the_task_on_the_wire(tasky, signum, code):
    server = tasky("legacy", never=True)
    child = subprocess.Popen([sys.executable, str(MCPMINI), "call", server.target, "slow"],
                             stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True,
                             env={**os.environ, "MCPMINI_NO_CACHE": "1"})
    try:
        while "tasks/get" not in server.methods() and child.poll() is None:
            time.sleep(0.05)
        child.send_signal(signum)
        err = child.communicate(timeout=30)[1]
    finally:
        if child.poll() is None:
            child.kill()
    assert child.returncode == code, err
    assert "cancelled task task-1 on the server" in err
    assert "tasks/cancel" in server.methods()


def test_detach_on_a_server_that_answers_at_once_prints_the_result(cli, tasky):
    code, out, err = cli("call", tasky("legacy", http=True).target, "plain", "--detach", "--no-validate")
    assert (code, out) == (0, "plain ran at once\n")
