"""Streamable HTTP in the modern era (2026-07-28): headers and their encodings, x-mcp-header
mirroring and validation, JSON and SSE replies, errors, cancellation by closing the stream."""
from __future__ import annotations

import asyncio
import base64
import json
import logging
import time

import pytest

import mcpmini
from harness import run
from http_fakes import (MODERN, FakeHTTPServer, MCPFake, Reply, error, json_reply, result,
                        sse_event, sse_reply)

META_VERSION = "io.modelcontextprotocol/protocolVersion"


def b64(text: str) -> str:
    return "=?base64?" + base64.b64encode(text.encode()).decode() + "?="


@pytest.mark.parametrize("value, expected", [
    ("us-west", "us-west"),
    ("plain text, with spaces", "plain text, with spaces"),
    ("", ""),
    ("Hello, 世界", b64("Hello, 世界")),
    (" padded ", b64(" padded ")),
    ("\tindented", b64("\tindented")),
    ("line1\r\nline2", b64("line1\r\nline2")),
    ("del\x7f", b64("del\x7f")),
    ("=?base64?SGk=?=", b64("=?base64?SGk=?=")),   # a plain value that looks encoded
])
def test_header_value_encoding(value, expected):
    assert mcpmini._header_value(value) == expected


HEADER_TOOL = {"name": "weather", "inputSchema": {"type": "object", "properties": {
    "region": {"type": "string", "x-mcp-header": "Region"},
    "count": {"type": "integer", "x-mcp-header": "Count"},
    "flag": {"type": "boolean", "x-mcp-header": "Flag"},
    "method": {"type": "string", "x-mcp-header": "Method"},
    "greeting": {"type": "string", "x-mcp-header": "Greeting"},
    "empty": {"type": "string", "x-mcp-header": "Empty"},
    "absent": {"type": "string", "x-mcp-header": "Absent"},
    "nothing": {"type": "string", "x-mcp-header": "Nothing"},
    "nested": {"type": "object", "properties": {"inner": {"type": "string", "x-mcp-header": "Inner"}}},
}}}


def test_modern_headers_on_every_post_and_param_mirroring():
    with FakeHTTPServer(MCPFake(tools=[HEADER_TOOL])) as server:
        async def go():
            async with mcpmini.Client(server.url(), era_cache=False) as client:
                assert client.era == MODERN
                assert [t["name"] for t in await client.list_tools()] == ["weather"]
                await client.call_tool("weather", {
                    "region": "us-west", "count": 42, "flag": True, "method": "GET",
                    "greeting": "Hello, 世界", "empty": "", "nothing": None,
                    "nested": {"inner": " padded "}})
                await client.get_prompt("tab\tprompt")
                await client.read_resource("file:///tmp/数据.txt")
        run(go())
    assert [r.rpc_method for r in server.requests] == [
        "server/discover", "tools/list", "tools/call", "prompts/get", "resources/read"]
    for request in server.requests:
        assert request.method == "POST"
        accept = request.headers["Accept"]
        assert "application/json" in accept and "text/event-stream" in accept
        assert request.headers["Content-Type"] == "application/json"
        version = request.json["params"]["_meta"][META_VERSION]
        assert request.headers["MCP-Protocol-Version"] == version == MODERN
        assert request.headers["Mcp-Method"] == request.rpc_method
        assert request.headers.get("Mcp-Session-Id") is None
    call = server.by_method("tools/call")[0].headers
    assert call["Mcp-Name"] == "weather"
    assert call["Mcp-Param-Region"] == "us-west"
    assert call["Mcp-Param-Count"] == "42"
    assert call["Mcp-Param-Flag"] == "true"
    assert call["Mcp-Param-Method"] == "GET"
    assert call["Mcp-Param-Greeting"] == b64("Hello, 世界")
    assert call["Mcp-Param-Empty"] == ""
    assert call["Mcp-Param-Inner"] == b64(" padded ")
    assert call.get("Mcp-Param-Absent") is None and call.get("Mcp-Param-Nothing") is None
    assert server.by_method("prompts/get")[0].headers["Mcp-Name"] == b64("tab\tprompt")
    assert server.by_method("resources/read")[0].headers["Mcp-Name"] == b64("file:///tmp/数据.txt")
    assert server.by_method("server/discover")[0].headers.get("Mcp-Name") is None


def _tool(name, properties, **extra):
    return {"name": name, "inputSchema": {"type": "object", "properties": properties, **extra}}


