"""Karpenter as a node supplier: batching, NodePool limits, stages, consolidation, cost, determinism.

Every case builds a :class:`gangkit.Stack` directly (gang or pod placement,
optionally Kueue in front) with a :class:`gangkit.supply.karpenter.Karpenter`
supplier. Clusters start with one small node because a scenario needs at
least one; Karpenter brings the GPU nodes.
"""

from __future__ import annotations

import pandas as pd
import pytest

import gangkit as gk
from gangkit import Node, Stack, job
from gangkit.placement.kube_scheduler import KubeScheduler
from gangkit.supply.cloud import InstanceType, Stages, lognormal
from gangkit.supply.karpenter import Karpenter, NodePool
from gangkit.volcano.scheduler import VolcanoGang

from paths import REPO

TYPES = [InstanceType("g1", 1, 1.0), InstanceType("g2a", 2, 2.5), InstanceType("g2b", 2, 2.2),
         InstanceType("g4", 4, 3.5), InstanceType("g8", 8, 8.0)]
CPU_ONLY = [Node("system-0", 0)]  # Scenario.validate asks for at least one node


def karpenter(limit=None, types=("g1", "g2a", "g2b", "g4", "g8"), consolidate_after=None, budget="10%", **kw):
    limits = {} if limit is None else {"nvidia.com/gpu": limit}
    pool = NodePool("gpu", list(types), limits=limits, consolidate_after=consolidate_after, budget=budget)
    return Karpenter([pool], TYPES, **kw)


def placement(kind):
    return VolcanoGang(period=1.0) if kind == "gang" else KubeScheduler()


def run(jobs, kind="gang", nodes=CPU_ONLY, horizon=5000, **kw):
    k = karpenter(**kw)
    result = gk.simulate(gk.Scenario(list(nodes), jobs), stack=Stack(placement(kind), suppliers=[k], name=f"{kind}+karpenter"), horizon=horizon)
    return result, k


def test_karpenter_satisfies_the_node_supplier_protocol():
    assert isinstance(karpenter(), gk.NodeSupplier)


# -- batching -----------------------------------------------------------------------------------
BATCHING = {
    # name: (placement, jobs, batch_max, expected batches as (start, end, pods, nodeclaims))
    "pods 0.5 s apart under pod placement are one batch (idle 1 s after the last)": (
        "pod", [job(f"j{i}", gpus=1, run_time=100, submit_time=0.5 * i) for i in range(4)], 10.0,
        [(0.0, 2.5, 4, 1)]),
    "under 1 s Volcano sessions pods are seen at session boundaries, still one batch": (
        "gang", [job("a", gpus=1, run_time=100), job("b", gpus=2, run_time=100, submit_time=0.5),
                 job("c", pods=2, gpus=1, run_time=100, submit_time=1.0), job("d", gpus=3, run_time=100, submit_time=1.5)], 10.0,
        [(0.0, 3.0, 5, 1)]),
    "a steady stream is cut by the max window (10 s); the next batch fills an in-flight node first": (
        "pod", [job(f"j{i:02d}", gpus=1, run_time=1000, submit_time=0.5 * i) for i in range(30)], 10.0,
        [(0.0, 10.0, 21, 3), (10.5, 15.5, 9, 1)]),
    "a shorter max window cuts it sooner": (
        "pod", [job(f"j{i}", gpus=1, run_time=1000, submit_time=0.5 * i) for i in range(8)], 2.0,
        [(0.0, 2.0, 5, 1), (2.5, 4.5, 3, 0)]),
}


@pytest.mark.parametrize("case", BATCHING, ids=list(BATCHING))
def test_batching_windows(case):
    kind, jobs, batch_max, expected = BATCHING[case]
    result, _ = run(jobs, kind, batch_max=batch_max)
    batches = result.metrics["gangkit_karpenter_batches"]
    assert list(zip(batches.start_s, batches.end_s, batches.pods, batches.nodeclaims)) == expected
    assert (result.jobs.state == "Finished").all()
    assert (result.jobs.wait_unattributed_s == 0).all()


