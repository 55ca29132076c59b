"""Every gang variant with Karpenter behind it, at scale-to-zero: what the provisioner sees, and when.

Karpenter provisions only for pods that are Pending with ``PodScheduled=False``
and reason ``Unschedulable`` and that no node is expected for (Karpenter
``pkg/utils/pod/scheduling.go``, ``IsProvisionable``). Each variant decides
which of its pods carry that condition: a Volcano Job has no pods before its
PodGroup is Inqueue; kube-gang's pods are held at PreEnqueue (never tried, no
condition) until ``minCount`` exist; coscheduling's PreFilter refuses them
(a failed attempt: Unschedulable); YuniKorn shows its placeholders; pods
waiting at Permit, and YuniKorn's allocated placeholders, are on a node.

Clusters start with one CPU-only node (a scenario needs one); Karpenter
brings every GPU node, an 8-GPU type, ready ``batch_idle`` + 60 s + 90 s
after the first unschedulable pod unless a case draws random start-up times.
"""

from __future__ import annotations

import math

import pandas as pd
import pytest

import gangkit as gk
from gangkit import Job, Node, PodSet, Scenario, job
from gangkit.supply.cloud import InstanceType, Stages, uniform
from gangkit.supply.karpenter import Karpenter, NodePool

CPU_ONLY = [Node("system-0", 0)]
PLACEMENTS = ("pod", "gang", "coscheduling", "yunikorn", "kube-gang")
NEW = [f"{q}{p}+karpenter" for q in ("", "kueue+") for p in PLACEMENTS if p != "gang"]
NAN = math.nan


def karpenter(limit=None, stages=None) -> Karpenter:
    limits = {} if limit is None else {"nvidia.com/gpu": limit}
    pool = NodePool("gpu", ["g8"], limits=limits, consolidate_after=30.0, budget="100%")
    return Karpenter([pool], [InstanceType("g8", 8, 8.0)], stages=stages)


def run(stack, jobs, nodes=CPU_ONLY, limit=None, stages=None, horizon=3000, seed=0):
    sc = Scenario(list(nodes), jobs, karpenter=karpenter(limit, stages), name="scale-to-zero")
    return gk.simulate(sc, stack=stack, horizon=horizon, seed=seed)


def seen(result) -> pd.DataFrame:
    return result.metrics["gangkit_karpenter_pods_seen"]


def launched(result) -> int:
    return len(result.metrics["karpenter_nodeclaims_created_total"])


def rows(result):
    return result.jobs.set_index("job")


def test_every_placement_layer_comes_with_karpenter_with_and_without_kueue():
    for p in PLACEMENTS:
        for name in (f"{p}+karpenter", f"kueue+{p}+karpenter"):
            assert name in gk.STACKS
            stack = gk.build_stack(name, gk.RunSettings(), Scenario(list(CPU_ONLY), [job("a", gpus=8)]))
            assert [s.name for s in stack.suppliers] == ["karpenter"]
            assert len(stack.admission) == (1 if name.startswith("kueue+") else 0)


@pytest.mark.parametrize("name, words", [
    ("karpenter+coscheduling", "not in this combination"),
    ("kueue+yunikorn+autoscaler", "not in this combination"),
    ("coscheduling+yunikorn+karpenter", "not in this combination"),
    ("kueue+slurm+karpenter", "unknown stack"),
])
def test_a_stack_name_that_is_not_built_is_refused_with_one_clear_error(name, words):
    with pytest.raises(gk.ScenarioError) as e:
        gk.build_stack(name, gk.RunSettings(), Scenario(list(CPU_ONLY), [job("a", gpus=8)]))
    assert words in str(e.value) and name in str(e.value)


# -- scale-to-zero: the gang ends up running on nodes Karpenter launched for it -------------------
@pytest.mark.parametrize("stack", NEW + ["gang+karpenter", "kueue+gang+karpenter"])
def test_scale_to_zero_launches_what_the_gang_needs_and_starts_it_when_the_nodes_are_ready(stack):
    r = run(stack, [job("big", pods=4, gpus=8, run_time=600)])
    k = karpenter()
    stages = k.stages
    assert launched(r) == 4  # 4 pods x 8 GPUs on 8-GPU nodes
    row = rows(r).loc["big"]
    assert row["state"] == "Finished"
    assert row["start_s"] == k.batch_idle + stages.registered + stages.initialized
    assert r.figures["held_idle_gpu_seconds"] == 0.0  # all nodes come at once: nobody holds a node waiting


# -- what the provisioner sees first, and when ------------------------------------------------------
def volcano_job():
    return job("g", pods=4, gpus=8, run_time=600, controller="volcano")


