"""``gangkit check`` and ``gangkit admit`` read TrainJobs as the JobSet their runtime makes (Kubeflow Trainer v2)."""

from __future__ import annotations

import warnings

import pytest

from gangkit.consistency import check_manifests

from conftest import case

GPU = "nvidia.com/gpu"


def runtime(policy: dict | None = None, scheduler: str | None = None) -> dict:
    pod = {"containers": [{"name": "node", "image": "pytorch/pytorch"}]}
    if scheduler:
        pod["schedulerName"] = scheduler
    spec = {"mlPolicy": {"numNodes": 1, "torch": {}}, "template": {"spec": {"replicatedJobs": [{
        "name": "node", "template": {"metadata": {"labels": {"trainer.kubeflow.org/trainjob-ancestor-step": "trainer"}},
                                     "spec": {"template": {"spec": pod}}}}]}}}
    if policy is not None:
        spec["podGroupPolicy"] = policy
    return {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "ClusterTrainingRuntime",
            "metadata": {"name": "torch"}, "spec": spec}


def trainjob(nodes: int = 2, gpus: int = 8, queue: str | None = None) -> dict:
    meta = {"name": "llm", "namespace": "team-a"}
    if queue:
        meta["labels"] = {"kueue.x-k8s.io/queue-name": queue}
    return {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob", "metadata": meta,
            "spec": {"runtimeRef": {"apiGroup": "trainer.kubeflow.org", "kind": "ClusterTrainingRuntime", "name": "torch"},
                     "trainer": {"numNodes": nodes, "resourcesPerNode": {"limits": {GPU: str(gpus)}}}}}


NODES = [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"n{i}"}, "status": {"allocatable": {GPU: "8"}}}
         for i in range(2)]
KUEUE = [
    {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor", "metadata": {"name": "default"}},
    {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue", "metadata": {"name": "cq"},
     "spec": {"namespaceSelector": {}, "resourceGroups": [{"coveredResources": [GPU], "flavors": [
         {"name": "default", "resources": [{"name": GPU, "nominalQuota": 8}]}]}]}},
    {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue", "metadata": {"name": "lq", "namespace": "team-a"},
     "spec": {"clusterQueue": "cq"}},
]


@pytest.mark.parametrize("docs, code, field", [
    case("volcano-policy-without-volcano", [runtime({"volcano": {}}), trainjob()] + NODES, "scheduler-not-provided",
         "spec.runtimeRef"),
    case("coscheduling-policy-without-the-plugin", [runtime({"coscheduling": {}}), trainjob()] + NODES,
         "scheduler-not-provided", "spec.runtimeRef"),
    case("runtime-template-scheduler", [runtime(scheduler="yunikorn"), trainjob()] + NODES, "scheduler-not-provided",
         "spec.runtimeRef"),
    case("local-queue-missing", [runtime(), trainjob(queue="nowhere")] + NODES + KUEUE, "kueue-local-queue-missing",
         "metadata.labels.kueue.x-k8s.io/queue-name"),
    case("quota-below-the-trainjob", [runtime(), trainjob(queue="lq")] + NODES + KUEUE, "kueue-quota-never-fits", None),
    case("clean", [runtime(), trainjob(nodes=1, queue="lq")] + NODES + KUEUE, None, None),
])
def test_gangkit_check_reads_a_trainjob_through_its_runtime(docs, code, field):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        found = check_manifests(docs)
    codes = [f.code for f in found]
    if code is None:
        assert codes == []
        return
    assert code in codes, codes
    f = next(f for f in found if f.code == code)
    assert any("TrainJob team-a/llm" in str(x) for x in f.objects)
    if field is not None:
        assert (("TrainJob team-a/llm", field)) in [(o, p) for o, p in f.fields]
