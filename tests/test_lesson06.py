"""Lesson 06's helpers and explorer: each table the lesson quotes comes from these calls."""

from __future__ import annotations

import pytest

from gangkit import lesson06, widgets
from gangkit.karpenter import Stages
import gangkit as gk


def test_stage_breakdown_reads_each_node_stage_from_the_events():
    r = gk.simulate(lesson06.from_zero(Stages(image_pull=30)), stack="kueue+gang+karpenter")
    table = lesson06.stage_breakdown(r)
    assert list(table.columns) == ["launched_s", "registered_s", "initialized_s", "image_pulled_s", "ready_s", "launch_to_ready_s"]
    assert table.loc["gpu-0"].tolist() == [1.0, 61.0, 151.0, 181.0, 181.0, 180.0] and len(table) == 4
    timeline = lesson06.job_timeline(r, "train")
    assert (timeline.quota_reserved_s, timeline.last_node_ready_s, timeline.started_s) == (0.0, 181.0, 181.0)


@pytest.mark.parametrize("stack_runs, launched, paid, state", [
    ("limit", 8, 8.0, "WaitingAtEnd"),
    ("provreq", 0, 0.0, "WaitingAtEnd"),
])
def test_part_of_a_gang_costs_gpu_hours_all_or_nothing_costs_none(stack_runs, launched, paid, state):
    run = lesson06.limit_story(16) if stack_runs == "limit" else lesson06.provreq_story(2)
    row = lesson06.paid_table({"x": run}).loc["x"]
    assert (row.nodes_launched, row.gpu_hours_paid, row.train_state) == (launched, paid, state)


def test_batching_windows_table():
    table = lesson06.batching_table([(1.0, 10.0), (1.0, 30.0)])
    assert table.batches.tolist() == [2, 1] and table.nodes_launched.tolist() == [3, 3]
    assert table.first_window_closes_s.tolist() == [10.0, 13.0]


def test_warm_nodes_cost_more_and_wait_less():
    table = lesson06.warm_pool_table(range(0, 5))
    assert table.gpu_hours_paid.is_monotonic_increasing and table.mean_wait_s.is_monotonic_decreasing
    assert (table.gpu_hours_useful == table.gpu_hours_useful.iloc[0]).all()
    assert table.loc[4, "mean_wait_s"] == 0.0 and table.loc[0, "mean_wait_s"] == 151.0


def test_the_explorer_shows_the_table_and_follows_its_controls():
    e = widgets.provisioning_explorer()
    assert e.table.equals(lesson06.warm_pool_table(range(0, 5)))
    e.controls["image_pull_s"].value = 600
    assert e.table.loc[0, "mean_wait_s"] == 751.0
    assert repr(e) == "Warm nodes or waiting (run this cell to use it)"
