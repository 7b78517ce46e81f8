"""The tool policy in `ask` and run_agent (issue 27 item 6): the model never sees a tool outside
the policy; when it calls one anyway, the call is refused back to it as a tool error and never
reaches the server. `--confirm destructive` asks only before tools not marked read-only."""
from __future__ import annotations

import json
import os
import subprocess

import pytest

from agent_fakes import ScriptedModel, answer, calls
from agent_harness import ECHO_SCHEMA, agent, fake_client, fake_entry, tool_calls_received, write_config
from terminal_harness import Screen

TOOLS = [
    {"name": "read", "inputSchema": ECHO_SCHEMA, "annotations": {"readOnlyHint": True}},
    {"name": "wipe", "inputSchema": ECHO_SCHEMA, "annotations": {"destructiveHint": True}},
    {"name": "note", "inputSchema": ECHO_SCHEMA},
]
ARGS = json.dumps({"city": "Hangzhou"})


def offered(body: dict) -> list[str]:
    return [t["function"]["name"] for t in body.get("tools", [])]


def test_run_agent_offers_only_allowed_tools_and_refuses_a_call_to_another(tmp_path):
    script = [calls(("fake_wipe", ARGS, "c1"), ("fake_read", ARGS, "c2")), answer("Done.")]
    with ScriptedModel(script) as model:
        transcript, _ = agent(model, [fake_client(tmp_path, TOOLS)], deny=["wipe"], read_only=True)
    assert offered(model.bodies[0]) == ["fake_read"]
    assert transcript["tools"] == {"fake_read": {"server": "fake", "tool": "read"}}
    wiped, read = model.bodies[1]["messages"][-2:]
    assert wiped["tool_call_id"] == "c1" and wiped["content"].startswith("Error:") and "fake_wipe" in wiped["content"]
    assert read["tool_call_id"] == "c2" and not read["content"].startswith("Error:")
    assert [c["name"] for c in tool_calls_received(tmp_path)] == ["read"]   # wipe never reached it


def test_ask_with_the_flags_and_a_config_policy(tmp_path, cli):
    config = write_config(tmp_path, {"fake": {**fake_entry(tmp_path, TOOLS), "denyTools": ["note"]}})
    script = [calls(("fake_note", ARGS, "c1"), ("fake_wipe", ARGS, "c2"), ("fake_read", ARGS, "c3")),
              answer("Done.")]
    with ScriptedModel(script) as model:
        r = cli("--config", config, "ask", "q", "--model", "m", "--base-url", model.base_url, "--deny", "fake/wipe")
    assert r.code == 0 and r.out == "Done.\n", r.err
    assert offered(model.bodies[0]) == ["fake_read"]
    contents = [m["content"] for m in model.bodies[1]["messages"] if m["role"] == "tool"]
    assert [c.startswith("Error:") for c in contents] == [True, True, False]
    assert [c["name"] for c in tool_calls_received(tmp_path)] == ["read"]


@pytest.mark.skipif(os.name != "posix", reason="pseudo-terminals are POSIX")
def test_confirm_destructive_asks_only_before_tools_not_marked_read_only(tmp_path):
    config = write_config(tmp_path, {"fake": fake_entry(tmp_path, TOOLS)})
    script = [calls(("fake_read", ARGS, "c1")), calls(("fake_wipe", ARGS, "c2")), answer("Done.")]
    with ScriptedModel(script) as model:
        s = Screen("--config", config, "ask", "q", "--model", "m", "--base-url", model.base_url,
                   "--confirm", "destructive", stdin=subprocess.DEVNULL, stdout=subprocess.PIPE)
        try:
            text = s.expect("Run it? [y/N] ")
            assert "call fake.wipe with" in text and "call fake.read" not in text   # read ran unasked
            s.type("\r")   # no
            assert s.wait() == 0, s.text
        finally:
            s.close()
    assert s.text.count("Run it?") == 1
    assert [c["name"] for c in tool_calls_received(tmp_path)] == ["read"]
    assert "declined" in model.bodies[2]["messages"][-1]["content"]


def test_confirm_takes_no_other_word(tmp_path, cli):
    config = write_config(tmp_path, {"fake": fake_entry(tmp_path, TOOLS)})
    r = cli("--config", config, "ask", "--confirm", "q", "--model", "m", "--base-url", "http://127.0.0.1:9/v1")
    assert r.code == 2 and "--confirm" in r.err and "destructive" in r.err