def test_pods_waiting_for_an_in_flight_node_trigger_no_new_nodeclaim():
    # the pod is seen after every scheduling cycle (other jobs come and go) but its node is launching
    jobs = [job("big", gpus=8, run_time=100)] + [job(f"small{i}", gpus=0, run_time=5, submit_time=10 * i + 5) for i in range(10)]
    result, _ = run(jobs, "pod")
    created = result.metrics["karpenter_nodeclaims_created_total"]
    assert len(created) == 1 and result.jobs.set_index("job").loc["big", "start_s"] == 151.0


# -- NodePool limits: part of a gang ---------------------------------------------------------------
LIMITS = {
    # name: (placement, expected state, held-idle GPUs at the end)
    "gang placement: two of four nodes come, the gang waits and holds nothing": ("gang", "WaitingAtEnd", 0),
    "pod placement: two of four pods bind and hold 16 GPUs idle": ("pod", "Deadlocked", 16),
}


@pytest.mark.parametrize("case", LIMITS, ids=list(LIMITS))
def test_a_nodepool_limit_provisions_part_of_a_gang(case):
    kind, state, held = LIMITS[case]
    result, k = run([job("big", pods=4, gpus=8, run_time=100)], kind, limit=16, horizon=1000)
    created = result.metrics["karpenter_nodeclaims_created_total"]
    assert list(created.instance_type) == ["g8", "g8"]  # per NodeClaim: a third would make 24 > 16
    first = result.metrics["gangkit_karpenter_batches"].iloc[0]
    assert (first.nodeclaims, first.pods_not_provisioned, first.not_provisioned) == (2, 2, "big-2, big-3")
    usage = result.metrics["karpenter_nodepools_usage"]
    assert usage.value.max() == 16
    assert result.metrics["karpenter_nodepools_limit"].value.tolist() == [16]
    row = result.jobs.iloc[0]
    assert row.state == state and result.summary()["held_idle_gpus_at_end"] == held


def test_a_limit_smaller_than_any_node_or_a_pod_larger_than_any_type_is_rejected():
    result, _ = run([job("huge", gpus=16, run_time=10), job("fits", gpus=2, run_time=10)], limit=32)
    assert result.jobs.state.tolist() == ["Rejected", "Finished"]
    result, _ = run([job("a", gpus=8, run_time=10)], types=("g8",), limit=4)
    assert result.jobs.state.tolist() == ["Rejected"]


# -- stages ---------------------------------------------------------------------------------------
STAGES = {
    # name: (stages, placement, expected node events, job start)
    "default stages (assumptions): registered +60 s, initialized +90 s": (
        None, "pod",
        [("node_launched", 1.0), ("node_registered", 61.0), ("node_initialized", 151.0), ("node_ready", 151.0)], 151.0),
    "an image pull stage after initialization": (
        Stages(registered=30, initialized=20, image_pull=10), "gang",
        [("node_launched", 1.0), ("node_registered", 31.0), ("node_initialized", 51.0), ("node_image_pulled", 61.0), ("node_ready", 61.0)], 61.0),
}


@pytest.mark.parametrize("case", STAGES, ids=list(STAGES))
def test_node_stages_are_events_and_not_ready_gpu_seconds(case):
    stages, kind, expected, start = STAGES[case]
    result, _ = run([job("a", gpus=8, run_time=100)], kind, stages=stages)
    ev = result.events[(result.events.node == "gpu-0") & result.events.event.str.startswith("node_")]
    assert list(zip(ev.event, ev.time_s)) == expected
    assert result.jobs.start_s.tolist() == [start]
    s = result.summary()
    assert s["not_ready_gpu_seconds"] == 8 * (start - 1.0)
    assert s["useful_gpu_seconds"] + s["held_idle_gpu_seconds"] + s["free_gpu_seconds"] + s["not_ready_gpu_seconds"] == s["capacity_gpu_seconds"]
    l2r = result.metrics["gangkit_karpenter_nodeclaim_stages"]
    assert l2r.value.tolist() == [start - 1.0]


