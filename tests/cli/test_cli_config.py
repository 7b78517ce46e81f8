"""Config files: precedence and whole-entry replacement, ${...} expansion, relative cwd,
broken discovered and explicit files, "servers"."""
from __future__ import annotations

import json
import os

import pytest

from harness import ROOT, write_json


def approve(cli, path) -> None:
    r = cli("trust", path, "--yes")
    assert r.code == 0, r.err


def whoami(cli, *argv) -> dict:
    r = cli(*argv, "whoami")
    assert r.code == 0, r.err
    return json.loads(r.out)


# -- Precedence -------------------------------------------------------------------------------

LEVELS = ["user", "dot-project", "project", "env", "config-1", "config-2"]


@pytest.fixture
def layered(cli, fake, work, user_config, monkeypatch, tmp_path):
    """One file per level; level k defines "lvl<k>" and "pair<k>" (also defined at k+1 as
    "pair<k>"), and every level defines "top"."""
    paths = {"user": user_config, "dot-project": work / ".mcp.json", "project": work / "mcp.json",
             "env": tmp_path / "env.json", "config-1": tmp_path / "c1.json",
             "config-2": tmp_path / "c2.json"}
    for k, level in enumerate(LEVELS):
        servers = {"top": fake("--name", level, label=level).entry(),
                   f"lvl{k}": fake("--name", level, label=level).entry(),
                   f"pair{k}": fake("--name", level, label=level).entry()}
        if k:
            servers[f"pair{k - 1}"] = fake("--name", level, label=level).entry()
        write_json(paths[level], {"mcpServers": servers})
    approve(cli, paths["dot-project"])
    approve(cli, paths["project"])
    monkeypatch.setenv("MCPMINI_CONFIG", str(paths["env"]))
    return paths


def test_precedence_each_level_beats_the_one_below(cli, layered):
    argv = ["--config", layered["config-1"], "--config", layered["config-2"]]
    r = cli("servers", "--json", *argv)
    assert r.code == 0, r.err
    rows = {row["name"]: row for row in json.loads(r.out)}
    assert os.path.samefile(rows["top"]["source"], layered["config-2"])
    for k, level in enumerate(LEVELS[:-1]):  # pair<k> is defined at k and k+1: k+1 wins
        assert os.path.samefile(rows[f"pair{k}"]["source"], layered[LEVELS[k + 1]]), level
    for k, level in enumerate(LEVELS):      # every file is read
        assert os.path.samefile(rows[f"lvl{k}"]["source"], layered[level])
    # and the winner is what runs
    assert whoami(cli, *argv, "call", "top")["name"] == "config-2"
    assert whoami(cli, *argv, "call", "pair0")["name"] == "dot-project"


def test_config_files_win_in_command_line_order(cli, layered):
    argv = ["--config", layered["config-2"], "--config", layered["config-1"]]
    assert whoami(cli, *argv, "call", "top")["name"] == "config-1"


def test_a_later_entry_replaces_the_earlier_one_whole(cli, fake, work, user_config):
    low = fake("--name", "low", label="low")
    elsewhere = work.parent / "home"
    write_json(user_config, {"mcpServers": {"s": low.entry(env={"CLI_FROM_LOW": "1"},
                                                           cwd=str(elsewhere), timeout=1)}})
    high = fake("--name", "high", label="high")
    cfg = write_json(work / "sub" / "high.json", {"mcpServers": {"s": {"command": high.argv[0],
                                                                       "args": high.argv[1:]}}})
    info = whoami(cli, "--config", cfg, "call", "s")
    assert info["name"] == "high"
    assert info["env"] == {}                      # no env merged from the lower entry
    assert os.path.samefile(info["cwd"], work)    # nor its cwd
    assert not low.started()
    # nor its timeout (1 s): a 2-second call succeeds
    r = cli("--config", cfg, "call", "s", "slow", "seconds:=2")
    assert r.code == 0, r


def test_same_file_twice_is_read_once(cli, fake, work):
    # the over-an-hour timeout warns once per reading of the file
    cfg = write_json(work / "c.json", {"mcpServers": {"s": fake().entry(timeout=5000)}})
    os.symlink(cfg, work / "link.json")
    r = cli("--config", cfg, "--config", work / "link.json", "--config", cfg, "servers", "--json")
    assert r.code == 0, r.err
    assert [row["name"] for row in json.loads(r.out)] == ["s"]
    assert r.err.count("milliseconds") == 1, r.err


def test_vscode_servers_key(cli, fake, work):
    cfg = write_json(work / "vscode.json", {"servers": {"v": fake("--name", "vs").entry(type="stdio")}})
    assert whoami(cli, "--config", cfg, "call", "v")["name"] == "vs"


def test_timeout_over_an_hour_warns_about_milliseconds(cli, fake, work):
    cfg = write_json(work / "c.json", {"mcpServers": {"s": fake().entry(timeout=30000)}})
    r = cli("--config", cfg, "servers")
    assert r.code == 0
    assert "milliseconds" in r.err and "'s'" in r.err


