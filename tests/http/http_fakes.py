"""Stdlib fake HTTP servers for mcpmini's hermetic HTTP tests (127.0.0.1 only).

- ``FakeHTTPServer(handler)``: HTTP/1.1 (keep-alive) in a thread; every request is recorded
  (``requests``), accepted connections are counted (``connections``), and ``handler(request)``
  returns a ``Reply`` (or None: drop the connection without answering). A ``Reply`` with
  ``chunks`` streams them (chunked encoding, or close-delimited with ``close=True``); a float in
  ``chunks`` sleeps that long. A write that fails records a disconnect (``disconnected``).
- ``MCPFake``: a scripted MCP server to use as a handler: the modern era (stateless, checks
  nothing), the legacy era (initialize, Mcp-Session-Id, 404 for unknown sessions), JSON or SSE
  replies; tests override ``tool_result`` or pass ``call=``.
- ``RawServer(reply)``: raw bytes on a socket, for malformed, interim, trickling answers.
- ``ConnectProxy``: an HTTP CONNECT proxy that tunnels to 127.0.0.1 ports and records targets.
- ``make_certificates(dir)``: a CA and a localhost server certificate made with ``openssl``.
"""
from __future__ import annotations

import json
import queue
import socket
import ssl
import subprocess
import threading
import time
from email.message import Message
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable, Iterable

MODERN = "2026-07-28"
META_VERSION = "io.modelcontextprotocol/protocolVersion"


class Request:
    """One request as the server saw it."""

    def __init__(self, method: str, path: str, headers: Message, body: bytes, conn: int) -> None:
        self.method, self.path, self.headers, self.body, self.conn = method, path, headers, body, conn
        self.time = time.monotonic()

    @property
    def json(self) -> Any:
        try:
            return json.loads(self.body) if self.body else None
        except ValueError:
            return None

    @property
    def rpc_method(self) -> str | None:
        message = self.json
        return message.get("method") if isinstance(message, dict) else None

    def __repr__(self) -> str:
        return f"<Request {self.method} {self.path} {self.body[:80]!r}>"


class Reply:
    """What the handler answers: a body, or ``chunks`` streamed as they come."""

    def __init__(self, status: int = 200, body: bytes = b"", *, headers: dict[str, str] | None = None,
                 chunks: Iterable[bytes | float] | None = None, close: bool = False,
                 content_type: str | None = None) -> None:
        self.status, self.body, self.chunks, self.close = status, body, chunks, close
        self.headers = dict(headers or {})
        if content_type:
            self.headers["Content-Type"] = content_type


def json_reply(message: Any, status: int = 200, headers: dict[str, str] | None = None) -> Reply:
    return Reply(status, json.dumps(message).encode(), headers=headers, content_type="application/json")


def sse_event(message: Any = None, *, data: str | None = None, event: str | None = None,
              id: str | None = None, retry: int | None = None, eol: str = "\n") -> bytes:
    """One SSE event (``message`` as JSON data, or raw ``data``)."""
    lines = []
    if event is not None:
        lines.append(f"event: {event}")
    if id is not None:
        lines.append(f"id: {id}")
    if retry is not None:
        lines.append(f"retry: {retry}")
    text = json.dumps(message) if message is not None else data
    if text is not None:
        lines += [f"data: {line}" if line else "data:" for line in text.split("\n")]
    return (eol.join(lines) + eol + eol).encode()


def sse_reply(chunks: Iterable[bytes | float], *, close: bool = False,
              headers: dict[str, str] | None = None) -> Reply:
    return Reply(200, chunks=chunks, close=close, headers=headers, content_type="text/event-stream")


def result(rid: Any, value: Any) -> dict:
    return {"jsonrpc": "2.0", "id": rid, "result": value}


def error(rid: Any, code: int, message: str, data: Any = None) -> dict:
    err: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        err["data"] = data
    return {"jsonrpc": "2.0", "id": rid, "error": err}


