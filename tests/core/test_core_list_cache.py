"""The persistent list cache (issue 16, item 3): ``list_tools(cached=True)`` serves the last
tools/list of an unchanged server from $XDG_CACHE_HOME/mcpmini/lists/ while it is fresh
(ttlMs in 2026-07-28, LIST_CACHE_MAX_AGE for legacy servers), only for the token it was
listed with; shell completion reads names through ``_cached_tool_names``."""
from __future__ import annotations

import json
import os
import shutil
import sys
import time

import pytest

import mcpmini
from harness import FAKE_SERVER, run


def _list(client: mcpmini.Client, **options: bool) -> tuple[list[str], set[str]]:
    async def main():
        async with client as c:
            names = [t["name"] for t in await c.list_tools(**options)]
            return names, set(c.from_cache)
    return run(main())


def _lists_sent(fake) -> int:
    return sum(m == "tools/list" for m in fake.methods())


def test_a_legacy_servers_list_is_served_from_the_cache_on_the_next_run(fake, tmp_path):
    f = fake("legacy")
    first, source = _list(f.client())
    assert "echo" in first and source == set()
    f.configure("legacy")                      # a new recording; same command line
    again, source = _list(f.client(), cached=True)
    assert again == first and source == {"tools/list"}
    assert f.methods() == ["initialize", "notifications/initialized"]   # no tools/list
    [entry] = (tmp_path / "xdg-cache" / "mcpmini" / "lists").iterdir()
    assert entry.stat().st_mode & 0o777 == 0o600


def test_listing_without_cached_true_always_goes_to_the_server(fake):
    f = fake("legacy")
    _list(f.client())
    f.configure("legacy")
    _, source = _list(f.client())
    assert source == set() and _lists_sent(f) == 1


@pytest.mark.parametrize("ttl_ms, served", [(60_000, True), (0, False)])
def test_a_modern_list_is_cached_for_its_ttl_only(fake, ttl_ms, served):
    f = fake("modern", ttl_ms=ttl_ms)
    _list(f.client())
    f.configure("modern", ttl_ms=ttl_ms)
    _, source = _list(f.client(), cached=True)
    assert (source == {"tools/list"}) is served and _lists_sent(f) == (0 if served else 1)


def test_legacy_entries_expire_after_the_default_age(fake, monkeypatch):
    f = fake("legacy")
    _list(f.client())
    monkeypatch.setattr(mcpmini, "LIST_CACHE_MAX_AGE", 0.0)
    _list(f.client())                          # stored again, now with no life left
    f.configure("legacy")
    _, source = _list(f.client(), cached=True)
    assert source == set() and _lists_sent(f) == 1


def test_list_cache_false_neither_reads_nor_writes(fake, tmp_path):
    f = fake("legacy")
    _list(f.client(list_cache=False))
    assert not (tmp_path / "xdg-cache" / "mcpmini" / "lists").exists()
    _list(f.client())
    f.configure("legacy")
    _, source = _list(f.client(list_cache=False), cached=True)
    assert source == set() and _lists_sent(f) == 1


def test_an_edited_server_script_is_another_server(fake, tmp_path):
    f = fake("legacy")
    script = tmp_path / "server_copy.py"
    shutil.copy(FAKE_SERVER, script)
    argv = [sys.executable, str(script), *f.argv[2:]]   # its --config
    _list(mcpmini.Client(argv))
    f.configure("legacy")
    assert _list(mcpmini.Client(argv), cached=True)[1] == {"tools/list"}
    os.utime(script, (1, 1))                   # "edited": another modification time
    f.configure("legacy")
    assert _list(mcpmini.Client(argv), cached=True)[1] == set()
    assert _lists_sent(f) == 1


def test_list_changed_makes_the_stored_list_stale(fake):
    f = fake("legacy")

    async def add_a_tool():
        async with f.client() as c:
            await c.list_tools()
            await c.call_tool("add_tool", {"name": "newcomer"})   # sends list_changed
            await c.request("ping")            # the notification has been read by now
    run(add_a_tool())
    f.configure("legacy")
    names, source = _list(f.client(), cached=True)
    assert source == set() and _lists_sent(f) == 1


def test_stored_lists_are_only_served_for_the_token_they_were_listed_with(tmp_path):
    class Token:   # stands in for the OAuth handler: only token_id() is used
        def __init__(self, value: str) -> None:
            self.value = value

        def token_id(self) -> str:
            return self.value

    server = mcpmini.ServerConfig(name="remote", url="https://mcp.example/mcp")
    tools = [{"name": "t", "inputSchema": {}}]
    mcpmini._ListStore(server, Token("alice")).put("tools/list", tools, 60.0)
    assert mcpmini._ListStore(server, Token("alice")).get("tools/list") == tools
    assert mcpmini._ListStore(server, Token("bob")).get("tools/list") is None
    assert mcpmini._ListStore(server, None).get("tools/list") is None
    other = mcpmini.ServerConfig(name="remote", url="https://mcp.example/mcp",
                                 headers={"X-Tenant": "two"})
    assert mcpmini._ListStore(other, Token("alice")).get("tools/list") is None
    [entry] = (tmp_path / "xdg-cache" / "mcpmini" / "lists").iterdir()
    stored = entry.name + entry.read_text()
    assert "two" not in stored and "mcp.example" not in stored   # the key is a hash


def test_cached_tool_names_for_completion(fake, monkeypatch):
    f = fake("modern", ttl_ms=0)               # stale at once: no use to call, fine to complete
    config = mcpmini.ServerConfig(name="fake", command=f.argv[0], args=f.argv[1:])
    assert mcpmini._cached_tool_names(config) == []
    _list(mcpmini.Client(config))
    assert "echo" in mcpmini._cached_tool_names(config)
    monkeypatch.setattr(mcpmini, "LIST_CACHE_KEEP", 0.0)
    assert mcpmini._cached_tool_names(config) == []


def test_an_unreadable_cache_file_is_no_cache(fake, tmp_path):
    f = fake("legacy")
    _list(f.client())
    [path] = (tmp_path / "xdg-cache" / "mcpmini" / "lists").iterdir()
    path.write_text("{not json")
    f.configure("legacy")
    names, source = _list(f.client(), cached=True)
    assert "echo" in names and source == set()
    assert json.loads(path.read_text())["items"]   # listed again, stored again


def test_the_credential_is_a_hash_of_the_stored_token():
    store = mcpmini._TokenStore()              # in memory
    auth = mcpmini._OAuth("https://mcp.example/mcp", store=store)
    assert auth.token_id() == ""               # not logged in
    data = store.peek()
    data["servers"][auth.server_url] = {"issuer": "https://as.example", "resource": auth.server_url}
    data["tokens"][f"https://as.example {auth.server_url}"] = {"access_token": "secret-token-1"}
    first = auth.token_id()
    data["tokens"][f"https://as.example {auth.server_url}"]["access_token"] = "secret-token-2"
    assert first and auth.token_id() != first and "secret" not in first


def test_the_tool_list_digests_keep_only_the_most_recently_used_servers(monkeypatch):
    monkeypatch.setattr(mcpmini, "CACHE_MAX_ENTRIES", 2)
    digests = mcpmini._CacheDir("tools", "state")
    for age, key in ((20, "a"), (10, "b")):
        digests.put(key, {"t": key})
        os.utime(digests._path(key), (time.time() - age,) * 2)
    assert digests.get("a") == {"t": "a"}   # used: now the most recent
    digests.put("c", {"t": "c"})
    assert (digests.get("a"), digests.get("b"), digests.get("c")) == ({"t": "a"}, None, {"t": "c"})
