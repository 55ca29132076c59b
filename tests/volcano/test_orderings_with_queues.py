"""Placement orderings inside Volcano's allocate with several queues, as tables of cases.

The rule checked here (docs/reference/simulator.md, *With Volcano queues*):
queues are visited as allocate visits them; the ordering acts within a
queue; the two reservation orderings ask one book per session over all
queues, and a job its queue's deserved share holds back gets no reservation.
"""

from __future__ import annotations

import math
import random

import pytest

import gangkit as gk
from gangkit import Job, PodSet, job, nodes
from gangkit.engine.simulation import Simulation
from gangkit.model.fast_paths import FastPaths
from gangkit.model.resources import Resources
from gangkit.model.scenario import ORDERINGS
from gangkit.results.result import build_result
from gangkit.stacks import build_stack
from gangkit.volcano.api import Queue, VolcanoSetup

from builders import gpu_nodes, scenario
from conftest import same_start_finish, start_finish

NAN = math.nan


def gpus(n: float) -> Resources:
    return Resources(gpus=float(n))


def run(node_list, jobs, queues, ordering, **settings):
    """Simulate under ``gang``; return the result and the placement layer (its reservations).

    Runs the engine itself rather than :func:`gangkit.simulate`, to keep the layer the run used.
    """
    sc = scenario(node_list, jobs, volcano=VolcanoSetup(list(queues)), stack="gang", ordering=ordering, **settings)
    sim = Simulation(sc, build_stack("gang", sc.settings, sc))
    sim.run()
    return build_result(sim), sim.stack.placement




# Two 8-GPU nodes. R (queue b) holds 2 GPUs on each node until 100, so H (queue a, one 8-GPU pod)
# cannot start before 100. X (queue c, two 4-GPU pods, 300 s) fits now, but only by using both
# nodes, so it would delay H. Guarantees give a and c 8 GPUs each as their deserved share, and b
# the 4 GPUs R holds (a queue without one could get nothing: guarantees are kept even while idle).
GUARANTEED = [Queue("a", guarantee=gpus(8)), Queue("b", guarantee=gpus(4)), Queue("c", guarantee=gpus(8))]
R = job("R", pods=2, gpus=2, run_time=100, volcano_queue="b")
H = job("H", pods=1, gpus=8, run_time=100, submit_time=1, volcano_queue="a")
X = job("X", pods=2, gpus=4, run_time=300, submit_time=2, volcano_queue="c")
# One 16-GPU node. Queue c may never hold more than 4 GPUs: its 12-GPU job Y never starts;
# a reservation for Y now would leave Z (queue a, 8 GPUs) too little room, but Y gets none.
CAPPED = [Queue("a"), Queue("c", capability=gpus(4))]
Y = job("Y", pods=1, gpus=12, run_time=100, volcano_queue="c")
Z = job("Z", pods=1, gpus=8, run_time=100, submit_time=1, volcano_queue="a")
# R2 (queue b) holds both nodes until 100; in queue a, 'small' (8 GPUs) came before 'big' (16).
R2 = job("R2", pods=2, gpus=8, run_time=100, volcano_queue="b")
SMALL = job("small", pods=1, gpus=8, run_time=100, submit_time=1, volcano_queue="a")
BIG = job("big", pods=2, gpus=8, run_time=100, submit_time=2, volcano_queue="a")