# -- the server ------------------------------------------------------------------------------


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"   # keep-alive unless a reply says otherwise
    # Every write leaves at once (no Nagle: a small write after another would wait ~40 ms for
    # the client's delayed ACK), and a reply with a body is one write (see _write).
    disable_nagle_algorithm = True
    server: Any

    def setup(self) -> None:
        super().setup()
        fake = self.server.fake
        with fake.lock:
            fake.connections += 1
            self.conn_number = fake.connections

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def handle_one_request(self) -> None:
        try:
            super().handle_one_request()
        except (ConnectionError, OSError):
            self.close_connection = True

    def _serve(self) -> None:
        fake = self.server.fake
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        request = Request(self.command, self.path, self.headers, body, self.conn_number)
        with fake.lock:
            fake.requests.append(request)
        reply = fake.handler(request)
        if reply is None:  # drop the connection without a word
            self.close_connection = True
            with fake.lock:
                fake.dropped += 1
            return
        try:
            self._write(reply)
        except (ConnectionError, OSError):
            self.close_connection = True
            fake.disconnected.set()

    do_GET = do_POST = do_DELETE = do_PUT = _serve

    def _write(self, reply: Reply) -> None:
        self.send_response(reply.status)
        for name, value in reply.headers.items():
            self.send_header(name, value)
        if reply.chunks is None:
            self.send_header("Content-Length", str(len(reply.body)))
            if reply.close:
                self.send_header("Connection", "close")
                self.close_connection = True
            self._headers_buffer.append(b"\r\n" + reply.body)  # as end_headers() does, plus the body
            self.flush_headers()
            return
        if reply.close:
            self.send_header("Connection", "close")
            self.close_connection = True
        else:
            self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.wfile.flush()
        for item in reply.chunks:
            if isinstance(item, (int, float)):
                time.sleep(item)
                continue
            if not item:
                continue
            self.wfile.write(item if reply.close else b"%x\r\n%s\r\n" % (len(item), item))
            self.wfile.flush()
        if not reply.close:
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True


class FakeHTTPServer:
    """A recording HTTP/1.1 server on 127.0.0.1 (optionally TLS), served from a thread."""

    def __init__(self, handler: Callable[[Request], Reply | None],
                 tls: ssl.SSLContext | None = None) -> None:
        self.handler = handler
        self.requests: list[Request] = []
        self.connections = 0
        self.dropped = 0
        self.disconnected = threading.Event()
        self.lock = threading.Lock()
        self.httpd = _Server(("127.0.0.1", 0), _Handler)
        self.httpd.fake = self
        if tls is not None:
            self.httpd.socket = tls.wrap_socket(self.httpd.socket, server_side=True)
        self.port = self.httpd.server_address[1]
        self.scheme = "https" if tls else "http"
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                       daemon=True)
        self.thread.start()

    def url(self, path: str = "/mcp", host: str = "127.0.0.1") -> str:
        return f"{self.scheme}://{host}:{self.port}{path}"

    def by_method(self, rpc_method: str) -> list[Request]:
        return [r for r in self.requests if r.rpc_method == rpc_method]

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self) -> FakeHTTPServer:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


# -- a scripted MCP server -------------------------------------------------------------------

