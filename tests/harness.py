"""The plain helpers of mcpmini's test suite, importable from any test (``from harness import
run``): the bounded ``run(coro)``, the ways to run the command line (in-process, as a process,
as a live process to interact with), process checks, and
:class:`FakeServer`, the handle of the one fake stdio server (``fake_server.py``).

The fixtures built on them (isolation, ``cli``, ``proc``, ``fake``, ``run``) are in
``conftest.py``; a conftest cannot be imported reliably (every folder has one of that name), so
what a test calls directly lives here."""
from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import faulthandler
import itertools
import json
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Awaitable, Callable, Iterator

import mcpmini

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
MCPMINI = ROOT / "mcpmini.py"
EXAMPLES = ROOT / "examples"
WEATHER = EXAMPLES / "weather_server.py"
FAKE_SERVER = TESTS / "fake_server.py"
RUN_TIMEOUT = 30.0   # seconds: the default deadline of one run(coro)


def run(coro: Awaitable[Any], timeout: float = RUN_TIMEOUT) -> Any:
    """Run ``coro`` on a fresh event loop with a hard deadline (no pytest-asyncio here).
    asyncio.wait_for cancels it at ``timeout``; should the coroutine swallow the cancellation,
    faulthandler dumps every stack and ends the run instead of letting the suite hang."""
    async def bounded() -> Any:
        return await asyncio.wait_for(coro, timeout)

    faulthandler.dump_traceback_later(timeout + 30, exit=True, file=sys.__stderr__)
    try:
        return asyncio.run(bounded())
    finally:
        faulthandler.cancel_dump_traceback_later()


@contextlib.contextmanager
def deadline(seconds: float | None) -> Iterator[None]:
    """Raise TimeoutError in the main thread once ``seconds`` pass, whatever it is stuck in
    (SIGALRM; nothing where there is none, or for ``None``)."""
    if not seconds or not hasattr(signal, "setitimer"):
        yield
        return

    def expire(signum: int, frame: Any) -> None:
        raise TimeoutError(f"the test exceeded its hard deadline of {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


# -- The command line --------------------------------------------------------------------------

@dataclasses.dataclass
class Result:
    """What one in-process CLI run produced; unpacks as ``code, out, err``."""

    code: int
    out: str
    err: str

    def __iter__(self) -> Iterator[Any]:
        return iter((self.code, self.out, self.err))

    @property
    def error_lines(self) -> list[str]:
        return [line for line in self.err.splitlines() if line.startswith("mcpmini: error: ")]


def run_cli(capsys: Any, *argv: Any) -> Result:
    """``mcpmini.main(argv)`` in-process, its output taken from ``capsys``."""
    capsys.readouterr()
    code = mcpmini.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return Result(code, out, err)


def run_proc(*argv: Any, env: dict[str, str] | None = None, unset: tuple[str, ...] = (),
             timeout: float = 60.0, **kwargs: Any) -> subprocess.CompletedProcess:
    """A real ``python3 mcpmini.py ARGV`` (bytes out unless ``encoding`` is given), in this
    test's environment minus ``unset`` plus ``env``; stdin is /dev/null unless given."""
    environ = {k: v for k, v in os.environ.items() if k not in unset}
    environ.update(env or {})
    if "input" not in kwargs:
        kwargs.setdefault("stdin", subprocess.DEVNULL)
    return subprocess.run([sys.executable, str(MCPMINI), *map(str, argv)], env=environ,
                          capture_output=True, timeout=timeout, **kwargs)


@contextlib.contextmanager
def running(*argv: Any, **kwargs: Any) -> Iterator[subprocess.Popen]:
    """A real ``python3 mcpmini.py ARGV`` to interact with (stdin /dev/null, stdout and stderr
    piped, unless given); killed at the end if it still runs, its pipes closed."""
    kwargs.setdefault("stdin", subprocess.DEVNULL)
    kwargs.setdefault("stdout", subprocess.PIPE)
    kwargs.setdefault("stderr", subprocess.PIPE)
    process = subprocess.Popen([sys.executable, str(MCPMINI), *map(str, argv)], **kwargs)
    try:
        yield process
    finally:
        if process.poll() is None:
            process.kill()
        process.wait()
        for pipe in (process.stdout, process.stderr):
            if pipe:
                pipe.close()


def write_json(path: Path, data: Any) -> Path:
    """Write ``data`` as readable UTF-8 JSON (parents made); the path back."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, ensure_ascii=False, indent=2), encoding="utf-8")
    return path


# -- Processes ----------------------------------------------------------------------------------

def proc_state(pid: int) -> str | None:
    """The /proc state letter of ``pid`` (None when gone)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return None


def alive(pid: int) -> bool:
    """Running, not merely a zombie awaiting its reaper (nobody can use a zombie)."""
    if os.path.isdir("/proc"):
        return proc_state(pid) not in (None, "Z", "X")
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return True


def group_members(pgid: int) -> list[int]:
    """Live (non-zombie) processes of process group ``pgid``."""
    if not os.path.isdir("/proc"):
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return []
        return [pgid]   # somebody, at least
    members = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[2]) == pgid and fields[0] not in ("Z", "X"):
            members.append(int(entry))
    return members


def group_alive(pgid: int) -> bool:
    return bool(group_members(pgid))


def wait_until(predicate: Callable[[], Any], timeout: float = 20.0) -> Any:
    """Poll ``predicate`` until it is truthy or ``timeout`` passes: its last value."""
    deadline = time.monotonic() + timeout
    while not (value := predicate()) and time.monotonic() < deadline:
        time.sleep(0.05)
    return value


