"""Helpers for mcpmini's hermetic core tests: a hard-deadline ``run``, the :class:`Fake` server
handle (command line, environment, recordings of ``core_fakes.py``) and process checks."""
from __future__ import annotations

import asyncio
import faulthandler
import json
import os
import sys
import time
from pathlib import Path
from typing import Any, Awaitable, Callable

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
FAKE = str(HERE / "core_fakes.py")
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # import mcpmini from the checkout

import mcpmini  # noqa: E402


def run(coro: Awaitable[Any], timeout: float = 20.0) -> Any:
    """Run ``coro`` with a hard deadline. asyncio.wait_for cancels it at ``timeout``; should
    the coroutine swallow the cancellation, faulthandler dumps the stacks and exits instead of
    letting the suite hang."""
    async def bounded() -> Any:
        return await asyncio.wait_for(coro, timeout)

    faulthandler.dump_traceback_later(timeout + 30, exit=True)
    try:
        return asyncio.run(bounded())
    finally:
        faulthandler.cancel_dump_traceback_later()


class Fake:
    """One fake server configuration: the command line, the environment it needs and what it
    recorded. ``argv`` never changes, so two runs share an era-cache entry."""

    def __init__(self, tmp_path: Path, mode: str, **options: Any) -> None:
        self.dir = tmp_path
        self.cfg_path = tmp_path / "fake-cfg.json"
        self.argv = [sys.executable, FAKE]
        self.env = {"CORE_FAKE_CFG": str(self.cfg_path)}
        self.run_no = 0
        self.configure(mode, **options)

    def configure(self, mode: str, **options: Any) -> None:
        """(Re)write the configuration; the next process started reads it and records to a
        fresh file, so each configuration's messages are separate."""
        self.run_no += 1
        self.record = self.dir / f"received-{self.run_no}.jsonl"
        self.sent_path = self.dir / f"sent-{self.run_no}.jsonl"
        cfg = {"mode": mode, "record": str(self.record), "sent": str(self.sent_path), **options}
        self.cfg_path.write_text(json.dumps(cfg))

    def client(self, **kwargs: Any) -> mcpmini.Client:
        env = {**self.env, **kwargs.pop("env", {})}
        return mcpmini.Client(self.argv, env=env, **kwargs)

    @staticmethod
    def _lines(path: Path) -> list[dict]:
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]

    def entries(self) -> list[dict]:
        """Everything recorded, process-start markers included."""
        return self._lines(self.record)

    def received(self) -> list[dict]:
        """The messages the server(s) received, in order (markers left out)."""
        return [m for m in self.entries() if not ({"_start", "_child"} & m.keys())]

    def sent(self) -> list[dict]:
        return self._lines(self.sent_path)

    def starts(self) -> list[dict]:
        return [m for m in self.entries() if "_start" in m]

    def children(self) -> list[int]:
        return [m["_child"] for m in self.entries() if "_child" in m]

    def methods(self) -> list[str]:
        return [m.get("method", "<response>") for m in self.received()]

    def requests(self, method: str) -> list[dict]:
        return [m for m in self.received() if m.get("method") == method and "id" in m]

    def cancels(self) -> list[dict]:
        return [m for m in self.received() if m.get("method") == "notifications/cancelled"]

    async def wait_for(self, predicate: Callable[[Fake], Any], timeout: float = 5.0) -> Any:
        """Poll the recordings until ``predicate(self)`` is truthy; its value, or None."""
        deadline = time.monotonic() + timeout
        while True:
            value = predicate(self)
            if value or time.monotonic() > deadline:
                return value
            await asyncio.sleep(0.02)


def proc_state(pid: int) -> str | None:
    """The /proc state letter of ``pid`` (None when gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return None


def alive(pid: int) -> bool:
    """Running, not merely a zombie awaiting its reaper."""
    return proc_state(pid) not in (None, "Z", "X")


def group_members(pgid: int) -> list[int]:
    """Live (non-zombie) processes of process group ``pgid``."""
    members = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] not in ("Z", "X"):
            members.append(int(entry))
    return members


def wait_gone(pids: list[int], pgid: int | None = None, timeout: float = 10.0) -> list[int]:
    """Wait until ``pids`` (and group ``pgid``) are gone; what is still alive at the end."""
    deadline = time.monotonic() + timeout
    while True:
        left = [p for p in pids if alive(p)] + (group_members(pgid) if pgid else [])
        if not left or time.monotonic() > deadline:
            return sorted(set(left))
        time.sleep(0.05)
