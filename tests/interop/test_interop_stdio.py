"""mcpmini.Client over stdio against real servers: server-everything (legacy only), the official
Python SDK server and the TS SDK v2 server (both dual era), and FastMCP."""

from __future__ import annotations

from typing import Any

import pytest

import mcpmini
from interop_checks import CLIENT_TIMEOUT, FORECAST, MODERN, check_weather, names, weather_session

# -- server-everything: legacy only ------------------------------------------------------------------
def test_everything_stdio_is_legacy_and_serves_everything(everything_cmd: list[str], run) -> None:
    async def go() -> dict[str, Any]:
        async with mcpmini.Client(everything_cmd, timeout=CLIENT_TIMEOUT) as client:
            tools = await client.list_tools()
            echo = await client.call_tool("echo", {"message": "hello from mcpmini"})
            total = await client.call_tool("get-sum", {"a": 2, "b": 40})
            resources = await client.list_resources()
            first = sorted(r["uri"] for r in resources)[0]
            read = await client.read_resource(first)
            prompts = await client.list_prompts()
            simple = await client.get_prompt("simple-prompt")
            args = await client.get_prompt("args-prompt", {"city": "Paris", "state": "Texas"})
            return {"era": client.era, "version": client.protocol_version, "reason": client.era_reason,
                    "info": client.server_info, "tools": tools, "echo": echo, "sum": total,
                    "resources": resources, "first": first, "read": read, "prompts": prompts,
                    "simple": simple, "args": args}

    got = run(go())
    assert got["era"] == "legacy"
    assert got["version"] == "2025-11-25"   # it counter-offers this to any newer request
    assert "-32601" in got["reason"]        # server/discover: method not found
    assert "everything" in got["info"]["name"]
    assert {"echo", "get-sum", "get-tiny-image", "trigger-long-running-operation"} <= names(got["tools"])
    assert mcpmini.result_text(got["echo"]) == "Echo: hello from mcpmini"
    assert mcpmini.result_text(got["sum"]) == "The sum of 2 and 40 is 42."
    assert got["first"].startswith("demo://resource/static/document/")
    assert len(got["resources"]) >= 7
    assert got["read"]["contents"][0]["uri"] == got["first"]
    assert got["read"]["contents"][0]["text"].strip()
    assert {"simple-prompt", "args-prompt", "resource-prompt"} <= names(got["prompts"])
    assert got["simple"]["messages"][0]["content"]["text"] == "This is a simple prompt without arguments."
    assert got["args"]["messages"][0]["content"]["text"] == "What's weather in Paris, Texas?"


def test_everything_stdio_tool_errors_are_results(everything_cmd: list[str], run) -> None:
    """An unknown tool comes back from server-everything as an isError result: data, not an
    exception."""
    async def go() -> dict:
        async with mcpmini.Client(everything_cmd, timeout=CLIENT_TIMEOUT) as client:
            return await client.call_tool("no-such-tool", {})

    result = run(go())
    assert result.get("isError") is True
    assert "no-such-tool" in mcpmini.result_text(result)


def test_everything_stdio_pinned_legacy_skips_the_probe(everything_cmd: list[str], run) -> None:
    async def go() -> tuple:
        async with mcpmini.Client(everything_cmd, timeout=CLIENT_TIMEOUT, protocol="legacy") as client:
            echo = await client.call_tool("echo", {"message": "pinned"})
            return client.era, client.era_reason, mcpmini.result_text(echo)

    era, reason, text = run(go())
    assert era == "legacy"
    assert "pinned" in reason
    assert text == "Echo: pinned"


def test_everything_stdio_progress_reaches_the_callback(everything_cmd: list[str], run) -> None:
    """call_tool sends a progressToken; the server's notifications/progress reach on_progress."""
    seen: list[dict] = []

    async def go() -> dict:
        async with mcpmini.Client(everything_cmd, timeout=CLIENT_TIMEOUT, on_progress=seen.append) as client:
            return await client.call_tool("trigger-long-running-operation", {"duration": 0.3, "steps": 3})

    result = run(go())
    assert mcpmini.result_text(result) == "Long running operation completed. Duration: 0.3 seconds, Steps: 3."
    assert [(p["progress"], p["total"]) for p in seen] == [(1, 3), (2, 3), (3, 3)]


# -- official Python SDK server (mcp 2.3.0): dual era --------------------------------------------------
def test_py_stdio_auto_is_modern(py_cmd: list[str], run) -> None:
    got = run(weather_session(py_cmd))
    assert got["era"] == MODERN
    assert got["version"] == MODERN
    check_weather(got, "py-weather")
    # The Python SDK adds structured output next to the text.
    assert got["forecast"]["structuredContent"] == {"result": FORECAST}


def test_py_stdio_pinned_legacy(py_cmd: list[str], run) -> None:
    got = run(weather_session(py_cmd, protocol="legacy"))
    assert got["era"] == "legacy"
    assert got["version"] == "2025-11-25"
    check_weather(got, "py-weather")


def test_py_stdio_pinned_modern(py_cmd: list[str], run) -> None:
    got = run(weather_session(py_cmd, protocol=MODERN))
    assert got["era"] == MODERN
    check_weather(got, "py-weather")


def test_py_stdio_era_is_remembered(py_cmd: list[str], run) -> None:
    """The second connection reuses the era found by the first (per-server era cache)."""
    async def era_of() -> tuple:
        async with mcpmini.Client(py_cmd, timeout=CLIENT_TIMEOUT) as client:
            text = mcpmini.result_text(await client.call_tool("get_forecast", {"city": "Paris"}))
            return client.era, client.era_reason, text

    first, second = run(era_of()), run(era_of())
    assert first[0] == second[0] == MODERN
    assert first[2] == second[2] == FORECAST
    assert "remembered" not in first[1]
    assert "remembered" in second[1]


def test_py_stdio_concurrent_calls(py_cmd: list[str], run) -> None:
    """Many calls in flight on one connection each get their own answer."""
    import asyncio

    async def go() -> list[str]:
        async with mcpmini.Client(py_cmd, timeout=CLIENT_TIMEOUT) as client:
            results = await asyncio.gather(*(client.call_tool("add", {"a": i, "b": 1000})
                                             for i in range(50)))
            return [mcpmini.result_text(r) for r in results]

    assert run(go()) == [str(i + 1000) for i in range(50)]


# -- TS SDK v2 server: dual era ------------------------------------------------------------------------
def test_ts_v2_stdio_auto_is_modern(ts_cmd: list[str], run) -> None:
    got = run(weather_session(ts_cmd))
    assert got["era"] == MODERN
    assert "server/discover answered" in got["reason"]
    check_weather(got, "ts-weather")   # serverInfo only in result _meta on this server


def test_ts_v2_stdio_pinned_legacy(ts_cmd: list[str], run) -> None:
    got = run(weather_session(ts_cmd, protocol="legacy"))
    assert got["era"] == "legacy"
    check_weather(got, "ts-weather")


# -- FastMCP 4 -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("protocol, era", [("auto", MODERN), ("legacy", "legacy")])
def test_fastmcp_stdio(fastmcp_cmd: list[str], run, protocol: str, era: str) -> None:
    got = run(weather_session(fastmcp_cmd, protocol=protocol))
    assert got["era"] == era
    check_weather(got, "fastmcp-weather")
