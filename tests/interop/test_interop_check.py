"""``mcpmini check`` against real servers nobody here wrote (issue 15): server-everything (the
reference server, legacy only) passes, and so does the official Python SDK's dual-era server,
checked in both eras. The JUnit file parses and its counts match the JSON ones."""
from __future__ import annotations

import json
import shlex
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import mcpmini


@pytest.fixture(autouse=True)
def in_empty_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No project config (.mcp.json) of the checkout is picked up."""
    monkeypatch.chdir(tmp_path)


def check(capsys: pytest.CaptureFixture, *argv: str) -> tuple[int, dict]:
    code = mcpmini.main(["--timeout", "30", "check", *argv, "--json"])
    return code, json.loads(capsys.readouterr().out)


def test_server_everything_passes(capsys, everything_cmd, tmp_path):
    junit = tmp_path / "junit.xml"
    code, data = check(capsys, shlex.join(everything_cmd), "--call", "echo", "message=hi",
                       "--call", "get-sum", "a:=2", "b:=3", "--call", "get-structured-content",
                       "location=New York", "--read", "demo://resource/static/document/architecture.md",
                       "--prompt", "simple-prompt", "--junit", str(junit))
    failed = [c for s in data["suites"] for c in s["checks"] if c["status"] == "fail"]
    assert code == 0 and not failed, failed
    [suite] = data["suites"]                               # legacy only
    checks = {c["name"]: c for c in suite["checks"]}
    assert suite["name"].endswith("(2025-11-25)")
    assert int(checks["tools/list"]["detail"].split()[0]) >= 10
    assert "5" in checks["call get-sum"]["detail"]
    root = ET.parse(junit).getroot()
    assert int(root.get("tests")) == len(suite["checks"]) and root.get("failures") == "0"


def test_the_python_sdk_server_passes_in_both_eras(capsys, py_cmd):
    code, data = check(capsys, shlex.join(py_cmd), "--call", "get_forecast", "city=Hangzhou")
    failed = [c for s in data["suites"] for c in s["checks"] if c["status"] == "fail"]
    assert code == 0 and not failed, failed
    assert [s["name"].rsplit(" ", 1)[1] for s in data["suites"]] == ["(2026-07-28)", "(2025-11-25)"]