def partly_admitted():
    """Kueue admits 3 of 4 pods (partial admission: its default quota is the NodePool limit, 24 GPUs);
    the PodGroup or Workload still says 4."""
    return Job("g", [PodSet("workers", 4, 8, min_count=3)], run_time=600, min_member=4)


VISIBILITY = [
    # (id, stack, job, pods Karpenter saw, when it first saw one, nodes launched, start of g)
    ("a Volcano Job has no pods before its PodGroup is Inqueue, and nothing is Inqueue on an empty cluster: "
     "Karpenter sees nothing and launches nothing", "gang+karpenter", volcano_job(), 0, None, 0, NAN),
    ("a batch/v1 Job under Volcano: its pods exist and are Unschedulable at once",
     "gang+karpenter", job("g", pods=4, gpus=8, run_time=600), 4, 0.0, 4, 151.0),
    ("kube-gang with 3 of minCount 4 pods: held at PreEnqueue, never tried, no condition: Karpenter sees nothing",
     "kueue+kube-gang+karpenter", partly_admitted(), 0, None, 0, NAN),
    ("kube-gang once minCount pods exist: tried, Unschedulable, seen at once",
     "kube-gang+karpenter", job("g", pods=4, gpus=8, run_time=600), 4, 0.0, 4, 151.0),
    ("coscheduling with 3 of minMember 4 pods: PreFilter refuses them, which marks them Unschedulable: "
     "Karpenter launches 3 nodes that the group can never use", "kueue+coscheduling+karpenter", partly_admitted(),
     3, 0.0, 3, NAN),
    ("YuniKorn: the placeholders are what Karpenter sees (the real pods are not sent to the scheduler yet)",
     "yunikorn+karpenter", job("g", pods=4, gpus=8, run_time=600), 4, 0.0, 4, 151.0),
]


@pytest.mark.parametrize("stack, the_job, n_seen, first, nodes, start", [c[1:] for c in VISIBILITY],
                         ids=[c[0] for c in VISIBILITY])
def test_what_karpenter_sees_at_scale_to_zero(stack, the_job, n_seen, first, nodes, start):
    r = run(stack, [the_job], limit=24 if the_job.pod_sets[0].min_count else None, horizon=1000)
    s = seen(r)
    assert len(s) == n_seen
    assert (s.time_s.min() if len(s) else None) == first
    assert launched(r) == nodes
    got = rows(r).loc["g", "start_s"]
    assert (math.isnan(got) and math.isnan(start)) or got == start


PART_FITS = [
    # (id, stack, pods Karpenter saw, GPU-seconds held idle until the new node is ready)
    ("Volcano discards a trial that does not fit: all 4 pods are unschedulable, nothing held", "gang+karpenter", 4, 0),
    ("coscheduling rejects the group (1 of 4 missing is over 10 %): all 4 unschedulable, nothing held",
     "coscheduling+karpenter", 4, 0),
    ("kube-gang: 3 pods wait at Permit (assumed on the node, not unschedulable); Karpenter sees the 4th",
     "kube-gang+karpenter", 1, 3 * 151),
    ("YuniKorn: 3 placeholders allocated hold the node; Karpenter sees the 4th placeholder",
     "yunikorn+karpenter", 1, 3 * 151),
    ("pod by pod: 3 pods bound and idle; Karpenter sees the 4th", "pod+karpenter", 1, 3 * 151),
]


@pytest.mark.parametrize("stack, n_seen, held", [c[1:] for c in PART_FITS], ids=[c[0] for c in PART_FITS])
def test_when_part_of_the_gang_fits_on_a_node_that_exists(stack, n_seen, held):
    """A 3-GPU node exists; a gang of 4 one-GPU pods needs one more node; all start when it is ready."""
    r = run(stack, [job("g", pods=4, gpus=1, run_time=600)], nodes=[Node("n0", 3)])
    assert len(seen(r)) == n_seen
    assert launched(r) == 1
    assert rows(r).loc["g", "start_s"] == 151.0
    assert r.figures["held_idle_gpu_seconds"] == held


