"""Questions on the controlling terminal (issue 14, items 1 and 2): `trust`, `ask --confirm`,
form and URL elicitation, typed on a real pty (CR or LF ends an answer, Ctrl-C or Ctrl-D
declines); and without a terminal nothing blocks."""
from __future__ import annotations

import json
import shlex
import subprocess
import sys

import pytest

from harness import WEATHER


def write_config(path, servers):
    path.write_text(json.dumps({"mcpServers": servers}))
    return path


@pytest.mark.parametrize("answer, code", [("y\r", 0), ("yes\n", 0), ("n\r", 2), ("\r", 2), ("\x03", 130), ("\x04", 2)])
def test_trust_asks_on_the_terminal(screen, work, tmp_path, answer, code):
    write_config(work / ".mcp.json", {"proj": {"command": "python3", "args": ["server.py"]}})
    s = screen("trust", stdin=subprocess.DEVNULL)   # the answer comes from /dev/tty, not stdin
    s.expect("is not yet approved; it defines 1 server(s)")
    s.expect("Approve? [y/N] ")
    s.type(answer)
    assert s.wait() == code, s.text
    assert (tmp_path / "xdg-config" / "mcpmini" / "trusted.json").exists() == (code == 0)


def test_trust_says_what_changed_since_the_approval(screen, proc, work):
    path = write_config(work / ".mcp.json", {"a": {"command": "a"}, "b": {"command": "b"}})
    assert proc("trust", "--yes").returncode == 0
    write_config(path, {"a": {"command": "a", "args": ["--evil"]}, "c": {"command": "c"}})
    s = screen("trust")
    s.expect("changed since you approved it (added c; removed b; changed a)")
    s.type("n\r")
    assert s.wait() == 2


@pytest.mark.parametrize("era", [[], ["--legacy"]])   # MRTR input_required / a real server request
def test_a_form_is_asked_field_by_field(screen, fake, era):
    server = fake(*era)
    s = screen("call", server.cmdline, "book", stdin=subprocess.DEVNULL)
    s.expect("asks: Book a table \\x1b[1mnow")
    s.expect("(Enter takes the default in [ ]; Ctrl-C or Ctrl-D declines)")
    s.expect("Your \\x1b]0;pwned\\x07name (string, required) — as on the \\x1b[31mcard: ")
    s.type("\r")                                   # required: asked again
    s.expect("an answer is needed; try again")
    s.type("Zoë\r")                                # CR ends an answer
    s.expect("guests (integer 1..12, required) [2]: ")
    s.type("many\n")                               # LF too; a wrong type is asked again
    s.expect("must be integer")
    s.type("1\x7f4\r")                             # Backspace edits the answer: 4
    s.expect("seating (indoor|outdoor) [indoor]: ")
    s.type("\r")                                   # Enter takes the default
    s.expect("menu (m1|m2; m1 = Tasting; m2 = Plain): ")
    s.type("m3\r")
    s.expect("must be one of")
    s.type("m2\r")
    s.expect("vip (boolean, y/n): ")
    s.type("true\r")
    s.expect("note (string) [none\\x1b[2J\\u202e]: ")
    s.type("\r")
    s.expect("tags (array): ")
    s.type("a, b\r")
    assert s.wait() == 0, s.text
    answer = {"action": "accept", "content": {"name": "Zoë", "guests": 4, "seating": "indoor",
                                              "menu": "m2", "vip": True, "note": "none\x1b[2J\u202e",
                                              "tags": ["a", "b"]}}
    assert "\x1b]0;" not in s.text and "\x1b[31m" not in s.text and "\u202e" not in s.text
    calls = [m for m in server.messages() if m.get("method") == "tools/call"]
    sent = [c for c in calls if "inputResponses" in c["params"]]
    replies = [m for m in server.messages() if m.get("id") and "result" in m and "method" not in m]
    got = sent[0]["params"]["inputResponses"]["q"] if sent else replies[0]["result"]
    assert got == answer
    first = server.messages()[0]
    capabilities = (first["params"].get("capabilities") if first["method"] == "initialize" else
                    first["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"])
    assert capabilities == {"elicitation": {"form": {}, "url": {}}}


