"""JSON-RPC session: ids, timeouts, cancellation, late and hostile responses, server requests,
notifications (issue 2, item 1, plus the hostile-input rules of item 2)."""
from __future__ import annotations

import asyncio
import logging

import pytest

import mcpmini
from harness import alive, run

MODERN = "2026-07-28"


def _no_reader_errors(caplog: pytest.LogCaptureFixture) -> None:
    """Nothing reached asyncio's 'exception was never retrieved' or an ERROR log."""
    bad = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert not bad, [r.getMessage()[:300] for r in bad]


def _pending_is_empty(client: mcpmini.Client) -> None:
    """The one private peek: every pending entry was removed (checked only if it exists)."""
    pending = getattr(getattr(client, "_session", None), "_pending", None)
    if pending is not None:
        assert not pending, f"pending table not empty: {list(pending)}"


def test_ids_are_integers_from_one_and_never_reused(fake):
    f = fake("modern")

    async def main():
        async with f.client() as c:
            await c.list_tools()
            await asyncio.gather(*(c.call_tool("echo", {"text": str(i)}) for i in range(5)))
            await c.list_tools(refresh=True)

    run(main())
    ids = [m["id"] for m in f.received() if "method" in m and "id" in m]
    assert all(type(i) is int for i in ids), ids
    assert ids[0] == 1
    assert len(set(ids)) == len(ids) and ids == sorted(ids), ids


def test_timeout_raises_request_timeout_and_cancels_on_the_wire(fake):
    f = fake("modern")

    async def main():
        async with f.client() as c:
            with pytest.raises(mcpmini.RequestTimeout) as info:
                await c.call_tool("sleep", {"seconds": 10}, timeout=0.3)
            await f.wait_for(lambda f: f.cancels())
            return info.value

    exc = run(main())
    assert isinstance(exc, TimeoutError)  # the builtin, also on 3.10
    assert exc.method == "tools/call" and exc.timeout == 0.3
    assert "tools/call" in str(exc) and "0.3" in str(exc)
    call_id = f.requests("tools/call")[0]["id"]
    cancels = f.cancels()
    assert [c["params"]["requestId"] for c in cancels] == [call_id]
    reason = cancels[0]["params"].get("reason")
    assert isinstance(reason, str) and reason.strip()


def test_client_default_timeout_applies_to_calls(fake):
    f = fake("modern")

    async def main():
        async with f.client(timeout=3.0) as c:  # (it bounds connecting too: not too small)
            with pytest.raises(mcpmini.RequestTimeout) as info:
                await c.call_tool("sleep", {"seconds": 10})
            return info.value

    exc = run(main())
    assert exc.method == "tools/call" and exc.timeout == 3.0


def test_caller_cancellation_sends_cancelled_and_session_goes_on(fake):
    f = fake("modern")

    async def main():
        async with f.client() as c:
            task = asyncio.ensure_future(c.call_tool("sleep", {"seconds": 10}))
            assert await f.wait_for(lambda f: f.requests("tools/call"))
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            await f.wait_for(lambda f: f.cancels())
            return await c.call_tool("echo", {"text": "alive"}, timeout=5)

    result = run(main())
    assert mcpmini.result_text(result) == "alive"
    call_id = f.requests("tools/call")[0]["id"]
    cancels = f.cancels()
    assert [c["params"]["requestId"] for c in cancels] == [call_id]
    assert isinstance(cancels[0]["params"].get("reason"), str)


@pytest.mark.parametrize("how", ["timeout", "cancel"])
def test_late_response_is_dropped(fake, caplog, how):
    caplog.set_level(logging.DEBUG)
    f = fake("modern")

    async def main():
        async with f.client() as c:
            call = c.call_tool("sleep", {"seconds": 0.8, "text": "LATE"}, timeout=0.2 if how == "timeout" else 30)
            if how == "timeout":
                with pytest.raises(mcpmini.RequestTimeout):
                    await call
            else:
                task = asyncio.ensure_future(call)
                await f.wait_for(lambda f: f.requests("tools/call"))
                task.cancel()
                with pytest.raises(asyncio.CancelledError):
                    await task
            call_id = f.requests("tools/call")[0]["id"]
            # wait until the fake has really written the late answer...
            assert await f.wait_for(lambda f: [m for m in f.sent() if m.get("id") == call_id])
            # ...then a round trip proves the reader read it, and lived
            after = await c.call_tool("echo", {"text": "next"}, timeout=5)
            _pending_is_empty(c)
            return after

    assert mcpmini.result_text(run(main())) == "next"
    _no_reader_errors(caplog)


