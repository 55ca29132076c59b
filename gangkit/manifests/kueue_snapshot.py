"""``gangkit admit``'s input: a snapshot of Kueue's queues and workloads, read from manifests.

Picture a photograph of a cluster taken at one moment: the queues with their
quota, the Workloads already holding some of it (``status.admission``), the
ones waiting, and the jobs labelled ``kueue.x-k8s.io/queue-name`` (each the
Workload Kueue's job integration would create for it: batch/v1 Jobs, JobSets,
the Kubeflow kinds, TrainJobs, LeaderWorkerSets (a Workload per group), and, by Kueue's pod,
deployment and statefulset integrations, plain Pods, pod groups, Deployments and StatefulSets). Times in
the photograph (``creationTimestamp``, the QuotaReserved condition) become
seconds from the earliest one; the latest one is "now".
:func:`load_kueue` reads such a snapshot for :mod:`gangkit.analysis.admit`.

Objects are told apart by their role on the board of kinds
(:mod:`gangkit.manifests.kinds`), not by their kind name: a Kubernetes
``scheduling.k8s.io`` Workload is checked and left to ``gangkit run``
(the kube-scheduler's gang scheduling reads it, not Kueue). Every object read
is either a Kueue object, a workload (admitted or pending), or named in a
warning that says why gangkit admit leaves it out.
"""

from __future__ import annotations

import dataclasses
import os
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from gangkit.kueue.layer import MAIN_POD_SET
from gangkit.kueue.manifests import DEFAULT_POD_SET, MIN_PARALLELISM, PRIORITY_CLASS_LABEL, KueueReader, LoadedWorkload
from gangkit.kueue.objects import KueueSetup, PodSetSpec, Workload
from gangkit.kueue.setup_manifests import KIND_NAMES
from gangkit.manifests.apps import read_controller, read_pods
from gangkit.manifests.core import read_priority_classes
from gangkit.manifests.load import REGISTRY, check_unique
from gangkit.manifests.lws import read_lws
from gangkit.manifests.snapshot import is_snapshot, split
from gangkit.manifests.training import collect_runtimes
from gangkit.model.errors import Problem, ScenarioError
from gangkit.model.reading import (
    QUEUE_LABEL,
    SUBMIT_TIME,
    GangkitInputWarning,
    ManifestObject,
    Reader,
    looks_like_path,
    parse_yaml,
    read_text,
)
from gangkit.placement.manifests import GangObjects

__all__ = ["LEFT_TO_RUN", "KueueInput", "LoadedWorkload", "load_kueue"]


@dataclass
class KueueInput:
    """What ``gangkit admit`` reads: the Kueue objects, the workloads, and the time of the snapshot."""

    setup: KueueSetup
    workloads: list[LoadedWorkload]
    now: float = 0.0  # the snapshot's time: the latest timestamp of the input, in seconds from the earliest
    warnings: list[str] = field(default_factory=list)


Source = str | os.PathLike | Mapping | Iterable


def load_kueue(*sources: Source) -> KueueInput:
    """Read Kueue objects, Workloads and queue-labelled batch/v1 Jobs from files, YAML strings or dicts.

    Other kinds gangkit reads (Node, PodGroup, Simulation...) are checked and
    ignored; PriorityClasses give Jobs and Workloads their priority. Raises
    :class:`ScenarioError` with every problem; warnings are emitted as
    :class:`GangkitInputWarning` and kept on the result.
    """
    r = Reader("YAML input")
    objects: list[ManifestObject] = []
    for source in sources:
        docs, r.label = _documents(source, r.notes)
        if is_snapshot(docs):  # a live cluster's dump: its objects as written, each Workload standing for its job
            docs = split(r, docs, [f"document {i}" for i in range(1, len(docs) + 1)], keep_workloads=True)[0]
        objects.extend(REGISTRY.objects(r, docs))
    check_unique(r, objects)
    classes, default_priority = read_priority_classes(r, [o for o in objects if o.role == "PriorityClass"])
    # by role, not by kind name: a scheduling.k8s.io Workload is not Kueue's, a Volcano Job is no batch/v1 Job
    kr = SnapshotReader(r, [o for o in objects if o.role in KIND_NAMES], classes, default_priority)
    setup = kr.setup()
    if any(f.topology_name is not None for f in setup.flavors):
        # gangkit admit reads no nodes and no pods: its TAS flavors admit as if they had no topology, and each
        # Topology a flavor names says so (topology-aware scheduling is simulated by gangkit run)
        named = {f.topology_name for f in setup.flavors}
        setup.flavors = [dataclasses.replace(f, topology_name=None) for f in setup.flavors]
        setup.topologies = []
        for o in objects:
            if o.kind == "Topology" and o.name in named:
                r.notes[:] = [n for n in r.notes if not n.startswith(f"{o.label} (")]
                r.notes.append(f"{o.label}: topology-aware scheduling is not modelled by gangkit admit (it reads no "
                               "nodes or pods): the flavors that name it admit as if they had no topology; gangkit run "
                               "simulates it")
    kr.runtimes = collect_runtimes(objects)
    loaded = kr.snapshot_workloads([o for o in objects if o.role in WORKLOAD_ROLES])
    for o in objects:
        if o.role in LEFT_TO_RUN:
            r.notes.append(f"{o.label} ({o.doc.get('apiVersion')}) was checked and left out: {LEFT_TO_RUN[o.role]}")
    _note_left_out(r, [o for o in objects if o.role not in KIND_NAMES and o.role not in WORKLOAD_ROLES
                       and o.role not in LEFT_TO_RUN and _holds_pods(o)])
    r.raise_problems()
    notes = r.report()
    for message in notes:
        warnings.warn(message, GangkitInputWarning, stacklevel=2)
    return KueueInput(setup, loaded, kr.now, notes)


