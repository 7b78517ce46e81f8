#!/usr/bin/env python3
"""The demo weather MCP server over HTTP (stdlib http.server): a teaching example for mcpmini.

    The forecasts are DEMO DATA (see weather_server.py). They are not real weather.

Run:    python3 weather_http_server.py [--port 8000]     (--port 0 picks a free port)
It prints its endpoint, e.g. http://127.0.0.1:8000/mcp, on stdout; logs go to stderr.

One endpoint, /mcp, serves both protocol eras, told apart by the MCP-Protocol-Version header:

- modern (header "MCP-Protocol-Version: 2026-07-28"): stateless. Every POST holds one
  request or notification. The headers must agree with the body: Mcp-Method = the method,
  Mcp-Name = params.name or params.uri (tools/call, prompts/get, resources/read), and the
  header version = _meta's version; otherwise 400 with error -32020 (HeaderMismatch).
  Notifications get 202. An unknown method gets 404 with error -32601.
- legacy Streamable HTTP (no header, or a 2025-xx version): a POSTed initialize opens a
  session and the reply carries an Mcp-Session-Id header. Every later request must carry it:
  a missing id gets 400, an unknown (or ended) one 404. DELETE /mcp with the id ends it.

Reply format (both eras): JSON, unless the request's Accept header *prefers* SSE, meaning
text/event-stream has a higher q-value than application/json, or the same q-value and is
listed first. An SSE reply carries the progress notification (if the request asked for
progress with _meta.progressToken) before the response. mcpmini's
"Accept: application/json, text/event-stream" therefore gets plain JSON.

Also served: the deprecated 2024-11-05 HTTP+SSE transport. GET /sse opens an event stream
whose first event, "endpoint", names /messages?session_id=...; POST messages there (202) and
read the replies from the stream.

Only 127.0.0.1 is bound, and requests whose Origin is not a local page get 403 (the spec
asks servers to check Origin against DNS rebinding).
"""
from __future__ import annotations

import argparse
import base64
import json
import logging
import os
import queue
import sys
import threading
import urllib.parse
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

# weather_server.py sits next to this file; make it importable from any working directory.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import weather_server as ws  # noqa: E402

JSON = dict[str, Any]
HEADER_MISMATCH = -32020     # 2026-07-28: headers disagree with the body (always HTTP 400)
SESSION_NOT_FOUND = -32001   # legacy, implementation-defined (what the reference SDKs send)
KEEPALIVE_SECONDS = 15.0     # SSE comment interval on /sse; also how we notice a gone client

log = logging.getLogger("weather_http_server")


# -- Small helpers -------------------------------------------------------------------
def prefers_sse(accept: str | None) -> bool:
    """True when an Accept header ranks text/event-stream above application/json
    (by q-value, then by order). See the module docstring."""
    ranks: dict[str, tuple[float, int]] = {}
    for position, item in enumerate((accept or "").split(",")):
        media, *options = [part.strip() for part in item.split(";")]
        q = 1.0
        for option in options:
            name, _, value = option.partition("=")
            if name.strip() == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0
        ranks.setdefault(media.lower(), (q, -position))  # higher tuple = more preferred
    sse, js = ranks.get("text/event-stream"), ranks.get("application/json")
    if sse is None or sse[0] <= 0:
        return False
    return js is None or sse > js


def decode_header_value(value: str) -> str:
    """Undo the =?base64?...?= wrapping that 2026-07-28 clients use for non-ASCII values."""
    if value.startswith("=?base64?") and value.endswith("?="):
        try:
            return base64.b64decode(value[len("=?base64?"):-2], validate=True).decode("utf-8")
        except ValueError:  # binascii.Error and UnicodeDecodeError are ValueErrors
            return value
    return value


def sse_event(message: JSON | list[JSON], event: str = "message") -> bytes:
    """One Server-Sent Event carrying a JSON-RPC message."""
    return f"event: {event}\ndata: ".encode() + ws.encode(message) + b"\n\n"


