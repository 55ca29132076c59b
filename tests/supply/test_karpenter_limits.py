"""Karpenter NodePool ``spec.limits`` on every resource gangkit models: ``nvidia.com/gpu``, ``cpu``, ``memory``.

Karpenter v1.14 (``pkg/controllers/provisioning/scheduling/scheduler.go``) keeps, per NodePool, what is left
of each limit: the limit minus the capacity of the pool's nodes, in flight or ready. An instance type whose
capacity of a limited resource is above what is left is filtered out of a new NodeClaim; a NodeClaim with no
type left is not created. Each table below is one rule. In the runs, jobs ``a``, ``b`` and ``c`` come 20 s
apart, each in its own batch, while the nodes of the earlier ones are still in flight (ready 150 s after
launch): the in-flight NodeClaims count against the limits.
"""

from __future__ import annotations

import warnings

import pytest

import gangkit as gk
from gangkit import Node, job
from gangkit.manifests import load_manifests
from gangkit.supply import InstanceType, Karpenter, NodePool
from gangkit.supply.karpenter import resource_type

from conftest import case

GPU = "nvidia.com/gpu"
GI = 2**30
# prices: the g8 is the cheaper 8-GPU type, the g8-lean (fewer cores, less memory) the dearer one
TYPES = [InstanceType("g8", 8, 32.0, cpu=96, memory=1024 * GI), InstanceType("g8-lean", 8, 40.0, cpu=32, memory=256 * GI),
         InstanceType("g4", 4, 16.0, cpu=48, memory=512 * GI), InstanceType("g1", 1, 4.5, cpu=8, memory=64 * GI),
         InstanceType("g2-bare", 2, 2.0)]  # no cpu or memory figure, as gangkit's default gpu-N types
BY_NAME = {t.name: t for t in TYPES}


def karpenter(limits, types=("g8", "g4", "g1"), consolidate_after=None):
    return Karpenter([NodePool("gpu", list(types), limits=limits, consolidate_after=consolidate_after)], TYPES)


def run(limits, gpus, types=("g8", "g4", "g1"), consolidate_after=None, run_time=1000.0, gap=20.0, horizon=400.0):
    """Jobs a, b, c... of one pod each (``gpus`` per job), ``gap`` seconds apart, under ``gang+karpenter``."""
    jobs = [job("abcdef"[i], gpus=g, run_time=run_time, submit_time=gap * i) for i, g in enumerate(gpus)]
    sc = gk.Scenario([Node("system-0", 0)], jobs)
    sc.karpenter = karpenter(limits, types, consolidate_after)
    return gk.simulate(sc, stack="gang+karpenter", horizon=horizon)


def launched(result) -> list[str]:
    return result.metrics["karpenter_nodeclaims_created_total"].instance_type.tolist()


def not_provisioned(result) -> list[str]:
    """The jobs whose pod a batch left without a node, in order."""
    names = result.metrics["gangkit_karpenter_batches"].not_provisioned
    return list(dict.fromkeys(n.rsplit("-", 1)[0] for n in names if n))


