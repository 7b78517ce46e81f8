#!/usr/bin/env python3
"""A small MCP server with task tools (stdlib only), honest or hostile, for tests/tasks.

    python3 task_server.py OPTIONS_JSON            stdio
    python3 task_server.py OPTIONS_JSON --http     Streamable HTTP on a free loopback port
                                                   (prints "PORT n" on stdout first)

Options (a JSON object): ``era`` "legacy" (2025-11-25, the default) or "modern" (2026-07-28, the
tasks extension); ``record`` a file every message received is appended to (JSON lines).
Tools: ``slow`` (taskSupport "required"), ``quick`` ("optional"), ``plain`` (no execution).
What a task does (all optional): ``seconds`` it runs (default 0.3); ``ask``: a question in the
middle (legacy: elicitation/create related to the task, from within tasks/result; modern:
inputRequests answered by tasks/update); ``never``: never ends; ``poll_ms``: its pollInterval
(default 100); ``status``: the status it reports while running (default "working");
``task_id``: its id; ``result_hang``: tasks/result never answers; ``stray``: a plain call of
``plain`` answers with a task; ``flood`` N: N status notifications at creation; ``fail``: it
fails; ``vanish``: tasks/get answers -32602;
``is_error``: the tool's result has isError; ``drop_create`` (HTTP): a tools/call
drops the connection unanswered; ``no_list``: no tasks/list; ``cancel_ignored``.
"""
from __future__ import annotations

import asyncio
import itertools
import json
import sys
import time

OPTIONS = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}
MODERN = OPTIONS.get("era") == "modern"
EXT = "io.modelcontextprotocol/tasks"
RELATED = "io.modelcontextprotocol/related-task"
TOOLS = [
    {"name": "slow", "description": "runs for a while", "inputSchema": {"type": "object", "properties": {
        "topic": {"type": "string"}}}, "execution": {"taskSupport": "required"}},
    {"name": "quick", "inputSchema": {"type": "object"}, "execution": {"taskSupport": "optional"}},
    {"name": "plain", "inputSchema": {"type": "object"}},
]
TASKS: dict[str, dict] = {}
COUNTER = itertools.count(1)


def record(message: dict) -> None:
    if OPTIONS.get("record"):
        with open(OPTIONS["record"], "a") as f:
            f.write(json.dumps(message) + "\n")


def now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def wire(task: dict) -> dict:
    """The task as the era shows it."""
    shown = {"taskId": task["id"], "status": task["status"], "createdAt": task["created"], "lastUpdatedAt": now()}
    if task.get("message"):
        shown["statusMessage"] = task["message"]
    poll = OPTIONS.get("poll_ms", 100)
    if MODERN:
        shown.update(ttlMs=60000, pollIntervalMs=poll)
        if task["status"] == "completed":
            shown["result"] = task["result"]
        if task["status"] == "failed":
            shown["error"] = {"code": -32603, "message": "the research machine broke"}
        if task["status"] == "input_required":
            shown["inputRequests"] = {"q1": {"method": "elicitation/create", "params": {
                "message": "Which rain?", "requestedSchema": {"type": "object", "properties": {
                    "kind": {"type": "string", "default": "drizzle"}}}}}}
    else:
        shown.update(ttl=60000, pollInterval=poll)
    return shown


