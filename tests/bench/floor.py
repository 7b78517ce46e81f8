#!/usr/bin/env python3
"""The floor: a bare synchronous stdlib loop doing the same wire work as an MCP client.

No asyncio, no error handling beyond "stop", no timeouts: one JSON line written and flushed,
one buffered ``readline()`` per reply, the same messages mcpmini sends (modern ``_meta``,
``progressToken``). Whatever a real client costs above this is its own overhead; the server's
and the interpreter's share is in here too. bench.py runs it like the client scripts:

    python floor.py MODE ERA N TARGET...

MODE: oneshot (handshake, list, call, exit) | seq | conc | big (TARGET = server argv) · http-seq |
http-big | http-forecast | http-forecast-sse (TARGET = URL; http-forecast calls get_forecast of
examples/weather_http_server.py, which answers with SSE when the Accept header prefers it: -sse asks so)
ERA: modern | legacy. N: calls (seq, conc, http-seq, http-forecast) or bytes (big, http-big).
Prints one JSON line: {"elapsed": wall seconds of the measured part, "cpu": this process's CPU
seconds in it, "maxrss_kb": peak RSS of this process}.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import threading
import time

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
META = {"io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "floor", "version": "0"}}


def request(rid: int, era: str, method: str, params: dict | None = None) -> dict:
    """One JSON-RPC request as mcpmini would shape it in `era`."""
    params = dict(params or {})
    meta = dict(META) if era == "modern" else {}
    if method == "tools/call":
        meta["progressToken"] = rid
    if meta:
        params["_meta"] = meta
    return {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}


def encode(message: dict) -> bytes:
    return json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


class Stdio:
    """A server process over pipes; Python's buffered readline does the line splitting."""

    def __init__(self, argv: list[str]) -> None:
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL)
        self.w, self.r, self.next_id = self.proc.stdin, self.proc.stdout, 0

    def rpc(self, era: str, method: str, params: dict | None = None) -> dict:
        self.next_id += 1
        self.w.write(encode(request(self.next_id, era, method, params)))
        self.w.flush()
        while True:
            message = json.loads(self.r.readline())
            if message.get("id") == self.next_id:
                if "result" not in message:
                    raise SystemExit(f"floor: {method} failed: {message}")
                return message["result"]

    def handshake(self, era: str) -> None:
        if era == "modern":
            self.rpc(era, "server/discover")
        else:
            self.rpc(era, "initialize", {"protocolVersion": LEGACY, "capabilities": {},
                                         "clientInfo": {"name": "floor", "version": "0"}})
            self.w.write(encode({"jsonrpc": "2.0", "method": "notifications/initialized"}))

    def close(self) -> None:
        self.w.close()
        self.proc.wait()


def text_of(result: dict) -> str:
    return result["content"][0]["text"]