CASES = [
    # (id, nodes, queues, jobs, ordering, expected {job: (start, finish, state)}, first reservations)
    ("skip: X of queue c starts at once and H of queue a waits until X ends",
     nodes(2, gpus=8), GUARANTEED, [R, H, X], "skip",
     {"R": (0, 100, "Finished"), "H": (302, 402, "Finished"), "X": (2, 302, "Finished")}, {}),
    ("easy-backfill, one book over all queues: X of queue c would delay queue a's head H, so it waits",
     nodes(2, gpus=8), GUARANTEED, [R, H, X], "easy-backfill",
     {"R": (0, 100, "Finished"), "H": (100, 200, "Finished"), "X": (100, 400, "Finished")}, {"H": 100}),
    ("conservative-backfill: H and X both get reservations, in allocate's order",
     nodes(2, gpus=8), GUARANTEED, [R, H, X], "conservative-backfill",
     {"R": (0, 100, "Finished"), "H": (100, 200, "Finished"), "X": (100, 400, "Finished")}, {"H": 100, "X": 100}),
    ("easy-backfill: Y, held back by its queue's capability, gets no reservation and Z starts",
     nodes(1, gpus=16), CAPPED, [Y, Z], "easy-backfill",
     {"Y": (NAN, NAN, "WaitingAtEnd"), "Z": (1, 101, "Finished")}, {}),
    ("conservative-backfill: the same, no reservation for a job its queue holds back",
     nodes(1, gpus=16), CAPPED, [Y, Z], "conservative-backfill",
     {"Y": (NAN, NAN, "WaitingAtEnd"), "Z": (1, 101, "Finished")}, {}),
    ("largest-first orders queue a's jobs by gang GPUs: big before small",
     nodes(2, gpus=8), [Queue("a"), Queue("b")], [R2, SMALL, BIG], "largest-first",
     {"R2": (0, 100, "Finished"), "big": (100, 200, "Finished"), "small": (200, 300, "Finished")}, {}),
    ("skip keeps queue a's creation order: small before big",
     nodes(2, gpus=8), [Queue("a"), Queue("b")], [R2, SMALL, BIG], "skip",
     {"R2": (0, 100, "Finished"), "small": (100, 200, "Finished"), "big": (200, 300, "Finished")}, {}),
    ("volcano-backfill places queue b's best-effort pods on a node queue a fills",
     nodes(1, gpus=8), [Queue("a"), Queue("b")],
     [job("R", pods=1, gpus=8, run_time=100, volcano_queue="a"),
      job("be", pods=3, gpus=0, run_time=10, submit_time=1, volcano_queue="b")], "volcano-backfill",
     {"R": (0, 100, "Finished"), "be": (1, 11, "Finished")}, {}),
    ("skip: queue b asks for nothing, so its deserved share is 0, it counts as overused and allocate skips it",
     nodes(1, gpus=8), [Queue("a"), Queue("b")],
     [job("R", pods=1, gpus=8, run_time=100, volcano_queue="a"),
      job("be", pods=3, gpus=0, run_time=10, submit_time=1, volcano_queue="b")], "skip",
     {"R": (0, 100, "Finished"), "be": (NAN, NAN, "WaitingAtEnd")}, {}),
]


