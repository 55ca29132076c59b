"""Kueue's ProvisioningRequest admission check with cluster-autoscaler: stack ``kueue+provreq+autoscaler``.

Quota first, then capacity for the whole gang at once (class
best-effort-atomic-scale-up: all or nothing), then admission; on failure
the check goes Retry (quota released, requeued after 60 s, 120 s, 240 s)
and Rejected after backoffLimitCount retries (workload Deactivated).
"""

from __future__ import annotations

import warnings

import pytest

import gangkit as gk
from gangkit import Node, job
from gangkit.kueue.objects import (
    GPU,
    ClusterQueue,
    FlavorQuotas,
    KueueSetup,
    LocalQueue,
    Quota,
    ResourceFlavor,
    ResourceGroup,
)
from gangkit.kueue.provisioning import AdmissionCheck, ProvisioningRequestCheck, ProvisioningRequestConfig
from gangkit.manifests import GangkitInputWarning
from gangkit.supply.autoscaler import ClusterAutoscaler, NodeGroup
from gangkit.supply.cloud import InstanceType
from gangkit.supply.provisioning_request import CHECK_CAPACITY

from conftest import case
from paths import REPO

G8 = InstanceType("g8", 8, 8.0)
CPU_ONLY = [Node("system-0", 0)]
STACK = "kueue+provreq+autoscaler"


def kueue(gpus=64):
    cq = ClusterQueue("cq", [ResourceGroup((GPU,), (FlavorQuotas("f", {GPU: Quota(gpus)}),))])
    return KueueSetup([ResourceFlavor("f")], [cq], [LocalQueue("default", "default", "cq")])


def run(jobs, max_size=4, nodes=CPU_ONLY, config=None, horizon=20000, expiry=1800.0, **kw):
    ca = ClusterAutoscaler([NodeGroup("g8", G8, max_size=max_size)], provisioning_request_expiry=expiry, **kw)
    check = AdmissionCheck(config=config) if config is not None else None
    sc = gk.Scenario(list(nodes), jobs, autoscaler=ca, kueue=kueue(), admission_check=check)
    return gk.simulate(sc, stack=STACK, horizon=horizon)


def waits(result, name):
    row = result.jobs.set_index("job").loc[name]
    assert row.wait_unattributed_s == 0.0
    return row.wait_quota_s, row.wait_admission_check_s, row.wait_placement_s


def test_the_stack_is_available_by_name_and_its_layers_in_order():
    assert STACK in gk.stacks.STACKS
    stack = gk.stacks.build_stack(STACK, gk.RunSettings(), gk.Scenario(list(CPU_ONLY), [job("a", gpus=8)]))
    assert [layer.name for layer in stack.admission] == ["quota", "admission_check"]
    assert isinstance(stack.admission[1], ProvisioningRequestCheck) and isinstance(stack.admission[1], gk.AdmissionLayer)
    assert [s.name for s in stack.suppliers] == ["autoscaler"]


ADMITTED = {
    # name: (jobs, nodes, expected (quota, admission check, placement) waits of "a", scale-ups); the 150 s the
    # pods wait for the nodes their request booked are in the node-stage buckets (gangkit.engine.waits)
    "capacity requested at the scan at 0 s: admitted at once, the pods wait 150 s for the nodes": (
        [job("a", pods=4, gpus=8, run_time=100)], CPU_ONLY, (0.0, 0.0, 0.0), [4]),
    "a request made at 3 s waits for the scan at 10 s in the admission check": (
        [job("a", pods=2, gpus=8, run_time=100, submit_time=3)], CPU_ONLY, (0.0, 7.0, 0.0), [2]),
    "capacity found on existing nodes: admitted, nothing launched": (
        [job("a", pods=2, gpus=8, run_time=100)], [Node("n0", 8), Node("n1", 8)], (0.0, 0.0, 0.0), []),
}


@pytest.mark.parametrize("case", ADMITTED, ids=list(ADMITTED))
def test_admitted_when_provisioned(case):
    jobs, nodes, expected, ups = ADMITTED[case]
    result = run(jobs, nodes=nodes)
    assert waits(result, "a") == expected
    row = result.jobs.set_index("job").loc["a"]
    assert row.wait_node_registration_s + row.wait_node_initialization_s == (150.0 if ups else 0.0)
    assert result.metrics["cluster_autoscaler_scaled_up_nodes_total"].value.tolist() == ups
    states = result.metrics["gangkit_admission_check_states"].state.tolist()
    assert states == ["Pending", "Ready"] and result.jobs.state.tolist() == ["Finished"]


