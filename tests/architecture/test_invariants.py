"""Invariants of every run: small random scenarios through every stack, checked against the books a cluster keeps.

Hypothesis draws a few nodes (1, 2, 4 or 8 GPUs) and a few jobs (1 to 3 pods of 1, 2 or 4 GPUs,
run times, submit times, two priorities, two queues, a gang smaller than the job or not, sync or
independent progress, YuniKorn's Soft or Hard style, preemption on or off) and runs each draw
through every stack of :data:`gangkit.STACKS`. Whatever the stack, the run must show:

- **one terminal state per job**: one row per job in the jobs table, in a state a run can end in,
  with a finish time exactly when it finished;
- **no over-allocation**: at no instant does a node hold more GPUs than it has (the pods table's
  bind and release times, releases first at an instant);
- **no partial gang under a gang layer**: a job starts with at least its gang size of pods bound
  (Volcano's gang plugin, Coscheduling's and the GangScheduling plugin's Permit, YuniKorn's
  placeholders). Two documented rules place pods one by one instead, and are left out: a job with
  ``progress: independent`` under the holding schedulers (their modules say so), and YuniKorn's
  ``Soft`` style once its placeholders timed out (YuniKorn's "Gang scheduling styles");
- **the GPU-seconds identity**: useful + held idle + free + not ready = capacity, no term negative,
  at every instant of the timeline and in the totals, so allocated utilization is at most 1;
- **the nodes table agrees with the timeline**: at the end of the run the nodes not removed hold the
  timeline's last capacity, and those of them not ready its last not-ready GPUs (a node a supplier
  gave up is removed, not booting);
- **no unattributed wait**: every second of every wait is charged to a layer;
- **the same tables in another process**: two interpreters with other string-hash seeds
  (``PYTHONHASHSEED``) produce the same tables for a few scenarios on every stack.

The draws are derandomized (the same on every run) and few: the whole module runs in about
20 seconds on one core. What larger searches of the same draws found is kept as named cases
(:data:`FOUND`), each failing before its fix.
"""

from __future__ import annotations

import hashlib
import io
import math
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gangkit as gk
from gangkit import Job, Node, PodSet
from gangkit.model.scenario import DAY, RunSettings
from gangkit.supply.autoscaler import ClusterAutoscaler, default_autoscaler
from gangkit.supply.cloud import Stages

from paths import REPO, TESTS

GANG_LAYERS = {"gang", "coscheduling", "yunikorn", "kube-gang"}
POD_BY_POD_WHEN_INDEPENDENT = {"coscheduling", "yunikorn", "kube-gang"}  # Volcano's gang holds independent jobs too
TERMINAL = {"Finished", "Rejected", "Deactivated", "Failed", "Deadlocked", "RunningAtEnd", "WaitingAtEnd"}
GPU_TERMS = ("useful_gpu_seconds", "held_idle_gpu_seconds", "free_gpu_seconds", "not_ready_gpu_seconds")
TIMELINE_TERMS = ["useful_gpus", "held_idle_gpus", "free_gpus", "not_ready_gpus"]


@st.composite
def small_scenarios(draw) -> gk.Scenario:
    node_gpus = draw(st.lists(st.sampled_from([1, 2, 4, 8]), min_size=1, max_size=3))
    jobs = []
    for i in range(draw(st.integers(1, 4))):
        pods = draw(st.integers(1, 3))
        jobs.append(Job(
            f"j{i}", [PodSet("workers", pods, draw(st.sampled_from([1, 2, 4])))],
            run_time=draw(st.integers(1, 2000)), submit_time=draw(st.sampled_from([0, 0, 1, 60, 300, 1000])),
            priority=draw(st.sampled_from([0, 100])), queue=draw(st.sampled_from(["team-a", "team-b"])),
            min_member=draw(st.none() | st.integers(1, pods)), progress=draw(st.sampled_from(["sync", "independent"])),
            gang_style=draw(st.sampled_from([None, "Hard"]))))
    settings_ = RunSettings(preemption=draw(st.booleans()), horizon=DAY)
    return gk.Scenario([Node(f"node-{i}", g) for i, g in enumerate(node_gpus)], jobs, settings_, name="drawn")


