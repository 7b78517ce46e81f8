"""What a real server nobody here wrote taught the agent (issue 17): ``tool_choice`` is sent with
the tools (and dropped once when a server refuses it), the assistant message with tool calls is
echoed with ``"content": ""``, a stream that ends before its first event is asked again
unstreamed, and a model endpoint's error is one readable line. The fake plays llama-cpp-python's
refusals as tests/interop/test_interop_model.py observed them."""
from __future__ import annotations

import json

import pytest

import mcpmini
from agent_fakes import (PYDANTIC_CONTENT_NULL, ScriptedModel, answer, calls, chunk, empty_stream,
                         llama_cpp_python, raw, sse)
from agent_harness import ECHO_SCHEMA, agent, fake_client, fake_entry, tool_calls_received, write_config

ECHO = {"name": "echo", "inputSchema": ECHO_SCHEMA}
VLLM_AUTO = {"error": {"message": "\"auto\" tool choice requires --enable-auto-tool-choice and "
                                  "--tool-call-parser to be set", "type": "BadRequestError",
                       "param": None, "code": 400}}

pytestmark = pytest.mark.usefixtures("quick_backoff")


@pytest.fixture
def config(tmp_path):
    return write_config(tmp_path, {"fake": fake_entry(tmp_path, [ECHO])})


# tool_choice -----------------------------------------------------------------------------------

@pytest.mark.parametrize("choice, sent", [
    ("required", "required"),
    ("echo", {"type": "function", "function": {"name": "fake_echo"}}),        # the MCP name
    ("fake/echo", {"type": "function", "function": {"name": "fake_echo"}}),   # server/tool
    ("fake_echo", {"type": "function", "function": {"name": "fake_echo"}}),   # the function name
])
def test_a_forced_tool_choice_is_sent_first_then_auto(tmp_path, choice, sent):
    script = [calls(("fake_echo", '{"city": "a"}', "c1")), answer("done")]
    with ScriptedModel(script) as model:
        transcript, _ = agent(model, [fake_client(tmp_path, [ECHO])], tool_choice=choice)
    assert transcript["answer"] == "done"
    assert [b["tool_choice"] for b in model.bodies] == [sent, "auto"]   # else it could never answer


def test_tool_choice_none_still_offers_the_tools(tmp_path):
    with ScriptedModel([answer("no tools needed")]) as model:
        agent(model, [fake_client(tmp_path, [ECHO])], tool_choice="none")
    assert model.bodies[0]["tool_choice"] == "none" and model.bodies[0]["tools"]


def test_an_unknown_tool_choice_is_exit_2_before_the_model_is_asked(cli, config):
    with ScriptedModel([answer("never")]) as model:
        code, out, err = cli("--config", config, "ask", "q", "--model", "m",
                             "--base-url", model.base_url, "--tool-choice", "ecko")
    assert code == 2 and out == "" and model.requests == []
    assert "tool_choice 'ecko' is no offered tool; did you mean 'echo'?" in err


def test_a_tool_name_of_two_servers_must_be_named_with_its_server(tmp_path, cli):
    cfg = write_config(tmp_path, {"a": fake_entry(tmp_path, [ECHO], name="a"),
                                  "b": fake_entry(tmp_path, [ECHO], name="b")})
    with ScriptedModel([answer("never")]) as model:
        code, _, err = cli("--config", cfg, "ask", "q", "--model", "m",
                           "--base-url", model.base_url, "--tool-choice", "echo")
    assert code == 2 and "names 2 tools; name it as server/tool" in err and model.requests == []
    with ScriptedModel([calls(("b_echo", '{"city": "x"}', "c1")), answer("ok")]) as model:
        code, out, _ = cli("--config", cfg, "ask", "q", "--model", "m",
                           "--base-url", model.base_url, "--tool-choice", "b/echo")
    assert (code, out) == (0, "ok\n")
    assert model.bodies[0]["tool_choice"] == {"type": "function", "function": {"name": "b_echo"}}


def test_a_400_about_tool_choice_is_retried_without_it_for_the_rest_of_the_run(cli, config):
    script = [raw(400, VLLM_AUTO), calls(("fake_echo", '{"city": "a"}', "c1")), answer("done")]
    with ScriptedModel(script) as model:
        code, out, err = cli("-v", "--config", config, "ask", "q", "--model", "m",
                             "--base-url", model.base_url, "--no-stream")
    assert (code, out) == (0, "done\n")
    assert [("tool_choice" in b, "tools" in b) for b in model.bodies] == [
        (True, True), (False, True), (False, True)]
    assert model.bodies[0]["messages"] == model.bodies[1]["messages"]
    assert err.count("asking again without tool_choice") == 1
    assert '"auto" tool choice requires --enable-auto-tool-choice' in err


def test_the_tool_choice_fallback_is_in_the_transcript_and_quiet_without_v(cli, config):
    with ScriptedModel([raw(400, VLLM_AUTO), answer("ok")]) as model:
        code, out, err = cli("--config", config, "ask", "q", "--model", "m",
                             "--base-url", model.base_url, "--json")
    assert code == 0 and "asking again" not in err
    retries = json.loads(out)["steps"][0]["retries"]
    assert [r["fallback"] for r in retries] == ["tool_choice"]


@pytest.mark.parametrize("second", [raw(400, VLLM_AUTO), answer("never")])
def test_tool_choice_is_dropped_once_and_other_400s_are_not_retried(tmp_path, second):
    other = raw(400, {"error": {"message": "Invalid schema for function 'fake_echo'",
                                "type": "invalid_request_error", "code": "invalid_function_parameters"}})
    first = raw(400, VLLM_AUTO) if second["kind"] == "raw" else other
    with ScriptedModel([first, second, answer("never")]) as model:
        with pytest.raises(mcpmini._ModelError) as info:
            agent(model, [fake_client(tmp_path, [ECHO])])
    assert len(model.requests) == (2 if second["kind"] == "raw" else 1)
    assert "HTTP 400" in str(info.value) and info.value.kind == "remote"


