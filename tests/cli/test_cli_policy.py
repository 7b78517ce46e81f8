"""One tool policy (issue 27; decisions 26, 26b): --allow, --deny, --read-only and the config's
allowTools/denyTools/readOnly (Codex: enabled_tools/disabled_tools), the same in `tools`,
`call`, `check`, completion and `trust`. A refused call never reaches the server."""
from __future__ import annotations

import json
import sys

import pytest

import mcpmini
from harness import write_json

OBJECT = {"type": "object"}
TOOLS = [
    {"name": "get_weather", "description": "Reads.", "inputSchema": OBJECT, "annotations": {"readOnlyHint": True}},
    {"name": "get_secret", "description": "Reads, says nothing.", "inputSchema": OBJECT},
    {"name": "delete_city", "description": "Deletes.", "inputSchema": OBJECT,
     "annotations": {"readOnlyHint": False, "destructiveHint": True}},
    {"name": "set_city", "description": "Writes.", "inputSchema": OBJECT, "annotations": {"destructiveHint": False}},
]
NAMES = [t["name"] for t in TOOLS]


@pytest.fixture
def server(fake):
    return fake("legacy", tools=TOOLS)


@pytest.fixture
def wx(server, work):
    """A config file naming the server ``wx`` (and ``other``, the same server), with no policy."""
    def write(**policy):
        write_json(work / "c.json", {"mcpServers": {"wx": server.entry(**policy), "other": server.entry()}})
        return str(work / "c.json")
    return write


def listed(cli, *argv):
    r = cli(*argv, "--json")
    assert r.code == 0, r.err
    return [t["name"] for t in json.loads(r.out)]


# -- tools ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("flags, shown", [
    ([], NAMES),
    (["--deny", "delete_*"], ["get_weather", "get_secret", "set_city"]),
    (["--allow", "get_*"], ["get_weather", "get_secret"]),
    (["--allow", "get_*", "--deny", "*secret"], ["get_weather"]),          # deny wins
    (["--allow", "get_weather", "--allow", "set_?ity"], ["get_weather", "set_city"]),
    (["--read-only"], ["get_weather"]),                                     # only readOnlyHint true
    (["--allow", "Get_*"], []),                                             # names are case-sensitive
])
def test_tools_lists_only_what_the_policy_allows(cli, server, flags, shown):
    assert listed(cli, "tools", server.cmdline, *flags) == shown


def test_one_note_counts_the_hidden_tools_and_v_names_them(cli, server):
    r = cli("tools", server.cmdline, "--deny", "delete_*", "--deny", "set_*")
    assert r.code == 0 and "delete_city" not in r.out and "set_city" not in r.out and "get_weather" in r.out
    [note] = [line for line in r.err.splitlines() if "policy" in line]
    assert "hid 2 tool(s)" in note and "delete_city" not in note and "-v" in note
    r = cli("-v", "tools", server.cmdline, "--deny", "delete_*", "--deny", "set_*")
    assert "hid 2 tool(s): delete_city, set_city" in r.err
    r = cli("tools", server.cmdline)
    assert "policy" not in r.err


def test_tools_of_a_hidden_tool_exits_2_naming_the_rule(cli, server):
    r = cli("tools", server.cmdline, "delete_city", "--deny", "delete_*")
    assert r.code == 2 and "the tool policy hides 'delete_city'" in r.err and "deny pattern 'delete_*'" in r.err
    r = cli("tools", server.cmdline, "get_secret", "--read-only")
    assert r.code == 2 and "read-only" in r.err and "does not mark it read-only" in r.err
    r = cli("tools", server.cmdline, "get_weather", "--read-only")
    assert r.code == 0 and "get_weather" in r.out


def test_the_digest_of_the_tools_does_not_change_with_the_policy(cli, server):
    assert cli("tools", server.cmdline).code == 0
    r = cli("tools", server.cmdline, "--allow", "get_*")
    assert "changed since" not in r.err       # hiding tools is no change of the server's tools
    r = cli("tools", server.cmdline, "--read-only")
    assert "changed since" not in r.err


