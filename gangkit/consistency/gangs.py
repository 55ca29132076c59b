"""Gang sizes against the pods a workload creates.

Picture a rowing crew booked for an eight-seat boat: if only six rowers
exist the boat never leaves (a gang larger than the job waits for ever);
if the boat leaves when four are seated, four rowers sit in a boat that
cannot move (a gang smaller than a sync job). The gang size is wherever
the gang layer keeps it:

- Volcano: the PodGroup's ``spec.minMember`` (a batch/v1 Job joined by the
  ``scheduling.k8s.io/group-name`` annotation), or a Volcano Job's
  ``spec.minAvailable`` (default: the sum of its tasks' ``minAvailable``,
  each defaulting to the task's replicas) and each task's ``minAvailable``;
- scheduler-plugins Coscheduling: the ``scheduling.x-k8s.io`` PodGroup's
  ``spec.minMember`` (absent: every pod, as gangkit reads it);
- YuniKorn: the task group's ``minMember``;
- Kubernetes 1.35: the Workload pod group's ``policy.gang.minCount``
  (``policy.basic``: pods one by one, a gang of 1).

The pods created are a batch/v1 Job's ``spec.parallelism`` (default 1), a
Deployment's, ReplicaSet's or StatefulSet's ``spec.replicas`` and a Volcano
Job's task replicas. A gang larger than its pods is accepted by the API
server (scheduler-plugins' install guide makes one on purpose: a PodGroup of
``minMember: 3`` over a Deployment of 2 replicas, whose pods stay Pending);
under a stack whose placement layer ignores the gang object (``pod``) the
pods are placed one by one instead.
"""

from __future__ import annotations

from collections.abc import Mapping

from gangkit.consistency.findings import Finding
from gangkit.consistency.inventory import GangRef, Inventory, JobEntry, dig, display
from gangkit.manifests.training import REPLICA_KINDS
from gangkit.model.reading import PROGRESS

__all__ = ["findings"]

#: Where a workload of each kind says how many pods it creates (a batch/v1 Job: ``spec.parallelism``).
PODS_FIELD = {"Deployment": "spec.replicas", "ReplicaSet": "spec.replicas", "StatefulSet": "spec.replicas",
              "CronJob": "spec.jobTemplate.spec.parallelism"}
#: What a gang layer does with the pods of a gang larger than its pods (other layers: "the gang never fills").
QUORUM = {
    # scheduler-plugins pkg/coscheduling/core/core.go, PreFilter (master of 2026-08)
    "coscheduling": "the API server accepts both, and the pods stay Pending for a quorum that never comes "
                    "(Coscheduling's PreFilter refuses each: \"cannot find enough sibling pods\")",
    # Kubernetes 1.35/1.36 GangScheduling plugin, PreEnqueue
    "kube-gang": "the API server accepts both, and the pods stay Pending for a quorum that never comes "
                 "(the GangScheduling plugin keeps them out of the active queue at PreEnqueue)",
}


def findings(inv: Inventory) -> list[Finding]:
    out = []
    for e in inv.jobs:
        if e.gang is None or e.gang.missing or e.pods is None:
            continue
        if e.obj.role == "VolcanoJob":
            out.extend(_volcano_job(e))
        else:
            out.extend(_sized(e, e.gang))
    return out


def _progress(e: JobEntry) -> str:
    if e.job is not None:
        return e.job.progress
    value = dig(e.obj.doc, "metadata", "annotations", PROGRESS)
    return value if isinstance(value, str) else "sync"


def _declared(e: JobEntry) -> bool:
    return dig(e.obj.doc, "metadata", "annotations", PROGRESS) is not None


