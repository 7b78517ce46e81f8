#!/usr/bin/env python3
"""One configurable fake MCP stdio server for mcpmini's hermetic core tests (stdlib only).

Run it as ``python3 core_fakes.py --mode MODE [--record FILE] [--set KEY=JSON ...]`` or let the
tests drive it with the environment variable ``CORE_FAKE_CFG`` naming a JSON file
(``{"mode": ..., "record": ..., <options>}``). The file is read at start-up, so a test can rewrite
it between two runs of the *same* command line (the era cache is keyed by command line and cwd).

Every line the server receives is appended to ``record`` (JSON lines; a line that is not JSON is
recorded as ``{"_unparsed": "..."}``), and each process start writes ``{"_start": pid, "pgid": ...}``
first, so tests assert what the client really sent. Every line it writes goes to ``sent``.

Era behaviour (options, presets in ``MODES``):
  discover   "result" | "empty" | "silent" | "exit" | "-32601" | "-32602" | "-32022" ...
  supported  versions listed by the DiscoverResult / in -32022 data.supported
  pin        the first message fixes the connection's era, like the official Python SDK:
             after a legacy initialize modern requests get -32600; after a modern request
             initialize gets -32022
  initialize "ok" | "-32601" (a modern-only server); init_version: the version it answers with
  init_delay seconds before answering initialize; discover_delay likewise for server/discover
  init_after_discover  an error code for an initialize that follows a (silent) probe
  init_refuse  answer initialize of a version not in legacy_versions with -32602 + data.supported
  init_hostile  send responses with ids ``true`` and ``1.0`` before the initialize result
Lists: pages, per_page, extra_items, empty_cursor (first cursor is ""), endless, ttl_ms.
Process: ignore_eof, ignore_sigterm. Tools (tools/call): ``BASE_TOOLS``, handled in ``tool_call``
(sleep, progress, crash, big, noisy, hostile, batch, spawn, leader_exit, server_request,
elicit_many, ...).
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from typing import Any

MODERN = "2026-07-28"
LEGACY = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
SERVER_INFO = {"name": "core-fake", "version": "9.9.9"}
META_VERSION = "io.modelcontextprotocol/protocolVersion"

MODES: dict[str, dict[str, Any]] = {
    "modern": {"discover": "result"},
    "legacy": {"discover": "-32601"},
    "legacy-32602": {"discover": "-32602"},
    "legacy-silent": {"discover": "silent"},
    "legacy-empty": {"discover": "empty"},
    "legacy-exit": {"discover": "exit"},          # dies on the probe
    "pinned": {"discover": "result", "pin": True},
    "badversion": {"discover": "-32601", "init_version": "2099-01-01"},
    "modern-32022": {"discover": "-32022", "supported": [MODERN]},
    "modern-legacy-only": {"discover": "result", "supported": ["2025-06-18"]},
    "modern-only": {"discover": "result", "initialize": "-32601"},
}

CFG: dict[str, Any] = {}
STATE: dict[str, Any] = {"era": None, "initialized": False, "saw_discover": False,
                         "rejects": 0, "list_calls": 0, "extra_tools": [], "responses": {}}
WRITE_LOCK = threading.Lock()
RECORD_LOCK = threading.Lock()
BASE_TOOLS = ["echo", "sleep", "progress", "crash", "big", "noisy", "stderr_flood", "add_tool",
              "server_request", "elicit_many", "hostile", "batch", "spawn", "leader_exit", "env",
              "cwd", "pid", "fail", "result_type", "log", "argv"]


# -- plumbing ----------------------------------------------------------------------------------

def _append(path: str | None, obj: Any) -> None:
    if not path:
        return
    with RECORD_LOCK, open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps(obj) + "\n")


def write_raw(data: bytes) -> None:
    """Write bytes (one or more lines) to stdout as they are."""
    with WRITE_LOCK:
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
    if CFG.get("sent") and len(data) < 1 << 20:
        _append(CFG["sent"], {"raw": data.decode("utf-8", "replace")})


def send(msg: Any) -> None:
    data = json.dumps(msg, separators=(",", ":")).encode() + b"\n"
    with WRITE_LOCK:
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
    if CFG.get("sent"):
        _append(CFG["sent"], msg if len(data) < 1 << 20 else {"big": len(data), "id": msg.get("id")})


def reply(rid: Any, result: dict, modern: bool) -> None:
    if modern and "resultType" not in result and not CFG.get("no_result_type"):
        result = {"resultType": "complete", **result}
    send({"jsonrpc": "2.0", "id": rid, "result": result})


def error(rid: Any, code: int, message: str, data: Any = None) -> None:
    err: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        err["data"] = data
    send({"jsonrpc": "2.0", "id": rid, "error": err})


def text(t: str, **extra: Any) -> dict:
    return {"content": [{"type": "text", "text": t}], **extra}


def supported() -> list[str]:
    return list(CFG.get("supported", [MODERN]))


# -- lists ---------------------------------------------------------------------------------------

def _items(method: str) -> list[dict]:
    if method == "tools/list":
        names = BASE_TOOLS + STATE["extra_tools"] + [f"gen{i}" for i in range(CFG.get("extra_items", 0))]
        return [{"name": n, "description": f"fake tool {n}",
                 "inputSchema": {"type": "object", "properties": {}},
                 "x-untouched": {"n": n, "nested": [1, {"k": None}]}} for n in names]
    if method == "resources/list":
        return [{"uri": f"fake://r{i}", "name": f"r{i}"} for i in range(3)]
    if method == "resources/templates/list":
        return [{"uriTemplate": "fake://t/{x}", "name": "t"}]
    return [{"name": "greet", "arguments": [{"name": "who"}]}]


LIST_KEYS = {"tools/list": "tools", "resources/list": "resources",
             "resources/templates/list": "resourceTemplates", "prompts/list": "prompts"}


def handle_list(rid: Any, method: str, params: dict, modern: bool) -> None:
    STATE["list_calls"] += 1
    key, cursor = LIST_KEYS[method], params.get("cursor")
    extra = {}
    if modern and "ttl_ms" in CFG:
        extra = {"ttlMs": CFG["ttl_ms"], "cacheScope": "public"}
    if CFG.get("endless"):  # always one more page, forever
        n = STATE["list_calls"]
        return reply(rid, {key: [{"name": f"endless{n}"}], "nextCursor": "again", **extra}, modern)
    items, pages = _items(method), max(1, int(CFG.get("pages", 1)))
    # cursors: None -> page 0, then "" (a valid cursor), then "p2", "p3", ...
    if cursor is None:
        page = 0
    elif cursor == "" and CFG.get("empty_cursor", True):
        page = 1
    elif isinstance(cursor, str) and cursor.startswith("p") and cursor[1:].isdigit():
        page = int(cursor[1:])
    else:
        return error(rid, -32602, f"invalid cursor {cursor!r}")
    if page >= pages:
        return error(rid, -32602, f"invalid cursor {cursor!r}")
    per = -(-len(items) // pages) if CFG.get("per_page") is None else CFG["per_page"]
    chunk = items[page * per:(page + 1) * per] if page < pages - 1 or CFG.get("per_page") else items[page * per:]
    result: dict[str, Any] = {key: chunk, **extra}
    if page + 1 < pages:
        result["nextCursor"] = "" if page == 0 and CFG.get("empty_cursor", True) else f"p{page + 1}"
    reply(rid, result, modern)


# -- tools ---------------------------------------------------------------------------------------

def _progress_token(params: dict) -> Any:
    meta = params.get("_meta") if isinstance(params.get("_meta"), dict) else {}
    return meta.get("progressToken")


def tool_call(rid: Any, params: dict, modern: bool) -> None:
    name, args = params.get("name"), params.get("arguments") or {}
    if name not in BASE_TOOLS and name not in STATE["extra_tools"]:
        return error(rid, -32602, f"Unknown tool: {name}", {"tool": name})
    if name == "echo":
        return reply(rid, text(str(args.get("text", "")), structuredContent={"args": args}), modern)
    if name == "sleep":
        time.sleep(float(args.get("seconds", 1)))
        return reply(rid, text(str(args.get("text", "slept"))), modern)
    if name == "progress":
        token = _progress_token(params)
        steps, delay = int(args.get("steps", 3)), float(args.get("delay", 0.0))
        for i in range(1, steps + 1):
            send({"jsonrpc": "2.0", "method": "notifications/progress",
                  "params": {"progressToken": token, "progress": i, "total": steps,
                             "message": f"step {i}"}})
            time.sleep(delay)
        return reply(rid, text(f"done after {steps} steps"), modern)
    if name == "crash":
        time.sleep(float(args.get("delay", 0.0)))
        for line in ("Traceback (most recent call last):", "fatal: the disk is on fire"):
            sys.stderr.write(line + "\n")
        sys.stderr.flush()
        os._exit(int(args.get("code", 3)))
    if name == "big":
        size = int(float(args.get("mb", 1)) * (1 << 20))
        return reply(rid, text("x" * (size - 1) + "!"), modern)
    if name == "noisy":
        write_raw(b"Server started on stdout, sorry!\n"
                  b'{"level":"info","msg":"a JSON log line, not JSON-RPC"}\n'
                  b"\n   \n"
                  b"[1, 2, \n"
                  b'{"jsonrpc": "1.0", "id": 1}\n'
                  b"42\n")
        return reply(rid, text("still here"), modern)
    if name == "stderr_flood":
        chunk = "e" * 1023 + "\n"
        for _ in range(int(args.get("kb", 1024))):
            sys.stderr.write(chunk)
        sys.stderr.write("last stderr line\n")
        sys.stderr.flush()
        return reply(rid, text("flooded"), modern)
    if name == "add_tool":
        STATE["extra_tools"].append(str(args["name"]))
        if args.get("notify", True):
            send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        return reply(rid, text("added"), modern)
    if name == "server_request":
        # a legacy server may ask things of the client; a modern one must not
        send({"jsonrpc": "2.0", "id": "srv-ping", "method": "ping"})
        send({"jsonrpc": "2.0", "id": 4242, "method": "x/unknown", "params": {}})
        deadline = time.monotonic() + float(args.get("wait", 3.0))
        while time.monotonic() < deadline and len(STATE["responses"]) < 2:
            time.sleep(0.02)
        got = dict(STATE["responses"])
        return reply(rid, text("asked", structuredContent={"responses": got}), modern)
    if name == "elicit_many":
        # a flood of legacy server requests, all at once: the client answers a bounded number
        # at a time (it stops reading meanwhile) and in the end every one of them
        count = int(args.get("count", 40))
        write_raw(b"".join(json.dumps({"jsonrpc": "2.0", "id": f"e{i}", "method": "elicitation/create",
                                       "params": {"message": f"question {i}", "requestedSchema": {
                                           "type": "object", "properties": {}}}}).encode() + b"\n"
                           for i in range(count)))
        deadline = time.monotonic() + float(args.get("wait", 20.0))
        while time.monotonic() < deadline and len(STATE["responses"]) < count:
            time.sleep(0.02)
        return reply(rid, text(str(len(STATE["responses"]))), modern)
    if name == "hostile":
        return hostile(rid, modern)
    if name == "batch":
        note = {"jsonrpc": "2.0", "method": "notifications/progress",
                "params": {"progressToken": _progress_token(params), "progress": 1, "total": 1}}
        res = {"jsonrpc": "2.0", "id": rid, "result": {"resultType": "complete", **text("from a batch")}}
        return write_raw(json.dumps([note, res]).encode() + b"\n")
    if name in ("spawn", "leader_exit"):
        holds_stdout = name == "leader_exit"
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"],
                                 stdin=subprocess.DEVNULL,
                                 stdout=None if holds_stdout else subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL)
        _append(CFG.get("record"), {"_child": child.pid})
        if holds_stdout:  # the leader dies while the grandchild keeps our stdout open
            time.sleep(float(args.get("delay", 0.2)))
            sys.stderr.write("leader exiting, grandchild keeps stdout\n")
            sys.stderr.flush()
            os._exit(5)
        time.sleep(float(args.get("hold", 0)))  # keeps the call in flight
        return reply(rid, text(str(child.pid), structuredContent={
            "pid": os.getpid(), "pgid": os.getpgid(0), "child": child.pid}), modern)
    if name == "env":
        return reply(rid, text("env", structuredContent=dict(os.environ)), modern)
    if name == "cwd":
        return reply(rid, text(os.getcwd()), modern)
    if name == "pid":
        return reply(rid, text(str(os.getpid()), structuredContent={
            "pid": os.getpid(), "pgid": os.getpgid(0)}), modern)
    if name == "argv":
        return reply(rid, text("argv", structuredContent={"argv": sys.argv[1:]}), modern)
    if name == "fail":
        return reply(rid, {"content": [{"type": "text", "text": "it failed"}], "isError": True}, modern)
    if name == "result_type":
        result = text("typed")
        if args.get("value") is not None:
            result["resultType"] = args["value"]
        return send({"jsonrpc": "2.0", "id": rid, "result": result})
    if name == "log":
        send({"jsonrpc": "2.0", "method": "notifications/message",
              "params": {"level": "warning", "logger": "fake", "data": args.get("data", "hello")}})
        return reply(rid, text("logged"), modern)


def hostile(rid: Any, modern: bool) -> None:
    """Hostile lines first, then the real answer (twice), all for the pending id ``rid``."""
    wrong = {"resultType": "complete", **text("WRONG")}
    right = {"resultType": "complete", **text("RIGHT")}
    lines = [
        b'\xef\xbb\xbf{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"after a BOM"}}',
        b'{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"bad \xff\xfe utf-8"}}',
        b"\xff\xfe\xfd\x80",
        b'{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"lone \\ud800 surrogate"}}',
        b'{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":NaN,"progress":NaN}}',
        b"[" * 100_000 + b"]" * 100_000,
        b'{"a":' * 100_000 + b"1" + b"}" * 100_000,
        b'{"jsonrpc":"2.0","id":' + b"9" * 5000 + b',"result":{}}',
        b'{"jsonrpc":"2.0","id":18446744073709551617,"result":{}}',
        b'{"jsonrpc":"2.0","id":1e400,"result":{}}',
        json.dumps({"jsonrpc": "2.0", "id": float(rid), "result": wrong}).encode(),
        json.dumps({"jsonrpc": "2.0", "id": True, "result": wrong}).encode(),
        json.dumps({"jsonrpc": "2.0", "id": {"x": rid}, "result": wrong}).encode(),
        json.dumps({"jsonrpc": "2.0", "id": [rid], "result": wrong}).encode(),
        json.dumps({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}}).encode(),
        json.dumps({"jsonrpc": "2.0", "id": 99999, "result": wrong}).encode(),
        b"null",
        b'"just a string"',
        b'{"jsonrpc":"2.0","method":5,"params":{}}',
        b'{"jsonrpc":"2.0","method":"notifications/progress","params":"not an object"}',
        b'{"jsonrpc":"2.0"}',
        b"[]",
        b'[1, "x", null]',
        json.dumps({"jsonrpc": "2.0", "id": str(rid), "result": right}).encode(),  # may match rid
        json.dumps({"jsonrpc": "2.0", "id": rid, "result": right}).encode(),
        json.dumps({"jsonrpc": "2.0", "id": rid, "result": right}).encode(),          # duplicate
        json.dumps({"jsonrpc": "2.0", "id": rid, "error": {"code": 1, "message": "dup"}}).encode(),
    ]
    write_raw(b"\n".join(lines) + b"\n")


# -- dispatch --------------------------------------------------------------------------------------

def is_modern_request(params: Any) -> bool:
    return isinstance(params, dict) and isinstance(params.get("_meta"), dict) \
        and META_VERSION in params["_meta"]


def handle_discover(rid: Any, params: dict) -> None:
    how = CFG.get("discover", "result")
    if how == "silent":
        return
    if how == "exit":
        sys.stderr.write("unknown method server/discover, bailing out\n")
        sys.stderr.flush()
        os._exit(1)
    time.sleep(float(CFG.get("discover_delay", 0)))
    if how == "result":
        return reply(rid, {"supportedVersions": supported(),
                           "capabilities": {"tools": {"listChanged": True}, "resources": {}, "prompts": {}},
                           "instructions": "modern instructions",
                           "_meta": {"io.modelcontextprotocol/serverInfo": SERVER_INFO},
                           "ttlMs": 60000, "cacheScope": "public"}, True)
    if how == "empty":
        return send({"jsonrpc": "2.0", "id": rid, "result": {}})
    if how == "-32022" and STATE["rejects"] < int(CFG.get("reject_times", 1)):
        STATE["rejects"] += 1
        requested = params.get("_meta", {}).get(META_VERSION)
        return error(rid, -32022, "Unsupported protocol version",
                     {"supported": supported(), "requested": requested})
    if how == "-32022":  # accepted after the rejection(s)
        return reply(rid, {"supportedVersions": supported(), "capabilities": {"tools": {}},
                           "_meta": {"io.modelcontextprotocol/serverInfo": SERVER_INFO}}, True)
    error(rid, int(how), "Method not found" if how == "-32601" else "Invalid params: not initialized")


def handle_initialize(rid: Any, params: dict) -> None:
    requested = params.get("protocolVersion")
    if CFG.get("initialize") == "-32601":
        return error(rid, -32601, "Method not found: initialize")
    if STATE["saw_discover"] and CFG.get("init_after_discover"):
        return error(rid, int(CFG["init_after_discover"]), "confused by an earlier request")
    time.sleep(float(CFG.get("init_delay", 0)))
    versions = CFG.get("legacy_versions", list(LEGACY))
    if CFG.get("init_refuse") and requested not in versions:  # the 2025-11-25 example's refusal
        return error(rid, -32602, "Unsupported protocol version",
                     {"supported": versions, "requested": requested})
    version = CFG.get("init_version") or (requested if requested in versions else versions[0])
    if CFG.get("init_hostile"):
        bad = {"protocolVersion": "2099-01-01", "capabilities": {}, "serverInfo": {"name": "WRONG"}}
        send({"jsonrpc": "2.0", "id": True, "result": bad})
        send({"jsonrpc": "2.0", "id": float(rid) if isinstance(rid, int) else 1.0, "result": bad})
    send({"jsonrpc": "2.0", "id": rid, "result": {
        "protocolVersion": version,
        "capabilities": {"tools": {"listChanged": True}, "resources": {}, "prompts": {}, "logging": {}},
        "serverInfo": SERVER_INFO, "instructions": "legacy instructions"}})


def handle_request(msg: dict) -> None:
    rid, method = msg["id"], msg["method"]
    params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
    if method == "server/discover":
        return handle_discover(rid, params)
    if method == "initialize":
        return handle_initialize(rid, params)
    modern = is_modern_request(params)
    if modern:
        if CFG.get("discover") not in ("result", "-32022"):
            return error(rid, -32602, "Invalid request parameters: not initialized")
        version = params["_meta"][META_VERSION]
        if version not in supported():
            return error(rid, -32022, "Unsupported protocol version",
                         {"supported": supported(), "requested": version})
    elif not STATE["initialized"] and method != "ping":
        return error(rid, -32602, "Received request before initialization was complete")
    if method == "ping":
        return reply(rid, {}, modern)
    if method in LIST_KEYS:
        return handle_list(rid, method, params, modern)
    if method == "tools/call":
        return tool_call(rid, params, modern)
    if method == "resources/read":
        uri = params.get("uri")
        return reply(rid, {"contents": [{"uri": uri, "mimeType": "text/plain", "text": f"contents of {uri}"}],
                           "_meta": {"sawProgressToken": _progress_token(params)}}, modern)
    if method == "prompts/get":
        return reply(rid, {"description": "a greeting", "messages": [
            {"role": "user", "content": {"type": "text", "text": f"hello {params.get('arguments')}"}}]}, modern)
    error(rid, -32601, f"Method not found: {method}")


def pinned_refusal(msg: dict) -> bool:
    """``pin``: the connection's first request fixes its era; answer a request of the other era
    with an error (as the official Python SDK does). True when it was refused."""
    method = msg["method"]
    modern = method == "server/discover" or is_modern_request(msg.get("params"))
    if STATE["era"] is None:
        STATE["era"] = "modern" if modern else "legacy"
        return False
    if STATE["era"] == "legacy" and modern:
        error(msg["id"], -32600, "Invalid request: this connection speaks a legacy version")
        return True
    if STATE["era"] == "modern" and method == "initialize":
        params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
        error(msg["id"], -32022, "Unsupported protocol version",
              {"supported": [MODERN], "requested": params.get("protocolVersion")})
        return True
    return False


def handle(msg: Any) -> None:
    """Runs on the reader thread: state changes here are in arrival order."""
    if not isinstance(msg, dict):
        return
    if "method" not in msg:  # a response to one of our requests
        STATE["responses"][json.dumps(msg.get("id"))] = msg
        return
    if "id" not in msg:
        if msg["method"] == "notifications/initialized":
            STATE["initialized"] = True
        return
    if msg["method"] == "server/discover":
        STATE["saw_discover"] = True
    if CFG.get("pin") and pinned_refusal(msg):
        return
    # Answer in arrival order, like a real server, except what may be slow: tool calls and a
    # delayed handshake get a thread, since we must keep reading (and recording) meanwhile.
    slow = {"tools/call": True, "server/discover": CFG.get("discover_delay"),
            "initialize": CFG.get("init_delay")}
    if slow.get(msg["method"]):
        threading.Thread(target=handle_request, args=(msg,), daemon=True).start()
    else:
        handle_request(msg)


def serve() -> None:
    _append(CFG.get("record"), {"_start": os.getpid(), "pgid": os.getpgid(0)})
    if CFG.get("ignore_sigterm"):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    stdin = sys.stdin.buffer
    while True:
        line = stdin.readline()
        if not line:
            break
        try:
            msg = json.loads(line)
        except ValueError:
            _append(CFG.get("record"), {"_unparsed": line.decode("utf-8", "replace")})
            continue
        _append(CFG.get("record"), msg)
        handle(msg)
    if CFG.get("ignore_eof"):
        while True:
            time.sleep(3600)
    os._exit(0)


def main(argv: list[str]) -> None:
    cfg: dict[str, Any] = {}
    path = os.environ.get("CORE_FAKE_CFG")
    if path:
        with open(path, encoding="utf-8") as f:
            cfg = json.load(f)
    args = iter(argv)
    for arg in args:
        if arg == "--mode":
            cfg["mode"] = next(args)
        elif arg == "--record":
            cfg["record"] = next(args)
        elif arg == "--set":
            key, _, value = next(args).partition("=")
            cfg[key] = json.loads(value)
        else:
            sys.exit(f"core_fakes.py: unknown argument {arg!r}")
    mode = cfg.get("mode", "modern")
    if mode not in MODES:
        sys.exit(f"core_fakes.py: unknown mode {mode!r}; modes: {', '.join(MODES)}")
    CFG.update(MODES[mode])
    CFG.update(cfg)
    serve()


if __name__ == "__main__":
    main(sys.argv[1:])
