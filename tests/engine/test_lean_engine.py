"""The lean engine for one-pod gang runs (gangkit.engine.lean) against the general engine.

Both engines must give the same Result, table by table and figure by
figure, to the last bit: the lean one is only allowed to be faster.
"""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gangkit import Scenario, nodes, simulate
from gangkit.engine import lean
from gangkit.engine.lean import sizes as lean_shapes
from gangkit.model.jobs import Job, PodSet, job
from gangkit.stacks import build_stack
from gangkit.volcano.scheduler import ARRIVAL_ORDERINGS
from gangkit.workloads.generators import mm_c

from conftest import assert_same_result


def general(scenario, **kw):
    """The run through the general engine (the lean one switched off by the run setting)."""
    return simulate(scenario, engine="general", **kw)


def assert_same(a, b) -> None:
    assert_same_result(a, b, metrics=False)


def qualifies(sc: Scenario) -> bool:
    return lean.applies(sc, build_stack(sc.settings.stack, sc.settings, sc))


@st.composite
def one_pod_runs(draw):
    g = draw(st.sampled_from([1, 2, 4]))
    node_gpus = draw(st.lists(st.sampled_from([g, 2 * g, 4 * g, 8]), min_size=1, max_size=4))
    node_gpus = [x for x in node_gpus if x % g == 0] or [g]
    n = draw(st.integers(1, 60))
    whole = draw(st.booleans())  # whole-second times: many ties between arrivals, finishes and sessions
    times = st.integers(0, 50).map(float) if whole else st.floats(0, 50, allow_nan=False)
    runs = st.integers(1, 40).map(float) if whole else st.floats(0.01, 40, allow_nan=False)
    jobs = [job(f"j{k}", gpus=g, run_time=draw(runs), submit_time=draw(times),
                progress=draw(st.sampled_from(["sync", "independent"]))) for k in range(n)]
    cluster = [dataclasses.replace(nd, name=f"n{i}") for i, x in enumerate(node_gpus) for nd in nodes(1, gpus=x)]
    sc = Scenario(cluster, jobs).with_settings(
        stack="gang", ordering=draw(st.sampled_from(ARRIVAL_ORDERINGS)),
        session_period=draw(st.sampled_from([0.0, 0.5, 1.0, 2.5])),
        record=draw(st.sampled_from(["summary", "jobs"])),
        horizon=draw(st.sampled_from([1e9, 20.0, 45.5])), preemption=draw(st.booleans()))
    return sc


