"""Stdlib fakes for mcpmini's OAuth tests: one MCP resource server plus authorization servers
on 127.0.0.1 (``AuthWorld``), switches for each discovery/registration/callback rule, and
``make_client``.

The MCP endpoint is ``/mcp`` (modern era, stateless). A request needs ``Bearer <token>`` with
a token the AS issued for the scopes ``world.required`` (401 otherwise) and, for tools/call,
``world.call_scope`` (403 insufficient_scope otherwise). ``GET /authorize`` never shows a page:
it answers 302 to ``redirect_uri?code=…&state=…&iss=…`` like the conformance suite's AS.
"""
from __future__ import annotations

import base64
import hashlib
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

import mcpmini

MODERN = "2026-07-28"


def follow(url: str) -> None:
    """The test "browser": follow the AS's 302 to the client's loopback listener."""
    import urllib.request
    with urllib.request.urlopen(url, timeout=10) as resp:
        resp.read()


def make_client(world: "AuthWorld", **auth: Any) -> Any:
    """A modern-era client of the fake with an in-memory store and the redirect-following
    "browser" (override any _OAuth keyword)."""
    options = {"store": None, "interactive": True, "open_browser": follow, "callback_port": 0, **auth}
    return mcpmini.Client(world.url, protocol=mcpmini.MODERN_VERSION, era_cache=False, timeout=10,
                          auth=options)