DEFAULT_TOOLS = [
    {"name": "echo", "description": "echo the arguments",
     "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}},
]


class MCPFake:
    """An MCP server for FakeHTTPServer. Modern requests (``_meta`` with a version) are answered
    statelessly when ``modern`` is true; legacy ones need ``initialize`` first and then the
    session id (when ``sessions``). ``sse`` answers requests with an SSE stream (one event per
    message, ``notes`` first); ``discover`` is what a legacy-only server answers to
    server/discover: "-32601" (HTTP 400 JSON error) or "empty" (200 ``{}``)."""

    def __init__(self, *, modern: bool = True, sessions: bool = True, sse: bool = False,
                 version: str = "2025-11-25", tools: list[dict] | None = None,
                 call: Callable[[Request, dict], Any] | None = None, discover: str = "-32601",
                 delete_status: int = 200) -> None:
        self.modern, self.sessions, self.sse, self.version = modern, sessions, sse, version
        self.tools = tools if tools is not None else DEFAULT_TOOLS
        self.call, self.discover, self.delete_status = call, discover, delete_status
        self.session_ids: set[str] = set()
        self.issued = 0
        self.lock = threading.Lock()

    def __call__(self, request: Request) -> Reply | None:
        if request.method == "DELETE":
            self.session_ids.discard(request.headers.get("Mcp-Session-Id") or "")
            return Reply(self.delete_status)
        if request.method == "GET":
            return self.on_get(request)
        message = request.json
        if not isinstance(message, dict):
            return json_reply(error(None, -32700, "Parse error"), 400)
        params = message.get("params") if isinstance(message.get("params"), dict) else {}
        modern = isinstance((params.get("_meta") or {}).get(META_VERSION), str)
        if "id" not in message or "method" not in message:  # notification or response
            return Reply(202)
        rid, method = message["id"], message["method"]
        if modern and not self.modern:
            if method == "server/discover" and self.discover == "empty":
                return json_reply(result(rid, {}))
            return json_reply(error(rid, -32601, "Method not found"), 400)
        if not modern:
            if method == "initialize":
                with self.lock:
                    self.issued += 1
                    sid = f"session-{self.issued}"
                    self.session_ids.add(sid)
                value = {"protocolVersion": self.version, "capabilities": {"tools": {}},
                         "serverInfo": {"name": "http-fake", "version": "1"}}
                headers = {"Mcp-Session-Id": sid} if self.sessions else {}
                return self.respond(request, result(rid, value), headers=headers)
            if self.sessions:
                sid = request.headers.get("Mcp-Session-Id")
                if not sid:
                    return json_reply(error(rid, -32600, "Bad Request: missing session"), 400)
                if sid not in self.session_ids:
                    return json_reply(error(rid, -32001, "Session not found"), 404)
        value = self.answer(request, method, params)
        if isinstance(value, Reply) or value is None:
            return value
        if isinstance(value, dict) and ("result" in value or "error" in value) and value.get("jsonrpc"):
            return self.respond(request, {**value, "id": rid})
        return self.respond(request, result(rid, value))

    def answer(self, request: Request, method: str, params: dict) -> Any:
        """The result of one request (or a full Reply, or a JSON-RPC error dict)."""
        modern = isinstance((params.get("_meta") or {}).get(META_VERSION), str)
        tag = {"resultType": "complete"} if modern else {}
        if method == "server/discover":
            return {**tag, "supportedVersions": [MODERN], "capabilities": {"tools": {}},
                    "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "http-fake", "version": "1"}}}
        if method == "tools/list":
            return {**tag, "tools": self.tools}
        if method == "tools/call":
            if self.call is not None:
                return self.call(request, params)
            args = params.get("arguments") or {}
            return {**tag, "content": [{"type": "text", "text": json.dumps(args, sort_keys=True)}]}
        if method == "ping":
            return {**tag}
        if method == "prompts/get":
            return {**tag, "messages": []}
        if method == "resources/read":
            return {**tag, "contents": []}
        return error(None, -32601, f"Method not found: {method}")

    def respond(self, request: Request, message: dict, headers: dict[str, str] | None = None) -> Reply:
        if self.sse:
            return sse_reply([sse_event(message)], headers=headers)
        return json_reply(message, headers=headers)

    def on_get(self, request: Request) -> Reply:
        return Reply(405, headers={"Allow": "POST, DELETE"})


class Resumable(MCPFake):
    """tools/call answers with a primed SSE stream (``id: ev-1``, optional ``retry``) that
    closes before the response; the response comes on the GET that resumes it
    (or ``get_status`` when that is not 200). ``closed_at`` records when the stream ended."""

    def __init__(self, retry: int | None = None, get_status: int = 200, **options: Any) -> None:
        super().__init__(**options)
        self.retry, self.get_status = retry, get_status
        self.closed_at: list[float] = []
        self.call_id: Any = None
        self.call = self._call

    def _call(self, request: Request, params: dict) -> Reply:
        self.call_id = request.json["id"]

        def chunks() -> Any:
            yield sse_event(data="", id="ev-1", retry=self.retry)   # the priming event
            self.closed_at.append(time.monotonic())
        return sse_reply(chunks())

    def on_get(self, request: Request) -> Reply:
        if request.headers.get("Last-Event-ID") is None:   # the standalone GET stream: none here
            return Reply(405)
        if self.get_status != 200:
            return Reply(self.get_status)
        return sse_reply([sse_event(data="", id="ev-2"),
                          sse_event(result(self.call_id, {"content": [{"type": "text", "text": "resumed"}]}),
                                    id="ev-3")])


class SSEFake:
    """A 2024-11-05 HTTP+SSE server: ``GET /sse`` streams ``endpoint`` then every reply;
    POSTs to the endpoint get 202 "Accepted". Answers come from ``inner.answer`` (an MCPFake);
    a tools/call for which it returns None is never answered. ``close_stream`` ends the stream."""

    def __init__(self, endpoint: str = "/messages?session_id=abc", inner: MCPFake | None = None,
                 post_path: str = "/messages") -> None:
        self.endpoint, self.post_path = endpoint, post_path
        self.inner = inner or MCPFake(sessions=False)
        self.outbox: queue.Queue = queue.Queue()
        self.close_stream = threading.Event()

    def __call__(self, request: Request) -> Reply | None:
        if request.method == "GET":
            return sse_reply(self._stream())
        if not request.path.startswith(self.post_path):
            return Reply(405)
        message = request.json
        if isinstance(message, dict) and "id" in message and "method" in message:
            rid, method = message["id"], message["method"]
            params = message.get("params") if isinstance(message.get("params"), dict) else {}
            if method == "initialize":
                value: Any = {"protocolVersion": "2024-11-05", "capabilities": {"tools": {}},
                              "serverInfo": {"name": "sse-fake", "version": "1"}}
            else:
                value = self.inner.answer(request, method, params)
            if value is not None:
                if isinstance(value, dict) and value.get("jsonrpc"):
                    value = {**value, "id": rid}
                else:
                    value = result(rid, value)
                self.outbox.put(value)
        return Reply(202, b"Accepted", content_type="text/plain")

    def _stream(self) -> Any:
        outbox = self.outbox = queue.Queue()   # replies go to the newest stream
        yield sse_event(data=self.endpoint, event="endpoint")
        idle = 0
        while not self.close_stream.is_set():
            try:
                message = outbox.get(timeout=0.05)
            except queue.Empty:
                idle += 1
                if idle % 10 == 0:
                    yield b": ping\n\n"   # notices a client that went away
                continue
            yield sse_event(message)


# -- a raw server: any bytes, well-formed or not -----------------------------------------------


class RawServer:
    """A TCP server on 127.0.0.1 that answers every request (read up to its blank line, plus
    its Content-Length body) with ``reply(request_head)``: bytes, or a list of bytes and float
    pauses, written as they come. The connection stays open for the next request when
    ``keep`` is true; ``heads`` records the request heads, ``connections`` counts accepts and
    ``closed`` is set when a client hangs up during a reply."""

    def __init__(self, reply: Callable[[bytes], Any], keep: bool = False) -> None:
        self.reply, self.keep = reply, keep
        self.heads: list[bytes] = []
        self.connections = 0
        self.closed = threading.Event()
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def url(self, path: str = "/mcp") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        data = b""
        with conn:
            try:
                while True:
                    while b"\r\n\r\n" not in data:
                        chunk = conn.recv(65536)
                        if not chunk:
                            return
                        data += chunk
                    head, _, data = data.partition(b"\r\n\r\n")
                    length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                                   if line.lower().startswith(b"content-length:")), 0)
                    while len(data) < length:
                        data += conn.recv(65536)
                    data = data[length:]
                    self.heads.append(head)
                    reply = self.reply(head)
                    for item in reply if isinstance(reply, list) else [reply]:
                        if isinstance(item, (int, float)):
                            time.sleep(item)
                        else:
                            conn.sendall(item)
                    if not self.keep:
                        return
            except OSError:
                self.closed.set()

    def close(self) -> None:
        try:   # wakes the accept() blocked in the thread: a close() alone leaves it listening
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()

    def __enter__(self) -> RawServer:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


