"""Volcano's own YAML: Queues and Volcano Jobs (and what a PodGroup says about its queue).

An operator shares a Volcano cluster between teams with Queues, and a team
submits a Volcano Job whose tasks are the roles of the job::

    apiVersion: scheduling.volcano.sh/v1beta1
    kind: Queue
    metadata: {name: research}
    spec:
      weight: 2
      capability: {nvidia.com/gpu: "16"}
    ---
    apiVersion: batch.volcano.sh/v1alpha1
    kind: Job
    metadata: {name: train, annotations: {gangkit/run-time: 1h}}
    spec:
      queue: research
      minAvailable: 5
      tasks:
      - {name: master, replicas: 1, minAvailable: 1, template: {spec: {containers: [...]}}}
      - {name: worker, replicas: 4, template: {spec: {containers: [...]}}}

What gangkit reads:

- ``scheduling.volcano.sh/v1beta1`` **Queue**: ``spec.weight`` (default 1),
  ``spec.capability`` (a resource left out is unlimited),
  ``spec.guarantee.resource``, ``spec.reclaimable`` (default true),
  ``spec.priority``. ``spec.deserved`` is read and reported: it belongs to
  Volcano's capacity plugin, which gangkit does not model (the proportion
  plugin computes the deserved share itself);
- ``batch.volcano.sh/v1alpha1`` **Job**: one pod set per task
  (``replicas`` pods, requests summed over containers, ``nodeSelector``),
  the task's ``minAvailable`` as the role's minimum (minTaskMember),
  ``spec.minAvailable`` as the gang size (default: the sum of the tasks'
  minAvailable, each defaulting to its replicas, as Volcano's webhook
  fills them in; a task's ``minAvailable`` above its replicas, or
  ``spec.minAvailable`` above the tasks' total replicas, is refused with
  the words of Volcano v1.15.1's job webhook,
  ``pkg/webhooks/admission/jobs/validate/admit_job.go``: unlike a PodGroup
  over too few pods, such a Job never reaches the cluster), ``spec.queue`` (default ``default``),
  ``spec.priorityClassName``; gangkit's annotations (run time, submit time,
  progress, checkpoint interval) as on a batch/v1 Job. Its pods exist only
  once the PodGroup is Inqueue (see :mod:`gangkit.volcano.actions.enqueue`);
- on a ``PodGroup`` joined to a batch/v1 Job: ``spec.queue`` and
  ``spec.minResources``;
- ``volcano.sh/preemptable`` (annotation, else label; read as Volcano
  v1.15.1 reads it, :func:`read_preemptable`), into
  ``Job.volcano_not_preemptable``: a pod set is not preemptable when its pods
  say ``false`` (a pod without it is preemptable) or its PodGroup says
  ``false`` (the gang actions ask both, see
  :mod:`gangkit.volcano.actions.preempt`). A Volcano Job's own annotation and
  label are copied by its controller onto every pod, over the task
  template's (``createJobPod``, ``pkg/controllers/job/job_controller_util.go``),
  and onto its PodGroup with all its other annotations and labels
  (``createOrUpdatePodGroup``, ``job_controller_actions.go``); a task
  template's reaches only that task's pods. A batch/v1 Job's pods carry
  their template's; its PodGroup, what the PodGroup itself says.
- ``volcano.sh/sla-waiting-time`` (else ``sla-waiting-time``), an annotation
  of a Volcano Job (its controller copies it onto the PodGroup) or of a
  PodGroup, into ``Job.sla_waiting_time`` (:func:`read_sla_waiting_time`):
  what the sla plugin reads, when the setup enables it
  (:mod:`gangkit.volcano.plugins.sla`).

``spec.policies`` (of the Job and its tasks) are checked with the rules of
Volcano's job webhook (:func:`_policies`: a duplicated event, an event beside
an exit code... deny the Job), then, with ``maxRetry`` and ``plugins``, not modelled: gangkit's sync jobs restart as a whole when they
lose a pod, which is what ``PodEvicted: RestartJob`` asks for. Fields
gangkit does not know join the one warning about unread fields.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any, NamedTuple

from gangkit.model.jobs import PROGRESS_MODES, Job, PodSet
from gangkit.model.quantity import format_cpu, format_memory
from gangkit.model.reading import (
    ANY,
    CHECKPOINT_INTERVAL,
    GPU,
    JOB_ANNOTATIONS,
    META,
    POD_SPEC,
    PROGRESS,
    RUN_TIME,
    SUBMIT_TIME,
    ManifestObject,
    Reader,
    new_object,
    short,
    spec_of,
)
from gangkit.model.resources import INFINITE, ZERO, Resources
from gangkit.volcano.api import DEFAULT_QUEUE, Queue, VolcanoSetup
from gangkit.volcano.plugins.sla import ANNOTATIONS as SLA_ANNOTATIONS
from gangkit.volcano.setup_manifests import config_manifest, go_waiting_time, read_config

QUEUE_API = "scheduling.volcano.sh/v1beta1"
JOB_API = "batch.volcano.sh/v1alpha1"
PREEMPTABLE = "volcano.sh/preemptable"  # Volcano's annotation (or label) on a pod or PodGroup: may it be a victim?
#: the strings Go's strconv.ParseBool accepts, which Volcano uses to read PREEMPTABLE
GO_BOOLS = {**dict.fromkeys(("1", "t", "T", "TRUE", "true", "True"), True),
            **dict.fromkeys(("0", "f", "F", "FALSE", "false", "False"), False)}
NAMESPACED = ("VolcanoJob", "ConfigMap")  # VolcanoJob: the role of a batch.volcano.sh Job (gangkit.manifests.kinds)

_RESOURCES = {"*": ANY}
_TASK = {
    "name": ANY, "replicas": ANY, "minAvailable": ANY, "policies": ANY, "maxRetry": ANY,
    "template": {"metadata": dict.fromkeys(["name", "namespace", "labels", "annotations", "finalizers"], ANY),
                 "spec": POD_SPEC},
}
KNOWN_FIELDS = {
    "ConfigMap": {"apiVersion": ANY, "kind": ANY, "metadata": META, "data": ANY, "binaryData": ANY, "immutable": ANY},
    "Queue": {
        "apiVersion": ANY, "kind": ANY, "metadata": META, "status": ANY,
        "spec": {"weight": ANY, "capability": _RESOURCES, "deserved": _RESOURCES,
                 "guarantee": {"resource": _RESOURCES}, "reclaimable": ANY, "priority": ANY},
    },
    "VolcanoJob": {
        "apiVersion": ANY, "kind": ANY, "metadata": META, "status": ANY,
        "spec": {"minAvailable": ANY, "queue": ANY, "priorityClassName": ANY, "schedulerName": ANY,
                 "policies": ANY, "maxRetry": ANY, "plugins": ANY, "ttlSecondsAfterFinished": ANY,
                 "tasks": [_TASK]},
    },
}


def read_object(r: Reader, doc: Mapping, where: str, role: str) -> ManifestObject | None:
    """Check one Volcano object's metadata and report its unread fields (the registry calls it)."""
    kind = role
    meta = doc.get("metadata") if isinstance(doc.get("metadata"), Mapping) else {}
    o = new_object(doc, where, kind)
    if not isinstance(doc.get("metadata"), Mapping):
        r.error(o.label, "metadata", "expected a mapping with at least a name")
        return None
    if not isinstance(meta.get("name"), str) or not o.name:
        r.error(o.label, "metadata.name", f"expected a non-empty name, got {short(meta.get('name'))}")
        return None
    if kind not in NAMESPACED:
        o.namespace = None  # a Queue is cluster-scoped
    elif meta.get("namespace") is not None and (not isinstance(o.namespace, str) or not o.namespace):
        r.error(o.label, "metadata.namespace", f"expected a non-empty string, got {short(meta.get('namespace'))}")
        return None
    if not r.find_unknown(o.doc, KNOWN_FIELDS[kind], o.label, ""):
        return None  # a name that is not a string: reported, and not read further
    annotations = meta.get("annotations") if isinstance(meta.get("annotations"), Mapping) else {}
    for key in annotations:
        if str(key).startswith("gangkit/") and (kind != "VolcanoJob" or key not in JOB_ANNOTATIONS):
            r.unknown.append(f"{o.label}: metadata.annotations.{key}")
    return o


