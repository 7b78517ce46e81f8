#!/usr/bin/env python3
"""mcpmini — a one-file Model Context Protocol (MCP) client and command line.

Library quick start::

    import asyncio, mcpmini

    async def main():
        async with mcpmini.Client(["python3", "examples/weather_server.py"]) as client:
            print([tool["name"] for tool in await client.list_tools()])
            result = await client.call_tool("get_forecast", {"city": "Hangzhou"})
            print(mcpmini.result_text(result))

    asyncio.run(main())

Command line quick start::

    python3 mcpmini.py --config examples/mcp.json call weather get_forecast city=Hangzhou
    python3 mcpmini.py tools "npx -y @modelcontextprotocol/server-everything"

Both protocol eras are spoken: the stateless 2026-07-28 revision (every request carries its
version, capabilities and client info in ``params._meta``; ``server/discover`` tells what the
server is) and the legacy line 2024-11-05 … 2025-11-25 (an ``initialize`` handshake first).
The era of a server is found like this::

    pinned by protocol= ──────────────────────────────► that era
    auto:  server/discover ── supportedVersions / -32020..-32022 ──► modern
                           ── any other error, {} or silence ──────► legacy: initialize
           (the answer is remembered per server in the user cache directory)

Layout: constants · errors · JSON-RPC session · transports · client · config · agent · CLI
(``grep -n '^# -- ' mcpmini.py`` prints the table of contents).
"""
from __future__ import annotations

import asyncio
import atexit
import base64
import contextlib
import dataclasses
import hashlib
import json
import logging
import os
import re
import shlex
import signal
import sys
import threading
import time
from collections import deque
from typing import Any, Awaitable, Callable

__all__ = [
    "Client", "ServerConfig", "load_config", "result_text", "run_agent", "main",
    "MCPError", "ConfigError", "ConnectionClosed", "RequestTimeout", "ProtocolError",
    "AuthError", "RemoteError",
]
__version__ = "0.1.0"

JSON = dict[str, Any]
log = logging.getLogger("mcpmini")

# -- Constants -----------------------------------------------------------------------------

MODERN_VERSION = "2026-07-28"
LEGACY_VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
CLIENT_INFO = {"name": "mcpmini", "version": __version__}

DEFAULT_TIMEOUT = 60.0          # seconds per request; the handshake (and process start) too
PROBE_TIMEOUT = 3.0             # server/discover probe of a server whose era is unknown
PROGRESS_TIMEOUT_CAP = 600.0    # progress notifications extend a timeout, up to this in total
SHUTDOWN_GRACE = 2.0            # seconds after closing stdin, then after SIGTERM
EXIT_GRACE = 0.5                # a dead server's pipe may hold its last words for this long
CANCEL_TIMEOUT = 1.0            # bound on sending a cancellation
MAX_MESSAGE_SIZE = 256 << 20    # one JSON-RPC message; above it the connection fails
READ_CHUNK = 1 << 20
STDERR_TAIL_LINES = 20
MAX_PAGES = 100                 # pagination cap: a server that loops its cursor stops here
MAX_INPUT_ROUNDS = 8            # MRTR: input_required rounds for one request
MAX_VERSION_RETRIES = 2         # -32022 retries with a version from data.supported

# JSON-RPC and MCP error codes
PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS = -32700, -32600, -32601, -32602
HEADER_MISMATCH, MISSING_CAPABILITY, UNSUPPORTED_VERSION = -32020, -32021, -32022
MODERN_ERRORS = (HEADER_MISMATCH, MISSING_CAPABILITY, UNSUPPORTED_VERSION)

META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"

# A server gets these variables of ours and its own `env`, not our whole environment
# (otherwise every server would receive the user's API keys and other servers' tokens).
ENV_ALLOWLIST = frozenset({
    "HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "TZ", "TMPDIR",
    "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy",
    "SSL_CERT_FILE", "SSL_CERT_DIR", "NODE_EXTRA_CA_CERTS",
    # Windows system variables, without which many programs cannot start
    "APPDATA", "LOCALAPPDATA", "PROGRAMDATA", "PROGRAMFILES", "PROGRAMFILES(X86)",
    "SYSTEMROOT", "SYSTEMDRIVE", "WINDIR", "COMSPEC", "PATHEXT", "TEMP", "TMP",
    "USERPROFILE", "USERNAME", "HOMEDRIVE", "HOMEPATH", "PROCESSOR_ARCHITECTURE",
    "NUMBER_OF_PROCESSORS", "OS",
})

# -- Errors --------------------------------------------------------------------------------


class MCPError(Exception):
    """Root of every error mcpmini raises on purpose."""


class ConfigError(MCPError, ValueError):
    """A config file, a server entry or an argument is wrong; nothing was sent."""


class ConnectionClosed(MCPError, ConnectionError):
    """The server could not be reached, exited, or the stream broke."""


class RequestTimeout(MCPError, TimeoutError):
    """A local deadline passed: names the method and the limit."""

    def __init__(self, method: str, timeout: float, detail: str = "") -> None:
        self.method, self.timeout = method, timeout
        super().__init__(f"{method} timed out after {timeout:g} s{detail}"
                         " (raise it with --timeout or the entry's \"timeout\")")


class ProtocolError(MCPError):
    """The peer broke JSON-RPC or MCP rules, or no protocol version is shared."""


