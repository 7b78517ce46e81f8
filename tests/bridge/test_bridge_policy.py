"""The bridge as a least-privilege proxy (issue 27 item 7): the downstream client's tools/list
holds only the tools the policy allows, list_changed still passes, and a tools/call to any other
is a JSON-RPC error that never reaches the upstream server, on stdio and on --listen, in each era."""
from __future__ import annotations

import json

import pytest

from bridge_helpers import MODERN, StdioBridge, events, exchange, modern_meta

OBJECT = {"type": "object"}
TOOLS = [
    {"name": "get_weather", "inputSchema": OBJECT, "annotations": {"readOnlyHint": True}},
    {"name": "get_secret", "inputSchema": OBJECT},
    {"name": "delete_city", "inputSchema": OBJECT, "annotations": {"destructiveHint": True}},
    {"name": "add_tool", "description": "adds a tool and says list_changed", "does": "add_tool",
     "inputSchema": OBJECT, "annotations": {"readOnlyHint": True}},
]
POLICY = ("--deny", "delete_*", "--read-only")


def params(era: str, **fields) -> dict:
    return {**fields, "_meta": modern_meta()} if era == "modern" else fields


@pytest.mark.parametrize("down, up", [("legacy", "legacy"), ("legacy", "modern"), ("modern", "legacy"),
                                      ("modern", "modern")])
def test_stdio_bridge_lists_and_calls_only_allowed_tools(bridge, upstream, down, up):
    server = upstream(up, tools=TOOLS)
    b: StdioBridge = bridge(server, *POLICY)
    if down == "legacy":
        assert "result" in b.initialize()
    listed = b.call(1, "tools/list", params(down))
    assert [t["name"] for t in listed["result"]["tools"]] == ["get_weather", "add_tool"]
    for rid, tool in ((2, "delete_city"), (3, "get_secret")):
        reply = b.call(rid, "tools/call", params(down, name=tool, arguments={}))
        assert reply["error"]["code"] == -32602, reply
        assert f"the tool policy refuses {tool!r}" in reply["error"]["message"]
    reply = b.call(4, "tools/call", params(down, name="get_weather", arguments={}))
    assert "result" in reply and reply["result"].get("isError") is not True, reply
    assert [c["params"]["name"] for c in server.calls()] == ["get_weather"]   # never upstream


def test_list_changed_still_reaches_a_legacy_client(bridge, upstream):
    server = upstream("legacy", tools=TOOLS)
    b = bridge(server, *POLICY)
    assert "result" in b.initialize()
    assert "result" in b.call(1, "tools/call", {"name": "add_tool", "arguments": {"name": "get_new"}})
    b.next(lambda m: m.get("method") == "notifications/tools/list_changed")
    # the new tool is not marked read-only: hidden too
    assert [t["name"] for t in b.call(2, "tools/list")["result"]["tools"]] == ["get_weather", "add_tool"]
    assert "error" in b.call(3, "tools/call", {"name": "get_new", "arguments": {}})
    assert [c["params"]["name"] for c in server.calls()] == ["add_tool"]


def test_listen_bridge_applies_the_same_policy(bridge, upstream):
    server = upstream("modern", tools=TOOLS)
    b = bridge(server, "--listen", "0", *POLICY)
    url, token = b.endpoint()

    def post(rid, method, **fields):
        status, headers, body = exchange(url, {"jsonrpc": "2.0", "id": rid, "method": method,
                                               "params": params("modern", **fields)}, token=token,
                                         headers={"MCP-Protocol-Version": MODERN})
        assert status == 200, body
        return json.loads(body) if headers.get("content-type", "").startswith("application/json") else events(body)[-1]
    assert [t["name"] for t in post(1, "tools/list")["result"]["tools"]] == ["get_weather", "add_tool"]
    reply = post(2, "tools/call", name="delete_city", arguments={})
    assert reply["error"]["code"] == -32602 and "deny pattern 'delete_*'" in reply["error"]["message"]
    assert server.calls() == []
