"""Streamable HTTP in the legacy era (2025-03-26 … 2025-11-25): sessions, version header,
404 → new session, DELETE, server requests on SSE replies, priming events, resuming a stream
with GET + Last-Event-ID after `retry`, cancellation by notification; era detection."""
from __future__ import annotations

import asyncio
import json
import threading

import pytest

import mcpmini
from harness import run
from http_fakes import (FakeHTTPServer, MCPFake, Reply, Resumable, json_reply, result, sse_event,
                        sse_reply)


def legacy_client(server, **options):
    return mcpmini.Client(server.url(), protocol="legacy", era_cache=False, **options)


def test_session_id_echo_and_version_header_after_initialize():
    with FakeHTTPServer(MCPFake(version="2025-11-25")) as server:
        async def go():
            async with legacy_client(server) as client:
                assert (client.era, client.protocol_version) == ("legacy", "2025-11-25")
                await client.list_tools()
                await client.call_tool("echo", {"text": "x"})
        run(go())
    init, *later = server.requests
    assert init.rpc_method == "initialize"
    assert init.headers.get("Mcp-Session-Id") is None
    assert init.headers.get("MCP-Protocol-Version") is None
    assert sorted(r.rpc_method or r.method for r in later) == [
        "DELETE", "GET", "notifications/initialized", "tools/call", "tools/list"]
    assert later[0].rpc_method == "notifications/initialized" and later[-1].method == "DELETE"
    (get,) = [r for r in later if r.method == "GET"]   # the optional server stream (405 here)
    assert "text/event-stream" in get.headers["Accept"]
    for request in later:
        assert request.headers["Mcp-Session-Id"] == "session-1"
        assert request.headers["MCP-Protocol-Version"] == "2025-11-25"
        assert request.headers.get("Mcp-Method") is None


def test_no_version_header_for_2025_03_26():
    with FakeHTTPServer(MCPFake(version="2025-03-26")) as server:
        async def go():
            async with legacy_client(server) as client:
                await client.list_tools()
        run(go())
    assert all(r.headers.get("MCP-Protocol-Version") is None for r in server.requests)
    assert all(r.headers.get("Mcp-Session-Id") == "session-1" for r in server.requests[1:])


def test_404_for_a_session_starts_a_new_one_and_retries_once():
    fake = MCPFake()
    with FakeHTTPServer(fake) as server:
        async def go():
            async with legacy_client(server) as client:
                await client.list_tools()
                fake.session_ids.clear()          # the server forgets the session
                return await client.call_tool("echo", {"text": "again"})
        assert json.loads(mcpmini.result_text(run(go()))) == {"text": "again"}
    inits = server.by_method("initialize")
    assert len(inits) == 2
    for init in inits:   # spec: initialize carries neither the session id nor the version
        assert init.headers.get("Mcp-Session-Id") is None
        assert init.headers.get("MCP-Protocol-Version") is None
    calls = server.by_method("tools/call")
    assert [c.headers["Mcp-Session-Id"] for c in calls] == ["session-1", "session-2"]
    assert calls[0].json["id"] != calls[1].json["id"]


def test_delete_ends_the_session_and_405_is_fine():
    for status in (200, 405):
        with FakeHTTPServer(MCPFake(delete_status=status)) as server:
            async def go():
                async with legacy_client(server):
                    pass
            run(go())
        (delete,) = [r for r in server.requests if r.method == "DELETE"]
        assert delete.headers["Mcp-Session-Id"] == "session-1"


def test_server_requests_on_an_sse_reply_are_answered_by_post():
    answered = threading.Event()
    answers = []
    fake = MCPFake()

    def handler(request):
        message = request.json
        if isinstance(message, dict) and "method" not in message and "id" in message:
            answers.append(request)
            if len(answers) == 2:
                answered.set()
            return Reply(202)
        return fake(request)

    def call(request, params):
        rid = request.json["id"]

        def chunks():
            yield sse_event({"jsonrpc": "2.0", "id": "srv-1", "method": "ping"})
            yield sse_event({"jsonrpc": "2.0", "id": 77, "method": "sampling/createMessage", "params": {}})
            yield sse_event({"jsonrpc": "2.0", "method": "notifications/message",
                             "params": {"level": "info", "data": "working"}})
            answered.wait(10)  # the response only after both answers arrived
            yield sse_event(result(rid, {"content": [{"type": "text", "text": "done"}]}))
        return sse_reply(chunks())

    fake.call = call
    logs = []
    with FakeHTTPServer(handler) as server:
        async def go():
            async with legacy_client(server, on_log=logs.append) as client:
                return await client.call_tool("echo", {})
        assert mcpmini.result_text(run(go())) == "done"
    by_id = {a.json["id"]: a for a in answers}
    assert by_id["srv-1"].json == {"jsonrpc": "2.0", "id": "srv-1", "result": {}}
    assert by_id[77].json["error"]["code"] == -32601
    for answer in answers:
        assert answer.method == "POST" and answer.headers["Mcp-Session-Id"] == "session-1"
    assert logs and logs[0]["data"] == "working"