class AuthError(MCPError, PermissionError):
    """HTTP 401/403: refused by authentication or authorization."""

    def __init__(self, message: str, *, status: int = 401, url: str = "",
                 www_authenticate: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status, self.url = status, url
        self.www_authenticate = www_authenticate or {}


class RemoteError(MCPError):
    """The peer's JSON-RPC error object: ``.code``, ``.message``, ``.data``."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"{message} ({code})" if message else f"error {code}")
        self.code, self.message, self.data = code, message, data

    @classmethod
    def from_wire(cls, error: Any) -> RemoteError:
        if not isinstance(error, dict):
            return cls(INVALID_REQUEST, f"malformed error object: {error!r}")
        code = error.get("code")
        return cls(code if type(code) is int else INVALID_REQUEST,
                   str(error.get("message", "")), error.get("data"))


class _SessionExpired(ConnectionClosed):
    """Legacy Streamable HTTP answered 404 to a request that carried a session id."""


class _HTTPStatusError(ProtocolError):
    """An HTTP error status without a JSON-RPC body (an era signal while probing)."""

    def __init__(self, message: str, status: int, body: bytes = b"") -> None:
        super().__init__(message)
        self.status, self.body = status, body


# -- JSON-RPC session ----------------------------------------------------------------------


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _loads(data: bytes | str) -> Any:
    """Parse one message; NaN/Infinity are refused like any other invalid JSON."""
    return json.loads(data, parse_constant=_reject_constant)


def _dumps(message: Any) -> bytes:
    """Compact UTF-8 JSON; a lone surrogate cannot be UTF-8, so then escape it."""
    try:
        return json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode()
    except UnicodeEncodeError:
        return json.dumps(message, separators=(",", ":")).encode()


class _Pending:
    """One request in flight: its future, and a deadline that progress may push back."""

    __slots__ = ("future", "method", "timeout", "deadline", "hard_deadline", "on_progress")

    def __init__(self, loop: asyncio.AbstractEventLoop, method: str, timeout: float,
                 on_progress: Callable[[JSON], Any] | None) -> None:
        now = loop.time()
        self.future: asyncio.Future = loop.create_future()
        self.method, self.timeout, self.on_progress = method, timeout, on_progress
        self.deadline = now + timeout
        self.hard_deadline = now + max(timeout, PROGRESS_TIMEOUT_CAP)

    def expire(self) -> None:
        """Timer callback: time out, unless progress pushed the deadline back meanwhile."""
        if self.future.done():
            return
        loop = self.future.get_loop()
        if loop.time() < self.deadline:
            loop.call_at(self.deadline, self.expire)
        else:
            self.future.set_exception(RequestTimeout(self.method, self.timeout))


class _Session:
    """JSON-RPC over one transport: ids, the pending table, timeouts, cancellation.

    The transport calls ``dispatch`` with every message it receives and ``connection_lost``
    once when the connection ends; the session calls the transport's ``send`` and its
    ``cancel`` hook (stdio writes ``notifications/cancelled``, modern HTTP closes the stream).
    """

    def __init__(self, transport: _Transport, *, label: str = "server",
                 on_notification: Callable[[str, JSON], None] | None = None,
                 on_request: Callable[[JSON], Awaitable[JSON | None]] | None = None,
                 trace: Callable[[str, str, Any], None] | None = None) -> None:
        self.transport, self.label = transport, label
        self.on_notification, self.on_request, self.trace = on_notification, on_request, trace
        self._next_id = 0
        self._pending: dict[int, _Pending] = {}
        self._tasks: set[asyncio.Task] = set()
        self.closed: ConnectionClosed | None = None
        self.tool_schemas: dict[str, JSON] = {}   # last seen, for HTTP header mirroring
        transport.session = self

    # Outgoing ---------------------------------------------------------------------------

    async def request(self, method: str, params: JSON | None = None, *, timeout: float,
                      cancellable: bool = True, progress: Callable[[JSON], Any] | None = None,
                      progress_token: bool = False) -> JSON:
        """Send a request and wait for its result; raise RemoteError for an error reply."""
        if self.closed:
            raise self.closed
        self._next_id += 1
        rid = self._next_id
        if progress_token:  # the request id doubles as the progress token
            params = dict(params or {})
            params["_meta"] = {**params.get("_meta", {}), "progressToken": rid}
        message: JSON = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            message["params"] = params
        loop = asyncio.get_running_loop()
        pending = _Pending(loop, method, timeout, progress)
        self._pending[rid] = pending
        timer = loop.call_at(pending.deadline, pending.expire)
        try:
            await self._send(message)
            reply = await pending.future
        except asyncio.CancelledError:
            # spec: initialize MUST NOT be cancelled (nor the era probe, which precedes it)
            if cancellable and not self.closed:
                await self._cancel_on_wire(rid, "cancelled by the client")
            raise
        except RequestTimeout:
            if cancellable and not self.closed:
                await self._cancel_on_wire(rid, f"timed out after {timeout:g} s")
            raise
        finally:
            timer.cancel()
            del self._pending[rid]
        if "error" in reply:
            raise RemoteError.from_wire(reply["error"])
        result = reply.get("result")
        if not isinstance(result, dict):
            raise ProtocolError(f"{method}: the result is not an object: {result!r:.200}")
        return result

    async def _cancel_on_wire(self, rid: int, reason: str) -> None:
        """Best effort and bounded; works from inside a cancellation handler."""
        try:
            await asyncio.wait_for(self.transport.cancel(rid, reason), CANCEL_TIMEOUT)
        except (asyncio.TimeoutError, asyncio.CancelledError, MCPError, OSError) as exc:
            log.debug("%s: cancelling request %s failed: %s", self.label, rid, exc)

    async def notify(self, method: str, params: JSON | None = None) -> None:
        message: JSON = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        await self._send(message)

    async def _send(self, message: JSON) -> None:
        if self.closed:
            raise self.closed
        if self.trace:
            self.trace(self.label, "->", message)
        await self.transport.send(message)

    # Incoming ---------------------------------------------------------------------------

    def dispatch(self, message: Any) -> None:
        """Route one parsed message; never raises (hostile input is logged and dropped)."""
        if self.trace:
            self.trace(self.label, "<-", message)
        if isinstance(message, list):  # a 2025-03-26 batch
            for item in message:
                self._dispatch_one(item)
        else:
            self._dispatch_one(message)

    def _dispatch_one(self, message: Any) -> None:
        if not isinstance(message, dict):
            log.warning("%s: dropped a message that is not an object: %.200r", self.label, message)
            return
        method = message.get("method")
        if isinstance(method, str):
            if "id" in message:
                self._spawn(self._answer(message))
            else:
                self._notification(method, message.get("params"))
            return
        if "result" not in message and "error" not in message:
            log.warning("%s: dropped a message that is not JSON-RPC: %.200r", self.label, message)
            return
        pending = self._pending.get(self._pending_id(message.get("id")))
        if pending is None:
            log.debug("%s: dropped a response to an unknown or finished request %.50r",
                      self.label, message.get("id"))
        elif not pending.future.done():
            pending.future.set_result(message)

    def _pending_id(self, rid: Any) -> int | None:
        """The pending id a response names: an int, or the decimal string of one (as the SDKs
        allow). ``true`` and ``1.0`` name nothing."""
        if type(rid) is int:
            return rid
        if isinstance(rid, str) and rid.isdigit() and rid.isascii() and len(rid) < 20:
            return int(rid)
        return None

    def fail(self, rid: int, exc: BaseException) -> None:
        """Fail one pending request (a transport-level failure of its exchange)."""
        pending = self._pending.get(rid)
        if pending and not pending.future.done():
            pending.future.set_exception(exc)

    def _notification(self, method: str, params: Any) -> None:
        params = params if isinstance(params, dict) else {}
        if method == "notifications/progress":
            pending = self._pending.get(self._pending_id(params.get("progressToken")))
            if pending is not None:
                # spec: progress MAY reset the timeout, but a hard maximum still holds
                now = pending.future.get_loop().time()
                pending.deadline = min(now + pending.timeout, pending.hard_deadline)
                if pending.on_progress:
                    _call_quietly(pending.on_progress, params)
        if self.on_notification:
            _call_quietly(self.on_notification, method, params)

    async def _answer(self, message: JSON) -> None:
        """Answer a request from the server (legacy era); the client decides what to say."""
        rid = message["id"]
        try:
            result = await self.on_request(message) if self.on_request else None
        except RemoteError as exc:
            error: JSON = {"code": exc.code, "message": exc.message}
            reply: JSON = {"jsonrpc": "2.0", "id": rid, "error": error}
        except Exception as exc:  # a callback failed: tell the server, keep the session
            log.warning("%s: answering %s failed: %s", self.label, message.get("method"), exc)
            reply = {"jsonrpc": "2.0", "id": rid, "error": {"code": -32603, "message": str(exc)}}
        else:
            if result is None:  # modern era: a client must not write responses (dropped)
                return
            reply = {"jsonrpc": "2.0", "id": rid, "result": result}
        with contextlib.suppress(MCPError, OSError):
            await self._send(reply)

    def _spawn(self, coro: Awaitable[Any]) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def connection_lost(self, exc: ConnectionClosed) -> None:
        """The connection ended: every waiter fails at once, with the cause."""
        if self.closed is None:
            self.closed = exc
        for pending in list(self._pending.values()):
            if not pending.future.done():
                pending.future.set_exception(self.closed)

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        self.connection_lost(ConnectionClosed(f"{self.label}: connection closed by the client"))


def _consume(future: asyncio.Future) -> None:
    """Retrieve a finished future's outcome so asyncio does not warn about it."""
    if not future.cancelled():
        future.exception()


def _call_quietly(callback: Callable[..., Any], *args: Any) -> None:
    """Run a user callback; its failure is logged, never breaks the reader."""
    try:
        result = callback(*args)
        if asyncio.iscoroutine(result):
            asyncio.ensure_future(result)
    except Exception:
        log.exception("callback %r failed", callback)


# -- Transports ----------------------------------------------------------------------------


class _Transport:
    """One connection to a server. Subclasses deliver what they read to ``session.dispatch``
    and report the end with ``session.connection_lost``."""

    session: _Session
    label = "server"

    async def open(self) -> None:
        raise NotImplementedError

    async def send(self, message: JSON) -> None:
        raise NotImplementedError

    async def cancel(self, rid: int, reason: str) -> None:
        """The per-transport cancellation hook (stdio and legacy HTTP: a notification)."""
        await self.session.notify("notifications/cancelled", {"requestId": rid, "reason": reason})

    def negotiated(self, version: str) -> None:
        """The legacy handshake settled on ``version`` (HTTP sends it as a header)."""

    def filter_tools(self, tools: list[JSON]) -> list[JSON]:
        """Transport-specific view of a tool list (modern HTTP drops invalid x-mcp-header)."""
        return tools

    async def close(self, fast: bool = False) -> None:
        raise NotImplementedError


def _server_env(extra: dict[str, str] | None, inherit: bool) -> dict[str, str]:
    """The environment a server process gets: an allowlist of ours plus its own entries."""
    if inherit:
        env = dict(os.environ)
    else:
        env = {k: v for k, v in os.environ.items()
               if k in ENV_ALLOWLIST or k.upper() in ENV_ALLOWLIST or k.startswith("LC_")}
    env.update(extra or {})
    return env


class _StdioTransport(_Transport):
    """A server process spoken to over its stdin/stdout, one JSON message per line."""

    def __init__(self, argv: list[str], *, env: dict[str, str] | None = None,
                 cwd: str | None = None, inherit_env: bool = False, label: str = "server") -> None:
        self.argv, self.env, self.cwd, self.inherit_env = argv, env, cwd, inherit_env
        self.label = label
        self.proc: asyncio.subprocess.Process | None = None
        self.stderr_tail: deque[str] = deque(maxlen=STDERR_TAIL_LINES)
        self.skipped_lines = 0
        self._tasks: list[asyncio.Task] = []
        self._drain_lock = asyncio.Lock()
        self._eof = asyncio.Event()
        self._closing = False

    async def open(self) -> None:
        posix = os.name == "posix"
        try:
            self.proc = await asyncio.create_subprocess_exec(  # never a shell
                *self.argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE, env=_server_env(self.env, self.inherit_env),
                cwd=self.cwd, start_new_session=posix)
        except OSError as exc:
            hint = "check the command and PATH" if isinstance(exc, FileNotFoundError) else "check the command"
            raise ConnectionClosed(f"{self.label}: cannot start {shlex.join(self.argv)}: "
                                   f"{exc.strerror or exc} ({hint})") from exc
        if posix:
            _guard_group(self.proc.pid)
        self._tasks = [asyncio.ensure_future(self._read_stdout()),
                       asyncio.ensure_future(self._read_stderr()),
                       asyncio.ensure_future(self._watch_exit())]

    async def send(self, message: JSON) -> None:
        proc = self.proc
        if proc is None or proc.stdin is None or proc.stdin.is_closing():
            raise ConnectionClosed(f"{self.label}: not connected")
        try:
            proc.stdin.write(_dumps(message) + b"\n")
            # drain only when the pipe is backed up; one drainer at a time (3.10 asserts so)
            if proc.stdin.transport.get_write_buffer_size() > 1 << 16:
                async with self._drain_lock:
                    await proc.stdin.drain()
        except (BrokenPipeError, ConnectionResetError) as exc:
            with contextlib.suppress(Exception):  # collect the error asyncio keeps for us
                await proc.stdin.wait_closed()
            raise self._closed_error("the server closed its input") from exc

    async def _read_stdout(self) -> None:
        """Split lines ourselves: readline() has a 64 KiB limit, byte reads are slow."""
        assert self.proc and self.proc.stdout
        stdout, parts, size = self.proc.stdout, [], 0
        try:
            while chunk := await stdout.read(READ_CHUNK):
                start = 0
                while (end := chunk.find(b"\n", start)) >= 0:
                    if parts:
                        parts.append(chunk[start:end])
                        line, parts, size = b"".join(parts), [], 0
                    else:
                        line = chunk[start:end]
                    start = end + 1
                    if len(line) > MAX_MESSAGE_SIZE:
                        return self._lose(f"a message exceeded {MAX_MESSAGE_SIZE >> 20} MiB")
                    self._line(line)
                if start < len(chunk):
                    parts.append(chunk[start:] if start else chunk)
                    size += len(chunk) - start
                    if size > MAX_MESSAGE_SIZE:
                        return self._lose(f"a message exceeded {MAX_MESSAGE_SIZE >> 20} MiB")
            if parts:
                self._line(b"".join(parts))
        except (ConnectionError, OSError) as exc:
            log.debug("%s: stdout read failed: %s", self.label, exc)
        finally:
            self._eof.set()
        await self._report_exit()

    def _line(self, line: bytes) -> None:
        line = line.strip()
        if not line:
            return
        try:
            message = _loads(line)
        except (ValueError, RecursionError) as exc:  # RecursionError is not a ValueError
            self.skipped_lines += 1
            log.info("%s: skipped a stdout line that is not JSON (%d so far): %.120r (%s)",
                     self.label, self.skipped_lines, line[:120], type(exc).__name__)
            return
        if not isinstance(message, (dict, list)) or (
                isinstance(message, dict) and message.get("jsonrpc") != "2.0"):
            self.skipped_lines += 1
            log.info("%s: skipped a stdout line that is not JSON-RPC (%d so far): %.120r",
                     self.label, self.skipped_lines, line[:120])
            return
        try:
            self.session.dispatch(message)
        except RecursionError:
            log.warning("%s: dropped a message nested too deeply", self.label)

    async def _read_stderr(self) -> None:
        """Drain stderr continuously (a full pipe would block the server) and keep its tail."""
        assert self.proc and self.proc.stderr
        stderr, rest = self.proc.stderr, b""
        server_log = logging.getLogger("mcpmini.server")
        with contextlib.suppress(ConnectionError, OSError):
            while chunk := await stderr.read(1 << 16):
                lines = (rest + chunk).split(b"\n")
                rest = lines.pop()[-8192:]
                for raw in lines:
                    text = raw.decode("utf-8", "replace").rstrip("\r")[:2000]
                    if text.strip():
                        self.stderr_tail.append(text)
                        server_log.info("%s: %s", self.label, text)
            if rest.strip():
                self.stderr_tail.append(rest.decode("utf-8", "replace")[:2000])

    async def _watch_exit(self) -> None:
        """Watch the process, not only the pipe: a grandchild may hold stdout open."""
        await self._exited(None)
        with contextlib.suppress(asyncio.TimeoutError):  # let the pipe deliver its last words
            await asyncio.wait_for(self._eof.wait(), EXIT_GRACE)
        await self._report_exit()

    async def _exited(self, timeout: float | None) -> bool:
        """Wait until the process itself has exited. (``Process.wait()`` also waits for the
        pipes on 3.11+, which a grandchild may keep open.)"""
        proc, loop = self.proc, asyncio.get_running_loop()
        assert proc is not None
        deadline = None if timeout is None else loop.time() + timeout
        delay = 0.002
        while proc.returncode is None:
            if deadline is not None and loop.time() >= deadline:
                return False
            await asyncio.sleep(delay)
            delay = min(delay * 2, 0.1)
        return True

    async def _report_exit(self) -> None:
        if self.session.closed:
            return
        if self.proc:
            await self._exited(0.2)  # its exit status makes a better message
        await asyncio.sleep(0)  # let the stderr reader take the last lines
        self.session.connection_lost(self._closed_error("the server closed its output"))

    def _lose(self, why: str) -> None:
        self.session.connection_lost(ConnectionClosed(f"{self.label}: {why}; connection closed"))
        self._signal(signal.SIGTERM)  # the client's close() reaps it

    def _closed_error(self, why: str) -> ConnectionClosed:
        code = self.proc.returncode if self.proc else None
        if code is None:
            what = why
        elif code < 0 and os.name == "posix":
            what = f"the server was killed by signal {-code}"
        else:
            what = f"the server exited with status {code}"
        tail = " | ".join(line[:300] for line in list(self.stderr_tail)[-5:])
        return ConnectionClosed(f"{self.label}: {what}" + (f"; its stderr ends: {tail}" if tail else
                                                         "; it wrote nothing on stderr"))

    async def close(self, fast: bool = False) -> None:
        """Close stdin, wait, SIGTERM, wait, SIGKILL — to the whole process group, since
        wrappers like npx or uvx leave children behind. ``fast`` skips the polite wait."""
        proc = self.proc
        if proc is None or self._closing:
            return
        self._closing = True
        if proc.stdin and not proc.stdin.is_closing():
            with contextlib.suppress(OSError):
                proc.stdin.close()
        # Even in a hurry, give it a moment to read a cancellation written just before.
        await self._exited(0.1 if fast else SHUTDOWN_GRACE)
        for sig, grace in ((signal.SIGTERM, SHUTDOWN_GRACE), (getattr(signal, "SIGKILL", None), 5.0)):
            if sig is None or not self._signal(sig):
                break
            if not await self._gone_within(grace):
                continue
            break
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        _LIVE_GROUPS.discard(proc.pid)
        transport = getattr(proc, "_transport", None)  # pipes a grandchild holds stay open otherwise
        if transport is not None:
            transport.close()

    def _signal(self, sig: int) -> bool:
        """Signal the process group; False when nothing is left to signal."""
        proc = self.proc
        if proc is None:
            return False
        if os.name == "posix":
            try:
                os.killpg(proc.pid, sig)
                return True
            except (ProcessLookupError, PermissionError):
                return False
        if proc.returncode is not None:
            return False
        with contextlib.suppress(ProcessLookupError):
            proc.terminate() if sig == signal.SIGTERM else proc.kill()
        return True

    async def _gone_within(self, grace: float) -> bool:
        proc = self.proc
        assert proc is not None
        deadline = time.monotonic() + grace
        if not await self._exited(grace):
            return False
        while os.name == "posix" and _group_alive(proc.pid):
            if time.monotonic() >= deadline:
                return False
            await asyncio.sleep(0.02)
        return True


_LIVE_GROUPS: set[int] = set()  # process groups of running stdio servers
_GUARDED: list[int] = []


def _guard_group(pgid: int) -> None:
    """Make sure a server's process group dies with us, even when we are killed by SIGTERM
    or SIGHUP without a handler of the user's: only signals still at their default action
    are taken over, and they end the process the default way after the cleanup."""
    _LIVE_GROUPS.add(pgid)
    if _GUARDED or os.name != "posix" or threading.current_thread() is not threading.main_thread():
        return
    atexit.register(_kill_live_groups)
    for sig in (signal.SIGTERM, signal.SIGHUP):
        with contextlib.suppress(ValueError, OSError):
            if signal.getsignal(sig) is signal.SIG_DFL:
                signal.signal(sig, _die_by_signal)
        _GUARDED.append(sig)


def _kill_live_groups() -> None:
    for pgid in list(_LIVE_GROUPS):
        with contextlib.suppress(OSError):
            os.killpg(pgid, signal.SIGTERM)


def _die_by_signal(signum: int, frame: Any) -> None:
    _kill_live_groups()
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
        return True
    except (ProcessLookupError, PermissionError):
        return False


def _http_transport(url: str, **options: Any) -> _Transport:
    """The Streamable HTTP transport (defined in the HTTP part below)."""
    factory = globals().get("_StreamableHTTPTransport")
    if factory is None:
        raise ConnectionClosed(f"HTTP is not available in this build of mcpmini: {url}")
    return factory(url, **options)


def _sse_transport(url: str, **options: Any) -> _Transport:
    """The legacy HTTP+SSE transport (2024-11-05)."""
    factory = globals().get("_LegacySSETransport")
    if factory is None:
        raise ConnectionClosed(f"HTTP+SSE is not available in this build of mcpmini: {url}")
    return factory(url, **options)


# -- Client --------------------------------------------------------------------------------


def _cache_dir() -> str:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "mcpmini")


