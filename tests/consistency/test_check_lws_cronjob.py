"""``gangkit check`` reads LeaderWorkerSets and CronJobs as ``gangkit run`` does: a pod no node can hold, a group
the supply cannot hold at once, a CronJob template's gang larger than its pods, a scheduler gangkit does not
model, each found in the fields of the LeaderWorkerSet's templates or the CronJob's ``spec.jobTemplate``."""

from __future__ import annotations

import copy
import warnings

import pytest

from gangkit.consistency import check
from gangkit.manifests import GangkitInputWarning
from gangkit.model.errors import ScenarioError

from conftest import case

CONTAINERS = "spec.leaderWorkerTemplate.{}.spec.containers"


def node(name, gpus=8):
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
            "status": {"allocatable": {"nvidia.com/gpu": str(gpus), "cpu": "96", "memory": "1Ti"}}}


def pod(gpus, **extra):
    return {"spec": {"containers": [{"name": "w", "image": "vllm:1", "resources": {"limits": {"nvidia.com/gpu": str(gpus)}}}],
                     **extra}}


def lws(worker_gpus=4, leader_gpus=1, size=3, replicas=2, leader=True, **worker_extra):
    lwt = {"size": size, "workerTemplate": pod(worker_gpus, **worker_extra)}
    if leader:
        lwt["leaderTemplate"] = pod(leader_gpus, **worker_extra)
    return {"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet",
            "metadata": {"name": "llm", "annotations": {"gangkit/run-time": "1h"}},
            "spec": {"replicas": replicas, "leaderWorkerTemplate": lwt}}


def cron(gpus=1, parallelism=2, schedule="0 2 * * *", template_meta=None, **pod_extra):
    template = pod(gpus, restartPolicy="Never", **pod_extra)
    if template_meta:
        template["metadata"] = template_meta
    return {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "nightly"},
            "spec": {"schedule": schedule, "jobTemplate": {
                "metadata": {"annotations": {"gangkit/run-time": "1h"}},
                "spec": {"parallelism": parallelism, "template": template}}}}


def simulation(horizon="72h"):
    return {"apiVersion": "gangkit/v1alpha1", "kind": "Simulation", "metadata": {"name": "s"},
            "spec": {"stack": "pod", "horizon": horizon}}


def cos_group(min_member):
    return {"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup", "metadata": {"name": "pg"},
            "spec": {"minMember": min_member}}


def run_check(docs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GangkitInputWarning)
        return check(copy.deepcopy(docs))


TWO_NODES = [node("gpu-0"), node("gpu-1")]


@pytest.mark.parametrize("docs, findings", [
    case("a LeaderWorkerSet whose groups fit: nothing to say", [*TWO_NODES, lws()], []),
    case("a 16-GPU worker on 8-GPU nodes fits no node, named in the workerTemplate's containers",
         [*TWO_NODES, lws(worker_gpus=16)], [("pod-fits-no-node", CONTAINERS.format("workerTemplate"))]),
    case("a 16-GPU leader fits no node, named in the leaderTemplate's containers",
         [*TWO_NODES, lws(leader_gpus=16)], [("pod-fits-no-node", CONTAINERS.format("leaderTemplate"))]),
    case("without a leaderTemplate every pod is the workerTemplate's",
         [*TWO_NODES, lws(worker_gpus=16, leader=False)], [("pod-fits-no-node", CONTAINERS.format("workerTemplate"))]),
    case("a group of 5 pods of 4 GPUs (20) on 16 GPUs cannot run at once: the group size is the field",
         [*TWO_NODES, lws(worker_gpus=4, leader_gpus=4, size=5)],
         [("supply-too-small", None)]),
    case("its pods go to a scheduler gangkit does not model",
         [*TWO_NODES, lws(schedulerName="kai-scheduler")],
         [("scheduler-not-provided", "spec.leaderWorkerTemplate.workerTemplate.spec.schedulerName")]),
])
def test_a_leaderworkerset_is_checked_group_by_group(docs, findings):
    report = run_check(docs)
    got = sorted(f.code for f in report.findings)
    assert got == sorted(code for code, _ in findings), [f.message for f in report.findings]
    for f, (code, fieldname) in zip(sorted(report.findings, key=lambda f: f.code), sorted(findings)):
        assert f.code == code and " ".join(f.objects) == "LeaderWorkerSet default/llm"
        if fieldname is not None:
            assert fieldname in [where for _, where in f.fields], f.fields


@pytest.mark.parametrize("docs, findings", [
    case("a CronJob whose Jobs fit: nothing to say", [*TWO_NODES, cron(), simulation()], []),
    case("a 16-GPU pod in its jobTemplate fits no node",
         [*TWO_NODES, cron(gpus=16), simulation()],
         [("pod-fits-no-node", "spec.jobTemplate.spec.template.spec.containers")]),
    case("a template no run reaches (its schedule is after the horizon) is still checked",
         [*TWO_NODES, cron(gpus=16, schedule="0 2 1 1 *"), simulation("1h")],
         [("pod-fits-no-node", "spec.jobTemplate.spec.template.spec.containers")]),
    case("a sync Job of 3 pods of 8 GPUs on 16 GPUs cannot run at once: its parallelism is the field",
         [*TWO_NODES, cron(gpus=8, parallelism=3), simulation()],
         [("supply-too-small", None)]),
    # a gang object named in the template serves one Job only: a run of one day's Job (gangkit refuses more)
    case("its template's PodGroup asks for more members than its parallelism",
         [*TWO_NODES, cos_group(3), cron(template_meta={"labels": {"scheduling.x-k8s.io/pod-group": "pg"}}),
          simulation("1h")], [("gang-larger-than-job", "spec.jobTemplate.spec.parallelism")]),
    case("its template's PodGroup that its parallelism fills: nothing to say",
         [*TWO_NODES, cos_group(2), cron(template_meta={"labels": {"scheduling.x-k8s.io/pod-group": "pg"}}),
          simulation("1h")], []),
    case("its pods go to a scheduler gangkit does not model",
         [*TWO_NODES, cron(schedulerName="kai-scheduler"), simulation()],
         [("scheduler-not-provided", "spec.jobTemplate.spec.template.spec.schedulerName")]),
])
def test_a_cronjobs_template_is_checked(docs, findings):
    report = run_check(docs)
    got = sorted(f.code for f in report.findings)
    assert got == sorted(code for code, _ in findings), [f.message for f in report.findings]
    for f, (code, fieldname) in zip(sorted(report.findings, key=lambda f: f.code), sorted(findings)):
        assert f.code == code and "CronJob default/nightly" in f.objects
        if fieldname is not None:
            assert fieldname in [where for _, where in f.fields], f.fields


@pytest.mark.parametrize("schedule, horizon", [
    case("a template no run reaches", "0 2 1 1 *", "1h"),
    case("a template the run makes Jobs of", "0 2 * * *", "72h"),
])
def test_a_cronjob_templates_unreadable_field_is_one_clear_error_whether_or_not_the_run_reaches_it(schedule, horizon):
    docs = [*TWO_NODES, cron(schedule=schedule), simulation(horizon)]
    docs[2]["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] = "lots"
    with pytest.raises(ScenarioError) as err:
        run_check(docs)
    assert "nightly" in str(err.value) and "nvidia.com/gpu" in str(err.value) and "lots" in str(err.value), str(err.value)