def test_all_or_nothing_no_node_is_launched_for_part_of_a_gang():
    # the node group holds 2 of the gang's 4 pods: unlike Karpenter under a NodePool limit, nothing is launched
    result = run([job("big", pods=4, gpus=8, run_time=100)], max_size=2, horizon=1000)
    assert result.metrics["cluster_autoscaler_scaled_up_nodes_total"].empty
    assert result.summary()["capacity_gpu_seconds"] == 0.0
    row = result.jobs.iloc[0]
    assert row.state == "WaitingAtEnd" and "ProvisioningRequestPending" in row.reason and "2 of 4" not in row.reason
    assert "4 of 4 pods (32 GPUs) do not fit" in row.reason
    assert waits(result, "big") == (0.0, 1000.0, 0.0)


RETRY = {
    # name: (backoffLimitCount, expected evictions (time), expected deactivation time, quota wait)
    "defaults: three retries 60 s, 120 s, 240 s apart, then Rejected and Deactivated": (
        3, [1800.0, 3660.0, 5580.0], 7620.0, 420.0),
    "backoffLimitCount 1: one retry": (1, [1800.0], 3660.0, 60.0),
    "backoffLimitCount 0: the first failure rejects it": (0, [], 1800.0, 0.0),
}


@pytest.mark.parametrize("case", RETRY, ids=list(RETRY))
def test_failed_requests_retry_with_backoff_then_reject(case):
    limit, evictions, deactivated, quota_wait = RETRY[case]
    result = run([job("big", pods=4, gpus=8, run_time=100)], max_size=2,
                 config=ProvisioningRequestConfig(backoff_limit_count=limit))
    ev = result.events[result.events.job == "big"]
    assert ev[ev.event == "evicted"].time_s.tolist() == evictions
    assert ev[ev.event == "deactivated"].time_s.tolist() == [deactivated]
    row = result.jobs.iloc[0]
    assert row.state == "Deactivated" and "AdmissionCheckRejected" in row.reason
    assert waits(result, "big") == (quota_wait, deactivated - quota_wait, 0.0)
    evicted = result.metrics["kueue_evicted_workloads_total"]
    assert evicted["count"].sum() == len(evictions) and set(evicted.reason) <= {"AdmissionCheck"}
    requests = result.metrics["gangkit_provisioning_requests"]
    assert requests[requests.state == "Failed"].provisioning_request.tolist() == [f"big-provisioning-{n}" for n in range(1, len(evictions) + 2)]


def test_the_quota_is_released_during_the_retry_backoff_so_another_workload_runs():
    # big (32 GPUs) and small (8 GPUs) share a 32-GPU quota: while big backs off, small gets the quota
    cq = ClusterQueue("cq", [ResourceGroup((GPU,), (FlavorQuotas("f", {GPU: Quota(32)}),))])
    setup = KueueSetup([ResourceFlavor("f")], [cq], [LocalQueue("default", "default", "cq")])
    ca = ClusterAutoscaler([NodeGroup("g8", G8, max_size=2)], provisioning_request_expiry=1800.0)
    jobs = [job("big", pods=4, gpus=8, run_time=100), job("small", gpus=8, run_time=100, submit_time=1)]
    result = gk.simulate(gk.Scenario(list(CPU_ONLY), jobs, autoscaler=ca, kueue=setup), stack=STACK, horizon=20000)
    small = result.jobs.set_index("job").loc["small"]
    # quota at 1800 s (big's request expired in the scan at 1800 s); the next scan, 10 s later, scales up
    assert small.state == "Finished" and small.start_s == 1810.0 + 150.0
    assert (small.wait_quota_s, small.wait_admission_check_s) == (1799.0, 10.0)


def test_check_capacity_only_counts_existing_nodes():
    config = ProvisioningRequestConfig(provisioning_class=CHECK_CAPACITY)
    result = run([job("a", gpus=8, run_time=100)], config=config, horizon=1000)
    assert result.metrics["cluster_autoscaler_scaled_up_nodes_total"].empty
    assert result.jobs.state.tolist() == ["WaitingAtEnd"]
    result = run([job("a", gpus=8, run_time=100)], nodes=[Node("n0", 8)], config=config)
    assert result.jobs.state.tolist() == ["Finished"]


