"""The official Python SDK's client (`mcp` 2.x, `mcp.Client`) driving an MCP server for the bridge
interop tests; run with the interpreter of the peers venv:

    python sdk_bridge_client.py MODE TARGET STEPS

MODE is the SDK's `mode=` ("legacy", "2026-07-28" or "auto"). TARGET is JSON: {"command": [argv],
"env": {...}} (stdio: typically `mcpmini bridge SERVER`) or {"url": ..., "headers": {...}}
(Streamable HTTP: `mcpmini bridge --listen`). STEPS is a JSON list of steps run in order; each
prints one JSON line on stdout, {"step": name, ...}, or {"step": name, "error": "..."} when it
raised:
  ["info"]                      server name, version, instructions, capabilities, version spoken
  ["tools"] / ["resources"] / ["prompts"]        the names listed
  ["call", NAME, ARGS]          the text and structuredContent of the result (isError too)
  ["progress", NAME, ARGS]      like call, with a progress callback: the progress values seen
  ["elicit", NAME, ARGS, ANSWER]  like call, the elicitation callback accepting with ANSWER
  ["cancel", NAME, ARGS, SECONDS]  the call is abandoned after SECONDS (the SDK then sends a
                                  courtesy notifications/cancelled)
  ["read", URI] / ["get", NAME, ARGS]            the text of the first content / message
"""

from __future__ import annotations

import json
import sys
from typing import Any

import anyio
import httpx2
import mcp_types as types
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client


def emit(**fields: Any) -> None:
    print(json.dumps(fields), flush=True)


async def step(client: Client, name: str, args: list[Any], seen: dict[str, list]) -> dict[str, Any]:
    if name == "info":
        info = client.server_info
        return {"name": info.name if info else None, "version": info.version if info else None,
                "instructions": client.instructions, "protocol": client.protocol_version,
                "capabilities": client.server_capabilities.model_dump(exclude_none=True)}
    if name in ("tools", "resources", "prompts"):
        listed = await getattr(client, f"list_{name}")()
        return {"names": [getattr(item, "name") for item in getattr(listed, name)]}
    if name in ("call", "progress", "elicit", "cancel"):
        progress: list[float] = []

        async def on_progress(value: float, total: float | None, message: str | None) -> None:
            progress.append(value)
        if name == "cancel":
            with anyio.move_on_after(float(args[2])):
                await client.call_tool(args[0], args[1])
                return {"cancelled": False}
            return {"cancelled": True}
        seen["answer"] = args[2:]
        result = await client.call_tool(args[0], args[1], progress_callback=on_progress)
        return {"text": [c.text for c in result.content if isinstance(c, types.TextContent)],
                "structured": result.structured_content, "isError": result.is_error, "progress": progress,
                "elicited": seen["elicited"]}
    if name == "read":
        result = await client.read_resource(args[0])
        return {"text": getattr(result.contents[0], "text", None)}
    if name == "get":
        result = await client.get_prompt(args[0], args[1])
        content = result.messages[0].content
        return {"text": getattr(content, "text", None), "messages": len(result.messages)}
    raise SystemExit(f"sdk_bridge_client: unknown step {name!r}")


async def main(mode: str, target: dict[str, Any], steps: list[list[Any]]) -> None:
    seen: dict[str, list] = {"elicited": [], "answer": []}

    async def elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        seen["elicited"].append(params.message)
        return types.ElicitResult(action="accept", content=seen["answer"][0] if seen["answer"] else {})

    if "url" in target:
        server: Any = streamable_http_client(target["url"], http_client=httpx2.AsyncClient(
            headers=target.get("headers") or {}, timeout=httpx2.Timeout(30.0, read=120.0)))
    else:
        server = StdioServerParameters(command=target["command"][0], args=target["command"][1:],
                                       env=target.get("env"))
    async with Client(server, mode=mode, elicitation_callback=elicit,
                      client_info=types.Implementation(name="sdk-via-bridge", version="2.3.0")) as client:
        for name, *args in steps:
            try:
                emit(step=name, **await step(client, name, args, seen))
            except Exception as exc:  # the test reads what failed, and how
                emit(step=name, error=f"{type(exc).__name__}: {exc}")


if __name__ == "__main__":
    anyio.run(main, sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3]))
