"""One Volcano scheduling session: the figures its plugins compute at the start, and what its actions share.

Volcano's scheduler runs in *sessions* (one per second by default). Each one
opens with a snapshot of the cluster, lets every plugin compute its figures
(``OnSessionOpen``: the proportion plugin each queue's deserved share, the
overcommit plugin the room the enqueue action may promise), then runs the
configured actions in turn on that snapshot (Volcano
``pkg/scheduler/framework/session.go``; gangkit's actions are in
:mod:`gangkit.volcano.actions`). :class:`Session` is that snapshot: the
layer's :class:`~gangkit.volcano.cache.JobCache`, the queues' figures, and
the functions the actions call (queue and job order, the trial placement of a
job's pods, binding a placement).

The orders (Volcano's plugins, as configured by gangkit):

- queues: higher queue ``priority`` first, then the lowest share, then the
  name (the proportion plugin's QueueOrderFn, with a tie-break);
- jobs within a queue: higher priority first, then jobs not yet ready, then
  creation (the priority and gang plugins' JobOrderFn); ``largest-first``
  puts the GPUs of the whole gang, largest first, before creation. With the
  sla plugin (:mod:`gangkit.volcano.plugins.sla`), jobs with a waiting time
  come before creation order (or, in a tier before gang's, before priority),
  earliest deadline first.
"""

from __future__ import annotations

import math

from gangkit.engine.sockets import Cluster
from gangkit.engine.state import JobState, NodeState, PodState
from gangkit.model.resources import INFINITE, ZERO, Resources, pod_resources
from gangkit.volcano.api import Queue, VolcanoSetup, job_min_resources
from gangkit.volcano.cache import INQUEUE, PENDING, RUNNING, JobCache, exact_give_back
from gangkit.volcano.plugins.gang import gang_ready
from gangkit.volcano.plugins.overcommit import ClusterRoom
from gangkit.volcano.plugins.proportion import QueueAttr, proportion


