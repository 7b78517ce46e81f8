"""Contracts against real servers (issue 28): a snapshot of server-everything and of the SDK servers
is byte-identical run to run and matches itself; a recorded ``check`` replays offline to the same
checklist, in each era the server speaks."""
from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest

from harness import MCPMINI

EVERYTHING_CALLS = ["--call", "echo", "message=hi", "--call", "get-sum", "a:=2", "b:=3",
                    "--read", "demo://resource/static/document/architecture.md", "--prompt", "simple-prompt"]
WEATHER_CALLS = ["--call", "get_forecast", "city=Hangzhou"]


@pytest.fixture(autouse=True)
def in_empty_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No project config (.mcp.json) of the checkout is picked up."""
    monkeypatch.chdir(tmp_path)


def checklist(out: str, label: str) -> list[list[tuple[str, str, str]]]:
    """``check --json`` but suite names, timings and the server's label (its command's name)."""
    return [[(c["name"], c["status"], c["detail"].replace(f"{label}: ", "SERVER: ")) for c in s["checks"]]
            for s in json.loads(out)["suites"]]


def round_trip(cli, tmp_path: Path, argv: list[str], calls: list[str]) -> list[list[tuple[str, str, str]]]:
    record = tmp_path / "session.jsonl"
    live = cli("--record", record, "check", shlex.join(argv), *calls, "--json")
    assert live.code == 0, live.out
    replayed = cli("check", shlex.join([sys.executable, str(MCPMINI), "replay", str(record)]), *calls, "--json")
    assert replayed.code == 0, replayed.out
    assert checklist(replayed.out, Path(sys.executable).name) == checklist(live.out, Path(argv[0]).name)
    return checklist(live.out, Path(argv[0]).name)


def test_server_everything_round_trip(cli, tmp_path, everything_cmd):
    [suite] = round_trip(cli, tmp_path, everything_cmd, EVERYTHING_CALLS)   # legacy only
    assert any(name == "call get-sum" and "5" in detail for name, _, detail in suite)


@pytest.mark.parametrize("peer", ["py_cmd", "ts_cmd"])
def test_sdk_servers_round_trip_in_both_eras(cli, tmp_path, peer, request):
    suites = round_trip(cli, tmp_path, request.getfixturevalue(peer), WEATHER_CALLS)
    assert len(suites) == 2   # 2026-07-28 and legacy, both replayed


@pytest.mark.parametrize("peer", ["everything_cmd", "py_cmd"])
def test_snapshot_is_stable_and_matches_itself(cli, tmp_path, peer, request):
    server = shlex.join(request.getfixturevalue(peer))
    first, second = tmp_path / "one.json", tmp_path / "two.json"
    assert cli("check", server, "--snapshot", first).code == 0
    assert cli("check", server, "--snapshot", second).code == 0
    assert first.read_bytes() == second.read_bytes()
    [surface] = json.loads(first.read_text())["servers"].values()
    assert surface["tools"] and "version" not in json.dumps(surface["server"])
    result = cli("check", server, "--against", first, "--json")
    [contract] = [s for s in json.loads(result.out)["suites"] if " against " in s["name"]]
    assert result.code == 0 and [c["name"] for c in contract["checks"]] == ["contract"]
