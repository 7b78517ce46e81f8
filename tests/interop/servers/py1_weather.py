"""Weather-like MCP server on the official Python SDK 1.x (`mcp` 1.30, `mcp.server.fastmcp.FastMCP`),
a peer for mcpmini's interop tests: legacy era only (2024-11-05 ... 2025-11-25).

Usage: python py1_weather.py stdio
       python py1_weather.py http PORT [--stateless] [--json]
       python py1_weather.py sse PORT
Run it with the interpreter of the venv-py3.X-sdk1 venv (see ../interop_peers.py). HTTP binds
127.0.0.1 only.
"""

from __future__ import annotations

import argparse

from mcp.server.fastmcp import FastMCP


def forecast(city: str, days: int) -> str:
    if days == 1:
        return f"Forecast for {city}: sunny, 22°C"
    return f"Forecast for {city}, {days} days: sunny, 22°C"


def build(port: int, stateless: bool, json_response: bool) -> FastMCP:
    # In the 1.x SDK host, port and the HTTP modes are server settings, not arguments of run().
    mcp = FastMCP("py1-weather", instructions="Canned weather data for mcpmini's interop tests.",
                  host="127.0.0.1", port=port, stateless_http=stateless, json_response=json_response)

    @mcp.tool()
    def get_forecast(city: str, days: int = 1) -> str:
        """Return a canned forecast for a city."""
        return forecast(city, days)

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

    return mcp


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("transport", choices=["stdio", "http", "sse"])
    parser.add_argument("port", nargs="?", type=int, default=8000)
    parser.add_argument("--stateless", action="store_true")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    mcp = build(args.port, args.stateless, args.json)
    mcp.run({"stdio": "stdio", "http": "streamable-http", "sse": "sse"}[args.transport])


if __name__ == "__main__":
    main()
