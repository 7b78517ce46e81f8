"""mcpmini in auto mode against servers built on the older SDK generations that most deployed
servers still run, all legacy only: the Python SDK 1.x (`mcp` 1.30, `mcp.server.fastmcp.FastMCP`),
FastMCP 2.14 (on `mcp` 1.30) and the TS SDK 1.32 (`McpServer`). Each over stdio, Streamable HTTP
(stateful/stateless x SSE/JSON replies) and HTTP+SSE, through the library and the CLI; pinned
legacy on HTTP+SSE; and a TS server with tools only (no resources or prompts capability)."""

from __future__ import annotations

import json
import shlex
from typing import Any

import pytest

import mcpmini
from interop_checks import CLIENT_TIMEOUT, check_weather, names, weather_session

LEGACY_VERSION = "2025-11-25"

# name -> (interop_peers prefix, serverInfo.name, the stdio error to server/discover)
SERVERS = {
    "py1": ("py1_server", "py1-weather", "-32602"),
    "fastmcp2": ("fastmcp2_server", "fastmcp2-weather", "-32602"),
    "ts1": ("ts1_server", "ts1-weather", "-32601"),
}
MODES = [pytest.param(stateless, json_response, id=f"{'stateless' if stateless else 'stateful'}-"
                      f"{'json' if json_response else 'sse'}")
         for stateless in (False, True) for json_response in (False, True)]


@pytest.fixture
def stdio_cmd(request: pytest.FixtureRequest) -> Any:
    """`stdio_cmd(name)`: the stdio argv of SERVERS[name] (skips when the peer is missing)."""
    return lambda name: request.getfixturevalue(f"{name}_cmd")


def check_older_weather(got: dict[str, Any], server_name: str) -> None:
    """What every older-SDK weather server gives besides: the legacy era whatever the transport,
    and get_forecast's optional ``days``."""
    check_weather(got, server_name)
    assert got["era"] == "legacy", got["reason"]
    assert got["version"] == LEGACY_VERSION
    schema = next(t for t in got["tools"] if t["name"] == "get_forecast")["inputSchema"]
    assert "days" in schema["properties"] and "days" not in schema.get("required", [])
    assert mcpmini.result_text(got["three"]) == "Forecast for Paris, 3 days: sunny, 22°C"


# -- stdio --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("server", list(SERVERS))
def test_stdio_auto_is_legacy(stdio_cmd, run, monkeypatch, server: str) -> None:
    """server/discover gets an error (-32602 from the Python SDK 1.x, -32601 from the TS SDK 1.x),
    then initialize on the same process. (A longer probe wait: on a busy machine FastMCP 2 takes
    over PROBE_TIMEOUT to start, and the era then comes from the timeout, not from the error.)"""
    monkeypatch.setattr(mcpmini, "PROBE_TIMEOUT", 30.0)
    _, server_name, code = SERVERS[server]
    got = run(weather_session(stdio_cmd(server), days=True))
    check_older_weather(got, server_name)
    assert code in got["reason"]


# -- Streamable HTTP ----------------------------------------------------------------------------------
@pytest.mark.parametrize("stateless, json_response", MODES)
@pytest.mark.parametrize("server", list(SERVERS))
def test_streamable_http_auto_is_legacy(http_peer, run, server: str, stateless: bool,
                                        json_response: bool) -> None:
    """server/discover is refused with HTTP 400 (a -32600/-32000 body, id null or "server-error"),
    then initialize on the same URL: no fall back to HTTP+SSE."""
    prefix, server_name, _ = SERVERS[server]
    peer = http_peer(f"{prefix}_http", stateless, json_response)
    got = run(weather_session(peer.url, days=True))
    check_older_weather(got, server_name)
    assert "HTTP+SSE" not in got["reason"]


@pytest.mark.parametrize("stateless, json_response", MODES)
@pytest.mark.parametrize("server", list(SERVERS))
def test_streamable_http_pinned_legacy(http_peer, run, server: str, stateless: bool,
                                       json_response: bool) -> None:
    prefix, server_name, _ = SERVERS[server]
    peer = http_peer(f"{prefix}_http", stateless, json_response)
    got = run(weather_session(peer.url, protocol="legacy", days=True))
    check_older_weather(got, server_name)
    assert "pinned" in got["reason"]


# -- HTTP+SSE (2024-11-05) ---------------------------------------------------------------------------
@pytest.mark.parametrize("server", list(SERVERS))
def test_http_sse_auto_by_url(http_peer, run, server: str) -> None:
    """POSTs to /sse get 405 (Python) or 404 (Express), then GET finds the `endpoint` event."""
    prefix, server_name, _ = SERVERS[server]
    peer = http_peer(f"{prefix}_sse")
    got = run(weather_session(peer.url, days=True))
    check_older_weather(got, server_name)
    assert "HTTP+SSE" in got["reason"]


