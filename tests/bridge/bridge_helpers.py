"""Helpers of the bridge tests: a raw JSON-RPC driver for `python3 mcpmini.py bridge ...` (a
subprocess in its own process group) and for `bridge --listen` over HTTP."""
from __future__ import annotations

import contextlib
import http.client
import json
import os
import queue
import re
import shlex
import signal
import subprocess
import sys
import threading
import time
from typing import Any, Callable
from urllib.parse import urlsplit

from harness import MCPMINI, FakeServer, wait_until

MODERN = "2026-07-28"
META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CAPS = "io.modelcontextprotocol/clientCapabilities"
META_INFO = "io.modelcontextprotocol/clientInfo"
WAIT = 15.0   # seconds for any one answer


def modern_meta(**extra: Any) -> dict:
    """The `_meta` a 2026-07-28 client puts on every request."""
    return {META_VERSION: MODERN, META_CAPS: {"elicitation": {"form": {}}},
            META_INFO: {"name": "raw-modern", "version": "7"}, **extra}


class StdioBridge:
    """``python3 mcpmini.py bridge [OPTIONS] SERVER`` with pipes: ``send`` a message, ``next``
    / ``reply`` read what it writes on stdout (every line must be JSON-RPC), ``stderr`` so far.
    SERVER: a fake, an argv list, or a command line or URL as it is."""

    def __init__(self, server: FakeServer | list[str] | str, *options: str) -> None:
        server = server.argv if isinstance(server, FakeServer) else server
        argv = [sys.executable, str(MCPMINI), "bridge", *options,
                server if isinstance(server, str) else shlex.join(server)]
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     start_new_session=True)
        self.lines: queue.Queue = queue.Queue()
        self.raw: list[bytes] = []
        self.err: list[bytes] = []
        self.kept: list[dict] = []     # read but not yet asked for
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=lambda: self.err.extend(iter(self.proc.stderr.readline, b"")), daemon=True).start()

    def _read(self) -> None:
        for line in iter(self.proc.stdout.readline, b""):
            self.raw.append(line)
            try:
                self.lines.put(json.loads(line))
            except ValueError:
                self.lines.put({"_not_json": line.decode("utf-8", "replace")})   # fails the test
        self.lines.put(None)

    @property
    def stderr(self) -> str:
        return b"".join(self.err).decode("utf-8", "replace")

    def send(self, message: dict | list | bytes) -> None:
        data = message if isinstance(message, bytes) else json.dumps(message).encode()
        self.proc.stdin.write(data + b"\n")
        self.proc.stdin.flush()

    def request(self, rid: Any, method: str, params: dict | None = None) -> None:
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, **({"params": params} if params is not None else {})})

    def next(self, predicate: Callable[[dict], bool] = lambda m: True, timeout: float = WAIT) -> dict:
        """The first message written (or kept from earlier) that matches ``predicate``."""
        for message in self.kept:
            if predicate(message):
                self.kept.remove(message)
                return message
        deadline = time.monotonic() + timeout
        while True:
            try:
                message = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"nothing matching within {timeout:g} s; kept {self.kept}; "
                                     f"stderr:\n{self.stderr[-3000:]}") from None
            if message is None or "_not_json" in message:
                raise AssertionError(f"the bridge closed stdout or wrote {message}; stderr:\n{self.stderr[-3000:]}")
            if predicate(message):
                return message
            self.kept.append(message)

    def reply(self, rid: Any, timeout: float = WAIT) -> dict:
        """The response to request ``rid``."""
        return self.next(lambda m: m.get("id") == rid and "method" not in m, timeout)

    def call(self, rid: Any, method: str, params: dict | None = None) -> dict:
        """Send a request and return its response."""
        self.request(rid, method, params)
        return self.reply(rid)

    def initialize(self, capabilities: dict | None = None, version: str = "2025-06-18") -> dict:
        """A legacy client's handshake; its result."""
        result = self.call("init", "initialize", {"protocolVersion": version, "capabilities": capabilities or {},
                                                  "clientInfo": {"name": "raw-legacy", "version": "5"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return result

    def close(self, timeout: float = 10.0) -> int | None:
        """Close stdin; the exit code (None if it is still running after ``timeout``)."""
        self.proc.stdin.close()
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def endpoint(self) -> tuple[str, str | None]:
        """``--listen``: the URL and the bearer token (None with --no-auth) announced on stderr."""
        line = wait_until(lambda: next((x for x in self.stderr.splitlines() if " bridge on " in x), None), WAIT)
        assert line, f"the bridge announced no endpoint; stderr:\n{self.stderr}"
        found = re.search(r"(http://\S+/mcp)(?:.*Bearer (\S+))?", line)
        assert found, line
        return found[1], found[2]

    def kill(self) -> None:
        """End the bridge's process group, whatever state it is in."""
        if self.proc.poll() is None:
            with contextlib.suppress(OSError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(5)
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            with contextlib.suppress(OSError, ValueError):
                stream.close()


def exchange(url: str, body: Any = None, *, token: str | None = None, verb: str = "POST",
             headers: dict[str, str | None] | None = None) -> tuple[int, dict[str, str], bytes]:
    """One HTTP request to a ``bridge --listen`` endpoint: status, lowercased headers, body.
    ``headers`` add to (or, with None, remove) the usual Content-Type, Accept and Authorization."""
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=WAIT)
    sent = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
            "Authorization": f"Bearer {token}" if token else None, **(headers or {})}
    data = None if body is None else body if isinstance(body, bytes) else json.dumps(body).encode()
    try:
        conn.request(verb, parts.path, body=data, headers={k: v for k, v in sent.items() if v is not None})
        response = conn.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        conn.close()


def events(body: bytes) -> list[dict]:
    """The JSON-RPC messages of an SSE body."""
    return [json.loads(line[5:]) for line in body.decode().splitlines() if line.startswith("data:")]
