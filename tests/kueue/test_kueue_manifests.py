"""Kueue's YAML read into gangkit's Kueue objects: tables of named cases.

GOOD rows say what a field becomes; BAD rows give the one-line error (object,
field, words) that Kueue's own validation would give; WARN rows list what
goes into the single warning. Every manifest that loads is also checked
against Kueue's real CRD schemas in ../shared/schemas (the Configuration
kind has none: Kueue ships only Go types for it).
"""

from __future__ import annotations

import copy
import warnings

import pytest
import yaml

from gangkit.kueue.manifests import API_VERSIONS, known_fields
from gangkit.kueue.objects import (
    Admission,
    ClusterQueue,
    Cohort,
    FlavorFungibility,
    FlavorQuotas,
    KueueConfig,
    LocalQueue,
    PodSetSpec,
    Preemption,
    Quota,
    ResourceFlavor,
    ResourceGroup,
)
from gangkit.manifests import GangkitInputWarning, load_file, load_manifests
from gangkit.manifests.kueue_snapshot import load_kueue
from gangkit.model.errors import ScenarioError

from conftest import case, edit

try:
    from test_kueue_admit import DEFAULT, cohort, cq, flavor, lq, manifest, meta, rg, ts, wl

    from schema_util import fields_missing_from, requires_schemas, schema_for, validate_manifest, validate_yaml
except ImportError:  # tests/ imported as a package
    from tests.kueue.test_kueue_admit import DEFAULT, cohort, cq, flavor, lq, manifest, meta, rg, ts, wl
    from tests.schema_util import fields_missing_from, requires_schemas, schema_for, validate_manifest, validate_yaml
from paths import REPO

ROOT = REPO
KUEUE_EXAMPLES = sorted((ROOT / "examples").glob("kueue-*.yaml"))
GPU = "nvidia.com/gpu"
V1B1 = "kueue.x-k8s.io/v1beta1"
GI = 2**30




def drop(doc, path):
    doc = copy.deepcopy(doc)
    *keys, last = path.split(".")
    here = doc
    for k in keys:
        here = here[int(k)] if isinstance(here, list) else here[k]
    del here[last]
    return doc


def job(name="train", queue="user-queue", namespace=None, pods=None, completions=None, labels=None, annotations=None,
        containers=None, init=None, priority_class=None, created=None):
    """A batch/v1 Job, labelled with a LocalQueue unless ``queue`` is None."""
    m = meta(name, namespace, created)
    labels = ({"kueue.x-k8s.io/queue-name": queue} if queue else {}) | (labels or {})
    if labels:
        m["labels"] = labels
    if annotations:
        m["annotations"] = annotations
    pod = {"restartPolicy": "Never",
           "containers": containers or [{"name": "worker", "image": "trainer:1",
                                         "resources": {"requests": {"cpu": "1"}, "limits": {GPU: "1"}}}]}
    if init:
        pod["initContainers"] = init
    if priority_class:
        pod["priorityClassName"] = priority_class
    spec = {}
    if pods is not None:
        spec["parallelism"] = pods
    if completions is not None:
        spec["completions"] = completions
    spec["template"] = {"spec": pod}
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": m, "spec": spec}


def container(name="c", requests=None, limits=None, **extra):
    res = {}
    if requests:
        res["requests"] = requests
    if limits:
        res["limits"] = limits
    return {"name": name, "image": "x:1", "resources": res, **extra}


def wpc(name, value):
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "WorkloadPriorityClass", "metadata": {"name": name},
            "value": value}


def priority_class(name, value, default=False):
    doc = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name}, "value": value}
    if default:
        doc["globalDefault"] = True
    return doc


def config(version="v1beta2", **fields):
    return {"apiVersion": f"config.kueue.x-k8s.io/{version}", "kind": "Configuration", **fields}


BASE = [DEFAULT, cq("cluster-queue", rg(("default-flavor", {"cpu": 9, "memory": "36Gi", GPU: 8, "pods": 10}))),
        lq("user-queue", "cluster-queue")]
TEAMS = [DEFAULT, cq("team-a", rg(("default-flavor", {"cpu": 4})), cohort="ab"),
         cq("team-b", rg(("default-flavor", {"cpu": 4})), cohort="ab"), lq("team-a"), lq("team-b")]