def read_for_scenario(r: Reader, objects: list[ManifestObject], jobs: list[Job], groups: dict, used_groups: dict,
                      classes: dict[str, int], default_priority: int) -> VolcanoSetup | None:
    """Queues and Volcano Jobs of the input; the queue and minResources of PodGroups joined to batch/v1 Jobs.

    Volcano Jobs are appended to ``jobs``. Returns None when the input has no
    Volcano Queue, no Volcano Job and no PodGroup naming a queue (then the
    ``gang`` layer runs with the one ``default`` queue, as before).
    """
    queues = [q for q in (_queue(r, o) for o in objects if o.kind == "Queue") if q is not None]
    known = {q.name for q in queues} | {DEFAULT_QUEUE}
    uses_volcano = bool(queues)
    by_key = {j.key: j for j in jobs}
    for (namespace, group_name), job_label in used_groups.items():
        group = groups[(namespace, group_name)]
        spec = spec_of(group)  # a spec that is no mapping was reported with the PodGroup (gangkit.manifests.core)
        j = by_key.get(job_label.split(" ", 1)[1])
        if j is None:
            continue
        if "queue" in spec:
            if _queue_name(r, spec["queue"], known, group.label, "spec.queue") is not None:
                j.volcano_queue = spec["queue"]
                uses_volcano = uses_volcano or spec["queue"] != DEFAULT_QUEUE
        if "minResources" in spec:
            j.min_resources = _resources(r, spec["minResources"], group.label, "spec.minResources", ZERO)
            uses_volcano = True
        if read_preemptable(r, group.doc.get("metadata"), group.label, "metadata") is False:
            j.volcano_not_preemptable = tuple(ps.name for ps in j.pod_sets)  # the gang actions skip the whole job
        meta = group.doc.get("metadata")
        group_annotations = meta.get("annotations") if isinstance(meta, Mapping) else None
        if isinstance(group_annotations, Mapping):
            j.sla_waiting_time = read_sla_waiting_time(r, group_annotations, group.label)
    for o in objects:
        if o.kind == "VolcanoJob":
            j = _volcano_job(r, o, classes, default_priority, known)
            uses_volcano = True
            if j is not None:
                jobs.append(j)
    for o in objects:
        if o.kind == "Queue" and isinstance(o.doc.get("spec"), Mapping) and "deserved" in o.doc["spec"]:
            r.notes.append(f"{o.label}: spec.deserved is read by Volcano's capacity plugin, which gangkit does not "
                           "model; the proportion plugin computes each queue's deserved share from the weights")
    config = read_config(r, [o for o in objects if o.kind == "ConfigMap"])  # Volcano's scheduler configuration
    if config is not None:
        return VolcanoSetup(queues, **config)
    return VolcanoSetup(queues) if uses_volcano else None


