"""run_agent against a scripted model and fake MCP servers: every request the model receives
is checked field by field against the Chat Completions reference (issue 5, items 3 and 4)."""
from __future__ import annotations

import json
import re

import pytest

import mcpmini
from agent_fakes import ScriptedModel, answer, calls
from agent_harness import ECHO_SCHEMA, fake_client, tool_calls_received
from harness import run

ECHO = {"name": "echo", "inputSchema": ECHO_SCHEMA, "description": "Echo the arguments."}


def agent(model: ScriptedModel, clients, question="Umbrella in Hangzhou?", **options):
    texts: list[str] = []
    options.setdefault("on_text", texts.append)
    transcript = run(mcpmini.run_agent(question, clients, model="test-model",
                                       base_url=model.base_url, **options))
    return transcript, texts


def check_request(req: dict, *, stream: bool, tools: bool, key: str | None = None) -> None:
    """The reference's rules for every request (openai-compat §1, §6)."""
    body, headers = req["body"], req["headers"]
    assert req["path"] == "/v1/chat/completions"
    assert headers["content-type"] == "application/json"
    assert headers["user-agent"] == f"mcpmini/{mcpmini.__version__}"
    assert headers.get("authorization") == (f"Bearer {key}" if key else None)
    assert body["model"] == "test-model"
    assert isinstance(body["messages"], list) and body["messages"]
    if stream:
        assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    else:
        assert "stream" not in body and "stream_options" not in body
    if tools:
        assert isinstance(body["tools"], list) and body["tools"]
        assert body["tool_choice"] == "auto"   # llama-cpp-python reads a missing one as "none"
        for tool in body["tools"]:
            assert tool["type"] == "function" and set(tool) == {"type", "function"}
            fn = tool["function"]
            assert re.fullmatch(r"[A-Za-z][A-Za-z0-9_-]{0,63}", fn["name"])
            assert set(fn) <= {"name", "description", "parameters"} and "strict" not in fn
            assert fn["parameters"]["type"] == "object" and isinstance(fn["parameters"]["properties"], dict)
            assert len(fn.get("description", "")) <= 1024
    else:
        assert "tools" not in body and "tool_choice" not in body
    for key_name in ("parallel_tool_calls", "temperature", "max_tokens"):
        assert key_name not in body
    roles = [m["role"] for m in body["messages"]]
    assert "system" not in roles[1:] and "developer" not in roles
    pending: list[str] = []
    for m in body["messages"]:
        assert "content" in m and "name" not in m
        if m["role"] == "assistant" and m.get("tool_calls"):
            assert not pending and isinstance(m["content"], str)   # null: a 500 at llama-cpp-python
            for call in m["tool_calls"]:
                assert call["id"] and call["type"] == "function"
                assert isinstance(call["function"]["arguments"], str)
                json.loads(call["function"]["arguments"])
                pending.append(call["id"])
        elif m["role"] == "tool":
            assert isinstance(m["content"], str) and m["tool_call_id"] == pending.pop(0)
            assert set(m) == {"role", "tool_call_id", "content"}
        else:
            assert not pending and isinstance(m["content"], str)
    assert not pending


@pytest.mark.parametrize("stream", [True, False])
def test_plain_answer_with_no_servers_sends_no_tools_key(stream):
    with ScriptedModel([answer("Yes, take one.")]) as model:
        transcript, texts = agent(model, [], stream=stream)
    assert transcript["answer"] == "Yes, take one." and "".join(texts) == "Yes, take one."
    assert len(model.requests) == 1
    check_request(model.requests[0], stream=stream, tools=False)
    assert [m["role"] for m in model.bodies[0]["messages"]] == ["system", "user"]
    assert model.bodies[0]["messages"][1]["content"] == "Umbrella in Hangzhou?"
    assert transcript["messages"][-1] == {"role": "assistant", "content": "Yes, take one."}


def test_key_is_sent_as_bearer_only_when_given(tmp_path):
    with ScriptedModel([answer("ok")], api_key="sk-test-0123456789abcdef") as model:
        transcript, _ = agent(model, [], api_key="sk-test-0123456789abcdef")
    check_request(model.requests[0], stream=True, tools=False, key="sk-test-0123456789abcdef")
    assert "sk-test" not in json.dumps(transcript)


