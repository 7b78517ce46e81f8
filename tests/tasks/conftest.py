"""The task tests' fixture: ``tasky(era="legacy", http=False, **options)``, tests/tasks/task_server.py
configured by ``options`` (see its docstring), over stdio (a command line) or Streamable HTTP (a
URL; the process is killed at teardown); ``.record()`` is what it received."""
from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

SERVER = Path(__file__).with_name("task_server.py")


class Tasky:
    def __init__(self, tmp: Path, era: str, http: bool, options: dict[str, Any]) -> None:
        self.log = tmp / f"record-{os.urandom(4).hex()}.jsonl"
        self.options = json.dumps({"era": era, "record": str(self.log), **options})
        self.argv = [sys.executable, str(SERVER), self.options]
        self.process: subprocess.Popen | None = None
        if http:
            self.process = subprocess.Popen([*self.argv, "--http"], stdout=subprocess.PIPE, text=True)
            port = self.process.stdout.readline().split()[1]   # "PORT n"
            self.target = f"http://127.0.0.1:{port}/mcp"
        else:
            self.target = shlex.join(self.argv)

    def record(self) -> list[dict]:
        return [json.loads(line) for line in self.log.read_text().splitlines()] if self.log.exists() else []

    def methods(self) -> list[str]:
        return [m.get("method", "(response)") for m in self.record()]

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGKILL)
            self.process.wait()


@pytest.fixture
def tasky(tmp_path: Path) -> Iterator[Callable[..., Tasky]]:
    made: list[Tasky] = []

    def make(era: str = "legacy", http: bool = False, **options: Any) -> Tasky:
        made.append(Tasky(tmp_path, era, http, options))
        return made[-1]
    yield make
    for each in made:
        each.stop()