class _EraCache:
    """The era of each server, remembered across runs so a silent legacy server does not
    cost the probe timeout every time (spec: clients MAY persist the era and re-probe)."""

    def __init__(self) -> None:
        self.path = os.path.join(_cache_dir(), "eras.json")

    def _load(self) -> dict[str, str]:
        try:
            with open(self.path, encoding="utf-8") as f:
                data = json.load(f)
            return data if isinstance(data, dict) else {}
        except (OSError, ValueError):
            return {}

    def get(self, key: str) -> str | None:
        value = self._load().get(key)
        return value if isinstance(value, str) else None

    def put(self, key: str, era: str | None) -> None:
        data = self._load()
        if data.get(key) == era:
            return
        if era is None:
            data.pop(key, None)
        else:
            data[key] = era
        try:
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            tmp = f"{self.path}.{os.getpid()}.tmp"
            with open(tmp, "w", encoding="utf-8") as f:
                json.dump(data, f, indent=0, sort_keys=True)
            os.replace(tmp, self.path)
        except OSError as exc:
            log.debug("cannot write the era cache %s: %s", self.path, exc)


class _ListCache:
    """Cached list results: modern for their ttlMs, legacy until list_changed."""

    def __init__(self) -> None:
        self.entries: dict[str, tuple[float, list[JSON]]] = {}

    def get(self, method: str) -> list[JSON] | None:
        entry = self.entries.get(method)
        if entry and time.monotonic() < entry[0]:
            return entry[1]
        return None

    def put(self, method: str, items: list[JSON], ttl: float) -> None:
        if ttl > 0:
            self.entries[method] = (time.monotonic() + ttl, items)

    def drop(self, method: str | None = None) -> None:
        if method is None:
            self.entries.clear()
        else:
            self.entries.pop(method, None)


_LIST_CHANGED = {
    "notifications/tools/list_changed": "tools/list",
    "notifications/prompts/list_changed": "prompts/list",
    "notifications/resources/list_changed": "resources/list",
}


