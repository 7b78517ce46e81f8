"""The library for programs (issue 24, items 3-5): one result shape in both eras, configured
servers by name (through the CLI's files and trust gate), and ``validate=True``."""
from __future__ import annotations

import json

import pytest

import mcpmini
from harness import run, write_json

SERVER_META = {"vendor.example/trace": "t-1", "cost": 3}
PROTOCOL_META = {"io.modelcontextprotocol/serverInfo": {"name": "x"},
                 "io.modelcontextprotocol/related-task": {"taskId": "t"}}
RAW = {"resultType": "complete", "ttlMs": 5000, "cacheScope": "public",
       "_meta": {**SERVER_META, **PROTOCOL_META},
       "content": [{"type": "text", "text": "hi"}], "structuredContent": {"n": 1},
       "contents": [{"uri": "fake://text", "text": "hi"}],
       "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}]}


async def three(client: mcpmini.Client) -> list[dict]:
    return [await client.call_tool("strict", {"city": "hi"}), await client.read_resource("fake://text"),
            await client.get_prompt("greet", {"name": "Ann"})]


@pytest.mark.parametrize("mode", ["modern", "legacy"])
def test_results_carry_no_protocol_bookkeeping_and_keep_the_servers_meta(fake, mode):
    async def main():
        async with fake(mode, raw_result=RAW).client() as client:
            return client.era, await three(client)
    era, results = run(main())
    assert era == ("2026-07-28" if mode == "modern" else "legacy")
    expected = {k: v for k, v in RAW.items() if k not in ("resultType", "ttlMs", "cacheScope")}
    assert results == [{**expected, "_meta": SERVER_META}] * 3


def test_the_same_server_gives_the_same_results_in_both_eras(fake):
    async def main(mode):
        async with fake(mode, label=mode).client() as client:
            return await three(client)
    modern, legacy = run(main("modern")), run(main("legacy"))
    assert modern == legacy
    assert not any(k in r for r in modern for k in ("resultType", "ttlMs", "cacheScope"))


def test_only_protocol_meta_means_no_meta(fake):
    raw = {**RAW, "_meta": PROTOCOL_META}

    async def main():
        async with fake("modern", raw_result=raw).client() as client:
            return await client.call_tool("echo")
    assert "_meta" not in run(main())


# Configured servers by name -------------------------------------------------------------------

def test_client_and_sync_client_take_a_configured_name(fake, user_config):
    server = fake("--name", "configured")
    write_json(user_config, {"mcpServers": {"weather": server.entry()}})

    async def main():
        async with mcpmini.Client("weather", timeout=10) as client:
            return client.name, client.server_info["name"]
    assert run(main()) == ("weather", "configured")
    with mcpmini.SyncClient("weather", timeout=10) as client:
        assert client.server_info["name"] == "configured"
        assert json.loads(mcpmini.result_text(client.call_tool("strict", {"city": "Oslo"}))) == {"city": "Oslo"}


def test_servers_take_configured_names(fake, user_config):
    one, two = fake("--name", "one", label="one"), fake("--name", "two", label="two")
    write_json(user_config, {"mcpServers": {"weather": one.entry(), "docs": two.entry()}})

    async def main():
        async with mcpmini.Servers(["weather", "docs", "nope"], timeout=10) as servers:
            return sorted(servers.clients), servers.failed
    clients, failed = run(main())
    assert clients == ["docs", "weather"]
    assert isinstance(failed["nope"], mcpmini.ConfigError) and "no configured server named 'nope'" in str(failed["nope"])
    with mcpmini.SyncServers(["weather"], timeout=10) as servers:
        assert [t["server"] for t in servers.list_tools()][:1] == ["weather"]


def test_a_name_in_an_unapproved_project_file_names_mcpmini_trust(cli, fake, work):
    server = fake()
    write_json(work / ".mcp.json", {"mcpServers": {"proj": server.entry()}})
    for make in (mcpmini.Client, mcpmini.SyncClient):
        with pytest.raises(mcpmini.ConfigError, match=r"'proj' is not used: .*\.mcp\.json is not yet approved.*mcpmini trust"):
            make("proj")
    assert not server.started()
    assert cli("trust", "--yes").code == 0   # once approved, the library uses it too
    with mcpmini.SyncClient("proj", timeout=10) as client:
        assert client.server_info["name"] == "fake"


def test_an_unknown_name_is_a_config_error_with_did_you_mean(fake, user_config):
    write_json(user_config, {"mcpServers": {"weather": fake().entry()}})
    with pytest.raises(mcpmini.ConfigError, match="no configured server named 'waether'; did you mean 'weather'"):
        mcpmini.SyncClient("waether")
    with pytest.raises(mcpmini.ConfigError, match=r"shlex.split\('python3 server.py'\)"):
        mcpmini.Client("python3 server.py")


def test_library_errors_name_library_arguments_and_the_cli_its_flags(cli, fake):
    server = fake("modern", discover_delay=3, initialize="-32601")

    async def main():
        async with server.client(timeout=0.5):
            pass
    with pytest.raises(mcpmini.RequestTimeout) as caught:
        run(main())
    assert "timeout=" in str(caught.value) and "--timeout" not in str(caught.value)
    r = cli("--timeout", "0.5", "tools", server.cmdline)
    assert r.code == 124 and "--timeout" in r.err and "timeout=" not in r.err


# validate=True --------------------------------------------------------------------------------

def test_validate_checks_tool_and_prompt_arguments_before_sending(fake):
    server = fake("legacy")

    async def main():
        async with server.client(validate=True) as client:
            errors = []
            for call in (client.call_tool("strict", {"cty": "Oslo"}), client.call_tool("strict", {"city": 3}),
                         client.call_tool("strikt", {}), client.get_prompt("greet", {"nmae": "Ann"}),
                         client.get_prompt("greet", {"name": "Ann", "colour": "x"})):
                with pytest.raises(mcpmini.ConfigError) as caught:
                    await call
                errors.append(str(caught.value))
            ok = await client.call_tool("strict", {"city": "Oslo", "days": 2})
            return errors, ok
    errors, ok = run(main())
    assert errors[0].startswith("strict: unknown argument 'cty'; did you mean 'city'?")
    assert errors[1] == "strict: argument 'city' must be string, not 3 (integer)"
    assert "has no tool 'strikt'; did you mean 'strict'" in errors[2]
    assert errors[3].startswith("greet: unknown argument 'nmae'; did you mean 'name'?")
    assert "unknown argument 'colour'" in errors[4]
    assert json.loads(mcpmini.result_text(ok)) == {"city": "Oslo", "days": 2}
    calls = [m for m in server.methods() if m in ("tools/call", "prompts/get")]
    assert calls == ["tools/call"]   # nothing refused was sent


def test_without_validate_the_library_sends_what_it_is_given(fake):
    server = fake("legacy")

    async def main():
        async with server.client() as client:
            return await client.call_tool("strict", {"city": 3})
    run(main())
    assert "tools/list" not in server.methods() and "tools/call" in server.methods()


def test_validate_is_taken_by_every_form(fake):
    server = fake("legacy")
    with mcpmini.SyncClient(server.argv, validate=True) as client:
        with pytest.raises(mcpmini.ConfigError, match="missing required argument 'city'"):
            client.call_tool("strict", {})
    with mcpmini.SyncServers([server.argv], validate=True) as servers:
        [name] = servers.clients
        with pytest.raises(mcpmini.ConfigError, match="must be string"):
            servers.call_tool(name, "strict", {"city": 1})

    async def main():
        async with mcpmini.Servers([server.argv], validate=True) as servers:
            await servers.call_tool(servers.names[0], "strict", {"city": 1})
    with pytest.raises(mcpmini.ConfigError):
        run(main())
    assert "tools/call" not in server.methods()
