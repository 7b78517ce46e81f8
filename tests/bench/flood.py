#!/usr/bin/env python3
"""Flood benchmark (issue 12 item 9): a stdio server sends N `ping` requests in a burst before
it answers a tools/call. Printed per N: mcpmini's peak memory (max RSS of the `python3
mcpmini.py call` process), the wall time to finish, and the time it takes to obey SIGTERM sent
in the middle of the flood. No thresholds: figures only.

    python3 tests/bench/flood.py [--counts 40000,150000] [--runs 3]
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FAKE = ROOT / "tests" / "fake_server.py"


def run_once(count: int, folder: Path, *, term_after: float | None = None) -> tuple[float, float, int]:
    """(seconds to the end, seconds from SIGTERM to the end or 0, exit status); max RSS is read
    by the caller from the children's rusage."""
    config = folder / f"flood-{count}.json"
    config.write_text(json.dumps({"mode": "legacy", "flood": count, "raw_result": {"content": []},
                                  "tools": [{"name": "t", "inputSchema": {}}]}))
    server = f"{sys.executable} {FAKE} --config {config}"
    env = {**os.environ, "XDG_CACHE_HOME": str(folder / "cache"), "XDG_STATE_HOME": str(folder / "state")}
    started = time.monotonic()
    proc = subprocess.Popen([sys.executable, str(ROOT / "mcpmini.py"), "--timeout", "120", "call", server, "t"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    obeyed = 0.0
    if term_after is not None:
        time.sleep(term_after)
        sent = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        proc.wait()
        obeyed = time.monotonic() - sent
    else:
        proc.wait()
    return time.monotonic() - started, obeyed, proc.returncode


def peak_rss_mb(fn) -> tuple[object, float]:
    """Run ``fn`` in a forked child so that RUSAGE_CHILDREN is its own (max RSS of the
    mcpmini process it waits for)."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        value = fn()
        rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        os.write(write, json.dumps([value, rss]).encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as f:
        value, rss = json.loads(f.read())
    os.waitpid(pid, 0)
    return value, rss


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--counts", default="40000,150000")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    print(f"{'pings':>8} {'peak MB':>8} {'seconds':>8} {'exit':>5} {'SIGTERM obeyed in':>18}")
    with tempfile.TemporaryDirectory(prefix="mcpmini-flood-") as tmp:
        folder = Path(tmp)
        for count in (int(c) for c in args.counts.split(",")):
            rows = [peak_rss_mb(lambda: run_once(count, folder)) for _ in range(args.runs)]
            terms = [run_once(count, folder, term_after=1.0)[1] for _ in range(args.runs)]
            (seconds, _, status) = rows[0][0]
            print(f"{count:>8} {statistics.median(r[1] for r in rows):>8.1f} "
                  f"{statistics.median(r[0][0] for r in rows):>8.2f} {status:>5} "
                  f"{statistics.median(terms):>16.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
