"""The agent tests' own helpers (the shared ones are in tests/harness.py and tests/conftest.py):
fake MCP servers the agent connects to, a config file of them, and ``agent(model, clients)``."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import mcpmini
from harness import FakeServer, run

ECHO_SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}


def fake_server(tmp_path: Path, tools: list[dict], *, name: str = "fake", **options: Any) -> FakeServer:
    """A legacy-only fake MCP server offering just ``tools`` (a tool with no ``does`` answers
    its name and arguments as JSON) and no instructions unless given; it records what it
    receives in ``tmp_path / f"{name}.jsonl"``."""
    options.setdefault("instructions", None)
    return FakeServer(tmp_path, "legacy", label=name, tools=tools, **options)


def fake_entry(tmp_path: Path, tools: list[dict], *, name: str = "fake", **options: Any) -> dict:
    """A config-file entry for a fake server."""
    return fake_server(tmp_path, tools, name=name, **options).entry()


def fake_client(tmp_path: Path, tools: list[dict], *, name: str = "fake", **options: Any) -> mcpmini.Client:
    return fake_server(tmp_path, tools, name=name, **options).client(name=name, reconnect=True)


def received(tmp_path: Path, name: str = "fake") -> list[dict]:
    """Everything fake server ``name`` recorded, ``_start`` markers included."""
    return FakeServer.lines(tmp_path / f"{name}.jsonl")


def tool_calls_received(tmp_path: Path, name: str = "fake") -> list[dict]:
    return [m["params"] for m in received(tmp_path, name) if m.get("method") == "tools/call"]


def write_config(tmp_path: Path, servers: dict[str, dict]) -> str:
    path = tmp_path / "agent-mcp.json"
    path.write_text(json.dumps({"mcpServers": servers}))
    return str(path)


def agent(model: Any, clients: Any = (), **options: Any) -> tuple[dict, list[str]]:
    """``run_agent("q", clients)`` against the scripted ``model``: (transcript, texts streamed)."""
    texts: list[str] = []
    transcript = run(mcpmini.run_agent("q", list(clients), model="m", base_url=model.base_url,
                                       on_text=texts.append, **options))
    return transcript, texts
