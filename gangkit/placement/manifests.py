"""How a Job's manifests name its gang, for the holding gang schedulers.

Each gang scheduler has its own way of saying "these pods start together":

- scheduler-plugins Coscheduling: a ``scheduling.x-k8s.io/v1alpha1``
  **PodGroup** (``spec.minMember``, ``spec.scheduleTimeoutSeconds``), joined
  by the pod label ``scheduling.x-k8s.io/pod-group: <name>``;
- YuniKorn: annotations on the pod template:
  ``yunikorn.apache.org/task-groups`` (a JSON list of task groups, each with
  ``name``, ``minMember``, ``minResource``...),
  ``yunikorn.apache.org/task-group-name`` (the group these pods belong to)
  and ``yunikorn.apache.org/schedulingPolicyParameters``
  (``"placeholderTimeoutInSeconds=60 gangSchedulingStyle=Hard"``);
- Kubernetes 1.35: a ``scheduling.k8s.io/v1alpha1`` **Workload** listing
  ``spec.podGroups`` (each with ``policy.gang.minCount`` or ``policy.basic``),
  joined by the pod's ``spec.workloadRef`` (``name``, ``podGroup``).

(Volcano's PodGroup and its ``scheduling.k8s.io/group-name`` annotation are
read in :mod:`gangkit.manifests.core`.) gangkit models one gang per Job: a Job
naming two gangs is an error. The registry (:mod:`gangkit.manifests.kinds`)
sends these kinds here by ``(apiVersion, kind)``; the Job reader calls
:func:`read_gang` for each Job.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from gangkit.manifests.reader import ANY, GPU, META, ManifestObject, Reader, is_whole, spec_of
from gangkit.model.jobs import BATCH_JOB, GANG_STYLES
from gangkit.model.quantity import format_cpu, format_memory
from gangkit.model.resources import Resources

POD_GROUP_LABEL = "scheduling.x-k8s.io/pod-group"  # scheduler-plugins: the pod's PodGroup
TASK_GROUPS = "yunikorn.apache.org/task-groups"
TASK_GROUP_NAME = "yunikorn.apache.org/task-group-name"
SCHEDULING_POLICY = "yunikorn.apache.org/schedulingPolicyParameters"
YUNIKORN_PARAMETERS = ("placeholderTimeoutInSeconds", "gangSchedulingStyle")
COSCHEDULING_API = "scheduling.x-k8s.io/v1alpha1"
WORKLOAD_API = "scheduling.k8s.io/v1alpha1"

#: Known fields per role, the name the registry groups these objects under (``minResources`` is not known:
#: gangkit does not model its PreFilter check).
KNOWN_FIELDS = {
    "CoschedulingPodGroup": {"apiVersion": ANY, "kind": ANY, "metadata": META, "status": ANY,
                             "spec": dict.fromkeys(["minMember", "scheduleTimeoutSeconds"], ANY)},
    "KubeWorkload": {"apiVersion": ANY, "kind": ANY, "metadata": META,
                     "spec": {"controllerRef": ANY,
                              "podGroups": [{"name": ANY, "policy": {"basic": ANY, "gang": {"minCount": ANY}}}]}},
}
WORKLOAD_POD_GROUP = "workers"  # the pod group name gangkit writes into a Workload
WORKLOAD_REF = {"name": ANY, "podGroup": ANY}  # the pod's spec.workloadRef (podGroupReplicaKey is not modelled)


def read_object(r: Reader, doc: Mapping, where: str, role: str) -> ManifestObject | None:
    """Check one coscheduling PodGroup or Kubernetes Workload (its metadata and unknown fields).

    A scheduler-plugins PodGroup's ``spec.minMember`` is checked here, used
    by a Job or not: its CRD (``scheduling.x-k8s.io_podgroups.yaml``,
    scheduler-plugins master of 2026-08) makes it an int32 with ``minimum: 1``.
    """
    o = r.check_object(doc, where, KNOWN_FIELDS[role])
    if o is not None and role == "CoschedulingPodGroup":
        r.spec_count(o, "minMember", 1)
    return o


@dataclass
class GangObjects:
    """The coscheduling PodGroups and Workloads of the input, by (namespace, name), and who uses them."""

    pod_groups: dict = field(default_factory=dict)
    workloads: dict = field(default_factory=dict)
    used: dict = field(default_factory=dict)  # (role, namespace, name) -> the Job using it

    @classmethod
    def collect(cls, by_role: Mapping[str, list]) -> "GangObjects":
        key = lambda o: (o.namespace or "default", o.name)  # noqa: E731
        return cls({key(o): o for o in by_role.get("CoschedulingPodGroup", ()) if o.name},
                   {key(o): o for o in by_role.get("KubeWorkload", ()) if o.name})

    def unused(self) -> list[str]:
        notes = []
        for role, objects, how in (("CoschedulingPodGroup", self.pod_groups, f"label {POD_GROUP_LABEL}"),
                                   ("KubeWorkload", self.workloads, "spec.workloadRef")):
            for (ns, name), o in objects.items():
                if (role, ns, name) not in self.used:
                    notes.append(f"{o.label} ({o.doc.get('apiVersion')}) is not used: no Job's pod template names it in {how}")
        return notes


def read_gang(r: Reader, gangs: GangObjects, o: ManifestObject, pods: int | None, tmeta: dict, pod: dict,
              volcano: bool) -> dict:
    """The gang fields of one Job (``min_member``, ``schedule_timeout``, ``placeholder_timeout``, ``gang_style``).

    ``gangs`` are the input's PodGroups and Workloads (the ones used are
    recorded there); ``volcano``: the Job already names a Volcano PodGroup.
    Returns the fields to set (empty when the Job names none of these gangs).
    """
    obj = o.label
    namespace = o.namespace or "default"
    labels = r.strings(tmeta.get("labels"), obj, "spec.template.metadata.labels")
    annotations = r.strings(tmeta.get("annotations"), obj, "spec.template.metadata.annotations")
    found: list[tuple[str, dict]] = []

    if POD_GROUP_LABEL in labels:
        found.append((f"spec.template.metadata.labels.{POD_GROUP_LABEL}",
                      _pod_group(r, gangs, obj, namespace, labels[POD_GROUP_LABEL], pods)))
    if TASK_GROUPS in annotations or TASK_GROUP_NAME in annotations:
        found.append((f"spec.template.metadata.annotations.{TASK_GROUP_NAME}", _task_group(r, obj, annotations, pods, pod)))
    elif SCHEDULING_POLICY in annotations:
        r.error(obj, f"spec.template.metadata.annotations.{SCHEDULING_POLICY}",
                f"YuniKorn's scheduling policy parameters need task groups ({TASK_GROUPS} and {TASK_GROUP_NAME})")
    if pod.get("workloadRef") is not None:
        found.append(("spec.template.spec.workloadRef", _workload(r, gangs, obj, namespace, pod["workloadRef"], pods)))
    if volcano and found:
        found.insert(0, (f"the annotation {'scheduling.k8s.io/group-name'}", {}))
    if len(found) > 1:
        r.error(obj, found[1][0], f"names a second gang (it already has {found[0][0]}); gangkit models one gang per Job")
        return {}
    return found[0][1] if found else {}


def _pod_group(r: Reader, gangs: GangObjects, obj: str, namespace: str, name: str, pods: int | None) -> dict:
    where = f"spec.template.metadata.labels.{POD_GROUP_LABEL}"
    group = gangs.pod_groups.get((namespace, name))
    if group is None:
        r.error(obj, where, f"names PodGroup {name!r} ({COSCHEDULING_API}) in namespace {namespace!r}, which is not in the input")
        return {}
    if not _claim(r, gangs, "CoschedulingPodGroup", namespace, name, obj, where):
        return {}
    spec = spec_of(group)  # a spec that is no mapping, a minMember below 1: reported when the PodGroup was read
    out: dict[str, Any] = {}
    if spec.get("minMember") is not None and is_whole(spec["minMember"], 1):  # absent (the CRD's default): every pod
        out["min_member"] = _count(r, group.label, "spec.minMember", spec["minMember"], pods, obj)
    if spec.get("scheduleTimeoutSeconds") is not None:
        t = spec["scheduleTimeoutSeconds"]
        if isinstance(t, bool) or not isinstance(t, int) or t < 1:
            r.error(group.label, "spec.scheduleTimeoutSeconds", f"expected whole seconds >= 1, got {t!r}")
        else:
            out["schedule_timeout"] = float(t)
    return {k: v for k, v in out.items() if v is not None}


def _task_group(r: Reader, obj: str, annotations: dict, pods: int | None, pod: dict) -> dict:
    base = "spec.template.metadata.annotations."
    if TASK_GROUP_NAME not in annotations or TASK_GROUPS not in annotations:
        missing = TASK_GROUP_NAME if TASK_GROUP_NAME not in annotations else TASK_GROUPS
        r.error(obj, base + missing, "YuniKorn gang scheduling needs both task-groups and task-group-name")
        return {}
    try:
        groups = json.loads(annotations[TASK_GROUPS])
    except json.JSONDecodeError as e:
        r.error(obj, base + TASK_GROUPS, f"expected a JSON list of task groups: {e.msg} at character {e.pos}")
        return {}
    if not isinstance(groups, list) or not all(isinstance(g, Mapping) for g in groups):
        r.error(obj, base + TASK_GROUPS, f"expected a JSON list of task groups (objects), got {groups!r}")
        return {}
    name = annotations[TASK_GROUP_NAME]
    mine = [g for g in groups if g.get("name") == name]
    if not mine:
        names = ", ".join(repr(g.get("name")) for g in groups)
        r.error(obj, base + TASK_GROUP_NAME, f"names task group {name!r}, which is not among the task groups ({names})")
        return {}
    for g in groups:
        if g is not mine[0]:
            r.notes.append(f"{obj}: task group {g.get('name')!r} has no pods in this Job; gangkit models "
                           f"the Job's own task group {name!r} only")
    out: dict[str, Any] = {}
    m = _count(r, obj, base + f"{TASK_GROUPS}[{name}].minMember", mine[0].get("minMember"), pods, obj)
    if m is not None:
        out["min_member"] = m
    size = _min_resource(r, obj, base + f"{TASK_GROUPS}[{name}].minResource", mine[0].get("minResource"))
    request = Reader(r.label).pod_request(pod, obj)  # the pods' own (their problems are reported by the Job's reader)
    if size is not None and request is not None and size != request:
        out["placeholder_request"] = Resources(*size)
        r.notes.append(f"{obj}: task group {name!r} has minResource {_quantities(size)}, but its pods ask for "
                       f"{_quantities(request)}: YuniKorn sizes the placeholders by minResource, and a pod larger "
                       f"than them in any resource cancels them at the swap (its pods are then scheduled one by one)")
    for key, value in _parameters(r, obj, annotations.get(SCHEDULING_POLICY, "")).items():
        out[key] = value
    return out


#: The resources of a task group's minResource that gangkit models, and how each is read.
MIN_RESOURCE_READERS = {GPU: Reader.gpus, "cpu": Reader.cpu, "memory": Reader.memory}


def _min_resource(r: Reader, obj: str, where: str, value: Any) -> tuple[int, float, int] | None:
    """One placeholder's (GPUs, cores, bytes): the task group's ``minResource``, quantities by resource name.

    yunikorn-k8shim (``pkg/cache/utils.go``, ``GetTaskGroupsFromAnnotation``)
    refuses a task group without ``minResource``, with a quantity it cannot
    parse or below zero, or with ``pods`` (each placeholder counts as one
    pod). A resource left out is not asked for (0). Other resources are
    reported as not read.
    """
    if not isinstance(value, Mapping):
        got = "nothing" if value is None else f"{type(value).__name__} {value!r}"
        r.error(obj, where, f"expected the placeholders' requests, a mapping of resource name to quantity "
                            f"(YuniKorn's shim refuses a task group without minResource), got {got}")
        return None
    size: dict[str, Any] = {GPU: 0, "cpu": 0.0, "memory": 0}
    ok = True
    for key, quantity in value.items():
        if key in MIN_RESOURCE_READERS:
            size[key] = MIN_RESOURCE_READERS[key](r, quantity, obj, f"{where}.{key}")
            ok = ok and size[key] is not None
        elif key == "pods":
            r.error(obj, f"{where}.pods", "expected no pods count: every placeholder counts as one pod (YuniKorn's shim "
                                          "refuses pods in minResource)")
            ok = False
        else:
            r.unknown.append(f"{obj}: {where}.{key}")
    return (size[GPU], size["cpu"], size["memory"]) if ok else None


def _quantities(size: tuple) -> str:
    """``{nvidia.com/gpu: 1, cpu: 500m, memory: 2Gi}``: a request as a minResource would write it."""
    gpus, cpu, memory = size
    return "{" + ", ".join([f"{GPU}: {gpus}", f"cpu: {format_cpu(cpu)}", f"memory: {format_memory(memory)}"]) + "}"


def _parameters(r: Reader, obj: str, text: str) -> dict:
    """``"placeholderTimeoutInSeconds=60 gangSchedulingStyle=Hard"`` -> gangkit's fields."""
    where = f"spec.template.metadata.annotations.{SCHEDULING_POLICY}"
    out: dict[str, Any] = {}
    for item in text.split():
        key, sep, value = item.partition("=")
        if not sep:
            r.error(obj, where, f"expected key=value pairs separated by spaces, got {item!r}")
        elif key == "placeholderTimeoutInSeconds":
            if value.isdigit() and int(value) > 0:
                out["placeholder_timeout"] = float(value)
            else:
                r.error(obj, where, f"placeholderTimeoutInSeconds: expected whole seconds > 0, got {value!r}")
        elif key == "gangSchedulingStyle":
            if value in GANG_STYLES:
                out["gang_style"] = value
            else:
                r.error(obj, where, f"gangSchedulingStyle: expected one of {', '.join(GANG_STYLES)}, got {value!r}")
        else:
            r.unknown.append(f"{obj}: {where}: {key}")
    return out