# -- The request handler ------------------------------------------------------------
class MCPHandler(BaseHTTPRequestHandler):
    """Routes /mcp (both eras), /sse and /messages (2024-11-05 HTTP+SSE)."""

    server_version = "weather-demo/1.0"
    protocol_version = "HTTP/1.1"  # keep-alive: every reply carries Content-Length
    # Each write leaves at once. With Nagle's algorithm on, a small write that follows another
    # (the body after the headers, an SSE event after the last one) waits for the client's ACK
    # of the first, which the client may delay by ~40 ms. And each reply is one write (see _send).
    disable_nagle_algorithm = True
    # Shared by all requests of the process (handlers run in threads, hence the lock).
    sessions: dict[str, str] = {}            # legacy Mcp-Session-Id -> negotiated version
    sse_outboxes: dict[str, queue.Queue] = {}  # /sse session_id -> messages for that stream
    lock = threading.Lock()

    def log_message(self, format: str, *args: Any) -> None:
        log.info("%s %s", self.address_string(), format % args)  # to stderr, not stdout

    # -- responses
    def _send(self, status: int, body: bytes = b"", content_type: str | None = None,
              headers: dict[str, str] | None = None) -> None:
        self._body()  # whatever the answer: an unread body would be read as the next request
        self.send_response(status)
        if self.close_connection:
            self.send_header("Connection", "close")
        if content_type:
            self.send_header("Content-Type", content_type)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        # end_headers() would send the headers by themselves: put the blank line and the body
        # in http.server's header buffer instead, and the whole reply leaves in one write.
        self._headers_buffer.append(b"\r\n" + body)
        self.flush_headers()

    def _send_json(self, status: int, message: JSON | list[JSON],
                   headers: dict[str, str] | None = None) -> None:
        self._send(status, ws.encode(message), "application/json", headers)

    def _send_error(self, status: int, code: int, text: str, request_id: Any = None) -> None:
        self._send_json(status, ws.error_reply(request_id, code, text))

    def _reply(self, reply: JSON | list[JSON], notes: list[JSON], status: int = 200,
               headers: dict[str, str] | None = None) -> None:
        """Send a response as JSON, or as SSE (notifications first) if the client prefers."""
        if status == 200 and prefers_sse(self.headers.get("Accept")):
            body = b"".join(sse_event(note) for note in notes) + sse_event(reply)
            self._send(200, body, "text/event-stream",
                       {"Cache-Control": "no-cache", "X-Accel-Buffering": "no", **(headers or {})})
        else:
            self._send_json(status, reply, headers)

    # -- request plumbing
    def _origin_ok(self) -> bool:
        origin = self.headers.get("Origin")
        if origin is None:
            return True  # not a browser
        host = urllib.parse.urlsplit(origin).hostname
        if host in ("127.0.0.1", "localhost", "::1"):
            return True
        self._send_error(403, ws.INVALID_REQUEST, f"Forbidden origin: {origin}")
        return False

    def parse_request(self) -> bool:
        self._request_body: bytes | None = None  # one handler serves every request of a connection
        return super().parse_request()

    def _body(self) -> bytes:
        """This request's body, read once. One this server cannot size (chunked, or a bad
        Content-Length) ends the connection after the answer."""
        if self._request_body is None:
            self._request_body = b""
            try:
                if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
                    raise ValueError("chunked")
                self._request_body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            except ValueError:
                self.close_connection = True
        return self._request_body

    def _read_json(self) -> tuple[bool, Any]:
        """(ok, payload); on failure the 400 has already been sent."""
        try:
            return True, json.loads(self._body())
        except ValueError as exc:
            self._send_error(400, ws.PARSE_ERROR, f"Parse error: {exc}")
            return False, None

    def do_GET(self) -> None:
        path = urllib.parse.urlsplit(self.path).path
        if path == "/sse":
            self._serve_sse_stream()
        elif path == "/mcp":
            # No standalone server->client stream: allowed by the spec (405).
            self._send(405, b"", headers={"Allow": "POST, DELETE"})
        else:
            self._send(404, b"not found\n", "text/plain")

    def do_DELETE(self) -> None:
        if urllib.parse.urlsplit(self.path).path != "/mcp":
            self._send(404, b"not found\n", "text/plain")
            return
        session_id = self.headers.get("Mcp-Session-Id")
        if not session_id:
            self._send_error(400, ws.INVALID_REQUEST, "DELETE needs an Mcp-Session-Id header")
            return
        with self.lock:
            known = self.sessions.pop(session_id, None) is not None
        if known:
            log.info("session %s ended by client", session_id)
            self._send(200)
        else:
            self._send_error(404, SESSION_NOT_FOUND, "Session not found")

    def do_POST(self) -> None:
        url = urllib.parse.urlsplit(self.path)
        if url.path == "/messages":
            self._post_sse_message(urllib.parse.parse_qs(url.query).get("session_id", [""])[0])
            return
        if url.path != "/mcp":
            self._send(404, b"not found\n", "text/plain")
            return
        if not self._origin_ok():
            return
        ok, payload = self._read_json()
        if not ok:
            return
        version = self.headers.get("MCP-Protocol-Version")
        if version == ws.MODERN_VERSION:
            self._post_modern(payload)
        elif version is None or version in ws.LEGACY_VERSIONS:
            self._post_legacy(payload, version)
        else:
            self._send_json(400, ws.error_reply(
                _request_id(payload), ws.UNSUPPORTED_VERSION, "Unsupported protocol version",
                {"supported": ws.SUPPORTED_VERSIONS, "requested": version}))

    # -- modern (2026-07-28): stateless, headers must mirror the body
    def _post_modern(self, message: Any) -> None:
        if not isinstance(message, dict):
            self._send_error(400, ws.INVALID_REQUEST, "2026-07-28 POST bodies hold one JSON-RPC object")
            return
        if "method" not in message:  # clients MUST NOT POST responses in 2026-07-28
            self._send_error(400, ws.INVALID_REQUEST, "Expected a request or a notification")
            return
        mismatch = self._header_mismatch(message)
        if mismatch:
            self._send_json(400, ws.error_reply(message.get("id"), HEADER_MISMATCH, mismatch))
            return
        if "id" not in message:
            ws.handle(message, modern=True)
            self._send(202)
            return
        notes: list[JSON] = []
        reply = ws.handle(message, notify=notes.append, modern=True)  # the header decided the era
        assert reply is not None  # a request always gets a response
        self._reply(reply, notes, status=_modern_status(reply))

    def _header_mismatch(self, message: JSON) -> str | None:
        """Why the modern headers disagree with the body, or None if they agree."""
        method, header_method = message.get("method"), self.headers.get("Mcp-Method")
        # Required on requests; on notifications the spec leaves it open, so only a wrong
        # value is refused there.
        if header_method != method and ("id" in message or header_method is not None):
            return f"Mcp-Method header {header_method!r} does not match body method {method!r}"
        params = message.get("params")
        params = params if isinstance(params, dict) else {}
        meta = params.get("_meta")
        body_version = meta.get(ws.META_VERSION) if isinstance(meta, dict) else None
        if body_version is not None and body_version != ws.MODERN_VERSION:
            return f"MCP-Protocol-Version header {ws.MODERN_VERSION!r} does not match _meta version {body_version!r}"
        if "id" in message and method in ("tools/call", "prompts/get", "resources/read"):
            expected = params.get("uri" if method == "resources/read" else "name")
            header = self.headers.get("Mcp-Name")
            if header is None:
                return f"Missing Mcp-Name header (required for {method})"
            if decode_header_value(header) != expected:
                return f"Mcp-Name header {header!r} does not match {expected!r}"
        return None

    # -- legacy Streamable HTTP (2025-03-26 ... 2025-11-25): sessions
    def _post_legacy(self, payload: Any, version: str | None) -> None:
        if _has_modern_meta(payload):
            self._send_error(400, HEADER_MISMATCH, "2026-07-28 requests need the MCP-Protocol-Version header",
                             _request_id(payload))
            return
        if isinstance(payload, dict) and payload.get("method") == "initialize":
            self._initialize(payload)
            return
        session_id = self.headers.get("Mcp-Session-Id")
        if not session_id:
            self._send_error(400, ws.INVALID_REQUEST,
                             "Bad Request: missing Mcp-Session-Id (send initialize first)", _request_id(payload))
            return
        with self.lock:
            negotiated = self.sessions.get(session_id)
        if negotiated is None:  # the client must start over with a new initialize
            self._send_error(404, SESSION_NOT_FOUND, "Session not found", _request_id(payload))
            return
        if version is not None and version != negotiated:
            self._send_error(400, ws.INVALID_REQUEST,
                             f"MCP-Protocol-Version {version} differs from the negotiated {negotiated}",
                             _request_id(payload))
            return
        notes: list[JSON] = []
        reply = ws.handle_payload(payload, notify=notes.append)
        if reply is None:  # only notifications or responses
            self._send(202)
        else:
            self._reply(reply, notes)

    def _initialize(self, message: JSON) -> None:
        notes: list[JSON] = []
        reply = ws.handle(message, notify=notes.append)
        assert reply is not None
        if "result" not in reply:
            self._reply(reply, notes)
            return
        session_id = uuid.uuid4().hex  # visible ASCII, hard to guess
        with self.lock:
            self.sessions[session_id] = reply["result"]["protocolVersion"]
        log.info("session %s opened (%s)", session_id, reply["result"]["protocolVersion"])
        self._reply(reply, notes, headers={"Mcp-Session-Id": session_id})

    # -- 2024-11-05 HTTP+SSE: GET /sse + POST /messages?session_id=...
    def _serve_sse_stream(self) -> None:
        if not self._origin_ok():
            return
        session_id, outbox = uuid.uuid4().hex, queue.Queue()
        with self.lock:
            self.sse_outboxes[session_id] = outbox
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        self.close_connection = True  # the stream ends when the connection does
        try:
            self.wfile.write(f"event: endpoint\ndata: /messages?session_id={session_id}\n\n".encode())
            self.wfile.flush()
            while True:
                try:
                    chunk = sse_event(outbox.get(timeout=KEEPALIVE_SECONDS))
                except queue.Empty:
                    chunk = b": keepalive\n\n"  # fails once the client has gone away
                self.wfile.write(chunk)
                self.wfile.flush()
        except OSError:  # BrokenPipeError, ConnectionResetError: the client left
            pass
        finally:
            with self.lock:
                self.sse_outboxes.pop(session_id, None)
            log.info("SSE stream %s closed", session_id)

    def _post_sse_message(self, session_id: str) -> None:
        if not self._origin_ok():
            return
        with self.lock:
            outbox = self.sse_outboxes.get(session_id)
        if outbox is None:
            self._send(404, b"Unknown session_id\n", "text/plain")
            return
        ok, payload = self._read_json()
        if not ok:
            return
        self._send(202, b"Accepted", "text/plain")  # the reply travels on the stream instead
        reply = ws.handle_payload(payload, notify=outbox.put)
        if reply is not None:
            outbox.put(reply)