class Session:
    """One session's snapshot: the cache, the queues' figures (``attrs``, None when nothing needs them), the room."""

    def __init__(self, sim: Cluster, now: float, cache: JobCache, queues: dict[str, Queue], ordering: str,
                 attrs: dict[str, QueueAttr] | None = None, room: ClusterRoom | None = None):
        self.sim = sim
        self.now = now
        self.cache = cache
        self.queues = queues
        self.ordering = ordering
        self.attrs = attrs
        self._room = room
        self.blocked: list[JobState] = []  # jobs allocate could not place in this session
        self.reservations: dict[int, float] = {}  # job index -> reservation time (easy- and conservative-backfill)
        self.kept: list = []  # (pod, node) that pipelined jobs keep allocated until the session ends (sla plugin)

    @property
    def room(self) -> ClusterRoom:
        """The overcommit plugin's figures (made on first use: most sessions never promise anything)."""
        if self._room is None:
            self._room = ClusterRoom(ZERO)
        return self._room

    # -- orders -------------------------------------------------------------------
    def queue_key(self, q: str) -> tuple:
        attrs = self.attrs or {}
        return attrs[q].order_key() if q in attrs else (-self.queues[q].priority, 0.0, q)

    def queue_order(self, names) -> list[str]:
        if len(names) == 1:  # the usual case: one queue with work, nothing to rank
            return list(names)
        return sorted(names, key=self.queue_key)

    def job_key(self, js: JobState, entry: tuple | None = None) -> tuple:
        """Volcano's job order within a queue (see the module doc).

        ``entry`` is the job's heap entry (its order when it was queued);
        without it the job is partly placed.
        """
        if entry is not None:
            prio, ready, seq = entry[0], 0, entry[1]
        else:
            prio, ready, seq = -js.priority, 1 if gang_ready(js) else 0, js.seq
        tail = (-sum(p.pod_set.gpus for p in js.pods), seq) if self.ordering == "largest-first" else (seq,)
        sla = self.cache.sla
        if sla is not None:  # the sla plugin's JobOrderFn, after gang's in its tier, or before priority's
            key = sla.order_key(js, self.cache.created.get(js.index, self.now))
            return (key, prio, ready, *tail) if sla.first_tier else (prio, ready, key, *tail)
        return (prio, ready, *tail)

    def plain_job_order(self) -> bool:
        """The job order of a heap entry is the entry's own (priority, then creation): no ``largest-first``, no sla
        plugin. :meth:`job_key` is then ``(entry[0], 0, entry[1])``, which allocate builds inline."""
        return self.ordering != "largest-first" and self.cache.sla is None

    def pipelined(self, js: JobState) -> bool:
        """The session's JobPipelined for a job whose gang is not complete: True only when the sla plugin
        sits in a tier before gang's and the job has waited its waiting time (:mod:`gangkit.volcano.plugins.sla`)."""
        sla = self.cache.sla
        return (sla is not None and sla.first_tier
                and sla.permits(js, self.cache.created.get(js.index, self.now), self.now))

    def keep(self, placement: list) -> None:
        """Keep a pipelined job's trial allocated, unbound, until the session ends (:meth:`release_kept`)."""
        cap = self.sim.capacity
        for p, node in placement:
            ps = p.pod_set
            cap.take(node, ps.gpus, ps.cpu, ps.memory)
        self.kept.extend(placement)

    def release_kept(self) -> None:
        """The session ends: what pipelined jobs kept is free again (nothing of it was bound)."""
        cap = self.sim.capacity
        for p, node in self.kept:
            ps = p.pod_set
            cap.give(node, ps.gpus, ps.cpu, ps.memory)
        self.kept = []

    def attr_of(self, js: JobState) -> QueueAttr | None:
        """The proportion plugin's figures for the job's queue (None when nothing needs them)."""
        return (self.attrs or {}).get(js.spec.volcano_queue)

    # -- placing ------------------------------------------------------------------
    def commit(self, js: JobState, placement: list, taken: bool = False) -> None:
        """Bind the placed pods; the queue's allocation, the PodGroup's phase and the partly placed jobs follow.

        ``taken``: the placement is a kept trial's (:func:`trial` with ``keep``), its resources already taken."""
        bind = self.sim.bind
        for pod, node in placement:
            bind(pod, node, taken)
        cache = self.cache
        cache.shortfall.pop(js.index, None)  # allocate's figure is of the job with none of these bound
        attr = self.attr_of(js) if self.attrs else None
        if attr is not None:
            attr.allocated = attr.allocated + sum_resources(p for p, _ in placement)
            attr.update_share()
        if gang_ready(js):
            cache.phase[js.index] = RUNNING
        if any(p.node is None and not p.done for p in js.pods):
            cache.partial[js.index] = js
        else:
            cache.partial.pop(js.index, None)


def open_session(sim: Cluster, now: float, cache: JobCache, setup: VolcanoSetup, queues: dict[str, Queue],
                 ordering: str, proportional: bool) -> Session:
    """The session's snapshot, with the proportion and overcommit plugins' figures when anything can use them."""
    needed = proportional or cache.needs_minimums()
    if not needed:
        return Session(sim, now, cache, queues, ordering)
    total, used = cluster_resources(sim)
    attrs: dict[str, QueueAttr] = {}
    promised = ZERO
    for js in cache.jobs.values():
        q = js.spec.volcano_queue
        a = attrs.get(q) or attrs.setdefault(q, QueueAttr(queues[q]))
        phase = cache.phase.get(js.index)
        held = sum_resources(p for p in js.pods if p.node is not None)
        exists = not (js.spec.controller == "volcano" and phase == PENDING)
        waiting = sum_resources(p for p in js.pods if p.node is None and not p.done) if exists else ZERO
        a.allocated, a.request = a.allocated + held, a.request + held + waiting
        minimum = job_min_resources(js.spec)
        if minimum is None:
            a.elastic = a.elastic + held
            continue
        a.elastic = a.elastic + (held - minimum)
        if phase == INQUEUE or (phase == RUNNING and js.bound >= js.gang_size):  # proportion's OnSessionOpen
            a.inqueue = a.inqueue + (minimum - held)
            promised = promised + (minimum if phase == INQUEUE else minimum - held)
    proportion(total, attrs, queues.values())
    room = ClusterRoom(total * setup.overcommit_factor - used if setup.overcommit else INFINITE, promised)
    return Session(sim, now, cache, queues, ordering, attrs, room)


