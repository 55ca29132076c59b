"""Volcano beyond minMember: queues, enqueue, roles, preempt and reclaim, as tables of cases.

Each row is a sentence from Volcano's documented behaviour (the proportion,
overcommit and gang plugins; the enqueue, allocate, preempt and reclaim
actions), checked on a small cluster where the answer can be worked out by
hand. See docs/reference/volcano.md.
"""

from __future__ import annotations

import math

import pytest

import gangkit as gk
from gangkit import Job, PodSet, job, nodes
from gangkit.engine.simulation import Simulation
from gangkit.model.errors import ScenarioError
from gangkit.model.resources import Resources
from gangkit.results.result import build_result
from gangkit.stacks import build_stack
from gangkit.volcano.api import Queue, VolcanoSetup, job_min_resources
from gangkit.volcano.plugins.proportion import QueueAttr, proportion

from conftest import by_job, check_times, run_with_queues
from paths import REPO

NAN = math.nan


def gpus(n: float) -> Resources:
    return Resources(gpus=float(n))





def vcjob(name, pods=1, gpus_=1, **kw):
    """A Volcano Job (batch.volcano.sh): pods only once its PodGroup is Inqueue; minResources from its tasks."""
    return job(name, pods=pods, gpus=gpus_, controller="volcano", **kw)


def indep(name, pods, min_member=None, **kw):
    """A job whose pods progress on their own (a victim that can lose some pods and keep running)."""
    return job(name, pods=pods, progress="independent", min_member=min_member, **kw)


# --- the proportion plugin's deserved share ---------------------------------------

DESERVED = [
    # (id, total GPUs, [(name, weight, capability, guarantee, requested GPUs)], expected deserved GPUs)
    ("equal weights split a contended cluster in half",
     8, [("a", 1, None, 0, 8), ("b", 1, None, 0, 8)], {"a": 4, "b": 4}),
    ("weights 3:1 split it 6 and 2",
     8, [("a", 3, None, 0, 8), ("b", 1, None, 0, 8)], {"a": 6, "b": 2}),
    ("what a queue does not request goes to the others",
     8, [("a", 1, None, 0, 2), ("b", 1, None, 0, 8)], {"a": 2, "b": 6}),
    ("a capability caps the share and the rest flows on",
     8, [("a", 1, 3, 0, 8), ("b", 1, None, 0, 8)], {"a": 3, "b": 5}),
    ("a guarantee is kept for its queue whatever the weights",
     8, [("a", 1, None, 0, 8), ("b", 1, None, 6, 8)], {"a": 2, "b": 6}),
    ("nobody is given more than it asks for",
     8, [("a", 1, None, 0, 1), ("b", 1, None, 0, 2)], {"a": 1, "b": 2}),
    ("three queues with one capped share the rest by weight",
     12, [("a", 1, 2, 0, 12), ("b", 1, None, 0, 12), ("c", 2, None, 0, 12)], {"a": 2, "b": 10 / 3, "c": 20 / 3}),
]


@pytest.mark.parametrize("total, queues, expected", [c[1:] for c in DESERVED], ids=[c[0] for c in DESERVED])
def test_proportion_deserved_share(total, queues, expected):
    attrs = {}
    for name, weight, capability, guarantee, requested in queues:
        q = Queue(name, weight=weight, capability=None if capability is None else gpus(capability), guarantee=gpus(guarantee))
        attrs[name] = QueueAttr(q, request=gpus(requested))
    proportion(Resources(float(total), math.inf, math.inf), attrs)
    assert {n: a.deserved.gpus for n, a in attrs.items()} == pytest.approx(expected)


# --- the enqueue action ------------------------------------------------------------

