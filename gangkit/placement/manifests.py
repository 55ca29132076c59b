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
  joined by the pod's ``spec.workloadRef`` (``name``, ``podGroup``);
- Kubernetes 1.36 (``scheduling.k8s.io/v1alpha2``, which replaces v1alpha1): a
  standalone **PodGroup** carrying its own ``spec.schedulingPolicy``
  (``gang.minCount`` or ``basic``), made by a controller (or the user) from a
  **Workload**'s ``spec.podGroupTemplates`` and naming it in the optional
  ``spec.podGroupTemplateRef.workload``; pods join it by
  ``spec.schedulingGroup.podGroupName``. Field names as in the 1.36 API
  reference ("PodGroup v1alpha2", "Workload v1alpha2") and the docs pages
  "PodGroup API" and "Scheduling Group"; an input with v1alpha2 objects is a
  1.36 input (:func:`kube_gang_release`).

(Volcano's PodGroup and its ``scheduling.k8s.io/group-name`` annotation are
read in :mod:`gangkit.manifests.core`.) gangkit models one gang per Job: a Job
naming two gangs is an error. The registry (:mod:`gangkit.manifests.kinds`)
sends these kinds here by ``(apiVersion, kind)``; the Job reader calls
:func:`read_gang` for each Job. The names these objects are spelled with are
:mod:`gangkit.placement.gang_api`; writing a Job's gang back out (``dump_manifests``) is
:mod:`gangkit.placement.dump`, whose names are importable from here too.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from gangkit.model.jobs import GANG_STYLES
from gangkit.model.quantity import format_cpu, format_memory
from gangkit.model.reading import ANY, GPU, META, ManifestObject, Reader, is_whole, short, spec_of
from gangkit.model.resources import Resources
from gangkit.model.scenario import RunSettings
from gangkit.placement.dump import (
    SCHEDULER_NAMES,
    SIZE_FORMS,
    dump_problems,
    gang_form,
    gang_objects,
    holding_gang,
    min_resource,
    pod_spec_for,
    scheduler_name,
    scheduling_group,
    template_metadata,
    workload_ref,
)
from gangkit.placement.gang_api import (
    COSCHEDULING_API,
    POD_GROUP_API,
    POD_GROUP_LABEL,
    SCHEDULING_POLICY,
    TASK_GROUP_NAME,
    TASK_GROUPS,
    WORKLOAD_API,
    WORKLOAD_POD_GROUP,
)

#: Every public name, with those of :mod:`gangkit.placement.dump` and :mod:`gangkit.placement.gang_api`: the Job
#: readers and ``dump_manifests`` import them from here.
__all__ = [
    "COSCHEDULING_API", "GangObjects", "KNOWN_FIELDS", "MAX_TEMPLATES", "MIN_RESOURCE_READERS", "POD_GROUP_API",
    "POD_GROUP_LABEL", "POLICY", "SCHEDULER_NAMES", "SCHEDULING_GROUP", "SCHEDULING_GROUP_ROLES",
    "SCHEDULING_POLICY", "SIZE_FORMS", "TASK_GROUPS", "TASK_GROUP_NAME", "WORKLOAD_API", "WORKLOAD_POD_GROUP",
    "WORKLOAD_REF", "YUNIKORN_PARAMETERS", "dump_problems", "gang_form", "gang_objects", "holding_gang",
    "kube_gang_release", "min_resource", "pod_spec_for", "read_gang", "read_object", "scheduler_name",
    "scheduling_group", "scheduling_policy", "template_metadata", "workload_ref",
]

YUNIKORN_PARAMETERS = ("placeholderTimeoutInSeconds", "gangSchedulingStyle")
MAX_TEMPLATES = 8  # a v1alpha2 Workload lists at most 8 podGroupTemplates (1.36 API reference, WorkloadSpec)

