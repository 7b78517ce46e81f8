"""A stdio MCP server that answers as a broken or malicious one would (issue 12's hostile
peers). Configured by one JSON argument (or @FILE holding it):

  era          "modern" (answers server/discover) or "legacy" (answers initialize)
  capabilities what it declares (default: tools only)
  supported    the supportedVersions server/discover lists (default: the modern version)
  tools        the raw tools/list result's "tools" value (anything, not only a list)
  call         the raw tools/call result (anything), or
  call_line    a raw line written instead of the tools/call response ("{id}" is replaced)
  flood        before answering tools/call, send this many `ping` requests in a burst
  record       a file where it appends every message it receives (one JSON per line)
"""
from __future__ import annotations

import json
import sys

CFG = json.loads(open(sys.argv[1][1:]).read() if sys.argv[1].startswith("@") else sys.argv[1])
MODERN = "2026-07-28"


def send(message: object) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def record(message: object) -> None:
    if CFG.get("record"):
        with open(CFG["record"], "a", encoding="utf-8") as f:
            f.write(json.dumps(message) + "\n")


def answer(message: dict) -> None:
    rid, method = message["id"], message["method"]
    modern = CFG.get("era", "modern") == "modern"
    tag = {"resultType": "complete"} if modern else {}
    caps = CFG.get("capabilities", {"tools": {}})
    if method == "server/discover":
        if modern:
            return send({"jsonrpc": "2.0", "id": rid, "result": {
                **tag, "supportedVersions": CFG.get("supported", [MODERN]), "capabilities": caps,
                "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "hostile", "version": "1"}}}})
        return send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "no"}})
    if method == "initialize":
        return send({"jsonrpc": "2.0", "id": rid, "result": {
            "protocolVersion": "2025-11-25", "capabilities": caps,
            "serverInfo": {"name": "hostile", "version": "1"}}})
    if method == "tools/list":
        return send({"jsonrpc": "2.0", "id": rid, "result": {**tag, "tools": CFG.get("tools", [])}})
    if method == "tools/call":
        for n in range(CFG.get("flood", 0)):
            send({"jsonrpc": "2.0", "id": f"ping-{n}", "method": "ping"})
        if "call_line" in CFG:
            sys.stdout.write(CFG["call_line"].replace("{id}", json.dumps(rid)) + "\n")
            return sys.stdout.flush()
        return send({"jsonrpc": "2.0", "id": rid, "result": CFG.get("call", {**tag, "content": []})})
    if method in ("prompts/get", "resources/read"):
        return send({"jsonrpc": "2.0", "id": rid, "result": CFG.get("call", {})})
    send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": f"no {method}"}})


for line in sys.stdin:
    try:
        msg = json.loads(line)
    except ValueError:
        continue
    record(msg)
    if isinstance(msg, dict) and "method" in msg and "id" in msg:
        answer(msg)
