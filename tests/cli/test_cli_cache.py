"""``call`` and the persistent list cache (issue 16, item 3): on a known server it sends only
tools/call (plus the legacy handshake); --refresh and --no-cache bypass the cache; arguments
typed from a cached schema that the server refuses (-32602) or that no longer fit are typed
again from a fresh list, and the call is sent once more only when that changes them."""
from __future__ import annotations

import copy
import json

import pytest

from fake_server import TOOLS
from harness import FakeServer


def last_run(server: FakeServer) -> list[str]:
    """The methods the server's most recent process received."""
    return [m.get("method", "<response>") for m in server.processes()[-1]]


def last_calls(server: FakeServer) -> list[dict]:
    return [m["params"]["arguments"] for m in server.processes()[-1] if m.get("method") == "tools/call"]


def tweak(server: FakeServer, days: str = "integer", accept: str | None = None,
          extra: tuple[str, ...] = ()) -> FakeServer:
    """(Re)configure a legacy fake, its command line unchanged (so the cache entry stays):
    the type of strict's "days" in its schema, the type its calls must have (else -32602),
    and tools added by name."""
    tools = copy.deepcopy(TOOLS)
    strict = next(t for t in tools if t["name"] == "strict")
    strict["inputSchema"]["properties"]["days"]["type"] = days
    if accept:
        strict["accept"] = {"days": accept}
    tools += [{"name": n, "does": "text", "text": f"{n} was added later"} for n in extra]
    server.configure("legacy", tools=tools)
    return server


@pytest.fixture
def tweaked(fake):
    return lambda **tweaks: tweak(fake("legacy"), **tweaks)


HANDSHAKE = ["initialize", "notifications/initialized"]   # the era is remembered after a run


def test_a_call_on_a_known_server_sends_only_the_call(cli, proc, fake, tmp_path):
    server = fake("legacy")
    r = cli("call", server.cmdline, "strict", "city=Paris", "days=2")
    assert r.code == 0, r.err
    assert last_run(server) == ["server/discover"] + HANDSHAKE + ["tools/list", "tools/call"]
    done = proc("call", server.cmdline, "strict", "city=Rome", "days=3")   # the real command line
    assert done.returncode == 0, done.stderr
    assert last_run(server) == HANDSHAKE + ["tools/call"]
    assert last_calls(server) == [{"city": "Rome", "days": 3}]   # still typed from the schema
    assert json.loads(done.stdout) == {"city": "Rome", "days": 3}


@pytest.mark.parametrize("option", ["--refresh", "--no-cache"])
def test_refresh_and_no_cache_list_afresh(cli, fake, option):
    server = fake("legacy")
    assert cli("call", server.cmdline, "strict", "city=Paris").code == 0
    r = cli(option, "call", server.cmdline, "strict", "city=Paris")
    assert r.code == 0, r.err
    assert last_run(server) == HANDSHAKE + ["tools/list", "tools/call"]
    assert cli("call", server.cmdline, "strict", "city=Paris").code == 0
    assert last_run(server) == HANDSHAKE + ["tools/call"]   # the cache is still there


def test_no_cache_writes_nothing(cli, fake, tmp_path):
    server = fake("legacy")
    assert cli("--no-cache", "call", server.cmdline, "strict", "city=Paris").code == 0
    assert not (tmp_path / "xdg-cache" / "mcpmini" / "lists").exists()
    assert cli("call", server.cmdline, "strict", "city=Paris").code == 0
    assert last_run(server) == HANDSHAKE + ["tools/list", "tools/call"]


def test_refused_arguments_are_typed_again_from_a_fresh_list_and_sent_once_more(cli, tweaked):
    server = tweaked(days="integer", accept="integer")
    assert cli("call", server.cmdline, "strict", "city=Oslo", "days=5").code == 0
    tweak(server, days="string", accept="string")   # the server changed
    r = cli("call", server.cmdline, "strict", "city=Oslo", "days=5")
    assert r.code == 0, r.err
    assert last_run(server) == HANDSHAKE + ["tools/call", "tools/list", "tools/call"]
    assert last_calls(server) == [{"city": "Oslo", "days": 5}, {"city": "Oslo", "days": "5"}]
    assert json.loads(r.out) == {"city": "Oslo", "days": "5"}


def test_refused_arguments_typed_the_same_way_are_reported_not_resent(cli, tweaked):
    server = tweaked(days="integer", accept="integer")
    assert cli("call", server.cmdline, "strict", "city=Oslo", "days=5").code == 0
    tweak(server, days="integer", accept="string")   # refuses what its schema asks
    r = cli("call", server.cmdline, "strict", "city=Oslo", "days=5")
    assert r.code == 1 and "wrong type (-32602)" in r.error_lines[0], r.err
    assert last_run(server) == HANDSHAKE + ["tools/call", "tools/list"]


def test_a_refusal_without_a_cached_list_is_reported_at_once(cli, tweaked):
    server = tweaked(days="integer", accept="string")
    r = cli("call", server.cmdline, "strict", "city=Oslo", "days=5")
    assert r.code == 1 and "-32602" in r.error_lines[0], r.err
    assert last_run(server) == ["server/discover"] + HANDSHAKE + ["tools/list", "tools/call"]


def test_arguments_that_no_longer_fit_the_cached_schema_are_checked_against_a_fresh_one(cli, tweaked):
    server = tweaked(days="integer")
    assert cli("call", server.cmdline, "strict", "city=Oslo", "days=5").code == 0
    tweak(server, days="string")
    r = cli("call", server.cmdline, "strict", "city=Oslo", "days=soon")
    assert r.code == 0, r.err
    assert last_run(server) == HANDSHAKE + ["tools/list", "tools/call"]
    assert last_calls(server) == [{"city": "Oslo", "days": "soon"}]


def test_a_tool_missing_from_the_cached_list_is_looked_up_afresh(cli, tweaked):
    server = tweaked()
    assert cli("call", server.cmdline, "strict", "city=Oslo").code == 0
    tweak(server, extra=("newcomer",))
    r = cli("call", server.cmdline, "newcomer")
    assert r.code == 0 and r.out == "newcomer was added later\n", r.err
    assert last_run(server) == HANDSHAKE + ["tools/list", "tools/call"]
    r = cli("call", server.cmdline, "nonesuch")
    assert r.code == 2 and "has no tool 'nonesuch'" in r.error_lines[0]
    assert last_run(server) == HANDSHAKE + ["tools/list"]   # never sent


def test_stdin_arguments_are_read_once_when_the_list_is_refreshed(cli, tweaked, monkeypatch):
    import io
    server = tweaked(days="integer")
    assert cli("call", server.cmdline, "strict", "city=Oslo").code == 0
    tweak(server, days="string")
    monkeypatch.setattr("sys.stdin", io.StringIO('{"city": "Oslo", "days": "soon"}'))
    r = cli("call", server.cmdline, "strict", "-")   # checked twice: cached, then fresh schema
    assert r.code == 0, r.err
    assert last_calls(server) == [{"city": "Oslo", "days": "soon"}]