class Client:
    """A connection to one MCP server, as an async context manager.

    ``server`` is a command as a list of strings (stdio), an ``http(s)://`` URL (Streamable
    HTTP, with the HTTP+SSE fallback), or a :class:`ServerConfig`. ``protocol`` pins the era:
    ``"auto"`` (default), ``"2026-07-28"`` or ``"legacy"``. ``timeout`` (seconds) bounds every
    request and the connection itself. Callbacks: ``on_progress(params)``, ``on_log(params)``,
    ``on_elicit(params) -> ElicitResult`` (sync or async); ``accept_defaults`` answers form
    elicitations from the schema's defaults. ``reconnect`` reconnects once and retries once
    when the connection is lost during a call (never after a timeout or a cancellation).
    """

    def __init__(self, server: list[str] | str | ServerConfig, *, env: dict[str, str] | None = None,
                 cwd: str | None = None, headers: dict[str, str] | None = None,
                 timeout: float = DEFAULT_TIMEOUT, protocol: str = "auto",
                 inherit_env: bool = False,
                 on_progress: Callable[[JSON], Any] | None = None,
                 on_log: Callable[[JSON], Any] | None = None,
                 on_elicit: Callable[[JSON], Any] | None = None,
                 accept_defaults: bool = False, reconnect: bool = False,
                 name: str | None = None, era_cache: bool = True,
                 trace: Callable[[str, str, Any], None] | None = None) -> None:
        if isinstance(server, ServerConfig):
            config = server.expanded()
            name = name or config.name
            timeout = config.timeout if config.timeout is not None and timeout == DEFAULT_TIMEOUT else timeout
            protocol = config.protocol or protocol
            inherit_env = inherit_env or config.inherit_env
            env = {**config.env, **(env or {})}
            headers = {**config.headers, **(headers or {})}
            cwd = cwd or config.cwd
            self._kind = "sse" if config.type == "sse" else ("http" if config.url else "stdio")
            self._target: list[str] | str = config.url if config.url else [config.command or "", *config.args]
        elif isinstance(server, str):
            if not re.match(r"(?i)https?://", server):
                raise ValueError(f"server {server!r} is neither a URL nor a command list; "
                                 f"for a command line use shlex.split({server!r})")
            self._kind, self._target = "http", server
        elif isinstance(server, (list, tuple)) and server and all(isinstance(a, str) for a in server):
            self._kind, self._target = "stdio", list(server)
        else:
            raise ValueError("server must be a command (list of str), an http(s) URL or a ServerConfig")
        if protocol not in ("auto", MODERN_VERSION, "legacy"):
            raise ValueError(f"protocol must be 'auto', {MODERN_VERSION!r} or 'legacy', not {protocol!r}")
        self.name = name or (self._target if isinstance(self._target, str) else
                             " ".join(os.path.basename(a) for a in self._target[:2]))
        self.timeout, self.protocol = float(timeout), protocol
        self._env, self._cwd, self._headers, self._inherit_env = env, cwd, headers or {}, inherit_env
        self.on_progress, self.on_log, self.on_elicit = on_progress, on_log, on_elicit
        self.accept_defaults, self.reconnect = accept_defaults, reconnect
        self._era_cache = _EraCache() if era_cache else None
        self._trace = trace
        self._session: _Session | None = None
        self._lists = _ListCache()
        self._reconnecting: asyncio.Future | None = None
        self._lost_session: _Session | None = None
        self.era: str | None = None
        self.era_reason = ""
        self.protocol_version: str | None = None
        self.server_info: JSON = {}
        self.capabilities: JSON = {}
        self.instructions: str | None = None

    def __repr__(self) -> str:
        return f"<mcpmini.Client {self.name!r} era={self.era}>"

    # Connecting ---------------------------------------------------------------------------

    async def __aenter__(self) -> Client:
        await self.connect()
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        fast = exc_info[0] is not None and issubclass(exc_info[0], (asyncio.CancelledError, KeyboardInterrupt))
        await self.close(fast=fast)

    @property
    def _cache_key(self) -> str:
        if isinstance(self._target, str):
            return f"url {self._target}"
        return "cmd " + json.dumps([self._target, os.path.abspath(self._cwd or os.getcwd())])

    def _capabilities(self) -> JSON:
        """What we really support: elicitation only when someone can answer it."""
        if self.on_elicit:
            return {"elicitation": {"form": {}, "url": {}}}
        return {"elicitation": {"form": {}}} if self.accept_defaults else {}

    def _new_transport(self, kind: str) -> _Transport:
        if kind == "stdio":
            assert isinstance(self._target, list)
            return _StdioTransport(self._target, env=self._env, cwd=self._cwd,
                                   inherit_env=self._inherit_env, label=self.name)
        assert isinstance(self._target, str)
        factory = _sse_transport if kind == "sse" else _http_transport
        return factory(self._target, headers=self._headers, label=self.name, timeout=self.timeout)

    async def _open(self, kind: str) -> None:
        transport = self._new_transport(kind)
        self._session = _Session(transport, label=self.name, on_notification=self._on_notification,
                                 on_request=self._on_request, trace=self._trace)
        self._kind = kind
        await transport.open()

    async def connect(self) -> None:
        """Start the server (or reach the URL) and settle the era; bounded by ``timeout``."""
        if self._session is not None:
            await self.close(fast=True)
        self._lists.drop()
        try:
            await asyncio.wait_for(self._connect(), self.timeout)
        except asyncio.TimeoutError:
            await self.close(fast=True)
            raise RequestTimeout("connecting", self.timeout,
                                 f" (starting {self.name} and settling the protocol era)") from None
        except BaseException:
            await self.close(fast=True)
            raise

    async def _connect(self) -> None:
        cached = self._era_cache.get(self._cache_key) if self._era_cache and self.protocol == "auto" else None
        kind = "sse" if cached == "sse" and self._kind == "http" else self._kind
        await self._open(kind)
        if self._kind == "sse" or self.protocol == "legacy":
            await self._initialize(reason="legacy era pinned" if self.protocol == "legacy" else "HTTP+SSE transport")
        elif self.protocol == MODERN_VERSION:
            await self._discover(pinned=True)
        elif cached == "legacy":
            try:
                await self._initialize(reason="legacy era remembered from an earlier run")
            except (RemoteError, ProtocolError, ConnectionClosed) as exc:
                log.info("%s: the remembered legacy era failed (%s); probing again", self.name, exc)
                self._era_cache.put(self._cache_key, None)
                await self._restart(self._kind)
                await self._probe()
        elif cached == MODERN_VERSION:
            try:
                await self._discover(pinned=True, reason="modern era remembered from an earlier run")
            except (RemoteError, ProtocolError) as exc:
                log.info("%s: the remembered modern era failed (%s); probing again", self.name, exc)
                self._era_cache.put(self._cache_key, None)
                await self._restart(self._kind)
                await self._probe()
        else:
            await self._probe()
        if self._era_cache and self.protocol == "auto":
            self._era_cache.put(self._cache_key, "sse" if self._kind == "sse" else self.era)

    async def _restart(self, kind: str) -> None:
        if self._session:
            await self._session.close()
            await self._session.transport.close(fast=True)
        await self._open(kind)

    def _modern_meta(self, version: str | None = None) -> JSON:
        return {META_VERSION: version or self.protocol_version or MODERN_VERSION,
                META_CAPABILITIES: self._capabilities(), META_CLIENT_INFO: dict(CLIENT_INFO)}

    async def _probe(self) -> None:
        """Auto era: server/discover first; its answer, an error or silence decides."""
        assert self._session
        session = self._session
        probe = asyncio.ensure_future(session.request(
            "server/discover", {"_meta": self._modern_meta(MODERN_VERSION)},
            timeout=self.timeout, cancellable=False))
        init: asyncio.Future | None = None
        try:
            done, _ = await asyncio.wait((probe,), timeout=PROBE_TIMEOUT if self._kind == "stdio" else None)
            if done:
                verdict = self._probe_verdict(probe)
                if verdict == "modern":
                    return await self._adopt_discover(probe.result(), "server/discover answered")
                if isinstance(verdict, list):   # -32022 with data.supported
                    return await self._modern_fallback(verdict, "server/discover answered -32022")
                return await self._legacy_after_probe(verdict)
            # No answer yet: fall back to initialize on the same process, but keep listening:
            # a late DiscoverResult still means modern.
            reason = f"server/discover got no answer within {PROBE_TIMEOUT:g} s"
            init = asyncio.ensure_future(session.request(
                "initialize", self._initialize_params(LEGACY_VERSIONS[0]), timeout=self.timeout,
                cancellable=False))
            await asyncio.wait((probe, init), return_when=asyncio.FIRST_COMPLETED)
            if probe.done() and self._probe_verdict(probe) == "modern":
                return await self._adopt_discover(probe.result(), "server/discover answered late")
            try:
                result = await init
            except RemoteError as exc:
                if exc.code == UNSUPPORTED_VERSION:  # the first message fixed the era: modern
                    return await self._modern_fallback(_supported(exc), "initialize answered -32022")
                return await self._legacy_restart(f"{reason}; initialize answered {exc.code}")
            except ConnectionClosed as exc:
                return await self._legacy_restart(f"{reason}; the server then closed ({exc})")
            await self._finish_initialize(result, f"{reason}: legacy")
        finally:
            for task in (probe, init):  # never cancelled on the wire: nothing precedes initialize
                if task is not None:
                    task.cancel()
                    task.add_done_callback(_consume)

    def _probe_verdict(self, probe: asyncio.Future) -> str | list[str]:
        """Modern evidence is only supportedVersions or -32020/-32021/-32022; the rest is legacy."""
        if probe.cancelled():
            return "server/discover was cancelled"
        exc = probe.exception()
        if exc is None:
            if isinstance(probe.result().get("supportedVersions"), list):
                return "modern"
            return "server/discover answered without supportedVersions"
        if isinstance(exc, RemoteError):
            if exc.code == UNSUPPORTED_VERSION:
                return _supported(exc)
            if exc.code in MODERN_ERRORS:
                return "modern-error"
            return f"server/discover answered {exc.code}"
        if isinstance(exc, ConnectionClosed) and self._kind == "stdio":
            return "closed"
        if isinstance(exc, _HTTPStatusError):
            return f"server/discover got HTTP {exc.status}"
        raise exc

    async def _legacy_after_probe(self, verdict: str) -> None:
        if verdict == "modern-error":
            raise ProtocolError(f"{self.name}: server/discover was refused with a modern error "
                                "the client cannot fix")
        if verdict == "closed":
            return await self._legacy_restart("the server closed on server/discover")
        try:
            await self._initialize(reason=f"{verdict}: legacy")
        except ConnectionClosed as exc:
            await self._legacy_restart(f"{verdict}; the server then closed ({exc})")
        except _HTTPStatusError as exc:
            if exc.status in (400, 404, 405) and self._kind == "http":
                return await self._sse_fallback(f"{verdict}; initialize got HTTP {exc.status}")
            raise

    async def _legacy_restart(self, reason: str) -> None:
        """The probe upset the server (it died or refused initialize): start it again and
        initialize directly."""
        log.info("%s: %s; restarting it for initialize", self.name, reason)
        await self._restart(self._kind)
        await self._initialize(reason=f"{reason}: restarted, legacy")

    async def _sse_fallback(self, reason: str) -> None:
        log.info("%s: %s; trying HTTP+SSE", self.name, reason)
        await self._restart("sse")
        await self._initialize(reason=f"{reason}: HTTP+SSE (2024-11-05)")

    async def _modern_fallback(self, supported: list[str], reason: str) -> None:
        """-32022: retry discovery with a version the server listed, or go legacy if all of
        its versions are legacy ones."""
        if MODERN_VERSION in supported or not supported:
            return await self._discover(pinned=True, reason=reason)
        legacy = [v for v in LEGACY_VERSIONS if v in supported]
        if legacy:
            return await self._initialize(version=legacy[0], reason=f"{reason} with only legacy versions")
        raise ProtocolError(f"{self.name}: no protocol version in common: the server supports "
                            f"{', '.join(supported)}; mcpmini speaks {MODERN_VERSION} and "
                            f"{', '.join(LEGACY_VERSIONS)}")

    async def _discover(self, *, pinned: bool, reason: str = "modern era pinned") -> None:
        """server/discover in the modern era, retrying a -32022 with a listed version."""
        assert self._session
        version = MODERN_VERSION
        for attempt in range(MAX_VERSION_RETRIES + 1):
            try:
                result = await self._session.request(
                    "server/discover", {"_meta": self._modern_meta(version)}, timeout=self.timeout)
            except RemoteError as exc:
                if exc.code == UNSUPPORTED_VERSION and attempt < MAX_VERSION_RETRIES:
                    supported = _supported(exc)
                    if supported and MODERN_VERSION not in supported:
                        return await self._modern_fallback(supported, reason + "; -32022")
                    continue
                if exc.code in (METHOD_NOT_FOUND, INVALID_PARAMS, INVALID_REQUEST) and pinned:
                    # Pinned modern: a server without server/discover can still be used.
                    log.info("%s: server/discover answered %s; continuing in the pinned era",
                             self.name, exc.code)
                    return self._adopt({"supportedVersions": [version]}, f"{reason}; no server/discover")
                raise
            return await self._adopt_discover(result, reason)
        raise ProtocolError(f"{self.name}: server/discover kept answering -32022")

    async def _adopt_discover(self, result: JSON, reason: str) -> None:
        supported = [v for v in result.get("supportedVersions") or [] if isinstance(v, str)]
        if MODERN_VERSION in supported:
            return self._adopt(result, f"{reason} with {MODERN_VERSION}: modern")
        return await self._modern_fallback(supported, f"{reason} without {MODERN_VERSION}")

    def _adopt(self, result: JSON, reason: str) -> None:
        self.era, self.protocol_version, self.era_reason = MODERN_VERSION, MODERN_VERSION, reason
        meta = result.get("_meta") if isinstance(result.get("_meta"), dict) else {}
        info = meta.get(META_SERVER_INFO) or result.get("serverInfo")
        self.server_info = info if isinstance(info, dict) else {}
        caps = result.get("capabilities")
        self.capabilities = caps if isinstance(caps, dict) else {}
        self.instructions = result.get("instructions") if isinstance(result.get("instructions"), str) else None
        log.info("%s: %s", self.name, reason)

    def _initialize_params(self, version: str) -> JSON:
        return {"protocolVersion": version, "capabilities": self._capabilities(),
                "clientInfo": dict(CLIENT_INFO)}

    async def _initialize(self, *, version: str = LEGACY_VERSIONS[0], reason: str) -> None:
        """The legacy handshake: initialize (never cancelled), check the version, initialized."""
        assert self._session
        for _ in range(MAX_VERSION_RETRIES + 1):
            try:
                result = await self._session.request(
                    "initialize", self._initialize_params(version), timeout=self.timeout,
                    cancellable=False)
                break
            except RemoteError as exc:
                supported = [v for v in LEGACY_VERSIONS if v in _supported(exc) and v != version]
                if exc.code == INVALID_PARAMS and supported:  # the 2025-11-25 example's refusal
                    version = supported[0]
                    continue
                if exc.code == UNSUPPORTED_VERSION and _supported(exc):
                    return await self._modern_fallback(_supported(exc), reason + "; initialize answered -32022")
                raise
        else:
            raise ProtocolError(f"{self.name}: initialize kept refusing protocol versions")
        await self._finish_initialize(result, reason)

    async def _finish_initialize(self, result: JSON, reason: str) -> None:
        assert self._session
        version = result.get("protocolVersion")
        if version not in LEGACY_VERSIONS:
            raise ProtocolError(
                f"{self.name}: the server answered initialize with protocol version {version!r}, "
                f"which mcpmini does not speak (it speaks {MODERN_VERSION} and "
                f"{', '.join(LEGACY_VERSIONS)})")
        self.era, self.protocol_version = "legacy", version
        self.era_reason = f"{reason}, initialize {version}"
        info, caps = result.get("serverInfo"), result.get("capabilities")
        self.server_info = info if isinstance(info, dict) else {}
        self.capabilities = caps if isinstance(caps, dict) else {}
        self.instructions = result.get("instructions") if isinstance(result.get("instructions"), str) else None
        self._session.transport.negotiated(version)
        await self._session.notify("notifications/initialized")
        log.info("%s: %s", self.name, self.era_reason)

    async def close(self, fast: bool = False) -> None:
        """Shut the connection down, bounded; safe to call twice."""
        session, self._session = self._session, None
        if session is not None:
            await session.close()
            await session.transport.close(fast=fast)

    # Incoming from the server ---------------------------------------------------------------

    def _on_notification(self, method: str, params: JSON) -> None:
        if method in _LIST_CHANGED:
            self._lists.drop(_LIST_CHANGED[method])
        elif method == "notifications/resources/list_changed":
            self._lists.drop("resources/templates/list")
        if method == "notifications/message":
            if self.on_log:
                _call_quietly(self.on_log, params)
            else:
                log.info("%s: [%s] %s", self.name, params.get("level"), params.get("data"))

    async def _on_request(self, message: JSON) -> JSON | None:
        """Requests from the server: legacy only (2026-07-28 servers must not send any)."""
        method = message.get("method")
        if self.era == MODERN_VERSION:
            log.warning("%s: dropped a %s request: 2026-07-28 servers must not send requests",
                        self.name, method)
            return None
        if method == "ping":
            return {}
        if method == "elicitation/create" and self._capabilities():
            params = message.get("params")
            return await self._elicit(params if isinstance(params, dict) else {})
        raise RemoteError(METHOD_NOT_FOUND, f"Method not found: {method}")

    async def _elicit(self, params: JSON) -> JSON:
        """Answer an elicitation: schema defaults, then the callback, else decline."""
        mode = params.get("mode") or "form"
        if mode == "form" and self.accept_defaults:
            schema = params.get("requestedSchema") or {}
            props = schema.get("properties") if isinstance(schema, dict) else None
            content = {k: v["default"] for k, v in (props or {}).items()
                       if isinstance(v, dict) and "default" in v}
            return {"action": "accept", "content": content}
        if self.on_elicit:
            answer = self.on_elicit(params)
            if asyncio.iscoroutine(answer) or isinstance(answer, asyncio.Future):
                answer = await answer
            if not isinstance(answer, dict) or answer.get("action") not in ("accept", "decline", "cancel"):
                raise ProtocolError(f"on_elicit returned {answer!r}; expected an ElicitResult")
            return answer
        return {"action": "decline"}

    # Requests -----------------------------------------------------------------------------

    async def request(self, method: str, params: JSON | None = None, *,
                      timeout: float | None = None) -> JSON:
        """Send any request and return its raw result (``_meta`` added in the modern era)."""
        return await self._request(method, params, timeout=timeout)

    async def _request(self, method: str, params: JSON | None, *, timeout: float | None = None,
                       progress: bool = False) -> JSON:
        if self._session is None:
            raise ConnectionClosed(f"{self.name}: not connected (use 'async with Client(...)')")
        limit = self.timeout if timeout is None else float(timeout)
        call_params = params
        for attempt in range(MAX_VERSION_RETRIES + 1):
            if self.era == MODERN_VERSION:
                call_params = dict(params or {})
                call_params["_meta"] = {**call_params.get("_meta", {}), **self._modern_meta()}
            try:
                result = await self._session.request(
                    method, call_params, timeout=limit, progress_token=progress,
                    progress=self.on_progress)
            except _SessionExpired:
                if attempt:
                    raise
                log.info("%s: the HTTP session expired; initializing a new one", self.name)
                await self._initialize(version=self.protocol_version or LEGACY_VERSIONS[0],
                                       reason="session expired")
                continue
            except RemoteError as exc:
                if self.era != MODERN_VERSION or attempt == MAX_VERSION_RETRIES:
                    raise
                if exc.code == UNSUPPORTED_VERSION and _supported(exc):
                    supported = _supported(exc)
                    if MODERN_VERSION not in supported:
                        raise ProtocolError(f"{self.name}: the server no longer supports "
                                            f"{MODERN_VERSION} (it lists {', '.join(supported)})") from exc
                    continue
                if exc.code == HEADER_MISMATCH and method == "tools/call":
                    await self.list_tools(refresh=True)  # the mirrored headers may be stale
                    continue
                raise
            break
        if self.era == MODERN_VERSION:
            kind = result.get("resultType", "complete")
            if kind not in ("complete", "input_required"):
                raise ProtocolError(f"{method}: unknown resultType {kind!r}")
        return result

    async def _call(self, method: str, params: JSON, timeout: float | None) -> JSON:
        """tools/call, prompts/get, resources/read: progress, MRTR rounds, reconnect-once."""
        session = self._session
        try:
            return await self._mrtr(method, params, timeout)
        except ConnectionClosed as exc:
            if isinstance(exc, _SessionExpired) or session is None:
                raise
            await self._reconnect(session, exc)
        return await self._mrtr(method, params, timeout)

    async def _reconnect(self, lost: _Session, exc: ConnectionClosed) -> None:
        """Reconnect once per client (spec: a client SHOULD restart a stdio server that
        exits); every caller that failed on the lost connection shares that one reconnect."""
        if self._reconnecting is None:
            if not self.reconnect:
                raise exc
            log.warning("%s: %s; reconnecting once", self.name, exc)
            self._lost_session = lost
            self._reconnecting = asyncio.ensure_future(self.connect())
        elif lost is not self._lost_session:  # failed again after the reconnect
            raise exc
        await asyncio.shield(self._reconnecting)

    async def _mrtr(self, method: str, params: JSON, timeout: float | None) -> JSON:
        """Multi round-trip requests (2026-07-28): answer ``input_required`` by retrying the
        same request with a new id, ``inputResponses`` and ``requestState`` echoed verbatim."""
        attempt_params = params
        for _ in range(MAX_INPUT_ROUNDS + 1):
            result = await self._request(method, attempt_params, timeout=timeout, progress=True)
            if self.era != MODERN_VERSION or result.get("resultType", "complete") != "input_required":
                return result
            attempt_params = dict(params)
            requests = result.get("inputRequests")
            if isinstance(requests, dict) and requests:
                attempt_params["inputResponses"] = {
                    key: await self._input_response(req) for key, req in requests.items()}
            if "requestState" in result:
                attempt_params["requestState"] = result["requestState"]
        raise ProtocolError(f"{method}: the server kept asking for input after "
                            f"{MAX_INPUT_ROUNDS} rounds")

    async def _input_response(self, request: Any) -> JSON:
        method = request.get("method") if isinstance(request, dict) else None
        if method == "elicitation/create":
            params = request.get("params")
            return await self._elicit(params if isinstance(params, dict) else {})
        raise ProtocolError(f"the server asked for {method!r} input, which mcpmini does not "
                            "support (only elicitation)")

    async def _list(self, method: str, key: str, refresh: bool) -> list[JSON]:
        if not refresh and (cached := self._lists.get(method)) is not None:
            return cached
        items: list[JSON] = []
        cursor: str | None = None
        ttl = float("inf") if self.era == "legacy" else None
        for page in range(MAX_PAGES):
            result = await self._request(method, {"cursor": cursor} if cursor is not None else None)
            page_items = result.get(key)
            if isinstance(page_items, list):
                items.extend(page_items)
            if self.era == MODERN_VERSION:
                ms = result.get("ttlMs")
                page_ttl = ms / 1000 if isinstance(ms, (int, float)) and ms > 0 else 0.0
                ttl = page_ttl if ttl is None else min(ttl, page_ttl)
            cursor = result.get("nextCursor")
            if not isinstance(cursor, str):  # absent or null ends the list; "" is a cursor
                break
        else:
            log.warning("%s: %s still had more pages after %d; keeping the %d items fetched",
                        self.name, method, MAX_PAGES, len(items))
        self._lists.put(method, items, ttl or 0.0)
        return items

    async def list_tools(self, *, refresh: bool = False) -> list[JSON]:
        """Every tool of every page, as the server sent them (cached; see ``refresh``)."""
        tools = await self._list("tools/list", "tools", refresh)
        if self._session:
            tools = self._session.transport.filter_tools(tools)
            self._session.tool_schemas = {t["name"]: t.get("inputSchema") or {}
                                          for t in tools if isinstance(t, dict) and isinstance(t.get("name"), str)}
        return tools

    async def list_resources(self, *, refresh: bool = False) -> list[JSON]:
        """Every resource of every page."""
        return await self._list("resources/list", "resources", refresh)

    async def list_resource_templates(self, *, refresh: bool = False) -> list[JSON]:
        """Every resource template of every page."""
        return await self._list("resources/templates/list", "resourceTemplates", refresh)

    async def list_prompts(self, *, refresh: bool = False) -> list[JSON]:
        """Every prompt of every page."""
        return await self._list("prompts/list", "prompts", refresh)

    async def call_tool(self, name: str, arguments: JSON | None = None, *,
                        timeout: float | None = None) -> JSON:
        """Call a tool; the raw result. ``isError: true`` is data, not an exception."""
        return await self._call("tools/call", {"name": name, "arguments": arguments or {}}, timeout)

    async def read_resource(self, uri: str, *, timeout: float | None = None) -> JSON:
        """Read a resource; the raw result with its ``contents``."""
        return await self._call("resources/read", {"uri": uri}, timeout)

    async def get_prompt(self, name: str, arguments: dict[str, str] | None = None, *,
                         timeout: float | None = None) -> JSON:
        """Get a prompt; the raw result with its ``messages``."""
        params: JSON = {"name": name}
        if arguments:
            params["arguments"] = arguments
        return await self._call("prompts/get", params, timeout)

    async def notify(self, method: str, params: JSON | None = None) -> None:
        """Send a notification."""
        if self._session is None:
            raise ConnectionClosed(f"{self.name}: not connected")
        await self._session.notify(method, params)


