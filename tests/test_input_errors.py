"""Bad input gets one clear error naming the object, the field and what was expected."""

from __future__ import annotations

import pytest

import gangkit as gk
from gangkit import Job, Node, PodSet, job, nodes

CASES = [
    ("negative run time", [job("a", run_time=-5)], nodes(1), "Job a: run_time: expected a run time > 0 seconds, got -5"),
    ("zero pods", [Job("a", [PodSet("w", 0, 1)], 10)], nodes(1), "Job a: pod_sets[0].count: expected a whole number >= 1, got 0"),
    ("fractional GPUs", [Job("a", [PodSet("w", 1, 0.5)], 10)], nodes(1), "Job a: pod_sets[0].gpus: expected a whole number of GPUs >= 0, got 0.5"),
    ("negative submit time", [job("a", submit_time=-1)], nodes(1), "Job a: submit_time: expected a submit time >= 0 seconds"),
    ("unknown progress mode", [job("a", progress="async")], nodes(1), "Job a: progress: expected one of sync, independent, got 'async'"),
    ("minMember above the pod count", [job("a", pods=2, min_member=3)], nodes(1), "Job a: min_member: expected a whole number from 1 to 2, got 3"),
    ("duplicate job names", [job("a"), job("a")], nodes(1), "Job a: name: expected a unique name"),
    ("no nodes", [job("a")], [], "Scenario scenario: nodes: expected at least one Node"),
    ("negative node GPUs", [job("a")], [Node("n", -1)], "Node n: gpus: expected a whole number of GPUs >= 0, got -1"),
    ("duplicate node names", [job("a")], [Node("n", 1), Node("n", 1)], "Node n: metadata.name: expected a unique name"),
    ("no pod sets", [Job("a", [], 10)], nodes(1), "Job a: pod_sets: expected at least one pod set"),
]


@pytest.mark.parametrize("jobs, node_list, message", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input_is_named(jobs, node_list, message):
    with pytest.raises(gk.ScenarioError) as err:
        gk.simulate(gk.Scenario(node_list, jobs), stack="pod")
    assert message in str(err.value)


def test_every_problem_is_reported_at_once_one_line_each():
    sc = gk.Scenario([Node("n", -1)], [job("a", run_time=0), job("b", progress="later")])
    with pytest.raises(gk.ScenarioError) as err:
        gk.simulate(sc)
    lines = str(err.value).splitlines()
    assert len(lines) == len(err.value.problems) == 3
    assert [p.obj for p in err.value.problems] == ["Node n", "Job a", "Job b"]


SETTINGS = [
    ("ordering", dict(ordering="fifo"), "Simulation settings: ordering: expected one of skip, strict, easy-backfill, "
     "conservative-backfill, volcano-backfill, largest-first, got 'fifo'"),
    ("scoring", dict(scoring="Random"), "Simulation settings: scoring: expected one of LeastAllocated, MostAllocated"),
    ("horizon", dict(horizon=0), "Simulation settings: horizon: expected seconds > 0, got 0"),
    ("record", dict(record="all"), "Simulation settings: record: expected one of summary, jobs, full"),
    ("session period", dict(session_period=-1), "Simulation settings: session_period: expected seconds >= 0"),
]


@pytest.mark.parametrize("settings, message", [c[1:] for c in SETTINGS], ids=[c[0] for c in SETTINGS])
def test_bad_settings_are_named(settings, message):
    with pytest.raises(gk.ScenarioError) as err:
        gk.simulate("three-workers", **settings)
    assert message in str(err.value)


def test_unknown_builtin_scenario():
    with pytest.raises(gk.ScenarioError, match="unknown built-in scenario"):
        gk.simulate("four-workers")


@pytest.mark.parametrize("kwargs, field", [(dict(n_jobs=0), "n_jobs"), (dict(n_nodes=-1), "n_nodes"), (dict(load=0), "load")])
def test_bad_mixed_parameters(kwargs, field):
    with pytest.raises(gk.ScenarioError, match=f"Scenario mixed: {field}"):
        gk.scenarios.mixed(**kwargs)


def test_horizon_cut_is_not_a_deadlock():
    result = gk.simulate("three-workers", stack="gang", horizon=100)
    states = result.jobs.set_index("job").state.to_dict()
    assert states == {"Z": "RunningAtEnd", "X": "WaitingAtEnd", "Y": "RunningAtEnd"}
    assert not result.deadlock and result.summary()["makespan_s"] == 100


def test_summary_recording_keeps_the_figures_of_a_full_recording():
    sc = gk.scenarios.mixed(n_jobs=1500, n_nodes=64, seed=3)  # jobs wait: every figure has something to count
    full = gk.simulate(sc, stack="gang").summary()
    assert full["mean_wait_s"] > 0
    light = gk.simulate(sc, stack="gang", record="summary")
    assert light.summary() == full and light.events.empty and light.jobs.empty


ORDERING_SETTINGS = [
    ("ordering spelled with an underscore", dict(ordering="easy_backfill"),
     "Simulation settings: ordering: expected one of skip, strict, easy-backfill"),
    ("ordering in the wrong case", dict(ordering="Largest-First"), "got 'Largest-First'"),
    ("estimate factor below 1", dict(estimate_factor=0.5), "Simulation settings: estimate_factor: expected a number >= 1, got 0.5"),
    ("estimate factor zero", dict(estimate_factor=0), "Simulation settings: estimate_factor: expected a number >= 1, got 0"),
    ("estimate factor not a number", dict(estimate_factor="2"), "Simulation settings: estimate_factor: expected a number >= 1, got '2'"),
    ("estimate factor infinite", dict(estimate_factor=float("inf")), "estimate_factor: expected a number >= 1, got inf"),
    ("estimate factor NaN", dict(estimate_factor=float("nan")), "estimate_factor: expected a number >= 1, got nan"),
    ("estimate factor a boolean", dict(estimate_factor=True), "estimate_factor: expected a number >= 1, got True"),
]


@pytest.mark.parametrize("settings, message", [c[1:] for c in ORDERING_SETTINGS], ids=[c[0] for c in ORDERING_SETTINGS])
def test_bad_ordering_settings_are_named(settings, message):
    with pytest.raises(gk.ScenarioError) as err:
        gk.simulate("three-workers", stack="gang", **settings)
    assert message in str(err.value)


SIMULATION_MANIFESTS = [
    ("unknown ordering", dict(ordering="backfill"), "spec.ordering: expected one of skip, strict, easy-backfill"),
    ("estimateFactor below 1", dict(estimateFactor=0.9), "spec.estimateFactor: expected a number >= 1, got 0.9"),
    ("estimateFactor as text", dict(estimateFactor="3x"), "spec.estimateFactor: expected a number >= 1, got '3x'"),
]


@pytest.mark.parametrize("spec, message", [c[1:] for c in SIMULATION_MANIFESTS], ids=[c[0] for c in SIMULATION_MANIFESTS])
def test_bad_ordering_fields_in_a_simulation_manifest(spec, message):
    docs = [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}, "status": {"allocatable": {"nvidia.com/gpu": "8"}}},
            {"apiVersion": "gangkit/v1alpha1", "kind": "Simulation", "metadata": {"name": "s"}, "spec": spec}]
    with pytest.raises(gk.ScenarioError) as err:
        gk.load_manifests(docs)
    assert f"Simulation s: {message}" in str(err.value)


