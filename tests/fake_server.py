#!/usr/bin/env python3
"""The one fake MCP stdio server of mcpmini's tests (stdlib only), configured per test.

    python3 fake_server.py [--config FILE] [--legacy] [--silent] [--stubborn] [--name NAME]
                           [--init-version V] [--say TEXT] [--echo-env NAME,NAME]
                           [--ref-url URL] [--error-detail TEXT]

Tests start it through ``harness.FakeServer`` (the ``fake`` fixture), which writes FILE: a JSON
object of the options below, read at start-up, so the same command line can be given a new
behaviour. The flags are options a test wants to see in argv (config entries, ${...}
expansion); they win over FILE.

Recording: every line received is appended to ``record`` (JSON lines; a line that is not JSON
as ``{"_unparsed": ...}``) after one ``{"_start": pid, "pgid", "argv", "cwd"}`` marker per
process; a child process it starts is recorded as ``{"_child": pid}``, a SIGTERM it survives as
``{"_signal": "SIGTERM"}``. Every line it writes is appended to ``sent``.

Era options (``mode`` picks a preset of them from ``MODES``; ``--legacy`` is mode "legacy"):
  discover      "result" | "empty" | "silent" | "exit" | "-32601" | "-32602" | "-32022" (once,
                ``reject_times``); ``supported``: the versions listed; ``discover_delay`` seconds
  pin           the first message fixes the connection's era, like the official Python SDK:
                after a legacy initialize modern requests get -32600; after a modern request
                initialize gets -32022
  initialize    "-32601" (a modern-only server); ``init_version`` (--init-version): the version
                it answers; ``init_delay``; ``init_after_discover``: an error code for an
                initialize after a probe; ``init_refuse``: refuse versions not in
                ``legacy_versions`` with -32602 + data.supported; ``init_hostile``: answers with
                ids ``true`` and ``1.0`` first; ``init_extra``: more keys of its result
  silent        (--silent) answers nothing at all; ``hang_after`` N: writes N lines, then nothing
Identity: ``name`` (--name), ``instructions`` (null: none; default: the era's name and
``NASTY``), ``capabilities`` (default: tools, resources, prompts; and logging when legacy).
Lists: ``tools`` (below), ``resources``, ``templates`` and ``prompts`` replace ``RESOURCES``,
``TEMPLATES`` and ``PROMPTS``; ``pages``, ``per_page``, ``extra_items``, ``empty_cursor`` (the
first cursor is ""), ``endless``, ``ttl_ms``; ``no_result_type``. Process: ``require`` FILE
(unless it exists: "cannot start" on stderr, exit 4), ``ignore_eof``, ``ignore_sigterm`` (--stubborn: both),
``exit_after_calls`` N (exit 7 after the N-th answer), ``end_output_after`` METHOD (close
stdout once that is answered, and live on reading).
Start-up stderr: ``env NAME=value`` per ``echo_env`` name and ``say TEXT``; the ``say`` and
``crash`` tools repeat both (what a careless server leaks). ``ref_url``: the ``$ref`` in the
"typed" tool's schema; ``error_detail``: appended to the "rpc_error" message.

Tools: ``tools`` replaces the default ``TOOLS``. A tool is its wire entry plus what it ``does``
(default "call": its name and arguments as JSON) and options for that (``text``,
``message``, ``size``, ``seconds``, ``result``, ``question``, ``accept``); see the ``tool_*``
methods.

A broken or hostile server: ``raw_tools`` is the tools/list ``tools`` value, sent as given
(anything, not only a list; calls still go by ``tools``), with ``raw_cursor`` as its nextCursor
on every page (the same cursor again: a list that never ends); ``raw_result`` the result of every
tools/call, prompts/get and resources/read, as given; ``raw_line`` a line written instead of
the tools/call response ("{id}" is the request's id as JSON); ``flood`` N: that many ``ping``
requests (ids "ping-0", ...) in a burst before a tools/call is answered; with ``deaf`` it then
never reads its input again nor answers (it hangs until killed).
"""
from __future__ import annotations

import argparse
import base64
import json
import os
import signal
import subprocess
import sys
import threading
import time
from typing import Any

JSON = dict[str, Any]
MODERN = "2026-07-28"
LEGACY = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"
VERSION = "9.9.9"
MIB = 1 << 20

MODES: dict[str, JSON] = {
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
    "dual": {"discover": "result", "supported": [MODERN, *LEGACY]},   # lists the legacy versions too
}

# Text a hostile server could send to a terminal: set the title (OSC 0), write the clipboard
# (OSC 52), colour, clear, bell, backspace, a bare CR that overwrites the line, a C1 CSI, and
# bidi overrides that reorder what is shown; and a CRLF, which is only a line break.
NASTY = ("A\x1b]0;pwned-title\x07B\x1b]52;c;Y2xpcGJvYXJk\x07C\x1b[31mred\x1b[0m\x08D\rE"
         "\x9b2JF\u202eevil\u202cG\u2066iso\u2069H\r\nY")
