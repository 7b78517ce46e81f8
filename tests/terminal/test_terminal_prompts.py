"""Questions on the controlling terminal (issue 14, items 1 and 2): `trust`, `ask --confirm`,
form and URL elicitation, typed on a real pty (CR or LF ends an answer, Ctrl-C or Ctrl-D
declines); and without a terminal nothing blocks."""
from __future__ import annotations

import json
import shlex
import subprocess
import sys

import pytest

from terminal_harness import DEMO_MODEL, MCPMINI, WEATHER, fake_command, received


def write_config(path, servers):
    path.write_text(json.dumps({"mcpServers": servers}))
    return path


@pytest.mark.parametrize("answer, code", [("y\r", 0), ("yes\n", 0), ("n\r", 2), ("\r", 2), ("\x03", 2), ("\x04", 2)])
def test_trust_asks_on_the_terminal(screen, work, tmp_path, answer, code):
    write_config(work / ".mcp.json", {"proj": {"command": "python3", "args": ["server.py"]}})
    s = screen("trust", stdin=subprocess.DEVNULL)   # the answer comes from /dev/tty, not stdin
    s.expect("is not yet approved; it defines 1 server(s)")
    s.expect("Approve? [y/N] ")
    s.type(answer)
    assert s.wait() == code, s.text
    assert (tmp_path / "xdg-config" / "mcpmini" / "trusted.json").exists() == (code == 0)


def test_trust_says_what_changed_since_the_approval(screen, work):
    path = write_config(work / ".mcp.json", {"a": {"command": "a"}, "b": {"command": "b"}})
    assert subprocess.run([sys.executable, MCPMINI, "trust", "--yes"], capture_output=True).returncode == 0
    write_config(path, {"a": {"command": "a", "args": ["--evil"]}, "c": {"command": "c"}})
    s = screen("trust")
    s.expect("changed since you approved it (added c; removed b; changed a)")
    s.type("n\r")
    assert s.wait() == 2