def test_estimate_factor_is_read_from_a_simulation_manifest_and_written_back():
    docs = [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}, "status": {"allocatable": {"nvidia.com/gpu": "8"}}},
            {"apiVersion": "gangkit/v1alpha1", "kind": "Simulation", "metadata": {"name": "s"},
             "spec": {"ordering": "easy-backfill", "estimateFactor": 2.5}}]
    sc = gk.load_manifests(docs)
    assert (sc.settings.ordering, sc.settings.estimate_factor) == ("easy-backfill", 2.5)
    again = gk.load_manifests(gk.dump_manifests(sc))
    assert (again.settings.ordering, again.settings.estimate_factor) == ("easy-backfill", 2.5)


@pytest.mark.parametrize("argv, message", [
    (["--ordering", "easy"], "invalid choice: 'easy'"),
    (["--estimate-factor", "0.5"], "Simulation settings: estimate_factor: expected a number >= 1, got 0.5"),
    (["--estimate-factor", "three"], "invalid float value: 'three'"),
])
def test_bad_ordering_options_on_the_command_line(capsys, argv, message):
    from gangkit.cli.main import main

    try:
        status = main(["run", "three-workers", "--stack", "gang", *argv])
    except SystemExit as exit_:
        status = exit_.code
    assert status == 2
    assert message in capsys.readouterr().err


# -- the quick screen for plain jobs must never let a bad job through -------------------------------
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from gangkit.model.jobs import _plainly_valid  # noqa: E402

_ODD = st.sampled_from([None, -1, 0, 1, 2, 1.5, -0.0, float("nan"), float("inf"), True, "x", ""])


@settings(max_examples=200, deadline=None)
@given(name=st.sampled_from(["a", "", None]), count=_ODD, gpus=_ODD, cpu=_ODD, memory=_ODD, run_time=_ODD,
       submit=_ODD, priority=_ODD, progress=st.sampled_from(["sync", "independent", "x"]),
       controller=st.sampled_from(["batch", "volcano", "x"]), vq=st.sampled_from(["default", "", 3]),
       extra=st.sampled_from([{}, {"min_member": 1}, {"max_run_time": 5.0}, {"gang_style": "Soft"}]))
def test_plain_screen_passes_only_valid_jobs(name, count, gpus, cpu, memory, run_time, submit, priority,
                                             progress, controller, vq, extra):
    j = Job(name, [PodSet(count=count, gpus=gpus, cpu=cpu, memory=memory)], run_time=run_time, submit_time=submit,
            priority=priority, progress=progress, controller=controller, volcano_queue=vq, **extra)
    if _plainly_valid(j):
        assert j.problems() == []


@pytest.mark.parametrize("j", [job("a", run_time=5.0), job("b", pods=3, gpus=8, run_time=60, submit_time=2)])
def test_plain_screen_passes_plain_jobs(j):
    assert _plainly_valid(j) and j.problems() == []
