"""The ``gangkit`` command: run a scenario, or open the course.

``gangkit admit FILE... [--cycles N | --until-quiet] [--json]`` prints the
decisions Kueue's scheduling cycles take on a snapshot of Kueue manifests
(:mod:`gangkit.analysis.admit`).

``gangkit run SCENARIO [--stack NAME] [--ordering NAME] [--estimate-factor F] [--seed N] [--json] [--out DIR [--force]]``
simulates a built-in scenario (``three-workers``, ``two-gangs-deadlock``,
``mixed``) or YAML files of Kubernetes manifests read together (``gangkit run
setup.yaml job.yaml --nodes 4x8``: ``--nodes`` adds Nodes to files that name
none, :mod:`gangkit.cli.scenario`). A deadlocked cluster is a
*result* (exit 0); bad input is an *error*: one line per problem, naming the
object and the field, on stderr, and exit status 2. Without ``--stack`` a
run uses the scenario's own stack (:data:`DEFAULTS`); every run ends at 30
simulated days at the latest unless a file's ``Simulation`` sets ``spec.horizon``.

``gangkit check FILE... [--json] [--strict] [--simulate [--stack NAME]]`` reads a stack's manifests and
prints every inconsistency between its layers (:mod:`gangkit.consistency`): exit 0 when there is none
or only warnings, 1 with an error (with ``--strict``, with any finding), 2 for bad input.

``gangkit predict DUMP.yaml JOB.yaml... [--stack NAME] [--samples N] [--seed S] [--json] [--runtime-quantiles FILE]
[--horizon S] [--workers N]`` submits the jobs to a live cluster's dump at its snapshot time and says, per job,
whether and when it starts over many sampled futures, and why it waits (:mod:`gangkit.analysis.predict`).

``gangkit run SCENARIO --compare pod,gang,kueue+gang`` runs the same scenario
and seed through each stack and prints one comparison row per stack
(:mod:`gangkit.analysis.compare`); with ``--json`` the object holds a ``stacks`` list,
with ``--out DIR`` the table is written as ``compare.csv``.

``--json`` prints exactly one JSON object on stdout (simulated figures only);
warnings go to stderr. ``--out DIR`` writes the jobs, pods, events and
timeline tables as CSV files: new ones (a file already there is refused
unless ``--force``, a symbolic link always, before the run starts;
:mod:`gangkit.cli.outfiles`).

Every mistake on the command line is one line on stderr (and a second with a
hint), exit status 2: a misspelt subcommand, flag, scenario, stack or
ordering gets ``did you mean ...?``, an ``--out`` that is empty, a file or cannot be
created is named. Output into a pipe that closes early (``gangkit run mixed |
head -1``) ends the command quietly, as the Python documentation's "Note on
SIGPIPE" (module :mod:`signal`) describes.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
from pathlib import Path

from gangkit.cli.scenario import load_scenario as _load
from gangkit.model.errors import load_reporting
from gangkit.model.scenario import DAY, ORDERINGS, RunSettings, did_you_mean
from gangkit.stacks import STACKS

#: The stack each built-in scenario runs without ``--stack`` (its own settings; ``--help`` lists them).
DEFAULTS = {"three-workers": "gang", "two-gangs-deadlock": "pod", "mixed": "gang"}
#: Every run's horizon unless a file's Simulation sets ``spec.horizon`` (RunSettings' default).
HORIZON_DAYS = RunSettings().horizon / DAY


#: The tables ``gangkit run --out DIR`` writes, and ``--compare``'s.
RUN_TABLES = ("jobs", "pods", "events", "timeline")
COMPARE_TABLES = ("compare",)


def _out_folder(text: str, tables: tuple[str, ...], force: bool) -> Path | None:
    """The ``--out`` folder, created now (before a long run); None after printing why it cannot be.

    The CSV files it would hold must be new (else ``--force``), and none a symbolic link
    (:mod:`gangkit.cli.outfiles`): one line naming them, before anything runs.
    """
    from gangkit.cli.outfiles import blocked

    out, shown = Path(text), text if text.isprintable() and text else repr(text)
    if not text:
        print(f"error: --out {shown}: expected a folder name for the CSV tables, got an empty one (leave --out out "
              "to write no tables)", file=sys.stderr)
        return None
    try:
        if out.exists() and not out.is_dir():
            print(f"error: --out {shown}: expected a folder for the CSV tables, got an existing file", file=sys.stderr)
            return None
        out.mkdir(parents=True, exist_ok=True)
        problems = blocked([out / f"{name}.csv" for name in tables], force)
    except (OSError, ValueError) as e:  # ValueError: a NUL byte in the name
        print(f"error: --out {shown}: cannot create the folder ({getattr(e, 'strerror', None) or e})", file=sys.stderr)
        return None
    if problems:
        print(f"error: {problems[0]}", file=sys.stderr)
        return None
    return out


def _write_tables(out: Path, tables: dict, force: bool) -> bool:
    """Write each table as ``NAME.csv`` in ``out``; False after printing the error (a full disk, no permission, a
    file or a link that appeared since :func:`_out_folder` looked)."""
    from gangkit.cli.outfiles import open_new, why_not

    for name, table in tables.items():
        path = out / f"{name}.csv"
        try:
            with open_new(path, force) as f:
                table.to_csv(f, index=False)
        except OSError as e:
            print(f"error: {why_not(path, e, force)}", file=sys.stderr)
            return False
    return True


def cmd_compare(args: argparse.Namespace) -> int:
    """``gangkit run SCENARIO --compare a,b,c``: one comparison row per stack."""
    from gangkit.analysis.compare import run_stacks, table

    stacks = [s.strip() for s in args.compare.split(",") if s.strip()]
    out = _out_folder(args.out, COMPARE_TABLES, args.force) if args.out is not None else None
    if args.out is not None and out is None:
        return 2
    results, status = load_reporting(lambda: run_stacks(_load(args.scenario, args.seed, args.nodes, args.snapshot_time), stacks, seed=args.seed, ordering=args.ordering))
    if status is not None:
        return status
    df = table(results)
    first = next(iter(results.values()))
    if out is not None and not _write_tables(out, {"compare": df}, args.force):
        return 2
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

    out = _out_folder(args.out, RUN_TABLES, args.force) if args.out is not None else None
    if args.out is not None and out is None:
        return 2
    result, status = load_reporting(
        lambda: simulate(_load(args.scenario, args.seed, args.nodes, args.snapshot_time), stack=args.stack, ordering=args.ordering, seed=args.seed,
                         estimate_factor=args.estimate_factor))
    if status is not None:
        return status
    figures = result.summary()
    if out is not None and not _write_tables(out, {n: getattr(result, n) for n in RUN_TABLES}, args.force):
        return 2
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
    jobs = result.jobs
    if len(jobs) > 20:
        print(f"first 20 of {len(jobs)} jobs:")
        jobs = jobs.head(20)
    if len(jobs):
        print(job_table(jobs).to_string(index=False))
    if len(jobs) and (jobs["restarts"] > 0).any():
        print(RESTARTS_NOTE)
    if result.deadlock:
        print()
        print(result.deadlock_report())
    if args.out:
        print(f"\ntables written to {args.out}")
    return 0


#: What the console's job table shows; ``restarts`` and ``lost_s`` join it when a job restarted.
JOB_COLUMNS = ["job", "gpus", "submit_s", "start_s", "finish_s", "state", "wait_s", "held_idle_gpu_s"]
RESTARTS_NOTE = ("restarts: times the job's pods were evicted (preemption, a node removed, a rendezvous given up) and "
                 "started again;\nlost_s: seconds from its first start to its finish beyond its run time (waiting to "
                 "run again, work redone since its last checkpoint)")


def job_table(jobs):
    """The console's job table: ``wait_s`` is the wait for the *first* start, so a job that restarted also
    shows ``restarts`` and ``lost_s``, the time the restarts cost it (finish - first start - run time)."""
    if not (jobs["restarts"] > 0).any():
        return jobs[JOB_COLUMNS]
    shown = jobs[JOB_COLUMNS + ["restarts"]].copy()
    lost = jobs["finish_s"] - jobs["start_s"] - jobs["run_time_s"]
    shown["lost_s"] = lost.where(jobs["restarts"] > 0, 0.0).round(3)
    return shown


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


def cmd_predict(args: argparse.Namespace) -> int:
    """``gangkit predict DUMP JOB...``: will each job start, when, and why not (see gangkit.analysis.predict)."""
    from gangkit.analysis.predict import predict

    prediction, status = load_reporting(lambda: predict(
        args.dump, args.jobs, stack=args.stack, samples=args.samples, seed=args.seed, horizon=args.horizon,
        runtime_quantiles=args.runtime_quantiles, workers=args.workers))
    if status is not None:
        return status
    print(json.dumps(_finite(prediction.to_dict()), allow_nan=False) if args.json else str(prediction))
    return 0


def _seconds(text: str) -> float:
    try:
        s = float(text)
    except ValueError:
        s = math.nan
    if not (math.isfinite(s) and s > 0):
        raise argparse.ArgumentTypeError(f"expected seconds > 0, got {text}")
    return s


def _positive(text: str) -> int:
    n = int(text)
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text}")
    return n


class Parser(argparse.ArgumentParser):
    """argparse's parser, whose mistakes are one line (and a hint): with ``did you mean ...?`` when a name is close.

    argparse would print the whole usage first; a misspelt subcommand
    (``rnu``), flag (``--jsn``) or ordering (``stirct``) is named with its
    closest match instead (:func:`difflib.get_close_matches`), and the hint
    line points to ``--help``. Exit status 2, as argparse's own.
    """

    def error(self, message: str):
        hint = self.closest(message)
        self.exit(2, f"{self.prog}: error: {message}{'; ' + hint if hint else ''}\n(see {self.prog} --help)\n")

    def closest(self, message: str) -> str:
        """``did you mean X?`` for the name argparse refused in ``message`` (an invalid choice, unknown flags)."""
        choice = re.search(r"invalid choice: '([^']*)'", message)
        if choice:
            names = [c for a in self._actions if a.choices for c in a.choices]
            return did_you_mean(choice.group(1), names)
        if message.startswith("unrecognized arguments: "):
            flags = [f for a in self._actions for f in a.option_strings if f.startswith("--")]
            hints = [h for h in (did_you_mean(w.split("=", 1)[0], flags) for w in message.split()[2:] if w.startswith("-")) if h]
            return hints[0] if hints else ""
        return ""


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="gangkit", description="Simulate gang scheduling of distributed training jobs, or open the course.")
    sub = parser.add_subparsers(dest="command", required=True)
    defaults = ", ".join(f"{name}: {stack}" for name, stack in DEFAULTS.items())
    run = sub.add_parser("run", help="simulate a built-in scenario or a YAML file of manifests", description=(
        f"Simulate a scenario through a stack. Without --stack, a built-in scenario runs its own stack ({defaults}) "
        "and a YAML file the stack of its Simulation object (spec.stack; without one, gang). A run ends when "
        f"every job has ended, else at its horizon: {HORIZON_DAYS:g} days of simulated time, unless a file's "
        "Simulation sets spec.horizon (examples/two-gangs-deadlock.yaml runs pod for 30 days, as the built-in does)."))
    run.add_argument("scenario", metavar="SCENARIO", nargs="+", help="three-workers, two-gangs-deadlock, mixed, or one "
                     "or more YAML files read together (the queues in one, the jobs in another)")
    run.add_argument("--nodes", metavar="NxG", help="add N Nodes of G GPUs each to the YAML files (4x8; "
                     "2x8,cpu=96,memory=1Ti), for manifests that name no Nodes")
    run.add_argument("--snapshot-time", metavar="TIME", help="for a live cluster's dump (kubectl get ... -o yaml): the "
                     "time it was taken, RFC 3339 (2026-12-01T08:00:00Z; default: its latest timestamp)")
    run.add_argument("--stack", help=f"layers in order: {', '.join(STACKS)} (default: the scenario's own, see above)")
    run.add_argument("--ordering", choices=ORDERINGS, help="gang placement ordering: skip (start whatever fits), strict "
                     "(head-of-line), easy-backfill, conservative-backfill, volcano-backfill, largest-first")
    run.add_argument("--estimate-factor", type=float, metavar="F", help="backfilling's run-time estimate for jobs "
                     "without activeDeadlineSeconds: true run time x F (F >= 1, default 1)")
    run.add_argument("--seed", type=int, help="random seed (changes the mixed stream)")
    run.add_argument("--compare", metavar="A,B,...", help="run the same scenario and seed through these stacks; one row per stack")
    run.add_argument("--json", action="store_true", help="print one JSON object with the summary figures")
    run.add_argument("--out", metavar="DIR", help="write jobs, pods, events and timeline as CSV files into this folder "
                     "(created if needed; files already there are refused unless --force)")
    run.add_argument("--force", action="store_true", help="with --out: replace the CSV files if they exist (never a "
                     "symbolic link)")
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
    predict = sub.add_parser("predict", help="will a job start on a live cluster's dump, when, and why not", description=(
        "Submit the jobs to the cluster of a dump (kubectl get ... -o yaml) at its snapshot time and run it forward "
        "many times, each with remaining run times drawn for the running pods (docs/reference/predict.md): per job, "
        "the share of samples in which it starts, its start time p10/p50/p90, the layer it waits in and why."))
    predict.add_argument("dump", metavar="DUMP", help="a live cluster's dump (YAML), read as gangkit run reads it")
    predict.add_argument("jobs", metavar="JOB", nargs="+", help="YAML files of the workloads to submit")
    predict.add_argument("--stack", help=f"layers in order: {', '.join(STACKS)} (default: the files' Simulation, else gang)")
    predict.add_argument("--samples", type=_positive, default=100, metavar="N", help="sampled futures (default 100)")
    predict.add_argument("--seed", type=int, default=0, metavar="S", help="seed of the run-time draws (default 0)")
    predict.add_argument("--horizon", type=_seconds, metavar="S", help="seconds after the snapshot within which a start "
                         f"counts (default: the run's horizon, {HORIZON_DAYS:g} days)")
    predict.add_argument("--runtime-quantiles", metavar="FILE", help="a CSV quantile,value of run times in seconds "
                         "(default: the shipped Philly trace quantiles)")
    predict.add_argument("--workers", type=_positive, metavar="N", help="processes for the samples (default: one per CPU)")
    predict.add_argument("--json", action="store_true", help="print one JSON object: snapshot_time, samples, workloads")
    predict.set_defaults(func=cmd_predict)
    from gangkit.cli.export import add_export_parser
    from gangkit.cli.grade import add_grade_parser

    add_export_parser(sub)
    add_grade_parser(sub)
    try:
        from gangkit.cli.course import add_course_parser
    except ImportError:  # pragma: no cover - the course launcher ships with the source checkout
        pass
    else:
        add_course_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run one command; its exit status (2 for a mistake on the command line or in the input)."""
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra:  # named by the subcommand's parser, which knows its own flags
        command = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices[args.command]
        command.error(f"unrecognized arguments: {' '.join(extra)}")
    try:
        status = args.func(args)
        sys.stdout.flush()  # a closed pipe is noticed here, not at exit
    except BrokenPipeError:
        _quiet_stdout()
        return 1
    except KeyboardInterrupt:
        print("gangkit: interrupted", file=sys.stderr)
        return 130
    return status


def _quiet_stdout() -> None:
    """After a closed pipe: point stdout at the null device, so that Python's flush at exit finds no pipe to
    complain about (the pattern of the Python documentation's "Note on SIGPIPE", module signal)."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):  # not a real file (a test's capture)
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)
    os.close(devnull)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