#: The lifecycle policy events and actions Volcano's job webhook lets users write (pkg/webhooks/admission/jobs/
#: validate/util.go, policyEventMap and policyActionMap, Volcano of 2026-08: the others are internal).
POLICY_EVENTS = ("*", "PodFailed", "PodEvicted", "PodPending", "Unknown", "TaskCompleted", "TaskFailed", "JobUpdated")
POLICY_ACTIONS = ("AbortJob", "RestartJob", "RestartTask", "RestartPod", "RestartPartition", "TerminateJob",
                  "CompleteJob", "ResumeJob")


def _policies(r: Reader, policies: Any, obj: str, where: str) -> bool:
    """Volcano's webhook rules for a Job's (or task's) ``policies`` (``validatePolicies``); False after a denial.

    Each policy names an event (``event`` or ``events``) or an ``exitCode``, never both; an event
    appears in one policy only, ``*`` in none with others; an exit code is not 0 and appears once.
    The policies themselves are not modelled (see the module).
    """
    if policies is None:
        return True
    if not isinstance(policies, list):
        r.error(obj, where, f"expected a list of policies, got {short(policies)}")
        return False
    events: set = set()
    codes: set = set()
    for i, policy in enumerate(policies):
        here = f"{where}[{i}]"
        if not isinstance(policy, Mapping):
            r.error(obj, here, f"expected a mapping (a policy), got {short(policy)}")
            return False
        named = ([policy["event"]] if policy.get("event") else []) + list(policy.get("events") or [])
        code = policy.get("exitCode")
        if named and code is not None:
            r.error(obj, here, "must not specify event and exitCode simultaneously (Volcano's webhook)")
            return False
        if not named and code is None:
            r.error(obj, here, "either event and exitCode should be specified (Volcano's webhook)")
            return False
        for event in named:
            if event not in POLICY_EVENTS:
                r.error(obj, f"{here}.event", f"invalid policy event {short(event)}; expected one of {', '.join(POLICY_EVENTS)}")
                return False
            if policy.get("action") not in POLICY_ACTIONS:
                r.error(obj, f"{here}.action", f"invalid policy action {short(policy.get('action'))}; expected one of "
                        f"{', '.join(POLICY_ACTIONS)}")
                return False
            if event in events:
                r.error(obj, f"{here}.event", f"duplicate event {event} across different policy (Volcano's webhook "
                        "denies the Job)")
                return False
            events.add(event)
        if code is not None:
            if code == 0:
                r.error(obj, f"{here}.exitCode", "0 is not a valid error code (Volcano's webhook)")
                return False
            if code in codes:
                r.error(obj, f"{here}.exitCode", f"duplicate exitCode {code} (Volcano's webhook)")
                return False
            codes.add(code)
    if "*" in events and len(events) > 1:
        r.error(obj, where, "if there's * here, no other policy should be here (Volcano's webhook)")
        return False
    return True


