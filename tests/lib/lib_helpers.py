"""Helpers of the library tests (Servers, SyncClient, SyncServers): a hard-deadline ``run``,
the example weather server, failing and hanging servers, and :class:`Fake` (``lib_fakes.py``)."""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
WEATHER = [sys.executable, str(ROOT / "examples" / "weather_server.py")]
HANGING = [sys.executable, "-c", "import time; time.sleep(120)"]      # never answers
FAILING = [sys.executable, "-c", "import sys; sys.stderr.write('cannot start\\n'); sys.exit(4)"]
import mcpmini  # noqa: E402,F401  (tests import it from here)
from harness import run  # noqa: F401


class Fake:
    """One configuration of ``lib_fakes.py``: its command line and what it received."""

    def __init__(self, path: Path, **cfg: Any) -> None:
        self.record = path
        self.argv = [sys.executable, str(HERE / "lib_fakes.py"), json.dumps({**cfg, "record": str(path)})]

    def received(self) -> list[dict]:
        if not self.record.exists():
            return []
        return [json.loads(line) for line in self.record.read_text().splitlines() if line.strip()]

    def starts(self) -> list[int]:
        return [m["_start"] for m in self.received() if "_start" in m]

    def methods(self) -> list[str]:
        return [m.get("method", "<reply>") for m in self.received() if "_start" not in m]