#: A v1alpha2 ``schedulingPolicy`` (PodGroupSchedulingPolicy): exactly one of ``basic: {}`` or ``gang: {minCount}``.
POLICY = {"basic": ANY, "gang": {"minCount": ANY}}
#: Known fields per role, the name the registry groups these objects under (``minResources`` is not known:
#: gangkit does not model its PreFilter check). Of the 1.36 PodGroup and its templates, ``priorityClassName``,
#: ``priority`` and ``disruptionMode`` (gate WorkloadAwarePreemption), ``resourceClaims`` (DRA) and
#: ``schedulingConstraints`` (topology) are not modelled: they are listed as not read.
KNOWN_FIELDS = {
    "CoschedulingPodGroup": {"apiVersion": ANY, "kind": ANY, "metadata": META, "status": ANY,
                             "spec": dict.fromkeys(["minMember", "scheduleTimeoutSeconds"], ANY)},
    "KubeWorkload": {"apiVersion": ANY, "kind": ANY, "metadata": META,
                     "spec": {"controllerRef": ANY,
                              "podGroups": [{"name": ANY, "policy": {"basic": ANY, "gang": {"minCount": ANY}}}]}},
    "KubeWorkloadV1alpha2": {"apiVersion": ANY, "kind": ANY, "metadata": META,
                             "spec": {"controllerRef": ANY, "podGroupTemplates": [{"name": ANY, "schedulingPolicy": POLICY}]}},
    # status is the scheduler's, not read. Its condition is PodGroupScheduled in the docs page "PodGroup API" and
    # PodGroupInitiallyScheduled in KEP-4671; the docs page is the newer source.
    "KubePodGroup": {"apiVersion": ANY, "kind": ANY, "metadata": META, "status": ANY,
                     "spec": {"podGroupTemplateRef": {"workload": {"workloadName": ANY, "podGroupTemplateName": ANY}},
                              "schedulingPolicy": POLICY}},
}
WORKLOAD_REF = {"name": ANY, "podGroup": ANY}  # the pod's spec.workloadRef (podGroupReplicaKey is not modelled)
SCHEDULING_GROUP = {"podGroupName": ANY}  # the pod's spec.schedulingGroup (Kubernetes 1.36, PodSchedulingGroup)
#: the kinds whose pod template gangkit reads spec.schedulingGroup in (the built-in kinds whose pods carry it)
SCHEDULING_GROUP_ROLES = ("Job", "Pod", "Deployment", "ReplicaSet", "StatefulSet")


def read_object(r: Reader, doc: Mapping, where: str, role: str) -> ManifestObject | None:
    """Check one coscheduling PodGroup or Kubernetes Workload (its metadata and unknown fields).

    A scheduler-plugins PodGroup's ``spec.minMember`` is checked here, used
    by a Job or not: its CRD (``scheduling.x-k8s.io_podgroups.yaml``,
    scheduler-plugins master of 2026-08) makes it an int32 with ``minimum: 1``.
    """
    o = r.check_object(doc, where, KNOWN_FIELDS[role])
    if o is not None and role == "CoschedulingPodGroup":
        r.spec_count(o, "minMember", 1)
    elif o is not None and role == "KubePodGroup":
        _check_pod_group(r, o)
    elif o is not None and role == "KubeWorkloadV1alpha2":
        _check_templates(r, o)
    return o


def scheduling_policy(r: Reader, obj: str, where: str, value: Any) -> int | None:
    """The gang size of a v1alpha2 ``schedulingPolicy``: its ``gang.minCount``, or 1 for ``basic`` (pod by pod).

    The API's validation (1.36 ``PodGroupSchedulingPolicy``, "exactly one
    policy must be set"; ``minCount`` a positive int32) refuses anything else
    when the object is created; a field written as null counts as not set.
    None after recording a problem.
    """
    if not isinstance(value, Mapping):
        required = " (schedulingPolicy is required)" if value is None else ""
        r.error(obj, where, f"expected exactly one of gang (with minCount) or basic{required}, got {short(value)}")
        return None
    if (value.get("gang") is None) == (value.get("basic") is None):
        r.error(obj, where, f"expected exactly one of gang or basic, got {short(dict(value))}")
        return None
    if value.get("basic") is not None:
        if not isinstance(value["basic"], Mapping):
            r.error(obj, f"{where}.basic", f"expected an empty mapping (basic: {{}}), got {short(value['basic'])}")
            return None
        return 1
    gang = value["gang"]
    if not isinstance(gang, Mapping):
        r.error(obj, f"{where}.gang", f"expected a mapping with minCount, got {short(gang)}")
        return None
    return r.whole(gang.get("minCount"), obj, f"{where}.gang.minCount", 1)


