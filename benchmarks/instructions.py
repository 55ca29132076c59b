"""Instructions per job of benchmarks/run.py's cases, counted by valgrind: a figure that load does not move.

On a shared machine wall-clock and even CPU-second ratios between two versions move by 15-40 % with
the load; the count of instructions a run executes does not. Each row builds its case's scenario (as
``benchmarks/run.py`` builds it, at a small size), runs it once at 50 jobs to warm up (lazy imports,
first-call caches), then runs it at full row size between two calls of ``os.sched_yield``. All rows
run in one process under ``valgrind --tool=callgrind --dump-before=sched_yield``: each call closes a
dump of the counts so far, so every second dump holds one measured run's instructions alone
(start-up, building and warm-up are in the others). The same rows run again in one process under
cProfile for the count of Python function calls.

Usage::

    python benchmarks/instructions.py                      # every row, this checkout
    python benchmarks/instructions.py --repo OTHER_CHECKOUT  # the same rows against another checkout's gangkit
    python benchmarks/instructions.py --rows a,f-gang      # some rows

Rows: case a (``gang``, the lean engine), b (``kueue+gang``), c (the backlog, ``gang`` and
``kueue+gang``), e (case a's stream through the general engine), f (lesson 04's mix: ``gang``,
the lean engine for several sizes; ``kueue+gang``; ``gang`` through the general engine), g
(``pod``). Case d needs the openb trace and is left out. Valgrind slows a run about 50 times: the
sizes are a few thousand jobs.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import subprocess
import sys
import tempfile
from pathlib import Path

WARM_UP_JOBS = 50
#: row -> (builder, jobs, simulate's settings); the builders are benchmarks/run.py's, at these sizes
ROWS = {
    "a": ("a", 3_000, {"stack": "gang", "horizon": 1e15}),
    "b": ("b", 2_000, {"stack": "kueue+gang", "horizon": 1e15}),
    "c-gang": ("c", 3_000, {"stack": "gang"}),
    "c-kueue+gang": ("c", 3_000, {"stack": "kueue+gang"}),
    "e": ("a", 3_000, {"stack": "gang", "horizon": 1e15, "engine": "general"}),
    "f-gang": ("f", 3_000, {"stack": "gang", "horizon": 1e15}),
    "f-kueue+gang": ("f", 3_000, {"stack": "kueue+gang", "horizon": 1e15}),
    "f-gang/general": ("f", 3_000, {"stack": "gang", "horizon": 1e15, "engine": "general"}),
    "g": ("g", 1_000, {"stack": "pod", "horizon": 1e15}),
}


def build(kind: str, n: int):
    """The scenario of benchmarks/run.py's case ``kind`` with ``n`` jobs (case c on 16 nodes, cut at its last arrival)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import run as bench

    from gangkit.workloads import scenarios

    if kind == "a":
        return bench.a_scenario(n), {}
    if kind == "b":
        return scenarios.mixed(n_jobs=n, n_nodes=bench.B_NODES, load=bench.B_LOAD, seed=0), {}
    if kind == "c":
        sc = scenarios.mixed(n_jobs=n, n_nodes=16, load=bench.C_LOAD, seed=0)
        return sc, {"horizon": sc.jobs[-1].submit_time + 1e-3}
    if kind == "f":
        from gangkit.lessons.lesson04 import mix

        return mix(bench.F_LOAD, n_jobs=n, seed=0), {}
    if kind == "g":
        return scenarios.mixed(n_jobs=n, n_nodes=bench.G_NODES, load=bench.G_LOAD, seed=bench.G_SEED), {}
    raise SystemExit(f"unknown case {kind!r}")


def rows_in_process(rows: list[str], calls: bool) -> None:
    """Run ``rows`` in this process, each after its warm-up and between two ``os.sched_yield`` calls
    (under valgrind each call closes a dump: row ``k``'s run is dump ``2k``); with ``calls``, each run
    under cProfile. One JSON line per row: its jobs, events and (with ``calls``) Python calls."""
    from gangkit import simulate

    for row in rows:
        kind, n, settings = ROWS[row]
        warm, extra = build(kind, WARM_UP_JOBS)
        simulate(warm, record="summary", **{**settings, **extra})
        sc, extra = build(kind, n)
        profiler = cProfile.Profile() if calls else None
        os.sched_yield()  # the measured part starts (valgrind dumps the counts so far)
        if profiler:
            profiler.enable()
        res = simulate(sc, record="summary", **{**settings, **extra})
        if profiler:
            profiler.disable()
        os.sched_yield()  # and ends
        f = res.summary()
        out = {"row": row, "jobs": int(f["jobs_total"]), "events": int(f["events"])}
        if profiler:
            out["calls"] = pstats.Stats(profiler).total_calls
        print(json.dumps(out), flush=True)


def measure(rows: list[str], repo: Path) -> list[dict]:
    """Instructions and Python calls of each row: one process under valgrind for all rows, one under
    cProfile, with ``repo`` first on the path."""
    env = dict(os.environ, PYTHONPATH=str(repo))
    me = [sys.executable, str(Path(__file__).resolve()), "--one", ",".join(rows)]
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "cg"
        cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", "--dump-before=sched_yield"]
        proc = subprocess.run(cmd + me, env=env, capture_output=True, text=True, check=True)
        found = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
        for k, m in enumerate(found, start=1):
            totals = [line for line in Path(f"{out}.{2 * k}").read_text().splitlines() if line.startswith("totals:")]
            m["instructions"] = int(totals[0].split()[1])
    proc = subprocess.run(me + ["--calls"], env=env, capture_output=True, text=True, check=True)
    calls = [json.loads(line)["calls"] for line in proc.stdout.splitlines() if line.startswith("{")]
    for m, c in zip(found, calls):
        m["calls"] = c
    return found


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", default=",".join(ROWS), help="rows to run, comma-separated")
    ap.add_argument("--repo", type=Path, default=Path(__file__).resolve().parent.parent,
                    help="the checkout whose gangkit is measured (default: this one)")
    ap.add_argument("--one", help=argparse.SUPPRESS)
    ap.add_argument("--calls", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.one:
        rows_in_process(args.one.split(","), args.calls)
        return
    print("row             jobs   events  instructions/job  calls/job")
    for m in measure(args.rows.split(","), args.repo.resolve()):
        print(f"{m['row']:<14} {m['jobs']:>6} {m['events']:>8} {m['instructions'] / m['jobs']:>17,.0f} "
              f"{m['calls'] / m['jobs']:>10.1f}")
        print("#json " + json.dumps(m))


if __name__ == "__main__":
    main()
