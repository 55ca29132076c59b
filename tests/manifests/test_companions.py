"""Companion objects (accepted with a warning), several files read together, and ``gangkit run --nodes``.

Objects that configure what gangkit does not simulate no longer stop a file:
each is accepted with one warning naming it and saying what is left out; a
KubeSchedulerConfiguration's Coscheduling arguments set the coscheduling
layer. Truly unknown kinds stay errors.
"""

from __future__ import annotations

import json
import re
import warnings

import pytest

import gangkit as gk
from gangkit.manifests import dump_manifests, load_files, load_manifests
from gangkit.manifests.companions import CoschedulingArgs
from gangkit.model.errors import ScenarioError

from conftest import case, run_cli

NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n0"}, "status": {"allocatable": {"nvidia.com/gpu": "8"}}}


def scheduler_config(**args) -> dict:
    return {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
            "profiles": [{"schedulerName": "scheduler-plugins-scheduler",
                          "pluginConfig": [{"name": "Coscheduling", "args": args}]}]}


COMPANIONS = [
    case("Karpenter's AWS node class", {"apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass",
                                        "metadata": {"name": "default"}, "spec": {"amiFamily": "AL2023"}},
         "EC2NodeClass default (karpenter.k8s.aws/v1) is accepted and not simulated: it configures the AWS side"),
    case("Karpenter's NodeClaim", {"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim", "metadata": {"name": "nc"}},
         "NodeClaim nc (karpenter.sh/v1) is accepted and not simulated: a NodeClaim is Karpenter's record"),
    case("Kueue's Topology", {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Topology", "metadata": {"name": "t"},
                              "spec": {"levels": [{"nodeLabel": "kubernetes.io/hostname"}]}},
         "Topology t (kueue.x-k8s.io/v1beta2) is accepted and not simulated: no ResourceFlavor names it"),
    case("MultiKueue's clusters", {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "MultiKueueCluster",
                                   "metadata": {"name": "w1"}},
         "MultiKueueCluster w1 (kueue.x-k8s.io/v1beta1) is accepted and not simulated: MultiKueue dispatches"),
    case("a scheduler configuration is read in part", scheduler_config(permitWaitingTimeSeconds=10),
         "KubeSchedulerConfiguration (document 2) (kubescheduler.config.k8s.io/v1) is read in part"),
]


@pytest.mark.parametrize("doc, warning", COMPANIONS)
def test_a_companion_object_is_accepted_with_one_warning(doc, warning):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sc = load_manifests([NODE, doc])
    assert [w for w in sc.warnings if warning in w] == [next(w for w in sc.warnings if warning in w)]


ARGS = [
    case("the plugin's defaults when no configuration is given", [], None, 60.0),
    case("permitWaitingTimeSeconds sets how long pods wait at Permit", [scheduler_config(permitWaitingTimeSeconds=10)],
         CoschedulingArgs(10.0, 0.0), 10.0),
    case("podGroupBackoffSeconds too", [scheduler_config(podGroupBackoffSeconds=5)], CoschedulingArgs(60.0, 5.0), 60.0),
]


@pytest.mark.parametrize("docs, expected, timeout", ARGS)
def test_a_scheduler_configuration_sets_the_coscheduling_arguments(docs, expected, timeout):
    from gangkit.stacks import build_stack

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sc = load_manifests([NODE, *docs])
        assert sc.coscheduling == expected
        assert load_manifests(dump_manifests(sc)).coscheduling == expected
    stack = build_stack("coscheduling", sc.settings, sc)
    assert stack.placement.permit_waiting_time == timeout


