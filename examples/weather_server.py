#!/usr/bin/env python3
"""A small dual-era MCP weather server over stdio: a teaching example for mcpmini.

    The forecasts are DEMO DATA. They are made up and hard-coded below. They are
    not real weather.

Run it by hand (it reads JSON-RPC from stdin, one message per line):

    python3 weather_server.py

or let a client start it, e.g. with examples/mcp.json.

What it offers:
- tool      get_forecast(city)           tomorrow's (demo) forecast; an unknown city gives isError
- resource  weather://cities              the known cities, as JSON
- template  weather://forecast/{city}     one forecast as text/plain
- prompt    umbrella_advice(city)         "should I take an umbrella?" plus the forecast

Both protocol eras are served by the same process:
- modern (2026-07-28): no handshake. Every request names its version in
  params._meta["io.modelcontextprotocol/protocolVersion"]; results carry "resultType".
  server/discover tells the client what the server supports.
- legacy (2024-11-05 ... 2025-11-25): initialize, then notifications/initialized; ping.

The protocol logic is handle(), which weather_http_server.py imports; main() is only the
stdio framing. stdout carries JSON-RPC and nothing else; logs go to stderr.
"""
from __future__ import annotations

import datetime
import json
import logging
import sys
import urllib.parse
from typing import Any, Callable

JSON = dict[str, Any]
Notify = Callable[[JSON], None]  # how handle() sends a notification (e.g. progress)

# -- Protocol constants --------------------------------------------------------
MODERN_VERSION = "2026-07-28"
LEGACY_VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")  # newest first
SUPPORTED_VERSIONS = [MODERN_VERSION, *LEGACY_VERSIONS]

META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CLIENT_CAPS = "io.modelcontextprotocol/clientCapabilities"
META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
LEGACY_RESOURCE_NOT_FOUND = -32002  # legacy eras; 2026-07-28 uses -32602 instead
UNSUPPORTED_VERSION = -32022  # 2026-07-28: data = {"supported": [...], "requested": "..."}

SERVER_INFO = {"name": "weather-demo", "version": "1.0.0"}
CAPABILITIES: JSON = {"tools": {}, "resources": {}, "prompts": {}}
INSTRUCTIONS = ("Demo weather server: get_forecast returns made-up forecasts (DEMO DATA) for "
                "tomorrow in a few cities. Do not present them as real weather.")

# 2026-07-28 "CacheableResult": list results (and discover, resources/read) say how long a
# client may reuse them. Our data never changes while the process runs.
CACHE_TTL_MS = 60_000
CACHEABLE_METHODS = {"server/discover", "tools/list", "resources/list",
                     "resources/templates/list", "resources/read", "prompts/list"}

log = logging.getLogger("weather_server")

# -- DEMO data -----------------------------------------------------------------
# Made-up forecasts for "tomorrow". NOT real weather. Dry days avoid rain words on purpose,
# so a reader (or the scripted demo model) can tell a wet day from its text.
FORECASTS: dict[str, JSON] = {
    "Hangzhou": {"zh": "杭州", "condition": "light rain", "low_c": 14, "high_c": 19,
                 "precipitation_chance": 80, "wind": "NE 3 m/s"},
    "Beijing": {"zh": "北京", "condition": "sunny", "low_c": 2, "high_c": 11,
                "precipitation_chance": 5, "wind": "N 4 m/s"},
    "Shanghai": {"zh": "上海", "condition": "overcast", "low_c": 12, "high_c": 17,
                 "precipitation_chance": 30, "wind": "E 5 m/s"},
    "Guangzhou": {"zh": "广州", "condition": "thunderstorms", "low_c": 20, "high_c": 26,
                  "precipitation_chance": 90, "wind": "S 6 m/s"},
    "London": {"zh": "伦敦", "condition": "scattered showers", "low_c": 6, "high_c": 10,
               "precipitation_chance": 60, "wind": "SW 7 m/s"},
    "New York": {"zh": "纽约", "condition": "clear and windy", "low_c": 1, "high_c": 8,
                 "precipitation_chance": 0, "wind": "NW 9 m/s", "aliases": ["NYC", "New York City"]},
    "Tokyo": {"zh": "东京", "condition": "partly cloudy", "low_c": 8, "high_c": 15,
              "precipitation_chance": 20, "wind": "N 2 m/s"},
}
UMBRELLA_THRESHOLD = 50  # precipitation chance (%) from which we suggest an umbrella


def _normalize(name: str) -> str:
    """'  new-york ' -> 'newyork', '杭州市' -> '杭州' (so lookups forgive spelling details)."""
    key = "".join(ch for ch in name.casefold() if ch not in " -_.,'")
    return key[:-1] if key.endswith("市") else key  # 市 = "city" in Chinese