def load_quietly(*docs):
    """Good input loads without any warning."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", GangkitInputWarning)
        got = load_kueue(manifest(*docs))
    assert got.warnings == []
    return got


FS = config(fairSharing={"preemptionStrategies": ["LessThanInitialShare"]})


def setup(k):
    return k.setup


def cqs(k):
    return {q.name: q for q in k.setup.cluster_queues}


def wls(k):
    return {lw.workload.key: lw for lw in k.workloads}


def pod_sets(name):
    return lambda k: wls(k)[name].workload.pod_sets


def priority(name):
    return lambda k: wls(k)[name].workload.priority


GOOD = [
    # ResourceFlavor
    case("a ResourceFlavor's nodeLabels", [flavor("a100", **{"nvidia.com/gpu.product": "A100", "zone": "a"})],
         lambda k: k.setup.flavors, [ResourceFlavor("a100", (("nvidia.com/gpu.product", "A100"), ("zone", "a")))]),
    # ClusterQueue: quotas in Kueue's units
    case("quotas: cpu in millicores, memory in bytes, GPUs and pods as counts",
         [flavor("f"), cq("q", rg(("f", {"cpu": "2500m", "memory": "1.5Gi", GPU: 8, "pods": "10"})))],
         lambda k: cqs(k)["q"].resource_groups,
         [ResourceGroup(("cpu", "memory", GPU, "pods"), (FlavorQuotas("f", {
             "cpu": Quota(2500), "memory": Quota(3 * GI // 2), GPU: Quota(8), "pods": Quota(10)}),))]),
    case("fractions round up as Kueue rounds them (MilliValue, Value)",
         [flavor("f"), cq("q", rg(("f", {"cpu": "0.0001", "memory": "1.5"})))],
         lambda k: cqs(k)["q"].resource_groups[0].flavors[0].resources, {"cpu": Quota(1), "memory": Quota(2)}),
    case("borrowingLimit and lendingLimit in a cohort",
         [flavor("f"), cq("q", rg(("f", {GPU: (8, 4, 2)})), cohort="c")],
         lambda k: (cqs(k)["q"].cohort, cqs(k)["q"].resource_groups[0].flavors[0].resources[GPU]), ("c", Quota(8, 4, 2))),
    case("flavors in order, two resource groups",
         [flavor("spot"), flavor("on-demand"), flavor("pool1"),
          cq("q", rg(("spot", {"cpu": 9}), ("on-demand", {"cpu": 18})), rg(("pool1", {"bar.com/license": 10})))],
         lambda k: [(g.covered, [f.flavor for f in g.flavors]) for g in cqs(k)["q"].resource_groups],
         [(("cpu",), ["spot", "on-demand"]), (("bar.com/license",), ["pool1"])]),
    case("Kueue's defaults: BestEffortFIFO, never preempt, MayStopSearch/TryNextFlavor, weight 1",
         [flavor("f"), cq("q", rg(("f", {"cpu": 1})))],
         lambda k: cqs(k)["q"], ClusterQueue("q", [ResourceGroup(("cpu",), (FlavorQuotas("f", {"cpu": Quota(1000)}),))])),
    case("every policy field",
         [flavor("f"), edit(cq("q", rg(("f", {"cpu": 1})), cohort="c", strategy="StrictFIFO", within="LowerOrNewerEqualPriority",
                               reclaim="Any", borrow="LowerPriority", threshold=100, when_borrow="TryNextFlavor",
                               when_preempt="TryNextFlavor", preference="PreemptionOverBorrowing"),
                            "spec.fairSharing", {"weight": "0.5"})],
         lambda k: (cqs(k)["q"].queueing_strategy, cqs(k)["q"].preemption, cqs(k)["q"].flavor_fungibility,
                    cqs(k)["q"].fair_sharing_weight),
         ("StrictFIFO", Preemption("LowerOrNewerEqualPriority", "Any", "LowerPriority", 100),
          FlavorFungibility("TryNextFlavor", "TryNextFlavor", "PreemptionOverBorrowing"), 0.5)),
    case("v1beta1: spec.cohort; the deprecated Borrow and Preempt mean MayStopSearch",
         [flavor("f", V1B1), cq("q", rg(("f", {"cpu": 1})), cohort="c", when_borrow="Borrow", when_preempt="Preempt",
                                version=V1B1)],
         lambda k: (cqs(k)["q"].cohort, cqs(k)["q"].flavor_fungibility),
         ("c", FlavorFungibility("MayStopSearch", "MayStopSearch"))),
    # Cohort, LocalQueue, WorkloadPriorityClass
    case("a Cohort: parent, quota of its own (lendingLimit may exceed nominal there), weight",
         [flavor("f"), edit(cohort("child", rg(("f", {"cpu": (4, 2, 6)})), parent="root"), "spec.fairSharing", {"weight": 2})],
         lambda k: k.setup.cohorts,
         [Cohort("child", "root", [ResourceGroup(("cpu",), (FlavorQuotas("f", {"cpu": Quota(4000, 2000, 6000)}),))], 2.0)]),
    case("a LocalQueue without namespace is in default",
         [*TEAMS[:3], lq("team-a"), lq("b", "team-b", "research")],
         lambda k: k.setup.local_queues, [LocalQueue("team-a", "default", "team-a"), LocalQueue("b", "research", "team-b")]),
    # Workloads
    case("a Workload: pod sets, per-pod requests (limits fill missing requests), node selector",
         [*BASE, edit(wl("w", "user-queue", requests={"memory": "1Gi"}, count=3), "spec.podSets.0.template.spec.nodeSelector",
                      {"zone": "a"}),
          ],
         pod_sets("w"), [PodSetSpec("main", 3, {"memory": GI}, None, (("zone", "a"),))]),
    case("limits fill requests; containers add up; zero requests are dropped",
         [*BASE, edit(wl("w", "user-queue"), "spec.podSets.0.template.spec.containers", [
             container("a", {"cpu": "1"}, {"cpu": "2", GPU: "1"}), container("b", {"cpu": "500m", "memory": "0"})])],
         pod_sets("w"), [PodSetSpec("main", 1, {"cpu": 1500, GPU: 1})]),
    case("an init container runs alone (beside the sidecars started before it): the pod needs the larger",
         [*BASE, edit(wl("w", "user-queue", 1), "spec.podSets.0.template.spec.initContainers", [
             container("proxy", {"cpu": "250m"}, restartPolicy="Always"), container("init", {"cpu": "4"})])],
         pod_sets("w"), [PodSetSpec("main", 1, {"cpu": 4250})]),
    case("priority: spec.priority", [*BASE, wl("w", "user-queue", 1, priority=-5)], priority("w"), -5),
    case("priority: spec.priority, where Kueue copies the value of the class the Workload names",
         [*BASE, wpc("high", 1000), edit(wl("w", "user-queue", 1, priority=1000), "spec.priorityClassRef",
                                         {"group": "kueue.x-k8s.io", "kind": "WorkloadPriorityClass", "name": "high"})],
         priority("w"), 1000),
    case("priority: v1beta1 priorityClassName and priorityClassSource",
         [*BASE, priority_class("batch", 50),
          edit(edit(wl("w", "user-queue", 1, priority=50, version=V1B1), "spec.priorityClassName", "batch"),
               "spec.priorityClassSource", "scheduling.k8s.io/priorityclass")],
         priority("w"), 50),
    case("creation times count from the earliest timestamp of the input; no timestamp is that earliest time",
         [*BASE, wl("a", "user-queue", 1, created=100), wl("b", "user-queue", 1, created=160), wl("c", "user-queue", 1)],
         lambda k: ({n: lw.workload.created for n, lw in wls(k).items()}, k.now), ({"a": 0.0, "b": 60.0, "c": 0.0}, 60.0)),
    case("status.admission: ClusterQueue, flavors, counts; usage from resourceUsage; QuotaReserved time",
         [*BASE, wl("a", "user-queue", 2, count=3, created=0, admitted=("cluster-queue", "default-flavor", 30))],
         lambda k: (wls(k)["a"].admission, wls(k)["a"].workload.quota_reserved_at),
         (Admission("cluster-queue", {"main": {"cpu": "default-flavor"}}, {"main": 3}, {("default-flavor", "cpu"): 6000}),
          30.0)),
    case("status.admission without resourceUsage: usage from the requests and the admitted count (pods too)",
         [*BASE, edit(drop(wl("a", "user-queue", 2, count=3, admitted=("cluster-queue", "default-flavor")),
                           "status.admission.podSetAssignments.0.resourceUsage"),
                      "status.admission.podSetAssignments.0", {"name": "main", "count": 2,
                                                               "flavors": {"cpu": "default-flavor", "pods": "default-flavor"}})],
         lambda k: wls(k)["a"].admission.usage, {("default-flavor", "cpu"): 4000, ("default-flavor", "pods"): 2}),
    case("a deactivated Workload is out of the queues",
         [*BASE, edit(wl("off", "user-queue", 1), "spec.active", False)],
         lambda k: {n: lw.out_of_queue.split(" ")[0] for n, lw in wls(k).items()}, {"off": "deactivated"}),
    # batch/v1 Jobs
    case("a Job becomes one pod set 'main' of min(parallelism, completions) pods",
         [*BASE, job("j", pods=4, completions=3)], pod_sets("j"), [PodSetSpec("main", 3, {"cpu": 1000, GPU: 1})]),
    case("a Job's namespace and queue; it is named after the Job",
         [*TEAMS, lq("gpu", "team-a", "research"), job("j", "gpu", "research")],
         lambda k: [(lw.workload.key, lw.workload.queue_name) for lw in k.workloads], [("research/j", "gpu")]),
    case("a Job's priority: the kueue.x-k8s.io/priority-class label names a WorkloadPriorityClass",
         [*BASE, wpc("urgent", 10000), priority_class("batch", 5),
          job("j", labels={"kueue.x-k8s.io/priority-class": "urgent"}, priority_class="batch")], priority("j"), 10000),
    case("... else the pod's PriorityClass", [*BASE, priority_class("batch", 5), job("j", priority_class="batch")],
         priority("j"), 5),
    case("... else the globalDefault PriorityClass", [*BASE, priority_class("normal", 3, default=True), job("j")],
         priority("j"), 3),
    case("a Job's creation time: creationTimestamp, else gangkit/submit-time",
         [*BASE, job("a", created=10), job("b", annotations={"gangkit/submit-time": "5m"})],
         lambda k: {n: lw.workload.created for n, lw in wls(k).items()}, {"a": 0.0, "b": 300.0}),
    # fair sharing and partial admission
    case("v1beta2 fairSharing: on, with its strategies", [*BASE, FS],
         lambda k: (k.setup.config.fair_sharing, k.setup.config.fair_sharing_strategies), (True, ("LessThanInitialShare",))),
    case("v1beta1 fairSharing.enable: Kueue's two strategies by default", [*BASE, config("v1beta1", fairSharing={"enable": True})],
         lambda k: k.setup.config.fair_sharing_strategies, ("LessThanOrEqualToFinalShare", "LessThanInitialShare")),
    case("several pod sets, one with minCount",
         [*BASE, edit(edit(wl("w", "user-queue", 1, podset="launcher"), "spec.podSets.1",
                           {"name": "workers", "count": 4, "minCount": 2,
                            "template": {"spec": {"containers": [container("w", limits={GPU: "2"})]}}}),
                      "spec.podSets.0.count", 1)],
         pod_sets("w"), [PodSetSpec("launcher", 1, {"cpu": 1000}), PodSetSpec("workers", 4, {GPU: 2}, 2)]),
    case("a Job's minCount from kueue.x-k8s.io/job-min-parallelism ",
         [*BASE, job("j", pods=4, annotations={"kueue.x-k8s.io/job-min-parallelism": "2"})],
         lambda k: wls(k)["j"].workload.pod_sets[0].min_count, 2),
    case("featureGates: SchedulingEquivalenceHashing",
         [*BASE, config(featureGates={"SchedulingEquivalenceHashing": False})],
         lambda k: k.setup.config.equivalence_hashing, False),
    # Configuration
    case("no Configuration: Kueue v0.19's defaults (waitForPodsReady on, 30 min, no blockAdmission; no fair sharing)",
         BASE, lambda k: k.setup.config, KueueConfig()),
    case("v1beta2 Configuration: waitForPodsReady is always on; its fields",
         [*BASE, config(waitForPodsReady={"timeout": "10m", "blockAdmission": True, "requeuingStrategy": {
             "timestamp": "Creation", "backoffLimitCount": 5, "backoffBaseSeconds": 10, "backoffMaxSeconds": 600}})],
         lambda k: k.setup.config,
         KueueConfig(True, 600.0, True, 10.0, 600.0, 5, "Creation")),
    case("v1beta2 Configuration without waitForPodsReady: still on, 30 minutes",
         [*BASE, config(namespace="kueue-system")], lambda k: k.setup.config, KueueConfig()),
    case("v1beta1 Configuration without waitForPodsReady.enable: off",
         [*BASE, config("v1beta1", waitForPodsReady={"timeout": "10m"})],
         lambda k: k.setup.config.wait_for_pods_ready, False),
    case("v1beta1 waitForPodsReady.enable: 5 minutes and blockAdmission by default",
         [*BASE, config("v1beta1", waitForPodsReady={"enable": True})],
         lambda k: (k.setup.config.pods_ready_timeout, k.setup.config.block_admission), (300.0, True)),
]


@pytest.mark.parametrize("docs, get, expected", GOOD)
def test_kueue_manifests_load(docs, get, expected):
    assert get(load_quietly(*docs)) == expected


@requires_schemas
@pytest.mark.parametrize("docs", [pytest.param(p.values[0], id=p.id) for p in GOOD])
def test_every_good_manifest_is_valid_for_the_real_schemas(docs):
    for doc in docs:
        if not doc["apiVersion"].startswith("config.kueue.x-k8s.io/"):  # no schema for the Configuration
            validate_manifest(doc)


# --- errors: Kueue's cheap validation, one line naming object and field -----------------------------------

Q = cq("q", rg(("default-flavor", {"cpu": 4})))
IN_COHORT = cq("q", rg(("default-flavor", {"cpu": 4})), cohort="c")
W = wl("w", "user-queue", 1)
ADMITTED = wl("w", "user-queue", 1, admitted=("cluster-queue", "default-flavor"))
NO_SCHEMA = None  # a Configuration: no schema to compare with

POD_SET_B = {"name": "b", "count": 2, "minCount": 1, "template": {"spec": {"containers": [container("b", {"cpu": "1"})]}}}

BAD = [
    # ClusterQueue: the webhook (clusterqueue_webhook.go) and CEL rules
    case("borrowingLimit without a cohort", [DEFAULT, cq("q", rg(("default-flavor", {"cpu": (4, 2)})))],
         "ClusterQueue q", "spec.resourceGroups[0].flavors[0].resources[0].borrowingLimit", "must be nil when cohort is empty", True),
    case("lendingLimit without a cohort", [DEFAULT, cq("q", rg(("default-flavor", {"cpu": (4, None, 2)})))],
         "ClusterQueue q", "spec.resourceGroups[0].flavors[0].resources[0].lendingLimit", "must be nil when cohort is empty", True),
    case("lendingLimit above nominalQuota", [DEFAULT, cq("q", rg(("default-flavor", {"cpu": (4, None, 5)})), cohort="c")],
         "ClusterQueue q", "spec.resourceGroups[0].flavors[0].resources[0].lendingLimit",
         "must be less than or equal to the nominalQuota", True),
    case("a flavor with fewer resources than coveredResources",
         [DEFAULT, edit(Q, "spec.resourceGroups.0.coveredResources", ["cpu", "memory"])],
         "ClusterQueue q", "spec.resourceGroups[0].flavors[0].resources",
         "flavors must have the same number of resources as the coveredResources", True),
    case("resources out of the order of coveredResources",
         [DEFAULT, cq("q", {"coveredResources": ["cpu", "memory"], "flavors": [{"name": "default-flavor", "resources": [
             {"name": "memory", "nominalQuota": "1Gi"}, {"name": "cpu", "nominalQuota": 1}]}]})],
         "ClusterQueue q", "spec.resourceGroups[0].flavors[0].resources[0].name", "must match the name in coveredResources", True),
    case("a resource in two groups", [DEFAULT, flavor("f2"), cq("q", rg(("default-flavor", {"cpu": 1})), rg(("f2", {"cpu": 1})))],
         "ClusterQueue q", "spec.resourceGroups[1].coveredResources[0]", "Duplicate value: 'cpu'", True),
    case("a flavor in two groups", [DEFAULT, cq("q", rg(("default-flavor", {"cpu": 1})), rg(("default-flavor", {"memory": 1})))],
         "ClusterQueue q", "spec.resourceGroups[1].flavors[0].name", "Duplicate value: 'default-flavor'", True),
    case("a negative quota", [DEFAULT, cq("q", rg(("default-flavor", {"cpu": "-1"})))],
         "ClusterQueue q", "spec.resourceGroups[0].flavors[0].resources[0].nominalQuota", "greater than or equal to 0", True),
    case("not a quantity", [DEFAULT, cq("q", rg(("default-flavor", {"cpu": "lots"})))],
         "ClusterQueue q", "spec.resourceGroups[0].flavors[0].resources[0].nominalQuota", "expected a Kubernetes quantity", False),
    case("no nominalQuota", [DEFAULT, drop(Q, "spec.resourceGroups.0.flavors.0.resources.0.nominalQuota")],
         "ClusterQueue q", "spec.resourceGroups[0].flavors[0].resources[0].nominalQuota", "Required value", False),
    case("borrowWithinCohort without reclaimWithinCohort",
         [DEFAULT, cq("q", rg(("default-flavor", {"cpu": 1})), cohort="c", borrow="LowerPriority")],
         "ClusterQueue q", "spec.preemption", "reclaimWithinCohort=Never and borrowWithinCohort.Policy!=Never", True),
    case("preference needs TryNextFlavor twice", [DEFAULT, cq("q", rg(("default-flavor", {"cpu": 1})), preference="PreemptionOverBorrowing")],
         "ClusterQueue q", "spec.flavorFungibility.preference", "requires both whenCanBorrow and whenCanPreempt to be TryNextFlavor", True),
    case("an unknown queueingStrategy", [DEFAULT, cq("q", rg(("default-flavor", {"cpu": 1})), strategy="FIFO")],
         "ClusterQueue q", "spec.queueingStrategy", "expected one of StrictFIFO, BestEffortFIFO, got 'FIFO'", False),
    case("an unknown preemption policy", [DEFAULT, cq("q", rg(("default-flavor", {"cpu": 1})), within="Always")],
         "ClusterQueue q", "spec.preemption.withinClusterQueue", "expected one of Never, LowerPriority, LowerOrNewerEqualPriority", False),
    case("v1beta1's Borrow under v1beta2", [DEFAULT, cq("q", rg(("default-flavor", {"cpu": 1})), when_borrow="Borrow")],
         "ClusterQueue q", "spec.flavorFungibility.whenCanBorrow", "expected one of MayStopSearch, TryNextFlavor", False),
    case("a negative fair-sharing weight", [DEFAULT, edit(Q, "spec.fairSharing", {"weight": "-1"})],
         "ClusterQueue q", "spec.fairSharing.weight", "expected 0 or a weight > 10e-9", True),
    case("an unknown apiVersion", [DEFAULT, edit(Q, "apiVersion", "kueue.x-k8s.io/v1alpha1")],
         "ClusterQueue q", "apiVersion", "expected kueue.x-k8s.io/v1beta2 or kueue.x-k8s.io/v1beta1", None),
    case("two ClusterQueues with one name", [DEFAULT, Q, Q], "ClusterQueue q", "metadata.name", "expected a unique name", True),
    # Cohort
    case("a Cohort's lendingLimit without a parent", [DEFAULT, cohort("c", rg(("default-flavor", {"cpu": (4, None, 2)})))],
         "Cohort c", "spec.resourceGroups[0].flavors[0].resources[0].lendingLimit", "must be nil when parent is empty", True),
    case("a cycle of parents", [cohort("a", parent="b"), cohort("b", parent="a")],
         "Cohort a", "spec.parentName", "the parent chain forms a cycle: a -> b -> a", True),
    # WorkloadPriorityClass
    case("a WorkloadPriorityClass without a whole value", [wpc("x", "high")],
         "WorkloadPriorityClass x", "value", "expected a whole number, got 'high'", False),
    # Workload
    case("a Workload without pod sets", [*BASE, edit(W, "spec.podSets", [])],
         "Workload w", "spec.podSets", "expected a list of at least one pod set", False),
    case("minCount above count", [*BASE, edit(W, "spec.podSets.0.minCount", 2)],
         "Workload w", "spec.podSets[0].minCount", "minCount should be positive and less or equal to count", True),
    case("two pod sets with minCount", [*BASE, edit(edit(W, "spec.podSets.0.minCount", 1), "spec.podSets.1", POD_SET_B)],
         "Workload w", "spec.podSets", "at most one podSet can use minCount", True),
    case("requests of 'pods'", [*BASE, wl("w", "user-queue", requests={"pods": "1"})],
         "Workload w", "spec.podSets[0].template.spec.containers[0].resources.requests.pods",
         "the key is reserved for internal kueue use", True),
    case("a request above its limit", [*BASE, edit(W, "spec.podSets.0.template.spec.containers.0.resources.limits", {"cpu": "500m"})],
         "Workload w", "spec.podSets[0].template.spec.containers[0].resources.requests.cpu", "must be less than or equal to cpu limit", True),
    case("a priorityClassRef without spec.priority (a CEL rule)",
         [*BASE, edit(W, "spec.priorityClassRef", {"group": "kueue.x-k8s.io", "kind": "WorkloadPriorityClass", "name": "gold"})],
         "Workload w", "spec.priority", "priority should not be nil when priorityClassRef is set", True),
    case("a priorityClassRef with a kind from another group (a CEL rule)",
         [*BASE, edit(edit(W, "spec.priority", 1), "spec.priorityClassRef",
                      {"group": "kueue.x-k8s.io", "kind": "PriorityClass", "name": "gold"})],
         "Workload w", "spec.priorityClassRef.kind", "only the WorkloadPriorityClass kind is allowed for the kueue.x-k8s.io group",
         True),
    case("v1beta1: a priorityClassName without spec.priority (a CEL rule)",
         [*BASE, edit(wl("w", "user-queue", 1, version=V1B1), "spec.priorityClassName", "batch")],
         "Workload w", "spec.priority", "priority should not be nil when priorityClassName is set", True),
    case("QuotaReserved without status.admission", [*BASE, drop(ADMITTED, "status.admission")],
         "Workload w", "status.admission", "must be set while the QuotaReserved condition is true", True),
    case("status.admission in a ClusterQueue not in the input", [*BASE, edit(ADMITTED, "status.admission.clusterQueue", "other")],
         "Workload w", "status.admission.clusterQueue", "names ClusterQueue 'other', which is not in the input", True),
    case("a pod set assignment for no pod set", [*BASE, edit(ADMITTED, "status.admission.podSetAssignments.0.name", "workers")],
         "Workload w", "status.admission.podSetAssignments[0].name", "Not found: 'workers'", True),
    case("fewer pod set assignments than pod sets", [*BASE, edit(ADMITTED, "status.admission.podSetAssignments", [])],
         "Workload w", "status.admission.podSetAssignments", "must have the same number of podSets as the spec", True),
    case("a flavor the ClusterQueue does not have", [*BASE, edit(ADMITTED, "status.admission.podSetAssignments.0.flavors", {"cpu": "spot"})],
         "Workload w", "status.admission.podSetAssignments[0].flavors.cpu", "ClusterQueue cluster-queue has no flavor 'spot' for cpu", True),
    case("resourceUsage not a multiple of count",
         [*BASE, edit(wl("w", "user-queue", 1, count=2, admitted=("cluster-queue", "default-flavor")),
                      "status.admission.podSetAssignments.0.resourceUsage", {"cpu": "1001m"})],
         "Workload w", "status.admission.podSetAssignments[0].resourceUsage.cpu", "is not a multiple of 2", True),
    case("not a time", [*BASE, edit(W, "metadata.creationTimestamp", "yesterday")],
         "Workload w", "metadata.creationTimestamp", "expected an RFC 3339 time", True),
    # Jobs
    case("a Job naming no WorkloadPriorityClass", [*BASE, job("j", labels={"kueue.x-k8s.io/priority-class": "gold"})],
         "Job j", "metadata.labels.kueue.x-k8s.io/priority-class", "no WorkloadPriorityClass named 'gold' in the input", True),
    case("job-min-parallelism not below the pod count", [*BASE, job("j", pods=2, annotations={"kueue.x-k8s.io/job-min-parallelism": "2"})],
         "Job j", "metadata.annotations.kueue.x-k8s.io/job-min-parallelism", "should be between 0 and 1", True),
    case("a GPU request without a limit (the API server's rule)",
         [*BASE, job("j", containers=[container("c", requests={GPU: "1"})])],
         "Job j", "spec.template.spec.containers[0].resources.limits.nvidia.com/gpu",
         "Limit must be set for non overcommitable resources", True),
    # Configuration (config.kueue.x-k8s.io: pkg/config/validation.go)
    case("v1beta2 fairSharing without preemptionStrategies", [*BASE, config(fairSharing={})],
         "Configuration (document 4)", "fairSharing.preemptionStrategies", "must be specified", NO_SCHEMA),
    case("preemptionStrategies in another order", [*BASE, config(fairSharing={"preemptionStrategies": [
        "LessThanInitialShare", "LessThanOrEqualToFinalShare"]})],
         "Configuration (document 4)", "fairSharing.preemptionStrategies", "expected one of LessThanOrEqualToFinalShare;", NO_SCHEMA),
    case("an unknown requeuing timestamp", [*BASE, config(waitForPodsReady={"requeuingStrategy": {"timestamp": "Later"}})],
         "Configuration (document 4)", "waitForPodsReady.requeuingStrategy.timestamp", "expected one of Eviction, Creation",
         NO_SCHEMA),
    case("a negative backoff", [*BASE, config(waitForPodsReady={"requeuingStrategy": {"backoffBaseSeconds": -1}})],
         "Configuration (document 4)", "waitForPodsReady.requeuingStrategy.backoffBaseSeconds", "greater than or equal to 0",
         NO_SCHEMA),
    case("v1beta1 enabled with a zero timeout", [*BASE, config("v1beta1", waitForPodsReady={"enable": True, "timeout": "0s"})],
         "Configuration (document 4)", "waitForPodsReady.timeout", "must be specified", NO_SCHEMA),
    case("a feature gate that is not a boolean", [*BASE, config(featureGates={"SchedulingEquivalenceHashing": "off"})],
         "Configuration (document 4)", "featureGates.SchedulingEquivalenceHashing", "expected true or false", NO_SCHEMA),
    case("two Configurations", [*BASE, config(), config()], "Configuration (document 5)", "kind", "expected at most one Configuration",
         NO_SCHEMA),
]


def problems(docs) -> list[str]:
    with pytest.raises(ScenarioError) as e:
        load_kueue(manifest(*docs))
    return [str(p) for p in e.value.problems]


@pytest.mark.parametrize("docs, obj, field, words, schema_ok", BAD)
def test_bad_input_is_one_error_naming_object_and_field(docs, obj, field, words, schema_ok):
    got = problems(docs)
    assert any(p.startswith(f"{obj}: {field}: ") and words in p for p in got), got


@requires_schemas
@pytest.mark.parametrize("docs, obj, field, words, schema_ok", [p for p in BAD if p.values[-1] is not None])
def test_the_schemas_catch_some_bad_input_and_gangkit_the_rest(docs, obj, field, words, schema_ok):
    """``schema_ok``: only Kueue's webhook or a CEL rule (which jsonschema does not run) catches it."""
    def valid(doc):
        try:
            validate_manifest(doc)
            return True
        except AssertionError:
            return False

    assert all(valid(d) for d in docs if not d["apiVersion"].startswith("config.")) is schema_ok


