"""What ``gangkit check`` reads: every object of a stack's files, and gangkit's reading of each, side by side.

Picture the stock-take before an inspection: every box on the shelves is
counted, opened and labelled with what it holds, and every note that says
"see box 12" is followed to box 12. :func:`read_stack` does that for a set of
manifest files with gangkit's one reader (:mod:`gangkit.manifests`): the
same registry of kinds, the same family readers, the same problems for bad
input. The result, an :class:`Inventory`, holds each object next to what
gangkit read from it (a :class:`~gangkit.model.jobs.Job`, the Kueue setup,
the Volcano queues, the NodePools...) and every reference between objects
(:class:`GangRef`, :class:`NameRef`), resolved or not.

A reference that names nothing is what the check reports; gangkit's run
refuses some of them as input errors. So that one dangling name does not
hide everything else, the inventory reads such an object as if its target
existed: a PriorityClass that is not there counts with the default priority,
a Volcano Queue or a WorkloadPriorityClass that is not there is read as an
empty stand-in (no capability, value 0). The reader's problems are kept in
:attr:`Inventory.problems`; :mod:`gangkit.consistency.check` decides which
of them are findings and which are input errors.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from gangkit.consistency.files import Source, documents, screen, sources_of
from gangkit.consistency.name_refs import (
    NameRef,
    dig,
    labels_of,
    priority_refs,
    volcano_queue_refs,
    workload_priority_class_refs,
)
from gangkit.kueue.manifests import KueueReader, LoadedWorkload
from gangkit.kueue.objects import KueueSetup
from gangkit.kueue.setup_manifests import KIND_NAMES as KUEUE_KINDS
from gangkit.manifests import apps, core, cronjob, lws, resume, simulation, snapshot, training
from gangkit.manifests.core import GROUP_NAME
from gangkit.manifests.kueue_snapshot import SnapshotReader
from gangkit.manifests.load import REGISTRY, JobContext, check_unique
from gangkit.model.errors import Problem, ScenarioError
from gangkit.model.jobs import Job
from gangkit.model.nodes import Node
from gangkit.model.reading import (
    QUEUE_LABEL,
    GangkitInputWarning,
    ManifestObject,
    Reader,
    new_object,
)
from gangkit.model.scenario import RunSettings
from gangkit.placement.manifests import POD_GROUP_LABEL, TASK_GROUP_NAME, TASK_GROUPS, GangObjects
from gangkit.supply import manifests as supply
from gangkit.volcano import manifests as volcano
from gangkit.volcano.api import DEFAULT_QUEUE, VolcanoSetup

__all__ = ["GangRef", "Inventory", "JobEntry", "NameRef", "Source", "dig", "display", "labels_of", "read_stack"]

DEFAULT_SCHEDULER = "default-scheduler"
CRON_TEMPLATE = "spec.jobTemplate.spec.template"  # a CronJob's pod template
#: The display name of the kinds whose name two API groups share (``Kind.group``, as the API server writes them).
QUALIFIED = {"VolcanoJob": "Job.batch.volcano.sh", "PodGroup": "PodGroup.scheduling.volcano.sh",
             "CoschedulingPodGroup": "PodGroup.scheduling.x-k8s.io", "KubeWorkload": "Workload.scheduling.k8s.io",
             "KubeWorkloadV1alpha2": "Workload.scheduling.k8s.io", "KubePodGroup": "PodGroup.scheduling.k8s.io",
             "Workload": "Workload.kueue.x-k8s.io"}


def display(o: ManifestObject) -> str:
    """``Kind namespace/name`` for a namespaced object (namespace ``default`` when left out), else ``Kind name``."""
    kind = QUALIFIED.get(o.role, o.role or o.kind)
    if not o.name:  # a Kueue Configuration needs no name
        return f"{kind} ({o.where})"
    return f"{kind} {o.namespace or 'default'}/{o.name}" if o.namespaced else f"{kind} {o.name}"


@dataclass
class GangRef:
    """A Job's reference to its gang: the gang layer, where the Job names it, and where the gang size is.

    ``target`` is the PodGroup or Workload named (None: not in the files; a
    YuniKorn task group lives in the Job's own annotations, so its target
    is the Job). ``size`` is the raw gang size (None: absent, so every pod),
    written in ``size_field`` of ``size_owner``.
    """

    layer: str  # volcano, coscheduling, yunikorn, kube-gang
    field: str
    name: str
    missing: str = ""  # what is missing, in words ("" when the gang object was found)
    target: ManifestObject | None = None
    size_owner: ManifestObject | None = None
    size_field: str = ""
    size: Any = None


@dataclass
class JobEntry:
    """One workload of the files (a batch/v1 Job or a Volcano Job) and what each layer reads of it."""

    obj: ManifestObject
    job: Job | None  # gangkit's reading; None when the reader refused the object
    pods: int | None  # the pods the workload creates (parallelism, or the tasks' replicas)
    scheduler: str
    gang: GangRef | None = None
    kueue: LoadedWorkload | None = None  # the Workload Kueue's job integration makes of it (queue-labelled Jobs)

    @property
    def name(self) -> str:
        return display(self.obj)


@dataclass
class Inventory:
    """Everything the rules look at: the objects, gangkit's reading of them, and the references between them."""

    files: list[str]
    objects: list[ManifestObject]
    problems: list[Problem]
    warnings: list[str]
    nodes: list[Node]
    jobs: list[JobEntry]
    priority_classes: dict[str, int]
    kueue: KueueSetup
    kueue_workloads: list[tuple[ManifestObject, LoadedWorkload]]
    volcano: VolcanoSetup | None
    karpenter: Any  # gangkit.supply.Karpenter or None
    autoscaler: Any  # gangkit.supply.ClusterAutoscaler or None
    settings: RunSettings
    has_simulation: bool
    name_refs: list[NameRef] = field(default_factory=list)
    docs: list = field(default_factory=list)  # every document, for the run (gangkit.manifests.load_manifests)

    def of_role(self, role: str) -> list[ManifestObject]:
        return [o for o in self.objects if o.role == role]

    def by_label(self, label: str) -> ManifestObject | None:
        return next((o for o in self.objects if o.label == label), None)

    @property
    def has_supply(self) -> bool:
        """The files say something about nodes: Nodes, NodePools or node groups."""
        return bool(self.nodes or self.karpenter is not None or self.autoscaler is not None)

    def display_of(self, label: str) -> str:
        """The display name of the object a reader label names (the label itself for a stand-in)."""
        o = self.by_label(label)
        return display(o) if o is not None else label


