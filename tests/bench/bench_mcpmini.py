#!/usr/bin/env python3
"""mcpmini's side of the benchmark: the library used the way a user would.

    python bench_mcpmini.py MODE ERA N TARGET...

Same command line and output as floor.py (see there). MODE ``oneshot`` is also the "library
script" of the one-shot rows: connect (ERA auto or legacy), list tools, call one, exit. ``http-available``
prints whether this mcpmini has its HTTP transport.
"""

from __future__ import annotations

import asyncio
import json
import os
import resource
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)
import mcpmini  # noqa: E402


def load_http() -> bool:
    """True when this build of mcpmini has its Streamable HTTP transport."""
    return hasattr(mcpmini, "_StreamableHTTPTransport")


PROTOCOL = {"modern": mcpmini.MODERN_VERSION, "legacy": "legacy", "auto": "auto"}


def text_of(result: dict) -> str:
    return result["content"][0]["text"]


def cpu_seconds() -> float:
    """User + system CPU of this process (all threads): the client's own work, whatever the load."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def run(mode: str, era: str, n: int, target: list[str]) -> tuple[float, float]:
    server: list[str] | str = target[0] if mode.startswith("http-") else target
    if mode == "oneshot":  # a user's script: connect (era remembered), list tools, call one
        async with mcpmini.Client(server, protocol=PROTOCOL[era]) as client:
            assert any(t["name"] == "echo" for t in await client.list_tools())
            assert text_of(await client.call_tool("echo", {"text": "hi"})) == "hi"
        return 0.0, 0.0
    # http-forecast-sse: the example answers with SSE when the Accept header prefers it
    headers = {"Accept": "text/event-stream, application/json"} if mode.endswith("-sse") else None
    async with mcpmini.Client(server, protocol=PROTOCOL[era], era_cache=False, headers=headers) as client:
        await client.list_tools()  # untimed, like the SDK's side (it wants a listing first)
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
        elif mode in ("http-forecast", "http-forecast-sse"):  # examples/weather_http_server.py
            for _ in range(n):
                assert "Hangzhou" in text_of(await client.call_tool("get_forecast", {"city": "Hangzhou"}))
        else:
            raise SystemExit(f"bench_mcpmini: unknown mode {mode}")
        return time.perf_counter() - start, cpu_seconds() - cpu_start


def main(argv: list[str]) -> int:
    if argv[0] == "http-available":
        print(json.dumps({"http": load_http()}))
        return 0
    mode, era, n, target = argv[0], argv[1], int(argv[2]), argv[3:]
    if mode.startswith("http-") and not load_http():
        raise SystemExit("bench_mcpmini: this mcpmini has no HTTP transport")
    elapsed, cpu = asyncio.run(run(mode, era, n, target))
    maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"elapsed": elapsed, "cpu": cpu, "maxrss_kb": maxrss}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
