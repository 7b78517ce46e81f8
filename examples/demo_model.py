#!/usr/bin/env python3
"""A scripted stand-in for a real model, served over the OpenAI-compatible Chat Completions API.

    This is NOT a language model. It follows a fixed script so the weather examples
    (and tests) can run offline, with no API key. Point mcpmini at a real model for
    real answers.

Run:    python3 demo_model.py [--port N] [--api-key KEY]
It prints its base URL, e.g. http://127.0.0.1:PORT/v1, on stdout (a free port by default);
logs go to stderr. Endpoints: POST /v1/chat/completions, GET /v1/models.

The script, for POST /v1/chat/completions:
1. The last message is from the user, and a tool whose name contains "get_forecast" is
   offered: if the question names a city (English or Chinese, e.g. Hangzhou or 杭州), reply
   with a tool call get_forecast({"city": ...}); if it names none, ask which city.
2. The last message is a tool result: answer from its text. Rain words (rain, shower, storm,
   雨...) mean "take an umbrella". The answer is in the language of the question: a
   Chinese question gets a Chinese answer.
Both "stream": true (Server-Sent Events, the tool call split over several chunks) and plain
JSON replies are supported. A malformed request gets a 400 with an OpenAI-style error body,
e.g. for "tools": [] or a tool message that answers no tool call, so client bugs show up here
the way they would with a real provider.
"""
from __future__ import annotations

import argparse
import json
import logging
import re
import sys
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

JSON = dict[str, Any]
MODEL = "demo-weather-model"
ROLES = ("system", "developer", "user", "assistant", "tool")
FUNCTION_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")  # what OpenAI accepts as a function name
RAIN_WORDS = ("rain", "shower", "storm", "drizzle", "thunder", "雨")

# Cities the "model" recognises in a question: English name -> Chinese name. Paris is here
# but not in the weather server, to show what an unknown city looks like.
CITIES = {"Hangzhou": "杭州", "Beijing": "北京", "Shanghai": "上海", "Guangzhou": "广州",
          "London": "伦敦", "New York": "纽约", "Tokyo": "东京", "Paris": "巴黎"}

log = logging.getLogger("demo_model")


class BadRequest(Exception):
    """A request the real API would refuse with 400."""

    def __init__(self, message: str, param: str | None = None) -> None:
        super().__init__(message)
        self.param = param


# -- The script ----------------------------------------------------------------------
def is_chinese(text: str) -> bool:
    return any("\u4e00" <= ch <= "\u9fff" for ch in text)


