"""``gangkit check`` against NodePool limits on ``nvidia.com/gpu``, ``cpu`` and ``memory``, and the GPUs they allow.

Karpenter v1.14 (``scheduler.go``, ``filterByRemainingResources``) never launches an instance type whose capacity
of a limited resource is above what is left of the limit, so a type above the limit itself is never launched by
that pool: a pod only that type holds fits no node (``pod-fits-no-node``), and a gang larger than the types within
every limit hold at once can never start (``supply-too-small``). A flavor's quota is compared with the GPUs the
limits allow (``kueue-quota-exceeds-supply``), and Kueue's default quota for a ``kueue+...+karpenter`` stack counts
them too (``Karpenter.provisionable_gpus``).
"""

from __future__ import annotations

import math
import warnings

import pytest

import gangkit as gk
from gangkit.model.jobs import job
from gangkit.model.nodes import Node
from gangkit.supply import InstanceType, Karpenter, NodePool
from gangkit.supply.limits import most_within

from conftest import case

GPU = "nvidia.com/gpu"
GI = 2**30
# (GPUs, cores, memory, price): g8 is the cheap 8-GPU type, g8-lean its dearer sibling with few cores
TYPES = {"g8": (8, 96, "1152Gi", 32.0), "g8-lean": (8, 32, "1152Gi", 40.0), "g1": (1, 8, "64Gi", 2.0)}
KUEUE = "kueue.x-k8s.io/v1beta2"


def stack(limits: dict, types=("g8",), pods=1, gpus=8, cores=None, quota=None) -> list[dict]:
    """A NodePool ``gpu`` of ``types`` with ``limits`` and no Node; a Volcano gang of ``pods`` pods of ``gpus`` GPUs
    (and ``cores`` cores when given). With ``quota``, the Job goes through Kueue: one flavor and one ClusterQueue of
    that many GPUs."""
    settings = {"apiVersion": "gangkit/v1alpha1", "kind": "Karpenter", "metadata": {"name": "karpenter"},
                "spec": {"instanceTypes": [{"name": t, "pricePerHour": TYPES[t][3],
                                            "capacity": {GPU: str(TYPES[t][0]), "cpu": str(TYPES[t][1]),
                                                         "memory": TYPES[t][2]}} for t in types]}}
    pool = {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "gpu"},
            "spec": {"limits": limits, "template": {"metadata": {"labels": {"gpu": "a100"}}, "spec": {
                "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
                "requirements": [{"key": "node.kubernetes.io/instance-type", "operator": "In", "values": list(types)}]}}}}
    group = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
             "metadata": {"name": "train", "namespace": "team-a"}, "spec": {"minMember": pods}}
    resources = {"limits": {GPU: str(gpus), **({"cpu": str(cores)} if cores else {})}}
    train = {"apiVersion": "batch/v1", "kind": "Job",
             "metadata": {"name": "train", "namespace": "team-a", "annotations": {"gangkit/run-time": "1h"}},
             "spec": {"parallelism": pods, "completions": pods, "template": {
                 "metadata": {"annotations": {"scheduling.k8s.io/group-name": "train"}},
                 "spec": {"schedulerName": "volcano", "restartPolicy": "Never", "containers": [
                     {"name": "worker", "image": "trainer:1.0", "resources": resources}]}}}}
    sim = {"apiVersion": "gangkit/v1alpha1", "kind": "Simulation", "metadata": {"name": "s"},
           "spec": {"stack": "gang+karpenter" if quota is None else "kueue+gang+karpenter"}}
    docs = [settings, pool, group, train, sim]
    if quota is not None:
        train["metadata"]["labels"] = {"kueue.x-k8s.io/queue-name": "gpu"}
        docs += [{"apiVersion": KUEUE, "kind": "ResourceFlavor", "metadata": {"name": "a100"},
                  "spec": {"nodeLabels": {"gpu": "a100"}}},
                 {"apiVersion": KUEUE, "kind": "ClusterQueue", "metadata": {"name": "team-a"},
                  "spec": {"namespaceSelector": {}, "resourceGroups": [
                      {"coveredResources": [GPU], "flavors": [
                          {"name": "a100", "resources": [{"name": GPU, "nominalQuota": quota}]}]}]}},
                 {"apiVersion": KUEUE, "kind": "LocalQueue", "metadata": {"name": "gpu", "namespace": "team-a"},
                  "spec": {"clusterQueue": "team-a"}}]
    return docs


def findings(docs) -> dict:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {f.code: f for f in gk.check_manifests(docs)}