def _supported(exc: RemoteError) -> list[str]:
    data = exc.data if isinstance(exc.data, dict) else {}
    versions = data.get("supported")
    return [v for v in versions if isinstance(v, str)] if isinstance(versions, list) else []


def result_text(result: JSON) -> str:
    """A tool result as text for people: text blocks joined, other blocks summarised,
    ``structuredContent`` as JSON when there is no text."""
    parts: list[str] = []
    content = result.get("content")
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text":
            parts.append(str(block.get("text", "")))
        elif kind in ("image", "audio"):
            data = block.get("data") or ""
            size = len(data) * 3 // 4 - data[-2:].count("=") if isinstance(data, str) else 0
            parts.append(f"[{kind}: {block.get('mimeType', 'unknown')}, {size} bytes]")
        elif kind == "resource_link":
            parts.append(f"[resource: {block.get('uri', '')}]")
        elif kind == "resource":
            res = block.get("resource") if isinstance(block.get("resource"), dict) else {}
            parts.append(f"[resource: {res.get('uri', '')}]")
            if isinstance(res.get("text"), str):
                parts.append(res["text"])
        else:
            parts.append(f"[unsupported content: {kind}]")
    has_text = any(isinstance(b, dict) and b.get("type") == "text" for b in content or [])
    if "structuredContent" in result and not has_text:
        parts.append(json.dumps(result["structuredContent"], ensure_ascii=False, indent=2))
    return "\n".join(parts)


# -- Config --------------------------------------------------------------------------------

_SECRETS: set[str] = set()   # every known secret value, replaced wherever text reaches the user


def _remember_secret(value: Any) -> None:
    if isinstance(value, str) and len(value.strip()) >= 4:
        _SECRETS.add(value)
        scheme, _, token = value.partition(" ")  # "Bearer abc…": the token alone too
        if token and len(token) >= 4 and scheme.isalpha():
            _SECRETS.add(token)


def _redact(text: str) -> str:
    """Replace every known secret value with ``***``."""
    for secret in sorted(_SECRETS, key=len, reverse=True):
        if secret in text:
            text = text.replace(secret, "***")
    return text


@dataclasses.dataclass
class ServerConfig:
    """One configured server: ``command``/``args`` for stdio or ``url`` for HTTP, as written
    in its file (``${VAR}`` unexpanded until :meth:`expanded`)."""

    name: str
    command: str | None = None
    args: list[str] = dataclasses.field(default_factory=list)
    env: dict[str, str] = dataclasses.field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = dataclasses.field(default_factory=dict)
    type: str | None = None
    timeout: float | None = None
    protocol: str | None = None
    inherit_env: bool = False
    source: str | None = None
    trusted: bool = True

    @property
    def transport(self) -> str:
        return "sse" if self.type == "sse" else ("http" if self.url else "stdio")

    def expanded(self) -> ServerConfig:
        """A copy with ``${VAR}``, ``${VAR:-default}``, ``${env:VAR}``, ``${workspaceFolder}``
        and ``$$`` expanded from the environment; an unset variable is a ConfigError."""
        folder = os.path.dirname(os.path.abspath(self.source)) if self.source else os.getcwd()

        def expand(value: str, secret: bool = False) -> str:
            out = _expand(value, self, folder)
            if secret or out != value:
                _remember_secret(out) if secret else _remember_substitutions(value, self, folder)
            return out

        return dataclasses.replace(
            self, command=expand(self.command) if self.command else self.command,
            args=[expand(a) for a in self.args],
            env={k: expand(v, secret=True) for k, v in self.env.items()},
            url=expand(self.url) if self.url else self.url,
            headers={k: expand(v, secret=True) for k, v in self.headers.items()},
            cwd=expand(self.cwd) if self.cwd else self.cwd)

    def variables(self) -> list[str]:
        """The names of the environment variables this entry would receive."""
        names: list[str] = []
        for value in [self.command or "", *self.args, *self.env.values(), self.url or "",
                      *self.headers.values(), self.cwd or ""]:
            for m in _VAR.finditer(value):
                name = m.group("name") or ""
                if name.startswith("env:"):
                    name = name[4:]
                if name and name != "workspaceFolder" and not name.startswith("input:") and name not in names:
                    names.append(name)
        return names


_VAR = re.compile(r"\$\$|\$\{(?P<name>[^}:]+(?::[^}-][^}]*)?)(?::-(?P<default>[^}]*))?\}")


def _expand(value: str, server: ServerConfig, folder: str) -> str:
    def sub(m: re.Match) -> str:
        if m.group(0) == "$$":
            return "$"
        name, default = m.group("name"), m.group("default")
        if name == "workspaceFolder":
            return folder
        if name.startswith("input:"):
            raise ConfigError(f"{server.source or 'config'}: server {server.name!r} uses ${{{name}}}, "
                              "which needs VS Code's input prompts; put the value in an environment "
                              "variable and write ${VAR} instead")
        if name.startswith("env:"):
            name = name[4:]
        if name in os.environ:
            return os.environ[name]
        if default is not None:
            return default
        raise ConfigError(f"{server.source or 'config'}: server {server.name!r} needs the environment "
                          f"variable {name}, which is not set (set it, or write ${{{name}:-default}})")
    return _VAR.sub(sub, value)