class AuthWorld:
    """The resource server and its authorization server(s), all on one port.

    Switches: ``prm_at`` ("header" | "path" | "root" | None), ``as_path`` (issuer path, e.g.
    "/tenant1"), ``as_forms`` (which metadata URLs answer: "oauth", "oidc", "oidc-append"),
    ``issuer_override``, ``pkce`` (list or None), ``dcr`` (bool), ``dcr_method`` (assigned
    token_endpoint_auth_method), ``cimd``, ``iss_mode`` ("good" | "missing" | "wrong" |
    "normalized"), ``iss_supported``, ``refresh`` (issue refresh tokens), ``rotate``,
    ``expires_in``, ``challenge_scope``, ``scopes_supported``, ``token_redirect`` (the token
    endpoint answers 302), ``prm_resource`` (override), ``pre_registered`` (id, secret).
    Hostile switches: ``slow`` (endpoint kinds — "prm", "meta", "register", "token", "revoke" —
    that send their headers, then one byte every ``slow_interval`` s), ``echo_auth`` (the token
    endpoint refuses, echoing the request's Authorization header and body), ``huge_token`` (a
    2 MiB token answer); ``revocation`` adds an RFC 7009 endpoint (``revocations`` records it);
    ``auth_methods`` is the AS's token_endpoint_auth_methods_supported.
    """

    def __init__(self) -> None:
        self.prm_at: str | None = "header"
        self.as_path = ""
        self.as_forms = ["oauth"]
        self.issuer_override: str | None = None
        self.pkce: list[str] | None = ["S256"]
        self.dcr = True
        self.dcr_method: str | None = None
        self.cimd = False
        self.iss_mode = "good"
        self.iss_supported = True
        self.refresh = False
        self.rotate = True
        self.expires_in = 3600
        self.challenge_scope: str | None = None
        self.scopes_supported: list[str] | None = None
        self.as_scopes: list[str] | None = None
        self.required: set[str] = set()
        self.call_scope: str | None = None
        self.token_redirect = False
        self.prm_resource: str | None = None
        self.pre_registered: tuple[str, str] | None = None
        self.slow: set[str] = set()
        self.slow_interval = 1.0
        self.echo_auth = False
        self.huge_token = False
        self.revocation = False
        self.auth_methods: list[str] | None = None
        self.revocations: list[dict] = []
        self.never_grant: set[str] = set()          # scopes the AS leaves out of every token
        self.tokens: dict[str, set[str]] = {}      # access token -> scopes
        self.refresh_tokens: dict[str, set[str]] = {}
        self.codes: dict[str, dict] = {}
        self.log: list[tuple[str, str, dict]] = []   # (method, path, info)
        self.authorize_requests: list[dict] = []
        self.token_requests: list[dict] = []
        self.registrations: list[dict] = []
        self.lock = threading.Lock()
        self.counter = 0
        world = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # see _send

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802
                world.handle(self, "GET")

            def do_POST(self) -> None:  # noqa: N802
                world.handle(self, "POST")

            def do_DELETE(self) -> None:  # noqa: N802
                world.handle(self, "DELETE")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.server.handle_error = lambda *args: None  # clients that hang up are expected
        self.port = self.server.server_address[1]
        self.base = f"http://127.0.0.1:{self.port}"
        self.url = f"{self.base}/mcp"
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    @property
    def issuer(self) -> str:
        return self.base + self.as_path

    # Helpers -------------------------------------------------------------------------------

    def _trickle(self, h: BaseHTTPRequestHandler, body: bytes) -> None:
        """Slowloris: the headers at once, then the body one byte every slow_interval s."""
        h.send_response(200)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        try:
            for i in range(len(body)):
                h.wfile.write(body[i:i + 1])
                h.wfile.flush()
                time.sleep(self.slow_interval)
        except OSError:
            pass   # the client gave up: what it must do
        h.close_connection = True

    def _send(self, h: BaseHTTPRequestHandler, status: int, body: Any = None,
              headers: dict[str, str] | None = None) -> None:
        """A whole reply in one write. Written apart, the body would wait ~40 ms for the client's
        delayed ACK of the headers (Nagle's algorithm, which the handler also turns off)."""
        data = b"" if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
        h.send_response(status)
        for k, v in (headers or {}).items():
            h.send_header(k, v)
        if body is not None and not isinstance(body, bytes):
            h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(data)))
        h._headers_buffer.append(b"\r\n" + data)  # as end_headers() does, plus the body
        h.flush_headers()

    def metadata(self) -> dict:
        meta: dict[str, Any] = {
            "issuer": self.issuer_override or self.issuer,
            "authorization_endpoint": f"{self.issuer}/authorize",
            "token_endpoint": f"{self.issuer}/token",
            "response_types_supported": ["code"],
            "authorization_response_iss_parameter_supported": self.iss_supported,
        }
        if self.pkce is not None:
            meta["code_challenge_methods_supported"] = self.pkce
        if self.dcr:
            meta["registration_endpoint"] = f"{self.issuer}/register"
        if self.cimd:
            meta["client_id_metadata_document_supported"] = True
        if self.as_scopes is not None:
            meta["scopes_supported"] = self.as_scopes
        if self.revocation:
            meta["revocation_endpoint"] = f"{self.issuer}/revoke"
        if self.auth_methods is not None:
            meta["token_endpoint_auth_methods_supported"] = self.auth_methods
        return meta

    def challenge(self, error: str = "invalid_token", scope: str | None = None) -> str:
        parts = [f'error="{error}"']
        if self.prm_at == "header":
            parts.append(f'resource_metadata="{self.base}/.well-known/oauth-protected-resource/mcp"')
        scope = scope or self.challenge_scope
        if scope:
            parts.append(f'scope="{scope}"')
        return "Bearer " + ", ".join(parts)

    # Routing -------------------------------------------------------------------------------

    def handle(self, h: BaseHTTPRequestHandler, method: str) -> None:
        parts = urlsplit(h.path)
        path, query = parts.path, dict(parse_qsl(parts.query))
        length = int(h.headers.get("Content-Length") or 0)
        body = h.rfile.read(length) if length else b""
        self.log.append((method, path, {"authorization": h.headers.get("Authorization")}))
        kind = ("prm" if "oauth-protected-resource" in path else "meta" if "/.well-known/" in path
                else path.rpartition("/")[2])
        if kind in self.slow:
            return self._trickle(h, json.dumps({"x": "y" * 64}).encode())
        prm_path = "/.well-known/oauth-protected-resource"
        if path in (prm_path + "/mcp", prm_path):
            where = "root" if path == prm_path else "path"
            if self.prm_at in ("header", "path") and where == "path" or self.prm_at == where:
                return self._send(h, 200, {"resource": self.prm_resource or self.url,
                                           "authorization_servers": [self.issuer],
                                           **({"scopes_supported": self.scopes_supported}
                                              if self.scopes_supported else {})})
            return self._send(h, 404, {"error": "not found"})
        forms = {"oauth": f"/.well-known/oauth-authorization-server{self.as_path}",
                 "oidc": f"/.well-known/openid-configuration{self.as_path}",
                 "oidc-append": f"{self.as_path}/.well-known/openid-configuration"}
        if path in forms.values():
            form = next(k for k, v in forms.items() if v == path)
            if form in self.as_forms:
                return self._send(h, 200, self.metadata())
            return self._send(h, 404, {"error": "not found"})
        if path == f"{self.as_path}/authorize":
            return self.authorize(h, query)
        if path == f"{self.as_path}/token" and method == "POST":
            return self.token(h, body)
        if path == f"{self.as_path}/revoke" and method == "POST" and self.revocation:
            self.revocations.append({**dict(parse_qsl(body.decode())), "_basic": h.headers.get("Authorization")})
            return self._send(h, 200, b"")
        if path == f"{self.as_path}/register" and method == "POST":
            request = json.loads(body)
            self.registrations.append(request)
            answer = {**request, "client_id": f"dcr-client-{len(self.registrations)}"}
            if self.dcr_method:
                answer.update(token_endpoint_auth_method=self.dcr_method, client_secret="dcr-secret")
            return self._send(h, 201, answer)
        if path == "/mcp":
            return self.mcp(h, method, body)
        return self._send(h, 404, {"error": "not found"})

    def authorize(self, h: BaseHTTPRequestHandler, query: dict) -> None:
        self.authorize_requests.append(query)
        with self.lock:
            self.counter += 1
            code = f"code-{self.counter}"
        self.codes[code] = query
        params = {"code": code, "state": query.get("state", "")}
        iss = {"good": self.issuer, "wrong": "https://evil.example.com",
               "normalized": self.issuer + "/"}.get(self.iss_mode)
        if iss:
            params["iss"] = iss
        self._send(h, 302, b"", {"Location": f"{query['redirect_uri']}?{urlencode(params)}"})

    def token(self, h: BaseHTTPRequestHandler, body: bytes) -> None:
        form = dict(parse_qsl(body.decode()))
        self.token_requests.append({**form, "_basic": h.headers.get("Authorization")})
        if self.echo_auth:   # a careless AS: the credentials come back in the error
            posted = next((p for p in body.decode().split("&") if p.startswith("client_secret=")), "")
            return self._send(h, 401, {"error": "invalid_client", "error_description":
                                       f"bad {h.headers.get('Authorization')} {posted}"})
        if self.huge_token:
            return self._send(h, 200, {"access_token": "a" * 64, "padding": "p" * (2 << 20)})
        if self.token_redirect:
            return self._send(h, 302, b"", {"Location": f"{self.base}/elsewhere"})
        if self.pre_registered:
            want = "Basic " + base64.b64encode(":".join(self.pre_registered).encode()).decode()
            if h.headers.get("Authorization") != want:
                return self._send(h, 401, {"error": "invalid_client"})
        if form.get("grant_type") == "client_credentials":
            scopes = set((form.get("scope") or "").split())
        elif form.get("grant_type") == "refresh_token":
            scopes = self.refresh_tokens.pop(form.get("refresh_token", ""), None) \
                if self.rotate else self.refresh_tokens.get(form.get("refresh_token", ""))
            if scopes is None:
                return self._send(h, 400, {"error": "invalid_grant"})
        else:
            request = self.codes.pop(form.get("code", ""), None)
            if request is None:
                return self._send(h, 400, {"error": "invalid_grant"})
            digest = hashlib.sha256(form.get("code_verifier", "").encode()).digest()
            if base64.urlsafe_b64encode(digest).rstrip(b"=").decode() != request.get("code_challenge"):
                return self._send(h, 400, {"error": "invalid_grant", "error_description": "PKCE"})
            scopes = set((request.get("scope") or "").split()) - self.never_grant
        with self.lock:
            self.counter += 1
            access = f"access-{self.counter}"
        self.tokens[access] = scopes
        answer: dict[str, Any] = {"access_token": access, "token_type": "Bearer", "expires_in": self.expires_in}
        if self.refresh and (self.rotate or form.get("grant_type") != "refresh_token"):
            answer["refresh_token"] = f"refresh-{self.counter}"
            self.refresh_tokens[answer["refresh_token"]] = scopes
        self._send(h, 200, answer)

    def mcp(self, h: BaseHTTPRequestHandler, method: str, body: bytes) -> None:
        auth = h.headers.get("Authorization") or ""
        token = auth[7:] if auth.startswith("Bearer ") else None
        if token not in self.tokens or not self.required <= self.tokens[token]:
            return self._send(h, 401, {"error": "unauthorized"}, {"WWW-Authenticate": self.challenge()})
        if method != "POST":
            return self._send(h, 405, b"")
        message = json.loads(body)
        rid, name = message.get("id"), message.get("method")
        if rid is None:
            return self._send(h, 202, b"")
        if name == "tools/call" and self.call_scope and not set(self.call_scope.split()) <= self.tokens[token]:
            return self._send(h, 403, {"error": "forbidden"}, {
                "WWW-Authenticate": self.challenge("insufficient_scope", self.call_scope)})
        tag = {"resultType": "complete"}
        if name == "server/discover":
            result = {**tag, "supportedVersions": [MODERN], "capabilities": {"tools": {}},
                      "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "auth-fake", "version": "1"}}}
        elif name == "tools/list":
            result = {**tag, "tools": [{"name": "echo", "inputSchema": {"type": "object"}}]}
        elif name == "tools/call":
            result = {**tag, "content": [{"type": "text", "text": "ok"}]}
        else:
            result = {**tag}
        self._send(h, 200, {"jsonrpc": "2.0", "id": rid, "result": result})
