"""``gangkit grade NOTEBOOK...``: run learners' exercise notebooks in a sandbox and mark each exercise (:mod:`gangkit.grading`)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

__all__ = ["add_grade_parser"]


def _reports(args: argparse.Namespace) -> list[tuple[str, Path]]:
    return [(flag, Path(value)) for flag, value in (("--junit", args.junit), ("--csv", args.csv)) if value is not None]


def _check_report_files(args: argparse.Namespace) -> str:
    """Why a report file cannot be written (empty when all can), before any notebook runs."""
    for flag, path in _reports(args):
        if not str(path) or str(path) == ".":
            return f"{flag}: expected a file name, got {str(path)!r}"
        if path.is_symlink():
            return f"File {path}: {flag}: is a symbolic link; name the file itself"
        if path.is_dir():
            return f"File {path}: {flag}: is a folder; name a file"
        if path.exists() and not args.force:
            return f"File {path}: {flag}: exists; pass --force to overwrite it"
        parent = path.parent if str(path.parent) else Path(".")
        if not parent.is_dir():
            return f"File {path}: {flag}: its folder {parent} does not exist"
        if not os.access(parent, os.W_OK):
            return f"File {path}: {flag}: its folder {parent} is not writable"
    return ""


def cmd_grade(args: argparse.Namespace) -> int:
    import importlib.util

    missing_tools = [m for m in ("nbclient", "nbformat", "ipykernel") if importlib.util.find_spec(m) is None]
    if missing_tools:
        print(f"error: gangkit grade runs notebooks in kernels and needs {', '.join(missing_tools)}: install the "
              "course's tools (pip install -c constraints.txt -e \".[lab]\")", file=sys.stderr)
        return 2
    from gangkit.grading import Limits, SandboxUnavailable, all_passed, grade, gradebook_csv, junit_xml, table, to_json

    missing = [p for p in args.notebooks if not Path(p).is_file()]
    if missing:
        for p in missing:
            print(f"error: File {p}: not found" + (" (a folder: give its notebooks, e.g. folder/*.ipynb)"
                                                   if Path(p).is_dir() else ""), file=sys.stderr)
        return 2
    problem = _check_report_files(args)
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    limits = Limits(cell_timeout=args.cell_timeout, timeout=args.timeout, memory_mib=args.memory,
                    output_bytes=args.output_limit * 1_000_000)
    try:
        marks = grade([Path(p) for p in args.notebooks], limits, sandbox=not args.no_sandbox, jobs=args.jobs)
    except SandboxUnavailable as e:
        print(f"error: gangkit grade runs learners' code only in a sandbox, and none can be built here: {e}. "
              "Install bubblewrap, or pass --no-sandbox to run the notebooks with your own user's rights "
              "(they can then read and change your files and reach the network)", file=sys.stderr)
        return 2
    print(to_json(marks) if args.json else table(marks))
    for flag, path in _reports(args):
        text = junit_xml(marks) if flag == "--junit" else gradebook_csv(marks)
        try:
            path.write_text(text, encoding="utf-8")
        except OSError as e:
            print(f"error: File {path}: {flag}: cannot be written: {e.strerror or e}", file=sys.stderr)
            return 2
    return 0 if all_passed(marks) else 1


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
        "grade", help="run learners' exercise notebooks in a sandbox and mark each exercise",
        description="Run a copy of each notebook in a sandboxed kernel of its own (bubblewrap: read-only files, "
                    "no network, time, memory and output limits), take each exercise's answer out of it as data, "
                    "and mark the answer with the exercise's check in the grader's own interpreter: passed, not "
                    "done, wrong, error, timeout, tampered, missing, not run or manual, with the check's words. "
                    "Exit status 0 only when every checked exercise passed.")
    parser.add_argument("notebooks", metavar="NOTEBOOK", nargs="+", help="exercise notebooks (never changed)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    parser.add_argument("--junit", metavar="FILE", help="also write JUnit XML: a test case per exercise")
    parser.add_argument("--csv", metavar="FILE",
                        help="also write the gradebook: a row per learner, points and status per exercise, a total")
    parser.add_argument("--force", action="store_true", help="overwrite the --junit and --csv files if they exist")
    parser.add_argument("--jobs", type=_whole("notebooks"), default=1, metavar="N",
                        help="grade N notebooks at a time (default 1; at most the number of cores is useful)")
    parser.add_argument("--cell-timeout", type=_whole("seconds"), default=120, metavar="S", help="seconds per cell (default 120)")
    parser.add_argument("--timeout", type=_whole("seconds"), default=900, metavar="S", help="seconds per notebook (default 900)")
    parser.add_argument("--memory", type=_whole("MiB"), default=4096, metavar="MIB",
                        help="memory limit per notebook in MiB (default 4096)")
    parser.add_argument("--output-limit", type=_whole("MB"), default=2, metavar="MB",
                        help="output a notebook may print, in MB, before it is stopped (default 2)")
    parser.add_argument("--no-sandbox", action="store_true",
                        help="run the notebooks without a sandbox, with your user's rights: only for notebooks you "
                             "trust, where bubblewrap is missing")
    parser.set_defaults(func=cmd_grade)
    return parser