# -- consolidation --------------------------------------------------------------------------------
KEEP_ALIVE = Node("static-0", 1)  # a 1-GPU node runs a late job so that the run outlives the removals
TAIL = job("tail", gpus=1, run_time=10, submit_time=1000)

CONSOLIDATION = {
    # name: (jobs, consolidate_after, budget, expected removals (node, time))
    "an empty node goes consolidate_after (30 s) after its job finished": (
        [job("a", gpus=8, run_time=100), TAIL], 30.0, "10%", [("gpu-0", 281.0)]),
    "a node that got a pod meanwhile stays until it is empty again": (
        [job("a", gpus=8, run_time=100), job("b", gpus=8, run_time=50, submit_time=270), TAIL], 30.0, "10%",
        [("gpu-0", 350.0)]),
    "Never: consolidate_after None keeps the node": (
        [job("a", gpus=8, run_time=100), TAIL], None, "10%", []),
    "a budget of 1 node removes three empty nodes one poll (10 s) apart": (
        [job("a", pods=3, gpus=8, run_time=100), TAIL], 30.0, 1,
        [("gpu-0", 281.0), ("gpu-1", 291.0), ("gpu-2", 301.0)]),
    "the default budget of 10% (rounded up) of three nodes is one node": (
        [job("a", pods=3, gpus=8, run_time=100), TAIL], 30.0, "10%",
        [("gpu-0", 281.0), ("gpu-1", 291.0), ("gpu-2", 301.0)]),
    "a budget of 100% removes them at once": (
        [job("a", pods=3, gpus=8, run_time=100), TAIL], 30.0, "100%",
        [("gpu-0", 281.0), ("gpu-1", 281.0), ("gpu-2", 281.0)]),
}


@pytest.mark.parametrize("case", CONSOLIDATION, ids=list(CONSOLIDATION))
def test_consolidation_of_empty_nodes(case):
    jobs, after, budget, expected = CONSOLIDATION[case]
    result, _ = run(jobs, "pod", nodes=[KEEP_ALIVE], consolidate_after=after, budget=budget, types=("g8",))
    removed = result.events[result.events.event == "node_removed"]
    assert list(zip(removed.node, removed.time_s)) == expected
    disrupted = result.metrics["karpenter_nodeclaims_disrupted_total"]
    assert list(disrupted.nodeclaim) == [n for n, _ in expected]
    assert (result.jobs.state == "Finished").all()


NOMINATED = {
    # name: (Kueue in front, consolidate_after, horizon, expected NodeClaims launched, first removals (node, time))
    "consolidateAfter 0: the two nodes a limit of 16 GPUs allows are launched once and held while the gang waits": (
        False, 0.0, 20000.0, 2, []),
    "consolidateAfter 300: the same, the nodes are never empty long enough with nominated pods": (
        False, 300.0, 20000.0, 2, []),
    "under Kueue, waitForPodsReady evicts the gang at 1800 s: its nodes go one nomination window (20 s) later, "
    "and each of the 4 admissions in two hours launches two": (
        True, 0.0, 7200.0, 8, [("gpu-0", 1820.0), ("gpu-1", 1820.0)]),
}


@pytest.mark.parametrize("case", NOMINATED, ids=list(NOMINATED))
def test_nodes_with_pending_pods_nominated_to_them_are_not_consolidated(case):
    # a gang of four 8-GPU pods under a limit of 16 GPUs gets two nodes; its pods stay nominated to them.
    # Without the rule, consolidateAfter 0 removed both as soon as they were ready and empty and launched
    # two more, every 151 s until the horizon (266 nodes in 20000 s).
    with_kueue, after, horizon, launched, removed = NOMINATED[case]
    k = karpenter(limit=16, consolidate_after=after, budget="100%", types=("g8",))
    jobs = [job("big", pods=4, gpus=8, run_time=100)]
    stack = kueue_stack(k, quota=64) if with_kueue else Stack(VolcanoGang(period=1.0), suppliers=[k], name="gang+karpenter")
    result = gk.simulate(gk.Scenario(list(CPU_ONLY), jobs), stack=stack, horizon=horizon)
    ev = result.events
    assert (ev.event == "node_launched").sum() == launched
    gone = ev[ev.event == "node_removed"]
    assert list(zip(gone.node, gone.time_s))[:2] == removed
    assert result.jobs.state.tolist() == ["WaitingAtEnd"]


