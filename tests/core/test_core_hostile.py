"""Hostile and broken servers (issue 12, items 6-9): every reply a server can send is either
used or refused with a ProtocolError naming the problem, at once, never a hang or a traceback."""
from __future__ import annotations

import logging

import pytest

import mcpmini
from harness import FakeServer, run


def client(server: FakeServer) -> mcpmini.Client:
    return server.client(name="hostile", timeout=20)


async def call(c: mcpmini.Client) -> dict:
    async with c:
        return await c.call_tool("t", {})


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_a_response_with_both_result_and_error_is_not_a_success(fake, era):
    line = '{"jsonrpc":"2.0","id":{id},"result":{"content":[]},"error":{"code":1,"message":"x"}}'
    with pytest.raises(mcpmini.ProtocolError, match="both a result and an error"):
        run(call(client(fake(era, raw_line=line))))


@pytest.mark.parametrize("line", [
    '{"jsonrpc":"2.0","id":{id},"result":{"content":[],"x":NaN}}',
    '{"jsonrpc":"2.0","id":{id},"result":' + "[" * 100_000 + "]" * 100_000 + "}",
    '{"jsonrpc":"2.0","id":{id},"result":{"n":' + "9" * 5000 + "}}",
    '{"jsonrpc":"2.0","result":{"x":NaN}}',          # no id to be found: every waiter fails
], ids=["nan", "deep", "huge-integer", "no-id"])
def test_an_unreadable_reply_fails_the_call_at_once(fake, line):
    """Not stdout noise: the call fails with a ProtocolError well before its timeout."""
    with pytest.raises(mcpmini.ProtocolError, match="unreadable JSON-RPC response"):
        run(call(client(fake(raw_line=line))), timeout=15)


def test_a_reply_for_another_id_that_cannot_be_read_is_dropped(fake):
    """A garbled late answer to some other request does not fail the one that waits."""
    line = ('{"jsonrpc":"2.0","id":424242,"result":{"x":NaN}}\n'
            '{"jsonrpc":"2.0","id":{id},"result":{"resultType":"complete","content":'
            '[{"type":"text","text":"fine"}]}}')
    result = run(call(client(fake(raw_line=line))))
    assert mcpmini.result_text(result) == "fine"


@pytest.mark.parametrize("result, field", [
    ({"content": 5}, "content is not a list"),
    ({"content": ["text", 1]}, "content[0] is not an object"),
    ({"content": [{"type": "text", "text": "ok"}, None]}, "content[1] is not an object"),
])
def test_a_call_result_that_cannot_be_used_names_the_field(fake, result, field):
    with pytest.raises(mcpmini.ProtocolError, match=field.replace("[", r"\[").replace("]", r"\]")):
        run(call(client(fake(raw_result=result))))


def test_a_prompt_message_without_content_is_refused(fake):
    async def main():
        async with client(fake(capabilities={"prompts": {}}, raw_result={"messages": [{"role": "user"}]})) as c:
            return await c.get_prompt("p")
    with pytest.raises(mcpmini.ProtocolError, match=r"messages\[0\] has no content object"):
        run(main())


def test_tools_that_is_not_a_list_fails_the_listing(fake):
    async def main():
        async with client(fake(raw_tools={"name": "x"})) as c:
            return await c.list_tools()
    with pytest.raises(mcpmini.ProtocolError, match="tools is not a list"):
        run(main())


def test_one_bad_tool_is_skipped_and_the_rest_stay_usable(fake, caplog):
    caplog.set_level(logging.WARNING)
    good = {"name": "good", "inputSchema": {"type": "object", "required": 5, "properties": []}}
    tools = [7, {"name": ""}, {"name": "bad-schema", "inputSchema": "object"}, {"title": "nameless"}, good]

    async def main():
        async with client(fake(raw_tools=tools)) as c:
            return await c.list_tools()
    assert run(main()) == [good]   # odd keywords inside a valid schema do not drop a tool
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 4 and all("skipped a tools/list entry" in w for w in warnings)


def test_a_flood_of_server_requests_is_answered_with_bounded_concurrency(fake):
    """5,000 pings in a burst before the answer: every one is answered, the call completes."""
    server = fake("legacy", flood=5000, raw_result={"content": []})
    result = run(call(client(server)), timeout=60)
    assert result == {"content": []}
    pongs = [m for m in server.messages() if str(m.get("id", "")).startswith("ping-")]
    assert len(pongs) == 5000 and all(m.get("result") == {} for m in pongs)


def test_lists_a_server_does_not_offer_are_empty_without_asking(fake):
    server = fake(capabilities={"tools": {}})

    async def main():
        async with client(server) as c:
            return (await c.list_resources(), await c.list_resource_templates(),
                    await c.list_prompts())
    assert run(main()) == ([], [], [])
    assert not [m for m in server.messages() if m.get("method", "").startswith(("resources/", "prompts/"))]


def test_discover_listing_no_versions_is_refused_not_retried(fake):
    server = fake(supported=[])
    with pytest.raises(mcpmini.ProtocolError, match="listed no protocol versions"):
        run(call(client(server)))
    assert server.methods().count("server/discover") <= 2