def _check_pod_group(r: Reader, o: ManifestObject) -> None:
    """A 1.36 PodGroup as the API server validates it: a policy, and a template reference that names both parts.

    Whether the Workload and its template exist is checked when a Job uses
    the PodGroup (:func:`_template_of`).
    """
    if o.doc.get("spec") is not None and not isinstance(o.doc["spec"], Mapping):
        r.mapping(o.doc["spec"], o.label, "spec")  # one problem: no mapping
        return
    spec = r.mapping(o.doc.get("spec"), o.label, "spec")
    scheduling_policy(r, o.label, "spec.schedulingPolicy", spec.get("schedulingPolicy"))
    ref = spec.get("podGroupTemplateRef")
    if ref is None:
        return
    if not isinstance(ref, Mapping) or not isinstance(ref.get("workload"), Mapping):
        got = short(ref.get("workload")) if isinstance(ref, Mapping) else short(ref)
        where = "spec.podGroupTemplateRef" + (".workload" if isinstance(ref, Mapping) else "")
        r.error(o.label, where, f"expected workload: {{workloadName, podGroupTemplateName}} (the one kind of template "
                                f"reference in {POD_GROUP_API}), got {got}")
        return
    for key in ("workloadName", "podGroupTemplateName"):
        value = ref["workload"].get(key)
        if not isinstance(value, str) or not value:
            r.error(o.label, f"spec.podGroupTemplateRef.workload.{key}", f"expected a non-empty name, got {short(value)}")


def _check_templates(r: Reader, o: ManifestObject) -> None:
    """A 1.36 Workload's ``spec.podGroupTemplates``: 1 to 8 templates with unique names, each with a policy.

    KEP-4671 marks the list optional; the 1.36 API reference (WorkloadSpec)
    makes it required and the docs page "Workload API" says each entry must
    have a name and a policy: the docs are followed.
    """
    if o.doc.get("spec") is not None and not isinstance(o.doc["spec"], Mapping):
        r.mapping(o.doc["spec"], o.label, "spec")  # one problem: no mapping
        return
    spec = r.mapping(o.doc.get("spec"), o.label, "spec")
    items = r.named_items(spec, "podGroupTemplates", o.label, "pod group template")
    if items is None:
        return
    if len(spec["podGroupTemplates"]) > MAX_TEMPLATES:
        r.error(o.label, "spec.podGroupTemplates", f"expected at most {MAX_TEMPLATES} pod group templates (the "
                                                   f"API's limit), got {len(spec['podGroupTemplates'])}")
    seen: dict[str, str] = {}
    for where, item, name in items:
        if name in seen:
            r.error(o.label, f"{where}.name", f"expected a unique name; {seen[name]} is {name!r} too")
        seen.setdefault(name, where)
        scheduling_policy(r, o.label, f"{where}.schedulingPolicy", item.get("schedulingPolicy"))


@dataclass
class GangObjects:
    """The input's coscheduling PodGroups, Kubernetes Workloads (1.35) and PodGroups and Workloads (1.36), by
    (namespace, name), and who uses them."""

    pod_groups: dict = field(default_factory=dict)
    workloads: dict = field(default_factory=dict)
    used: dict = field(default_factory=dict)  # (role, namespace, name) -> the Job (or PodGroup) using it
    kube_pod_groups: dict = field(default_factory=dict)  # Kubernetes 1.36 (v1alpha2) PodGroups
    kube_templates: dict = field(default_factory=dict)  # Kubernetes 1.36 (v1alpha2) Workloads

    @classmethod
    def collect(cls, by_role: Mapping[str, list]) -> "GangObjects":
        key = lambda o: (o.namespace or "default", o.name)  # noqa: E731
        found = {role: {key(o): o for o in by_role.get(role, ()) if o.name}
                 for role in ("CoschedulingPodGroup", "KubeWorkload", "KubePodGroup", "KubeWorkloadV1alpha2")}
        return cls(found["CoschedulingPodGroup"], found["KubeWorkload"],
                   kube_pod_groups=found["KubePodGroup"], kube_templates=found["KubeWorkloadV1alpha2"])

    def unused(self) -> list[str]:
        notes = []
        job = "no Job's pod template names it in"
        for role, objects, how in (("CoschedulingPodGroup", self.pod_groups, f"{job} label {POD_GROUP_LABEL}"),
                                   ("KubeWorkload", self.workloads, f"{job} spec.workloadRef"),
                                   ("KubePodGroup", self.kube_pod_groups, f"{job} spec.schedulingGroup.podGroupName"),
                                   ("KubeWorkloadV1alpha2", self.kube_templates,
                                    "no used PodGroup names it in spec.podGroupTemplateRef.workload.workloadName")):
            for (ns, name), o in objects.items():
                if (role, ns, name) not in self.used:
                    notes.append(f"{o.label} ({o.doc.get('apiVersion')}) is not used: {how}")
        return notes


