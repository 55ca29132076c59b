"""Hash every table of many runs, to show that a change of code left behaviour exactly as it was.

    python tools/result_hashes.py --out before.json        # record
    python tools/result_hashes.py --compare before.json    # record again and compare, run by run

Each run is one scenario under one stack at one recording level: the built-in scenarios, every
file in ``examples/``, and a small ``mixed`` stream under every placement ordering, each under
every stack of ``gangkit.STACKS`` and at the levels ``summary``, ``jobs`` and ``full``. A run's
hash covers its figures, the tables ``jobs``, ``pods``, ``events``, ``timeline``, ``holders`` and
``nodes``, and every per-layer metric table, written as CSV; a run that refuses (a scenario that
does not fit a stack) is hashed by its error message. Only the public surface of ``gangkit`` is
used, so the same command runs on both sides of a refactoring of the library's layout.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LEVELS = ("summary", "jobs", "full")
ORDERINGS = ("skip", "strict", "easy-backfill", "conservative-backfill", "volcano-backfill", "largest-first")
TABLES = ("jobs", "pods", "events", "timeline", "holders", "nodes")


def scenario_names() -> list[str]:
    """Every scenario, by a name that :func:`load` understands."""
    names = ["three-workers", "two-gangs-deadlock", "mixed"]
    names += [f"mixed-{o}" for o in ORDERINGS]
    names += [f"examples/{p.name}" for p in sorted((REPO / "examples").glob("*.yaml"))]
    return names


def load(name: str):
    import gangkit as gk

    if name.startswith("examples/"):
        return gk.load_file(REPO / name)
    if name.startswith("mixed-"):
        return gk.scenarios.mixed(n_jobs=300, n_nodes=12, load=0.9, seed=3, ordering=name[len("mixed-"):])
    if name == "mixed":
        return gk.scenarios.mixed(n_jobs=400, n_nodes=16, seed=1)
    return gk.scenarios.load(name)


def digest(result) -> str:
    h = hashlib.sha256()
    h.update(json.dumps(result.figures, sort_keys=True, default=repr).encode())
    for name in TABLES:
        buf = io.StringIO()
        getattr(result, name).to_csv(buf, index=False)
        h.update(name.encode() + b"\0" + buf.getvalue().encode())
    for name in sorted(result.metrics):
        buf = io.StringIO()
        result.metrics[name].to_csv(buf, index=False)
        h.update(name.encode() + b"\0" + buf.getvalue().encode())
    return h.hexdigest()


def run_scenario(name: str) -> dict[str, str]:
    """{``scenario | stack | level``: hash} for one scenario under every stack and level."""
    import warnings

    import gangkit as gk

    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for stack in gk.STACKS:
            for level in LEVELS:
                key = f"{name} | {stack} | {level}"
                try:
                    out[key] = digest(gk.simulate(load(name), stack=stack, record=level))
                except gk.ScenarioError as e:
                    out[key] = "error:" + hashlib.sha256(str(e).encode()).hexdigest()
    return out


def record(jobs: int) -> dict[str, str]:
    names = scenario_names()
    hashes: dict[str, str] = {}
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        for part in pool.map(run_scenario, names):
            hashes.update(part)
    return dict(sorted(hashes.items()))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, help="write the hashes to this JSON file")
    ap.add_argument("--compare", type=Path, help="compare with hashes recorded before; exit 1 on any difference")
    ap.add_argument("--jobs", type=int, default=2, help="processes (default 2)")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(REPO))
    hashes = record(args.jobs)
    errors = sum(v.startswith("error:") for v in hashes.values())
    print(f"{len(hashes)} runs hashed ({errors} refused with an error)")
    if args.out:
        args.out.write_text(json.dumps(hashes, indent=1) + "\n")
    if args.compare:
        before = json.loads(args.compare.read_text())
        changed = sorted(k for k in before.keys() & hashes.keys() if before[k] != hashes[k])
        missing, new = sorted(before.keys() - hashes.keys()), sorted(hashes.keys() - before.keys())
        for k in changed:
            print(f"changed: {k}")
        for k in missing:
            print(f"missing: {k}")
        for k in new:
            print(f"new: {k}")
        same = len(before.keys() & hashes.keys()) - len(changed)
        print(f"{same} identical, {len(changed)} changed, {len(missing)} missing, {len(new)} new")
        return 1 if changed or missing or new else 0
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