ENQUEUE = [
    # (id, nodes, queues, jobs, settings, expected {job: (start, finish, state)}, {job: reason code})
    ("queue capability keeps the second PodGroup Pending until the first finishes",
     nodes(1, gpus=8), [Queue("small", capability=gpus(4))],
     [vcjob("A", pods=4, run_time=600, volcano_queue="small"), vcjob("B", pods=4, run_time=600, volcano_queue="small")],
     dict(), {"A": (1, 601, "Finished"), "B": (602, 1202, "Finished")}, {}),
    ("queue capability blocks enqueue though the node has room (reason named)",
     nodes(1, gpus=8), [Queue("small", capability=gpus(4))],
     [vcjob("A", pods=4, run_time=600, volcano_queue="small"), vcjob("B", pods=4, run_time=600, volcano_queue="small")],
     dict(horizon=300), {"A": (1, NAN, "RunningAtEnd"), "B": (NAN, NAN, "WaitingAtEnd")}, {"B": "QueueCapabilityExceeded"}),
    ("the capability of one queue does not hold back another",
     nodes(1, gpus=8), [Queue("small", capability=gpus(4)), Queue("other")],
     [vcjob("A", pods=4, run_time=600, volcano_queue="small"), vcjob("B", pods=4, run_time=600, volcano_queue="other")],
     dict(), {"A": (1, 601, "Finished"), "B": (1, 601, "Finished")}, {}),
    ("a job of the same queue within capability is enqueued beside the first",
     nodes(1, gpus=8), [Queue("small", capability=gpus(6))],
     [vcjob("A", pods=4, run_time=600, volcano_queue="small"), vcjob("B", pods=2, run_time=600, volcano_queue="small")],
     dict(), {"A": (1, 601, "Finished"), "B": (1, 601, "Finished")}, {}),
    ("overcommit 1.2: 4 GPUs promised on a 10-GPU cluster with 8 used (12 - 8 = 4): Inqueue, waits in allocate",
     nodes(1, gpus=10), [],
     [job("fill", pods=8, run_time=1000), vcjob("X", pods=4, run_time=100, submit_time=5)],
     dict(horizon=500), {"X": (NAN, NAN, "WaitingAtEnd")}, {"X": "GangCannotFit"}),
    ("overcommit 1.2: 4 GPUs are not promised on a 4-GPU cluster that is full (4.8 - 4 = 0.8)",
     nodes(1, gpus=4), [],
     [job("fill", pods=4, run_time=1000), vcjob("X", pods=4, run_time=100, submit_time=5)],
     dict(horizon=500), {"X": (NAN, NAN, "WaitingAtEnd")}, {"X": "ClusterOverused"}),
    ("a batch/v1 Job whose PodGroup has no minResources is always enqueued",
     nodes(1, gpus=4), [],
     [job("fill", pods=4, run_time=1000), job("X", pods=4, run_time=100, submit_time=5)],
     dict(horizon=500), {"X": (NAN, NAN, "WaitingAtEnd")}, {"X": "GangCannotFit"}),
    ("a batch/v1 Job with minResources is held at the door like a Volcano Job",
     nodes(1, gpus=4), [],
     [job("fill", pods=4, run_time=1000), job("X", pods=4, run_time=100, submit_time=5, min_resources=gpus(4))],
     dict(horizon=500), {"X": (NAN, NAN, "WaitingAtEnd")}, {"X": "ClusterOverused"}),
    ("a Volcano Job's pods are created at Inqueue and placed from the next session",
     nodes(1, gpus=4), [], [vcjob("V", pods=2, run_time=100), job("B", pods=2, run_time=100)],
     dict(), {"V": (1, 101, "Finished"), "B": (0, 100, "Finished")}, {}),
]


@pytest.mark.parametrize("nodes_, queues, jobs, settings, expected, reasons", [c[1:] for c in ENQUEUE], ids=[c[0] for c in ENQUEUE])
def test_enqueue(nodes_, queues, jobs, settings, expected, reasons):
    result = run_with_queues(nodes_, jobs, queues, **settings)
    check_times(result, expected)
    for name, code in reasons.items():
        assert f"] {code}:" in by_job(result).loc[name, "reason"]


NO_ENQUEUE = [
    # (id, nodes, queues, jobs, settings, expected {job: (start, finish, state)}, {job: reason code}); the
    # scheduler's actions leave out enqueue: allocate moves every Pending PodGroup to Inqueue at once
    ("without enqueue, a Volcano Job's pods exist from the first session and B starts the moment A ends",
     nodes(1, gpus=8), [Queue("small", capability=gpus(4))],
     [vcjob("A", pods=4, run_time=600, volcano_queue="small"), vcjob("B", pods=4, run_time=600, volcano_queue="small")],
     dict(), {"A": (1, 601, "Finished"), "B": (601, 1201, "Finished")}, {}),
    ("without enqueue, allocate still keeps the queue within its capability (reason named)",
     nodes(1, gpus=8), [Queue("small", capability=gpus(4))],
     [vcjob("A", pods=4, run_time=600, volcano_queue="small"), vcjob("B", pods=4, run_time=600, volcano_queue="small")],
     dict(horizon=300), {"A": (1, NAN, "RunningAtEnd"), "B": (NAN, NAN, "WaitingAtEnd")}, {"B": "QueueOverDeserved"}),
    ("without enqueue, the overcommit door is gone: X goes Inqueue on a full cluster and waits in allocate",
     nodes(1, gpus=4), [],
     [job("fill", pods=4, run_time=1000), vcjob("X", pods=4, run_time=100, submit_time=5)],
     dict(horizon=500), {"X": (NAN, NAN, "WaitingAtEnd")}, {"X": "GangCannotFit"}),
]


