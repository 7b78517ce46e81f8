"""Weather-like MCP server on FastMCP 4.x (which wraps `mcp` 2.x), a peer for mcpmini's interop tests.

Usage: python fastmcp_weather.py stdio
       python fastmcp_weather.py http PORT
Run it with the interpreter of the FastMCP venv (see ../interop_peers.py). HTTP binds 127.0.0.1 only.
"""

from __future__ import annotations

import sys

from fastmcp import FastMCP

mcp = FastMCP("fastmcp-weather", instructions="Canned weather data for mcpmini's interop tests.")


@mcp.tool
def get_forecast(city: str) -> str:
    """Return a canned forecast for a city."""
    return f"Forecast for {city}: sunny, 22°C"


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


if __name__ == "__main__":
    if sys.argv[1:2] == ["http"]:
        mcp.run("http", show_banner=False, host="127.0.0.1", port=int(sys.argv[2]), path="/mcp")
    else:
        mcp.run("stdio", show_banner=False)
