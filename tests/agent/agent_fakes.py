#!/usr/bin/env python3
"""Fakes for the agent tests (stdlib only).

In-process: :class:`ScriptedModel`, an OpenAI-compatible Chat Completions server on 127.0.0.1
that plays a script — a list of replies, one per request — and records every request (path,
headers, parsed body). Replies are built with :func:`answer`, :func:`calls`, :func:`raw`,
:func:`sse` and :func:`empty_stream`; ``answer``/``calls`` are sent streamed or as one JSON body,
as the request asks. ``rules`` (:func:`llama_cpp_python`) play a real server's refusals first.

As a program: ``python3 agent_fakes.py CONFIG_JSON`` is a small legacy-era MCP stdio server.
CONFIG_JSON: ``{"tools": [{"name", "inputSchema"?, "does"?}], "instructions"?, "record"?,
"exit_after_calls"?}``. What a tool ``does``: ``echo`` (default: its name and arguments as
JSON), ``error`` (isError), ``rpc_error`` (JSON-RPC -32000), ``big`` (``size`` characters),
``slow`` (sleeps ``seconds``), ``pair`` (answers only once two ``pair`` calls are in flight, or
"alone" after 5 s), ``env`` (the names of its environment variables), ``weather`` (a forecast).
Every line received goes to ``record`` (JSON lines); a process start writes ``{"_start": pid}``.
``exit_after_calls`` N: the process exits right after answering its N-th tools/call;
``ignore_sigterm``: only SIGKILL ends it.
"""
from __future__ import annotations

import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable

JSON = dict[str, Any]

# -- Scripted model (in-process) -----------------------------------------------------------


def answer(text: str, *, finish: str = "stop", pieces: int = 3, usage: JSON | None = None,
           reasoning: str | None = None) -> JSON:
    """A reply with text; streamed in ``pieces`` content chunks."""
    return {"kind": "answer", "text": text, "finish": finish, "pieces": pieces, "usage": usage,
            "reasoning": reasoning}


def calls(*items: tuple[str, Any] | tuple[str, Any, str], finish: str = "tool_calls",
          text: str | None = None, split: int = 3) -> JSON:
    """A reply with tool calls ``(name, arguments[, id])``; arguments are a JSON string as
    given, or a dict sent as an object. Streamed per call: id+name with arguments "", then the
    arguments in ``split`` fragments whose id is "" (as DashScope sends)."""
    return {"kind": "calls", "calls": [list(i) for i in items], "finish": finish, "text": text,
            "split": split}


def raw(status: int, body: Any = b"", headers: dict[str, str] | None = None, *,
        delay: float = 0.0) -> JSON:
    """Exactly this status, body (bytes, str or JSON) and headers, after ``delay`` seconds."""
    if not isinstance(body, (bytes, str)):
        body = json.dumps(body)
        headers = {"Content-Type": "application/json", **(headers or {})}
    return {"kind": "raw", "status": status,
            "body": body.encode() if isinstance(body, str) else body, "headers": headers or {},
            "delay": delay}


def sse(*events: Any, done: bool = True, interval: float = 0.0) -> JSON:
    """A 200 event stream: each item a dict (sent as ``data: JSON``) or a str (sent verbatim,
    e.g. ": keep-alive" or "event: error\\ndata: {...}"); ``[DONE]`` at the end if ``done``;
    ``interval`` seconds between events."""
    return {"kind": "sse", "events": list(events), "done": done, "interval": interval}


def empty_stream() -> JSON:
    """HTTP 200, text/event-stream, and not one event (llama-cpp-python with tools)."""
    return sse(done=False)


# What llama-cpp-python 0.3.36 (chatml-function-calling) answered to raw requests; see
# tests/interop/test_interop_model.py. Each a raw() reply, or None for "as scripted".
PYDANTIC_CONTENT_NULL = (
    "7 validation errors:\n  {'type': 'literal_error', 'loc': ('body', 'messages', 2, "
    "'ChatCompletionRequestSystemMessage', 'role'), 'msg': \"Input should be 'system'\", 'input': "
    "'assistant', 'ctx': {'expected': \"'system'\"}}\n  {'type': 'string_type', 'loc': ('body', "
    "'messages', 2, 'ChatCompletionRequestAssistantMessage', 'content'), 'msg': 'Input should be a "
    "valid string', 'input': None}\n")


