"""`bridge` and tasks (issue 26, point 10): a client that asks for no task still gets a
task-required tool's result; a client that speaks tasks gets them passed through."""
from __future__ import annotations

import sys

import pytest

import mcpmini
from harness import MCPMINI, run


def bridged(server) -> mcpmini.Client:
    return mcpmini.Client([sys.executable, str(MCPMINI), "bridge", server.target], era_cache=False,
                          list_cache=False, protocol="legacy")


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_a_plain_call_of_a_task_required_tool_is_run_as_a_task_upstream(tasky, era):
    server = tasky(era)

    async def go():
        async with bridged(server) as c:
            return await c.call_tool("slow", {"topic": "bridged"}, task=False)
    assert run(go())["content"][0]["text"] == "report on bridged"
    assert "tasks/get" in server.methods()


def test_a_client_that_speaks_tasks_gets_them_passed_through(tasky):
    server = tasky("legacy")

    async def go():
        async with bridged(server) as c:
            task = await c.start_task("slow", {"topic": "through"})
            return task.id, await task.result()
    task_id, result = run(go())
    assert task_id == "task-1" and result["content"][0]["text"] == "report on through"
    assert "tasks/result" in server.methods()


def test_progress_is_forwarded_and_a_cancelled_call_cancels_the_task_upstream(tasky):
    import asyncio
    progress, server = [], tasky("legacy", seconds=0.6)

    async def go():
        async with mcpmini.Client([sys.executable, str(MCPMINI), "bridge", server.target], era_cache=False,
                                  list_cache=False, protocol="legacy", on_progress=progress.append) as c:
            await c.call_tool("slow", {}, task=False)
    run(go())
    assert [p["message"] for p in progress] == ["step 1", "step 2"]

    server = tasky("legacy", never=True)

    async def cancel():
        async with bridged(server) as c:
            waiter = asyncio.ensure_future(c.call_tool("slow", {}, task=False))
            while "tasks/get" not in server.methods():
                await asyncio.sleep(0.05)
            waiter.cancel()
            while "tasks/cancel" not in server.methods():
                await asyncio.sleep(0.05)
    run(cancel())


def test_a_modern_client_without_tasks_gets_a_legacy_task_tool_answered(tasky):
    server = tasky("legacy", ask=True)

    async def go():
        async with mcpmini.Client([sys.executable, str(MCPMINI), "bridge", server.target], era_cache=False,
                                  list_cache=False, protocol="2026-07-28", accept_defaults=True) as c:
            return await c.call_tool("slow", {"topic": "across"}, task=False)
    text = run(go())["content"][0]["text"]
    assert text.startswith("report on across") and "drizzle" in text   # its question crossed as MRTR
