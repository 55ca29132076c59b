"""``gangkit check``: a clean stack has no finding; each inconsistency is found exactly once, naming its objects.

The rows start from one clean stack (:func:`base`: Nodes, a Karpenter NodePool, Kueue's queues in a
cohort, a Volcano Queue and PodGroup, a PriorityClass, a Job) and change one thing each, the way
a platform engineer's typo would. Each row says which findings must come out, no more and no less,
and which objects the main one names. Further tables: the exit codes, ``--json``, every file of
``examples/`` and of the upstream manifests (``../shared``) without a traceback.
"""

from __future__ import annotations

import copy
import json
import warnings
from pathlib import Path

import pytest
import yaml

import gangkit as gk
from gangkit.cli.main import main
from gangkit.consistency import CATALOGUE, check
from gangkit.consistency.findings import Finding
from gangkit.manifests import GangkitInputWarning
from gangkit.model.errors import ScenarioError

from conftest import case, edit, shared_path

try:
    from schema_util import requires_schemas, validate_manifest
except ImportError:  # tests/ imported as a package
    from tests.schema_util import requires_schemas, validate_manifest
from paths import REPO

UPSTREAM = shared_path("upstream_manifests")
KUEUE = "kueue.x-k8s.io/v1beta2"


# --- the clean stack ------------------------------------------------------------------------------


def node(name, gpus=8, **labels):
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"gpu": "a100", **labels}},
            "status": {"allocatable": {"nvidia.com/gpu": str(gpus), "cpu": "96", "memory": "1Ti"}}}


def job(name="train", namespace="team-a", pods=2, gpus=4, labels=None, template_meta=None, **pod):
    template = {"spec": {"restartPolicy": "Never", **pod, "containers": [
        {"name": "worker", "image": "trainer:1.0", "resources": {"limits": {"nvidia.com/gpu": str(gpus)}}}]}}
    if template_meta:
        template["metadata"] = template_meta
    meta = {"name": name, "namespace": namespace, "annotations": {"gangkit/run-time": "1h"}}
    if labels:
        meta["labels"] = labels
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": meta,
            "spec": {"parallelism": pods, "completions": pods, "template": template}}


def cluster_queue(name, nominal, lending=None):
    quota = {"name": "nvidia.com/gpu", "nominalQuota": nominal}
    if lending is not None:
        quota["lendingLimit"] = lending
    return {"apiVersion": KUEUE, "kind": "ClusterQueue", "metadata": {"name": name},
            "spec": {"cohortName": "research", "namespaceSelector": {}, "resourceGroups": [
                {"coveredResources": ["nvidia.com/gpu"], "flavors": [{"name": "a100", "resources": [quota]}]}]}}


def base() -> list[dict]:
    """Kueue (two queues in a cohort) in front of Volcano, one 8-GPU Node, a NodePool of 16 more GPUs."""
    return [
        node("gpu-0"),
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "research"}, "value": 1000},
        {"apiVersion": "gangkit/v1alpha1", "kind": "Karpenter", "metadata": {"name": "karpenter"},
         "spec": {"batchIdleDuration": "1s", "stages": {"registered": "60s", "initialized": "90s"},
                  "instanceTypes": [{"name": "p4d.24xlarge", "capacity": {"nvidia.com/gpu": "8", "cpu": "96",
                                                                          "memory": "1152Gi"}}]}},
        {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "a100"},
         "spec": {"limits": {"nvidia.com/gpu": 16},
                  "template": {"metadata": {"labels": {"gpu": "a100"}}, "spec": {
                      "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
                      "requirements": [{"key": "node.kubernetes.io/instance-type", "operator": "In",
                                        "values": ["p4d.24xlarge"]}]}}}},
        {"apiVersion": KUEUE, "kind": "ResourceFlavor", "metadata": {"name": "a100"}, "spec": {"nodeLabels": {"gpu": "a100"}}},
        cluster_queue("team-a", 8),
        cluster_queue("team-b", 8, lending=4),
        {"apiVersion": KUEUE, "kind": "LocalQueue", "metadata": {"name": "gpu", "namespace": "team-a"},
         "spec": {"clusterQueue": "team-a"}},
        {"apiVersion": "config.kueue.x-k8s.io/v1beta2", "kind": "Configuration",
         "waitForPodsReady": {"timeout": "10m"}},
        {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": "research"},
         "spec": {"weight": 1, "capability": {"nvidia.com/gpu": "24"}}},
        {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup", "metadata": {"name": "train", "namespace": "team-a"},
         "spec": {"minMember": 2, "queue": "research"}},
        job(labels={"kueue.x-k8s.io/queue-name": "gpu"}, schedulerName="volcano", priorityClassName="research",
            template_meta={"annotations": {"scheduling.k8s.io/group-name": "train"}}),
        {"apiVersion": "gangkit/v1alpha1", "kind": "Simulation", "metadata": {"name": "team-a"},
         "spec": {"stack": "kueue+gang+karpenter"}},
    ]


def index(docs, kind, name):
    return next(i for i, d in enumerate(docs) if d.get("kind") == kind and (d.get("metadata") or {}).get("name") == name)


