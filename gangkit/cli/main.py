"""The ``gangkit`` command: run a scenario, or open the course.

``gangkit admit FILE... [--cycles N | --until-quiet] [--json]`` prints the
decisions Kueue's scheduling cycles take on a snapshot of Kueue manifests
(:mod:`gangkit.analysis.admit`).

``gangkit run SCENARIO [--stack NAME] [--ordering NAME] [--estimate-factor F] [--seed N] [--json] [--out DIR]``
simulates a built-in scenario (``three-workers``, ``two-gangs-deadlock``,
``mixed``) or a YAML file of Kubernetes manifests. A deadlocked cluster is a
*result* (exit 0); bad input is an *error*: one line per problem, naming the
object and the field, on stderr, and exit status 2.

``gangkit check FILE... [--json] [--strict] [--simulate [--stack NAME]]`` reads a stack's manifests and
prints every inconsistency between its layers (:mod:`gangkit.consistency`): exit 0 when there is none
or only warnings, 1 with an error (with ``--strict``, with any finding), 2 for bad input.

``gangkit run SCENARIO --compare pod,gang,kueue+gang`` runs the same scenario
and seed through each stack and prints one comparison row per stack
(:mod:`gangkit.analysis.compare`); with ``--json`` the object holds a ``stacks`` list,
with ``--out DIR`` the table is written as ``compare.csv``.

``--json`` prints exactly one JSON object on stdout (simulated figures only);
warnings go to stderr. ``--out DIR`` writes the jobs, pods, events and
timeline tables as CSV files.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

from gangkit.model.errors import Problem, ScenarioError, load_reporting
from gangkit.model.scenario import ORDERINGS
from gangkit.stacks import STACKS


def _load(spec: str, seed: int | None):
    from gangkit.workloads import scenarios

    if spec in scenarios.NAMES:
        return scenarios.load(spec, seed=seed)
    path = Path(spec)
    if path.suffix in (".yaml", ".yml", ".json") or path.exists():
        if not path.exists():
            raise ScenarioError([Problem(f"Scenario file {spec}", "", "not found")])
        from gangkit.manifests.load import load_file

        return load_file(path)
    raise ScenarioError([Problem(f"Scenario {spec}", "", "unknown built-in scenario; expected one of "
                                 f"{', '.join(scenarios.NAMES)} or a YAML file")])


def cmd_compare(args: argparse.Namespace) -> int:
    """``gangkit run SCENARIO --compare a,b,c``: one comparison row per stack."""
    from gangkit.analysis.compare import run_stacks, table

    stacks = [s.strip() for s in args.compare.split(",") if s.strip()]
    results, status = load_reporting(lambda: run_stacks(_load(args.scenario, args.seed), stacks, seed=args.seed, ordering=args.ordering))
    if status is not None:
        return status
    df = table(results)
    first = next(iter(results.values()))
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        df.to_csv(out / "compare.csv", index=False)
    if args.json:
        rows = json.loads(df.to_json(orient="records"))
        print(json.dumps(_finite({"scenario": first.scenario_name, "ordering": first.ordering, "seed": first.seed,
                                  "stacks": rows}), allow_nan=False))
        return 0
    print(f"scenario {first.scenario_name}   ordering {first.ordering}   seed {first.seed}")
    print()
    print(df.to_string(index=False))
    if args.out:
        print(f"\ntable written to {args.out}")
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    from gangkit.simulate import simulate

    if args.compare is not None:
        if args.stack:
            print("gangkit run: --stack and --compare exclude each other (give the stacks to --compare)", file=sys.stderr)
            return 2
        return cmd_compare(args)

    result, status = load_reporting(
        lambda: simulate(_load(args.scenario, args.seed), stack=args.stack, ordering=args.ordering, seed=args.seed,
                         estimate_factor=args.estimate_factor))
    if status is not None:
        return status
    figures = result.summary()
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        for name in ("jobs", "pods", "events", "timeline"):
            getattr(result, name).to_csv(out / f"{name}.csv", index=False)
    if args.json:
        payload = {"scenario": result.scenario_name, "stack": result.stack, "ordering": result.ordering, "seed": result.seed}
        payload.update(figures)
        print(json.dumps(_finite(payload), sort_keys=False, allow_nan=False))
        return 0
    print(f"scenario {result.scenario_name}   stack {result.stack}   ordering {result.ordering}   seed {result.seed}")
    print()
    width = max(len(k) for k in figures)
    for key, value in figures.items():
        print(f"  {key:<{width}}  {'-' if value is None else value}")
    print()
    cols = ["job", "gpus", "submit_s", "start_s", "finish_s", "state", "wait_s", "held_idle_gpu_s"]
    jobs = result.jobs
    if len(jobs) > 20:
        print(f"first 20 of {len(jobs)} jobs:")
        jobs = jobs.head(20)
    if len(jobs):
        print(jobs[cols].to_string(index=False))
    if result.deadlock:
        print()
        print(result.deadlock_report())
    if args.out:
        print(f"\ntables written to {args.out}")
    return 0


def _finite(value):
    """``value`` with every non-finite float (NaN, infinity) replaced by None: JSON has no Infinity or NaN.

    A figure that does not exist (the p95 wait of a run without a finished job) is ``null``.
    """
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def cmd_admit(args: argparse.Namespace) -> int:
    """``gangkit admit``: Kueue's decisions for a snapshot of manifests (see gangkit.analysis.admit)."""
    from gangkit.analysis.admit import cmd_admit as admit

    return admit(args)


