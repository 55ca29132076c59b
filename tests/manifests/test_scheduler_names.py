"""``gangkit run`` refuses a pod template that names a scheduler gangkit does not model.

A pod is placed only by the scheduler its ``spec.schedulerName`` names; on a cluster where none of that
name runs it stays Pending for ever. gangkit never places such pods with the stack's scheduler instead.
"""

from __future__ import annotations

import pytest

from gangkit.manifests.load import load_manifests
from gangkit.model.errors import ScenarioError

from conftest import case

NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
        "status": {"capacity": {"nvidia.com/gpu": "8"}, "allocatable": {"nvidia.com/gpu": "8"}}}


def pod_spec(scheduler=None) -> dict:
    spec = {"containers": [{"name": "c", "image": "x", "resources": {"limits": {"nvidia.com/gpu": 1}}}]}
    if scheduler is not None:
        spec["schedulerName"] = scheduler
    return spec


def job(scheduler=None) -> dict:
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "train"},
            "spec": {"parallelism": 1, "template": {"spec": {**pod_spec(scheduler), "restartPolicy": "Never"}}}}


def pytorchjob(scheduler) -> dict:
    return {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": {"name": "kai-train"},
            "spec": {"pytorchReplicaSpecs": {"Master": {"replicas": 1, "template": {"spec": pod_spec(scheduler)}}}}}


def deployment(scheduler) -> dict:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
                     "template": {"metadata": {"labels": {"app": "web"}}, "spec": pod_spec(scheduler)}}}


PROFILE = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
           "profiles": [{"schedulerName": "gpu-scheduler"}]}

REFUSED = [
    case("a Job for KAI Scheduler", [job("kai-scheduler")], "Job train", "spec.template.spec.schedulerName",
         "'kai-scheduler'"),
    case("a PyTorchJob for KAI Scheduler (never a Volcano gang)", [pytorchjob("kai-scheduler")], "PyTorchJob kai-train",
         "spec.pytorchReplicaSpecs.Master.template.spec.schedulerName", "'kai-scheduler'"),
    case("a Deployment for a custom scheduler", [deployment("my-scheduler")], "Deployment web",
         "spec.template.spec.schedulerName", "'my-scheduler'"),
    case("a schedulerName that is no string", [job(7)], "Job train", "spec.template.spec.schedulerName",
         "expected a string"),
]


@pytest.mark.parametrize("objects, obj, field, words", REFUSED)
def test_a_scheduler_gangkit_does_not_model_is_refused_naming_it(objects, obj, field, words):
    with pytest.raises(ScenarioError) as raised:
        load_manifests([NODE, *objects])
    [problem] = [p for p in raised.value.problems if "schedulerName" in p.field]
    assert (problem.obj, problem.field) == (obj, field)
    assert words in problem.message
    if words.startswith("'"):  # a name: the refusal says what a cluster without that scheduler does
        assert "Pending for ever" in problem.message and "does not place them with another scheduler" in problem.message


ACCEPTED = [
    case("no schedulerName (default-scheduler)", [job()]),
    case("default-scheduler", [job("default-scheduler")]),
    case("volcano", [job("volcano")]),
    case("yunikorn", [job("yunikorn")]),
    case("scheduler-plugins-scheduler", [job("scheduler-plugins-scheduler")]),
    case("a profile of the input's KubeSchedulerConfiguration", [job("gpu-scheduler"), PROFILE]),
]


@pytest.mark.parametrize("objects", ACCEPTED)
def test_the_schedulers_gangkit_models_are_read(objects):
    scenario = load_manifests([NODE, *objects])
    assert [j.name for j in scenario.jobs] == ["train"]
