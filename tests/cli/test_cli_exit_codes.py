"""One exit-code table for every command, and the ``--json`` error object with its ``kind``.
(130 is in test_cli_signals.py: it needs a real process to interrupt.)"""
from __future__ import annotations

import json

import pytest

from harness import alive, wait_until


def json_error(err: str) -> dict:
    """The one JSON error object of a --json run (the last stderr line)."""
    objects = [json.loads(line) for line in err.splitlines() if line.startswith("{")]
    assert len(objects) == 1, err
    return objects[0]["error"]


def test_success_is_0_with_result_only_on_stdout(cli, fake):
    r = cli("call", fake().cmdline, "unicode")
    assert (r.code, r.out, r.err) == (0, "杭州 naïve café ✓ — 🌧 Ωmega\n", "")


def test_is_error_result_is_1_result_on_stdout_one_line_on_stderr(cli, fake):
    r = cli("call", fake().cmdline, "fail")
    assert r.code == 1
    assert r.out == "the tool failed on purpose\n"
    assert r.err.count("\n") == 1 and r.error_lines and "fail" in r.error_lines[0]


def test_is_error_result_with_json(cli, fake):
    r = cli("--json", "call", fake().cmdline, "fail")
    assert r.code == 1
    assert json.loads(r.out)["isError"] is True
    assert json_error(r.err)["kind"] == "tool"


def test_json_rpc_error_is_1(cli, fake):
    r = cli("call", fake().cmdline, "rpcerror")
    assert r.code == 1 and r.out == ""
    [line] = r.error_lines
    assert "backend exploded" in line
    r = cli("--json", "call", fake().cmdline, "rpcerror")
    error = json_error(r.err)
    assert r.code == 1 and error["kind"] == "remote" and "backend exploded" in error["message"]


@pytest.mark.parametrize("argv, kind", [
    ([], "usage"),                                   # no command
    (["frobnicate"], "usage"),                       # unknown command
    (["call"], "usage"),                             # missing SERVER
    (["--timeout", "soon", "servers"], "usage"),     # bad option value
    (["--protocol", "2030-01-01", "servers"], "usage"),
    (["--config", "missing.json", "servers"], "config"),
])
def test_usage_and_config_errors_are_2(cli, argv, kind):
    r = cli(*argv)
    assert r.code == 2, r
    assert len(r.error_lines) == 1
    r = cli("--json", *argv)
    assert r.code == 2
    assert json_error(r.err)["kind"] == kind


def test_help_and_version_are_0(cli):
    r = cli("--version")
    assert r.code == 0 and r.out.startswith("mcpmini ")
    r = cli("--help")
    assert r.code == 0 and "call" in r.out


def test_server_crash_during_a_call_is_3(cli, fake):
    server = fake("--say", "last words")
    r = cli("call", server.cmdline, "crash")
    assert r.code == 3, r
    [line] = r.error_lines
    assert "exited with status 7" in line and "crashing on purpose last words" in line
    r = cli("--json", "call", server.cmdline, "crash")
    assert r.code == 3 and json_error(r.err)["kind"] == "connection"


def test_a_command_that_cannot_start_is_3(cli, work):
    r = cli("tools", str(work / "no-such-server") + " --flag")
    assert r.code == 3
    [line] = r.error_lines
    assert "cannot start" in line and "no-such-server" in line
    r = cli("--json", "tools", "./no-such-server")
    assert r.code == 3 and json_error(r.err)["kind"] == "connection"


def test_no_common_protocol_version_is_3(cli, fake):
    server = fake("--legacy", "--init-version", "2099-01-01")
    r = cli("--json", "info", server.cmdline)
    assert r.code == 3
    error = json_error(r.err)
    assert error["kind"] == "protocol" and "2099-01-01" in error["message"]


def test_slow_tool_with_timeout_is_124_and_cancelled_on_the_wire(cli, fake):
    server = fake()
    r = cli("--json", "--timeout", "3", "call", server.cmdline, "slow")  # 3: connecting fits
    assert r.code == 124, r
    error = json_error(r.err)
    assert error["kind"] == "timeout" and "tools/call" in error["message"]
    [call] = server.calls()
    cancels = [m for m in server.messages() if m.get("method") == "notifications/cancelled"]
    assert [c["params"]["requestId"] for c in cancels] == [call["id"]]


def test_connect_timeout_is_124(cli, fake):
    server = fake("--silent")
    r = cli("--timeout", "0.5", "info", server.cmdline)
    assert r.code == 124, r
    assert "connecting" in r.error_lines[0]


def test_timeout_from_config_entry(cli, fake, work):
    server = fake()
    cfg = work / "cfg.json"
    cfg.write_text(json.dumps({"mcpServers": {"s": server.entry(timeout=1)}}))
    r = cli("--config", cfg, "call", "s", "slow")
    assert r.code == 124, r


def test_processes_are_gone_after_each_failure(cli, fake):
    server = fake()
    assert cli("--timeout", "1", "call", server.cmdline, "slow").code == 124
    assert server.pids() and wait_until(lambda: not any(map(alive, server.pids())))


def test_a_multi_line_server_error_is_one_diagnostic_line(cli, fake):
    """A server cannot add lines of its own (a fake prompt, a fake mcpmini line) to stderr."""
    server = fake("--error-detail", "\nmcpmini: error: fake line\r\nPassword: ")
    r = cli("call", server.cmdline, "rpcerror")
    assert r.code == 1
    assert r.err.count("\n") == 1 and r.err.startswith("mcpmini: error: backend exploded"), r.err
