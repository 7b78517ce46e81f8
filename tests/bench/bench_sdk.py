#!/usr/bin/env python3
"""The official Python SDK's side of the benchmark (`mcp` 2.x, `mcp.Client`), run with the
interpreter of the benchmark venv:

    python bench_sdk.py MODE ERA N TARGET...

Same command line and output as floor.py (see there). MODE ``oneshot`` is the SDK's one-shot
script: connect (ERA auto or legacy), list tools, call one, exit. A failure prints the exception on
stderr and exits 1 (bench.py records it: the SDK fails on a 10 MB SSE event).
"""

from __future__ import annotations

import asyncio
import json
import resource
import sys
import time

from mcp import Client, StdioServerParameters

MODE = {"modern": "2026-07-28", "legacy": "legacy", "auto": "auto"}


def text_of(result) -> str:  # noqa: ANN001 - a CallToolResult
    if result.is_error:
        raise SystemExit(f"bench_sdk: the tool failed: {result.content}")
    return result.content[0].text


def cpu_seconds() -> float:
    """User + system CPU of this process (all threads): the client's own work, whatever the load."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def run(mode: str, era: str, n: int, target: list[str]) -> tuple[float, float]:
    if mode.startswith("http-"):
        server: StdioServerParameters | str = target[0]
    else:
        server = StdioServerParameters(command=target[0], args=target[1:])
    if mode == "oneshot":
        async with Client(server, mode=MODE[era]) as client:
            assert any(t.name == "echo" for t in (await client.list_tools()).tools)
            assert text_of(await client.call_tool("echo", {"text": "hi"})) == "hi"
        return 0.0, 0.0
    async with Client(server, mode=MODE[era]) as client:
        await client.list_tools()  # untimed: a modern HTTP call wants the tool listed first
        start, cpu_start = time.perf_counter(), cpu_seconds()
        if mode in ("seq", "http-seq"):
            for i in range(n):
                text = f"m{i}"
                assert text_of(await client.call_tool("echo", {"text": text})) == text
        elif mode == "conc":
            results = await asyncio.gather(*(client.call_tool("echo", {"text": f"m{i}"}) for i in range(n)))
            assert [text_of(r) for r in results] == [f"m{i}" for i in range(n)]
        elif mode in ("big", "http-big"):
            assert len(text_of(await client.call_tool("big", {"n": n}))) == n
        else:
            raise SystemExit(f"bench_sdk: unknown mode {mode}")
        return time.perf_counter() - start, cpu_seconds() - cpu_start


def main(argv: list[str]) -> int:
    mode, era, n, target = argv[0], argv[1], int(argv[2]), argv[3:]
    elapsed, cpu = asyncio.run(run(mode, era, n, target))
    maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"elapsed": elapsed, "cpu": cpu, "maxrss_kb": maxrss}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
