"""Ctrl-C during a call, on a real ``python3 mcpmini.py call ...`` process: the request is
cancelled on the wire, the server's process group is gone, exit 130, no traceback. Run the
suite under Python 3.10 and 3.13 (sys.executable runs mcpmini)."""
from __future__ import annotations

import json
import os
import signal
import subprocess

import pytest

from harness import alive, group_alive, running, wait_until

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX signals")


def wait_for_call(server, process: subprocess.Popen) -> None:
    """Until the server has the tools/call and its child runs (or mcpmini died early)."""
    ok = wait_until(lambda: process.poll() is not None or (
        server.calls() and any("_child" in e for e in server.entries())), 30)
    assert ok and process.poll() is None, process.communicate(timeout=10)


def finish(process: subprocess.Popen) -> tuple[int, str, str]:
    try:
        out, err = process.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        out, err = process.communicate()
        pytest.fail(f"mcpmini did not end after SIGINT: {err.decode(errors='replace')}")
    return process.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")


def assert_nothing_left(server) -> None:
    pids, pgids = server.pids(), server.pgids()
    assert len(pids) >= 2 and pgids  # the server and its child were recorded
    gone = wait_until(lambda: not any(map(alive, pids)) and not any(map(group_alive, pgids)), 15)
    assert gone, f"left behind: {[p for p in pids if alive(p)]} (groups {pgids})"  # the fixture kills them


@pytest.mark.parametrize("json_mode", [False, True])
def test_sigint_cancels_on_the_wire_exits_130_and_leaves_nothing(fake, json_mode):
    server = fake()
    with running(*(["--json"] if json_mode else []), "call", server.cmdline, "slow") as process:
        wait_for_call(server, process)
        os.kill(process.pid, signal.SIGINT)
        code, out, err = finish(process)
    assert code == 130, err
    assert out == ""
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    assert "mcpmini: error: interrupted" in err
    if json_mode:
        assert json.loads(err.strip().splitlines()[-1]) == {
            "error": {"kind": "interrupted", "message": "interrupted"}}
    [call] = server.calls()
    cancels = [m for m in server.messages() if m.get("method") == "notifications/cancelled"]
    assert [c["params"]["requestId"] for c in cancels] == [call["id"]]
    assert_nothing_left(server)


def test_sigint_while_connecting_exits_130(fake):
    server = fake("--silent")
    with running("info", server.cmdline) as process:
        assert wait_until(lambda: server.messages() or process.poll() is not None, 30)
        os.kill(process.pid, signal.SIGINT)
        code, _, err = finish(process)
    assert code == 130, err
    assert "Traceback" not in err
    assert wait_until(lambda: not any(map(alive, server.pids())), 15)


def test_second_sigint_ends_at_once_and_leaves_nothing(fake):
    """A server deaf to SIGTERM and to the end of its input holds the shutdown up; the second
    Ctrl-C must end mcpmini at once without leaving that server running."""
    server = fake("--stubborn")
    with running("call", server.cmdline, "slow") as process:
        wait_for_call(server, process)
        os.kill(process.pid, signal.SIGINT)
        # the first Ctrl-C was handled: the cancellation and the SIGTERM reached the server
        assert wait_until(lambda: any(e.get("_signal") == "SIGTERM" for e in server.entries()), 20)
        os.kill(process.pid, signal.SIGINT)
        code, _, err = finish(process)
    assert code == 130, err
    assert "Traceback" not in err
    assert_nothing_left(server)