HIERARCHY = ("volcano.sh/hierarchy", "volcano.sh/hierarchy-weights")  # the drf plugin's hierarchical queues


def _queue(r: Reader, o: ManifestObject) -> Queue | None:
    obj = o.label
    spec = r.mapping(o.doc.get("spec"), obj, "spec")
    annotations = r.strings(r.mapping(o.doc.get("metadata"), obj, "metadata").get("annotations"), obj,
                            "metadata.annotations")
    found = [k for k in HIERARCHY if k in annotations]
    if found:
        r.notes.append(f"{obj}: {', '.join(f'metadata.annotations.{k}' for k in found)} not modelled: gangkit's "
                       "proportion plugin shares the cluster among flat queues, by spec.weight (Volcano's drf "
                       "plugin with hierarchy enabled would share along the hierarchy)")
    weight = r.whole(spec.get("weight", 1), obj, "spec.weight", 1)
    if weight is not None and weight > 65535:
        r.error(obj, "spec.weight", f"expected a whole number from 1 to 65535, got {weight}")
        weight = None
    capability = _resources(r, spec["capability"], obj, "spec.capability", INFINITE) if "capability" in spec else None
    guarantee_spec = r.mapping(spec.get("guarantee"), obj, "spec.guarantee")
    guarantee = (_resources(r, guarantee_spec["resource"], obj, "spec.guarantee.resource", ZERO)
                 if "resource" in guarantee_spec else ZERO)
    deserved = _resources(r, spec["deserved"], obj, "spec.deserved", ZERO) if "deserved" in spec else None
    reclaimable = spec.get("reclaimable", True)
    if not isinstance(reclaimable, bool):
        r.error(obj, "spec.reclaimable", f"expected true or false, got {reclaimable!r}")
    priority = spec.get("priority", 0)
    if isinstance(priority, bool) or not isinstance(priority, int):
        r.error(obj, "spec.priority", f"expected a whole number, got {priority!r}")
        priority = 0
    if weight is None or guarantee is None or (capability is None and "capability" in spec):
        return None
    q = Queue(o.name, weight=weight, capability=capability, guarantee=guarantee, deserved=deserved,
              priority=priority, reclaimable=bool(reclaimable))
    r.problems.extend(q.problems())
    return q


