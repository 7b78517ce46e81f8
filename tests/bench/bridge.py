#!/usr/bin/env python3
"""Bridge benchmark (issue 24 item 9): floor.py's client (a bare synchronous loop) calls the
same stdio server three ways, runs interleaved: directly, through a bare line-forwarding proxy
(line_proxy.py: the bridge's floor) and through `mcpmini bridge`, the same era on both sides.
Printed: calls/s (medians) and the bridge's rate as a share of the proxy's ("best": of the
fastest runs). No thresholds. ``--before REV`` adds the bridge of that revision, interleaved.

    python3 tests/bench/bridge.py [--runs 5] [--calls 500] [--modes seq,conc] [--before REV]
                                  [--server ARGV]

The server is bench.py's TS SDK v2 server (Node 22, from ~/.cache/mcpmini-peers as bench.py
installs it) unless --server gives a command line.
"""
from __future__ import annotations

import argparse
import shlex
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import bench  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--calls", type=int, default=500)
    parser.add_argument("--modes", default="seq,conc", help="seq (one call at a time), conc (pipelined)")
    parser.add_argument("--before", metavar="REV", help="also the bridge of mcpmini.py as of this git revision")
    parser.add_argument("--server", help="the stdio server's command line (default: the TS server)")
    args = parser.parse_args()
    py = sys.executable
    if args.server:
        server = shlex.split(args.server)
    else:
        node, prefix, _ = bench.node_and_ts_prefix()
        server = bench.ts_server_argv(node, prefix)
    cache = bench.peers_dir() / "bench" / f"bridge-py{sys.version_info[0]}.{sys.version_info[1]}"
    (cache / "xdg").mkdir(parents=True, exist_ok=True)
    runner = bench.Runner(bench.child_env(cache))
    floor = [py, str(HERE / "floor.py")]
    proxy = [py, str(HERE / "line_proxy.py")]
    bridges = {"bridge": str(HERE.parent.parent / "mcpmini.py")}
    if args.before:
        before = cache / "before" / "mcpmini.py"
        before.parent.mkdir(exist_ok=True)
        before.write_bytes(subprocess.run(["git", "-C", str(HERE), "show", f"{args.before}:mcpmini.py"],
                                          capture_output=True, check=True).stdout)
        bridges["before"] = str(before)
    print(f"{'mode':<16} {'direct':>10} {'proxy':>10} " + " ".join(f"{b:>10} {b + '/proxy':>13}" for b in bridges)
          + f" {'best':>6}")
    for mode in args.modes.split(","):
        for era, protocol in (("modern", "2026-07-28"), ("legacy", "legacy")):
            targets = {"direct": server, "proxy": [*proxy, *server], **{
                name: [py, path, "--protocol", protocol, "bridge", shlex.join(server)] for name, path in bridges.items()}}
            subjects = {name: [*floor, mode, era, str(args.calls), *target] for name, target in targets.items()}
            samples = runner.alternate(subjects, args.runs)
            rates = {}
            for name, runs in samples.items():
                failed = [s["error"] for s in runs if "error" in s]
                if failed:
                    raise SystemExit(f"bridge bench: {name} {mode} {era} failed: {failed[0]}")
                rates[name] = [args.calls / s["elapsed"] for s in runs]
            median = {name: statistics.median(values) for name, values in rates.items()}
            print(f"{mode + ' ' + era:<16} " + " ".join(f"{median[n]:,.0f}/s".rjust(10) for n in ("direct", "proxy"))
                  + "".join(f" {median[b]:,.0f}/s".rjust(11) + f" {median[b] / median['proxy']:>13.2f}" for b in bridges)
                  + f" {max(rates['bridge']) / max(rates['proxy']):>6.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