def test_the_permit_timeout_of_the_configuration_changes_the_run():
    """Ten one-GPU pods, a node of 9 GPUs: the group is rejected each time permitWaitingTimeSeconds ends."""
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "g", "annotations": {"gangkit/run-time": "60s"}},
           "spec": {"parallelism": 10, "template": {
               "metadata": {"labels": {"scheduling.x-k8s.io/pod-group": "g"}},
               "spec": {"containers": [{"name": "c", "image": "x", "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}}}}
    group = {"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup", "metadata": {"name": "g"},
             "spec": {"minMember": 10}}
    node = {**NODE, "status": {"allocatable": {"nvidia.com/gpu": "9"}}}
    releases = {}
    for timeout in (10, 30):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sc = load_manifests([node, job, group, scheduler_config(permitWaitingTimeSeconds=timeout)])
        r = gk.simulate(sc.with_settings(horizon=600.0, record="full"), stack="coscheduling")
        releases[timeout] = r.events.query("event == 'released'").time_s.tolist()
    assert releases[10][:3] == [10.0, 20.0, 30.0] and releases[30][:3] == [30.0, 60.0, 90.0]


BAD = [
    case("a truly unknown kind stays an error", {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "d"}},
         "DaemonSet d: kind: unknown kind 'DaemonSet' (apiVersion 'apps/v1')"),
    case("a negative permit time", scheduler_config(permitWaitingTimeSeconds=-1),
         "permitWaitingTimeSeconds: expected a whole number"),
    case("a node class without a name", {"apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass", "metadata": {}},
         "EC2NodeClass (document 2): metadata.name"),
]


@pytest.mark.parametrize("doc, message", BAD)
def test_bad_companions_are_one_error(doc, message):
    with pytest.raises(ScenarioError, match=re.escape(message)):
        load_manifests([NODE, doc])


SETUP = """
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: default-flavor}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors: [{name: default-flavor, resources: [{name: nvidia.com/gpu, nominalQuota: 8}]}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: user-queue, namespace: default}
spec: {clusterQueue: cq}
"""
JOB = """
apiVersion: batch/v1
kind: Job
metadata:
  generateName: sample-job-
  namespace: default
  labels: {kueue.x-k8s.io/queue-name: user-queue}
  annotations: {gangkit/run-time: 10m}
spec:
  parallelism: 2
  template:
    spec:
      containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: "4"}}}]
"""


@pytest.fixture
def files(tmp_path):
    (tmp_path / "setup.yaml").write_text(SETUP)
    (tmp_path / "job.yaml").write_text(JOB)
    return tmp_path


def test_files_are_read_together_and_messages_name_the_file(files):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sc = load_files([files / "setup.yaml", files / "job.yaml"], extra=[NODE])
    assert [j.key for j in sc.jobs] == ["default/sample-job-1"] and sc.kueue is not None
    (files / "bad.yaml").write_text(JOB.replace('"4"', '"four"'))
    with pytest.raises(ScenarioError, match=re.escape("Job default/sample-job-1: spec.template.spec.containers[0]")):
        load_files([files / "setup.yaml", files / "bad.yaml"], extra=[NODE])
    (files / "nameless.yaml").write_text(JOB.replace("generateName: sample-job-", "labels2: {}"))
    with pytest.raises(ScenarioError, match=re.escape("Job (nameless.yaml document 1): metadata.name")):
        load_files([files / "setup.yaml", files / "nameless.yaml"], extra=[NODE])


CLI = [
    case("two files and --nodes", ["setup.yaml", "job.yaml", "--nodes", "1x8", "--stack", "kueue+pod", "--json"], 0,
         "jobs_finished", ""),
    case("no Node: the error says how to add them", ["setup.yaml", "job.yaml"], 2, "",
         "error: Scenario setup: expected at least one Node (apiVersion: v1, kind: Node); gangkit run adds nodes with "
         "--nodes (--nodes 4x8: four nodes of 8 GPUs)\n"),
    case("a malformed --nodes", ["job.yaml", "--nodes", "four"], 2, "",
         "error: --nodes: expected COUNTxGPUS[,cpu=CORES][,memory=BYTES], for example 4x8 or 2x8,cpu=96,memory=1Ti, "
         "got 'four'\n"),
    case("--nodes with a built-in scenario", ["three-workers", "--nodes", "2x8"], 2, "",
         "error: Scenario three-workers: --nodes: a built-in scenario has its own nodes; --nodes adds nodes to YAML files\n"),
]


@pytest.mark.parametrize("argv, status, out, err", CLI)
def test_gangkit_run_reads_several_files_and_adds_nodes(files, capsys, monkeypatch, argv, status, out, err):
    monkeypatch.chdir(files)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got, stdout, stderr = run_cli(["run", *argv], capsys)
    assert got == status
    if out:
        assert json.loads(stdout)["jobs_finished"] == 1
    if err:
        assert stderr.splitlines()[-1] + "\n" == err