NASTY_RAW = ("\x1b", "\x07", "\x08", "\x9b", "\u202e", "\u202c", "\u2066", "\u2069")
UNICODE_TEXT = "杭州 naïve café ✓ — 🌧 Ωmega"
BLOB = bytes(range(256)) + "杭州".encode()

OBJECT = {"type": "object"}
# The form of the `book` tool: server text with terminal escapes in a title, a description and
# a default, every type, a range, an enum, a titled oneOf and a list.
FORM: JSON = {"type": "object", "required": ["name", "guests"], "properties": {
    "name": {"type": "string", "title": "Your \x1b]0;pwned\x07name", "description": "as on the \x1b[31mcard"},
    "guests": {"type": "integer", "minimum": 1, "maximum": 12, "default": 2},
    "seating": {"type": "string", "enum": ["indoor", "outdoor"], "default": "indoor"},
    "menu": {"type": "string", "oneOf": [{"const": "m1", "title": "Tasting"}, {"const": "m2", "title": "Plain"}]},
    "vip": {"type": "boolean"},
    "note": {"type": "string", "default": "none\x1b[2J\u202e"},
    "tags": {"type": "array", "items": {"type": "string"}}}}
TOOLS: list[JSON] = [   # schemas chosen to exercise the CLI's argument typing; "typed" first
    {"name": "typed", "description": "Echoes its arguments as JSON.", "does": "arguments",
     "inputSchema": {"type": "object", "properties": {
         "zip": {"type": "string"},
         "code": {"type": "string", "description": "a stock code such as 600519"},
         "count": {"type": "integer"},
         "ratio": {"type": "number"},
         "flag": {"type": "boolean"},
         "note": {"type": ["string", "null"]},
         "limit": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
         "level": {"oneOf": [{"type": "integer"}, {"type": "boolean"}]},
         "port": {"type": ["integer", "null"]},
         "mode": {"type": "string", "enum": ["fast", "slow"]},
         "opts": {"type": "object"},
         "tags": {"type": "array", "items": {"type": "string"}},
         "untyped": {"description": "says nothing about its type"},
         "ref": {"$ref": "REF-URL"},
     }}},
    {"name": "strict", "description": "Needs a city; nothing else allowed.", "does": "arguments",
     "inputSchema": {"type": "object", "properties": {
         "city": {"type": "string"}, "days": {"type": "integer"}},
         "required": ["city"], "additionalProperties": False}},
    {"name": "whoami", "description": "argv, cwd and CLI_* environment of the server.",
     "does": "whoami", "inputSchema": OBJECT},
    {"name": "slow", "description": "Sleeps (with a child process) until done or cancelled.",
     "does": "slow", "inputSchema": {"type": "object", "properties": {"seconds": {"type": "number"}}}},
    {"name": "progress", "description": "Sends progress notifications first.", "does": "progress",
     "inputSchema": OBJECT},
    {"name": "controls", "description": "Terminal attack " + NASTY, "does": "text", "text": NASTY,
     "inputSchema": OBJECT},
    {"name": "unicode", "description": "Non-ASCII text.", "does": "text", "text": UNICODE_TEXT,
     "inputSchema": OBJECT},
    {"name": "fail", "description": "An isError result.", "does": "error", "inputSchema": OBJECT},
    {"name": "rpcerror", "description": "A JSON-RPC error.", "does": "rpc_error", "inputSchema": OBJECT},
    {"name": "crash", "description": "Writes on stderr and exits 7.", "does": "crash", "inputSchema": OBJECT},
    {"name": "lines", "description": "count lines of text.", "does": "lines",
     "inputSchema": {"type": "object", "properties": {"count": {"type": "integer"}}}},
    {"name": "say", "description": "Returns the --say text and the --echo-env values.", "does": "say",
     "inputSchema": OBJECT},
    {"name": "book", "description": "Asks a form (elicitation) and returns the answer as JSON.",
     "does": "elicit", "inputSchema": OBJECT},
    {"name": "visit", "description": "Asks the user to open a URL (URL elicitation).", "does": "elicit",
     "inputSchema": {"type": "object", "properties": {"url": {"type": "string"}}, "required": ["url"]}},
    {"name": "ask", "description": "Asks which city (a plain form elicitation).", "does": "elicit",
     "question": {"mode": "form", "message": "Which city?", "requestedSchema": {
         "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}},
     "inputSchema": OBJECT},
] + [{"name": n, "description": f"fake tool {n}", "does": n,
      "inputSchema": {"type": "object", "properties": {}},
      "x-untouched": {"n": n, "nested": [1, {"k": None}]}}
     for n in ("echo", "sleep", "big", "noisy", "stderr_flood", "add_tool", "server_request", "elicit_many",
               "hostile", "batch", "spawn", "leader_exit", "env", "cwd", "pid", "result_type",
               "log", "argv")]
BEHAVIOUR_KEYS = {"does", "text", "message", "size", "seconds", "result", "question", "accept"}   # not listed
# Two plain tools, for tests that count or lint what is listed.
PLAIN_TOOLS: list[JSON] = [
    {"name": "echo", "description": "Echoes its arguments.", "does": "arguments",
     "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}},
    {"name": "slow", "description": "Answers after some seconds.", "does": "sleep",
     "inputSchema": {"type": "object", "properties": {"seconds": {"type": "number"}}}},
]
RESOURCES: list[JSON] = [
    {"uri": "fake://text", "name": "text", "description": "a text resource", "mimeType": "text/plain"},
    {"uri": "fake://blob", "name": "blob", "description": "a binary resource",
     "mimeType": "application/octet-stream"},
    {"uri": "fake://nasty/" + NASTY, "name": "nasty", "description": "a hostile URI"},
]
TEMPLATES: list[JSON] = [{"uriTemplate": "fake://items/{id}", "name": "items",
                          "description": "one item by id"}]
PROMPTS: list[JSON] = [{"name": "greet", "description": "Says hello.",
                        "arguments": [{"name": "name", "required": True},
                                      {"name": "style", "required": False}]}]
LIST_KEYS = {"tools/list": "tools", "resources/list": "resources",
             "resources/templates/list": "resourceTemplates", "prompts/list": "prompts"}


def text(t: str, **extra: Any) -> JSON:
    return {"content": [{"type": "text", "text": t}], **extra}


def is_modern_request(params: Any) -> bool:
    return isinstance(params, dict) and isinstance(params.get("_meta"), dict) \
        and META_VERSION in params["_meta"]


def progress_token(params: JSON) -> Any:
    meta = params.get("_meta") if isinstance(params.get("_meta"), dict) else {}
    return meta.get("progressToken")


class Server:
    """One server process: its configuration, what it has seen, and how it answers."""

    def __init__(self, cfg: JSON) -> None:
        self.cfg = cfg
        self.write_lock = threading.Lock()
        self.record_lock = threading.RLock()   # reentrant: the SIGTERM handler records too
        self.era: str | None = None      # "pin": the era the first message fixed
        self.initialized = self.saw_discover = self.ended = False
        self.rejects = self.list_calls = self.answered = self.pair_waiting = self.written = 0
        self.pair_event = threading.Event()
        self.responses: JSON = {}        # our requests' answers, by JSON of their id
        self.cancelled: dict[Any, threading.Event] = {}
        ref_url = cfg.get("ref_url", "http://127.0.0.1:9/never-fetched.json")
        self.tools: list[JSON] = json.loads(json.dumps(cfg.get("tools", TOOLS)).replace("REF-URL",
                                                                                    ref_url))
        self.info = {"name": cfg.get("name", "fake"), "version": VERSION}

    # -- plumbing ------------------------------------------------------------------------------
    def record(self, entry: Any, path_key: str = "record") -> None:
        if self.cfg.get(path_key):
            with self.record_lock, open(self.cfg[path_key], "a", encoding="utf-8") as f:
                f.write(json.dumps(entry) + "\n")

    def write_raw(self, data: bytes, note: Any = None) -> None:
        """Write bytes (one or more lines) to stdout as they are; ``note`` is what is recorded."""
        with self.write_lock:
            if self.ended or self.cfg.get("hang_after") is not None and self.written >= self.cfg["hang_after"]:
                return
            self.written += 1
            sys.stdout.buffer.write(data)
            sys.stdout.buffer.flush()
        if note is None and len(data) < MIB:
            note = {"raw": data.decode("utf-8", "replace")}
        self.record(note or {"big": len(data)}, "sent")

    def send(self, msg: JSON) -> None:
        data = json.dumps(msg, separators=(",", ":")).encode() + b"\n"
        self.write_raw(data, msg if len(data) < MIB else {"big": len(data), "id": msg.get("id")})

    def reply(self, rid: Any, result: JSON, modern: bool) -> None:
        if modern and "resultType" not in result and not self.cfg.get("no_result_type"):
            result = {"resultType": "complete", **result}
        self.send({"jsonrpc": "2.0", "id": rid, "result": result})

    def error(self, rid: Any, code: int, message: str, data: Any = None) -> None:
        err: JSON = {"code": code, "message": message, **({} if data is None else {"data": data})}
        self.send({"jsonrpc": "2.0", "id": rid, "error": err})

    def supported(self) -> list[str]:
        return list(self.cfg.get("supported", [MODERN]))

    def instructions(self, era: str) -> JSON:
        value = self.cfg.get("instructions", f"{era} instructions {NASTY}")
        return {} if value is None else {"instructions": value}

    def capabilities(self, era: str) -> JSON:
        default = {"tools": {"listChanged": True}, "resources": {}, "prompts": {}}
        return self.cfg.get("capabilities", {**default, "logging": {}} if era == "legacy" else default)

    def leak(self) -> str:
        """What a careless server repeats: its ``say`` text and its ``echo_env`` values."""
        names = filter(None, self.cfg.get("echo_env", "").split(","))
        return " ".join([self.cfg.get("say", ""), *(os.environ.get(n, "<unset>") for n in names)]).strip()

    # -- the handshake ---------------------------------------------------------------------------
    def discover(self, rid: Any, params: JSON) -> None:
        how = self.cfg.get("discover", "result")
        if how == "silent":
            return
        if how == "exit":
            sys.stderr.write("unknown method server/discover, bailing out\n")
            sys.stderr.flush()
            os._exit(1)
        time.sleep(float(self.cfg.get("discover_delay", 0)))
        result = {"supportedVersions": self.supported(),
                  "capabilities": self.capabilities("modern"), **self.instructions("modern"),
                  "_meta": {META_SERVER_INFO: self.info}, "ttlMs": 60000, "cacheScope": "public"}
        if how == "result":
            return self.reply(rid, result, True)
        if how == "empty":
            return self.send({"jsonrpc": "2.0", "id": rid, "result": {}})
        if how == "-32022" and self.rejects < int(self.cfg.get("reject_times", 1)):
            self.rejects += 1
            requested = params.get("_meta", {}).get(META_VERSION)
            return self.error(rid, -32022, "Unsupported protocol version",
                              {"supported": self.supported(), "requested": requested})
        if how == "-32022":  # accepted after the rejection(s)
            return self.reply(rid, result, True)
        message = "Method not found" if how == "-32601" else "Invalid params: not initialized"
        self.error(rid, int(how), message)

    def initialize(self, rid: Any, params: JSON) -> None:
        requested = params.get("protocolVersion")
        if self.cfg.get("initialize") == "-32601":
            return self.error(rid, -32601, "Method not found: initialize")
        if self.saw_discover and self.cfg.get("init_after_discover"):
            return self.error(rid, int(self.cfg["init_after_discover"]), "confused by an earlier request")
        time.sleep(float(self.cfg.get("init_delay", 0)))
        versions = self.cfg.get("legacy_versions", list(LEGACY))
        if self.cfg.get("init_refuse") and requested not in versions:  # the 2025-11-25 example's refusal
            return self.error(rid, -32602, "Unsupported protocol version",
                              {"supported": versions, "requested": requested})
        version = self.cfg.get("init_version") or (requested if requested in versions else versions[0])
        if self.cfg.get("init_hostile"):
            bad = {"protocolVersion": "2099-01-01", "capabilities": {}, "serverInfo": {"name": "WRONG"}}
            self.send({"jsonrpc": "2.0", "id": True, "result": bad})
            self.send({"jsonrpc": "2.0", "id": float(rid) if isinstance(rid, int) else 1.0, "result": bad})
        self.send({"jsonrpc": "2.0", "id": rid, "result": {
            "protocolVersion": version, "serverInfo": self.info, **self.instructions("legacy"),
            "capabilities": self.capabilities("legacy"), **self.cfg.get("init_extra", {})}})

    def pinned_refusal(self, msg: JSON) -> bool:
        """``pin``: the connection's first request fixes its era; answer a request of the
        other era with an error (as the official Python SDK does). True when it was refused."""
        method = msg["method"]
        modern = method == "server/discover" or is_modern_request(msg.get("params"))
        if self.era is None:
            self.era = "modern" if modern else "legacy"
            return False
        if self.era == "legacy" and modern:
            self.error(msg["id"], -32600, "Invalid request: this connection speaks a legacy version")
            return True
        if self.era == "modern" and method == "initialize":
            params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
            self.error(msg["id"], -32022, "Unsupported protocol version",
                       {"supported": [MODERN], "requested": params.get("protocolVersion")})
            return True
        return False

    # -- requests ----------------------------------------------------------------------------------
    def handle_request(self, msg: JSON) -> None:
        self.answer(msg)
        if msg["method"] == self.cfg.get("end_output_after"):
            with self.write_lock:
                self.ended = True
                os.close(1)

    def answer(self, msg: JSON) -> None:
        rid, method = msg["id"], msg["method"]
        params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
        if method == "server/discover":
            return self.discover(rid, params)
        if method == "initialize":
            return self.initialize(rid, params)
        modern = is_modern_request(params)
        if modern:
            if self.cfg.get("discover") not in ("result", "-32022"):
                return self.error(rid, -32602, "Invalid request parameters: not initialized")
            version = params["_meta"][META_VERSION]
            if version not in self.supported():
                return self.error(rid, -32022, "Unsupported protocol version",
                                  {"supported": self.supported(), "requested": version})
        elif not self.initialized and method != "ping":
            return self.error(rid, -32602, "Received request before initialization was complete")
        if method == "ping":
            return self.reply(rid, {}, modern)
        if method in LIST_KEYS:
            return self.list(rid, method, params, modern)
        if method == "tools/call":
            for n in range(int(self.cfg.get("flood", 0))):
                self.send({"jsonrpc": "2.0", "id": f"ping-{n}", "method": "ping"})
            while self.cfg.get("deaf"):
                time.sleep(3600)
            if "raw_line" in self.cfg:
                return self.write_raw(self.cfg["raw_line"].replace("{id}", json.dumps(rid)).encode() + b"\n")
        if method in ("tools/call", "resources/read", "prompts/get") and "raw_result" in self.cfg:
            return self.send({"jsonrpc": "2.0", "id": rid, "result": self.cfg["raw_result"]})
        if method == "tools/call":
            return self.call_tool(rid, params, modern)
        if method == "resources/read":
            return self.read(rid, params.get("uri"), modern)
        if method == "prompts/get":
            args = params.get("arguments") or {}
            if params.get("name") != "greet" or "name" not in args:
                return self.error(rid, -32602, "Unknown prompt or missing argument 'name'")
            return self.reply(rid, {"messages": [{"role": "user", "content": {
                "type": "text", "text": f"Hello, {args['name']}! ({args.get('style', 'plain')})"}}]}, modern)
        self.error(rid, -32601, f"Method not found: {method}")

    def list(self, rid: Any, method: str, params: JSON, modern: bool) -> None:
        self.list_calls += 1
        key, cursor = LIST_KEYS[method], params.get("cursor")
        extra = {}
        if modern and "ttl_ms" in self.cfg:
            extra = {"ttlMs": self.cfg["ttl_ms"], "cacheScope": "public"}
        if self.cfg.get("endless"):  # always one more page, forever
            page = [{"name": f"endless{self.list_calls}"}]
            return self.reply(rid, {key: page, "nextCursor": "again", **extra}, modern)
        if key == "tools" and "raw_tools" in self.cfg:
            cursor = {"nextCursor": self.cfg["raw_cursor"]} if "raw_cursor" in self.cfg else {}
            return self.reply(rid, {key: self.cfg["raw_tools"], **cursor, **extra}, modern)
        items = {"tools": self.listed_tools, "resources": lambda: self.cfg.get("resources", RESOURCES),
                 "resourceTemplates": lambda: self.cfg.get("templates", TEMPLATES),
                 "prompts": lambda: self.cfg.get("prompts", PROMPTS)}[key]()
        pages = max(1, int(self.cfg.get("pages", 1)))
        empty_cursor = self.cfg.get("empty_cursor", True)
        # cursors: None -> page 0, then "" (a valid cursor), then "p2", "p3", ...
        if cursor is None:
            page = 0
        elif cursor == "" and empty_cursor:
            page = 1
        elif isinstance(cursor, str) and cursor.startswith("p") and cursor[1:].isdigit():
            page = int(cursor[1:])
        else:
            page = pages
        if page >= pages:
            return self.error(rid, -32602, f"invalid cursor {cursor!r}")
        per = self.cfg.get("per_page") or -(-len(items) // pages)
        last = page == pages - 1 and not self.cfg.get("per_page")
        result: JSON = {key: items[page * per:] if last else items[page * per:(page + 1) * per], **extra}
        if page + 1 < pages:
            result["nextCursor"] = "" if page == 0 and empty_cursor else f"p{page + 1}"
        self.reply(rid, result, modern)

    def listed_tools(self) -> list[JSON]:
        tools = [{"inputSchema": OBJECT, **{k: v for k, v in t.items() if k not in BEHAVIOUR_KEYS}}
                 for t in self.tools]
        return tools + [{"name": f"gen{i}", "inputSchema": OBJECT}
                        for i in range(self.cfg.get("extra_items", 0))]

    def read(self, rid: Any, uri: Any, modern: bool) -> None:
        if uri == "fake://text":
            return self.reply(rid, {"contents": [{"uri": uri, "mimeType": "text/plain",
                                                  "text": "text resource: " + UNICODE_TEXT}]}, modern)
        if uri == "fake://blob":
            return self.reply(rid, {"contents": [{"uri": uri, "mimeType": "application/octet-stream",
                                                  "blob": base64.b64encode(BLOB).decode()}]}, modern)
        self.error(rid, -32602, f"Resource not found: {uri}")

    def call_tool(self, rid: Any, params: JSON, modern: bool) -> None:
        name, args = params.get("name"), params.get("arguments") or {}
        tool = next((t for t in self.tools if t["name"] == name), None)
        if tool is None:
            return self.error(rid, -32602, f"Unknown tool: {name}", {"tool": name})
        result = getattr(self, "tool_" + tool.get("does", "call"))(rid, tool, args, params)
        if result is not None:
            self.reply(rid, result, modern)
        self.answered += 1
        if self.cfg.get("exit_after_calls") and self.answered >= self.cfg["exit_after_calls"]:
            os.close(1)   # its output ends with the answer (the kernel's exit may take a while)
            os._exit(7)

    # -- tools: each gets (request id, tool, arguments, params); a result, or None if it
    #    answered itself (or never does) ------------------------------------------------------------
    def tool_call(self, rid: Any, tool: JSON, args: JSON, params: JSON) -> JSON:
        return text(json.dumps({"tool": tool["name"], "arguments": args}))

    def tool_echo(self, rid: Any, tool: JSON, args: JSON, params: JSON) -> JSON:
        """``text`` back; the arguments and the request's ``_meta`` in structuredContent."""
        return text(str(args.get("text", "")), structuredContent={"args": args, "meta": params.get("_meta") or {}})

    def tool_arguments(self, rid: Any, tool: JSON, args: JSON, params: JSON) -> JSON | None:
        """The arguments as JSON; ``accept`` {name: "integer"|"string"}: another type is
        refused with -32602, whatever the schema says (a server changed since it was listed)."""
        for name, kind in tool.get("accept", {}).items():
            if name in args and not isinstance(args[name], {"integer": int, "string": str}[kind]):
                return self.error(rid, -32602, f"Invalid params: {name} has the wrong type")
        return text(json.dumps(args, sort_keys=True, ensure_ascii=False))

    def tool_text(self, rid: Any, tool: JSON, args: JSON, params: JSON) -> JSON:
        return text(tool["text"])

    def tool_result(self, rid: Any, tool: JSON, args: JSON, params: JSON) -> JSON:
        return tool["result"]

    def tool_error(self, rid: Any, tool: JSON, args: JSON, params: JSON) -> JSON:
        return text(tool.get("text", "the tool failed on purpose"), isError=True)

    def tool_rpc_error(self, rid: Any, tool: JSON, args: JSON, params: JSON) -> None:
        self.error(rid, -32000, tool.get("message", "backend exploded") + self.cfg.get("error_detail", ""))

    def tool_sleep(self, rid: Any, tool: JSON, args: JSON, params: JSON) -> JSON:
        """Sleeps ``seconds`` and answers ``text``, cancelled or not (a late answer)."""
        time.sleep(float(args.get("seconds", tool.get("seconds", 1))))
        return text(str(args.get("text", "slept")))

    def tool_slow(self, rid: Any, tool: JSON, args: JSON, params: JSON) -> JSON | None:
        """Works ``seconds`` (60) with a child process in our process group (like npx's
        children), unless cancelled, then answers ``text``; a cancelled request gets no answer."""
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
        self.record({"_child": child.pid})
        cancelled = self.cancelled[rid].wait(float(args.get("seconds", tool.get("seconds", 60))))
        child.kill()
        child.wait()
        return None if cancelled else text(str(args.get("text", "slow done")))

    def tool_elicit(self, rid: Any, tool: JSON, args: JSON, params: JSON) -> JSON:
        """book / visit (or any tool with a ``question``): a form or URL question. Legacy: an
        elicitation/create request (id "ask-<rid>"), the client's answer awaited unless the call
        is cancelled; 2026-07-28: input_required (question "q", requestState "s1"), then the
        retry's inputResponses. The answer's result comes back as JSON text; structuredContent
        has the whole answer (legacy) or the inputResponses and requestState."""
        question = tool.get("question") or (
            {"message": "Book a table \x1b[1mnow", "requestedSchema": FORM} if tool["name"] == "book"
            else {"mode": "url", "message": "Sign in", "url": args.get("url")})
        if is_modern_request(params):
            if "inputResponses" in params:
                answers = params["inputResponses"]
                return text(json.dumps(answers.get("q"), sort_keys=True),
                            structuredContent={"answers": answers, "state": params.get("requestState")})
            return {"resultType": "input_required", "requestState": "s1",
                    "inputRequests": {"q": {"method": "elicitation/create", "params": question}}}
        asked = f"ask-{rid}"
        self.send({"jsonrpc": "2.0", "id": asked, "method": "elicitation/create", "params": question})
        deadline = time.monotonic() + 120
        while json.dumps(asked) not in self.responses and not self.cancelled[rid].is_set() \
                and time.monotonic() < deadline:
            time.sleep(0.02)
        answer = self.responses.pop(json.dumps(asked), {})
        return text(json.dumps(answer.get("result"), sort_keys=True), structuredContent={"answer": answer})

    def tool_progress(self, rid: Any, tool: JSON, args: JSON, params: JSON) -> JSON:
        steps, delay = int(args.get("steps", 2)), float(args.get("delay", args.get("pause", 0.0)))
        for i in range(1, steps + 1):
            self.send({"jsonrpc": "2.0", "method": "notifications/progress",
                       "params": {"progressToken": progress_token(params), "progress": i,
                                  "total": steps, "message": f"step {i}"}})
            time.sleep(delay)
        return text(f"done after {steps} steps")

    def tool_crash(self, rid: Any, tool: JSON, args: JSON, params: JSON) -> None:
        time.sleep(float(args.get("delay", 0.0)))
        sys.stderr.write(f"Traceback (most recent call last):\nfatal: crashing on purpose {self.leak()}\n")
        sys.stderr.flush()
        os._exit(int(args.get("code", 7)))

    def tool_big(self, rid: Any, tool: JSON, args: JSON, params: JSON) -> JSON:
        size = int(float(args["mb"]) * MIB) if "mb" in args else int(tool.get("size", MIB))
        return text("x" * (size - 1) + "!")

    def tool_lines(self, rid: Any, tool: JSON, args: JSON, params: JSON) -> JSON:
        return text("\n".join(f"line {i}" for i in range(int(args.get("count", 10)))))

    def tool_say(self, rid: Any, tool: JSON, args: JSON, params: JSON) -> JSON:
        return text(f"said {self.leak()}")

    def tool_whoami(self, rid: Any, tool: JSON, args: JSON, params: JSON) -> JSON:
        env = {k: v for k, v in os.environ.items() if k.startswith("CLI_")}
        return text(json.dumps({"name": self.info["name"], "argv": sys.argv[1:], "cwd": os.getcwd(),
                                "env": env}, ensure_ascii=False))

    def tool_env(self, rid: Any, tool: JSON, args: JSON, params: JSON) -> JSON:
        return text(json.dumps(sorted(os.environ)), structuredContent=dict(os.environ))

    def tool_cwd(self, rid: Any, tool: JSON, args: JSON, params: JSON) -> JSON:
        return text(os.getcwd())

    def tool_pid(self, rid: Any, tool: JSON, args: JSON, params: JSON) -> JSON:
        return text(str(os.getpid()), structuredContent={"pid": os.getpid(), "pgid": os.getpgid(0)})

    def tool_argv(self, rid: Any, tool: JSON, args: JSON, params: JSON) -> JSON:
        return text("argv", structuredContent={"argv": sys.argv[1:]})

    def tool_noisy(self, rid: Any, tool: JSON, args: JSON, params: JSON) -> JSON:
        self.write_raw(b"Server started on stdout, sorry!\n"
                       b'{"level":"info","msg":"a JSON log line, not JSON-RPC"}\n'
                       b"\n   \n"
                       b"[1, 2, \n"
                       b'{"jsonrpc": "1.0", "id": 1}\n'
                       b"42\n")
        return text("still here")

    def tool_stderr_flood(self, rid: Any, tool: JSON, args: JSON, params: JSON) -> JSON:
        for _ in range(int(args.get("kb", 1024))):
            sys.stderr.write("e" * 1023 + "\n")
        sys.stderr.write("last stderr line\n")
        sys.stderr.flush()
        return text("flooded")

    def tool_add_tool(self, rid: Any, tool: JSON, args: JSON, params: JSON) -> JSON:
        self.tools.append({"name": str(args["name"]), "does": "echo"})
        if args.get("notify", True):
            self.send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        return text("added")

    def tool_elicit_many(self, rid: Any, tool: JSON, args: JSON, params: JSON) -> JSON:
        """``count`` legacy elicitation requests in one burst; answers how many were answered
        (within ``wait`` seconds)."""
        count = int(args.get("count", 40))
        self.write_raw(b"".join(json.dumps({"jsonrpc": "2.0", "id": f"e{i}", "method": "elicitation/create",
                                            "params": {"message": f"question {i}", "requestedSchema": OBJECT}
                                            }).encode() + b"\n" for i in range(count)))
        deadline = time.monotonic() + float(args.get("wait", 20.0))
        while time.monotonic() < deadline and len(self.responses) < count:
            time.sleep(0.02)
        return text(str(len(self.responses)))

    def tool_server_request(self, rid: Any, tool: JSON, args: JSON, params: JSON) -> JSON:
        """A legacy server may ask things of the client; a modern one must not."""
        self.send({"jsonrpc": "2.0", "id": "srv-ping", "method": "ping"})
        self.send({"jsonrpc": "2.0", "id": 4242, "method": "x/unknown", "params": {}})
        deadline = time.monotonic() + float(args.get("wait", 3.0))
        while time.monotonic() < deadline and len(self.responses) < 2:
            time.sleep(0.02)
        return text("asked", structuredContent={"responses": dict(self.responses)})

    def tool_batch(self, rid: Any, tool: JSON, args: JSON, params: JSON) -> None:
        note = {"jsonrpc": "2.0", "method": "notifications/progress",
                "params": {"progressToken": progress_token(params), "progress": 1, "total": 1}}
        res = {"jsonrpc": "2.0", "id": rid, "result": {"resultType": "complete", **text("from a batch")}}
        self.write_raw(json.dumps([note, res]).encode() + b"\n")

    def tool_spawn(self, rid: Any, tool: JSON, args: JSON, params: JSON) -> JSON:
        """A child that sleeps; ``hold`` seconds keep the call in flight."""
        child = self.child(stdout=subprocess.DEVNULL)
        time.sleep(float(args.get("hold", 0)))
        return text(str(child.pid), structuredContent={"pid": os.getpid(), "pgid": os.getpgid(0),
                                                       "child": child.pid})

    def tool_leader_exit(self, rid: Any, tool: JSON, args: JSON, params: JSON) -> None:
        """The leader dies while a grandchild keeps our stdout open."""
        self.child(stdout=None)
        time.sleep(float(args.get("delay", 0.2)))
        sys.stderr.write("leader exiting, grandchild keeps stdout\n")
        sys.stderr.flush()
        os._exit(5)

    def child(self, stdout: Any) -> subprocess.Popen:
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"],
                                 stdin=subprocess.DEVNULL, stdout=stdout, stderr=subprocess.DEVNULL)
        self.record({"_child": child.pid})
        return child

    def tool_result_type(self, rid: Any, tool: JSON, args: JSON, params: JSON) -> None:
        result = text("typed")
        if args.get("value") is not None:
            result["resultType"] = args["value"]
        self.send({"jsonrpc": "2.0", "id": rid, "result": result})

    def tool_log(self, rid: Any, tool: JSON, args: JSON, params: JSON) -> JSON:
        self.send({"jsonrpc": "2.0", "method": "notifications/message",
                   "params": {"level": "warning", "logger": "fake", "data": args.get("data", "hello")}})
        return text("logged")

    def tool_pair(self, rid: Any, tool: JSON, args: JSON, params: JSON) -> JSON:
        """Answers once two ``pair`` calls are in flight together ("alone" after 5 s)."""
        self.pair_waiting += 1
        if self.pair_waiting >= 2:
            self.pair_event.set()
        return text("together" if self.pair_event.wait(5) else "alone")

    def tool_hostile(self, rid: Any, tool: JSON, args: JSON, params: JSON) -> None:
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
        self.write_raw(b"\n".join(lines) + b"\n")

    # -- the reader ----------------------------------------------------------------------------------
    def handle(self, msg: Any) -> None:
        """Runs on the reader thread: state changes here are in arrival order."""
        if not isinstance(msg, dict) or self.cfg.get("silent"):
            return
        method, params = msg.get("method"), msg.get("params") if isinstance(msg.get("params"), dict) else {}
        if method is None:  # a response to one of our requests
            self.responses[json.dumps(msg.get("id"))] = msg
            return
        if "id" not in msg:
            if method == "notifications/initialized":
                self.initialized = True
            elif method == "notifications/cancelled" and params.get("requestId") in self.cancelled:
                self.cancelled[params["requestId"]].set()
            return
        if method == "server/discover":
            self.saw_discover = True
        if self.cfg.get("pin") and self.pinned_refusal(msg):
            return
        # Answer in arrival order, like a real server, except what may be slow: tool calls and
        # a delayed handshake get a thread, since we must keep reading (and recording) meanwhile.
        slow = {"tools/call": True, "server/discover": self.cfg.get("discover_delay"),
                "initialize": self.cfg.get("init_delay")}
        if method == "tools/call":
            self.cancelled[msg["id"]] = threading.Event()
        if slow.get(method):
            threading.Thread(target=self.handle_request, args=(msg,), daemon=True).start()
        else:
            self.handle_request(msg)

    def serve(self) -> None:
        if self.cfg.get("require") and not os.path.exists(self.cfg["require"]):
            sys.stderr.write(f"cannot start: {self.cfg['require']} is missing\n")
            sys.exit(4)
        self.record({"_start": os.getpid(), "pgid": os.getpgid(0), "argv": sys.argv[1:], "cwd": os.getcwd()})
        if self.cfg.get("ignore_sigterm"):   # lives until SIGKILL, so it reads what was sent before
            signal.signal(signal.SIGTERM, lambda *_: self.record({"_signal": "SIGTERM"}))
        for name in filter(None, self.cfg.get("echo_env", "").split(",")):
            sys.stderr.write(f"env {name}={os.environ.get(name, '<unset>')}\n")
        if self.cfg.get("say"):
            sys.stderr.write(f"say {self.cfg['say']}\n")
        sys.stderr.flush()
        try:
            for line in iter(sys.stdin.buffer.readline, b""):
                if not line.strip():
                    continue
                try:
                    msg = json.loads(line)
                except ValueError:
                    self.record({"_unparsed": line.decode("utf-8", "replace")})
                    continue
                self.record(msg)
                self.handle(msg)
        except (BrokenPipeError, KeyboardInterrupt):
            pass
        while self.cfg.get("ignore_eof"):   # deaf to the end of its input
            time.sleep(3600)
        os._exit(0)


def configure(argv: list[str]) -> JSON:
    p = argparse.ArgumentParser(prog="fake_server.py")
    p.add_argument("--config", help="a JSON file of options")
    p.add_argument("--legacy", action="store_const", const="legacy", dest="mode")
    p.add_argument("--silent", action="store_true", default=None)
    p.add_argument("--stubborn", action="store_true", help="ignore SIGTERM and the end of input")
    for flag in ("--name", "--init-version", "--say", "--echo-env", "--ref-url", "--error-detail"):
        p.add_argument(flag)
    opts = vars(p.parse_args(argv))
    cfg: JSON = {}
    path = opts.pop("config")
    if path:
        with open(path, encoding="utf-8") as f:
            cfg = json.load(f)
    if opts.pop("stubborn"):
        cfg.update(ignore_eof=True, ignore_sigterm=True)
    cfg.update({k: v for k, v in opts.items() if v is not None})
    mode = cfg.get("mode", "modern")
    if mode not in MODES:
        sys.exit(f"fake_server.py: unknown mode {mode!r}; modes: {', '.join(MODES)}")
    return {**MODES[mode], **cfg}


if __name__ == "__main__":
    Server(configure(sys.argv[1:])).serve()