#: The roles of the objects that become Workloads (by role, see gangkit.manifests.kinds): Kueue's own Workload,
#: and the kinds of the job integrations gangkit reads (Kueue v0.19 ``pkg/controller/jobs``: job, jobset,
#: kubeflow (pytorchjob, tfjob, jaxjob, paddlejob, xgboostjob), mpijob, trainjob, pod, deployment, statefulset,
#: leaderworkerset).
WORKLOAD_ROLES = ("Workload", "Job", "JobSet", "PyTorchJob", "MPIJob", "TrainJob", "Pod", "Deployment", "ReplicaSet",
                  "StatefulSet", "TFJob", "JAXJob", "PaddleJob", "XGBoostJob", "LeaderWorkerSet")
KUBEFLOW_ROLES = ("PyTorchJob", "MPIJob", "TFJob", "JAXJob", "PaddleJob", "XGBoostJob")  # read by kubeflow_workload


def _holds_pods(o: ManifestObject) -> bool:
    """Whether an object makes or groups pods: a pod template anywhere in it, or a gang's object (a PodGroup, a
    Kubernetes Workload). Nodes, queues and settings are the cluster, not workloads: admit reads them silently."""
    def templates(doc) -> bool:
        if isinstance(doc, Mapping):
            return "containers" in doc or any(templates(v) for k, v in doc.items() if k != "status")
        return isinstance(doc, list) and any(templates(v) for v in doc)
    return o.kind in ("PodGroup", "Workload") or templates(o.doc.get("spec"))


def _note_left_out(r: Reader, objects: list[ManifestObject]) -> None:
    """One note per kind of workload object that gangkit admit reads and leaves out, naming them and saying why."""
    by_kind: dict[str, list[ManifestObject]] = {}
    for o in objects:
        by_kind.setdefault(o.role, []).append(o)
    for group in by_kind.values():
        names = ", ".join(o.label for o in group[:3]) + (f" and {len(group) - 3} more" if len(group) > 3 else "")
        why = ("Kueue has no job integration for it, so it is no workload of Kueue's; gangkit run simulates it with "
               "the stack's other layers")
        if group[0].role == "CronJob":
            why = ("its Jobs become Kueue's workloads once its controller creates them on its schedule; a snapshot "
                   "holds the Jobs that exist, so gangkit admit decides on those; gangkit run creates them by schedule")
        r.notes.append(f"{names} ({group[0].doc.get('apiVersion')}) left out by gangkit admit: {why}")


#: Kinds whose name is one of Kueue's but which Kueue does not read (by role, see gangkit.manifests.kinds).
LEFT_TO_RUN = {
    "KubeWorkload": "the Kubernetes Workload is read by the kube-scheduler's gang scheduling, which gangkit run "
                    "simulates (--stack kube-gang); Kueue's Workload is kueue.x-k8s.io's",
}


