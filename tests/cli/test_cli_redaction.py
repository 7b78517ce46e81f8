"""One redaction step for every known secret (header values from config or -H, env values
from config or -e, values substituted from ${...}) wherever text reaches the user: --trace,
-v (the server's stderr), error messages, ``servers``. Also what --trace and -v show."""
from __future__ import annotations

import json
import os
import secrets
import sys

import pytest

from fake_server import NASTY, NASTY_RAW
from harness import WEATHER, write_json

KINDS = ["config-env", "cli-env", "config-header", "cli-header", "cli-bearer", "substituted-arg",
         "substituted-env", "substituted-default"]


@pytest.fixture(params=KINDS)
def leaky(request, fake, work, monkeypatch):
    """(argv prefix, server name, secret): a configured server "s" that repeats the secret
    on its stderr at start-up, in the ``say`` tool's result and in the ``crash`` message."""
    kind = request.param
    secret = f"s3cr3t-{kind}-{secrets.token_hex(6)}"
    argv: list[str] = []
    flags = ["--say", secret]
    entry_extra: dict = {}
    if kind == "config-env":
        flags, entry_extra = ["--echo-env", "CLI_SECRET"], {"env": {"CLI_SECRET": secret}}
    elif kind == "cli-env":
        flags, argv = ["--echo-env", "CLI_SECRET"], ["-e", f"CLI_SECRET={secret}"]
    elif kind == "config-header":
        entry_extra = {"headers": {"X-Api-Key": secret}}
    elif kind == "cli-header":
        argv = ["-H", f"X-Api-Key: {secret}"]
    elif kind == "cli-bearer":  # the token alone, as servers often log it
        argv = ["--header", f"Authorization: Bearer {secret}"]
    elif kind == "substituted-arg":
        monkeypatch.setenv("CLI_SUB", secret)
        flags = ["--say", "${CLI_SUB}"]
    elif kind == "substituted-env":
        monkeypatch.setenv("CLI_SUB", secret)
        flags, entry_extra = ["--echo-env", "CLI_TOKEN"], {"env": {"CLI_TOKEN": "${env:CLI_SUB}"}}
    elif kind == "substituted-default":
        monkeypatch.delenv("CLI_UNSET_VAR", raising=False)
        flags = ["--say", "${CLI_UNSET_VAR:-" + secret + "}"]
    cfg = write_json(work / "c.json", {"mcpServers": {"s": fake(*flags).entry(**entry_extra)}})
    return ["--config", str(cfg), *argv], secret


def test_verbose_server_stderr_is_redacted(cli, leaky):
    argv, secret = leaky
    r = cli("-v", *argv, "call", "s", "unicode")
    assert r.code == 0, r.err
    stderr_lines = [line for line in r.err.splitlines() if "[stderr]" in line]
    assert stderr_lines and any("***" in line for line in stderr_lines), r.err
    assert secret not in r.err


def test_trace_is_redacted(cli, leaky):
    argv, secret = leaky
    r = cli("--trace", "-vv", *argv, "call", "s", "say")
    assert r.code == 0, r.err
    assert secret in r.out  # the result itself is the user's data (and proves the leak exists)
    assert "said" in r.err and secret not in r.err


def test_error_messages_are_redacted(cli, leaky):
    argv, secret = leaky
    r = cli("--json", *argv, "call", "s", "crash")
    assert r.code == 3
    assert "crashing on purpose" in r.err and "***" in r.err
    assert secret not in r.err
    assert "***" in json.loads(r.err.splitlines()[-1])["error"]["message"]


def test_substituted_url_is_redacted_in_errors(cli, work, monkeypatch):
    monkeypatch.setenv("CLI_URL_KEY", "urlkey-7f3a9c")
    cfg = write_json(work / "c.json", {"mcpServers": {"web": {"url": "http://127.0.0.1:9/${CLI_URL_KEY}/mcp"}}})
    r = cli("--timeout", "5", "--config", cfg, "info", "web")
    assert r.code == 3
    assert "urlkey-7f3a9c" not in r.err and "127.0.0.1:9/***/mcp" in r.err


def test_substituted_command_is_redacted_in_errors(cli, work, monkeypatch):
    monkeypatch.setenv("CLI_BIN_DIR", "/nonexistent-private-dir-91c2")
    cfg = write_json(work / "c.json", {"mcpServers": {"s": {"command": "${CLI_BIN_DIR}/server"}}})
    r = cli("--config", cfg, "tools", "s")
    assert r.code == 3 and "cannot start" in r.err
    assert "nonexistent-private-dir-91c2" not in r.err


def test_servers_redacts_known_secrets_written_in_the_file(cli, fake, work):
    """A token written literally in a header or env value is a known secret, so ``servers``
    does not print it where the same token also appears in a URL or an argument."""
    entry = fake("--say", "lit-env-secret-4411").entry(env={"CLI_TOKEN": "lit-env-secret-4411"})
    cfg = write_json(work / "c.json", {"mcpServers": {
        "local": entry,
        "web": {"url": "https://example.invalid/mcp/lit-hdr-secret-5522",
                "headers": {"Authorization": "Bearer lit-hdr-secret-5522"}}}})
    for argv in (["servers"], ["servers", "--json"]):
        r = cli("--config", cfg, *argv)
        assert r.code == 0, r.err
        assert "local" in r.out and "web" in r.out
        assert "lit-env-secret-4411" not in r.out and "lit-hdr-secret-5522" not in r.out, r.out


