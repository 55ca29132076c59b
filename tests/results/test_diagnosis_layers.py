"""Diagnosis under each placement layer: the layer's own reason wins, and shortages are named in what is short.

One row per placement layer and reason code: a small scenario, the job and instant asked about,
the code the diagnosis must give, phrases its message must hold, and phrases it must not (the
generic GPU words that used to stand in for every reason). Rows for CPU and memory check that a
pod short of cores is described as short of cores, in kube-scheduler's FailedScheduling form
("0/N nodes are available: N Insufficient cpu.", Kubernetes 1.35 ``FitError``).
"""

from __future__ import annotations

import pytest

import gangkit as gk
from gangkit import Job, Node, PodSet, Scenario, job, nodes
from gangkit.engine.simulation import Simulation
from gangkit.kueue import GPU
from gangkit.model.reasons import CATALOGUE
from gangkit.model.resources import Resources
from gangkit.placement.coscheduling import Coscheduling
from gangkit.results.diagnosis import CODES, GENERIC_CODES, LAYER_CODES, WAITING, diagnose_job
from gangkit.stacks import Stack
from gangkit.supply.cloud import InstanceType
from gangkit.supply.karpenter import Karpenter, NodePool
from gangkit.volcano.api import Queue, VolcanoSetup

from builders import GIB, gang, gpu_nodes, holder, one_cluster_queue
from paths import EXAMPLES


def cpu_job(name, pods, cpu, run_time=600.0, **kw):
    """A job of ``pods`` pods that ask for ``cpu`` cores and no GPU."""
    return gang(name, pods, 0, cpu=cpu, run_time=run_time, **kw)


def team_queue(volcano_capability=16, controller="batch"):
    """The scenario of the report: Kueue admits 32 GPUs, the Volcano queue ``default`` may hold 16."""
    kueue = one_cluster_queue(32, flavor="gpu", cluster_queue="team")
    return Scenario(gpu_nodes(4), [gang("train", 4, 8, run_time=3600, controller=controller)], kueue=kueue,
                    volcano=VolcanoSetup([Queue("default", capability=Resources(volcano_capability, 0.0, 0))]))


def busy(*jobs, gpus=8, count=1, **kw):
    """``count`` nodes of ``gpus`` GPUs, the first kept busy by Z for 1000 s; the jobs come at t=1 s."""
    return Scenario(gpu_nodes(count, gpus, **kw), [holder(gpus), *jobs])


def with_pool_limit(sc, limit):
    """A Karpenter NodePool of 8-GPU nodes already at ``limit`` GPUs (0: it may launch nothing)."""
    sc.karpenter = Karpenter([NodePool("gpu", ["g8"], limits={GPU: limit}, consolidate_after=None)],
                             [InstanceType("g8", 8, 8.0)])
    return sc


def brief(sc, horizon=1000.0):
    """The scenario cut at ``horizon`` (a gang that waits at Permit for ever is held and released each round)."""
    return sc.with_settings(horizon=horizon)


def partial_admission(min_member):
    """Kueue admits 3 of 4 pods (partial admission); the gang asks for ``min_member``."""
    return Scenario(nodes(3, gpus=1), [Job("g", [PodSet("workers", 4, 1, min_count=3)], run_time=100, min_member=min_member)])


CPU9 = [Node("cpu-0", gpus=0, cpu=9.0)]
GPU_WORDS = ["Insufficient nvidia.com/gpu", "GPUs free", "GPUs unschedulable", "0 GPUs"]