def test_every_problem_at_once_one_line_each():
    got = problems([cq("q", rg(("nowhere", {"cpu": (4, 2)}))), wl("w", "user-queue", -1), wpc("x", "y")])
    assert len(got) == 3 and len(set(got)) == 3  # the missing flavor is no problem: it makes the queue inactive
    assert all("\n" not in p for p in got)


def test_a_flavor_that_is_not_in_the_input_makes_the_queue_inactive_as_kueue_does():
    """Kueue keeps such a ClusterQueue inactive (Active=False, FlavorNotFound): it admits nothing, its workloads wait."""
    import gangkit as gk

    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}, "status": {"allocatable": {GPU: "8"}}}
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j", "labels": {"kueue.x-k8s.io/queue-name": "lq"},
                                                                "annotations": {"gangkit/run-time": "1m"}},
           "spec": {"template": {"spec": {"containers": [{"name": "c", "image": "x"}]}}}}
    local = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue", "metadata": {"name": "lq", "namespace": "default"},
             "spec": {"clusterQueue": "q"}}
    with pytest.warns(GangkitInputWarning, match="ClusterQueue q is inactive, as Kueue keeps it .FlavorNotFound"):
        sc = load_manifests(manifest(node, cq("q", rg(("nowhere", {"cpu": 4}))), local, job))
    result = gk.simulate(sc.with_settings(horizon=600.0), stack="kueue+pod")
    assert result.summary()["jobs_waiting_at_end"] == 1
    assert "ClusterQueue q is inactive" in str(result.diagnose())


