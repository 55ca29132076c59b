"""Volcano's enqueue action: a PodGroup waits at the door until its minimum fits.

Think of a restaurant that seats a party only when a table for the whole
party is free *and* the party's group booking is within its company's
allowance. Until then the party waits outside and takes no table. In Volcano
every job has a PodGroup whose phase starts as ``Pending``; the ``enqueue``
action (Volcano ``pkg/scheduler/actions/enqueue``) moves it to ``Inqueue``
only when every plugin's JobEnqueueable check permits:

- **proportion** (the queue's door): ``minResources + allocated + inqueue -
  elastic <= realCapability`` of the job's queue, in the resources the job
  asks for. ``inqueue`` is what Inqueue jobs of the queue still need of
  their minimum; ``elastic`` is what running jobs hold above theirs;
- **overcommit** (the cluster's door): ``inqueue + minResources <= total x
  overcommit-factor - used`` over the whole cluster (factor 1.2 by default:
  a little more than the idle room may be promised, so that pods are ready
  the moment capacity frees up).

A PodGroup without ``minResources`` is always enqueued (both plugins
permit it). Queues are visited lowest share first and, within a queue, jobs
by priority then creation; a refused job does not stop the jobs behind it.

What exists while a PodGroup is Pending decides what an autoscaler sees:

- a **Volcano Job** (``batch.volcano.sh/v1alpha1``): its controller computes
  ``minResources`` from the tasks and creates the pods only once the
  PodGroup is Inqueue. Before that there is no pod, so cluster-autoscaler
  or Karpenter see nothing to scale up for;
- a **batch/v1 Job joined to a PodGroup** (pod annotation
  ``scheduling.k8s.io/group-name``): the Job controller creates the pods at
  once; they stay Pending (unschedulable) while the PodGroup waits, so an
  autoscaler does see them.
"""

from __future__ import annotations

from dataclasses import dataclass

from gangkit.model.reasons import Reason
from gangkit.volcano.plugins.proportion import QueueAttr
from gangkit.model.resources import ZERO, Resources, pod_resources
from gangkit.model.jobs import Job


def job_min_resources(spec: Job) -> Resources | None:
    """The PodGroup's ``minResources``: as given, else computed for a Volcano Job, else None.

    A Volcano Job's controller (``calcPGMinResources``) sums the requests of
    the pods that make up the minimum: each task's ``minAvailable`` first,
    then further pods in task order up to the job's ``minAvailable``; when
    the job's ``minAvailable`` is below the sum of the tasks', the first
    ``minAvailable`` pods in task order. (Tasks are ordered by their
    priority class; gangkit has one priority per job, so task order stays.)
    """
    if spec.min_resources is not None or spec.controller != "volcano":
        return spec.min_resources
    need = spec.gang_size
    per_task = [(ps, ps.count if ps.min_member is None else ps.min_member) for ps in spec.pod_sets]
    total = ZERO
    if need < sum(m for _, m in per_task):
        for ps in spec.pod_sets:
            take = min(ps.count, need)
            total = total + pod_resources(ps) * take
            need -= take
        return total
    for ps, m in per_task:
        total = total + pod_resources(ps) * m
        need -= m
    for ps, m in per_task:
        take = min(ps.count - m, need)
        if take > 0:
            total = total + pod_resources(ps) * take
            need -= take
    return total


@dataclass
class ClusterRoom:
    """The overcommit plugin's view: ``idle = total x factor - used``, and what Inqueue jobs were promised."""

    idle: Resources
    inqueue: Resources = ZERO

    def permits(self, min_req: Resources) -> bool:
        return (self.inqueue + min_req).fits_in(self.idle)


def enqueue_verdict(min_req: Resources | None, attr: QueueAttr, room: ClusterRoom) -> Reason | None:
    """None when the PodGroup may go Inqueue; else why not (proportion's refusal first, as in Volcano's tiers).

    Proportion's JobEnqueueableFn compares with the queue's
    *realCapability* (not its deserved share), in the resources the
    minimum asks for (``LessEqualWithDimensionAndResourcesName``); the
    overcommit plugin's compares with the cluster's idle room.
    """
    if min_req is None:
        return None
    wanted = (min_req + attr.allocated + attr.inqueue) - attr.elastic
    if not wanted.fits_in(attr.real_capability, min_req.asked()):
        return Reason(
            "placement", "QueueCapabilityExceeded",
            f"PodGroup stays Pending: queue {attr.name!r} would hold {wanted.short()} with this job's minimum "
            f"({min_req.short()}), above its capability of {attr.real_capability.short()}",
            {"queue": attr.name, "min_gpus": min_req.gpus, "queue_capability_gpus": attr.real_capability.gpus},
        )
    if not room.permits(min_req):
        return Reason(
            "placement", "ClusterOverused",
            f"PodGroup stays Pending: its minimum ({min_req.short()}) plus what Inqueue jobs were promised "
            f"({room.inqueue.short()}) exceeds the idle room times the overcommit factor ({room.idle.short()})",
            {"min_gpus": min_req.gpus, "idle_gpus": room.idle.gpus, "inqueue_gpus": room.inqueue.gpus},
        )
    return None


def admit(min_req: Resources | None, attr: QueueAttr, room: ClusterRoom) -> None:
    """The job went Inqueue: both plugins count its minimum as promised (JobEnqueuedFn)."""
    if min_req is not None:
        attr.inqueue = attr.inqueue + min_req
        room.inqueue = room.inqueue + min_req
