"""Helpers of the library tests (Servers, SyncClient, SyncServers): a hard-deadline ``run``,
the example weather server, failing and hanging servers, and :class:`Fake` (``lib_fakes.py``)."""
from __future__ import annotations

import asyncio
import faulthandler
import json
import sys
from pathlib import Path
from typing import Any, Awaitable

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
WEATHER = [sys.executable, str(ROOT / "examples" / "weather_server.py")]
HANGING = [sys.executable, "-c", "import time; time.sleep(120)"]      # never answers
FAILING = [sys.executable, "-c", "import sys; sys.stderr.write('cannot start\\n'); sys.exit(4)"]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import mcpmini  # noqa: E402


def run(coro: Awaitable[Any], timeout: float = 30.0) -> Any:
    """Run ``coro`` with a hard deadline (faulthandler ends a run that swallows it)."""
    async def bounded() -> Any:
        return await asyncio.wait_for(coro, timeout)

    faulthandler.dump_traceback_later(timeout + 30, exit=True)
    try:
        return asyncio.run(bounded())
    finally:
        faulthandler.cancel_dump_traceback_later()


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