# -- a NodePool limit below the gang: what each variant holds while it waits ------------------------
LIMIT = [
    # (id, stack, state of big, GPU-seconds big holds idle by t=3000, start of small)
    ("pod by pod: big binds 2 of 4 pods on the 2 nodes the limit allows and holds them for ever; small never runs",
     "pod+karpenter", "Deadlocked", 16 * (3000 - 151), NAN),
    ("Volcano: big holds nothing, small runs on the nodes launched for big", "gang+karpenter", "WaitingAtEnd", 0, 151.0),
    ("coscheduling: PostFilter rejects big (half missing), small runs on its nodes", "coscheduling+karpenter",
     "WaitingAtEnd", 0, 151.0),
    ("YuniKorn: 2 placeholders hold both nodes; after 900 s the Soft style places the real pods one by one, "
     "which hold the same nodes: a deadlock", "yunikorn+karpenter", "Deadlocked", 16 * (3000 - 151), NAN),
    ("kube-gang: big holds both nodes at Permit, round after round of 300 s; small slips in once, when the second "
     "round ends (at the first, big's pods that had found no node sort before it)", "kube-gang+karpenter",
     "WaitingAtEnd", 16 * (3000 - 151 - 300), 751.0),
    ("Kueue's default quota is the NodePool limit: big stays in the queue, holding nothing",
     "kueue+yunikorn+karpenter", "WaitingAtEnd", 0, 161.0),
    ("likewise in front of pod-by-pod placement", "kueue+pod+karpenter", "WaitingAtEnd", 0, 161.0),
]


@pytest.mark.parametrize("stack, state, held, small_start", [c[1:] for c in LIMIT], ids=[c[0] for c in LIMIT])
def test_a_nodepool_limit_below_the_gang(stack, state, held, small_start):
    jobs = [job("big", pods=4, gpus=8, run_time=600), job("small", pods=2, gpus=8, run_time=300, submit_time=10)]
    r = run(stack, jobs, limit=16, horizon=3000)
    t = rows(r)
    assert t.loc["big", "state"] == state, t.loc["big", "reason"]
    assert t.loc["big", "held_idle_gpu_s"] == held
    got = t.loc["small", "start_s"]
    assert (math.isnan(got) and math.isnan(small_start)) or got == small_start
    assert launched(r) == 2  # the limit: 16 GPUs, two 8-GPU nodes


# -- node start-up times vs the holding timeouts -----------------------------------------------------
SPREAD = Stages(registered=uniform(30, 400), initialized=90)


def ready_times(result) -> list[float]:
    return sorted(result.metrics["gangkit_karpenter_nodeclaim_stages"].ready_s)