@pytest.mark.parametrize("nodes_, queues, jobs, settings, expected, reasons", [c[1:] for c in NO_ENQUEUE],
                         ids=[c[0] for c in NO_ENQUEUE])
def test_without_the_enqueue_action(nodes_, queues, jobs, settings, expected, reasons):
    sc = gk.Scenario(nodes_, jobs, volcano=VolcanoSetup(list(queues), enqueue=False))
    result = gk.simulate(sc, stack="gang", **settings)
    check_times(result, expected)
    for name, code in reasons.items():
        assert f"] {code}:" in by_job(result).loc[name, "reason"]


def test_overcommit_factor_1_refuses_what_1_2_promises():
    jobs = [job("fill", pods=8, run_time=1000), vcjob("X", pods=4, run_time=100, submit_time=5)]
    sc = gk.Scenario(nodes(1, gpus=10), jobs, volcano=VolcanoSetup(overcommit_factor=1.0))
    row = by_job(gk.simulate(sc, stack="gang", horizon=500)).loc["X"]
    assert "ClusterOverused" in row["reason"]


# --- what an autoscaler sees ---------------------------------------------------------

VISIBILITY = [
    # (id, controller, pods listed as unschedulable, nodes launched by Karpenter, start of X)
    ("a Volcano Job has no pods before Inqueue: nothing to scale up for, X waits for the filler", "volcano", 0, 0, 1001),
    ("a batch/v1 Job's pods exist, Pending: Karpenter adds a node and X starts early", "batch", 4, 1, 156),
    ("without the enqueue action a Volcano Job goes Inqueue at once: its pods exist, one session later",
     "volcano, no enqueue", 4, 1, 157),
]


def _held_at_the_door(controller):
    controller, _, no_enqueue = controller.partition(", ")
    jobs = [job("fill", pods=4, run_time=1000),
            job("X", pods=4, run_time=100, submit_time=5, controller=controller, min_resources=gpus(4))]
    return gk.Scenario(nodes(1, gpus=4), jobs, volcano=VolcanoSetup(enqueue=not no_enqueue))


@pytest.mark.parametrize("controller, listed, launched, start", [c[1:] for c in VISIBILITY], ids=[c[0] for c in VISIBILITY])
def test_what_an_autoscaler_sees_of_a_pending_podgroup(controller, listed, launched, start):
    sc = _held_at_the_door(controller).with_settings(horizon=50)
    sim = Simulation(sc, build_stack("gang", sc.settings, sc))
    sim.run()
    assert len(sim.stack.placement.unschedulable()) == listed
    result = gk.simulate(_held_at_the_door(controller), stack="gang+karpenter")
    assert len(result.nodes) - 1 == launched
    assert by_job(result).loc["X", "start_s"] == start


# --- queues in allocate ---------------------------------------------------------------

def one_gpu_jobs(queue, n, run_time=100):
    return [job(f"{queue}{i}", run_time=run_time, volcano_queue=queue) for i in range(n)]


SHARING = [
    # (id, queues, jobs, started at 0 per queue)
    ("two queues of equal weight share one node half and half",
     [Queue("a"), Queue("b")], one_gpu_jobs("a", 8) + one_gpu_jobs("b", 8), {"a": 4, "b": 4}),
    ("weights 3:1 share it 6 and 2",
     [Queue("a", weight=3), Queue("b")], one_gpu_jobs("a", 8) + one_gpu_jobs("b", 8), {"a": 6, "b": 2}),
    ("a queue alone takes the whole node",
     [Queue("a"), Queue("b")], one_gpu_jobs("a", 8), {"a": 8}),
    ("a queue asking little leaves the rest to the other",
     [Queue("a"), Queue("b")], one_gpu_jobs("a", 2) + one_gpu_jobs("b", 8), {"a": 2, "b": 6}),
    ("a capability caps a queue even with free GPUs beside it",
     [Queue("a", capability=gpus(3)), Queue("b")], one_gpu_jobs("a", 8) + one_gpu_jobs("b", 2), {"a": 3, "b": 2}),
]


