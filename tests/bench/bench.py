#!/usr/bin/env python3
"""Benchmark: mcpmini against the official Python SDK client (`mcp` 2.x), and both against the
floor (floor.py, a bare synchronous stdlib loop doing the same wire work).

    python3 tests/bench/bench.py [--runs N] [--only ROW,...] [--json PATH] [--peers] [--baseline REV]
                                 [--mcpmini-baseline REV]

One command on a clean machine: it installs its peers into ~/.cache/mcpmini-peers/ (env
MCPMINI_PEERS_DIR overrides) — the TS SDK v2 server and Node 22 from npm through
tests/interop/interop_peers.py when present (else by itself, same pins), and a venv of its own
with only `mcp==2.3.0` (the SDK client, and the SDK server for the HTTP rows) — then measures.

Fairness: every Python process (mcpmini, the SDK, the floor) runs on the same interpreter, the
venv's, so the same `site` setup; bytecode is cached for all of them in one folder outside the
clone (PYTHONPYCACHEPREFIX), whatever PYTHONDONTWRITEBYTECODE says; subjects alternate, the
order rotating each run; every run is its own process. Stdio rows use the TS server
(servers/bench_ts_server.mjs, it starts fast and so shows client overhead), HTTP rows the Python
SDK server (servers/bench_py_server.py). Besides wall time, each call row has the client's own
CPU time (user + system, all its threads) per 1,000 calls: the server's share and the machine's
load stay out of it. Results: one table on stdout, everything (samples, machine, versions) in
tests/bench/results/latest.json. Timings are medians, "best" the fastest run; the load average
is recorded because a busy machine moves every wall-clock figure.

The rows follow issue 16's goals, each a ratio of interleaved runs: one-shot calls (spawn,
handshake, list, call, exit) in both eras as `python3 -m mcpmini call` (bytecode cached, like the
installed command), as `python3 mcpmini.py call` (compiled on every run) and as a library
script, against the floor's bare script and the SDK's; sequential and concurrent calls over
stdio against the floor's synchronous loop and the SDK; 10 MB and 50 MB results; HTTP rows; a
one-shot call with a 15 MB entry of another server in the list cache against an empty cache (cache_bench.py).
Peak RSS is recorded for every subject that reports it (all but the command line, whose
ru_maxrss would be the server's: a process's children count in it once waited for).

The example rows: sequential get_forecast calls against examples/weather_http_server.py (the
server the README points HTTP users to), both eras, with JSON replies and with SSE replies (the
example sends SSE when the Accept header prefers it), mcpmini and the floor (a bare http.client
loop on one keep-alive connection). `--baseline REV` also runs them against that git revision's
copy of the example, interleaved with the current one, for a before/after (issue 20: `--only
example --baseline <commit>`); `--mcpmini-baseline REV` adds that revision's mcpmini.py as a
third subject, interleaved with the other two (issue 16: `--only example --mcpmini-baseline <commit>`).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import shlex
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
SERVERS = HERE / "servers"
RESULTS = HERE / "results"

MCP_VERSION = "2.3.0"
# Used only when tests/interop/interop_peers.py is missing; otherwise its pins win (one cache).
NODE_VERSION = "22.23.3"
TS_SERVER_VERSION = "2.4.0"
ZOD_VERSION = "4.1.12"

RUN_TIMEOUT = 180.0
SDK_IMPORT_REFERENCE = 0.54   # s, the SDK's import on the machine of issue 7's "figures to beat"
BIG = 10_000_000          # bytes of the big tool result
BIG50 = 50_000_000        # and of the very big one
SEQ_CALLS = 500
CONC_CALLS = 1000
HTTP_CALLS = 60
EXAMPLE_CALLS = 200


# -- Peers ------------------------------------------------------------------------------------
def peers_dir() -> Path:
    env = os.environ.get("MCPMINI_PEERS_DIR")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "mcpmini-peers"


def run_step(argv: list[str], **kw: object) -> str:
    """An install step; exits with its output's tail when it fails."""
    proc = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=900, **kw)  # type: ignore[arg-type]
    if proc.returncode:
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-15:])
        raise SystemExit(f"bench: `{shlex.join(argv)}` exited {proc.returncode}:\n{tail}")
    return proc.stdout


def npm_install(name: str, specs: list[str]) -> Path:
    """npm `specs` into peers/bench/npm/<name> once (the fallback without interop_peers)."""
    prefix = peers_dir() / "bench" / "npm" / name
    marker, want = prefix / ".mcpmini-installed", "\n".join(specs) + "\n"
    if not (marker.is_file() and marker.read_text() == want):
        npm = shutil.which("npm") or sys.exit("bench: npm is not on PATH; install Node.js and npm")
        prefix.mkdir(parents=True, exist_ok=True)
        run_step([npm, "install", "--prefix", str(prefix), "--no-audit", "--no-fund",
                  "--save-exact", "--loglevel=error", *specs])
        marker.write_text(want)
    return prefix


