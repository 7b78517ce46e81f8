"""A stdio server whose output has ended cannot answer: a request made then is not written to
it (it fails as never sent, so a reconnect may send it again) — even while the process is still
alive, before its exit is known."""
from __future__ import annotations

import asyncio

import pytest

import mcpmini
from harness import run


def test_a_request_after_the_output_ended_is_never_written(fake) -> None:
    server = fake("legacy", end_output_after="tools/list")   # then lives on and reads its input

    async def scenario() -> None:
        async with server.client(protocol="legacy", era_cache=False, timeout=10) as client:
            await client.list_tools()
            await asyncio.sleep(0.05)   # the end of its output has been read
            with pytest.raises(mcpmini.ConnectionClosed):
                await client.request("ping")
    run(scenario())
    methods = server.methods()
    assert methods[-1] == "tools/list" and "ping" not in methods