# --- reading -------------------------------------------------------------------------------------


def read_stack(sources: Source | Iterable[Source]) -> Inventory:
    """Read every file (a path, YAML text, a dict or a list of dicts, or a list of paths) into an :class:`Inventory`.

    Bad YAML and a missing file raise :class:`ScenarioError` at once; every
    other problem is collected in ``Inventory.problems``.
    """
    items = sources_of(sources)
    if not items:
        raise ScenarioError([Problem("gangkit check", "FILE", "expected at least one file of manifests")])
    r = Reader("YAML input")
    objects: list[ManifestObject] = []
    base_of: dict[int, Path | None] = {}
    files, all_docs = [], []
    states: list[snapshot.Taken] = []  # what each live cluster's dump shows bound: checked as gangkit run checks it
    for source in items:
        docs, label, base = documents(source)
        bad = screen(docs, label)
        if bad:
            raise ScenarioError(bad)
        r.label = label
        files.append(label)
        all_docs.extend(docs)  # as they are: a run reads a live cluster's dump as the state it starts from
        if snapshot.is_snapshot(docs):  # the objects as their authors wrote them (gangkit.manifests.snapshot)
            docs, _, taken = snapshot.split(r, docs, [f"document {i}" for i in range(1, len(docs) + 1)])
            states.append(taken)
        found = REGISTRY.objects(r, docs)
        for o in found:
            if len(items) > 1:
                o.where = f"{label}, {o.where}"
            base_of[id(o)] = base
        objects.extend(found)
    check_unique(r, objects)
    try:
        return _read_families(r, files, all_docs, objects, base_of, states)
    except (TypeError, AttributeError, KeyError, IndexError) as e:  # a reader that met a value of a type it did not expect
        raise ScenarioError([Problem(", ".join(files), "", f"gangkit's reader stopped at a value of a type it does not "
                                     f"expect ({type(e).__name__}: {e}); check that every field holds the kind of value "
                                     "its API asks for (a mapping, a list, a name)")]) from None


