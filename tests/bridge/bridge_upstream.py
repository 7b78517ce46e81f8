"""A stdio MCP server behind `mcpmini bridge` in the bridge tests (stdlib only). One JSON
argument configures it:

  era      "modern" (server/discover and a 2026-07-28 `_meta` on every request), "legacy"
           (initialize first) or "both" (either, per message, like examples/weather_server.py)
  record   a file where every message it receives is appended (one JSON per line), after a
           first line {"_start": pid, "pgid": ...}
  caps     the capabilities it declares (default: tools, resources, logging)
  stubborn ignore SIGTERM, outlive stdin's end, and start a child in the same process group
           (recorded as {"_child": pid}): only killing the group ends them

Tools (each call runs in a thread, so the server keeps reading meanwhile):
  echo      structuredContent: the arguments and the `_meta` that reached the server
  slow      waits `seconds` (default 30) unless notifications/cancelled names it (then no
            answer), then answers with the text `text`
  progress  `steps` notifications/progress with the request's own token, then the result
  ask       legacy: sends elicitation/create and returns the client's answer;
            modern: input_required (requestState "s1"), then the inputResponses sent back
  crash     writes to stderr and exits 3 without answering (after `delay` seconds)
  noisy     writes lines that are not JSON-RPC to stdout, then answers
  log       a notifications/message, then the answer
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time

CFG = json.loads(sys.argv[1])
MODERN = "2026-07-28"
LOCK = threading.Lock()
CANCELLED: set = set()
ANSWERS: dict = {}
CAPS = CFG.get("caps", {"tools": {}, "resources": {"subscribe": True}, "logging": {}})
INFO = {"name": "bridge-upstream", "version": "1.2.3"}


def record(message: object) -> None:
    if CFG.get("record"):
        with LOCK, open(CFG["record"], "a", encoding="utf-8") as f:
            f.write(json.dumps(message) + "\n")


def send(message: object) -> None:
    with LOCK:
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()


def reply(rid: object, result: dict, modern: bool) -> None:
    send({"jsonrpc": "2.0", "id": rid, "result": {"resultType": "complete", **result} if modern else result})


def text(value: str, **extra: object) -> dict:
    return {"content": [{"type": "text", "text": value}], **extra}


def call(rid: object, params: dict, modern: bool) -> None:
    name, args = params.get("name"), params.get("arguments") or {}
    meta = params.get("_meta") or {}
    if name == "echo":
        return reply(rid, text("echo", structuredContent={"args": args, "meta": meta}), modern)
    if name == "slow":
        deadline = time.monotonic() + float(args.get("seconds", 30))
        while time.monotonic() < deadline:
            if rid in CANCELLED:
                return None
            time.sleep(0.02)
        return reply(rid, text(str(args.get("text", "slept"))), modern)
    if name == "progress":
        for i in range(1, int(args.get("steps", 2)) + 1):
            send({"jsonrpc": "2.0", "method": "notifications/progress",
                  "params": {"progressToken": meta.get("progressToken"), "progress": i, "total": 2}})
        return reply(rid, text("progressed"), modern)
    if name == "ask":
        question = {"mode": "form", "message": "Which city?", "requestedSchema": {
            "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}
        if modern and "inputResponses" in params:
            return reply(rid, text("answered", structuredContent={
                "answers": params["inputResponses"], "state": params.get("requestState")}), modern)
        if modern:
            return send({"jsonrpc": "2.0", "id": rid, "result": {
                "resultType": "input_required", "requestState": "s1",
                "inputRequests": {"city": {"method": "elicitation/create", "params": question}}}})
        asked = f"ask-{rid}"
        send({"jsonrpc": "2.0", "id": asked, "method": "elicitation/create", "params": question})
        while asked not in ANSWERS and rid not in CANCELLED:
            time.sleep(0.02)
        return reply(rid, text("answered", structuredContent={"answer": ANSWERS.get(asked)}), modern)
    if name == "crash":
        time.sleep(float(args.get("delay", 0)))
        sys.stderr.write("upstream: crashing on purpose\n")
        sys.stderr.flush()
        os._exit(3)
    if name == "noisy":
        with LOCK:
            sys.stdout.write('not JSON-RPC at all\n{"level": "info", "msg": "a log line"}\n\x1b[31mred\n')
            sys.stdout.flush()
        return reply(rid, text("after the noise"), modern)
    if name == "log":
        send({"jsonrpc": "2.0", "method": "notifications/message",
              "params": {"level": "warning", "data": "a log message"}})
        return reply(rid, text("logged"), modern)
    send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32602, "message": f"Unknown tool: {name}"}})


def answer(message: dict) -> None:
    rid, method = message["id"], message["method"]
    params = message.get("params") if isinstance(message.get("params"), dict) else {}
    era = CFG.get("era", "both")
    modern = method == "server/discover" or MODERN in str((params.get("_meta") or {}).get(
        "io.modelcontextprotocol/protocolVersion"))
    if era != "both" and modern != (era == "modern"):
        return send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601 if modern else -32600,
                     "message": f"this server speaks only the {era} era"}})
    if method == "server/discover":
        return reply(rid, {"supportedVersions": [MODERN], "capabilities": CAPS, "instructions": "upstream help",
                           "ttlMs": 5000, "cacheScope": "public",
                           "_meta": {"io.modelcontextprotocol/serverInfo": INFO}}, True)
    if method == "initialize":
        return reply(rid, {"protocolVersion": "2025-06-18", "capabilities": CAPS, "serverInfo": INFO,
                           "instructions": "upstream help"}, False)
    if method == "tools/call":
        return threading.Thread(target=call, args=(rid, params, modern), daemon=True).start()
    if method == "tools/list":
        tools = [{"name": n, "inputSchema": {"type": "object"}}
                 for n in ("echo", "slow", "progress", "ask", "crash", "noisy", "log")]
        return reply(rid, {"tools": tools, **({"ttlMs": 5000, "cacheScope": "public"} if modern else {})}, modern)
    if method in ("ping", "logging/setLevel", "resources/subscribe"):
        return reply(rid, {}, modern)
    send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": f"Method not found: {method}"}})


def main() -> None:
    record({"_start": os.getpid(), "pgid": os.getpgid(0)})
    if CFG.get("stubborn"):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], stdin=subprocess.DEVNULL,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        record({"_child": child.pid})
    for line in sys.stdin:
        try:
            message = json.loads(line)
        except ValueError:
            continue
        record(message)
        if not isinstance(message, dict):
            continue
        if message.get("method") == "notifications/cancelled":
            CANCELLED.add((message.get("params") or {}).get("requestId"))
        elif "method" not in message:
            ANSWERS[message.get("id")] = message
        elif "id" in message:
            answer(message)
    while CFG.get("stubborn"):
        time.sleep(3600)


if __name__ == "__main__":
    main()
