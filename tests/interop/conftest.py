"""Fixtures for the interop suite: real MCP peers (npm and PyPI servers), installed lazily.

A peer that cannot be installed or started skips the tests that need it, with the reason; with
MCPMINI_REQUIRE_INTEROP=1 (CI) it fails them instead. Every test is bounded: `run(coro, timeout)`
(90 s here), the CLI's `--timeout 30` and subprocess timeouts, but not by the shared per-test
deadline (a first use may install a peer for minutes). The peers cache is
~/.cache/mcpmini-peers (MCPMINI_PEERS_DIR overrides).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterator
from typing import Any

import pytest

import harness
import interop_peers as peers

# Peers listen on loopback only; a proxy from the environment must never see that traffic
# (also before a test's own isolation, when session fixtures start peers).
for _name in ("NO_PROXY", "no_proxy"):
    os.environ[_name] = "127.0.0.1,localhost"
# Tests run with a temporary HOME: the peers stay where the real one keeps them.
os.environ.setdefault("MCPMINI_PEERS_DIR", str(peers.peers_dir()))

REQUIRE = os.environ.get("MCPMINI_REQUIRE_INTEROP") == "1"
RUN_TIMEOUT = 90.0      # the hard deadline of one run(...)
PROCESS_TIMEOUT = 90.0  # one `python3 mcpmini.py` run


def unavailable(reason: str) -> None:
    """Skip the test (fail it under MCPMINI_REQUIRE_INTEROP=1): a peer is not available."""
    if REQUIRE:
        pytest.fail(f"interop peer unavailable and MCPMINI_REQUIRE_INTEROP=1: {reason}", pytrace=False)
    pytest.skip(f"interop peer unavailable: {reason}")


_failed: dict[tuple, str] = {}   # a peer that failed once is not installed again this session


def need(build: Callable[..., Any], *args: Any) -> Any:
    """Call an interop_peers function; a PeerError becomes skip (or fail in CI)."""
    key = (build.__name__, *args)
    if key not in _failed:
        try:
            return build(*args)
        except peers.PeerError as exc:
            _failed[key] = str(exc)
    unavailable(_failed[key])


@pytest.fixture
def test_deadline() -> None:
    """No per-test deadline: installing a peer on first use takes minutes."""
    return None


@pytest.fixture
def run_timeout() -> float:
    """The default deadline of one `run(coro)` here: 90 s."""
    return RUN_TIMEOUT


@pytest.fixture
def cli(cli: Callable[..., harness.Result]) -> Callable[..., harness.Result]:
    """The shared in-process runner with `--timeout 30`: a stuck peer fails the test instead of
    hanging it."""
    return functools.partial(cli, "--timeout", "30")


@pytest.fixture
def proc(proc: Callable[..., Any]) -> Callable[..., Any]:
    """The shared `python3 mcpmini.py` runner with `--timeout 30`, bounded, text out."""
    return functools.partial(proc, "--timeout", "30", timeout=PROCESS_TIMEOUT, encoding="utf-8",
                             errors="replace")


# -- stdio peers: argv lists ------------------------------------------------------------------------
@pytest.fixture(scope="session")
def node22() -> str:
    """Path of the Node 22 binary from npm."""
    return need(peers.node22)


@pytest.fixture(scope="session")
def everything_cmd() -> list[str]:
    """argv of server-everything over stdio (legacy only)."""
    return need(peers.everything_stdio)


@pytest.fixture(scope="session")
def py_cmd() -> list[str]:
    """argv of servers/py_weather.py (official Python SDK, dual era) over stdio."""
    return need(peers.py_server_stdio)


@pytest.fixture(scope="session")
def ts_cmd() -> list[str]:
    """argv of servers/ts_weather.mjs (TS SDK v2, dual era) over stdio."""
    return need(peers.ts_v2_server_stdio)


@pytest.fixture(scope="session")
def fastmcp_cmd() -> list[str]:
    """argv of servers/fastmcp_weather.py over stdio."""
    return need(peers.fastmcp_server_stdio)


@pytest.fixture(scope="session")
def py1_cmd() -> list[str]:
    """argv of servers/py1_weather.py (Python SDK 1.x, legacy only) over stdio."""
    return need(peers.py1_server_stdio)


@pytest.fixture(scope="session")
def fastmcp2_cmd() -> list[str]:
    """argv of servers/fastmcp2_weather.py (FastMCP 2.x, legacy only) over stdio."""
    return need(peers.fastmcp2_server_stdio)


@pytest.fixture(scope="session")
def ts1_cmd() -> list[str]:
    """argv of servers/ts1_weather.mjs (TS SDK 1.x, legacy only) over stdio."""
    return need(peers.ts1_server_stdio)


@pytest.fixture(scope="session")
def ts1_tools_only_cmd() -> list[str]:
    """argv of servers/ts1_weather.mjs --tools-only: no resources or prompts capability."""
    return need(peers.ts1_server_stdio, True)


# -- clients nobody here wrote ---------------------------------------------------------------------
@pytest.fixture(scope="session")
def sdk_python() -> str:
    """Interpreter of the venv with the official Python SDK (mcp 2.3.0): runs its Client."""
    return need(peers.py_python)


@pytest.fixture(scope="session")
def inspector_cli() -> list[str]:
    """argv of the MCP Inspector's CLI (`mcp-inspector --cli`)."""
    return need(peers.inspector_cli)


# -- HTTP peers: started once per session, stopped at its end -------------------------------------
@pytest.fixture(scope="session")
def http_peer() -> Iterator[Callable[..., peers.HTTPPeer]]:
    """`http_peer(name, *args)` starts `interop_peers.<name>(*args)` once and returns the
    HTTPPeer (url, stop); a peer that died since is started again."""
    started: dict[tuple, peers.HTTPPeer] = {}

    def get(name: str, *args: Any) -> peers.HTTPPeer:
        key = (name, *args)
        peer = started.get(key)
        if peer is None or peer.proc.poll() is not None:
            peer = started[key] = need(getattr(peers, name), *args)
        return peer

    yield get
    for peer in started.values():
        peer.stop()


@pytest.fixture(scope="session")
def llama_server() -> Iterator[peers.HTTPPeer]:
    """llama-cpp-python's OpenAI-compatible server with SmolLM2-135M at .../v1 (key
    peers.LLAMA_API_KEY); its first use builds llama.cpp and downloads the model."""
    peer = need(peers.llama_server)
    yield peer
    peer.stop()
