"""The LeaderWorkerSet (gangkit.manifests.lws): tables of cases.

Each group of ``spec.replicas`` is a job of its own, ``<name>-<i>``, of ``size`` pods: pod sets
``leader`` and ``worker`` with a leaderTemplate, ``main`` without (the pod sets of Kueue v0.19's
leaderworkerset integration); a group serves until the horizon unless ``gangkit/run-time`` says
otherwise; it is one gang (``LeaderReady``: minMember 1 and the whole group's minResources, as
LWS's Volcano provider sets them); ``gangkit admit`` gives each group a Workload.
"""

from __future__ import annotations

import copy
import json
import re
import warnings

import pytest
import yaml

import gangkit as gk
from gangkit.analysis.admit import admit
from gangkit.manifests import load_manifests
from gangkit.manifests.apps import LONG_RUNNING
from gangkit.manifests.kueue_snapshot import load_kueue
from gangkit.model.errors import ScenarioError
from gangkit.model.resources import Resources

from conftest import case

try:
    from schema_util import fields_missing_from, requires_schemas, validate_manifest
except ImportError:  # tests/ imported as a package
    from tests.schema_util import fields_missing_from, requires_schemas, validate_manifest

NODES = [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"n{i}"},
          "status": {"allocatable": {"nvidia.com/gpu": "8", "cpu": "32"}}} for i in range(2)]
QUEUED = {"kueue.x-k8s.io/queue-name": "lq"}
LWS_MANIFESTS: list[dict] = []  # every LeaderWorkerSet the tests read, validated against the CRD below


def template(gpus: int = 1, **pod) -> dict:
    return {"metadata": {"labels": {"app": "llm"}},
            "spec": {"containers": [{"name": "server", "image": "vllm",
                                     "resources": {"limits": {"nvidia.com/gpu": str(gpus)}}}], **pod}}


def lws(name: str = "llm", replicas: int | None = 2, size: int | None = 3, leader: dict | None = None,
        worker: dict | None = None, labels: dict | None = None, annotations: dict | None = None,
        **spec) -> dict:
    """A LeaderWorkerSet; by default two groups of a 1-GPU leader and two 4-GPU workers (9 GPUs a group)."""
    lwt = {"workerTemplate": worker or template(4)}
    if leader is not False:
        lwt["leaderTemplate"] = leader or template(1)
    if size is not None:
        lwt["size"] = size
    meta = {"name": name, "namespace": "default"} | ({"labels": labels} if labels else {}) | (
        {"annotations": annotations} if annotations else {})
    doc = {"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet", "metadata": meta,
           "spec": ({"replicas": replicas} if replicas is not None else {}) | {"leaderWorkerTemplate": lwt} | spec}
    LWS_MANIFESTS.append(doc)
    return doc