# -- ${...} expansion ---------------------------------------------------------------------------

@pytest.mark.parametrize("written, expected", [
    ("${CLI_V}", "value-of-v"),
    ("pre-${CLI_V}-post", "pre-value-of-v-post"),
    ("${CLI_UNSET:-fallback}", "fallback"),
    ("${CLI_V:-fallback}", "value-of-v"),
    ("${CLI_UNSET:-}", ""),
    ("${env:CLI_V}", "value-of-v"),
    ("$${CLI_V}", "${CLI_V}"),
    ("cost: 5$$", "cost: 5$"),
    ("$HOME", "$HOME"),  # only ${...} is expanded
])
def test_expansion_in_args_env_and_command(cli, fake, work, monkeypatch, written, expected):
    monkeypatch.setenv("CLI_V", "value-of-v")
    monkeypatch.delenv("CLI_UNSET", raising=False)
    server = fake()
    entry = server.entry(env={"CLI_EXPANDED": written})
    entry["args"] = entry["args"] + ["--say", written]
    cfg = write_json(work / "c.json", {"mcpServers": {"s": entry}})
    info = whoami(cli, "--config", cfg, "call", "s")
    assert info["env"]["CLI_EXPANDED"] == expected
    assert info["argv"][-1] == expected


def test_expansion_in_command(cli, fake, work, monkeypatch):
    server = fake("--name", "cmd")
    monkeypatch.setenv("CLI_PY", server.argv[0])
    cfg = write_json(work / "c.json", {"mcpServers": {"s": {"command": "${CLI_PY}", "args": server.argv[1:]}}})
    assert whoami(cli, "--config", cfg, "call", "s")["name"] == "cmd"


def test_workspace_folder_is_the_config_files_folder(cli, fake, work, tmp_path):
    entry = fake().entry(env={"CLI_WS": "${workspaceFolder}/data"}, cwd="${workspaceFolder}")
    cfg = write_json(tmp_path / "elsewhere" / "c.json", {"mcpServers": {"s": entry}})
    info = whoami(cli, "--config", cfg, "call", "s")
    folder = str(tmp_path / "elsewhere")
    assert info["env"]["CLI_WS"] == folder + "/data"
    assert os.path.samefile(info["cwd"], folder)


def test_input_variable_is_an_error_naming_it(cli, fake, work):
    server = fake()
    cfg = write_json(work / "c.json", {"mcpServers": {"s": server.entry(env={"CLI_K": "${input:apiKey}"})}})
    r = cli("call", "--config", cfg, "s", "whoami")
    assert r.code == 2
    [line] = r.error_lines
    assert "input:apiKey" in line and "'s'" in line and str(cfg) in line
    assert not server.started()


@pytest.mark.parametrize("field", ["args", "env", "command", "cwd"])
def test_unset_variable_names_variable_server_and_file(cli, fake, work, monkeypatch, field):
    monkeypatch.delenv("CLI_NOT_SET", raising=False)
    server = fake()
    entry = server.entry()
    if field == "args":
        entry["args"] = entry["args"] + ["--say", "token=${CLI_NOT_SET}"]
    elif field == "env":
        entry["env"] = {"CLI_TOKEN": "Bearer ${CLI_NOT_SET}"}
    elif field == "command":
        entry["command"] = "${CLI_NOT_SET}/python3"
    else:
        entry["cwd"] = "${CLI_NOT_SET}/dir"
    cfg = write_json(work / "c.json", {"mcpServers": {"needs-var": entry}})
    r = cli("--json", "call", "--config", cfg, "needs-var", "whoami")
    assert r.code == 2, r
    [line] = r.error_lines
    assert "CLI_NOT_SET" in line and "'needs-var'" in line and str(cfg) in line
    assert json.loads(r.err.splitlines()[-1])["error"]["kind"] == "config"
    assert not server.started()  # never started with a literal or empty value


def test_unset_variable_in_url_and_headers(cli, work, monkeypatch):
    monkeypatch.delenv("CLI_NOT_SET", raising=False)
    cfg = write_json(work / "c.json", {"mcpServers": {
        "u": {"url": "http://127.0.0.1:9/${CLI_NOT_SET}"},
        "h": {"url": "http://127.0.0.1:9/mcp", "headers": {"Authorization": "Bearer ${CLI_NOT_SET}"}}}})
    for name in ("u", "h"):
        r = cli("--config", cfg, "info", name)
        assert r.code == 2, r
        assert "CLI_NOT_SET" in r.err and f"'{name}'" in r.err


def test_expansion_happens_only_for_the_server_used(cli, fake, work, monkeypatch):
    monkeypatch.delenv("CLI_NOT_SET", raising=False)
    cfg = write_json(work / "c.json", {"mcpServers": {
        "broken": fake(label="b").entry(env={"CLI_T": "${CLI_NOT_SET}"}),
        "fine": fake("--name", "fine", label="f").entry()}})
    assert whoami(cli, "--config", cfg, "call", "fine")["name"] == "fine"
    r = cli("--config", cfg, "servers")
    assert r.code == 0 and "broken" in r.out


