#!/usr/bin/env python3
"""Client entry point for the official MCP conformance suite (`@modelcontextprotocol/conformance`).

The suite runs `<python> tests/conformance/conformance_client.py <server_url>` once per scenario and
describes the scenario through the environment:

- `MCP_CONFORMANCE_SCENARIO`: scenario name, e.g. `tools_call`.
- `MCP_CONFORMANCE_CONTEXT`: optional JSON, e.g. `{"toolCalls": [{"name": ..., "arguments": {...}}]}`.
- `MCP_CONFORMANCE_PROTOCOL_VERSION`: the spec revision under test (set by conformance 0.2; 0.1.x
  leaves it unset, which means the legacy initialize lifecycle).

With `MCPMINI_CONFORMANCE_BRIDGE=same` (or `cross`) set by `run.sh --bridge` (or `--bridge-cross`),
the client reaches the scenario's server through `python3 mcpmini.py bridge URL` over stdio:
the bridge speaks the scenario's era to the server, and the client speaks that era (`same`) or
the other one (`cross`) to the bridge, so the bridge translates every message.

Only mcpmini's public API is used, so every check the suite makes is a check of the library.
Wire traffic is logged to stderr at DEBUG level; the suite stores it in the scenario's stderr.txt.
`tests/conformance/run.sh` runs the whole suite.
"""
from __future__ import annotations

import asyncio
import inspect
import json
import logging
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout root holds mcpmini.py
import mcpmini  # noqa: E402

log = logging.getLogger("conformance_client")

# The suite kills the client after 30 s; finish (and say why) before that.
DEADLINE = 25.0
REQUEST_TIMEOUT = 15.0

# Scenarios that only need the tool list (calling tools there would be noise or wrong).
LIST_ONLY = {"initialize", "json-schema-ref-no-deref", "request-metadata"}
# Scenarios whose server asks the client for input (legacy elicitation/create or MRTR).
ELICITING = {"elicitation-sep1034-client-defaults", "sep-2322-client-request-state"}
FOCAL_SCHEMA_TOOL = "json_schema_2020_12_tool"
# The Client ID Metadata Document URL the suite expects (a constant of its CIMD scenarios).
CIMD_URL = "https://conformance-test.local/client-metadata.json"
ECHO_SCHEMA_TOOL = "json_schema_echo"


def placeholder(schema: Any) -> Any:
    """A value that satisfies a simple JSON Schema property: default, const, enum, else by type."""
    if not isinstance(schema, dict):
        return "conformance"
    for key in ("default", "const"):
        if key in schema:
            return schema[key]
    if schema.get("enum"):
        return schema["enum"][0]
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "string")
    return {"integer": 1, "number": 1, "boolean": True, "object": {}, "array": [],
            "null": None}.get(kind, "conformance")


def arguments_for(tool: dict) -> dict:
    """Arguments for a tool we were given no arguments for: every required property filled in."""
    schema = tool.get("inputSchema") or {}
    props = schema.get("properties") or {}
    return {name: placeholder(props.get(name)) for name in schema.get("required") or []}


def answer_elicitation(params: dict) -> dict:
    """Accept a form elicitation: schema defaults, true for booleans, placeholders for the rest."""
    if params.get("mode") == "url":
        return {"action": "decline"}
    schema = params.get("requestedSchema") or {}
    props = schema.get("properties") or {}
    required = set(schema.get("required") or [])
    content = {}
    for name, prop in props.items():
        prop = prop if isinstance(prop, dict) else {}
        if "default" in prop or prop.get("type") == "boolean" or name in required:
            content[name] = placeholder(prop)
    return {"action": "accept", "content": content}


def follow_in_browser(url: str) -> None:
    """The "browser": the suite's authorization endpoint answers 302 to our redirect URI at once;
    following it delivers the callback to mcpmini's own loopback listener."""
    import urllib.request
    log.info("browser opens %s", url.split("?")[0])
    with urllib.request.urlopen(url, timeout=REQUEST_TIMEOUT) as resp:
        resp.read()


def auth_options(scenario: str, context: dict) -> dict:
    """OAuth settings for an auth/* scenario: tokens in memory, the CIMD URL, a pre-registered
    client from the context, the browser step done by following the redirect."""
    options: dict[str, Any] = {"store": None, "interactive": True, "open_browser": follow_in_browser,
                               "client_metadata_url": CIMD_URL, "callback_port": 0}
    if context.get("client_id"):
        options["client_id"] = context["client_id"]
        options["client_secret"] = context.get("client_secret")
    if scenario == "auth/client-credentials-basic":
        options["grant"] = "client_credentials"
    return options