# --- per resource, several instance types, in-flight NodeClaims counted ---------------------------------------------
# (limits, GPUs per job, types the pool allows, types launched in order, jobs left out, words naming the blocking
#  limit in the diagnosis of the last job left out at t=300 s)
LIMITS = [
    case("no limit: each pod gets the cheapest type that holds it",
         {}, [8, 4, 1], ("g8", "g4", "g1"), ["g8", "g4", "g1"], [], None),
    case("a GPU limit of 12: the in-flight g8 and g4 leave no GPU for the g1",
         {GPU: 12}, [8, 4, 1], ("g8", "g4", "g1"), ["g8", "g4"], ["c"], "at 12 of its 12-GPU limit"),
    case("a cpu limit of 150: 96 + 48 in-flight cores leave 6, the g1 has 8",
         {"cpu": 150}, [8, 4, 1], ("g8", "g4", "g1"), ["g8", "g4"], ["c"],
         "at 144 of its 150 cpu limit (spec.limits.cpu: 6 left, the smallest instance type that holds these pods has 8)"),
    case("a cpu limit of 152: a capacity equal to what is left is allowed",
         {"cpu": 152}, [8, 4, 1], ("g8", "g4", "g1"), ["g8", "g4", "g1"], [], None),
    case("a memory limit of 1536Gi: the in-flight 1024Gi + 512Gi use it all",
         {"memory": 1536 * GI}, [8, 4, 1], ("g8", "g4", "g1"), ["g8", "g4"], ["c"],
         "at 1536Gi of its 1536Gi memory limit (spec.limits.memory: 0 left"),
    case("GPU and memory limits: memory blocks the g4 for b, the smaller g1 still fits for c",
         {GPU: 16, "memory": 1100 * GI}, [8, 4, 1], ("g8", "g4", "g1"), ["g8", "g1"], ["b"],
         "at 1088Gi of its 1100Gi memory limit"),
    case("a cpu limit below the cheap type's cores: the leaner, dearer type is launched, twice, then none",
         {"cpu": 64}, [8, 8, 8], ("g8", "g8-lean"), ["g8-lean", "g8-lean"], ["c"], "at 64 of its 64 cpu limit"),
    case("a type without a cpu figure counts 0 cores: a cpu limit of 1 never blocks it",
         {"cpu": 1}, [2, 2, 2], ("g2-bare",), ["g2-bare"] * 3, [], None),
]


@pytest.mark.parametrize("limits, gpus, types, expected, left_out, words", LIMITS)
def test_a_nodeclaim_is_made_only_of_types_within_what_is_left_of_every_limit(limits, gpus, types, expected, left_out,
                                                                             words):
    result = run(limits, gpus, types)
    assert launched(result) == expected
    assert not_provisioned(result) == left_out
    if left_out:
        d = result.diagnose(job=left_out[-1], at=300)
        assert d.code == "NodePoolLimit", str(d)
        assert "no node coming: NodePool gpu at " in d.message and words in d.message, d.message


def test_a_removed_node_gives_its_capacity_back():
    """a's g8 (96 cores, the whole cpu limit) is launched at 1 s (the batch window), ready at 151 s, runs 100 s and
    is removed empty at 251 s; b, submitted at 300 s, gets a g8 again at 301 s."""
    m = run({"cpu": 96}, [8, 8], ("g8",), consolidate_after=0.0, run_time=100.0, gap=300.0, horizon=1000.0).metrics
    created = m["karpenter_nodeclaims_created_total"]
    assert list(zip(created.time_s, created.instance_type)) == [(1.0, "g8"), (301.0, "g8")]
    assert m["karpenter_nodeclaims_disrupted_total"].time_s.tolist()[:1] == [251.0]


# --- which pods can ever get a node -----------------------------------------------------------------------------------
EVER_FIT = [
    # (limits, types, a pod's GPUs, cores, bytes, can a node ever hold it)
    case("every 8-GPU type has more than 16 cores", {"cpu": 16}, ("g8", "g8-lean"), 8, 0.0, 0, False),
    case("the lean type fits a 32-core limit", {"cpu": 32}, ("g8", "g8-lean"), 8, 0.0, 0, True),
    case("a 64Gi memory limit holds only the g1", {"memory": 64 * GI}, ("g8", "g1"), 1, 0.0, 0, True),
    case("... not a pod of 2 GPUs", {"memory": 64 * GI}, ("g8", "g1"), 2, 0.0, 0, False),
    case("a GPU limit below the only type", {GPU: 4}, ("g8",), 1, 0.0, 0, False),
]


@pytest.mark.parametrize("limits, types, gpus, cpu, memory, fits", EVER_FIT)
def test_a_pod_is_rejected_when_no_type_that_holds_it_fits_within_the_limits(limits, types, gpus, cpu, memory, fits):
    assert karpenter(limits, types).can_ever_fit(gpus, cpu, memory, ()) is fits


