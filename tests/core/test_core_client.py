"""Client API: construction, list methods with pagination and caching, raw results, _meta on
modern requests, result_text (issue 2, item 4)."""
from __future__ import annotations

import json
import logging

import pytest

import mcpmini
from fake_server import PROMPTS, RESOURCES, TEMPLATES, UNICODE_TEXT
from harness import run

MODERN = "2026-07-28"
CLIENT_INFO = {"name": "mcpmini", "version": mcpmini.__version__}


# -- construction ---------------------------------------------------------------------------

def test_a_command_line_string_is_refused_with_a_hint():
    with pytest.raises(ValueError) as info:
        mcpmini.Client("python3 server.py")
    assert "shlex.split" in str(info.value)


def test_server_config_is_accepted(fake, tmp_path):
    f = fake("modern")
    workdir = tmp_path / "cfg-wd"
    workdir.mkdir()
    config = mcpmini.ServerConfig(name="fake", command=f.argv[0], args=f.argv[1:],
                                  env={"FROM_CONFIG": "yes"}, cwd=str(workdir))

    async def main():
        async with mcpmini.Client(config) as c:
            env = (await c.call_tool("env"))["structuredContent"]
            cwd = mcpmini.result_text(await c.call_tool("cwd"))
            return c.era, env, cwd

    era, env, cwd = run(main())
    assert era == MODERN and env["FROM_CONFIG"] == "yes" and cwd == str(workdir.resolve())


# -- _meta ------------------------------------------------------------------------------------

async def _use_everything(c: mcpmini.Client) -> None:
    await c.list_tools()
    await c.list_resources()
    await c.list_resource_templates()
    await c.list_prompts()
    await c.call_tool("echo", {"text": "x"})
    await c.read_resource("fake://text")
    await c.get_prompt("greet", {"name": "you"})
    await c.request("tools/list", {})


def test_every_modern_request_carries_meta(fake):
    f = fake("modern")

    async def main():
        async with f.client() as c:
            await _use_everything(c)

    run(main())
    requests = [m for m in f.received() if "method" in m and "id" in m]
    assert len(requests) >= 9
    for req in requests:
        meta = req["params"]["_meta"]
        assert meta["io.modelcontextprotocol/protocolVersion"] == MODERN, req
        assert meta["io.modelcontextprotocol/clientCapabilities"] == {}, req
        assert meta["io.modelcontextprotocol/clientInfo"] == CLIENT_INFO, req


@pytest.mark.parametrize("mode", ["modern", "legacy"])
def test_progress_token_on_call_get_and_read(fake, mode):
    f = fake(mode)

    async def main():
        async with f.client() as c:
            await _use_everything(c)

    run(main())
    for method in ("tools/call", "prompts/get", "resources/read"):
        for req in f.requests(method):
            token = req["params"].get("_meta", {}).get("progressToken")
            assert isinstance(token, (int, str)) and not isinstance(token, bool), req
    tokens = [r["params"]["_meta"]["progressToken"]
              for m in ("tools/call", "prompts/get", "resources/read") for r in f.requests(m)]
    assert len(set(tokens)) == len(tokens)  # unique among requests


# -- lists and raw results --------------------------------------------------------------------

def test_lists_and_results_are_raw(fake):
    f = fake("legacy")

    async def main():
        async with f.client() as c:
            return (await c.list_tools(), await c.list_resources(), await c.list_resource_templates(),
                    await c.list_prompts(), await c.read_resource("fake://text"),
                    await c.get_prompt("greet", {"name": "you"}), await c.request("tools/list"))

    tools, resources, templates, prompts, read, prompt, raw = run(main())
    echo = next(t for t in tools if t["name"] == "echo")
    assert echo == {"name": "echo", "description": "fake tool echo",
                    "inputSchema": {"type": "object", "properties": {}},
                    "x-untouched": {"n": "echo", "nested": [1, {"k": None}]}}
    assert (resources, templates, prompts) == (RESOURCES, TEMPLATES, PROMPTS)  # as the server sent them
    assert read["contents"] == [{"uri": "fake://text", "mimeType": "text/plain",
                                 "text": "text resource: " + UNICODE_TEXT}]
    assert prompt["messages"][0]["content"]["text"] == "Hello, you! (plain)"
    assert raw["tools"] == tools
    assert f.requests("resources/read")[0]["params"]["uri"] == "fake://text"
    get = f.requests("prompts/get")[0]["params"]
    assert (get["name"], get["arguments"]) == ("greet", {"name": "you"})