INVALID_TOOLS = [
    _tool("bad_empty", {"a": {"type": "string", "x-mcp-header": ""}}),
    _tool("bad_token", {"a": {"type": "string", "x-mcp-header": "Has Space"}}),
    _tool("bad_colon", {"a": {"type": "string", "x-mcp-header": "a:b"}}),
    _tool("bad_unicode", {"a": {"type": "string", "x-mcp-header": "Régión"}}),
    _tool("bad_dup", {"a": {"type": "string", "x-mcp-header": "Region"},
                      "b": {"type": "string", "x-mcp-header": "region"}}),
    _tool("bad_number", {"a": {"type": "number", "x-mcp-header": "Amount"}}),
    _tool("bad_array", {"a": {"type": "array", "x-mcp-header": "List"}}),
    _tool("bad_items", {"a": {"type": "array", "items": {"type": "string", "x-mcp-header": "Item"}}}),
    _tool("bad_oneof", {"a": {"oneOf": [{"type": "string", "x-mcp-header": "One"}]}}),
    _tool("bad_ref", {"a": {"$ref": "#/$defs/h"}},
          **{"$defs": {"h": {"type": "string", "x-mcp-header": "Ref"}}}),
]


def test_x_mcp_headers_are_found_depth_first_in_the_schemas_order():
    found, problem = mcpmini._x_mcp_headers(HEADER_TOOL["inputSchema"] | {"properties": {
        "first": {"type": "object", "properties": {"deep": {"type": "string", "x-mcp-header": "Deep"}}},
        **HEADER_TOOL["inputSchema"]["properties"]}})
    assert problem is None
    assert [name for _, name in found] == ["Deep", "Region", "Count", "Flag", "Method", "Greeting", "Empty",
                                           "Absent", "Nothing", "Inner"]
    assert found[0] == (("first", "deep"), "Deep")


def test_tools_with_invalid_x_mcp_header_are_dropped_with_a_warning(caplog):
    good = _tool("good", {"a": {"type": "string", "x-mcp-header": "Good"},
                          "plain": {"type": "number"}})
    with FakeHTTPServer(MCPFake(tools=[good, *INVALID_TOOLS])) as server:
        async def go():
            async with mcpmini.Client(server.url(), era_cache=False) as client:
                with caplog.at_level(logging.WARNING, logger="mcpmini"):
                    return [t["name"] for t in await client.list_tools()]
        assert run(go()) == ["good"]
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    for tool in INVALID_TOOLS:
        (line,) = [w for w in warnings if repr(tool["name"]) in w]
        assert "x-mcp-header" in line
    assert any("duplicates" in w for w in warnings)
    assert any("'number'" in w for w in warnings)
    assert any("through \"properties\" alone" in w for w in warnings)


def test_invalid_x_mcp_header_tools_are_kept_in_the_legacy_era():
    with FakeHTTPServer(MCPFake(tools=INVALID_TOOLS)) as server:
        async def go():
            async with mcpmini.Client(server.url(), protocol="legacy", era_cache=False) as client:
                return await client.list_tools()
        assert len(run(go())) == len(INVALID_TOOLS)


def test_sse_reply_with_progress_before_the_response_in_split_chunks():
    progress = []

    def call(request, params):
        token = params["_meta"]["progressToken"]
        note = {"jsonrpc": "2.0", "method": "notifications/progress",
                "params": {"progressToken": token, "progress": 1, "total": 2}}
        data = (sse_event(note, eol="\r\n") + b": keep-alive\r\r" +
                sse_event(result(request.json["id"], {"resultType": "complete",
                                                      "content": [{"type": "text", "text": "done"}]}),
                          eol="\r"))
        pieces = [data[i:i + 7] for i in range(0, len(data), 7)]  # split everywhere, \r\n too
        return sse_reply(pieces)

    with FakeHTTPServer(MCPFake(call=call)) as server:
        async def go():
            async with mcpmini.Client(server.url(), era_cache=False, on_progress=progress.append) as client:
                return await client.call_tool("echo", {})
        assert mcpmini.result_text(run(go())) == "done"
    assert progress and progress[0]["progress"] == 1


def test_json_and_sse_replies_both_work():
    for sse in (False, True):
        with FakeHTTPServer(MCPFake(sse=sse)) as server:
            async def go():
                async with mcpmini.Client(server.url(), era_cache=False) as client:
                    return await client.call_tool("echo", {"text": "hi"})
            assert json.loads(mcpmini.result_text(run(go()))) == {"text": "hi"}


def test_a_10_mb_event_on_an_sse_reply():
    big = "x" * (10 << 20)

    def call(request, params):
        message = result(request.json["id"], {"resultType": "complete",
                                              "content": [{"type": "text", "text": big}]})
        return sse_reply([sse_event(message)])

    with FakeHTTPServer(MCPFake(call=call)) as server:
        async def go():
            async with mcpmini.Client(server.url(), era_cache=False) as client:
                return await client.call_tool("echo", {})
        assert len(mcpmini.result_text(run(go()))) == len(big)


def test_an_id_less_error_body_belongs_to_its_post():
    def call(request, params):
        return json_reply(error(None, -32602, "Invalid arguments"), 400)

    with FakeHTTPServer(MCPFake(call=call)) as server:
        async def go():
            async with mcpmini.Client(server.url(), era_cache=False) as client:
                with pytest.raises(mcpmini.RemoteError) as info:
                    await client.call_tool("echo", {})
                return info.value
        exc = run(go())
    assert exc.code == -32602 and "Invalid arguments" in str(exc)