def _resources(r: Reader, value: Any, obj: str, field: str, missing: Resources) -> Resources | None:
    """A resource list (``{nvidia.com/gpu: "8", cpu: "32", memory: 128Gi}``); a resource left out is ``missing``'s."""
    items = r.mapping(value, obj, field)
    out = dict(zip(("gpus", "cpu", "memory"), missing))
    ok = True
    for name, key, parse in ((GPU, "gpus", r.gpus), ("cpu", "cpu", r.cpu), ("memory", "memory", r.memory)):
        if name in items:
            v = parse(items[name], obj, f"{field}.{name}")
            ok = ok and v is not None
            out[key] = math.nan if v is None else float(v)
    for name in items:
        if name not in (GPU, "cpu", "memory"):
            r.unknown.append(f"{obj}: {field}.{name}")
    return Resources(**out) if ok else None


def _queue_name(r: Reader, value: Any, known: set[str], obj: str, field: str) -> str | None:
    """Volcano's admission webhook refuses a job whose queue does not exist."""
    if not isinstance(value, str) or not value:
        r.error(obj, field, f"expected a queue name, got {value!r}")
        return None
    if value not in known:
        r.error(obj, field, f"names Queue {value!r}, which is not in the input (queues: {', '.join(sorted(known))})")
        return None
    return value


def _volcano_job(r: Reader, o: ManifestObject, classes: dict, default_priority: int, known: set[str]) -> Job | None:
    """A ``batch.volcano.sh`` Job: its tasks, its gang size, policies, queue, priority, timing and preemptability."""
    obj = o.label
    meta = r.mapping(o.doc.get("metadata"), obj, "metadata")
    labels = r.strings(meta.get("labels"), obj, "metadata.labels")
    annotations = r.strings(meta.get("annotations"), obj, "metadata.annotations")
    spec = r.mapping(o.doc.get("spec"), obj, "spec")
    tasks = spec.get("tasks")
    if not isinstance(tasks, list) or not tasks:
        r.error(obj, "spec.tasks", "expected a list of at least one task")
        return None
    read = _read_tasks(r, obj, meta, tasks)
    min_available, ok = _gang_size(r, obj, spec, read)
    ok = _policies(r, spec.get("policies"), obj, "spec.policies") and ok
    ok = _task_priority_classes(r, obj, tasks, classes) and ok
    for i, task in enumerate(tasks):
        if isinstance(task, Mapping):
            ok = _policies(r, task.get("policies"), obj, f"spec.tasks[{i}].policies") and ok
    queue = _queue_name(r, spec.get("queue", DEFAULT_QUEUE), known, obj, "spec.queue")
    priority, ok = _job_priority(r, obj, spec, classes, default_priority, ok)
    run_time, checkpoint, progress = _timing(r, obj, annotations)
    protected = read.protected
    if read_preemptable(r, meta, obj, "metadata", checked=True) is False:  # its PodGroup gets these too
        protected = [ps.name for ps in read.pod_sets]
    sla_waiting_time = read_sla_waiting_time(r, annotations, obj)  # its PodGroup gets the Job's annotations
    if not ok or queue is None:
        return None
    return Job(
        name=o.name, namespace=o.namespace, pod_sets=read.pod_sets,
        run_time=run_time,  # None for now: the default is filled in (and reported) with the other Jobs'
        submit_time=_annotation_duration(r, obj, annotations, SUBMIT_TIME) or 0.0, priority=priority,
        queue=o.namespace or "default", progress=progress,
        min_member=min_available if min_available is not None else read.min_total,
        checkpoint_interval=checkpoint, labels=labels,
        volcano_queue=queue, controller="volcano", volcano_not_preemptable=tuple(protected),
        sla_waiting_time=sla_waiting_time,
    )