def test_an_empty_node_counted_on_for_a_pending_gang_is_not_consolidated_meanwhile():
    # b needs two 8-GPU nodes: a's empty node and a new one; a's node is nominated until the new one is ready
    jobs = [job("a", gpus=8, run_time=100), job("b", pods=2, gpus=8, run_time=100, submit_time=251), TAIL]
    result, _ = run(jobs, "gang", nodes=[KEEP_ALIVE], consolidate_after=10.0, types=("g8",))
    b = result.jobs.set_index("job").loc["b"]
    assert b.start_s == 402.0 and len(result.metrics["karpenter_nodeclaims_created_total"]) == 2
    removed = result.events[result.events.event == "node_removed"]
    assert removed.time_s.min() == 512.0  # both, 10 s after b finished


def test_the_default_karpenter_of_a_stack_name():
    from gangkit.supply.karpenter import default_karpenter

    sc = gk.Scenario(list(CPU_ONLY), [job("a", pods=2, gpus=6, run_time=100)])
    k = default_karpenter(sc)
    assert [t for t in k.instance_types] == ["gpu-1", "gpu-2", "gpu-4", "gpu-6", "gpu-8"]
    assert k.provisionable_gpus(sc) == 12  # no limit: every GPU the jobs ask for
    assert karpenter(limit=16).provisionable_gpus(sc) == 16
    result = gk.simulate(sc, stack=Stack(VolcanoGang(), suppliers=[Karpenter.from_setup(k)]))
    assert result.metrics["karpenter_nodeclaims_created_total"].instance_type.tolist() == ["gpu-6", "gpu-6"]
    assert result.jobs.start_s.tolist() == [151.0]


# -- cost -----------------------------------------------------------------------------------------
CHEAPEST = {
    # name: (jobs, expected instance types launched)
    "one GPU: the 1-GPU type": ([job("a", gpus=1)], ["g1"]),
    "two GPUs: the cheaper of two 2-GPU types": ([job("a", gpus=2)], ["g2b"]),
    "three GPUs: the 4-GPU type": ([job("a", gpus=3)], ["g4"]),
    "four 1-GPU pods are packed onto one 4-GPU node, cheaper than four 1-GPU nodes would be": (
        [job("a", pods=4, gpus=1)], ["g4"]),
    "a 5-GPU and a 3-GPU pod fill one 8-GPU node": ([job("a", gpus=5), job("b", gpus=3)], ["g8"]),
    "ten 1-GPU pods: an 8-GPU node, then the cheapest type for the other two": ([job("a", pods=10, gpus=1)], ["g8", "g2b"]),
}


@pytest.mark.parametrize("case", CHEAPEST, ids=list(CHEAPEST))
def test_nodeclaims_get_the_cheapest_type_that_holds_their_pods(case):
    jobs, expected = CHEAPEST[case]
    result, _ = run(jobs, "gang")
    assert result.metrics["karpenter_nodeclaims_created_total"].instance_type.tolist() == expected
    assert (result.jobs.state == "Finished").all()


# -- scale from zero, with Kueue in front ------------------------------------------------------------
def kueue_stack(k, quota):
    from gangkit.kueue.layer import KueueLayer
    from gangkit.kueue.objects import ClusterQueue, FlavorQuotas, LocalQueue, Quota, ResourceFlavor, ResourceGroup
    from gangkit.kueue.scheduler import Kueue

    gpu = "nvidia.com/gpu"
    cq = ClusterQueue("cq", [ResourceGroup((gpu,), (FlavorQuotas("default-flavor", {gpu: Quota(quota)}),))])
    kueue = Kueue([ResourceFlavor("default-flavor")], [cq], [LocalQueue("default", "default", "cq")])
    return Stack(VolcanoGang(period=1.0), admission=[KueueLayer(kueue)], suppliers=[k], name="kueue+gang+karpenter")


