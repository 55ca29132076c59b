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
  the moment capacity frees up; :mod:`gangkit.volcano.plugins.overcommit`).

A PodGroup's minimum is :func:`gangkit.volcano.api.job_min_resources`.

A PodGroup without ``minResources`` is always enqueued (both plugins
permit it). With the sla plugin (:mod:`gangkit.volcano.plugins.sla`), a
PodGroup that has waited its ``sla-waiting-time`` since creation is
enqueued whatever the two plugins say (its Permit is in an earlier tier),
and the line is visited in the plugin's order. Queues are visited lowest share first and, within a queue, jobs
by priority then creation; a refused job does not stop the jobs behind it.

Without ``enqueue`` in the scheduler's actions (``VolcanoSetup(enqueue=False)``)
nothing waits at this door: every Pending PodGroup goes Inqueue in the
next session.

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

import heapq

from gangkit.engine.state import JobState
from gangkit.model.reasons import Reason
from gangkit.model.resources import Resources
from gangkit.volcano.api import job_min_resources
from gangkit.volcano.cache import INQUEUE, PENDING, CreatingJob
from gangkit.volcano.plugins.overcommit import ClusterRoom
from gangkit.volcano.plugins.proportion import QueueAttr
from gangkit.volcano.session import Session


def execute(ssn: Session, period: float, checks: bool = True) -> None:
    """Run enqueue for this session: queues in queue order, each queue's Pending PodGroups in job order.

    ``period`` is the session period: a Volcano Job's pods, created when its
    PodGroup goes Inqueue, can be placed from the next session on. With
    ``checks=False`` the configuration has no enqueue action, and every
    Pending PodGroup goes Inqueue unchecked, as Volcano's allocate action
    then does (:class:`gangkit.volcano.api.VolcanoSetup`, ``enqueue``).
    """
    cache = ssn.cache
    if not cache.pending:
        return  # no Pending line: nothing to enqueue (the usual session, after a job ends)
    sla = cache.sla
    if checks and sla is None and not cache.needs_minimums():
        # no PodGroup in the lines has minResources: both plugins permit every one, in job order
        for q in ssn.queue_order([q for q, h in cache.pending.items() if h]):
            heap = cache.pending[q]
            while heap:
                js = heapq.heappop(heap).job
                if cache.waits_whole(js, PENDING):
                    cache.refused.pop(js.index, None)
                    _inqueue(ssn, js, period)
            cache.pending_left(q)
        return
    if not checks:
        for q, heap in cache.pending.items():
            waiting = sorted(heap)
            heap.clear()
            cache.pending_left(q)
            for entry in waiting:
                js = entry.job
                if cache.waits_whole(js, PENDING):
                    cache.refused.pop(js.index, None)
                    _inqueue(ssn, js, period)
        return
    for q in ssn.queue_order([q for q, h in cache.pending.items() if h]):
        heap, kept = cache.pending[q], []
        if sla is not None:  # the sla plugin's order is not the heap's: visit the line in job order
            heap[:] = sorted(heap, key=lambda e: ssn.job_key(e.job, e), reverse=True)
        while heap:
            entry = heap.pop() if sla is not None else heapq.heappop(heap)
            js = entry.job
            if not cache.waits_whole(js, PENDING):
                continue
            minimum = job_min_resources(js.spec)
            reason = None if minimum is None else enqueue_verdict(minimum, ssn.attrs[q], ssn.room)
            if reason is not None and sla is not None and sla.permits(js, cache.created.get(js.index, ssn.now), ssn.now):
                reason = None  # the sla plugin's Permit, in a tier before proportion's and overcommit's
            if reason is not None:
                cache.refused[js.index] = reason
                kept.append(entry)
                continue
            if minimum is not None:
                admit(minimum, ssn.attrs[q], ssn.room)
            cache.refused.pop(js.index, None)
            _inqueue(ssn, js, period)
        for entry in kept:
            heapq.heappush(heap, entry)
        cache.pending_left(q)


def _inqueue(ssn: Session, js: JobState, period: float) -> None:
    """The PodGroup is Inqueue: a Volcano Job's controller creates its pods now (placed from the next session)."""
    cache, sim, now = ssn.cache, ssn.sim, ssn.now
    cache.phase[js.index] = INQUEUE
    if js.spec.controller == "volcano" and period:
        for p in js.pods:
            if p.node is None and not p.done:
                p.created = now
        heapq.heappush(cache.creating, tuple.__new__(CreatingJob, (now + period, js.seq, js.index, js)))
        sim.call_at(now + period, lambda t: sim.request_cycle())
    else:
        cache.to_allocate(js)


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