@pytest.mark.parametrize("queues, jobs, expected", [c[1:] for c in SHARING], ids=[c[0] for c in SHARING])
def test_queues_share_a_node(queues, jobs, expected):
    t = run_with_queues(nodes(1, gpus=8), jobs, queues).jobs
    started = t[t.start_s == 0].job.str[0].value_counts().to_dict()
    assert started == expected


NEVER_FITS = [
    # (id, queue of the small job, ordering, start of the small job)
    ("a gang that can never fit does not block another queue (skip)", "b", "skip", 1),
    ("a gang that can never fit does not block another queue (strict)", "b", "strict", 1),
    ("in its own queue it blocks nobody under skip", "a", "skip", 1),
    ("in its own queue it blocks everyone behind it under strict", "a", "strict", NAN),
]


@pytest.mark.parametrize("queue, ordering, start", [c[1:] for c in NEVER_FITS], ids=[c[0] for c in NEVER_FITS])
def test_a_never_fitting_gang(queue, ordering, start):
    jobs = [job("huge", pods=3, gpus=4, run_time=600, volcano_queue="a"),
            job("small", pods=2, gpus=1, run_time=600, volcano_queue=queue, submit_time=1)]
    t = by_job(run_with_queues(nodes(2, gpus=4), jobs, [Queue("a"), Queue("b")], ordering=ordering, horizon=2000))
    assert t.loc["huge", "state"] == "WaitingAtEnd" and t.loc["huge", "held_idle_gpu_s"] == 0
    got = t.loc["small", "start_s"]
    assert (math.isnan(start) and math.isnan(got)) or got == start


# --- roles: minTaskMember -------------------------------------------------------------

def master_workers(min_member, master_min, worker_min):
    """3 one-GPU workers then a 2-GPU master on one 4-GPU node: the workers fit, the master does not."""
    return Job("mw", [PodSet("workers", 3, 1, min_member=worker_min), PodSet("master", 1, 2, min_member=master_min)],
               run_time=100, min_member=min_member)


ROLES = [
    # (id, job, state at the end, GPUs held at the end)
    ("without role minimums three workers are a gang of 3: bound, and stuck without their master",
     master_workers(3, None, None), "Deadlocked", 3),
    ("with the master's minTaskMember the trial is discarded: nothing held",
     master_workers(3, 1, 2), "WaitingAtEnd", 0),
    ("minMember below the sum of role minimums skips the role check (Volcano's CheckTaskReady)",
     master_workers(2, 1, 2), "Deadlocked", 3),
]


@pytest.mark.parametrize("the_job, state, held", [c[1:] for c in ROLES], ids=[c[0] for c in ROLES])
def test_a_master_must_fit_as_well_as_the_workers(the_job, state, held):
    result = gk.simulate(gk.Scenario(nodes(1, gpus=4), [the_job]), stack="gang", horizon=500)
    assert by_job(result).loc["mw", "state"] == state
    assert result.summary()["held_idle_gpus_at_end"] == held


MIN_RESOURCES = [
    # (id, pod sets, job minMember, expected minResources GPUs)
    ("every pod by default", [PodSet("w", 4, 2)], None, 8),
    ("the first minMember pods", [PodSet("w", 4, 2)], 2, 4),
    ("each task's minimum first, then pods in task order",
     [PodSet("ps", 2, 4, min_member=1), PodSet("w", 4, 1, min_member=2)], 4, 4 + 2 + 4),
    ("minMember below the task minimums: the first pods in task order",
     [PodSet("ps", 2, 4, min_member=2), PodSet("w", 4, 1, min_member=2)], 3, 4 + 4 + 1),
]


@pytest.mark.parametrize("pod_sets, min_member, expected", [c[1:] for c in MIN_RESOURCES], ids=[c[0] for c in MIN_RESOURCES])
def test_a_volcano_job_computes_its_min_resources(pod_sets, min_member, expected):
    spec = Job("v", pod_sets, 100, min_member=min_member, controller="volcano")
    assert job_min_resources(spec).gpus == expected
    assert job_min_resources(Job("b", pod_sets, 100, min_member=min_member)) is None  # batch/v1: only if given