def test_capacity_found_for_one_request_is_booked_and_not_counted_for_the_next():
    # one free 8-GPU node: the first request books it, the second (one scan later) needs a new node
    jobs = [job("a", gpus=8, run_time=100), job("b", gpus=8, run_time=100)]
    result = run(jobs, nodes=[Node("n0", 8)])
    requests = result.metrics["gangkit_provisioning_requests"]
    provisioned = requests[requests.state == "Provisioned"]
    assert provisioned.reason.tolist() == ["CapacityIsFound", "CapacityIsProvisioned"]
    assert provisioned.time_s.tolist() == [0.0, 10.0]
    assert result.metrics["cluster_autoscaler_scaled_up_nodes_total"].value.tolist() == [1]


def test_pods_ready_timeout_counts_from_admission_not_from_quota_reservation():
    # the request waits 1500 s (two expiries would be needed for a timeout from quota reservation)
    ca_nodes = [Node("system-0", 0)]
    result = run([job("a", gpus=8, run_time=100, submit_time=0)], nodes=ca_nodes, expiry=100000.0,
                 stages=None, scan_interval=1500.0)
    row = result.jobs.iloc[0]
    assert row.state == "Finished" and row.restarts == 0


def test_bad_config_is_refused_with_the_field_named():
    with pytest.raises(ValueError, match="provisioningClassName"):
        ProvisioningRequestConfig(provisioning_class="queued-provisioning.gke.io")
    with pytest.raises(ValueError, match="backoffLimitCount"):
        ProvisioningRequestConfig(backoff_limit_count=-1)


def test_the_default_stack_runs_a_gang_from_zero():
    sc = gk.Scenario(list(CPU_ONLY), [job("a", pods=4, gpus=8, run_time=600), job("b", pods=2, gpus=4, run_time=300, submit_time=30)])
    result = gk.simulate(sc, stack=STACK)
    assert result.jobs.state.tolist() == ["Finished", "Finished"]
    assert (result.jobs.wait_unattributed_s == 0).all()
    s = result.summary()
    assert s["useful_gpu_seconds"] + s["held_idle_gpu_seconds"] + s["free_gpu_seconds"] + s["not_ready_gpu_seconds"] == s["capacity_gpu_seconds"]


# -- YAML: AdmissionCheck, ProvisioningRequestConfig, ClusterQueue admissionChecksStrategy, ClusterAutoscaler ----------

from gangkit.manifests import load_manifests  # noqa: E402

EXAMPLE = REPO / "examples" / "kueue-provisioning-request.yaml"


def test_the_example_loads_the_check_and_the_node_groups_and_runs():
    sc = load_manifests(EXAMPLE)
    assert sc.warnings == [] and sc.settings.stack == STACK
    (check,) = sc.kueue.admission_checks
    assert (check.name, check.config.name, check.config.backoff_limit_count) == ("capacity", "atomic", 3)
    (group,) = sc.autoscaler.node_groups
    assert (group.name, group.instance_type.gpus, group.max_size, sc.autoscaler.provisioning_request_expiry) == ("a100", 8, 4, 1800.0)
    result = gk.simulate(sc)
    jobs = result.jobs.set_index("job")
    assert jobs.state.tolist() == ["Finished", "Finished"]
    assert (jobs.loc["team-a/pretrain", "start_s"], jobs.loc["team-a/sweep", "start_s"]) == (150.0, 3840.0)
    states = result.metrics["gangkit_admission_check_states"]
    assert states[states.state == "Retry"].time_s.tolist() == [1860.0, 3720.0]


def _example_with(old: str, new: str) -> str:
    text = EXAMPLE.read_text()
    assert old in text
    return text.replace(old, new)


