#!/usr/bin/env python3
"""Benchmark (issue 24, item 11): a one-shot `call` with a list cache that holds a 15 MB entry of
another server, against the same call with an empty cache. Target: within 5%.

    python3 tests/bench/cache_bench.py [--runs N] [--json PATH] [--mcpmini FILE]

Stdlib only, no peers: the measured server is examples/weather_server.py (stdio), the call
`python3 -m mcpmini call "python3 examples/weather_server.py" get_forecast city=Hangzhou` (bytecode
cached, as the installed command). Both caches first learn that server (its era and tool list, what
a second run finds); the crowded one also holds the tool list of a server with 50,000 tools (about
15 MB; tests/fake_server.py serves it), stored by mcpmini itself through `tools`. Subjects
alternate, the order rotating each run; each run is its own process; medians, "best" the fastest.
`--mcpmini FILE` measures another copy of mcpmini.py (e.g. `git show REV:mcpmini.py > /tmp/x/mcpmini.py`)
for a before/after. bench.py runs the same row (`--only cache`) with its interpreter and the TS server.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
OTHER_TOOLS = 50_000
DESCRIPTION = 218   # characters per tool description: about 15 MB listed


def crowd(py: str, env: dict[str, str], work: Path, where: Path) -> int:
    """Fill ``env``'s cache with the list of a server of OTHER_TOOLS tools; the entry's size."""
    cfg = work / "many-tools.json"
    cfg.write_text(json.dumps({"mode": "legacy", "tools": [
        {"name": f"tool_{i:05d}", "description": f"tool {i} " + "d" * DESCRIPTION,
         "inputSchema": {"type": "object"}} for i in range(OTHER_TOOLS)]}))
    other = shlex.join([py, str(ROOT / "tests" / "fake_server.py"), "--config", str(cfg)])
    subprocess.run([py, "-m", "mcpmini", "--timeout", "120", "--json", "tools", other], env=env, cwd=where,
                   check=True, capture_output=True, timeout=300)
    lists = Path(env["XDG_CACHE_HOME"]) / "mcpmini" / "lists"
    return max((p.stat().st_size for p in lists.iterdir()), default=0) if lists.is_dir() else \
        (lists.parent / "lists.json").stat().st_size   # an older mcpmini: one file


def measure(py: str, server: list[str], call: list[str], runs: int, base_env: dict[str, str],
            where: Path = ROOT) -> dict:
    """Wall times of the one-shot call with an empty and with a crowded cache, and their ratio."""
    with tempfile.TemporaryDirectory(prefix="mcpmini-cache-bench-") as tmp:
        work = Path(tmp)
        envs = {name: {**base_env, "XDG_CACHE_HOME": str(work / name), "XDG_STATE_HOME": str(work / name / "state")}
                for name in ("empty", "crowded")}
        argv = [py, "-m", "mcpmini", "call", shlex.join(server), *call]
        entry = crowd(py, envs["crowded"], work, where)
        for env in envs.values():   # both learn the measured server
            subprocess.run(argv, env=env, cwd=where, check=True, capture_output=True, timeout=120)
        wall: dict[str, list[float]] = {name: [] for name in envs}
        cpu: dict[str, list[float]] = {name: [] for name in envs}   # user + system, the call and its server
        names = list(envs)
        for r in range(runs):
            for name in names[r % 2:] + names[:r % 2]:
                before, start = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
                subprocess.run(argv, env=envs[name], cwd=where, check=True, capture_output=True, timeout=120)
                wall[name].append(time.perf_counter() - start)
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                cpu[name].append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    out = {"id": "cache-crowded", "entry_bytes": entry, "runs": runs}
    for metric, samples in (("wall", wall), ("cpu", cpu)):
        med = {k: statistics.median(v) for k, v in samples.items()}
        out[metric] = {**{k: {"median": med[k], "best": min(v), "samples": v} for k, v in samples.items()},
                       "ratio": med["crowded"] / med["empty"],
                       "ratio_best": min(samples["crowded"]) / min(samples["empty"])}
    return out


def report(result: dict) -> str:
    wall, cpu = result["wall"], result["cpu"]
    return (f"one-shot call, cache with a {result['entry_bytes'] / 1e6:.1f} MB entry of another server vs an "
            f"empty cache: wall {wall['crowded']['median']:.3f} s vs {wall['empty']['median']:.3f} s "
            f"({wall['ratio']:.3f}×, best runs {wall['ratio_best']:.3f}×), CPU {cpu['crowded']['median']:.3f} s vs "
            f"{cpu['empty']['median']:.3f} s ({cpu['ratio']:.3f}×); target ≤ 1.05×: "
            f"{'met' if wall['ratio'] <= 1.05 else 'missed'}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--mcpmini", type=Path, default=ROOT / "mcpmini.py", help="the mcpmini.py to measure")
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(Path(tempfile.gettempdir()) / "mcpmini-cache-bench-pycache")
    result = measure(sys.executable, [sys.executable, str(ROOT / "examples" / "weather_server.py")],
                     ["get_forecast", "city=Hangzhou"], args.runs, env, args.mcpmini.resolve().parent)
    print(report(result))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