# --- one pod: a type above a limit is never launched ----------------------------------------------------------------
ONE_POD = [
    # (limits, the pool's types, the pod's GPUs and cores, the findings, the GPUs of the largest machine the pool
    #  may launch for it)
    case("no limit: a g8 holds the 8-GPU pod", {}, ("g8",), 8, None, [], 8),
    case("a cpu limit of 64 below the g8's 96 cores: the pool never launches it, the pod fits nothing",
         {"cpu": "64"}, ("g8",), 8, None, ["pod-fits-no-node"], 0),
    case("... a cpu limit of 96, the g8's own cores, is enough (equal is allowed)",
         {"cpu": "96"}, ("g8",), 8, None, [], 8),
    case("... the lean g8 (32 cores) fits under the same 64-core limit",
         {"cpu": "64"}, ("g8", "g8-lean"), 8, None, [], 8),
    case("... but not a pod of 40 cores, which only the g8 holds",
         {"cpu": "64"}, ("g8", "g8-lean"), 8, 40, ["pod-fits-no-node"], 8),
    case("a memory limit of 512Gi below the g8's 1152Gi", {"memory": "512Gi"}, ("g8",), 8, None,
         ["pod-fits-no-node"], 0),
    case("... a 1-GPU pod still fits a g1 (64Gi)", {"memory": "512Gi"}, ("g8", "g1"), 1, None, [], 1),
    case("a GPU limit of 16 with cpu and memory to spare", {GPU: "16", "cpu": "200", "memory": "4Ti"}, ("g8",), 8,
         None, [], 8),
]


@pytest.mark.parametrize("limits, types, gpus, cores, codes, nodepool_gpus", ONE_POD)
def test_a_pod_only_types_above_a_limit_hold_fits_no_node(limits, types, gpus, cores, codes, nodepool_gpus):
    found = findings(stack(limits, types, gpus=gpus, cores=cores))
    assert sorted(found) == codes, [f.message for f in found.values()]
    if codes:
        assert found["pod-fits-no-node"].numbers["workers"]["nodepool_gpus"] == nodepool_gpus, \
            found["pod-fits-no-node"].numbers


# --- a gang: the most pods the types within every limit hold at once ----------------------------------------------------
GANGS = [
    # (limits, types, the gang's pods, GPUs per pod, the findings, the most pods the pool holds at once)
    case("a cpu limit of 192: two g8 at once, a gang of three 8-GPU pods never starts",
         {"cpu": "192"}, ("g8",), 3, 8, ["supply-too-small"], 2),
    case("... a gang of two does", {"cpu": "192"}, ("g8",), 2, 8, [], None),
    case("... with the lean type too, six 32-core nodes fit in 192 cores", {"cpu": "192"}, ("g8", "g8-lean"), 3, 8,
         [], None),
    case("a memory limit of 2304Gi: two g8", {"memory": "2304Gi"}, ("g8",), 3, 8, ["supply-too-small"], 2),
    case("a GPU limit of 24 lowered by a cpu limit of 192", {GPU: "24", "cpu": "192"}, ("g8",), 3, 8,
         ["supply-too-small"], 2),
    case("100 cores of g8 (96) and g1 (8): twelve g1 hold twelve 1-GPU pods, more than one g8's eight",
         {"cpu": "100"}, ("g8", "g1"), 13, 1, ["supply-too-small"], 12),
    # an upper bound, not a promise: Karpenter's packing grows one NodeClaim into a g8 for these pods, and a run
    # leaves this gang waiting; the check flags only what can never start
    case("... a gang of twelve is within that bound: not flagged", {"cpu": "100"}, ("g8", "g1"), 12, 1, [], None),
]


@pytest.mark.parametrize("limits, types, pods, gpus, codes, most", GANGS)
def test_a_gang_larger_than_what_fits_within_every_limit_never_starts(limits, types, pods, gpus, codes, most):
    found = findings(stack(limits, types, pods=pods, gpus=gpus))
    assert sorted(found) == codes, [f.message for f in found.values()]
    if codes:
        numbers = found["supply-too-small"].numbers["workers"]
        assert (numbers["needed"], numbers["most"], numbers["where"]["NodePool gpu"]) == (pods, most, most)


# --- Kueue's quota against the GPUs the limits allow ------------------------------------------------------------------
QUOTAS = [
    # (limits, types, the flavor's nominal GPU quota, the findings, the GPUs the finding counts)
    case("a cpu limit of 96 allows one g8: a quota of 16 GPUs is more than it can ever hold",
         {"cpu": "96"}, ("g8",), 16, ["kueue-quota-exceeds-supply"], 8),
    case("... a quota of 8 is not", {"cpu": "96"}, ("g8",), 8, [], None),
    case("... and with the lean type, 96 cores are three nodes, 24 GPUs", {"cpu": "96"}, ("g8", "g8-lean"), 24, [], None),
    case("a GPU limit of 32 lowered by a memory limit of 2304Gi to two g8", {GPU: "32", "memory": "2304Gi"}, ("g8",),
         24, ["kueue-quota-exceeds-supply"], 16),
    case("a GPU limit alone counts in full, as before", {GPU: "20"}, ("g8",), 24, ["kueue-quota-exceeds-supply"], 20),
]