CASES = [
    # (id, scenario, stack, job, at, code, words in the message, words not in it)
    # -- pod: kube-scheduler, pod by pod
    ("pod: GPUs short", busy(job("A", pods=2, gpus=8, submit_time=1)), "pod", "A", 100, "Unschedulable",
     ["2 of 2 pods of 8 GPUs unschedulable (largest free block is 0 GPUs): 0/1 nodes are available: "
      "1 Insufficient nvidia.com/gpu."], []),
    ("pod: cores short on nodes with GPUs to spare",
     Scenario(nodes(2, gpus=8, cpu=8.0), [cpu_job("Z", 2, 6.0, run_time=1000), cpu_job("A", 1, 4.0, submit_time=1)]),
     "pod", "A", 10, "Unschedulable",
     ["1 of 1 pod of 4 cpu unschedulable (most free on one node is 2 cpu): 0/2 nodes are available: 2 Insufficient cpu."],
     GPU_WORDS),
    ("pod: memory short",
     Scenario(nodes(2, gpus=8, memory=64 * GIB), [Job("Z", [PodSet("w", 2, gpus=1, memory=60 * GIB)], run_time=1000),
                                                   Job("A", [PodSet("w", 1, gpus=1, memory=16 * GIB)], run_time=100,
                                                       submit_time=1)]),
     "pod", "A", 10, "Unschedulable",
     ["of 16Gi memory unschedulable (most free on one node is 4Gi memory)", "0/2 nodes are available: 2 Insufficient memory."],
     GPU_WORDS),
    ("pod: GPUs and cores short, both named, reasons sorted as kube-scheduler sorts them",
     Scenario(nodes(2, gpus=8, cpu=8.0), [Job("Z", [PodSet("w", 2, gpus=6, cpu=7.0)], run_time=1000),
                                          Job("A", [PodSet("w", 1, gpus=4, cpu=4.0)], run_time=100, submit_time=1)]),
     "pod", "A", 10, "Unschedulable",
     ["(largest free block is 2 GPUs; most free on one node is 1 cpu)",
      "0/2 nodes are available: 2 Insufficient cpu, 2 Insufficient nvidia.com/gpu."], []),
    ("pod: a node selector that only a busy node matches",
     Scenario(nodes(1, gpus=8, labels={"zone": "a"}) + nodes(2, gpus=8, prefix="b", labels={"zone": "b"}),
              [Job("Z", [PodSet("w", 1, gpus=8, node_selector={"zone": "a"})], run_time=1000),
               Job("A", [PodSet("w", 1, gpus=1, node_selector={"zone": "a"})], run_time=100, submit_time=1)]),
     "pod", "A", 10, "Unschedulable",
     ["(largest free block is 0 GPUs)", "0/3 nodes are available: 1 Insufficient nvidia.com/gpu, "
                                        "2 node(s) didn't match Pod's node affinity/selector."], []),
    ("pod: half a gang holds GPUs", gk.scenarios.two_gangs_deadlock(), "pod", "A", 100, "PartiallyPlaced",
     ["2 of 4 pods bound hold 2 GPUs without progress; 2 pods of 1 GPUs unschedulable (largest free block is 0 GPUs)",
      "deadlock"], []),
    ("pod: part of a CPU gang holds cores", Scenario(nodes(1, gpus=0, cpu=4.0), [cpu_job("A", 3, 2.0)]), "pod", "A", 10,
     "PartiallyPlaced", ["2 of 3 pods bound hold 4 cpu without progress; 1 pod of 2 cpu unschedulable "
                         "(most free on one node is 0 cpu)", "deadlock"], GPU_WORDS),
    # -- gang: Volcano
    ("gang: GPUs short", Scenario(nodes(2, gpus=8), [job("Z", gpus=4, run_time=1000), job("Y", gpus=8, run_time=1000),
                                                     job("A", pods=2, gpus=8)]), "gang", "A", 10, "GangCannotFit",
     ["gang of 2 pods (16 GPUs, 8 per pod) cannot fit: largest free block is 4 GPUs, 4 GPUs free in all"], []),
    ("gang: cores short", Scenario(nodes(2, gpus=8, cpu=8.0), [cpu_job("Z", 1, 6.0, run_time=1000),
                                                             cpu_job("A", 4, 4.0, submit_time=1)]),
     "gang", "A", 10, "GangCannotFit",
     ["gang of 4 pods (16 cpu, 4 per pod) cannot fit: most free on one node is 8 cpu, 10 cpu free in all"], GPU_WORDS),
    ("gang: a Volcano queue's deserved share holds a gang Kueue admitted (32 GPUs free)", team_queue(), "kueue+gang",
     "train", 500, "QueueOverDeserved",
     ["would take queue 'default' above its deserved share", "realCapability of 16 GPUs"], GPU_WORDS),
    ("gang: a Volcano Job held at enqueue by its queue's capability has no pods yet",
     team_queue(controller="volcano"), "kueue+gang", "train", 500, "QueueCapabilityExceeded",
     ["PodGroup stays Pending", "above its capability of 16 GPUs"], GPU_WORDS + ["pods", "unschedulable"]),
    ("gang: the overcommit plugin keeps a PodGroup Pending",
     busy(job("A", gpus=8, controller="volcano", submit_time=1)), "gang", "A", 100, "ClusterOverused",
     ["PodGroup stays Pending: its minimum (8 GPUs)", "idle room times the overcommit factor"], GPU_WORDS[:1]),
    ("gang: conservative backfill holds a reservation",
     Scenario(nodes(2, gpus=8), [job("Z", gpus=8, run_time=1000), job("big", pods=2, gpus=8, submit_time=1),
                                 job("small", gpus=4, submit_time=2, run_time=5000)]).with_settings(
         ordering="conservative-backfill"), "gang", "big", 100, "WaitingForReservation",
     ["gang of 2 holds a reservation at t=1000 s (ordering conservative-backfill)"], GPU_WORDS[:1]),
    ("gang: minMember 2 of 3 is ready, the third pod never fits",
     busy(job("A", pods=3, gpus=4, min_member=2, submit_time=1)), "gang", "A", 1100, "PodsCannotFit",
     ["gang of 2 is ready with 2 of 3 pods; the other 1 cannot fit now", "deadlock"], GPU_WORDS[:1]),
    ("gang: fits now, waits for the next session", busy(job("A", gpus=8)).with_settings(session_period=7.0), "gang",
     "A", 1000, "WaitingForSession", ["fits now; placed at the next session"], []),
    # -- coscheduling: scheduler-plugins
    ("coscheduling: Kueue admitted fewer pods than minMember", partial_admission(4), "kueue+coscheduling", "g", 10,
     "NotEnoughPods", ["PodGroup of g has minMember 4 but only 3 pods", "current pods number: 3, minMember of group: 4"], GPU_WORDS[:1]),
    ("coscheduling: rejected by PostFilter, waits for GPUs to be freed", gk.load_file(EXAMPLES / "coscheduling.yaml"),
     "coscheduling", "big", 20, "GangRejected", ["PodGroup big was rejected at t=0 s", "(2 GPUs free now)"],
     GPU_WORDS[:1]),
    ("coscheduling: rejected by PostFilter, waits for cores to be freed",
     Scenario([Node("cpu-0", gpus=0, cpu=4.0)], [cpu_job("Z", 1, 2.0, run_time=1000), cpu_job("g", 4, 1.0)]),
     "coscheduling", "g", 20, "GangRejected", ["was rejected at t=0 s", "(2 cpu free now)"], GPU_WORDS),
    ("coscheduling: 9 of 10 wait at Permit holding GPUs", brief(Scenario(nodes(1, gpus=9), [job("A", pods=10, gpus=1)])),
     "coscheduling", "A", 10, "WaitingAtPermit",
     ["9 of minMember 10 pods wait at Permit holding 9 GPUs; 1 pods unschedulable (0 GPUs free); rejected at t=60 s"],
     []),
    ("coscheduling: 9 of 10 wait at Permit holding cores (scheduleTimeoutSeconds 10), released and held again",
     brief(Scenario(CPU9, [cpu_job("A", 10, 1.0, schedule_timeout=10)])), "coscheduling", "A", 25, "WaitingAtPermit",
     ["9 of minMember 10 pods wait at Permit holding 9 cpu; 1 pods unschedulable (0 cpu free); rejected at t=30 s"],
     GPU_WORDS),
    ("coscheduling: independent pods, no group: kube-scheduler's words",
     busy(job("A", pods=2, gpus=8, progress="independent", submit_time=1)), "coscheduling", "A", 10, "Unschedulable",
     ["0/1 nodes are available: 1 Insufficient nvidia.com/gpu."], []),
    # -- kube-gang: Kubernetes 1.35 GangScheduling
    ("kube-gang: fewer pods than minCount wait at PreEnqueue", partial_admission(4), "kueue+kube-gang", "g", 10,
     "WaitingForPods", ["3 of minCount 4 pods exist"], GPU_WORDS[:1]),
    ("kube-gang: 9 of 10 wait at Permit holding GPUs", brief(Scenario(nodes(1, gpus=9), [job("A", pods=10, gpus=1)])),
     "kube-gang", "A", 10, "WaitingAtPermit", ["9 of minCount 10 pods wait at Permit holding 9 GPUs"], []),
    ("kube-gang: CPU pods at Permit beside another job, after a timeout (once a TypeError)",
     Scenario([Node("cpu-0", gpus=0, cpu=4.0)], [cpu_job("Z", 1, 2.0, run_time=1000), cpu_job("A", 4, 1.0)]),
     "kube-gang", "A", 400, "WaitingAtPermit",
     ["2 of minCount 4 pods wait at Permit holding 2 cpu; 2 pods unschedulable (0 cpu free); rejected at t=600 s"],
     GPU_WORDS),
    ("kube-gang: a basic pod group: kube-scheduler's words",
     busy(job("A", pods=2, gpus=8, progress="independent", submit_time=1)), "kube-gang", "A", 10, "Unschedulable",
     ["0/1 nodes are available: 1 Insufficient nvidia.com/gpu."], []),
    # -- yunikorn: placeholders
    ("yunikorn: no placeholder allocated", busy(job("A", pods=2, gpus=8, submit_time=1)), "yunikorn", "A", 10,
     "PlaceholdersPending", ["0 of 2 placeholders allocated (0 GPUs free); no timeout runs until one is"], []),
    ("yunikorn: one of two placeholders allocated", busy(job("A", pods=2, gpus=8, submit_time=1), count=2), "yunikorn",
     "A", 10, "PlaceholdersPending", ["1 of 2 placeholders allocated, holding 8 GPUs; released at t=901 s"], []),
    ("yunikorn: Soft fallback after the timeout, one pod bound",
     busy(job("A", pods=2, gpus=8, submit_time=1, placeholder_timeout=60), count=2), "yunikorn", "A", 100,
     "PartiallyPlaced", ["1 of 2 pods bound hold 8 GPUs without progress; 1 pod of 8 GPUs unschedulable"], []),
    ("yunikorn: independent pods: kube-scheduler's words",
     busy(job("A", pods=2, gpus=8, progress="independent", submit_time=1)), "yunikorn", "A", 10, "Unschedulable",
     ["0/1 nodes are available: 1 Insufficient nvidia.com/gpu."], []),
    # -- what only the whole cluster knows: a NodePool at its limit, where more nodes would help
    ("coscheduling+karpenter: waiting at Permit and no node coming",
     with_pool_limit(brief(Scenario(nodes(1, gpus=9), [job("A", pods=10, gpus=1)])), 0), "coscheduling+karpenter", "A", 10,
     "NodePoolLimit", ["9 of minMember 10 pods wait at Permit holding 9 GPUs", "no node coming: NodePool gpu at 0 of "
                                                                                 "its 0-GPU limit"], []),
    ("gang+karpenter: a queue's deserved share is no matter of nodes: no NodePool words",
     with_pool_limit(team_queue(), 0), "kueue+gang+karpenter", "train", 500, "QueueOverDeserved",
     ["above its deserved share"], ["no node coming"]),
]


