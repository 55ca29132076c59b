"""``gangkit grade NOTEBOOK...``: run learners' exercise notebooks and mark each exercise (:mod:`gangkit.grading`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

__all__ = ["add_grade_parser"]


def cmd_grade(args: argparse.Namespace) -> int:
    import importlib.util

    missing_tools = [m for m in ("nbclient", "nbformat", "ipykernel") if importlib.util.find_spec(m) is None]
    if missing_tools:
        print(f"error: gangkit grade runs notebooks in kernels and needs {', '.join(missing_tools)}: install the "
              "course's tools (pip install -c constraints.txt -e \".[lab]\")", file=sys.stderr)
        return 2
    from gangkit.grading import grade, junit_xml, table, to_json

    missing = [p for p in args.notebooks if not Path(p).is_file()]
    if missing:
        for p in missing:
            print(f"error: File {p}: not found" + (" (a folder: give its notebooks, e.g. folder/*.ipynb)"
                                                   if Path(p).is_dir() else ""), file=sys.stderr)
        return 2
    marks = grade([Path(p) for p in args.notebooks], cell_timeout=args.cell_timeout, timeout=args.timeout,
                  memory_mib=args.memory)
    print(to_json(marks) if args.json else table(marks))
    if args.junit:
        try:
            Path(args.junit).write_text(junit_xml(marks), encoding="utf-8")
        except OSError as e:
            print(f"error: File {args.junit}: --junit: cannot be written: {e.strerror or e}", file=sys.stderr)
            return 2
    return 0 if marks and all(m.passed for m in marks) else 1


def _whole(unit: str):
    def parse(text: str) -> int:
        try:
            n = int(text)
        except ValueError:
            n = 0
        if n < 1:
            raise argparse.ArgumentTypeError(f"expected whole {unit} >= 1, got {text}")
        return n
    return parse


def add_grade_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Register the ``grade`` subcommand on ``subparsers``."""
    parser = subparsers.add_parser(
        "grade", help="run learners' exercise notebooks and mark each exercise",
        description="Run a copy of each notebook in a kernel of its own, within time and memory limits, and mark each "
                    "exercise: passed, not done, wrong, error, timeout, missing or not run, with the check's words. "
                    "Exit status 0 only when every exercise passed.")
    parser.add_argument("notebooks", metavar="NOTEBOOK", nargs="+", help="exercise notebooks (never changed)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    parser.add_argument("--junit", metavar="FILE", help="also write JUnit XML: a test case per exercise")
    parser.add_argument("--cell-timeout", type=_whole("seconds"), default=120, metavar="S", help="seconds per cell (default 120)")
    parser.add_argument("--timeout", type=_whole("seconds"), default=900, metavar="S", help="seconds per notebook (default 900)")
    parser.add_argument("--memory", type=_whole("MiB"), default=4096, metavar="MIB",
                        help="memory limit per notebook in MiB (default 4096)")
    parser.set_defaults(func=cmd_grade)
    return parser
