"""Agent building blocks without a network: function names and their reverse map, schema
normalization, descriptions, the system prompt, argument checks, the stream accumulator, and
error/Retry-After parsing (issue 5, items 3 and 5; openai-compat §1, §3, §4, §6)."""
from __future__ import annotations

import copy
import json
import re

import pytest

import mcpmini

PORTABLE = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,63}$")


# Function names ---------------------------------------------------------------------------

def test_names_are_rewritten_to_the_portable_pattern_and_map_back():
    pairs = [("my server", "weather.get-forecast/v2"), ("fs", "read file"), ("数据", "查询"),
             ("9lives", "x"), ("s", "a" * 128), ("s", "_private")]
    aliases = mcpmini._function_names(pairs)
    assert all(PORTABLE.match(a) for a in aliases), list(aliases)
    assert sorted(aliases.values()) == sorted(pairs)   # the reverse map, one alias per pair
    assert aliases["my_server_weather_get-forecast_v2"] == ("my server", "weather.get-forecast/v2")
    assert aliases["fs_read_file"] == ("fs", "read file")
    assert [a for a, p in aliases.items() if p == ("9lives", "x")] == ["t_9lives_x"]
    long = [a for a, p in aliases.items() if p == ("s", "a" * 128)][0]
    assert len(long) == 64 and long.startswith("s_aaa")


def test_colliding_names_are_resolved_deterministically():
    pairs = [("a", "b.c"), ("a", "b/c"), ("a_b", "c"), ("a", "B_C")]
    first = mcpmini._function_names(pairs)
    assert len(first) == 4 and all(PORTABLE.match(a) for a in first)
    assert first["a_b_c"] == ("a", "b.c")       # the first pair keeps the plain name
    assert len({a.lower() for a in first}) == 4  # no two differ only in case
    assert mcpmini._function_names(pairs) == first
    # A pair's alias does not depend on unrelated pairs listed after it.
    assert mcpmini._function_names(pairs[:2]) == {k: v for k, v in first.items() if v in pairs[:2]}


# Schemas ----------------------------------------------------------------------------------

def test_parameters_are_a_normalized_deep_copy():
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "urn:x",
        "properties": {
            "tags": {"type": "array"},
            "matrix": {"type": "array", "items": {"type": ["array", "null"]}},
            "either": {"anyOf": [{"type": "array"}, {"type": "string"}]},
            "enum": {"type": "string", "enum": [{"type": "array"}]},
            "opts": {"type": "object", "default": {"type": "array"},
                     "properties": {"deep": {"type": "array"}}},
        },
        "$defs": {"list": {"type": "array"}},
    }
    before = copy.deepcopy(schema)
    params = mcpmini._parameters(schema)
    assert schema == before                      # the server's schema is never modified
    assert "$schema" not in params and "$id" not in params
    assert params["type"] == "object"
    props = params["properties"]
    assert props["tags"] == {"type": "array", "items": {}}
    assert props["matrix"]["items"] == {"type": ["array", "null"], "items": {}}
    assert props["either"]["anyOf"][0] == {"type": "array", "items": {}}
    assert props["enum"]["enum"] == [{"type": "array"}]     # data, not a schema
    assert props["opts"]["default"] == {"type": "array"}
    assert props["opts"]["properties"]["deep"]["items"] == {}
    assert params["$defs"]["list"]["items"] == {}
    params["properties"]["tags"]["items"]["type"] = "string"
    assert schema == before                      # no shared structure either


@pytest.mark.parametrize("schema", [None, {}, {"type": "object"}, {"properties": "bad"}, []])
def test_parameters_always_have_an_object_root_with_properties(schema):
    params = mcpmini._parameters(schema)
    assert params["type"] == "object" and params["properties"] == {}


def test_function_tool_keeps_the_description_within_1024_characters():
    tool = {"name": "t", "description": "d" * 5000, "inputSchema": {"type": "object"}}
    spec = mcpmini._function_tool("srv_t", tool)
    assert spec["type"] == "function"
    assert spec["function"]["name"] == "srv_t"
    assert len(spec["function"]["description"]) == 1024
    assert spec["function"]["parameters"] == {"type": "object", "properties": {}}
    assert "description" not in mcpmini._function_tool("x", {"name": "t"})["function"]


def test_system_prompt_carries_each_servers_instructions_cut():
    text = mcpmini._system_prompt(None, [("weather", "Use metric."), ("big", "x" * 10_000)])
    assert text.startswith(mcpmini.AGENT_SYSTEM)
    assert "'weather'" in text and "Use metric." in text
    assert "x" * mcpmini.AGENT_MAX_INSTRUCTIONS in text
    assert "x" * (mcpmini.AGENT_MAX_INSTRUCTIONS + 1) not in text
    assert "cut" in text
    assert mcpmini._system_prompt("Be brief.", []) == "Be brief."
    assert mcpmini._system_prompt("", []) == ""


# Arguments --------------------------------------------------------------------------------

SCHEMA = {"type": "object", "properties": {"city": {"type": "string"},
                                           "days": {"type": "integer"},
                                           "unit": {"enum": ["C", "F"]}},
          "required": ["city"], "additionalProperties": False}


