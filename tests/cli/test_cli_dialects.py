"""Every common MCP config file read as it is (issue 15, part 4): one fixture per client's
documented format (in ``dialects/``; ``__PYTHON__``/``__FAKE__``/``__PROJECT__`` stand for the
fake server and the project folder), and ``servers --discover`` over their per-OS places."""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import mcpmini
from harness import FAKE_SERVER

DIALECTS = Path(__file__).resolve().parent / "dialects"
TOML = sys.version_info >= (3, 11)


def place(fixture: str, dest: Path, project: Path | None = None) -> Path:
    """Copy a fixture to ``dest`` with the fake server (and project folder) filled in."""
    text = (DIALECTS / fixture).read_text(encoding="utf-8")
    for token, value in (("__PYTHON__", sys.executable), ("__FAKE__", str(FAKE_SERVER)),
                         ("__PROJECT__", str(project or dest.parent))):
        text = text.replace(token, json.dumps(value)[1:-1])
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(text, encoding="utf-8")
    return dest


def whoami(cli, *argv) -> dict:
    r = cli(*argv, "whoami")
    assert r.code == 0, r.err
    return json.loads(r.out)


def rows(cli, *argv) -> dict[str, dict]:
    r = cli(*argv, "--json")
    assert r.code == 0, r.err
    return {row["name"]: row for row in json.loads(r.out)}


def test_claude_desktop(cli, work):
    cfg = place("claude_desktop_config.json", work / "claude_desktop_config.json")
    info = whoami(cli, "--config", cfg, "call", "desktop")
    assert info["name"] == "desktop" and info["env"] == {"CLI_TOKEN": "desktop-token"}


def test_claude_code_project_file(cli, work, monkeypatch):
    monkeypatch.delenv("CLI_DIALECT_KEY", raising=False)
    cfg = place("claude_code.mcp.json", work / "elsewhere" / ".mcp.json")
    assert whoami(cli, "--config", cfg, "call", "code")["env"] == {"CLI_KEY": "fallback-key"}
    remote = rows(cli, "--config", cfg, "servers")["code-remote"]
    assert (remote["transport"], remote["target"]) == ("http", "https://mcp.example.com/mcp")


def test_claude_json_user_and_this_projects_entries(cli, work, tmp_path, monkeypatch):
    cfg = place("claude.json", tmp_path / "home" / ".claude.json", project=work)
    (work / "sub").mkdir()
    monkeypatch.chdir(work / "sub")                       # the project's entries apply below it too
    assert set(rows(cli, "--config", cfg, "servers")) == {"user-scope", "local-scope"}
    assert whoami(cli, "--config", cfg, "call", "local-scope")["name"] == "local-scope"
    monkeypatch.chdir(tmp_path)                           # outside the project: user scope only
    assert set(rows(cli, "--config", cfg, "servers")) == {"user-scope"}


def test_cursor_env_file_user_home_and_the_project_root(cli, work, tmp_path):
    project = tmp_path / "proj"
    cfg = place("cursor.mcp.json", project / ".cursor" / "mcp.json")
    (project / ".env").write_text("# secrets\nexport CLI_FROM_FILE='secret-from-file'\n"
                                  "CLI_OVERRIDE=from-env-file\n")
    info = whoami(cli, "--config", cfg, "call", "cursor")
    assert info["argv"][-1] == str(project)               # ${workspaceFolder}: the project root
    assert info["env"] == {"CLI_HOME": str(tmp_path / "home"), "CLI_FROM_FILE": "secret-from-file",
                           "CLI_OVERRIDE": "from-env-block"}   # "env" wins over the envFile
    r = cli("--config", cfg, "--trace", "call", "cursor", "whoami")
    assert "secret-from-file" not in r.err                # an env file's values are secrets


def test_vscode_jsonc_inputs_without_a_terminal_name_the_input(cli, work, monkeypatch):
    monkeypatch.setenv("CLI_DIALECT_ENV", "from-env")
    cfg = place("vscode.mcp.json", work / ".vscode" / "mcp.json")
    r = cli("-v", "--config", cfg, "call", "vscode", "whoami")
    assert r.code == 2
    [line] = r.error_lines
    assert "${input:api-key}" in line and "Weather API Key" in line and str(cfg) in line
    assert "ignored the unknown key(s) dev" in r.err      # at -v, never an error
    assert rows(cli, "--config", cfg, "servers")["vscode-remote"]["transport"] == "http"


def on_a_terminal(work: Path) -> Any:
    """``mcpmini call vscode whoami`` with the VS Code fixture, its controlling terminal a pty
    (a ``terminal_harness.Screen``; its stdout and stderr are pipes)."""
    from terminal_harness import Screen   # POSIX only
    cfg = place("vscode.mcp.json", work / ".vscode" / "mcp.json")
    return Screen("--config", cfg, "call", "vscode", "whoami", stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                  env={"CLI_DIALECT_ENV": "e"})


@pytest.mark.skipif(os.name != "posix", reason="pty")
def test_vscode_inputs_are_asked_on_the_terminal_password_unechoed(work):
    s = on_a_terminal(work)
    try:
        for prompt, answer in (("Weather API Key: ", "typed-secret-key\r"), ("Region: ", "eu-west\n")):
            s.expect(prompt)
            s.type(answer)
        out, err = s.proc.communicate(timeout=60)
        time.sleep(0.3)   # the pump reads what is left
    finally:
        s.close()
    assert s.proc.returncode == 0, err
    assert json.loads(out)["env"] == {"CLI_KEY": "typed-secret-key", "CLI_REGION": "eu-west",
                                      "CLI_WS": str(work), "CLI_ENV": "e"}
    assert "typed-secret-key" not in s.text and "eu-west" in s.text   # the password is not echoed


