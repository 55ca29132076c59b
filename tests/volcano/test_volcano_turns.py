"""Volcano's allocate turns (v1.15.1) as tables of cases: a ready job gets one pod per turn, in job order.

Volcano's allocate (``pkg/scheduler/actions/allocate/allocate.go``, ``allocateResources`` and
``allocateResourcesForTasks``) gives a job pods until it is ready, commits, and pushes the job back into
its queue's job order while it has pods left; the order is priority, then jobs not yet ready (gang), then
the lower drf share (``pkg/scheduler/plugins/drf/drf.go``, ``jobOrderFn``), then creation. A pod that
fits nowhere ends a whole gang's turn, but not the turn of a job with more pods than its minMember
(``JobInfo.NeedContinueAllocating``); ready means minMember and each role's minimum
(gang JobReadyFn). Each case is worked out by hand from those rules: how many pods of
each job run at a given time. See docs/reference/volcano.md, *allocate*.
"""

from __future__ import annotations

import math

import pytest

import gangkit as gk
from gangkit import Job, PodSet, Scenario, job, nodes
from gangkit.model.resources import Resources
from gangkit.volcano.plugins.drf import dominant_share


def elastic(name: str, pods: int, gpus: int = 1, *, min_member: int = 1, run_time: float = 1000.0,
            submit_time: float = 0.0, cpu: float = 0.0) -> Job:
    """A job of ``pods`` workers that is ready with ``min_member`` of them (each pod runs on its own)."""
    return Job(name, [PodSet("workers", pods, gpus, cpu=cpu)], run_time=run_time, submit_time=submit_time,
               progress="independent", min_member=min_member)


def roles(*order: str) -> Job:
    """Job a: a launcher (minimum 1) and 4 workers (minimum 2) of 1 GPU, minMember 3, pod sets in ``order``."""
    sets = {"launcher": PodSet("launcher", 1, 1, min_member=1), "workers": PodSet("workers", 4, 1, min_member=2)}
    return Job("a", [sets[name] for name in order], run_time=1000.0, progress="independent", min_member=3)


def running_at(sc: Scenario, t: float) -> dict[str, int]:
    """Pods of each job bound at time ``t`` (bound at or before it and not yet released)."""
    pods = gk.simulate(sc, stack="gang", record="full").pods  # (a row per pod that was bound)
    on = pods[(pods.bound_s <= t) & ~(pods.released_s <= t)]
    return {j.name: int((on.job == j.name).sum()) for j in sc.jobs}


CPU_NODE = [gk.Node("node-0", 8, cpu=16.0)]

CASES = [
    # (id, nodes, jobs, time, pods of each job running then)
    ("two jobs of minMember 1 with 4 pods each on 4 one-GPU slots get 2 each",
     nodes(1, gpus=4), [elastic("a", 4), elastic("b", 4)], 0.0, {"a": 2, "b": 2}),
    ("three such jobs on 4 slots: 2, 1, 1 (the third's first pod comes before the others' second)",
     nodes(1, gpus=4), [elastic("a", 4), elastic("b", 4), elastic("c", 4)], 0.0, {"a": 2, "b": 1, "c": 1}),
    ("a not-ready whole gang created later goes before the ready job's second pod",
     nodes(1, gpus=4), [elastic("a", 4), job("g", pods=2, gpus=1, run_time=1000.0)], 0.0, {"a": 2, "g": 2}),
    ("a job of minMember 2 gets 2 pods in its first turn, and the other job its first before a's third",
     nodes(1, gpus=3), [elastic("a", 4, min_member=2), elastic("b", 4)], 0.0, {"a": 2, "b": 1}),
    ("once both are ready, the lower share goes first: minMember 2 and 1 on 4 slots give 2 and 2",
     nodes(1, gpus=4), [elastic("a", 4, min_member=2), elastic("b", 4)], 0.0, {"a": 2, "b": 2}),
    ("drf: the job holding 2-GPU pods waits while the 1-GPU job's share is lower (5 GPUs: 1 and 3)",
     nodes(1, gpus=5), [elastic("a", 4, gpus=2), elastic("b", 4)], 0.0, {"a": 1, "b": 3}),
    ("drf counts CPU: a pod of 4 of 16 cores weighs 1/4, more than 1 of 8 GPUs: 3 and 5 (GPUs alone: 4 and 4)",
     CPU_NODE, [elastic("a", 4, cpu=4.0), elastic("b", 8)], 0.0, {"a": 3, "b": 5}),
    ("across sessions: a freed GPU goes to the ready job with the lower share, not the older one",
     nodes(1, gpus=4), [elastic("a", 4), job("x", run_time=10.0), elastic("b", 4)], 10.0,
     {"a": 2, "b": 2, "x": 0}),
    ("role minimums: the first turn ends when minMember and each role's minimum are met (3), then drf: 3 and 2",
     nodes(1, gpus=5), [roles("launcher", "workers"), elastic("b", 4)], 0.0, {"a": 3, "b": 2}),
    ("role minimums: with the workers first, the turn goes on past minMember until the launcher is placed",
     nodes(1, gpus=5), [roles("workers", "launcher"), elastic("b", 4)], 0.0, {"a": 5, "b": 0}),
    ("a whole gang is placed in one turn, as before: 4 pods at once, the minMember-1 job gets nothing",
     nodes(1, gpus=4), [job("g", pods=4, gpus=1, run_time=1000.0), elastic("a", 4)], 0.0, {"a": 0, "g": 4}),
]


@pytest.mark.parametrize("node_list, jobs, t, expected", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_turns(node_list, jobs, t, expected):
    assert running_at(Scenario(node_list, jobs), t) == expected


def two_roles(min_member: int) -> list[Job]:
    """Job j: a 4-GPU pod first, then two 1-GPU pods; a job created before it holds 2 of the node's 4 GPUs."""
    return [job("holder", pods=2, gpus=1, run_time=1000.0),
            Job("j", [PodSet("big", 1, 4), PodSet("small", 2, 1)], run_time=100.0, progress="independent",
                min_member=min_member, submit_time=1.0)]


CONTINUE = [
    # (id, jobs, pods of j running at t=1 on one 4-GPU node)
    ("a job above its minMember passes over a pod that fits nowhere and is ready with the next two",
     two_roles(2), 2),
    ("a whole gang stops at its first pod that fits nowhere: nothing is placed",
     two_roles(3), 0),
]


@pytest.mark.parametrize("jobs, expected", [c[1:] for c in CONTINUE], ids=[c[0] for c in CONTINUE])
def test_a_pod_that_fits_nowhere(jobs, expected):
    assert running_at(Scenario(nodes(1, gpus=4), jobs), 1.0)["j"] == expected


SHARES = [
    # (id, allocated, total, dominant share)
    ("GPUs dominate", Resources(2, 8, 0), Resources(16, 256, 2 ** 40), 0.125),
    ("CPU dominates", Resources(1, 64, 0), Resources(16, 256, 2 ** 40), 0.25),
    ("a resource the nodes do not model counts 0", Resources(1, 64, 0), Resources(8, math.inf, math.inf), 0.125),
    ("a cluster without GPUs leaves them out", Resources(1, 0, 0), Resources(0, 0, 0), 0.0),
    ("nothing held, share 0", Resources(0, 0, 0), Resources(8, 16, 2 ** 30), 0.0),
]


@pytest.mark.parametrize("held, total, share", [c[1:] for c in SHARES], ids=[c[0] for c in SHARES])
def test_dominant_share(held, total, share):
    assert dominant_share(held, total) == share