def test_a_kueue_error_in_a_scenario_file_is_one_scenario_error():
    with pytest.raises(ScenarioError, match="ClusterQueue q: spec.resourceGroups.0..flavors.0..resources.0..borrowingLimit"):
        load_manifests(manifest({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"},
                                 "status": {"allocatable": {GPU: "1"}}}, DEFAULT, cq("q", rg(("default-flavor", {"cpu": (4, 2)})))))


# --- warnings: one for the unread fields, one per note ------------------------------------------------------

WARN = [
    case("a typo", [*BASE, edit(Q | {"metadata": {"name": "q2"}}, "spec.queueingStrategyy", "StrictFIFO")],
         ["ClusterQueue q2: spec.queueingStrategyy (did you mean queueingStrategy?)"]),
    case("v1beta1's spec.cohort under v1beta2 is not read", [*BASE, edit(Q | {"metadata": {"name": "q2"}}, "spec.cohort", "c")],
         ["ClusterQueue q2: spec.cohort"]),
    case("flavor taints and tolerations are not modelled",
         [edit(DEFAULT, "spec.nodeTaints", [{"key": "gpu", "value": "true", "effect": "NoSchedule"}]), *BASE[1:]],
         ["ResourceFlavor default-flavor: spec.nodeTaints"]),
    case("stopPolicy Hold is not modelled", [*BASE, edit(Q | {"metadata": {"name": "q2"}}, "spec.stopPolicy", "Hold")],
         ["ClusterQueue q2: spec.stopPolicy: Hold (not modelled"]),
    case("a real namespaceSelector is not modelled",
         [*BASE, edit(Q | {"metadata": {"name": "q2"}}, "spec.namespaceSelector", {"matchLabels": {"team": "a"}})],
         ["ClusterQueue q2: spec.namespaceSelector.matchLabels"]),
    case("no namespaceSelector: Kueue would admit nothing",
         [DEFAULT, cq("cluster-queue", rg(("default-flavor", {"cpu": 1})), selector=False), BASE[2]],
         ["ClusterQueue cluster-queue has no spec.namespaceSelector: Kueue admits nothing through it"]),
    case("ProvisioningRequestConfig fields not modelled are named",
         [*BASE, {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ProvisioningRequestConfig", "metadata": {"name": "p"},
                  "spec": {"provisioningClassName": "check-capacity.autoscaling.x-k8s.io", "managedResources": ["nvidia.com/gpu"]}}],
         ["ProvisioningRequestConfig p: spec.managedResources"]),
    case("a LocalQueue for a ClusterQueue not in the input", [*BASE, lq("other", "nowhere")],
         ["LocalQueue other: spec.clusterQueue names ClusterQueue 'nowhere', which is not in the input"]),
    case("a Workload for a LocalQueue not in the input", [*BASE, wl("w", "nowhere", 1)],
         ["Workload w: spec.queueName names LocalQueue 'nowhere' in namespace 'default', which is not in the input"]),
    case("status.admission without QuotaReserved", [*BASE, edit(ADMITTED, "status.conditions", [])],
         ["Workload w has status.admission but no QuotaReserved condition with status True"]),
    case("a finished Workload is left out",
         [*BASE, edit(wl("done", "user-queue", 1), "status.conditions", [
             {"type": "Finished", "status": "True", "reason": "Succeeded", "message": "done", "lastTransitionTime": ts(0)}])],
         ["Workload done has finished (condition Finished is True): it holds no quota and is not queued"]),
    case("a Job without the queue label is not Kueue's", [*BASE, job("j", queue=None)],
         ["Job j has no kueue.x-k8s.io/queue-name label: Kueue does not manage it"]),
    case("topology requests, tolerations are not read",
         [*BASE, edit(edit(W, "spec.podSets.0.topologyRequest", {"required": "rack"}), "spec.podSets.0.template.spec.tolerations",
                      [{"operator": "Exists"}])],
         ["Workload w: spec.podSets[0].topologyRequest", "Workload w: spec.podSets[0].template.spec.tolerations"]),
    case("Configuration fields that change Kueue but are not modelled (manageJobsWithoutQueueName is)",
         [*BASE, config(manageJobsWithoutQueueName=True, waitForPodsReady={"recoveryTimeout": "1m"},
                        featureGates={"PrioritizePreemptorWorkloads": True})],
         ["Configuration (document 4): waitForPodsReady.recoveryTimeout",
          "Configuration (document 4): featureGates.PrioritizePreemptorWorkloads"]),
]


