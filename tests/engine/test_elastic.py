"""Elastic training (Job.elastic): a sync job admitted with fewer pods runs at the speed of the pods it got.

Kueue's partial admission admits a pod set with ``min_count`` to ``count`` pods when the quota does not
hold it all; an elastic job (``gangkit/progress: elastic``) admitted with ``n`` of ``N`` pods needs
``run_time x N / n`` (its work is counted in seconds at full size, so an eviction keeps what was done).
"""

from __future__ import annotations

import warnings

import pytest

import gangkit as gk
from gangkit.kueue.layer import default_objects
from gangkit.manifests import dump_manifests, load_manifests
from gangkit.model.errors import ScenarioError
from gangkit.model.jobs import Job, PodSet

from builders import gang, gpu_nodes, holder, scenario, simulate_on
from conftest import by_job, case


def run(elastic: bool, blocker_pods: int, min_count: int = 2, stack: str = "kueue+gang"):
    """A 4 x 8-GPU job behind a job holding ``blocker_pods`` of the 4 nodes for 2 h, under one ClusterQueue of 32 GPUs."""
    jobs = [holder(8, pods=blocker_pods, run_time=7200.0, name="blocker", pod_set="w")] if blocker_pods else []
    jobs.append(gang("e", 4, 8, run_time=3600.0, submit=1.0, pod_set="w", min_count=min_count, elastic=elastic))
    kueue = default_objects(scenario(gpu_nodes(4), jobs))
    return by_job(simulate_on(gpu_nodes(4), jobs, stack=stack, kueue=kueue)).loc["e"]


CASES = [
    case("whole: full speed", False, 0, 3601.0),
    case("elastic and whole: full speed", True, 0, 3601.0),
    case("elastic with 2 of 4 pods: twice as long", True, 2, 1.0 + 7200.0),
    case("elastic with 3 of 4 pods: 4/3 as long", True, 1, 1.0 + 4800.0),
    case("not elastic with 2 of 4 pods: gangkit's old simplification, full speed", False, 2, 3601.0),
]


@pytest.mark.parametrize("elastic, blocker, finish", CASES)
def test_an_elastic_job_runs_at_the_speed_of_its_admitted_pods(elastic, blocker, finish):
    row = run(elastic, blocker)
    assert row["start_s"] == 1.0 and row["finish_s"] == pytest.approx(finish)


def test_elastic_is_only_for_sync_jobs():
    with pytest.raises(ScenarioError, match="elastic: expected True only for a sync job"):
        gk.Scenario(gpu_nodes(1), [Job("a", [PodSet("w", 2, 1)], 60.0, progress="independent", elastic=True)]).validate()


def test_the_annotation_reads_and_writes_elastic():
    text = """
apiVersion: v1
kind: Node
metadata: {name: n}
status: {allocatable: {nvidia.com/gpu: "8"}}
---
apiVersion: batch/v1
kind: Job
metadata:
  name: e
  annotations: {gangkit/run-time: 1h, gangkit/progress: elastic, kueue.x-k8s.io/job-min-parallelism: "2"}
spec:
  parallelism: 4
  template: {spec: {containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: "2"}}}]}}
"""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        [j] = load_manifests(text).jobs
        assert (j.progress, j.elastic) == ("sync", True)
        assert load_manifests(dump_manifests(load_manifests(text))).jobs == [j]