def find_city(name: str) -> str | None:
    """The canonical city name for an English or Chinese name or alias, or None."""
    wanted = _normalize(name)
    for city, data in FORECASTS.items():
        names = [city, data["zh"], *data.get("aliases", [])]
        if wanted in (_normalize(n) for n in names):
            return city
    return None


def known_cities_text() -> str:
    """'Hangzhou (杭州), Beijing (北京), ...' for error messages."""
    return ", ".join(f"{city} ({data['zh']})" for city, data in FORECASTS.items())


def forecast_data(city: str) -> JSON:
    """Tomorrow's demo forecast for a known city, as a plain dict."""
    f = FORECASTS[city]
    tomorrow = datetime.date.today() + datetime.timedelta(days=1)
    return {"city": city, "city_zh": f["zh"], "date": tomorrow.isoformat(),
            "condition": f["condition"], "low_c": f["low_c"], "high_c": f["high_c"],
            "precipitation_chance": f["precipitation_chance"], "wind": f["wind"],
            "umbrella": f["precipitation_chance"] >= UMBRELLA_THRESHOLD, "demo_data": True}


def forecast_text(city: str) -> str:
    """Tomorrow's demo forecast for a known city, as one line for people and models."""
    d = forecast_data(city)
    advice = ("Rain is likely: take an umbrella." if d["umbrella"]
              else "Staying dry: no umbrella needed.")
    return (f"[DEMO DATA, not a real forecast] Tomorrow ({d['date']}) in {city} ({d['city_zh']}): "
            f"{d['condition']}, {d['low_c']} to {d['high_c']} °C, "
            f"precipitation chance {d['precipitation_chance']}%, wind {d['wind']}. {advice}")


# -- What the server offers ------------------------------------------------------
TOOLS: list[JSON] = [{
    "name": "get_forecast",
    "title": "Weather forecast (demo data)",
    "description": ("Tomorrow's weather forecast for a city. DEMO DATA: made-up forecasts for "
                    f"{known_cities_text()}. Not real weather."),
    "inputSchema": {
        "type": "object",
        "properties": {"city": {"type": "string",
                                "description": "City name in English or Chinese, e.g. Hangzhou or 杭州"}},
        "required": ["city"],
    },
    # What structuredContent holds (2025-06-18 and later): clients can check it, programs use it.
    "outputSchema": {
        "type": "object",
        "properties": {"city": {"type": "string"}, "city_zh": {"type": "string"},
                       "date": {"type": "string", "description": "tomorrow, as YYYY-MM-DD"},
                       "condition": {"type": "string"}, "low_c": {"type": "integer"},
                       "high_c": {"type": "integer"},
                       "precipitation_chance": {"type": "integer", "description": "percent"},
                       "wind": {"type": "string"}, "umbrella": {"type": "boolean"},
                       "demo_data": {"type": "boolean"}},
        "required": ["city", "date", "condition", "low_c", "high_c", "precipitation_chance", "umbrella"],
    },
    "annotations": {"readOnlyHint": True, "openWorldHint": False},
}]

RESOURCES: list[JSON] = [{
    "uri": "weather://cities", "name": "cities", "title": "Known cities (demo data)",
    "description": "The cities this demo server has forecasts for.", "mimeType": "application/json",
}]

RESOURCE_TEMPLATES: list[JSON] = [{
    "uriTemplate": "weather://forecast/{city}", "name": "forecast",
    "title": "Tomorrow's forecast for a city (demo data)",
    "description": "A made-up forecast as plain text, e.g. weather://forecast/Hangzhou.",
    "mimeType": "text/plain",
}]

PROMPTS: list[JSON] = [{
    "name": "umbrella_advice", "title": "Should I take an umbrella?",
    "description": "Asks whether to take an umbrella tomorrow, with the (demo) forecast attached.",
    "arguments": [{"name": "city", "description": "City name, e.g. Hangzhou or 杭州", "required": True}],
}]


