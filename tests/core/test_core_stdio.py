"""stdio transport: crashes, exits, big and noisy lines, stderr, environment, cwd, shutdown and
orphans (issue 2, item 2)."""
from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import mcpmini
from harness import ROOT, alive, group_members, proc_state, run, wait_gone


def _kill_group(pgid: int | None) -> None:
    """Test cleanup only: never leave a process behind, whatever mcpmini did."""
    if pgid:
        with contextlib.suppress(OSError):
            os.killpg(pgid, signal.SIGKILL)


def test_crash_fails_every_pending_call_at_once_with_status_and_stderr(fake):
    f = fake("modern")

    async def main():
        async with f.client(timeout=60) as c:
            slow = c.call_tool("sleep", {"seconds": 30})
            crash = c.call_tool("crash", {"delay": 0.3, "code": 3})
            results = await asyncio.gather(slow, crash, return_exceptions=True)
            with pytest.raises(mcpmini.ConnectionClosed):  # later calls fail at once too
                await c.call_tool("echo", {"text": "anyone?"})
            return results

    results = run(main(), timeout=15)  # far below the 60 s request timeout
    for exc in results:
        assert isinstance(exc, mcpmini.ConnectionClosed), exc
        assert isinstance(exc, ConnectionError)
        message = str(exc)
        assert re.search(r"\b3\b", message), message
        assert "crashing on purpose" in message, message


def test_server_dying_at_start_reports_status_and_stderr():
    code = "import sys; sys.stderr.write('cannot start: missing config\\n'); sys.exit(7)"

    async def main():
        with pytest.raises(mcpmini.ConnectionClosed) as info:
            async with mcpmini.Client([sys.executable, "-c", code], timeout=30):
                pass
        return str(info.value)

    message = run(main(), timeout=15)
    assert re.search(r"\b7\b", message) and "missing config" in message, message


def test_missing_command_is_connection_closed(tmp_path):
    missing = str(tmp_path / "no-such-server")

    async def main():
        with pytest.raises(mcpmini.ConnectionClosed) as info:
            async with mcpmini.Client([missing]):
                pass
        return str(info.value)

    assert "no-such-server" in run(main())


def test_leader_exit_is_noticed_while_a_grandchild_holds_stdout(fake):
    f = fake("modern")

    async def main():
        async with f.client(timeout=60) as c:
            with pytest.raises(mcpmini.ConnectionClosed) as info:
                await c.call_tool("leader_exit", {"delay": 0.2})
            return str(info.value)

    try:
        message = run(main(), timeout=15)
        assert re.search(r"\b5\b", message) and "grandchild keeps stdout" in message, message
        assert wait_gone(f.children()) == [], "the grandchild outlived close()"
    finally:
        for start in f.starts():
            _kill_group(start["pgid"])


def test_50_mb_line(fake):
    f = fake("modern")

    async def main():
        async with f.client() as c:
            big = await c.call_tool("big", {"mb": 50})
            after = await c.call_tool("echo", {"text": "after"})
            return big, after

    big, after = run(main(), timeout=60)
    text = big["content"][0]["text"]
    assert len(text) == 50 << 20 and text.endswith("!") and text[:3] == "xxx"
    assert mcpmini.result_text(after) == "after"


def test_a_big_request_waits_for_the_pipe_and_gets_through(fake):
    f = fake("modern")
    text = "y" * (8 << 20)   # far more than a pipe holds: the writer waits for the server

    async def main():
        async with f.client() as c:
            return mcpmini.result_text(await c.call_tool("echo", {"text": text}))

    assert run(main(), timeout=60) == text


def test_a_writer_waiting_on_a_full_pipe_fails_when_the_server_exits(tmp_path):
    script = tmp_path / "deaf.py"   # never reads its input, then exits
    script.write_text("import sys, time\nsys.stderr.write('deaf and leaving\\n')\ntime.sleep(1)\nsys.exit(3)\n")

    async def main():
        session = mcpmini._Session(mcpmini._StdioTransport([sys.executable, str(script)]))
        await session.open()
        start = time.monotonic()
        try:
            with pytest.raises(mcpmini.ConnectionClosed) as info:
                await session.request("x/big", {"blob": "z" * (8 << 20)}, timeout=30)
            return info.value, time.monotonic() - start
        finally:
            await session.close()

    exc, waited = run(main(), timeout=40)
    assert waited < 10, exc   # not stuck until the request's timeout (or forever)