@pytest.mark.parametrize("stream", [True, False])
def test_one_tool_call_round_trip(tmp_path, stream):
    script = [calls(("fake_echo", '{"city": "Hangzhou"}', "call_1")), answer("Take an umbrella.")]
    with ScriptedModel(script) as model:
        transcript, texts = agent(model, [fake_client(tmp_path, [ECHO])], stream=stream)
    assert transcript["answer"] == "Take an umbrella." and "".join(texts) == "Take an umbrella."
    assert [(c["name"], c["arguments"]) for c in tool_calls_received(tmp_path)] == [
        ("echo", {"city": "Hangzhou"})]
    first, second = model.requests
    check_request(first, stream=stream, tools=True)
    check_request(second, stream=stream, tools=True)
    assert first["body"]["tools"] == [{"type": "function", "function": {
        "name": "fake_echo", "description": "Echo the arguments.", "parameters": ECHO_SCHEMA}}]
    assert second["body"]["tools"] == first["body"]["tools"]
    assert second["body"]["messages"][:2] == first["body"]["messages"]
    assistant, tool = second["body"]["messages"][2:]
    assert assistant == {"role": "assistant", "content": "", "tool_calls": [
        {"id": "call_1", "type": "function",
         "function": {"name": "fake_echo", "arguments": '{"city": "Hangzhou"}'}}]}
    assert tool == {"role": "tool", "tool_call_id": "call_1",
                    "content": '{"tool": "echo", "arguments": {"city": "Hangzhou"}}'}
    step = transcript["steps"][0]
    assert step["finish_reason"] == "tool_calls"
    assert step["tool_calls"][0]["server"] == "fake" and step["tool_calls"][0]["tool"] == "echo"
    assert step["tool_calls"][0]["is_error"] is False
    assert transcript["tools"] == {"fake_echo": {"server": "fake", "tool": "echo"}}


def test_two_parallel_calls_run_concurrently_and_are_answered_in_order(tmp_path):
    pair = {"name": "pair", "does": "pair"}
    script = [calls(("fake_pair", '{"n": 1}', "call_b"), ("fake_pair", '{"n": 2}', "call_a")),
              answer("done")]
    with ScriptedModel(script) as model:
        agent(model, [fake_client(tmp_path, [pair])])
    check_request(model.requests[1], stream=True, tools=True)
    msgs = model.bodies[1]["messages"]
    assert [c["id"] for c in msgs[2]["tool_calls"]] == ["call_b", "call_a"]
    # "together": each call was answered only once both were in flight at the server.
    assert msgs[3:] == [{"role": "tool", "tool_call_id": "call_b", "content": "together"},
                        {"role": "tool", "tool_call_id": "call_a", "content": "together"}]


@pytest.mark.parametrize("stream", [True, False])
def test_arguments_as_an_object(tmp_path, stream):
    script = [calls(("fake_echo", {"city": "Hangzhou"}, "c1")), answer("ok")]
    with ScriptedModel(script) as model:
        agent(model, [fake_client(tmp_path, [ECHO])], stream=stream)
    assert [c["arguments"] for c in tool_calls_received(tmp_path)] == [{"city": "Hangzhou"}]
    call = model.bodies[1]["messages"][2]["tool_calls"][0]
    assert json.loads(call["function"]["arguments"]) == {"city": "Hangzhou"}   # a JSON string
    check_request(model.requests[1], stream=stream, tools=True)


def test_malformed_arguments_go_back_to_the_model_as_an_error(tmp_path):
    script = [calls(("fake_echo", '{"city": "Hang', "c1")),
              calls(("fake_echo", '{"city": "Hangzhou"}', "c2")), answer("ok")]
    with ScriptedModel(script) as model:
        transcript, _ = agent(model, [fake_client(tmp_path, [ECHO])])
    msgs = model.bodies[1]["messages"]
    assert msgs[2]["tool_calls"][0]["function"]["arguments"] == "{}"   # history stays valid JSON
    assert msgs[3]["tool_call_id"] == "c1"
    assert msgs[3]["content"].startswith("Error: the arguments are not valid JSON")
    assert '{"city": "Hang' in msgs[3]["content"]
    assert [c["arguments"] for c in tool_calls_received(tmp_path)] == [{"city": "Hangzhou"}]
    for req in model.requests:
        check_request(req, stream=True, tools=True)
    assert transcript["answer"] == "ok"


def test_double_encoded_arguments_are_decoded_and_stored_as_an_object(tmp_path):
    script = [calls(("fake_echo", json.dumps('{"city": "a"}'), "c1")), answer("ok")]
    with ScriptedModel(script) as model:
        agent(model, [fake_client(tmp_path, [ECHO])])
    assert [c["arguments"] for c in tool_calls_received(tmp_path)] == [{"city": "a"}]
    assert model.bodies[1]["messages"][2]["tool_calls"][0]["function"]["arguments"] == '{"city": "a"}'