# -- call -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("tool, flags, rule", [
    ("delete_city", ["--deny", "delete_*"], "deny pattern 'delete_*'"),
    ("delete_city", ["--allow", "get_*"], "matches no allow pattern (get_*)"),
    ("get_secret", ["--read-only"], "does not mark it read-only"),
    ("set_city", ["--read-only"], "does not mark it read-only"),   # not destructive is not read-only
])
def test_a_refused_call_sends_nothing_and_names_the_rule(cli, server, tool, flags, rule):
    for extra in ([], ["--no-validate"]):
        r = cli("call", server.cmdline, tool, *flags, *extra)
        assert r.code == 2, r.err
        assert f"the tool policy refuses {tool!r}" in r.err and rule in r.err and "nothing was sent" in r.err
    assert server.calls() == []


def test_allowed_calls_still_run(cli, server):
    r = cli("call", server.cmdline, "get_weather", "--read-only", "--deny", "delete_*")
    assert r.code == 0, r.err
    assert [c["params"]["name"] for c in server.calls()] == ["get_weather"]


def test_a_hidden_tool_is_never_suggested(cli, server):
    r = cli("call", server.cmdline, "delete_cty", "--deny", "delete_city")   # a typo of a hidden tool
    assert r.code == 2 and "has no tool 'delete_cty'" in r.err
    assert "delete_city" not in r.err and "did you mean 'set_city'" in r.err
    assert server.calls() == []


def test_a_pattern_scoped_to_a_server_leaves_the_others_as_they_were(cli, server, wx):
    config = wx()
    assert listed(cli, "--config", config, "tools", "wx", "--allow", "wx/get_*") == ["get_weather", "get_secret"]
    assert listed(cli, "--config", config, "tools", "other", "--allow", "wx/get_*") == NAMES
    assert listed(cli, "--config", config, "tools", "other", "--deny", "wx/get_*", "--deny", "set_*") == \
        ["get_weather", "get_secret", "delete_city"]
    r = cli("--config", config, "call", "other", "delete_city", "--deny", "wx/delete_*")
    assert r.code == 0, r.err


@pytest.mark.parametrize("pattern", ["", " ", "/", "wx/", "/get_*", "é", "//"])
def test_a_pattern_that_can_never_match_is_a_usage_error(cli, server, pattern):
    for flag in ("--allow", "--deny"):
        r = cli("tools", server.cmdline, flag, pattern)
        assert r.code == 2 and f"{flag}: {pattern!r} can never match a tool name" in r.err
    assert not server.started()


def test_a_bad_pattern_fails_ask_too_before_any_server_starts(cli, server):
    r = cli("ask", "q", "--model", "m", "--base-url", "http://127.0.0.1:9/v1", "--server", server.cmdline,
            "--deny", "")
    assert r.code == 2 and "can never match" in r.err
    assert not server.started()


# -- the config ------------------------------------------------------------------------------------

def test_config_keys_and_flags_narrow_never_widen(cli, server, wx):
    config = wx(allowTools=["get_*", "set_city"], denyTools=["get_secret"])
    assert listed(cli, "--config", config, "tools", "wx") == ["get_weather", "set_city"]
    assert listed(cli, "--config", config, "tools", "wx", "--allow", "*") == ["get_weather", "set_city"]
    assert listed(cli, "--config", config, "tools", "wx", "--allow", "delete_*") == []
    assert listed(cli, "--config", config, "tools", "wx", "--deny", "set_*") == ["get_weather"]
    r = cli("--config", config, "call", "wx", "get_secret", "--allow", "get_secret")
    assert r.code == 2 and "denyTools 'get_secret'" in r.err and "c.json" in r.err and "server 'wx'" in r.err
    r = cli("--config", config, "call", "wx", "delete_city")
    assert r.code == 2 and "matches no allowTools (get_*, set_city)" in r.err
    assert server.calls() == []


def test_config_read_only(cli, server, wx):
    config = wx(readOnly=True)
    assert listed(cli, "--config", config, "tools", "wx") == ["get_weather"]
    r = cli("--config", config, "call", "wx", "set_city")
    assert r.code == 2 and "readOnly is set" in r.err
    assert server.calls() == []


def test_an_empty_allow_list_in_a_config_allows_nothing(cli, server, wx):
    assert listed(cli, "--config", wx(allowTools=[]), "tools", "wx") == []


