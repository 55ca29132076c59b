"""Lesson 06's helpers and explorer: each table the lesson quotes comes from these calls."""

from __future__ import annotations

import pytest

import gangkit as gk
from gangkit.lessons import lesson06
from gangkit.supply.cloud import Stages


def test_stage_breakdown_reads_each_node_stage_from_the_events():
    r = gk.simulate(lesson06.from_zero(Stages(image_pull=30)), stack="kueue+gang+karpenter")
    table = lesson06.stage_breakdown(r)
    assert list(table.columns) == ["launched_s", "registered_s", "initialized_s", "image_pulled_s", "ready_s", "launch_to_ready_s"]
    assert table.loc["gpu-0"].tolist() == [1.0, 61.0, 151.0, 181.0, 181.0, 180.0] and len(table) == 4
    timeline = lesson06.job_timeline(r, "train")
    assert (timeline.quota_reserved_s, timeline.nominated_s, timeline.last_node_ready_s, timeline.started_s) == (0.0, 1.0, 181.0, 181.0)


@pytest.mark.parametrize("stages, placement, registration, initialization, pull", [
    (Stages(), 1.0, 60.0, 90.0, 0.0),  # the batch window, then the two default stages
    (Stages(image_pull=300), 1.0, 60.0, 90.0, 300.0),  # the pull is its own bucket
    (Stages(initialized=300), 1.0, 60.0, 300.0, 0.0),  # a slow GPU driver
    (Stages(registered=10), 1.0, 10.0, 90.0, 0.0),
])
def test_an_admitted_gang_waits_in_the_stage_its_nodes_have_not_reached(stages, placement, registration, initialization, pull):
    r = gk.simulate(lesson06.from_zero(stages), stack="kueue+gang+karpenter")
    w = lesson06.wait_stages(r, "train")
    assert (w.quota, w.placement, w.node_launch, w.node_registration, w.node_initialization, w.image_pull) == (
        0.0, placement, 0.0, registration, initialization, pull)
    assert w.total == r.jobs.set_index("job").loc["train", "start_s"] == placement + registration + initialization + pull


@pytest.mark.parametrize("story, quota, check, placement, nodes", [
    ("limit 16", 420.0, None, 6180.0, 600.0),  # half the gang's nodes come, four times; the rest never does
    ("limit 64", 0.0, None, 1.0, 150.0),
    ("provreq max 2", 420.0, 6780.0, 0.0, 0.0),  # no node is ever launched: the wait is in the admission check
    ("provreq max 4", 0.0, 0.0, 0.0, 150.0),
])
def test_wait_table_shows_where_each_story_waits(story, quota, check, placement, nodes):
    kind, _, n = story.rpartition(" ")
    run = lesson06.limit_story(int(n)) if kind == "limit" else lesson06.provreq_story(int(n))
    row = lesson06.wait_table({story: run}).loc[story]
    assert (row.quota, row.placement) == (quota, placement)
    if check is None:  # no admission check in the stack: no such bucket
        assert "admission_check" not in row.index
    else:
        assert row.admission_check == check
    assert row[["node_launch", "node_registration", "node_initialization", "image_pull"]].sum() == nodes
    assert row.drop("total").sum() == row.total


@pytest.mark.parametrize("stack_runs, launched, paid, state", [
    ("limit", 8, 30.38, "WaitingAtEnd"),  # two nodes per admission, held while the gang's pods are nominated to them
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
    e = lesson06.provisioning_explorer()
    assert e.table.equals(lesson06.warm_pool_table(range(0, 5)))
    e.controls["image_pull_s"].value = 600
    assert e.table.loc[0, "mean_wait_s"] == 751.0
    assert repr(e) == "Warm nodes or waiting (run this cell to use it)"
