"""The caches stay fast and findable (issue 24, item 11; issue 25, item 2): one file per entry
(a call reads only its own server's), bounded in size and count with the least recently used
evicted first, and keyed by the command line as typed, so a pyenv-like shim on PATH (``python3``
resolving to the shim in one process and to the real interpreter in another) still finds it."""
from __future__ import annotations

import builtins
import json
import os
import sys
import time

import pytest

import mcpmini
from harness import FAKE_SERVER, run, write_json


def cache_dir(tmp_path, name="lists"):
    return tmp_path / "xdg-cache" / "mcpmini" / name


def test_tool_names_complete_under_a_pyenv_like_shim(proc, fake, work, tmp_path):
    real, shims = tmp_path / "real-bin", tmp_path / "shims"
    real.mkdir()
    shims.mkdir()
    (real / "python3").symlink_to(sys.executable)   # the interpreter: its own mtime
    shim = shims / "python3"   # as pyenv's shim: the version's folder first on PATH, then exec
    shim.write_text(f'#!/bin/sh\nPATH="{real}:$PATH"; export PATH\nexec "{sys.executable}" "$@"\n')
    shim.chmod(0o755)
    os.utime(shim, (1, 1))   # unlike the real interpreter's
    server = fake("legacy")
    write_json(work / "c.json", {"mcpServers": {"weather": {"command": "python3", "args": server.argv[1:]}}})
    path = f"{shims}{os.pathsep}{os.environ['PATH']}"
    called = proc("--config", "c.json", "call", "weather", "strict", "city=Oslo",
                  executable=str(shim), env={"PATH": path})
    assert called.returncode == 0, called.stderr
    # the call's process saw the real interpreter first; completion, run by the shell, the shim
    line = "mcpmini --config c.json call weather str"
    done = proc("completion", "--line", line, env={"PATH": path}, encoding="utf-8")
    assert done.stdout.split() == ["strict"], done.stderr
    done = proc("completion", "--line", line, env={"PATH": f"{real}{os.pathsep}{path}"}, encoding="utf-8")
    assert done.stdout.split() == ["strict"], done.stderr


def test_a_call_reads_only_its_own_servers_entry(cli, fake, tmp_path, monkeypatch):
    other, mine = fake("legacy", label="other"), fake("legacy", label="mine")
    big = [{"name": f"t{i}", "description": "x" * 200, "inputSchema": {}} for i in range(40)]
    assert cli("--timeout", "20", "tools", other.cmdline).code == 0
    [other_entry] = cache_dir(tmp_path).iterdir()
    data = json.loads(other_entry.read_text())
    other_entry.write_text(json.dumps({**data, "items": data["items"] + big}))
    assert cli("call", mine.cmdline, "strict", "city=Oslo").code == 0   # lists and stores
    opened: list[str] = []
    real_open = builtins.open

    def spy(file, *args, **kwargs):
        opened.append(str(file))
        return real_open(file, *args, **kwargs)
    monkeypatch.setattr(builtins, "open", spy)
    mine.configure("legacy")
    r = cli("call", mine.cmdline, "strict", "city=Rome")
    monkeypatch.setattr(builtins, "open", real_open)
    assert r.code == 0, r.err
    assert "tools/list" not in mine.methods()   # served from its own entry
    assert str(other_entry) not in opened and any(p.startswith(str(cache_dir(tmp_path))) for p in opened)


def test_an_entry_over_the_bound_is_not_stored_and_the_folder_is_bounded(monkeypatch, tmp_path):
    monkeypatch.setattr(mcpmini, "CACHE_MAX_ENTRY", 1000)
    monkeypatch.setattr(mcpmini, "CACHE_MAX_TOTAL", 2500)
    cache = mcpmini._CacheDir("lists")
    cache.put("huge", "x" * 2000)
    assert cache.get("huge") is None and not os.path.exists(cache._path("huge"))
    for age, key in ((30, "a"), (20, "b"), (10, "c")):
        cache.put(key, "y" * 700)
        os.utime(cache._path(key), (time.time() - age,) * 2)
    assert cache.get("a") == "y" * 700   # used: now the most recent
    cache.put("d", "z" * 700)            # 4 x ~700 bytes > 2500: the least recently used goes
    assert [cache.get(k) is not None for k in "abcd"] == [True, False, True, True]
    cache.put("a", "w" * 900)
    cache.put("a", None)
    assert cache.get("a") is None


def test_entries_unused_for_a_week_go(monkeypatch, tmp_path):
    cache = mcpmini._CacheDir("eras")
    cache.put("old", "legacy")
    os.utime(cache._path("old"), (time.time() - mcpmini.LIST_CACHE_KEEP - 60,) * 2)
    cache.put("new", "2026-07-28")
    assert (cache.get("old"), cache.get("new")) == (None, "2026-07-28")


def test_the_era_cache_and_digests_are_one_file_per_server(cli, fake, tmp_path):
    one, two = fake("legacy", label="one"), fake("modern", label="two")
    legacy_file = tmp_path / "xdg-cache" / "mcpmini" / "lists.json"   # what an older mcpmini wrote
    legacy_file.parent.mkdir(parents=True)
    legacy_file.write_text("{}")
    for server in (one, two):
        assert cli("tools", server.cmdline).code == 0
    eras = sorted(json.loads(p.read_text()) for p in cache_dir(tmp_path, "eras").iterdir())
    assert eras == ["2026-07-28", "legacy"]
    assert len(list((tmp_path / "xdg-state" / "mcpmini" / "tools").iterdir())) == 2
    assert len(list(cache_dir(tmp_path).iterdir())) == 2 and not legacy_file.exists()


def test_an_edited_script_replaces_its_entry(fake, tmp_path):
    f = fake("legacy")
    script = tmp_path / "server_copy.py"
    script.write_bytes(FAKE_SERVER.read_bytes())
    argv = [sys.executable, str(script), *f.argv[2:]]

    async def listed(**options):
        async with mcpmini.Client(argv) as client:
            await client.list_tools(**options)
            return set(client.from_cache)
    run(listed())
    os.utime(script, (1, 1))   # edited
    assert run(listed(cached=True)) == set()   # stale: listed again
    assert len(list(cache_dir(tmp_path).iterdir())) == 1   # in place of the old entry
    assert run(listed(cached=True)) == {"tools/list"}


@pytest.mark.parametrize("command", ["python3", "./server.py"])
def test_the_key_is_the_command_line_as_typed(command, work, monkeypatch):
    (work / "server.py").write_text("")
    config = mcpmini.ServerConfig(name="s", command=command, args=["server.py"])
    mcpmini._ListStore(config, None).put("tools/list", [{"name": "t"}], 60.0)
    monkeypatch.setenv("PATH", str(work))   # another PATH: another resolution, the same entry
    assert mcpmini._ListStore(config, None).get("tools/list") == [{"name": "t"}]
