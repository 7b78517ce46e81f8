"""The library's tasks (issue 26): Task handles, call_tool run as a task, both eras, the blocking forms."""
from __future__ import annotations

import asyncio

import pytest

import mcpmini
from harness import run

ERAS = ["legacy", "modern"]


def client(server, **kwargs) -> mcpmini.Client:
    return mcpmini.Client(server.argv, era_cache=False, list_cache=False, **kwargs)


@pytest.mark.parametrize("era", ERAS)
def test_required_tool_runs_as_a_task_with_statuses_and_progress(tasky, era):
    server, seen, progress = tasky(era, seconds=0.4), [], []

    async def go():
        async with client(server, on_progress=progress.append) as c:
            await c.list_tools()
            return await c.call_tool("slow", {"topic": "rain"}, on_task=lambda t: seen.append(t.status))
    result = run(go())
    assert result == {"content": [{"type": "text", "text": "report on rain"}], "isError": False}
    assert seen[0] == "working" and progress   # progress stays tied to the task after creation
    calls = [m for m in server.record() if m.get("method") == "tools/call"]
    assert len(calls) == 1   # listed as required: called as a task at once
    assert ("task" in calls[0]["params"]) == (era == "legacy")


@pytest.mark.parametrize("era", ERAS)
def test_a_needs_tasks_refusal_is_retried_once_as_a_task(tasky, era):
    server = tasky(era)

    async def go():
        async with client(server) as c:   # no tools/list: the server's refusal says it
            return await c.call_tool("slow", {"topic": "snow"})
    assert run(go())["content"][0]["text"] == "report on snow"
    calls = [m["params"] for m in server.record() if m.get("method") == "tools/call"]
    assert len(calls) == 2
    asked = [("task" in p) or "io.modelcontextprotocol/tasks" in str(p.get("_meta")) for p in calls]
    assert asked == [False, True]


def test_related_task_meta_never_reaches_the_caller(tasky):
    server = tasky("legacy")

    async def go():
        async with client(server) as c:
            return await (await c.start_task("slow", {})).result()
    assert "_meta" not in run(go())


@pytest.mark.parametrize("era", ERAS)
def test_task_handle_refresh_cancel_get_and_the_server_answering_at_once(tasky, era):
    server = tasky(era, never=True)

    async def go():
        async with client(server) as c:
            task = await c.start_task("slow", {"topic": "x"})
            assert isinstance(task, mcpmini.Task) and task.status == "working" and task.id
            assert (await task.refresh()).status == "working"
            await task.cancel()
            again = await c.get_task(task.id)
            assert again.status == "cancelled"
            with pytest.raises(mcpmini.RemoteError, match="task task-[0-9]+ cancelled"):
                await again.result()
            now = await c.start_task("plain", {})   # not run as a task by the server
            return now.status, await now.result()
    status, result = run(go())
    assert status == "completed" and result["content"][0]["text"] == "plain ran at once"


def test_cancelling_the_awaiting_coroutine_cancels_the_task_on_the_server(tasky):
    server = tasky("legacy", never=True)

    async def go():
        async with client(server) as c:
            waiter = asyncio.ensure_future(c.call_tool("slow", {}))
            while "tasks/get" not in server.methods():
                await asyncio.sleep(0.05)
            waiter.cancel()
            with pytest.raises(asyncio.CancelledError):
                await waiter
            return c.tasks
    assert run(go()) == {}
    assert "tasks/cancel" in server.methods()


@pytest.mark.parametrize("era", ERAS)
def test_questions_in_the_middle_are_answered(tasky, era):
    server = tasky(era, ask=True)

    async def go():
        async with client(server, accept_defaults=True) as c:
            return await c.call_tool("slow", {"topic": "fog"}, task=True)
    assert "drizzle" in run(go())["content"][0]["text"]
    if era == "modern":
        updates = [m for m in server.record() if m.get("method") == "tasks/update"]
        assert len(updates) == 1 and updates[0]["params"]["inputResponses"]["q1"]["action"] == "accept"


@pytest.mark.parametrize("era", ERAS)
def test_wait_bounds_the_wait_and_leaves_the_task_running(tasky, era):
    server = tasky(era, never=True)

    async def go():
        async with client(server) as c:
            with pytest.raises(mcpmini.RequestTimeout, match="still working"):
                await c.call_tool("slow", {}, wait=0.5)
    run(go())
    assert "tasks/cancel" not in server.methods()


def test_list_tasks_and_the_blocking_forms(tasky):
    server = tasky("legacy")
    with mcpmini.SyncClient(server.argv, era_cache=False, list_cache=False) as c:
        task = c.start_task("slow", {"topic": "sync"})
        assert task.result()["content"][0]["text"] == "report on sync"
        assert [t["taskId"] for t in c.list_tasks()] == [task.id]
    with mcpmini.SyncServers({"s": server.argv}) as servers:
        assert servers.call_tool("s", "slow", {"topic": "t"}, task=True)["content"][0]["text"] == "report on t"


def test_list_tasks_where_not_offered(tasky):
    async def go():
        async with client(tasky("modern")) as c:
            return await c.list_tasks()
    assert run(go()) == []


def test_nothing_outlives_close(tasky):
    server = tasky("modern", never=True, poll_ms=36_000_000)   # polls every 30 s at most

    async def go():
        c = client(server)
        await c.connect()
        waiter = asyncio.ensure_future(c.call_tool("slow", {}, task=True))
        while "tools/call" not in server.methods():
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.2)
        await c.close()
        with pytest.raises(mcpmini.ConnectionClosed):
            await asyncio.wait_for(waiter, 5)   # (not after the next 30 s poll)
    run(go())
