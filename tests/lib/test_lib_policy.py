"""The tool policy in the library (issue 27 item 8; decision 27): ``allow=``, ``deny=``,
``read_only=`` on Client, Servers, SyncClient, SyncServers and run_agent. ``list_tools()``
filters; a call to another tool raises a ConfigError naming the rule before anything is sent,
however it is made (``call_tool``, ``request("tools/call")``)."""
from __future__ import annotations

import re

import pytest

import mcpmini
from harness import run

OBJECT = {"type": "object"}
TOOLS = [
    {"name": "get_weather", "inputSchema": OBJECT, "annotations": {"readOnlyHint": True}},
    {"name": "get_secret", "inputSchema": OBJECT},
    {"name": "delete_city", "inputSchema": OBJECT, "annotations": {"destructiveHint": True}},
]


@pytest.fixture(params=["legacy", "modern"])
def server(fake, request):
    return fake(request.param, tools=TOOLS)


def names(tools):
    return [t["name"] for t in tools]


def test_client_filters_the_list_and_refuses_before_sending(server):
    async def main():
        async with server.client(deny=["delete_*"], read_only=True, list_cache=False) as client:
            assert names(await client.list_tools()) == ["get_weather"]
            assert names(client.hidden_tools) == ["get_secret", "delete_city"]
            for tool, rule in (("delete_city", "deny pattern 'delete_*'"), ("get_secret", "read-only")):
                with pytest.raises(mcpmini.ConfigError, match=re.escape(f"refuses '{tool}': ") + f".*{re.escape(rule)}.*nothing was sent"):
                    await client.call_tool(tool)
            with pytest.raises(mcpmini.ConfigError):   # the raw way is refused too
                await client.request("tools/call", {"name": "delete_city", "arguments": {}})
            result = await client.call_tool("get_weather", {"x": 1})
            assert result.get("isError") is not True
    run(main())
    assert [c["params"]["name"] for c in server.calls()] == ["get_weather"]


def test_read_only_lists_first_when_a_call_comes_before_any_list(server):
    async def main():
        async with server.client(read_only=True, list_cache=False) as client:
            with pytest.raises(mcpmini.ConfigError, match="read-only"):
                await client.call_tool("get_secret")
            await client.call_tool("get_weather")
    run(main())
    assert [c["params"]["name"] for c in server.calls()] == ["get_weather"]
    assert server.requests("tools/list")   # the annotations were asked for


def test_a_pattern_scoped_to_another_server_changes_nothing(server):
    async def main():
        async with server.client(name="wx", allow=["other/get_*"], deny=["other/*"]) as client:
            assert names(await client.list_tools()) == names(TOOLS)
        async with server.client(name="wx", allow=["wx/get_*"], deny=["wx/*secret"]) as client:
            assert names(await client.list_tools()) == ["get_weather"]
    run(main())


@pytest.mark.parametrize("keywords", [{"allow": [""]}, {"deny": ["wx/"]}, {"allow": "get_*"}, {"deny": [None]}])
def test_a_pattern_that_cannot_match_is_a_config_error_at_once(server, keywords):
    with pytest.raises(mcpmini.ConfigError):   # a ValueError too
        server.client(**keywords)
    assert not server.started()


def test_servers_and_the_sync_forms_take_the_same_keywords(server):
    async def main():
        async with mcpmini.Servers({"wx": server.argv}, deny=["delete_*"], allow=["*"]) as servers:
            assert names(await servers.list_tools()) == ["get_weather", "get_secret"]
            with pytest.raises(mcpmini.ConfigError, match="deny pattern"):
                await servers.call_tool("wx", "delete_city")
            assert servers.clients["wx"].connected and not servers.failed   # a refusal loses nothing
    run(main())
    with mcpmini.SyncClient(server.argv, read_only=True) as client:
        assert names(client.list_tools()) == ["get_weather"]
        with pytest.raises(mcpmini.ConfigError):
            client.call_tool("delete_city")
    with mcpmini.SyncServers({"wx": server.argv}, allow=["wx/get_weather"]) as servers:
        assert names(servers.list_tools()) == ["get_weather"]
        with pytest.raises(mcpmini.ConfigError, match="no allow pattern"):
            servers.call_tool("wx", "get_secret")
    assert server.calls() == []


def test_a_config_entry_policy_holds_under_wider_keywords(server, tmp_path):
    path = tmp_path / "c.json"
    path.write_text(mcpmini.json.dumps({"mcpServers": {"wx": {"command": server.argv[0], "args": server.argv[1:],
                                                               "denyTools": ["delete_city"], "readOnly": False}}}))
    config = mcpmini.load_config([str(path)], discover=False)["wx"]
    assert config.deny_tools == ["delete_city"] and config.allow_tools is None

    async def main():
        async with mcpmini.Client(config, allow=["*"]) as client:
            assert names(await client.list_tools()) == ["get_weather", "get_secret"]
            with pytest.raises(mcpmini.ConfigError, match="denyTools 'delete_city'.*server 'wx'"):
                await client.call_tool("delete_city")
    run(main())
    assert server.calls() == []
