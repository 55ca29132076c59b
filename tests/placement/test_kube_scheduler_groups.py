"""The ``pod`` layer's queue kept by groups (the fast path ``grouped_queue``) against the queue kept pod by pod.

The grouped queue (:mod:`gangkit.placement.kube_queue`) may only save work:
with it and without it every figure, table and metric must be the same to
the last bit. The scenarios are made to reach its corners: jobs of two shapes
interleaved in the queue, priorities, node selectors, one-per-node pod sets,
pods recreated after a failed rendezvous, nodes added by Karpenter, arrivals
in bursts a second apart (backoff) and 5 minutes apart (the flush).
"""

from __future__ import annotations

import dataclasses
import random
from collections import deque

import pytest

from gangkit import Node, Scenario, job, nodes, simulate
from gangkit.engine.state import JobState
from gangkit.model.fast_paths import FastPaths
from gangkit.model.jobs import Job, PodSet
from gangkit.placement import kube_queue, kube_scheduler
from gangkit.workloads import scenarios

from conftest import assert_same_result


def assert_same(a, b) -> None:
    assert_same_result(a, b)


def both(monkeypatch, sc: Scenario, stack: str):
    plain = simulate(sc, stack=stack, record="full", horizon=2e5, fast_paths=FastPaths(grouped_queue=False))
    return simulate(sc, stack=stack, record="full", horizon=2e5), plain


def random_scenario(seed: int) -> Scenario:
    """A few nodes in two labelled pools; jobs of one or two pod sets, some with a node selector, some one per
    node, some with a rendezvous timeout; arrivals in bursts, seconds apart and minutes apart."""
    rng = random.Random(seed)
    cluster = [Node(f"n{i}", rng.choice([4, 8]), labels={"pool": "ab"[i % 2]}) for i in range(rng.randint(2, 6))]
    jobs, t = [], 0.0
    for k in range(rng.randint(20, 60)):
        r = rng.random()
        if r < 0.4:
            t += rng.choice([0, 0, 0.5, 1, 2, 3])
        elif r < 0.7:
            t += rng.uniform(0, 20)
        elif r < 0.9:
            t += rng.uniform(100, 400)
        else:
            t += rng.choice([299, 300, 301, 330, 31, 29])
        if rng.random() < 0.3:
            t = round(t)
        pod_sets = [PodSet(f"s{s}", rng.randint(1, 4), rng.choice([1, 1, 2, 4, 8]),
                           node_selector=(("pool", rng.choice("ab")),) if rng.random() < 0.2 else (),
                           one_per_node=rng.random() < 0.15) for s in range(rng.choice([1, 1, 1, 2]))]
        churn = ({"rendezvous_timeout": float(rng.choice([60, 300, 600])), "backoff_limit": rng.randint(0, 3)}
                 if rng.random() < 0.15 else {})
        jobs.append(Job(f"j{k}", pod_sets, run_time=float(rng.choice([5, 30, 100, 400, 1000, 3000])) + rng.choice([0, 0.25]),
                        submit_time=round(t, 3), priority=rng.choice([0, 0, 0, 1, 2]), **churn))
    return Scenario(cluster, jobs, name=f"random-{seed}")


def prioritised_mixed() -> Scenario:
    sc = scenarios.mixed(n_jobs=150, n_nodes=3, load=1.3, seed=9)
    return dataclasses.replace(sc, jobs=[dataclasses.replace(j, priority=k % 3) for k, j in enumerate(sc.jobs)])


def two_shapes_interleaved() -> Scenario:
    """Jobs of a 1-GPU launcher and 4-GPU workers (each pod runs on its own), a second apart, behind a long
    job: the two shapes interleave in the queue."""
    jobs = [job("blocker", pods=2, gpus=8, run_time=700)]
    jobs += [Job(f"j{k}", [PodSet("launcher", 1, 1), PodSet("workers", 2, 4)], run_time=float(50 + 37 * (k % 5)),
                 submit_time=1.0 + k, progress="independent") for k in range(30)]
    return Scenario(nodes(2, gpus=8), jobs, name="two-shapes")