def _request_id(payload: Any) -> Any:
    return payload.get("id") if isinstance(payload, dict) else None


def _has_modern_meta(payload: Any) -> bool:
    return isinstance(payload, dict) and isinstance(payload.get("method"), str) and ws.is_modern(payload)


def _modern_status(reply: JSON) -> int:
    """HTTP status for a 2026-07-28 reply: errors about the request itself are 4xx."""
    error = reply.get("error")
    if not error:
        return 200
    code = error.get("code")
    if code == ws.METHOD_NOT_FOUND:
        return 404
    if code in (HEADER_MISMATCH, -32021, ws.UNSUPPORTED_VERSION, ws.INVALID_REQUEST):
        return 400
    if code == ws.INVALID_PARAMS and "missing" in (error.get("data") or {}):
        return 400  # a required _meta key is missing
    return 200  # e.g. unknown tool or resource: a normal JSON-RPC error


def main(argv: list[str] | None = None) -> int:
    """Serve until interrupted (Ctrl-C)."""
    parser = argparse.ArgumentParser(description="Demo weather MCP server over HTTP (DEMO DATA).")
    parser.add_argument("--port", type=int, default=8000, help="port on 127.0.0.1 (0 = any free port)")
    args = parser.parse_args(argv)
    logging.basicConfig(stream=sys.stderr, level=logging.INFO,
                        format="weather_http_server: %(message)s")
    server = ThreadingHTTPServer(("127.0.0.1", args.port), MCPHandler)
    server.daemon_threads = True  # open SSE streams must not keep the process alive
    print(f"http://127.0.0.1:{server.server_address[1]}/mcp", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