@pytest.mark.parametrize("docs, expected", WARN)
def test_warnings_name_what_is_not_read(docs, expected):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = load_kueue(manifest(*docs))
    text = "\n".join(str(w.message) for w in caught if w.category is GangkitInputWarning)
    assert text == "\n".join(got.warnings)
    for fragment in expected:
        assert fragment in text


def test_unread_fields_make_a_single_warning():
    docs = [*BASE, edit(Q | {"metadata": {"name": "q2"}}, "spec.x", 1), edit(DEFAULT | {"metadata": {"name": "f2"}}, "spec.y", 2)]
    with pytest.warns(GangkitInputWarning) as caught:
        load_kueue(manifest(*docs))
    assert len(caught) == 1
    assert str(caught[0].message).startswith("gangkit does not read these 2 field(s)")


TYPOS = ("a typo", "v1beta1's spec.cohort under v1beta2 is not read")


@requires_schemas
@pytest.mark.parametrize("docs, expected", WARN)
def test_warned_fields_that_exist_in_kueue_pass_the_schema_and_typos_do_not(request, docs, expected):
    def valid(doc):
        try:
            validate_manifest(doc)
            return True
        except AssertionError:
            return False

    typo = request.node.callspec.id in TYPOS
    assert all(valid(d) for d in docs if not d["apiVersion"].startswith("config.")) is not typo