class Server:
    def __init__(self, send) -> None:
        self.send = send          # async send(message)
        self.waiting: dict = {}   # our request id -> future (legacy elicitation)
        self.ids = itertools.count(1)

    async def ask_client(self, method: str, params: dict) -> dict:
        rid = f"s-{next(self.ids)}"
        future = asyncio.get_running_loop().create_future()
        self.waiting[rid] = future
        await self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        return await future

    async def run_task(self, task: dict) -> None:
        seconds = OPTIONS.get("seconds", 0.3)
        task["status"] = OPTIONS.get("status", "working")
        await asyncio.sleep(seconds / 2)
        answer = None
        if OPTIONS.get("ask"):
            task["status"], task["message"] = "input_required", "waiting for your answer"
            if MODERN:
                task["answered"] = asyncio.get_running_loop().create_future()
                answer = await task["answered"]
            else:
                answer = await self.ask_client("elicitation/create", {
                    "message": "Which rain?", "requestedSchema": {"type": "object", "properties": {
                        "kind": {"type": "string", "default": "drizzle"}}},
                    "_meta": {RELATED: {"taskId": task["id"]}}})
            task["status"], task["message"] = "working", "thinking about it"
        if OPTIONS.get("never"):
            await asyncio.Event().wait()
        await asyncio.sleep(seconds / 2)
        if task["status"] == "cancelled":
            return
        text = f"report on {task['arguments'].get('topic', '?')}"
        if answer is not None:
            text += f" ({json.dumps(answer, sort_keys=True)})"
        task["result"] = {"content": [{"type": "text", "text": text}], "isError": bool(OPTIONS.get("is_error"))}
        task["status"] = "failed" if OPTIONS.get("fail") else "completed"
        task["message"] = "the machine broke" if OPTIONS.get("fail") else "done"
        task["done"].set()

    def new_task(self, arguments: dict) -> dict:
        tid = OPTIONS.get("task_id", f"task-{next(COUNTER)}")
        task = TASKS[tid] = {"id": tid, "status": "working", "created": now(), "arguments": arguments,
                             "done": asyncio.Event(), "message": "started"}
        task["job"] = asyncio.ensure_future(self.run_task(task))
        return task

    async def handle(self, message: dict) -> dict | None:
        """The response to one message (None: nothing to say)."""
        record(message)
        if "method" not in message:   # a response to our request
            future = self.waiting.pop(message.get("id"), None)
            if future and not future.done():
                future.set_result(message.get("result", message.get("error")))
            return None
        method, params, rid = message["method"], message.get("params") or {}, message.get("id")
        if rid is None:
            return None
        try:
            result = await self.answer(method, params)
        except LookupError as exc:
            return {"jsonrpc": "2.0", "id": rid, "error": exc.args[0]}
        if MODERN and "resultType" not in result:
            result["resultType"] = "complete"
        return {"jsonrpc": "2.0", "id": rid, "result": result}

    async def answer(self, method: str, params: dict) -> dict:
        caps = {"tools": {}}
        if MODERN:
            caps["extensions"] = {EXT: {}}
        else:
            caps["tasks"] = {"cancel": {}, "requests": {"tools": {"call": {}}}}
            if not OPTIONS.get("no_list"):
                caps["tasks"]["list"] = {}
        if method == "server/discover":
            if not MODERN:
                raise LookupError({"code": -32601, "message": "Method not found"})
            return {"supportedVersions": ["2026-07-28"], "capabilities": caps,
                    "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "tasky", "version": "1"}}}
        if method == "initialize":
            return {"protocolVersion": "2025-11-25", "capabilities": caps, "serverInfo": {"name": "tasky", "version": "1"}}
        if method == "ping":
            return {}
        if method == "tools/list":
            return {"tools": TOOLS}
        if method == "tools/call":
            name = params.get("name")
            asked = EXT in params.get("_meta", {}).get("io.modelcontextprotocol/clientCapabilities", {}).get(
                "extensions", {}) if MODERN else "task" in params
            if name == "plain" and OPTIONS.get("stray"):
                task = self.new_task(params.get("arguments") or {})
                return {"resultType": "task", **wire(task)} if MODERN else {"task": wire(task)}
            if not asked or name == "plain":   # (plain: a task asked for is ignored, as allowed)
                if name == "slow":
                    if MODERN:
                        raise LookupError({"code": -32021, "message": "Missing required client capability",
                                           "data": {"requiredCapabilities": {"extensions": {EXT: {}}}}})
                    raise LookupError({"code": -32601, "message": "Tool slow requires task augmentation "
                                       "(taskSupport: 'required')"})
                return {"content": [{"type": "text", "text": f"{name} ran at once"}]}
            task = self.new_task(params.get("arguments") or {})
            for i in range(OPTIONS.get("flood", 0)):
                await self.send({"jsonrpc": "2.0", "method": "notifications/tasks/status" if not MODERN else
                                 "notifications/tasks", "params": {**wire(task), "statusMessage": f"flood {i}"}})
            token = params.get("_meta", {}).get("progressToken")
            if token is not None:
                asyncio.ensure_future(self.progress(token, task))
            return {"resultType": "task", **wire(task)} if MODERN else {"task": wire(task)}
        if method.startswith("tasks/"):
            if method == "tasks/list":
                return {"tasks": [wire(t) for t in TASKS.values()]}
            task = TASKS.get(params.get("taskId"))
            if task is None or OPTIONS.get("vanish"):
                raise LookupError({"code": -32602, "message": "Failed to retrieve task: Task not found"})
            if method == "tasks/get":
                return wire(task)
            if method == "tasks/update":
                answer = (params.get("inputResponses") or {}).get("q1")
                if "answered" in task and not task["answered"].done():
                    task["answered"].set_result(answer)
                return {}
            if method == "tasks/cancel":
                if task["status"] in ("completed", "failed", "cancelled"):
                    raise LookupError({"code": -32602, "message": "Task already ended"})
                if not OPTIONS.get("cancel_ignored"):
                    task["status"], task["message"] = "cancelled", "cancelled by request"
                    task["job"].cancel()
                    task["done"].set()
                return {} if MODERN else wire(task)
            if method == "tasks/result" and not MODERN:
                if OPTIONS.get("result_hang"):
                    await asyncio.Event().wait()
                await task["done"].wait()
                if task["status"] == "failed":
                    raise LookupError({"code": -32603, "message": "the research machine broke"})
                return {**task.get("result", {"content": []}), "_meta": {RELATED: {"taskId": task["id"]}}}
        raise LookupError({"code": -32601, "message": f"Method not found: {method}"})

    async def progress(self, token, task) -> None:
        for i in range(1, 3):
            await asyncio.sleep(0.05)
            await self.send({"jsonrpc": "2.0", "method": "notifications/progress", "params": {
                "progressToken": token, "progress": i, "total": 2, "message": f"step {i}"}})


async def stdio() -> None:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=1 << 24)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    lock = asyncio.Lock()

    async def send(message: dict) -> None:
        async with lock:
            sys.stdout.write(json.dumps(message) + "\n")
            sys.stdout.flush()
    server = Server(send)

    async def one(line: bytes) -> None:
        reply = await server.handle(json.loads(line))
        if reply is not None:
            await send(reply)
    while line := await reader.readline():
        if line.strip():
            asyncio.ensure_future(one(line))


