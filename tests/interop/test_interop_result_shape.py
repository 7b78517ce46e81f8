"""One result shape in both eras against real dual-era servers (issue 24, item 3): the same
call_tool, read_resource and get_prompt results whether the era is 2026-07-28 or legacy, with no
protocol bookkeeping (resultType, ttlMs, cacheScope, io.modelcontextprotocol/ _meta keys)."""

from __future__ import annotations

import pytest

from interop_checks import MODERN, weather_session

BOOKKEEPING = {"resultType", "ttlMs", "cacheScope"}


@pytest.mark.parametrize("server", ["ts_cmd", "py_cmd"])
def test_the_same_results_in_both_eras(server: str, request: pytest.FixtureRequest, run) -> None:
    argv = request.getfixturevalue(server)
    modern, legacy = run(weather_session(argv, protocol=MODERN)), run(weather_session(argv, protocol="legacy"))
    assert (modern["era"], legacy["era"]) == (MODERN, "legacy")
    for key in ("forecast", "added", "cities", "prompt"):
        assert modern[key] == legacy[key], key
        assert not BOOKKEEPING & set(modern[key])
        assert not any(k.startswith("io.modelcontextprotocol/") for k in modern[key].get("_meta", {}))
