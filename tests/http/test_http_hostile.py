"""Issue 12 over HTTP: era detection on the answers real servers give to the probe, a pinned
legacy era that reaches HTTP+SSE, exactly-once calls, and SSE reconnection storms."""
from __future__ import annotations

import json
import os
import time

import pytest

from http_fakes import (FakeHTTPServer, MCPFake, Reply, SSEFake, error, json_reply,
                        sse_event, sse_reply)
import mcpmini
from harness import run


class LegacyBehind(MCPFake):
    """A legacy-only server whose answer to the server/discover probe is ``probe`` (a Reply);
    like the Python SDK 1.x, FastMCP 2.x and TS SDK 1.x servers."""

    def __init__(self, probe: Reply, **options) -> None:
        super().__init__(modern=False, **options)
        self.probe = probe

    def __call__(self, request):
        if request.rpc_method == "server/discover":
            return self.probe
        return super().__call__(request)


SDK1_STATEFUL = json_reply({"jsonrpc": "2.0", "id": "server-error",
                            "error": {"code": -32600, "message": "Bad Request: Missing session ID"}}, 400)
SDK1_STATELESS = json_reply({"jsonrpc": "2.0", "id": "server-error", "error": {
    "code": -32600, "message": "Bad Request: Unsupported protocol version: 2026-07-28"}}, 400)
TS1_STATEFUL = json_reply(error(None, -32000, "Bad Request: No valid session ID provided"), 400)


@pytest.mark.parametrize("probe", [
    SDK1_STATEFUL, SDK1_STATELESS, TS1_STATEFUL,
    Reply(405, headers={"Allow": "GET"}), Reply(406, b"Not Acceptable"),
    Reply(415, b"Unsupported Media Type"), Reply(404, b"<html>nope</html>", content_type="text/html"),
    Reply(200, b"<!doctype html><title>a web page</title>", content_type="text/html"),
], ids=["sdk1-stateful", "sdk1-stateless", "ts1-stateful", "405", "406", "415", "404-html", "200-html"])
def test_a_probe_answered_without_modern_evidence_means_legacy(probe):
    with FakeHTTPServer(LegacyBehind(probe)) as server:
        async def go():
            async with mcpmini.Client(server.url(), era_cache=False) as client:
                await client.call_tool("echo", {"text": "x"})
                return client.era, client.era_reason
        era, why = run(go())
    assert era == "legacy" and "initialize 2025-11-25" in why
    assert [r.rpc_method for r in server.requests[:2]] == ["server/discover", "initialize"]


@pytest.mark.parametrize("refusal", [Reply(405), Reply(404, b"Cannot POST /sse", content_type="text/html")])
def test_a_pinned_legacy_era_falls_back_to_http_sse_as_auto_does(refusal):
    fake = SSEFake()

    def handler(request):
        if request.method == "POST" and request.path == "/sse":
            return refusal     # an HTTP+SSE server does not take POSTs on its stream URL
        return fake(request)
    with FakeHTTPServer(handler) as server:
        async def go():
            async with mcpmini.Client(server.url("/sse"), protocol="legacy") as client:
                text = mcpmini.result_text(await client.call_tool("echo", {"text": "sse"}))
                return client.transport, text
        try:
            assert run(go()) == ("sse", json.dumps({"text": "sse"}, sort_keys=True))
        finally:
            fake.close_stream.set()
    [entry] = os.scandir(mcpmini._user_dir("cache") + "/eras")
    with open(entry.path) as f:
        assert json.load(f) == "sse"   # a pinned run records what it learned


def test_no_endpoint_anywhere_names_the_likely_path():
    with FakeHTTPServer(lambda request: Reply(404, b"<html>not found</html>", content_type="text/html")) as server:
        async def go():
            async with mcpmini.Client(server.url("/"), era_cache=False):
                pass
        with pytest.raises(mcpmini.ConnectionClosed) as info:
            run(go())
    message = str(info.value)
    assert message.startswith(f"no MCP endpoint at {server.url('/')} (HTTP 404)")
    assert f"try {server.url('/mcp')}" in message


class CountingServer(MCPFake):
    """Runs every tools/call (counted), then closes the connection before answering the
    second one: the client cannot know whether it ran."""

    def __init__(self, **options) -> None:
        super().__init__(call=self._call, **options)
        self.runs = 0

    def _call(self, request, params):
        self.runs += 1
        if self.runs == 2:
            return None
        return {"content": [{"type": "text", "text": "ran"}]}


@pytest.mark.parametrize("protocol", ["2026-07-28", "legacy"])
def test_a_call_whose_connection_broke_after_the_body_is_never_sent_again(protocol):
    counting = CountingServer(modern=protocol != "legacy")
    with FakeHTTPServer(counting) as server:
        async def go():
            async with mcpmini.Client(server.url(), protocol=protocol, era_cache=False,
                                      reconnect=True) as client:
                await client.call_tool("echo", {})            # warms the keep-alive connection
                with pytest.raises(mcpmini.ConnectionClosed, match="may or may not have run"):
                    await client.call_tool("echo", {})
                return await client.call_tool("echo", {})     # the next call works
        assert mcpmini.result_text(run(go())) == "ran"
    assert counting.runs == 3   # the broken call ran once, and was not sent again


def test_the_cli_says_a_call_may_have_run_and_exits_3(capsys):
    counting = CountingServer()
    counting.runs = 1          # the first call of this run is the one that breaks
    with FakeHTTPServer(counting) as server:
        code = mcpmini.main(["call", server.url(), "echo"])
    err = capsys.readouterr().err
    assert code == 3 and "may or may not have run" in err and counting.runs == 2


class Storm(MCPFake):
    """Legacy SSE replies that end at once, after a priming event with ``retry: 0`` (and a new
    id each time): a client that follows blindly reconnects forever."""

    def __init__(self) -> None:
        super().__init__(call=self._call)
        self.gets: list[float] = []
        self.counter = 0

    def _event(self) -> bytes:
        self.counter += 1
        return sse_event(data="", id=f"ev-{self.counter}", retry=0)

    def _call(self, request, params):
        return sse_reply([self._event()])

    def on_get(self, request):
        if request.headers.get("Last-Event-ID") is None:
            return Reply(405)
        self.gets.append(time.monotonic())
        return sse_reply([self._event()])


def test_an_sse_reconnection_storm_is_clamped_backed_off_and_bounded():
    storm = Storm()
    with FakeHTTPServer(storm) as server:
        async def go():
            async with mcpmini.Client(server.url(), protocol="legacy", era_cache=False) as client:
                started = time.monotonic()
                with pytest.raises(mcpmini.ConnectionClosed, match="kept ending without a message"):
                    await client.call_tool("echo", {}, timeout=30)
                return time.monotonic() - started
        run(go(), timeout=40)
    assert len(storm.gets) == 3                     # at most 3 reconnects in a row without news
    gaps = [b - a for a, b in zip(storm.gets, storm.gets[1:])]
    assert all(gap >= 0.5 for gap in gaps)          # retry: 0 is raised, and backed off
    assert gaps[1] > gaps[0]