# --- the metrics: every enforced resource, with Karpenter's resource_type label -----------------------------------------
@pytest.mark.parametrize("name, label", [
    case("the GPU resource keeps its name", GPU, "nvidia.com/gpu"),
    case("cpu", "cpu", "cpu"),
    case("memory", "memory", "memory"),
    case("a dash is written as an underscore", "ephemeral-storage", "ephemeral_storage"),
    case("nodes", "nodes", "nodes"),
])
def test_resource_type_is_karpenters_label_value(name, label):
    assert resource_type(name) == label


METRICS = [
    # (limits, GPUs per job, rows of karpenter_nodepools_limit, the last usage sample per resource)
    case("a GPU limit alone: GPU series only, as before", {GPU: 16}, [8, 4],
         [("gpu", GPU, 16)], {GPU: 12}),
    case("cpu and memory limits: their series too, cores and bytes",
         {GPU: 16, "cpu": 200, "memory": 2048 * GI}, [8, 4],
         [("gpu", GPU, 16), ("gpu", "cpu", 200), ("gpu", "memory", 2048 * GI)], {GPU: 12, "cpu": 144, "memory": 1536 * GI}),
    case("a cpu limit alone: GPU usage is still kept", {"cpu": 200}, [8, 1],
         [("gpu", "cpu", 200)], {GPU: 9, "cpu": 104}),
]


@pytest.mark.parametrize("limits, gpus, limit_rows, last_usage", METRICS)
def test_the_nodepool_gauges_list_every_enforced_resource(limits, gpus, limit_rows, last_usage):
    m = run(limits, gpus).metrics
    assert list(m["karpenter_nodepools_limit"][["nodepool", "resource_type", "value"]].itertuples(index=False,
                                                                                                  name=None)) == limit_rows
    usage = m["karpenter_nodepools_usage"]
    assert {r: usage[usage.resource_type == r].value.iloc[-1] for r in usage.resource_type.unique()} == last_usage


def test_a_static_pools_nodes_limit_is_a_limit_series_and_its_nodes_a_usage_series():
    pool = NodePool("warm", ["g8"], limits={"nodes": 1}, replicas=2)
    sc = gk.Scenario([Node("system-0", 0)], [job("a", gpus=8, run_time=100)])
    sc.karpenter = Karpenter([pool], TYPES)
    m = gk.simulate(sc, stack="gang+karpenter").metrics
    assert list(m["karpenter_nodepools_limit"].itertuples(index=False, name=None)) == [("warm", "nodes", 1)]
    first = m["karpenter_nodepools_usage"].head(2)
    assert list(first[["resource_type", "value"]].itertuples(index=False, name=None)) == [(GPU, 8), ("nodes", 1)]


# --- the manifest reader ------------------------------------------------------------------------------------------------
SYSTEM = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "system-0"},
          "status": {"allocatable": {"cpu": "8", "memory": "32Gi"}}}
DESCRIBED = {"apiVersion": "gangkit/v1alpha1", "kind": "Karpenter", "metadata": {"name": "karpenter"},
             "spec": {"instanceTypes": [{"name": "g8", "capacity": {GPU: "8", "cpu": "96", "memory": "1Ti"},
                                         "pricePerHour": 32}]}}


def nodepool(limits, types=("g8",)):
    return {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "gpu"},
            "spec": {"limits": limits, "template": {"spec": {
                "nodeClassRef": {"group": "karpenter.kwok.sh", "kind": "KWOKNodeClass", "name": "default"},
                "requirements": [{"key": "node.kubernetes.io/instance-type", "operator": "In", "values": list(types)}]}}}}