@pytest.mark.parametrize("key", ["\x03", "\x04"])
def test_ctrl_c_or_ctrl_d_declines_the_form(screen, fake, key):
    server = fake()
    s = screen("call", server.cmdline, "book")
    s.expect("name (string, required)")
    s.type(key)
    assert s.wait() == 0, s.text
    [sent] = [m for m in server.messages() if "inputResponses" in m.get("params", {})]
    assert sent["params"]["inputResponses"]["q"] == {"action": "decline"}


def test_without_a_terminal_nothing_blocks_and_the_form_is_declined(proc, fake):
    server = fake()
    p = proc("call", server.cmdline, "book", start_new_session=True)
    assert p.returncode == 0, p.stderr
    [sent] = [m for m in server.messages() if "inputResponses" in m.get("params", {})]
    assert sent["params"]["inputResponses"]["q"] == {"action": "decline"}
    meta = server.messages()[0]["params"]["_meta"]
    assert meta["io.modelcontextprotocol/clientCapabilities"] == {}   # nobody to answer: not declared


@pytest.mark.parametrize("url, warned", [
    ("https://example.com/login?x=1", ""),
    ("https://exаmple.com/login", "xn--exmple-4nf.com"),        # a Cyrillic а
    ("https://xn--exmple-4nf.com/login", "xn--exmple-4nf.com"),
])
def test_a_url_is_shown_with_its_ascii_host_before_opening(screen, fake, tmp_path, url, warned):
    server, opened = fake(), tmp_path / "opened.txt"
    browser = f"{sys.executable} -c 'import sys; open(sys.argv[1], \"w\").write(sys.argv[2])' {opened} %s"
    s = screen("call", server.cmdline, "visit", f"url={url}", env={"BROWSER": browser})
    s.expect("asks you to open")
    text = s.expect("Open it in your browser? [y/N] ")
    assert f"host: {warned or 'example.com'}" in text
    assert ("punycode" in text) == bool(warned)
    s.type("y\r")
    assert s.wait() == 0, s.text
    assert opened.read_text() == url
    [sent] = [m for m in server.messages() if "inputResponses" in m.get("params", {})]
    assert sent["params"]["inputResponses"]["q"] == {"action": "accept"}


def test_a_declined_url_is_not_opened(screen, fake, tmp_path):
    server, opened = fake(), tmp_path / "opened.txt"
    browser = f"{sys.executable} -c 'open(\"{opened}\", \"w\")' %s"
    s = screen("call", server.cmdline, "visit", "url=https://example.com/", env={"BROWSER": browser})
    s.expect("Open it in your browser? [y/N] ")
    s.type("\r")
    assert s.wait() == 0
    assert not opened.exists()
    [sent] = [m for m in server.messages() if "inputResponses" in m.get("params", {})]
    assert sent["params"]["inputResponses"]["q"] == {"action": "decline"}


def test_a_signal_at_a_question_ends_the_run_and_restores_the_terminal(screen, work, tmp_path):
    import signal
    import termios
    write_config(work / ".mcp.json", {"proj": {"command": "python3"}})
    s = screen("trust")
    s.expect("Approve? [y/N] ")
    assert not termios.tcgetattr(s.master)[3] & termios.ISIG    # while asking, Ctrl-C is a key
    s.proc.send_signal(signal.SIGINT)                           # a signal still ends the run
    assert s.wait(15) == 130, s.text
    assert termios.tcgetattr(s.master)[3] & termios.ISIG         # the terminal got its modes back
    assert "Traceback" not in s.text
    assert not (tmp_path / "xdg-config" / "mcpmini" / "trusted.json").exists()


def test_without_a_terminal_trust_and_confirm_say_how(proc, work):
    write_config(work / ".mcp.json", {"proj": {"command": "python3"}})
    run = lambda *argv: proc(*argv, start_new_session=True)  # noqa: E731
    p = run("trust")
    assert p.returncode == 2 and b"no terminal to ask on" in p.stderr and b"--yes" in p.stderr
    p = run("ask", "q", "--model", "m", "--base-url", "http://127.0.0.1:9/v1", "--confirm",
            "--server", shlex.join([sys.executable, str(WEATHER)]))
    assert p.returncode == 2 and b"--confirm needs a terminal" in p.stderr
