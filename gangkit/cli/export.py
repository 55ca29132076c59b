"""``gangkit export SCENARIO --to TARGET``: a scenario as the manifests a real stack reads.

See :mod:`gangkit.manifests.export` for what is written per target, and
``docs/reference/export.md``. The YAML goes to standard output, or to the file
``--out`` names (refused when it exists, unless ``--force``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from gangkit.model.errors import Problem, ScenarioError, load_reporting

__all__ = ["add_export_parser"]


def cmd_export(args: argparse.Namespace) -> int:
    from gangkit.cli.scenario import load_scenario
    from gangkit.manifests.export import export_manifests

    out = Path(args.out) if args.out else None

    def export() -> str:
        if out is not None and out.exists() and not args.force:
            raise ScenarioError([Problem(f"File {out}", "--out", "exists; expected a new file (or --force to replace it)")])
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
        out.write_text(text, encoding="utf-8")
    except OSError as e:
        print(f"error: File {out}: --out: cannot be written: {e.strerror or e}", file=sys.stderr)
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
    parser.add_argument("--force", action="store_true", help="with --out: replace FILE if it exists")
    parser.add_argument("--seed", type=int, help="random seed (changes the mixed stream)")
    parser.set_defaults(func=cmd_export)
    return parser