def _read_families(r: Reader, files: list[str], all_docs: list, objects: list[ManifestObject],
                   base_of: dict[int, Path | None], states: list | None = None) -> Inventory:
    """Every family of kinds read with gangkit's readers, in the order their answers depend on each other.

    The PriorityClasses and Nodes first, then the workloads into Jobs (:func:`_read_jobs`), Volcano's
    objects (:func:`_read_volcano`), the WorkloadGenerators, Kueue's setup and each queue-labelled Job as
    Kueue sees it (:func:`_read_kueue`), and last the run settings and the node suppliers.
    ``states``: what live clusters' dumps show (:class:`gangkit.manifests.snapshot.Taken`); their pods' bindings
    are checked as ``gangkit run`` checks them (:func:`gangkit.manifests.resume.check_bindings`).
    """
    by_role: dict[str, list[ManifestObject]] = {}
    for o in objects:
        by_role.setdefault(o.role, []).append(o)
    roles = lambda name: by_role.get(name, [])  # noqa: E731

    refs: list[NameRef] = []
    classes, default_priority = core.read_priority_classes(r, roles("PriorityClass"))
    tolerant = dict(classes)  # a missing class counts with the default priority (and is a finding)
    for ref in priority_refs(objects):
        ref.target = next((o for o in roles("PriorityClass") if o.name == ref.name), None)
        refs.append(ref)
        if ref.name not in classes:
            tolerant[ref.name] = default_priority
    nodes = [n for n in (core.read_node(r, o) for o in roles("Node")) if n is not None]

    # batch/v1 Jobs with their gangs, then Volcano's objects (Volcano Jobs are appended to the jobs)
    groups = {(o.namespace or "default", o.name): o for o in roles("PodGroup")}
    ctx = JobContext(tolerant, default_priority, groups, {}, GangObjects.collect(by_role))
    entries, jobs = _read_jobs(r, roles, ctx)
    _read_lws_and_cronjobs(r, roles, ctx, by_role, entries, jobs)
    runtimes = training.collect_runtimes(objects)
    _read_trainjobs(r, roles, runtimes, ctx, entries, jobs)
    volcano_setup, read_volcano = _read_volcano(r, roles, objects, ctx, entries, jobs, refs)
    for o in roles("WorkloadGenerator"):  # checked as gangkit run checks them; the rules do not look at their jobs
        r.base = base_of.get(id(o))
        core.read_generated_jobs(r, [o], nodes, jobs)
    r.base = None
    setup, kueue_workloads = _read_kueue(r, objects, entries, classes, tolerant, default_priority, runtimes, refs)

    for taken in states or ():  # one reader, one verdict: a pod gangkit run refuses is refused here too
        resume.check_bindings(r, taken, jobs + list(read_volcano.values()), nodes)
    settings, _, _ = simulation.read_simulation(r, roles("Simulation"), "scenario")
    karpenter = _with_own_reader(r, lambda rr: supply.read_karpenter(rr, roles("Karpenter"), roles("NodePool")))
    autoscaler = _with_own_reader(r, lambda rr: supply.read_cluster_autoscaler(rr, roles("ClusterAutoscaler")))
    return Inventory(files, objects, list(r.problems), r.report(), nodes, entries, tolerant, setup, kueue_workloads,
                     volcano_setup, karpenter, autoscaler, settings, bool(roles("Simulation")), refs, all_docs)


