"""The trust gate: a project file in the current directory runs nothing until approved; the
approval binds its real path and exact bytes."""
from __future__ import annotations

import hashlib
import json
import os
import shutil

import pytest

from harness import write_json


def names(cli) -> dict[str, dict]:
    r = cli("servers", "--json")
    assert r.code == 0, r.err
    return {row["name"]: row for row in json.loads(r.out)}


@pytest.mark.parametrize("filename", [".mcp.json", "mcp.json"])
def test_untrusted_project_file_is_skipped_with_a_warning(cli, fake, work, filename):
    server = fake()
    write_json(work / filename, {"mcpServers": {"proj": server.entry()}})
    r = cli("servers")
    assert r.code == 0
    assert "proj" in r.out and "NOT APPROVED" in r.out
    [warning] = r.err.splitlines()   # once, naming the file once, saying what is new
    assert warning.count(filename) == 1 and "is not yet approved" in warning and "mcpmini trust" in warning
    r = cli("call", "proj", "whoami")
    assert r.code == 2 and "mcpmini trust" in r.error_lines[0]
    assert not server.started()


def test_untrusted_entry_never_shadows_a_trusted_one(cli, fake, work, user_config):
    mine = fake("--name", "mine", label="mine")
    theirs = fake("--name", "theirs", label="theirs")
    write_json(user_config, {"mcpServers": {"dup": mine.entry()}})
    write_json(work / ".mcp.json", {"mcpServers": {"dup": theirs.entry()}})
    r = cli("call", "dup", "whoami")
    assert r.code == 0, r.err
    assert json.loads(r.out)["name"] == "mine"
    assert ".mcp.json" in r.err and "not yet approved" in r.err  # still warned about
    assert not theirs.started()
    assert names(cli)["dup"]["trusted"] is True


def test_trust_yes_then_the_file_is_used(cli, fake, work, user_config):
    mine = fake("--name", "mine", label="mine")
    theirs = fake("--name", "theirs", label="theirs")
    write_json(user_config, {"mcpServers": {"dup": mine.entry()}})
    write_json(work / ".mcp.json", {"mcpServers": {"dup": theirs.entry(), "proj": theirs.entry()}})
    r = cli("trust", "--yes")
    assert r.code == 0, r.err
    assert not theirs.started()  # approving runs nothing
    r = cli("call", "proj", "whoami")
    assert r.code == 0, r.err
    assert "not approved" not in r.err
    # once approved, the project file outranks the user's file
    assert json.loads(cli("call", "dup", "whoami").out)["name"] == "theirs"


def test_approval_record_lives_in_the_user_config_dir(cli, fake, work, tmp_path):
    write_json(work / "mcp.json", {"mcpServers": {"p": fake().entry()}})
    assert cli("trust", "mcp.json", "--yes").code == 0
    record = (tmp_path / "xdg-config" / "mcpmini" / "trusted.json").read_text()
    assert os.path.realpath(work / "mcp.json") in record
    assert hashlib.sha256((work / "mcp.json").read_bytes()).hexdigest() in record


def _add_argument(path) -> None:
    data = json.loads(path.read_text())
    data["mcpServers"]["proj"]["args"] += ["--name", "edited"]
    path.write_text(json.dumps(data))


@pytest.mark.parametrize("edit, news", [
    (lambda p: p.write_text(p.read_text() + " "), "(formatting only)"),     # whitespace only
    (_add_argument, "(changed proj)"),
])
def test_an_edited_file_is_untrusted_again(cli, fake, work, edit, news):
    server = fake()
    path = write_json(work / ".mcp.json", {"mcpServers": {"proj": server.entry()}})
    assert cli("trust", "--yes").code == 0
    assert cli("call", "proj", "whoami").code == 0
    edit(path)
    r = cli("call", "proj", "whoami")
    assert r.code == 2
    assert f"changed since you approved it {news}" in r.error_lines[0]
    assert names(cli)["proj"]["trusted"] is False
    assert cli("trust", "--yes").code == 0       # approve the new bytes: used again
    assert cli("call", "proj", "whoami").code == 0


