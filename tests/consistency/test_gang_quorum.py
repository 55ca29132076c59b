"""A gang that asks for more members than it has pods: what ``gangkit check`` reports (gang-larger-than-job),
and what each gang layer does with it (the pods wait, with the layer's own reason; YuniKorn runs it).

scheduler-plugins' install guide makes one on purpose: a PodGroup of ``minMember: 3`` over a Deployment
of 2 replicas, whose pods stay pending. The API server accepts such a PodGroup (or a Kubernetes 1.36
PodGroup whose ``minCount`` is above its pods); the pods wait for a quorum that never comes.
"""

from __future__ import annotations

import warnings

import pytest

import gangkit as gk
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


# --- simulated: the pods wait for a quorum that never comes (each gang layer in its own words) -----------------

SIBLINGS = "cannot find enough sibling pods, current pods number: 2, minMember of group: 3"  # Coscheduling's PreFilter
PRE_ENQUEUE = "waiting for minCount pods from a gang to appear in scheduling queue"  # GangScheduling's PreEnqueue
NOT_VALID = "Not enough valid tasks for gang-scheduling, valid: 2, min: 3"  # Volcano's gang plugin, JobValid


@pytest.mark.parametrize("stack, settings, progress, code, words", [
    case("Coscheduling refuses each pod at PreFilter", "coscheduling", {}, "sync", "NotEnoughPods", SIBLINGS),
    case("Coscheduling counts the pods of an independent job too", "coscheduling", {}, "independent",
         "NotEnoughPods", SIBLINGS),
    case("behind Kueue the job is admitted and its pods wait at PreFilter", "kueue+coscheduling", {}, "sync",
         "NotEnoughPods", SIBLINGS),
    case("Kubernetes 1.35's GangScheduling holds the pods at PreEnqueue", "kube-gang", {}, "sync", "WaitingForPods",
         PRE_ENQUEUE),
    case("Kubernetes 1.36's GangScheduling holds the pods at PreEnqueue", "kube-gang", {"kube_gang_release": "1.36"},
         "sync", "WaitingForPods", PRE_ENQUEUE),
    case("the GangScheduling plugin holds an independent job's pods too", "kube-gang", {}, "independent",
         "WaitingForPods", PRE_ENQUEUE),
    case("Volcano's gang plugin finds the job invalid and allocate skips it", "gang", {}, "sync", "NotEnoughPods",
         NOT_VALID),
    case("Volcano's JobValid does not look at the job's progress", "gang", {}, "independent", "NotEnoughPods",
         NOT_VALID),
])
def test_a_gang_larger_than_its_pods_waits_for_ever_with_its_layers_reason(stack, settings, progress, code, words):
    sc = gk.Scenario(gk.nodes(1, gpus=8), [gk.job("g", pods=2, run_time=100, min_member=3, progress=progress)], name="case")
    r = gk.simulate(sc, stack=stack, horizon=3600.0, **settings)
    row = r.jobs.set_index("job").loc["g"]
    d = r.diagnose("g")
    assert row.state == "WaitingAtEnd" and row.gang_size == 3 and row.pods == 2
    assert d.code == code and words in d.message


@pytest.mark.parametrize("stack, gpus, start", [
    case("without a gang layer the pods are placed one by one", "pod", 2, 0.0),
    case("YuniKorn allocates 3 placeholders, the 2 pods swap in and the job runs", "yunikorn", 3, 0.0),
    case("YuniKorn with room for 2 placeholders only: released after 15 minutes (Soft), pods one by one",
         "yunikorn", 2, 900.0),
])
def test_a_gang_larger_than_its_pods_runs_where_the_layer_does_not_wait_for_it(stack, gpus, start):
    sc = gk.Scenario(gk.nodes(1, gpus=gpus), [gk.job("g", pods=2, run_time=100, min_member=3)], name="case")
    row = gk.simulate(sc, stack=stack, horizon=3600.0).jobs.set_index("job").loc["g"]
    assert (row.state, row.start_s) == ("Finished", start)


def test_a_gang_its_pods_fill_runs_under_every_gang_layer():
    for stack in ("coscheduling", "kube-gang", "gang", "yunikorn"):
        sc = gk.Scenario(gk.nodes(1, gpus=8), [gk.job("g", pods=3, run_time=100, min_member=3)], name="case")
        assert gk.simulate(sc, stack=stack).jobs.set_index("job").loc["g"].state == "Finished", stack


@pytest.mark.parametrize("min_member, larger", [case("minMember 3 over 2 pods", 3, True),
                                                case("minMember 2 over 2 pods", 2, False),
                                                case("no minMember (every pod)", None, False)])
def test_job_says_when_its_gang_is_larger_than_its_pods(min_member, larger):
    j = gk.job("g", pods=2, min_member=min_member)
    assert j.gang_larger_than_pods is larger and j.problems() == []
