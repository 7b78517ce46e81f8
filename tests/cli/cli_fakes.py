#!/usr/bin/env python3
"""A fake MCP stdio server for mcpmini's command-line tests (stdlib only), and the small
test-side handle :class:`Fake` that builds its command line and reads what it recorded.

Run as a server::

    python3 cli_fakes.py --record FILE [--name NAME] [--legacy] [--init-version V] [--silent]
                         [--echo-env NAME,NAME] [--say TEXT] [--ref-url URL] [--stubborn]

Every line the server receives is appended to ``--record`` (JSON lines) right away, after a
``{"_start": pid, "pgid": ..., "argv": ..., "cwd": ...}`` marker; a child process it starts is
recorded as ``{"_child": pid}`` and a SIGTERM as ``{"_signal": "SIGTERM"}``. So a test sees
exactly what the client sent (and that nothing was sent), and which processes to look for.

Era: modern (answers ``server/discover``) unless ``--legacy`` (``server/discover`` gets -32601;
``initialize`` answers ``--init-version`` or the version asked for). ``--silent`` never answers.
``--stubborn`` ignores SIGTERM and the end of its input, so only SIGKILL stops it.
``--error-detail`` is appended to the message of the ``rpcerror`` tool's JSON-RPC error;
``--tweaks FILE`` changes a schema between two runs of the same command line (see _Server).
At start-up it writes ``env NAME=value`` on stderr for each ``--echo-env`` name and
``say TEXT`` for ``--say``; the ``say`` and ``crash`` tools repeat both. The tools are in ``TOOLS`` (schemas chosen to exercise argument typing).
"""
from __future__ import annotations

import argparse
import base64
import json
import os
import shlex
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

JSON = dict[str, Any]
MODERN = "2026-07-28"
LEGACY = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"

# Text a hostile server could send to a terminal: set the title (OSC 0), write the clipboard
# (OSC 52), colour, clear, bell, backspace, a bare CR that overwrites the line, a C1 CSI, and
# bidi overrides that reorder what is shown; and a CRLF, which is only a line break.
NASTY = ("A\x1b]0;pwned-title\x07B\x1b]52;c;Y2xpcGJvYXJk\x07C\x1b[31mred\x1b[0m\x08D\rE"
         "\x9b2JF\u202eevil\u202cG\u2066iso\u2069H\r\nY")
NASTY_RAW = ("\x1b", "\x07", "\x08", "\x9b", "\u202e", "\u202c", "\u2066", "\u2069")
UNICODE_TEXT = "杭州 naïve café ✓ — 🌧 Ωmega"
BLOB = bytes(range(256)) + "杭州".encode()

