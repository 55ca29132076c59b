"""The command line is a stable contract: exit codes, one JSON object, CSV tables."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import gangkit as gk
from gangkit.cli.main import main
from gangkit.stacks import STACKS

from conftest import run_cli
from paths import REPO

JSON_KEYS = {"deadlock", "jobs_total", "jobs_finished", "allocated_utilization", "effective_utilization",
             "held_idle_gpu_seconds", "held_idle_gpus_at_end", "mean_wait_s", "p95_wait_s", "max_wait_s",
             "makespan_s", "events"}


def run_json(capsys, *args):
    assert main(["run", *args, "--json"]) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1, "exactly one JSON object on stdout"
    return json.loads(out)


@pytest.mark.parametrize("stack, deadlock, finished, held_at_end", [("pod", True, 0, 4), ("gang", False, 2, 0)])
def test_two_gangs_deadlock_json(capsys, stack, deadlock, finished, held_at_end):
    figures = run_json(capsys, "two-gangs-deadlock", "--stack", stack)
    assert JSON_KEYS <= figures.keys()
    assert figures["deadlock"] is deadlock
    assert figures["jobs_finished"] == finished
    assert figures["held_idle_gpus_at_end"] == held_at_end


def test_runs_are_repeatable(capsys):
    seven = run_json(capsys, "mixed", "--seed", "7")
    assert run_json(capsys, "mixed", "--seed", "7") == seven
    assert run_json(capsys, "mixed", "--seed", "8") != seven


def test_ordering_changes_the_gang_result(capsys):
    skip = run_json(capsys, "three-workers", "--stack", "gang", "--ordering", "skip")
    strict = run_json(capsys, "three-workers", "--stack", "gang", "--ordering", "strict")
    assert strict["mean_wait_s"] > skip["mean_wait_s"]


def test_readable_table_and_deadlock_report(capsys):
    assert main(["run", "two-gangs-deadlock", "--stack", "pod"]) == 0
    out = capsys.readouterr().out
    assert "effective_utilization" in out and "Deadlocked" in out
    assert "A holds 2 GPUs on node-0:1, node-2:1; waits for A-2, A-3" in out


def test_out_writes_four_tables(tmp_path, capsys):
    assert main(["run", "three-workers", "--out", str(tmp_path)]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["events.csv", "jobs.csv", "pods.csv", "timeline.csv"]


@pytest.mark.parametrize("args, message", [
    (["run", "nowhere.yaml"], "error: Scenario file nowhere.yaml: not found"),
    (["run", "four-workers"], "error: Scenario four-workers: unknown built-in scenario"),
    (["run", "three-workers", "--stack", "gang+autoscaler"], "error: Simulation settings: stack: stack 'gang+autoscaler' combines layers"),
])
def test_bad_input_is_one_line_and_exit_2(capsys, args, message):
    assert main(args) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith(message) and captured.err.count("\n") == 1


def test_console_entry_point_runs_as_a_module():
    proc = subprocess.run([sys.executable, "-m", "gangkit.cli.main", "run", "two-gangs-deadlock", "--stack", "gang", "--json"],
                          capture_output=True, text=True, check=True)
    assert json.loads(proc.stdout)["jobs_finished"] == 2


def test_a_yaml_file_runs_like_the_builtin(capsys, tmp_path):

    example = REPO / "examples" / "two-gangs-deadlock.yaml"
    figures = run_json(capsys, str(example), "--stack", "pod")
    assert figures["deadlock"] is True and figures["held_idle_gpus_at_end"] == 4
    figures = run_json(capsys, str(example), "--stack", "gang")
    assert figures["jobs_finished"] == 2


def test_every_problem_in_a_yaml_file_gets_its_line(capsys, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "apiVersion: v1\nkind: Node\nmetadata: {name: n}\nstatus: {allocatable: {nvidia.com/gpu: 'x'}}\n---\n"
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec: {parallelism: -1, template: {spec: {containers: "
        "[{name: c, resources: {limits: {nvidia.com/gpu: 0.5}}}]}}}\n")
    assert main(["run", str(bad), "--json"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert len(lines) == 3
    assert lines[0].startswith("error: Node n: status.allocatable.nvidia.com/gpu:")
    assert lines[1].startswith("error: Job j: spec.parallelism: expected a whole number >= 1")
    assert "nvidia.com/gpu: must be an integer" in lines[2]


@pytest.mark.parametrize(
    "value, expected",
    [
        (float("inf"), None),
        (float("nan"), None),
        ({"a": float("-inf"), "b": [1.5, float("nan")], "c": "x"}, {"a": None, "b": [1.5, None], "c": "x"}),
        (3, 3),
    ],
)
def test_json_has_no_infinity_or_nan(value, expected):
    from gangkit.cli.main import _finite

    assert _finite(value) == expected
    json.dumps(_finite(value), allow_nan=False)  # strict JSON


# -- a new user's natural mistakes: one line (and a hint), exit 2, never a traceback ----------------------------
cli = run_cli  # the command line in this process (tests/conftest.py)


@pytest.mark.parametrize("make, message", [
    pytest.param(lambda tmp: tmp / "table.csv", "expected a folder for the CSV tables, got an existing file",
                 id="--out naming an existing file"),
    pytest.param(lambda tmp: tmp / "table.csv" / "out", "cannot create the folder (Not a directory)",
                 id="--out inside a file: a folder that cannot be created"),
    pytest.param(lambda tmp: str(tmp / "a\0b"), "cannot create the folder (embedded null byte)",
                 id="--out with a NUL byte in its name"),
])
@pytest.mark.parametrize("extra", [pytest.param([], id="run"), pytest.param(["--compare", "pod,gang"], id="run --compare")])
def test_an_out_folder_that_cannot_be_is_one_line_and_exit_2(tmp_path, capsys, make, message, extra):
    (tmp_path / "table.csv").write_text("kept\n")
    out = make(tmp_path)
    status, stdout, err = cli(["run", "three-workers", "--out", str(out), *extra], capsys)
    assert status == 2 and stdout == "" and "Traceback" not in err
    assert err.startswith("error: --out ") and message in err and len(err.splitlines()) == 1, err
    assert (tmp_path / "table.csv").read_text() == "kept\n"


MISSPELT = [
    pytest.param(["run", "three-workers", "--stack", "gnag"], "stack: unknown stack 'gnag'; did you mean gang?", id="a stack"),
    pytest.param(["run", "three-workers", "--compare", "pod,kueue+gnag"], "did you mean kueue+gang?", id="a stack to compare"),
    pytest.param(["run", "three-wrokers"], "unknown built-in scenario; did you mean three-workers?", id="a scenario"),
    pytest.param(["run", "three-workers", "--ordering", "stirct"], "invalid choice: 'stirct'", id="an ordering"),
    pytest.param(["rnu", "three-workers"], "invalid choice: 'rnu'", id="a subcommand"),
    pytest.param(["run", "three-workers", "--jsn"], "unrecognized arguments: --jsn; did you mean --json?", id="a flag"),
    pytest.param(["check", "examples/three-workers.yaml", "--simulte"], "did you mean --simulate?", id="a flag of check"),
]


@pytest.mark.parametrize("argv, message", MISSPELT)
def test_a_misspelt_name_gets_did_you_mean(capsys, argv, message):
    status, out, err = cli(argv, capsys)
    assert status == 2 and out == "" and message in err and "did you mean" in err, err
    assert len(err.splitlines()) <= 2 and "Traceback" not in err  # the error, and at most a hint


def test_an_unknown_stack_with_no_close_name_lists_them_all(capsys):
    status, _, err = cli(["run", "three-workers", "--stack", "warp"], capsys)
    assert status == 2 and "did you mean" not in err and all(s in err for s in STACKS)


ENTRY_POINT = "import sys; from gangkit.cli.main import main; sys.exit(main())"  # what the gangkit script runs


@pytest.mark.parametrize("argv", [pytest.param(["run", "three-workers"], id="the console table"),
                                  pytest.param(["run", "three-workers", "--json"], id="--json")])
def test_a_closed_pipe_ends_the_command_quietly(argv):
    """``gangkit run mixed | head -1``: the reader is gone before the output comes; no BrokenPipeError traceback,
    and none from Python's flush at exit either (the pattern of Python's "Note on SIGPIPE")."""
    proc = subprocess.Popen([sys.executable, "-c", ENTRY_POINT, *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    proc.stdout.close()  # before the child has even imported gangkit: nothing is written yet
    err = proc.stderr.read()
    assert proc.wait(timeout=300) == 1 and err == ""


def test_two_gangs_deadlock_runs_the_same_built_in_and_from_its_example(capsys):
    """One default stack (pod: the deadlock is the pod-by-pod scheduler's story) and one horizon (30 days) for both."""

    example = REPO / "examples" / "two-gangs-deadlock.yaml"
    built_in, from_file = run_json(capsys, "two-gangs-deadlock"), run_json(capsys, str(example))
    assert built_in == from_file
    assert built_in["stack"] == "pod" and built_in["deadlock"] is True
    assert built_in["makespan_s"] == gk.RunSettings().horizon


def test_run_help_states_the_default_stacks_and_horizon(capsys):
    from gangkit.cli.main import DEFAULTS

    assert DEFAULTS == {name: gk.scenarios.load(name).settings.stack for name in gk.scenarios.NAMES}
    assert {gk.scenarios.load(name).settings.horizon for name in gk.scenarios.NAMES} == {gk.RunSettings().horizon}
    status, out, _ = cli(["run", "--help"], capsys)
    text = " ".join(out.split())
    assert status == 0
    assert "two-gangs-deadlock: pod" in text and "three-workers: gang" in text and "mixed: gang" in text
    assert f"{gk.RunSettings().horizon / 86400:g} days" in text and "spec.horizon" in text


@pytest.mark.parametrize("args, restarted", [
    pytest.param(["examples/kueue-two-teams.yaml", "--stack", "kueue+gang"], True, id="Kueue preempts pretrain"),
    pytest.param(["three-workers"], False, id="no job restarts"),
])
def test_the_console_shows_restarts_and_the_time_they_cost(capsys, args, restarted):
    import warnings

    repo = REPO
    argv = [str(repo / a) if a.endswith(".yaml") else a for a in args]
    status, out, _ = cli(["run", *argv], capsys)
    assert status == 0
    header = next(line for line in out.splitlines() if line.split()[:2] == ["job", "gpus"])
    assert ("restarts" in header.split() and "lost_s" in header.split()) is restarted
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scenario = gk.load_file(argv[0]) if argv[0].endswith(".yaml") else argv[0]
        jobs = gk.simulate(scenario, stack=args[2] if len(args) > 2 else None).jobs
    for row in jobs[jobs.restarts > 0].itertuples():
        line = next(line for line in out.splitlines() if line.split()[:1] == [row.job])
        lost = row.finish_s - row.start_s - row.run_time_s
        assert lost > 0 and line.split()[-2:] == [str(row.restarts), f"{lost:.1f}"]