# --- the invariants: each returns what is wrong (nothing when the run keeps it) ------------------------------


def terminal_states(sc: gk.Scenario, r: gk.Result) -> list[str]:
    jobs = r.jobs
    out = []
    if sorted(jobs.job) != sorted(j.key for j in sc.jobs):
        out.append(f"jobs table rows {sorted(jobs.job)}, expected one per job {sorted(j.key for j in sc.jobs)}")
    for row in jobs.itertuples():
        if row.state not in TERMINAL:
            out.append(f"{row.job}: state {row.state!r} is no state a run ends in")
        if (row.state == "Finished") == math.isnan(row.finish_s):
            out.append(f"{row.job}: state {row.state} with finish_s {row.finish_s}")
    return out


def over_allocation(r: gk.Result) -> list[str]:
    gpus = r.nodes.groupby("node").gpus.max().to_dict()
    bound = r.pods[r.pods.node.notna() & r.pods.bound_s.notna()]
    out = []
    for node, pods in bound.groupby("node"):
        changes = sorted([(p.bound_s, 1, p.gpus) for p in pods.itertuples()]
                         + [(p.released_s, 0, -p.gpus) for p in pods.itertuples() if not math.isnan(p.released_s)])
        held = 0
        for t, _, delta in changes:
            held += delta
            if held > gpus.get(node, 0):
                out.append(f"node {node} holds {held} GPUs of {gpus.get(node, 0)} at t={t}")
                break
    return out


def partial_gangs(sc: gk.Scenario, stack: str, r: gk.Result) -> list[str]:
    layers = set(stack.split("+"))
    if not layers & GANG_LAYERS:
        return []
    spec = {j.key: j for j in sc.jobs}
    size = r.jobs.set_index("job").gang_size.to_dict()
    ev, pods = r.events, r.pods
    out = []
    for e in ev[ev.event == "job_started"].itertuples():
        j = spec[e.job]
        if j.progress == "independent" and layers & POD_BY_POD_WHEN_INDEPENDENT:
            continue
        soft_fallback = "yunikorn" in layers and j.gang_style != "Hard" and (
            (ev.job == e.job) & (ev.event == "released") & (ev.time_s <= e.time_s)).any()
        if soft_fallback:
            continue
        mine = pods[(pods.job == e.job) & (pods.bound_s <= e.time_s) & ~(pods.released_s <= e.time_s)]
        if len(mine) < size[e.job]:
            out.append(f"{e.job} started at t={e.time_s} with {len(mine)} pods bound of its gang of {size[e.job]}")
    return out


def gpu_seconds_identity(r: gk.Result) -> list[str]:
    f = r.figures
    terms = {k: f[k] for k in GPU_TERMS}
    out = [f"{k} is negative: {v}" for k, v in terms.items() if v < 0]
    if not math.isclose(sum(terms.values()), f["capacity_gpu_seconds"], rel_tol=1e-9, abs_tol=1e-2):
        out.append(f"{terms} add up to {sum(terms.values())}, not capacity_gpu_seconds {f['capacity_gpu_seconds']}")
    if f["allocated_utilization"] > 1:
        out.append(f"allocated_utilization {f['allocated_utilization']} > 1")
    tl = r.timeline
    negative = tl[(tl[TIMELINE_TERMS] < 0).any(axis=1)]
    if len(negative):
        out.append(f"timeline terms negative at t={negative.time_s.iloc[0]}: {negative[TIMELINE_TERMS].iloc[0].tolist()}")
    unequal = tl[tl[TIMELINE_TERMS].sum(axis=1) != tl.capacity_gpus]
    if len(unequal):
        out.append(f"timeline terms do not add up to capacity_gpus at t={unequal.time_s.iloc[0]}")
    return out


def nodes_agree_with_timeline(r: gk.Result) -> list[str]:
    nodes, last = r.nodes, r.timeline.iloc[-1]
    here = nodes[nodes.removed_s.isna()]
    out = []
    if here.gpus.sum() != last.capacity_gpus:
        out.append(f"nodes not removed hold {here.gpus.sum()} GPUs; the timeline ends with capacity {last.capacity_gpus}")
    if here[~here.ready].gpus.sum() != last.not_ready_gpus:
        out.append(f"nodes not removed and not ready hold {here[~here.ready].gpus.sum()} GPUs; the timeline ends with "
                   f"{last.not_ready_gpus} not ready")
    if (nodes.removed_s.notna() & nodes.ready).any():
        out.append(f"removed nodes marked ready: {nodes[nodes.removed_s.notna() & nodes.ready].node.tolist()}")
    return out