@pytest.mark.parametrize("node_list, queues, jobs, ordering, expected, reservations",
                         [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_ordering_with_queues(node_list, queues, jobs, ordering, expected, reservations):
    result, layer = run(node_list, jobs, queues, ordering, horizon=2000)
    want = {k: (float(a), float(b), s) for k, (a, b, s) in expected.items()}
    assert same_start_finish(start_finish(result), want), start_finish(result)
    assert layer.first_reservation == reservations


@pytest.mark.parametrize("ordering", ORDERINGS)
def test_preempt_works_under_every_ordering(ordering):
    """A higher-priority gang of the same queue evicts a running sync gang whatever the ordering."""
    jobs = [job("low", pods=4, run_time=100), job("high", pods=2, run_time=50, priority=10, submit_time=10)]
    result, _ = run(nodes(1, gpus=4), jobs, [], ordering, preemption=True)
    t = start_finish(result)
    assert t["high"] == (10.0, 60.0, "Finished") and t["low"] == (0.0, 160.0, "Finished")
    pods = result.pods
    assert pods[pods.state == "Evicted"].job.value_counts().to_dict() == {"low": 4}


@pytest.mark.parametrize("ordering", ORDERINGS)
def test_reclaim_works_under_every_ordering(ordering):
    """Queue b reclaims its deserved half from queue a, the newest of a's jobs first."""
    jobs = [job(f"a{i}", pods=1, gpus=1, run_time=1000, submit_time=0, volcano_queue="a") for i in range(8)]
    jobs.append(job("b", pods=4, run_time=100, volcano_queue="b", submit_time=10))
    result, _ = run(nodes(1, gpus=8), jobs, [Queue("a"), Queue("b")], ordering, preemption=True)
    assert start_finish(result)["b"] == (10.0, 110.0, "Finished")
    pods = result.pods
    assert pods[pods.state == "Evicted"].job.value_counts().to_dict() == {"a4": 1, "a5": 1, "a6": 1, "a7": 1}


def random_scenario(seed: int) -> gk.Scenario:
    rng = random.Random(seed)
    queues = [Queue("a", weight=rng.randint(1, 3)), Queue("b", weight=rng.randint(1, 3),
              capability=gpus(rng.choice([4, 8, 12])) if rng.random() < 0.5 else None),
              Queue("c", reclaimable=rng.random() < 0.5)]
    jobs = []
    for i in range(14):
        pods = rng.randint(1, 4)
        jobs.append(Job(f"j{i}", [PodSet("w", pods, rng.choice([1, 2]))], run_time=rng.choice([50, 200, 500]),
                        submit_time=rng.choice([0, 10, 30, 120]), priority=rng.choice([0, 5, 10]),
                        progress=rng.choice(["sync", "independent"]), min_member=rng.randint(1, pods),
                        volcano_queue=rng.choice("abc"), controller=rng.choice(["batch", "volcano"])))
    return scenario(gpu_nodes(3, gpus=4), jobs, volcano=VolcanoSetup(queues))


@pytest.mark.parametrize("ordering", ORDERINGS)
@pytest.mark.parametrize("seed", range(4))
def test_random_queues_under_every_ordering(seed, ordering, monkeypatch):
    """Evictions keep victims at minMember, GPUs add up, nothing waiting is lost, and the run repeats exactly."""
    real_evict_pod = Simulation.evict_pod

    def evict_pod(self, pod, reason):
        real_evict_pod(self, pod, reason)
        js = pod.job
        assert js.bound == 0 or js.bound >= js.gang_size, f"{js.name} left with {js.bound} of {js.gang_size}"

    monkeypatch.setattr(Simulation, "evict_pod", evict_pod)
    settings = dict(stack="gang", ordering=ordering, preemption=True, horizon=20000, estimate_factor=2)
    first = gk.simulate(random_scenario(seed), **settings)
    sc = random_scenario(seed).with_settings(**settings)
    sim = Simulation(sc, build_stack("gang", sc.settings, sc))
    sim.run()
    again = build_result(sim)
    t = first.timeline
    assert ((t.useful_gpus + t.held_idle_gpus + t.free_gpus + t.not_ready_gpus) == t.capacity_gpus).all()
    assert first.jobs.equals(again.jobs) and first.events.equals(again.events)
    layer = sim.stack.placement
    kept = ({e[2] for h in layer.cache.pending.values() for e in h} | set(layer.cache.partial) | {e[2] for e in layer.cache.creating}
            | {e[2] for shapes in layer.cache.shapes.values() for h in shapes.values() for e in h})
    for js in sim.jobs:
        if js.state == "Pending" and any(p.node is None and not p.done for p in js.pods):
            assert js.index in kept, f"{js.name} waits but the layer lost it"


@pytest.mark.parametrize("ordering", ["easy-backfill", "conservative-backfill"])
@pytest.mark.parametrize("seed", range(4))
def test_reservation_shortcuts_change_no_decision_with_queues(seed, ordering):
    """Differential test: the book's fast paths against the plain search, on random multi-queue runs."""
    from gangkit.volcano.scheduler import VolcanoGang

    sc = random_scenario(seed)

    def layer(shortcuts):
        return gk.Stack(VolcanoGang(ordering, setup=sc.volcano, preemption=True,
                                    fast_paths=FastPaths(reservation_shortcuts=shortcuts)), name="gang")

    fast = gk.simulate(sc, stack=layer(True), preemption=True, horizon=20000, estimate_factor=2)
    plain = gk.simulate(sc, stack=layer(False), preemption=True, horizon=20000, estimate_factor=2)
    assert fast.jobs.equals(plain.jobs) and fast.pods.equals(plain.pods)