def change(kind, name, path, value):
    """A change to the stack: set (or append at) a dotted path of one object; value None deletes the key."""
    def apply(docs):
        i = index(docs, kind, name)
        if value is None:
            keys = path.split(".")
            here = docs[i]
            for k in keys[:-1]:
                here = here[int(k)] if isinstance(here, list) else here[k]
            del here[keys[-1]]
        else:
            docs[i] = edit(docs[i], path, value)
        return docs
    return apply


def drop(kind, name):
    def apply(docs):
        del docs[index(docs, kind, name)]
        return docs
    return apply


def add(*extra):
    def apply(docs):
        return docs + [copy.deepcopy(d) for d in extra]
    return apply


def stack(*changes) -> list[dict]:
    docs = base()
    for c in changes:
        docs = c(docs)
    return docs


def run_check(docs, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GangkitInputWarning)
        return check(docs, **kw)


JOB = "Job team-a/train"
GROUP = "PodGroup.scheduling.volcano.sh team-a/train"
NO_KUEUE = change("Job", "train", "metadata.labels", {})


def test_the_clean_stack_has_no_finding():
    report = run_check(stack())
    assert report.findings == []
    assert report.exit_status() == 0


@requires_schemas
def test_the_clean_stack_is_real_yaml():
    """Every object of the clean stack validates against its project's schema (gangkit's own kinds, and Kueue's
    Configuration, a file for Kueue's manager with no CRD, aside)."""
    names = [validate_manifest(d) for d in stack() if d["kind"] != "Configuration"]
    assert sum(n is not None for n in names) == 10


def static_pool(replicas, nodes=None):
    """The clean stack's NodePool made static: ``replicas`` nodes, capped by ``limits.nodes`` (its only limit)."""
    return [change("NodePool", "a100", "spec.replicas", replicas),
            change("NodePool", "a100", "spec.limits", {} if nodes is None else {"nodes": nodes})]


def gang_of(pods, gpus=None):
    """The Job and its PodGroup at ``pods`` pods (of ``gpus`` GPUs each when given)."""
    out = [change("Job", "train", "spec.parallelism", pods), change("Job", "train", "spec.completions", pods),
           change("PodGroup", "train", "spec.minMember", pods)]
    if gpus is not None:
        out.append(change("Job", "train", "spec.template.spec.containers.0.resources.limits", {"nvidia.com/gpu": str(gpus)}))
    return out


# the NodePool also allows a cheaper 1-GPU type, which a static pool's nodes are launched as
CHEAP_TOO = [change("Karpenter", "karpenter", "spec.instanceTypes.1",
                    {"name": "g4dn.xlarge", "capacity": {"nvidia.com/gpu": "1", "cpu": "4", "memory": "16Gi"},
                     "pricePerHour": 0.526}),
             change("NodePool", "a100", "spec.template.spec.requirements.0.values", ["p4d.24xlarge", "g4dn.xlarge"])]
# no instance types of its own: the NodePool chooses from gangkit's catalogue by GPU model (p4d and p4de, 8 A100s)
FROM_CATALOGUE = [change("Karpenter", "karpenter", "spec.instanceTypes", None),
                  change("NodePool", "a100", "spec.template.spec.requirements.0",
                         {"key": "karpenter.k8s.aws/instance-gpu-name", "operator": "In", "values": ["a100"]})]
ON_THE_POOL = change("Job", "train", "spec.template.spec.nodeSelector", {"karpenter.sh/nodepool": "a100"})


# --- one inconsistency per row: (changes, every code found, the objects of the first) ------------------------

