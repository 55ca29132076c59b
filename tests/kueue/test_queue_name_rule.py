"""Jobs without the kueue.x-k8s.io/queue-name label, as Kueue treats them (pkg/controller/jobframework).

The same rule in ``gangkit run`` and ``gangkit admit``: a namespace's LocalQueue ``default`` is given
to the job; else ``manageJobsWithoutQueueName: true`` suspends it with a Workload that names no
LocalQueue (never admitted); else Kueue does not manage it and it runs past every quota.
"""

from __future__ import annotations

import dataclasses
import warnings

import pytest

import gangkit as gk
from gangkit.kueue.layer import default_objects
from gangkit.manifests import load_manifests
from gangkit.manifests.kueue_snapshot import load_kueue
from gangkit.model.jobs import Job, PodSet
from gangkit.model.nodes import Node

from conftest import case

SETUP = """
apiVersion: v1
kind: Node
metadata: {name: n0}
status: {allocatable: {nvidia.com/gpu: "8"}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: f}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors: [{name: f, resources: [{name: nvidia.com/gpu, nominalQuota: 4}]}]
"""
LOCAL_QUEUE = """
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: %s, namespace: default}
spec: {clusterQueue: cq}
"""
MANAGE = """
---
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
manageJobsWithoutQueueName: true
"""
JOB = """
---
apiVersion: batch/v1
kind: Job
metadata: {name: bare, annotations: {gangkit/run-time: 10m}}
spec:
  parallelism: 2
  template: {spec: {containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: "4"}}}]}}
"""

RULES = [
    case("the namespace's LocalQueue 'default' is given to the job", LOCAL_QUEUE % "default", "default", True,
         "WaitingAtEnd", ""),
    case("manageJobsWithoutQueueName: a Workload naming no LocalQueue, never admitted", LOCAL_QUEUE % "team" + MANAGE,
         "", True, "WaitingAtEnd", ""),
    case("otherwise Kueue does not manage it: it runs past the quota", LOCAL_QUEUE % "team", None, False,
         "Finished", "leaves it out"),
]


@pytest.mark.parametrize("extra, queue, managed, state, admit_says", RULES)
def test_a_job_without_the_queue_label_follows_kueues_rule(extra, queue, managed, state, admit_says):
    text = SETUP + extra + JOB
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sc = load_manifests(text)
    [j] = sc.jobs
    assert j.kueue_managed is managed and (queue is None or j.queue == queue)
    result = gk.simulate(sc.with_settings(horizon=3600.0), stack="kueue+gang")
    row = result.jobs.iloc[0]
    assert (row["state"] == "Finished") == (state == "Finished")  # 8 GPUs against a quota of 4: only past Kueue
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        got = load_kueue(text)
    said = [str(w.message) for w in seen] + [lw.workload.queue_name for lw in got.workloads]
    if managed:
        assert [lw.workload.queue_name for lw in got.workloads] == [queue]
    else:
        assert got.workloads == [] and any(admit_says in s for s in said)


def test_a_job_with_the_label_is_unchanged():
    text = SETUP + LOCAL_QUEUE % "team" + JOB.replace("metadata: {name: bare,", "metadata: {name: bare, labels: "
                                                       "{kueue.x-k8s.io/queue-name: team},")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        [j] = load_manifests(text).jobs
    assert (j.queue, j.kueue_managed) == ("team", True)


VOLCANO_JOB = """
---
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: vc, annotations: {gangkit/run-time: 10m}%s}
spec:
  schedulerName: volcano
  minAvailable: 2
  tasks:
  - name: worker
    replicas: 2
    template: {spec: {containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: "4"}}}]}}
"""


@pytest.mark.parametrize("labels", [
    case("with the queue-name label", ", labels: {kueue.x-k8s.io/queue-name: team}"),
    case("without it", ""),
])
@pytest.mark.parametrize("stack", ["kueue+gang", "kueue+pod"])
def test_kueue_never_manages_a_volcano_job(labels, stack):
    """Kueue v0.19 has no batch.volcano.sh integration (pkg/controller/jobs): 8 GPUs run past a quota of 4."""
    text = SETUP + LOCAL_QUEUE % "team" + VOLCANO_JOB % labels
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        sc = load_manifests(text)
    [j] = sc.jobs
    assert j.kueue_managed is False
    assert any("Kueue has no integration for Volcano Jobs" in str(w.message) for w in seen)
    row = gk.simulate(sc.with_settings(horizon=3600.0), stack=stack).jobs.iloc[0]
    assert row["state"] == "Finished"


def test_a_volcano_job_built_in_python_is_not_kueue_s_either():
    sc = gk.Scenario(nodes=[Node("n0", 8)], name="s",
                     jobs=[Job("vc", [PodSet("worker", 2, 4)], run_time=600.0, controller="volcano")])
    sc = dataclasses.replace(sc, kueue=default_objects(sc, gpus=4))  # a quota of 4 GPUs for a job of 8
    row = gk.simulate(sc.with_settings(horizon=3600.0), stack="kueue+gang").jobs.iloc[0]
    assert row["state"] == "Finished"
