"""``gangkit export SCENARIO --to TARGET``: a scenario as the manifests a real stack reads.

See :mod:`gangkit.manifests.export` for what is written per target, and
``docs/reference/export.md``. The YAML goes to standard output, or to the file
``--out`` names (refused when it exists, unless ``--force``; a symbolic link, even a dangling one, is
refused always, and an empty ``--out`` is an error: :mod:`gangkit.cli.outfiles`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from gangkit.model.errors import Problem, ScenarioError, load_reporting

__all__ = ["add_export_parser"]


def cmd_export(args: argparse.Namespace) -> int:
    from gangkit.cli.outfiles import blocked, open_new, why_not
    from gangkit.cli.scenario import load_scenario
    from gangkit.manifests.export import export_manifests

    if args.out == "":
        print("error: --out '': expected a file name for the YAML, got an empty one (leave --out out to print it)",
              file=sys.stderr)
        return 2
    out = Path(args.out) if args.out is not None else None

    def export() -> str:
        if out is not None and blocked([out], args.force):
            raise ScenarioError(blocked([out], args.force))
        if out is not None and not out.parent.is_dir():
            raise ScenarioError([Problem(f"File {out}", "--out", f"expected a file in an existing folder; "
                                                                f"{out.parent} is not one")])
        return export_manifests(load_scenario(args.scenario, args.seed), args.to)

    text, status = load_reporting(export)
    if status is not None:
        return status
    if out is None:
        sys.stdout.write(text)
        return 0
    try:
        with open_new(out, args.force) as f:
            f.write(text)
    except OSError as e:
        print(f"error: {why_not(out, e, args.force)}", file=sys.stderr)
        return 2
    print(f"gangkit export: wrote {out} ({text.count(chr(10) + 'kind: ') + text.startswith('kind: ')} objects "
          f"for {args.to}); check it with: gangkit check {out}", file=sys.stderr)
    return 0


def add_export_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Register the ``export`` subcommand on ``subparsers``."""
    from gangkit.manifests.export import TARGETS

    parser = subparsers.add_parser(
        "export", help="write a scenario as the manifests a real stack reads",
        description="Write a built-in scenario or a YAML file as the manifests of a target stack: the gang in the "
                    "placement layer's own objects, the pods' schedulerName, Kueue's objects and the node suppliers "
                    "the stack uses (docs/reference/export.md).")
    parser.add_argument("scenario", metavar="SCENARIO", help="three-workers, two-gangs-deadlock, mixed, or a YAML file")
    parser.add_argument("--to", required=True, metavar="TARGET", help=f"one of: {', '.join(TARGETS)}")
    parser.add_argument("--out", metavar="FILE", help="write the YAML into FILE instead of standard output")
    parser.add_argument("--force", action="store_true", help="with --out: replace FILE if it exists (never a symbolic link)")
    parser.add_argument("--seed", type=int, help="random seed (changes the mixed stream)")
    parser.set_defaults(func=cmd_export)
    return parser