def load(*docs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load_manifests([SYSTEM, *docs])


READ = [
    # (the NodePool's spec.limits, with the Karpenter object describing g8 or without it (gangkit's default gpu-8),
    #  the limits read, a note expected among the warnings (None: no note about limits))
    case("GPU, cpu and memory quantities are read as GPUs, cores and bytes",
         {GPU: "16", "cpu": "100", "memory": "1Ti"}, True, {GPU: 16, "cpu": 100.0, "memory": 2**40}, None),
    case("a cpu limit in millicores", {"cpu": "1500m"}, True, {"cpu": 1.5}, None),
    case("pods and ephemeral-storage are accepted, noted as not modelled, and dropped",
         {"pods": "110", "ephemeral-storage": "2Ti", GPU: 8}, True, {GPU: 8},
         "NodePool gpu: spec.limits: the limits on ephemeral-storage, pods are not modelled and ignored: gangkit "
         "enforces only nvidia.com/gpu, cpu and memory"),
    case("nodes on a dynamic pool is not modelled either", {"nodes": 3}, True, {},
         "NodePool gpu: spec.limits: the limit on nodes is not modelled and ignored"),
    case("a cpu limit on a type without a cpu figure: the note says it counts 0",
         {"cpu": "100"}, False, {"cpu": 100.0},
         "NodePool gpu: spec.limits.cpu: instance type gpu-8 has no cpu capacity, so it counts 0 cpu against the limit"),
]


@pytest.mark.parametrize("limits, described, expected, note", READ)
def test_the_reader_enforces_the_modelled_limits_and_notes_the_others(limits, described, expected, note):
    docs = [DESCRIBED, nodepool(limits)] if described else [nodepool(limits, ("gpu-8",))]
    sc = load(*docs)
    assert sc.karpenter.nodepools[0].limits == expected
    notes = [w for w in sc.warnings if "spec.limits" in w]
    assert (any(w.startswith(note) for w in notes) if note else notes == []), notes


READ_ERRORS = [
    case("a negative cpu limit", {"cpu": "-1"}, "spec.limits.cpu", "must be greater than or equal to 0"),
    case("a memory limit that is no quantity", {"memory": "lots"}, "spec.limits.memory", "expected a Kubernetes quantity"),
    case("a fraction of a GPU", {GPU: "1.5"}, "spec.limits.nvidia.com/gpu", "must be an integer"),
]


@pytest.mark.parametrize("limits, fieldname, words", READ_ERRORS)
def test_a_bad_limit_is_one_error_naming_the_nodepool_and_the_field(limits, fieldname, words):
    with pytest.raises(gk.ScenarioError) as info:
        load(DESCRIBED, nodepool(limits))
    assert [(p.obj, p.field) for p in info.value.problems] == [("NodePool gpu", fieldname)]
    assert words in info.value.problems[0].message


@pytest.mark.parametrize("limits, words", [
    case("a resource gangkit does not model", {"pods": 110},
         "NodePool p: limits: gangkit enforces limits on nvidia.com/gpu, cpu, memory only; got ['pods']"),
    case("a negative amount", {"cpu": -1}, "NodePool p: limits.cpu: expected a number >= 0, got -1"),
    case("a boolean", {"memory": True}, "NodePool p: limits.memory: expected a number >= 0, got True"),
])
def test_the_python_nodepool_refuses_limits_it_cannot_enforce(limits, words):
    with pytest.raises(ValueError) as info:
        NodePool("p", ["g8"], limits=limits)
    assert str(info.value).startswith(words)


# --- the check: a static pool's share of supply-too-small speaks of its replicas --------------------------------------
def stack(pool_spec, pods):
    """One 8-GPU Node, a NodePool a100 of p4d.24xlarge (8 GPUs), a Volcano gang of ``pods`` pods of 4 GPUs."""
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "gpu-0"},
            "status": {"allocatable": {GPU: "8", "cpu": "96", "memory": "1Ti"}}}
    settings = {"apiVersion": "gangkit/v1alpha1", "kind": "Karpenter", "metadata": {"name": "karpenter"},
                "spec": {"instanceTypes": [{"name": "p4d.24xlarge", "pricePerHour": 32.8,
                                            "capacity": {GPU: "8", "cpu": "96", "memory": "1152Gi"}}]}}
    pool = {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "a100"},
            "spec": {**pool_spec, "template": {"spec": {
                "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
                "requirements": [{"key": "node.kubernetes.io/instance-type", "operator": "In",
                                  "values": ["p4d.24xlarge"]}]}}}}
    group = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
             "metadata": {"name": "train", "namespace": "team-a"}, "spec": {"minMember": pods}}
    train = {"apiVersion": "batch/v1", "kind": "Job",
             "metadata": {"name": "train", "namespace": "team-a", "annotations": {"gangkit/run-time": "1h"}},
             "spec": {"parallelism": pods, "completions": pods, "template": {
                 "metadata": {"annotations": {"scheduling.k8s.io/group-name": "train"}},
                 "spec": {"schedulerName": "volcano", "restartPolicy": "Never", "containers": [
                     {"name": "worker", "image": "trainer:1.0", "resources": {"limits": {GPU: "4"}}}]}}}}
    sim = {"apiVersion": "gangkit/v1alpha1", "kind": "Simulation", "metadata": {"name": "s"},
           "spec": {"stack": "gang+karpenter"}}
    return [node, settings, pool, group, train, sim]


