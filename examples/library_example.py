#!/usr/bin/env python3
"""Use mcpmini as a library: start the demo weather server, list its tools, ask for a forecast.

Run from anywhere:   python3 examples/library_example.py
(The forecast is DEMO DATA from weather_server.py, not real weather.)
"""
from __future__ import annotations

import asyncio
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
try:
    import mcpmini
except ImportError:  # running from a checkout: mcpmini.py lives one folder up
    sys.path.insert(0, os.path.dirname(HERE))
    import mcpmini


async def main() -> None:
    server = [sys.executable, os.path.join(HERE, "weather_server.py")]
    async with mcpmini.Client(server) as client:
        print(f"connected: {client.server_info.get('name')} ({client.era}, {client.protocol_version})")
        for tool in await client.list_tools():
            print(f"tool: {tool['name']}: {tool.get('description', '')[:60]}...")
        result = await client.call_tool("get_forecast", {"city": "Hangzhou"})
        print(mcpmini.result_text(result))


if __name__ == "__main__":
    asyncio.run(main())