def _read_jobs(r: Reader, roles, ctx: JobContext) -> tuple[list[JobEntry], list[Job]]:
    """batch/v1 Jobs, the apps controllers, Pods, the Kubeflow kinds and JobSets: an entry for each object (the
    Job read, its pod count, the scheduler its pods name, its gang) and the Jobs read."""
    entries: list[JobEntry] = []
    jobs: list[Job] = []
    for o in roles("Job"):
        j = core.read_job(r, o, *ctx)
        if j is not None:
            jobs.append(j)
        entries.append(JobEntry(o, j, _parallelism(o), _scheduler(o, "Job"), _gang_ref(o, ctx.groups, ctx.gangs)))
    for o in roles("Deployment") + roles("ReplicaSet") + roles("StatefulSet"):
        got = apps.read_controller(r, o, *ctx)
        jobs.extend(got)
        entries.append(JobEntry(o, got[0] if len(got) == 1 else None, _parallelism_of(o, "replicas"),
                                _scheduler(o, "Job"), _gang_ref(o, ctx.groups, ctx.gangs)))
    pod_jobs = apps.read_pods(r, roles("Pod"), *ctx)
    jobs.extend(pod_jobs)
    for j in pod_jobs:  # a job per bare Pod or per gang of Pods: named by its first Pod
        o = next((p for p in roles("Pod") if p.name == j.name or p.name == j.pod_sets[0].name), None)
        if o is not None:
            entries.append(JobEntry(o, j, j.pod_count, _scheduler_of_pod(o)))
    for o in [o for kind in training.REPLICA_KINDS for o in roles(kind)]:  # the operator makes their PodGroup
        j = training.read_replica_job(r, o, *ctx)
        if j is not None:
            jobs.append(j)
        entries.append(JobEntry(o, j, j.pod_count if j else None, _scheduler(o, o.role)))
    for o in roles("JobSet"):
        j = training.read_jobset(r, o, *ctx)
        if j is not None:
            jobs.append(j)
        prefix, template = _jobset_template(o)
        entries.append(JobEntry(o, j, j.pod_count if j else None, _scheduler(o, "JobSet"),
                                _gang_ref(o, ctx.groups, ctx.gangs, template or {}, prefix)))
    return entries, jobs