@pytest.mark.parametrize("seed", [0, 3, 7])
def test_coscheduling_permit_timeout_against_the_last_node(seed):
    """10 pods: with 9 nodes ready, 1 missing is within podGroupRejectPercentage (10 %), so 9 pods wait at
    Permit; each 60 s timeout rejects them and they take their nodes again at once, until the 10th node is
    ready: the 9 nodes are held without a gap, and released once per full minute of the wait."""
    r = run("coscheduling+karpenter", [job("g", pods=10, gpus=8, run_time=600)], stages=SPREAD, seed=seed)
    t = ready_times(r)
    gap = t[-1] - t[-2]
    released = r.events[r.events.event == "released"]
    assert len(released) == int(gap // 60)
    assert r.figures["held_idle_gpu_seconds"] == pytest.approx(9 * 8 * gap)
    assert rows(r).loc["g", "start_s"] == pytest.approx(t[-1])


def test_the_seeds_above_show_both_outcomes():
    gaps = []
    for seed in (0, 3, 7):
        t = ready_times(run("coscheduling+karpenter", [job("g", pods=10, gpus=8)], stages=SPREAD, seed=seed, horizon=600))
        gaps.append(t[-1] - t[-2])
    assert min(gaps) < 60 < max(gaps)


@pytest.mark.parametrize("seed", [0, 1, 3])
def test_kube_gang_timeout_against_the_spread_of_node_start_up(seed):
    """Pods wait at Permit from the first ready node on: a spread over 300 s means at least one rejection."""
    r = run("kube-gang+karpenter", [job("g", pods=12, gpus=8, run_time=600)], stages=SPREAD, seed=seed)
    t = ready_times(r)
    released = r.events[r.events.event == "released"]
    assert (len(released) > 0) == (t[-1] - t[0] > 300)
    assert rows(r).loc["g", "start_s"] == pytest.approx(t[-1])


@pytest.mark.parametrize("style, timeout, state", [
    ("Hard", 120.0, "Deactivated"), ("Soft", 120.0, "Finished"), ("Hard", 900.0, "Finished"),
])
def test_yunikorn_placeholder_timeout_against_node_start_up(style, timeout, state):
    """The timer starts with the first placeholder allocated (the first node ready); nodes that come later
    than the timeout release the placeholders: Hard fails the application, Soft places pods one by one."""
    r = run("yunikorn+karpenter", [job("g", pods=12, gpus=8, run_time=600, gang_style=style,
                                       placeholder_timeout=timeout)], stages=SPREAD, seed=0)
    t = ready_times(r)
    assert t[-1] - t[0] > 120 and t[-1] - t[0] < 900  # the spread lies between the two timeouts
    row = rows(r).loc["g"]
    assert row["state"] == state, row["reason"]
    if state == "Finished":
        assert row["start_s"] == pytest.approx(t[-1])


# -- determinism -----------------------------------------------------------------------------------
@pytest.mark.parametrize("stack", NEW)
def test_same_seed_same_result(stack):
    jobs = [job("big", pods=6, gpus=8, run_time=600), job("small", pods=2, gpus=8, run_time=300, submit_time=10)]
    a = run(stack, jobs, limit=48, stages=SPREAD, seed=5)
    b = run(stack, jobs, limit=48, stages=SPREAD, seed=5)
    pd.testing.assert_frame_equal(a.jobs, b.jobs)
    pd.testing.assert_frame_equal(a.events, b.events)
    pd.testing.assert_frame_equal(seen(a), seen(b))


# -- what the placement layer lists as unschedulable, as a run stops ------------------------------------
LISTED = [
    # (id, stack, GPUs of the one node, pods of the gang, stop at, pods listed)
    ("kube-gang: 3 pods wait at Permit, the 4th is listed", "kube-gang", 3, 4, 100, 1),
    ("kube-gang after its 300 s Permit timeout: the group takes its seats again at once, the 4th is listed",
     "kube-gang", 3, 4, 400, 1),
    ("coscheduling rejects a group missing more than 10 %: all its pods listed", "coscheduling", 3, 4, 100, 4),
    ("coscheduling within 10 %: 9 wait at Permit, 1 listed", "coscheduling", 9, 10, 30, 1),
    ("coscheduling after its 60 s Permit timeout: 9 wait at Permit again, 1 listed", "coscheduling", 9, 10, 100, 1),
    ("coscheduling rejected by PostFilter waits for an event: all 4 listed long after", "coscheduling", 3, 4, 1000, 4),
    ("YuniKorn: 3 placeholders allocated, 1 listed", "yunikorn", 3, 4, 100, 1),
    ("Volcano: the whole gang is listed, nothing is bound", "gang", 3, 4, 100, 4),
]


@pytest.mark.parametrize("stack, gpus, pods, stop, listed", [c[1:] for c in LISTED], ids=[c[0] for c in LISTED])
def test_what_the_placement_layer_lists(stack, gpus, pods, stop, listed):
    from gangkit.engine.simulation import Simulation

    sc = Scenario([Node("n0", gpus)], [job("g", pods=pods, gpus=1, run_time=600)]).with_settings(horizon=stop)
    sim = Simulation(sc, gk.build_stack(stack, sc.settings, sc))
    sim.run()
    assert len(sim.stack.placement.unschedulable()) == listed


# -- lesson 06's scale-to-zero table --------------------------------------------------------------------
def test_lesson06_scale_to_zero_table():
    from gangkit.lessons import lesson06

    t = lesson06.compare_scale_to_zero(seed=3)
    assert list(t.columns) == lesson06.SCALE_TO_ZERO_COLUMNS
    volcano_job = t.loc["gang, Volcano Job"]
    assert (volcano_job.pods_seen, volcano_job.nodes_launched, volcano_job.big_state) == (0, 0, "WaitingAtEnd")
    no_enqueue = t.loc["gang, Volcano Job, no enqueue"]  # Inqueue at t=0, pods created for the next session
    assert (no_enqueue.pods_seen, no_enqueue.first_seen_s, no_enqueue.nodes_launched) == (10, 1.0, 10)
    assert no_enqueue.big_state == "Finished" and no_enqueue.held_idle_gpu_h == 0
    others = t.drop(index=["gang, Volcano Job", "gang, Volcano Job, no enqueue"])
    assert (others.pods_seen == 10).all() and (others.first_seen_s == 0).all() and (others.nodes_launched == 10).all()
    assert (others.big_state == "Finished").all()
    assert others.big_wait_s.max() - others.big_wait_s.min() <= 1.0  # Volcano's 1 s session at most
    assert t.loc["gang", "held_idle_gpu_h"] == 0 and t.loc["pod", "held_idle_gpu_h"] > 0


def test_lesson06_scale_to_zero_at_the_limit_only_kueue_launches_nothing():
    from gangkit.lessons import lesson06

    rows = lesson06.SCALE_TO_ZERO_ROWS + (("kueue + gang", "kueue+gang+karpenter", {}),)
    t = lesson06.compare_scale_to_zero(lesson06.scale_to_zero(limit=48), rows=rows, seed=3)
    assert t.loc["kueue + gang", "nodes_launched"] == 0
    shown = t.drop(index=["kueue + gang", "gang, Volcano Job"])
    assert (shown.nodes_launched == 6).all()
    assert set(t.loc[["pod", "yunikorn"], "big_state"]) == {"Deadlocked"}
    assert (t.loc[["gang", "coscheduling"], "held_idle_gpu_h"] == 0).all()
