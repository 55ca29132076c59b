"""Speed and scale of gangkit on the ``mixed`` stream: wall time, events/s, peak memory.

Runs :func:`gangkit.scenarios.mixed` (Poisson arrivals, 1 to 32-GPU jobs,
lognormal run times) on a cluster of 512 nodes x 8 GPUs under each stack,
with ``record="summary"``, and prints one plain table row per case.

Every case runs in a fresh Python subprocess, so its peak resident memory
(``ru_maxrss``) is its own and not masked by an earlier, larger case. The
wall time counts only :func:`gangkit.simulate` (building the job stream is
reported apart). The simulated figures (effective utilization, mean wait,
jobs finished) are there as a sanity column: the same case gives the same
figures on every machine.

Usage::

    python benchmarks/run.py                       # 10k and 100k jobs, stacks pod and gang
    python benchmarks/run.py --jobs 10000 --stacks gang
    python benchmarks/run.py --quick               # 1k jobs: a smoke test
    python benchmarks/run.py --profile 30          # also print the 30 hottest functions per case

This is never a timed test: ``tests/test_benchmarks_smoke.py`` only checks
that ``--quick`` prints the table.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def run_case(stack: str, n_jobs: int, n_nodes: int, gpus_per_node: int, load: float, seed: int,
             ordering: str, profile: int) -> dict:
    """One case, in this process: build the stream, simulate it, measure."""
    import resource

    from gangkit import scenarios, simulate

    t0 = time.perf_counter()
    sc = scenarios.mixed(n_jobs=n_jobs, n_nodes=n_nodes, load=load, seed=seed, gpus_per_node=gpus_per_node)
    build_s = time.perf_counter() - t0
    prof = None
    if profile:
        import cProfile

        prof = cProfile.Profile()
        prof.enable()
    t0 = time.perf_counter()
    res = simulate(sc, stack=stack, ordering=ordering, record="summary")
    wall = time.perf_counter() - t0
    if prof is not None:
        import io
        import pstats

        prof.disable()
        buf = io.StringIO()
        pstats.Stats(prof, stream=buf).sort_stats("tottime").print_stats(profile)
        print(buf.getvalue(), file=sys.stderr)
    f = res.summary()
    rss_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    if sys.platform == "darwin":  # bytes there
        rss_kib //= 1024
    return {
        "stack": stack, "ordering": ordering, "jobs": n_jobs, "events": int(f["events"]),
        "build_s": round(build_s, 3), "wall_s": round(wall, 3),
        "jobs_per_s": round(n_jobs / wall) if wall > 0 else float("inf"),
        "events_per_s": round(f["events"] / wall) if wall > 0 else float("inf"),
        "peak_rss_mib": round(rss_kib / 1024, 1),
        "finished": int(f["jobs_finished"]),
        "eff_util": f["effective_utilization"], "mean_wait_s": f["mean_wait_s"],
        "deadlock": bool(f["deadlock"]), "makespan_h": round(f["makespan_s"] / 3600, 1),
    }


def run_in_subprocess(args, stack: str, n_jobs: int) -> dict:
    cmd = [sys.executable, str(Path(__file__).resolve()), "--case", stack, str(n_jobs),
           "--nodes", str(args.nodes), "--gpus-per-node", str(args.gpus_per_node), "--load", str(args.load),
           "--seed", str(args.seed), "--ordering", args.ordering, "--profile", str(args.profile)]
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=None if args.profile else subprocess.PIPE,
                          text=True, env=env, timeout=args.timeout)
    if proc.returncode != 0:
        raise SystemExit(f"case {stack} x {n_jobs} failed (exit {proc.returncode}):\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--jobs", type=int, nargs="+", default=[10_000, 100_000], help="job counts (default: 10000 100000)")
    p.add_argument("--stacks", nargs="+", default=["pod", "gang"], help="stacks (default: pod gang)")
    p.add_argument("--quick", action="store_true", help="1k jobs only: a smoke test")
    p.add_argument("--nodes", type=int, default=512, help="nodes (default: 512)")
    p.add_argument("--gpus-per-node", type=int, default=8, help="GPUs per node (default: 8)")
    p.add_argument("--load", type=float, default=0.85, help="offered load as a share of the GPUs (default: 0.85)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--ordering", default="skip", choices=["skip", "strict"], help="placement ordering (default: skip)")
    p.add_argument("--timeout", type=float, default=None, help="seconds before a case is abandoned (default: none)")
    p.add_argument("--profile", type=int, default=0, metavar="N", help="print the N hottest functions of each case (cProfile) on stderr")
    p.add_argument("--json", action="store_true", help="print the rows as JSON lines instead of a table")
    p.add_argument("--case", nargs=2, metavar=("STACK", "JOBS"), help=argparse.SUPPRESS)  # internal: one case, JSON out
    args = p.parse_args(argv)

    if args.case:
        stack, n = args.case[0], int(args.case[1])
        row = run_case(stack, n, args.nodes, args.gpus_per_node, args.load, args.seed, args.ordering, args.profile)
        print(json.dumps(row))
        return 0

    jobs = [1_000] if args.quick else args.jobs
    rows = []
    for n in jobs:
        for stack in args.stacks:
            row = run_in_subprocess(args, stack, n)
            rows.append(row)
            if args.json:
                print(json.dumps(row), flush=True)
            else:
                print(f"# done: {stack} x {n} jobs in {row['wall_s']} s", file=sys.stderr, flush=True)
    if not args.json:
        import pandas as pd

        print(f"mixed: {args.nodes} nodes x {args.gpus_per_node} GPUs, load {args.load}, seed {args.seed}, "
              f"ordering {args.ordering}, record=summary; python {sys.version.split()[0]}")
        print(pd.DataFrame(rows).to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
