"""`mcpmini bridge` driven by clients nobody here wrote (issue 19): the official Python SDK client
(`mcp` 2.3.0, both eras: servers/sdk_bridge_client.py) and the MCP Inspector CLI, through the
bridge over stdio to the example HTTP server (both eras), a Python SDK 1.x HTTP server, an
HTTP+SSE server, an OAuth-protected server and the fake stdio server (progress,
cancellation, elicitation, both cross-era directions, a crash, the end); and the SDK's HTTP
client through `bridge --listen` to a stdio server."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

import mcpmini
from auth_fakes import AuthWorld, follow
from harness import FakeServer, run, wait_until

ROOT = Path(__file__).resolve().parents[2]
MCPMINI_PY = str(ROOT / "mcpmini.py")
SDK_DRIVER = str(Path(__file__).resolve().parent / "servers" / "sdk_bridge_client.py")
PROCESS_TIMEOUT = 90.0
MODERN = "2026-07-28"
SDK_MODES = ["legacy", "auto"]   # auto: the SDK probes server/discover, so the bridge answers 2026-07-28
WEATHER_STEPS = [["info"], ["tools"], ["call", "get_forecast", {"city": "Tokyo"}], ["resources"],
                 ["read", "weather://cities"], ["prompts"], ["get", "umbrella_advice", {"city": "Tokyo"}]]


@pytest.fixture(scope="module")
def example_http() -> Iterator[str]:
    """examples/weather_http_server.py on a free port (both eras on /mcp, HTTP+SSE on /sse)."""
    proc = subprocess.Popen([sys.executable, str(ROOT / "examples" / "weather_http_server.py"), "--port", "0"],
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        yield proc.stdout.readline().strip()
    finally:
        proc.terminate()
        proc.wait(10)


def bridge_argv(server: str, *options: str) -> list[str]:
    return [sys.executable, MCPMINI_PY, "bridge", "--timeout", "30", *options, server]


def sdk(python: str, mode: str, target: dict[str, Any], steps: list[list[Any]]) -> dict[str, dict]:
    """Run the SDK client; its step results by step name (the last one of each name)."""
    done = subprocess.run([python, SDK_DRIVER, mode, json.dumps(target), json.dumps(steps)], capture_output=True,
                          text=True, timeout=PROCESS_TIMEOUT, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr[-3000:]
    results = [json.loads(line) for line in done.stdout.splitlines()]
    assert [r["step"] for r in results] == [s[0] for s in steps], done.stderr[-3000:]
    return {r.pop("step"): r for r in results}


def through_bridge(server: str, *options: str) -> dict[str, Any]:
    """The SDK's stdio target: `mcpmini bridge SERVER` with this test's user directories."""
    keep = ("HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "NO_PROXY", "no_proxy", "PATH")
    return {"command": bridge_argv(server, *options), "env": {k: os.environ[k] for k in keep if k in os.environ}}


def check_example(got: dict[str, dict], version: str) -> None:
    assert got["info"]["name"] == "weather-demo" and got["info"]["protocol"] == version
    assert got["tools"]["names"] == ["get_forecast"]
    assert "Tokyo" in got["call"]["text"][0] and got["call"]["structured"]["city"] == "Tokyo"
    assert got["resources"]["names"] == ["cities"] and '"Tokyo"' in got["read"]["text"]
    assert got["prompts"]["names"] == ["umbrella_advice"] and got["get"]["messages"] == 2


# -- the official Python SDK client over stdio --------------------------------------------------------
@pytest.mark.parametrize("mode", SDK_MODES)
@pytest.mark.parametrize("server_era", ["legacy", MODERN])
def test_sdk_to_the_example_http_server(sdk_python: str, example_http: str, mode: str, server_era: str) -> None:
    got = sdk(sdk_python, mode, through_bridge(example_http, "--protocol", server_era), WEATHER_STEPS)
    check_example(got, "2025-11-25" if mode == "legacy" else MODERN)


@pytest.mark.parametrize("mode", SDK_MODES)
def test_sdk_to_a_python_sdk1_http_server(sdk_python: str, http_peer, mode: str) -> None:
    peer = http_peer("py1_server_http")
    got = sdk(sdk_python, mode, through_bridge(peer.url), [
        ["info"], ["tools"], ["call", "get_forecast", {"city": "Lima", "days": 2}], ["read", "weather://cities"],
        ["get", "forecast_prompt", {"city": "Oslo"}]])
    assert got["info"]["name"] == "py1-weather" and {"get_forecast", "add"} <= set(got["tools"]["names"])
    assert "Lima" in got["call"]["text"][0] and "Paris" in got["read"]["text"]
    assert got["get"]["text"] == "What is the weather in Oslo?"


@pytest.mark.parametrize("mode", SDK_MODES)
def test_sdk_to_an_http_sse_server(sdk_python: str, http_peer, mode: str) -> None:
    peer = http_peer("py1_server_sse")
    got = sdk(sdk_python, mode, through_bridge(peer.url), [["info"], ["call", "add", {"a": 2, "b": 40}]])
    assert got["info"]["name"] == "py1-weather" and got["call"]["text"] == ["42"]


@pytest.mark.parametrize("mode", SDK_MODES)
@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_sdk_progress_elicitation_cancel_crash_and_end(sdk_python: str, upstream: Callable[..., FakeServer],
                                                       mode: str, era: str) -> None:
    """Progress, a server's question (the same era, or translated both ways: input_required to
    elicitation/create and back), a cancellation the upstream sees, a crash mid-call answered with
    an error and a reconnect, then the end of the SDK client: no process left."""
    server = upstream(era)
    got = sdk(sdk_python, mode, through_bridge(server.cmdline), [
        ["progress", "progress", {"steps": 2}], ["elicit", "ask", {}, {"city": "Rome"}],
        ["cancel", "slow", {"seconds": 30}, 1.0], ["call", "crash", {"delay": 0.2, "code": 3}], ["tools"]])
    assert got["progress"]["progress"] == [1.0, 2.0]
    asked = got["elicit"]["structured"]
    answer = {"action": "accept", "content": {"city": "Rome"}}
    assert got["elicit"]["elicited"] == ["Which city?"]
    assert (asked["answers"]["q"] if era == "modern" else asked["answer"]["result"]) == answer
    assert got["cancel"] == {"cancelled": True}
    assert "exited with status 3" in got["call"]["error"] and "crashing on purpose" in got["call"]["error"]
    assert "slow" in got["tools"]["names"]
    slow = next(m for m in server.calls() if m["params"]["name"] == "slow")
    assert slow["id"] in [m["params"]["requestId"] for m in server.cancels()]
    pids = [m["_start"] for m in server.starts()]
    assert len(pids) == 2   # the crashed upstream, then the one the next request started
    assert wait_until(lambda: not [p for p in pids if os.path.exists(f"/proc/{p}")], 5)   # reaped too


# -- the MCP Inspector CLI over stdio -----------------------------------------------------------------
@pytest.mark.parametrize("era", ["legacy", "modern"])
@pytest.mark.parametrize("server_era", ["legacy", MODERN])
def test_inspector_cli_to_the_example_http_server(inspector_cli: list[str], example_http: str, era: str,
                                                  server_era: str) -> None:
    def inspect(*options: str) -> dict:
        done = subprocess.run([*inspector_cli, "--format", "json", "--protocol-era", era, *options, "--",
                               *bridge_argv(example_http, "--protocol", server_era)],
                              capture_output=True, text=True, timeout=PROCESS_TIMEOUT,
                              stdin=subprocess.DEVNULL)
        assert done.returncode == 0, done.stderr[-3000:]
        return json.loads(done.stdout)["result"]

    assert [t["name"] for t in inspect("--method", "tools/list")["tools"]] == ["get_forecast"]
    called = inspect("--method", "tools/call", "--tool-name", "get_forecast", "--tool-arg", "city=London")
    assert called["structuredContent"]["city"] == "London"
    read = inspect("--method", "resources/read", "--uri", "weather://forecast/Tokyo")
    assert "Tokyo" in read["contents"][0]["text"]
    got = inspect("--method", "prompts/get", "--prompt-name", "umbrella_advice", "--prompt-args", "city=Beijing")
    assert "Beijing" in json.dumps(got["messages"])


# -- an OAuth-protected server, after `mcpmini login` ---------------------------------------------------
def test_sdk_to_an_oauth_server_after_login(sdk_python: str, world: AuthWorld) -> None:
    done = subprocess.run([sdk_python, SDK_DRIVER, "legacy", json.dumps(through_bridge(world.url)), '[["tools"]]'],
                          capture_output=True, text=True, timeout=PROCESS_TIMEOUT, stdin=subprocess.DEVNULL)
    assert done.returncode != 0 and f"mcpmini login {world.url}" in done.stderr
    run(mcpmini.login(world.url, open_browser=follow, callback_port=0))
    (token,) = world.tokens
    for mode in SDK_MODES:
        got = sdk(sdk_python, mode, through_bridge(world.url), [["tools"], ["call", "echo", {}]])
        assert got["tools"]["names"] == ["echo"] and got["call"]["text"] == ["ok"]
    assert {info["authorization"] for _, path, info in world.log if path == "/mcp"} >= {f"Bearer {token}"}


# -- bridge --listen, driven by the SDK's Streamable HTTP client -------------------------------------------
@pytest.mark.parametrize("mode", SDK_MODES)
def test_sdk_http_client_through_listen_to_a_stdio_server(sdk_python: str, py_cmd: list[str], mode: str) -> None:
    proc = subprocess.Popen(bridge_argv(shlex.join(py_cmd), "--listen", "127.0.0.1:0"), stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        line = proc.stderr.readline()
        url, token = line.split(" bridge on ")[1].split(" ")[0], line.rsplit("Bearer ", 1)[1].strip()
        got = sdk(sdk_python, mode, {"url": url, "headers": {"Authorization": f"Bearer {token}"}}, [
            ["info"], ["tools"], ["progress", "get_forecast", {"city": "Paris"}], ["read", "weather://cities"],
            ["get", "forecast_prompt", {"city": "Oslo"}]])
        assert got["info"]["name"] == "py-weather"
        assert got["info"]["protocol"] == ("2025-11-25" if mode == "legacy" else MODERN)
        assert got["progress"]["text"] == ["Forecast for Paris: sunny, 22°C"]
        assert got["read"]["text"] == "Paris\nTokyo\nLima" and got["get"]["text"] == "What is the weather in Oslo?"
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(10)
