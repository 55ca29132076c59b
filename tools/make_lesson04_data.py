"""Write gangkit/data/lesson04_sweep.csv, lesson04_story.csv and lesson04_packing.csv: lesson 04's runs too slow for it.

The grids are ``gangkit.lessons.lesson04.SWEEP_GRIDS``: the lesson's mix (90% one-GPU jobs, 10% whole-node
gangs, exponential run times of mean 30 minutes, 4 nodes x 8 GPUs, stack gang) under each
ordering, at each offered load, for each seed, 8000 jobs per run (strict and skip at 12 loads and
5 seeds; the backfilling orderings, slower, at 5 loads and 4 seeds), and the window study (strict and
skip at load 0.8 with 2000, 4000 and 16000 jobs, 5 seeds); one row per run with the
columns ``gangkit.lessons.lesson04.SWEEP_COLUMNS`` (metrics of ``gangkit.results.waiting``). And the starvation
story: the wait of every whole-node gang of one run (``gangkit.lessons.lesson04.STORY``) under every
ordering (``gangkit.lessons.lesson04.story_table``). And the packing experiment: the story's run under
both orderings and both node scorings for each seed of ``lesson04.PACKING`` (``lesson04.packing_rows``).
Simulated figures.

    python tools/make_lesson04_data.py                          # from the repository root (about 16 minutes of CPU)
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

from gangkit.lessons import lesson04  # noqa: E402

OUTPUT = ROOT / "gangkit" / "data" / "lesson04_sweep.csv"
STORY_OUTPUT = ROOT / "gangkit" / "data" / "lesson04_story.csv"
PACKING_OUTPUT = ROOT / "gangkit" / "data" / "lesson04_packing.csv"
COMMAND = "python tools/make_lesson04_data.py"
KEYS = ["ordering", "load", "seed", "n_jobs"]


def reduced_grids(loads=None, seeds=None, orderings=None) -> list[dict]:
    """:data:`lesson04.SWEEP_GRIDS` restricted to some of their values (each must be in some grid)."""
    grids = []
    for grid in lesson04.SWEEP_GRIDS:
        grid = {k: list(v) for k, v in grid.items()}
        for key, values in (("load", loads), ("seed", seeds), ("ordering", orderings)):
            if values:
                grid[key] = [v for v in grid[key] if v in values]
        if all(grid.values()):
            grids.append(grid)
    for key, values in (("load", loads), ("seed", seeds), ("ordering", orderings)):
        known = {v for g in lesson04.SWEEP_GRIDS for v in g[key]}
        missing = [v for v in values or () if v not in known]
        if missing:
            raise SystemExit(f"{key} {missing} not in the lesson's grids {sorted(known, key=str)}")
    if not grids:
        raise SystemExit("no point of the lesson's grids has all these values")
    return grids


def render(table: pd.DataFrame) -> str:
    header = (f"# Lesson 04 load sweep (simulated with gangkit, not measured): grids gangkit.lessons.lesson04.SWEEP_GRIDS, "
              f"one row per run; made by: {COMMAND}\n")
    return header + table.to_csv(index=False)


def render_story(table: pd.DataFrame) -> str:
    header = (f"# Lesson 04 starvation story (simulated with gangkit, not measured): the wait of every whole-node gang "
              f"of gangkit.lessons.lesson04.STORY {lesson04.STORY} under each ordering; made by: {COMMAND}\n")
    return header + table.to_csv(index=False)


def render_packing(table: pd.DataFrame) -> str:
    header = (f"# Lesson 04 spread or pack (simulated with gangkit, not measured): gangkit.lessons.lesson04.PACKING "
              f"{lesson04.PACKING} under each ordering and node scoring; made by: {COMMAND}\n")
    return header + table.to_csv(index=False)


def compare(fresh: pd.DataFrame, committed: pd.DataFrame, keys=KEYS) -> list[str]:
    """Differences between fresh rows and the committed rows with the same keys."""
    merged = fresh.merge(committed, on=keys, how="left", suffixes=("", "_committed"), indicator=True)
    out = ["no committed row for " + " ".join(f"{k}={merged.at[i, k]}" for k in keys)
           for i in merged.index[merged["_merge"] != "both"]]
    if out:
        return out
    for col in fresh.columns:
        if col in keys:
            continue
        a, b = merged[col], merged[f"{col}_committed"]
        if pd.api.types.is_numeric_dtype(a) and not pd.api.types.is_bool_dtype(a):
            same = ((a - b).abs() <= 1e-9 * (1 + b.abs())) | (a.isna() & b.isna())
        else:
            same = a.astype(str) == b.astype(str)
        for i in merged.index[~same]:
            where = " ".join(f"{k}={merged.at[i, k]}" for k in keys)
            out.append(f"{col} at {where}: fresh {a[i]!r}, committed {b[i]!r}")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--output", type=Path, default=OUTPUT)
    ap.add_argument("--story-output", type=Path, default=STORY_OUTPUT)
    ap.add_argument("--packing-output", type=Path, default=PACKING_OUTPUT)
    ap.add_argument("--check", action="store_true", help="compare with the committed file instead of writing")
    ap.add_argument("--loads", type=float, nargs="*", help="with --check: only these loads")
    ap.add_argument("--seeds", type=int, nargs="*", help="with --check: only these seeds")
    ap.add_argument("--orderings", nargs="*", help="with --check: only these orderings")
    ap.add_argument("--workers", type=int, default=None, help="processes (default: one per CPU)")
    args = ap.parse_args(argv)
    reduced = args.loads or args.seeds or args.orderings
    if reduced and not args.check:
        ap.error("--loads, --seeds and --orderings only go with --check (the committed file holds the whole grid)")
    grids = reduced_grids(args.loads, args.seeds, args.orderings)
    table = lesson04.sweep_table(grids, workers=args.workers, progress=False)
    story = lesson04.story_table(args.orderings)
    packing_seeds = [s for s in lesson04.PACKING["seeds"] if not args.seeds or s in args.seeds]
    packing_orderings = [o for o in lesson04.ORDERINGS if not args.orderings or o in args.orderings]
    packing = lesson04.packing_rows(packing_seeds, packing_orderings)
    if args.check:
        if not args.output.exists():
            print(f"{args.output} is missing; make it with {COMMAND}")
            return 1
        problems = compare(table, pd.read_csv(args.output, comment="#"))
        if not args.story_output.exists():
            problems.append(f"{args.story_output} is missing")
        else:
            problems += compare(story, pd.read_csv(args.story_output, comment="#"), keys=["ordering", "job"])
        if not args.packing_output.exists():
            problems.append(f"{args.packing_output} is missing")
        elif len(packing):
            problems += compare(packing, pd.read_csv(args.packing_output, comment="#"),
                                keys=["scoring", "ordering", "seed"])
        if not reduced and not problems and len(pd.read_csv(args.output, comment="#")) != len(table):
            problems = [f"{args.output} has other rows than the grid"]
        for p in problems[:20]:
            print(p)
        print(f"up to date ({len(table)} rows, {len(story)} story rows and {len(packing)} packing rows compared)"
              if not problems else
              f"{args.output} differs from what {COMMAND} makes ({len(problems)} differences)")
        return 0 if not problems else 1
    args.output.write_text(render(table))
    args.story_output.write_text(render_story(story))
    args.packing_output.write_text(render_packing(packing))
    print(f"wrote {args.output} ({len(table)} rows), {args.story_output} ({len(story)} rows) and "
          f"{args.packing_output} ({len(packing)} rows)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