# -- a CONNECT proxy -------------------------------------------------------------------------


class ConnectProxy:
    """An HTTP proxy that only does CONNECT, to 127.0.0.1/localhost ports; records targets."""

    def __init__(self) -> None:
        self.targets: list[str] = []
        self.headers: list[Message] = []
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # relay each piece at once, as _Handler writes it

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_CONNECT(self) -> None:
                proxy.targets.append(self.path)
                proxy.headers.append(self.headers)
                host, _, port = self.path.rpartition(":")
                if host not in ("127.0.0.1", "localhost"):
                    self.send_error(403)
                    return
                upstream = socket.create_connection(("127.0.0.1", int(port)), timeout=5)
                upstream.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                self.send_response(200, "Connection established")
                self.end_headers()
                self.wfile.flush()
                self.close_connection = True
                _pipe(self.connection, upstream)

        self.httpd = _Server(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05},
                         daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def _pipe(a: socket.socket, b: socket.socket) -> None:
    def pump(src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    other = threading.Thread(target=pump, args=(b, a), daemon=True)
    other.start()
    pump(a, b)
    other.join(5)
    b.close()


# -- certificates ----------------------------------------------------------------------------


def make_certificates(directory: Path) -> tuple[Path, Path, Path]:
    """(ca.pem, server.pem, server.key): a throwaway CA and a localhost/127.0.0.1 certificate
    it signed, with the extensions strict verification (3.13's default) asks for."""
    d = Path(directory)
    (d / "ca.ext").write_text("basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\n"
                              "subjectKeyIdentifier=hash\n")
    (d / "server.ext").write_text("basicConstraints=critical,CA:FALSE\n"
                                  "keyUsage=critical,digitalSignature,keyEncipherment\n"
                                  "extendedKeyUsage=serverAuth\n"
                                  "subjectAltName=DNS:localhost,IP:127.0.0.1\n"
                                  "authorityKeyIdentifier=keyid\nsubjectKeyIdentifier=hash\n")

    def openssl(*args: str) -> None:
        subprocess.run(["openssl", *args], cwd=d, check=True, capture_output=True, timeout=60)

    openssl("req", "-new", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.csr",
            "-subj", "/CN=mcpmini test CA")
    openssl("x509", "-req", "-in", "ca.csr", "-signkey", "ca.key", "-out", "ca.pem", "-days", "2",
            "-extfile", "ca.ext")
    openssl("req", "-new", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out",
            "server.csr", "-subj", "/CN=localhost")
    openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
            "-CAcreateserial", "-out", "server.pem", "-days", "2", "-extfile", "server.ext")
    return d / "ca.pem", d / "server.pem", d / "server.key"


def server_tls_context(cert: Path, key: Path) -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(str(cert), str(key))
    return context