class _Tasks(NamedTuple):
    """A Volcano Job's tasks as read: one pod set each, whether all were read, the sum of their minimums (the
    gang size when ``spec.minAvailable`` is not given) and the tasks whose pods are not preemptable."""

    pod_sets: list[PodSet]
    ok: bool
    min_total: int
    protected: list[str]


def _read_tasks(r: Reader, obj: str, meta: Mapping, tasks: list) -> _Tasks:
    """``spec.tasks``: each a unique name (Volcano's webhook names an unnamed task ``default<i>``), ``replicas``
    pods of the template's requests, ``minAvailable`` (at most the replicas; default: all of them)."""
    pod_sets, ok, names = [], True, set()
    task_min_total = 0
    protected: list[str] = []  # tasks whose pods are not preemptable
    for i, task in enumerate(tasks):
        where = f"spec.tasks[{i}]"
        task = r.mapping(task, obj, where)
        name = task.get("name", f"default{i}")  # Volcano's webhook names an unnamed task default<i>
        if not isinstance(name, str) or not name or name in names:
            r.error(obj, f"{where}.name", f"expected a unique non-empty task name, got {short(name)}")
            ok = False
        else:
            names.add(name)
        replicas = r.whole(task.get("replicas", 0), obj, f"{where}.replicas", 1)
        minimum = task.get("minAvailable")
        if minimum is not None:
            minimum = r.whole(minimum, obj, f"{where}.minAvailable", 0)
            if minimum is not None and replicas is not None and minimum > replicas:
                r.error(obj, f"{where}.minAvailable", f"expected at most the task's replicas ({replicas}), got {minimum}: "
                        f"Volcano's job webhook refuses it (\"'minAvailable' is greater than 'replicas' in task: "
                        f"{name}, job: {meta.get('name')}\")")
                minimum = None
        template = r.mapping(task.get("template"), obj, f"{where}.template")
        pod = r.mapping(template.get("spec"), obj, f"{where}.template.spec")
        before = len(r.problems)
        request = r.pod_request(pod, obj)
        r.problems[before:] = [dataclasses.replace(p, field=p.field.replace("spec.template", f"{where}.template", 1))
                               for p in r.problems[before:]]
        selector = r.strings(pod.get("nodeSelector"), obj, f"{where}.template.spec.nodeSelector")
        if replicas is None or request is None:
            ok = False
            continue
        task_min_total += replicas if minimum is None else minimum
        g, cpu, memory = request
        pod_sets.append(PodSet(name, replicas, g, cpu, memory, selector, min_member=minimum))
        if not _pod_preemptable(r, meta, template.get("metadata"), obj, f"{where}.template.metadata"):
            protected.append(name)
    return _Tasks(pod_sets, ok, task_min_total, protected)


def _gang_size(r: Reader, obj: str, spec: Mapping, read: _Tasks) -> tuple[int | None, bool]:
    """``spec.minAvailable`` (None when not given or refused): at least 1, at most the tasks' total replicas."""
    ok = read.ok
    min_available = spec.get("minAvailable")
    if min_available is not None:
        min_available = r.whole(min_available, obj, "spec.minAvailable", 1)
        total = sum(ps.count for ps in read.pod_sets)
        if ok and min_available is not None and min_available > total:
            r.error(obj, "spec.minAvailable", f"expected at most the total replicas of the tasks ({total}), got "
                    f"{min_available}: Volcano's job webhook refuses it (\"job 'minAvailable' should not be greater "
                    "than total replicas in tasks\")")
            ok = False
    return min_available, ok