def _read_lws_and_cronjobs(r: Reader, roles, ctx: JobContext, by_role: dict, entries: list[JobEntry],
                           jobs: list[Job]) -> None:
    """LeaderWorkerSets and CronJobs, read as ``gangkit run`` reads them, an entry each.

    A LeaderWorkerSet (:func:`gangkit.manifests.lws.read_lws`) is a job per group, all alike: its entry
    holds the first group's job and the pods of one group (``leaderWorkerTemplate.size``), a group being
    the gang the rules look at; its pods go to the workerTemplate's scheduler, and its templates name no
    gang object (the reader refuses one). Kueue's view of it is not built (``JobEntry.kueue`` None).

    A CronJob (:func:`gangkit.manifests.cronjob.read_cronjobs`, with the Simulation's horizon) makes the
    Jobs of its schedule within the run; its entry holds the Job of its ``spec.jobTemplate``: the first
    of those Jobs, else (no schedule time within the run) the template read on its own, with the other
    readers' gang objects left unclaimed, so that a template no run reaches is still checked (its reading
    problems too, named at the CronJob's ``spec.jobTemplate``). Its pods are the template's
    ``parallelism``, its gang the one its pod template names. Kueue's view is not built either.
    """
    for o in roles("LeaderWorkerSet"):
        got = lws.read_lws(r, o, *ctx)
        jobs.extend(got)
        size = _whole(dig(o.doc, "spec", "leaderWorkerTemplate", "size") or 1)
        entries.append(JobEntry(o, got[0] if got else None, size, _scheduler(o, "LeaderWorkerSet")))
    made = cronjob.read_cronjobs(r, roles("CronJob"), roles("Simulation"), lambda o: core.read_job(r, o, *ctx))
    jobs.extend(made)
    for o in roles("CronJob"):
        first = next((j for j in made if j.namespace == o.namespace and j.name.startswith(f"{o.name}-")
                      and j.name[len(o.name) + 1:].isdigit()), None)
        template = dig(o.doc, "spec", "jobTemplate")
        if first is None and isinstance(dig(template, "spec"), Mapping):
            meta = {k: v for k, v in _mapping(dig(template, "metadata")).items() if k in ("labels", "annotations")}
            doc = {"apiVersion": "batch/v1", "kind": "Job", "metadata": meta | {"name": o.name}, "spec": template["spec"]}
            if o.namespace:
                doc["metadata"]["namespace"] = o.namespace
            alone = JobContext(ctx.classes, ctx.default_priority, ctx.groups, {}, GangObjects.collect(by_role))
            side = Reader(r.label)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", GangkitInputWarning)
                first = core.read_job(side, replace(new_object(doc, f"{o.where}, spec.jobTemplate"),
                                                    role="Job", namespaced=True), *alone)
            r.problems.extend(side.problems)  # the template's own problems, as a run making its Job would find them
        pod_template = dig(template, "spec", "template")
        entries.append(JobEntry(o, first, _whole(dig(template, "spec", "parallelism") or 1), _scheduler(o, "CronJob"),
                                _gang_ref(o, ctx.groups, ctx.gangs, pod_template or {}, CRON_TEMPLATE)))


def _read_trainjobs(r: Reader, roles, runtimes: dict, ctx: JobContext, entries: list[JobEntry], jobs: list[Job]) -> None:
    """TrainJobs: the JobSet their runtime makes; the runtime's podGroupPolicy names their gang scheduler."""
    for o in roles("TrainJob"):
        j = training.read_trainjob(r, o, runtimes, *ctx)
        if j is not None:
            jobs.append(j)
        entries.append(JobEntry(o, j, j.pod_count if j else None, _trainjob_scheduler(o, runtimes)))


def _read_volcano(r: Reader, roles, objects: list[ManifestObject], ctx: JobContext, entries: list[JobEntry],
                  jobs: list[Job], refs: list[NameRef]) -> tuple:
    """Volcano's setup, read as ``gangkit run`` reads it (a Queue a Job names but no file holds stands in, so
    the missing Queue is a finding rather than a reading error), and an entry for each Volcano Job.

    Returns the setup and the Volcano Jobs read, by key (they are taken back out of ``jobs``)."""
    queue_refs = volcano_queue_refs(objects)
    queue_names = {o.name for o in roles("Queue")} | {DEFAULT_QUEUE}
    stand_ins = [_stand_in("Queue", name) for name in sorted({q.name for q in queue_refs} - queue_names)]
    for ref in queue_refs:
        ref.target = next((o for o in roles("Queue") if o.name == ref.name), None)
    refs.extend(queue_refs)
    before = len(jobs)
    volcano_setup = volcano.read_for_scenario(r, objects + stand_ins, jobs, ctx.groups, ctx.used_groups, ctx.classes,
                                              ctx.default_priority)
    read_volcano = {j.key: j for j in jobs[before:]}
    del jobs[before:]
    for o in roles("VolcanoJob"):
        key = f"{o.namespace}/{o.name}" if o.namespace else o.name
        entries.append(JobEntry(o, read_volcano.get(key), _replicas(o), _scheduler(o, "VolcanoJob"),
                                _volcano_job_gang(o)))
    return volcano_setup, read_volcano