def test_unknown_tool_name_and_schema_failures_are_errors_for_the_model(tmp_path):
    script = [calls(("fake_nope", "{}", "c1"), ("fake_echo", '{"town": "x"}', "c2")), answer("sorry")]
    with ScriptedModel(script) as model:
        agent(model, [fake_client(tmp_path, [ECHO])])
    unknown, invalid = model.bodies[1]["messages"][3:]
    assert unknown["content"].startswith("Error: there is no tool named 'fake_nope'")
    assert "fake_echo" in unknown["content"]
    assert invalid["content"] == "Error: invalid arguments for fake_echo: missing required argument 'city' (string)."
    assert tool_calls_received(tmp_path) == []
    check_request(model.requests[1], stream=True, tools=True)


def test_is_error_and_json_rpc_errors_go_back_to_the_model(tmp_path):
    tools = [{"name": "bad", "does": "error", "text": "the city is not known"},
             {"name": "down", "does": "rpc_error", "message": "database is down"}]
    script = [calls(("fake_bad", "{}", "c1"), ("fake_down", "{}", "c2")), answer("sorry")]
    with ScriptedModel(script) as model:
        transcript, _ = agent(model, [fake_client(tmp_path, tools)])
    bad, down = model.bodies[1]["messages"][3:]
    assert bad["content"] == "Error: the city is not known"
    assert down["content"] == "Error: the tool failed with JSON-RPC error -32000: database is down"
    assert [c["is_error"] for c in transcript["steps"][0]["tool_calls"]] == [True, True]
    assert transcript["answer"] == "sorry"


@pytest.mark.parametrize("stream", [True, False])
def test_calls_run_even_when_finish_reason_says_stop(tmp_path, stream):
    script = [calls(("fake_echo", '{"city": "a"}', "c1"), finish="stop"), answer("ok")]
    with ScriptedModel(script) as model:
        agent(model, [fake_client(tmp_path, [ECHO])], stream=stream)
    assert len(tool_calls_received(tmp_path)) == 1
    assert model.bodies[1]["messages"][3]["tool_call_id"] == "c1"


def test_calls_of_a_length_finish_are_not_run(tmp_path):
    script = [calls(("fake_echo", '{"city": "Hangzhou"}', "c1"), ("fake_echo", '{"city": "Han', "c2"),
                    finish="length"), answer("ok")]
    with ScriptedModel(script) as model:
        agent(model, [fake_client(tmp_path, [ECHO])])
    assert tool_calls_received(tmp_path) == []
    history = model.bodies[1]["messages"][2]["tool_calls"]
    assert [c["function"]["arguments"] for c in history] == ['{"city": "Hangzhou"}', "{}"]
    assert [m["tool_call_id"] for m in model.bodies[1]["messages"][3:]] == ["c1", "c2"]
    tool = model.bodies[1]["messages"][3]
    assert tool["tool_call_id"] == "c1" and "cut off" in tool["content"] and "not run" in tool["content"]
    check_request(model.requests[1], stream=True, tools=True)


def test_max_steps_reached_is_an_agent_error(tmp_path):
    script = [calls(("fake_echo", '{"city": "a"}', f"c{i}")) for i in range(3)]
    with ScriptedModel(script) as model:
        with pytest.raises(mcpmini.MCPError) as info:
            agent(model, [fake_client(tmp_path, [ECHO])], max_steps=2)
    assert (info.value).kind == "agent"
    assert mcpmini.EXIT_CODES[(info.value).kind] == 1
    assert "2 model request" in str(info.value) and "max_steps=" in str(info.value)
    assert len(model.requests) == 2
    assert len(tool_calls_received(tmp_path)) == 1   # the last step's calls are not run
    assert info.value.transcript["error"]["kind"] == "agent"
    assert len(info.value.transcript["steps"]) == 2


def test_long_results_are_cut_with_a_note(tmp_path):
    big = {"name": "big", "does": "big", "size": 5000}
    script = [calls(("fake_big", "{}", "c1")), answer("ok")]
    with ScriptedModel(script) as model:
        transcript, _ = agent(model, [fake_client(tmp_path, [big])], max_result_chars=1000)
    content = model.bodies[1]["messages"][3]["content"]
    assert content.startswith("x" * 1000) and "x" * 1001 not in content
    assert "4000 of 5000 characters cut" in content
    assert transcript["steps"][0]["tool_calls"][0]["cut_chars"] == 4000


