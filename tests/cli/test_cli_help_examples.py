"""Issue 25, item 12: every example in every command's --help runs as written from the
repository's root (here: a directory whose `examples` is the repository's), in a real bash with
`mcpmini` being `python3 mcpmini.py`. Exempt (decision #36): examples that need a model or a
login (ask, login, logout), that serve until stopped (bridge, --listen), or that hold a
placeholder only a run gives (TASK_ID, <task-id>)."""
from __future__ import annotations

import re
import shlex
import socket
import subprocess
import sys

import pytest

import mcpmini
from harness import EXAMPLES, MCPMINI

EXEMPT_COMMANDS = {"ask", "bridge", "login", "logout"}
PLACEHOLDER = re.compile(r"TASK_ID|<[\w-]+>|--listen")


def examples() -> list[tuple[str, str]]:
    parser = mcpmini._build_parser()
    found = []
    for name, sub in parser.commands.items():
        text = sub.format_help()
        assert "examples:\n" in text or name in EXEMPT_COMMANDS, f"{name} --help shows no example"
        found += [(name, line[2:]) for line in text.partition("examples:\n")[2].splitlines()
                  if line.startswith("  mcpmini ")]
    return found


ALL = examples()
RUNNABLE = [(n, e) for n, e in ALL if n not in EXEMPT_COMMANDS and not PLACEHOLDER.search(e)]


def test_most_examples_are_checked():
    assert len(RUNNABLE) >= 15 and len(RUNNABLE) >= 2 * (len(ALL) - len(RUNNABLE))


def test_each_help_explains_server_and_wraps_its_description():
    parser = mcpmini._build_parser()
    for name, sub in parser.commands.items():
        text = sub.format_help()
        if "SERVER" in sub.format_usage():
            assert "a configured name, an http(s):// URL, or a command line in quotes" in " ".join(text.split()), name
        prose = text.partition("examples:")[0]
        assert all(len(line) <= 100 for line in prose.splitlines() if not line.startswith("usage")), name


@pytest.fixture(scope="module")
def http_example():
    """examples/weather_http_server.py on its default port, as the example says to start it."""
    with socket.socket() as probe:
        if probe.connect_ex(("127.0.0.1", 8000)) == 0:
            yield False   # taken: the examples that need it are skipped
            return
    server = subprocess.Popen([sys.executable, str(EXAMPLES / "weather_http_server.py")],
                              stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        yield bool(server.stdout.readline())   # it prints its endpoint once it listens
    finally:
        server.kill()
        server.wait()


@pytest.mark.parametrize("command, example", RUNNABLE, ids=[e for _, e in RUNNABLE])
def test_a_help_example_runs_as_written(work, tmp_path, command, example, http_example):
    if "127.0.0.1:8000" in example and not http_example:
        pytest.skip("port 8000 is taken")
    (work / "examples").symlink_to(EXAMPLES)
    (tmp_path / "home" / ".config" / "fish" / "completions").mkdir(parents=True, exist_ok=True)
    script = f"mcpmini() {{ {shlex.quote(sys.executable)} {shlex.quote(str(MCPMINI))} \"$@\"; }}\n{example}\n"
    p = subprocess.run(["bash", "-c", script], cwd=work, stdin=subprocess.DEVNULL, capture_output=True,
                       text=True, timeout=120)
    assert p.returncode == 0, f"{example}\n{p.stderr}"
    assert "error" not in p.stderr, p.stderr