def _workload(r: Reader, gangs: GangObjects, obj: str, namespace: str, ref: Any, pods: int | None) -> dict:
    where = "spec.template.spec.workloadRef"
    ref = r.mapping(ref, obj, where)
    name, group_name = ref.get("name"), ref.get("podGroup")
    if not isinstance(name, str) or not name or not isinstance(group_name, str) or not group_name:
        r.error(obj, where, f"expected name and podGroup (non-empty strings), got {dict(ref)!r}")
        return {}
    workload = gangs.workloads.get((namespace, name))
    if workload is None:
        r.error(obj, f"{where}.name", f"names Workload {name!r} ({WORKLOAD_API}) in namespace {namespace!r}, which is not in the input")
        return {}
    spec = r.mapping(workload.doc.get("spec"), workload.label, "spec")
    groups = spec.get("podGroups")
    if not isinstance(groups, list) or not groups:
        r.error(workload.label, "spec.podGroups", "expected a list of at least one pod group")
        return {}
    index = next((i for i, g in enumerate(groups) if isinstance(g, Mapping) and g.get("name") == group_name), None)
    if index is None:
        r.error(obj, f"{where}.podGroup", f"names pod group {group_name!r}, which Workload {name!r} does not list")
        return {}
    if not _claim(r, gangs, "KubeWorkload", namespace, f"{name}/{group_name}", obj, where):
        return {}
    gangs.used[("KubeWorkload", namespace, name)] = obj
    policy = r.mapping(groups[index].get("policy"), workload.label, f"spec.podGroups[{index}].policy")
    if ("gang" in policy) == ("basic" in policy):
        r.error(workload.label, f"spec.podGroups[{index}].policy", "expected exactly one of gang or basic")
        return {}
    if "basic" in policy:
        return {"min_member": 1}  # pods are scheduled one by one
    gang = r.mapping(policy.get("gang"), workload.label, f"spec.podGroups[{index}].policy.gang")
    m = _count(r, workload.label, f"spec.podGroups[{index}].policy.gang.minCount", gang.get("minCount"), pods, obj)
    return {} if m is None else {"min_member": m}


