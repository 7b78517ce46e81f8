"""`ask` on a real pseudo-terminal (issue 14, items 1–3; decision #14): --confirm shows the whole
call and asks y/N on /dev/tty, each tool call is a line on stderr as it starts and ends, the
status line waits for the model, and stdout holds only the answer."""
from __future__ import annotations

import json
import os
import re
import subprocess

import pytest

from agent_fakes import ScriptedModel, answer, calls, chunk, sse
from agent_harness import ECHO_SCHEMA, fake_entry, tool_calls_received, write_config
from terminal_harness import Screen

pytestmark = pytest.mark.skipif(os.name != "posix", reason="pseudo-terminals are POSIX")
LONG = "x" * 1200


@pytest.fixture
def config(tmp_path):
    return write_config(tmp_path, {"fake": fake_entry(tmp_path, [{"name": "echo", "inputSchema": ECHO_SCHEMA}])})


@pytest.mark.parametrize("typed, ran", [("y\r", True), ("\n", False), ("maybe\rn\r", False)])
def test_confirm_shows_the_whole_call_and_asks(tmp_path, config, typed, ran):
    script = [calls(("fake_echo", json.dumps({"city": LONG, "n": 1}), "c1")), answer("All done.")]
    with ScriptedModel(script) as model:
        s = Screen("--config", config, "ask", "q", "--model", "m", "--base-url", model.base_url, "--confirm",
                   stdin=subprocess.DEVNULL, stdout=subprocess.PIPE)
        try:
            s.expect("mcpmini: call fake.echo with\n{\n")
            text = s.expect("Run it? [y/N] ")
            assert f'  "city": "{"x" * 500}… [700 more characters]",\n  "n": 1\n}}' in text   # folded, not cut
            s.type(typed)
            assert s.wait() == 0, s.text
            out = s.proc.stdout.read().decode()
        finally:
            s.close()
    assert out == "All done.\n"                      # stdout: the answer only
    assert bool(tool_calls_received(tmp_path)) == ran
    tool_message = model.bodies[1]["messages"][-1]["content"]
    assert ("declined" in tool_message) != ran
    # the question, then the call's line, once: completed in place with its time, or "declined"
    shown = re.sub(r"[^\n]*\n\x1b\[A\r", "", s.text)   # a line rewritten in place is seen once
    assert shown.count("→ fake.echo city=xxxx") == 1 and "… [1160 more characters] n=1 …" in shown
    assert shown.endswith(" … 0.0 s\n" if ran else " … declined\n"), s.text
    assert ("is neither yes nor no; Run it? [y/N]" in s.text) == typed.startswith("maybe")


def test_tool_lines_and_the_status_line_on_the_terminal(tmp_path, config):
    call = {"index": 0, "id": "c1", "type": "function",
            "function": {"name": "fake_echo", "arguments": '{"city": "Hangzhou"}'}}
    slow = sse(": keep-alive", ": keep-alive", chunk({"tool_calls": [call]}), chunk(finish="tool_calls"),
               interval=0.8)   # the model takes 1.6 s
    with ScriptedModel([slow, answer("Take an umbrella.")]) as model:
        s = Screen("--config", config, "ask", "q", "--model", "m", "--base-url", model.base_url,
                   stdout=subprocess.PIPE)
        try:
            s.expect("waiting for the model · 1 s")
            s.expect("→ fake.echo city=Hangzhou …")
            s.expect("\x1b[A\r")                        # the line is completed in place ...
            s.expect("→ fake.echo city=Hangzhou … ")   # ... with its time
            assert s.wait() == 0, s.text
            out = s.proc.stdout.read().decode()
        finally:
            s.close()
    assert out == "Take an umbrella.\n"
    assert "\r\x1b[K→ fake.echo city=Hangzhou …" in s.text   # the status line erased itself first