def test_scale_from_zero_through_kueue_gang_and_karpenter():
    jobs = [job("a", pods=2, gpus=8, run_time=300), job("b", pods=4, gpus=4, run_time=300, submit_time=0.5),
            job("c", pods=4, gpus=8, run_time=300, submit_time=10)]
    k = karpenter(limit=32, consolidate_after=60.0, budget="100%", types=("g8",))
    result = gk.simulate(gk.Scenario(list(CPU_ONLY), jobs), stack=kueue_stack(k, quota=32))
    jobs_ = result.jobs.set_index("job")
    assert (jobs_.state == "Finished").all()
    assert (jobs_.wait_unattributed_s == 0).all()
    # a and b are admitted at once (quota 32) and provisioned in one batch (b seen at the 1 s session)
    batches = result.metrics["gangkit_karpenter_batches"]
    assert list(zip(batches.start_s, batches.end_s, batches.pods, batches.nodeclaims))[0] == (0.0, 2.0, 6, 4)
    assert jobs_.loc["a", "start_s"] == jobs_.loc["b", "start_s"] == 152.0
    # c waits for quota, then runs on a's and b's nodes, which are not yet empty for 60 s
    assert jobs_.loc["c", "wait_quota_s"] == 442.0 and jobs_.loc["c", "start_s"] == 452.0
    assert len(result.metrics["karpenter_nodeclaims_created_total"]) == 4
    s = result.summary()
    assert s["not_ready_gpu_seconds"] == 4 * 8 * 150.0


def test_two_gangs_of_one_shape_are_provisioned_in_one_batch():
    result, _ = run([job("a", pods=2, gpus=8, run_time=100), job("b", pods=2, gpus=8, run_time=100)], "gang", types=("g8",))
    assert len(result.metrics["gangkit_karpenter_batches"]) == 1


def test_nodeclaim_names_skip_the_names_of_scenario_nodes():
    result, _ = run([job("a", gpus=8, run_time=10)], "pod", nodes=[Node("gpu-0", 0)])
    assert result.metrics["karpenter_nodeclaims_created_total"].nodeclaim.tolist() == ["gpu-1"]
    assert result.jobs.state.tolist() == ["Finished"]


def test_a_karpenter_serves_one_run_and_its_configuration_any_number():
    k = karpenter()
    sc = gk.Scenario(list(CPU_ONLY), [job("a", gpus=8, run_time=100)])
    one = gk.simulate(sc, stack=Stack(KubeScheduler(), suppliers=[k]))
    with pytest.raises(ValueError, match="already served a run; build a fresh one for each run"):
        gk.simulate(sc, stack=Stack(KubeScheduler(), suppliers=[k]))
    two = gk.simulate(sc, stack=Stack(KubeScheduler(), suppliers=[Karpenter.from_setup(k)]))
    pd.testing.assert_frame_equal(one.events, two.events)
    assert len(two.metrics["karpenter_nodeclaims_created_total"]) == 1


# -- determinism --------------------------------------------------------------------------------------
def _random_run(seed):
    k = karpenter(consolidate_after=30.0, stages=Stages(registered=lognormal(60, 0.3), initialized=lognormal(90, 0.3)))
    jobs = [job(f"j{i}", pods=1 + i % 3, gpus=2 + 2 * (i % 2), run_time=200, submit_time=40 * i) for i in range(6)]
    return gk.simulate(gk.Scenario(list(CPU_ONLY), jobs), stack=Stack(VolcanoGang(period=1.0), suppliers=[k]), seed=seed)


def test_same_seed_same_tables_and_another_seed_other_stage_times():
    a, b, c = _random_run(3), _random_run(3), _random_run(4)
    pd.testing.assert_frame_equal(a.events, b.events)
    pd.testing.assert_frame_equal(a.jobs, b.jobs)
    for name in a.metrics:
        pd.testing.assert_frame_equal(a.metrics[name], b.metrics[name])
    assert a.summary() == b.summary()
    l2r = "gangkit_karpenter_nodeclaim_stages"
    assert a.metrics[l2r].value.tolist() != c.metrics[l2r].value.tolist()
    assert (a.jobs.state == "Finished").all()