ROWS = [
    case("a queue-name label naming no LocalQueue",
         [change("Job", "train", "metadata.labels", {"kueue.x-k8s.io/queue-name": "gpux"})],
         ["kueue-local-queue-missing"], (JOB,)),
    case("a LocalQueue whose ClusterQueue does not exist",
         [change("LocalQueue", "gpu", "spec.clusterQueue", "team-x")],
         ["kueue-cluster-queue-missing"], ("LocalQueue team-a/gpu",)),
    case("a ClusterQueue naming a flavor that does not exist",
         [change("ClusterQueue", "team-b", "spec.resourceGroups.0.flavors.0.name", "h100")],
         ["kueue-flavor-missing"], ("ClusterQueue team-b",)),
    case("a ClusterQueue naming an AdmissionCheck that does not exist",
         [change("ClusterQueue", "team-b", "spec.admissionChecksStrategy", {"admissionChecks": [{"name": "capacity"}]})],
         ["kueue-admission-check-missing"], ("ClusterQueue team-b",)),
    case("a ClusterQueue without namespaceSelector admits nothing",
         [change("ClusterQueue", "team-b", "spec.namespaceSelector", None)],
         ["kueue-cluster-queue-selects-no-namespace"], ("ClusterQueue team-b",)),
    case("a WorkloadPriorityClass label naming no class",
         [change("Job", "train", "metadata.labels", {"kueue.x-k8s.io/queue-name": "gpu",
                                                     "kueue.x-k8s.io/priority-class": "urgent"})],
         ["kueue-workload-priority-class-missing"], (JOB,)),
    case("a priorityClassName naming no PriorityClass",
         [change("Job", "train", "spec.template.spec.priorityClassName", "urgent")],
         ["priority-class-missing"], (JOB,)),
    case("a system PriorityClass needs no object",
         [change("Job", "train", "spec.template.spec.priorityClassName", "system-cluster-critical")],
         [], ()),
    case("a Volcano PodGroup naming a Queue that does not exist",
         [change("PodGroup", "train", "spec.queue", "prod")],
         ["volcano-queue-missing"], (GROUP,)),
    case("Volcano's default queue always exists",
         [change("PodGroup", "train", "spec.queue", "default")],
         [], ()),
    case("a pod template naming a PodGroup that does not exist",
         [drop("PodGroup", "train")],
         ["gang-object-missing"], (JOB,)),
    case("a PodGroup no pod refers to",
         [add({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
               "metadata": {"name": "spare", "namespace": "team-a"}, "spec": {"minMember": 1}})],
         ["gang-object-unused"], ("PodGroup.scheduling.volcano.sh team-a/spare",)),
    case("a schedulerName no layer provides",
         [change("Job", "train", "spec.template.spec.schedulerName", "my-scheduler")],
         ["scheduler-not-provided"], (JOB,)),
    case("a Volcano PodGroup on pods the default scheduler places",
         [change("Job", "train", "spec.template.spec.schedulerName", None)],
         ["gang-scheduler-mismatch"], (JOB, GROUP)),
    case("minMember above the Job's parallelism",
         [change("PodGroup", "train", "spec.minMember", 3)],
         ["gang-larger-than-job"], (JOB, GROUP)),
    case("minMember below a sync job's pod count",
         [change("PodGroup", "train", "spec.minMember", 1)],
         ["gang-smaller-than-sync-job"], (JOB, GROUP)),
    case("minMember below the pod count of an independent job is fine",
         [change("PodGroup", "train", "spec.minMember", 1),
          change("Job", "train", "metadata.annotations.gangkit/progress", "independent")],
         [], ()),
    case("a gang above its ClusterQueue's nominal quota plus what the cohort lends",
         [change("Job", "train", "spec.parallelism", 4), change("Job", "train", "spec.completions", 4),
          change("PodGroup", "train", "spec.minMember", 4)],
         ["kueue-quota-never-fits"], (JOB, "ClusterQueue team-a")),
    case("borrowing up to the other queue's lendingLimit fits",
         [change("Job", "train", "spec.parallelism", 3), change("Job", "train", "spec.completions", 3),
          change("PodGroup", "train", "spec.minMember", 3)],
         [], ()),
    case("a borrowingLimit caps what the cohort lends",
         [change("ClusterQueue", "team-a", "spec.resourceGroups.0.flavors.0.resources.0.borrowingLimit", 2),
          change("Job", "train", "spec.parallelism", 3), change("Job", "train", "spec.completions", 3),
          change("PodGroup", "train", "spec.minMember", 3)],
         ["kueue-quota-never-fits"], (JOB, "ClusterQueue team-a")),
    case("a nodeSelector that matches no flavor of the ClusterQueue",
         [change("Job", "train", "spec.template.spec.nodeSelector", {"gpu": "h100"})],
         ["kueue-no-flavor-matches"], (JOB, "ClusterQueue team-a")),
    case("a gang above its Volcano Queue's capability",
         [change("Queue", "research", "spec.capability", {"nvidia.com/gpu": "4"})],
         ["volcano-capability-too-small"], (JOB, "Queue research")),
    case("a pod larger than every node and instance type",
         [NO_KUEUE, change("Job", "train", "spec.parallelism", 1), change("Job", "train", "spec.completions", 1),
          change("PodGroup", "train", "spec.minMember", 1),
          change("Job", "train", "spec.template.spec.containers.0.resources.limits", {"nvidia.com/gpu": "16"})],
         ["pod-fits-no-node"], (JOB,)),
    case("a gang more than the Nodes and the NodePool's limit hold at once",
         [NO_KUEUE, change("NodePool", "a100", "spec.limits", {"nvidia.com/gpu": 8}),
          change("Job", "train", "spec.parallelism", 6), change("Job", "train", "spec.completions", 6),
          change("PodGroup", "train", "spec.minMember", 6)],
         ["supply-too-small"], (JOB, "NodePool a100")),
    case("a ResourceFlavor whose nodeLabels match no Node and no NodePool",
         [change("ResourceFlavor", "a100", "spec.nodeLabels", {"gpu": "h100"})],
         ["kueue-flavor-matches-no-node"], ("ResourceFlavor a100", "ClusterQueue team-a", "ClusterQueue team-b")),
    case("a NodePool requirement lets Karpenter label its nodes as the flavor asks",
         [change("ResourceFlavor", "a100", "spec.nodeLabels", {"karpenter.sh/capacity-type": "on-demand"}),
          change("NodePool", "a100", "spec.template.spec.requirements.1",
                 {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]})],
         [], ()),
    case("more GPU quota in a flavor than its nodes can ever hold",
         [change("ClusterQueue", "team-a", "spec.resourceGroups.0.flavors.0.resources.0.nominalQuota", 40)],
         ["kueue-quota-exceeds-supply"], ("ResourceFlavor a100", "ClusterQueue team-a", "ClusterQueue team-b")),
    case("a NodePool behind quota the Node already covers",
         [change("ClusterQueue", "team-a", "spec.resourceGroups.0.flavors.0.resources.0.nominalQuota", 4),
          change("ClusterQueue", "team-b", "spec.resourceGroups.0.flavors.0.resources.0.nominalQuota", 4)],
         ["kueue-quota-below-supply"], ("ResourceFlavor a100", "ClusterQueue team-a", "ClusterQueue team-b")),
    case("... is fine when a Job outside Kueue may use the added nodes",
         [change("ClusterQueue", "team-a", "spec.resourceGroups.0.flavors.0.resources.0.nominalQuota", 4),
          change("ClusterQueue", "team-b", "spec.resourceGroups.0.flavors.0.resources.0.nominalQuota", 4), NO_KUEUE],
         [], ()),
    case("... and when the quota reaches past the Node",
         [change("ClusterQueue", "team-a", "spec.resourceGroups.0.flavors.0.resources.0.nominalQuota", 5),
          change("ClusterQueue", "team-b", "spec.resourceGroups.0.flavors.0.resources.0.nominalQuota", 4)],
         [], ()),
    case("waitForPodsReady shorter than the new nodes' stages",
         [change("Configuration", None, "waitForPodsReady.timeout", "60s"),
          change("Job", "train", "spec.parallelism", 3), change("Job", "train", "spec.completions", 3),
          change("PodGroup", "train", "spec.minMember", 3)],
         ["kueue-pods-ready-timeout"], (JOB, "Configuration (document 9)")),
    case("a timeout longer than the stages is fine",
         [change("Job", "train", "spec.parallelism", 3), change("Job", "train", "spec.completions", 3),
          change("PodGroup", "train", "spec.minMember", 3)],
         [], ()),
    case("a gang more than the Node and a static NodePool's min(replicas 2, limits.nodes 1) node hold",
         [NO_KUEUE, *static_pool(2, nodes=1), *gang_of(6)],
         ["supply-too-small"], (JOB, "NodePool a100")),
    case("a gang the Node and the static NodePool's one node hold",
         [NO_KUEUE, *static_pool(2, nodes=1), *gang_of(4)],
         [], ()),
    case("a static NodePool of 0 nodes adds no GPU to the flavor",
         [*static_pool(0)],
         ["kueue-quota-exceeds-supply"], ("ResourceFlavor a100", "ClusterQueue team-a", "ClusterQueue team-b")),
    case("a static NodePool's nodes are of its cheapest type: a pod only the other type holds fits none",
         [NO_KUEUE, *CHEAP_TOO, *static_pool(2), *gang_of(1), ON_THE_POOL],
         ["pod-fits-no-node", "kueue-quota-exceeds-supply"], (JOB,)),
    case("... while a dynamic NodePool may launch the other type",
         [NO_KUEUE, *CHEAP_TOO, *gang_of(1), ON_THE_POOL],
         [], ()),
    case("waitForPodsReady shorter than a static NodePool's node stages",
         [change("Configuration", None, "waitForPodsReady.timeout", "60s"), *static_pool(1), *gang_of(3)],
         ["kueue-pods-ready-timeout"], (JOB, "Configuration (document 9)")),
    case("... is fine for a Job submitted after the static node is ready",
         [change("Configuration", None, "waitForPodsReady.timeout", "60s"), *static_pool(1), *gang_of(3),
          change("Job", "train", "metadata.annotations.gangkit/submit-time", "10m"),
          add(job("warmup", pods=1, gpus=1))],
         [], ()),
    case("a pod larger than every catalogue type the NodePool's requirements allow",
         [NO_KUEUE, *FROM_CATALOGUE, *gang_of(1, gpus=16)],
         ["pod-fits-no-node"], (JOB,)),
    case("a gang the catalogue types hold within the NodePool's limit",
         [NO_KUEUE, *FROM_CATALOGUE, *gang_of(3, gpus=8)],
         [], ()),
    case("... and one above that limit",
         [NO_KUEUE, *FROM_CATALOGUE, change("NodePool", "a100", "spec.limits", {"nvidia.com/gpu": 8}), *gang_of(3, gpus=8)],
         ["supply-too-small"], (JOB, "NodePool a100")),
]