def node_and_ts_prefix() -> tuple[str, Path, str]:
    """(Node 22 binary, npm prefix holding @modelcontextprotocol/server + zod, how found)."""
    sys.path.insert(0, str(ROOT / "tests" / "interop"))
    try:
        import interop_peers as peers
        return peers.node22(), peers.ts_server_prefix(), "tests/interop/interop_peers.py"
    except (ImportError, AttributeError):
        pass
    finally:
        sys.path.pop(0)
    prefix = npm_install(f"node@{NODE_VERSION}", [f"node@{NODE_VERSION}"])
    node = prefix / "node_modules" / "node" / "bin" / "node"
    if not node.is_file():
        raise SystemExit(f"bench: no node binary in {prefix}; delete that folder and rerun")
    ts = npm_install(f"server@{TS_SERVER_VERSION}",
                     [f"@modelcontextprotocol/server@{TS_SERVER_VERSION}", f"zod@{ZOD_VERSION}"])
    return str(node), ts, "bench.py (own install)"


def sdk_venv() -> str:
    """A venv of this interpreter holding only mcp==MCP_VERSION; returns its python."""
    root = peers_dir() / "bench" / f"venv-py{sys.version_info[0]}.{sys.version_info[1]}-mcp{MCP_VERSION}"
    python, marker = root / "bin" / "python", root / ".mcpmini-installed"
    if not (marker.is_file() and python.is_file()):
        print(f"bench: installing mcp=={MCP_VERSION} into {root} ...", file=sys.stderr)
        run_step([sys.executable, "-m", "venv", "--clear", str(root)])
        run_step([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                  f"mcp=={MCP_VERSION}"], env={**os.environ, "PIP_NO_INPUT": "1"})
        marker.write_text(f"mcp=={MCP_VERSION}\n")
    return str(python)


def npm_versions(prefix: Path) -> dict[str, str]:
    """Installed versions of the TS SDK server and zod (as npm resolved them)."""
    out = {}
    for key, package in (("ts_server", "@modelcontextprotocol/server"), ("zod", "zod")):
        with contextlib.suppress(OSError, ValueError, KeyError):
            out[key] = json.loads((prefix / "node_modules" / package / "package.json").read_text())["version"]
    return out


def ts_server_argv(node: str, prefix: Path) -> list[str]:
    """The TS server runs from a copy inside the prefix: bare ESM imports resolve from there."""
    source = (SERVERS / "bench_ts_server.mjs").read_text(encoding="utf-8")
    copy = prefix / "mcpmini-bench" / "bench_ts_server.mjs"
    if not copy.is_file() or copy.read_text(encoding="utf-8") != source:
        copy.parent.mkdir(exist_ok=True)
        copy.write_text(source, encoding="utf-8")
    return [node, str(copy)]


# -- Running subjects ---------------------------------------------------------------------------
def child_env(cache: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(cache / "pycache")
    env["XDG_CACHE_HOME"] = str(cache / "xdg")   # mcpmini's era cache, kept out of the user's
    env["NO_PROXY"] = "127.0.0.1,localhost" + (f",{env['NO_PROXY']}" if env.get("NO_PROXY") else "")
    return env


class Runner:
    def __init__(self, env: dict[str, str]) -> None:
        self.env = env

    def once(self, argv: list[str]) -> dict:
        """Run one subject process: wall time, its JSON line (if any), or its failure."""
        start = time.perf_counter()
        try:
            proc = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                                  timeout=RUN_TIMEOUT, env=self.env, cwd=str(ROOT))
        except subprocess.TimeoutExpired:
            return {"error": f"timed out after {RUN_TIMEOUT:g} s"}
        wall = time.perf_counter() - start
        if proc.returncode:
            # the last line that says something (exception groups end in box drawing)
            lines = [s for ln in proc.stderr.splitlines() if (s := ln.strip(" |+-\t"))]
            return {"error": (lines[-1] if lines else f"exit {proc.returncode}")[:300]}
        out = proc.stdout.strip().splitlines()
        data = json.loads(out[-1]) if out and out[-1].startswith("{") else {}
        return {"wall": wall, **data}

    def alternate(self, subjects: dict[str, list[str]], runs: int) -> dict[str, list[dict]]:
        """`runs` rounds; each round runs every subject once, the order rotating per round."""
        names, samples = list(subjects), {name: [] for name in subjects}
        for r in range(runs):
            for name in names[r % len(names):] + names[:r % len(names)]:
                samples[name].append(self.once(subjects[name]))
        return samples