@pytest.mark.parametrize("limits, types, quota, codes, gpus", QUOTAS)
def test_a_flavors_quota_is_compared_with_the_gpus_the_limits_allow(limits, types, quota, codes, gpus):
    found = findings(stack(limits, types, quota=quota))
    assert sorted(found) == codes, [f.message for f in found.values()]
    if codes:
        assert found["kueue-quota-exceeds-supply"].numbers == {"nominal_quota": quota, "gpus": gpus}


# --- Kueue's default quota for a kueue+...+karpenter stack ----------------------------------------------------------------
def instance_type(name: str) -> InstanceType:
    gpus, cores, memory, price = TYPES[name]
    return InstanceType(name, gpus, price, cpu=float(cores), memory=int(memory[:-2]) * GI)


PROVISIONABLE = [
    # (limits of one dynamic pool, its types, the GPUs it can provide; None: unbounded, the jobs' GPUs count)
    case("no limit: unbounded", {}, ("g8",), None),
    case("a GPU limit counts in full", {GPU: 20}, ("g8",), 20),
    case("96 cores of 96-core 8-GPU types: one node", {"cpu": 96}, ("g8",), 8),
    case("150 cores: still one g8 (two need 192)", {"cpu": 150}, ("g8",), 8),
    case("96 cores with the lean type: three lean nodes", {"cpu": 96}, ("g8", "g8-lean"), 24),
    case("a memory limit below every type: nothing", {"memory": 32 * GI}, ("g8", "g1"), 0),
    case("a GPU limit below what the cpu limit allows keeps the GPU limit", {GPU: 8, "cpu": 960}, ("g8",), 8),
    case("1Ti of memory: sixteen g1 of 64Gi, 16 GPUs, not zero g8", {"memory": 1024 * GI}, ("g8", "g1"), 16),
]


@pytest.mark.parametrize("limits, types, gpus", PROVISIONABLE)
def test_the_default_quota_counts_the_gpus_every_limit_allows(limits, types, gpus):
    sc = gk.Scenario([Node("system-0", 0)], [job("a", pods=4, gpus=8)])
    k = Karpenter([NodePool("gpu", list(types), limits)], [instance_type(t) for t in types])
    assert k.provisionable_gpus(sc) == (32 if gpus is None else gpus)  # unbounded: the jobs' 4 x 8 GPUs


# --- the knapsack itself ------------------------------------------------------------------------------------------------
CAP = {"g8": {GPU: 8, "cpu": 96.0, "memory": 1152 * GI}, "g1": {GPU: 1, "cpu": 8.0, "memory": 64 * GI},
       "half": {GPU: 1, "cpu": 0.5, "memory": 0}}
PACKING = [
    # (limits, (type, value of one machine) options, the most value)
    case("no limit, something to bring: unbounded", {}, [("g8", 8)], math.inf),
    case("no limit, nothing to bring", {}, [("g8", 0)], 0),
    case("cores in units of their common divisor: 150 cores hold 1 g8 + 6 g1, or 18 g1", {"cpu": 150},
         [("g8", 8), ("g1", 1)], 18),
    case("fractions of a core are exact: 1.5 cores hold three half-core machines", {"cpu": 1.5}, [("half", 1)], 3),
    case("a type without a figure adds 0 of it: unbounded", {"memory": GI}, [("half", 1)], math.inf),
    case("each limit on its own, the smallest kept", {GPU: 12, "cpu": 1000}, [("g8", 8), ("g1", 1)], 12),
    case("a limit below every machine: nothing", {"cpu": 4}, [("g8", 8), ("g1", 1)], 0),
]


@pytest.mark.parametrize("limits, options, most", PACKING)
def test_machines_are_packed_within_each_limit(limits, options, most):
    assert most_within(limits, [(CAP[t], v) for t, v in options]) == most


@pytest.mark.parametrize("limits, named", [
    case("a cpu limit names spec.limits.cpu", {"cpu": "192"}, ["spec.limits.cpu"]),
    case("a memory limit names spec.limits.memory", {"memory": "2304Gi"}, ["spec.limits.memory"]),
    case("GPU and cpu limits name both", {GPU: "24", "cpu": "192"}, ["spec.limits.nvidia.com/gpu", "spec.limits.cpu"]),
    case("a GPU limit names it, as before", {GPU: "16"}, ["spec.limits.nvidia.com/gpu"]),
])
def test_the_supply_finding_names_the_limits_that_bound_the_pool(limits, named):
    found = findings(stack(limits, ("g8",), pods=3, gpus=8))
    fields = [f for o, f in found["supply-too-small"].fields if o == "NodePool gpu"]
    assert fields == named