@pytest.mark.parametrize("mode", ["modern", "legacy"])
def test_pagination_follows_every_cursor_including_the_empty_string(fake, mode):
    f = fake(mode, pages=4)

    async def main():
        async with f.client() as c:
            return await c.list_tools()

    tools = run(main())
    cursors = [r.get("params", {}).get("cursor", "<none>") for r in f.requests("tools/list")]
    f.configure(mode)  # the same server in one page, for comparison
    all_names = [t["name"] for t in run(main())]
    assert [t["name"] for t in tools] == all_names and len(all_names) > 4
    assert cursors == ["<none>", "", "p2", "p3"]


@pytest.mark.parametrize("options", [{"pages": 150, "per_page": 1, "extra_items": 140},
                                     {"endless": True}], ids=["150-pages", "endless-cursor"])
def test_page_cap_keeps_items_and_warns(fake, caplog, options):
    caplog.set_level(logging.WARNING, logger="mcpmini")
    f = fake("modern", **options)

    async def main():
        async with f.client() as c:
            return await c.list_tools()

    tools = run(main(), timeout=30)
    assert len(f.requests("tools/list")) == 100
    assert len(tools) == 100
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING and r.name.startswith("mcpmini")]
    assert warnings and "tools/list" in warnings[0].getMessage()


# -- caching ------------------------------------------------------------------------------------

@pytest.mark.parametrize("ttl_ms,fetches", [(60_000, 1), (0, 2), (None, 2)])
def test_modern_lists_are_fresh_for_their_ttl(fake, ttl_ms, fetches):
    f = fake("modern", **({} if ttl_ms is None else {"ttl_ms": ttl_ms}))

    async def main():
        async with f.client() as c:
            first = await c.list_tools()
            second = await c.list_tools()
            assert second == first
            await c.list_prompts()  # another method is not served from the tools entry
            await c.list_tools(refresh=True)

    run(main())
    assert len(f.requests("tools/list")) == fetches + 1
    assert len(f.requests("prompts/list")) == 1


def test_legacy_lists_are_cached_until_list_changed(fake):
    f = fake("legacy")

    async def main():
        async with f.client() as c:
            names = lambda tools: [t["name"] for t in tools]  # noqa: E731
            first = names(await c.list_tools())
            again = names(await c.list_tools())
            await c.call_tool("add_tool", {"name": "quiet", "notify": False})
            stale = names(await c.list_tools())
            await c.call_tool("add_tool", {"name": "loud", "notify": True})
            fresh = names(await c.list_tools())
            refreshed = names(await c.list_tools(refresh=True))
            return first, again, stale, fresh, refreshed

    first, again, stale, fresh, refreshed = run(main())
    assert first == again == stale and "quiet" not in stale
    assert fresh[-2:] == ["quiet", "loud"] and refreshed == fresh
    assert len(f.requests("tools/list")) == 3


# -- result_text ----------------------------------------------------------------------------------

def test_result_text_joins_text_blocks():
    text = mcpmini.result_text({"content": [{"type": "text", "text": "first"},
                                            {"type": "text", "text": "second"}]})
    assert "first" in text and "second" in text and text.index("first") < text.index("second")


@pytest.mark.parametrize("kind,mime", [("image", "image/png"), ("audio", "audio/wav")])
def test_result_text_summarises_binary_blocks(kind, mime):
    import base64
    data = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(1226)).decode()  # 1234 bytes
    text = mcpmini.result_text({"content": [{"type": kind, "data": data, "mimeType": mime}]})
    assert text == f"[{kind}: {mime}, 1234 bytes]"
    assert data[:20] not in text


def test_result_text_names_resources_by_uri():
    text = mcpmini.result_text({"content": [
        {"type": "resource_link", "uri": "file:///tmp/report.txt", "name": "report"},
        {"type": "resource", "resource": {"uri": "mem://note/1", "text": "body"}}]})
    assert "file:///tmp/report.txt" in text and "mem://note/1" in text


def test_result_text_structured_content_only_without_text():
    alone = mcpmini.result_text({"content": [], "structuredContent": {"temp": 21, "city": "杭州"}})
    assert json.loads(alone) == {"temp": 21, "city": "杭州"}
    with_text = mcpmini.result_text({"content": [{"type": "text", "text": "21 degrees"}],
                                     "structuredContent": {"temp": 21}})
    assert "21 degrees" in with_text and '"temp"' not in with_text


def test_result_text_unknown_block_type():
    assert mcpmini.result_text({"content": [{"type": "hologram", "x": 1}]}) == "[unsupported content: hologram]"