def test_servers_never_expands_variables(cli, work, monkeypatch):
    monkeypatch.setenv("CLI_HIDDEN", "hidden-value-3b1")
    cfg = write_json(work / "c.json", {"mcpServers": {"w": {"url": "https://example.invalid/${CLI_HIDDEN}"}}})
    r = cli("--config", cfg, "servers", "--json")
    assert "hidden-value-3b1" not in r.out + r.err and "${CLI_HIDDEN}" in r.out


def test_secret_with_json_special_characters_is_redacted_in_trace(cli, fake):
    """A password with a quote and a backslash appears JSON-escaped in a traced message."""
    secret = 'pa"ss\\wo\u00f6rd-7c1e'
    r = cli("--trace", "-vv", "-e", f"CLI_PW={secret}", "call", fake("--echo-env", "CLI_PW").cmdline, "say")
    assert r.code == 0, r.err
    assert r.out == f"said {secret}\n"
    traced = [json.loads(line.split(" ", 4)[4]) for line in r.err.splitlines()
              if line.startswith("mcpmini: trace ")]
    texts = [m["result"]["content"][0]["text"] for m in traced if "content" in (m.get("result") or {})]
    assert texts == ["said ***"], texts


def test_prompt_and_tool_arguments_are_not_secrets(cli):
    """Only secrets are replaced: the city a user asked about is not one."""
    weather = f"{sys.executable} {WEATHER}"
    r = cli("prompt", weather, "umbrella_advice", "city=Atlantis")
    assert r.code == 1
    assert "Unknown city 'Atlantis'" in r.error_lines[0]
    r = cli("--trace", "prompt", weather, "umbrella_advice", "city=Hangzhou")
    assert r.code == 0
    assert '"arguments": {"city": "Hangzhou"}' in r.err
    r = cli("--trace", "call", weather, "get_forecast", "city=Hangzhou")
    assert '"arguments": {"city": "Hangzhou"}' in r.err


# -- What --trace and -v show -------------------------------------------------------------------

def test_trace_prints_every_message_both_ways_one_line_each(cli, fake):
    server = fake()
    r = cli("--trace", "call", server.cmdline, "typed", "zip=1")
    assert r.code == 0, r.err
    lines = r.err.splitlines()
    assert all(line.startswith("mcpmini: trace ") for line in lines), lines
    sent = [line for line in lines if " -> " in line]
    received = [line for line in lines if " <- " in line]
    assert len(sent) == len(server.messages())  # every message the server got, and only those
    assert len(received) >= 3                    # discover, tools/list, tools/call results
    label = lines[0].split()[2]
    assert all(line.split()[2] == label for line in lines)  # the server's name on each line
    cut = [line for line in received if "tools/list" not in line and "chars; -vv prints it whole" in line]
    assert cut, "the long tools/list result is cut"


def test_trace_with_vv_prints_messages_whole(cli, fake):
    r = cli("--trace", "-vv", "tools", fake().cmdline)
    assert r.code == 0, r.err
    traced = [line.split(" ", 4)[4] for line in r.err.splitlines() if line.startswith("mcpmini: trace ")]
    messages = [json.loads(text) for text in traced]  # whole, hence valid JSON
    assert any("tools" in (m.get("result") or {}) for m in messages)


def test_trace_escapes_control_characters(cli, fake):
    r = cli("--trace", "call", fake().cmdline, "controls")
    assert r.code == 0
    for raw in NASTY_RAW:
        assert raw not in r.err, repr(raw)


def test_verbose_shows_era_and_why_and_server_stderr(cli, fake):
    r = cli("-v", "tools", fake("--legacy", "--say", "hello from stderr").cmdline)
    assert r.code == 0, r.err
    assert "server/discover answered -32601: legacy, initialize 2025-11-25" in r.err
    assert f"[stderr] {os.path.basename(sys.executable)}: say hello from stderr" in r.err


def test_verbose_shows_modern_era(cli, fake):
    r = cli("-v", "tools", fake().cmdline)
    assert "server/discover answered with 2026-07-28: modern" in r.err


def test_verbose_shows_progress(cli, fake):
    r = cli("-v", "call", fake().cmdline, "progress")
    assert r.code == 0, r.err
    assert "progress 1/2 50% step 1" in r.err and "progress 2/2 100% step 2" in r.err
    r = cli("call", fake().cmdline, "progress")
    assert r.code == 0 and r.err == ""  # quiet without -v


def test_verbose_server_stderr_is_made_visible(cli, fake):
    r = cli("-v", "tools", fake("--say", NASTY).cmdline)
    assert r.code == 0
    assert f"[stderr] {os.path.basename(sys.executable)}: say A\\x1b]0;pwned-title\\x07B" in r.err
    for raw in NASTY_RAW:
        assert raw not in r.err, repr(raw)
