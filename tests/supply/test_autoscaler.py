"""cluster-autoscaler as a node supplier: scan loop, expanders, max size, failed scale-ups and backoff, scale-down.

Each case builds a :class:`gangkit.Stack` with the pod-by-pod scheduler and
a :class:`gangkit.supply.autoscaler.ClusterAutoscaler`. Clusters start with one
node because a scenario needs at least one; the autoscaler brings the GPUs.
Default stages (assumptions): a node is ready 150 s after it is requested.
"""

from __future__ import annotations

import math

import pytest

import gangkit as gk
from gangkit import Node, Stack, job
from gangkit.model.jobs import Job, PodSet
from gangkit.placement.kube_scheduler import KubeScheduler
from gangkit.supply.autoscaler import ClusterAutoscaler, NodeGroup, default_autoscaler
from gangkit.supply.cloud import InstanceType, Stages
from gangkit.volcano.scheduler import VolcanoGang

G4 = InstanceType("g4", 4, 3.5)
G8 = InstanceType("g8", 8, 8.0)
CPU_ONLY = [Node("system-0", 0)]


def cjob(name, pods=1, gpus=1, cpu=0.0, memory=0, run_time=600.0, submit_time=0.0):
    """A job whose pods also ask for CPU cores and memory bytes."""
    return Job(name=name, pod_sets=[PodSet("workers", pods, gpus, cpu, memory)], run_time=run_time, submit_time=submit_time)


def run(jobs, groups, nodes=CPU_ONLY, kind="pod", horizon=20000, seed=0, **kw):
    ca = ClusterAutoscaler(groups, **kw)
    placement = KubeScheduler() if kind == "pod" else VolcanoGang(period=1.0)
    sc = gk.Scenario(list(nodes), jobs)
    return gk.simulate(sc, stack=Stack(placement, suppliers=[ca], name=f"{kind}+autoscaler"), horizon=horizon, seed=seed), ca


def test_the_autoscaler_satisfies_the_node_supplier_protocol():
    assert isinstance(ClusterAutoscaler([NodeGroup("g", G8)]), gk.NodeSupplier)


SCANS = {
    # name: (scan_interval, submit time, expected scale-up time)
    "a pod pending at 3 s waits for the scan at 10 s (CA's default interval)": (10.0, 3.0, 10.0),
    "a pod pending exactly at a scan boundary is served at once": (10.0, 20.0, 20.0),
    "with a 30 s interval the scale-up waits until 30 s": (30.0, 3.0, 30.0),
}


@pytest.mark.parametrize("case", SCANS, ids=list(SCANS))
def test_scale_up_happens_at_scans(case):
    interval, submit, expected = SCANS[case]
    result, _ = run([job("a", gpus=8, run_time=100, submit_time=submit)], [NodeGroup("g8", G8)], scan_interval=interval)
    ups = result.metrics["cluster_autoscaler_scaled_up_nodes_total"]
    assert ups.time_s.tolist() == [expected] and ups.value.tolist() == [1]
    assert result.jobs.start_s.tolist() == [expected + 150.0]


EXPANDERS = {
    # name: (expander, job, expected group)
    "least-waste, types without cpu or memory: the smaller idle-GPU fraction wins (g4 wastes 0, g8 half)": (
        "least-waste", job("a", gpus=4, run_time=10), "g4"),
    "price picks the cheapest new nodes": ("price", job("a", pods=2, gpus=4, run_time=10), "g8"),
    "most-pods: both groups help every pod, the tie goes by name": ("most-pods", job("a", gpus=4, run_time=10), "a-g8"),
}


@pytest.mark.parametrize("case", EXPANDERS, ids=list(EXPANDERS))
def test_expanders_choose_a_node_group(case):
    expander, j, expected = EXPANDERS[case]
    g8_name = "a-g8" if expander == "most-pods" else "g8"
    # price: two g4 cost 7.0 per hour, one g8 costs 8.0 -> g4 ... unless the g8 group is cheaper per node count
    groups = [NodeGroup("g4", G4), NodeGroup(g8_name, InstanceType("g8", 8, 6.0 if expander == "price" else 8.0))]
    result, _ = run([j], groups, expander=expander)
    assert result.metrics["cluster_autoscaler_scaled_up_nodes_total"].node_group.tolist() == [expected]


