"""Weather-like MCP server on FastMCP 2.x (`fastmcp` 2.14, on `mcp` 1.x), a peer for mcpmini's
interop tests: legacy era only (2024-11-05 ... 2025-11-25).

Usage: python fastmcp2_weather.py stdio
       python fastmcp2_weather.py http PORT [--stateless] [--json]
       python fastmcp2_weather.py sse PORT
Run it with the interpreter of the venv-py3.X-fastmcp2 venv (see ../interop_peers.py). HTTP binds
127.0.0.1 only.
"""

from __future__ import annotations

import argparse

from fastmcp import FastMCP

mcp = FastMCP("fastmcp2-weather", instructions="Canned weather data for mcpmini's interop tests.")


@mcp.tool
def get_forecast(city: str, days: int = 1) -> str:
    """Return a canned forecast for a city."""
    if days == 1:
        return f"Forecast for {city}: sunny, 22°C"
    return f"Forecast for {city}, {days} days: sunny, 22°C"


@mcp.tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@mcp.resource("weather://cities", name="cities", mime_type="text/plain")
def cities() -> str:
    """The cities this server knows."""
    return "Paris\nTokyo\nLima"


@mcp.prompt
def forecast_prompt(city: str) -> str:
    """Ask for the weather in a city."""
    return f"What is the weather in {city}?"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("transport", choices=["stdio", "http", "sse"])
    parser.add_argument("port", nargs="?", type=int, default=8000)
    parser.add_argument("--stateless", action="store_true")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.transport == "stdio":
        mcp.run("stdio", show_banner=False)
    elif args.transport == "http":
        mcp.run("http", show_banner=False, host="127.0.0.1", port=args.port, path="/mcp",
                stateless_http=args.stateless, json_response=args.json)
    else:
        mcp.run("sse", show_banner=False, host="127.0.0.1", port=args.port, path="/sse")


if __name__ == "__main__":
    main()
