"""The mcpmini command line against real servers: `main([...])` in-process (checked with capsys)
and a few real `python3 mcpmini.py ...` processes. SERVER is given as one command-line string."""

from __future__ import annotations

import json
import shlex

import pytest


@pytest.fixture
def everything(everything_cmd: list[str]) -> str:
    return shlex.join(everything_cmd)


@pytest.fixture
def weather(py_cmd: list[str]) -> str:
    return shlex.join(py_cmd)


# -- server-everything over stdio (legacy) -------------------------------------------------------------
def test_cli_everything_info(cli, everything: str) -> None:
    code, out, err = cli("info", everything)
    assert code == 0, err
    assert "era:          legacy" in out
    assert "protocol:     2025-11-25" in out
    assert "tools" in out


def test_cli_everything_tools(cli, everything: str) -> None:
    code, out, err = cli("tools", everything)
    assert code == 0, err
    assert "echo message=<string>  " in out and out.splitlines()[0].endswith("  Echoes back the input string")
    assert any(line.startswith("get-sum a=<number> b=<number>  ") for line in out.splitlines())
    assert "get-resource-links [count=<number 1..10>]" in out   # its range, from the real schema


def test_cli_everything_call_echo(cli, everything: str) -> None:
    code, out, err = cli("call", everything, "echo", "message=hello world")
    assert code == 0, err
    assert out == "Echo: hello world\n"


def test_cli_everything_call_json(cli, everything: str) -> None:
    code, out, err = cli("call", "--json", everything, "get-sum", "a=2", "b=40")
    assert code == 0, err
    result = json.loads(out)
    assert result["content"][0]["text"] == "The sum of 2 and 40 is 42."


def test_cli_everything_resources_and_read(cli, everything: str) -> None:
    code, out, err = cli("resources", everything)
    assert code == 0, err
    uris = [line.split()[0] for line in out.splitlines() if line.startswith("demo://")]
    assert len(uris) >= 7
    code, text, err = cli("read", everything, sorted(uris)[0])
    assert code == 0, err
    assert text.strip()
    code, raw, err = cli("read", "--json", everything, sorted(uris)[0])
    assert code == 0, err
    assert json.loads(raw)["contents"][0]["text"].strip() == text.strip()


def test_cli_everything_prompts_and_prompt(cli, everything: str) -> None:
    code, out, err = cli("prompts", everything)
    assert code == 0, err
    assert any(line.startswith("simple-prompt  ") for line in out.splitlines())
    assert any(line.startswith("args-prompt city=<string> [state=<string>]  ") for line in out.splitlines())
    code, out, err = cli("prompt", everything, "args-prompt", "city=Hangzhou")
    assert code == 0, err
    assert out == "user: What's weather in Hangzhou?\n"


# -- official Python SDK server over stdio (dual era) ------------------------------------------------
def test_cli_weather_info_modern(cli, weather: str) -> None:
    code, out, err = cli("info", weather)
    assert code == 0, err
    assert "server:       py-weather" in out
    assert "era:          2026-07-28" in out
    assert "instructions: Canned weather data for mcpmini's interop tests." in out


@pytest.mark.parametrize("pin, era, version", [("auto", "2026-07-28", "2026-07-28"),
                                               ("legacy", "legacy", "2025-11-25")])
def test_cli_weather_info_json(cli, weather: str, pin: str, era: str, version: str) -> None:
    code, out, err = cli("--protocol", pin, "--json", "info", weather)
    assert code == 0, err
    info = json.loads(out)
    assert info["era"] == era
    assert info["protocolVersion"] == version
    assert info["serverInfo"]["name"] == "py-weather"


def test_cli_weather_tools(cli, weather: str) -> None:
    code, out, err = cli("tools", weather)
    assert code == 0, err
    lines = out.splitlines()
    assert any(line.startswith("get_forecast city=<string>  ") and line.endswith("  Return a canned forecast for a city.")
               for line in lines)
    assert any(line.startswith("add a=<integer> b=<integer>  ") and line.endswith("  Add two integers.")
               for line in lines)


@pytest.mark.parametrize("pin", ["auto", "legacy"])
def test_cli_weather_call(cli, weather: str, pin: str) -> None:
    code, out, err = cli("--protocol", pin, "call", weather, "get_forecast", "city=Paris")
    assert code == 0, err
    assert out == "Forecast for Paris: sunny, 22°C\n"
    # key=value is typed from the schema: a and b are sent as integers
    code, out, err = cli("--protocol", pin, "call", weather, "add", "a=2", "b=3")
    assert code == 0, err
    assert out == "5\n"


