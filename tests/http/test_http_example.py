"""examples/weather_http_server.py with mcpmini: both eras of Streamable HTTP, HTTP+SSE, and
the README command line `python3 mcpmini.py call http://127.0.0.1:PORT/mcp get_forecast city=Hangzhou`."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from http_harness import ROOT, hard_deadline, http_env, mcpmini, run  # noqa: F401

EXAMPLE = ROOT / "examples" / "weather_http_server.py"


@pytest.fixture()
def weather_url():
    proc = subprocess.Popen([sys.executable, str(EXAMPLE), "--port", "0"], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    try:
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:") and url.endswith("/mcp"), url
        yield url
    finally:
        proc.terminate()
        proc.wait(10)
        proc.stdout.close()


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


def test_cli_call_in_process(weather_url, capsys):
    assert mcpmini.main(["call", weather_url, "get_forecast", "city=Hangzhou"]) == 0
    assert "Hangzhou" in capsys.readouterr().out
    assert mcpmini.main(["--protocol", "legacy", "call", weather_url, "get_forecast", "city=Hangzhou"]) == 0
    assert "Hangzhou" in capsys.readouterr().out


def test_readme_command_line(weather_url, tmp_path):
    """The real command line, as the README shows it."""
    argv = [sys.executable, str(ROOT / "mcpmini.py")]
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    done = subprocess.run([*argv, "call", weather_url, "get_forecast", "city=Hangzhou"],
                          capture_output=True, text=True, timeout=60, env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Hangzhou" in done.stdout
