"""Benchmark peer on the official Python SDK (`mcp` 2.x): `echo` returns its text, `big` returns
one text block of `n` bytes. Run with the interpreter of the benchmark venv (see bench.py).

Usage: python bench_py_server.py stdio
       python bench_py_server.py http PORT [--json] [--stateless]     (binds 127.0.0.1 only)
"""

from __future__ import annotations

import argparse

from mcp.server import MCPServer

mcp = MCPServer("bench-py")


@mcp.tool()
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@mcp.tool()
def big(n: int) -> str:
    """Return n bytes of text."""
    return "x" * n


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("transport", choices=["stdio", "http"])
    parser.add_argument("port", nargs="?", type=int, default=0)
    parser.add_argument("--json", action="store_true", help="plain JSON replies instead of SSE")
    parser.add_argument("--stateless", action="store_true")
    args = parser.parse_args()
    if args.transport == "stdio":
        mcp.run()
    else:
        mcp.run("streamable-http", host="127.0.0.1", port=args.port,
                json_response=args.json, stateless_http=args.stateless)


if __name__ == "__main__":
    main()