def summarize(samples: list[dict], metric: str, n: int | None) -> dict:
    """min/median/max of `metric`: "wall" (the process), "elapsed" (the measured part), "cpu",
    "rate" (n / elapsed), "cpu_per_1k" (client CPU seconds per 1,000 calls), "maxrss_mb"."""
    ok = [s for s in samples if "error" not in s]
    if not ok:
        return {"ok": False, "error": samples[0]["error"] if samples else "not run", "samples": samples}
    if metric == "rate":
        values = [n / s["elapsed"] for s in ok]
    elif metric == "cpu_per_1k":
        values = [s["cpu"] / n * 1000 for s in ok]
    elif metric == "maxrss_mb":
        values = [s["maxrss_kb"] / 1024 for s in ok]
    else:
        values = [s[metric] for s in ok]
    failed = len(samples) - len(ok)
    return {"ok": True, "median": statistics.median(values), "min": min(values), "max": max(values),
            "values": values, "failed_runs": failed,
            **({"error": next(s["error"] for s in samples if "error" in s)} if failed else {})}


# -- The table -------------------------------------------------------------------------------
def fmt(value: float, unit: str) -> str:
    if unit == "s":
        return f"{value:.3f} s"
    if unit == "calls/s":
        return f"{value:,.0f}/s"
    if unit == "MB":
        return f"{value:.0f} MB"
    return f"{value:g} {unit}"


def cell(stat: dict | None, unit: str, better: str) -> str:
    if stat is None:
        return "—"
    if not stat["ok"]:
        return "fails"
    best = stat["min"] if better == "lower" else stat["max"]
    text = fmt(stat["median"], unit)
    if stat["median"] != best and unit != "MB":
        text += f" ({fmt(best, unit).split()[0].rstrip('/s')})"
    return text + (" !" if stat.get("failed_runs") else "")


def ratio(a: dict | None, b: dict | None, better: str, key: str = "median") -> float | None:
    """How many times better `a` is than `b` (medians, or best runs): >1 means a wins."""
    if not a or not b or not a["ok"] or not b["ok"]:
        return None
    if key == "best":
        x, y = (a["min"], b["min"]) if better == "lower" else (a["max"], b["max"])
    else:
        x, y = a[key], b[key]
    return y / x if better == "lower" else x / y


def print_table(rows: list[dict]) -> None:
    header = ("measure", "mcpmini", "SDK", "floor", "× SDK", "floor/mcpmini", "peak RSS MB")
    lines = [header]
    for row in rows:
        vs_sdk, vs_floor = row.get("vs_sdk"), row.get("vs_floor")
        rss = "/".join(f"{row[w]['rss_mb']:.0f}" if row.get(w, {}).get("rss_mb") else "—"
                       for w in ("mcpmini", "sdk", "floor"))
        lines.append((row["measure"], cell(row.get("mcpmini"), row["unit"], row["better"]),
                      cell(row.get("sdk"), row["unit"], row["better"]),
                      cell(row.get("floor"), row["unit"], row["better"]),
                      f"{vs_sdk:.2f}×" if vs_sdk else ("—" if not row.get("sdk") or row["sdk"]["ok"] else "SDK fails"),
                      f"{vs_floor:.2f}" if vs_floor else "—", rss if rss != "—/—/—" else ""))
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    for i, line in enumerate(lines):
        print(" | ".join(c.ljust(w) if j == 0 else c.rjust(w) for j, (c, w) in enumerate(zip(line, widths))))
        if i == 0:
            print("-+-".join("-" * w for w in widths))
    print("cells: median (best run), ! = some runs failed; × SDK: how many times better mcpmini is than "
          "the SDK; floor/mcpmini: mcpmini's share of the floor's speed (1.00 = as fast as the floor); "
          "peak RSS: mcpmini/SDK/floor, medians (— for the command line, which does not report it)")


# -- Rows ------------------------------------------------------------------------------------
IMPORT_SNIPPET = "import time; t = time.perf_counter(); {stmt}; print('{{\"elapsed\": %r}}' % (time.perf_counter() - t))"
STDLIB_OF_MCPMINI = ("import asyncio, base64, contextlib, dataclasses, hashlib, json, logging, os, re, "
                     "shlex, signal, sys, threading, time, collections, typing")
SDK_CLIENT = "from mcp import Client, StdioServerParameters"