def unattributed_waits(r: gk.Result) -> list[str]:
    jobs = r.jobs[r.jobs.state != "Rejected"]
    return [f"{row.job}: {row.wait_unattributed_s} s of wait charged to no layer"
            for row in jobs.itertuples() if abs(row.wait_unattributed_s) > 1e-6]


def violations(sc: gk.Scenario, stack: str) -> list[str]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = gk.simulate(sc, stack=stack)
    return (terminal_states(sc, r) + over_allocation(r) + partial_gangs(sc, stack, r) + gpu_seconds_identity(r)
            + nodes_agree_with_timeline(r) + unattributed_waits(r))


@pytest.mark.parametrize("stack", gk.STACKS)
@settings(max_examples=12, derandomize=True, database=None, deadline=None, suppress_health_check=list(HealthCheck))
@given(sc=small_scenarios())
def test_every_stack_keeps_the_invariants_on_small_random_scenarios(stack, sc):
    found = violations(sc, stack)
    assert not found, "\n".join(found)


AUTOSCALER_STACKS = [s for s in gk.STACKS if s.endswith("+autoscaler")]


@pytest.mark.parametrize("stack", AUTOSCALER_STACKS)
@settings(max_examples=12, derandomize=True, database=None, deadline=None, suppress_health_check=list(HealthCheck))
@given(sc=small_scenarios(), provision=st.sampled_from([10.0, 60.0, 100.0, 900.0]),
       registered=st.sampled_from([30.0, 60.0, 120.0]), scan=st.sampled_from([10.0, 25.0]))
def test_the_autoscaler_stacks_keep_the_invariants_when_nodes_outlast_max_node_provision_time(
        stack, sc, provision, registered, scan):
    """cluster-autoscaler's max-node-provision-time shorter than a node's registration or its start: nodes
    that registered in time keep booting, the others are deleted; the books agree either way."""
    groups = default_autoscaler(sc).node_groups
    sc.autoscaler = ClusterAutoscaler(groups, max_node_provision_time=provision, scan_interval=scan,
                                      stages=Stages(registered=registered, initialized=90.0))
    found = violations(sc, stack)
    assert not found, "\n".join(found)


# What the random scenarios found, kept as named cases (each broke an invariant before its fix).
def _hard_gang_under_kueue() -> gk.Scenario:
    """A gang of two 4-GPU pods on nodes of 4, 2 and 2 GPUs: YuniKorn's Hard style fails it after 900 s; a
    2-GPU job waits for Kueue's quota (8 GPUs) meanwhile, and a third job keeps the run going."""
    jobs = [Job("gang", [PodSet("workers", 2, 4)], run_time=300, gang_style="Hard"),
            Job("small", [PodSet("workers", 1, 2)], run_time=5000),
            Job("later", [PodSet("workers", 1, 2)], run_time=60, submit_time=6000)]
    return gk.Scenario([Node("node-0", 4), Node("node-1", 2), Node("node-2", 2)], jobs, RunSettings(horizon=DAY))


FOUND = [
    pytest.param(_hard_gang_under_kueue, "kueue+yunikorn", id="a gang YuniKorn fails (Hard) gives its Kueue quota back "
                 "at once and is never requeued by waitForPodsReady"),
]


@pytest.mark.parametrize("make, stack", FOUND)
def test_what_random_scenarios_found(make, stack):
    sc = make()
    assert violations(sc, stack) == []
    r = gk.simulate(sc, stack=stack)
    ev = r.events
    for job in r.jobs[r.jobs.state == "Deactivated"].job:
        mine = ev[ev.job == job]
        ended = mine[mine.event == "deactivated"].time_s.tolist()
        assert len(ended) == 1 and mine[mine.time_s > ended[0]].empty, mine.to_string()


