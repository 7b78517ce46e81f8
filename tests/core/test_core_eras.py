"""Both protocol eras over stdio: the server/discover probe, fallbacks, pinned eras, version
checks and the era cache (issue 2, item 3; digest §3.1, §4)."""
from __future__ import annotations

import os

import pytest

import mcpmini
from fake_server import NASTY
from harness import alive, run

MODERN = "2026-07-28"
SERVER_INFO = {"name": "fake", "version": "9.9.9"}
CLIENT_INFO = {"name": "mcpmini", "version": mcpmini.__version__}


async def _connect(f, **kwargs) -> dict:
    """Connect, list the tools (proves the era works end to end), report what the client kept."""
    async with f.client(**kwargs) as c:
        tools = await c.list_tools()
        return {"era": c.era, "version": c.protocol_version, "info": c.server_info,
                "caps": c.capabilities, "instructions": c.instructions, "reason": c.era_reason,
                "tools": [t["name"] for t in tools]}


def _first_methods(f, n: int) -> list[str]:
    return f.methods()[:n]


def test_a_legacy_server_is_named_by_its_serverinfo_alone(fake):
    f = fake("legacy", init_extra={"_meta": {"io.modelcontextprotocol/serverInfo": {"name": "META"}}})
    assert run(_connect(f))["info"] == SERVER_INFO   # the 2026-07-28 _meta key means nothing here


def test_probe_finds_a_modern_server(fake):
    f = fake("modern")
    got = run(_connect(f))
    assert (got["era"], got["version"]) == (MODERN, MODERN)
    assert got["info"] == SERVER_INFO  # from result _meta
    assert got["caps"]["tools"] == {"listChanged": True}
    assert got["instructions"] == "modern instructions " + NASTY
    assert "echo" in got["tools"] and got["reason"]
    probe = f.received()[0]
    assert probe["method"] == "server/discover" and probe["id"] == 1
    meta = probe["params"]["_meta"]
    assert meta["io.modelcontextprotocol/protocolVersion"] == MODERN
    assert meta["io.modelcontextprotocol/clientCapabilities"] == {}
    assert meta["io.modelcontextprotocol/clientInfo"] == CLIENT_INFO
    assert "initialize" not in f.methods() and "notifications/initialized" not in f.methods()


