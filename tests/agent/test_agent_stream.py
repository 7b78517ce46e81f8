"""Streaming replies as real servers send them (issue 5, item 5; openai-compat §3): calls in
pieces, ids missing later, no index, comments, errors inside a 200 stream, truncated streams,
keep-alives that must not extend the deadline."""
from __future__ import annotations

import pytest

import mcpmini
from agent_fakes import ScriptedModel, answer, chunk, raw, sse
from agent_harness import ECHO_SCHEMA, agent, fake_client, tool_calls_received

ECHO = {"name": "echo", "inputSchema": ECHO_SCHEMA}

pytestmark = pytest.mark.usefixtures("quick_backoff")


def tc(index, id=None, name=None, arguments=None, **extra):
    fn = {k: v for k, v in (("name", name), ("arguments", arguments)) if v is not None}
    call = {"index": index, **({"id": id} if id is not None else {}), **({"function": fn} if fn else {}), **extra}
    if index is None:
        del call["index"]
    return {"tool_calls": [call]}


def test_a_call_split_over_many_chunks_with_interleaving_and_empty_ids(tmp_path):
    stream = sse(
        ": OPENROUTER PROCESSING",
        chunk({"role": "assistant", "content": None}),
        chunk(tc(0, "call_a", "fake_echo", "", type="function")),
        chunk(tc(1, "call_b", "fake_echo", "", type="function")),
        chunk(tc(0, "", arguments='{"ci')),
        ": keep-alive",
        chunk(tc(1, "", arguments='{"city"', type="function")),
        chunk(tc(0, "", arguments='ty": "Hang')),
        chunk(tc(1, "", arguments=': "Paris"}')),
        chunk(tc(0, "", arguments='zhou"}')),
        "data:" + __import__("json").dumps(chunk({}, "tool_calls")),      # no space after the colon
        {"id": "x", "object": "chat.completion.chunk", "choices": [],
         "usage": {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6}},
    )
    with ScriptedModel([stream, answer("ok")]) as model:
        transcript, _ = agent(model, [fake_client(tmp_path, [ECHO])])
    assert sorted(c["arguments"]["city"] for c in tool_calls_received(tmp_path)) == ["Hangzhou", "Paris"]
    assert model.bodies[1]["messages"][2]["tool_calls"] == [
        {"id": "call_a", "type": "function", "function": {"name": "fake_echo", "arguments": '{"city": "Hangzhou"}'}},
        {"id": "call_b", "type": "function", "function": {"name": "fake_echo", "arguments": '{"city": "Paris"}'}}]
    assert [m["tool_call_id"] for m in model.bodies[1]["messages"][3:]] == ["call_a", "call_b"]
    assert transcript["steps"][0]["usage"]["total_tokens"] == 6


def test_calls_without_index_and_without_ids(tmp_path):
    # Gemini sends no index; LM Studio-like servers may send no id: ids are made up.
    stream = sse(chunk(tc(None, "g1", "fake_echo", '{"city": "a"}')),
                 chunk(tc(None, "g2", "fake_echo", '{"city": "b"}')),
                 chunk(tc(5, None, "fake_echo", '{"city": "c"}')),
                 chunk({}, "stop"))
    with ScriptedModel([stream, answer("ok")]) as model:
        agent(model, [fake_client(tmp_path, [ECHO])])
    calls = model.bodies[1]["messages"][2]["tool_calls"]
    assert [c["id"] for c in calls][:2] == ["g1", "g2"]
    assert len(calls[2]["id"]) == 9 and calls[2]["id"].isalnum()
    assert [m["tool_call_id"] for m in model.bodies[1]["messages"][3:]] == [c["id"] for c in calls]
    assert len(tool_calls_received(tmp_path)) == 3


@pytest.mark.parametrize("event", [
    'data: {"error": {"message": "overloaded", "type": "server_error"}}',
    'event: error\ndata: {"message": "overloaded"}',
    'error: {"code": 500, "message": "overloaded", "type": "server_error"}',   # llama.cpp
    'data: {"object": "error", "message": "overloaded", "code": 400}',           # older vLLM
])
def test_an_error_inside_a_200_stream_stops_the_run(event):
    stream = sse(chunk({"role": "assistant", "content": ""}), chunk({"content": "Partial "}), event)
    with ScriptedModel([stream, answer("never")]) as model:
        with pytest.raises(mcpmini._ModelError) as info:
            agent(model)
    assert "overloaded" in str(info.value) and model.base_url in str(info.value)
    assert (info.value).kind == "remote"
    assert len(model.requests) == 1          # text was printed: never retried


def test_a_stream_that_ends_without_a_finish_after_text_fails_without_retry():
    stream = sse(chunk({"content": "Take an "}), done=False)
    with ScriptedModel([stream, answer("never")]) as model:
        with pytest.raises(mcpmini.ConnectionClosed, match="without a finish_reason"):
            agent(model)
    assert len(model.requests) == 1


def test_a_truncated_stream_never_runs_its_partial_calls(tmp_path):
    cut = sse(chunk(tc(0, "c1", "fake_echo", '{"city": "Han')), done=False)
    with ScriptedModel([cut, cut, cut]) as model:
        with pytest.raises(mcpmini.ConnectionClosed) as info:
            agent(model, [fake_client(tmp_path, [ECHO])])
    assert tool_calls_received(tmp_path) == []
    assert len(model.requests) == 3          # nothing printed: retried twice, then given up
    assert len(info.value.transcript["steps"][0]["retries"]) == 2


def test_a_server_that_ignores_stream_true_and_answers_json():
    body = {"choices": [{"index": 0, "message": {"role": "assistant", "content": "plain"},
                         "finish_reason": "stop"}]}
    with ScriptedModel([raw(200, body)]) as model:
        transcript, texts = agent(model)
    assert texts == ["plain"] and transcript["answer"] == "plain"
    assert model.bodies[0]["stream"] is True


def test_keep_alives_do_not_extend_the_deadline():
    stream = sse(*[": keep-alive"] * 40, interval=0.1, done=False)
    with ScriptedModel([stream]) as model:
        with pytest.raises(mcpmini.RequestTimeout) as info:
            agent(model, timeout=0.5)
    assert (info.value).kind == "timeout" and mcpmini.EXIT_CODES["timeout"] == 124
    assert len(model.requests) == 1