@pytest.mark.parametrize("entry, problem", [
    ({"allowTools": "get_*"}, "\"allowTools\": 'get_*' can never match"),
    ({"denyTools": [""]}, "\"denyTools\": '' can never match"),
    ({"denyTools": [3]}, "\"denyTools\": 3 can never match"),
    ({"readOnly": "yes"}, "\"readOnly\" must be bool"),
])
def test_a_broken_policy_in_a_config_is_a_config_error(cli, server, wx, entry, problem):
    r = cli("--config", wx(**entry), "tools", "wx")
    assert r.code == 2 and problem in r.err and "server 'wx'" in r.err
    assert not server.started()


@pytest.mark.skipif(sys.version_info < (3, 11), reason="Codex configs need tomllib")
def test_codex_enabled_and_disabled_tools_are_exact_names(cli, server, work):
    (work / "config.toml").write_text(
        "[mcp_servers.wx]\n"
        f"command = {json.dumps(server.argv[0])}\nargs = {json.dumps(server.argv[1:])}\n"
        'enabled_tools = ["get_weather", "get_*", "set_city", "delete_city"]\n'
        'disabled_tools = ["delete_city"]\n')   # disabled after enabled; get_* is a name, not a glob
    config = str(work / "config.toml")
    assert listed(cli, "--config", config, "tools", "wx") == ["get_weather", "set_city"]
    r = cli("--config", config, "call", "wx", "delete_city")
    assert r.code == 2 and "denyTools 'delete_city'" in r.err
    assert server.calls() == []


# -- trust, check, completion -------------------------------------------------------------------

def test_trust_shows_the_policy_and_pins_it(cli, server, work):
    entry = server.entry(allowTools=["get_*"], denyTools=["get_secret"], readOnly=True)
    write_json(work / ".mcp.json", {"mcpServers": {"proj": entry}})
    r = cli("trust", "--yes")
    assert r.code == 0
    assert "tools allowed: get_*" in r.err and "tools denied: get_secret" in r.err
    assert "only those the server marks read-only" in r.err
    assert listed(cli, "tools", "proj") == ["get_weather"]
    write_json(work / ".mcp.json", {"mcpServers": {"proj": {**entry, "allowTools": ["*"]}}})   # widened
    r = cli("call", "proj", "set_city")
    assert r.code == 2 and "mcpmini trust" in r.err and "changed since you approved it" in r.err
    assert "changed proj" in r.err
    assert server.calls() == []


def test_check_lints_every_tool_and_says_how_many_the_policy_hides(cli, server):
    r = cli("check", server.cmdline, "--deny", "delete_*", "--read-only", "--json")
    checks = {c["name"]: c for s in json.loads(r.out)["suites"] for c in s["checks"]}
    assert all(f"tool {n}" in checks for n in NAMES)   # linted whatever the policy
    assert checks["tool policy"]["detail"] == "it would hide 3 of 4 tools"
    r = cli("check", server.cmdline, "--json")
    assert "tool policy" not in {c["name"] for s in json.loads(r.out)["suites"] for c in s["checks"]}


def test_check_call_of_a_hidden_tool_fails_without_sending(cli, server):
    r = cli("check", server.cmdline, "--deny", "delete_*", "--call", "delete_city", "--json")
    checks = {c["name"]: c for s in json.loads(r.out)["suites"] for c in s["checks"]}
    assert r.code == 1 and checks["call delete_city"]["status"] == "fail"
    assert "the tool policy refuses" in checks["call delete_city"]["detail"]
    assert server.calls() == []


def test_completion_never_offers_a_hidden_tool(cli, server, wx, monkeypatch):
    config = wx(denyTools=["delete_*"])
    assert cli("--config", config, "tools", "wx").code == 0   # fills the list cache
    assert cli("--config", config, "tools", "other").code == 0
    complete = mcpmini._completions
    assert complete(f"mcpmini --config {config} call wx ") == sorted(["get_weather", "get_secret", "set_city"])
    assert complete(f"mcpmini --config {config} call other ") == sorted(NAMES)
    assert complete(f"mcpmini --config {config} --read-only call other ") == ["get_weather"]
    assert complete(f"mcpmini --config {config} --allow other/set_* call other ") == ["set_city"]
    assert complete(f"mcpmini --config {config} --deny get_* tools other g") == []
