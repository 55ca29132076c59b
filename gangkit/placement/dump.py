"""Writing a Job's gang back as the manifests of the stack's gang scheduler.

gangkit's ``dump_manifests`` (:mod:`gangkit.manifests.dump`) writes a scenario as Kubernetes YAML; this
module decides, for one Job, which gang scheduler's objects carry its gang (:func:`gang_form`: a
holding gang's settings decide, else the stack's placement layer), and writes them: the pod template's
labels and annotations (:func:`template_metadata`), the objects beside the Job (:func:`gang_objects`:
a scheduler-plugins PodGroup, a Kubernetes Workload or 1.36 PodGroup), the pod's reference into them,
and the ``schedulerName`` its pods need (:func:`scheduler_name`). What is written reads back through
:mod:`gangkit.placement.manifests` to the same Job.
"""

from __future__ import annotations

import json
from typing import Any

from gangkit.model.jobs import BATCH_JOB
from gangkit.model.quantity import format_cpu, format_memory
from gangkit.model.reading import GPU
from gangkit.model.resources import Resources
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

__all__ = [
    "SCHEDULER_NAMES", "SIZE_FORMS", "dump_problems", "gang_form", "gang_objects", "holding_gang", "min_resource",
    "pod_spec_for", "scheduler_name", "scheduling_group", "template_metadata", "workload_ref",
]

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


def gang_objects(j, kind: str | None = None, release: str = "1.35") -> list[dict]:
    """The objects a job's gang of form ``kind`` needs besides the Job: a scheduler-plugins PodGroup, a Workload.

    For ``kube-gang`` the objects of the Kubernetes ``release``
    (``RunSettings.kube_gang_release``): 1.35, a ``v1alpha1`` Workload with
    one pod group; 1.36, a ``v1alpha2`` PodGroup named after the job, with
    its ``schedulingPolicy``, and no Workload. The scheduler reads only the
    PodGroup; a Workload is the template a controller makes PodGroups from
    (docs page "PodGroup API", "How it fits together"), and a user who
    makes the PodGroup sets its policy directly ("For standalone PodGroups,
    you set the policy directly"). With ``schedulingGroup`` already in the
    Job's pod template, the 1.36 Job controller (gate ``WorkloadWithJob``,
    KEP-5547) makes neither object itself.
    """
    kind = kind or holding_gang(j)
    meta = {"name": j.name} | ({"namespace": j.namespace} if j.namespace else {})
    if kind == "coscheduling":
        spec: dict[str, Any] = {"minMember": j.gang_size}
        if j.schedule_timeout is not None:
            spec["scheduleTimeoutSeconds"] = int(j.schedule_timeout)
        return [{"apiVersion": COSCHEDULING_API, "kind": "PodGroup", "metadata": meta, "spec": spec}]
    if kind == "kube-gang" and release == "1.36":
        policy = {"gang": {"minCount": j.gang_size}}
        return [{"apiVersion": POD_GROUP_API, "kind": "PodGroup", "metadata": meta, "spec": {"schedulingPolicy": policy}}]
    if kind == "kube-gang":
        group = {"name": WORKLOAD_POD_GROUP, "policy": {"gang": {"minCount": j.gang_size}}}
        return [{"apiVersion": WORKLOAD_API, "kind": "Workload", "metadata": meta, "spec": {"podGroups": [group]}}]
    return []


def workload_ref(j) -> dict:
    """The pod's ``spec.workloadRef`` into the Workload :func:`gang_objects` writes for ``kube-gang``."""
    return {"name": j.name, "podGroup": WORKLOAD_POD_GROUP}


def scheduling_group(j) -> dict:
    """The pod's ``spec.schedulingGroup`` into the 1.36 PodGroup :func:`gang_objects` writes for ``kube-gang``."""
    return {"podGroupName": j.name}


def pod_spec_for(release: str, pod: dict, j) -> dict:
    """A Job's pod spec as written for ``kube-gang`` (with ``workloadRef``), in the field of ``release``.

    1.36 names the PodGroup in ``schedulingGroup`` where 1.35 has
    ``workloadRef`` (same place in the spec); other pod specs are returned as they are.
    """
    if release != "1.36" or "workloadRef" not in pod:
        return pod
    return {("schedulingGroup" if k == "workloadRef" else k): (scheduling_group(j) if k == "workloadRef" else v)
            for k, v in pod.items()}