def wait_gone(pids: list[int], pgid: int | None = None, timeout: float = 10.0) -> list[int]:
    """Wait until ``pids`` (and group ``pgid``) are gone; what is still alive at the end."""
    def left() -> list[int]:
        return sorted({p for p in pids if alive(p)} | set(group_members(pgid) if pgid else []))
    wait_until(lambda: not left(), timeout)
    return left()


# -- The fake stdio server ------------------------------------------------------------------------

class FakeServer:
    """One configuration of ``fake_server.py``: its command line, a config entry, and what it
    recorded. ``FakeServer(directory, [MODE], *FLAGS, label="fake", **options)``: MODE is one of
    ``fake_server.MODES``, FLAGS are command-line flags of the server (``--legacy``, ``--name
    N``, ``--say TEXT``, ...; they stay visible in argv), options are any other settings (see
    its docstring). ``argv`` never changes, so :meth:`configure` can give the *same* command
    line a new behaviour (the era cache is keyed by command line). Fakes with the same label
    in one directory share a recording."""

    _numbers = itertools.count(1)
    made: list[FakeServer] = []   # since the last kill_leftovers(): this test's fakes

    def __init__(self, directory: Path, *args: str, label: str = "fake", **options: Any) -> None:
        mode = args[0] if args and not args[0].startswith("-") else "modern"
        flags = args[1:] if args and args[0] == mode else args
        self.dir, self.label, self.run_no = directory, label, 0
        self.cfg_path = directory / f"{label}-config-{next(self._numbers)}.json"
        self.argv = [sys.executable, str(FAKE_SERVER), "--config", str(self.cfg_path), *flags]
        self.configure(mode, **options)
        FakeServer.made.append(self)

    @classmethod
    def kill_leftovers(cls) -> None:
        """Kill every process of the fakes made since the last call that still runs (what a
        failed test left behind; after its assertions, so a process left is still a failure)."""
        for server in cls.made:
            for pid in server.pids():
                if alive(pid):
                    with contextlib.suppress(OSError):
                        os.kill(pid, signal.SIGKILL)
        cls.made.clear()

    def configure(self, mode: str = "modern", **options: Any) -> None:
        """(Re)write the configuration; the next process started reads it and records to a
        fresh file, so each configuration's messages are separate."""
        self.run_no += 1
        suffix = "" if self.run_no == 1 else f"-{self.run_no}"
        self.record = self.dir / f"{self.label}{suffix}.jsonl"
        self.sent_path = self.dir / f"{self.label}-sent{suffix}.jsonl"
        write_json(self.cfg_path, {"mode": mode, "record": str(self.record),
                                   "sent": str(self.sent_path), **options})

    # Starting it --------------------------------------------------------------------------
    @property
    def cmdline(self) -> str:
        """The server as a SERVER command line (it contains spaces and '/')."""
        return shlex.join(self.argv)

    def entry(self, **extra: Any) -> dict:
        """A config-file entry that starts this server."""
        return {"command": self.argv[0], "args": self.argv[1:], **extra}

    def client(self, **kwargs: Any) -> mcpmini.Client:
        return mcpmini.Client(self.argv, **kwargs)

    # What it recorded -----------------------------------------------------------------------
    @staticmethod
    def lines(path: Path) -> list[dict]:
        """The JSON lines of a recording (none if it does not exist yet); a last line still
        being written is left for the next look."""
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text(encoding="utf-8").split("\n")[:-1] if line.strip()]

    def entries(self) -> list[dict]:
        """Everything recorded: messages and the ``_start``/``_child``/``_signal`` markers."""
        return self.lines(self.record)

    def messages(self) -> list[dict]:
        """The messages the server(s) received, in order (markers left out)."""
        return [e for e in self.entries() if not any(k.startswith("_") for k in e)]

    received = messages

    def sent(self) -> list[dict]:
        """What the server wrote (``{"raw": ...}`` for raw lines, ``{"big": size}`` for huge ones)."""
        return self.lines(self.sent_path)

    def starts(self) -> list[dict]:
        """One ``{"_start": pid, "pgid", "argv", "cwd"}`` per process started."""
        return [e for e in self.entries() if "_start" in e]

    def started(self) -> bool:
        return bool(self.starts())

    def processes(self) -> list[list[dict]]:
        """The messages received, one list per process started, in start order."""
        runs: list[list[dict]] = []
        for e in self.entries():
            if "_start" in e:
                runs.append([])
            elif runs and not any(k.startswith("_") for k in e):
                runs[-1].append(e)
        return runs

    def children(self) -> list[int]:
        return [e["_child"] for e in self.entries() if "_child" in e]

    def pids(self) -> list[int]:
        """Every process of this server: its pid(s) and the children it recorded."""
        return [s["_start"] for s in self.starts()] + self.children()

    def pgids(self) -> list[int]:
        return [s["pgid"] for s in self.starts()]

    def methods(self) -> list[str]:
        return [m.get("method", "<response>") for m in self.messages()]

    def requests(self, method: str) -> list[dict]:
        return [m for m in self.messages() if m.get("method") == method and "id" in m]

    def calls(self) -> list[dict]:
        return self.requests("tools/call")

    def arguments(self) -> dict:
        """The arguments of the one tools/call received."""
        calls = self.calls()
        assert len(calls) == 1, calls
        return calls[0]["params"]["arguments"]

    def cancels(self) -> list[dict]:
        return [m for m in self.messages() if m.get("method") == "notifications/cancelled"]

    async def wait_for(self, predicate: Callable[[FakeServer], Any], timeout: float = 5.0) -> Any:
        """Poll the recordings until ``predicate(self)`` is truthy; its value, or the last falsy one."""
        deadline = time.monotonic() + timeout
        while True:
            value = predicate(self)
            if value or time.monotonic() > deadline:
                return value
            await asyncio.sleep(0.02)