def llama_cpp_python(body: JSON) -> JSON | None:
    """The server's refusals: an assistant message with tool_calls and content null (pydantic)
    or without content (its Jinja template) is an HTTP 500; tools with tool_choice other than
    "none" and stream: true give an empty 200 stream; "required" unstreamed is a 500 with an
    empty message (an AssertionError); an overlong prompt is a 400."""
    def error(status: int, message: str, kind: str = "internal_server_error", code: Any = None) -> JSON:
        return raw(status, {"error": {"message": message, "type": kind, "param": None, "code": code}})
    for m in body.get("messages") or []:
        if m.get("role") == "assistant" and m.get("tool_calls"):
            if "content" not in m:
                return error(500, "'dict object' has no attribute 'content'")
            if not isinstance(m["content"], str):
                return error(500, PYDANTIC_CONTENT_NULL)
    if len(json.dumps(body.get("messages"))) > 20_000:
        return error(400, "This model's maximum context length is 1024 tokens. However, you requested "
                     "5086 tokens (5086 in the messages, None in the completion). Please reduce the "
                     "length of the messages or completion.", "invalid_request_error", "context_length_exceeded")
    if body.get("tools") and body.get("tool_choice", "none") != "none":
        if body.get("stream"):
            return empty_stream()
        if body["tool_choice"] == "required":
            return error(500, "")
    return None


def chunk(delta: JSON | None = None, finish: str | None = None, **extra: Any) -> JSON:
    """One chat.completion.chunk with choice 0."""
    out: JSON = {"id": "chatcmpl-t", "object": "chat.completion.chunk", "created": 1,
                 "model": "m", "choices": [{"index": 0, "delta": delta or {}, "finish_reason": finish}]}
    out.update(extra)
    return out