def test_message_over_the_cap_fails_loudly(fake, monkeypatch):
    monkeypatch.setattr(mcpmini, "MAX_MESSAGE_SIZE", 1 << 20)
    f = fake("modern")

    async def main():
        async with f.client(timeout=60) as c:
            with pytest.raises(mcpmini.MCPError) as info:
                await c.call_tool("big", {"mb": 3})
            return info.value

    exc = run(main(), timeout=15)
    assert not isinstance(exc, mcpmini.RequestTimeout), exc


def test_non_json_rpc_stdout_lines_are_skipped_and_reported(fake, caplog):
    caplog.set_level(logging.DEBUG, logger="mcpmini")
    f = fake("modern")

    async def main():
        async with f.client() as c:
            noisy = await c.call_tool("noisy")
            after = await c.call_tool("echo", {"text": "after"})
            return noisy, after

    noisy, after = run(main())
    assert mcpmini.result_text(noisy) == "still here"
    assert mcpmini.result_text(after) == "after"
    logged = "\n".join(r.getMessage() for r in caplog.records if r.name.startswith("mcpmini"))
    assert "Server started on stdout" in logged and "a JSON log line" in logged, logged


def test_stderr_is_drained_so_a_chatty_server_does_not_block(fake, caplog):
    caplog.set_level(logging.INFO, logger="mcpmini")
    f = fake("modern")

    async def main():
        async with f.client(timeout=15) as c:
            return await c.call_tool("stderr_flood", {"kb": 512})

    assert mcpmini.result_text(run(main(), timeout=30)) == "flooded"
    assert any("last stderr line" in r.getMessage() for r in caplog.records), "stderr not logged"


def test_environment_is_an_allowlist_plus_env(fake, monkeypatch):
    monkeypatch.setenv("SECRET_TOKEN", "hunter2")
    monkeypatch.setenv("LC_CORE_TEST", "kept")
    f = fake("modern")

    async def main(**kwargs):
        async with f.client(env={"MY_SETTING": "42"}, **kwargs) as c:
            return (await c.call_tool("env"))["structuredContent"]

    env = run(main())
    assert "SECRET_TOKEN" not in env
    assert env["MY_SETTING"] == "42"
    assert env["PATH"] == os.environ["PATH"] and env.get("HOME") == os.environ.get("HOME")
    assert env.get("LC_CORE_TEST") == "kept"
    inherited = run(main(inherit_env=True))
    assert inherited["SECRET_TOKEN"] == "hunter2" and inherited["MY_SETTING"] == "42"


def test_cwd(fake, tmp_path):
    workdir = tmp_path / "work dir"
    workdir.mkdir()
    f = fake("modern")

    async def main():
        async with f.client(cwd=str(workdir)) as c:
            return mcpmini.result_text(await c.call_tool("cwd"))

    assert Path(run(main())).resolve() == workdir.resolve()


def test_arguments_reach_the_server_verbatim_no_shell(fake):
    f = fake("modern")
    tricky = '$HOME `id` ; | > x "q" *'

    async def main():
        async with mcpmini.Client(f.argv + ["--say", tricky]) as c:
            return (await c.call_tool("argv"))["structuredContent"]["argv"]

    assert run(main()) == f.argv[2:] + ["--say", tricky]


def test_close_leaves_no_orphans_when_the_server_spawned_a_child(fake):
    f = fake("modern")

    async def main():
        async with f.client() as c:
            return (await c.call_tool("spawn"))["structuredContent"]

    info = run(main())
    try:
        assert info["pgid"] == info["pid"], "the server should lead its own session/group"
        assert wait_gone([info["pid"], info["child"]], info["pgid"]) == []
        assert proc_state(info["pid"]) is None, "the server was left a zombie (never reaped)"
    finally:
        _kill_group(info["pgid"])


