"""Volcano's ``volcano.sh/preemptable``: a pod that is not preemptable is never a victim of preempt or reclaim.

Volcano v1.15.1 reads it on the pod (``GetPodPreemptable``,
``pkg/scheduler/api/pod_info.go``: annotation, else label; default true) and,
in the gang actions, on the PodGroup (``IsJobPreemptableForGangEviction``,
``pkg/scheduler/actions/utils/util.go``: a PodGroup that says nothing allows
eviction). A Volcano Job's own annotation and label reach every pod (over
the task template's) and its PodGroup. gangkit keeps the outcome in
``Job.volcano_not_preemptable``; the simulation tables set it directly, the
manifest tables check how it is read.
"""

from __future__ import annotations

import pytest

import gangkit as gk
from gangkit import Job, PodSet, job, nodes
from gangkit.manifests import dump_manifests, load_manifests
from gangkit.model.errors import ScenarioError
from gangkit.volcano.api import Queue

from conftest import check_times, run_with_queues

NOT = "volcano.sh/preemptable"


def evicted_pods(result) -> dict:
    """{job: evicted pods}."""
    pods = result.pods
    return pods[pods.state == "Evicted"].job.value_counts().to_dict()


def evicted_sets(result) -> dict:
    """{job: sorted pod sets of its evicted pods}."""
    pods = result.pods[result.pods.state == "Evicted"]
    return {name: sorted(set(g.pod_set)) for name, g in pods.groupby("job")}


def two_roles(name: str, keep: int, spare: int, protect=("keep",), **kw) -> Job:
    """An independent job of a ``keep`` role and a ``spare`` role, one GPU a pod, the ``protect`` roles not preemptable."""
    return Job(name, [PodSet("keep", keep, 1), PodSet("spare", spare, 1)], kw.pop("run_time", 100),
               progress="independent", volcano_not_preemptable=tuple(protect), **kw)


HIGH = dict(priority=10, submit_time=10, run_time=50)

# --- preempt (one node of 4 GPUs, one queue) ------------------------------------------------------

PREEMPT = [
    # (id, jobs, expected {job: (start, finish, state)}, evicted pods, evicted pod sets)
    ("the default: a pod that says nothing is preemptable, the low sync gang is evicted whole",
     [job("low", pods=4, run_time=100), job("high", pods=1, **HIGH)],
     {"high": (10, 60, "Finished"), "low": (0, 160, "Finished")}, {"low": 4}, {"low": ["workers"]}),
    ("not preemptable: the high-priority job waits for the low one to finish",
     [job("low", pods=4, run_time=100, volcano_not_preemptable=("workers",)), job("high", pods=1, **HIGH)],
     {"high": (100, 150, "Finished"), "low": (0, 100, "Finished")}, {}, {}),
    ("a protected victim is skipped for a preemptable one of higher priority",
     [job("low", pods=2, run_time=100, volcano_not_preemptable=("workers",)),
      job("mid", pods=2, run_time=100, priority=5), job("high", pods=2, **HIGH)],
     {"high": (10, 60, "Finished"), "low": (0, 100, "Finished")}, {"mid": 2}, {"mid": ["workers"]}),
    ("the newer role protected: the surplus is taken from the older role (the newest pods go first otherwise)",
     [two_roles("low", 2, 2, protect=("spare",), min_member=2), job("high", pods=2, **HIGH)],
     {"high": (10, 60, "Finished")}, {"low": 2}, {"low": ["keep"]}),
    ("one role protected and no surplus: the whole bundle takes only the preemptable role; the protected pods run on",
     [two_roles("low", 2, 2, min_member=4), job("high", pods=2, **HIGH)],
     {"high": (10, 60, "Finished"), "low": (0, 160, "Finished")}, {"low": 2}, {"low": ["spare"]}),
    ("what may be taken is not enough (2 preemptable GPUs for a gang of 3): nobody is evicted",
     [two_roles("low", 2, 2, min_member=2), job("high", pods=3, **HIGH)],
     {"high": (100, 150, "Finished")}, {}, {}),
    ("a sync job with a protected role is no victim (its other pods cannot go without stopping it)",
     [Job("low", [PodSet("master", 1, 1), PodSet("worker", 3, 1)], 100, volcano_not_preemptable=("master",)),
      job("high", pods=1, **HIGH)],
     {"high": (100, 150, "Finished")}, {}, {}),
]


@pytest.mark.parametrize("jobs, expected, pods, sets", [c[1:] for c in PREEMPT], ids=[c[0] for c in PREEMPT])
def test_preempt(jobs, expected, pods, sets):
    result = run_with_queues(nodes(1, gpus=4), jobs, preemption=True)
    check_times(result, expected)
    assert evicted_pods(result) == pods
    assert evicted_sets(result) == sets


# --- reclaim (one node of 8 GPUs, queues a and b: b deserves 4) -------------------------------------