async def http() -> None:
    notes: list[dict] = []   # notifications wait for the next response (sent as JSON only)

    async def send(message: dict) -> None:
        notes.append(message)
    server = Server(send)

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.decode("latin-1").split("\r\n"):
                    if line.lower().startswith("content-length:"):
                        length = int(line.split(":", 1)[1])
                body = await reader.readexactly(length) if length else b""
                if not head.startswith(b"POST"):
                    writer.write(b"HTTP/1.1 405 Method Not Allowed\r\ncontent-length: 0\r\n\r\n")
                    await writer.drain()
                    continue
                message = json.loads(body)
                if OPTIONS.get("drop_create") and message.get("method") == "tools/call":
                    record(message)   # received, perhaps acted on, never answered: the connection drops
                    writer.close()
                    return
                reply = await server.handle(message)
                if reply is None:
                    writer.write(b"HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\n\r\n")
                else:
                    data = json.dumps(reply).encode()
                    writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                                 b"content-length: %d\r\n\r\n%s" % (len(data), data))
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()
    listener = await asyncio.start_server(serve, "127.0.0.1", 0)
    print("PORT", listener.sockets[0].getsockname()[1], flush=True)
    await asyncio.Event().wait()


if __name__ == "__main__":
    asyncio.run(http() if "--http" in sys.argv else stdio())
