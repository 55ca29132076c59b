"""A gang that asks for more members than it has pods: what ``gangkit check`` reports (gang-larger-than-job).

scheduler-plugins' install guide makes one on purpose: a PodGroup of ``minMember: 3`` over a Deployment
of 2 replicas, whose pods stay pending. The API server accepts such a PodGroup (or a Kubernetes 1.36
PodGroup whose ``minCount`` is above its pods); the pods wait for a quorum that never comes.
"""

from __future__ import annotations

import warnings

import pytest

from gangkit.consistency import check
from gangkit.manifests import GangkitInputWarning

from conftest import case

NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-0"},
        "status": {"allocatable": {"nvidia.com/gpu": "8", "cpu": "96", "memory": "1Ti"}}}
CONTAINERS = [{"name": "pause", "image": "registry.k8s.io/pause:3.6"}]


def coscheduling_group(min_member):
    return {"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup", "metadata": {"name": "pg1"},
            "spec": {"scheduleTimeoutSeconds": 10, "minMember": min_member}}


def kube_group(min_count):
    return {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup", "metadata": {"name": "pg1"},
            "spec": {"schedulingPolicy": {"gang": {"minCount": min_count}}}}


def controller(kind, replicas, gang):
    """A Deployment or StatefulSet of ``replicas`` pods joined to PodGroup pg1 (``gang``: which API's)."""
    labels = {"app": "pause"} | ({"scheduling.x-k8s.io/pod-group": "pg1"} if gang == "coscheduling" else {})
    pod = {"containers": CONTAINERS} | ({"schedulingGroup": {"podGroupName": "pg1"}} if gang == "kube" else {})
    spec = {"replicas": replicas, "selector": {"matchLabels": {"app": "pause"}},
            "template": {"metadata": {"labels": labels}, "spec": pod}}
    if kind == "StatefulSet":
        spec["serviceName"] = "pause"
    return {"apiVersion": "apps/v1", "kind": kind, "metadata": {"name": "pause"}, "spec": spec}


def job(parallelism):
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "pause"},
            "spec": {"parallelism": parallelism, "template": {
                "metadata": {"labels": {"scheduling.x-k8s.io/pod-group": "pg1"}},
                "spec": {"restartPolicy": "Never", "containers": CONTAINERS}}}}


@pytest.mark.parametrize("docs, fields, words", [
    case("the install guide's PodGroup of minMember 3 over a Deployment of 2 replicas",
         [coscheduling_group(3), controller("Deployment", 2, "coscheduling")],
         ("spec.minMember", "spec.replicas"), "cannot find enough sibling pods"),
    case("a StatefulSet's replicas count as its pods",
         [coscheduling_group(4), controller("StatefulSet", 3, "coscheduling")],
         ("spec.minMember", "spec.replicas"), "cannot find enough sibling pods"),
    case("a batch/v1 Job's pods are its parallelism",
         [coscheduling_group(3), job(2)], ("spec.minMember", "spec.parallelism"), "cannot find enough sibling pods"),
    case("a Kubernetes 1.36 PodGroup whose minCount is above a Deployment's replicas",
         [kube_group(3), controller("Deployment", 2, "kube")],
         ("spec.schedulingPolicy.gang.minCount", "spec.replicas"), "PreEnqueue"),
])
def test_a_gang_larger_than_its_pods_is_reported_with_the_fields_of_both(docs, fields, words):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GangkitInputWarning)
        report = check([NODE, *docs])
    assert [f.code for f in report.findings] == ["gang-larger-than-job"]
    f = report.findings[0]
    assert tuple(field for _, field in f.fields) == fields and words in f.message
    assert "quorum that never comes" in f.message and f.numbers["gang_size"] > f.numbers["pods"]


@pytest.mark.parametrize("docs", [
    case("minMember equal to the Deployment's replicas", [coscheduling_group(2), controller("Deployment", 2, "coscheduling")]),
    case("minCount equal to the Deployment's replicas", [kube_group(2), controller("Deployment", 2, "kube")]),
])
def test_a_gang_its_pods_fill_is_not_reported(docs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GangkitInputWarning)
        report = check([NODE, *docs])
    assert [f.code for f in report.findings if f.code.startswith("gang-")] == []