def supply_finding(docs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        found = [f for f in gk.check_manifests(docs) if f.code == "supply-too-small"]
    assert len(found) == 1, found
    return found[0]


POOL = "NodePool a100"
STATIC = [
    # (the NodePool's spec, the gang's pods, the words of the pool's share, its fields, the numbers of its share)
    # the Node holds 2 pods of 4 GPUs, so does each p4d.24xlarge
    case("min(replicas 2, limits.nodes 1): one node, named with both fields",
         {"replicas": 2, "limits": {"nodes": 1}}, 6,
         "NodePool a100 2 on its min(spec.replicas 2, spec.limits.nodes 1) = 1 static node of p4d.24xlarge",
         [(POOL, "spec.replicas"), (POOL, "spec.limits.nodes")],
         {"replicas": 2, "limits_nodes": 1, "nodes": 1, "instance_type": "p4d.24xlarge", "pods_per_node": 2.0}),
    case("replicas without limits.nodes: spec.replicas alone",
         {"replicas": 1}, 6, "NodePool a100 2 on its spec.replicas 1 = 1 static node of p4d.24xlarge",
         [(POOL, "spec.replicas")],
         {"replicas": 1, "limits_nodes": None, "nodes": 1, "instance_type": "p4d.24xlarge", "pods_per_node": 2.0}),
    case("replicas 0: no node, no type (and the pool adds nothing, so no field of it is named)",
         {"replicas": 0}, 3, "NodePool a100 0 on its spec.replicas 0 = 0 static nodes)", [],
         {"replicas": 0, "limits_nodes": None, "nodes": 0, "instance_type": None, "pods_per_node": 0.0}),
    case("a dynamic pool still speaks of its GPU limit",
         {"limits": {GPU: 8}}, 6, "(nodes 2, NodePool a100 2)", [(POOL, "spec.limits.nvidia.com/gpu")], None),
]


@pytest.mark.parametrize("spec, pods, words, fields, numbers", STATIC)
def test_supply_too_small_names_a_static_pools_replicas_not_a_gpu_limit(spec, pods, words, fields, numbers):
    f = supply_finding(stack(spec, pods))
    assert words in f.message, f.message
    assert [x for x in f.fields if x[0] == POOL] == fields
    assert f.numbers["workers"].get("static", {}).get(POOL) == numbers
    assert ("spec.replicas" in f.hint) is ((POOL, "spec.replicas") in fields)
    assert any("nvidia.com/gpu" in x[1] for x in f.fields) is (numbers is None)