TOOLS: list[JSON] = [
    {"name": "typed", "description": "Echoes its arguments as JSON.",
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
    {"name": "strict", "description": "Needs a city; nothing else allowed.",
     "inputSchema": {"type": "object", "properties": {
         "city": {"type": "string"}, "days": {"type": "integer"}},
         "required": ["city"], "additionalProperties": False}},
    {"name": "whoami", "description": "argv, cwd and CLI_* environment of the server.",
     "inputSchema": {"type": "object"}},
    {"name": "slow", "description": "Sleeps (with a child process) until done or cancelled.",
     "inputSchema": {"type": "object", "properties": {"seconds": {"type": "number"}}}},
    {"name": "progress", "description": "Sends two progress notifications first.",
     "inputSchema": {"type": "object"}},
    {"name": "controls", "description": "Terminal attack " + NASTY, "inputSchema": {"type": "object"}},
    {"name": "unicode", "description": "Non-ASCII text.", "inputSchema": {"type": "object"}},
    {"name": "fail", "description": "An isError result.", "inputSchema": {"type": "object"}},
    {"name": "rpcerror", "description": "A JSON-RPC error.", "inputSchema": {"type": "object"}},
    {"name": "crash", "description": "Writes on stderr and exits 7.", "inputSchema": {"type": "object"}},
    {"name": "lines", "description": "count lines of text.",
     "inputSchema": {"type": "object", "properties": {"count": {"type": "integer"}}}},
    {"name": "say", "description": "Returns the --say text and the --echo-env values.", "inputSchema": {"type": "object"}},
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


# -- Server --------------------------------------------------------------------------------

class _Server:
    def __init__(self, opts: argparse.Namespace) -> None:
        self.opts = opts
        self.write_lock = threading.Lock()
        self.cancelled: dict[Any, threading.Event] = {}
        self.info = {"name": opts.name, "version": "1.2.3"}
        self.instructions = "Fake instructions " + NASTY
        self.tools = json.loads(json.dumps(TOOLS).replace("REF-URL", opts.ref_url))
        # --tweaks FILE (read at start-up, so that the command line stays the same): the type
        # of strict's "days" in the schema, the type its calls must have (else -32602), and
        # tools added by name
        self.tweaks = json.loads(Path(opts.tweaks).read_text()) if opts.tweaks else {}
        strict = next(t for t in self.tools if t["name"] == "strict")
        strict["inputSchema"]["properties"]["days"]["type"] = self.tweaks.get("days", "integer")
        self.tools += [{"name": n, "description": "Added later.", "inputSchema": {"type": "object"}}
                       for n in self.tweaks.get("extra", [])]

    # I/O --------------------------------------------------------------------------------
    def record(self, entry: Any) -> None:
        if not self.opts.record:
            return
        with self.write_lock, open(self.opts.record, "a", encoding="utf-8") as f:
            f.write(json.dumps(entry, ensure_ascii=False) + "\n")  # visible to readers at close

    def send(self, message: JSON) -> None:
        data = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
        with self.write_lock:
            sys.stdout.buffer.write(data)
            sys.stdout.buffer.flush()

    def reply(self, rid: Any, result: JSON) -> None:
        self.send({"jsonrpc": "2.0", "id": rid, "result": result})

    def error(self, rid: Any, code: int, message: str) -> None:
        self.send({"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}})

    # Dispatch ---------------------------------------------------------------------------
    def serve(self) -> None:
        for line in iter(sys.stdin.buffer.readline, b""):
            if not line.strip():
                continue
            try:
                message = json.loads(line)
            except ValueError:
                self.record({"_unparsed": line.decode("utf-8", "replace")})
                continue
            self.record(message)
            if not self.opts.silent and isinstance(message, dict):
                self.handle(message)

    def handle(self, message: JSON) -> None:
        method, rid = message.get("method"), message.get("id")
        params = message.get("params") if isinstance(message.get("params"), dict) else {}
        if method == "notifications/cancelled":
            event = self.cancelled.get(params.get("requestId"))
            if event:
                event.set()
            return
        if "id" not in message or not isinstance(method, str):
            return
        if method == "server/discover":
            if self.opts.legacy:
                return self.error(rid, -32601, "Method not found: server/discover")
            return self.reply(rid, {"supportedVersions": [MODERN, *LEGACY],
                                    "capabilities": {"tools": {}, "resources": {}, "prompts": {}},
                                    "instructions": self.instructions,
                                    "_meta": {META_SERVER_INFO: self.info}})
        if method == "initialize":
            asked = params.get("protocolVersion")
            version = self.opts.init_version or (asked if asked in LEGACY else LEGACY[0])
            return self.reply(rid, {"protocolVersion": version, "serverInfo": self.info,
                                    "capabilities": {"tools": {}, "resources": {}, "prompts": {}},
                                    "instructions": self.instructions})
        if method == "ping":
            return self.reply(rid, {})
        if method == "tools/list":
            return self.reply(rid, {"tools": self.tools})
        if method == "resources/list":
            return self.reply(rid, {"resources": RESOURCES})
        if method == "resources/templates/list":
            return self.reply(rid, {"resourceTemplates": TEMPLATES})
        if method == "prompts/list":
            return self.reply(rid, {"prompts": PROMPTS})
        if method == "resources/read":
            uri = params.get("uri")
            if uri == "fake://text":
                return self.reply(rid, {"contents": [{"uri": uri, "mimeType": "text/plain",
                                                      "text": "text resource: " + UNICODE_TEXT}]})
            if uri == "fake://blob":
                return self.reply(rid, {"contents": [{"uri": uri, "mimeType": "application/octet-stream",
                                                      "blob": base64.b64encode(BLOB).decode()}]})
            return self.error(rid, -32602, f"Resource not found: {uri}")
        if method == "prompts/get":
            args = params.get("arguments") or {}
            if params.get("name") != "greet" or "name" not in args:
                return self.error(rid, -32602, "Unknown prompt or missing argument 'name'")
            return self.reply(rid, {"messages": [{"role": "user", "content": {
                "type": "text", "text": f"Hello, {args['name']}! ({args.get('style', 'plain')})"}}]})
        if method == "tools/call":
            return self.call(rid, params)
        self.error(rid, -32601, f"Method not found: {method}")

    def call(self, rid: Any, params: JSON) -> None:
        name, args = params.get("name"), params.get("arguments") or {}
        token = (params.get("_meta") or {}).get("progressToken")
        text = lambda t, **kw: self.reply(rid, {"content": [{"type": "text", "text": t}], **kw})  # noqa: E731
        accept = {"integer": int, "string": str}.get(self.tweaks.get("accept", ""), object)
        if name == "strict" and "days" in args and not isinstance(args["days"], accept):
            return self.error(rid, -32602, "Invalid params: days has the wrong type")
        if name == "typed" or name == "strict":
            return text(json.dumps(args, sort_keys=True, ensure_ascii=False))
        if name in self.tweaks.get("extra", []):
            return text(f"{name} was added later")
        if name == "whoami":
            env = {k: v for k, v in os.environ.items() if k.startswith("CLI_")}
            return text(json.dumps({"name": self.opts.name, "argv": sys.argv[1:], "cwd": os.getcwd(),
                                    "env": env}, ensure_ascii=False))
        if name == "slow":
            self.cancelled[rid] = threading.Event()
            threading.Thread(target=self.slow, args=(rid, float(args.get("seconds", 60))),
                             daemon=True).start()
            return
        if name == "progress":
            for i in (1, 2):
                if token is not None:
                    self.send({"jsonrpc": "2.0", "method": "notifications/progress", "params": {
                        "progressToken": token, "progress": i, "total": 2, "message": f"step {i}"}})
            return text("progressed")
        if name == "controls":
            return text(NASTY)
        if name == "unicode":
            return text(UNICODE_TEXT)
        if name == "fail":
            return text("the tool failed on purpose", isError=True)
        if name == "rpcerror":
            return self.error(rid, -32000, "backend exploded" + self.opts.error_detail)
        if name == "crash":
            sys.stderr.write(f"fatal: crashing on purpose {self.leak()}\n")
            sys.stderr.flush()
            os._exit(7)
        if name == "lines":
            return text("\n".join(f"line {i}" for i in range(int(args.get("count", 10)))))
        if name == "say":
            return text(f"said {self.leak()}")
        self.error(rid, -32602, f"Unknown tool: {name}")

    def leak(self) -> str:
        """What a careless server repeats: its --say text and its --echo-env values."""
        values = [os.environ.get(n, "<unset>") for n in filter(None, self.opts.echo_env.split(","))]
        return " ".join([self.opts.say, *values]).strip()

    def slow(self, rid: Any, seconds: float) -> None:
        """Work for ``seconds`` with a child process in our process group (like npx's
        children), unless cancelled; a cancelled request gets no response."""
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
        self.record({"_child": child.pid})
        cancelled = self.cancelled[rid].wait(seconds)
        child.kill()
        child.wait()
        if not cancelled:
            self.reply(rid, {"content": [{"type": "text", "text": "slow done"}]})


def serve(argv: list[str] | None = None) -> int:
    """Run the fake server on stdin/stdout."""
    p = argparse.ArgumentParser()
    p.add_argument("--record")
    p.add_argument("--name", default="cli-fake")
    p.add_argument("--legacy", action="store_true")
    p.add_argument("--init-version")
    p.add_argument("--silent", action="store_true")
    p.add_argument("--echo-env", default="")
    p.add_argument("--say", default="")
    p.add_argument("--ref-url", default="http://127.0.0.1:9/never-fetched.json")
    p.add_argument("--stubborn", action="store_true")
    p.add_argument("--error-detail", default="")
    p.add_argument("--tweaks")
    opts = p.parse_args(argv)
    server = _Server(opts)
    server.record({"_start": os.getpid(), "pgid": os.getpgid(0), "argv": sys.argv[1:], "cwd": os.getcwd()})
    if opts.stubborn:
        signal.signal(signal.SIGTERM, lambda *_: server.record({"_signal": "SIGTERM"}))
    for name in filter(None, opts.echo_env.split(",")):
        sys.stderr.write(f"env {name}={os.environ.get(name, '<unset>')}\n")
    if opts.say:
        sys.stderr.write(f"say {opts.say}\n")
    sys.stderr.flush()
    try:
        server.serve()
    except (BrokenPipeError, KeyboardInterrupt):
        pass
    while opts.stubborn:  # deaf to the end of input and to SIGTERM: only SIGKILL ends it
        time.sleep(0.1)
    return 0


# -- Test side -----------------------------------------------------------------------------

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
MCPMINI = ROOT / "mcpmini.py"
WEATHER = ROOT / "examples" / "weather_server.py"


class Fake:
    """One fake server for a test: its argv, config entry and recording."""

    def __init__(self, directory: Path, *flags: str, label: str = "fake") -> None:
        self.record = directory / f"{label}-received.jsonl"
        self.argv = [sys.executable, str(Path(__file__).resolve()), "--record", str(self.record), *flags]

    @property
    def cmdline(self) -> str:
        """The server as a SERVER command line (it contains spaces and '/')."""
        return shlex.join(self.argv)

    def entry(self, **extra: Any) -> JSON:
        """A config entry that starts this server."""
        return {"command": self.argv[0], "args": self.argv[1:], **extra}

    def entries(self) -> list[JSON]:
        if not self.record.exists():
            return []
        return [json.loads(line) for line in self.record.read_text(encoding="utf-8").splitlines() if line]

    def started(self) -> bool:
        return any("_start" in e for e in self.entries())

    def messages(self) -> list[JSON]:
        """What the server received, markers left out."""
        return [e for e in self.entries() if not any(k.startswith("_") for k in e)]

    def calls(self) -> list[JSON]:
        return [m for m in self.messages() if m.get("method") == "tools/call"]

    def arguments(self) -> JSON:
        """The arguments of the one tools/call received."""
        calls = self.calls()
        assert len(calls) == 1, calls
        return calls[0]["params"]["arguments"]

    def pids(self) -> list[int]:
        """Every process of this server: its pid(s) and the children it recorded."""
        return [e.get("_start") or e["_child"] for e in self.entries() if "_start" in e or "_child" in e]

    def pgids(self) -> list[int]:
        return [e["pgid"] for e in self.entries() if "_start" in e]


def write_json(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, ensure_ascii=False, indent=2), encoding="utf-8")
    return path


def alive(pid: int) -> bool:
    """A process exists (zombies count as gone: nobody can use them)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
            return f.read().rpartition(")")[2].split()[0] != "Z"
    except OSError:
        pass
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True


def group_alive(pgid: int) -> bool:
    """Any live (non-zombie) process in the process group."""
    if os.path.isdir("/proc"):
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as f:
                        fields = f.read().rpartition(")")[2].split()
                except OSError:
                    continue
                if fields[0] != "Z" and int(fields[2]) == pgid:
                    return True
        return False
    try:
        os.killpg(pgid, 0)
        return True
    except ProcessLookupError:
        return False


def wait_until(predicate: Any, timeout: float = 20.0) -> bool:
    """Poll ``predicate`` until true or the deadline; returns its last value."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return bool(predicate())


if __name__ == "__main__":
    sys.exit(serve())
