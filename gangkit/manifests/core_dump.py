"""The core kinds written back: Nodes, batch/v1 Jobs, Volcano PodGroups and PriorityClasses.

The mirror of :mod:`gangkit.manifests.core`: each writer gives the manifest the
core reader reads back into the same object. A Job's priority becomes a
PriorityClass of its own (``gangkit-priority-100``), its run time and
progress gangkit's annotations, its gang the labels of the form its stack's
placement layer reads (:func:`gangkit.placement.manifests.gang_form`), or a
Volcano PodGroup (:func:`has_pod_group`). :mod:`gangkit.manifests.dump` writes
a whole scenario with these; the kinds whose templates are a batch/v1 Job's
(JobSet, the Kubeflow kinds, Volcano's Job) build on :func:`job_manifest`.
"""

from __future__ import annotations

import math
from typing import Any

from gangkit.manifests.core import ELASTIC, GROUP_NAME, POOL_LABELS, RENDEZVOUS_TIMEOUT, one_per_node_affinity
from gangkit.model.jobs import DEFAULT_BACKOFF_LIMIT, Job
from gangkit.model.nodes import Node
from gangkit.model.quantity import format_cpu, format_duration, format_memory
from gangkit.model.reading import (
    CHECKPOINT_INTERVAL,
    GPU,
    PROGRESS,
    QUEUE_LABEL,
    RUN_TIME,
    SUBMIT_TIME,
    pod_resources,
)
from gangkit.placement.manifests import holding_gang, template_metadata, workload_ref

__all__ = ["has_pod_group", "job_manifest", "node_manifest", "pod_group_manifest", "priority_class_manifest",
           "priority_class_name"]

SLA_WAITING_TIME = "volcano.sh/sla-waiting-time"  # the PodGroup annotation Volcano's sla plugin reads first
POD_GROUP_API = "scheduling.volcano.sh/v1beta1"
PRIORITY_CLASS_API = "scheduling.k8s.io/v1"


def has_pod_group(j: Job) -> bool:
    """A batch/v1 Job is written with a PodGroup when it has a gang size, a Volcano queue, minResources or an
    sla waiting time."""
    return j.controller == "batch" and (
        j.min_member is not None or j.volcano_queue != "default" or j.min_resources is not None
        or j.sla_waiting_time is not None)


def priority_class_name(value: int) -> str:
    """The PriorityClass written for a priority value: ``gangkit-priority-100``, ``gangkit-priority-minus-5``."""
    return f"gangkit-priority-{value}" if value >= 0 else f"gangkit-priority-minus-{-value}"


def priority_class_manifest(value: int) -> dict:
    return {"apiVersion": PRIORITY_CLASS_API, "kind": "PriorityClass", "metadata": {"name": priority_class_name(value)},
            "value": value, "globalDefault": False}


def node_manifest(n: Node) -> dict:
    """A Node; its pool becomes a ``karpenter.sh/nodepool`` label unless a label implies it already."""
    labels = dict(n.labels)
    if next((labels[k] for k in POOL_LABELS if k in labels), "default") != n.pool:
        labels[POOL_LABELS[0]] = n.pool
    allocatable: dict[str, str] = {GPU: str(n.gpus)}
    if n.cpu is not None:
        allocatable["cpu"] = format_cpu(n.cpu)
    if n.memory is not None:
        allocatable["memory"] = format_memory(n.memory)
    meta: dict[str, Any] = {"name": n.name} | ({"labels": labels} if labels else {})
    return {"apiVersion": "v1", "kind": "Node", "metadata": meta, "status": {"allocatable": allocatable}}


def job_manifest(j: Job, gang: str | None = None) -> dict:
    """A batch/v1 Job of a job's first pod set, with gangkit's annotations and the labels that name its gang.

    ``gang``: the form of the gang's objects
    (:func:`gangkit.placement.manifests.gang_form`); None: the job's holding
    gang, else its Volcano PodGroup when it has one.
    """
    gang = gang or holding_gang(j)
    ps = j.pod_sets[0]
    labels = dict(j.labels)
    if (labels.get(QUEUE_LABEL) or j.namespace or "default") != j.queue:
        labels[QUEUE_LABEL] = j.queue
    annotations = {RUN_TIME: format_duration(j.run_time)}
    if j.submit_time:
        annotations[SUBMIT_TIME] = format_duration(j.submit_time)
    annotations[PROGRESS] = ELASTIC if j.elastic else j.progress
    if j.checkpoint_interval is not None:
        annotations[CHECKPOINT_INTERVAL] = format_duration(j.checkpoint_interval)
    if j.rendezvous_timeout is not None:
        annotations[RENDEZVOUS_TIMEOUT] = format_duration(j.rendezvous_timeout)
    meta: dict[str, Any] = {"name": j.name}
    if j.namespace:
        meta["namespace"] = j.namespace
    if labels:
        meta["labels"] = labels
    meta["annotations"] = annotations

    resources = pod_resources(ps)
    container = {"name": "worker", "image": "busybox:1.36", "command": ["sleep", str(math.ceil(j.run_time))],
                 "resources": resources}
    pod: dict[str, Any] = {"restartPolicy": "Never"}
    if j.priority != 0:
        pod["priorityClassName"] = priority_class_name(j.priority)
    if ps.node_selector:
        pod["nodeSelector"] = dict(ps.node_selector)
    if ps.one_per_node:
        pod["affinity"] = one_per_node_affinity(j)
    if gang == "kube-gang":
        pod["workloadRef"] = workload_ref(j)
    pod["containers"] = [container]
    template: dict[str, Any] = {"spec": pod}
    if gang in ("coscheduling", "yunikorn"):
        template = {"metadata": template_metadata(j, gang), "spec": pod}
    elif gang is None and has_pod_group(j):
        template = {"metadata": {"annotations": {GROUP_NAME: j.name}}, "spec": pod}
    spec: dict[str, Any] = {"parallelism": ps.count, "completions": ps.count}
    if j.max_run_time is not None:
        spec["activeDeadlineSeconds"] = int(j.max_run_time)
    if j.backoff_limit != DEFAULT_BACKOFF_LIMIT:
        spec["backoffLimit"] = j.backoff_limit
    spec["template"] = template
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": meta, "spec": spec}


def pod_group_manifest(j: Job, extra: dict) -> dict:
    """Volcano's PodGroup of a batch/v1 Job (``minMember``, its sla waiting time, and ``extra``: its queue and
    minResources)."""
    meta: dict[str, Any] = {"name": j.name} | ({"namespace": j.namespace} if j.namespace else {})
    if j.sla_waiting_time is not None:
        meta["annotations"] = {SLA_WAITING_TIME: format_duration(j.sla_waiting_time)}
    spec = {"minMember": j.min_member} if j.min_member is not None else {}
    return {"apiVersion": POD_GROUP_API, "kind": "PodGroup", "metadata": meta, "spec": spec | extra}