def _task_priority_classes(r: Reader, obj: str, tasks: list, classes: dict) -> bool:
    """A task's own ``priorityClassName``: a PriorityClass of the input, noted as not modelled (False: one is not)."""
    ok = True
    for i, task in enumerate(tasks):  # a task's own priorityClassName: its pods' priority
        pc = task.get("template", {}).get("spec", {}).get("priorityClassName") if isinstance(task, Mapping) and \
            isinstance(task.get("template"), Mapping) and isinstance(task["template"].get("spec"), Mapping) else None
        if pc is None:
            continue
        where = f"spec.tasks[{i}].template.spec.priorityClassName"
        if not isinstance(pc, str) or pc not in classes:
            r.error(obj, where, f"no PriorityClass named {short(pc)} in the input (known: {', '.join(sorted(classes))})")
            ok = False
        else:
            r.notes.append(f"{obj}: {where} ({pc}) is not modelled: Volcano orders and preempts this task's pods "
                           "by it; gangkit gives every pod the Job's priority (spec.priorityClassName)")
    return ok


def _job_priority(r: Reader, obj: str, spec: Mapping, classes: dict, default: int, ok: bool) -> tuple[int, bool]:
    """The Job's ``spec.priorityClassName``: the value of a PriorityClass of the input, else the default class's."""
    if "priorityClassName" not in spec:
        return default, ok
    pc = spec["priorityClassName"]
    if not isinstance(pc, str) or pc not in classes:
        r.error(obj, "spec.priorityClassName", f"no PriorityClass named {pc!r} in the input (known: {', '.join(sorted(classes))})")
        return default, False
    return classes[pc], ok


def _annotation_duration(r: Reader, obj: str, annotations: Mapping, key: str) -> float | None:
    if key not in annotations:
        return None
    return r.duration(annotations[key], obj, f"metadata.annotations.{key}")


def _timing(r: Reader, obj: str, annotations: Mapping) -> tuple[float | None, float | None, str]:
    """gangkit's annotations on the Job, as on a batch/v1 Job: run time, checkpoint interval, progress mode."""
    run_time = _annotation_duration(r, obj, annotations, RUN_TIME)
    if run_time == 0:
        r.error(obj, f"metadata.annotations.{RUN_TIME}", f"expected a run time > 0, got {annotations[RUN_TIME]!r}")
    checkpoint = _annotation_duration(r, obj, annotations, CHECKPOINT_INTERVAL)
    if checkpoint == 0:
        r.error(obj, f"metadata.annotations.{CHECKPOINT_INTERVAL}", "expected an interval > 0 (leave it out for no checkpoints)")
    progress = annotations.get(PROGRESS, "sync")
    if progress not in PROGRESS_MODES:
        r.error(obj, f"metadata.annotations.{PROGRESS}", f"expected one of {', '.join(PROGRESS_MODES)}, got {progress!r}")
    return run_time, checkpoint, progress


def read_sla_waiting_time(r: Reader, annotations: Mapping, obj: str) -> float | None:
    """The sla plugin's waiting time from a PodGroup's (or Volcano Job's) annotations, in seconds (None: none).

    ``volcano.sh/sla-waiting-time`` is read first, then ``sla-waiting-time``
    (Volcano v1.15.1 ``pkg/scheduler/api/job_info.go``, ``SetPodGroup``). Volcano
    parses it with Go's ``time.ParseDuration`` and ignores, with a log line, a
    value that does not parse or is not above zero; gangkit reports it instead.
    """
    for key in SLA_ANNOTATIONS:
        if key not in annotations:
            continue
        return go_waiting_time(r, obj, f"metadata.annotations.{key}", annotations[key])
    return None