@pytest.mark.parametrize("changes, codes, objects", ROWS)
def test_each_inconsistency_is_found_once(changes, codes, objects):
    report = run_check(stack(*changes))
    assert sorted(f.code for f in report.findings) == sorted(codes), [f.message for f in report.findings]
    if codes:
        first = next(f for f in report.findings if f.code == codes[0])
        assert first.objects == objects
        assert first.message and first.hint and first.fields
        assert report.exit_status() == (1 if first.severity == "error" else 0)


# --- the holding gang layers: their own small stacks --------------------------------------------------------


def holding_stack(gang_layer: str, timeout: int | None = None, stages=("60s", "90s"), pods=3, gpus=4, node_gpus=8,
                  gang=None, name="train", release=None):
    """One Node and a NodePool of 8-GPU machines; a sync gang of ``pods`` x ``gpus``: part of it fits the Node,
    the rest needs a new node (by default 3 pods x 4 GPUs: two fit, the third waits for a node). ``gang``: the
    gang size (default: every pod); ``name``: the gang object the pods name."""
    gang = pods if gang is None else gang
    docs = [d for d in base() if d["kind"] in ("Karpenter", "NodePool")] + [node("gpu-0", gpus=node_gpus)]
    docs[index(docs, "Karpenter", "karpenter")]["spec"]["stages"] = {"registered": stages[0], "initialized": stages[1]}
    if gang_layer == "coscheduling":
        spec = {"minMember": gang} | ({"scheduleTimeoutSeconds": timeout} if timeout else {})
        docs.append({"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
                     "metadata": {"name": "train", "namespace": "team-a"}, "spec": spec})
        meta = {"labels": {"scheduling.x-k8s.io/pod-group": name}}
    elif gang_layer == "yunikorn":
        groups = json.dumps([{"name": "workers", "minMember": gang, "minResource": {"nvidia.com/gpu": str(gpus)}}])
        meta = {"annotations": {"yunikorn.apache.org/task-group-name": "workers" if name == "train" else name,
                                "yunikorn.apache.org/task-groups": groups}}
        if timeout:
            meta["annotations"]["yunikorn.apache.org/schedulingPolicyParameters"] = f"placeholderTimeoutInSeconds={timeout}"
    elif gang_layer == "kube-gang-1.36":  # a standalone PodGroup the pods join by spec.schedulingGroup
        docs.append({"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup",
                     "metadata": {"name": "train", "namespace": "team-a"},
                     "spec": {"schedulingPolicy": {"gang": {"minCount": gang}}}})
        meta = None
    else:
        docs.append({"apiVersion": "scheduling.k8s.io/v1alpha1", "kind": "Workload",
                     "metadata": {"name": "train", "namespace": "team-a"},
                     "spec": {"podGroups": [{"name": "workers", "policy": {"gang": {"minCount": gang}}}]}})
        meta = None
    pod = {"workloadRef": {"name": name, "podGroup": "workers"}} if gang_layer == "kube-gang" else {}
    if gang_layer == "kube-gang-1.36":
        pod = {"schedulingGroup": {"podGroupName": name}}
    docs.append(job(pods=pods, gpus=gpus, template_meta=meta, **pod))
    if release is not None:
        docs.append({"apiVersion": "gangkit/v1alpha1", "kind": "Simulation", "metadata": {"name": "check"},
                     "spec": {"stack": "kube-gang+karpenter", "kubeGangRelease": release}})
    return docs