class Pushing(MCPFake):
    """A legacy server whose GET stream carries a ping and a log message, then ends."""

    def __init__(self):
        super().__init__()
        self.answered = threading.Event()
        self.gets = 0

    def __call__(self, request):
        message = request.json
        if isinstance(message, dict) and message.get("id") == "push-1" and "method" not in message:
            self.answered.set()
        return super().__call__(request)

    def on_get(self, request):
        self.gets += 1
        if self.gets > 1:
            return Reply(405)

        def chunks():
            yield sse_event(data="", id="g-1", retry=100)
            yield sse_event({"jsonrpc": "2.0", "method": "notifications/message",
                             "params": {"level": "info", "data": "pushed"}}, id="g-2")
            yield sse_event({"jsonrpc": "2.0", "id": "push-1", "method": "ping"}, id="g-3")
            self.answered.wait(10)
        return sse_reply(chunks())


def test_the_get_stream_carries_server_requests_and_notifications():
    fake = Pushing()
    logs = []
    with FakeHTTPServer(fake) as server:
        async def go():
            async with legacy_client(server, on_log=logs.append):
                for _ in range(200):
                    if fake.answered.is_set() and logs:
                        break
                    await asyncio.sleep(0.02)
        run(go())
        assert fake.answered.is_set() and logs[0]["data"] == "pushed"
    (answer,) = [r for r in server.requests if (r.json or {}).get("id") == "push-1"]
    assert answer.method == "POST" and answer.json["result"] == {}
    assert answer.headers["Mcp-Session-Id"] == "session-1"
    gets = [r for r in server.requests if r.method == "GET"]
    assert gets[0].headers.get("Last-Event-ID") is None
    assert all(g.headers["Mcp-Session-Id"] == "session-1" for g in gets)
    if len(gets) > 1:   # the ended stream is resumed where it stopped
        assert gets[1].headers["Last-Event-ID"] == "g-3"


class HalfLine(MCPFake):
    """A legacy server whose first GET stream breaks off in the middle of a line."""

    def __init__(self):
        super().__init__()
        self.gets = 0

    def on_get(self, request):
        self.gets += 1
        if self.gets == 1:
            return sse_reply(iter([sse_event(data="", id="g-1", retry=100), b'data: {"jsonrpc"']))
        if self.gets == 2:
            log = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "whole"}}
            garbled = sse_event(data='{"jsonrpc": "2.0", "id": 7, "result": NaN}', id="g-2")
            return sse_reply(iter([garbled, sse_event(log, id="g-3"), b": the end\n\n"]))
        return Reply(405)


def test_a_resumed_get_stream_starts_clean_after_a_half_line(caplog):
    """A line left unfinished by a broken stream is not glued to the next stream's first line;
    a garbled message on the stream is skipped with a warning."""
    logs = []
    with FakeHTTPServer(HalfLine()) as server:
        async def go():
            async with legacy_client(server, on_log=logs.append):
                for _ in range(200):
                    if logs:
                        break
                    await asyncio.sleep(0.02)
        run(go())
    assert [entry["data"] for entry in logs] == ["whole"]
    assert "skipped a garbled message of the GET stream" in caplog.text
    assert [r.headers.get("Last-Event-ID") for r in server.requests if r.method == "GET"][:2] == [None, "g-1"]