GI = 2**30
# one GPU each; cpu in cores, memory in bytes
FIT = InstanceType("fit", 1, 1.0, cpu=8.0, memory=48 * GI)      # pod 8 cpu / 32Gi: wastes 0 + 1/3
BIG = InstanceType("big", 1, 1.0, cpu=32.0, memory=128 * GI)    # wastes 3/4 + 3/4
WIDE = InstanceType("wide", 8, 1.0, cpu=8.0, memory=32 * GI)    # 8 GPUs, wastes 0 + 0 (7 GPUs idle)
NARROW = InstanceType("narrow", 1, 1.0, cpu=16.0, memory=64 * GI)  # wastes 1/2 + 1/2
TWIN = InstanceType("twin", 1, 1.0, cpu=8.0, memory=48 * GI)    # scores as FIT does

LEAST_WASTE = {
    # name: (groups, pods of 1 GPU / 8 cpu / 32Gi, expected groups chosen over seeds 0-7)
    "least-waste picks the group with the least wasted cpu and memory fraction": (
        [NodeGroup("big", BIG), NodeGroup("fit", FIT)], 1, {"fit"}),
    "GPUs do not count: a group that leaves 7 of 8 GPUs idle but wastes no cpu or memory wins": (
        [NodeGroup("narrow", NARROW), NodeGroup("wide", WIDE)], 1, {"wide"}),
    "the waste is of all the new nodes: 3 pods on 3 fit nodes waste 1/3, on one big node 1/4 + 1/4": (
        [NodeGroup("fit", FIT), NodeGroup("big", InstanceType("big", 4, 1.0, cpu=32.0, memory=128 * GI))], 3, {"fit"}),
    "a tie is drawn from the run's seed, and both tied groups come up over seeds": (
        [NodeGroup("fit", FIT), NodeGroup("twin", TWIN)], 1, {"fit", "twin"}),
    "only the tied best are drawn: a worse group never comes up": (
        [NodeGroup("big", BIG), NodeGroup("fit", FIT), NodeGroup("twin", TWIN)], 1, {"fit", "twin"}),
}


def chosen_groups(jobs_of, groups, seeds=range(8), **kw):
    return [run(jobs_of(), groups, seed=s, **kw)[0].metrics["cluster_autoscaler_scaled_up_nodes_total"].node_group[0]
            for s in seeds]


@pytest.mark.parametrize("case", LEAST_WASTE, ids=list(LEAST_WASTE))
def test_least_waste_scores_wasted_cpu_and_memory(case):
    groups, pods, expected = LEAST_WASTE[case]
    jobs_of = lambda: [cjob("a", pods=pods, gpus=1, cpu=8.0, memory=32 * GI, run_time=10)]
    chosen = chosen_groups(jobs_of, groups, expander="least-waste")
    assert set(chosen) == expected
    assert chosen_groups(jobs_of, groups, expander="least-waste") == chosen  # the same seed, the same draw


DEFAULTS = {
    # name: (what, expected)
    "the default expander is least-waste (cluster-autoscaler 1.33 and later)": (
        lambda: ClusterAutoscaler([NodeGroup("g", G8)]).expander, "least-waste"),
    "the +autoscaler stacks' default node groups use least-waste too": (lambda: default_autoscaler().expander, "least-waste"),
    "with no expander named, a run picks as least-waste does": (
        lambda: set(chosen_groups(lambda: [cjob("a", cpu=8.0, memory=32 * GI, run_time=10)],
                                  [NodeGroup("big", BIG), NodeGroup("fit", FIT)])), {"fit"}),
    "scale-down budgets: max-scale-down-parallelism 10, max-drain-parallelism 1": (
        lambda: (lambda ca: (ca.max_scale_down_parallelism, ca.max_drain_parallelism))(
            ClusterAutoscaler([NodeGroup("g", G8)])), (10, 1)),
}


@pytest.mark.parametrize("case", DEFAULTS, ids=list(DEFAULTS))
def test_defaults_are_cluster_autoscaler_1_36s(case):
    what, expected = DEFAULTS[case]
    assert what() == expected


def test_the_random_expander_stays_selectable_and_is_seeded():
    groups = [NodeGroup("g4", G4), NodeGroup("g8", G8)]
    jobs_of = lambda: [job("a", gpus=4, run_time=10)]
    chosen = chosen_groups(jobs_of, groups, expander="random")
    assert chosen == chosen_groups(jobs_of, groups, expander="random") and set(chosen) == {"g4", "g8"}


