"""Sweeps: the grid as data, the same table from processes, one process and Dask, clear errors."""

from __future__ import annotations

import importlib

import pytest

from gangkit.analysis.sweep import GRID_KEYS, points, run_point, scenario_for, sweep
from gangkit.model.errors import ScenarioError
from gangkit.results import waiting
from gangkit.workloads.generators import Constant, Exponential, JobClass, Poisson, Stream, stream_to_dict

TINY = {"scenario": ["mixed"], "ordering": ["strict", "skip"], "load": [0.7, 1.1], "seed": [0], "n_jobs": [200],
        "n_nodes": [8]}

TWO_CLASS = Stream(Poisson(0.01), [JobClass("one", 0.8, run_time=Exponential(100)),
                                   JobClass("node", 0.2, pods=1, gpus_per_pod=8, run_time=Constant(100))],
                   n_jobs=150, seed=0, name="two-class")


@pytest.fixture(scope="module")
def sequential():
    return sweep(TINY, workers=1, progress=False)


def test_grid_is_every_combination_in_written_order():
    pts = points({"ordering": ["strict", "skip"], "load": [0.5, 0.9], "seed": 3})
    assert [(p["ordering"], p["load"], p["seed"]) for p in pts] == [
        ("strict", 0.5, 3), ("strict", 0.9, 3), ("skip", 0.5, 3), ("skip", 0.9, 3)]


def test_list_of_points_is_taken_as_is():
    pts = points([{"ordering": "skip", "load": 0.5}, {"ordering": "strict"}])
    assert pts == [{"ordering": "skip", "load": 0.5}, {"ordering": "strict"}]


def test_one_row_per_point_in_grid_order(sequential):
    assert list(sequential["ordering"]) == ["strict", "strict", "skip", "skip"]
    assert list(sequential["load"]) == [0.7, 1.1, 0.7, 1.1]
    assert list(sequential.columns[:8]) == ["scenario", "stack", "ordering", "load", "seed", "n_jobs", "n_nodes",
                                            "allocated_utilization"]
    for col in ("mean_wait_s", "p99_wait_s", "mean_bounded_slowdown", "starvation_wait_s", "stability"):
        assert col in sequential.columns


def test_row_equals_a_direct_run(sequential):
    p = points(TINY)[1]
    assert sequential.iloc[1].to_dict() == run_point(p)


def test_processes_equal_sequential(sequential):
    assert sweep(TINY, workers=2, progress=False).equals(sequential)


@pytest.mark.slow
def test_dask_local_cluster_equals_sequential(sequential):
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        assert sweep(TINY, client=client, progress=False).equals(sequential)


@pytest.mark.parametrize("spec", [TWO_CLASS, stream_to_dict(TWO_CLASS)], ids=["Stream", "plain-data"])
def test_generator_as_scenario_with_load_and_seed(spec):
    table = sweep({"scenario": [spec], "load": [0.5], "seed": [4], "n_nodes": [2], "ordering": ["strict"]},
                  workers=1, progress=False)
    assert table.loc[0, "scenario"] == "two-class"
    sc = scenario_for({"scenario": spec, "load": 0.5, "seed": 4, "n_nodes": 2})
    assert len(sc.nodes) == 2 and sc.settings.seed == 4
    # load 0.5 of 16 GPUs: rate = 8 / (0.8 * 1 * 100 + 0.2 * 8 * 100) = 8 / 240
    gaps = [b.submit_time - a.submit_time for a, b in zip(sc.jobs, sc.jobs[1:])]
    assert sum(gaps) / len(gaps) == pytest.approx(30.0, rel=0.25)
    assert "mean_wait_s[2-8]" in table.columns and "mean_wait_s[1]" in table.columns


def test_fixed_story_runs_without_stream_keys():
    table = sweep({"scenario": ["two-gangs-deadlock"], "stack": ["gang"]}, workers=1, progress=False)
    assert table.loc[0, "max_wait_s"] == 600.0 and table.loc[0, "jobs"] == 2


@pytest.mark.parametrize("grid, where, says", [
    ({"policy": ["strict"]}, "policy", "unknown grid key"),
    ({"ordering": ["strict"], "lod": [0.5]}, "lod", "unknown grid key"),
    ([{"ordering": "strict"}, {"seeds": 1}], "[1].seeds", "unknown grid key"),
    ({"ordering": ["fifo"]}, "point 0.ordering", "expected one of"),
    ({"stack": ["volcano"]}, "point 0.stack", "expected one of"),
    ({"load": [0.5, -1]}, "point 1.load", "expected a load > 0"),
    ({"n_jobs": [0]}, "point 0.n_jobs", "whole number"),
    ({"scenario": ["nope"]}, "point 0.scenario", "unknown scenario"),
    ({"scenario": ["three-workers"], "load": [0.5]}, "point 0.load", "fixed story"),
    ({"scenario": [{"arrivals": {"kind": "Poisson", "rate": -1}, "classes": []}]}, "point 0.scenario", "rate"),
    ({"load": lambda: 0.5}, "point 0.load", "callable"),
    ({"ordering": []}, "ordering", "at least one value"),
    ("mixed", "sweep grid", "dict of lists"),
    (lambda: {}, "sweep grid", "dict of lists"),
])
def test_bad_grid_gives_one_clear_error(grid, where, says):
    with pytest.raises(ScenarioError) as info:
        points(grid)
    text = str(info.value)
    assert where in text and says in text


def test_bad_workers_is_refused():
    with pytest.raises(ScenarioError, match="workers"):
        sweep({"ordering": ["skip"]}, workers=0)


@pytest.mark.parametrize("env, progress, shown", [("1", True, False), ("", False, False), ("", True, True)])
def test_progress_bar_switch(monkeypatch, env, progress, shown):
    module = importlib.import_module("gangkit.analysis.sweep")

    monkeypatch.setenv("GANGKIT_NO_PROGRESS", env)
    assert module._show_progress(progress) is shown


def test_grid_keys_are_documented():
    module = importlib.import_module("gangkit.analysis.sweep")

    assert all(f"``{k}``" in module.__doc__ for k in GRID_KEYS)
    assert waiting.TAU_S == 10.0
