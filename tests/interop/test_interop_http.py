"""mcpmini.Client over HTTP against real servers: server-everything (Streamable HTTP and the
2024-11-05 HTTP+SSE transport, legacy only), the official Python SDK server in every Streamable
HTTP mode (both eras on one endpoint) and on HTTP+SSE, and FastMCP."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import mcpmini
from interop_checks import CLIENT_TIMEOUT, MODERN, check_weather, names, weather_session

PY_MODES = [pytest.param(stateless, json_response, id=f"{'stateless' if stateless else 'stateful'}-"
                         f"{'json' if json_response else 'sse'}")
            for stateless in (False, True) for json_response in (False, True)]


async def everything_session(server: str | mcpmini.ServerConfig, message: str) -> dict[str, Any]:
    async with mcpmini.Client(server, timeout=CLIENT_TIMEOUT) as client:
        tools = await client.list_tools()
        echo = await client.call_tool("echo", {"message": message})
        resources = await client.list_resources()
        first = sorted(r["uri"] for r in resources)[0]
        read = await client.read_resource(first)
        prompts = await client.list_prompts()
        prompt = await client.get_prompt("args-prompt", {"city": "Lima"})
        return {"era": client.era, "version": client.protocol_version, "reason": client.era_reason,
                "tools": tools, "echo": echo, "first": first, "read": read, "prompts": prompts,
                "prompt": prompt}


def check_everything(got: dict[str, Any], message: str) -> None:
    assert got["era"] == "legacy"
    assert {"echo", "get-sum"} <= names(got["tools"])
    assert mcpmini.result_text(got["echo"]) == f"Echo: {message}"
    assert got["first"].startswith("demo://resource/static/document/")
    assert got["read"]["contents"][0]["text"].strip()
    assert {"simple-prompt", "args-prompt"} <= names(got["prompts"])
    assert got["prompt"]["messages"][0]["content"]["text"] == "What's weather in Lima?"


# -- server-everything ----------------------------------------------------------------------------------
def test_everything_streamable_http_is_legacy(http_peer, run) -> None:
    """Legacy Streamable HTTP: discover gets HTTP 400 -32000, then initialize; every POST reply
    is SSE (with an empty priming event) and the session id must come back on each request."""
    peer = http_peer("everything_http", "streamableHttp")
    got = run(everything_session(peer.url, "over streamable http"))
    check_everything(got, "over streamable http")
    assert got["version"] == "2025-11-25"
    assert "HTTP+SSE" not in got["reason"]


def test_everything_streamable_http_parallel_sessions(http_peer, run) -> None:
    """Two clients at once get two sessions that do not mix up their answers."""
    peer = http_peer("everything_http", "streamableHttp")

    async def both() -> list[dict[str, Any]]:
        return await asyncio.gather(everything_session(peer.url, "first"),
                                    everything_session(peer.url, "second"))

    first, second = run(both())
    check_everything(first, "first")
    check_everything(second, "second")


def test_everything_streamable_http_progress(http_peer, run) -> None:
    """Progress notifications arrive on the POST's SSE stream before the result."""
    peer = http_peer("everything_http", "streamableHttp")
    seen: list[dict] = []

    async def go() -> dict:
        async with mcpmini.Client(peer.url, timeout=CLIENT_TIMEOUT, on_progress=seen.append) as client:
            return await client.call_tool("trigger-long-running-operation", {"duration": 0.3, "steps": 3})

    result = run(go())
    assert mcpmini.result_text(result).startswith("Long running operation completed.")
    assert [p["progress"] for p in seen] == [1, 2, 3]


def test_everything_sse_transport_by_url(http_peer, run) -> None:
    """A plain URL of an HTTP+SSE server: the Streamable HTTP attempts fail, the client falls
    back to GET + `endpoint` event."""
    peer = http_peer("everything_http", "sse")
    got = run(everything_session(peer.url, "over sse"))
    check_everything(got, "over sse")
    assert "HTTP+SSE" in got["reason"]