# The echoed assistant message ------------------------------------------------------------------

@pytest.mark.parametrize("stream", [True, False])
def test_the_loop_works_against_llama_cpp_python_refusals(tmp_path, stream):
    script = [calls(("fake_echo", '{"city": "Paris"}', "call__0_fake_echo_cmpl-1")), answer("Rain.")]
    with ScriptedModel(script, rules=llama_cpp_python) as model:
        transcript, texts = agent(model, [fake_client(tmp_path, [ECHO])], stream=stream)
    assert transcript["answer"] == "Rain." and "".join(texts) == "Rain."
    echoed = model.bodies[-1]["messages"][2]
    assert echoed["content"] == "" and echoed["tool_calls"][0]["id"] == "call__0_fake_echo_cmpl-1"
    assert [c["arguments"] for c in tool_calls_received(tmp_path)] == [{"city": "Paris"}]
    # Streamed, each step is asked twice: the stream ends empty, then an unstreamed request.
    assert [b.get("stream", False) for b in model.bodies] == ([True, False] * 2 if stream else [False] * 2)
    assert all(b["tool_choice"] == "auto" for b in model.bodies)


def test_text_beside_calls_is_echoed_as_it_came():
    reply = mcpmini._Reply()
    reply.add_delta({"content": "Let me look.", "tool_calls": [
        {"index": 0, "id": "c1", "function": {"name": "f", "arguments": "{}"}}]})
    assert "".join(reply.text) == "Let me look." and reply.tool_calls()[0]["id"] == "c1"


# Streams that end before their first event -----------------------------------------------------

@pytest.mark.parametrize("empty", [empty_stream(), sse(": keep-alive", ": ping", done=False)])
def test_an_empty_stream_is_asked_again_unstreamed_with_a_v_note(cli, config, empty):
    with ScriptedModel([empty, answer("Take one.")]) as model:
        code, out, err = cli("-v", "--config", config, "ask", "q", "--model", "m",
                             "--base-url", model.base_url)
    assert (code, out) == (0, "Take one.\n")
    first, second = model.bodies
    assert first["stream"] is True and "stream" not in second and "stream_options" not in second
    assert first["messages"] == second["messages"]
    assert "ended its stream before its first event; asking again without streaming" in err


def test_an_empty_stream_then_an_error_fails_with_that_error(cli, config):
    overflow = raw(400, {"error": {"message": "This model's maximum context length is 1024 tokens.",
                                   "type": "invalid_request_error", "code": "context_length_exceeded"}})
    with ScriptedModel([empty_stream(), overflow, answer("never")]) as model:
        code, out, err = cli("--config", config, "ask", "q", "--model", "m",
                             "--base-url", model.base_url, "--json")
    assert code == 1 and len(model.requests) == 2
    error = json.loads(err.splitlines()[-1])["error"]
    assert error["kind"] == "remote" and "HTTP 400: This model's maximum context length" in error["message"]
    transcript = json.loads(out)
    assert [r["fallback"] for r in transcript["steps"][0]["retries"]] == ["stream"]


def test_each_step_falls_back_on_its_own(tmp_path):
    script = [empty_stream(), calls(("fake_echo", '{"city": "a"}', "c1")), empty_stream(), answer("ok")]
    with ScriptedModel(script) as model:
        transcript, _ = agent(model, [fake_client(tmp_path, [ECHO])])
    assert transcript["answer"] == "ok"
    assert [b.get("stream", False) for b in model.bodies] == [True, False, True, False]
    assert [len(s["retries"]) for s in transcript["steps"]] == [1, 1]


def test_a_stream_with_events_but_no_finish_is_not_asked_unstreamed():
    with ScriptedModel([sse(chunk({"role": "assistant"}), done=False)] * 3) as model:
        with pytest.raises(mcpmini.ConnectionClosed, match="without a finish_reason"):
            agent(model)
    assert all(b["stream"] is True for b in model.bodies)


# Error lines -----------------------------------------------------------------------------------

@pytest.mark.parametrize("status, body, code, shown", [
    (401, {"detail": "Invalid API key"}, 4, "HTTP 401: Invalid API key"),                 # FastAPI
    (500, {"error": {"message": PYDANTIC_CONTENT_NULL, "type": "internal_server_error"}}, 1,
     "HTTP 500: 7 validation errors: {'type': 'literal_error',"),
    (500, {"error": {"message": "", "type": "internal_server_error"}}, 1, "HTTP 500: internal_server_error"),
    (422, {"detail": [{"type": "missing", "loc": ["body", "messages"], "msg": "Field required"}]}, 1,
     "HTTP 422: body.messages: Field required"),
    (400, {"message": "line one\nline two\n\n  three"}, 1, "HTTP 400: line one line two three"),
    (502, b"<html>\r\n<body>Bad gateway</body>\r\n</html>", 1, "HTTP 502: <html> <body>Bad gateway</body> </html>"),
])
def test_an_endpoint_error_is_one_readable_line(cli, config, status, body, code, shown):
    with ScriptedModel([raw(status, body)] * 3) as model:
        got, out, err = cli("--config", config, "ask", "q", "--model", "m",
                            "--base-url", model.base_url, "--no-stream")
    assert (got, out) == (code, "")
    lines = [line for line in err.splitlines() if line.startswith("mcpmini: error: ")]
    assert len(lines) == 1 and shown in lines[0] and "\\n" not in err