def test_max_size_provisions_part_of_a_gang_and_the_rest_waits():
    result, ca = run([job("big", pods=4, gpus=8, run_time=100)], [NodeGroup("g8", G8, max_size=2)], kind="gang", horizon=3000)
    assert result.metrics["cluster_autoscaler_scaled_up_nodes_total"].value.tolist() == [2]
    assert ca.group_size("g8") == 2
    assert result.jobs.state.tolist() == ["WaitingAtEnd"] and result.summary()["held_idle_gpus_at_end"] == 0


BACKOFF = {
    # name: (groups, expected backoff_until per failure, expected start)
    "a stockout group times out after 15 min and is backed off 5 min; its instance, first spotted at 10 s, is "
    "deleted at 910 s, and that scan tries the other group": (
        [NodeGroup("cheap", G8, stockout=True), NodeGroup("dear", InstanceType("g8b", 8, 9.0))],
        [1200.0], 1060.0),
    "alone, the backoff doubles from 5 min to its 30 min cap": (
        [NodeGroup("cheap", G8, stockout=True)], [1200.0, 2700.0, 4800.0, 7500.0], None),
}


@pytest.mark.parametrize("case", BACKOFF, ids=list(BACKOFF))
def test_max_node_provision_time_backs_off_the_group(case):
    groups, expected, start = BACKOFF[case]
    result, _ = run([job("a", gpus=8, run_time=100)], groups, expander="price", horizon=8000)
    failed = result.metrics["cluster_autoscaler_failed_scale_ups_total"]
    assert failed.backoff_until_s.tolist()[:len(expected)] == expected
    assert failed.time_s.tolist()[0] == 900.0
    ev = result.events
    assert (ev.event == "node_group_backoff").sum() == len(failed)
    assert result.jobs.start_s.fillna(-1).tolist() == [start if start is not None else -1]
    if start is None:  # the GPUs never joined: nothing counts as capacity
        assert result.summary()["capacity_gpu_seconds"] == 0.0


def node_fates(result) -> dict[str, tuple]:
    """Each launched node's (ready_s, removed_s), from the events (NaN: never)."""
    ev = result.events
    out = {}
    for node in ev[ev.event.isin(["node_launched", "node_requested"])].node:
        mine = ev[ev.node == node]
        ready = mine[mine.event == "node_ready"].time_s.tolist()
        removed = mine[mine.event == "node_removed"].time_s.tolist()
        out[node] = (ready[0] if ready else math.nan, removed[0] if removed else math.nan)
    return out


def books_agree(result) -> None:
    """The GPU-seconds identity, the nodes table against the timeline, and the node stages against the not-ready
    GPU-seconds: every node not ready from its launch to its ready time, or to its removal when it never got ready."""
    s = result.summary()
    terms = [s[k] for k in ("useful_gpu_seconds", "held_idle_gpu_seconds", "free_gpu_seconds", "not_ready_gpu_seconds")]
    assert min(terms) >= 0 and sum(terms) == pytest.approx(s["capacity_gpu_seconds"])
    tl = result.timeline
    parts = tl[["useful_gpus", "held_idle_gpus", "free_gpus", "not_ready_gpus"]]
    assert (parts >= 0).all().all() and (parts.sum(axis=1) == tl.capacity_gpus).all()
    nodes, last = result.nodes, tl.iloc[-1]
    here = nodes[nodes.removed_s.isna()]
    assert here.gpus.sum() == last.capacity_gpus and here[~here.ready].gpus.sum() == last.not_ready_gpus
    stages = result.metrics["gangkit_autoscaler_node_stages"].set_index("node")
    end = tl.time_s.iloc[-1]
    removed = nodes.set_index("node").removed_s
    booting = sum(8 * (min(end, row.ready_s if not math.isnan(row.ready_s) else removed[node]) - row.launched_s)
                  for node, row in stages.iterrows())
    assert s["not_ready_gpu_seconds"] == pytest.approx(booting)