def _pieces(text: str, count: int) -> list[str]:
    size = max(1, -(-len(text) // max(1, count)))
    return [text[i:i + size] for i in range(0, len(text), size)] or [""]


class ScriptedModel:
    """The scripted model server. ``base_url`` ends in /v1; ``requests`` are the recordings
    (``{"path", "headers" (lower-case names), "body"}``); ``api_key`` makes it demand a key;
    ``rules(body)`` (e.g. :func:`llama_cpp_python`) may answer a request instead of the script."""

    def __init__(self, script: list[JSON], *, api_key: str | None = None,
                 rules: Callable[[JSON], JSON | None] | None = None) -> None:
        self.script = list(script)
        self.rules = rules
        self.requests: list[JSON] = []
        self.api_key = api_key
        self.lock = threading.Lock()
        model = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # see _write

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                data = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                try:
                    body = json.loads(data)
                except ValueError:
                    body = {"_unparsed": data.decode("utf-8", "replace")}
                with model.lock:
                    model.requests.append({"path": self.path, "body": body,
                                           "headers": {k.lower(): v for k, v in self.headers.items()}})
                    reply = model.rules(body) if model.rules and isinstance(body, dict) else None
                    if reply is None:
                        reply = model.script.pop(0) if model.script else raw(
                            500, {"error": {"message": "the test script has no more replies"}})
                if model.api_key and self.headers.get("Authorization") != f"Bearer {model.api_key}":
                    reply = raw(401, {"error": {"message": "Incorrect API key provided.",
                                                "type": "invalid_request_error", "code": "invalid_api_key"}})
                model._send(self, body if isinstance(body, dict) else {}, reply)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self) -> ScriptedModel:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()

    @property
    def bodies(self) -> list[JSON]:
        return [r["body"] for r in self.requests]

    # Sending -------------------------------------------------------------------------------

    def _send(self, h: BaseHTTPRequestHandler, body: JSON, reply: JSON) -> None:
        kind = reply["kind"]
        if kind == "raw":
            time.sleep(reply["delay"])
            return self._write(h, reply["status"], reply["body"], reply["headers"])
        if kind == "sse":
            lines = [e if isinstance(e, str) else "data: " + json.dumps(e) for e in reply["events"]]
            if reply["done"]:
                lines.append("data: [DONE]")
            return self._stream(h, lines, reply["interval"])
        if body.get("stream"):
            lines = ["data: " + json.dumps(c, ensure_ascii=False) for c in self._chunks(reply)]
            return self._stream(h, lines + ["data: [DONE]"], 0.0)
        return self._write(h, 200, json.dumps(self._completion(reply)).encode(),
                           {"Content-Type": "application/json"})

    @staticmethod
    def _write(h: BaseHTTPRequestHandler, status: int, data: bytes, headers: dict[str, str]) -> None:
        """A whole reply in one write. Written apart, the body would wait ~40 ms for the client's
        delayed ACK of the headers (Nagle's algorithm, which the handler also turns off)."""
        h.send_response(status)
        for k, v in headers.items():
            h.send_header(k, v)
        h.send_header("Content-Length", str(len(data)))
        h._headers_buffer.append(b"\r\n" + data)  # as end_headers() does, plus the body
        h.flush_headers()

    @staticmethod
    def _stream(h: BaseHTTPRequestHandler, lines: list[str], interval: float) -> None:
        """Event by event, no Content-Length: the stream ends when the connection closes."""
        h.send_response(200)
        h.send_header("Content-Type", "text/event-stream")
        h.send_header("Connection", "close")
        h.end_headers()
        h.close_connection = True
        try:
            for line in lines:
                h.wfile.write((line + "\n\n").encode())
                h.wfile.flush()
                time.sleep(interval)
        except OSError:   # the client went away (a timeout test)
            pass

    @staticmethod
    def _completion(reply: JSON) -> JSON:
        message: JSON = {"role": "assistant", "content": reply.get("text"), "refusal": None}
        if reply["kind"] == "calls":
            message["tool_calls"] = [
                {"id": c[2] if len(c) > 2 else f"call_{i}", "type": "function",
                 "function": {"name": c[0], "arguments": c[1]}} for i, c in enumerate(reply["calls"])]
        if reply.get("reasoning"):
            message["reasoning_content"] = reply["reasoning"]
        out = {"id": "chatcmpl-t", "object": "chat.completion", "created": 1, "model": "m",
               "choices": [{"index": 0, "message": message, "finish_reason": reply["finish"]}]}
        if reply.get("usage"):
            out["usage"] = reply["usage"]
        return out

    @staticmethod
    def _chunks(reply: JSON) -> list[JSON]:
        out = [chunk({"role": "assistant", "content": ""})]
        if reply.get("reasoning"):
            out += [chunk({"reasoning_content": p}) for p in _pieces(reply["reasoning"], 2)]
        if reply.get("text"):
            out += [chunk({"content": p}) for p in _pieces(reply["text"], reply.get("pieces", 3))]
        for i, c in enumerate(reply.get("calls", [])):
            name, args = c[0], c[1]
            cid = c[2] if len(c) > 2 else f"call_{i}"
            if isinstance(args, dict):   # an object, whole, in the first chunk
                out.append(chunk({"tool_calls": [{"index": i, "id": cid, "type": "function",
                                                  "function": {"name": name, "arguments": args}}]}))
                continue
            out.append(chunk({"tool_calls": [{"index": i, "id": cid, "type": "function",
                                              "function": {"name": name, "arguments": ""}}]}))
            out += [chunk({"tool_calls": [{"index": i, "id": "", "function": {"arguments": p}}]})
                    for p in _pieces(args, reply.get("split", 3))]
        out.append(chunk({}, reply["finish"]))
        if reply.get("usage"):
            out.append({"id": "chatcmpl-t", "object": "chat.completion.chunk", "choices": [],
                        "usage": reply["usage"]})
        return out


# -- Fake MCP stdio server (a program) --------------------------------------------------------

CFG: JSON = {}
WRITE = threading.Lock()
STATE: JSON = {"calls": 0, "pair_waiting": 0, "pair_event": threading.Event()}


def _record(obj: Any) -> None:
    if CFG.get("record"):
        with open(CFG["record"], "a", encoding="utf-8") as f:
            f.write(json.dumps(obj) + "\n")


def _send(msg: JSON) -> None:
    with WRITE:
        sys.stdout.write(json.dumps(msg) + "\n")
        sys.stdout.flush()


def _tool_result(tool: JSON, args: JSON) -> JSON:
    does = tool.get("does", "echo")
    if does == "error":
        return {"content": [{"type": "text", "text": "the city is not known"}], "isError": True}
    if does == "big":
        return {"content": [{"type": "text", "text": "x" * int(tool.get("size", 1000))}]}
    if does == "slow":
        time.sleep(float(tool.get("seconds", 30)))
    if does == "env":
        return {"content": [{"type": "text", "text": json.dumps(sorted(os.environ))}]}
    if does == "weather":
        return {"content": [{"type": "text", "text": f"{args.get('city')}: light rain"}]}
    if does == "pair":
        STATE["pair_waiting"] += 1
        if STATE["pair_waiting"] >= 2:
            STATE["pair_event"].set()
        together = STATE["pair_event"].wait(5)
        return {"content": [{"type": "text", "text": "together" if together else "alone"}]}
    return {"content": [{"type": "text", "text": json.dumps({"tool": tool["name"], "arguments": args})}]}


def _call(rid: Any, params: JSON) -> None:
    tools = {t["name"]: t for t in CFG.get("tools", [])}
    tool = tools.get(params.get("name"))
    if tool is None:
        _send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32602, "message": "unknown tool"}})
        return
    if tool.get("does") == "rpc_error":
        _send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32000, "message": "database is down"}})
    else:
        _send({"jsonrpc": "2.0", "id": rid, "result": _tool_result(tool, params.get("arguments") or {})})
    STATE["calls"] += 1
    if CFG.get("exit_after_calls") and STATE["calls"] >= CFG["exit_after_calls"]:
        os.close(1)   # its output ends with the answer (the kernel's exit may take a while)
        os._exit(7)