@settings(max_examples=80, deadline=None, derandomize=True, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(one_pod_runs())
def test_lean_engine_equals_general_engine(sc):
    assert qualifies(sc)
    assert_same(simulate(sc), general(sc))


@pytest.mark.parametrize("c,load,period,record", [
    (8, 0.9, 0.0, "jobs"), (8, 0.9, 1.0, "summary"), (64, 0.9, 1.0, "jobs"), (16, 1.3, 1.0, "summary"),
])
def test_mmc_streams_equal(c, load, period, record):
    """Thousands of M/M/c jobs (the queueing-theory tests' kind), with and without a horizon cut."""
    stream = mm_c(rate=load * c / 100.0, mean_run_time_s=100.0, n_jobs=3000, seed=3)
    for horizon in (1e15, 2000.0):
        sc = stream.scenario(nodes(max(1, c // 8), gpus=min(c, 8)), stack="gang", session_period=period,
                             record=record, horizon=horizon)
        assert qualifies(sc)
        assert_same(simulate(sc), general(sc))


def _two_pods():
    return [Job("x", [PodSet(count=2, gpus=1)], run_time=10.0)]


def _setting(**kw):
    return lambda sc: sc.with_settings(**kw)


# (case, change to a qualifying scenario) -> the lean engine must not be used
NOT_LEAN = [
    ("pod stack", _setting(stack="pod")),
    ("kueue in front", _setting(stack="kueue+gang")),
    ("full recording", _setting(record="full")),
    ("backfill ordering", _setting(ordering="easy-backfill")),
    ("a two-pod job", lambda sc: dataclasses.replace(sc, jobs=sc.jobs + _two_pods())),
    ("another GPU count", lambda sc: dataclasses.replace(sc, jobs=sc.jobs + [job("y", gpus=2, run_time=5.0)])),
    ("another priority", lambda sc: dataclasses.replace(sc, jobs=sc.jobs + [job("y", priority=5, run_time=5.0)])),
    ("a Volcano Job", lambda sc: dataclasses.replace(sc, jobs=sc.jobs + [job("y", run_time=5.0, controller="volcano")])),
    ("a CPU request", lambda sc: dataclasses.replace(sc, jobs=sc.jobs + [Job("y", [PodSet(cpu=1.0)], run_time=5.0)])),
    ("nodes not a multiple", lambda sc: dataclasses.replace(sc, jobs=[job(j.name, gpus=3, run_time=5.0) for j in sc.jobs])),
]


@pytest.mark.parametrize("case,change", NOT_LEAN, ids=[c for c, _ in NOT_LEAN])
def test_lean_engine_only_where_its_rules_hold(case, change):
    base = Scenario(nodes(2, gpus=8), [job(f"j{k}", run_time=10.0 + k) for k in range(5)]).with_settings(stack="gang", record="summary")
    assert qualifies(base)
    sc = change(base)
    assert not qualifies(sc), case
    assert_same(simulate(sc), general(sc))  # and the general engine runs it, of course


@pytest.mark.parametrize("case, sc, states", [
    ("jobs still waiting or running at the horizon",
     mm_c(rate=0.2, mean_run_time_s=100.0, n_jobs=200, seed=1).scenario(nodes(1, gpus=8), stack="gang", record="jobs",
                                                                         horizon=300.0),
     {"Finished", "RunningAtEnd", "WaitingAtEnd"}),
    ("a job submitted after the horizon (nothing else in the system)",
     Scenario(nodes(1, gpus=1), [job("j0", run_time=1.0, submit_time=21.0)]).with_settings(stack="gang", record="jobs",
                                                                                           horizon=20.0),
     {"WaitingAtEnd"}),
])
def test_jobs_level_cut_by_the_horizon_falls_back(case, sc, states):
    """Rows of jobs still in the system or never submitted need the general engine's states and reasons."""
    assert qualifies(sc)
    sim = lean.OnePodGangRun(sc, build_stack("gang", sc.settings, sc))
    sim.run()
    assert sim.needs_general_engine
    r = simulate(sc)
    assert set(r.jobs["state"]) == states
    assert_same(r, general(sc))


def test_arrival_resumes_after_a_rounded_timeout():
    """0.154... + (0.85 - 0.154...) is 0.8499999999999999: SimPy's arrivals process wakes up then and
    submits the batch of 0.85 at once (it does not wait again); the timeline shows that instant."""
    jobs = [job(f"j{k}", run_time=1.0) for k in range(12)]
    jobs[0] = job("j0", run_time=1.0, submit_time=0.1543631227619025)
    jobs[9] = job("j9", run_time=1.0, submit_time=0.85)
    sc = Scenario(nodes(1, gpus=1), jobs).with_settings(stack="gang", record="jobs", session_period=0.0)
    a = simulate(sc)
    assert 0.8499999999999999 in set(a.timeline["time_s"])
    assert_same(a, general(sc))


# ---------------------------------------------------------------- one-pod jobs of several shapes (lean_shapes)
def qualifies_shapes(sc: Scenario) -> bool:
    stack = build_stack(sc.settings.stack, sc.settings, sc)
    return not lean.applies(sc, stack) and lean_shapes.applies(sc, stack)


@st.composite
def one_pod_shape_runs(draw):
    """Pods of two or three sizes on nodes whose sizes need not be multiples of them: where a pod
    lands decides whether a bigger one fits later (fragmentation)."""
    sizes = draw(st.lists(st.sampled_from([1, 2, 3, 4, 8]), min_size=2, max_size=3, unique=True))
    node_gpus = draw(st.lists(st.sampled_from([2, 4, 6, 8]), min_size=1, max_size=4))
    node_gpus.append(max(max(sizes), max(node_gpus)))  # every pod fits on some node
    n = draw(st.integers(2, 60))
    whole = draw(st.booleans())  # whole-second times: many ties between arrivals, finishes and sessions
    times = st.integers(0, 50).map(float) if whole else st.floats(0, 50, allow_nan=False)
    runs = st.integers(1, 40).map(float) if whole else st.floats(0.01, 40, allow_nan=False)
    jobs = [job(f"j{k}", gpus=sizes[k % len(sizes)] if k < len(sizes) else draw(st.sampled_from(sizes)),
                run_time=draw(runs), submit_time=draw(times), progress=draw(st.sampled_from(["sync", "independent"])))
            for k in range(n)]
    cluster = [dataclasses.replace(nd, name=f"n{i}") for i, x in enumerate(node_gpus) for nd in nodes(1, gpus=x)]
    return Scenario(cluster, jobs).with_settings(
        stack="gang", ordering=draw(st.sampled_from(ARRIVAL_ORDERINGS)),
        scoring=draw(st.sampled_from(["LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"])),
        session_period=draw(st.sampled_from([0.0, 0.5, 1.0, 2.5])),
        record=draw(st.sampled_from(["summary", "jobs"])),
        horizon=draw(st.sampled_from([1e9, 20.0, 45.5])), preemption=draw(st.booleans()))


@settings(max_examples=150, deadline=None, derandomize=True, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(one_pod_shape_runs())
def test_lean_shapes_engine_equals_general_engine(sc):
    assert qualifies_shapes(sc)
    assert_same(simulate(sc), general(sc))


@pytest.mark.parametrize("ordering", ARRIVAL_ORDERINGS)
@pytest.mark.parametrize("scoring", ["LeastAllocated", "MostAllocated"])
def test_lesson04_mix_equal(ordering, scoring):
    """Lesson 04's mix (one-GPU jobs and whole-node jobs of one 8-GPU pod, benchmark case f) at a high load."""
    from gangkit.lessons.lesson04 import mix

    for record, horizon in (("jobs", 1e15), ("summary", 20000.0)):
        sc = mix(0.9, n_jobs=1500, seed=2).with_settings(stack="gang", ordering=ordering, scoring=scoring,
                                                         record=record, horizon=horizon)
        assert qualifies_shapes(sc)
        assert_same(simulate(sc), general(sc))


# (case, change to a qualifying two-shape scenario) -> neither lean engine may be used
NOT_LEAN_SHAPES = [
    ("pod stack", _setting(stack="pod")),
    ("kueue in front", _setting(stack="kueue+gang")),
    ("full recording", _setting(record="full")),
    ("backfill ordering", _setting(ordering="conservative-backfill")),
    ("a two-pod job", lambda sc: dataclasses.replace(sc, jobs=sc.jobs + _two_pods())),
    ("another priority", lambda sc: dataclasses.replace(sc, jobs=sc.jobs + [job("y", priority=5, run_time=5.0)])),
    ("a CPU request", lambda sc: dataclasses.replace(sc, jobs=sc.jobs + [Job("y", [PodSet(cpu=1.0)], run_time=5.0)])),
    ("a node selector", lambda sc: dataclasses.replace(sc, jobs=sc.jobs + [Job("y", [PodSet(node_selector={"a": "b"})], run_time=5.0)])),
    ("a pod bigger than every node", lambda sc: dataclasses.replace(sc, jobs=sc.jobs + [job("y", gpus=16, run_time=5.0)])),
]


@pytest.mark.parametrize("case,change", NOT_LEAN_SHAPES, ids=[c for c, _ in NOT_LEAN_SHAPES])
def test_lean_shapes_engine_only_where_its_rules_hold(case, change):
    base = Scenario(nodes(2, gpus=8), [job(f"j{k}", gpus=1 + k % 2 * 3, run_time=10.0 + k) for k in range(5)]).with_settings(
        stack="gang", record="summary")
    assert qualifies_shapes(base)
    sc = change(base)
    stack = build_stack(sc.settings.stack, sc.settings, sc)
    assert not lean.applies(sc, stack) and not lean_shapes.applies(sc, stack), case
    assert_same(simulate(sc), general(sc))
