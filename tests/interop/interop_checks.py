"""What the interop tests ask of each of our weather servers (servers/*: one per SDK) and what
every one of them must answer, whatever the era and transport."""

from __future__ import annotations

from typing import Any

import mcpmini

CLIENT_TIMEOUT = 30.0   # per request: a stuck peer fails the test instead of hanging it
MODERN = "2026-07-28"
FORECAST = "Forecast for Paris: sunny, 22°C"


def names(items: list[dict]) -> set[str]:
    return {item["name"] for item in items}


async def weather_session(server: Any, *, days: bool = False, **kwargs: Any) -> dict[str, Any]:
    """Connect to one of our weather servers and exercise tools, resources and prompts (and
    the optional ``days`` argument of get_forecast, which only some of them have)."""
    async with mcpmini.Client(server, timeout=CLIENT_TIMEOUT, **kwargs) as client:
        tools = await client.list_tools()
        forecast = await client.call_tool("get_forecast", {"city": "Paris"})
        three = await client.call_tool("get_forecast", {"city": "Paris", "days": 3}) if days else None
        added = await client.call_tool("add", {"a": 2, "b": 3})
        resources = await client.list_resources()
        cities = await client.read_resource("weather://cities")
        prompts = await client.list_prompts()
        prompt = await client.get_prompt("forecast_prompt", {"city": "Oslo"})
        return {"era": client.era, "version": client.protocol_version, "reason": client.era_reason,
                "info": client.server_info, "tools": tools, "forecast": forecast, "three": three,
                "added": added, "resources": resources, "cities": cities, "prompts": prompts,
                "prompt": prompt}


def check_weather(got: dict[str, Any], server_name: str) -> None:
    """The answers every weather server gives."""
    assert got["info"].get("name") == server_name
    assert {"get_forecast", "add"} <= names(got["tools"])
    schema = next(t for t in got["tools"] if t["name"] == "get_forecast")["inputSchema"]
    assert schema["properties"]["city"]["type"] == "string"
    assert got["forecast"].get("isError") is not True
    assert mcpmini.result_text(got["forecast"]) == FORECAST
    assert mcpmini.result_text(got["added"]) == "5"
    assert "weather://cities" in {r["uri"] for r in got["resources"]}
    assert got["cities"]["contents"][0]["text"] == "Paris\nTokyo\nLima"
    assert "forecast_prompt" in names(got["prompts"])
    message = got["prompt"]["messages"][0]
    assert message["role"] == "user"
    assert message["content"]["text"] == "What is the weather in Oslo?"