def test_a_404_with_a_jsonrpc_body_is_a_remote_error_not_an_expired_session():
    def call(request, params):
        return json_reply(error(request.json["id"], -32601, "Method not found"), 404)

    with FakeHTTPServer(MCPFake(call=call)) as server:
        async def go():
            async with mcpmini.Client(server.url(), era_cache=False) as client:
                with pytest.raises(mcpmini.RemoteError) as info:
                    await client.call_tool("echo", {})
                return info.value
        assert run(go()).code == -32601


def test_an_error_status_without_jsonrpc_body_names_the_status():
    def call(request, params):
        return Reply(502, b"<html>Bad gateway</html>", content_type="text/html")

    with FakeHTTPServer(MCPFake(call=call)) as server:
        async def go():
            async with mcpmini.Client(server.url(), era_cache=False) as client:
                with pytest.raises(mcpmini.ProtocolError) as info:
                    await client.call_tool("echo", {})
                return info.value
        exc = run(go())
    assert exc.status == 502 and "HTTP 502" in str(exc) and "Bad gateway" in str(exc)


def test_a_reply_that_does_not_answer_the_request_is_a_protocol_error():
    def call(request, params):
        return json_reply(result(9999, {"content": []}))

    with FakeHTTPServer(MCPFake(call=call)) as server:
        async def go():
            async with mcpmini.Client(server.url(), era_cache=False) as client:
                with pytest.raises(mcpmini.ProtocolError, match="did not answer"):
                    await client.call_tool("echo", {}, timeout=10)
        run(go())


def test_header_mismatch_refetches_the_tool_list_and_retries_once():
    calls = []

    def call(request, params):
        calls.append(request)
        if len(calls) == 1:
            return json_reply(error(request.json["id"], -32020, "Header mismatch"), 400)
        return {"resultType": "complete", "content": [{"type": "text", "text": "ok"}]}

    with FakeHTTPServer(MCPFake(call=call)) as server:
        async def go():
            async with mcpmini.Client(server.url(), era_cache=False) as client:
                return await client.call_tool("echo", {})
        assert mcpmini.result_text(run(go())) == "ok"
    assert len(calls) == 2 and len(server.by_method("tools/list")) == 1
    ids = [r.json["id"] for r in calls]
    assert ids[0] != ids[1]


def test_modern_stream_ending_early_fails_at_once_without_resuming():
    def call(request, params):
        return sse_reply([sse_event(data="", id="1", retry=100)])  # a primed stream that ends

    with FakeHTTPServer(MCPFake(call=call)) as server:
        async def go():
            async with mcpmini.Client(server.url(), era_cache=False) as client:
                with pytest.raises(mcpmini.ConnectionClosed, match="ended before its response"):
                    await client.call_tool("echo", {}, timeout=20)
        run(go())
    assert [r.method for r in server.requests].count("GET") == 0


def trickle(request, params):
    """An SSE reply that sends only keep-alive comments, for a long time."""
    return sse_reply([b": keep-alive\n\n", 0.05] * 400)


def test_timeout_closes_the_connection_and_sends_no_cancellation():
    with FakeHTTPServer(MCPFake(call=trickle)) as server:
        async def go():
            async with mcpmini.Client(server.url(), era_cache=False) as client:
                with pytest.raises(mcpmini.RequestTimeout):
                    await client.call_tool("echo", {}, timeout=0.5)
                # the server notices the closed connection while the client is still open
                await asyncio.get_running_loop().run_in_executor(None, server.disconnected.wait, 10)
        run(go())
        assert server.disconnected.is_set()
    assert server.by_method("notifications/cancelled") == []


def test_caller_cancellation_closes_the_connection():
    with FakeHTTPServer(MCPFake(call=trickle)) as server:
        async def go():
            async with mcpmini.Client(server.url(), era_cache=False) as client:
                task = asyncio.ensure_future(client.call_tool("echo", {}, timeout=60))
                while not server.by_method("tools/call"):
                    await asyncio.sleep(0.02)
                task.cancel()
                with pytest.raises(asyncio.CancelledError):
                    await task
                start = time.monotonic()
                await asyncio.get_running_loop().run_in_executor(None, server.disconnected.wait, 10)
                return time.monotonic() - start
        run(go())
        assert server.disconnected.is_set()
    assert server.by_method("notifications/cancelled") == []


def test_the_reader_does_not_outlive_a_request_never_cancelled_on_the_wire():
    """The session owns the deadline; when it gives up on a request that is not cancellable
    (initialize, the era probe), the transport still closes that request's stream."""
    with FakeHTTPServer(lambda request: trickle(request, {})) as server:
        async def go():
            transport = mcpmini._StreamableHTTPTransport(server.url(), label="t")
            session = mcpmini._Session(transport, label="t")
            await session.open()
            with pytest.raises(mcpmini.RequestTimeout):
                await session.request("slow/thing", {}, timeout=0.3, cancellable=False)
            await asyncio.get_running_loop().run_in_executor(None, server.disconnected.wait, 10)
            assert not transport._flights
            await session.close()
        run(go())
        assert server.disconnected.is_set()
