#!/usr/bin/env python3
"""A configurable fake MCP stdio server for the library and ``check`` tests (stdlib only).

    python3 lib_fakes.py '{"era": "legacy", "tools": [...], ...}'

Configuration (all optional):
``era``      "modern" (server/discover answers 2026-07-28), "dual" (it also lists the legacy
             versions; initialize works too) or "legacy" (server/discover gets -32601)
``tools``    the tools/list entries, sent as they are (default: ``echo``)
``page``     entries per tools/list page (cursor "p<N>"); ``loop`` true: every page says
             ``nextCursor: "again"``
``results``  tool name -> the result to answer (default: ``echo``'s text of its arguments)
``record``   a file: every message received is appended (JSON lines), after a
             ``{"_start": pid}`` marker
``hang_after`` answer this many requests, then nothing more (a hung server)
``instructions`` text for the initialize / discover result
``require``  a file that must exist, or the server exits at once with status 3 (a server
             that cannot be started again until the test allows it)
Tool ``slow`` sleeps ``arguments.seconds`` before answering (in a thread; a
notifications/cancelled for it is recorded like everything else).
"""
from __future__ import annotations

import json
import os
import sys
import threading
import time
from typing import Any

MODERN = "2026-07-28"
LEGACY = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"]
ECHO = {"name": "echo", "description": "Echoes its arguments.",
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}}
SLOW = {"name": "slow", "description": "Answers after some seconds.",
        "inputSchema": {"type": "object", "properties": {"seconds": {"type": "number"}}}}


def main() -> None:
    cfg: dict[str, Any] = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}
    if cfg.get("require") and not os.path.exists(cfg["require"]):
        sys.exit(3)
    era, tools = cfg.get("era", "legacy"), cfg.get("tools", [ECHO, SLOW])
    lock, answered = threading.Lock(), [0]
    record = open(cfg["record"], "a", encoding="utf-8") if cfg.get("record") else None

    def note(entry: Any) -> None:
        if record:
            record.write(json.dumps(entry) + "\n")
            record.flush()

    def send(message: dict) -> None:
        with lock:
            if cfg.get("hang_after") is not None and answered[0] >= cfg["hang_after"]:
                return
            answered[0] += 1
            sys.stdout.write(json.dumps(message) + "\n")
            sys.stdout.flush()

    def result(rid: Any, body: dict, modern: bool) -> None:
        send({"jsonrpc": "2.0", "id": rid, "result": {**body, "resultType": "complete"} if modern else body})

    note({"_start": os.getpid()})
    for line in sys.stdin:
        message = json.loads(line)
        note(message)
        method, rid, params = message.get("method"), message.get("id"), message.get("params") or {}
        if rid is None or method is None:
            continue
        modern = "io.modelcontextprotocol/protocolVersion" in (params.get("_meta") or {})
        info = {"serverInfo": {"name": "lib-fake", "version": "1"}}
        if cfg.get("instructions"):
            info["instructions"] = cfg["instructions"]
        caps = {"capabilities": {"tools": {}, "resources": {}, "prompts": {}}}
        if method == "server/discover" and era != "legacy":
            result(rid, {"supportedVersions": [MODERN] + (LEGACY if era == "dual" else []), **caps, **info}, True)
        elif method == "initialize" and era != "modern":
            result(rid, {"protocolVersion": params.get("protocolVersion"), **caps, **info}, False)
        elif method == "ping":
            result(rid, {}, False)
        elif method == "tools/list":
            size = cfg.get("page") or len(tools) or 1
            start = int((params.get("cursor") or "p0")[1:]) if not cfg.get("loop") else 0
            page: dict = {"tools": tools[start:start + size]}
            if cfg.get("loop"):
                page["nextCursor"] = "again"
            elif start + size < len(tools):
                page["nextCursor"] = f"p{start + size}"
            result(rid, page, modern)
        elif method in ("resources/list", "resources/templates/list", "prompts/list"):
            key = {"resources/list": "resources", "prompts/list": "prompts"}.get(method, "resourceTemplates")
            result(rid, {key: cfg.get(key, [])}, modern)
        elif method == "tools/call":
            name, arguments = params.get("name"), params.get("arguments") or {}
            if name == "slow":
                threading.Timer(float(arguments.get("seconds", 1)), result, (rid, {
                    "content": [{"type": "text", "text": "slept"}]}, modern)).start()
            else:
                result(rid, cfg.get("results", {}).get(name) or {
                    "content": [{"type": "text", "text": json.dumps(arguments)}]}, modern)
        else:
            send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": f"no {method}"}})
    time.sleep(0.05)


if __name__ == "__main__":
    main()
