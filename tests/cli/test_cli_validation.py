"""Arguments are checked against the schema's top level before anything is sent: required,
types, enum, additionalProperties: false; an unknown tool gets the closest names."""
from __future__ import annotations

import json

import pytest


@pytest.mark.parametrize("tool, items, needles", [
    ("strict", ["days=2"], ["strict", "missing required argument 'city'", "string"]),
    ("strict", ["city=Paris", "bogus=1"], ["unknown argument 'bogus'", "city, days"]),
    # keys the schema does not list are refused unless it allows more explicitly (item 7)
    ("typed", ["cout=1"], ["unknown argument 'cout'; did you mean 'count'?", "zip, code"]),
    ("strict", ["cty=Paris"], ["unknown argument 'cty'; did you mean 'city'?", "required: 'city'"]),
    ("strict", ["city=Paris", "days=soon"], ["'days'", '"soon"', "(string)", "integer"]),
    ("strict", ['{"city": 7}'], ["'city'", "7 (integer)", "string"]),
    ("typed", ["count=1.5"], ["'count'", "1.5", "integer"]),
    ("typed", ["flag=yes"], ["'flag'", '"yes"', "boolean"]),
    ("typed", ["ratio=abc"], ["'ratio'", '"abc"', "number"]),
    ("typed", ["mode=medium"], ["'mode'", '"medium"', '"fast"', '"slow"']),
    ("typed", ["limit=many"], ["'limit'", '"many"', "integer or null"]),
    ("typed", ["opts=notjson"], ["'opts'", '"notjson"', "object", "key:=JSON"]),
    ("typed", ["tags:={}"], ["'tags'", "{}", "array"]),
    ("typed", ["zip:=2134"], ["'zip'", "2134 (integer)", "string"]),
    ("typed", ["note:=1"], ["'note'", "null or string"]),
])
def test_mismatch_exits_2_naming_argument_given_and_wanted(cli, fake, tool, items, needles):
    server = fake()
    r = cli("call", server.cmdline, tool, *items)
    assert r.code == 2, r
    [line] = r.error_lines
    for needle in needles:
        assert needle in line, (needle, line)
    assert server.calls() == []  # nothing was sent


def test_valid_arguments_pass_the_check(cli, fake):
    server = fake()
    r = cli("call", server.cmdline, "strict", "city=02134", "days=3")
    assert r.code == 0, r.err
    assert server.arguments() == {"city": "02134", "days": 3}


def test_integer_is_accepted_for_number(cli, fake):
    server = fake()
    assert cli("call", server.cmdline, "typed", "ratio:=3").code == 0
    assert server.arguments() == {"ratio": 3}


def test_mismatch_as_json_error_object(cli, fake):
    server = fake()
    r = cli("--json", "call", server.cmdline, "strict")
    assert r.code == 2
    error = json.loads(r.err.splitlines()[-1])["error"]
    assert error["kind"] == "usage"
    assert "city" in error["message"]
    assert server.calls() == []


@pytest.mark.parametrize("name, suggestion", [("typd", "typed"), ("stric", "strict"),
                                              ("who_am_i", "whoami")])
def test_unknown_tool_exits_2_with_closest_names(cli, fake, name, suggestion):
    server = fake()
    r = cli("call", server.cmdline, name)
    assert r.code == 2
    [line] = r.error_lines
    assert f"no tool '{name}'" in line and "did you mean" in line and suggestion in line
    assert server.calls() == []


def test_unknown_tool_without_close_names_lists_tools(cli, fake):
    server = fake()
    r = cli("call", server.cmdline, "zzzzzz")
    assert r.code == 2
    assert "whoami" in r.err and "typed" in r.err
    assert server.calls() == []
