#!/usr/bin/env python3
"""Flood benchmark (issue 12 item 9): a stdio server sends N `ping` requests in a burst before
it answers a tools/call. Printed per N: mcpmini's peak memory (VmHWM of the `python3
mcpmini.py call` process alone, not of the server), the wall time to finish, and the time it
takes to obey SIGTERM sent in the middle of the flood. No thresholds: figures only.
With ``--deaf`` (issue 24 item 6) the server never reads its stdin again after the flood and
never answers: the run ends at ``--timeout`` (5 s, exit 124).

    python3 tests/bench/flood.py [--counts 40000,150000] [--runs 3] [--deaf]
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FAKE = ROOT / "tests" / "fake_server.py"


def run_once(count: int, folder: Path, *, deaf: bool = False,
             term_after: float | None = None) -> tuple[float, float, int, float]:
    """(seconds to the end, seconds from SIGTERM to the end or 0, exit status, peak MB). The
    peak is mcpmini's own VmHWM, read until it exits (a rusage of children would count the
    server too, the largest process of the tree)."""
    config = folder / f"flood-{count}.json"
    config.write_text(json.dumps({"mode": "legacy", "flood": count, "deaf": deaf, "raw_result": {"content": []},
                                  "tools": [{"name": "t", "inputSchema": {}}]}))
    server = f"{sys.executable} {FAKE} --config {config}"
    env = {**os.environ, "XDG_CACHE_HOME": str(folder / "cache"), "XDG_STATE_HOME": str(folder / "state")}
    started = time.monotonic()
    proc = subprocess.Popen([sys.executable, str(ROOT / "mcpmini.py"), "--timeout", "5" if deaf else "120",
                             "call", server, "t"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    peak, sent = 0.0, None
    while proc.poll() is None:
        with contextlib.suppress(OSError):
            with open(f"/proc/{proc.pid}/status") as f:
                peak = max([peak] + [int(line.split()[1]) / 1024 for line in f if line.startswith("VmHWM")])
        if term_after is not None and sent is None and time.monotonic() - started >= term_after:
            sent = time.monotonic()
            proc.send_signal(signal.SIGTERM)
        time.sleep(0.01)
    ended = time.monotonic()
    return ended - started, ended - sent if sent else 0.0, proc.returncode, peak


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--counts", default="40000,150000")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--deaf", action="store_true", help="the server stops reading its stdin")
    args = parser.parse_args()
    print(f"{'pings':>8} {'peak MB':>8} {'seconds':>8} {'exit':>5} {'SIGTERM obeyed in':>18}")
    with tempfile.TemporaryDirectory(prefix="mcpmini-flood-") as tmp:
        folder = Path(tmp)
        for count in (int(c) for c in args.counts.split(",")):
            rows = [run_once(count, folder, deaf=args.deaf) for _ in range(args.runs)]
            terms = [run_once(count, folder, deaf=args.deaf, term_after=1.0) for _ in range(args.runs)]
            print(f"{count:>8} {statistics.median(r[3] for r in rows):>8.1f} "
                  f"{statistics.median(r[0] for r in rows):>8.2f} {rows[0][2]:>5} "
                  f"{statistics.median(t[1] for t in terms):>16.2f} s (exit {terms[0][2]})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