# --- gangkit run: Kueue objects in a scenario file -------------------------------------------------------------

NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "gpu-0"}, "status": {"allocatable": {GPU: "8"}}}


def run_job(name, queue="user-queue", **kw):
    doc = job(name, queue, **kw)
    doc["metadata"].setdefault("annotations", {})["gangkit/run-time"] = "10m"
    return doc


@requires_schemas
def test_the_scenario_documents_are_valid_for_the_real_schemas():
    for doc in [NODE, run_job("j"), run_job("j", labels={"kueue.x-k8s.io/priority-class": "urgent"}, priority_class="batch"),
                run_job("j", pods=4, annotations={"kueue.x-k8s.io/job-min-parallelism": "2"}), wpc("urgent", 900)]:
        validate_manifest(doc)


def test_a_scenario_file_fills_scenario_kueue():
    with warnings.catch_warnings():
        warnings.simplefilter("error", GangkitInputWarning)
        sc = load_manifests(manifest(NODE, *BASE, config(waitForPodsReady={"timeout": "5m"}), run_job("j")))
    assert [q.name for q in sc.kueue.cluster_queues] == ["cluster-queue"]
    assert sc.kueue.local_queues == [LocalQueue("user-queue", "default", "cluster-queue")]
    assert sc.kueue.config.pods_ready_timeout == 300.0
    assert sc.jobs[0].queue == "user-queue"


