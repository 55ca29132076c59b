"""Write lesson 08's two trace tables, gangkit/data/capstone_pods.csv and gangkit/data/capstone_nodes.csv.

The source is the Alibaba GPU cluster trace 2023 ("openb", the FGD paper's
data, Apache License 2.0) as it sits in ../shared/traces/alibaba-openb-2023/.
Both tables are verbatim rows of the trace's own files, columns unchanged, so
that ``gangkit.load_alibaba_openb`` reads them as it reads the originals:

- capstone_pods.csv: every pod of ``openb_pod_list_default.csv`` created in
  the days ``[START_DAY, START_DAY + DAYS)`` after the trace's first
  ``creation_time`` (the file is sorted by creation time, so this is one
  contiguous block of rows, CPU-only pods included: the loader drops them);
- capstone_nodes.csv: every node of ``openb_node_list_all_node.csv`` of GPU
  model ``NODE_MODEL`` (8 GPUs, 128 cores, 768 GiB), the only 8-GPU model of
  the trace large enough for every pod of the slice.

gangkit/data/CAPSTONE_TRACE.md says what the trace is and how lesson 08 maps it.

    python tools/derive_capstone_trace.py            # from the repository root
    python tools/derive_capstone_trace.py --check    # exit 1 if the committed tables differ
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT.parent / "shared" / "traces" / "alibaba-openb-2023"
POD_SOURCE = "openb_pod_list_default.csv"
NODE_SOURCE = "openb_node_list_all_node.csv"
OUTPUT = ROOT / "gangkit" / "data"
POD_OUTPUT = "capstone_pods.csv"
NODE_OUTPUT = "capstone_nodes.csv"
COMMAND = "python tools/derive_capstone_trace.py"

#: The slice: pods created from START_DAY to START_DAY + DAYS days after the trace's first pod.
START_DAY = 144
DAYS = 3
#: The node model kept.
NODE_MODEL = "G3"
DAY = 86400


def pod_slice(pods: pd.DataFrame, start_day: float = START_DAY, days: float = DAYS) -> pd.DataFrame:
    """The rows created in ``[start_day, start_day + days)`` days after the first creation, in file order."""
    t = pods["creation_time"] - pods["creation_time"].min()
    keep = (t >= start_day * DAY) & (t < (start_day + days) * DAY)
    rows = pods[keep]
    if len(rows) and not (rows.index.to_series().diff().dropna() == 1).all():
        raise SystemExit(f"{POD_SOURCE}: the rows of days {start_day}-{start_day + days} are not one contiguous "
                         "block (the file is expected sorted by creation_time)")
    return rows


def node_slice(nodes: pd.DataFrame, model: str = NODE_MODEL) -> pd.DataFrame:
    """The nodes of GPU model ``model``, in file order."""
    return nodes[nodes["model"] == model]


def render(source: Path = SOURCE) -> dict[str, str]:
    """The two tables' text, by output file name: the source's own header line and rows, unchanged."""
    for name in (POD_SOURCE, NODE_SOURCE):
        if not (source / name).is_file():
            raise SystemExit(f"{source / name}: no such file (the full trace sits in ../shared/traces/, "
                             "beside the repository)")
    # read as text so that every cell is written back exactly as the trace has it
    pods = pd.read_csv(source / POD_SOURCE, dtype=str, keep_default_na=False)
    nodes = pd.read_csv(source / NODE_SOURCE, dtype=str, keep_default_na=False)
    pods_num = pods.assign(creation_time=pd.to_numeric(pods["creation_time"]))
    chosen = pods.loc[pod_slice(pods_num).index]
    return {POD_OUTPUT: chosen.to_csv(index=False, lineterminator="\n"),
            NODE_OUTPUT: node_slice(nodes).to_csv(index=False, lineterminator="\n")}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="compare with the committed tables; write nothing")
    parser.add_argument("--source", type=Path, default=SOURCE, help="the folder of the openb trace files")
    parser.add_argument("--output", type=Path, default=OUTPUT, help="the folder the tables go to")
    args = parser.parse_args(argv)
    tables = render(args.source)
    if args.check:
        stale = []
        for name, text in tables.items():
            path = args.output / name
            if not path.is_file() or path.read_text() != text:
                stale.append(name)
        if stale:
            print(f"out of date: {', '.join(stale)} (re-run: {COMMAND})")
            return 1
        rows = {name: text.count("\n") - 1 for name, text in tables.items()}
        print(f"up to date ({rows[POD_OUTPUT]} pod rows, {rows[NODE_OUTPUT]} node rows compared)")
        return 0
    args.output.mkdir(parents=True, exist_ok=True)
    for name, text in tables.items():
        (args.output / name).write_text(text)
        print(f"wrote {args.output / name} ({text.count(chr(10)) - 1} rows)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