NAN = math.nan
LATE = {
    # name: (max_node_provision_time, registration s after launch; g8-0's (ready_s, removed_s); the first scale-up
    # that timed out as (time, backoff until), or None; when the job starts). A node is ready 90 s after it registers.
    "max-node-provision-time 100 s, registered at 60 s: the scale-up times out at 100 s, the node is kept and ready at 150 s": (
        100.0, 60.0, (150.0, NAN), (100.0, 400.0), 150.0),
    "max-node-provision-time 60 s, registered at the deadline scan: registered in time, kept, ready at 150 s": (
        60.0, 60.0, (150.0, NAN), (60.0, 360.0), 150.0),
    "max-node-provision-time 10 s: unregistered 10 s after CA first spots it (at 10 s), deleted at 20 s, never joins": (
        10.0, 60.0, (NAN, 20.0), (10.0, 310.0), NAN),
    "max-node-provision-time 200 s, registration at 300 s: deleted at 210 s, before it registers": (
        200.0, 300.0, (NAN, 210.0), (200.0, 500.0), NAN),
    "the default 900 s, much longer than the 150 s start: nothing times out": (
        900.0, 60.0, (150.0, NAN), None, 150.0),
}


@pytest.mark.parametrize("stack", ["pod+autoscaler", "kueue+provreq+autoscaler"])
@pytest.mark.parametrize("case", LATE, ids=list(LATE))
def test_max_node_provision_time_shorter_than_the_node_start(case, stack):
    """cluster-autoscaler 1.35: a scale-up not done within maxNodeProvisionTime times out (the group is backed off);
    only a node still unregistered maxNodeProvisionTime after CA first spots it is deleted, and it never joins."""
    provision, registered, fate, first_failure, start = LATE[case]
    ca = ClusterAutoscaler([NodeGroup("g8", G8)], max_node_provision_time=provision,
                           stages=Stages(registered=registered, initialized=90.0))
    sc = gk.Scenario(list(CPU_ONLY), [job("a", gpus=8, run_time=100)], autoscaler=ca)
    result = gk.simulate(sc, stack=stack, horizon=2500)
    assert node_fates(result)["g8-0"] == pytest.approx(fate, nan_ok=True)
    failed = result.metrics["cluster_autoscaler_failed_scale_ups_total"]
    assert list(zip(failed.time_s, failed.backoff_until_s))[:1] == ([first_failure] if first_failure else [])
    assert set(failed.reason) <= {"timeout"} and (result.events.event == "node_group_backoff").sum() == len(failed)
    assert result.jobs.start_s.tolist() == pytest.approx([start], nan_ok=True)
    removed = result.metrics["cluster_autoscaler_old_unregistered_nodes_removed_count"]
    assert sorted(removed.node) == sorted(n for n, (_, gone) in node_fates(result).items() if not math.isnan(gone))
    if not math.isnan(fate[1]):  # a job that counted on a deleted node waits on it only until its deletion
        assert (result.jobs.wait_node_initialization_s == 0).all()
    books_agree(result)


def test_a_node_registered_longer_than_max_node_startup_time_is_unready_not_upcoming():
    """maxNodeStartupTime 30 s, registration at 60 s, ready at 150 s: from 90 s the node is Unready. It counts as
    provisioned (the request ends well at the scan at 90 s, nothing times out) and no longer as an upcoming node,
    so the pending pod makes CA ask for another node in that scan; the first node still gets ready at 150 s."""
    result, _ = run([job("a", gpus=8, run_time=100)], [NodeGroup("g8", G8)], max_node_provision_time=100.0,
                    max_node_startup_time=30.0, horizon=3000)
    assert result.metrics["cluster_autoscaler_failed_scale_ups_total"].empty
    assert result.metrics["cluster_autoscaler_scaled_up_nodes_total"].time_s.tolist() == [0.0, 90.0]
    assert result.jobs.start_s.tolist() == [150.0]
    books_agree(result)


def test_removing_unregistered_nodes_never_takes_a_group_below_its_min_size():
    """removeOldUnregisteredNodes deletes at most size - minSize nodes: with minSize 1, the stockout node
    (long-unregistered from 110 s, no longer upcoming) stays until the scale-up at 400 s makes the group 2."""
    ca = ClusterAutoscaler([NodeGroup("g8", G8, min_size=1, stockout=True)], max_node_provision_time=100.0)
    result = gk.simulate(gk.Scenario(list(CPU_ONLY), [job("a", gpus=8, run_time=100)]),
                         stack=Stack(KubeScheduler(), suppliers=[ca], name="pod+autoscaler"), horizon=2000)
    ups = result.metrics["cluster_autoscaler_scaled_up_nodes_total"]
    assert list(zip(ups.time_s, ups.group_size)) == [(0.0, 1), (400.0, 2), (1100.0, 2)]
    removed = result.metrics["cluster_autoscaler_old_unregistered_nodes_removed_count"]
    assert list(zip(removed.time_s, removed.node)) == [(410.0, "g8-0"), (1110.0, "g8-1")]
    assert ca.group_size("g8") == 1