def test_a_symlink_to_an_approved_file_elsewhere_is_untrusted(cli, fake, work, tmp_path, monkeypatch):
    server = fake()
    original = write_json(tmp_path / "approved" / ".mcp.json", {"mcpServers": {"proj": server.entry()}})
    monkeypatch.chdir(original.parent)
    assert cli("trust", "--yes").code == 0
    assert cli("call", "proj", "whoami").code == 0
    other = tmp_path / "other"
    other.mkdir()
    os.symlink(original, other / ".mcp.json")
    monkeypatch.chdir(other)
    r = cli("call", "proj", "whoami")
    assert r.code == 2 and "not yet approved" in r.error_lines[0]


def test_a_copy_of_an_approved_file_elsewhere_is_untrusted(cli, fake, work, tmp_path, monkeypatch):
    original = write_json(tmp_path / "approved" / ".mcp.json", {"mcpServers": {"proj": fake().entry()}})
    monkeypatch.chdir(original.parent)
    assert cli("trust", "--yes").code == 0
    copy = tmp_path / "copy"
    copy.mkdir()
    shutil.copy(original, copy / ".mcp.json")
    monkeypatch.chdir(copy)
    assert cli("call", "proj", "whoami").code == 2


def test_a_symlinked_project_file_whose_target_changes_is_untrusted(cli, fake, work, tmp_path):
    good = write_json(tmp_path / "targets" / "good.json", {"mcpServers": {"proj": fake().entry()}})
    evil = write_json(tmp_path / "targets" / "evil.json",
                      {"mcpServers": {"proj": fake("--name", "evil", label="evil").entry()}})
    os.symlink(good, work / ".mcp.json")
    assert cli("trust", "--yes").code == 0
    os.remove(work / ".mcp.json")
    os.symlink(evil, work / ".mcp.json")
    assert cli("call", "proj", "whoami").code == 2


def test_trust_without_a_terminal_subprocess(proc, fake, work, tmp_path):
    write_json(work / ".mcp.json", {"mcpServers": {"proj": fake().entry()}})
    p = proc("trust", input=b"y\n", start_new_session=True)  # no controlling terminal either
    assert p.returncode == 2, p.stderr
    assert not (tmp_path / "xdg-config" / "mcpmini" / "trusted.json").exists()


def test_trust_without_a_project_file_is_2(cli):
    r = cli("trust", "--yes")
    assert r.code == 2 and "no .mcp.json or mcp.json" in r.error_lines[0]


def test_trust_shows_every_argument_quoted_and_the_variables(cli, work, monkeypatch):
    monkeypatch.setenv("CLI_API_KEY", "the-real-key-value")
    write_json(work / ".mcp.json", {"mcpServers": {
        "proj": {"command": "npx", "args": ["-y", "two words", "esc\x1b]0;t\x07", "--key=${CLI_API_KEY}"],
                 "env": {"CLI_TOKEN": "${env:CLI_TOKEN_SRC}"}},
        "web": {"url": "https://example.invalid/mcp", "headers": {"Authorization": "Bearer ${CLI_BEARER:-x}"}}}})
    r = cli("trust", "--yes")
    assert r.code == 0, r.err
    shown = r.err
    assert "'two words'" in shown and "\\x1b]0;t\\x07" in shown and "\x1b" not in shown
    assert "'--key=${CLI_API_KEY}'" in shown
    assert "CLI_API_KEY" in shown and "CLI_TOKEN_SRC" in shown and "CLI_BEARER" in shown
    assert "the-real-key-value" not in shown   # nothing is expanded while approving
    assert "https://example.invalid/mcp" in shown and "Authorization" in shown
    assert "does not cover the scripts" in shown


def test_explicit_and_user_files_need_no_approval(cli, fake, work, user_config, monkeypatch):
    write_json(user_config, {"mcpServers": {"u": fake(label="u").entry()}})
    explicit = write_json(work / "sub" / "x.json", {"mcpServers": {"x": fake(label="x").entry()}})
    monkeypatch.setenv("MCPMINI_CONFIG", str(write_json(work / "sub" / "e.json",
                                                        {"mcpServers": {"e": fake(label="e").entry()}})))
    for name in ("u", "x", "e"):
        r = cli("--config", explicit, "call", name, "whoami")
        assert r.code == 0, r.err
        assert "not approved" not in r.err


def test_explicit_config_naming_the_project_file_is_trusted(cli, fake, work):
    write_json(work / ".mcp.json", {"mcpServers": {"proj": fake().entry()}})
    r = cli("--config", ".mcp.json", "call", "proj", "whoami")
    assert r.code == 0, r.err
