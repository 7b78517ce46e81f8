"""Shared helpers of the agent tests: ``mcpmini`` from this checkout, a hard-deadline ``run``,
fixtures, fake MCP servers."""
from __future__ import annotations

import asyncio
import faulthandler
import json
import os
import sys
from pathlib import Path
from typing import Any, Awaitable

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
FAKES = str(HERE / "agent_fakes.py")
WEATHER = str(ROOT / "examples" / "weather_server.py")
DEMO_MODEL = str(ROOT / "examples" / "demo_model.py")
LAUNCHER = str(ROOT / "mcpmini.py")   # the command line, for subprocess tests
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import mcpmini  # noqa: E402


def run(coro: Awaitable[Any], timeout: float = 30.0) -> Any:
    """Run ``coro`` with a hard deadline; should it swallow the cancellation, faulthandler
    dumps the stacks and ends the process instead of hanging the suite."""
    async def bounded() -> Any:
        return await asyncio.wait_for(coro, timeout)

    faulthandler.dump_traceback_later(timeout + 30, exit=True, file=sys.__stderr__)
    try:
        return asyncio.run(bounded())
    finally:
        faulthandler.cancel_dump_traceback_later()


@pytest.fixture(autouse=True)
def isolate(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Fresh user dirs per test; no model settings from the machine running the tests."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "MCPMINI_MODEL", "MCPMINI_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)   # no project config of the checkout is discovered


def fake_argv(tmp_path: Path, tools: list[dict], *, name: str = "fake", **options: Any) -> list[str]:
    """The command line of a fake MCP server; it records what it receives in
    ``tmp_path / f"{name}.jsonl"``."""
    cfg = {"tools": tools, "record": str(tmp_path / f"{name}.jsonl"), **options}
    return [sys.executable, FAKES, json.dumps(cfg)]


def fake_entry(tmp_path: Path, tools: list[dict], *, name: str = "fake", **options: Any) -> dict:
    """A config-file entry for a fake server."""
    argv = fake_argv(tmp_path, tools, name=name, **options)
    return {"command": argv[0], "args": argv[1:]}


def fake_client(tmp_path: Path, tools: list[dict], *, name: str = "fake", **options: Any) -> mcpmini.Client:
    return mcpmini.Client(fake_argv(tmp_path, tools, name=name, **options), name=name, reconnect=True)


def received(tmp_path: Path, name: str = "fake") -> list[dict]:
    path = tmp_path / f"{name}.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def tool_calls_received(tmp_path: Path, name: str = "fake") -> list[dict]:
    return [m["params"] for m in received(tmp_path, name) if m.get("method") == "tools/call"]


def write_config(tmp_path: Path, servers: dict[str, dict]) -> str:
    path = tmp_path / "agent-mcp.json"
    path.write_text(json.dumps({"mcpServers": servers}))
    return str(path)


def weather_entry() -> dict:
    return {"command": sys.executable, "args": [WEATHER]}


ECHO_SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
