"""A job whose LocalQueue is not in the input waits, and its diagnosis says so as Kueue does.

Kueue's workload controller leaves such a workload pending, its QuotaReserved condition False with
reason ``Inadmissible`` and the message "LocalQueue <name> doesn't exist"; it is in no ClusterQueue.
"""

from __future__ import annotations

import warnings

import pytest

import gangkit as gk
from gangkit.manifests.load import load_manifests

from conftest import case

NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
        "status": {"capacity": {"nvidia.com/gpu": "8"}, "allocatable": {"nvidia.com/gpu": "8"}}}
FLAVOR = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor", "metadata": {"name": "default-flavor"}}
CQ = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue", "metadata": {"name": "cq"},
      "spec": {"namespaceSelector": {}, "resourceGroups": [{"coveredResources": ["nvidia.com/gpu"], "flavors": [
          {"name": "default-flavor", "resources": [{"name": "nvidia.com/gpu", "nominalQuota": 8}]}]}]}}
LQ = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue", "metadata": {"name": "user-queue", "namespace": "default"},
      "spec": {"clusterQueue": "cq"}}


def job(queue: str) -> dict:
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "train", "labels": {"kueue.x-k8s.io/queue-name": queue},
                                                                 "annotations": {"gangkit/run-time": "60"}},
            "spec": {"parallelism": 1, "template": {"spec": {"restartPolicy": "Never", "containers": [
                {"name": "c", "image": "x", "resources": {"limits": {"nvidia.com/gpu": 1}}}]}}}}


CASES = [
    case("a LocalQueue that is not in the input", "training-queue", "QueueMissing",
         "LocalQueue training-queue doesn't exist in namespace default", "WaitingAtEnd"),
    case("the LocalQueue of the input", "user-queue", None, None, "Finished"),
]


@pytest.mark.parametrize("queue, code, words, state", CASES)
def test_a_job_whose_local_queue_is_missing_waits_and_says_why(queue, code, words, state):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scenario = load_manifests([NODE, FLAVOR, CQ, LQ, job(queue)])
    result = gk.simulate(scenario, stack="kueue+gang")
    assert list(result.jobs.state) == [state]
    if code is not None:
        d = result.diagnose(job="train", at=10)
        assert (d.layer, d.code) == ("quota", code) and words in d.message and "ClusterQueue ?" not in d.message
