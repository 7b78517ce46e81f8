"""SyncClient and SyncServers (issue 15, part 2): the async API without asyncio, from any
thread (even one running an event loop), and Ctrl-C that cancels the request on the wire."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

import mcpmini
from fake_server import PLAIN_TOOLS
from harness import ROOT, WEATHER as WEATHER_SERVER, run

WEATHER = [sys.executable, str(WEATHER_SERVER)]


def test_sync_client_has_the_async_clients_methods_and_results():
    with mcpmini.SyncClient(WEATHER, timeout=10) as client:
        assert client.era == "2026-07-28" and client.server_info["name"] == "weather-demo"
        tools = client.list_tools()
        result = client.call_tool("get_forecast", {"city": "Hangzhou"})
        resource = client.read_resource("weather://cities")

    async def same_with_asyncio():
        async with mcpmini.Client(WEATHER, timeout=10) as client:
            return (await client.list_tools(), await client.call_tool("get_forecast", {"city": "Hangzhou"}),
                    await client.read_resource("weather://cities"))
    assert (tools, result, resource) == run(same_with_asyncio())
    assert not client.connected
    with pytest.raises(mcpmini.ConnectionClosed, match="this SyncClient is closed"):
        client.list_tools()


def test_sync_client_works_inside_a_running_event_loop():
    async def main():   # e.g. a notebook, or a test framework that runs one
        with mcpmini.SyncClient(WEATHER) as client:
            return mcpmini.result_text(client.call_tool("get_forecast", {"city": "Tokyo"}))
    assert "Tokyo" in run(main())


def test_sync_client_errors_are_the_async_ones(fake, tmp_path):
    failing = fake(require=str(tmp_path / "missing"))   # exits 4 at once
    with pytest.raises(mcpmini.ConnectionClosed, match="status 4"):
        with mcpmini.SyncClient(failing.argv, timeout=5):
            pass
    with mcpmini.SyncClient(WEATHER) as client:
        with pytest.raises(mcpmini.RemoteError) as caught:
            client.read_resource("weather://nowhere")
        assert caught.value.code == -32602


def test_sync_servers_isolates_failures(fake, tmp_path):
    failing = fake(require=str(tmp_path / "missing"))   # exits 4 at once
    with mcpmini.SyncServers({"w": WEATHER, "broken": failing.argv}) as servers:
        assert list(servers.clients) == ["w"] and "broken" in servers.failed
        assert [t["server"] for t in servers.list_tools()] == ["w"]
        assert "Beijing" in mcpmini.result_text(servers.call_tool("w", "get_forecast", {"city": "Beijing"}))


SCRIPT = """
import sys
import mcpmini
with mcpmini.SyncClient(sys.argv[1:]) as client:
    print("calling", flush=True)
    try:
        client.call_tool("slow", {"seconds": 60})
    except KeyboardInterrupt:
        print("interrupted", flush=True)
        raise
"""


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT")
def test_ctrl_c_in_a_blocking_call_cancels_the_request_on_the_wire(fake):
    server = fake("modern-only", tools=PLAIN_TOOLS)
    proc = subprocess.Popen([sys.executable, "-c", SCRIPT, *server.argv], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        assert proc.stdout.readline() == "calling\n"
        deadline = time.monotonic() + 10
        while "tools/call" not in server.methods() and time.monotonic() < deadline:
            time.sleep(0.02)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)
    finally:
        proc.kill()
    assert out == "interrupted\n" and "KeyboardInterrupt" in err
    [call] = [m for m in server.received() if m.get("method") == "tools/call"]
    cancels = [m for m in server.received() if m.get("method") == "notifications/cancelled"]
    assert [c["params"]["requestId"] for c in cancels] == [call["id"]], json.dumps(server.received())
