"""Global options are accepted before or after the command, with the same effect."""
from __future__ import annotations

import json

import pytest

from harness import write_json


@pytest.mark.parametrize("where", ["before", "after-command", "after-arguments"])
def test_json_anywhere(cli, fake, where):
    server = fake()
    argv = {"before": ["--json", "call", server.cmdline, "typed", "zip=1"],
            "after-command": ["call", "--json", server.cmdline, "typed", "zip=1"],
            "after-arguments": ["call", server.cmdline, "typed", "zip=1", "--json"]}[where]
    r = cli(*argv)
    assert r.code == 0, r.err
    assert json.loads(r.out)["content"][0]["text"] == '{"zip": "1"}'


def test_config_after_the_command(cli, fake, work):
    cfg = write_json(work / "c.json", {"mcpServers": {"named": fake().entry()}})
    r = cli("call", "named", "whoami", "--config", cfg)
    assert r.code == 0, r.err


def test_repeated_config_before_and_after_are_both_used(cli, fake, work):
    a = write_json(work / "a.json", {"mcpServers": {"one": fake(label="1").entry()}})
    b = write_json(work / "b.json", {"mcpServers": {"two": fake(label="2").entry()}})
    r = cli("--config", a, "servers", "--config", b, "--json")
    assert r.code == 0, r.err
    assert sorted(row["name"] for row in json.loads(r.out)) == ["one", "two"]


def test_repeated_env_before_and_after_are_both_used(cli, fake):
    r = cli("-e", "CLI_BEFORE=1", "call", fake().cmdline, "whoami", "-e", "CLI_AFTER=2")
    assert r.code == 0, r.err
    assert json.loads(r.out)["env"] == {"CLI_BEFORE": "1", "CLI_AFTER": "2"}


def test_timeout_after_the_command(cli, fake):
    r = cli("call", fake().cmdline, "slow", "--timeout", "1")
    assert r.code == 124, r


def test_env_after_the_command(cli, fake):
    r = cli("call", fake().cmdline, "whoami", "-e", "CLI_X=1", "--env", "CLI_Y=a=b")
    assert r.code == 0, r.err
    assert json.loads(r.out)["env"] == {"CLI_X": "1", "CLI_Y": "a=b"}


@pytest.mark.parametrize("argv_tail", [["--protocol", "legacy"], ["--protocol=legacy"]])
def test_protocol_after_the_command(cli, fake, argv_tail):
    r = cli("info", fake().cmdline, *argv_tail)
    assert r.code == 0, r.err
    assert "era:          legacy" in r.out and "initialize 2025-11-25" in r.out


def test_trace_and_verbose_after_the_command(cli, fake):
    r = cli("tools", fake().cmdline, "--trace", "-v")
    assert r.code == 0, r.err
    assert "mcpmini: trace " in r.err and "server/discover answered" in r.err


def test_value_before_command_is_kept_when_not_repeated_after(cli, fake):
    # the subcommand's own copy of --timeout must not reset the one given before it
    r = cli("--timeout", "1", "call", fake().cmdline, "slow", "--json")
    assert r.code == 124, r


def test_bad_option_after_the_command_is_usage(cli, fake):
    r = cli("tools", fake().cmdline, "--no-such-option")
    assert r.code == 2
    assert "--no-such-option" in r.error_lines[0]