def _whole(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _objects(e: JobEntry, g: GangRef) -> tuple[str, ...]:
    owner = g.size_owner if g.size_owner is not None else g.target
    return tuple(dict.fromkeys([e.name] + ([display(owner)] if owner is not None else [])))


def _sized(e: JobEntry, g: GangRef) -> list[Finding]:
    """A batch/v1 Job and the gang size its gang object gives."""
    if not _whole(g.size) or g.size < 1:
        return []  # absent (every pod) or refused by the reader
    owner = g.size_owner.label
    size_words = f"{display(g.size_owner)} {g.size_field} {g.size}" if g.size_owner is not e.obj else f"{g.size_field} {g.size}"
    pods_field = PODS_FIELD.get(e.obj.role) or (f"spec.{REPLICA_KINDS[e.obj.role].field}.*.replicas"
                                                 if e.obj.role in REPLICA_KINDS else "spec.parallelism")
    if g.size > e.pods:
        return [Finding(
            "gang-larger-than-job", _objects(e, g),
            f"{size_words} waits for {g.size} pods, but {e.name} creates only {e.pods} ({pods_field}): "
            f"{QUORUM.get(g.layer, 'the gang never fills, so none of its pods ever start')}.",
            f"set {g.size_field} to at most {e.pods}, or raise {pods_field} to {g.size}",
            ((owner, g.size_field), (e.obj.label, pods_field)), {"gang_size": g.size, "pods": e.pods},
            explains={(owner, g.size_field)})]
    if g.size < e.pods and _progress(e) == "sync":
        return [_smaller(e, g, size_words, pods_field, g.size_field)]
    return []


def _smaller(e: JobEntry, g: GangRef, size_words: str, pods_field: str, size_field: str) -> Finding:
    owner = (g.size_owner or e.obj).label
    return Finding(
        "gang-smaller-than-sync-job", _objects(e, g),
        f"{size_words} lets {g.size if _whole(g.size) else 'fewer'} of {e.name}'s {e.pods} pods start as a gang, but the "
        f"job is sync ({PROGRESS}: sync{'' if _declared(e) else ', the default'}): it progresses only while all "
        f"{e.pods} run, so a partial start holds GPUs and can deadlock.",
        f"set {size_field} to {e.pods}, or mark the job {PROGRESS}: independent if its pods work alone",
        ((owner, size_field), (e.obj.label, pods_field)), {"gang_size": g.size, "pods": e.pods})


def _volcano_job(e: JobEntry) -> list[Finding]:
    """A Volcano Job: the job's minAvailable against all replicas, each task's against its replicas."""
    out = []
    tasks = dig(e.obj.doc, "spec", "tasks")
    tasks = [t for t in tasks if isinstance(t, Mapping)] if isinstance(tasks, list) else []
    task_mins = []
    for i, t in enumerate(tasks):
        replicas, minimum = t.get("replicas"), t.get("minAvailable")
        if _whole(replicas) and _whole(minimum) and minimum > replicas:
            where = f"spec.tasks[{i}].minAvailable"
            out.append(Finding(
                "gang-larger-than-job", (e.name,),
                f"{e.name} task {t.get('name', i)!r} needs {minimum} pods available ({where}) but has {replicas} "
                "replicas: Volcano's webhook refuses the job.",
                f"set {where} to at most {replicas}",
                ((e.obj.label, where), (e.obj.label, f"spec.tasks[{i}].replicas")),
                {"task_min_available": minimum, "replicas": replicas}, explains={(e.obj.label, where)}))
        task_mins.append(minimum if _whole(minimum) else replicas)
    g = e.gang
    if g.size is None and out:
        return out  # the job's default gang is the tasks' sum: the task above is the one finding
    size = g.size if g.size is not None else (sum(task_mins) if all(_whole(m) for m in task_mins) else None)
    if not _whole(size) or size < 1:
        return out
    if size > e.pods:
        out.append(Finding(
            "gang-larger-than-job", (e.name,),
            f"{e.name} needs {size} pods available (spec.minAvailable) but its tasks have {e.pods} replicas in all: "
            "Volcano's webhook refuses the job (minAvailable above the total replicas).",
            f"set spec.minAvailable to at most {e.pods}",
            ((e.obj.label, "spec.minAvailable"),), {"gang_size": size, "pods": e.pods},
            explains={(e.obj.label, "spec.minAvailable")}))
    elif size < e.pods and _progress(e) == "sync":
        g = GangRef(g.layer, g.field, g.name, "", e.obj, e.obj, "spec.minAvailable", size)
        words = "spec.minAvailable " + str(size) + ("" if e.gang.size is not None else " (the tasks' minAvailable)")
        out.append(_smaller(e, g, f"{e.name} {words}", "spec.tasks[*].replicas", "spec.minAvailable"))
    return out