def test_servers_shows_entries_as_written(cli, fake, work, monkeypatch):
    monkeypatch.setenv("CLI_SECRET_PATH", "expanded-value")
    server = fake()
    entry = server.entry()
    entry["args"] = entry["args"] + ["--say", "${CLI_SECRET_PATH}", "two words"]
    cfg = write_json(work / "c.json", {"mcpServers": {
        "s": entry, "web": {"url": "https://example.invalid/mcp?k=${CLI_SECRET_PATH}"}}})
    r = cli("--config", cfg, "servers")
    assert r.code == 0, r.err
    lines = {line.split("\t")[0]: line.split("\t") for line in r.out.splitlines()}
    assert lines["s"][1] == "stdio" and "'${CLI_SECRET_PATH}' 'two words'" in lines["s"][2]
    assert lines["web"][1:3] == ["http", "https://example.invalid/mcp?k=${CLI_SECRET_PATH}"]
    assert lines["s"][3] == str(cfg) and lines["s"][4] == "trusted"
    assert "expanded-value" not in r.out


# -- cwd --------------------------------------------------------------------------------------

def test_relative_cwd_is_relative_to_the_config_file(cli, fake, work, tmp_path):
    (tmp_path / "proj" / "srv").mkdir(parents=True)
    cfg = write_json(tmp_path / "proj" / "c.json", {"mcpServers": {"s": fake().entry(cwd="srv")}})
    (work / "srv").mkdir()  # a decoy relative to the current directory
    info = whoami(cli, "--config", cfg, "call", "s")
    assert os.path.samefile(info["cwd"], tmp_path / "proj" / "srv")


def test_relative_config_path_and_cwd_dot(cli, fake, work):
    (work / "cfgdir").mkdir()
    write_json(work / "cfgdir" / "c.json", {"mcpServers": {"s": fake().entry(cwd=".")}})
    info = whoami(cli, "--config", "cfgdir/c.json", "call", "s")
    assert os.path.samefile(info["cwd"], work / "cfgdir")


def test_examples_config_works_from_another_directory(cli, work):
    r = cli("--config", ROOT / "examples" / "mcp.json", "call", "weather", "get_forecast", "city=Hangzhou")
    assert r.code == 0, r.err
    assert "Hangzhou" in r.out and "DEMO DATA" in r.out


# -- Broken files -------------------------------------------------------------------------------

@pytest.mark.parametrize("content, problem", [
    ("{not json", "not a readable JSON file"),
    ('{"mcpServers": []}', "mcpServers"),
    ('{"mcpServers": {"x": {"args": []}}}', "needs \"command\""),
    ('["a"]', "mcpServers"),
])
def test_broken_user_file_is_reported_and_skipped(cli, fake, work, user_config, content, problem):
    user_config.parent.mkdir(parents=True, exist_ok=True)
    user_config.write_text(content)
    good = write_json(work / "good.json", {"mcpServers": {"g": fake("--name", "good").entry()}})
    r = cli("--config", good, "call", "g", "whoami")
    assert r.code == 0, r.err
    assert json.loads(r.out)["name"] == "good"
    warnings = [line for line in r.err.splitlines() if str(user_config) in line]
    assert warnings and problem in warnings[0] and "skipped" in warnings[0]


def test_broken_project_file_next_to_a_good_one(cli, fake, work):
    write_json(work / "mcp.json", {"mcpServers": {"p": fake("--name", "proj").entry()}})
    approve(cli, work / "mcp.json")
    (work / ".mcp.json").write_text('{"mcpServers": {"bad": 5}}')
    r = cli("call", "p", "whoami")
    assert r.code == 0, r.err
    assert json.loads(r.out)["name"] == "proj"
    assert ".mcp.json" in r.err and "'bad'" in r.err


@pytest.mark.parametrize("content", [None, "{not json", '{"mcpServers": {"x": {"command": 5}}}',
                                     '{"nothing": {}}'])
@pytest.mark.parametrize("how", ["--config", "MCPMINI_CONFIG"])
def test_broken_or_missing_explicit_file_is_2(cli, fake, work, user_config, monkeypatch, content, how):
    write_json(user_config, {"mcpServers": {"g": fake().entry()}})
    path = work / "explicit.json"
    if content is not None:
        path.write_text(content)
    argv = ["call", "g", "whoami"]
    if how == "--config":
        argv += ["--config", str(path)]
    else:
        monkeypatch.setenv("MCPMINI_CONFIG", str(path))
    r = cli("--json", *argv)
    assert r.code == 2, r
    assert str(path) in r.error_lines[0]
    assert json.loads(r.err.splitlines()[-1])["error"]["kind"] == "config"


def test_servers_with_nothing_configured(cli):
    r = cli("servers")
    assert r.code == 0 and r.out == "" and "no servers configured" in r.err