def _remember_substitutions(value: str, server: ServerConfig, folder: str) -> None:
    """Every value substituted from the environment counts as a secret."""
    for m in _VAR.finditer(value):
        if m.group(0) != "$$" and m.group("name") != "workspaceFolder":
            _remember_secret(_expand(m.group(0), server, folder))


def _config_home() -> str:
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(base, "mcpmini")


def _trust_path() -> str:
    return os.path.join(_config_home(), "trusted.json")


def _file_identity(path: str) -> tuple[str, str, str]:
    """(path as found, real path, SHA-256 of the exact bytes)."""
    with open(path, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    return os.path.abspath(path), os.path.realpath(path), digest


def _is_trusted(path: str) -> bool:
    """A project file is trusted when its path, real path and bytes were approved together:
    an edited file, a copy elsewhere or a symlink to an approved file are not."""
    try:
        found, real, digest = _file_identity(path)
        with open(_trust_path(), encoding="utf-8") as f:
            records = json.load(f)
    except (OSError, ValueError):
        return False
    return any(isinstance(r, dict) and r.get("path") == found and r.get("realpath") == real
               and r.get("sha256") == digest for r in records if isinstance(records, list))


def _approve(path: str) -> None:
    """Record a project file as approved (its path, real path and SHA-256)."""
    found, real, digest = _file_identity(path)
    try:
        with open(_trust_path(), encoding="utf-8") as f:
            records = [r for r in json.load(f) if isinstance(r, dict) and r.get("path") != found]
    except (OSError, ValueError, TypeError):
        records = []
    records.append({"path": found, "realpath": real, "sha256": digest,
                    "approved": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())})
    os.makedirs(_config_home(), exist_ok=True)
    tmp = _trust_path() + f".{os.getpid()}.tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(records, f, indent=2)
    os.replace(tmp, _trust_path())


def _project_files(cwd: str) -> list[str]:
    return [p for p in (os.path.join(cwd, ".mcp.json"), os.path.join(cwd, "mcp.json")) if os.path.isfile(p)]


def _parse_config(path: str) -> dict[str, ServerConfig]:
    """Read one file (``mcpServers`` or VS Code's ``servers``); ConfigError on any problem."""
    try:
        with open(path, encoding="utf-8-sig") as f:
            data = json.load(f)
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such config file") from None
    except (OSError, ValueError, RecursionError) as exc:
        raise ConfigError(f"{path}: not a readable JSON file: {exc}") from None
    servers = data.get("mcpServers", data.get("servers")) if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        raise ConfigError(f"{path}: expected an object with \"mcpServers\" (or VS Code's \"servers\")")
    return {name: _parse_entry(name, entry, path) for name, entry in servers.items()}


def _parse_entry(name: str, entry: Any, path: str) -> ServerConfig:
    where = f"{path}: server {name!r}"
    if not isinstance(entry, dict):
        raise ConfigError(f"{where}: expected an object")

    def get(key: str, kind: type, default: Any = None) -> Any:
        value = entry.get(key, default)
        if value is not default and not isinstance(value, kind):
            raise ConfigError(f"{where}: \"{key}\" must be {kind.__name__}, not {type(value).__name__}")
        return value

    kind = get("type", str)
    if kind not in (None, "stdio", "http", "streamable-http", "streamableHttp", "sse"):
        raise ConfigError(f"{where}: unknown \"type\" {kind!r} (use stdio, http or sse)")
    command, url = get("command", str), get("url", str)
    if not command and not url:
        raise ConfigError(f"{where}: needs \"command\" (stdio) or \"url\" (HTTP)")
    args, env, headers = get("args", list, []), get("env", dict, {}), get("headers", dict, {})
    for label, mapping in (("args", dict(enumerate(args))), ("env", env), ("headers", headers)):
        if not all(isinstance(v, str) for v in mapping.values()):
            raise ConfigError(f"{where}: every value of \"{label}\" must be a string")
    for value in [*env.values(), *headers.values()]:  # a literal token is a secret too
        if "${" not in value:
            _remember_secret(value)
    timeout = entry.get("timeout")
    if timeout is not None:
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
            raise ConfigError(f"{where}: \"timeout\" must be a positive number of seconds")
        if timeout > 3600:
            log.warning("%s: \"timeout\" is %s seconds; that looks like milliseconds", where, timeout)
    protocol = get("protocol", str)
    if protocol not in (None, "auto", MODERN_VERSION, "legacy"):
        raise ConfigError(f"{where}: \"protocol\" must be auto, {MODERN_VERSION} or legacy")
    cwd = get("cwd", str)
    if cwd and "${" not in cwd and not os.path.isabs(cwd):  # relative to the config file
        cwd = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(path)), cwd))
    return ServerConfig(name=name, command=command if not url else None, args=list(args),
                        env=dict(env), cwd=cwd, url=url, headers=dict(headers),
                        type=kind, timeout=float(timeout) if timeout else None, protocol=protocol,
                        inherit_env=bool(get("inheritEnv", bool, False)), source=path)


def load_config(files: list[str] | None = None, *, cwd: str | None = None,
                discover: bool = True) -> dict[str, ServerConfig]:
    """Configured servers by name, lowest to highest precedence: the user's file, the
    project's ``.mcp.json`` and ``mcp.json`` (trusted only once approved with ``trust``),
    ``$MCPMINI_CONFIG``, then ``files`` in order. A later entry replaces an earlier one whole.
    Entries of unapproved project files come back with ``trusted=False`` and never shadow a
    trusted entry. A broken discovered file is skipped with a warning; a broken explicit one
    is a ConfigError."""
    cwd = cwd or os.getcwd()
    found: list[tuple[str, str]] = []   # (path, "user" | "project" | "explicit")
    if discover:
        user = os.path.join(_config_home(), "mcp.json")
        if os.path.isfile(user):
            found.append((user, "user"))
        found += [(p, "project") for p in _project_files(cwd)]
    if os.environ.get("MCPMINI_CONFIG"):
        found.append((os.environ["MCPMINI_CONFIG"], "explicit"))
    found += [(p, "explicit") for p in files or []]
    explicit = {os.path.realpath(p) for p, origin in found if origin == "explicit"}
    found = [(p, o) for p, o in found if o == "explicit" or os.path.realpath(p) not in explicit]
    trusted: dict[str, ServerConfig] = {}
    untrusted: dict[str, ServerConfig] = {}
    seen: set[str] = set()
    for path, origin in found:
        real = os.path.realpath(path)
        if real in seen:
            continue
        seen.add(real)
        try:
            servers = _parse_config(path)
        except ConfigError as exc:
            if origin == "explicit":
                raise
            log.warning("%s; skipped", exc)
            continue
        if origin == "project" and not _is_trusted(path):
            if servers:
                log.warning("%s is not approved, so its servers (%s) are skipped; review it and "
                            "run: mcpmini trust %s", path, ", ".join(servers), shlex.quote(path))
            for name, server in servers.items():
                untrusted[name] = dataclasses.replace(server, trusted=False)
            continue
        trusted.update(servers)
    return {**{n: s for n, s in untrusted.items() if n not in trusted}, **trusted}


# -- CLI -----------------------------------------------------------------------------------

EXIT_CODES = {"remote": 1, "tool": 1, "agent": 1, "usage": 2, "config": 2, "connection": 3,
              "protocol": 3, "auth": 4, "timeout": 124, "interrupted": 130}


class _UsageError(MCPError):
    """The command line is wrong; nothing was sent."""


def _error_kind(exc: BaseException) -> str:
    for cls, kind in ((_UsageError, "usage"), (ConfigError, "config"), (AuthError, "auth"),
                      (RequestTimeout, "timeout"), (ConnectionClosed, "connection"),
                      (ProtocolError, "protocol"), (RemoteError, "remote")):
        if isinstance(exc, cls):
            return kind
    return getattr(exc, "kind", "protocol")


# Control characters a server or a model could use against a terminal: C0 (but newline and
# tab), DEL, C1, and the bidi overrides that reorder what is shown.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_UNSAFE_JSON = re.compile("[\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _visible(text: str) -> str:
    """Text from a server or model, with every dangerous control character shown escaped."""
    text = text.replace("\r\n", "\n")
    return _UNSAFE.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


def _json_text(value: Any, indent: int | None = 2) -> str:
    """JSON for output: UTF-8, with C1 controls and bidi overrides \\u-escaped too."""
    text = json.dumps(value, ensure_ascii=False, indent=indent)
    return _UNSAFE_JSON.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


class _Output:
    """Where the CLI writes: results to stdout, diagnostics to stderr (one line each)."""

    def __init__(self, json_mode: bool) -> None:
        self.json_mode = json_mode
        self.tty_lock = threading.Lock()

    def result(self, text: str) -> None:
        sys.stdout.write(text if text.endswith("\n") or not text else text + "\n")
        sys.stdout.flush()

    def error(self, message: str, kind: str, **extra: Any) -> None:
        message = _redact(_visible(message))
        sys.stderr.write(f"mcpmini: error: {message}\n")
        if self.json_mode:
            sys.stderr.write(_json_text({"error": {"kind": kind, "message": message, **extra}}, None) + "\n")
        sys.stderr.flush()

    def note(self, message: str) -> None:
        sys.stderr.write(_redact(_visible(message)) + "\n")
        sys.stderr.flush()


