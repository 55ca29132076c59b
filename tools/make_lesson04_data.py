"""Write gangkit/data/lesson04_sweep.csv: lesson 04's load sweep (too slow to run inside the lesson).

The grid is ``gangkit.lesson04.SWEEP_GRID``: the lesson's mix (90% one-GPU jobs, 10% whole-node
gangs, exponential run times of mean 30 minutes, 4 nodes x 8 GPUs, stack gang) under each
ordering, at each offered load, for each seed, 2000 jobs per run; one row per run with the
columns ``gangkit.lesson04.SWEEP_COLUMNS`` (metrics of ``gangkit.waiting``). Simulated figures.

    python tools/make_lesson04_data.py                          # from the repository root (a few minutes)
    python tools/make_lesson04_data.py --check                  # exit 1 if the committed file differs
    python tools/make_lesson04_data.py --check --loads 0.6 --seeds 0   # re-run only these rows and compare
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import pandas as pd  # noqa: E402

from gangkit import lesson04  # noqa: E402

OUTPUT = ROOT / "gangkit" / "data" / "lesson04_sweep.csv"
COMMAND = "python tools/make_lesson04_data.py"
KEYS = ["ordering", "load", "seed"]


def reduced_grid(loads=None, seeds=None, orderings=None) -> dict:
    """:data:`lesson04.SWEEP_GRID` restricted to some of its values (each must be in the grid)."""
    grid = {k: list(v) for k, v in lesson04.SWEEP_GRID.items()}
    for key, values in (("load", loads), ("seed", seeds), ("ordering", orderings)):
        if values:
            missing = [v for v in values if v not in grid[key]]
            if missing:
                raise SystemExit(f"{key} {missing} not in the lesson's grid {grid[key]}")
            grid[key] = list(values)
    return grid


def render(table: pd.DataFrame) -> str:
    header = (f"# Lesson 04 load sweep (simulated with gangkit, not measured): grid gangkit.lesson04.SWEEP_GRID, "
              f"one row per run; made by: {COMMAND}\n")
    return header + table.to_csv(index=False)


def compare(fresh: pd.DataFrame, committed: pd.DataFrame) -> list[str]:
    """Differences between fresh rows and the committed rows with the same ordering, load and seed."""
    merged = fresh.merge(committed, on=KEYS, how="left", suffixes=("", "_committed"), indicator=True)
    out = [f"no committed row for ordering={merged.at[i, 'ordering']} load={merged.at[i, 'load']} "
           f"seed={merged.at[i, 'seed']}" for i in merged.index[merged["_merge"] != "both"]]
    if out:
        return out
    for col in fresh.columns:
        if col in KEYS:
            continue
        a, b = merged[col], merged[f"{col}_committed"]
        if pd.api.types.is_numeric_dtype(a):
            same = ((a - b).abs() <= 1e-9 * (1 + b.abs())) | (a.isna() & b.isna())
        else:
            same = a.astype(str) == b.astype(str)
        for i in merged.index[~same]:
            out.append(f"{col} at ordering={merged.at[i, 'ordering']} load={merged.at[i, 'load']} "
                       f"seed={merged.at[i, 'seed']}: fresh {a[i]!r}, committed {b[i]!r}")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--output", type=Path, default=OUTPUT)
    ap.add_argument("--check", action="store_true", help="compare with the committed file instead of writing")
    ap.add_argument("--loads", type=float, nargs="*", help="with --check: only these loads")
    ap.add_argument("--seeds", type=int, nargs="*", help="with --check: only these seeds")
    ap.add_argument("--orderings", nargs="*", help="with --check: only these orderings")
    ap.add_argument("--workers", type=int, default=None, help="processes (default: one per CPU)")
    args = ap.parse_args(argv)
    reduced = args.loads or args.seeds or args.orderings
    if reduced and not args.check:
        ap.error("--loads, --seeds and --orderings only go with --check (the committed file holds the whole grid)")
    grid = reduced_grid(args.loads, args.seeds, args.orderings)
    table = lesson04.sweep_table(grid, workers=args.workers, progress=False)
    if args.check:
        if not args.output.exists():
            print(f"{args.output} is missing; make it with {COMMAND}")
            return 1
        problems = compare(table, pd.read_csv(args.output, comment="#"))
        if not reduced and not problems and len(pd.read_csv(args.output, comment="#")) != len(table):
            problems = [f"{args.output} has other rows than the grid"]
        for p in problems[:20]:
            print(p)
        print(f"up to date ({len(table)} rows compared)" if not problems else
              f"{args.output} differs from what {COMMAND} makes ({len(problems)} differences)")
        return 0 if not problems else 1
    args.output.write_text(render(table))
    print(f"wrote {args.output} ({len(table)} rows)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