SCALE_DOWN = {
    # name: (unneeded time, expected removal time)
    "an empty node goes after 10 min unneeded (scan at 250 s, removed at 850 s)": (600.0, 850.0),
    "a shorter unneeded time still waits out scale-down-delay-after-add (10 min after the scale-up at 0 s)": (60.0, 600.0),
}


@pytest.mark.parametrize("case", SCALE_DOWN, ids=list(SCALE_DOWN))
def test_scale_down_of_unneeded_empty_nodes(case):
    unneeded, at = SCALE_DOWN[case]
    jobs = [job("a", gpus=8, run_time=100), job("tail", gpus=1, run_time=10, submit_time=2000)]
    result, _ = run(jobs, [NodeGroup("g8", G8)], nodes=[Node("static-0", 1)], scale_down_unneeded_time=unneeded)
    removed = result.events[result.events.event == "node_removed"]
    assert list(zip(removed.node, removed.time_s)) == [("g8-0", at)]
    assert result.metrics["cluster_autoscaler_scaled_down_nodes_total"].reason.tolist() == ["empty"]


def test_an_under_used_node_is_drained_when_its_pods_fit_elsewhere_and_the_job_restarts():
    jobs = [job("big", gpus=8, run_time=300), job("small", gpus=2, run_time=2000, submit_time=5)]
    result, _ = run(jobs, [NodeGroup("g8", G8)], nodes=[Node("static-0", 8)])
    down = result.metrics["cluster_autoscaler_scaled_down_nodes_total"]
    assert down[["time_s", "node", "reason"]].values.tolist() == [[900.0, "g8-0", "underutilized"]]
    small = result.jobs.set_index("job").loc["small"]
    assert (small.start_s, small.restarts, small.finish_s) == (160.0, 1, 2900.0)


EMPTY_BUDGET = {
    # name: (max_scale_down_parallelism, expected (time, node) removals of three empty nodes due at 850 s)
    "the default budget of 10 removes all three empty nodes in one scan": (
        10, [(850.0, "g8-0"), (850.0, "g8-1"), (850.0, "g8-2")]),
    "a budget of 2 removes two, and the next scan the third": (2, [(850.0, "g8-0"), (850.0, "g8-1"), (860.0, "g8-2")]),
    "a budget of 1 removes one per scan": (1, [(850.0, "g8-0"), (860.0, "g8-1"), (870.0, "g8-2")]),
    "a budget of 0 removes none": (0, []),
}


@pytest.mark.parametrize("case", EMPTY_BUDGET, ids=list(EMPTY_BUDGET))
def test_max_scale_down_parallelism_bounds_empty_nodes_removed_per_scan(case):
    budget, expected = EMPTY_BUDGET[case]
    jobs = [job(f"a{i}", gpus=8, run_time=100) for i in range(3)] + [job("tail", gpus=1, run_time=10, submit_time=2000)]
    result, _ = run(jobs, [NodeGroup("g8", G8)], nodes=[Node("static-0", 1)], max_scale_down_parallelism=budget)
    down = result.metrics["cluster_autoscaler_scaled_down_nodes_total"]
    assert list(zip(down.time_s, down.node)) == expected


G8C = InstanceType("g8c", 8, 8.0, cpu=4.0)  # one 3-cpu pod per node
DRAIN_BUDGET = {
    # name: (static GPUs, pod GPUs, max_drain_parallelism, max_scale_down_parallelism, expected (time, node) removals)
    "the default drain budget of 1 drains one under-used node per scan": (16, 2, 1, 10, [(900.0, "g8c-0"), (910.0, "g8c-1")]),
    "a drain budget of 2 drains both in one scan": (16, 2, 2, 10, [(900.0, "g8c-0"), (900.0, "g8c-1")]),
    "the drain budget is capped by what max-scale-down-parallelism leaves": (
        16, 2, 2, 1, [(900.0, "g8c-0"), (910.0, "g8c-1")]),
    "a drain budget of 0 drains none": (16, 2, 0, 10, []),
    "the second node stays when its pod does not fit after the first node's pod": (4, 3, 2, 10, [(900.0, "g8c-0")]),
}