class RPCError(Exception):
    """A JSON-RPC error to send back: code, message and optional data."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code, self.message, self.data = code, message, data


# -- Method handlers (shared by both eras) ---------------------------------------
def _tool_error(text: str) -> JSON:
    # A tool that ran but failed reports isError in a *result*, so the model can read why.
    return {"content": [{"type": "text", "text": text}], "isError": True}


def _call_tool(params: JSON, modern: bool) -> JSON:
    name = params.get("name")
    if name != "get_forecast":
        raise RPCError(INVALID_PARAMS, f"Unknown tool: {name}")
    arguments = params.get("arguments") or {}
    if not isinstance(arguments, dict):
        raise RPCError(INVALID_PARAMS, "tools/call: 'arguments' must be an object")
    wanted = arguments.get("city")
    if not isinstance(wanted, str) or not wanted.strip():
        return _tool_error("Missing argument 'city': give a city name such as Hangzhou or 杭州.")
    city = find_city(wanted)
    if city is None:
        return _tool_error(f"Unknown city {wanted!r}. This demo only knows: {known_cities_text()}.")
    return {"content": [{"type": "text", "text": forecast_text(city)}],
            "structuredContent": forecast_data(city), "isError": False}


def _read_resource(params: JSON, modern: bool) -> JSON:
    uri = params.get("uri")
    if uri == "weather://cities":
        cities = [{"name": city, "name_zh": data["zh"]} for city, data in FORECASTS.items()]
        return {"contents": [{"uri": uri, "mimeType": "application/json",
                              "text": json.dumps({"cities": cities, "demo_data": True},
                                                 ensure_ascii=False, indent=2)}]}
    prefix = "weather://forecast/"
    if isinstance(uri, str) and uri.startswith(prefix):
        # Accept both weather://forecast/杭州 and its percent-encoded form.
        city = find_city(urllib.parse.unquote(uri[len(prefix):]))
        if city is not None:
            return {"contents": [{"uri": uri, "mimeType": "text/plain", "text": forecast_text(city)}]}
    # Not found: -32602 in 2026-07-28, -32002 in the legacy eras.
    code = INVALID_PARAMS if modern else LEGACY_RESOURCE_NOT_FOUND
    raise RPCError(code, f"Resource not found: {uri}", {"uri": uri})


def _get_prompt(params: JSON, modern: bool) -> JSON:
    if params.get("name") != "umbrella_advice":
        raise RPCError(INVALID_PARAMS, f"Unknown prompt: {params.get('name')}")
    wanted = (params.get("arguments") or {}).get("city")
    if not isinstance(wanted, str) or not wanted.strip():
        raise RPCError(INVALID_PARAMS, "Missing required argument 'city'")
    city = find_city(wanted)
    if city is None:
        raise RPCError(INVALID_PARAMS, f"Unknown city {wanted!r}. Known: {known_cities_text()}")
    question = f"Should I take an umbrella in {city} tomorrow? Answer in one or two sentences."
    return {"description": f"Umbrella advice for {city} (demo data)",
            "messages": [
                {"role": "user", "content": {"type": "text", "text": question}},
                {"role": "user", "content": {"type": "resource", "resource": {
                    "uri": f"weather://forecast/{city}", "mimeType": "text/plain",
                    "text": forecast_text(city)}}},
            ]}


def _discover(params: JSON, modern: bool) -> JSON:
    # The server's identity goes in _meta (added by handle), not in a top-level serverInfo.
    return {"supportedVersions": SUPPORTED_VERSIONS, "capabilities": CAPABILITIES,
            "instructions": INSTRUCTIONS}


def _initialize(params: JSON, modern: bool) -> JSON:
    # Legacy negotiation: echo a version we know, otherwise counter-offer our newest legacy one.
    requested = params.get("protocolVersion")
    version = requested if requested in LEGACY_VERSIONS else LEGACY_VERSIONS[0]
    return {"protocolVersion": version, "capabilities": CAPABILITIES,
            "serverInfo": SERVER_INFO, "instructions": INSTRUCTIONS}


_SHARED_METHODS: dict[str, Callable[[JSON, bool], JSON]] = {
    "tools/list": lambda params, modern: {"tools": TOOLS},
    "tools/call": _call_tool,
    "resources/list": lambda params, modern: {"resources": RESOURCES},
    "resources/templates/list": lambda params, modern: {"resourceTemplates": RESOURCE_TEMPLATES},
    "resources/read": _read_resource,
    "prompts/list": lambda params, modern: {"prompts": PROMPTS},
    "prompts/get": _get_prompt,
}
MODERN_METHODS = {**_SHARED_METHODS, "server/discover": _discover}
LEGACY_METHODS = {**_SHARED_METHODS, "initialize": _initialize, "ping": lambda params, modern: {}}


# -- The protocol entry point ----------------------------------------------------
def error_reply(request_id: Any, code: int, message: str, data: Any = None) -> JSON:
    """A JSON-RPC error response."""
    error: JSON = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


def is_modern(message: JSON) -> bool:
    """True when a request speaks 2026-07-28 style: a protocol version in params._meta
    (server/discover only exists in the modern era, so it counts too)."""
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    return (isinstance(meta, dict) and META_VERSION in meta) or message.get("method") == "server/discover"


def _check_modern_meta(meta: Any) -> None:
    if not isinstance(meta, dict):
        raise RPCError(INVALID_PARAMS, "Missing params._meta (required in 2026-07-28)",
                       {"missing": [META_VERSION, META_CLIENT_CAPS]})
    missing = [key for key in (META_VERSION, META_CLIENT_CAPS) if key not in meta]
    if missing:  # spec: servers MUST reject a request that lacks a required _meta key
        raise RPCError(INVALID_PARAMS, f"Missing required _meta key(s): {', '.join(missing)}",
                       {"missing": missing})
    requested = meta[META_VERSION]
    if requested != MODERN_VERSION:
        # Legacy versions are negotiated with initialize, never per request.
        raise RPCError(UNSUPPORTED_VERSION, "Unsupported protocol version",
                       {"supported": SUPPORTED_VERSIONS, "requested": requested})


def handle(message: Any, notify: Notify | None = None, modern: bool | None = None) -> JSON | None:
    """Answer one JSON-RPC message (already parsed from JSON).

    Returns the response to send, or None when nothing is to be sent (notifications, and
    responses from the client). `notify`, when given, is called with each notification the
    server emits on the way (here: one notifications/progress when the request carries
    _meta.progressToken). `modern` forces the era when the transport already knows it (HTTP
    has the MCP-Protocol-Version header); None means: tell from the message (is_modern).
    The function keeps no state, so any transport can call it.
    """
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return error_reply(None, INVALID_REQUEST, "Invalid Request: expected a JSON-RPC 2.0 object")
    method = message.get("method")
    if not isinstance(method, str):
        return None  # a response to a request: this server never sends requests, so ignore it
    if "id" not in message:
        log.info("notification %s", method)  # initialized, cancelled...: nothing to do
        return None

    request_id = message["id"]
    params = message.get("params", {})
    if modern is None:
        modern = is_modern(message)
    log.info("%s request %s (id %r)", "modern" if modern else "legacy", method, request_id)
    try:
        if not isinstance(params, dict):
            raise RPCError(INVALID_PARAMS, "params must be an object")
        if modern:
            _check_modern_meta(params.get("_meta"))
        handler = (MODERN_METHODS if modern else LEGACY_METHODS).get(method)
        if handler is None:
            raise RPCError(METHOD_NOT_FOUND, f"Method not found: {method}")
        result = handler(params, modern)
    except RPCError as exc:
        return error_reply(request_id, exc.code, exc.message, exc.data)
    except Exception as exc:  # a bug here must not kill the server
        log.exception("internal error in %s", method)
        return error_reply(request_id, INTERNAL_ERROR, f"Internal error: {exc}")

    token = (params.get("_meta") or {}).get("progressToken")
    if token is not None and notify is not None:
        # Progress travels before the result; a real server would send several as work advances.
        notify({"jsonrpc": "2.0", "method": "notifications/progress",
                "params": {"progressToken": token, "progress": 1, "total": 1,
                           "message": f"{method}: done"}})
    if modern:
        result = {**result, "resultType": "complete"}
        result["_meta"] = {**result.get("_meta", {}), META_SERVER_INFO: SERVER_INFO}
        if method in CACHEABLE_METHODS:
            result.update(ttlMs=CACHE_TTL_MS, cacheScope="public")
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def handle_payload(payload: Any, notify: Notify | None = None) -> JSON | list[JSON] | None:
    """Like handle(), but also takes a JSON-RPC batch (a list), which 2025-03-26 allowed."""
    if isinstance(payload, list):
        if not payload:
            return error_reply(None, INVALID_REQUEST, "Invalid Request: empty batch")
        replies = [r for r in (handle(m, notify) for m in payload) if r is not None]
        return replies or None
    return handle(payload, notify)


def encode(message: JSON | list[JSON]) -> bytes:
    """Compact one-line JSON: strings escape newlines, so a message never spans lines."""
    return json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


# -- stdio transport --------------------------------------------------------------
def main() -> int:
    """Serve MCP on stdin/stdout until stdin closes."""
    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="weather_server: %(message)s")
    out = sys.stdout.buffer

    def send(message: JSON | list[JSON]) -> None:
        out.write(encode(message) + b"\n")
        out.flush()

    log.info("serving on stdio (DEMO DATA); versions %s", ", ".join(SUPPORTED_VERSIONS))
    try:
        for line in iter(sys.stdin.buffer.readline, b""):  # b"" means EOF: the client is done
            if not line.strip():
                continue
            try:
                payload = json.loads(line)
            except ValueError as exc:
                send(error_reply(None, PARSE_ERROR, f"Parse error: {exc}"))
                continue
            reply = handle_payload(payload, notify=send)
            if reply is not None:
                send(reply)
    except (KeyboardInterrupt, BrokenPipeError):
        pass
    log.info("stdin closed, bye")
    return 0


if __name__ == "__main__":
    sys.exit(main())