def test_concurrent_requests_are_matched_to_their_callers(fake):
    f = fake("modern")

    async def main():
        async with f.client() as c:
            return await asyncio.gather(
                c.call_tool("sleep", {"seconds": 0.6, "text": "slow"}),
                c.call_tool("sleep", {"seconds": 0.05, "text": "fast"}),
                c.call_tool("echo", {"text": "now"}))

    assert [mcpmini.result_text(r) for r in run(main())] == ["slow", "fast", "now"]


def test_json_rpc_errors_become_remote_error(fake):
    f = fake("modern")

    async def main():
        async with f.client() as c:
            with pytest.raises(mcpmini.RemoteError) as tool:
                await c.call_tool("no_such_tool", {})
            with pytest.raises(mcpmini.RemoteError) as method:
                await c.request("no/such/method")
            return tool.value, method.value

    tool, method = run(main())
    assert (tool.code, tool.message, tool.data) == (-32602, "Unknown tool: no_such_tool", {"tool": "no_such_tool"})
    assert method.code == -32601 and "no/such/method" in method.message


def test_is_error_result_is_data(fake):
    f = fake("legacy")

    async def main():
        async with f.client() as c:
            return await c.call_tool("fail")

    result = run(main())
    assert result["isError"] is True
    assert mcpmini.result_text(result) == "the tool failed on purpose"


@pytest.mark.parametrize("mode", ["modern", "legacy"])
def test_progress_token_sent_and_on_progress_called(fake, mode):
    f = fake(mode)
    seen: list[dict] = []

    async def main():
        async with f.client(on_progress=seen.append) as c:
            return await c.call_tool("progress", {"steps": 3})

    assert mcpmini.result_text(run(main())) == "done after 3 steps"
    token = f.requests("tools/call")[0]["params"]["_meta"]["progressToken"]
    assert token is not None
    assert [(p["progressToken"], p["progress"], p["total"], p["message"]) for p in seen] == \
        [(token, i, 3, f"step {i}") for i in (1, 2, 3)]


def test_progress_extends_the_timeout(fake):
    """Each notification pushes the soft deadline back (a hard maximum still holds)."""
    f = fake("modern")

    async def main():
        async with f.client() as c:
            return await c.call_tool("progress", {"steps": 6, "delay": 0.25}, timeout=1.0)

    assert mcpmini.result_text(run(main())) == "done after 6 steps"


def test_progress_cannot_extend_past_the_hard_maximum(fake, monkeypatch):
    monkeypatch.setattr(mcpmini, "PROGRESS_TIMEOUT_CAP", 1.0)
    f = fake("modern")

    async def main():
        async with f.client() as c:
            with pytest.raises(mcpmini.RequestTimeout) as info:
                await c.call_tool("progress", {"steps": 40, "delay": 0.1}, timeout=0.5)
            return info.value

    assert run(main()).method == "tools/call"


def test_a_shorter_timeout_after_a_longer_one_still_fires_on_time(fake):
    """One timer per session wakes at the earliest deadline, whichever request came first."""
    f = fake("modern")

    async def main():
        async with f.client() as c:
            slow = asyncio.ensure_future(c.call_tool("sleep", {"seconds": 2}, timeout=30))
            await asyncio.sleep(0.1)
            loop = asyncio.get_running_loop()
            start = loop.time()
            with pytest.raises(mcpmini.RequestTimeout):
                await c.call_tool("sleep", {"seconds": 2}, timeout=0.3)
            waited = loop.time() - start
            return waited, mcpmini.result_text(await slow)

    waited, slow = run(main())
    assert waited < 1.5 and slow == "slept"


def test_batch_array_is_dispatched_element_by_element(fake):
    f = fake("modern")
    seen: list[dict] = []

    async def main():
        async with f.client(on_progress=seen.append) as c:
            return await c.call_tool("batch")

    assert mcpmini.result_text(run(main())) == "from a batch"
    assert [p["progress"] for p in seen] == [1]


def test_log_notifications_reach_on_log(fake):
    f = fake("legacy")
    logs: list[dict] = []

    async def main():
        async with f.client(on_log=logs.append) as c:
            await c.call_tool("log", {"data": {"disk": "full"}})

    run(main())
    assert logs == [{"level": "warning", "logger": "fake", "data": {"disk": "full"}}]


