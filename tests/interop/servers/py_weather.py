"""Weather-like MCP server on the official Python SDK (`mcp` 2.x), a peer for mcpmini's interop tests.

Usage: python py_weather.py stdio
       python py_weather.py http PORT [--stateless] [--json]
       python py_weather.py sse PORT
Run it with the interpreter of the peers venv (see ../interop_peers.py). HTTP binds 127.0.0.1 only.
"""

from __future__ import annotations

import argparse

from mcp.server import MCPServer

mcp = MCPServer("py-weather", instructions="Canned weather data for mcpmini's interop tests.")


@mcp.tool()
def get_forecast(city: str) -> str:
    """Return a canned forecast for a city."""
    return f"Forecast for {city}: sunny, 22°C"


@mcp.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@mcp.resource("weather://cities", name="cities", mime_type="text/plain")
def cities() -> str:
    """The cities this server knows."""
    return "Paris\nTokyo\nLima"


@mcp.prompt()
def forecast_prompt(city: str) -> str:
    """Ask for the weather in a city."""
    return f"What is the weather in {city}?"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("transport", choices=["stdio", "http", "sse"])
    parser.add_argument("port", nargs="?", type=int, default=0)
    parser.add_argument("--stateless", action="store_true")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.transport == "stdio":
        mcp.run()
    elif args.transport == "http":
        mcp.run("streamable-http", host="127.0.0.1", port=args.port,
                stateless_http=args.stateless, json_response=args.json)
    else:
        mcp.run("sse", host="127.0.0.1", port=args.port)


if __name__ == "__main__":
    main()
