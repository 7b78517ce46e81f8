"""Issue 24 item 9: the stdio bridge reads stdin on the loop and writes a small reply at once
(a large one, or one behind it, through its writer thread): what it says is unchanged. stdin may
be a file (read by a thread); a reply too large for one pipe write is never mixed with others."""
from __future__ import annotations

import json
import subprocess
import sys

from harness import MCPMINI

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}


def test_stdin_a_file_is_read_to_its_end_and_the_bridge_exits(fake, tmp_path):
    server = fake("legacy")
    requests = tmp_path / "in.jsonl"
    requests.write_bytes(b"not json\n" + json.dumps({"jsonrpc": "2.0", "id": 2, "method": "ping"}).encode() + b"\n")
    with requests.open("rb") as stdin:
        done = subprocess.run([sys.executable, str(MCPMINI), "bridge", server.cmdline], stdin=stdin,
                              capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert lines[0] == {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}}
    assert lines[1:] in ([], [{"jsonrpc": "2.0", "id": 2, "result": {}}])


def test_a_large_reply_and_small_ones_are_never_mixed(bridge, fake):
    # a 200 KB reply goes to the writer thread; a ping's reply written meanwhile must wait for it
    server = fake("legacy", tools=[{"name": "big", "inputSchema": {"type": "object"}, "does": "text",
                                    "text": "x" * 200_000}])
    b = bridge(server)
    b.send(INIT)
    assert b.next(lambda m: m.get("id") == 1)["result"]["serverInfo"]
    b.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    b.request(2, "tools/call", {"name": "big", "arguments": {}})
    for rid in range(3, 8):
        b.request(rid, "ping")
    replies = {m["id"]: m for m in (b.next(lambda m: m.get("id") in range(2, 8)) for _ in range(6))}
    assert sorted(replies) == [2, 3, 4, 5, 6, 7]   # every line whole: none written into another
    assert replies[2]["result"]["content"][0]["text"] == "x" * 200_000