@pytest.mark.parametrize("server", list(SERVERS))
def test_http_sse_pinned_legacy_by_url(http_peer, run, server: str) -> None:
    """`protocol="legacy"` pins the era, not the transport: a plain HTTP+SSE URL still works."""
    prefix, server_name, _ = SERVERS[server]
    peer = http_peer(f"{prefix}_sse")
    got = run(weather_session(peer.url, protocol="legacy", days=True))
    check_older_weather(got, server_name)
    assert "HTTP+SSE" in got["reason"]


@pytest.mark.parametrize("server", list(SERVERS))
def test_http_sse_by_config(http_peer, run, server: str) -> None:
    prefix, server_name, _ = SERVERS[server]
    peer = http_peer(f"{prefix}_sse")
    config = mcpmini.ServerConfig(name=f"{server}-sse", url=peer.url, type="sse")
    got = run(weather_session(config, days=True))
    check_older_weather(got, server_name)
    assert "HTTP+SSE" in got["reason"]


# -- a server with tools only ----------------------------------------------------------------------------
async def tools_only_session(server: str | list[str]) -> dict[str, Any]:
    async with mcpmini.Client(server, timeout=CLIENT_TIMEOUT) as client:
        return {"era": client.era, "capabilities": client.capabilities,
                "tools": await client.list_tools(),
                "forecast": await client.call_tool("get_forecast", {"city": "Lima"}),
                "resources": await client.list_resources(),
                "templates": await client.list_resource_templates(),
                "prompts": await client.list_prompts()}


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_tools_only_lists_no_resources_or_prompts(ts1_tools_only_cmd, http_peer, run,
                                                  transport: str) -> None:
    """A server without the resources/prompts capabilities answers those lists with -32601;
    the client does not ask and returns empty lists."""
    server = (ts1_tools_only_cmd if transport == "stdio"
              else http_peer("ts1_server_http", False, False, True).url)
    got = run(tools_only_session(server))
    assert got["era"] == "legacy"
    assert "resources" not in got["capabilities"] and "prompts" not in got["capabilities"]
    assert {"get_forecast", "add"} <= names(got["tools"])
    assert mcpmini.result_text(got["forecast"]) == "Forecast for Lima: sunny, 22°C"
    assert got["resources"] == got["templates"] == got["prompts"] == []


# -- the CLI as a real process ---------------------------------------------------------------------------
@pytest.mark.parametrize("server", list(SERVERS))
def test_process_info_json_stdio(proc, stdio_cmd, server: str) -> None:
    _, server_name, _ = SERVERS[server]
    done = proc("--json", "info", shlex.join(stdio_cmd(server)))
    assert done.returncode == 0, done.stderr
    info = json.loads(done.stdout)
    assert info["era"] == "legacy"
    assert info["protocolVersion"] == LEGACY_VERSION
    assert info["serverInfo"]["name"] == server_name


@pytest.mark.parametrize("server, stateless, json_response", [("py1", False, False),
                                                              ("fastmcp2", True, True),
                                                              ("ts1", False, True)])
def test_process_call_streamable_http(proc, http_peer, server: str, stateless: bool,
                                      json_response: bool) -> None:
    peer = http_peer(f"{SERVERS[server][0]}_http", stateless, json_response)
    done = proc("call", peer.url, "get_forecast", "city=Lima", "days=2")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Forecast for Lima, 2 days: sunny, 22°C\n"


@pytest.mark.parametrize("server", list(SERVERS))
def test_process_pinned_legacy_http_sse(proc, http_peer, server: str) -> None:
    """`--protocol legacy` reaches an HTTP+SSE server given by its URL."""
    peer = http_peer(f"{SERVERS[server][0]}_sse")
    done = proc("--protocol", "legacy", "tools", peer.url)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert any(line.startswith("get_forecast city=<string> [days=<integer>]") for line in lines), lines


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_process_tools_only_resources_and_prompts(proc, ts1_tools_only_cmd, http_peer,
                                                  transport: str) -> None:
    """`resources` and `prompts` on a server that has neither: empty output, exit 0."""
    server = (shlex.join(ts1_tools_only_cmd) if transport == "stdio"
              else http_peer("ts1_server_http", False, False, True).url)
    for command in ("resources", "prompts"):
        done = proc(command, server)
        assert (done.returncode, done.stdout.strip()) == (0, ""), done.stderr
        done = proc("--json", command, server)
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout) == []