def read_preemptable(r: Reader, metadata: Any, obj: str, where: str, checked: bool = False) -> bool | None:
    """Volcano's ``volcano.sh/preemptable`` in an object's ``metadata``: the annotation, else the label; None if neither.

    As Volcano v1.15.1 reads it for a pod (``GetPodPreemptable``,
    ``pkg/scheduler/api/pod_info.go``) and a PodGroup (``extractPreemptable``,
    ``job_info.go``): the annotation wins when both are there, the value is
    read with Go's ``strconv.ParseBool``. Volcano logs a warning for any
    other value and takes the object as not preemptable; gangkit refuses it.
    ``checked``: a value that is not a string was already reported where
    the labels and annotations are read (:meth:`Reader.strings`).
    """
    metadata = metadata if isinstance(metadata, Mapping) else {}
    for part in ("annotations", "labels"):
        values = metadata.get(part)
        if not isinstance(values, Mapping) or PREEMPTABLE not in values:
            continue
        value, fieldname = values[PREEMPTABLE], f"{where}.{part}.{PREEMPTABLE}"
        if isinstance(value, str) and value in GO_BOOLS:
            return GO_BOOLS[value]
        if isinstance(value, str):
            r.error(obj, fieldname, f"expected \"true\" or \"false\" (or another value Go's strconv.ParseBool "
                    f"reads: {', '.join(GO_BOOLS)}), got {value!r}; Volcano would take it as not preemptable")
        elif not checked:
            r.error(obj, fieldname, f"expected a string, got {value!r} (quote it in YAML: \"{value}\")")
        return None
    return None


def _pod_preemptable(r: Reader, job_meta: Mapping, template_meta: Any, obj: str, where: str) -> bool:
    """Whether a task's pods are preemptable (a pod that says nothing is, Volcano's default).

    The pod's annotation is the Job's if the Job has one, else the
    template's, and it wins over the pod's label (the Job's, else the
    template's). A bad value of the Job's is reported once, at the Job.
    """
    template_meta = template_meta if isinstance(template_meta, Mapping) else {}
    for part in ("annotations", "labels"):
        from_job = job_meta.get(part) if isinstance(job_meta.get(part), Mapping) else {}
        if PREEMPTABLE in from_job:
            return GO_BOOLS.get(from_job[PREEMPTABLE], True) if isinstance(from_job[PREEMPTABLE], str) else True
        own = template_meta.get(part) if isinstance(template_meta.get(part), Mapping) else {}
        if PREEMPTABLE in own:
            return read_preemptable(r, {part: own}, obj, where) is not False
    return True


__all__ = ["GO_BOOLS", "KNOWN_FIELDS", "PREEMPTABLE", "pod_group_fields", "queue_manifests", "read_for_scenario", "read_object", "read_preemptable"]


# --- writing (called by gangkit.manifests.dump.dump_manifests) ---------------------------------------


def queue_manifests(setup: VolcanoSetup | None) -> list[dict]:
    """The declared Queues (Volcano's ``default`` queue exists anyway and is written only if declared), and the
    scheduler's ConfigMap when the setup is not Volcano's default configuration
    (:func:`gangkit.volcano.setup_manifests.config_manifest`)."""
    config = config_manifest(setup)
    docs = [] if config is None else [config]
    for q in (setup.queues if setup is not None else ()):
        spec: dict[str, Any] = {"weight": q.weight}
        if q.capability is not None:
            spec["capability"] = _resource_list(q.capability)
        if q.deserved is not None:
            spec["deserved"] = _resource_list(q.deserved)
        if not q.guarantee.is_empty():
            spec["guarantee"] = {"resource": _resource_list(q.guarantee)}
        spec["reclaimable"] = q.reclaimable
        if q.priority:
            spec["priority"] = q.priority
        docs.append({"apiVersion": QUEUE_API, "kind": "Queue", "metadata": {"name": q.name}, "spec": spec})
    return docs


def pod_group_fields(j: Job) -> dict:
    """What a batch/v1 Job's PodGroup says beyond minMember: its queue and minResources."""
    out: dict[str, Any] = {}
    if j.volcano_queue != DEFAULT_QUEUE:
        out["queue"] = j.volcano_queue
    if j.min_resources is not None:
        out["minResources"] = _resource_list(j.min_resources)
    return out


def _resource_list(r: Resources) -> dict[str, str]:
    out = {}
    if math.isfinite(r.gpus) and (r.gpus or (math.isinf(r.cpu) and math.isinf(r.memory))):
        out[GPU] = f"{r.gpus:g}"
    if math.isfinite(r.cpu) and r.cpu:
        out["cpu"] = format_cpu(r.cpu)
    if math.isfinite(r.memory) and r.memory:
        out["memory"] = format_memory(int(r.memory))
    return out