def test_cli_weather_resources_read_prompts_prompt(cli, weather: str) -> None:
    code, out, err = cli("resources", weather)
    assert code == 0, err
    assert out.splitlines()[0].startswith("weather://cities  cities")
    code, out, err = cli("read", weather, "weather://cities")
    assert code == 0, err
    assert out == "Paris\nTokyo\nLima\n"
    code, out, err = cli("prompts", weather)
    assert code == 0, err
    assert out.startswith("forecast_prompt city=<string>  Ask for the weather in a city.")
    code, out, err = cli("prompt", weather, "forecast_prompt", "city=Oslo")
    assert code == 0, err
    assert out == "user: What is the weather in Oslo?\n"


def test_cli_weather_unknown_tool_is_a_usage_error(cli, weather: str) -> None:
    code, out, err = cli("call", weather, "get_forcast", "city=Paris")
    assert code == 2
    assert out == ""
    assert "did you mean 'get_forecast'?" in err


# -- real processes ---------------------------------------------------------------------------------
def test_process_weather_call(proc, weather: str) -> None:
    done = proc("call", weather, "get_forecast", "city=Lima")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Forecast for Lima: sunny, 22°C\n"


def test_process_everything_tools_and_prompt(proc, everything: str) -> None:
    done = proc("tools", everything)
    assert done.returncode == 0, done.stderr
    assert "echo message=<string>" in done.stdout
    done = proc("prompt", everything, "simple-prompt")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "user: This is a simple prompt without arguments.\n"


def test_process_everything_call_bad_argument_type(proc, everything: str) -> None:
    """The CLI checks key=value arguments against the tool's schema before sending."""
    done = proc("call", everything, "get-sum", "a=2", "b=two")
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.startswith("mcpmini: error: get-sum: argument 'b'")


def sent_methods(err: str) -> list[str]:
    """The methods mcpmini sent, from its --trace lines on stderr."""
    return [json.loads(line.split(" -> ", 1)[1]).get("method", "<response>")
            for line in err.splitlines() if line.startswith("mcpmini: trace ") and " -> " in line]


def test_cli_everything_second_call_uses_the_cached_tool_list(cli, everything: str) -> None:
    """A legacy server's list is kept (issue 16): the next call sends the handshake and the call."""
    for text in ("first", "second"):
        code, out, err = cli("--trace", "call", everything, "echo", f"message={text}")
        assert code == 0, err
        assert out == f"Echo: {text}\n"
    assert sent_methods(err) == ["initialize", "notifications/initialized", "tools/call"]
    code, out, err = cli("--trace", "--refresh", "call", everything, "echo", "message=again")
    assert code == 0 and "tools/list" in sent_methods(err), err


def test_cli_ts_v2_list_with_ttl_0_is_never_served_from_the_cache(cli, ts_cmd: list[str]) -> None:
    """The TS SDK's 2026-07-28 lists say ttlMs 0: stale at once, so every call lists."""
    for _ in range(2):
        code, out, err = cli("--trace", "call", shlex.join(ts_cmd), "get_forecast", "city=Lima")
        assert code == 0, err
    assert sent_methods(err) == ["server/discover", "tools/list", "tools/call"]


def test_process_ts_v2_info(proc, ts_cmd: list[str]) -> None:
    done = proc("-v", "info", shlex.join(ts_cmd))
    assert done.returncode == 0, done.stderr
    assert "server:       ts-weather 1.0.0" in done.stdout
    assert "era:          2026-07-28" in done.stdout


# -- over HTTP ---------------------------------------------------------------------------------------
def test_cli_http_url(cli, http_peer) -> None:
    peer = http_peer("py_server_http", False, False)
    code, out, err = cli("call", peer.url, "get_forecast", "city=Quito")
    assert code == 0, err
    assert out == "Forecast for Quito: sunny, 22°C\n"
    code, out, err = cli("--protocol", "legacy", "--json", "info", peer.url)
    assert code == 0, err
    assert json.loads(out)["era"] == "legacy"


def test_process_everything_sse_url(proc, http_peer) -> None:
    peer = http_peer("everything_http", "sse")
    done = proc("call", peer.url, "echo", "message=via sse")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Echo: via sse\n"