@pytest.mark.skipif(os.name != "posix", reason="pty")
def test_ctrl_c_at_an_input_question_exits_130(work):
    s = on_a_terminal(work)
    try:
        s.expect("Weather API Key: ")
        s.proc.send_signal(signal.SIGINT)
        out, err = s.proc.communicate(timeout=20)
    finally:
        s.close()
    assert s.proc.returncode == 130 and b"mcpmini: error: interrupted" in err and b"Traceback" not in err


def test_windsurf_server_url_and_disabled_entries(cli, work, monkeypatch):
    monkeypatch.setenv("CLI_DIALECT_ENV", "surfing")
    cfg = place("windsurf.mcp_config.json", work / "mcp_config.json")
    servers = rows(cli, "--config", cfg, "servers")
    assert set(servers) == {"surf", "surf-remote"}        # "disabled": true is left out
    assert (servers["surf-remote"]["transport"], servers["surf-remote"]["target"]) == (
        "http", "https://mcp.example.com/mcp")
    assert whoami(cli, "--config", cfg, "call", "surf")["env"] == {"CLI_ENV": "surfing"}


@pytest.mark.skipif(not TOML, reason="TOML needs Python 3.11 (tomllib)")
def test_codex_toml(cli, work, monkeypatch):
    monkeypatch.setenv("CLI_DIALECT_ENV", "passed-on")
    cfg = place("codex.config.toml", work / ".codex" / "config.toml")
    assert whoami(cli, "--config", cfg, "call", "codex")["env"] == {"CLI_TOKEN": "codex-token",
                                                                    "CLI_DIALECT_ENV": "passed-on"}
    servers = mcpmini.load_config([str(cfg)], discover=False)
    assert set(servers) == {"codex", "figma"}              # enabled = false is left out
    assert servers["codex"].timeout == 45
    assert servers["figma"].url == "https://mcp.figma.com/mcp"
    assert servers["figma"].headers == {"X-Figma-Region": "us-east-1",
                                        "Authorization": "Bearer ${CLI_DIALECT_TOKEN}"}


@pytest.mark.skipif(TOML, reason="Python 3.10 only")
def test_codex_toml_on_python_3_10_is_a_clear_error(cli, work):
    cfg = place("codex.config.toml", work / "config.toml")
    r = cli("--config", cfg, "servers")
    assert r.code == 2 and "needs Python 3.11" in r.error_lines[0] and str(cfg) in r.error_lines[0]


def test_servers_discover_lists_the_other_clients_configs(cli, work, tmp_path, monkeypatch):
    home, xdg = tmp_path / "home", tmp_path / "xdg-config"
    monkeypatch.delenv("CODEX_HOME", raising=False)
    places = {"Claude Desktop": place("claude_desktop_config.json", xdg / "Claude" / "claude_desktop_config.json"),
              "Claude Code": place("claude.json", home / ".claude.json", project=work),
              "Cursor": place("cursor.mcp.json", home / ".cursor" / "mcp.json"),
              "Windsurf": place("windsurf.mcp_config.json", home / ".codeium" / "windsurf" / "mcp_config.json"),
              "Codex": place("codex.config.toml", home / ".codex" / "config.toml"),
              "VS Code": place("vscode.mcp.json", work / ".vscode" / "mcp.json")}
    big = home / ".cursor" / "mcp.json"
    shutil.copy(big, home / "cursor-backup.json")
    big.write_text(" " * (mcpmini.MAX_CONFIG_SIZE + 1))    # oversized: skipped with a warning
    r = cli("servers", "--discover", "--json")
    assert r.code == 0, r.err
    found = {row["name"]: row for row in json.loads(r.out)}
    expected = {"desktop": "Claude Desktop", "user-scope": "Claude Code", "local-scope": "Claude Code",
                "surf": "Windsurf", "surf-remote": "Windsurf", "vscode": "VS Code", "vscode-remote": "VS Code"}
    if TOML:
        expected.update(codex="Codex", figma="Codex")
    assert {name: row["client"] for name, row in found.items()} == expected
    for name, client in expected.items():
        assert os.path.samefile(found[name]["source"], places[client])
    assert not found["vscode"]["trusted"] and found["desktop"]["trusted"]   # a project file: the gate
    assert str(big) in r.err and "skipped" in r.err
    assert cli("trust", work / ".vscode" / "mcp.json", "--yes").code == 0
    assert rows(cli, "servers", "--discover")["vscode"]["trusted"]
    assert "NOT APPROVED" not in cli("servers", "--discover").out


def test_servers_discover_as_text_names_the_client_and_the_file_to_trust(cli, work):
    cfg = place("vscode.mcp.json", work / ".vscode" / "mcp.json")
    r = cli("servers", "--discover")
    lines = {line.split("\t")[0]: line.split("\t") for line in r.out.splitlines()}
    assert lines["vscode"][3:] == [str(cfg), f"NOT APPROVED (mcpmini trust {cfg})", "VS Code"]
    assert lines["vscode-remote"][5:] == ["VS Code", "not logged in"]