def trial(sim: Cluster, pods: list[PodState], attr: QueueAttr | None = None,
          keep: bool = False) -> list[tuple[PodState, NodeState]]:
    """Where the pods would go, in order, stopping at the first that fits nowhere (no state kept).

    Each pod goes on the best-scoring node (:meth:`gangkit.engine.capacity.FreeCapacity.choose`),
    as Volcano's allocate places one task after another; a pod of a one-per-node pod set
    skips the nodes of its group's pods, bound or placed earlier in this trial
    (the predicates plugin runs kube-scheduler's InterPodAffinity Filter,
    ``pkg/scheduler/plugins/predicates``, Volcano v1.15.1). With the queue's
    figures (``attr``), a pod that would take the queue above its deserved
    share is left out (proportion's AllocatableFn).

    A trial that gives back exactly what it took leaves the capacity's
    ``grow_version`` as it was: the free room did not grow.

    With ``keep`` the trial's resources stay taken and the caller either
    binds the placement with them (``Session.commit(..., taken=True)``) or
    gives them back (:func:`give_back`). Only for pods whose give-back is exact
    (:func:`keeps_exactly`): taking, giving back and taking again then leaves
    every free amount bit for bit as one take does, so the result is the same.
    """
    cap = sim.capacity
    placed = []
    taken = ZERO
    for p in pods:
        ps = p.pod_set
        if attr is not None:
            r = pod_resources(ps)
            if not attr.allocatable(r, taken):
                continue
        node = cap.choose(*ps.request) if not ps.one_per_node else cap.choose_for(p, placed)  # choose_for, inline
        if node is None:
            break
        cap.take(node, ps.gpus, ps.cpu, ps.memory)
        placed.append((p, node))
        if attr is not None:
            taken = taken + r
    if not keep:
        give_back(cap, placed)
    return placed


def give_back(cap, placed: list) -> None:
    """Discard a trial's statement: give every placed pod's resources back (see :func:`trial`)."""
    version, restored = cap.grow_version, True
    for p, node in placed:
        ps = p.pod_set
        cap.give(node, ps.gpus, ps.cpu, ps.memory)
        if restored and (ps.cpu or ps.memory):
            restored = exact_give_back(ps.cpu, ps.memory)
    if restored and cap.exact_amounts:  # everything is back bit for bit: the free room did not grow
        cap.grow_version = version


def keeps_exactly(cap, pods: list[PodState]) -> bool:
    """Every pod's give-back is exact on these nodes (:func:`gangkit.volcano.cache.exact_give_back`), so
    a trial may keep what it took (:func:`trial`'s ``keep``)."""
    if not cap.exact_amounts:
        return False
    for p in pods:
        ps = p.pod_set
        if (ps.cpu or ps.memory) and not exact_give_back(ps.cpu, ps.memory):
            return False
    return True


def cluster_resources(sim: Cluster) -> tuple[Resources, Resources]:
    """Total and used GPUs, CPU and memory of the ready nodes (a resource a node does not model is infinite)."""
    cap = sim.capacity
    cpu = memory = used_cpu = used_memory = 0.0
    for st in cap.nodes:
        if not st.ready:
            continue
        if st.node.cpu is None:
            cpu = math.inf
        else:
            cpu += st.node.cpu
            used_cpu += st.node.cpu - st.free_cpu
        if st.node.memory is None:
            memory = math.inf
        else:
            memory += st.node.memory
            used_memory += st.node.memory - st.free_memory
    gpus = float(cap.total_ready_gpus)
    return Resources(gpus, cpu, memory), Resources(gpus - cap.free_ready_gpus, used_cpu, used_memory)


def sum_resources(pods) -> Resources:
    """The pods' requests added up, as one vector."""
    total = ZERO
    for p in pods:
        total = total + pod_resources(p.pod_set)
    return total