def ones(queue: str, n: int, protect: set[int] = frozenset(), run_time: float = 1000) -> list[Job]:
    """``n`` one-GPU jobs of one queue, named queue+index; those in ``protect`` not preemptable."""
    return [job(f"{queue}{i}", run_time=run_time, volcano_queue=queue,
                volcano_not_preemptable=("workers",) if i in protect else ()) for i in range(n)]


B = job("b", pods=4, run_time=100, volcano_queue="b", submit_time=10)

RECLAIM = [
    # (id, jobs, expected, evicted pods)
    ("the default: the newest four of queue a are reclaimed",
     ones("a", 8) + [B], {"b": (10, 110, "Finished")}, {"a4": 1, "a5": 1, "a6": 1, "a7": 1}),
    ("the newest four protected: reclaim takes the four before them",
     ones("a", 8, protect={4, 5, 6, 7}) + [B], {"b": (10, 110, "Finished"), "a7": (0, 1000, "Finished")},
     {"a0": 1, "a1": 1, "a2": 1, "a3": 1}),
    ("only three may be taken: nothing is reclaimed",
     ones("a", 8, protect={0, 1, 2, 3, 4}) + [B], {"b": (1000, 1100, "Finished")}, {}),
]


@pytest.mark.parametrize("jobs, expected, pods", [c[1:] for c in RECLAIM], ids=[c[0] for c in RECLAIM])
def test_reclaim(jobs, expected, pods):
    result = run_with_queues(nodes(1, gpus=8), jobs, [Queue("a"), Queue("b")], preemption=True)
    check_times(result, expected)
    assert evicted_pods(result) == pods


# --- Volcano's own cases (gangpreempt_test.go, gangreclaim_test.go: TestSelectDomainVictims_RespectVictimJobPreemptable
# and ..._AllowVictimJobWhenPreemptableUnset): one running victim task, one pending task that needs its room ----

@pytest.mark.parametrize("kind", ["preempt", "reclaim"])
@pytest.mark.parametrize("podgroup_says, victims", [({NOT: "false"}, {}), ({}, {"victim": 1})],
                         ids=["PodGroup annotated false: no victim", "PodGroup says nothing: the task is a victim"])
def test_volcanos_own_cases(kind, podgroup_says, victims):
    group = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
             "metadata": {"name": "victim", "annotations": podgroup_says}, "spec": {"minMember": 1, "queue": "q1"}}
    docs = [node(2), batch_job("victim", priority="low", group="victim", gpus=2), group,
            queue("q1"), queue("q2"), priority("low", 10), priority("high", 100),
            batch_job("preemptor", priority="high", group="preemptor", submit="10s"),
            {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup", "metadata": {"name": "preemptor"},
             "spec": {"minMember": 1, "queue": "q1" if kind == "preempt" else "q2"}},
            {"apiVersion": "gangkit/v1alpha1", "kind": "Simulation", "metadata": {"name": "sim"},
             "spec": {"stack": "gang", "preemption": True}}]
    result = gk.simulate(load_manifests(docs))
    assert evicted_pods(result) == victims
    start = 10 if victims else 100  # at once, or when the victim finishes
    check_times(result, {"preemptor": (start, start + 100, "Finished")})


# --- reading manifests ------------------------------------------------------------------------------

def node(gpus=8) -> dict:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"},
            "status": {"allocatable": {"nvidia.com/gpu": str(gpus)}}}


def queue(name: str) -> dict:
    return {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": name},
            "spec": {"weight": 1}}


def priority(name: str, value: int) -> dict:
    return {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name}, "value": value}


def pod(gpus=1) -> dict:
    return {"restartPolicy": "Never",
            "containers": [{"name": "w", "image": "trainer:1", "resources": {"limits": {"nvidia.com/gpu": str(gpus)}}}]}


def batch_job(name="train", template_meta=None, meta=None, group=None, priority=None, submit=None, gpus=1) -> dict:
    template_meta = dict(template_meta or {})
    if group:
        template_meta["annotations"] = {**template_meta.get("annotations", {}), "scheduling.k8s.io/group-name": group}
    spec = pod(gpus)
    if priority:
        spec["priorityClassName"] = priority
    annotations = {"gangkit/run-time": "100s"} | ({"gangkit/submit-time": submit} if submit else {})
    metadata = {"name": name, **(meta or {})}
    metadata["annotations"] = {**metadata.get("annotations", {}), **annotations}
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": metadata,
            "spec": {"parallelism": 1, "template": {"metadata": template_meta, "spec": spec}}}


def batch_group(meta=None) -> dict:
    return {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup", "metadata": {"name": "pg", **(meta or {})},
            "spec": {"minMember": 1}}


def volcano_job(meta=None, master_meta=None, worker_meta=None) -> dict:
    metadata = {"name": "vj", **(meta or {})}
    metadata["annotations"] = {**metadata.get("annotations", {}), "gangkit/run-time": "100s"}
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": metadata,
            "spec": {"minAvailable": 3, "tasks": [
                {"name": "master", "replicas": 1, "template": {"metadata": master_meta or {}, "spec": pod()}},
                {"name": "worker", "replicas": 2, "template": {"metadata": worker_meta or {}, "spec": pod()}}]}}