def _read_kueue(r: Reader, objects: list[ManifestObject], entries: list[JobEntry], classes: dict, tolerant: dict,
                default_priority: int, runtimes: dict, refs: list[NameRef]) -> tuple:
    """Kueue: the setup as gangkit run reads it, its Workloads, and each queue-labelled Job as Kueue's job
    integration sees it (``JobEntry.kueue``). Returns the setup and the Workloads read."""
    kueue_objects = [o for o in objects if o.role == o.kind and o.kind in KUEUE_KINDS]
    wpc_refs = workload_priority_class_refs(objects)
    wpc_names = {o.name for o in kueue_objects if o.kind == "WorkloadPriorityClass"}
    for ref in wpc_refs:
        ref.target = next((o for o in kueue_objects if o.kind == "WorkloadPriorityClass" and o.name == ref.name), None)
    refs.extend(wpc_refs)
    wpc_stand_ins = [_stand_in("WorkloadPriorityClass", n) for n in sorted({x.name for x in wpc_refs} - wpc_names)]
    kr = KueueReader(r, kueue_objects, classes, default_priority)
    setup = kr.setup()
    kueue_workloads = []
    for o in (o for o in kueue_objects if o.kind == "Workload"):
        got = kr.workload(o)
        if got is not None:
            kueue_workloads.append((o, got[0]))
    view = SnapshotReader(Reader("Kueue's view"), kueue_objects + wpc_stand_ins, tolerant, default_priority)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GangkitInputWarning)
        view.setup()  # its problems are the ones above; it is read again only to answer job_workload
    view.runtimes = runtimes
    for e in entries:
        if e.obj.role in ("Job", "JobSet", "TrainJob", *training.REPLICA_KINDS) and labels_of(e.obj).get(QUEUE_LABEL):
            got = {"Job": view.job_workload, "JobSet": view.jobset_workload,
                   "TrainJob": view.trainjob_workload}.get(e.obj.role, view.kubeflow_workload)(e.obj)
            e.kueue = got[0] if got is not None else None
    return setup, kueue_workloads


def _with_own_reader(r: Reader, read):
    """A supplier reader gives up after any problem of its reader: give it a fresh one, then merge its report."""
    own = Reader(r.label)
    value = read(own)
    r.problems.extend(own.problems)
    r.unknown.extend(own.unknown)
    r.notes.extend(own.notes)
    return value


def _stand_in(kind: str, name: str) -> ManifestObject:
    """An empty object of a kind, for a name the files reference but do not hold (see the module docstring)."""
    api = {"Queue": volcano.QUEUE_API, "WorkloadPriorityClass": "kueue.x-k8s.io/v1beta2"}[kind]
    doc = {"apiVersion": api, "kind": kind, "metadata": {"name": name}}
    if kind == "WorkloadPriorityClass":
        doc["value"] = 0
    return ManifestObject(doc, kind, "(not in the files)", name, None, role=kind)


def _mapping(value: Any) -> Mapping:
    return value if isinstance(value, Mapping) else {}