def read(*docs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load_manifests([*NODES, *docs])


# (LeaderWorkerSet, [(job, [(pod set, pods, GPUs each)])], min_member)
GROUPS = [
    case("each group is a job of a leader and size - 1 workers", lws(),
         [("llm-0", [("leader", 1, 1), ("worker", 2, 4)]), ("llm-1", [("leader", 1, 1), ("worker", 2, 4)])], None),
    case("without a leaderTemplate the leader is a worker: one pod set main of size pods",
         lws(replicas=1, size=4, leader=False, worker=template(2)), [("llm-0", [("main", 4, 2)])], None),
    case("replicas and size default to 1", lws(replicas=None, size=None, leader=False),
         [("llm-0", [("main", 1, 4)])], None),
    case("a group of size 1 with a leaderTemplate is its leader alone", lws(replicas=1, size=1),
         [("llm-0", [("leader", 1, 1)])], None),
    case("replicas 0 makes no groups", lws(replicas=0), [], None),
    case("LeaderReady: a gang of minMember 1 holding the whole group's resources",
         lws(replicas=1, startupPolicy="LeaderReady"), [("llm-0", [("leader", 1, 1), ("worker", 2, 4)])], 1),
]


@pytest.mark.parametrize("doc, groups, min_member", GROUPS)
def test_each_group_is_a_job_with_the_pod_sets_kueue_gives_it(doc, groups, min_member):
    sc = read(doc)
    assert [(j.name, [(ps.name, ps.count, ps.gpus) for ps in j.pod_sets]) for j in sc.jobs] == groups
    assert all(j.min_member == min_member for j in sc.jobs)
    assert all(j.run_time == LONG_RUNNING and j.progress == "sync" and j.namespace == "default" for j in sc.jobs)


def test_leader_ready_keeps_the_whole_group_as_its_min_resources():
    [j] = read(lws(replicas=1, startupPolicy="LeaderReady")).jobs
    assert j.min_resources == Resources(9, 0.0, 0)


# (annotations or spec fields, what the reader says, run time of the groups)
READ = [
    case("a run-time annotation ends each group", {"annotations": {"gangkit/run-time": "10m"}}, "", 600.0),
    case("without it the groups serve until the horizon", {}, "its groups serve until the run's horizon", LONG_RUNNING),
    case("LeaderReady's late workers are named as a simplification", {"startupPolicy": "LeaderReady"},
         "creates each group's workers once its leader is Ready", LONG_RUNNING),
    case("restartPolicy None is read as the default and said so",
         {"leaderWorkerTemplate": {"size": 2, "restartPolicy": "None", "workerTemplate": template(1)}},
         "restartPolicy None (recreate only the failed pod) is read as the default", LONG_RUNNING),
    case("networkConfig and rolloutStrategy are listed as not modelled",
         {"networkConfig": {"subdomainPolicy": "Shared"}, "rolloutStrategy": {"type": "RollingUpdate"}},
         "spec.networkConfig", LONG_RUNNING),
    case("the exclusive-topology annotation is named as not modelled",
         {"annotations": {"leaderworkerset.sigs.k8s.io/exclusive-topology": "cloud.google.com/gke-nodepool"}},
         "exclusive-topology (one group per topology domain) is not modelled", LONG_RUNNING),
]


@pytest.mark.parametrize("extra, said, run_time", READ)
def test_what_gangkit_reads_and_what_it_says_it_does_not_model(extra, said, run_time):
    extra = dict(extra)
    doc = lws(annotations=extra.pop("annotations", None), **extra)
    sc = read(doc)
    assert {j.run_time for j in sc.jobs} == {run_time}
    assert said in " | ".join(sc.warnings)


VOLCANO_QUEUES = [
    case("the LeaderWorkerSet's scheduling.volcano.sh/queue-name annotation puts its groups in that queue",
         {"scheduling.volcano.sh/queue-name": "inference"}, "inference"),
    case("without it they are in Volcano's default queue", None, "default"),
]


@pytest.mark.parametrize("annotations, queue", VOLCANO_QUEUES)
def test_the_groups_go_to_the_volcano_queue_lws_gives_their_podgroups(annotations, queue):
    queue_object = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": "inference"},
                    "spec": {"weight": 1}}
    sc = read(queue_object, lws(annotations=annotations))
    assert [j.volcano_queue for j in sc.jobs] == [queue, queue]


