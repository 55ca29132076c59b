"""Same scenario and seed, byte-identical tables in any process (DESIGN.md, Engine).

Runs the ``mixed`` stream (200 jobs on 16 nodes) under each stack in two fresh
Python processes with different ``PYTHONHASHSEED`` values (so string hashes,
set and dict-of-str orders and memory addresses differ between them), writes
the ``jobs``, ``pods``, ``events`` and ``timeline`` tables as CSV, and
compares the files byte for byte.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from paths import REPO

TABLES = ("jobs", "pods", "events", "timeline")
CASES = (("pod", "skip"), ("gang", "skip"), ("gang", "strict"),
         ("coscheduling", "skip"), ("yunikorn", "skip"), ("kube-gang", "skip"))
HASH_SEEDS = ("0", "4242")

CHILD = r"""
import sys
from pathlib import Path
from gangkit import scenarios, simulate

out = Path(sys.argv[1])
print(hash("gangkit"))  # shows that the hash seed differs between the two processes
for case in sys.argv[2:]:
    stack, ordering = case.split(":")
    res = simulate(scenarios.mixed(n_jobs=200, n_nodes=16), stack=stack, ordering=ordering, record="full")
    d = out / f"{stack}-{ordering}"
    d.mkdir(parents=True)
    for name in ("jobs", "pods", "events", "timeline"):
        getattr(res, name).to_csv(d / f"{name}.csv", index=False)
"""


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The tables written by one fresh process per hash seed: {hash seed: (output dir, hash printed)}."""
    out = {}
    for seed in HASH_SEEDS:
        d = tmp_path_factory.mktemp(f"hashseed-{seed}")
        env = dict(os.environ, PYTHONHASHSEED=seed)
        env["PYTHONPATH"] = str(REPO) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        proc = subprocess.run([sys.executable, "-c", CHILD, str(d), *(f"{s}:{o}" for s, o in CASES)],
                              capture_output=True, text=True, env=env, cwd=REPO, timeout=300)
        assert proc.returncode == 0, proc.stderr
        out[seed] = (d, proc.stdout.strip().splitlines()[0])
    return out


def test_the_two_processes_hash_differently(runs):
    hashes = {h for _, h in runs.values()}
    assert len(hashes) == len(HASH_SEEDS), "PYTHONHASHSEED did not reach the child processes"


@pytest.mark.parametrize("stack,ordering", CASES, ids=[f"{s}-{o}" for s, o in CASES])
@pytest.mark.parametrize("table", TABLES)
def test_tables_are_byte_identical_across_processes(runs, stack, ordering, table):
    (a, _), (b, _) = (runs[s] for s in HASH_SEEDS)
    fa, fb = (d / f"{stack}-{ordering}" / f"{table}.csv" for d in (a, b))
    da, db = fa.read_bytes(), fb.read_bytes()
    assert da.count(b"\n") > 1, f"{fa} has no rows"
    if da != db:
        la, lb = da.decode().splitlines(), db.decode().splitlines()
        first = next((i for i, (x, y) in enumerate(zip(la, lb)) if x != y), min(len(la), len(lb)))
        pytest.fail(f"{table}.csv differs between PYTHONHASHSEED={HASH_SEEDS[0]} and {HASH_SEEDS[1]} "
                    f"({len(la)} vs {len(lb)} lines); first difference at line {first + 1}:\n"
                    f"  {la[first] if first < len(la) else '<end>'}\n  {lb[first] if first < len(lb) else '<end>'}")


@pytest.mark.parametrize("before", [(700, 10, 10), (0, 10, 10), (100_000, 50, 200)],
                         ids=["Python's defaults", "collector switched off", "higher than gangkit's"])
def test_a_run_leaves_the_garbage_collector_as_it_found_it(before):
    """simulate() spaces collections out while it runs (gangkit.simulate.fewer_collections), then restores them."""
    import gc

    import gangkit as gk
    from gangkit.simulate import fewer_collections

    saved = gc.get_threshold()
    try:
        gc.set_threshold(*before)
        with fewer_collections():
            during = gc.get_threshold()
        assert during == (before if before[0] == 0 else tuple(max(a, b) for a, b in zip(before, (50_000, 20, 100))))
        gk.simulate("three-workers", stack="gang")
        assert gc.get_threshold() == before
    finally:
        gc.set_threshold(*saved)