# -- consolidation of under-used nodes (WhenEmptyOrUnderutilized) ----------------------------------
def run_policy(jobs, policy, kind="pod", after=30.0, budget="100%", horizon=5000):
    pool = NodePool("gpu", ["g8"], consolidation_policy=policy, consolidate_after=after, budget=budget)
    k = Karpenter([pool], TYPES)
    sc = gk.Scenario([KEEP_ALIVE], jobs)
    return gk.simulate(sc, stack=Stack(placement(kind), suppliers=[k], name=f"{kind}+karpenter"), horizon=horizon)


BIG = job("a", gpus=8, run_time=100)  # on gpu-0, finishes at 251
UNDERUTILIZED = {
    # name: (policy, jobs, expected removals (node, time, reason), expected (job, restarts, finish_s))
    "WhenEmpty keeps a half-used node; only the empty one goes": (
        "WhenEmpty", [BIG, job("b", gpus=4, run_time=1000)],
        [("gpu-0", 281.0, "empty")], [("a", 0, 251.0), ("b", 0, 1151.0)]),
    "WhenEmptyOrUnderutilized deletes the half-used node once its pod fits on the node a freed; the job restarts": (
        "WhenEmptyOrUnderutilized", [BIG, job("b", gpus=4, run_time=1000)],
        [("gpu-1", 251.0, "underutilized")], [("a", 0, 251.0), ("b", 1, 1251.0)]),
    "with a checkpoint every 50 s the moved job keeps its 100 s of progress": (
        "WhenEmptyOrUnderutilized", [BIG, job("b", gpus=4, run_time=1000, checkpoint_interval=50)],
        [("gpu-1", 251.0, "underutilized")], [("a", 0, 251.0), ("b", 1, 1151.0)]),
    "a full node is deleted too when its gang fits elsewhere: both pods of the gang restart together": (
        "WhenEmptyOrUnderutilized", [BIG, job("g", pods=2, gpus=4, run_time=1000)],
        [("gpu-1", 251.0, "underutilized")], [("a", 0, 251.0), ("g", 1, 1251.0)]),
    "pods that fit nowhere else keep their node": (
        "WhenEmptyOrUnderutilized", [job("a", gpus=8, run_time=1000), job("b", gpus=4, run_time=1000)],
        [], [("a", 0, 1151.0), ("b", 0, 1151.0)]),
}


@pytest.mark.parametrize("case", UNDERUTILIZED, ids=list(UNDERUTILIZED))
def test_consolidation_of_under_used_nodes(case):
    policy, jobs, removals, outcome = UNDERUTILIZED[case]
    result = run_policy(jobs, policy)
    removed = result.events[result.events.event == "node_removed"]
    disrupted = result.metrics["karpenter_nodeclaims_disrupted_total"]
    assert list(zip(removed.node, removed.time_s, disrupted.reason)) == removals
    j = result.jobs.set_index("job")
    assert [(n, int(j.loc[n, "restarts"]), j.loc[n, "finish_s"]) for n, _, _ in outcome] == outcome
    s = result.summary()
    assert s["useful_gpu_seconds"] + s["held_idle_gpu_seconds"] + s["free_gpu_seconds"] + s["not_ready_gpu_seconds"] == s["capacity_gpu_seconds"]


def test_single_node_consolidation_moves_one_non_empty_node_per_instant():
    # a frees two nodes at 251; c and d (6 GPUs each, one node each) could both move there: one moves at
    # 251, the other at the next disruption poll, 10 s later
    jobs = [job("a", pods=2, gpus=8, run_time=100), job("c", gpus=6, run_time=1000), job("d", gpus=6, run_time=1000)]
    result = run_policy(jobs, "WhenEmptyOrUnderutilized")
    disrupted = result.metrics["karpenter_nodeclaims_disrupted_total"]
    moved = disrupted[disrupted.reason == "underutilized"]
    assert moved.time_s.tolist()[:2] == [251.0, 261.0]
    assert (moved.groupby("time_s").size() <= 1).all()