def text_of(content: Any) -> str:
    """Message content as text: a string, or the text parts of a list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def find_city(question: str) -> str | None:
    """A city named in the question, in the language it was asked in, or None."""
    for english, chinese in CITIES.items():
        if chinese in question:
            return chinese
        if re.search(rf"\b{re.escape(english)}\b", question, re.IGNORECASE):
            return english
    # Not a city we know: take a capitalised name after "in"/"for", e.g. "rain in Atlantis?"
    match = re.search(r"\b(?:in|for|at)\s+([A-Z][\w-]*(?:\s+[A-Z][\w-]*)*)", question)
    return match.group(1) if match else None


def answer_from_forecast(forecast: str, question: str, city: str) -> str:
    """The final answer, given the tool's text (the script's only 'reasoning')."""
    zh = is_chinese(question)
    lower = forecast.lower()
    if lower.startswith("error") or "unknown city" in lower or "not found" in lower:
        return (f"抱歉，我没能查到{city}的天气预报：{forecast}" if zh
                else f"Sorry, I could not get a forecast for {city}: {forecast}")
    rainy = "no umbrella" not in lower and any(word in lower for word in RAIN_WORDS)
    if zh:
        advice = f"建议带伞：{city}明天有雨。" if rainy else f"不用带伞：{city}明天应该不会下雨。"
        return f"{advice}（预报：{forecast}）"
    advice = (f"Yes, take an umbrella: rain is expected in {city} tomorrow." if rainy
              else f"No umbrella needed: no rain is expected in {city} tomorrow.")
    return f"{advice} (Forecast: {forecast})"


def last_question(messages: list[JSON]) -> str:
    for message in reversed(messages):
        if message.get("role") == "user":
            return text_of(message.get("content"))
    return ""


def last_tool_city(messages: list[JSON]) -> str | None:
    """The city argument of the most recent tool call in the history."""
    for message in reversed(messages):
        for call in reversed(message.get("tool_calls") or []):
            try:
                city = json.loads(call["function"]["arguments"]).get("city")
            except (KeyError, TypeError, ValueError, AttributeError):
                continue
            if isinstance(city, str):
                return city
    return None


def script(body: JSON) -> JSON:
    """What the 'model' says next: {"content": str} or {"tool_call": {"name", "arguments"}}."""
    messages = body["messages"]
    question = last_question(messages)
    zh = is_chinese(question)
    last = messages[-1]
    if last["role"] == "tool":
        # Several tool messages may follow one assistant turn: read them all.
        results = []
        for message in reversed(messages):
            if message.get("role") != "tool":
                break
            results.insert(0, text_of(message.get("content")))
        city = last_tool_city(messages) or ("那里" if zh else "that city")
        return {"content": answer_from_forecast("\n".join(results), question, city)}
    if last["role"] != "user":
        return {"content": "好的。" if zh else "OK."}
    tool_names = [t["function"]["name"] for t in body.get("tools") or []]
    forecast_tool = next((name for name in tool_names if "get_forecast" in name), None)
    city = find_city(question)
    if city is None:
        return {"content": "你想查哪个城市的天气？" if zh else "Which city would you like the forecast for?"}
    if forecast_tool is None:
        return {"content": ("我没有可用的天气工具，无法查询天气。" if zh else
                            "I have no weather tool available, so I cannot look up the forecast.")}
    return {"tool_call": {"name": forecast_tool,
                          "arguments": json.dumps({"city": city}, ensure_ascii=False)}}


# -- Request checks (a few of the rules real providers enforce) ---------------------
def validate(body: Any) -> None:
    """Raise BadRequest for a request a real provider would refuse."""
    if not isinstance(body, dict):
        raise BadRequest("The request body must be a JSON object.")
    if not isinstance(body.get("model"), str) or not body["model"]:
        raise BadRequest("You must provide a model parameter.", "model")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise BadRequest("'messages' must be a non-empty array.", "messages")
    if "tools" in body:
        _validate_tools(body["tools"])
    elif "tool_choice" in body:
        raise BadRequest("'tool_choice' is only allowed when 'tools' are specified.", "tool_choice")
    if "stream_options" in body and not body.get("stream"):
        raise BadRequest("The 'stream_options' parameter is only allowed when 'stream' is enabled.",
                         "stream_options")
    _validate_messages(messages)


def _validate_tools(tools: Any) -> None:
    if not isinstance(tools, list) or not tools:
        raise BadRequest("[] is too short - 'tools'", "tools")  # OpenAI's words for "tools": []
    for i, tool in enumerate(tools):
        function = tool.get("function") if isinstance(tool, dict) else None
        if not isinstance(function, dict) or tool.get("type") != "function":
            raise BadRequest(f"tools[{i}] must be {{\"type\": \"function\", \"function\": {{...}}}}.",
                             f"tools[{i}]")
        if not FUNCTION_NAME.fullmatch(str(function.get("name", ""))):
            raise BadRequest(f"Invalid 'tools[{i}].function.name': string does not match pattern "
                             "'^[a-zA-Z0-9_-]{1,64}$'.", f"tools[{i}].function.name")
        parameters = function.get("parameters")
        if parameters is not None and (not isinstance(parameters, dict) or parameters.get("type") != "object"):
            raise BadRequest(f"Invalid schema for function '{function['name']}': schema must be a JSON "
                             "Schema of 'type: \"object\"'.", f"tools[{i}].function.parameters")


def _validate_messages(messages: list[Any]) -> None:
    waiting: set[str] = set()  # tool_call ids that still need their tool message
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") not in ROLES:
            raise BadRequest(f"messages[{i}] needs a role, one of {', '.join(ROLES)}.", f"messages[{i}].role")
        role, content = message["role"], message.get("content")
        if waiting and role != "tool":
            break  # reported below
        if role == "tool":
            call_id = message.get("tool_call_id")
            if call_id not in waiting:
                raise BadRequest(f"Invalid parameter: messages[{i}] with role 'tool' must be a response to "
                                 "a preceding message with 'tool_calls'.", f"messages[{i}].tool_call_id")
            waiting.discard(call_id)
            if not isinstance(content, (str, list)):
                raise BadRequest(f"messages[{i}].content must be a string.", f"messages[{i}].content")
        elif role == "assistant" and message.get("tool_calls"):
            if not isinstance(message["tool_calls"], list):
                raise BadRequest(f"messages[{i}].tool_calls must be an array.", f"messages[{i}].tool_calls")
            for j, call in enumerate(message["tool_calls"]):
                waiting.add(_checked_tool_call(call, f"messages[{i}].tool_calls[{j}]"))
        elif not isinstance(content, (str, list)):
            # null content is only allowed on an assistant message with tool_calls
            raise BadRequest(f"Invalid type for 'messages[{i}].content': expected a string, got "
                             f"{type(content).__name__ if content is not None else 'null'}.",
                             f"messages[{i}].content")
    if waiting:
        raise BadRequest("An assistant message with 'tool_calls' must be followed by tool messages "
                         "responding to each 'tool_call_id'. The following tool_call_ids did not have "
                         f"response messages: {', '.join(sorted(waiting))}", "messages")


def _checked_tool_call(call: Any, where: str) -> str:
    """Check one tool call from the history; return its id."""
    function = call.get("function") if isinstance(call, dict) else None
    if not isinstance(function, dict) or not isinstance(call.get("id"), str) or not call["id"]:
        raise BadRequest(f"{where} needs an 'id' and a 'function'.", where)
    if not FUNCTION_NAME.fullmatch(str(function.get("name", ""))):
        raise BadRequest(f"Invalid '{where}.function.name': string does not match pattern "
                         "'^[a-zA-Z0-9_-]{1,64}$'.", f"{where}.function.name")
    try:
        json.loads(function.get("arguments"))
    except (TypeError, ValueError):
        raise BadRequest(f"{where}.function.arguments must be a string of valid JSON.",
                         f"{where}.function.arguments") from None
    return call["id"]


# -- Wire format -----------------------------------------------------------------------
def _usage(body: JSON, completion: str) -> JSON:
    prompt = max(1, len(json.dumps(body["messages"], ensure_ascii=False)) // 4)  # a rough count
    done = max(1, len(completion) // 4)
    return {"prompt_tokens": prompt, "completion_tokens": done, "total_tokens": prompt + done}


def completion(body: JSON, reply: JSON) -> JSON:
    """A non-streaming chat.completion object."""
    message: JSON = {"role": "assistant", "content": reply.get("content"), "refusal": None}
    finish = "stop"
    if "tool_call" in reply:
        call = reply["tool_call"]
        message["tool_calls"] = [{"id": f"call_{uuid.uuid4().hex[:12]}", "type": "function",
                                  "function": {"name": call["name"], "arguments": call["arguments"]}}]
        finish = "tool_calls"
    return {"id": f"chatcmpl-{uuid.uuid4().hex[:12]}", "object": "chat.completion",
            "created": int(time.time()), "model": body["model"],
            "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish}],
            "usage": _usage(body, json.dumps(reply, ensure_ascii=False))}


def _pieces(text: str, count: int) -> list[str]:
    """Split text into about `count` non-empty pieces (streams deliver text in fragments)."""
    size = max(1, -(-len(text) // count))
    return [text[i:i + size] for i in range(0, len(text), size)] or [""]


def stream_chunks(body: JSON, reply: JSON) -> list[JSON]:
    """The chat.completion.chunk objects of a streamed reply (without the final [DONE])."""
    include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
    base = {"id": f"chatcmpl-{uuid.uuid4().hex[:12]}", "object": "chat.completion.chunk",
            "created": int(time.time()), "model": body["model"]}

    def chunk(delta: JSON, finish: str | None = None) -> JSON:
        out = {**base, "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]}
        if include_usage:
            out["usage"] = None  # the totals come in one extra chunk at the end
        return out

    if "tool_call" in reply:
        call = reply["tool_call"]
        # First the id and name with empty arguments, then the arguments in fragments whose
        # id is "" (as some providers send): a client must join them by index.
        chunks = [chunk({"role": "assistant", "content": None, "tool_calls": [
            {"index": 0, "id": f"call_{uuid.uuid4().hex[:12]}", "type": "function",
             "function": {"name": call["name"], "arguments": ""}}]})]
        chunks += [chunk({"tool_calls": [{"index": 0, "id": "", "function": {"arguments": piece}}]})
                   for piece in _pieces(call["arguments"], 3)]
        chunks.append(chunk({}, "tool_calls"))
    else:
        chunks = [chunk({"role": "assistant", "content": ""})]
        chunks += [chunk({"content": piece}) for piece in _pieces(reply["content"], 4)]
        chunks.append(chunk({}, "stop"))
    if include_usage:
        chunks.append({**base, "choices": [], "usage": _usage(body, json.dumps(reply, ensure_ascii=False))})
    return chunks


# -- HTTP ---------------------------------------------------------------------------
class ChatHandler(BaseHTTPRequestHandler):
    server_version = "demo-model/1.0"
    api_key: str | None = None  # set by main(); None means no key is needed
    # Each write leaves at once. With Nagle's algorithm on, a small write that follows another
    # (the body after the headers, a streamed event after the last one) waits for the client's
    # ACK of the first, which the client may delay by ~40 ms. And each reply is one write
    # (see _send_json).
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:
        log.info("%s %s", self.address_string(), format % args)

    def _send_json(self, status: int, obj: JSON) -> None:
        body = json.dumps(obj, ensure_ascii=False).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        # end_headers() would send the headers by themselves: put the blank line and the body
        # in http.server's header buffer instead, and the whole reply leaves in one write.
        self._headers_buffer.append(b"\r\n" + body)
        self.flush_headers()

    def _send_error(self, status: int, message: str, param: str | None = None,
                    kind: str = "invalid_request_error", code: str | None = None) -> None:
        self._send_json(status, {"error": {"message": message, "type": kind, "param": param, "code": code}})

    def _authorized(self) -> bool:
        if self.api_key is None or self.headers.get("Authorization") == f"Bearer {self.api_key}":
            return True
        self._send_error(401, "Incorrect API key provided.", code="invalid_api_key")
        return False

    def do_GET(self) -> None:
        if self.path.rstrip("/") not in ("/v1/models", "/models"):
            self._send_error(404, f"Unknown path {self.path}", kind="not_found_error")
        elif self._authorized():
            self._send_json(200, {"object": "list", "data": [
                {"id": MODEL, "object": "model", "created": 0, "owned_by": "mcpmini-examples"}]})

    def do_POST(self) -> None:
        if self.path.rstrip("/") not in ("/v1/chat/completions", "/chat/completions"):
            self._send_error(404, f"Unknown path {self.path}", kind="not_found_error")
            return
        if not self._authorized():
            return
        try:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
            validate(body)
        except ValueError as exc:  # bad JSON
            self._send_error(400, f"We could not parse the JSON body of your request: {exc}")
            return
        except BadRequest as exc:
            self._send_error(400, str(exc), exc.param)
            return
        reply = script(body)
        log.info("reply: %s", json.dumps(reply, ensure_ascii=False))
        if body.get("stream"):
            self._stream(body, reply)
        else:
            self._send_json(200, completion(body, reply))

    def _stream(self, body: JSON, reply: JSON) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        self.close_connection = True  # no Content-Length: the stream ends with the connection
        for chunk in stream_chunks(body, reply):
            self.wfile.write(b"data: " + json.dumps(chunk, ensure_ascii=False).encode("utf-8") + b"\n\n")
            self.wfile.flush()
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()


def main(argv: list[str] | None = None) -> int:
    """Serve the scripted model until interrupted (Ctrl-C)."""
    parser = argparse.ArgumentParser(description="Scripted stand-in for an OpenAI-compatible model.")
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: a free port)")
    parser.add_argument("--api-key", help="require 'Authorization: Bearer KEY' (default: no key)")
    args = parser.parse_args(argv)
    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="demo_model: %(message)s")
    ChatHandler.api_key = args.api_key
    server = ThreadingHTTPServer(("127.0.0.1", args.port), ChatHandler)
    server.daemon_threads = True
    print(f"http://127.0.0.1:{server.server_address[1]}/v1", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