def era_for(version: str | None) -> str:
    """Map the suite's spec revision to mcpmini's `protocol` argument."""
    if version and version >= mcpmini.MODERN_VERSION:
        return mcpmini.MODERN_VERSION
    return "legacy"  # unset (conformance 0.1.x) or a dated revision up to 2025-11-25


async def call(client: mcpmini.Client, name: str, arguments: dict) -> None:
    log.info("tools/call %s %s", name, json.dumps(arguments, ensure_ascii=False))
    result = await client.call_tool(name, arguments)
    log.info("result %s", json.dumps(result, ensure_ascii=False)[:500])


def bridged(url: str, era: str, how: str, cache: str) -> tuple[list[str], str, dict]:
    """The bridge's command line (the scenario's era pinned upstream), the era the client speaks
    to it, and its environment (an era cache of its own)."""
    argv = [sys.executable, str(Path(mcpmini.__file__)), "bridge", "--trace", "--protocol", era,
            "--timeout", str(REQUEST_TIMEOUT), url]
    if how == "cross":
        era = "legacy" if era == mcpmini.MODERN_VERSION else mcpmini.MODERN_VERSION
    return argv, era, {"XDG_CACHE_HOME": cache, "XDG_STATE_HOME": cache}


async def run(url: str, scenario: str, context: dict, version: str | None, cache: str) -> None:
    """Drive one scenario through the public API; raises on any library error."""
    options: dict[str, Any] = {}
    server: Any = url
    era = era_for(version)
    if bridge := os.environ.get("MCPMINI_CONFORMANCE_BRIDGE"):
        server, era, options["env"] = bridged(url, era, bridge, cache)
    if scenario == "elicitation-sep1034-client-defaults":
        options["accept_defaults"] = True  # exercises the library's own defaults filling
    elif scenario in ELICITING:
        options["on_elicit"] = answer_elicitation
    if scenario.startswith("auth/"):
        options["auth"] = auth_options(scenario, context)
    if "trace" in inspect.signature(mcpmini.Client).parameters:  # wire log for the report
        options["trace"] = lambda label, direction, message: log.debug(
            "%s %s", direction, json.dumps(message, ensure_ascii=False)[:2000])
    async with mcpmini.Client(server, protocol=era, timeout=REQUEST_TIMEOUT,
                              era_cache=False, name="conformance", **options) as client:
        log.info("connected: era=%s version=%s (%s)", client.era, client.protocol_version,
                 client.era_reason)
        tools = await client.list_tools()
        names = [t.get("name") for t in tools]
        log.info("tools: %s", names)
        if scenario in LIST_ONLY:
            return
        if context.get("toolCalls"):
            for entry in context["toolCalls"]:
                await call(client, entry["name"], entry.get("arguments") or {})
        elif scenario == "tools_call":
            await call(client, "add_numbers", {"a": 2, "b": 3})
        elif scenario == "json-schema-2020-12-preservation":
            focal = next((t for t in tools if t.get("name") == FOCAL_SCHEMA_TOOL), None)
            if focal is None:
                raise RuntimeError(f"{FOCAL_SCHEMA_TOOL!r} not in tools/list: {names}")
            await call(client, ECHO_SCHEMA_TOOL, {"schema": focal["inputSchema"]})
        else:  # the scenario observes which tools get called: call every tool we kept
            for tool in tools:
                await call(client, tool["name"], arguments_for(tool))
        if scenario == "http-standard-headers":
            for resource in await client.list_resources():
                log.info("resources/read %s", resource["uri"])
                await client.read_resource(resource["uri"])
            for prompt in await client.list_prompts():
                log.info("prompts/get %s", prompt["name"])
                await client.get_prompt(prompt["name"])


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv:
        print("usage: conformance_client.py <server_url>  (run by the conformance suite)",
              file=sys.stderr)
        return 2
    logging.basicConfig(level=logging.DEBUG, stream=sys.stderr,
                        format="%(relativeCreated)6.0fms %(name)s %(levelname)s %(message)s")
    logging.getLogger("asyncio").setLevel(logging.WARNING)
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    version = os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION") or None
    log.info("scenario=%s version=%s url=%s context=%s", scenario, version, argv[-1], context)
    try:
        with tempfile.TemporaryDirectory(prefix="mcpmini-conformance-") as cache:
            asyncio.run(asyncio.wait_for(run(argv[-1], scenario, context, version, cache), DEADLINE))
    except Exception:  # report everything: the suite prints stderr of a failing client
        log.exception("scenario %s failed", scenario)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