def ann(value: str) -> dict:
    return {"annotations": {NOT: value}}


def lab(value: str) -> dict:
    return {"labels": {NOT: value}}


GROUPED = {"annotations": {"scheduling.k8s.io/group-name": "pg"}}

READ = [
    # (id, documents, Job.volcano_not_preemptable of the first job)
    ("batch/v1: the pod template says nothing: preemptable", [batch_job()], ()),
    ("batch/v1: the pod template's annotation false", [batch_job(template_meta=ann("false"))], ("workers",)),
    ("batch/v1: the pod template's label false", [batch_job(template_meta=lab("false"))], ("workers",)),
    ("batch/v1: Go's ParseBool spelling F", [batch_job(template_meta=ann("F"))], ("workers",)),
    ("batch/v1: the annotation wins over the label", [batch_job(template_meta=ann("true") | lab("false"))], ()),
    ("batch/v1: the Job's own annotation does not reach its pods", [batch_job(meta=ann("false"))], ()),
    ("batch/v1 with a PodGroup annotated false", [batch_job(group="pg"), batch_group(ann("false"))], ("workers",)),
    ("batch/v1 with a PodGroup labelled false", [batch_job(group="pg"), batch_group(lab("false"))], ("workers",)),
    ("batch/v1 with a PodGroup annotated true and labelled false (annotation first)",
     [batch_job(group="pg"), batch_group(ann("true") | lab("false"))], ()),
    ("Volcano Job: nothing said", [volcano_job()], ()),
    ("Volcano Job: one task template annotated false", [volcano_job(master_meta=ann("false"))], ("master",)),
    ("Volcano Job: one task template labelled false", [volcano_job(worker_meta=lab("false"))], ("worker",)),
    ("Volcano Job: the Job's annotation false reaches every pod and the PodGroup", [volcano_job(meta=ann("false"))],
     ("master", "worker")),
    ("Volcano Job: the Job's annotation true replaces a task template's false",
     [volcano_job(meta=ann("true"), master_meta=ann("false"))], ()),
    ("Volcano Job: the Job's label false is its PodGroup's: every task", [volcano_job(meta=lab("false"), master_meta=ann("true"))],
     ("master", "worker")),
]


@pytest.mark.parametrize("docs, expected", [c[1:] for c in READ], ids=[c[0] for c in READ])
def test_reading(docs, expected):
    sc = load_manifests([node(), *docs])
    assert sc.jobs[0].volcano_not_preemptable == expected


BAD = [
    # (id, documents, object, field, words)
    ("a word ParseBool does not read on a pod template", [batch_job(template_meta=ann("no"))],
     "Job train", f"spec.template.metadata.annotations.{NOT}", "expected \"true\" or \"false\""),
    ("a bad label on a PodGroup", [batch_job(group="pg"), batch_group(lab("yes"))],
     "PodGroup pg", f"metadata.labels.{NOT}", "got 'yes'"),
    ("an unquoted false on a Volcano Job's task template", [volcano_job(worker_meta={"annotations": {NOT: False}})],
     "VolcanoJob vj", f"spec.tasks[1].template.metadata.annotations.{NOT}", "expected a string"),
    ("a bad value on the Volcano Job itself", [volcano_job(meta=ann("maybe"))],
     "VolcanoJob vj", f"metadata.annotations.{NOT}", "got 'maybe'"),
]


@pytest.mark.parametrize("docs, obj, field, words", [c[1:] for c in BAD], ids=[c[0] for c in BAD])
def test_bad_value_is_one_clear_error(docs, obj, field, words):
    with pytest.raises(ScenarioError) as info:
        load_manifests([node(), *docs])
    lines = str(info.value).splitlines()
    assert any(line.startswith(f"{obj}: {field}: ") and words in line for line in lines), lines


def test_a_bad_value_of_the_volcano_job_is_reported_once():
    with pytest.raises(ScenarioError) as info:
        load_manifests([node(), volcano_job(meta=ann("maybe"))])
    assert str(info.value).count(NOT) == 1, str(info.value)


BAD_FIELD = [
    ("a pod set that does not exist", ("nope",)),
    ("a list, not a tuple", ["workers"]),
    ("a name twice", ("workers", "workers")),
]


@pytest.mark.parametrize("value", [c[1] for c in BAD_FIELD], ids=[c[0] for c in BAD_FIELD])
def test_a_bad_field_in_python_is_one_clear_error(value):
    problems = job("j", volcano_not_preemptable=value).problems()
    assert [p.field for p in problems] == ["volcano_not_preemptable"] and "pod set names" in problems[0].message


def test_a_volcano_job_writes_its_protected_tasks_back():
    sc = load_manifests([node(), volcano_job(master_meta=ann("false"))])
    again = load_manifests(dump_manifests(sc))
    assert [j.volcano_not_preemptable for j in again.jobs] == [("master",)]
