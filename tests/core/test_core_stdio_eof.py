"""A stdio server whose output has ended cannot answer: a request made then is not written to
it (it fails as never sent, so a reconnect may send it again) — even while the process is still
alive, before its exit is known."""
from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest

import mcpmini
from harness import run

SERVER = r"""
import json, os, sys, time
record = open(sys.argv[1], "a")
for line in sys.stdin:
    record.write(line); record.flush()
    message = json.loads(line)
    if message.get("method") == "initialize":
        result = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                  "serverInfo": {"name": "eof", "version": "1"}}
    elif message.get("method") == "tools/list":
        result = {"tools": []}
    else:
        continue
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}) + "\n")
    sys.stdout.flush()
    if message.get("method") == "tools/list":
        os.close(1)   # the output ends; the process lives on and reads its input
"""


def test_a_request_after_the_output_ended_is_never_written(tmp_path: Path) -> None:
    record = tmp_path / "received.jsonl"

    async def scenario() -> None:
        async with mcpmini.Client([sys.executable, "-c", SERVER, str(record)], protocol="legacy",
                                  era_cache=False, timeout=10) as client:
            await client.list_tools()
            await asyncio.sleep(0.05)   # the end of its output has been read
            with pytest.raises(mcpmini.ConnectionClosed):
                await client.request("ping")
    run(scenario())
    methods = [json.loads(line).get("method") for line in record.read_text().splitlines()]
    assert methods[-1] == "tools/list" and "ping" not in methods
