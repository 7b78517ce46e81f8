"""examples/weather_http_server.py with mcpmini: both eras of Streamable HTTP, HTTP+SSE, and
the README command line `python3 mcpmini.py call http://127.0.0.1:PORT/mcp get_forecast city=Hangzhou`."""
from __future__ import annotations

import pytest

import mcpmini
from harness import run


@pytest.mark.parametrize("protocol, era", [("auto", "2026-07-28"), ("legacy", "legacy")])
def test_weather_over_streamable_http(weather_url, protocol, era):
    async def go():
        async with mcpmini.Client(weather_url, protocol=protocol) as client:
            assert client.era == era
            assert "get_forecast" in [t["name"] for t in await client.list_tools()]
            first = await client.call_tool("get_forecast", {"city": "Hangzhou"})
            second = await client.call_tool("get_forecast", {"city": "Hangzhou"})
            return mcpmini.result_text(first), mcpmini.result_text(second)
    first, second = run(go())
    assert "Hangzhou" in first and first == second


def test_weather_over_http_sse(weather_url):
    config = mcpmini.ServerConfig(name="weather", url=weather_url.replace("/mcp", "/sse"), type="sse")

    async def go():
        async with mcpmini.Client(config) as client:
            assert client.era == "legacy" and "HTTP+SSE" in client.era_reason
            return mcpmini.result_text(await client.call_tool("get_forecast", {"city": "Hangzhou"}))
    assert "Hangzhou" in run(go())


def test_cli_call_in_process(weather_url, cli):
    for flags in ([], ["--protocol", "legacy"]):
        r = cli(*flags, "call", weather_url, "get_forecast", "city=Hangzhou")
        assert r.code == 0 and "Hangzhou" in r.out


def test_readme_command_line(weather_url, proc):
    """The real command line, as the README shows it."""
    done = proc("call", weather_url, "get_forecast", "city=Hangzhou", encoding="utf-8")
    assert done.returncode == 0, done.stderr
    assert "Hangzhou" in done.stdout