def _claim(r: Reader, gangs: GangObjects, role: str, namespace: str, name: str, obj: str, where: str) -> bool:
    key = (role, namespace, name)
    if key in gangs.used:
        r.error(obj, where, f"{name!r} is already used by {gangs.used[key]}; gangkit models one gang per Job")
        return False
    gangs.used[key] = obj
    return True


def _count(r: Reader, owner: str, where: str, value: Any, pods: int | None, job: str) -> int | None:
    """A gang size: a whole number from 1 to the Job's pod count."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1 or (pods is not None and value > pods):
        top = f"{pods} (the pod count of {job})" if pods is not None else "the pod count"
        r.error(owner, where, f"expected a whole number from 1 to {top}, got {value!r}")
        return None
    return value


# --- writing back (dump_manifests) ---------------------------------------------

#: The ``schedulerName`` a Job's pods need for the placement layer of a stack, where it is not
#: Kubernetes' ``default-scheduler``: Volcano's scheduler answers only to ``volcano`` (Volcano v1.15,
#: the scheduler's ``--scheduler-name`` default); scheduler-plugins installed as a second scheduler
#: answers to ``scheduler-plugins-scheduler`` (its install guide's profile name). YuniKorn's admission
#: controller rewrites ``default-scheduler`` pods itself, and Kubernetes' GangScheduling plugin runs in
#: the default scheduler, so neither needs the field.
SCHEDULER_NAMES = {"gang": "volcano", "coscheduling": "scheduler-plugins-scheduler"}


def scheduler_name(stack: str) -> str | None:
    """The ``spec.schedulerName`` the pods of a batch/v1 Job need under ``stack`` (None: the default scheduler).

    >>> scheduler_name("kueue+gang+karpenter"), scheduler_name("kueue+pod")
    ('volcano', None)
    """
    return next((SCHEDULER_NAMES[part] for part in stack.split("+") if part in SCHEDULER_NAMES), None)



def holding_gang(j) -> str | None:
    """Which holding scheduler's objects carry a job's gang settings: ``coscheduling``, ``yunikorn`` or None."""
    if j.schedule_timeout is not None:
        return "coscheduling"
    if j.placeholder_timeout is not None or j.gang_style is not None:
        return "yunikorn"
    return None


#: The placement layers whose own objects carry a gang that is only a size (``min_member``).
SIZE_FORMS = ("coscheduling", "yunikorn", "kube-gang")


def gang_form(j, stack: str = "") -> str | None:
    """Which objects carry a job's gang when written for ``stack``: a holding gang's, or the stack's own.

    Settings only one layer has decide (a schedule timeout: ``coscheduling``; a
    placeholder timeout or gang style: ``yunikorn``; a placeholder size, under a
    stack with ``yunikorn``: ``yunikorn``). A batch/v1 Job whose only
    gang setting is its size is written in the form the stack's placement layer
    reads: a scheduler-plugins PodGroup (``coscheduling``), YuniKorn's task
    groups (``yunikorn``), a Kubernetes Workload (``kube-gang``); None leaves it
    to the Volcano PodGroup (:func:`gangkit.manifests.core.has_pod_group`).
    """
    held = holding_gang(j)
    if held is not None:
        return held
    if j.placeholder_request is not None and j.framework == BATCH_JOB and j.controller == "batch" and (
            "yunikorn" in stack.split("+")):
        return "yunikorn"  # a batch/v1 Job's placeholder size: YuniKorn's task group (other layers have none)
    if j.controller != "batch" or j.min_member is None or j.volcano_queue != "default" or j.min_resources is not None:
        return None
    return next((part for part in stack.split("+") if part in SIZE_FORMS), None)


def dump_problems(j) -> list[str]:
    """Why a job's gang settings cannot be written as one gang (empty when they can)."""
    if j.schedule_timeout is not None and (j.placeholder_timeout is not None or j.gang_style is not None
                                           or j.placeholder_request is not None):
        return ["schedule_timeout (coscheduling) and placeholder_timeout/gang_style/placeholder_request (YuniKorn) name two gangs; "
                "a Job has one"]
    return []


