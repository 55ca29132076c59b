"""Pods that are not batch jobs: bare Pods, and the apps/v1 controllers Deployment, ReplicaSet and StatefulSet.

Not every GPU pod comes from a training job. Inference servers run as
Deployments, a notebook server as a StatefulSet, and the examples of several
gang schedulers submit bare Pods or ReplicaSets (scheduler-plugins' own
coscheduling example is a ReplicaSet of six pods in a PodGroup of three; the
Kubernetes Workload API's examples bind bare Pods to a Workload). gangkit reads
them as jobs, with these rules:

- **Long-running.** A controller's pods serve until they are deleted: without
  a ``gangkit/run-time`` annotation they run until the run's horizon (and the
  run reports them as running at the end). A bare Pod runs its containers
  once, like a one-pod Job: without the annotation it gets the Job default.
- **Independent pods.** Replicas of a Deployment or ReplicaSet do not wait
  for each other (``progress: independent`` unless the annotation says
  otherwise); each replica is a job of its own, ``<name>-0``, ``<name>-1``...
  (the controllers' real pod names end in random characters), admitted and
  placed on its own: Kueue's deployment integration manages each pod as a
  workload of its own, and a gang scheduler without a gang for them places
  them one by one. A StatefulSet is one job: Kueue's statefulset integration
  admits its replicas as one pod group, and its pods ``<name>-<ordinal>``
  belong together.
- **Gangs named by the pods.** A pod template (or a bare Pod) that names a
  gang (scheduler-plugins' ``scheduling.x-k8s.io/pod-group`` label, Volcano's
  ``scheduling.k8s.io/group-name`` annotation, a Kubernetes 1.35
  ``spec.workloadRef``, Kueue's ``kueue.x-k8s.io/pod-group-name`` label) makes
  one job of every pod of that gang: a controller's replicas together, bare
  Pods of one group together (one pod set per distinct request, named after
  its first pod). A Kueue pod group is created only once the
  ``kueue.x-k8s.io/pod-group-total-count`` pods exist: a group with fewer pods
  in the input is never admitted (reported, and left out).
- **Not modelled**: rolling updates, scaling, a StatefulSet's
  ``podManagementPolicy: OrderedReady`` (the default: its pods are created one
  at a time, each once the previous is Ready; gangkit creates them together,
  as ``Parallel`` does), the restarts of pods whose containers exit.

The ``framework`` of each job names Kueue's integration: ``pod``,
``deployment``, ``statefulset`` (a ReplicaSet's pods are managed through the
``pod`` integration: framework ``pod``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gangkit.manifests import core
from gangkit.model.errors import Problem
from gangkit.model.jobs import DEPLOYMENT, POD, STATEFULSET, Job, PodSet
from gangkit.model.quantity import MAX_DURATION_S
from gangkit.model.reading import (
    ANY,
    JOB_ANNOTATIONS,
    META,
    POD_SPEC,
    PROGRESS,
    RUN_TIME,
    ManifestObject,
    Reader,
)
from gangkit.placement.manifests import POD_GROUP_LABEL, SCHEDULING_GROUP, WORKLOAD_REF, GangObjects

__all__ = ["KNOWN_FIELDS", "LONG_RUNNING", "group_key", "read_controller", "read_object", "read_pods"]

LONG_RUNNING = MAX_DURATION_S  # the run time of a controller's pods without an annotation: past every horizon
KUEUE_GROUP = "kueue.x-k8s.io/pod-group-name"
KUEUE_GROUP_COUNT = "kueue.x-k8s.io/pod-group-total-count"
_NAMES = dict.fromkeys
_TEMPLATE = {"metadata": META, "spec": {**POD_SPEC, "schedulingGroup": SCHEDULING_GROUP}}  # 1.36: read_gang
_TOP = {"apiVersion": ANY, "kind": ANY, "metadata": META, "status": ANY}
KNOWN_FIELDS: dict[str, dict] = {
    "Pod": _TOP | {"spec": {**POD_SPEC, "workloadRef": WORKLOAD_REF, "schedulingGroup": SCHEDULING_GROUP}},
    "Deployment": _TOP | {"spec": {**_NAMES(["replicas", "selector", "strategy", "minReadySeconds", "revisionHistoryLimit",
                                             "progressDeadlineSeconds", "paused"], ANY), "template": _TEMPLATE}},
    "ReplicaSet": _TOP | {"spec": {**_NAMES(["replicas", "selector", "minReadySeconds"], ANY), "template": _TEMPLATE}},
    "StatefulSet": _TOP | {"spec": {**_NAMES(["replicas", "selector", "serviceName", "podManagementPolicy",
                                              "updateStrategy", "revisionHistoryLimit", "minReadySeconds",
                                              "volumeClaimTemplates", "persistentVolumeClaimRetentionPolicy",
                                              "ordinals"], ANY), "template": _TEMPLATE}},
}
KNOWN_ANNOTATIONS = (*JOB_ANNOTATIONS, core.RENDEZVOUS_TIMEOUT)
FRAMEWORKS = {"Pod": POD, "ReplicaSet": POD, "Deployment": DEPLOYMENT, "StatefulSet": STATEFULSET}


def read_object(r: Reader, doc: Mapping, where: str, role: str) -> ManifestObject | None:
    """Check one Pod or controller (its metadata, unknown fields and gangkit annotations)."""
    return r.check_object(doc, where, KNOWN_FIELDS[role], KNOWN_ANNOTATIONS)


def read_controller(r: Reader, o: ManifestObject, classes: dict, default_priority: int, groups: dict,
                    used_groups: dict, gangs: GangObjects) -> list[Job]:
    """A Deployment, ReplicaSet or StatefulSet as jobs: one per replica, or one for all (see the module)."""
    obj = o.label
    spec = r.mapping(o.doc.get("spec"), obj, "spec")
    replicas = r.whole(spec.get("replicas", 1), obj, "spec.replicas", 0)
    template = spec.get("template")
    if not isinstance(template, Mapping):
        r.error(obj, "spec.template", "expected a pod template (a mapping with spec.containers); it is required")
        return []
    if replicas is None:
        return []
    if replicas == 0:
        r.notes.append(f"{obj} has spec.replicas 0: no pods")
        return []
    together = o.role == "StatefulSet" or _names_gang(template.get("metadata"), template.get("spec"))
    if o.role == "StatefulSet" and spec.get("podManagementPolicy", "OrderedReady") == "OrderedReady":
        r.notes.append(f"{obj}: podManagementPolicy OrderedReady creates the pods one at a time; gangkit creates "
                       "them together, as Parallel does")
    meta = o.doc.get("metadata") if isinstance(o.doc.get("metadata"), Mapping) else {}
    counts = [(o.name, replicas)] if together else [(f"{o.name}-{i}", 1) for i in range(replicas)]
    jobs = []
    for name, count in counts:
        view = {"metadata": {**meta, "name": name}, "spec": {"parallelism": count, "template": template}}
        j = _as_job(r, o, view, name, {"spec.parallelism": "spec.replicas"}, classes, default_priority, groups,
                    used_groups, gangs, long_running=True)
        if j is None:
            return jobs
        jobs.append(j)
    return jobs


def read_pods(r: Reader, pods: list[ManifestObject], classes: dict, default_priority: int, groups: dict,
              used_groups: dict, gangs: GangObjects) -> list[Job]:
    """Bare Pods as jobs: the pods of one gang together, every other pod on its own (see the module)."""
    grouped: dict[tuple, list[ManifestObject]] = {}
    for o in pods:
        grouped.setdefault(group_key(o), []).append(o)
    jobs = []
    for key, members in grouped.items():
        first = members[0]
        if key[0] == "pod":
            name = first.name
        else:
            name = key[2]
        if key[0] == "kueue":
            wanted = _annotations(first).get(KUEUE_GROUP_COUNT)
            if wanted is not None and str(wanted) != str(len(members)):
                r.notes.append(f"Kueue pod group {key[1]}/{name} ({first.label}...): "
                               f"{KUEUE_GROUP_COUNT} is {wanted} but the input has {len(members)} pod(s); Kueue "
                               "creates the group's Workload only once all its pods exist, so it is never admitted: "
                               "gangkit leaves it out")
                continue
        meta = first.doc.get("metadata") if isinstance(first.doc.get("metadata"), Mapping) else {}
        pod_spec = first.doc.get("spec") if isinstance(first.doc.get("spec"), Mapping) else {}
        template = {"metadata": {k: meta[k] for k in ("labels", "annotations") if k in meta}, "spec": pod_spec}
        view = {"metadata": {**meta, "name": name}, "spec": {"parallelism": len(members), "template": template}}
        moved = {"spec.template.spec": "spec", "spec.template.metadata": "metadata", "spec.parallelism": "metadata.name"}
        j = _as_job(r, first, view, name, moved, classes, default_priority, groups, used_groups, gangs,
                    long_running=False)
        if j is None:
            continue
        if len(members) > 1:
            sets = _pod_sets(r, members)
            if sets is None:
                continue
            j.pod_sets = sets
        jobs.append(j)
    return jobs


def _as_job(r: Reader, o: ManifestObject, view: dict, name: str, moved: dict, classes: dict, default_priority: int,
            groups: dict, used_groups: dict, gangs: GangObjects, long_running: bool) -> Job | None:
    """``view`` (a batch/v1 Job's shape) read by the Job reader, its fields named as ``o`` has them."""
    sub = Reader(r.label, base=r.base)
    shown = ManifestObject(view, o.kind, o.where, name, o.namespace, o.role, o.namespaced)
    j = core.read_job(sub, shown, classes, default_priority, groups, used_groups, gangs)
    for p in sub.problems:
        field = p.field
        for old, new in moved.items():
            if field == old or field.startswith(old + "."):
                field = new + field[len(old):]
                break
        r.problems.append(Problem(o.label if p.obj == shown.label else p.obj, field, p.message))
    r.unknown.extend(sub.unknown)
    r.notes.extend(sub.notes)
    if j is None:
        return None
    annotations = _annotations(o)
    if PROGRESS not in annotations:
        j.progress = "independent"
    if RUN_TIME not in annotations and long_running:
        j.run_time = LONG_RUNNING
        note = f"{o.label}: no {RUN_TIME} annotation; its pods serve until the run's horizon"
        if note not in r.notes:  # once for a Deployment's replicas
            r.notes.append(note)
    j.framework = FRAMEWORKS[o.role]
    return j


def _pod_sets(r: Reader, members: list[ManifestObject]) -> list[PodSet] | None:
    """One pod set per distinct pod request of a group, named after its first pod."""
    shapes: dict[tuple, list] = {}
    for o in members:
        pod = o.doc.get("spec") if isinstance(o.doc.get("spec"), Mapping) else {}
        sub = Reader(r.label)
        request = sub.pod_request(pod, o.label)
        for p in sub.problems:
            r.problems.append(Problem(p.obj, p.field.replace("spec.template.spec", "spec", 1), p.message))
        if request is None:
            return None
        selector = r.strings(pod.get("nodeSelector"), o.label, "spec.nodeSelector")
        key = (request, tuple(sorted(selector.items())))
        shapes.setdefault(key, [o.name, 0])[1] += 1
    return [PodSet(name, count, *request, selector) for ((request, selector), (name, count)) in shapes.items()]


def group_key(o: ManifestObject) -> tuple:
    """Which gang a bare Pod belongs to: (kind of gang, namespace, name...), or ("pod", ...) for none."""
    ns = o.namespace or "default"
    meta = o.doc.get("metadata") if isinstance(o.doc.get("metadata"), Mapping) else {}
    labels = meta.get("labels") if isinstance(meta.get("labels"), Mapping) else {}
    annotations = _annotations(o)
    spec = o.doc.get("spec") if isinstance(o.doc.get("spec"), Mapping) else {}
    ref = spec.get("workloadRef") if isinstance(spec.get("workloadRef"), Mapping) else None
    group = spec.get("schedulingGroup") if isinstance(spec.get("schedulingGroup"), Mapping) else None  # 1.36
    for kind, value in (("kueue", labels.get(KUEUE_GROUP)), ("coscheduling", labels.get(POD_GROUP_LABEL)),
                        ("volcano", annotations.get(core.GROUP_NAME)),
                        ("kube-gang", ref.get("name") if ref else None),
                        ("kube-gang-1.36", group.get("podGroupName") if group else None)):
        if isinstance(value, str) and value:
            return (kind, ns, value, ref.get("podGroup") if kind == "kube-gang" and ref else None)
    return ("pod", ns, o.name, id(o))


def _names_gang(meta: Any, pod: Any) -> bool:
    """Whether a pod template names a gang its pods belong to."""
    labels = meta.get("labels") if isinstance(meta, Mapping) and isinstance(meta.get("labels"), Mapping) else {}
    ann = meta.get("annotations") if isinstance(meta, Mapping) and isinstance(meta.get("annotations"), Mapping) else {}
    return (POD_GROUP_LABEL in labels or KUEUE_GROUP in labels or core.GROUP_NAME in ann
            or (isinstance(pod, Mapping) and (pod.get("workloadRef") is not None
                                              or pod.get("schedulingGroup") is not None)))


def _annotations(o: ManifestObject) -> dict:
    meta = o.doc.get("metadata") if isinstance(o.doc.get("metadata"), Mapping) else {}
    ann = meta.get("annotations")
    return {k: v for k, v in ann.items()} if isinstance(ann, Mapping) else {}