@pytest.mark.parametrize("scenario, stack, name, at, code, words, absent", [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_each_layer_reason(scenario, stack, name, at, code, words, absent):
    d = gk.simulate(scenario, stack=stack).diagnose(job=name, at=at)
    assert (d.code, d.layer) == (code, "placement"), str(d)
    for w in words:
        assert w in d.message, str(d)
    for w in absent:
        assert w not in d.message, str(d)
    assert d.waiting and code in WAITING
    assert {"free_gpus", "largest_free_block", "pod_gpus"} <= set(d.numbers)


def test_every_layer_code_has_a_row():
    assert set(LAYER_CODES) <= {c[5] for c in CASES} | {"PodGroupBackoff"}  # the backoff: its own test below


def test_the_codes_passed_on_are_the_placement_layers_waiting_codes():
    """Every waiting code a placement layer gives is either passed on or worded by the diagnosis: a new one must be placed."""
    placement = {e.code for e in CATALOGUE.values() if e.layer == "placement" and e.bucket == "placement"}
    assert placement == set(LAYER_CODES) | set(GENERIC_CODES) | {"WaitingForSession"}
    assert set(LAYER_CODES) <= set(CODES)


def test_a_backed_off_podgroup_says_until_when():
    """podGroupBackoffSeconds is a setting of the plugin, not of a stack name: a hand-made stack, diagnosed live."""
    sc = Scenario(nodes(1, gpus=4), [job("blocker", gpus=2, run_time=10), job("g", pods=4, run_time=100)])
    sim = Simulation(sc, Stack(Coscheduling(pod_group_backoff=30), name="coscheduling"))
    sim.run(until=15)
    d = diagnose_job(sim, next(js for js in sim.jobs if js.name == "g"), 15.0)
    assert (d.code, d.layer) == ("PodGroupBackoff", "placement"), str(d)
    assert "PodGroup g failed recently; backed off until t=30 s" in d.message
    assert d.numbers["until"] == 30.0


NUMBERS = [
    # (row id of CASES, a number of the layer's own that the diagnosis must carry, its value)
    ("gang: a Volcano queue's deserved share holds a gang Kueue admitted (32 GPUs free)", "queue", "default"),
    ("gang: a Volcano queue's deserved share holds a gang Kueue admitted (32 GPUs free)", "free_gpus", 32),
    ("gang: a Volcano Job held at enqueue by its queue's capability has no pods yet", "queue_capability_gpus", 16),
    ("coscheduling: 9 of 10 wait at Permit holding cores (scheduleTimeoutSeconds 10), released and held again",
     "held_cpu", 9.0),
    ("pod: cores short on nodes with GPUs to spare", "reasons", {"Insufficient cpu": 2}),
]


@pytest.mark.parametrize("case, key, value", NUMBERS, ids=[f"{c}: {k}" for c, k, _ in NUMBERS])
def test_the_numbers_keep_the_diagnosis_figures_and_add_the_layers(case, key, value):
    scenario, stack, name, at = next(c[1:5] for c in CASES if c[0] == case)
    d = gk.simulate(scenario, stack=stack).diagnose(job=name, at=at)
    assert d.numbers[key] == value, d.numbers
