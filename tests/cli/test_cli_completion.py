"""Shell completion (issue 14, item 11): the scripts parse, and complete commands, options,
configured server names, and tool names from the persistent list cache without starting a
server."""
from __future__ import annotations

import shutil
import subprocess

import pytest

import mcpmini
from harness import write_json


@pytest.fixture
def cfg(work):
    # the servers cannot even start: completion must never try
    return write_json(work / "c.json", {"mcpServers": {"weather": {"command": "/nonexistent/weather"},
                                                        "wiki": {"url": "http://127.0.0.1:9/mcp"}}})


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_the_script_parses(cli, shell, tmp_path):
    if not shutil.which(shell):
        pytest.skip(f"{shell} is not installed")
    r = cli("completion", shell)
    assert r.code == 0 and "mcpmini" in r.out
    script = tmp_path / f"script.{shell}"
    script.write_text(r.out)
    assert subprocess.run([shell, "-n", str(script)], capture_output=True).returncode == 0


@pytest.mark.parametrize("line, words", [
    ("mcpmini ", ["ask", "bridge", "call", "check", "completion", "info", "login", "logout", "prompt",
                  "prompts", "read", "replay", "resources", "servers", "task", "tasks", "templates", "tools",
                  "trust"]),
    ("mcpmini to", ["tools"]),
    ("mcpmini call --no-", ["--no-cache", "--no-color", "--no-validate"]),
    ("mcpmini --js", ["--json"]),
    ("mcpmini --config c.json call ", ["weather", "wiki"]),
    ("mcpmini call --config c.json we", ["weather"]),
    ("mcpmini --config c.json ask 'a question' --server w", ["weather", "wiki"]),
    ("mcpmini --config c.json call weather ", ["get_forecast", "get_alerts"]),
    ("mcpmini --config c.json tools weather get_f", ["get_forecast"]),
    ("mcpmini --config c.json call weather get_forecast ", []),
    ("mcpmini --config ", []),        # a file: the shell completes it
    ("mcpmini --config c.json call wiki ", []),  # nothing cached
])
def test_what_completes(cfg, monkeypatch, line, words):
    cached = {"weather": ["get_alerts", "get_forecast"]}
    monkeypatch.setattr(mcpmini, "_cached_tool_names", lambda server, *policy: cached.get(server.name, []))
    monkeypatch.setattr(mcpmini.Client, "connect", lambda *a: pytest.fail("a server was started"))
    assert mcpmini._completions(line) == sorted(words)


def test_bash_completes_through_the_script(cfg, tmp_path):
    if not shutil.which("bash"):
        pytest.skip("bash is not installed")
    script = subprocess.run([mcpmini.sys.executable, mcpmini.__file__, "completion", "bash"],
                            capture_output=True, text=True, check=True).stdout
    line = "mcpmini --config c.json call w"
    test = (f"{script}\nCOMP_LINE='{line}'; COMP_POINT={len(line)}; _mcpmini; "
            "printf '%s\\n' \"${COMPREPLY[@]}\"")
    done = subprocess.run(["bash", "-c", test], capture_output=True, text=True, timeout=60)
    assert done.stdout.split() == ["weather", "wiki"], done.stderr