class _LogHandler(logging.Handler):
    """Log records on stderr, secrets redacted and control characters made visible."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            text = record.getMessage()
            if record.name == "mcpmini.server":
                line = f"mcpmini: [stderr] {text}"
            else:
                line = f"mcpmini: {record.levelname.lower()}: {text}"
            sys.stderr.write(_redact(_visible(line)) + "\n")
        except Exception:  # never let logging break a run
            pass


def _build_parser() -> Any:
    import argparse  # here, so that `import mcpmini` stays cheap

    class Parser(argparse.ArgumentParser):
        def error(self, message: str) -> Any:
            raise _UsageError(f"{message} (see: mcpmini {self.prog.partition(' ')[2] or ''} --help)".replace("  ", " "))

    # Global options are accepted before or after the command: they live on a parent parser
    # shared by every subcommand, with defaults suppressed there so neither place wins by accident.
    # Options that accumulate (--config, -H, -e, -v) get their own dest after the command,
    # merged in main(): argparse would otherwise let the subcommand's value replace the other.
    def add_globals(p: argparse.ArgumentParser, suppress: bool) -> None:
        d = (lambda v: argparse.SUPPRESS) if suppress else (lambda v: v)
        after = "_after" if suppress else ""
        g = p.add_argument_group("global options")
        g.add_argument("--config", action="append", metavar="FILE", default=d([]), dest="config" + after,
                       help="a config file (repeatable; later files win)")
        g.add_argument("--timeout", type=float, metavar="S", default=d(None),
                       help=f"seconds per request and for connecting (default {DEFAULT_TIMEOUT:g})")
        g.add_argument("--protocol", choices=("auto", MODERN_VERSION, "legacy"), default=d(None),
                       help="protocol era (default auto: probe with server/discover)")
        g.add_argument("-H", "--header", action="append", metavar="'NAME: VALUE'", default=d([]),
                       dest="header" + after, help="an HTTP header for the server (repeatable)")
        g.add_argument("-e", "--env", action="append", metavar="KEY=VALUE", default=d([]),
                       dest="env" + after, help="an environment variable for the server process (repeatable)")
        g.add_argument("--accept-defaults", action="store_true", default=d(False),
                       help="answer the server's form questions with their defaults")
        g.add_argument("--json", action="store_true", default=d(False),
                       help="print whole results (and errors on stderr) as JSON")
        g.add_argument("--trace", action="store_true", default=d(False),
                       help="print every JSON-RPC message on stderr (cut; -vv prints them whole)")
        g.add_argument("-v", "--verbose", action="count", default=d(0), dest="verbose" + after,
                       help="show server stderr, the era negotiated and why, progress (-vv: debug)")

    parser = Parser(prog="mcpmini", description="A one-file MCP client: list and call tools, read "
                    "resources and prompts of any MCP server.",
                    epilog="SERVER is a configured name, an http(s):// URL, or a command line in "
                    "quotes (e.g. \"python3 examples/weather_server.py\"). Exit codes: 0 ok, 1 the "
                    "server reported a failure, 2 usage/config, 3 connection/protocol, 4 auth, "
                    "124 timeout, 130 interrupted.")
    parser.add_argument("--version", action="version", version=f"mcpmini {__version__}")
    add_globals(parser, suppress=False)
    common = Parser(add_help=False)
    add_globals(common, suppress=True)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)

    def command(name: str, help: str) -> argparse.ArgumentParser:
        return sub.add_parser(name, help=help, description=help, parents=[common])

    command("info", "era and why, protocol version, server info, capabilities, "
            "instructions").add_argument("server", metavar="SERVER")
    command("servers", "configured servers and where they come from")
    command("tools", "a server's tools with their signatures").add_argument("server", metavar="SERVER")
    p = command("call", "call a tool: key=value (schema-typed), key:=JSON, key=@file, "
                "key:=@file.json, a JSON object, or - for stdin")
    p.add_argument("server", metavar="SERVER")
    p.add_argument("tool", metavar="TOOL")
    p.add_argument("arguments", nargs="*", metavar="ARG")
    command("resources", "a server's resources").add_argument("server", metavar="SERVER")
    command("templates", "a server's resource templates").add_argument("server", metavar="SERVER")
    p = command("read", "read a resource")
    p.add_argument("server", metavar="SERVER")
    p.add_argument("uri", metavar="URI")
    p.add_argument("-o", "--output", metavar="FILE", help="write the contents to FILE (raw bytes)")
    command("prompts", "a server's prompts").add_argument("server", metavar="SERVER")
    p = command("prompt", "get a prompt, with key=value arguments")
    p.add_argument("server", metavar="SERVER")
    p.add_argument("name", metavar="NAME")
    p.add_argument("arguments", nargs="*", metavar="KEY=VALUE")
    p = command("trust", "approve the project config file of this directory")
    p.add_argument("file", nargs="?", metavar="FILE")
    p.add_argument("--yes", action="store_true", help="approve without asking")
    add_ask = globals().get("_add_ask_parser")
    if add_ask:
        add_ask(command)
    return parser


# Resolving SERVER ---------------------------------------------------------------------------

def _pairs(items: list[str], sep: str, what: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items:
        key, found, value = item.partition(sep)
        if not found or not key.strip():
            raise _UsageError(f"{what} {item!r} is not {'NAME: VALUE' if sep == ':' else 'KEY=VALUE'}")
        out[key.strip()] = value.strip() if sep == ":" else value
        _remember_secret(out[key.strip()])
    return out


def _configured(args: Any) -> dict[str, ServerConfig]:
    return load_config(args.config)


def _resolve_server(spec: str, args: Any) -> ServerConfig:
    """A configured name, an http(s) URL, or a command line (anything with a space or '/')."""
    servers = _configured(args)
    headers, env = _pairs(args.header, ":", "header"), _pairs(args.env, "=", "env")
    if spec in servers:
        server = servers[spec]
        if not server.trusted:
            raise ConfigError(f"server {spec!r} is defined in {server.source}, which is not approved; "
                              f"review it, then run: mcpmini trust {shlex.quote(server.source or '')}")
        return dataclasses.replace(server, headers={**server.headers, **headers}, env={**server.env, **env})
    if re.match(r"(?i)https?://", spec):
        return ServerConfig(name=spec, url=spec, headers=headers)
    if any(c.isspace() for c in spec) or "/" in spec:
        try:
            argv = shlex.split(spec)
        except ValueError as exc:
            raise _UsageError(f"cannot split the command line {spec!r}: {exc}") from None
        if not argv:
            raise _UsageError("the server command line is empty")
        return ServerConfig(name=os.path.basename(argv[0]), command=argv[0], args=argv[1:], env=env)
    names = ", ".join(n for n, s in servers.items() if s.trusted) or "none"
    raise _UsageError(f"unknown server {spec!r}: not a configured name (configured: {names}), "
                      "not an http(s) URL, and not a command line (quote it, e.g. "
                      "\"python3 server.py\", or use ./server)")


def _client_for(server: ServerConfig, args: Any, out: _Output, **extra: Any) -> Client:
    protocol = args.protocol or server.protocol or "auto"
    timeout = args.timeout or server.timeout or DEFAULT_TIMEOUT

    def progress(params: JSON) -> None:
        if args.verbose:
            total = f"/{params['total']:g}" if isinstance(params.get("total"), (int, float)) else ""
            value = params.get("progress")
            value = f"{value:g}" if isinstance(value, (int, float)) else "?"
            out.note(f"mcpmini: progress {value}{total} {params.get('message') or ''}".rstrip())

    return Client(dataclasses.replace(server, timeout=timeout, protocol=protocol), on_progress=progress,
                  on_elicit=_tty_elicit(out), accept_defaults=args.accept_defaults,
                  trace=_tracer(args) if args.trace else None, **extra)


def _tracer(args: Any) -> Callable[[str, str, Any], None]:
    whole = args.verbose >= 2

    def trace(label: str, direction: str, message: Any) -> None:
        text = _json_text(message, None)
        if not whole and len(text) > 400:
            text = f"{text[:400]}… ({len(text)} chars; -vv prints it whole)"
        sys.stderr.write(_redact(f"mcpmini: trace {label} {direction} {text}") + "\n")
    return trace


# Asking the user (elicitation) ------------------------------------------------------------------

def _tty_elicit(out: _Output) -> Callable[[JSON], Awaitable[JSON]] | None:
    """Answer elicitations on the terminal (through /dev/tty when stdin carries data), one
    question at a time; None when there is no terminal (the client then declines)."""
    try:
        tty = open("/dev/tty", "r+", encoding="utf-8", errors="replace") if os.name == "posix" else None
    except OSError:
        tty = None
    if tty is None:
        return None
    lock = asyncio.Lock()

    def ask(prompt: str) -> str:
        tty.write(prompt)
        tty.flush()
        return tty.readline().rstrip("\n")

    async def ask_async(prompt: str) -> str:
        loop = asyncio.get_running_loop()
        future = loop.create_future()

        def worker() -> None:  # a daemon thread: never the default executor
            try:
                answer = ask(prompt)
                loop.call_soon_threadsafe(lambda: future.done() or future.set_result(answer))
            except Exception as exc:
                loop.call_soon_threadsafe(lambda e=exc: future.done() or future.set_exception(e))
        threading.Thread(target=worker, daemon=True).start()
        return await future

    async def elicit(params: JSON) -> JSON:
        async with lock:
            message = _visible(str(params.get("message", "")))
            if params.get("mode") == "url":
                url = str(params.get("url", ""))
                from urllib.parse import urlsplit
                host = urlsplit(url).hostname or "?"
                answer = await ask_async(f"The server asks you to open a URL (host {_visible(host)}):\n"
                                         f"  {_visible(url)}\n{message}\nOpen it yourself, then "
                                         "answer: done? [y/N] ")
                return {"action": "accept" if answer.strip().lower() in ("y", "yes") else "decline"}
            schema = params.get("requestedSchema") or {}
            props = schema.get("properties") if isinstance(schema, dict) else {}
            answer = await ask_async(f"The server asks: {message}\nAnswer? [y/N] ")
            if answer.strip().lower() not in ("y", "yes"):
                return {"action": "decline"}
            content: JSON = {}
            for key, prop in (props or {}).items():
                prop = prop if isinstance(prop, dict) else {}
                default = prop.get("default")
                hint = f" [{default}]" if default is not None else ""
                text = await ask_async(f"  {_visible(str(prop.get('title') or key))}{hint}: ")
                if not text and default is not None:
                    content[key] = default
                elif text:
                    content[key] = _typed_value(text, prop)
            return {"action": "accept", "content": content}
    return elicit


# Tool arguments --------------------------------------------------------------------------------

def _schema_types(schema: Any) -> set[str]:
    """The JSON types a (sub)schema allows, through type lists and anyOf/oneOf unions; empty
    when the schema says nothing."""
    if not isinstance(schema, dict):
        return set()
    kind = schema.get("type")
    types = {kind} if isinstance(kind, str) else {t for t in kind if isinstance(t, str)} if isinstance(kind, list) else set()
    for key in ("anyOf", "oneOf"):
        for option in schema.get(key) or []:
            sub = _schema_types(option)
            if not sub:
                return set()  # an unconstrained option allows anything
            types |= sub
    for value in ([schema["const"]] if "const" in schema else []) + list(schema.get("enum") or []):
        types.add(_json_type(value))
    return types


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def _typed_value(text: str, schema: Any) -> Any:
    """``key=value``: a string whenever the schema allows one or says nothing (so zip=02134
    stays a string); otherwise the one scalar type it allows, or JSON for objects/arrays."""
    types = _schema_types(schema)
    if "null" in types and text == "null":
        return None
    if not types or "string" in types:
        return text
    if "integer" in types and re.fullmatch(r"[-+]?\d+", text):
        return int(text)
    if "number" in types:
        with contextlib.suppress(ValueError):
            number = float(text)
            if number == number and abs(number) != float("inf"):
                return int(text) if re.fullmatch(r"[-+]?\d+", text) else number
    if "boolean" in types and text in ("true", "false"):
        return text == "true"
    if types & {"object", "array"}:
        with contextlib.suppress(ValueError, RecursionError):
            return _loads(text)
    return text  # the check below names the mismatch


def _read_text(path: str, what: str) -> str:
    try:
        with open(os.path.expanduser(path), encoding="utf-8") as f:
            return f.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise _UsageError(f"{what}: cannot read {path}: {exc}") from None


def _parse_json(text: str, what: str) -> Any:
    try:
        return _loads(text)
    except (ValueError, RecursionError) as exc:
        raise _UsageError(f"{what}: not valid JSON: {exc}") from None


def _tool_arguments(items: list[str], schema: JSON, stdin: Any = None) -> JSON:
    """Build the arguments object of ``call`` from the command line."""
    if len(items) == 1 and items[0] == "-":
        value = _parse_json((stdin or sys.stdin).read(), "arguments from stdin")
        if not isinstance(value, dict):
            raise _UsageError("the arguments on stdin must be one JSON object")
        return value
    if len(items) == 1 and items[0].lstrip().startswith("{"):
        value = _parse_json(items[0], "the arguments object")
        if not isinstance(value, dict):
            raise _UsageError("the arguments must be one JSON object")
        return value
    props = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
    out: JSON = {}
    for item in items:
        m = re.match(r"([^=:]+)(:?=)(.*)\Z", item, re.S)
        if not m:
            raise _UsageError(f"argument {item!r} is not key=value, key:=JSON, key=@file or key:=@file")
        key, op, value = m.groups()
        if key in out:
            raise _UsageError(f"argument {key!r} is given twice")
        if op == ":=":
            text = _read_text(value[1:], f"argument {key!r}") if value.startswith("@") else value
            out[key] = _parse_json(text, f"argument {key!r}")
        elif value.startswith("@"):
            out[key] = _read_text(value[1:], f"argument {key!r}")
        else:
            if value.startswith("\\@"):
                value = value[1:]
            out[key] = _typed_value(value, props.get(key))
    return out


def _check_arguments(tool: str, arguments: JSON, schema: JSON) -> None:
    """Check the top level of the schema before anything is sent: required properties,
    types, enum, additionalProperties: false. Unknown keywords and $ref are passed over."""
    props = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
    for name in schema.get("required") or []:
        if isinstance(name, str) and name not in arguments:
            want = "/".join(sorted(_schema_types(props.get(name)))) or "a value"
            raise _UsageError(f"{tool}: missing required argument {name!r} ({want}); "
                              f"e.g. {name}=...")
    if schema.get("additionalProperties") is False:
        unknown = [k for k in arguments if k not in props]
        if unknown:
            raise _UsageError(f"{tool}: unknown argument {unknown[0]!r}; the schema allows only "
                              f"{', '.join(props) or 'no arguments'}")
    for name, value in arguments.items():
        prop = props.get(name)
        if not isinstance(prop, dict) or "$ref" in prop:
            continue
        types = _schema_types(prop)
        got = _json_type(value)
        if types and got not in types and not (got == "integer" and "number" in types):
            raise _UsageError(f"{tool}: argument {name!r}: got {_json_text(value, None)[:80]} "
                              f"({got}), the schema wants {' or '.join(sorted(types))}"
                              + (" (use key:=JSON for raw JSON)" if types & {"object", "array"} else ""))
        enum = prop.get("enum")
        if isinstance(enum, list) and value not in enum:
            raise _UsageError(f"{tool}: argument {name!r}: got {_json_text(value, None)[:80]}, the "
                              f"schema wants one of {', '.join(_json_text(e, None) for e in enum)}")


def _signature(tool: JSON) -> str:
    """get_forecast(city: string, days?: integer)"""
    schema = tool.get("inputSchema") if isinstance(tool.get("inputSchema"), dict) else {}
    props = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
    required = set(schema.get("required") or [])
    params = []
    for name, prop in props.items():
        types = "|".join(sorted(_schema_types(prop))) or "any"
        params.append(f"{name}{'' if name in required else '?'}: {types}")
    return f"{tool.get('name')}({', '.join(params)})"


def _first_line(text: Any, limit: int = 160) -> str:
    line = str(text or "").strip().split("\n", 1)[0]
    return line if len(line) <= limit else line[:limit - 1] + "…"


# Commands ---------------------------------------------------------------------------------------

async def _with_client(args: Any, out: _Output, work: Callable[[Client], Awaitable[int]]) -> int:
    server = _resolve_server(args.server, args)
    async with _client_for(server, args, out) as client:
        return await work(client)


async def _cmd_info(args: Any, out: _Output) -> int:
    async def work(client: Client) -> int:
        info = {"server": args.server, "era": client.era, "era_reason": client.era_reason,
                "protocolVersion": client.protocol_version, "serverInfo": client.server_info,
                "capabilities": client.capabilities, "instructions": client.instructions}
        if args.json:
            out.result(_json_text(info))
            return 0
        name = client.server_info.get("name", "?")
        lines = [f"server:       {name} {client.server_info.get('version', '')}".rstrip(),
                 f"era:          {client.era} ({client.era_reason})",
                 f"protocol:     {client.protocol_version}",
                 f"capabilities: {', '.join(client.capabilities) or 'none'}"]
        if client.instructions:
            lines.append(f"instructions: {client.instructions}")
        out.result(_visible("\n".join(lines)))
        return 0
    return await _with_client(args, out, work)


async def _cmd_servers(args: Any, out: _Output) -> int:
    servers = _configured(args)
    rows = [{"name": s.name, "transport": s.transport,
             "target": s.url or shlex.join([s.command or "", *s.args]),
             "source": s.source, "trusted": s.trusted} for s in servers.values()]
    if args.json:
        out.result(_redact(_json_text(rows)))
    elif not rows:
        out.note("mcpmini: no servers configured (see README: Config)")
    else:
        for r in rows:
            state = "trusted" if r["trusted"] else "NOT APPROVED (mcpmini trust)"
            out.result(_redact(_visible(f"{r['name']}\t{r['transport']}\t{r['target']}\t{r['source']}\t{state}")))
    return 0


def _list_command(method: str, render: Callable[[JSON], str]) -> Callable[[Any, _Output], Awaitable[int]]:
    async def handler(args: Any, out: _Output) -> int:
        async def work(client: Client) -> int:
            items = await getattr(client, method)()
            if args.json:
                out.result(_json_text(items))
            else:
                out.result(_visible("\n".join(render(i) for i in items if isinstance(i, dict))))
            return 0
        return await _with_client(args, out, work)
    return handler


def _describe(head: str, item: JSON) -> str:
    text = _first_line(item.get("description") or item.get("title"))
    return f"{head} — {text}" if text else head


_cmd_tools = _list_command("list_tools", lambda t: _describe(_signature(t), t))
_cmd_resources = _list_command("list_resources", lambda r: _describe(f"{r.get('uri')}  {r.get('name', '')}".rstrip(), r))
_cmd_templates = _list_command("list_resource_templates",
                               lambda r: _describe(f"{r.get('uriTemplate')}  {r.get('name', '')}".rstrip(), r))
_cmd_prompts = _list_command("list_prompts", lambda p: _describe(
    f"{p.get('name')}({', '.join(str(a.get('name')) + ('' if a.get('required') else '?') for a in p.get('arguments') or [] if isinstance(a, dict))})", p))


async def _cmd_call(args: Any, out: _Output) -> int:
    async def work(client: Client) -> int:
        tools = {t.get("name"): t for t in await client.list_tools() if isinstance(t, dict)}
        tool = tools.get(args.tool)
        if tool is None:
            import difflib
            close = difflib.get_close_matches(args.tool, [n for n in tools if isinstance(n, str)], 3, 0.5)
            hint = f"; did you mean {', '.join(close)}?" if close else f"; it has: {', '.join(sorted(map(str, tools)))[:300]}"
            raise _UsageError(f"{client.name} has no tool {args.tool!r}{hint}")
        schema = tool.get("inputSchema") if isinstance(tool.get("inputSchema"), dict) else {}
        arguments = _tool_arguments(args.arguments, schema)
        _check_arguments(args.tool, arguments, schema)
        result = await client.call_tool(args.tool, arguments)
        out.result(_json_text(result) if args.json else _visible(result_text(result)))
        if result.get("isError") is True:
            out.error(f"tool {args.tool} reported an error (isError: true)", "tool")
            return EXIT_CODES["tool"]
        return 0
    return await _with_client(args, out, work)


async def _cmd_read(args: Any, out: _Output) -> int:
    async def work(client: Client) -> int:
        result = await client.read_resource(args.uri)
        contents = [c for c in result.get("contents") or [] if isinstance(c, dict)]
        if args.output:
            with open(args.output, "wb") as f:
                for c in contents:
                    if isinstance(c.get("blob"), str):
                        try:
                            f.write(base64.b64decode(c["blob"], validate=False))
                        except ValueError as exc:
                            raise ProtocolError(f"{args.uri}: the blob is not base64: {exc}") from None
                    else:
                        f.write(str(c.get("text", "")).encode("utf-8"))
            out.note(f"mcpmini: wrote {os.path.getsize(args.output)} bytes to {args.output}")
        elif args.json:
            out.result(_json_text(result))
        else:
            parts = []
            for c in contents:
                if isinstance(c.get("text"), str):
                    parts.append(c["text"])
                else:
                    size = len(c.get("blob") or "") * 3 // 4
                    parts.append(f"[blob: {c.get('mimeType', 'unknown')}, about {size} bytes; "
                                 "use -o FILE to save it]")
            out.result(_visible("\n".join(parts)))
        return 0
    return await _with_client(args, out, work)


async def _cmd_prompt(args: Any, out: _Output) -> int:
    arguments = _pairs(args.arguments, "=", "prompt argument") if args.arguments else None

    async def work(client: Client) -> int:
        result = await client.get_prompt(args.name, arguments)
        if args.json:
            out.result(_json_text(result))
            return 0
        lines = []
        for message in result.get("messages") or []:
            if isinstance(message, dict):
                block = message.get("content")
                text = result_text({"content": [block] if isinstance(block, dict) else block or []})
                lines.append(f"{message.get('role', '?')}: {text}")
        out.result(_visible("\n".join(lines)))
        return 0
    return await _with_client(args, out, work)


async def _cmd_trust(args: Any, out: _Output) -> int:
    path = args.file or next(iter(_project_files(os.getcwd())), None)
    if path is None:
        raise _UsageError("no .mcp.json or mcp.json in this directory; name the file: mcpmini trust FILE")
    servers = _parse_config(path)
    lines = [f"{path} ({os.path.realpath(path)}) defines {len(servers)} server(s):"]
    for s in servers.values():
        target = s.url or shlex.join([s.command or "", *s.args])
        lines.append(f"  {s.name}: {s.transport} {target}")
        if s.cwd:
            lines.append(f"    cwd: {s.cwd}")
        for k in s.env:
            lines.append(f"    env {k}")
        for k in s.headers:
            lines.append(f"    header {k}")
        if s.variables():
            lines.append(f"    receives your environment variables: {', '.join(s.variables())}")
    lines.append("Approving lets mcpmini run these commands and send these headers. The approval "
                 "covers this exact file; any edit needs a new approval. It does not cover the "
                 "scripts the commands launch.")
    out.note(_visible("\n".join(lines)))
    if not args.yes:
        if not sys.stdin.isatty():
            raise _UsageError("no terminal to ask on; review the file and run: mcpmini trust "
                              f"{shlex.quote(path)} --yes")
        if input("Approve? [y/N] ").strip().lower() not in ("y", "yes"):
            out.note("mcpmini: not approved")
            return EXIT_CODES["usage"]
    _approve(path)
    out.note(f"mcpmini: approved {path}")
    return 0


async def _dispatch(args: Any, out: _Output) -> int:
    handler = globals()[f"_cmd_{args.command}"]
    return await handler(args, out)


def _run_main(coro: Awaitable[int]) -> int:
    """Run the command with our own signal handling, the same on 3.10 and 3.13: the first
    SIGINT/SIGTERM/SIGHUP cancels the command (in-flight requests are cancelled on the wire and
    servers shut down), a second SIGINT ends the process at once."""
    loop = asyncio.new_event_loop()
    task = loop.create_task(coro)
    received: list[int] = []

    def on_signal(signum: int) -> None:
        if received:
            os._exit(128 + signum)
        received.append(signum)
        task.cancel()

    installed = []
    for sig in (signal.SIGINT, getattr(signal, "SIGTERM", None), getattr(signal, "SIGHUP", None)):
        if sig is None:
            continue
        try:
            loop.add_signal_handler(sig, on_signal, sig)
            installed.append(sig)
        except (NotImplementedError, RuntimeError, ValueError):
            pass
    try:
        return loop.run_until_complete(task)
    except asyncio.CancelledError:
        if received:
            raise KeyboardInterrupt(received[0]) from None
        raise
    finally:
        for sig in installed:
            loop.remove_signal_handler(sig)
        with contextlib.suppress(Exception):
            pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
            for t in pending:
                t.cancel()
            if pending:
                loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
        loop.close()


def main(argv: list[str] | None = None) -> int:
    """The command line: ``mcpmini [GLOBAL OPTIONS] COMMAND ...``; returns the exit code."""
    for stream in (sys.stdout, sys.stderr):  # UTF-8 whatever the locale
        with contextlib.suppress(AttributeError, ValueError):
            if (stream.encoding or "").lower().replace("-", "") != "utf8":
                stream.reconfigure(encoding="utf-8", errors="backslashreplace")
            else:
                stream.reconfigure(errors="backslashreplace")
    json_mode = "--json" in (sys.argv[1:] if argv is None else argv)
    out = _Output(json_mode)
    handler = _LogHandler()
    root = logging.getLogger("mcpmini")
    saved = (root.level, root.propagate)
    root.addHandler(handler)
    root.propagate = False
    try:
        try:
            args = _build_parser().parse_args(argv)
        except SystemExit as exc:  # --help, --version
            return exc.code if isinstance(exc.code, int) else 0
        for key in ("config", "header", "env", "verbose"):  # given before and after the command
            setattr(args, key, getattr(args, key) + getattr(args, key + "_after", type(getattr(args, key))()))
        out.json_mode = args.json
        root.setLevel(logging.DEBUG if args.verbose >= 2 else logging.INFO if args.verbose else logging.WARNING)
        if not args.command:
            raise _UsageError("a command is needed: info, servers, tools, call, resources, templates, "
                              "read, prompts, prompt, trust, ask (see: mcpmini --help)")
        return _run_main(_dispatch(args, out))
    except MCPError as exc:
        kind = _error_kind(exc)
        out.error(str(exc), kind)
        return EXIT_CODES[kind]
    except KeyboardInterrupt:
        out.error("interrupted", "interrupted")
        return EXIT_CODES["interrupted"]
    except BrokenPipeError:  # `| head -1`: the reader left; end quietly
        with contextlib.suppress(OSError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    finally:
        root.removeHandler(handler)
        root.setLevel(saved[0])
        root.propagate = saved[1]


if __name__ == "__main__":
    sys.exit(main())
