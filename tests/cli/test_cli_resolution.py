"""SERVER resolution: a configured name, then an http(s) URL, then a command line (whitespace
or '/'), else exit 2 listing the configured names."""
from __future__ import annotations

import json
import shlex

from harness import write_json


def test_configured_name_is_used(cli, fake, work):
    server = fake("--name", "from-config")
    cfg = write_json(work / "cfg.json", {"mcpServers": {"demo": server.entry()}})
    r = cli("--config", cfg, "call", "demo", "whoami")
    assert r.code == 0, r.err
    assert json.loads(r.out)["name"] == "from-config"


def test_configured_name_wins_over_command_line_reading(cli, fake, work):
    # "team/tool x" has a '/' and a space, so it would be a command line, but it is a
    # configured name and that comes first.
    server = fake("--name", "configured-one")
    cfg = write_json(work / "cfg.json", {"mcpServers": {"team/tool x": server.entry()}})
    r = cli("--config", cfg, "info", "team/tool x")
    assert r.code == 0, r.err
    assert "configured-one" in r.out


def test_name_only_in_untrusted_file_says_how_to_trust(cli, fake, work):
    server = fake()
    write_json(work / ".mcp.json", {"mcpServers": {"proj": server.entry()}})
    r = cli("call", "proj", "whoami")
    assert r.code == 2
    [line] = r.error_lines
    assert "'proj'" in line and "not yet approved" in line
    assert "mcpmini trust" in line and ".mcp.json" in line
    assert not server.started()


def test_url_is_http_not_a_command_line(cli, work):
    # The URL contains '/', so without the URL rule it would be run as a program.
    r = cli("--timeout", "5", "info", "http://127.0.0.1:9/mcp")
    assert r.code == 3, r.err
    [line] = r.error_lines
    assert "cannot start" not in line and "unknown server" not in line
    assert "http://127.0.0.1:9/mcp" in line


def test_url_runs_over_http(cli, weather_url):
    r = cli("--timeout", "20", "call", weather_url, "get_forecast", "city=Hangzhou")
    assert r.code == 0, r.err
    assert "Hangzhou (杭州)" in r.out


def test_command_line_with_spaces_runs_over_stdio(cli, fake):
    server = fake("--name", "by-cmdline")
    r = cli("call", server.cmdline, "whoami")
    assert r.code == 0, r.err
    assert json.loads(r.out)["name"] == "by-cmdline"
    assert server.argv[2:] == json.loads(r.out)["argv"]  # split with shlex, quoting honoured


def test_command_line_with_quoted_argument(cli, fake):
    server = fake("--name", "two words")
    r = cli("call", server.cmdline, "whoami")
    assert r.code == 0, r.err
    assert json.loads(r.out)["name"] == "two words"


def test_path_without_spaces_is_a_command(cli, fake, work):
    server = fake("--name", "dot-slash")
    script = work / "server"
    script.write_text(f"#!/bin/sh\nexec {shlex.join(server.argv)}\n")
    script.chmod(0o755)
    r = cli("call", "./server", "whoami")
    assert r.code == 0, r.err
    assert json.loads(r.out)["name"] == "dot-slash"


def test_unknown_name_exits_2_listing_configured_names(cli, fake, user_config, work):
    write_json(user_config, {"mcpServers": {"alpha": fake(label="a").entry(),
                                            "beta": fake(label="b").entry()}})
    r = cli("tools", "gamma")
    assert r.code == 2
    [line] = r.error_lines
    assert "'gamma'" in line and "alpha" in line and "beta" in line
    r = cli("--json", "tools", "gamma")
    assert json.loads(r.err.splitlines()[-1])["error"]["kind"] == "usage"


def test_unknown_name_without_any_config(cli):
    r = cli("tools", "weather")
    assert r.code == 2
    assert "unknown server 'weather'" in r.err


def test_bad_command_line_quoting_is_usage(cli):
    r = cli("tools", "python3 'unterminated")
    assert r.code == 2
    assert "cannot split" in r.err


def test_ad_hoc_env_reaches_command_line_server(cli, fake):
    r = cli("-e", "CLI_ADHOC=hello", "call", fake().cmdline, "whoami")
    assert r.code == 0, r.err
    assert json.loads(r.out)["env"] == {"CLI_ADHOC": "hello"}


def test_server_gets_allowlisted_environment_only(cli, fake, monkeypatch):
    monkeypatch.setenv("CLI_NOT_PASSED", "leak")
    r = cli("call", fake().cmdline, "whoami")
    assert r.code == 0, r.err
    assert "CLI_NOT_PASSED" not in json.loads(r.out)["env"]



def test_ad_hoc_command_line_is_taken_literally(cli, fake, monkeypatch):
    """${...} and $$ are config-file syntax: a command line or -e/-H value typed by the user
    reaches the server exactly as given (a password may contain "$$")."""
    monkeypatch.delenv("CLI_NOPE", raising=False)
    server = fake("--say", "pw=a$$b ${CLI_NOPE}", "--echo-env", "CLI_PW")
    r = cli("-e", "CLI_PW=c$$d${CLI_NOPE}", "call", server.cmdline, "say")
    assert r.code == 0, r.err
    assert r.out == "said pw=a$$b ${CLI_NOPE} c$$d${CLI_NOPE}\n"


def test_ad_hoc_env_on_a_configured_server_is_taken_literally(cli, fake, work):
    cfg = write_json(work / "c.json", {"mcpServers": {"s": fake("--echo-env", "CLI_PW").entry()}})
    r = cli("--config", cfg, "-e", "CLI_PW=c$$d", "call", "s", "say")
    assert r.code == 0, r.err
    assert r.out == "said c$$d\n"