def row(rid: str, measure: str, unit: str, better: str, samples: dict[str, list[dict]],
        metric: str, n: int | None = None, note: str = "") -> dict:
    out: dict = {"id": rid, "measure": measure, "unit": unit, "better": better, "metric": metric}
    for name in ("mcpmini", "sdk", "floor"):
        if name in samples:
            out[name] = summarize(samples[name], metric, n)
            rss = [s["maxrss_kb"] / 1024 for s in samples[name] if "maxrss_kb" in s]
            if rss:   # the subjects that report it: every script but the command line
                out[name]["rss_mb"] = statistics.median(rss)
    out["vs_sdk"] = ratio(out.get("mcpmini"), out.get("sdk"), better)
    out["vs_floor"] = ratio(out.get("mcpmini"), out.get("floor"), better)
    out["vs_sdk_best"] = ratio(out.get("mcpmini"), out.get("sdk"), better, "best")
    out["vs_floor_best"] = ratio(out.get("mcpmini"), out.get("floor"), better, "best")
    if better == "lower" and out["vs_floor"]:
        out["mcpmini_over_floor_time"] = 1 / out["vs_floor"]
    if note:
        out["note"] = note
    return out


def wait_port(port: int, proc: subprocess.Popen, timeout: float = 90.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"bench: the HTTP server exited with {proc.returncode}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.5):
            return
        time.sleep(0.1)
    raise SystemExit("bench: the HTTP server did not start listening")


@contextlib.contextmanager
def py_http_server(python: str, env: dict[str, str]):
    """The SDK server over Streamable HTTP in its default (SSE) reply mode: legacy requests get
    SSE replies, 2026-07-28 requests plain JSON (checked with raw requests)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([python, str(SERVERS / "bench_py_server.py"), "http", str(port)],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env=env)
    try:
        wait_port(port, proc)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@contextlib.contextmanager
def example_server(python: str, env: dict[str, str], examples: Path):
    """weather_http_server.py from the folder `examples` on a free port; yields the URL it prints."""
    proc = subprocess.Popen([python, str(examples / "weather_http_server.py"), "--port", "0"],
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            env=env, text=True)
    try:
        url = proc.stdout.readline().strip()  # its first line; "" if it exited
        if not url.startswith("http://"):
            raise SystemExit(f"bench: {examples / 'weather_http_server.py'} printed no URL")
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def examples_at(rev: str, into: Path) -> Path:
    """The HTTP example (and the module it imports) as of git revision `rev`, in `into`."""
    for name in ("weather_http_server.py", "weather_server.py"):
        proc = subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:examples/{name}"],
                              capture_output=True, timeout=60)
        if proc.returncode:
            raise SystemExit(f"bench: git show {rev}:examples/{name}: {proc.stderr.decode().strip()}")
        (into / name).write_bytes(proc.stdout)
    return into


def mcpmini_at(rev: str, into: Path) -> list[str]:
    """bench_mcpmini.py (this one) driving mcpmini.py as of git revision `rev`, copied to `into`."""
    proc = subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:mcpmini.py"], capture_output=True, timeout=60)
    if proc.returncode:
        raise SystemExit(f"bench: git show {rev}:mcpmini.py: {proc.stderr.decode().strip()}")
    (into / "tests" / "bench").mkdir(parents=True)
    (into / "mcpmini.py").write_bytes(proc.stdout)
    shutil.copy(HERE / "bench_mcpmini.py", into / "tests" / "bench")
    return [str(into / "tests" / "bench" / "bench_mcpmini.py")]


def measure_all(py: str, server: list[str], runner: Runner, runs: int, only: set[str] | None,
                baseline: str | None = None, mini_baseline: str | None = None) -> tuple[list[dict], list[str]]:
    rows: list[dict] = []
    notes: list[str] = []
    mini, sdk, floor = [py, str(HERE / "bench_mcpmini.py")], [py, str(HERE / "bench_sdk.py")], [py, str(HERE / "floor.py")]

    def want(rid: str) -> bool:
        return only is None or any(rid.startswith(o) for o in only)

    def say(text: str) -> None:
        print(f"bench: {text}", file=sys.stderr, flush=True)

    cli = [py, "-m", "mcpmini"]   # from ROOT, the working directory: bytecode cached
    script = [py, str(ROOT / "mcpmini.py")]   # compiled on every run
    call = ["call", shlex.join(server), "echo", "text=hi"]

    # Warm-up: bytecode caches, the node binary and the SDK bundle in the page cache, and
    # mcpmini's era and list caches (what a second run on a known server finds).
    say("warming up")
    for argv in ([*mini, "oneshot", "auto", "0", *server], [*sdk, "oneshot", "auto", "0", *server],
                 [*floor, "oneshot", "modern", "0", *server], [*cli, "--protocol", "2026-07-28", *call],
                 [*cli, "--protocol", "legacy", *call]):
        result = runner.once(argv)
        if "error" in result:
            raise SystemExit(f"bench: warm-up of {shlex.join(argv[:2])} failed: {result['error']}")

    def stdio_subjects(*mode: str) -> dict[str, list[str]]:
        """mcpmini, the SDK and the floor, each running ``mode`` against the stdio server."""
        return {name: [*argv, *mode, *server] for name, argv in (("mcpmini", mini), ("sdk", sdk), ("floor", floor))}

    if want("import"):
        say("import")
        stmts = {"mcpmini": "import mcpmini", "sdk": SDK_CLIENT, "floor": STDLIB_OF_MCPMINI}
        samples = runner.alternate({k: [py, "-c", IMPORT_SNIPPET.format(stmt=v)] for k, v in stmts.items()}, runs + 3)
        rows.append(row("import", "import, in-process", "s", "lower", samples, "elapsed",
                        note="floor: the stdlib modules mcpmini imports"))
        samples = runner.alternate({k: [py, "-c", v] for k, v in stmts.items()}, runs)
        rows.append(row("import-process", "python -c 'import …', whole process", "s", "lower", samples, "wall"))
        counts = {}
        for k, v in stmts.items():
            out = subprocess.run([py, "-c", f"{v}; import sys; print(len(sys.modules))"], env=runner.env,
                                 cwd=str(ROOT), capture_output=True, text=True, timeout=60).stdout.strip()
            counts[k] = int(out) if out.isdigit() else None
        rows[-1]["modules"] = rows[-2]["modules"] = counts

    # One-shot: spawn the server, handshake, list, call, exit, each era pinned (an auto run
    # would take the era a pinned run remembered). The floor and the SDK always list; `call`
    # skips the list when its persistent cache holds a fresh one (legacy here: the TS server's
    # 2026-07-28 lists say ttlMs 0).
    for era, label in (("modern", "2026-07-28"), ("legacy", "legacy")):
        if not want("oneshot"):
            break
        say(f"one-shot, {label}")
        flags = ["--protocol", "2026-07-28" if era == "modern" else "legacy"]
        samples = runner.alternate({
            "cli": [*cli, *flags, *call], "script": [*script, *flags, *call],
            "mcpmini": [*mini, "oneshot", era, "0", *server], "sdk": [*sdk, "oneshot", era, "0", *server],
            "floor": [*floor, "oneshot", era, "0", *server]}, runs + 2)
        others = {k: samples[k] for k in ("sdk", "floor")}
        rows.append(row(f"oneshot-cli-{era}", f"one-shot, {label}: `python3 -m mcpmini call`", "s", "lower",
                        {"mcpmini": samples["cli"], **others}, "wall",
                        note="bytecode cached, as for the installed `mcpmini` command"))
        rows.append(row(f"oneshot-script-{era}", "  the same as `python3 mcpmini.py call`", "s", "lower",
                        {"mcpmini": samples["script"], **others}, "wall", note="the file is compiled on every run"))
        rows.append(row(f"oneshot-lib-{era}", "  the same as a library script (list, call)", "s", "lower",
                        {"mcpmini": samples["mcpmini"], **others}, "wall"))

    if want("cache"):   # issue 24 item 11: what other servers left in the cache costs a call nothing
        say("one-shot call with a 15 MB entry of another server in the list cache")
        sys.path.insert(0, str(HERE))
        import cache_bench
        got = cache_bench.measure(py, server, ["echo", "text=hi"], runs + 6, runner.env)
        rows.append(row("cache-crowded", "one-shot `call`, 15 MB entry of another server cached", "s", "lower",
                        {"mcpmini": [{"wall": v} for v in got["wall"]["crowded"]["samples"]],
                         "floor": [{"wall": v} for v in got["wall"]["empty"]["samples"]]}, "wall",
                        note=f"floor: the same call with an empty cache; the entry: {got['entry_bytes']} bytes"))

    for era in ("modern", "legacy"):
        label = "2026-07-28" if era == "modern" else "legacy"
        if want("seq"):
            say(f"sequential calls, {label}")
            samples = runner.alternate(stdio_subjects("seq", era, str(SEQ_CALLS)), runs)
            rows.append(row(f"seq-{era}", f"sequential tools/call, stdio, {label}", "calls/s", "higher",
                            samples, "rate", SEQ_CALLS))
            rows.append(row(f"seq-{era}-cpu", "  client CPU per 1,000 of them", "s", "lower",
                            samples, "cpu_per_1k", SEQ_CALLS))
        if want("conc"):
            say(f"concurrent calls, {label}")
            samples = runner.alternate(stdio_subjects("conc", era, str(CONC_CALLS)), runs)
            rows.append(row(f"conc-{era}", f"{CONC_CALLS:,} concurrent calls, stdio, {label}", "calls/s",
                            "higher", samples, "rate", CONC_CALLS,
                            note="floor: pipelined, a writer thread and a reader"))
            rows.append(row(f"conc-{era}-cpu", "  client CPU per 1,000 of them", "s", "lower",
                            samples, "cpu_per_1k", CONC_CALLS))

    if want("big"):
        say("10 MB result over stdio")
        samples = runner.alternate(stdio_subjects("big", "modern", str(BIG)), max(3, runs - 2))
        rows.append(row("big-time", "one 10 MB result, stdio: time", "s", "lower", samples, "elapsed"))
        rows.append(row("big-cpu", "  client CPU", "s", "lower", samples, "cpu"))
        rows.append(row("big-memory", "one 10 MB result, stdio: client peak RSS", "MB", "lower", samples, "maxrss_mb",
                        note="ru_maxrss of the client process (the server is not counted)"))
        say("50 MB result over stdio")
        samples = runner.alternate(stdio_subjects("big", "modern", str(BIG50)), max(3, runs - 2))
        rows.append(row("big50-time", "one 50 MB result, stdio: time", "s", "lower", samples, "elapsed"))
        rows.append(row("big50-memory", "  client peak RSS", "MB", "lower", samples, "maxrss_mb"))

    if want("http"):
        http = runner.once([*mini, "http-available"])
        has_http = bool(http.get("http"))
        if not has_http:
            notes.append("HTTP rows: mcpmini has no HTTP transport in this build; its cells are empty")
        subjects = {"mcpmini": mini, "sdk": sdk, "floor": floor} if has_http else {"sdk": sdk, "floor": floor}
        say("HTTP (starting the Python SDK server)")
        with py_http_server(py, runner.env) as url:
            for era, label in (("modern", "2026-07-28, JSON replies"), ("legacy", "legacy, SSE replies")):
                say(f"HTTP sequential calls, {label}")
                samples = runner.alternate({k: [*v, "http-seq", era, str(HTTP_CALLS), url] for k, v in subjects.items()}, runs)
                rows.append(row(f"http-seq-{era}", f"sequential tools/call, HTTP, {label}", "calls/s", "higher",
                                samples, "rate", HTTP_CALLS))
                rows.append(row(f"http-seq-{era}-cpu", "  client CPU per 1,000 of them", "s", "lower",
                                samples, "cpu_per_1k", HTTP_CALLS))
            say("HTTP 10 MB result as one SSE event")
            samples = runner.alternate({k: [*v, "http-big", "legacy", str(BIG), url] for k, v in subjects.items()},
                                       max(2, runs // 2))
            rows.append(row("http-big", "one 10 MB result as one SSE event, HTTP (legacy)", "s", "lower",
                            samples, "elapsed"))
            rows.append(row("http-big-memory", "one 10 MB SSE event: client peak RSS", "MB", "lower",
                            samples, "maxrss_mb"))

    if want("example"):
        has_http = bool(runner.once([*mini, "http-available"]).get("http"))
        clients = {"mcpmini": mini, "floor": floor} if has_http else {"floor": floor}
        with contextlib.ExitStack() as stack:
            if mini_baseline:
                clients["before"] = [py, *mcpmini_at(mini_baseline, Path(stack.enter_context(
                    tempfile.TemporaryDirectory(prefix="mcpmini-bench-"))))]
            urls = {"": stack.enter_context(example_server(py, runner.env, ROOT / "examples"))}
            if baseline:
                folder = examples_at(baseline, Path(stack.enter_context(tempfile.TemporaryDirectory())))
                urls[" before"] = stack.enter_context(example_server(py, runner.env, folder))
            for era, reply in (("modern", "json"), ("modern", "sse"), ("legacy", "json"), ("legacy", "sse")):
                label = ("2026-07-28" if era == "modern" else "legacy") + f", {reply.upper()} replies"
                mode = "http-forecast" + ("-sse" if reply == "sse" else "")
                say(f"sequential calls to examples/weather_http_server.py, {label}"
                    + (f", and to its copy as of {baseline}" if baseline else ""))
                samples = runner.alternate({who + tag: [*argv, mode, era, str(EXAMPLE_CALLS), url]
                                            for tag, url in urls.items() for who, argv in clients.items()}, runs)
                for tag in urls:
                    measure = (f"sequential calls, examples/weather_http_server.py, {label}" if not tag
                               else f"  the same, the example as of {baseline}")
                    rid = f"example-{era}-{reply}" + tag.replace(" ", "-")
                    subjects = {who: samples[who + tag] for who in ("mcpmini", "floor") if who in clients}
                    rows.append(row(rid, measure, "calls/s", "higher", subjects, "rate", EXAMPLE_CALLS,
                                    note="floor: a bare http.client loop"))
                    rows.append(row(rid + "-cpu", "  client CPU per 1,000 of them", "s", "lower", subjects,
                                    "cpu_per_1k", EXAMPLE_CALLS))
                    if mini_baseline:
                        before = {"mcpmini": samples["before" + tag], "floor": samples["floor" + tag]}
                        rows.append(row(rid + "-before", f"  mcpmini as of {mini_baseline}", "calls/s", "higher",
                                        before, "rate", EXAMPLE_CALLS))
                        rows.append(row(rid + "-before-cpu", "    its client CPU per 1,000 calls", "s", "lower",
                                        before, "cpu_per_1k", EXAMPLE_CALLS))
    return rows, notes


# -- Targets (issue 16) --------------------------------------------------------------------------
def targets(rows: list[dict]) -> list[dict]:
    by = {r["id"]: r for r in rows}
    out: list[dict] = []

    def add(name: str, measured: str, ok: bool | None) -> None:
        out.append({"target": name, "measured": measured,
                    "verdict": "n/a" if ok is None else ("met" if ok else "missed")})

    def med(rid: str, who: str = "mcpmini") -> float | None:
        r = by.get(rid)
        return r[who]["median"] if r and r.get(who) and r[who]["ok"] else None

    def over_floor(rid: str, limit: float, what: str) -> None:
        r = by.get(rid)
        if r and r.get("vs_floor"):
            over = 1 / r["vs_floor"]
            add(f"{rid}: ≤ {limit:g}× the floor{what}", f"{over:.2f}× (best runs {1 / r['vs_floor_best']:.2f}×)",
                over <= limit)

    for era in ("modern", "legacy"):   # 1. one-shot (decisions #20: 1.2× with bytecode cached)
        over_floor(f"oneshot-cli-{era}", 1.2, " (issue: 1.15×)")
        over_floor(f"oneshot-script-{era}", 1.3, "")
        r = by.get(f"oneshot-cli-{era}")
        if r and r.get("vs_sdk"):
            add(f"oneshot-cli-{era}: ≥ 2.5× faster than the SDK", f"{r['vs_sdk']:.2f}×", r["vs_sdk"] >= 2.5)
    over_floor("cache-crowded", 1.05, " (the same call, empty cache)")   # issue 24 item 11
    for rid, share in (("seq-legacy", 0.8), ("seq-modern", 0.9)):   # 2. per-call overhead
        r = by.get(rid)
        if r and r.get("vs_floor"):
            add(f"{rid}: ≥ {share:g} of the synchronous loop", f"{r['vs_floor']:.2f} (best runs "
                f"{r['vs_floor_best']:.2f}); {r['vs_sdk']:.2f}× SDK", r["vs_floor"] >= share)
    for rid in ("conc-modern", "conc-legacy"):
        r = by.get(rid)
        if r and r.get("vs_sdk"):
            add(f"{rid}: ≥ 2× the SDK", f"{r['vs_sdk']:.2f}× (best runs {r['vs_sdk_best']:.2f}×)", r["vs_sdk"] >= 2)
    if (v := med("big-time")) is not None:   # 4. big results
        add("10 MB stdio result ≤ 0.2 s", f"{v:.3f} s (SDK {med('big-time', 'sdk') or float('nan'):.3f} s)", v <= 0.2)
    if (v := med("big-memory")) is not None:
        add("10 MB stdio result ≤ 60 MB peak", f"{v:.0f} MB (SDK {med('big-memory', 'sdk') or float('nan'):.0f} MB)",
            v <= 60)
    if (v := med("big50-time")) is not None:
        add("50 MB stdio result ≤ 1.5 s", f"{v:.3f} s", v <= 1.5)
    r = by.get("http-big")
    if r and r.get("mcpmini"):
        sdk = "SDK fails" if r.get("sdk") and not r["sdk"]["ok"] else "SDK works"
        add("10 MB SSE event works", ("works" if r["mcpmini"]["ok"] else "fails") + f" ({sdk})", r["mcpmini"]["ok"])
    if (v := med("http-big")) is not None and (stdio := med("big-time")):
        add("10 MB SSE event over HTTP ≤ 2× the stdio time", f"{v:.3f} s, {v / stdio:.2f}× stdio", v <= 2 * stdio)
    for rid in ("example-modern-json", "example-modern-sse", "example-legacy-json", "example-legacy-sse"):
        r = by.get(rid)
        if r and r.get("vs_floor"):   # issue 16 item 5
            add(f"{rid}: ≥ 0.8× the http.client floor", f"{r['vs_floor']:.2f}× (best runs "
                f"{r['vs_floor_best']:.2f}×)", r["vs_floor"] >= 0.8)
    for rid in ("http-seq-modern", "http-seq-legacy"):   # 5. HTTP per-call overhead
        r = by.get(rid)
        if r and r.get("vs_floor"):
            add(f"{rid}: ≥ 0.8 of the http.client loop", f"{r['vs_floor']:.2f}", r["vs_floor"] >= 0.8)
    return out


# -- Main --------------------------------------------------------------------------------------
def machine(py: str, node: str) -> dict:
    cpu = "unknown"
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.partition(":")[2].strip()
                break
    version = subprocess.run([py, "-c", "import platform; print(platform.python_version())"],
                             capture_output=True, text=True, timeout=60).stdout.strip()
    node_version = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=60).stdout.strip()
    return {"cpu": cpu, "cores": os.cpu_count(), "python": version, "node": node_version,
            "os": platform.platform()}


def loadavg() -> list[float] | None:
    with contextlib.suppress(OSError, ValueError):
        return [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]]
    return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="runs per subject and row (default 5)")
    parser.add_argument("--only", help="comma-separated row prefixes: import,oneshot,cache,seq,conc,big,http,example")
    parser.add_argument("--json", type=Path, default=RESULTS / "latest.json", help="where to write the JSON")
    parser.add_argument("--peers", action="store_true",
                        help="install the peers, print the interpreter, server and environment used, exit")
    parser.add_argument("--baseline", metavar="REV",
                        help="also measure the example rows against examples/ as of this git revision")
    parser.add_argument("--mcpmini-baseline", metavar="REV",
                        help="also measure the example rows with mcpmini.py as of this git revision")
    args = parser.parse_args()
    began = time.monotonic()

    node, prefix, found_by = node_and_ts_prefix()
    py = sdk_venv()
    server = ts_server_argv(node, prefix)
    cache = peers_dir() / "bench" / f"run-py{sys.version_info[0]}.{sys.version_info[1]}"
    (cache / "xdg").mkdir(parents=True, exist_ok=True)
    runner = Runner(child_env(cache))
    if args.peers:  # for profiling one subject by hand, e.g. `$PY -m cProfile tests/bench/bench_mcpmini.py ...`
        env = {k: runner.env[k] for k in ("PYTHONPYCACHEPREFIX", "XDG_CACHE_HOME")}
        print(json.dumps({"python": py, "server": server, "env": env}, indent=2))
        return 0
    info = machine(py, node)
    load_before = loadavg()
    print(f"bench: {info['cpu']}, {info['cores']} cores, Python {info['python']}, Node {info['node']}, "
          f"load {load_before}", file=sys.stderr)

    rows, notes = measure_all(py, server, runner, args.runs, set(args.only.split(",")) if args.only else None,
                              args.baseline, args.mcpmini_baseline)
    sdk_import = next((r["sdk"]["median"] for r in rows if r["id"] == "import" and r["sdk"]["ok"]), None)
    for r in rows:
        for who in ("mcpmini", "sdk", "floor"):
            if r.get(who) and r[who].get("error"):
                notes.append(f"{r['id']}: {who} {'failed' if not r[who]['ok'] else 'failed some runs'}: {r[who]['error']}")
    if sdk_import:
        notes.append(f"machine speed: the SDK client imports in {sdk_import:.2f} s here, {SDK_IMPORT_REFERENCE} s "
                     f"on the machine of issue 7's table, so absolute targets are ~{sdk_import / SDK_IMPORT_REFERENCE:.1f}× "
                     "harder here; the ratios and the client CPU rows travel better")
    result = {
        "command": "python3 tests/bench/bench.py" + (f" --runs {args.runs}" if args.runs != 5 else "")
                   + (f" --only {args.only}" if args.only else "")
                   + (f" --baseline {args.baseline}" if args.baseline else "")
                   + (f" --mcpmini-baseline {args.mcpmini_baseline}" if args.mcpmini_baseline else ""),
        "date": time.strftime("%Y-%m-%d %H:%M:%S %z"),
        "machine": info, "load_before": load_before, "load_after": loadavg(),
        "seconds": round(time.monotonic() - began, 1),
        "versions": {"mcpmini": subprocess.run([py, str(ROOT / "mcpmini.py"), "--version"], capture_output=True,
                                               text=True, env=runner.env).stdout.strip(),
                     "mcp": MCP_VERSION, **npm_versions(prefix), "ts_server_prefix": str(prefix),
                     "peers_found_by": found_by},
        "sizes": {"seq_calls": SEQ_CALLS, "conc_calls": CONC_CALLS, "http_calls": HTTP_CALLS,
                  "example_calls": EXAMPLE_CALLS, "big_bytes": BIG, "big50_bytes": BIG50},
        "runs": args.runs, "rows": rows, "targets": targets(rows), "notes": notes,
    }
    print()
    print_table(rows)
    print()
    for t in result["targets"]:
        print(f"  [{t['verdict']:>6}] {t['target']}: {t['measured']}")
    for note in notes:
        print(f"  note: {note}")
    print(f"\n{info['cpu']}, {info['cores']} cores, Python {info['python']}, Node {info['node']}; "
          f"load average {load_before} -> {result['load_after']}; {result['seconds']:.0f} s")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkstemp(dir=args.json.parent, suffix=".tmp")[1])
    tmp.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, args.json)
    print(f"written: {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
