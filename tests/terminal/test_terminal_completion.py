"""Completion in real shells on a pty, typing Tab (issue 25, item 1): every form the README
writes (``mcpmini``, ``./mcpmini.py``, ``python3 mcpmini.py``, ``python3 -m mcpmini``) completes,
and ``python3`` keeps the shell's own completion otherwise. The commands typed are stand-ins
that print the line they get (``LINE: ...``), so what Tab inserted is what they print."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from harness import MCPMINI, write_json
from terminal_harness import Screen

BASH_COMPLETION = "/usr/share/bash-completion/bash_completion"
ADOPT = "import os, sys; os.close(os.open(sys.argv[1], os.O_RDWR)); os.execvp(sys.argv[2], sys.argv[2:])"
SHELLS = {   # how to start each one bare, then what makes it complete
    "bash": (["bash", "--norc", "--noprofile", "-i"], "PS1='$ '"),
    "bash-completion": (["bash", "--norc", "--noprofile", "-i"], f"PS1='$ '; source {BASH_COMPLETION}"),
    "zsh": (["zsh", "-f", "-i"], "PROMPT='$ '; autoload -Uz compinit; compinit -u -D"),
    "fish": (["fish", "-i"], "function fish_prompt; echo '$ '; end"),
}


class Shell(Screen):
    """A shell on a pty that is its controlling terminal (Screen's reading and typing)."""

    def __init__(self, argv: list[str], cwd: str, env: dict[str, str]) -> None:
        import threading
        self.master, slave = os.openpty()
        self.proc = subprocess.Popen([sys.executable, "-c", ADOPT, os.ttyname(slave), *argv], stdin=slave,
                                     stdout=slave, stderr=slave, cwd=cwd, env=env, start_new_session=True)
        os.close(slave)
        self.raw, self.seen, self.lock = b"", 0, threading.Lock()
        threading.Thread(target=self._pump, daemon=True).start()


@pytest.fixture(params=list(SHELLS))
def shell(request, work):
    name = request.param
    argv, setup = SHELLS[name]
    if not shutil.which(argv[0]) or name == "bash-completion" and not os.path.exists(BASH_COMPLETION):
        if os.environ.get("MCPMINI_REQUIRE_INTEROP"):
            pytest.fail(f"{name} is not installed (.ci/run installs it)")
        pytest.skip(f"{name} is not installed")
    write_json(work / "c.json", {"mcpServers": {"weather": {"command": "/nonexistent/weather"},
                                                 "wiki": {"url": "http://127.0.0.1:9/mcp"}}})
    (work / "bin").mkdir()
    (work / "sub").mkdir()
    (work / "sub" / "file.py").write_text("")
    for path in (work / "bin" / "python3", work / "bin" / "mcpmini", work / "mcpmini.py"):
        path.write_text('#!/bin/sh\necho "LINE: $*"\n')
        path.chmod(0o755)
    env = {**os.environ, "HOME": str(work), "PATH": f"{work / 'bin'}:{os.environ['PATH']}", "TERM": "xterm",
           "XDG_CONFIG_HOME": str(work / "xdg"), "XDG_DATA_HOME": str(work / "xdg-data")}
    s = Shell(argv, str(work), env)
    kind = "bash" if name.startswith("bash") else name
    s.type(f"{setup}; eval \"$({sys.executable} {MCPMINI} completion {kind} | string collect)\"\n"
           if kind == "fish" else f"{setup}; eval \"$({sys.executable} {MCPMINI} completion {kind})\"\n")
    s.type("echo RE''ADY\n")
    s.expect("READY\n")
    yield s
    s.close()


@pytest.mark.parametrize("typed, printed", [
    ("mcpmini --config c.json call we", "--config c.json call weather"),
    ("./mcpmini.py --config c.json call we", "--config c.json call weather"),
    ("python3 mcpmini.py --config c.json call we", "mcpmini.py --config c.json call weather"),
    ("python3 -m mcpmini --config c.json call we", "-m mcpmini --config c.json call weather"),
    ("python3 mcpmini.py --js", "mcpmini.py --json"),
    ("python3 mcpmini.py comp", "mcpmini.py completion"),
    ("python3 sub/fi", "sub/file.py"),          # python3's own: a file
    ("python3 mcpm", "mcpmini.py"),              # ... and the script itself
])
def test_tab_completes(shell, typed, printed):
    shell.type(typed + "\t")
    shell.type("\n")
    shell.expect(f"LINE: {printed}")


def test_python3_keeps_its_own_completion(shell, request):
    if request.node.callspec.params["shell"] == "bash":
        pytest.skip("bare bash has no completion of python3's options")
    shell.type("python3 -W ig\t")
    shell.type("\n")
    shell.expect("LINE: -W ignore")
