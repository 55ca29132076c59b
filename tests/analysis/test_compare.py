"""gangkit.analysis.compare: one workload and seed through several stacks, one row each."""

from __future__ import annotations

import json

import pandas as pd
import pytest

import gangkit as gk
from gangkit.analysis.compare import COLUMNS
from gangkit.cli.main import main


@pytest.mark.parametrize("scenario, stack, finished, deadlocked, deadlock, dominant", [
    ("two-gangs-deadlock", "pod", 0, 2, True, "placement"),
    ("two-gangs-deadlock", "gang", 2, 0, False, "placement"),
    ("two-gangs-deadlock", "kueue+gang", 2, 0, False, "quota"),
    ("three-workers", "kueue+gang+karpenter", 3, 0, False, "node_registration"),
])
def test_one_row_per_stack(scenario, stack, finished, deadlocked, deadlock, dominant):
    table = gk.compare(scenario, stacks=["pod", "gang", "kueue+gang", "kueue+gang+karpenter"], seed=0)
    assert table.columns.tolist() == COLUMNS
    assert table['stack'].tolist() == ["pod", "gang", "kueue+gang", "kueue+gang+karpenter"]
    row = table.set_index("stack").loc[stack]
    assert (row.finished, row.deadlocked, bool(row.deadlock), row.dominant_wait) == (finished, deadlocked, deadlock, dominant)


def test_rows_agree_with_single_runs_and_gpu_hours_add_up():
    table = gk.compare("three-workers", seed=3)
    assert table['stack'].tolist() == list(gk.STACKS)
    for row in table.itertuples():
        s = gk.simulate("three-workers", stack=row.stack, seed=3).summary()
        assert row.mean_wait_s == s["mean_wait_s"] and row.finished == s["jobs_finished"]
        parts = row.useful_gpu_h + row.held_idle_gpu_h + row.free_gpu_h + row.not_ready_gpu_h
        assert abs(parts - row.capacity_gpu_h) <= 0.002
    assert 0 < table.set_index("stack").loc["kueue+gang+karpenter", "not_ready_gpu_h"]
    assert table.set_index("stack").loc["gang", "not_ready_gpu_h"] == 0


def test_same_seed_same_table():
    a = gk.compare("mixed", stacks=["gang", "kueue+gang"], seed=7, horizon=5000)
    b = gk.compare("mixed", stacks=["gang", "kueue+gang"], seed=7, horizon=5000)
    pd.testing.assert_frame_equal(a, b)


@pytest.mark.parametrize("stacks, words", [
    ("pod", "expected a non-empty list of stack names, got 'pod'"),
    ([], "expected a non-empty list of stack names"),
    (["pod", "warp"], "unknown stack 'warp'"),
])
def test_bad_stacks_are_one_clear_error(stacks, words):
    with pytest.raises(gk.ScenarioError, match=words):
        gk.compare("three-workers", stacks=stacks)


def test_command_line_compare(capsys):
    assert main(["run", "two-gangs-deadlock", "--compare", "pod,gang"]) == 0
    out = capsys.readouterr().out
    assert "stack" in out and "dominant_wait" in out and out.count("placement") == 2
    assert main(["run", "two-gangs-deadlock", "--compare", "pod,gang", "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert [r["stack"] for r in payload["stacks"]] == ["pod", "gang"] and payload["stacks"][0]["deadlock"] is True


@pytest.mark.parametrize("argv, words", [
    (["run", "three-workers", "--compare", "pod,warp"], "unknown stack 'warp'"),
    (["run", "three-workers", "--compare", "pod", "--stack", "gang"], "--stack and --compare exclude each other"),
])
def test_command_line_compare_errors(argv, words, capsys):
    assert main(argv) == 2
    assert words in capsys.readouterr().err


def test_command_line_compare_writes_a_csv(tmp_path):
    assert main(["run", "three-workers", "--compare", "gang,kueue+gang", "--out", str(tmp_path)]) == 0
    assert pd.read_csv(tmp_path / "compare.csv")["stack"].tolist() == ["gang", "kueue+gang"]