def test_notify_sends_a_notification(fake):
    f = fake("modern")

    async def main():
        async with f.client() as c:
            await c.notify("notifications/custom", {"x": 1})
            await c.list_tools()

    run(main())
    notes = [m for m in f.received() if m.get("method") == "notifications/custom"]
    assert notes == [{"jsonrpc": "2.0", "method": "notifications/custom", "params": {"x": 1}}]


@pytest.mark.parametrize("protocol", ["2026-07-28", "legacy"])
def test_hostile_lines_are_dropped_and_the_session_survives(fake, caplog, protocol):
    """BOM, invalid UTF-8, lone surrogates, NaN, 100k-deep nesting, huge integers, ids true /
    1.0 / objects / never sent, duplicates: the right answer still reaches the caller."""
    caplog.set_level(logging.DEBUG)
    f = fake("modern" if protocol == MODERN else "legacy")

    async def main():
        async with f.client(protocol=protocol) as c:
            first = await c.call_tool("hostile", timeout=10)
            second = await c.call_tool("echo", {"text": "still fine"}, timeout=5)
            _pending_is_empty(c)
            return first, second

    first, second = run(main(), timeout=30)
    assert mcpmini.result_text(first) == "RIGHT"
    assert mcpmini.result_text(second) == "still fine"
    _no_reader_errors(caplog)


def test_ids_true_and_float_never_match_pending_id_1(fake):
    """initialize is id 1: answers with id true and 1.0 (a 2099 version) must be ignored."""
    f = fake("legacy", init_hostile=True)

    async def main():
        async with f.client(protocol="legacy") as c:
            return c.protocol_version, c.server_info

    version, info = run(main())
    assert f.requests("initialize")[0]["id"] == 1
    assert version == "2025-11-25"
    assert info == {"name": "fake", "version": "9.9.9"}


def test_legacy_server_ping_answered_and_unknown_request_refused(fake):
    f = fake("legacy")

    async def main():
        async with f.client() as c:
            return await c.call_tool("server_request", {"wait": 5})

    responses = run(main())["structuredContent"]["responses"]
    # ids echoed exactly as received: a string stays a string
    assert responses['"srv-ping"'] == {"jsonrpc": "2.0", "id": "srv-ping", "result": {}}
    unknown = responses["4242"]
    assert unknown["id"] == 4242 and unknown["error"]["code"] == -32601
    assert "result" not in unknown


def test_a_flood_of_server_requests_is_answered_a_bounded_number_at_a_time(fake):
    """At MAX_SERVER_REQUESTS answers in progress the transport stops reading stdout; the
    requests held back meanwhile are answered later, every one of them."""
    f = fake("legacy")
    busy, most = [0], [0]

    async def slow_answer(params: dict) -> dict:
        busy[0] += 1
        most[0] = max(most[0], busy[0])
        await asyncio.sleep(0.02)
        busy[0] -= 1
        return {"action": "decline"}

    async def main():
        async with f.client(on_elicit=slow_answer) as c:
            result = await c.call_tool("elicit_many", {"count": 60})
            return mcpmini.result_text(result)

    assert run(main()) == "60"
    assert most[0] == mcpmini.MAX_SERVER_REQUESTS


def test_modern_server_request_is_dropped_not_answered(fake):
    f = fake("modern")

    async def main():
        async with f.client() as c:
            result = await c.call_tool("server_request", {"wait": 0.5})
            await c.list_tools(refresh=True)  # one more round trip: anything queued is out
            return result

    result = run(main())
    assert result["structuredContent"]["responses"] == {}
    assert [m for m in f.received() if "method" not in m] == []  # no response on the wire


def test_initialize_is_never_cancelled(fake):
    """The handshake timeout raises RequestTimeout; no notifications/cancelled is sent."""
    # SIGTERM ignored: after a failed connect the client closes stdin and signals at once; the
    # fake must still read (and record) everything the client wrote before the EOF.
    f = fake("legacy", init_delay=5, ignore_sigterm=True)

    async def main():
        with pytest.raises(mcpmini.RequestTimeout) as info:
            async with f.client(protocol="legacy", timeout=0.5):
                pass
        await asyncio.sleep(0.3)  # anything the client wrote has reached the recording
        return info.value

    exc = run(main())
    assert isinstance(exc, TimeoutError) and exc.timeout == 0.5
    assert f.requests("initialize"), f.methods()
    assert f.cancels() == []
    assert not [s["_start"] for s in f.starts() if alive(s["_start"])]