def test_cpu_and_memory_count_beside_gpus():
    """Volcano's own cases are written in CPU and memory: a queue capped at 4 cpu enqueues one 3-cpu job at a time."""
    node = gk.Node("n", 0, cpu=16.0, memory=64 * 2**30)
    jobs = [Job(f"c{i}", [PodSet("w", 1, 0, cpu=3.0, memory=2**30)], 100, controller="volcano", volcano_queue="q")
            for i in range(2)]
    result = run_with_queues([node], jobs, [Queue("q", capability=Resources(math.inf, 4.0, math.inf))])
    check_times(result, {"c0": (1, 101, "Finished"), "c1": (102, 202, "Finished")})


# --- preempt and reclaim ------------------------------------------------------------------

PREEMPT = [
    # (id, jobs, expected {job: (start, finish, state)}, pods evicted {job: count})
    ("a higher-priority gang evicts exactly the 2 surplus pods it needs; the victim keeps its minMember",
     [indep("low", 4, 2, run_time=100), job("high", pods=2, run_time=50, priority=10, submit_time=10)],
     {"high": (10, 60, "Finished"), "low": (0, 160, "Finished")}, {"low": 2}),
    ("one pod needed: one pod evicted",
     [indep("low", 4, 2, run_time=100), job("high", pods=1, run_time=50, priority=10, submit_time=10)],
     {"high": (10, 60, "Finished")}, {"low": 1}),
    ("needing more than the surplus evicts the whole victim, never leaving it below minMember",
     [indep("low", 4, 2, run_time=100), job("high", pods=3, run_time=50, priority=10, submit_time=10)],
     {"high": (10, 60, "Finished"), "low": (0, 160, "Finished")}, {"low": 4}),
    ("a sync gang is evicted whole",
     [job("low", pods=4, run_time=100), job("high", pods=1, run_time=50, priority=10, submit_time=10)],
     {"high": (10, 60, "Finished"), "low": (0, 160, "Finished")}, {"low": 4}),
    ("the lowest-priority victim goes first, and only it",
     [job("mid", pods=2, run_time=100, priority=5), job("low", pods=2, run_time=100),
      job("high", pods=2, run_time=50, priority=10, submit_time=10)],
     {"high": (10, 60, "Finished"), "mid": (0, 100, "Finished")}, {"low": 2}),
    ("equal priority preempts nobody",
     [job("low", pods=4, run_time=100), job("same", pods=2, run_time=50, submit_time=10)],
     {"same": (100, 150, "Finished")}, {}),
    ("preempt stays within a queue (and queue a is not reclaimable)",
     [job("low", pods=4, run_time=100, volcano_queue="a"),
      job("high", pods=2, run_time=50, priority=10, submit_time=10, volcano_queue="b")],
     {"high": (100, 150, "Finished")}, {}),
]


def evicted_pods(result) -> dict:
    pods = result.pods
    return pods[pods.state == "Evicted"].job.value_counts().to_dict()


@pytest.mark.parametrize("jobs, expected, evicted", [c[1:] for c in PREEMPT], ids=[c[0] for c in PREEMPT])
def test_preempt(jobs, expected, evicted):
    queues = [Queue("a", reclaimable=False), Queue("b")] if any(j.volcano_queue != "default" for j in jobs) else []
    result = run_with_queues(nodes(1, gpus=4), jobs, queues, preemption=True)
    check_times(result, expected)
    assert evicted_pods(result) == evicted


def test_without_the_preemption_setting_nobody_is_evicted():
    jobs = [job("low", pods=4, run_time=100), job("high", pods=1, run_time=50, priority=10, submit_time=10)]
    result = run_with_queues(nodes(1, gpus=4), jobs)
    assert evicted_pods(result) == {} and by_job(result).loc["high", "start_s"] == 100


