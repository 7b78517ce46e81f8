"""MCP tasks against a real server (issue 26): server-everything's `simulate-research-query`
(2025-11-25 tasks, `taskSupport: required`; four one-second stages; `ambiguous=true` asks a
question mid-task through an elicitation related to the task, delivered on tasks/result), over
stdio and Streamable HTTP, from the library and the command line. The TS SDK v2 server of the
peers (@modelcontextprotocol/server 2.4.0) offers no task tools, so it is not here."""

from __future__ import annotations

import shlex

import mcpmini

TOOL = "simulate-research-query"


def test_library_runs_the_research_task_and_sees_its_statuses(everything_cmd, run) -> None:
    seen: list[tuple[str, str | None]] = []

    async def go() -> dict:
        async with mcpmini.Client(everything_cmd, timeout=30) as client:
            tools = {t["name"]: t for t in await client.list_tools()}
            assert tools[TOOL]["execution"]["taskSupport"] == "required"
            assert "tasks" in client.capabilities
            return await client.call_tool(TOOL, {"topic": "rain"},
                                          on_task=lambda task: seen.append((task.status, task.status_message)))
    result = run(go())
    assert "# Research Report: rain" in mcpmini.result_text(result)
    assert "_meta" not in result or "io.modelcontextprotocol/related-task" not in result["_meta"]
    assert seen[0][0] == "working" and any("..." in (m or "") for _, m in seen)


def test_cli_call_runs_it_as_a_task_by_itself(everything_cmd, cli) -> None:
    code, out, err = cli("call", shlex.join(everything_cmd), TOOL, "topic=rain")
    assert code == 0, err
    assert out.startswith("# Research Report: rain")


def test_an_ambiguous_query_asks_its_question_mid_task(everything_cmd, cli) -> None:
    code, out, err = cli("call", shlex.join(everything_cmd), TOOL, "topic=python", "ambiguous=true",
                         "--accept-defaults")
    assert code == 0, err
    assert "Clarification" in out   # the question was asked and answered (accepted, with defaults)


def test_wait_runs_out_then_the_task_is_fetched_over_http(http_peer, cli) -> None:
    url = http_peer("everything_http", "streamableHttp").url
    code, out, err = cli("call", url, TOOL, "topic=snow", "--wait", "1")
    assert code == 124 and "it runs on" in err and f"mcpmini task {url} " in err
    task_id = err.split(f"mcpmini task {url} ")[1].split()[0]
    code, out, err = cli("call", url, TOOL, "topic=hail", "--detach")
    assert code == 0 and out.strip()
    # a new session per run: whether a task outlives its session is the server's choice
    code, listed, err = cli("tasks", url)
    assert code == 0, err
    code, out, err = cli("task", url, task_id, "--wait")
    assert code in (0, 3), err   # fetched, or gone with its session (said, exit 3)
    if code == 0:
        assert out.startswith("# Research Report: snow")
    else:
        assert "is gone" in err


def test_check_runs_the_task_tool_as_a_task(everything_cmd, cli) -> None:
    code, out, err = cli("check", shlex.join(everything_cmd), "--call", TOOL, "topic=fog")
    line = next(l for l in out.splitlines() if f"call {TOOL}" in l)
    assert "PASS" in line and "as task " in line, out
    assert f"tool {TOOL} (taskSupport required)" in out