@pytest.mark.parametrize("retry", [400, None])
def test_resume_with_last_event_id_after_the_retry_delay(retry):
    fake = Resumable(retry=retry)
    with FakeHTTPServer(fake) as server:
        async def go():
            async with legacy_client(server) as client:
                return await client.call_tool("echo", {}, timeout=20)
        assert mcpmini.result_text(run(go())) == "resumed"
    (get,) = [r for r in server.requests if r.method == "GET" and r.headers.get("Last-Event-ID")]
    assert get.headers["Last-Event-ID"] == "ev-1"
    assert "text/event-stream" in get.headers["Accept"]
    assert get.headers["Mcp-Session-Id"] == "session-1"
    assert get.headers["MCP-Protocol-Version"] == "2025-11-25"
    delay = (retry if retry is not None else 1000) / 1000
    assert get.time - fake.closed_at[0] >= delay - 0.05   # never earlier than retry−50 ms


def test_a_405_on_the_resuming_get_fails_the_request():
    with FakeHTTPServer(Resumable(retry=50, get_status=405)) as server:
        async def go():
            async with legacy_client(server) as client:
                with pytest.raises(mcpmini.ConnectionClosed, match="405"):
                    await client.call_tool("echo", {}, timeout=20)
        run(go())


def test_a_stream_without_event_id_is_not_resumed():
    def call(request, params):
        return sse_reply([sse_event({"jsonrpc": "2.0", "method": "notifications/message",
                                     "params": {"level": "info", "data": "x"}})])

    with FakeHTTPServer(MCPFake(call=call)) as server:
        async def go():
            async with legacy_client(server) as client:
                with pytest.raises(mcpmini.ConnectionClosed, match="ended before its response"):
                    await client.call_tool("echo", {}, timeout=20)
        run(go())
    assert not [r for r in server.requests if r.method == "GET" and r.headers.get("Last-Event-ID")]


def test_legacy_timeout_posts_notifications_cancelled():
    def call(request, params):
        return sse_reply([b": keep-alive\n\n", 0.05] * 400)

    with FakeHTTPServer(MCPFake(call=call)) as server:
        async def go():
            async with legacy_client(server) as client:
                with pytest.raises(mcpmini.RequestTimeout):
                    await client.call_tool("echo", {}, timeout=0.5)
        run(go())
    (cancel,) = server.by_method("notifications/cancelled")
    (call_request,) = server.by_method("tools/call")
    assert cancel.json["params"]["requestId"] == call_request.json["id"]
    assert cancel.headers["Mcp-Session-Id"] == "session-1"


def test_initialize_over_sse_and_a_batch_reply():
    def call(request, params):
        rid = request.json["id"]
        return json_reply([{"jsonrpc": "2.0", "method": "notifications/message",
                            "params": {"level": "info", "data": "batched"}},
                           result(rid, {"content": [{"type": "text", "text": "from a batch"}]})])

    with FakeHTTPServer(MCPFake(sse=True, version="2025-03-26", call=call)) as server:
        async def go():
            async with legacy_client(server) as client:
                assert client.protocol_version == "2025-03-26"
                return await client.call_tool("echo", {})
        assert mcpmini.result_text(run(go())) == "from a batch"
    assert server.by_method("tools/call")[0].headers["Mcp-Session-Id"] == "session-1"


@pytest.mark.parametrize("discover, reason", [("empty", "without supportedVersions"), ("-32601", "-32601")])
def test_auto_era_detection_falls_back_to_legacy(discover, reason):
    with FakeHTTPServer(MCPFake(modern=False, discover=discover)) as server:
        async def go():
            async with mcpmini.Client(server.url()) as client:
                await client.list_tools()
                return client.era, client.era_reason
        era, why = run(go())
        assert era == "legacy" and reason in why
        (probe,) = server.by_method("server/discover")
        assert probe.headers["MCP-Protocol-Version"] == "2026-07-28"
        assert probe.headers["Mcp-Method"] == "server/discover"
        (init,) = server.by_method("initialize")   # after a modern probe: no modern headers
        assert init.headers.get("MCP-Protocol-Version") is None and init.headers.get("Mcp-Method") is None
        assert server.by_method("tools/list")[0].headers["MCP-Protocol-Version"] == "2025-11-25"

        async def again():   # the era cache skips the probe next time
            async with mcpmini.Client(server.url()) as client:
                return client.era
        assert run(again()) == "legacy"
        assert len(server.by_method("server/discover")) == 1