@pytest.mark.parametrize("arguments, expected", [
    ({"city": "Hangzhou"}, None),
    ({"city": "Hangzhou", "days": 2.0, "unit": "C"}, None),
    ({}, "missing required argument 'city' (string)"),
    ({"city": "x", "when": 1}, "unknown argument 'when'"),
    ({"city": 3}, "argument 'city' must be string"),
    ({"city": "x", "days": True}, "argument 'days' must be integer"),
    ({"city": "x", "unit": "K"}, "argument 'unit' must be one of"),
])
def test_argument_problems_are_named_for_the_model(arguments, expected):
    problem = mcpmini._argument_problem(arguments, SCHEMA)
    assert problem == expected if expected is None else problem.startswith(expected)


def test_parse_arguments_accepts_empty_and_double_encoded_json():
    assert mcpmini._parse_arguments("") == ({}, None)
    assert mcpmini._parse_arguments("null") == ({}, None)
    assert mcpmini._parse_arguments(json.dumps('{"a": 1}')) == ({"a": 1}, None)
    assert mcpmini._parse_arguments('{"a": ')[0] is None
    assert "JSON object" in mcpmini._parse_arguments("[1]")[1]


# The accumulator --------------------------------------------------------------------------

def test_accumulator_joins_calls_by_index_with_empty_ids_and_interleaving():
    reply = mcpmini._Reply()
    deltas = [
        {"role": "assistant", "content": None, "tool_calls": [
            {"index": 0, "id": "call_a", "type": "function", "function": {"name": "f", "arguments": ""}}]},
        {"tool_calls": [{"index": 1, "id": "call_b", "type": "function", "function": {"name": "g"}}]},
        {"tool_calls": [{"index": 0, "id": "", "type": "function", "function": {"arguments": '{"x":'}}]},
        {"tool_calls": [{"index": 1, "id": "", "function": {"name": "", "arguments": '{"y": 2}'}}]},
        {"tool_calls": [{"index": 0, "function": {"arguments": " 1}"}}]},
        {"tool_calls": [{"index": 2, "function": {}}]},       # a phantom call: no name
    ]
    for delta in deltas:
        reply.add_delta(delta)
    assert reply.tool_calls() == [
        {"id": "call_a", "type": "function", "function": {"name": "f", "arguments": '{"x": 1}'}},
        {"id": "call_b", "type": "function", "function": {"name": "g", "arguments": '{"y": 2}'}}]


def test_accumulator_without_index_object_arguments_and_missing_ids():
    reply = mcpmini._Reply()
    reply.add_delta({"tool_calls": [{"id": "a", "function": {"name": "f", "arguments": {"k": "v"}}}]})
    reply.add_delta({"tool_calls": [{"id": "b", "function": {"name": "g", "arguments": None}},
                                    {"index": 5, "function": {"name": "h"}},
                                    {"index": 6, "id": "b", "function": {"name": "i"}}]})
    calls = reply.tool_calls()
    assert [c["function"]["name"] for c in calls] == ["f", "g", "h", "i"]
    assert calls[0]["function"]["arguments"] == '{"k": "v"}'
    assert calls[1]["function"]["arguments"] == "{}"
    ids = [c["id"] for c in calls]
    assert ids[:2] == ["a", "b"] and len(set(ids)) == 4   # missing and repeated ids replaced
    assert all(re.fullmatch(r"[A-Za-z0-9]{9}", i) for i in ids[2:])


def test_accumulator_takes_an_unhashable_index_as_no_index():
    reply = mcpmini._Reply()
    for index in ([0], {"i": 1}, None):
        reply.add_delta({"tool_calls": [{"index": index, "id": f"c{len(reply.slots)}", "function": {"name": "f"}}]})
    assert [c["id"] for c in reply.tool_calls()] == ["c0", "c1", "c2"]


def test_accumulator_keeps_vendor_fields_and_never_returns_reasoning_as_text():
    reply = mcpmini._Reply()
    shown = [reply.add_delta({"reasoning_content": "think "}), reply.add_delta({"reasoning_content": "more"}),
             reply.add_delta({"content": "Hi", "refusal": None}),
             reply.add_delta({"tool_calls": [{"index": 0, "id": "c", "function": {"name": "f"},
                                              "extra_content": {"google": {"thought_signature": "s"}}}]})]
    assert shown == ["", "", "Hi", ""]
    assert reply.extra == {"reasoning_content": "think more"}
    assert reply.tool_calls()[0]["extra_content"] == {"google": {"thought_signature": "s"}}


# Errors and Retry-After -------------------------------------------------------------------

@pytest.mark.parametrize("body, expected", [
    (b'{"error": {"message": "bad key", "code": "invalid_api_key"}}', ("bad key", "invalid_api_key")),
    (b'{"error": "model not found"}', ("model not found", None)),
    (b'{"object": "error", "message": "flat", "code": 400}', ("flat", 400)),
    (b'[{"error": {"message": "gemini", "code": 400}}]', ("gemini", 400)),
    (b"error code: 1010", ("error code: 1010", None)),
])
def test_error_text_follows_the_chain(body, expected):
    assert mcpmini._error_text(body) == expected


def test_retry_after_headers():
    import email.utils
    import time
    assert mcpmini._retry_after({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    assert mcpmini._retry_after({"retry-after": "2"}) == 2.0
    assert mcpmini._retry_after({"retry-after": "3600"}) is None   # over the cap: back off instead
    assert mcpmini._retry_after({}) is None
    date = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 20 < mcpmini._retry_after({"retry-after": date}) <= 31
