"""Write gangkit/data/philly_runtime_quantiles.csv: 101 quantiles of Philly job run times.

The source is ../shared/traces/philly/philly_runtime.csv (column ``runtime``,
83,154 job run times in seconds from Microsoft's Philly GPU cluster, via
alibaba/clusterdata, CC BY 4.0; Jeon et al., USENIX ATC 2019). The lessons
use the small table this writes, never ../shared.

    python tools/make_runtime_quantiles.py            # from the repository root
    python tools/make_runtime_quantiles.py --check    # exit 1 if the committed table differs
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from gangkit.workloads.run_times import quantile_table  # noqa: E402

SOURCE = ROOT.parent / "shared" / "traces" / "philly" / "philly_runtime.csv"
OUTPUT = ROOT / "gangkit" / "data" / "philly_runtime_quantiles.csv"
COMMAND = "python tools/make_runtime_quantiles.py"


def render(source: Path = SOURCE, column: str = "runtime") -> str:
    """The table's text: a comment naming the source and the command, then quantile,value rows."""
    import csv

    with open(source, newline="") as f:
        data = [float(r[column]) for r in csv.DictReader(f) if r[column] != ""]
    qs, vs = quantile_table(data, 101)
    lines = [f"# Microsoft Philly trace: run times (s) of {len(data)} jobs, column {column} of "
             f"traces/philly/philly_runtime.csv (alibaba/clusterdata, CC BY 4.0; Jeon et al., ATC 2019); made by: {COMMAND}",
             "quantile,value"]
    lines += [f"{q:.2f},{v:.6g}" for q, v in zip(qs, vs)]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--source", type=Path, default=SOURCE)
    ap.add_argument("--output", type=Path, default=OUTPUT)
    ap.add_argument("--check", action="store_true", help="compare with the committed table instead of writing")
    args = ap.parse_args(argv)
    text = render(args.source)
    if args.check:
        same = args.output.exists() and args.output.read_text() == text
        print("up to date" if same else f"{args.output} differs from what {COMMAND} makes")
        return 0 if same else 1
    args.output.write_text(text)
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