BAD_YAML = {
    # name: (replace, by, object, field, words)
    "parameters naming a config that is not there": (
        "    name: atomic\n", "    name: missing\n", "AdmissionCheck capacity", "spec.parameters.name", "'missing' is not in the input"),
    "an unknown provisioning class": (
        "best-effort-atomic-scale-up.autoscaling.x-k8s.io", "queued-provisioning.gke.io",
        "ProvisioningRequestConfig atomic", "spec.provisioningClassName", "expected one of"),
    "a negative retry limit": (
        "backoffLimitCount: 3", "backoffLimitCount: -1", "ProvisioningRequestConfig atomic",
        "spec.retryStrategy.backoffLimitCount", ">= 0"),
    "a node group with minSize above maxSize": (
        "minSize: 0", "minSize: 5", "ClusterAutoscaler cluster-autoscaler", "spec.nodeGroups[0].minSize", "minSize <= maxSize"),
    "an unknown expander": (
        "expander: random", "expander: cheapest", "ClusterAutoscaler cluster-autoscaler", "spec.expander", "least-waste"),
    "a bad duration": (
        "scanInterval: 10s", "scanInterval: soon", "ClusterAutoscaler cluster-autoscaler", "spec.scanInterval", ""),
    "the flag cluster-autoscaler 1.33 removed, maxEmptyBulkDelete": (
        "  expander: random\n", "  expander: random\n  maxEmptyBulkDelete: 10\n", "ClusterAutoscaler cluster-autoscaler",
        "spec.maxEmptyBulkDelete", "removed --max-empty-bulk-delete in 1.33"),
}


@pytest.mark.parametrize("case", BAD_YAML, ids=list(BAD_YAML))
def test_bad_yaml_is_one_error_naming_object_and_field(case):
    old, new, obj, field, words = BAD_YAML[case]
    with pytest.raises(gk.ScenarioError) as info:
        load_manifests(_example_with(old, new))
    problems = [p for p in info.value.problems if p.obj == obj and p.field == field]
    assert len(problems) == 1, info.value.problems
    assert words in problems[0].message


INACTIVE = [
    case("an AdmissionCheck of another controller", "controllerName: kueue.x-k8s.io/provisioning-request",
         "controllerName: example.com/other", "AdmissionCheckInactive"),
    case("a ClusterQueue naming a check that is not there", "    - name: capacity\n", "    - name: nope\n",
         "AdmissionCheckNotFound"),
]


@pytest.mark.parametrize("old, new, reason", INACTIVE)
def test_a_queue_whose_check_kueue_cannot_run_is_inactive_and_admits_nothing(old, new, reason):
    """As Kueue keeps it: Active=False with this reason; its workloads wait, 'ClusterQueue team-a-cq is inactive'."""
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always", GangkitInputWarning)
        sc = load_manifests(_example_with(old, new))
    assert any(f"ClusterQueue team-a-cq is inactive, as Kueue keeps it ({reason}" in str(w.message) for w in seen)
    result = gk.simulate(sc, stack=STACK)
    assert result.summary()["jobs_finished"] == 0
    assert "ClusterQueue team-a-cq is inactive" in str(result.diagnose())


def test_a_workload_preempted_while_its_request_waits_keeps_every_second_of_its_wait():
    from gangkit.kueue.objects import Preemption

    cq = ClusterQueue("cq", [ResourceGroup((GPU,), (FlavorQuotas("f", {GPU: Quota(32)}),))],
                      preemption=Preemption(within_cluster_queue="LowerPriority"))
    setup = KueueSetup([ResourceFlavor("f")], [cq], [LocalQueue("default", "default", "cq")])
    ca = ClusterAutoscaler([NodeGroup("g8", G8, max_size=2)])
    jobs = [job("low", pods=4, gpus=8, run_time=100), job("high", pods=2, gpus=8, run_time=100, submit_time=100, priority=10)]
    result = gk.simulate(gk.Scenario(list(CPU_ONLY), jobs, autoscaler=ca, kueue=setup), stack=STACK, horizon=1000)
    rows = result.jobs.set_index("job")
    assert rows.loc["high", "state"] == "Finished" and rows.loc["high", "start_s"] == 100.0 + 150.0  # scan at 100 s
    low = rows.loc["low"]
    assert low.state == "WaitingAtEnd" and low.restarts == 1
    # admission check 0-100 s, preempted: quota layer 100-350 s (high holds the quota), admission check again 350-1000 s
    assert (low.wait_quota_s, low.wait_admission_check_s, low.wait_unattributed_s) == (250.0, 750.0, 0.0)
    names = result.metrics["gangkit_provisioning_requests"].provisioning_request
    assert sorted(set(names[names.str.startswith("low")])) == ["low-provisioning-1"]  # a preemption is not a retry