@pytest.mark.parametrize("mode", ["legacy", "legacy-32602", "legacy-empty"])
def test_probe_falls_back_to_initialize_on_a_legacy_answer(fake, mode):
    """-32601, -32602 and an empty result are legacy evidence; same process, no cancel."""
    f = fake(mode)
    got = run(_connect(f))
    assert (got["era"], got["version"]) == ("legacy", "2025-11-25")
    assert got["info"] == SERVER_INFO and got["instructions"] == "legacy instructions " + NASTY
    assert got["caps"]["tools"] == {"listChanged": True} and "echo" in got["tools"]
    assert _first_methods(f, 3) == ["server/discover", "initialize", "notifications/initialized"]
    init = f.requests("initialize")[0]["params"]
    assert init == {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": CLIENT_INFO}
    assert len(f.starts()) == 1 and f.cancels() == []


def test_silent_legacy_server_falls_back_after_the_probe_timeout_and_is_remembered(fake, fast_probe, tmp_path):
    f = fake("legacy-silent")
    first = run(_connect(f))
    assert first["era"] == "legacy" and "echo" in first["tools"]
    assert _first_methods(f, 3) == ["server/discover", "initialize", "notifications/initialized"]
    assert f.cancels() == []  # the probe is never cancelled on the wire
    cache = tmp_path / "xdg-cache" / "mcpmini"
    assert cache.is_dir() and os.listdir(cache), "nothing remembered under $XDG_CACHE_HOME/mcpmini"

    f.configure("legacy-silent")  # same command line, fresh recording
    second = run(_connect(f))
    assert second["era"] == "legacy" and "echo" in second["tools"]
    assert "server/discover" not in f.methods(), f.methods()
    assert f.methods()[0] == "initialize"

    f.configure("legacy-silent")
    third = run(_connect(f, era_cache=False))
    assert third["era"] == "legacy" and f.methods()[0] == "server/discover"


def test_remembered_era_is_reprobed_when_it_fails(fake, fast_probe):
    f = fake("legacy-silent")
    assert run(_connect(f))["era"] == "legacy"
    f.configure("modern-only")  # the same command now runs a modern server (initialize: -32601)
    got = run(_connect(f))
    assert got["era"] == MODERN and "echo" in got["tools"]
    methods = f.methods()
    assert methods[0] == "initialize" and "server/discover" in methods, methods
    f.configure("modern-only")  # and the new era is what is remembered now
    assert run(_connect(f))["era"] == MODERN
    assert "initialize" not in f.methods(), f.methods()


def test_server_dying_on_the_probe_is_restarted_and_initialized_directly(fake):
    f = fake("legacy-exit")
    got = run(_connect(f))
    assert got["era"] == "legacy" and "echo" in got["tools"]
    runs = f.processes()
    assert len(runs) == 2, f.entries()
    assert runs[0][0]["method"] == "server/discover"
    assert runs[1][0]["method"] == "initialize"  # no probe the second time


def test_legacy_error_after_a_silent_probe_restarts_for_initialize(fake, fast_probe):
    f = fake("legacy-silent", init_after_discover=-32600)
    got = run(_connect(f))
    assert got["era"] == "legacy" and "echo" in got["tools"]
    runs = f.processes()
    assert len(runs) == 2, f.entries()
    assert runs[1][0]["method"] == "initialize"
    assert "server/discover" not in [m.get("method") for m in runs[1]]


def test_era_fixed_by_the_first_message_late_discover(fake, fast_probe):
    """The probe times out, initialize gets -32022 because the probe pinned the connection to
    the modern era: the client goes modern (no initialized notification)."""
    f = fake("pinned", discover_delay=1.0)
    got = run(_connect(f))
    assert got["era"] == MODERN and "echo" in got["tools"]
    assert "notifications/initialized" not in f.methods()
    listed = f.requests("tools/list")[0]["params"]["_meta"]
    assert listed["io.modelcontextprotocol/protocolVersion"] == MODERN


def test_pinned_legacy_never_probes(fake):
    f = fake("pinned")  # would answer any modern request with -32600 after initialize
    got = run(_connect(f, protocol="legacy"))
    assert got["era"] == "legacy" and "echo" in got["tools"]
    assert f.methods()[:2] == ["initialize", "notifications/initialized"]
    assert "server/discover" not in f.methods()


def test_pinned_modern_never_initializes(fake):
    f = fake("pinned")
    got = run(_connect(f, protocol=MODERN))
    assert got["era"] == MODERN and "echo" in got["tools"]
    assert "initialize" not in f.methods() and "notifications/initialized" not in f.methods()


def test_remembered_legacy_era_on_a_first_message_server(fake, fast_probe):
    f = fake("legacy-silent")
    run(_connect(f))
    f.configure("pinned")  # initialize first pins legacy: modern requests would get -32600
    got = run(_connect(f))
    assert got["era"] == "legacy" and "echo" in got["tools"]
    assert f.methods()[0] == "initialize"


def test_unknown_initialize_version_is_a_protocol_error(fake):
    f = fake("badversion")

    async def main():
        with pytest.raises(mcpmini.ProtocolError) as info:
            await _connect(f)
        return str(info.value)

    message = run(main())
    assert "2099-01-01" in message, message
    assert not [s["_start"] for s in f.starts() if alive(s["_start"])]


def test_legacy_initialize_refusal_is_retried_with_a_supported_version(fake):
    f = fake("legacy", init_refuse=True, legacy_versions=["2025-03-26"])
    got = run(_connect(f))
    assert (got["era"], got["version"]) == ("legacy", "2025-03-26")
    assert [r["params"]["protocolVersion"] for r in f.requests("initialize")] == ["2025-11-25", "2025-03-26"]


def test_modern_32022_is_retried_with_a_supported_version(fake):
    f = fake("modern-32022", supported=[MODERN])
    got = run(_connect(f))
    assert (got["era"], got["version"]) == (MODERN, MODERN) and "echo" in got["tools"]
    assert "initialize" not in f.methods()
    assert len(f.requests("server/discover")) == 2  # one refusal, one retry


def test_modern_32022_listing_only_legacy_versions_uses_initialize(fake):
    f = fake("modern-32022", supported=["2025-06-18"], reject_times=99)
    got = run(_connect(f))
    assert (got["era"], got["version"]) == ("legacy", "2025-06-18")
    assert f.requests("initialize")[0]["params"]["protocolVersion"] == "2025-06-18"


def test_discover_listing_only_legacy_versions_uses_initialize(fake):
    f = fake("modern-legacy-only")
    got = run(_connect(f))
    assert (got["era"], got["version"]) == ("legacy", "2025-06-18") and "echo" in got["tools"]
    assert f.requests("initialize")[0]["params"]["protocolVersion"] == "2025-06-18"


def test_no_version_in_common_is_a_protocol_error(fake):
    f = fake("modern", supported=["1999-01-01"])

    async def main():
        with pytest.raises(mcpmini.ProtocolError) as info:
            await _connect(f)
        return str(info.value)

    assert "1999-01-01" in run(main())


def test_result_type_absent_is_complete_unknown_is_a_protocol_error(fake):
    f = fake("modern")

    async def main():
        async with f.client() as c:
            plain = await c.call_tool("result_type", {"value": None})
            with pytest.raises(mcpmini.ProtocolError) as info:
                await c.call_tool("result_type", {"value": "weird"})
            return plain, str(info.value)

    plain, message = run(main())
    assert mcpmini.result_text(plain) == "typed"
    assert "weird" in message
    assert len(f.requests("tools/call")) == 2  # a missing resultType is not retried
