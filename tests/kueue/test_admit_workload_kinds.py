"""``gangkit admit`` on Pods, pod groups, Deployments and StatefulSets: admitted, pending, or named in a warning.

Kueue v0.19's default ``integrations.frameworks`` include ``pod``, ``deployment`` and ``statefulset``:
a queue-labelled Pod is a Workload of its own, Pods sharing ``kueue.x-k8s.io/pod-group-name`` are one
(once ``pod-group-total-count`` of them exist), each replica of a Deployment is a plain Pod, and a
StatefulSet's replicas are one pod group. Nothing gangkit admit reads is dropped without a word.
"""

from __future__ import annotations

import warnings

import pytest
import yaml

from gangkit.analysis.admit import admit
from gangkit.manifests.kueue_snapshot import load_kueue

from conftest import case

try:
    from schema_util import requires_schemas, validate_manifest
except ImportError:  # tests/ imported as a package
    from tests.schema_util import requires_schemas, validate_manifest

QUEUES = [
    {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor", "metadata": {"name": "default-flavor"}},
    {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue", "metadata": {"name": "cq"},
     "spec": {"namespaceSelector": {}, "resourceGroups": [{"coveredResources": ["nvidia.com/gpu"], "flavors": [
         {"name": "default-flavor", "resources": [{"name": "nvidia.com/gpu", "nominalQuota": 4}]}]}]}},
    {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue", "metadata": {"name": "lq", "namespace": "default"},
     "spec": {"clusterQueue": "cq"}},
]
QUEUED = {"kueue.x-k8s.io/queue-name": "lq"}


def pod_spec(gpus: int = 1) -> dict:
    return {"containers": [{"name": "c", "image": "trainer", "resources": {"limits": {"nvidia.com/gpu": gpus}}}]}


def pod(name: str, labels: dict | None = None, annotations: dict | None = None, gpus: int = 1) -> dict:
    meta = {"name": name, "namespace": "default", "labels": labels or {}}
    if annotations:
        meta["annotations"] = annotations
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": pod_spec(gpus)}


def controller(kind: str, name: str, replicas: int, labels: dict | None = None) -> dict:
    spec = {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}}, "spec": pod_spec()}}
    if kind == "StatefulSet":
        spec["serviceName"] = name
    return {"apiVersion": "apps/v1", "kind": kind, "metadata": {"name": name, "namespace": "default",
                                                               "labels": labels or {}}, "spec": spec}


GROUP = {**QUEUED, "kueue.x-k8s.io/pod-group-name": "grp"}
TOTAL = {"kueue.x-k8s.io/pod-group-total-count": "2"}

# (objects, admitted {name: {pod set: count}}, pending names, words in the warnings)
KINDS = [
    case("a queue-labelled Pod is a Workload of its own", [pod("lone", QUEUED)], {"default/lone": {"main": 1}}, [], []),
    case("a pod group is one Workload for all its pods", [pod("g-0", GROUP, TOTAL), pod("g-1", GROUP, TOTAL)],
         {"default/grp": {"main": 2}}, [], []),
    case("a pod group short of its total count is left out, with a note", [pod("g-0", GROUP, TOTAL)], {}, [],
         ["pod-group-total-count is 2 but the input has 1 pod"]),
    case("each replica of a Deployment is a plain Pod", [controller("Deployment", "web", 2, QUEUED)],
         {"default/web-0": {"main": 1}, "default/web-1": {"main": 1}}, [], []),
    case("a StatefulSet's replicas are one pod group", [controller("StatefulSet", "db", 3, QUEUED)],
         {"default/db": {"workers": 3}}, [], []),
    case("a StatefulSet over quota waits whole", [controller("StatefulSet", "big", 5, QUEUED)], {}, ["default/big"], []),
    case("a Pod without the queue label is not Kueue's, and says so", [pod("free")], {}, [],
         ["has no kueue.x-k8s.io/queue-name label: Kueue does not manage it"]),
    case("a Deployment without the queue label is not Kueue's, and says so", [controller("Deployment", "web", 1)], {}, [],
         ["has no kueue.x-k8s.io/queue-name label: Kueue does not manage it"]),
    case("a Volcano Job is read and left out, with a warning that says why",
         [{"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": "vj", "namespace": "default"},
           "spec": {"minAvailable": 1, "schedulerName": "volcano", "tasks": [
               {"name": "w", "replicas": 1, "template": {"spec": pod_spec()}}]}}], {}, [],
         ["left out by gangkit admit: Kueue has no job integration for it"]),
    case("a coscheduling PodGroup is read and left out, with a warning that says why",
         [{"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
           "metadata": {"name": "pg", "namespace": "default"}, "spec": {"minMember": 2}}], {}, [],
         ["left out by gangkit admit: Kueue has no job integration for it"]),
]


def decide(objects: list[dict]) -> tuple[dict, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        source = load_kueue(QUEUES + objects)
        report = admit(source, cycles=None)
    return report, [str(w.message) for w in caught]


@pytest.mark.parametrize("objects, admitted, pending, words", KINDS)
def test_every_object_admit_reads_is_admitted_pending_or_named_in_a_warning(objects, admitted, pending, words):
    report, said = decide(objects)
    assert {k: v["counts"] for k, v in report["admitted"].items()} == admitted
    assert sorted(report["pending"]) == pending
    for w in words:
        assert any(w in line for line in said), said
    if not admitted and not pending:
        names = [o["metadata"]["name"] for o in objects]
        assert all(any(n in line for line in said) for n in names), said


def test_nodes_and_settings_are_the_cluster_and_read_silently():
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
            "status": {"capacity": {"nvidia.com/gpu": "8"}, "allocatable": {"nvidia.com/gpu": "8"}}}
    _, said = decide([node])
    assert said == []


def test_a_pod_group_competes_for_quota_as_one_workload():
    # 4 GPUs of quota: the group of 2, created first, is admitted whole; of the Deployment's 3 replicas one waits
    first, then = "2026-01-01T00:00:00Z", "2026-01-01T00:01:00Z"
    objects = [pod("g-0", GROUP, TOTAL), pod("g-1", GROUP, TOTAL), controller("Deployment", "web", 3, QUEUED)]
    for o, stamp in zip(objects, (first, first, then)):
        o["metadata"]["creationTimestamp"] = stamp
    report, _ = decide(objects)
    assert sorted(report["admitted"]) == ["default/grp", "default/web-0", "default/web-1"]
    assert list(report["pending"]) == ["default/web-2"]


@requires_schemas
@pytest.mark.parametrize("doc", [pytest.param(d, id=f"{d['kind']} {d['metadata']['name']}") for d in
                                 QUEUES + [pod("lone", QUEUED), pod("g-0", GROUP, TOTAL)]])
def test_the_manifests_of_these_cases_are_valid_kubernetes_and_kueue_objects(doc):
    # apps/v1 has no schema in the shared folder: the Deployments and StatefulSets are not validated here
    assert validate_manifest(yaml.safe_load(yaml.safe_dump(doc))) is not None