def _whole(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _parallelism(o: ManifestObject) -> int | None:
    spec = o.doc.get("spec")
    return _whole(spec.get("parallelism", 1)) if isinstance(spec, Mapping) else None


def _parallelism_of(o: ManifestObject, key: str) -> int | None:
    spec = o.doc.get("spec")
    return _whole(spec.get(key, 1)) if isinstance(spec, Mapping) else None


def _scheduler_of_pod(o: ManifestObject) -> str:
    name = dig(o.doc, "spec", "schedulerName")
    return name if isinstance(name, str) and name else DEFAULT_SCHEDULER


def _replicas(o: ManifestObject) -> int | None:
    tasks = dig(o.doc, "spec", "tasks")
    if not isinstance(tasks, list):
        return None
    counts = [_whole(t.get("replicas")) if isinstance(t, Mapping) else None for t in tasks]
    return sum(counts) if all(c is not None for c in counts) else None


def _scheduler(o: ManifestObject, role: str) -> str:
    """The scheduler a workload's pods go to: the pod template's schedulerName (a Volcano Job's: ``volcano``)."""
    if role == "VolcanoJob":
        name = dig(o.doc, "spec", "schedulerName")
        return name if isinstance(name, str) and name else "volcano"
    if role == "LeaderWorkerSet":  # the reader requires both templates to name the same scheduler
        template = dig(o.doc, "spec", "leaderWorkerTemplate", "workerTemplate")
    elif role == "CronJob":
        template = dig(o.doc, "spec", "jobTemplate", "spec", "template")
    elif role in training.REPLICA_KINDS:
        specs = dig(o.doc, "spec", training.REPLICA_KINDS[role].field)
        template = next((dig(v, "template") for v in specs.values()), None) if isinstance(specs, Mapping) else None
    else:
        template = _jobset_template(o)[1] if role == "JobSet" else dig(o.doc, "spec", "template")
    name = dig(template, "spec", "schedulerName")
    return name if isinstance(name, str) and name else DEFAULT_SCHEDULER


def _trainjob_scheduler(o: ManifestObject, runtimes: dict) -> str:
    """A TrainJob's pods go where its runtime sends them: Trainer's podGroupPolicy plugin sets the scheduler
    (``volcano``, or scheduler-plugins' for ``coscheduling``), else the runtime template's schedulerName."""
    ref = dig(o.doc, "spec", "runtimeRef")
    ref = ref if isinstance(ref, Mapping) else {}
    kind = ref.get("kind", "ClusterTrainingRuntime")
    runtime = runtimes.get((kind, (o.namespace or "default") if kind == "TrainingRuntime" else None, ref.get("name")))
    policy = dig(runtime.doc, "spec", "podGroupPolicy") if runtime is not None else None
    if isinstance(policy, Mapping) and "volcano" in policy:
        return "volcano"
    if isinstance(policy, Mapping) and "coscheduling" in policy:
        return "scheduler-plugins-scheduler"
    entries = dig(runtime.doc, "spec", "template", "spec", "replicatedJobs") if runtime is not None else None
    for entry in entries if isinstance(entries, list) else []:
        name = dig(entry, "template", "spec", "template", "spec", "schedulerName")
        if isinstance(name, str) and name:
            return name
    return DEFAULT_SCHEDULER


def _jobset_template(o: ManifestObject) -> tuple[str, Any]:
    """A JobSet's first pod template and where it is (the reader requires the others to name the same gang)."""
    entries = dig(o.doc, "spec", "replicatedJobs")
    for i, entry in enumerate(entries if isinstance(entries, list) else []):
        template = dig(entry, "template", "spec", "template")
        if isinstance(template, Mapping):
            return f"spec.replicatedJobs[{i}].template.spec.template", template
    return "spec.replicatedJobs", None


def _gang_ref(o: ManifestObject, groups: dict, gangs: GangObjects, template: Any = None,
              prefix: str = "spec.template") -> GangRef | None:
    """The gang a batch/v1 Job's pods name (the first of them; the reader refuses a second one).

    ``template`` is the pod template at ``prefix`` (default: the Job's
    ``spec.template``; a JobSet's first replicatedJob's).
    """
    ns = o.namespace or "default"
    template = dig(o.doc, "spec", "template") if template is None else template
    tann = _mapping(dig(template, "metadata", "annotations"))
    tlabels = _mapping(dig(template, "metadata", "labels"))
    jann = _mapping(dig(o.doc, "metadata", "annotations")) if prefix == "spec.template" else {}
    for where, ann in ((f"{prefix}.metadata", tann), ("metadata", jann)):
        name = ann.get(GROUP_NAME)
        if isinstance(name, str):
            g = groups.get((ns, name))
            return GangRef("volcano", f"{where}.annotations.{GROUP_NAME}", name,
                           "" if g else f"PodGroup {name!r} (scheduling.volcano.sh) in namespace {ns!r}",
                           g, g, "spec.minMember", dig(g.doc, "spec", "minMember") if g else None)
    name = tlabels.get(POD_GROUP_LABEL)
    if isinstance(name, str):
        g = gangs.pod_groups.get((ns, name))
        return GangRef("coscheduling", f"{prefix}.metadata.labels.{POD_GROUP_LABEL}", name,
                       "" if g else f"PodGroup {name!r} (scheduling.x-k8s.io) in namespace {ns!r}",
                       g, g, "spec.minMember", dig(g.doc, "spec", "minMember") if g else None)
    if isinstance(tann.get(TASK_GROUP_NAME), str) and isinstance(tann.get(TASK_GROUPS), str):
        name = tann[TASK_GROUP_NAME]
        try:
            task_groups = json.loads(tann[TASK_GROUPS])
        except json.JSONDecodeError:
            return None  # the reader reports it
        mine = [g for g in task_groups if isinstance(g, Mapping) and g.get("name") == name] \
            if isinstance(task_groups, list) else []
        where = f"{prefix}.metadata.annotations.{TASK_GROUP_NAME}"
        if not mine:
            return GangRef("yunikorn", where, name, f"task group {name!r} among the Job's {TASK_GROUPS}")
        return GangRef("yunikorn", where, name, "", o, o,
                       f"{prefix}.metadata.annotations.{TASK_GROUPS}[{name}].minMember", mine[0].get("minMember"))
    ref = dig(template, "spec", "workloadRef")
    if isinstance(ref, Mapping) and isinstance(ref.get("name"), str):
        name, group = ref["name"], ref.get("podGroup")
        w = gangs.workloads.get((ns, name))
        if w is None:
            return GangRef("kube-gang", f"{prefix}.spec.workloadRef.name", name,
                           f"Workload {name!r} (scheduling.k8s.io) in namespace {ns!r}")
        pod_groups = dig(w.doc, "spec", "podGroups")
        index = next((i for i, g in enumerate(pod_groups if isinstance(pod_groups, list) else [])
                      if isinstance(g, Mapping) and g.get("name") == group), None)
        if index is None:
            return GangRef("kube-gang", f"{prefix}.spec.workloadRef.podGroup", str(group),
                           f"pod group {group!r} in Workload {name!r}", w)
        policy = pod_groups[index].get("policy") if isinstance(pod_groups[index].get("policy"), Mapping) else {}
        size = dig(policy, "gang", "minCount") if "gang" in policy else 1  # basic: pod by pod
        return GangRef("kube-gang", f"{prefix}.spec.workloadRef.name", name, "", w, w,
                       f"spec.podGroups[{index}].policy.gang.minCount", size)
    ref = dig(template, "spec", "schedulingGroup")  # Kubernetes 1.36: a standalone PodGroup
    if isinstance(ref, Mapping) and isinstance(ref.get("podGroupName"), str):
        name = ref["podGroupName"]
        g = gangs.kube_pod_groups.get((ns, name))
        where = f"{prefix}.spec.schedulingGroup.podGroupName"
        if g is None:
            return GangRef("kube-gang", where, name, f"PodGroup {name!r} (scheduling.k8s.io/v1alpha2) in namespace {ns!r}")
        policy = _mapping(dig(g.doc, "spec", "schedulingPolicy"))
        size = dig(policy, "gang", "minCount") if "gang" in policy else 1  # basic: pod by pod
        return GangRef("kube-gang", where, name, "", g, g, "spec.schedulingPolicy.gang.minCount", size)
    return None


def _volcano_job_gang(o: ManifestObject) -> GangRef:
    """A Volcano Job is its own gang: ``spec.minAvailable`` (default: the tasks' minAvailable, each its replicas)."""
    return GangRef("volcano", "spec.minAvailable", o.name, "", o, o, "spec.minAvailable", dig(o.doc, "spec", "minAvailable"))
