"""The command line is a stable contract: exit codes, one JSON object, CSV tables."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from gangkit.cli.main import main

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
    from pathlib import Path

    example = Path(__file__).resolve().parents[1] / "examples" / "two-gangs-deadlock.yaml"
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
