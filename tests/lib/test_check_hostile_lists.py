"""Issue 24 item 8 (decision 35): ``check`` lints every page it received before a listing failed,
and every lint takes any JSON value a server can send as a tool's name (a list, an object: FAIL)."""
from __future__ import annotations

import json
import shlex

import pytest

OBJECT = {"type": "object"}


@pytest.fixture
def check(cli):
    """``check(SERVER)`` -> (exit code, {check name: [(status, detail), ...]}, stderr)."""
    def run(server):
        code, out, err = cli("check", shlex.join(server.argv), "--json")
        checks: dict = {}
        for suite in json.loads(out)["suites"]:
            for c in suite["checks"]:
                checks.setdefault(c["name"], []).append((c["status"], c["detail"]))
        return code, checks, err
    return run


def test_the_pages_before_a_repeating_cursor_are_linted(check, fake):
    # every page holds "dup" twice and the same cursor: the listing fails at page 2, and the
    # two pages received are still linted
    tools = [{"name": "dup", "description": "d", "inputSchema": OBJECT},
             {"name": "dup", "description": "d", "inputSchema": OBJECT},
             {"name": "bad name!", "description": "d", "inputSchema": {"type": "array"}}]
    server = fake("legacy", raw_tools=tools, raw_cursor="again", instructions=None)
    code, checks, err = check(server)
    assert code == 1, err
    assert checks["tools/list"] == [("fail", "page 2 repeats the cursor 'again': the list would never end")]
    assert checks["tool names unique"] == [("fail", "listed more than once: bad name!, dup")]
    assert len(checks["tool dup"]) == 4 and len(checks["tool bad name!"]) == 2
    assert all(status == "fail" for status, _ in checks["tool bad name!"])
    assert server.methods().count("tools/list") == 2


@pytest.mark.parametrize("name, shown", [(["x"], '["x"]'), ({"k": 1}, '{"k": 1}'), (7, "7"), (None, "null")])
def test_a_tool_name_that_is_not_a_string_fails_without_a_traceback(check, fake, name, shown):
    tools = [{"name": name, "description": "d", "inputSchema": OBJECT},
             {"name": name, "description": "d", "inputSchema": OBJECT},
             {"name": "ok", "description": "d", "inputSchema": OBJECT}]
    server = fake("legacy", raw_tools=tools, instructions=None)
    code, checks, err = check(server)
    assert "Traceback" not in err and code == 1, err
    assert checks[f"tool {shown}"] == [("fail", f"the name {shown!r} is not 1 to 128 of A-Z a-z 0-9 _ - .; "
                                        "no outputSchema")] * 2
    assert checks["tool names unique"] == [("fail", f"listed more than once: {shown}")]
    assert checks["tool ok"] == [("warn", "no outputSchema")]
