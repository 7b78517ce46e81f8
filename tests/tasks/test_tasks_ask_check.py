"""`check` and `ask` with task tools (issue 26, points 8 and 9)."""
from __future__ import annotations


def test_check_lists_task_support_runs_task_tools_as_tasks_and_fails_stray_tasks(cli, tasky):
    code, out, err = cli("check", tasky("legacy").target, "--call", "slow", "topic=x")
    assert code == 0, out + err
    assert "tool slow (taskSupport required)" in out and "tool plain " in out
    assert "PASS  tasks/list" in out
    line = next(l for l in out.splitlines() if "call slow" in l)
    assert "PASS" in line and "as task task-1: report on x" in line
    code, out, err = cli("check", tasky("legacy", stray=True).target, "--call", "plain")
    assert code == 1 and "did not ask for one" in out


def test_ask_runs_a_task_tool_as_a_task_while_the_step_waits(tasky):
    import sys
    from pathlib import Path

    import mcpmini
    from harness import run
    sys.path.insert(0, str(Path(__file__).parents[1] / "agent"))
    from agent_fakes import ScriptedModel, answer, calls

    server, events = tasky("modern", seconds=0.4), []
    with ScriptedModel([calls(("tasky_slow", {"topic": "hail"})), answer("done")]) as model:
        transcript = run(mcpmini.run_agent("q", {"tasky": server.argv}, model="m", base_url=model.base_url,
                                           on_event=lambda kind, info: events.append((kind, info))))
    tool_message = next(m for m in transcript["messages"] if m["role"] == "tool")
    assert tool_message["content"] == "report on hail"
    assert any(kind == "task" and info["status"] == "working" for kind, info in events)
