"""Issue 24 item 7 (decisions 3 and 34): a standalone GET stream that sends ``retry: 0``, then the
same event (same id) and closes, every time it is opened. An event whose id was already seen is
nothing new: at most 3 quiet reconnects follow the first stream, then the stream is not reopened
for that session, and no request fails."""
from __future__ import annotations

import asyncio
import logging
import time

import mcpmini
from harness import run
from http_fakes import FakeHTTPServer, MCPFake, sse_event, sse_reply

LOG = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "again"}}


class Replaying(MCPFake):
    def __init__(self, same_id: bool = True) -> None:
        super().__init__(modern=False, call=self._call)
        self.gets: list[float] = []
        self.same_id = same_id

    def _call(self, request, params):
        time.sleep(float((params.get("arguments") or {}).get("seconds", 0)))
        return {"content": [{"type": "text", "text": "done"}]}

    def on_get(self, request):
        self.gets.append(time.monotonic())
        event_id = "ev-1" if self.same_id else f"ev-{len(self.gets)}"
        return sse_reply([sse_event(data="", retry=0), sse_event(LOG, id=event_id)], close=True)


def session(fake, done, caplog):
    """A 3 s call, then wait (bounded) until ``done()``; the call's text, the logs, the GETs."""
    logs = []
    with FakeHTTPServer(fake) as server:
        async def go():
            async with mcpmini.Client(server.url(), protocol="legacy", era_cache=False,
                                      on_log=logs.append) as client:
                text = mcpmini.result_text(await client.call_tool("echo", {"seconds": 3}, timeout=30))
                for _ in range(300):
                    if done():
                        break
                    await asyncio.sleep(0.05)
                return text
        with caplog.at_level(logging.INFO, logger="mcpmini"):
            text = run(go(), timeout=60)
    return text, logs, [r for r in server.requests if r.method == "GET"]


def test_a_replayed_event_is_nothing_new_and_the_stream_is_given_up(caplog):
    fake = Replaying()
    text, logs, gets = session(fake, lambda: "not reopened" in caplog.text, caplog)
    assert text == "done"                                  # no request failed
    assert "the GET stream kept ending without a new message; not reopened" in caplog.text
    assert len(gets) == 4                                  # the first stream, then 3 quiet reconnects
    assert [g.headers.get("Last-Event-ID") for g in gets] == [None, "ev-1", "ev-1", "ev-1"]
    gaps = [b - a for a, b in zip(fake.gets, fake.gets[1:])]
    assert all(gap >= 0.5 for gap in gaps)                 # retry: 0 is raised, and backed off
    assert logs and logs[0]["data"] == "again"


def test_a_stream_that_brings_new_events_is_reopened_on(caplog):
    # a new id each time is news: still reopened after the 3 s call (backed off, never given up)
    fake = Replaying(same_id=False)
    text, logs, gets = session(fake, lambda: len(fake.gets) >= 6, caplog)
    assert text == "done" and "not reopened" not in caplog.text
    assert len(gets) >= 6 and len(logs) >= 5
