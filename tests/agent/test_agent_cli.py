"""`mcpmini ask` (issue 5, items 1, 2, 7 and "Done when"): flags and environment, exit codes,
what goes to stdout and stderr, where the key goes, --json, --confirm, Ctrl-C, and the offline
demo with the weather server."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pytest

from agent_fakes import ScriptedModel, answer, calls, raw
from agent_harness import ECHO_SCHEMA, fake_entry, received, tool_calls_received, write_config
from harness import EXAMPLES, ROOT, running, wait_until

ECHO = {"name": "echo", "inputSchema": ECHO_SCHEMA}
KEY = "sk-test-KEY-0123456789abcdefXYZW"



@pytest.fixture
def config(tmp_path):
    return write_config(tmp_path, {"fake": fake_entry(tmp_path, [ECHO, {"name": "env", "does": "env"}])})


def test_streamed_answer_on_stdout_and_tool_calls_on_stderr(tmp_path, cli, config):
    script = [calls(("fake_echo", '{"city": "Hangzhou"}', "c1")), answer("Take an umbrella.", pieces=4)]
    with ScriptedModel(script) as model:
        code, out, err = cli("--config", config, "ask", "Umbrella?", "--model", "m",
                             "--base-url", model.base_url)
    assert code == 0
    assert out == "Take an umbrella.\n"
    assert "fake.echo" not in err   # tool-call lines: on a terminal (tests/agent/test_agent_terminal.py) or -v
    assert model.bodies[0]["stream"] is True
    assert [c["name"] for c in tool_calls_received(tmp_path)] == ["echo"]


def test_tool_call_lines_at_v_without_a_terminal(tmp_path, cli, config):
    script = [calls(("fake_echo", '{"city": "Hangzhou"}', "c1")), answer("Take an umbrella.")]
    with ScriptedModel(script) as model:
        code, out, err = cli("-v", "--config", config, "ask", "Umbrella?", "--model", "m",
                             "--base-url", model.base_url)
    assert (code, out) == (0, "Take an umbrella.\n")
    lines = [line for line in err.splitlines() if line.startswith("→")]
    assert lines[0] == "→ fake.echo city=Hangzhou …"
    assert lines[1].startswith("→ fake.echo city=Hangzhou … ") and lines[1].endswith(" s")


def test_no_stream_and_model_settings_from_the_environment(tmp_path, cli, config, monkeypatch):
    with ScriptedModel([answer("ok")]) as model:
        monkeypatch.setenv("OPENAI_BASE_URL", model.base_url)
        monkeypatch.setenv("MCPMINI_MODEL", "env-model")
        code, out, _ = cli("--config", config, "ask", "q", "--no-stream", "--system", "Be brief.",
                           "--max-result-chars", "50")
    assert (code, out) == (0, "ok\n")
    body = model.bodies[0]
    assert body["model"] == "env-model" and "stream" not in body and "stream_options" not in body
    assert body["messages"][0] == {"role": "system", "content": "Be brief."}
    assert "authorization" not in model.requests[0]["headers"]


def test_the_key_goes_to_the_model_only(tmp_path, cli, config, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    script = [calls(("fake_env", "{}", "c1")), answer("done")]
    with ScriptedModel(script, api_key=KEY) as model:
        code, out, err = cli("--config", config, "ask", "q", "--model", "m",
                             "--base-url", model.base_url, "--json")
    assert code == 0
    assert model.requests[0]["headers"]["authorization"] == f"Bearer {KEY}"
    server_env = json.loads(model.bodies[1]["messages"][3]["content"])
    assert "OPENAI_API_KEY" not in server_env and "PATH" in server_env
    assert KEY not in json.dumps(received(tmp_path)) and KEY not in out + err


def test_json_prints_the_whole_transcript(tmp_path, cli, config):
    script = [calls(("fake_echo", '{"city": "a"}', "c1")), answer("fine")]
    with ScriptedModel(script) as model:
        code, out, err = cli("--config", config, "ask", "q", "--model", "m",
                             "--base-url", model.base_url, "--json")
    assert code == 0 and "calling" not in err
    transcript = json.loads(out)
    assert transcript["answer"] == "fine" and transcript["model"] == "m"
    assert [m["role"] for m in transcript["messages"]] == ["system", "user", "assistant", "tool", "assistant"]
    call = transcript["steps"][0]["tool_calls"][0]
    assert (call["server"], call["tool"], call["arguments"]) == ("fake", "echo", {"city": "a"})
    assert isinstance(call["seconds"], float) and isinstance(transcript["seconds"], float)


def test_no_model_is_a_usage_error(cli, config):
    code, out, err = cli("--config", config, "ask", "q", "--base-url", "http://127.0.0.1:9/v1")
    assert code == 2 and out == "" and "MCPMINI_MODEL" in err


def test_the_default_openai_url_needs_a_key_before_anything_starts(tmp_path, cli, config):
    code, _, err = cli("--config", config, "ask", "q", "--model", "gpt-x")
    assert code == 2 and "OPENAI_API_KEY" in err and "https://api.openai.com/v1" in err
    assert received(tmp_path) == []        # no server was started either


def test_no_servers_configured_is_exit_2(tmp_path, cli):
    empty = write_config(tmp_path, {})
    code, _, err = cli("--config", empty, "ask", "q", "--model", "m",
                       "--base-url", "http://127.0.0.1:9/v1")
    assert code == 2 and "no servers configured" in err


def test_no_server_that_works_is_exit_3(tmp_path, cli):
    cfg = write_config(tmp_path, {"dead": {"command": str(tmp_path / "missing-binary")}})
    with ScriptedModel([answer("never")]) as model:
        code, _, err = cli("--config", cfg, "ask", "q", "--model", "m", "--base-url", model.base_url)
    assert code == 3 and "skipping server dead" in err and model.requests == []


def test_broken_servers_are_reported_and_skipped(tmp_path, cli, monkeypatch):
    monkeypatch.delenv("AGENT_CLI_UNSET", raising=False)
    cfg = write_config(tmp_path, {
        "needs-var": {"command": sys.executable, "args": ["${AGENT_CLI_UNSET}"]},
        "dead": {"command": sys.executable, "args": ["-c", "pass"]},
        "fake": fake_entry(tmp_path, [ECHO])})
    with ScriptedModel([answer("ok")]) as model:
        code, out, err = cli("--config", cfg, "ask", "q", "--model", "m", "--base-url", model.base_url)
    assert (code, out) == (0, "ok\n")
    assert "skipping server needs-var" in err and "AGENT_CLI_UNSET" in err
    assert "skipping server dead" in err
    assert [t["function"]["name"] for t in model.bodies[0]["tools"]] == ["fake_echo"]


def test_server_flag_chooses_and_header_flags_need_one_server(tmp_path, cli):
    cfg = write_config(tmp_path, {"one": fake_entry(tmp_path, [ECHO], name="one"),
                                  "two": fake_entry(tmp_path, [ECHO], name="two")})
    with ScriptedModel([answer("ok")]) as model:
        code, _, _ = cli("--config", cfg, "ask", "q", "--server", "two", "--model", "m",
                         "--base-url", model.base_url)
    assert code == 0
    assert [t["function"]["name"] for t in model.bodies[0]["tools"]] == ["two_echo"]
    assert received(tmp_path, "one") == []
    code, _, err = cli("--config", cfg, "ask", "q", "-e", "A=1", "--model", "m",
                       "--base-url", model.base_url)
    assert code == 2 and "--server" in err


def test_max_steps_is_exit_1_with_kind_agent(tmp_path, cli, config):
    script = [calls(("fake_echo", '{"city": "a"}', f"c{i}")) for i in range(2)]
    with ScriptedModel(script) as model:
        code, out, err = cli("--config", config, "ask", "q", "--model", "m", "--base-url",
                             model.base_url, "--max-steps", "1", "--json")
    assert code == 1
    assert "mcpmini: error: no answer after 1 model request(s)" in err
    error_doc = json.loads(err.strip().splitlines()[-1])
    assert error_doc["error"]["kind"] == "agent"
    assert json.loads(out)["error"]["kind"] == "agent"     # the transcript so far, on stdout


def test_401_is_exit_4_naming_the_endpoint_with_the_key_masked(tmp_path, cli, config, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with ScriptedModel([raw(401, {"error": {"message": f"Incorrect API key provided: {KEY}"}})]) as model:
        code, out, err = cli("--config", config, "ask", "q", "--model", "m", "--base-url", model.base_url)
    assert code == 4 and out == ""
    assert model.base_url in err and "sk-…XYZW" in err and KEY not in err


# Real processes -----------------------------------------------------------------------------

@pytest.mark.skipif(os.name != "posix", reason="signals")
def test_ctrl_c_cancels_the_tool_call_on_the_wire_and_exits_130(tmp_path):
    cfg = write_config(tmp_path, {"fake": fake_entry(tmp_path, [{"name": "slow", "does": "slow", "seconds": 30}],
                                                  ignore_sigterm=True)})
    with ScriptedModel([calls(("fake_slow", "{}", "c1")), answer("never")]) as model, \
            running("--config", cfg, "ask", "q", "--model", "m", "--base-url", model.base_url,
                    text=True) as proc:
        assert wait_until(lambda: tool_calls_received(tmp_path), 15), "the tool was never called"
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=15)
    assert proc.returncode == 130, err
    assert "interrupted" in err
    call_id = next(m["id"] for m in received(tmp_path) if m.get("method") == "tools/call")
    cancels = [m for m in received(tmp_path) if m.get("method") == "notifications/cancelled"]
    assert [c["params"]["requestId"] for c in cancels] == [call_id]
    assert len(model.requests) == 1


@pytest.fixture
def demo_model(tmp_path):
    proc = subprocess.Popen([sys.executable, EXAMPLES / "demo_model.py"], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    try:
        yield proc.stdout.readline().strip()
    finally:
        proc.terminate()
        proc.wait(10)


@pytest.mark.parametrize("stream_flag", [[], ["--no-stream"]])
def test_demo_umbrella_in_hangzhou(proc, demo_model, stream_flag):
    """The issue's "Done when": the demo model answers from a real tools/call to the weather server."""
    assert demo_model.startswith("http://127.0.0.1:")
    argv = ["--config", "examples/mcp.json", "ask", "should I take an umbrella in Hangzhou tomorrow?",
            "--base-url", demo_model, "--model", "demo", "-v", *stream_flag]
    done = proc(*argv, cwd=ROOT, encoding="utf-8")
    assert done.returncode == 0, done.stderr
    assert "take an umbrella" in done.stdout.lower() and "light rain" in done.stdout
    assert "→ weather.get_forecast city=Hangzhou …" in done.stderr
    as_json = proc(*argv, "--json", cwd=ROOT, encoding="utf-8")
    transcript = json.loads(as_json.stdout)
    call = transcript["steps"][0]["tool_calls"][0]
    assert (call["server"], call["tool"], call["is_error"]) == ("weather", "get_forecast", False)
    assert "light rain" in call["content"] and "umbrella" in transcript["answer"]