def _documents(source: Source, notes: list[str]) -> tuple[list, str]:
    if isinstance(source, os.PathLike) or (isinstance(source, str) and looks_like_path(source)):
        path = Path(source)
        return parse_yaml(read_text(path), path.name, notes), path.name
    if isinstance(source, str):
        return parse_yaml(source, "YAML input", notes), "YAML input"
    if isinstance(source, Mapping):
        return [source], "manifests"
    if isinstance(source, Iterable) and not isinstance(source, (bytes, bytearray)):
        return list(source), "manifests"
    raise ScenarioError([Problem("load_kueue", "source", "expected a path, YAML text, a manifest (a dict) or a list "
                                 f"of manifests, got {type(source).__name__}")])



class SnapshotReader(KueueReader):
    """Reads the workloads of a snapshot: Workload objects and queue-labelled Jobs, on one time line."""

    def __init__(self, r: Reader, objects: list[ManifestObject], classes: dict[str, int], default_priority: int):
        super().__init__(r, objects, classes, default_priority)
        self.now = 0.0  # the snapshot's time, set by snapshot_workloads
        self.manage_without_queue_name = False  # Kueue's Configuration, once setup() has read it
        self.runtimes: dict = {}  # the TrainingRuntimes and ClusterTrainingRuntimes TrainJobs name

    def setup(self):
        setup = super().setup()
        self.manage_without_queue_name = setup.config.manage_jobs_without_queue_name
        return setup

    def snapshot_workloads(self, objects: list[ManifestObject]) -> list[LoadedWorkload]:
        """Workload objects and queue-labelled Jobs, in input order, with times relative to the earliest one."""
        read: list[tuple[LoadedWorkload, datetime | None, datetime | None]] = []
        keys: dict[str, str] = {}
        found: list[tuple[ManifestObject, tuple]] = []
        for o in objects:
            if o.role == "Pod":
                continue
            if o.role in ("Deployment", "ReplicaSet", "StatefulSet", "LeaderWorkerSet"):
                found += [(o, got) for got in self.controller_workloads(o)]
                continue
            got = {"Workload": self.workload, "JobSet": self.jobset_workload, "TrainJob": self.trainjob_workload,
                   **dict.fromkeys(KUBEFLOW_ROLES, self.kubeflow_workload)}.get(o.role, self.job_workload)(o)
            if got is not None:
                found.append((o, got))
        found += self.pod_workloads([o for o in objects if o.role == "Pod"])
        for o, got in found:
            lw, created, reserved = got
            key = lw.workload.key
            if key in keys:
                self.r.error(o.label, "metadata.name", f"gangkit names a Job's Workload after the Job; {keys[key]} "
                             f"already uses the name {key!r}")
                continue
            keys[key] = o.label
            read.append((lw, created, reserved))
        stamps = [t for _, c, q in read for t in (c, q) if t is not None]
        origin = min(stamps) if stamps else None
        latest = 0.0
        for lw, created, reserved in read:
            wl = lw.workload
            if created is not None:
                wl.created = (created - origin).total_seconds()
            if lw.admission is not None:
                wl.quota_reserved_at = None if reserved is None else (reserved - origin).total_seconds()
            latest = max(latest, wl.created, wl.quota_reserved_at or 0.0)
        self.now = latest
        for lw, _, _ in read:  # "no QuotaReserved time" counts as now, as in Kueue's candidate ordering
            if lw.admission is not None and lw.workload.quota_reserved_at is None:
                lw.workload.quota_reserved_at = latest
        return [lw for lw, _, _ in read]

    def controller_workloads(self, o: ManifestObject) -> list[tuple]:
        """The Workloads of a Deployment, ReplicaSet or StatefulSet labelled with a LocalQueue.

        Kueue's deployment integration (v0.19 ``pkg/controller/jobs/deployment``) puts the queue label on
        the pod template and its pod integration then manages each replica's Pod on its own: one Workload
        per replica, named here ``<name>-<i>``. Its statefulset integration makes all replicas one pod
        group: one Workload for the StatefulSet. A ReplicaSet's pods, labelled by its template, are plain
        Pods too. The pods are read as ``gangkit run`` reads them (:mod:`gangkit.manifests.apps`).
        A LeaderWorkerSet has one Workload per group, ``<name>-<i>``, with the pod sets ``leader`` and
        ``worker`` (or ``main``) of Kueue's leaderworkerset integration (:mod:`gangkit.manifests.lws`).
        """
        head = self.job_header(o)
        if head is None:
            return []
        obj, meta, labels, _, queue = head
        before = len(self.r.notes)
        read = read_lws if o.role == "LeaderWorkerSet" else read_controller
        jobs = read(self.r, o, self.classes, self.default_priority, {}, {}, GangObjects())
        self.r.notes[before:] = [n for n in self.r.notes[before:] if not n.startswith(obj)]  # run-time notes: no run here
        return [got for job in jobs for got in [self._workload_of_job(o, job, obj, meta, labels, queue, name=job.name)]
                if got is not None]

    def pod_workloads(self, pods: list[ManifestObject]) -> list[tuple[ManifestObject, tuple]]:
        """The Workloads of plain Pods labelled with a LocalQueue: one per Pod, one per pod group.

        Kueue's pod integration (v0.19 ``pkg/controller/jobs/pod``) gives a Pod with the queue label a
        Workload of its own; Pods with the ``kueue.x-k8s.io/pod-group-name`` label share one, created
        once ``kueue.x-k8s.io/pod-group-total-count`` of them exist (a group short of its pods is left
        out, with a note), with a pod set per distinct pod shape.
        """
        managed = []
        for o in pods:
            if self.job_header(o) is not None:
                managed.append(o)
        jobs = read_pods(self.r, managed, self.classes, self.default_priority, {}, {}, GangObjects())
        by_name = {(o.namespace or "default", o.name): o for o in managed}
        groups = {}
        for o in managed:
            meta = o.doc.get("metadata") if isinstance(o.doc.get("metadata"), Mapping) else {}
            labels = meta.get("labels") if isinstance(meta.get("labels"), Mapping) else {}
            group = labels.get("kueue.x-k8s.io/pod-group-name")
            if isinstance(group, str) and group:
                groups.setdefault((o.namespace or "default", group), o)
        out = []
        for job in jobs:
            key = (job.namespace or "default", job.name)
            o = groups.get(key) or by_name.get(key)
            if o is None:
                continue
            obj, meta, labels, _, queue = self.job_header(o)
            got = self._workload_of_job(o, job, obj, meta, labels, queue, name=job.name)
            if got is not None:
                out.append((o, got))
        return out

    def job_header(self, o: ManifestObject) -> tuple | None:
        """(label, metadata, labels, annotations, LocalQueue) of a job Kueue manages; None when it does not."""
        obj = o.label
        meta = self.r.mapping(o.doc.get("metadata"), obj, "metadata")
        labels = self.r.strings(meta.get("labels"), obj, "metadata.labels")
        annotations = self.r.strings(meta.get("annotations"), obj, "metadata.annotations")
        queue = labels.get(QUEUE_LABEL) or self.unlabelled_queue(obj, o.namespace)
        return None if queue is None else (obj, meta, labels, annotations, queue)

    def unlabelled_queue(self, obj: str, namespace: str | None) -> str | None:
        """The LocalQueue Kueue gives a job without the queue-name label, "" for none, None when Kueue ignores it.

        The rule of :func:`gangkit.kueue.manifests.read_for_scenario`'s ``_without_queue_name``: the
        namespace's LocalQueue ``default`` if there is one; else, with ``manageJobsWithoutQueueName``,
        a Workload naming no LocalQueue (never admitted); else Kueue does not manage the job.
        """
        if (namespace or "default", "default") in self.local_queues:
            self.r.notes.append(f"{obj} has no {QUEUE_LABEL} label: Kueue gives it the LocalQueue 'default' of its namespace")
            return "default"
        if self.manage_without_queue_name:
            self.r.notes.append(f"{obj} has no {QUEUE_LABEL} label: Kueue manages it (manageJobsWithoutQueueName) "
                                "with a Workload that names no LocalQueue, never admitted")
            return ""
        self.r.notes.append(f"{obj} has no {QUEUE_LABEL} label: Kueue does not manage it, gangkit admit leaves it out")
        return None

    def jobset_workload(self, o: ManifestObject, job=None) -> tuple[LoadedWorkload, datetime | None, None] | None:
        """The Workload Kueue's JobSet integration creates for a JobSet labelled with a LocalQueue.

        One pod set per replicatedJob, named after it, of ``replicas x min(parallelism, completions)``
        pods (Kueue ``pkg/controller/jobs/jobset``); the priority from the WorkloadPriorityClass label,
        else the first pod template naming a priorityClassName. The JobSet's other fields are checked
        by its reader (:mod:`gangkit.manifests.training`).
        """
        head = self.job_header(o)
        if head is None:
            return None
        obj, meta, labels, annotations, queue = head
        entries = o.doc.get("spec", {}).get("replicatedJobs") if isinstance(o.doc.get("spec"), Mapping) else None
        if not isinstance(entries, list) or not entries:
            self.r.error(obj, "spec.replicatedJobs", "expected a list of at least one replicated Job")
            return None
        pod_sets, priority_class, ok = [], None, True
        for i, entry in enumerate(entries):
            base = f"spec.replicatedJobs[{i}]"
            entry = self.r.mapping(entry, obj, base)
            jspec = self.r.mapping(self.r.mapping(entry.get("template"), obj, f"{base}.template").get("spec"),
                                   obj, f"{base}.template.spec")
            replicas = self.r.whole(entry.get("replicas", 1), obj, f"{base}.replicas", 0)
            count = self.r.whole(jspec.get("parallelism", 1), obj, f"{base}.template.spec.parallelism", 0)
            if jspec.get("completions") is not None and count is not None:
                completions = self.r.whole(jspec["completions"], obj, f"{base}.template.spec.completions", 0)
                count = None if completions is None else min(count, completions)
            pod = self.r.mapping(self.r.mapping(jspec.get("template"), obj, f"{base}.template.spec.template").get("spec"),
                                 obj, f"{base}.template.spec.template.spec")
            requests = self.pod_requests(pod, obj, f"{base}.template.spec.template.spec", api_server=True)
            selector = self.r.strings(pod.get("nodeSelector"), obj, f"{base}.template.spec.template.spec.nodeSelector")
            if priority_class is None and pod.get("priorityClassName"):
                priority_class = (pod["priorityClassName"], f"{base}.template.spec.template.spec.priorityClassName")
            if replicas is None or count is None or requests is None or not isinstance(entry.get("name"), str):
                ok = False
                continue
            if replicas * count:
                pod_sets.append(PodSetSpec(entry["name"], replicas * count, requests, None, tuple(sorted(selector.items()))))
        if PRIORITY_CLASS_LABEL in labels:
            priority = self.workload_priority_class(labels[PRIORITY_CLASS_LABEL], obj, f"metadata.labels.{PRIORITY_CLASS_LABEL}")
        elif priority_class is not None:
            priority = self.priority_class(priority_class[0], obj, priority_class[1])
        else:
            priority = self.default_priority
        created = self.time(meta.get("creationTimestamp"), obj, "metadata.creationTimestamp")
        submit = 0.0
        if created is None and SUBMIT_TIME in annotations:
            submit = self.r.duration(annotations[SUBMIT_TIME], obj, f"metadata.annotations.{SUBMIT_TIME}") or 0.0
        if not ok or not pod_sets or priority is None:
            return None
        if queue:
            self.check_local_queue(obj, f"metadata.labels.{QUEUE_LABEL}", o.namespace, queue)
        return LoadedWorkload(Workload(o.name, o.namespace, queue, pod_sets, priority=priority, created=submit)), created, None

    def kubeflow_workload(self, o: ManifestObject) -> tuple[LoadedWorkload, datetime | None, None] | None:
        """The Workload Kueue's kubeflow (PyTorchJob, TFJob, JAXJob, PaddleJob, XGBoostJob) or mpijob integration
        creates for a queue-labelled job.

        One pod set per replica type, in the operator's order, named in lower case, of ``replicas``
        pods; the priority from the WorkloadPriorityClass label, else ``runPolicy.schedulingPolicy.priorityClass``,
        else the first replica's ``priorityClassName`` (:func:`gangkit.manifests.training.read_replica_job`).
        """
        from gangkit.manifests.training import read_replica_job
        from gangkit.placement.manifests import GangObjects

        head = self.job_header(o)
        if head is None:
            return None
        obj, meta, labels, _, queue = head
        job = read_replica_job(self.r, o, self.classes, self.default_priority, {}, {}, GangObjects())
        if job is None:
            return None
        return self._workload_of_job(o, job, obj, meta, labels, queue)

    def trainjob_workload(self, o: ManifestObject) -> tuple[LoadedWorkload, datetime | None, None] | None:
        """The Workload Kueue's TrainJob integration creates for a queue-labelled TrainJob.

        Kueue (``pkg/controller/jobs/trainjob``, v0.19) takes the pod sets from the JobSet the
        TrainJob's runtime makes: one per replicatedJob of the runtime's template, named after it,
        with the TrainJob's ``numNodes`` and ``resourcesPerNode`` applied to the trainer step, as
        :func:`gangkit.manifests.training.read_trainjob` applies them; the priority from the
        WorkloadPriorityClass label, else the runtime's pod templates.
        """
        from gangkit.manifests.training import read_trainjob
        from gangkit.placement.manifests import GangObjects

        head = self.job_header(o)
        if head is None:
            return None
        obj, meta, labels, _, queue = head
        job = read_trainjob(self.r, o, self.runtimes, self.classes, self.default_priority, {}, {}, GangObjects())
        if job is None:
            return None
        return self._workload_of_job(o, job, obj, meta, labels, queue)

    def _workload_of_job(self, o: ManifestObject, job, obj: str, meta: dict, labels: dict, queue: str | None,
                         name: str | None = None):
        """A Workload with a pod set per pod set of a job gangkit has read (the TrainJob's JobSet, a Pod's).

        The pod set of a one-pod-set Pod or Deployment workload is named ``main``, as Kueue names it."""
        priority = job.priority
        if PRIORITY_CLASS_LABEL in labels:
            priority = self.workload_priority_class(labels[PRIORITY_CLASS_LABEL], obj, f"metadata.labels.{PRIORITY_CLASS_LABEL}")
        if priority is None:
            return None
        pod_sets = [PodSetSpec(ps.name, ps.count, {k: v for k, v in (("nvidia.com/gpu", ps.gpus),
                                                                     ("cpu", int(round(ps.cpu * 1000))),
                                                                     ("memory", ps.memory)) if v},
                               None, ps.node_selector) for ps in job.pod_sets]
        if len(pod_sets) == 1 and job.framework in MAIN_POD_SET:
            pod_sets[0] = dataclasses.replace(pod_sets[0], name=DEFAULT_POD_SET)
        created = self.time(meta.get("creationTimestamp"), obj, "metadata.creationTimestamp")
        if queue:
            self.check_local_queue(obj, f"metadata.labels.{QUEUE_LABEL}", o.namespace, queue)
        wl = Workload(name or o.name, o.namespace, queue, pod_sets, priority=priority,
                      created=0.0 if created is not None else job.submit_time)
        return LoadedWorkload(wl), created, None

    def job_workload(self, o: ManifestObject) -> tuple[LoadedWorkload, datetime | None, None] | None:
        """The Workload Kueue's batch/v1 Job integration creates for a Job labelled with a LocalQueue.

        Kueue names it ``job-<name>-<hash>``; gangkit names it after the Job.
        """
        head = self.job_header(o)
        if head is None:
            return None
        obj, meta, labels, annotations, queue = head
        spec = self.r.mapping(o.doc.get("spec"), obj, "spec")
        count = self.r.whole(spec.get("parallelism", 1), obj, "spec.parallelism", 1)
        if spec.get("completions") is not None:
            completions = self.r.whole(spec["completions"], obj, "spec.completions", 1)
            if completions is not None and count is not None:
                count = min(count, completions)
        template = spec.get("template")
        if not isinstance(template, Mapping):
            self.r.error(obj, "spec.template", "expected a pod template (a mapping with spec.containers); it is required")
            return None
        pod = self.r.mapping(template.get("spec"), obj, "spec.template.spec")
        requests = self.pod_requests(pod, obj, "spec.template.spec", api_server=True)
        selector = self.r.strings(pod.get("nodeSelector"), obj, "spec.template.spec.nodeSelector")
        if PRIORITY_CLASS_LABEL in labels:
            priority = self.workload_priority_class(labels[PRIORITY_CLASS_LABEL], obj, f"metadata.labels.{PRIORITY_CLASS_LABEL}")
        elif pod.get("priorityClassName") is not None:
            priority = self.priority_class(pod["priorityClassName"], obj, "spec.template.spec.priorityClassName")
        else:
            priority = self.default_priority
        min_count = None
        if MIN_PARALLELISM in annotations and count is not None:
            min_count = self.min_parallelism(annotations[MIN_PARALLELISM], count, obj)
        created = self.time(meta.get("creationTimestamp"), obj, "metadata.creationTimestamp")
        submit = 0.0
        if created is None and SUBMIT_TIME in annotations:
            submit = self.r.duration(annotations[SUBMIT_TIME], obj, f"metadata.annotations.{SUBMIT_TIME}") or 0.0
        if count is None or requests is None or priority is None:
            return None
        if queue:
            self.check_local_queue(obj, f"metadata.labels.{QUEUE_LABEL}", o.namespace, queue)
        ps = PodSetSpec(DEFAULT_POD_SET, count, requests, min_count, tuple(sorted(selector.items())))
        wl = Workload(o.name, o.namespace, queue, [ps], priority=priority, created=submit)
        return LoadedWorkload(wl), created, None