def cmd_check(args: argparse.Namespace) -> int:
    """``gangkit check``: the findings of a stack's manifests (see gangkit.consistency)."""
    from gangkit.consistency.check import check
    from gangkit.consistency.report import format_json, format_text

    if args.stack and not args.simulate:
        print("gangkit check: --stack needs --simulate (it names the stack to run)", file=sys.stderr)
        return 2
    report, status = load_reporting(lambda: check([Path(f) for f in args.files], simulate=args.simulate, stack=args.stack))
    if status is not None:
        return status
    print(format_json(report, args.strict) if args.json else format_text(report))
    return report.exit_status(args.strict)


def _positive(text: str) -> int:
    n = int(text)
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text}")
    return n


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="gangkit", description="Simulate gang scheduling of distributed training jobs, or open the course.")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="simulate a built-in scenario or a YAML file of manifests")
    run.add_argument("scenario", metavar="SCENARIO", help="three-workers, two-gangs-deadlock, mixed, or a path to a YAML file")
    run.add_argument("--stack", help=f"layers in order: {', '.join(STACKS)}")
    run.add_argument("--ordering", choices=ORDERINGS, help="gang placement ordering: skip (start whatever fits), strict "
                     "(head-of-line), easy-backfill, conservative-backfill, volcano-backfill, largest-first")
    run.add_argument("--estimate-factor", type=float, metavar="F", help="backfilling's run-time estimate for jobs "
                     "without activeDeadlineSeconds: true run time x F (F >= 1, default 1)")
    run.add_argument("--seed", type=int, help="random seed (changes the mixed stream)")
    run.add_argument("--compare", metavar="A,B,...", help="run the same scenario and seed through these stacks; one row per stack")
    run.add_argument("--json", action="store_true", help="print one JSON object with the summary figures")
    run.add_argument("--out", metavar="DIR", help="write jobs, pods, events and timeline as CSV files")
    run.set_defaults(func=cmd_run)
    admit = sub.add_parser("admit", help="Kueue's admission decisions for a snapshot of Kueue manifests")
    admit.add_argument("files", metavar="FILE", nargs="+", help="YAML files: Kueue objects, Workloads, queue-labelled Jobs")
    how_long = admit.add_mutually_exclusive_group()
    how_long.add_argument("--cycles", type=_positive, metavar="N", help="run N scheduling cycles (default 1)")
    how_long.add_argument("--until-quiet", action="store_true", help="run cycles until one changes nothing")
    admit.add_argument("--json", action="store_true", help="print one JSON object: admitted, preempted, pending")
    admit.set_defaults(func=cmd_admit)
    check = sub.add_parser("check", help="every inconsistency between the layers of a stack's manifests")
    check.add_argument("files", metavar="FILE", nargs="+", help="YAML files of one stack (Kueue, gang layer, nodes, Jobs)")
    check.add_argument("--json", action="store_true", help="print one JSON object: findings and summary")
    check.add_argument("--strict", action="store_true", help="exit 1 on warnings too")
    check.add_argument("--simulate", action="store_true", help="also run the stack and report what went wrong in the run")
    check.add_argument("--stack", help=f"with --simulate: the stack to run ({', '.join(STACKS)})")
    check.set_defaults(func=cmd_check)
    try:
        from gangkit.cli.course import add_course_parser
    except ImportError:  # pragma: no cover - the course launcher ships with the source checkout
        pass
    else:
        add_course_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
