"""Issue 25, item 4 (decision #37): Ctrl-C at `ask --confirm` ends the run (130) instead of
declining and letting the model carry on; the tool is not run, the model not asked again."""
from __future__ import annotations

import json
import os
import subprocess

import pytest

from agent_fakes import ScriptedModel, answer, calls
from agent_harness import ECHO_SCHEMA, fake_entry, tool_calls_received, write_config
from terminal_harness import Screen

pytestmark = pytest.mark.skipif(os.name != "posix", reason="pseudo-terminals are POSIX")


def test_ctrl_c_at_confirm_ends_the_run(tmp_path):
    config = write_config(tmp_path, {"fake": fake_entry(tmp_path, [{"name": "echo", "inputSchema": ECHO_SCHEMA}])})
    script = [calls(("fake_echo", json.dumps({"city": "Hangzhou"}), "c1")), answer("All done.")]
    with ScriptedModel(script) as model:
        s = Screen("--config", config, "ask", "q", "--model", "m", "--base-url", model.base_url, "--confirm",
                   stdin=subprocess.DEVNULL, stdout=subprocess.PIPE)
        try:
            s.expect("Run it? [y/N] ")
            s.type("\x03")
            assert s.wait() == 130, s.text
            out = s.proc.stdout.read().decode()
        finally:
            s.close()
    assert out == "" and "interrupted" in s.text and "Traceback" not in s.text
    assert not tool_calls_received(tmp_path)
    assert len(model.bodies) == 1   # the model was not asked again