# -- metric labels: the names and values Karpenter v1.14 exports ----------------------------------------
def _moved_then_emptied():
    """gpu-1 is deleted as underutilized at 251 (its pod fits on gpu-0), gpu-0 goes empty at 1281."""
    jobs = [BIG, job("b", gpus=4, run_time=1000), job("late", gpus=1, run_time=10, submit_time=3000)]
    return run_policy(jobs, "WhenEmptyOrUnderutilized")


def _static_pool():
    pool = NodePool("warm", ["g8"], limits={"nodes": 1}, replicas=2)
    sc = gk.Scenario(list(CPU_ONLY), [job("a", gpus=8, run_time=100)])
    return gk.simulate(sc, stack=Stack(KubeScheduler(), suppliers=[Karpenter([pool], TYPES)], name="pod+karpenter"))


METRIC_LABELS = [
    # (run, metric, its label columns as Karpenter names them (pkg/metrics/metrics.go,
    #  pkg/controllers/metrics/nodepool), each row's label values and value)
    pytest.param(_moved_then_emptied, "karpenter_nodeclaims_created_total", ["reason", "nodepool", "min_values_relaxed"],
                 [("provisioned", "gpu", "false", 1), ("provisioned", "gpu", "false", 2)],
                 id="NodeClaims for pending pods: reason provisioned (ProvisionedReason), minValues never relaxed"),
    pytest.param(_static_pool, "karpenter_nodeclaims_created_total", ["reason", "nodepool", "min_values_relaxed"],
                 [("provisioned", "warm", "false", 1)],
                 id="a static pool's NodeClaim: reason provisioned too, min(replicas, limits.nodes) of them"),
    pytest.param(_moved_then_emptied, "karpenter_nodeclaims_disrupted_total", ["reason", "nodepool"],
                 [("underutilized", "gpu", 1), ("empty", "gpu", 1)],
                 id="disrupted: reasons in snake case, each reason its own counter series"),
    pytest.param(_moved_then_emptied, "karpenter_nodepools_usage", ["nodepool", "resource_type"],
                 [("gpu", "nvidia.com/gpu", 16), ("gpu", "nvidia.com/gpu", 8), ("gpu", "nvidia.com/gpu", 0)],
                 id="usage: the resource name as resource_type"),
    pytest.param(lambda: run([job("big", pods=4, gpus=8, run_time=100)], limit=16, horizon=1000)[0],
                 "karpenter_nodepools_limit", ["nodepool", "resource_type"], [("gpu", "nvidia.com/gpu", 16)],
                 id="limit: the same labels"),
]


@pytest.mark.parametrize("make, name, labels, rows", METRIC_LABELS)
def test_metrics_carry_karpenters_label_names_and_values(make, name, labels, rows):
    table = make().metrics[name]
    assert list(table[labels + ["value"]].itertuples(index=False, name=None)) == rows


# -- YAML: karpenter.sh/v1 NodePool and gangkit's Karpenter kind ----------------------------------------

from gangkit.manifests import load_manifests  # noqa: E402
from gangkit.supply.manifests import KNOWN_FIELDS  # noqa: E402

from schema_util import requires_schemas, schema_for, validate_yaml  # noqa: E402

ROOT = REPO
LIMIT_EXAMPLE = ROOT / "examples" / "kueue-karpenter-nodepool-limit.yaml"


def test_the_nodepool_example_loads_and_provisions_half_the_gang():
    sc = load_manifests(LIMIT_EXAMPLE)
    assert sc.warnings == []
    (pool,) = sc.karpenter.nodepools
    assert (pool.name, pool.instance_types, pool.gpu_limit, pool.consolidation_policy, pool.consolidate_after) == (
        "a100", ("p4d.24xlarge",), 16, "WhenEmpty", 300.0)
    assert sc.karpenter.instance_types["p4d.24xlarge"].gpus == 8
    result = gk.simulate(sc)
    batches = result.metrics["gangkit_karpenter_batches"]
    assert batches.nodeclaims.iloc[0] == 2 and batches.not_provisioned.iloc[0] == "train-2, train-3"
    assert result.jobs.state.tolist() == ["WaitingAtEnd"]