RECLAIM = [
    # (id, queues, jobs, expected {job: (start, finish, state)}, pods evicted {job: count})
    ("queue b reclaims its deserved half from queue a, newest jobs first and no more",
     [Queue("a"), Queue("b")], one_gpu_jobs("a", 8, run_time=1000) + [job("b", pods=4, run_time=100, volcano_queue="b", submit_time=10)],
     {"b": (10, 110, "Finished"), "a0": (0, 1000, "Finished"), "a7": (0, 1110, "Finished")},
     {"a4": 1, "a5": 1, "a6": 1, "a7": 1}),
    ("a queue that is not reclaimable keeps what it holds",
     [Queue("a", reclaimable=False), Queue("b")],
     one_gpu_jobs("a", 8, run_time=1000) + [job("b", pods=4, run_time=100, volcano_queue="b", submit_time=10)],
     {"b": (1000, 1100, "Finished")}, {}),
    ("a job asking beyond its queue's deserved share reclaims nothing",
     [Queue("a"), Queue("b")], one_gpu_jobs("a", 8, run_time=1000) + [job("b", pods=6, run_time=100, volcano_queue="b", submit_time=10)],
     {"b": (1000, 1100, "Finished")}, {}),
    ("reclaim takes surplus pods first and leaves the victim its minMember",
     [Queue("a"), Queue("b")], [indep("a", 8, 6, run_time=1000, volcano_queue="a"),
                                job("b", pods=2, run_time=100, volcano_queue="b", submit_time=10)],
     {"b": (10, 110, "Finished"), "a": (0, 1110, "Finished")}, {"a": 2}),
    ("reclaim needing more than the surplus evicts the whole victim",
     [Queue("a"), Queue("b")], [indep("a", 8, 6, run_time=1000, volcano_queue="a"),
                                job("b", pods=4, run_time=100, volcano_queue="b", submit_time=10)],
     {"b": (10, 110, "Finished")}, {"a": 8}),
    ("the queue furthest above its deserved share gives first (c: 3 held of 1.5 deserved; a: 5 of 4.5)",
     [Queue("a", weight=3), Queue("b", weight=2), Queue("c")],
     one_gpu_jobs("a", 5, run_time=1000) + one_gpu_jobs("c", 3, run_time=1000)
     + [job("b", pods=2, run_time=100, volcano_queue="b", submit_time=10)],
     {"b": (10, 110, "Finished")}, {"c2": 1, "c1": 1}),
]


@pytest.mark.parametrize("queues, jobs, expected, evicted", [c[1:] for c in RECLAIM], ids=[c[0] for c in RECLAIM])
def test_reclaim(queues, jobs, expected, evicted):
    result = run_with_queues(nodes(1, gpus=8), jobs, queues, preemption=True)
    check_times(result, expected)
    assert evicted_pods(result) == evicted


# --- bad input ---------------------------------------------------------------------------

BAD = [
    # (id, setup, jobs, object, field, words)
    ("a job naming an undeclared queue", VolcanoSetup([Queue("a")]), [job("j", volcano_queue="nope")],
     "Job j", "volcano_queue", "does not exist"),
    ("a weight of zero", VolcanoSetup([Queue("a", weight=0)]), [], "Queue a", "spec.weight", "from 1 to 65535"),
    ("a guarantee above the capability", VolcanoSetup([Queue("a", capability=gpus(2), guarantee=gpus(4))]), [],
     "Queue a", "spec.guarantee.resource", "at most the capability"),
    ("an overcommit factor below 1", VolcanoSetup(overcommit_factor=0.5), [], "Volcano setup", "overcommit_factor", ">= 1.0"),
    ("enqueue as a word", VolcanoSetup(enqueue="no"), [], "Volcano setup", "enqueue", "expected True or False"),
    ("two queues of one name", VolcanoSetup([Queue("a"), Queue("a")]), [], "Queue a", "metadata.name", "unique"),
    ("a job naming a queue without any Volcano setup", None, [job("j", volcano_queue="a")],
     "Scenario scenario", "volcano", "declares no Volcano queues"),
    ("a role minimum above its pod count", None, [Job("j", [PodSet("w", 2, 1, min_member=3)], 10)],
     "Job j", "pod_sets[0].min_member", "from 0 to 2"),
    ("an unknown controller", None, [job("j", controller="mpi")], "Job j", "controller", "batch, volcano"),
]


@pytest.mark.parametrize("setup, jobs, obj, field, words", [c[1:] for c in BAD], ids=[c[0] for c in BAD])
def test_bad_volcano_input_is_one_clear_error(setup, jobs, obj, field, words):
    sc = gk.Scenario(nodes(1, gpus=4), jobs or [job("ok")], volcano=setup)
    with pytest.raises(ScenarioError) as err:
        sc.validate()
    problems = err.value.problems
    assert any(p.obj == obj and p.field == field and words in p.message for p in problems), problems