def test_a_stubborn_server_is_killed(fake, monkeypatch):
    """Ignores stdin EOF and SIGTERM: close() still ends it (SIGKILL), bounded."""
    monkeypatch.setattr(mcpmini, "SHUTDOWN_GRACE", 0.5)  # the escalation, not its patience
    f = fake("modern", ignore_eof=True, ignore_sigterm=True)

    async def main():
        async with f.client() as c:
            return (await c.call_tool("pid"))["structuredContent"]

    info = run(main(), timeout=20)
    try:
        assert wait_gone([info["pid"]], info["pgid"], timeout=5) == []
    finally:
        _kill_group(info["pgid"])


def test_aexit_shuts_down_when_the_body_raises(fake):
    f = fake("modern")
    seen: dict = {}

    async def main():
        with pytest.raises(RuntimeError):
            async with f.client() as c:
                seen.update((await c.call_tool("pid"))["structuredContent"])
                raise RuntimeError("user code failed")

    run(main())
    assert wait_gone([seen["pid"]], seen["pgid"]) == []


# A library program, as most are written: no signal handling of its own. mcpmini must still
# take the server's process group down when the program dies of SIGTERM/SIGHUP.
PLAIN_SCRIPT = textwrap.dedent("""
    import asyncio, json, sys
    import mcpmini

    async def main():
        async with mcpmini.Client(json.loads(sys.argv[1])) as c:
            await c.call_tool("spawn", {"hold": 60})

    asyncio.run(main())
""")

# A program that owns its signals turns them into cancelling its main task; the Client's
# __aexit__ must then shut the server down, group and all.
HANDLING_SCRIPT = textwrap.dedent("""
    import asyncio, json, signal, sys
    import mcpmini

    async def work():
        async with mcpmini.Client(json.loads(sys.argv[1])) as c:
            await c.call_tool("spawn", {"hold": 60})

    async def main():
        task = asyncio.ensure_future(work())
        for sig in (signal.SIGTERM, signal.SIGHUP):
            asyncio.get_running_loop().add_signal_handler(sig, task.cancel)
        try:
            await task
        except asyncio.CancelledError:
            sys.exit(143)

    asyncio.run(main())
""")


def _signal_and_check(f, proc: subprocess.Popen, sig: int) -> None:
    """Wait for the fake's grandchild, signal the client process, check nothing is left."""
    pgid = None
    try:
        deadline = time.monotonic() + 15
        while not f.children() and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        assert f.children(), f"no grandchild was spawned; client stderr: {proc.stderr.read()[-2000:]!r}"
        start = f.starts()[0]
        pgid, pids = start["pgid"], [start["_start"], *f.children()]
        assert all(alive(p) for p in pids)
        proc.send_signal(sig)
        proc.wait(timeout=15)
        left = wait_gone(pids, pgid)
        assert left == [], f"left behind after {signal.Signals(sig).name}: {left}"
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        proc.stderr.close()
        _kill_group(pgid)


@pytest.mark.parametrize("script_text", [PLAIN_SCRIPT, HANDLING_SCRIPT], ids=["plain", "own-handlers"])
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_no_orphans_when_a_library_program_is_signalled(fake, tmp_path, sig, script_text):
    f = fake("modern")
    script = tmp_path / "core_client_script.py"
    script.write_text(script_text)
    proc = subprocess.Popen([sys.executable, str(script), json.dumps(f.argv)], cwd=tmp_path,
                            env={**os.environ, "PYTHONPATH": str(ROOT)},  # imports mcpmini from here
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _signal_and_check(f, proc, sig)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_no_orphans_when_the_mcpmini_command_is_signalled(fake, tmp_path, sig):
    f = fake("modern")
    cli = [sys.executable, str(ROOT / "mcpmini.py"), "call", "--no-validate", f.cmdline, "spawn",
           "hold=60"]   # its schema lists no "hold"
    proc = subprocess.Popen(cli, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=tmp_path)
    _signal_and_check(f, proc, sig)


def test_group_check_helper_sees_live_members():
    """Guards the orphan tests themselves: group_members must find a live process."""
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"],
                             start_new_session=True)
    try:
        assert group_members(child.pid) == [child.pid]
    finally:
        child.kill()
        child.wait()
    assert group_members(child.pid) == []
