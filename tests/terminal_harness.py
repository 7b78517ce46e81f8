"""``python3 mcpmini.py`` on a real pseudo-terminal that is its controlling terminal (so
``/dev/tty`` is the pty): read what the screen receives, type answers (POSIX only; the
``screen`` fixture of tests/terminal closes each run afterwards)."""
from __future__ import annotations

import fcntl
import os
import struct
import subprocess
import sys
import termios
import threading
import time
from typing import Any

from harness import MCPMINI

# The child makes the pty its controlling terminal (a session leader opening a tty gets it as
# such), then becomes mcpmini: no preexec_fn, no isatty patched anywhere.
ADOPT = ("import os, sys; os.close(os.open(sys.argv[1], os.O_RDWR)); "
         "os.execv(sys.executable, [sys.executable, *sys.argv[2:]])")


class Screen:
    """One run. ``stdin``/``stdout``/``stderr`` are "tty" (the pty) or a subprocess value
    (PIPE, DEVNULL); what reaches the pty is ``text`` (CRLF made LF), raw in ``raw``."""

    def __init__(self, *argv: Any, stdin: Any = "tty", stdout: Any = "tty", stderr: Any = "tty",
                 env: dict[str, str] | None = None, columns: int = 100) -> None:
        self.master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, columns, 0, 0))
        environ = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
        environ.update({"TERM": "xterm-256color", **(env or {})})
        pick = lambda s: slave if s == "tty" else s  # noqa: E731
        command = [sys.executable, "-c", ADOPT, os.ttyname(slave), str(MCPMINI), *map(str, argv)]
        self.proc = subprocess.Popen(command, stdin=pick(stdin), stdout=pick(stdout), stderr=pick(stderr),
                                     env=environ, start_new_session=True)
        os.close(slave)
        self.raw = b""
        self.seen = 0          # expect() looks after this point
        self.lock = threading.Lock()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        while True:
            try:
                data = os.read(self.master, 4096)
            except OSError:   # EIO: every holder of the pty is gone
                return
            if not data:
                return
            with self.lock:
                self.raw += data

    @property
    def text(self) -> str:
        with self.lock:
            return self.raw.decode("utf-8", "replace").replace("\r\n", "\n")

    def expect(self, needle: str, timeout: float = 30.0) -> str:
        """Wait until ``needle`` reaches the screen (after the last expect); the text so far."""
        deadline, ended = time.monotonic() + timeout, 0.0
        while True:
            text = self.text
            found = text.find(needle, self.seen)
            if found >= 0:
                self.seen = found + len(needle)
                return text
            now = time.monotonic()
            if self.proc.poll() is not None:
                ended = ended or now
            if now > deadline or (ended and now - ended > 1.0):   # its last output had time to come
                raise AssertionError(f"{needle!r} never reached the screen:\n{text}")
            time.sleep(0.02)

    def type(self, keys: str | bytes) -> None:
        os.write(self.master, keys.encode() if isinstance(keys, str) else keys)

    def wait(self, timeout: float = 60.0) -> int:
        try:
            code = self.proc.wait(timeout)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
        time.sleep(0.1)   # the pump reads what is left
        return code

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        for pipe in (self.proc.stdout, self.proc.stderr):
            if pipe is not None:
                pipe.close()
        os.close(self.master)