def cpu_seconds() -> float:
    """User + system CPU of this process (all threads): the client's own work, whatever the load."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def stdio_mode(mode: str, era: str, n: int, argv: list[str]) -> tuple[float, float]:
    server = Stdio(argv)
    if mode == "oneshot":  # the whole process is timed by bench.py; this is the work
        server.handshake(era)
        assert any(t["name"] == "echo" for t in server.rpc(era, "tools/list")["tools"])
        assert text_of(server.rpc(era, "tools/call", {"name": "echo", "arguments": {"text": "hi"}})) == "hi"
        server.close()
        return 0.0, 0.0
    server.handshake(era)
    start, cpu_start = time.perf_counter(), cpu_seconds()
    if mode == "seq":
        for i in range(n):
            text = f"m{i}"
            assert text_of(server.rpc(era, "tools/call", {"name": "echo", "arguments": {"text": text}})) == text
    elif mode == "conc":
        # Pipelined: a writer thread sends every request while this thread reads the replies
        # (writing all first could deadlock once both pipes are full).
        first = server.next_id + 1
        lines = [encode(request(first + i, era, "tools/call", {"name": "echo", "arguments": {"text": f"m{i}"}}))
                 for i in range(n)]

        def write() -> None:
            for line in lines:
                server.w.write(line)
            server.w.flush()

        writer = threading.Thread(target=write)
        writer.start()
        seen = 0
        while seen < n:
            message = json.loads(server.r.readline())
            if "id" in message:
                assert text_of(message["result"]) == f"m{message['id'] - first}"
                seen += 1
        writer.join()
    elif mode == "big":
        assert len(text_of(server.rpc(era, "tools/call", {"name": "big", "arguments": {"n": n}}))) == n
    else:
        raise SystemExit(f"floor: unknown mode {mode}")
    elapsed, cpu = time.perf_counter() - start, cpu_seconds() - cpu_start
    server.close()
    return elapsed, cpu


class HTTP:
    """Streamable HTTP over one keep-alive http.client connection; JSON or SSE replies."""

    def __init__(self, url: str, era: str, accept: str = "application/json, text/event-stream") -> None:
        import http.client
        import urllib.parse
        parts = urllib.parse.urlsplit(url)
        self.conn = http.client.HTTPConnection(parts.hostname, parts.port)
        self.path, self.era, self.next_id, self.session, self.accept = parts.path, era, 0, None, accept
        self.version = MODERN if era == "modern" else None

    def post(self, message: dict) -> dict | None:
        headers = {"Content-Type": "application/json", "Accept": self.accept}
        if self.version:
            headers["MCP-Protocol-Version"] = self.version
        if self.session:
            headers["Mcp-Session-Id"] = self.session
        if self.era == "modern":
            headers["Mcp-Method"] = message["method"]
            if message["method"] == "tools/call":
                headers["Mcp-Name"] = message["params"]["name"]
        self.conn.request("POST", self.path, encode(message)[:-1], headers)
        reply = self.conn.getresponse()
        body = reply.read()
        self.session = reply.getheader("mcp-session-id") or self.session
        if reply.status == 202:
            return None
        if reply.status != 200:
            raise SystemExit(f"floor: HTTP {reply.status}: {body[:300]!r}")
        if reply.getheader("content-type", "").startswith("text/event-stream"):
            for event in body.split(b"\n\n"):  # the reply is the event whose data has our id
                data = b"\n".join(line[5:].lstrip(b" ") for line in event.split(b"\n")
                                  if line.startswith(b"data:"))
                if data:
                    message_in = json.loads(data)
                    if message_in.get("id") == message["id"]:
                        return message_in["result"]
            raise SystemExit("floor: no reply in the SSE stream")
        return json.loads(body)["result"]

    def rpc(self, method: str, params: dict | None = None) -> dict:
        self.next_id += 1
        result = self.post(request(self.next_id, self.era, method, params))
        assert result is not None
        return result

    def handshake(self) -> None:
        if self.era == "modern":
            self.rpc("server/discover")
        else:
            result = self.rpc("initialize", {"protocolVersion": LEGACY, "capabilities": {},
                                             "clientInfo": {"name": "floor", "version": "0"}})
            self.version = result["protocolVersion"]
            self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})


def http_mode(mode: str, era: str, n: int, url: str) -> tuple[float, float]:
    client = HTTP(url, era, *(["text/event-stream, application/json"] if mode.endswith("-sse") else []))
    client.handshake()
    start, cpu_start = time.perf_counter(), cpu_seconds()
    if mode == "http-seq":
        for i in range(n):
            text = f"m{i}"
            assert text_of(client.rpc("tools/call", {"name": "echo", "arguments": {"text": text}})) == text
    elif mode == "http-big":
        assert len(text_of(client.rpc("tools/call", {"name": "big", "arguments": {"n": n}}))) == n
    elif mode in ("http-forecast", "http-forecast-sse"):
        for _ in range(n):
            assert "Hangzhou" in text_of(client.rpc("tools/call", {"name": "get_forecast",
                                                                    "arguments": {"city": "Hangzhou"}}))
    else:
        raise SystemExit(f"floor: unknown mode {mode}")
    return time.perf_counter() - start, cpu_seconds() - cpu_start


def main(argv: list[str]) -> int:
    mode, era, n, target = argv[0], argv[1], int(argv[2]), argv[3:]
    if mode.startswith("http-"):
        elapsed, cpu = http_mode(mode, era, n, target[0])
    else:
        elapsed, cpu = stdio_mode(mode, era, n, target)
    maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"elapsed": elapsed, "cpu": cpu, "maxrss_kb": maxrss}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