def template_metadata(j, kind: str | None = None) -> dict:
    """The pod template's labels and annotations that put a job's pods in its gang of form ``kind`` (:func:`gang_form`)."""
    kind = kind or holding_gang(j)
    if kind == "coscheduling":
        return {"labels": {POD_GROUP_LABEL: j.name}}
    if kind == "yunikorn":
        group = {"name": "workers", "minMember": j.gang_size, "minResource": min_resource(j)}
        parameters = []
        if j.placeholder_timeout is not None:
            parameters.append(f"placeholderTimeoutInSeconds={int(j.placeholder_timeout)}")
        if j.gang_style is not None:
            parameters.append(f"gangSchedulingStyle={j.gang_style}")
        annotations = {TASK_GROUP_NAME: "workers", TASK_GROUPS: json.dumps([group])}
        if parameters:
            annotations[SCHEDULING_POLICY] = " ".join(parameters)
        return {"annotations": annotations}
    return {}


def min_resource(j) -> dict[str, str]:
    """The task group's ``minResource`` for a job: its ``placeholder_request``, else its pods' requests (what is 0
    is left out), so that the placeholders are the size the job says.

    >>> from gangkit.model.jobs import job
    >>> min_resource(job("a", gpus=2)), min_resource(job("b", gpus=2, placeholder_request=Resources(4, 0.5, 2**31)))
    ({'nvidia.com/gpu': '2'}, {'nvidia.com/gpu': '4', 'cpu': '500m', 'memory': '2Gi'})
    """
    ps = j.pod_sets[0]
    r = j.placeholder_request or Resources(ps.gpus, ps.cpu, ps.memory)
    out = {GPU: str(int(r.gpus))} if r.gpus else {}
    if r.cpu:
        out["cpu"] = format_cpu(r.cpu)
    if r.memory:
        out["memory"] = format_memory(int(r.memory))
    return out


def gang_objects(j, kind: str | None = None) -> list[dict]:
    """The objects a job's gang of form ``kind`` needs besides the Job: a scheduler-plugins PodGroup, a Workload."""
    kind = kind or holding_gang(j)
    meta = {"name": j.name} | ({"namespace": j.namespace} if j.namespace else {})
    if kind == "coscheduling":
        spec: dict[str, Any] = {"minMember": j.gang_size}
        if j.schedule_timeout is not None:
            spec["scheduleTimeoutSeconds"] = int(j.schedule_timeout)
        return [{"apiVersion": COSCHEDULING_API, "kind": "PodGroup", "metadata": meta, "spec": spec}]
    if kind == "kube-gang":
        group = {"name": WORKLOAD_POD_GROUP, "policy": {"gang": {"minCount": j.gang_size}}}
        return [{"apiVersion": WORKLOAD_API, "kind": "Workload", "metadata": meta, "spec": {"podGroups": [group]}}]
    return []


def workload_ref(j) -> dict:
    """The pod's ``spec.workloadRef`` into the Workload :func:`gang_objects` writes for ``kube-gang``."""
    return {"name": j.name, "podGroup": WORKLOAD_POD_GROUP}
