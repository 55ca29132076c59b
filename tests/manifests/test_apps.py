"""Bare Pods, Deployments, ReplicaSets and StatefulSets (gangkit.manifests.apps): tables of cases.

A controller's pods serve until the horizon unless an annotation gives a run
time; a Deployment's or ReplicaSet's replicas are jobs of their own unless
their template names a gang; a StatefulSet is one job; bare Pods of one gang
are one job, every other Pod its own.
"""

from __future__ import annotations

import re
import warnings

import pytest
import yaml

import gangkit as gk
from gangkit.manifests import load_manifests
from gangkit.manifests.apps import LONG_RUNNING
from gangkit.model.errors import ScenarioError

from conftest import case

NODES = [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"n{i}"},
          "status": {"allocatable": {"nvidia.com/gpu": "8", "cpu": "16"}}} for i in range(2)]


def pod_spec(gpus=1, cpu=None) -> dict:
    resources = {"limits": {"nvidia.com/gpu": str(gpus)}} | ({"requests": {"cpu": cpu}} if cpu else {})
    return {"containers": [{"name": "c", "image": "x", "resources": resources}]}


def controller(kind, replicas=3, name="web", labels=None, annotations=None, **spec) -> dict:
    template = {"metadata": {"labels": {"app": name} | (labels or {})}, "spec": pod_spec()}
    meta = {"name": name} | ({"annotations": annotations} if annotations else {})
    return {"apiVersion": "apps/v1", "kind": kind, "metadata": meta,
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}}, "template": template} | spec}


def bare_pod(name, labels=None, annotations=None, gpus=1, cpu=None) -> dict:
    meta = {"name": name} | ({"labels": labels} if labels else {}) | ({"annotations": annotations} if annotations else {})
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": pod_spec(gpus, cpu)}


def read(*docs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load_manifests([*NODES, *docs])


COS_GROUP = {"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup", "metadata": {"name": "g"},
             "spec": {"minMember": 3}}
KUEUE_GROUP = {"kueue.x-k8s.io/pod-group-name": "g"}

JOBS = [
    case("a Deployment's replicas are jobs of their own, serving until the horizon", [controller("Deployment")],
         [("web-0", 1, "deployment"), ("web-1", 1, "deployment"), ("web-2", 1, "deployment")], LONG_RUNNING),
    case("a ReplicaSet's too, through Kueue's pod integration", [controller("ReplicaSet", 2)],
         [("web-0", 1, "pod"), ("web-1", 1, "pod")], LONG_RUNNING),
    case("a StatefulSet is one job", [controller("StatefulSet", podManagementPolicy="Parallel")],
         [("web", 3, "statefulset")], LONG_RUNNING),
    case("a template naming a gang makes one job of the replicas",
         [COS_GROUP, controller("ReplicaSet", 6, labels={"scheduling.x-k8s.io/pod-group": "g"})],
         [("web", 6, "pod")], LONG_RUNNING),
    case("a run-time annotation ends them", [controller("Deployment", 1, annotations={"gangkit/run-time": "10m"})],
         [("web-0", 1, "deployment")], 600.0),
    case("a bare Pod is a one-pod job with the Job default", [bare_pod("p")], [("p", 1, "pod")], 3600.0),
    case("bare Pods of one Kueue pod group are one job",
         [bare_pod("a", KUEUE_GROUP, {"kueue.x-k8s.io/pod-group-total-count": "2"}),
          bare_pod("b", KUEUE_GROUP, {"kueue.x-k8s.io/pod-group-total-count": "2"})], [("g", 2, "pod")], 3600.0),
]


@pytest.mark.parametrize("docs, jobs, run_time", JOBS)
def test_pods_and_controllers_become_jobs(docs, jobs, run_time):
    sc = read(*docs)
    assert [(j.name, j.pod_count, j.framework) for j in sc.jobs] == jobs
    assert {j.run_time for j in sc.jobs} == {run_time}
    assert all(j.progress == "independent" for j in sc.jobs)


def test_a_long_running_deployment_runs_to_the_horizon():
    sc = read(controller("Deployment", 2)).with_settings(horizon=3600.0)
    result = gk.simulate(sc, stack="pod")
    assert result.summary()["jobs_running_at_end"] == 2
    assert set(result.jobs["state"]) == {"RunningAtEnd"}


def test_a_replicaset_in_a_coscheduling_group_places_its_gang():
    sc = read(COS_GROUP, controller("ReplicaSet", 6, labels={"scheduling.x-k8s.io/pod-group": "g"},
                                    annotations={"gangkit/run-time": "5m"}))
    [j] = sc.jobs
    assert (j.min_member, j.pod_count) == (3, 6)
    assert gk.simulate(sc, stack="coscheduling").summary()["jobs_finished"] == 1


def test_a_kueue_pod_group_short_of_pods_is_reported_and_left_out():
    sc = read(bare_pod("a", KUEUE_GROUP, {"kueue.x-k8s.io/pod-group-total-count": "3"}))
    assert sc.jobs == [] and any("never admitted" in w for w in sc.warnings)


BAD = [
    case("negative replicas", controller("Deployment", -1), "Deployment web: spec.replicas: expected a whole number"),
    case("a bad GPU count in a Pod names the Pod's own field", bare_pod("p", gpus="x"),
         "Pod p: spec.containers[0].resources.limits.nvidia.com/gpu"),
    case("a bad GPU count in a template", {**controller("ReplicaSet", 1), "spec": {
        "replicas": 1, "template": {"spec": pod_spec("x")}}},
         "ReplicaSet web: spec.template.spec.containers[0].resources.limits.nvidia.com/gpu"),
]


@pytest.mark.parametrize("doc, message", BAD)
def test_bad_pods_and_controllers_are_one_error_naming_the_field(doc, message):
    with pytest.raises(ScenarioError, match=re.escape(message)):
        read(doc)


def test_a_statefulset_created_one_by_one_is_reported():
    sc = read(controller("StatefulSet", 2))
    assert any("OrderedReady" in w for w in sc.warnings)


def test_they_export_as_batch_jobs():
    from gangkit.manifests.export import export_manifests

    text = export_manifests(read(controller("Deployment", 2, annotations={"gangkit/run-time": "5m"})), "gang")
    assert [d["kind"] for d in yaml.safe_load_all(text) if d["kind"] == "Job"] == ["Job", "Job"]