def read_gang(r: Reader, gangs: GangObjects, o: ManifestObject, pods: int | None, tmeta: dict, pod: dict,
              volcano: bool) -> dict:
    """The gang fields of one Job (``min_member``, ``schedule_timeout``, ``placeholder_timeout``, ``gang_style``,
    ``gang_object``: the PodGroup or Workload that holds the gang, for the diagnosis's words).

    ``gangs`` are the input's PodGroups and Workloads (the ones used are
    recorded there); ``volcano``: the Job already names a Volcano PodGroup.
    Returns the fields to set (empty when the Job names none of these gangs).

    The 1.36 ``spec.schedulingGroup`` is read for batch/v1 Jobs, bare Pods and
    the apps/v1 controllers (as the 1.35 ``workloadRef``): JobSets and the
    training kinds, whose CRDs' pod spec has no such field, leave it to the
    unknown-field warning (see ``docs/reference/kube-gang.md``,
    "Manifests").
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
    group_ref = pod.get("schedulingGroup") if o.role in SCHEDULING_GROUP_ROLES else None  # Kubernetes 1.36
    if group_ref is not None:
        where = "spec.template.spec.schedulingGroup"
        if pod.get("workloadRef") is not None:
            r.error(obj, where, "expected spec.schedulingGroup (Kubernetes 1.36, scheduling.k8s.io/v1alpha2) or "
                                "spec.workloadRef (1.35, v1alpha1, which 1.36 replaced), not both")
            return {}
        found.append((where, _scheduling_group(r, gangs, obj, namespace, group_ref, pods)))
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
    out: dict[str, Any] = {"gang_object": group.label}
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
    return {} if m is None else {"min_member": m, "gang_object": workload.label}


def _scheduling_group(r: Reader, gangs: GangObjects, obj: str, namespace: str, ref: Any, pods: int | None) -> dict:
    """The gang of a Job whose pods name a 1.36 PodGroup (``spec.schedulingGroup.podGroupName``).

    The PodGroup is looked up by name in the Job's namespace (docs page
    "Scheduling Group"); its own ``spec.schedulingPolicy`` is the one the
    scheduler applies ("PodGroup API": copied from the template when the
    PodGroup is made). A missing PodGroup keeps the real pods pending for
    ever (``UnschedulableAndUnresolvable`` until it is created); gangkit,
    which has the whole input, refuses it.
    """
    where = "spec.template.spec.schedulingGroup"
    if not isinstance(ref, Mapping):
        r.error(obj, where, f"expected a mapping with podGroupName, got {short(ref)}")
        return {}
    name = ref.get("podGroupName")
    if not isinstance(name, str) or not name:
        r.error(obj, f"{where}.podGroupName", f"expected the name of a PodGroup ({POD_GROUP_API}), got {short(name)}")
        return {}
    group = gangs.kube_pod_groups.get((namespace, name))
    if group is None:
        r.error(obj, f"{where}.podGroupName", f"names PodGroup {name!r} ({POD_GROUP_API}) in namespace {namespace!r}, "
                                              "which is not in the input")
        return {}
    if not _claim(r, gangs, "KubePodGroup", namespace, name, obj, f"{where}.podGroupName"):
        return {}
    spec = spec_of(group)
    _template_of(r, gangs, group, namespace, spec)
    policy = spec.get("schedulingPolicy")
    size = scheduling_policy(Reader(r.label), group.label, "spec.schedulingPolicy", policy)  # reported when read
    if size is None:
        return {}
    if policy.get("basic") is not None:
        return {"min_member": 1}  # pods are scheduled one by one
    m = _count(r, group.label, "spec.schedulingPolicy.gang.minCount", size, pods, obj)
    return {} if m is None else {"min_member": m, "gang_object": group.label}


def _template_of(r: Reader, gangs: GangObjects, group: ManifestObject, namespace: str, spec: dict) -> None:
    """The Workload template a used PodGroup names, if it names one: it must be in the input.

    Kubernetes itself does not follow ``podGroupTemplateRef`` when it
    schedules (the docs call it a link "for observability and tooling"); a
    reference that names nothing is refused here as every dangling name of
    an input is. A PodGroup whose policy differs from its template's is
    noted: the scheduler uses the PodGroup's.
    """
    ref = spec.get("podGroupTemplateRef")
    workload_ref = ref.get("workload") if isinstance(ref, Mapping) else None
    if not isinstance(workload_ref, Mapping):
        return
    name, template_name = workload_ref.get("workloadName"), workload_ref.get("podGroupTemplateName")
    if not (isinstance(name, str) and name and isinstance(template_name, str) and template_name):
        return  # reported when the PodGroup was read
    base = "spec.podGroupTemplateRef.workload"
    workload = gangs.kube_templates.get((namespace, name))
    if workload is None:
        r.error(group.label, f"{base}.workloadName", f"names Workload {name!r} ({POD_GROUP_API}) in namespace "
                                                     f"{namespace!r}, which is not in the input")
        return
    gangs.used.setdefault(("KubeWorkloadV1alpha2", namespace, name), group.label)
    templates = spec_of(workload).get("podGroupTemplates")
    templates = [t for t in templates if isinstance(t, Mapping)] if isinstance(templates, list) else []
    template = next((t for t in templates if t.get("name") == template_name), None)
    if template is None:
        listed = ", ".join(repr(t.get("name")) for t in templates) or "none"
        r.error(group.label, f"{base}.podGroupTemplateName", f"names template {template_name!r}, which Workload "
                                                             f"{name!r} does not list (it lists {listed})")
    elif template.get("schedulingPolicy") != spec.get("schedulingPolicy"):
        r.notes.append(f"{group.label}: spec.schedulingPolicy differs from that of template {template_name!r} of "
                       f"Workload {name!r}; the scheduler applies the PodGroup's own (a controller copies the "
                       "template's only when it creates a PodGroup)")


def kube_gang_release(r: Reader, gangs: GangObjects, simulations: list[ManifestObject],
                      settings: RunSettings) -> RunSettings:
    """The run settings with the Kubernetes release the input's gang objects are written for.

    1.35 serves only ``scheduling.k8s.io/v1alpha1``, 1.36 only ``v1alpha2``
    (KEP-4671: v1alpha2 replaces v1alpha1), so an input with v1alpha2
    objects is a 1.36 input: ``kube_gang_release`` becomes ``"1.36"``
    unless the Simulation says otherwise. A Simulation that says ``"1.35"``
    for such an input, and an input with objects of both versions, are
    errors. v1alpha1 objects under an explicit ``"1.36"`` are read as the
    PodGroups they would be (the run setting is a what-if), with a note.
    Which stack runs is not implied (as for the v1alpha1 Workload): the
    Simulation's ``stack`` says so.
    """
    new = [*gangs.kube_pod_groups.values(), *gangs.kube_templates.values()]
    old = list(gangs.workloads.values())
    spec = simulations[0].doc.get("spec") if simulations else None
    said = spec.get("kubeGangRelease") if isinstance(spec, Mapping) else None
    if not new:
        if old and said == "1.36":
            r.notes.append(f"{old[0].label} ({WORKLOAD_API}) and spec.workloadRef are Kubernetes 1.35's API, which "
                           f"1.36 no longer serves; under kubeGangRelease \"1.36\" gangkit reads each pod group as the "
                           f"{POD_GROUP_API} PodGroup it would be (write a PodGroup and spec.schedulingGroup for 1.36)")
        return settings
    if old:
        r.error(new[0].label, "apiVersion", f"expected the gang API of one Kubernetes release in the whole input, got "
                f"{POD_GROUP_API} here and {WORKLOAD_API} in {old[0].label} (1.35 serves only {WORKLOAD_API}: a "
                f"Workload's podGroups and the pod's workloadRef; 1.36 only {POD_GROUP_API}: PodGroups, a "
                "Workload's podGroupTemplates and the pod's schedulingGroup)")
        return settings
    if said == "1.35":
        r.error(simulations[0].label, "spec.kubeGangRelease", f"expected \"1.36\" (or leave it out): "
                f"{new[0].label} is {POD_GROUP_API}, which Kubernetes 1.35 does not serve (its gang API is "
                f"{WORKLOAD_API})")
        return settings
    if said is None and settings.kube_gang_release != "1.36":
        return replace(settings, kube_gang_release="1.36")
    return settings


def _claim(r: Reader, gangs: GangObjects, role: str, namespace: str, name: str, obj: str, where: str) -> bool:
    key = (role, namespace, name)
    if key in gangs.used:
        r.error(obj, where, f"{name!r} is already used by {gangs.used[key]}; gangkit models one gang per Job")
        return False
    gangs.used[key] = obj
    return True


def _count(r: Reader, owner: str, where: str, value: Any, pods: int | None, job: str) -> int | None:
    """A gang size: a whole number of at least 1, which may exceed the Job's pod count.

    Nothing upstream checks a gang's size against the pods that join it: the API server accepts a
    scheduler-plugins PodGroup whose ``minMember`` (or a Kubernetes Workload/PodGroup whose
    ``minCount``, or a YuniKorn task group whose ``minMember``) is above them, and
    scheduler-plugins' install guide makes one on purpose. gangkit reads it without a warning (it is
    modelled, not ignored): the gang layers keep the pods waiting and say why
    (:attr:`gangkit.model.jobs.Job.gang_larger_than_pods`), and ``gangkit check`` reports it
    (``gang-larger-than-job``).
    """
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        r.error(owner, where, f"expected a whole number >= 1, got {value!r}")
        return None
    return value