def test_everything_sse_transport_by_config(http_peer, run) -> None:
    peer = http_peer("everything_http", "sse")
    config = mcpmini.ServerConfig(name="everything-sse", url=peer.url, type="sse")
    got = run(everything_session(config, "configured sse"))
    check_everything(got, "configured sse")
    assert "HTTP+SSE" in got["reason"]


# -- official Python SDK server (mcp 2.3.0) ---------------------------------------------------------------
@pytest.mark.parametrize("stateless, json_response", PY_MODES)
def test_py_http_auto_is_modern(http_peer, run, stateless: bool, json_response: bool) -> None:
    peer = http_peer("py_server_http", stateless, json_response)
    got = run(weather_session(peer.url))
    assert got["era"] == MODERN
    assert got["version"] == MODERN
    check_weather(got, "py-weather")


@pytest.mark.parametrize("stateless, json_response", PY_MODES)
def test_py_http_pinned_legacy(http_peer, run, stateless: bool, json_response: bool) -> None:
    peer = http_peer("py_server_http", stateless, json_response)
    got = run(weather_session(peer.url, protocol="legacy"))
    assert got["era"] == "legacy"
    assert got["version"] == "2025-11-25"
    check_weather(got, "py-weather")


def test_py_http_config_pins_legacy(http_peer, run) -> None:
    """`protocol` from a ServerConfig pins the era as the keyword does."""
    peer = http_peer("py_server_http", False, False)
    config = mcpmini.ServerConfig(name="py", url=peer.url, type="http", protocol="legacy")
    got = run(weather_session(config))
    assert got["era"] == "legacy"
    check_weather(got, "py-weather")


def test_py_sse_transport_by_config(http_peer, run) -> None:
    peer = http_peer("py_server_sse")
    config = mcpmini.ServerConfig(name="py-sse", url=peer.url, type="sse")
    got = run(weather_session(config))
    assert got["era"] == "legacy"
    assert "HTTP+SSE" in got["reason"]
    check_weather(got, "py-weather")


def test_py_sse_transport_by_url(http_peer, run) -> None:
    peer = http_peer("py_server_sse")
    got = run(weather_session(peer.url))
    assert got["era"] == "legacy"
    assert "HTTP+SSE" in got["reason"]   # POST /sse got 405, then GET found the endpoint event
    check_weather(got, "py-weather")


# -- FastMCP 4 ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("protocol, era", [("auto", MODERN), ("legacy", "legacy")])
def test_fastmcp_http(http_peer, run, protocol: str, era: str) -> None:
    peer = http_peer("fastmcp_server_http")
    got = run(weather_session(peer.url, protocol=protocol))
    assert got["era"] == era
    check_weather(got, "fastmcp-weather")


# -- several requests and connections ----------------------------------------------------------------------
@pytest.mark.parametrize("protocol", ["auto", "legacy"])
def test_py_http_concurrent_calls(http_peer, run, protocol: str) -> None:
    """Calls in flight together on one connection each get their own answer (modern: one POST
    each; legacy: SSE replies on one session)."""
    peer = http_peer("py_server_http", False, False)

    async def go() -> list[str]:
        async with mcpmini.Client(peer.url, timeout=CLIENT_TIMEOUT, protocol=protocol) as client:
            results = await asyncio.gather(*(client.call_tool("add", {"a": i, "b": 100})
                                             for i in range(20)))
            return [mcpmini.result_text(r) for r in results]

    assert run(go()) == [str(i + 100) for i in range(20)]


def test_py_sse_remembered_transport(http_peer, run) -> None:
    """The second connection to an HTTP+SSE URL goes straight to SSE (era cache), and works."""
    peer = http_peer("py_server_sse")
    first = run(weather_session(peer.url))
    second = run(weather_session(peer.url))
    check_weather(first, "py-weather")
    check_weather(second, "py-weather")
    assert "405" in first["reason"]
    assert "405" not in second["reason"]   # no Streamable HTTP attempt this time
