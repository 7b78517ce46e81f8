"""The trust gate: a project file in the current directory runs nothing until approved; the
approval binds its real path and exact bytes."""
from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import signal
import subprocess
import sys

import pytest

from harness import running, write_json


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
    warning = [line for line in r.err.splitlines() if filename in line]
    assert warning and "not approved" in warning[0] and "mcpmini trust" in warning[0]
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
    assert ".mcp.json" in r.err and "not approved" in r.err  # still warned about
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


@pytest.mark.parametrize("edit", [
    lambda p: p.write_text(p.read_text() + " "),                         # whitespace only
    _add_argument,
])
def test_an_edited_file_is_untrusted_again(cli, fake, work, edit):
    server = fake()
    path = write_json(work / ".mcp.json", {"mcpServers": {"proj": server.entry()}})
    assert cli("trust", "--yes").code == 0
    assert cli("call", "proj", "whoami").code == 0
    edit(path)
    r = cli("call", "proj", "whoami")
    assert r.code == 2
    assert "not approved" in r.error_lines[0]
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
    assert r.code == 2 and "not approved" in r.error_lines[0]


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


def test_trust_without_a_terminal_and_without_yes_is_2(cli, fake, work, tmp_path, monkeypatch):
    write_json(work / ".mcp.json", {"mcpServers": {"proj": fake().entry()}})
    monkeypatch.setattr(sys, "stdin", io.StringIO("y\n"))  # data, but not a terminal
    r = cli("trust")
    assert r.code == 2
    assert "--yes" in r.error_lines[0]
    assert not (tmp_path / "xdg-config" / "mcpmini" / "trusted.json").exists()
    assert cli("call", "proj", "whoami").code == 2


def test_trust_without_a_terminal_subprocess(proc, fake, work, tmp_path):
    write_json(work / ".mcp.json", {"mcpServers": {"proj": fake().entry()}})
    p = proc("trust", input=b"y\n", start_new_session=True)  # no controlling terminal either
    assert p.returncode == 2, p.stderr
    assert not (tmp_path / "xdg-config" / "mcpmini" / "trusted.json").exists()


@pytest.mark.skipif(os.name != "posix", reason="pty")
@pytest.mark.parametrize("answer, code", [(b"y\n", 0), (b"n\n", 2), (b"\n", 2)])
def test_trust_asks_on_a_terminal(fake, work, tmp_path, answer, code):
    import pty
    write_json(work / ".mcp.json", {"mcpServers": {"proj": fake().entry()}})
    master, slave = pty.openpty()
    try:
        with running("trust", stdin=slave) as p:
            os.write(master, answer)  # the line discipline holds it until input() reads
            out, err = p.communicate(timeout=60)
    finally:
        os.close(master)
        os.close(slave)
    assert p.returncode == code, err
    assert b"Approve? [y/N]" in out + err
    assert (tmp_path / "xdg-config" / "mcpmini" / "trusted.json").exists() == (code == 0)


@pytest.mark.skipif(os.name != "posix", reason="pty")
def test_ctrl_c_at_the_trust_question_exits_130(fake, work, tmp_path):
    import pty
    write_json(work / ".mcp.json", {"mcpServers": {"proj": fake().entry()}})
    master, slave = pty.openpty()
    try:
        with running("trust", stdin=slave) as p:
            seen = b""
            while b"Approve?" not in seen:  # the question is asked: mcpmini waits for the answer
                chunk = p.stdout.read1(4096) if hasattr(p.stdout, "read1") else p.stdout.read(1)
                assert chunk, "mcpmini ended before asking"
                seen += chunk
            p.send_signal(signal.SIGINT)
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.write(master, b"\n")  # unblock it, then fail
                p.wait(timeout=30)
                pytest.fail("Ctrl-C at the trust question was ignored until Enter")
            err = p.stderr.read()
    finally:
        os.close(master)
        os.close(slave)
    assert p.returncode == 130, err
    assert b"Traceback" not in err
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