def _nodepool_yaml(old: str, new: str) -> str:
    text = LIMIT_EXAMPLE.read_text()
    assert old in text
    return text.replace(old, new)


NODEPOOL_YAML = {
    # name: (replace, by, expected (policy, consolidate_after, budget) or an error (object, field, words))
    "Karpenter's defaults: WhenEmptyOrUnderutilized after 0 s, budget 10%": (
        "    consolidationPolicy: WhenEmpty\n    consolidateAfter: 5m\n    budgets:\n    - nodes: \"10%\"\n", "    {}\n",
        ("WhenEmptyOrUnderutilized", 0.0, "10%")),
    "consolidateAfter Never keeps nodes; a budget of 2 nodes": (
        "consolidateAfter: 5m\n    budgets:\n    - nodes: \"10%\"", "consolidateAfter: Never\n    budgets:\n    - nodes: \"2\"",
        ("WhenEmpty", None, 2)),
    "an instance type the Karpenter object does not list": (
        "values: [p4d.24xlarge]", "values: [p5.48xlarge]",
        ("NodePool a100", "spec.template.spec.requirements[0].values", "not among the Karpenter instance types")),
    "a bad budget": (
        "- nodes: \"10%\"", "- nodes: \"ten\"", ("NodePool a100", "spec.disruption.budgets[0].nodes", "a percentage")),
    "a bad consolidateAfter": (
        "consolidateAfter: 5m", "consolidateAfter: soon", ("NodePool a100", "spec.disruption.consolidateAfter", "")),
}


@pytest.mark.parametrize("case", NODEPOOL_YAML, ids=list(NODEPOOL_YAML))
def test_nodepool_yaml(case):
    old, new, expected = NODEPOOL_YAML[case]
    text = _nodepool_yaml(old, new)
    if len(expected) == 3 and expected[0] in ("WhenEmpty", "WhenEmptyOrUnderutilized"):
        (pool,) = load_manifests(text).karpenter.nodepools
        assert (pool.consolidation_policy, pool.consolidate_after, pool.budget) == expected
        return
    obj, field, words = expected
    with pytest.raises(gk.ScenarioError) as info:
        load_manifests(text)
    problems = [p for p in info.value.problems if p.obj == obj and p.field == field]
    assert len(problems) == 1 and words in problems[0].message, info.value.problems


def test_nodepool_requirements_other_than_instance_type_are_noted():
    text = _nodepool_yaml("        values: [p4d.24xlarge]\n",
                          "        values: [p4d.24xlarge]\n      - key: karpenter.sh/capacity-type\n        operator: In\n"
                          "        values: [on-demand]\n")
    from gangkit.manifests import GangkitInputWarning

    with pytest.warns(GangkitInputWarning, match="karpenter.sh/capacity-type In"):
        sc = load_manifests(text)
    assert any("requirements[1] (karpenter.sh/capacity-type In) is not modelled" in w for w in sc.warnings)


@requires_schemas
def test_every_nodepool_field_gangkit_reads_exists_in_the_real_schema():
    schema = schema_for("karpenter.sh/v1", "NodePool")
    missing = []

    def walk(known, node, path):
        if known is True or not isinstance(known, (dict, list)):
            return
        if isinstance(known, list):
            walk(known[0], node.get("items", {}), path + "[]")
            return
        props = node.get("properties")
        for key, sub in known.items():
            if props is None:
                continue
            if key not in props:
                missing.append(f"{path}.{key}")
            else:
                walk(sub, props[key], f"{path}.{key}")

    walk(KNOWN_FIELDS["NodePool"], schema, "NodePool")
    assert missing == []
    assert validate_yaml(LIMIT_EXAMPLE.read_text()) >= 1