FAST, SLOW = ("60s", "90s"), ("200s", "200s")  # 151 s and 401 s with Karpenter's 1 s batching window
TEN_PODS = {"pods": 10, "gpus": 1, "node_gpus": 9}  # 9 of 10 fit the Node: 10 % of the gang is missing
HOLDING = [
    case("Coscheduling's default Permit wait (60 s) is shorter than the new node", "coscheduling", None, FAST, TEN_PODS,
         ["coscheduling-timeout"]),
    case("a scheduleTimeoutSeconds longer than the new node", "coscheduling", 600, FAST, TEN_PODS, []),
    case("with a third of the gang missing, Coscheduling rejects at once: nothing waits", "coscheduling", None, FAST, {},
         []),
    case("a placeholder timeout shorter than the new node", "yunikorn", 100, FAST, {}, ["yunikorn-placeholder-timeout"]),
    case("YuniKorn's default placeholder timeout (15 min) is long enough", "yunikorn", None, FAST, {}, []),
    case("the GangScheduling plugin's 5 minutes are shorter than a slow node", "kube-gang", None, SLOW, {},
         ["kube-gang-timeout"]),
    case("the GangScheduling plugin's 5 minutes are long enough for a fast node", "kube-gang", None, FAST, {}, []),
    case("a gang the Node holds whole needs no new node", "kube-gang", None, SLOW, {"pods": 2}, []),
    case("Kubernetes 1.35 written out (spec.kubeGangRelease): the same finding", "kube-gang", None, SLOW,
         {"release": "1.35"}, ["kube-gang-timeout"]),
    case("Kubernetes 1.36 (spec.kubeGangRelease): the PodGroup scheduling cycle holds nothing, so no timeout",
         "kube-gang", None, SLOW, {"release": "1.36"}, []),
]


@pytest.mark.parametrize("layer, timeout, stages, shape, codes", HOLDING)
def test_gang_timeouts_against_the_node_stages(layer, timeout, stages, shape, codes):
    report = run_check(holding_stack(layer, timeout, stages, **shape))
    assert [f.code for f in report.findings] == codes, [f.message for f in report.findings]
    for f in report.findings:
        assert f.objects[0] == JOB and f.numbers["provisioning_s"] > f.numbers["timeout_s"]