@pytest.mark.parametrize("case", DRAIN_BUDGET, ids=list(DRAIN_BUDGET))
def test_max_drain_parallelism_bounds_non_empty_nodes_drained_per_scan(case):
    static, gpus, drain, budget, expected = DRAIN_BUDGET[case]
    jobs = [job("big", gpus=static, run_time=300)] + [
        cjob(f"s{i}", gpus=gpus, cpu=3.0, run_time=2000, submit_time=5) for i in (1, 2)]
    result, _ = run(jobs, [NodeGroup("g8c", G8C)], nodes=[Node("static-0", static)],
                    max_drain_parallelism=drain, max_scale_down_parallelism=budget)
    assert result.metrics["cluster_autoscaler_scaled_up_nodes_total"].value.tolist() == [2]
    down = result.metrics["cluster_autoscaler_scaled_down_nodes_total"]
    down = down[down.time_s < 2160.0]  # at 2160 s the pods that were never moved finish
    assert list(zip(down.time_s, down.node)) == expected
    assert set(down.reason) <= {"underutilized"}


def test_a_node_at_half_utilization_or_more_stays():
    jobs = [job("big", gpus=8, run_time=300), job("half", gpus=4, run_time=2000, submit_time=5)]
    result, _ = run(jobs, [NodeGroup("g8", G8)], nodes=[Node("static-0", 8)])
    assert result.metrics["cluster_autoscaler_scaled_down_nodes_total"].empty


def test_min_size_keeps_nodes():
    jobs = [job("a", gpus=8, run_time=100), job("tail", gpus=1, run_time=10, submit_time=2000)]
    result, _ = run(jobs, [NodeGroup("g8", G8, min_size=1)], nodes=[Node("static-0", 1)])
    assert result.metrics["cluster_autoscaler_scaled_down_nodes_total"].empty


def test_bad_node_groups_and_settings_are_refused_with_the_field_named():
    with pytest.raises(ValueError, match="min_size/max_size"):
        NodeGroup("g", G8, min_size=3, max_size=2)
    with pytest.raises(ValueError, match="expander: expected one of"):
        ClusterAutoscaler([NodeGroup("g", G8)], expander="cheapest")
    with pytest.raises(ValueError, match="unique names"):
        ClusterAutoscaler([NodeGroup("g", G8), NodeGroup("g", G4)])


REFUSED = {
    # name: (settings, message)
    "max_empty_bulk_delete is refused: cluster-autoscaler removed the flag in 1.33": (
        {"max_empty_bulk_delete": 10}, r"max_empty_bulk_delete: cluster-autoscaler removed --max-empty-bulk-delete in 1\.33"
                                       r".*max_scale_down_parallelism.*max_drain_parallelism"),
    "a negative max_scale_down_parallelism is refused": (
        {"max_scale_down_parallelism": -1}, "max_scale_down_parallelism: expected a whole number >= 0, got -1"),
    "a fractional max_drain_parallelism is refused": (
        {"max_drain_parallelism": 1.5}, "max_drain_parallelism: expected a whole number >= 0, got 1.5"),
}


@pytest.mark.parametrize("case", REFUSED, ids=list(REFUSED))
def test_removed_and_bad_scale_down_flags_are_refused_by_name(case):
    settings, message = REFUSED[case]
    with pytest.raises(ValueError, match=message):
        ClusterAutoscaler([NodeGroup("g", G8)], **settings)


def test_a_pod_no_group_can_hold_is_rejected_at_submission():
    result, _ = run([job("huge", gpus=16, run_time=10), job("ok", gpus=4, run_time=10)], [NodeGroup("g8", G8)])
    assert result.jobs.state.tolist() == ["Rejected", "Finished"]


def test_default_autoscaler_groups_cover_the_jobs():
    sc = gk.Scenario(list(CPU_ONLY), [job("a", pods=2, gpus=6, run_time=100)])
    ca = default_autoscaler(sc)
    assert [g.name for g in ca.node_groups] == ["gpu-1", "gpu-2", "gpu-4", "gpu-6", "gpu-8"]
    assert [g.max_size for g in ca.node_groups] == [12, 6, 3, 2, 2]


def test_same_seed_same_tables():
    groups = [NodeGroup("g4", G4), NodeGroup("g8", G8)]
    jobs = [job(f"j{i}", pods=2, gpus=4, run_time=300, submit_time=40 * i) for i in range(5)]
    a, _ = run(jobs, groups, seed=3)
    b, _ = run(jobs, groups, seed=3)
    assert a.events.equals(b.events) and a.jobs.equals(b.jobs)