def queues(gpus: int) -> list[dict]:
    return [
        {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor", "metadata": {"name": "default-flavor"}},
        {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue", "metadata": {"name": "cq"},
         "spec": {"namespaceSelector": {}, "resourceGroups": [{"coveredResources": ["nvidia.com/gpu"], "flavors": [
             {"name": "default-flavor", "resources": [{"name": "nvidia.com/gpu", "nominalQuota": gpus}]}]}]}},
        {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue",
         "metadata": {"name": "lq", "namespace": "default"}, "spec": {"clusterQueue": "cq"}},
    ]


# 16 GPUs, two groups of 9: (stack, objects, state of each group at the end, GPUs held idle at the end)
STACKS = [
    case("gang: one group runs whole, the other waits whole", "gang", [lws()], ["RunningAtEnd", "WaitingAtEnd"], 0),
    case("pod: the groups' pods interleave, each group holds part of the GPUs idle: a deadlock", "pod", [lws()],
         ["Deadlocked", "Deadlocked"], 10),
    case("kueue+gang: the second group waits for quota in Kueue, holding nothing", "kueue+gang",
         [*queues(12), lws(labels=QUEUED)], ["RunningAtEnd", "WaitingAtEnd"], 0),
]


@pytest.mark.parametrize("stack, objects, states, held_idle", STACKS)
def test_each_group_is_one_gang_under_the_gang_stacks(stack, objects, states, held_idle):
    sc = read(*objects).with_settings(horizon=3600.0)
    result = gk.simulate(sc, stack=stack)
    by_job = dict(zip(result.jobs["job"], result.jobs["state"]))
    assert [by_job[f"default/llm-{i}"] for i in range(2)] == states
    assert result.summary()["held_idle_gpus_at_end"] == held_idle


def decide(objects: list[dict]) -> tuple[dict, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        report = admit(load_kueue(objects), cycles=None)
    return report, [str(w.message) for w in caught]


# (quota GPUs, LeaderWorkerSet, admitted {Workload: {pod set: count}}, pending Workloads)
ADMIT = [
    case("one Workload per group, with the pod sets leader and worker", 18, lws(labels=QUEUED),
         {"default/llm-0": {"leader": 1, "worker": 2}, "default/llm-1": {"leader": 1, "worker": 2}}, []),
    case("a group over the quota waits whole while the other is admitted", 12, lws(labels=QUEUED),
         {"default/llm-0": {"leader": 1, "worker": 2}}, ["default/llm-1"]),
    case("without a leaderTemplate one pod set main", 8, lws(replicas=1, size=2, leader=False, labels=QUEUED),
         {"default/llm-0": {"main": 2}}, []),
]


@pytest.mark.parametrize("quota, doc, admitted, pending", ADMIT)
def test_admit_gives_each_group_a_workload(quota, doc, admitted, pending):
    report, _ = decide(queues(quota) + [doc])
    assert {k: v["counts"] for k, v in report["admitted"].items()} == admitted
    assert sorted(report["pending"]) == pending


@pytest.mark.parametrize("quota, doc, admitted, pending", ADMIT)
def test_the_gangkit_admit_command_says_the_same(quota, doc, admitted, pending, tmp_path, capsys):
    from gangkit.cli.main import main

    path = tmp_path / "lws.yaml"
    path.write_text(yaml.safe_dump_all(queues(quota) + [doc]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["admit", str(path), "--until-quiet", "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert {k: v["counts"] for k, v in got["admitted"].items()} == admitted
    assert sorted(got["pending"]) == pending


def test_admit_leaves_a_leaderworkerset_without_a_queue_label_out_and_says_so():
    report, said = decide(queues(18) + [lws()])
    assert report["admitted"] == {} and not report["pending"]
    assert any("LeaderWorkerSet default/llm" in s and "Kueue does not manage it" in s for s in said), said


def bad(**changes) -> dict:
    doc = copy.deepcopy(lws(replicas=1))
    for path, value in changes.items():
        here = doc
        *keys, last = path.split("__")
        for k in keys:
            here = here.setdefault(k, {})
        if value is None:
            here.pop(last, None)
        else:
            here[last] = value
    return doc


# (LeaderWorkerSet, the message, whether the CRD's schema accepts it: if so a webhook or gangkit's model refuses it)
BAD = [
    case("a size below 1 (the LWS webhook's rule)", bad(spec__leaderWorkerTemplate__size=0),
         "LeaderWorkerSet default/llm: spec.leaderWorkerTemplate.size: expected a whole number >= 1, got 0", True),
    case("negative replicas", bad(spec__replicas=-1),
         "LeaderWorkerSet default/llm: spec.replicas: expected a whole number >= 0, got -1", False),
    case("no workerTemplate", bad(spec__leaderWorkerTemplate__workerTemplate=None),
         "LeaderWorkerSet default/llm: spec.leaderWorkerTemplate.workerTemplate: expected a pod template", False),
    case("a startupPolicy the CRD does not know", bad(spec__startupPolicy="AllAtOnce"),
         "LeaderWorkerSet default/llm: spec.startupPolicy: expected one of LeaderCreated, LeaderReady", False),
    case("a restartPolicy the CRD does not know", bad(spec__leaderWorkerTemplate__restartPolicy="Always"),
         "LeaderWorkerSet default/llm: spec.leaderWorkerTemplate.restartPolicy: expected one of "
         "RecreateGroupOnPodRestart", False),
    case("a bad GPU count in the leader's template names the leader's field",
         bad(spec__leaderWorkerTemplate__leaderTemplate=template(-1)),
         "LeaderWorkerSet default/llm: spec.leaderWorkerTemplate.leaderTemplate.spec.containers[0].resources."
         "limits.nvidia.com/gpu", True),
    case("templates naming two priority classes",
         bad(spec__leaderWorkerTemplate__leaderTemplate=template(1, priorityClassName="high")),
         "LeaderWorkerSet default/llm: spec.leaderWorkerTemplate.workerTemplate.spec.priorityClassName: expected "
         "'high'", True),
    case("a template naming one PodGroup for every group",
         bad(spec__leaderWorkerTemplate__workerTemplate={**template(4), "metadata": {"labels": {
             "scheduling.x-k8s.io/pod-group": "pg"}}}),
         "LeaderWorkerSet default/llm: spec.leaderWorkerTemplate.workerTemplate.metadata.labels.scheduling.x-k8s.io/"
         "pod-group: names a gang for the pods of every group", True),
    case("an elastic progress annotation", bad(metadata__annotations={"gangkit/progress": "elastic"}),
         "LeaderWorkerSet default/llm: metadata.annotations.gangkit/progress: expected sync or independent", True),
]


@pytest.mark.parametrize("doc, message, schema_ok", BAD)
def test_bad_input_is_one_error_naming_the_object_field_and_expectation(doc, message, schema_ok):
    high = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}, "value": 10}
    with pytest.raises(ScenarioError, match=re.escape(message)):
        read(high, doc)


@requires_schemas
@pytest.mark.parametrize("doc, message, schema_ok", BAD)
def test_the_bad_cases_are_refused_by_the_crd_or_else_by_a_webhook_or_the_model(doc, message, schema_ok):
    if schema_ok:
        assert validate_manifest(yaml.safe_load(yaml.safe_dump(doc))) is not None
    else:
        with pytest.raises(AssertionError, match="does not validate"):
            validate_manifest(yaml.safe_load(yaml.safe_dump(doc)))


@requires_schemas
@pytest.mark.parametrize("doc", [pytest.param(d, id=f"LeaderWorkerSet number {i} of these tests")
                                 for i, d in enumerate(LWS_MANIFESTS)])
def test_every_leaderworkerset_these_tests_read_is_valid_for_the_real_crd(doc):
    assert validate_manifest(yaml.safe_load(yaml.safe_dump(doc))) is not None


@requires_schemas
def test_every_field_gangkit_reads_exists_in_the_real_crd():
    from gangkit.manifests.lws import KNOWN_FIELDS

    from conftest import shared_path

    crd = yaml.safe_load(shared_path("schemas", "lws", "leaderworkerset.x-k8s.io_leaderworkersets.yaml").read_text())
    [version] = [v for v in crd["spec"]["versions"] if v["name"] == "v1"]
    missing = fields_missing_from(KNOWN_FIELDS["LeaderWorkerSet"], version["schema"]["openAPIV3Schema"], "LeaderWorkerSet", metadata_is_open=True)
    assert missing == []