def volcano_job(min_available=None, tasks=((1, None), (3, None))):
    """A Volcano Job (queue default) of tasks (replicas, minAvailable) on the clean stack's Node."""
    spec = {"schedulerName": "volcano", "tasks": [
        {"name": f"task{i}", "replicas": replicas, **({"minAvailable": m} if m is not None else {}),
         "template": {"spec": {"containers": [{"name": "w", "image": "i", "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}}}
        for i, (replicas, m) in enumerate(tasks)]}
    if min_available is not None:
        spec["minAvailable"] = min_available
    return [node("gpu-0"), {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
                            "metadata": {"name": "train", "namespace": "team-a"}, "spec": spec}]


VJOB = "Job.batch.volcano.sh team-a/train"
OTHER_GANGS = [
    case("a scheduler-plugins PodGroup larger than the Job", holding_stack("coscheduling", gang=4),
         ["gang-larger-than-job"], (JOB, "PodGroup.scheduling.x-k8s.io team-a/train")),
    case("a YuniKorn task group larger than the Job", holding_stack("yunikorn", gang=4), ["gang-larger-than-job"], (JOB,)),
    case("a Workload's minCount larger than the Job", holding_stack("kube-gang", gang=4),
         ["gang-larger-than-job"], (JOB, "Workload.scheduling.k8s.io team-a/train")),
    case("a Workload's minCount below a sync job", holding_stack("kube-gang", gang=2, pods=2, stages=("1s", "1s")),
         [], ()),
    case("a 1.36 PodGroup's minCount larger than the Job", holding_stack("kube-gang-1.36", gang=4),
         ["gang-larger-than-job"], (JOB, "PodGroup.scheduling.k8s.io team-a/train")),
    case("a label naming no scheduler-plugins PodGroup", holding_stack("coscheduling", name="trian"),
         ["gang-object-missing", "gang-object-unused"], (JOB,)),
    case("a workloadRef naming no Workload", holding_stack("kube-gang", name="trian"),
         ["gang-object-missing", "gang-object-unused"], (JOB,)),
    case("a 1.36 schedulingGroup naming no PodGroup", holding_stack("kube-gang-1.36", name="trian"),
         ["gang-object-missing", "gang-object-unused"], (JOB,)),
    case("a task-group-name among no task groups", holding_stack("yunikorn", name="trian"), ["gang-object-missing"], (JOB,)),
    case("a Volcano Job's minAvailable above its replicas", volcano_job(5), ["gang-larger-than-job"], (VJOB,)),
    case("a Volcano task's minAvailable above its replicas", volcano_job(None, ((1, None), (3, 4))),
         ["gang-larger-than-job"], (VJOB,)),
    case("a Volcano Job's minAvailable below its replicas, sync", volcano_job(2), ["gang-smaller-than-sync-job"], (VJOB,)),
    case("a Volcano Job whose tasks' minAvailable make the gang", volcano_job(None, ((1, 1), (3, 3))), [], ()),
]


@pytest.mark.parametrize("docs, codes, objects", OTHER_GANGS)
def test_the_other_gang_layers(docs, codes, objects):
    report = run_check(docs)
    assert sorted(f.code for f in report.findings) == sorted(codes), [f.message for f in report.findings]
    if codes:
        assert next(f for f in report.findings if f.code == codes[0]).objects == objects


WORKLOAD = {"apiVersion": KUEUE, "kind": "Workload", "metadata": {"name": "eval", "namespace": "team-a"},
            "spec": {"queueName": "gpu", "podSets": [{"name": "main", "count": 4, "template": {"spec": {"containers": [
                {"name": "w", "image": "i", "resources": {"requests": {"nvidia.com/gpu": "4"}}}]}}}]}}


@pytest.mark.parametrize("workload, codes", [
    case("a Workload object larger than its queue can ever have", WORKLOAD, ["kueue-quota-never-fits"]),
    case("a Workload object naming no LocalQueue", edit(WORKLOAD, "spec.queueName", "cpu"), ["kueue-local-queue-missing"]),
    case("a Workload object that fits", edit(WORKLOAD, "spec.podSets.0.count", 2), []),
])
def test_kueue_workload_objects_are_judged_too(workload, codes):
    report = run_check(stack(add(workload)))
    assert [f.code for f in report.findings] == codes
    assert all(f.objects[0] == "Workload.kueue.x-k8s.io team-a/eval" for f in report.findings)


def test_a_finding_replaces_the_readers_warning():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        report = check(stack(change("LocalQueue", "gpu", "spec.clusterQueue", "team-x")))
    assert [f.code for f in report.findings] == ["kueue-cluster-queue-missing"]
    assert not [w for w in caught if "team-x" in str(w.message)]


# --- input errors: the reader's one clear error, never a finding --------------------------------------------

BAD_INPUT = [
    case("bad YAML", "kind: Node\n  metadata: [", "invalid YAML"),
    case("an unknown kind", "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: web}\n", "unknown kind 'DaemonSet'"),
    case("a field of the wrong type", "apiVersion: batch/v1\nkind: Job\nmetadata: {name: a}\nspec:\n  parallelism: 0\n"
         "  template: {spec: {containers: [{name: c, image: i}]}}\n", "spec.parallelism: expected a whole number >= 1"),
    case("a file that is not there", Path("nowhere.yaml"), "File nowhere.yaml: not found"),
]


@pytest.mark.parametrize("source, message", BAD_INPUT)
def test_bad_input_is_an_input_error(source, message):
    with pytest.raises(ScenarioError, match=message):
        run_check(source)


WEIRD = [None, 0, -1, "", "x", [], {}, [1], {"a": 1}, True, 1.5]


def _paths(x, here=()):
    yield here
    if isinstance(x, dict):
        for k, v in x.items():
            yield from _paths(v, here + (k,))
    elif isinstance(x, list):
        for i, v in enumerate(x):
            yield from _paths(v, here + (i,))


def test_no_traceback_for_any_value_anywhere():
    """Every field of the clean stack (and of the other gang layers') set to values of the wrong type, a few at a
    time, from a fixed seed: a report or one ScenarioError, never another exception."""
    import random

    rng = random.Random(7)
    stacks = [stack(), holding_stack("coscheduling"), holding_stack("yunikorn"), holding_stack("kube-gang"), volcano_job(2)]
    outcomes = set()
    for _ in range(300):
        docs = copy.deepcopy(rng.choice(stacks))
        for _ in range(rng.randint(1, 3)):
            doc = rng.choice(docs)
            path = rng.choice([p for p in _paths(doc) if p])
            here = doc
            for k in path[:-1]:
                here = here[k]
            here[path[-1]] = copy.deepcopy(rng.choice(WEIRD))
        try:
            run_check(docs)
            outcomes.add("report")
        except ScenarioError:
            outcomes.add("input error")
    assert outcomes == {"report", "input error"}


# --- the command line: exit codes, text, one JSON object ----------------------------------------------------


def write(tmp_path, docs, name="stack.yaml"):
    import yaml

    path = tmp_path / name
    path.write_text(yaml.safe_dump_all(docs, sort_keys=False))
    return str(path)


EXIT_CODES = [
    case("a clean stack", [], [], 0),
    case("only warnings", [change("PodGroup", "train", "spec.minMember", 1)], [], 0),
    case("only warnings, --strict", [change("PodGroup", "train", "spec.minMember", 1)], ["--strict"], 1),
    case("an error", [change("PodGroup", "train", "spec.queue", "prod")], [], 1),
    case("an input error", [add({"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "web"}})], [], 2),
]


@pytest.mark.parametrize("changes, flags, status", EXIT_CODES)
def test_exit_codes(tmp_path, capsys, changes, flags, status):
    assert main(["check", write(tmp_path, stack(*changes)), *flags]) == status
    captured = capsys.readouterr()
    if status == 2:
        assert captured.out == "" and captured.err.startswith("error: DaemonSet web: kind: unknown kind")
    else:
        assert captured.out.startswith("gangkit check: 1 file, 13 objects: ")


def test_json_is_one_object_with_findings_and_a_summary(tmp_path, capsys):
    path = write(tmp_path, stack(change("PodGroup", "train", "spec.queue", "prod"), change("PodGroup", "train", "spec.minMember", 1)))
    assert main(["check", path, "--json"]) == 1
    out = capsys.readouterr().out
    assert out.count("\n") == 1
    payload = json.loads(out)
    assert [f["code"] for f in payload["findings"]] == ["volcano-queue-missing", "gang-smaller-than-sync-job"]
    assert payload["summary"] | {"files": None} == {"files": None, "objects": 13, "findings": 2, "errors": 1,
                                                     "warnings": 1, "exit_status": 1, "simulation": None}
    first = payload["findings"][0]
    assert first["fields"] == [{"object": GROUP, "field": "spec.queue"}] and first["numbers"] == {"queue": "prod"}


def test_several_files_are_one_stack(tmp_path, capsys):
    docs = stack()
    setup = [d for d in docs if d["kind"] != "Job"]
    jobs = [d for d in docs if d["kind"] == "Job"]
    assert main(["check", write(tmp_path, setup, "setup.yaml"), write(tmp_path, jobs, "jobs.yaml")]) == 0
    assert capsys.readouterr().out.startswith("gangkit check: 2 files, 13 objects: no findings")
    assert main(["check", write(tmp_path, jobs, "jobs.yaml")]) == 1  # alone, the Job's LocalQueue and PodGroup are missing
    assert "kueue-local-queue-missing" in capsys.readouterr().out


def test_stack_needs_simulate(tmp_path, capsys):
    assert main(["check", write(tmp_path, stack()), "--stack", "gang"]) == 2
    assert "--stack needs --simulate" in capsys.readouterr().err


def test_text_groups_by_severity(tmp_path, capsys):
    path = write(tmp_path, stack(change("PodGroup", "train", "spec.minMember", 1), change("PodGroup", "train", "spec.queue", "prod")))
    main(["check", path])
    out = capsys.readouterr().out
    assert out.index("\nerrors\n") < out.index("volcano-queue-missing") < out.index("\nwarnings\n") \
        < out.index("gang-smaller-than-sync-job")
    assert all(len(line) <= 100 for line in out.splitlines())


# --- --simulate ----------------------------------------------------------------------------------------------

EXAMPLES = REPO / "examples"
SIMULATED = [
    case("pod by pod, two gangs deadlock", EXAMPLES / "two-gangs-deadlock.yaml", ["--stack", "pod"],
         {"run-deadlocked": ("Job team-a/A", "Job team-b/B")}),
    case("the same jobs as gangs: no deadlock", EXAMPLES / "two-gangs-deadlock.yaml", ["--stack", "gang"], {}),
    case("a NodePool limit below the gang: the static error, not repeated by the run",
         EXAMPLES / "kueue-karpenter-nodepool-limit.yaml", [], {}),
]


@pytest.mark.parametrize("path, flags, run_codes", SIMULATED)
def test_simulate_adds_the_runs_findings(capsys, path, flags, run_codes):
    main(["check", str(path), "--simulate", "--json", *flags])
    payload = json.loads(capsys.readouterr().out)
    found = {f["code"]: tuple(f["objects"]) for f in payload["findings"] if f["code"].startswith("run-")}
    assert found == run_codes
    assert payload["summary"]["simulation"]["ran"] is True


def test_simulate_reports_nodes_waited_for_and_jobs_never_admitted():
    """waitForPodsReady (60 s) shorter than the new node (151 s), no requeue left: admitted, evicted, deactivated."""
    longer = stack(change("Job", "train", "spec.parallelism", 3), change("Job", "train", "spec.completions", 3),
                   change("PodGroup", "train", "spec.minMember", 3))
    report = run_check(longer, simulate=True)
    waited = [f for f in report.findings if f.code == "run-waited-for-nodes"]
    assert [f.objects for f in waited] == [(JOB,)] and waited[0].numbers["node_wait_s"] == 150
    short = stack(change("Configuration", None, "waitForPodsReady", {"timeout": "60s",
                                                                     "requeuingStrategy": {"backoffLimitCount": 0}}),
                  change("Job", "train", "spec.parallelism", 3), change("Job", "train", "spec.completions", 3),
                  change("PodGroup", "train", "spec.minMember", 3))
    codes = sorted(f.code for f in run_check(short, simulate=True).findings)
    assert codes == ["kueue-pods-ready-timeout", "run-never-admitted"]


def test_simulate_reports_a_stalled_run():
    """Two Kubernetes 1.35 gangs of 4 on 4 GPUs interleave, each holds some, both time out and take them again."""
    docs = [node("gpu-0", gpus=4), {"apiVersion": "gangkit/v1alpha1", "kind": "Simulation", "metadata": {"name": "live"},
                                    "spec": {"stack": "kube-gang", "horizon": "48h"}}]
    for name in ("a", "b"):
        docs.append({"apiVersion": "scheduling.k8s.io/v1alpha1", "kind": "Workload",
                     "metadata": {"name": name, "namespace": "team-a"},
                     "spec": {"podGroups": [{"name": "workers", "policy": {"gang": {"minCount": 4}}}]}})
        docs.append(job(name, pods=4, gpus=1, workloadRef={"name": name, "podGroup": "workers"}))
    report = run_check(docs, simulate=True)
    assert [(f.code, f.objects) for f in report.findings] == [("run-stalled", ("Job team-a/a", "Job team-a/b"))]
    assert "WaitingAtPermit" in report.findings[0].message and report.exit_status() == 1


def test_simulate_picks_the_stack_from_the_files():
    docs = [d for d in stack() if d["kind"] != "Simulation"]
    report = run_check(docs, simulate=True)
    assert (report.simulation["stack"], report.simulation["stack_from"]) == ("kueue+gang+karpenter", "the files' layers")
    assert run_check(stack(), simulate=True).simulation["stack_from"] == "the Simulation object"


def test_a_stack_the_run_refuses_is_not_simulated():
    report = run_check(stack(change("PodGroup", "train", "spec.queue", "prod")), simulate=True)
    assert report.simulation["ran"] is False and [f.code for f in report.findings] == ["volcano-queue-missing"]


# --- every real file, without a traceback ---------------------------------------------------------------------


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.yaml")), ids=lambda p: p.name)
def test_every_example_checks_and_simulates(path):
    report = run_check(path, simulate=True)
    assert report.simulation["ran"] is True
    assert all(isinstance(f, Finding) and f.code in CATALOGUE for f in report.findings)


UPSTREAM_FILES = sorted(UPSTREAM.rglob("*.y*ml")) if UPSTREAM.is_dir() else []


@pytest.mark.skipif(not UPSTREAM.is_dir(), reason=f"the upstream manifests {UPSTREAM} are absent (they sit beside the repository)")
@pytest.mark.parametrize("path", UPSTREAM_FILES, ids=lambda p: str(p.relative_to(UPSTREAM)) if UPSTREAM.is_dir() else "")
def test_every_upstream_file_is_checked_or_refused(capsys, path):
    status = main(["check", str(path), "--json"])
    captured = capsys.readouterr()
    assert status in (0, 1, 2), captured.err
    if status == 2:
        assert captured.out == "" and captured.err.startswith("error: ")
    else:
        assert set(json.loads(captured.out)) == {"findings", "summary"}


def test_the_public_function_returns_findings():
    assert gk.check_manifests(stack()) == []
    found = gk.check_manifests(stack(change("PodGroup", "train", "spec.queue", "prod")))
    assert [(f.code, f.severity, f.objects) for f in found] == [("volcano-queue-missing", "error", (GROUP,))]


def test_the_reference_page_lists_every_code():
    page = (REPO / "docs" / "reference" / "check.md").read_text()
    missing = [code for code in CATALOGUE if f"`{code}`" not in page]
    assert not missing, f"docs/reference/check.md lacks {missing}"


# --- cluster-autoscaler's ProvisioningRequests ------------------------------------------------------------------
def standalone(consumes: str) -> list[dict]:
    """The stand-alone ProvisioningRequest example, its Job consuming ``consumes``."""
    docs = [d for d in yaml.safe_load_all((REPO / "examples" / "standalone-provisioning-request.yaml").read_text()) if d]
    job = next(d for d in docs if d["kind"] == "Job")
    job["spec"]["template"]["metadata"]["annotations"]["autoscaling.x-k8s.io/consume-provisioning-request"] = consumes
    return docs


@pytest.mark.parametrize("consumes, codes", [
    case("the request exists", "pretrain-capacity", []),
    case("a typo in the annotation", "pretrain-capacty", ["provisioning-request-missing"]),
])
def test_pods_that_consume_a_missing_provisioning_request(consumes, codes):
    report = run_check(standalone(consumes))
    assert [f.code for f in report.findings] == codes, [f.message for f in report.findings]
    for f in report.findings:
        assert f.objects == ("Job ml/pretrain",) and f.numbers["name"] == consumes
