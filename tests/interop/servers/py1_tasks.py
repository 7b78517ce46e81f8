"""A task server on the official Python SDK 1.x (`mcp` 1.30, its experimental tasks API: the
lowlevel Server with `experimental.enable_tasks()` and `run_task`), a peer for mcpmini's interop
tests: legacy era (2025-11-25 tasks). Over stdio.

Tool `countdown` (taskSupport "required"): counts `steps` (default 3) of 0.3 s, each a status
update (with notifications/tasks/status), asks "Go on?" mid-way when `ask` is true (an
elicitation related to the task), then completes with a text. Tool `echo`: no tasks.

Usage: python py1_tasks.py   (with the interpreter of the venv-py3.X-sdk1 venv)
"""

from __future__ import annotations

import anyio
import mcp.types as types
from mcp.server.experimental.task_context import ServerTaskContext
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

server = Server("py1-tasks")
server.experimental.enable_tasks()
COUNTDOWN = types.Tool(name="countdown", description="counts down as a task", inputSchema={
    "type": "object", "properties": {"steps": {"type": "integer"}, "ask": {"type": "boolean"}}},
    execution=types.ToolExecution(taskSupport="required"))
ECHO = types.Tool(name="echo", description="says it back", inputSchema={
    "type": "object", "properties": {"text": {"type": "string"}}})


@server.list_tools()
async def list_tools() -> list[types.Tool]:
    return [COUNTDOWN, ECHO]


@server.call_tool()
async def call_tool(name: str, arguments: dict) -> list[types.TextContent] | types.CreateTaskResult:
    if name == "echo":
        return [types.TextContent(type="text", text=str(arguments.get("text")))]
    ctx = server.request_context
    ctx.experimental.validate_task_mode("required")   # -32601 without a task
    steps, ask = int(arguments.get("steps", 3)), bool(arguments.get("ask"))

    async def work(task: ServerTaskContext) -> types.CallToolResult:
        said = ""
        for i in range(steps, 0, -1):
            await task.update_status(f"{i} to go")
            if ask and i == (steps + 1) // 2:
                answer = await task.elicit(message="Go on?", requestedSchema={
                    "type": "object", "properties": {"go": {"type": "boolean", "default": True}}})
                said = f" ({answer.action})"
            await anyio.sleep(0.3)
        return types.CallToolResult(content=[types.TextContent(type="text", text=f"lift-off{said}")])
    return await ctx.experimental.run_task(work)


async def main() -> None:
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