def _handle(msg: JSON) -> None:
    method, rid = msg.get("method"), msg.get("id")
    if rid is None:
        return
    if method == "initialize":
        result: JSON = {"protocolVersion": msg["params"]["protocolVersion"],
                        "capabilities": {"tools": {}}, "serverInfo": {"name": "agent-fake", "version": "1"}}
        if CFG.get("instructions"):
            result["instructions"] = CFG["instructions"]
        _send({"jsonrpc": "2.0", "id": rid, "result": result})
    elif method == "tools/list":
        tools = [{k: v for k, v in t.items() if k not in ("does", "size", "seconds")}
                 for t in CFG.get("tools", [])]
        for t in tools:
            t.setdefault("inputSchema", {"type": "object"})
        _send({"jsonrpc": "2.0", "id": rid, "result": {"tools": tools}})
    elif method == "tools/call":
        threading.Thread(target=_call, args=(rid, msg.get("params") or {}), daemon=True).start()
    elif method == "ping":
        _send({"jsonrpc": "2.0", "id": rid, "result": {}})
    else:   # server/discover too: a legacy-only server
        _send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "Method not found"}})


def main() -> None:
    CFG.update(json.loads(sys.argv[1]))
    if CFG.get("ignore_sigterm"):   # lives until SIGKILL, so it reads what was sent before
        import signal
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    _record({"_start": os.getpid()})
    for line in sys.stdin:
        if not line.strip():
            continue
        msg = json.loads(line)
        _record(msg)
        if isinstance(msg, dict):
            _handle(msg)


if __name__ == "__main__":
    main()