# --- random scenarios: the rules hold whatever the mix ------------------------------------------

def random_scenario(seed: int) -> gk.Scenario:
    import random

    rng = random.Random(seed)
    queues = [Queue("a", weight=rng.randint(1, 3)), Queue("b", weight=rng.randint(1, 3),
              capability=gpus(rng.choice([4, 8, 12])) if rng.random() < 0.5 else None),
              Queue("c", reclaimable=rng.random() < 0.5)]
    jobs = []
    for i in range(14):
        pods = rng.randint(1, 4)
        progress = rng.choice(["sync", "independent"])
        jobs.append(Job(f"j{i}", [PodSet("w", pods, rng.choice([1, 2]))], run_time=rng.choice([50, 200, 500]),
                        submit_time=rng.choice([0, 10, 30, 120]), priority=rng.choice([0, 5, 10]), progress=progress,
                        min_member=rng.randint(1, pods), volcano_queue=rng.choice("abc"),
                        controller=rng.choice(["batch", "volcano"])))
    return gk.Scenario(nodes(3, gpus=4), jobs, volcano=VolcanoSetup(queues))


@pytest.mark.parametrize("seed", range(12))
def test_random_queues_keep_the_rules(seed, monkeypatch):
    """Evictions never leave a running victim below its minMember; GPUs add up; the run repeats exactly."""
    real_evict_pod = Simulation.evict_pod

    def evict_pod(self, pod, reason):
        real_evict_pod(self, pod, reason)
        js = pod.job
        assert js.bound == 0 or js.bound >= js.gang_size, f"{js.name} left with {js.bound} of {js.gang_size}"

    monkeypatch.setattr(Simulation, "evict_pod", evict_pod)
    first = gk.simulate(random_scenario(seed), stack="gang", preemption=True, horizon=20000)
    sc = random_scenario(seed).with_settings(stack="gang", preemption=True, horizon=20000)
    sim = Simulation(sc, build_stack("gang", sc.settings, sc))
    sim.run()
    again = build_result(sim)
    t = first.timeline
    assert ((t.useful_gpus + t.held_idle_gpus + t.free_gpus + t.not_ready_gpus) == t.capacity_gpus).all()
    assert first.jobs.equals(again.jobs) and first.events.equals(again.events)
    assert set(first.jobs.state) <= {"Finished", "WaitingAtEnd", "RunningAtEnd", "Deadlocked"}
    # the layer keeps every job that still waits for a pod somewhere it will look again
    layer = sim.stack.placement
    kept = ({e[2] for h in layer.cache.pending.values() for e in h} | set(layer.cache.partial) | {e[2] for e in layer.cache.creating}
            | {e[2] for shapes in layer.cache.shapes.values() for h in shapes.values() for e in h})
    for js in sim.jobs:
        if js.state == "Pending" and any(p.node is None and not p.done for p in js.pods):
            assert js.index in kept, f"{js.name} waits but the layer lost it"
    assert "WaitingForSession" not in " ".join(first.jobs.reason)  # quiescent runs: nothing that fits is left


EXAMPLE = REPO / "examples" / "volcano-job-and-autoscaler.yaml"

AUTOSCALER_EXAMPLE = [
    # (id, controller of 'train', its start, nodes at the end)
    ("the example's Volcano Job: no pods, no scale-up, waits for 'fill'", "volcano", 3601, 1),
    ("the same gang as a batch/v1 Job with minResources: pods seen, a node added", "batch", 211, 2),
]


@pytest.mark.parametrize("controller, start, node_count", [c[1:] for c in AUTOSCALER_EXAMPLE], ids=[c[0] for c in AUTOSCALER_EXAMPLE])
def test_the_autoscaler_example(controller, start, node_count):
    import dataclasses

    sc = gk.load_file(EXAMPLE)
    train = next(j for j in sc.jobs if j.name == "train")
    if controller == "batch":
        sc.jobs[sc.jobs.index(train)] = dataclasses.replace(train, controller="batch", min_resources=job_min_resources(train))
    result = gk.simulate(sc)
    assert by_job(result).loc["train", "start_s"] == start
    assert len(result.nodes) == node_count
