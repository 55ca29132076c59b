"""The lessons' explorers (gangkit.lessons.lesson01, lesson02 and the shared Explorer): their plain functions give
the simulator's figures; the widgets follow their knobs."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import pandas as pd  # noqa: E402
import pytest  # noqa: E402

import gangkit as gk  # noqa: E402
from gangkit.lessons import lesson01, lesson02  # noqa: E402
from gangkit.lessons.explorer import Explorer  # noqa: E402

HORIZON = 30 * 86400.0


# ----------------------------------------------------------------------- explore_deadlock
@pytest.mark.parametrize(
    "case, kwargs, expected",
    [
        ("two 4-worker jobs on four 1-GPU nodes deadlock pod by pod",
         dict(nodes=4, jobs=2, workers=4, stack="pod"),
         dict(deadlock=True, jobs_deadlocked=2, jobs_finished=0, held_idle_gpus_at_end=4,
              allocated_utilization=1.0, effective_utilization=0.0, makespan_s=HORIZON)),
        ("the same jobs run one after the other under gang",
         dict(nodes=4, jobs=2, workers=4, stack="gang"),
         dict(deadlock=False, jobs_finished=2, held_idle_gpus_at_end=0, effective_utilization=1.0,
              mean_wait_s=300.0, makespan_s=1200.0)),
        ("six nodes: each job still holds three of its four workers",
         dict(nodes=6, jobs=2, workers=4, stack="pod"),
         dict(deadlock=True, jobs_deadlocked=2, held_idle_gpus_at_end=6)),
        ("seven nodes: one job gets all four workers, the other follows",
         dict(nodes=7, jobs=2, workers=4, stack="pod"),
         dict(deadlock=False, jobs_finished=2, makespan_s=1200.0)),
        ("one after another: the first job takes all four nodes before the second arrives",
         dict(nodes=4, jobs=2, workers=4, stack="pod", arrival="one after another"),
         dict(deadlock=False, jobs_finished=2, makespan_s=1200.0)),
        ("one job alone never deadlocks with room for it",
         dict(nodes=4, jobs=1, workers=4, stack="pod"),
         dict(deadlock=False, jobs_finished=1, makespan_s=600.0)),
        ("a job bigger than the cluster: pod by pod it holds three GPUs for ever",
         dict(nodes=3, jobs=1, workers=4, stack="pod"),
         dict(deadlock=True, held_idle_gpus_at_end=3, jobs_deadlocked=1)),
        ("a job bigger than the cluster: as a gang it waits holding nothing",
         dict(nodes=3, jobs=1, workers=4, stack="gang"),
         dict(deadlock=False, held_idle_gpus_at_end=0, jobs_waiting_at_end=1, allocated_utilization=0.0)),
        ("a worker bigger than any node is rejected by both stacks",
         dict(nodes=4, gpus_per_node=1, jobs=2, workers=2, gpus_per_worker=2, stack="pod"),
         dict(deadlock=False, jobs_rejected=2, jobs_finished=0)),
        ("two-GPU nodes: two 4-worker jobs of 1 GPU still deadlock on 4 GPUs",
         dict(nodes=2, gpus_per_node=2, jobs=2, workers=4, stack="pod"),
         dict(deadlock=True, held_idle_gpus_at_end=4)),
    ],
)
def test_explore_deadlock(case, kwargs, expected):
    figures = lesson01.explore_deadlock(**kwargs)
    assert list(figures) == lesson01.DEADLOCK_COLUMNS
    assert {k: figures[k] for k in expected} == expected


def test_explore_deadlock_defaults_are_two_gangs_deadlock():
    sc = lesson01.deadlock_scenario()
    built_in = gk.scenarios.two_gangs_deadlock()
    assert [(n.name, n.gpus) for n in sc.nodes] == [(n.name, n.gpus) for n in built_in.nodes]
    assert [(j.name, j.pod_count, j.gpus, j.run_time, j.submit_time) for j in sc.jobs] == \
        [(j.name, j.pod_count, j.gpus, j.run_time, j.submit_time) for j in built_in.jobs]
    for stack in ("pod", "gang"):
        f = gk.simulate("two-gangs-deadlock", stack=stack).summary()
        assert lesson01.explore_deadlock(stack=stack) == {k: f[k] for k in lesson01.DEADLOCK_COLUMNS}


def test_deadlock_scenario_refuses_an_unknown_arrival():
    with pytest.raises(ValueError, match="arrival"):
        lesson01.deadlock_scenario(arrival="random")


def test_compare_stacks_has_one_row_per_stack():
    table = lesson01.compare_stacks(nodes=4, jobs=2, workers=4)
    assert list(table.index) == ["pod", "gang"]
    assert table.index.name == "stack"
    assert list(table.columns) == lesson01.DEADLOCK_COLUMNS
    assert list(table["deadlock"]) == [True, False]


# ---------------------------------------------------------------------- compare_orderings
def test_compare_orderings_matches_the_simulator():
    table = lesson02.compare_orderings(seed=1, load=0.9, n_jobs=120, n_nodes=16)
    assert list(table.index) == ["skip", "strict"]
    assert list(table.columns) == lesson02.ORDERING_COLUMNS
    stream = gk.scenarios.mixed(n_jobs=120, n_nodes=16, load=0.9, seed=1)
    for ordering in ("skip", "strict"):
        r = gk.simulate(stream, stack="gang", ordering=ordering)
        f = r.summary()
        row = table.loc[ordering]
        assert row["mean_wait_s"] == f["mean_wait_s"]
        assert row["p95_wait_s"] == f["p95_wait_s"]
        assert row["jobs_finished"] == f["jobs_finished"]
        biggest = r.jobs.loc[r.jobs["gpus"] == r.jobs["gpus"].max(), "wait_s"].mean()
        assert row["mean_wait_largest_s"] == pytest.approx(biggest, abs=1e-3)


def test_compare_orderings_under_gang_never_holds_gpus_idle():
    table = lesson02.compare_orderings(seed=0, load=1.2, n_jobs=120, n_nodes=16)
    assert list(table["held_idle_gpu_seconds"]) == [0.0, 0.0]


# ------------------------------------------------------------------------------- the widgets
def _png(explorer) -> str:
    return explorer.output.outputs[1]["data"]["image/png"]


def test_deadlock_explorer_builds_quietly_and_shows_table_and_figure(capsys):
    ex = lesson01.deadlock_explorer()
    out = capsys.readouterr()
    assert out.out == "" and out.err == ""
    assert ex.updates == 1
    pd.testing.assert_frame_equal(ex.table, lesson01.compare_stacks())
    table_item, figure_item = ex.output.outputs
    assert "<table" in table_item["data"]["text/html"]
    assert figure_item["data"]["text/plain"] == "<Figure size 850x560 with 2 Axes>"
    assert ex.values == dict(nodes=4, gpus_per_node=1, jobs=2, workers=4, gpus_per_worker=1, arrival="interleaved")


@pytest.mark.parametrize(
    "case, control, value, pod_deadlock",
    [
        ("seven nodes end the deadlock", "nodes", 7, False),
        ("one job alone does not deadlock", "jobs", 1, False),
        ("jobs one after another do not deadlock", "arrival", "one after another", False),
        ("three workers per job on four nodes still deadlock", "workers", 3, True),
    ],
)
def test_deadlock_explorer_follows_its_controls(case, control, value, pod_deadlock):
    ex = lesson01.deadlock_explorer()
    before = _png(ex)
    ex.controls[control].value = value
    assert ex.updates == 2
    assert ex.values[control] == value
    assert bool(ex.table.loc["pod", "deadlock"]) is pod_deadlock
    assert bool(ex.table.loc["gang", "deadlock"]) is False
    pd.testing.assert_frame_equal(ex.table, lesson01.compare_stacks(**ex.values))
    assert _png(ex) != before


def test_deadlock_explorer_text_fallback_is_short_and_stable():
    ex = lesson01.deadlock_explorer()
    text = ex._repr_mimebundle_()["text/plain"]
    assert text == "Deadlock explorer (run this cell to use it)"


def test_gang_explorer_follows_its_controls(capsys):
    ex = lesson02.gang_explorer(n_jobs=80, n_nodes=8)
    out = capsys.readouterr()
    assert out.out == "" and out.err == ""
    pd.testing.assert_frame_equal(ex.table, lesson02.compare_orderings(seed=0, load=0.9, n_jobs=80, n_nodes=8))
    first_table, first_png = ex.table, _png(ex)

    ex.controls["ordering"].value = "strict"  # only the GPU-state picture changes
    pd.testing.assert_frame_equal(ex.table, first_table)
    assert _png(ex) != first_png

    ex.controls["seed"].value = 3
    pd.testing.assert_frame_equal(ex.table, lesson02.compare_orderings(seed=3, load=0.9, n_jobs=80, n_nodes=8))
    assert not ex.table.equals(first_table)
    assert ex.updates == 3
    assert ex._repr_mimebundle_()["text/plain"] == "Gang ordering explorer (run this cell to use it)"


def test_rendering_functions_return_a_table_and_a_figure_outside_pyplot():
    import matplotlib.pyplot as plt

    before = plt.get_fignums()
    table, fig = lesson01.render_deadlock(nodes=5)
    assert list(table.index) == ["pod", "gang"] and len(fig.axes) == 2
    table, fig = lesson02.render_orderings(ordering="strict", seed=2, n_jobs=60, n_nodes=8)
    assert list(table.index) == ["skip", "strict"] and len(fig.axes) == 2
    assert plt.get_fignums() == before  # nothing left for the notebook to show twice


def test_gang_explorer_load_slider_matches_compare_orderings():
    ex = lesson02.gang_explorer(n_jobs=80, n_nodes=8)
    ex.controls["load"].value = 1.2
    pd.testing.assert_frame_equal(ex.table, lesson02.compare_orderings(seed=0, load=1.2, n_jobs=80, n_nodes=8))


def test_an_experiment_that_fails_shows_its_message_instead_of_raising():
    import ipywidgets as W

    def render(n):
        if n > 1:
            raise gk.ScenarioError([gk.Problem("Scenario x", "n", f"expected at most 1, got {n}")])
        return lesson01.render_deadlock(jobs=1)

    ex = Explorer("Test", "a note", {"n": W.IntSlider(value=1, min=1, max=3)}, render)
    assert ex.table is not None
    ex.controls["n"].value = 2
    assert ex.table is None
    (item,) = ex.output.outputs
    assert item["data"]["text/plain"].startswith("cannot run these settings: ")
    assert "expected at most 1, got 2" in item["data"]["text/plain"]