def test_a_scenario_job_gets_its_workload_priority_class():
    with warnings.catch_warnings():
        warnings.simplefilter("error", GangkitInputWarning)
        sc = load_manifests(manifest(NODE, *BASE, wpc("urgent", 900), priority_class("batch", 5),
                                     run_job("j", labels={"kueue.x-k8s.io/priority-class": "urgent"}, priority_class="batch")))
    assert sc.jobs[0].priority == 900


@pytest.mark.parametrize("docs, kueue_is_none, note", [
    case("no Kueue objects: no setup", [NODE, run_job("j")], True, None),
    case("no ClusterQueue: the default setup, and a note", [NODE, DEFAULT, run_job("j")], True, "no ClusterQueue in the input"),
    case("Workload objects are checked, not simulated", [NODE, *BASE, W], False, "gangkit run simulates batch/v1 Jobs, not Workload"),
    case("a Job for a LocalQueue not in the input", [NODE, *BASE, run_job("j", "elsewhere")], False,
         "names LocalQueue 'elsewhere' in namespace 'default', which is not in the input"),
])
def test_scenario_notes(docs, kueue_is_none, note):
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        sc = load_manifests(manifest(*docs))
    assert (sc.kueue is None) is kueue_is_none
    assert (note is None and sc.warnings == []) or any(note in w for w in sc.warnings)


