"""cluster-autoscaler as a node supplier: scan loop, expanders, max size, failed scale-ups and backoff, scale-down.

Each case builds a :class:`gangkit.Stack` with the pod-by-pod scheduler and
a :class:`gangkit.supply.autoscaler.ClusterAutoscaler`. Clusters start with one
node because a scenario needs at least one; the autoscaler brings the GPUs.
Default stages (assumptions): a node is ready 150 s after it is requested.
"""

from __future__ import annotations

import pytest

import gangkit as gk
from gangkit import Node, Stack, job
from gangkit.placement.kube_scheduler import KubeScheduler
from gangkit.supply.autoscaler import ClusterAutoscaler, NodeGroup, default_autoscaler
from gangkit.supply.cloud import InstanceType
from gangkit.volcano.scheduler import VolcanoGang

G4 = InstanceType("g4", 4, 3.5)
G8 = InstanceType("g8", 8, 8.0)
CPU_ONLY = [Node("system-0", 0)]


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
    "least-waste picks the group that leaves the fewest idle GPUs": ("least-waste", job("a", gpus=4, run_time=10), "g4"),
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


def test_the_default_random_expander_is_seeded():
    groups = [NodeGroup("g4", G4), NodeGroup("g8", G8)]
    chosen = [run([job("a", gpus=4, run_time=10)], groups, seed=s)[0].metrics["cluster_autoscaler_scaled_up_nodes_total"].node_group[0]
              for s in range(8)]
    again = [run([job("a", gpus=4, run_time=10)], groups, seed=s)[0].metrics["cluster_autoscaler_scaled_up_nodes_total"].node_group[0]
             for s in range(8)]
    assert chosen == again and set(chosen) == {"g4", "g8"}


def test_max_size_provisions_part_of_a_gang_and_the_rest_waits():
    result, ca = run([job("big", pods=4, gpus=8, run_time=100)], [NodeGroup("g8", G8, max_size=2)], kind="gang", horizon=3000)
    assert result.metrics["cluster_autoscaler_scaled_up_nodes_total"].value.tolist() == [2]
    assert ca.group_size("g8") == 2
    assert result.jobs.state.tolist() == ["WaitingAtEnd"] and result.summary()["held_idle_gpus_at_end"] == 0


BACKOFF = {
    # name: (groups, expected backoff_until per failure, expected start)
    "a stockout group is given up after 15 min and backed off 5 min; the next scan tries the other group": (
        [NodeGroup("cheap", G8, stockout=True), NodeGroup("dear", InstanceType("g8b", 8, 9.0))],
        [1200.0], 1050.0),
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


LATE_NODES = {
    # name: (max_node_provision_time, the node's stages: launched at 0, registered at 60 s, ready at 150 s)
    "given up at 100 s, before it is ready at 150 s": 100.0,
    "given up at 60 s, the instant it registers": 60.0,
    "given up at 10 s, before it registers": 10.0,
}


@pytest.mark.parametrize("case", LATE_NODES, ids=list(LATE_NODES))
def test_a_node_given_up_before_it_is_ready_never_becomes_ready(case):
    """maxNodeProvisionTime shorter than the boot: CA deletes the node at the deadline; it must not join later."""
    result, _ = run([job("a", gpus=8, run_time=100)], [NodeGroup("g8", G8)], max_node_provision_time=LATE_NODES[case],
                    horizon=3000)
    ev = result.events
    removed = dict(zip(ev[ev.event == "node_removed"].node, ev[ev.event == "node_removed"].time_s))
    assert removed, "the late nodes are given up"
    after = ev[ev.node.isin(removed) & ev.event.str.startswith("node_") & ~ev.event.isin(["node_removed", "node_group_backoff"])]
    assert [(e.node, e.event) for e in after.itertuples() if e.time_s > removed[e.node]] == []
    assert (ev.event == "node_ready").sum() == 0 and result.jobs.state.tolist() == ["WaitingAtEnd"]
    s = result.summary()
    terms = [s[k] for k in ("useful_gpu_seconds", "held_idle_gpu_seconds", "free_gpu_seconds", "not_ready_gpu_seconds")]
    assert min(terms) >= 0 and sum(terms) == pytest.approx(s["capacity_gpu_seconds"])
    assert s["not_ready_gpu_seconds"] == s["capacity_gpu_seconds"] > 0 and s["allocated_utilization"] <= 1
    tl = result.timeline
    assert (tl[["useful_gpus", "held_idle_gpus", "free_gpus", "not_ready_gpus"]] >= 0).all().all()


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


def test_a_pod_no_group_can_hold_is_rejected_at_submission():
    result, _ = run([job("huge", gpus=16, run_time=10), job("ok", gpus=4, run_time=10)], [NodeGroup("g8", G8)])
    assert result.jobs.state.tolist() == ["Rejected", "Finished"]


def test_default_autoscaler_groups_cover_the_jobs():
    sc = gk.Scenario(list(CPU_ONLY), [job("a", pods=2, gpus=6, run_time=100)])
    ca = default_autoscaler(sc)
    assert [g.name for g in ca.node_groups] == ["gpu-1", "gpu-2", "gpu-4", "gpu-6", "gpu-8"]
    assert [g.max_size for g in ca.node_groups] == [12, 6, 3, 2, 2]
    assert ca.expander == "random"


def test_same_seed_same_tables():
    groups = [NodeGroup("g4", G4), NodeGroup("g8", G8)]
    jobs = [job(f"j{i}", pods=2, gpus=4, run_time=300, submit_time=40 * i) for i in range(5)]
    a, _ = run(jobs, groups, seed=3)
    b, _ = run(jobs, groups, seed=3)
    assert a.events.equals(b.events) and a.jobs.equals(b.jobs)