# The checks themselves must be able to fail: each row is a run that breaks one invariant on purpose.
def _broken(r: gk.Result, **changes) -> gk.Result:
    import dataclasses

    return dataclasses.replace(r, **changes)


def _two_gangs(stack: str) -> gk.Result:
    return gk.simulate("two-gangs-deadlock", stack=stack)


BROKEN = [
    ("a job missing from the jobs table", lambda sc, r: terminal_states(sc, _broken(r, jobs=r.jobs.iloc[1:]))),
    ("a node holding a pod more than it has", lambda sc, r: over_allocation(_broken(
        r, pods=r.pods.assign(node=r.nodes.node.iloc[0])))),
    ("a gang started with half its pods", lambda sc, r: partial_gangs(sc, "gang", _broken(r, pods=r.pods.iloc[::2]))),
    ("a negative GPU-seconds term", lambda sc, r: gpu_seconds_identity(_broken(
        r, figures={**r.figures, "free_gpu_seconds": -1.0}))),
    ("a node removed in the nodes table that the timeline still counts", lambda sc, r: nodes_agree_with_timeline(
        _broken(r, nodes=r.nodes.assign(removed_s=[5.0] + [math.nan] * (len(r.nodes) - 1))))),
    ("a node booting in the nodes table that the timeline counts ready", lambda sc, r: nodes_agree_with_timeline(
        _broken(r, nodes=r.nodes.assign(ready=[False] + [True] * (len(r.nodes) - 1))))),
    ("a wait charged to no layer", lambda sc, r: unattributed_waits(_broken(
        r, jobs=r.jobs.assign(wait_unattributed_s=5.0)))),
]


@pytest.mark.parametrize("name, broken", BROKEN, ids=[b[0] for b in BROKEN])
def test_each_check_finds_the_fault_it_looks_for(name, broken):
    r = _two_gangs("gang")
    sc = r.scenario
    assert violations(sc, "gang") == []
    assert broken(sc, r), f"the check did not notice {name}"


# --- the same tables in other processes, with other string-hash seeds -----------------------------------------

#: A few scenarios for the two interpreters (named so that a child process builds the same ones).
DETERMINISM = {
    "two-gangs-deadlock, one day": lambda: gk.scenarios.two_gangs_deadlock(horizon=DAY),
    "mixed, 30 jobs on 3 nodes, preemption": lambda: gk.scenarios.mixed(n_jobs=30, n_nodes=3, seed=5, preemption=True,
                                                                       horizon=DAY),
}
TABLES = ("jobs", "pods", "events", "timeline", "nodes")


def fingerprints() -> list[str]:
    """One hash per (scenario, stack): the figures and every table, as CSV."""
    out = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, make in DETERMINISM.items():
            for stack in gk.STACKS:
                r = gk.simulate(make(), stack=stack)
                h = hashlib.sha256(repr(sorted(r.figures.items())).encode())
                for table in TABLES:
                    buf = io.StringIO()
                    getattr(r, table).to_csv(buf, index=False)
                    h.update(buf.getvalue().encode())
                out.append(f"{name}|{stack}|{h.hexdigest()}")
    return out


# the child finds the library, the tests' shared modules and this module wherever this file sits under tests/
CHILD = """
import sys
sys.path[:0] = [{root!r}, {tests!r}, {here!r}]
from test_invariants import fingerprints
print("\\n".join(fingerprints()))
"""


def test_the_same_tables_in_processes_with_other_hash_seeds():
    """This process and a fresh interpreter whose string-hash seed differs from this one's make the same tables."""
    seed = "1" if os.environ.get("PYTHONHASHSEED") == "4242" else "4242"
    child = CHILD.format(root=str(REPO), tests=str(TESTS), here=str(Path(__file__).resolve().parent))
    done = subprocess.run([sys.executable, "-c", child], env=dict(os.environ, PYTHONHASHSEED=seed),
                          capture_output=True, text=True, cwd=REPO, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    here, there = fingerprints(), done.stdout.splitlines()
    assert len(here) == len(there) == len(DETERMINISM) * len(gk.STACKS)
    differ = [a.rsplit("|", 1)[0] for a, b in zip(here, there) if a != b]
    assert not differ, f"{len(differ)} run(s) differ between hash seeds, first: {differ[0]}"