def test_names_with_dots_slashes_and_spaces_map_there_and_back(tmp_path):
    odd = {"name": "weather.get-forecast/v2", "inputSchema": ECHO_SCHEMA}
    script = [calls(("my_server_weather_get-forecast_v2", '{"city": "Hangzhou"}', "c1")), answer("ok")]
    with ScriptedModel(script) as model:
        transcript, _ = agent(model, {"my server": fake_client(tmp_path, [odd])})
    assert [t["function"]["name"] for t in model.bodies[0]["tools"]] == ["my_server_weather_get-forecast_v2"]
    assert [c["name"] for c in tool_calls_received(tmp_path)] == ["weather.get-forecast/v2"]
    assert transcript["tools"] == {"my_server_weather_get-forecast_v2":
                                   {"server": "my server", "tool": "weather.get-forecast/v2"}}


def test_two_servers_with_the_same_tool_name_are_told_apart(tmp_path):
    one = fake_client(tmp_path, [ECHO], name="one")
    two = fake_client(tmp_path, [ECHO], name="two")
    script = [calls(("two_echo", '{"city": "b"}', "c1"), ("one_echo", '{"city": "a"}', "c2")), answer("ok")]
    with ScriptedModel(script) as model:
        agent(model, [one, two])
    assert sorted(t["function"]["name"] for t in model.bodies[0]["tools"]) == ["one_echo", "two_echo"]
    assert [c["arguments"] for c in tool_calls_received(tmp_path, "one")] == [{"city": "a"}]
    assert [c["arguments"] for c in tool_calls_received(tmp_path, "two")] == [{"city": "b"}]
    assert [m["content"] for m in model.bodies[1]["messages"][3:]] == [
        '{"tool": "echo", "arguments": {"city": "b"}}', '{"tool": "echo", "arguments": {"city": "a"}}']


def test_server_instructions_go_into_the_one_system_message(tmp_path):
    client = fake_client(tmp_path, [ECHO], instructions="Always answer in haiku.")
    with ScriptedModel([answer("ok")]) as model:
        agent(model, [client], system="You are terse.")
    messages = model.bodies[0]["messages"]
    assert messages[0]["role"] == "system"
    assert messages[0]["content"].startswith("You are terse.")
    assert "'fake'" in messages[0]["content"] and "Always answer in haiku." in messages[0]["content"]


@pytest.mark.parametrize("allow", [False, True])
def test_confirm_is_asked_before_each_call(tmp_path, allow):
    asked = []

    async def confirm(server, tool, arguments):
        asked.append((server, tool, arguments))
        return allow

    script = [calls(("fake_echo", '{"city": "a"}', "c1")), answer("ok")]
    with ScriptedModel(script) as model:
        agent(model, [fake_client(tmp_path, [ECHO])], confirm=confirm)
    assert asked == [("fake", "echo", {"city": "a"})]
    assert len(tool_calls_received(tmp_path)) == (1 if allow else 0)
    content = model.bodies[1]["messages"][3]["content"]
    assert (content == "Error: the user declined this tool call.") is not allow


@pytest.mark.parametrize("stream", [True, False])
def test_reasoning_is_never_text_but_goes_back_to_its_endpoint(tmp_path, stream):
    script = [calls(("fake_echo", '{"city": "a"}', "c1"), text="Let me check. "),
              answer("Done.", reasoning="secret thoughts")]
    script[0]["reasoning"] = "I should call echo"
    with ScriptedModel(script) as model:
        transcript, texts = agent(model, [fake_client(tmp_path, [ECHO])], stream=stream)
    assert "".join(texts) == "Let me check. Done."
    assistant = model.bodies[1]["messages"][2]
    assert assistant["content"] == "Let me check. "          # text beside calls is kept
    assert assistant["reasoning_content"] == "I should call echo"
    assert transcript["answer"] == "Done."
    assert "secret" not in "".join(texts)


def test_usage_is_summed_over_steps(tmp_path):
    usage = {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}
    script = [calls(("fake_echo", '{"city": "a"}', "c1")), answer("ok", usage=usage)]
    script[0]["usage"] = usage
    with ScriptedModel(script) as model:
        transcript, _ = agent(model, [fake_client(tmp_path, [ECHO])])
    assert transcript["usage"] == {"prompt_tokens": 20, "completion_tokens": 4, "total_tokens": 24}
    assert all(isinstance(s["seconds"], float) for s in transcript["steps"])