CASES = [
    ("the mixed stream, overloaded", lambda: scenarios.mixed(n_jobs=200, n_nodes=3, load=1.3, seed=0), "pod"),
    ("the mixed stream with three priorities", prioritised_mixed, "pod"),
    ("the mixed stream behind Kueue", lambda: scenarios.mixed(n_jobs=120, n_nodes=3, load=1.3, seed=3), "kueue+pod"),
    ("the mixed stream with Karpenter adding nodes", lambda: scenarios.mixed(n_jobs=100, n_nodes=3, load=1.3, seed=2),
     "pod+karpenter"),
    ("the mixed stream with cluster-autoscaler", lambda: scenarios.mixed(n_jobs=100, n_nodes=3, load=1.3, seed=5),
     "pod+autoscaler"),
    ("two shapes interleaved in the queue", two_shapes_interleaved, "pod"),
    ("the two-gangs deadlock", lambda: scenarios.load("two-gangs-deadlock"), "pod"),
] + [(f"random scenario {seed}", lambda seed=seed: random_scenario(seed), ("pod", "pod", "kueue+pod", "pod+karpenter")[seed % 4])
     for seed in (0, 1, 3, 4, 5, 6, 9, 12)]


@pytest.mark.parametrize(("name", "build", "stack"), CASES, ids=[f"{n} | {s}" for n, _, s in CASES])
def test_grouped_queue_changes_nothing(monkeypatch, name, build, stack):
    grouped, plain = both(monkeypatch, build(), stack)
    assert_same(grouped, plain)


@pytest.mark.parametrize("grouped, most, least", [
    (True, 5 * 301, 0),
    (False, None, 90 * 301),
], ids=[
    "by groups a deletion costs a few steps, not one per waiting pod",
    "pod by pod each deletion looks at every waiting pod",
])
def test_grouped_queue_visits_groups_not_waiting_pods(monkeypatch, grouped, most, least):
    """One 1-GPU node: a job holds it while 300 one-GPU jobs queue; then they run one after another, each end a
    pod deletion that moves the whole queue (about 45,000 pod moves in all). Counted: how often a waiting pod's
    job is asked whether it still waits here (``JobState.placing``), by the engine and the layer."""
    jobs = [job("first", run_time=400)] + [job(f"j{k}", run_time=10 + k % 7, submit_time=1 + k) for k in range(300)]
    sc = Scenario(nodes(1, gpus=1), jobs, name="long-queue")
    slot = JobState.__dict__["placing"]
    reads = [0]

    def read(js):
        reads[0] += 1
        return slot.__get__(js, JobState)

    monkeypatch.setattr(JobState, "placing", property(read, slot.__set__))
    r = simulate(sc, stack="pod", record="summary", horizon=1e6, fast_paths=FastPaths(grouped_queue=grouped))
    assert r.summary()["jobs_finished"] == 301
    assert reads[0] >= least and (most is None or reads[0] <= most)


def _recs(*labels):
    return deque(kube_queue.Rec(None, lab, ("k",)) for lab in labels)


@pytest.mark.parametrize("a, b, joined", [
    ((1, 2), (5, 6, 7), (1, 2, 5, 6, 7)),
    ((5, 6, 7), (1, 2), (1, 2, 5, 6, 7)),
    ((1, 4, 9), (2, 3, 10), (1, 2, 3, 4, 9, 10)),
    ((5, 6), (1, 2, 3, 7, 8, 9), (1, 2, 3, 5, 6, 7, 8, 9)),
    (tuple(range(1, 40, 2)), tuple(range(0, 42, 2)), tuple(range(41))),
    ((), (3,), (3,)),
], ids=[
    "a group whose labels lie below the other's goes in front",
    "one whose labels lie above goes behind, whichever is given first",
    "groups whose labels interleave are merged in label order",
    "a run of the smaller group that falls in one gap of the larger goes in as a block",
    "a group that would fill more than MAX_GAPS gaps is merged by a sort",
    "an empty group adds nothing",
])
def test_join_keeps_label_order(a, b, joined):
    assert [r.lab for r in kube_queue.join(_recs(*a), _recs(*b))] == list(joined)


def test_preemption_keeps_the_queue_pod_by_pod():
    """The grouped queue assumes free room only shrinks within a cycle: with preemption the layer keeps a record per pod."""
    assert kube_scheduler.KubeScheduler(preemption=True)._queue is None
    assert kube_scheduler.KubeScheduler(preemption=False)._queue is not None
