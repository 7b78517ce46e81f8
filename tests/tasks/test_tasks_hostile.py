"""Hostile task servers (issue 26, point 11): each a clear error and the right exit code,
never a hang or a traceback."""
from __future__ import annotations

import pytest


def test_poll_interval_zero_is_clamped(cli, tasky):
    server = tasky("modern", never=True, poll_ms=0)
    code, out, err = cli("call", server.target, "slow", "--wait", "1")
    assert code == 124
    # at most one poll per 0.2 s (a slow machine polls less, never more)
    assert server.methods().count("tasks/get") <= 1 / 0.2 + 1


@pytest.mark.parametrize("http", [False, True])
def test_poll_interval_of_ten_hours_does_not_hold_the_wait(cli, tasky, http):
    server = tasky("modern", http, never=True, poll_ms=36_000_000)
    code, out, err = cli("call", server.target, "slow", "--wait", "0.5")
    assert code == 124 and "Traceback" not in err


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_unknown_status(cli, tasky, era):
    code, out, err = cli("call", tasky(era, status="thinking-hard").target, "slow")
    assert code == 3 and "unknown status 'thinking-hard'" in err


def test_huge_task_id(cli, tasky):
    code, out, err = cli("call", tasky("legacy", task_id="x" * 100_000).target, "slow")
    assert code == 3 and "without a usable taskId" in err and len(err) < 1000


@pytest.mark.parametrize("http", [False, True])
def test_control_characters_in_a_task_id_are_neutralised(cli, tasky, http):
    server = tasky("legacy", http, never=True, task_id="evil\x1b[2J\x07id")
    code, out, err = cli("call", server.target, "slow", "--wait", "0.3")
    assert code == 124 and "\x1b" not in err and "\x07" not in err and "evil" in err
    if http:
        code, out, err = cli("call", server.target, "slow", "--detach")
        assert code == 0 and "\x1b" not in out and "evil" in out


def test_tasks_result_that_never_answers(cli, tasky):
    code, out, err = cli("--timeout", "1", "call", tasky("legacy", result_hang=True).target, "slow")
    assert code == 124 and "tasks/result timed out" in err


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_a_task_to_a_request_that_did_not_ask(cli, tasky, era):
    code, out, err = cli("call", tasky(era, stray=True).target, "plain")
    assert code == 3 and "did not ask for one" in err


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_status_notification_flood(cli, tasky, era):
    code, out, err = cli("call", tasky(era, flood=5000).target, "slow", "topic=flood")
    assert (code, out) == (0, "report on flood\n")


def test_update_ignores_a_change_after_the_end_and_refuses_unknown_statuses(caplog):
    import types

    import mcpmini
    task = mcpmini.Task(types.SimpleNamespace(name="s"), {"taskId": "t", "status": "completed", "result": {}})
    task.update({"taskId": "t", "status": "working"})
    assert task.status == "completed" and "ended completed, then was said to be working; ignored" in caplog.text
    with pytest.raises(mcpmini.ProtocolError, match="unknown status"):
        task.update({"taskId": "t", "status": 7})


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_a_lost_answer_to_a_task_augmented_call_is_not_sent_again(cli, tasky, era):
    server = tasky(era, http=True, drop_create=True)
    code, out, err = cli("call", server.target, "slow")
    assert code == 3 and "may or may not have run" in err
    assert server.methods().count("tools/call") == 1