def test_a_scenario_job_gets_its_min_parallelism_as_min_count():
    sc = load_manifests(manifest(NODE, *BASE, run_job("j", pods=4, annotations={"kueue.x-k8s.io/job-min-parallelism": "2"})))
    assert [(ps.count, ps.min_count) for ps in sc.jobs[0].pod_sets] == [(4, 2)]
    with pytest.raises(ScenarioError, match="job-min-parallelism: should be between 0 and 3, got 4"):
        load_manifests(manifest(NODE, *BASE, run_job("j", pods=4, annotations={"kueue.x-k8s.io/job-min-parallelism": "4"})))


def test_a_scenario_job_naming_no_workload_priority_class_is_an_error():
    with pytest.raises(ScenarioError, match="Job j: metadata.labels.kueue.x-k8s.io/priority-class: no WorkloadPriorityClass"):
        load_manifests(manifest(NODE, *BASE, run_job("j", labels={"kueue.x-k8s.io/priority-class": "gold"})))


# --- the examples -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", [pytest.param(p, id=p.name) for p in KUEUE_EXAMPLES])
def test_the_kueue_examples_load_silently_in_both_readers(path):
    with warnings.catch_warnings():
        warnings.simplefilter("error", GangkitInputWarning)
        sc = load_file(path)
        snapshot = load_kueue(path)
    assert sc.kueue is not None and sc.kueue.cluster_queues
    assert len(snapshot.workloads) == len(sc.jobs)


@requires_schemas
@pytest.mark.parametrize("path", [pytest.param(p, id=p.name) for p in KUEUE_EXAMPLES])
def test_the_kueue_examples_are_valid_for_the_real_schemas(path):
    assert validate_yaml(path.read_text()) >= 1


def test_the_two_teams_example():
    sc = load_file(ROOT / "examples" / "kueue-two-teams.yaml")
    assert sc.settings.stack == "kueue+gang"
    team_b = {q.name: q for q in sc.kueue.cluster_queues}["team-b-cq"]
    assert team_b.resource_groups[0].flavors[0].resources[GPU] == Quota(8, None, 4)
    assert [(j.key, j.queue, j.pod_sets[0].count * j.pod_sets[0].gpus) for j in sc.jobs] == [
        ("team-a/pretrain", "gpu", 12), ("team-b/eval", "gpu", 8), ("team-a/finetune", "gpu", 4)]


# --- gangkit's list of known fields is checked against the real schemas ---------------------------------------


@requires_schemas
@pytest.mark.parametrize("kind, api_version", [(k, v) for k, vs in API_VERSIONS.items() if k != "Configuration" for v in vs])
def test_every_field_gangkit_knows_exists_in_the_real_schema(kind, api_version):
    missing = fields_missing_from(known_fields(kind, api_version), schema_for(api_version, kind), kind)
    assert missing == []


def test_yaml_documents_parse_like_kubectl():
    """Unquoted timestamps become datetimes in YAML; both spellings are read."""
    text = manifest(*BASE) + "---\n" + yaml.safe_dump(wl("a", "user-queue", 1)).replace(
        "name: a\n", "name: a\n  creationTimestamp: 2025-01-01T00:01:00Z\n", 1) + "---\n" + manifest(wl("b", "user-queue", 1, created=0))
    got = load_kueue(text)
    assert {lw.workload.key: lw.workload.created for lw in got.workloads} == {"a": 60.0, "b": 0.0}
