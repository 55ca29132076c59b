"""One Volcano scheduling session: the figures its plugins compute at the start, and what its actions share.

Volcano's scheduler runs in *sessions* (one per second by default). Each one
opens with a snapshot of the cluster, lets every plugin compute its figures
(``OnSessionOpen``: the proportion plugin each queue's deserved share, the
overcommit plugin the room the enqueue action may promise, the drf plugin
each job's share), then runs the configured actions in turn on that snapshot
(Volcano ``pkg/scheduler/framework/session.go``; gangkit's actions are in
:mod:`gangkit.volcano.actions`). :class:`Session` is that snapshot: the
layer's :class:`~gangkit.volcano.cache.JobCache`, the queues' figures, and
the functions the actions call (queue and job order, the trial placement of a
job's pods, binding a placement).

The orders (Volcano v1.15.1's plugins, as its default configuration tiers them):

- queues: higher queue ``priority`` first, then the lowest share, then the
  name (the proportion plugin's QueueOrderFn, with a tie-break);
- jobs within a queue (``Session.JobOrderFn``, tier by tier): higher
  priority first (priority plugin), then jobs not yet ready (gang plugin:
  ``JobInfo.IsReady``, bound and finished pods at least ``minMember``),
  then the lower dominant share of what the job's pods hold (drf plugin,
  :mod:`gangkit.volcano.plugins.drf`), then creation. A job with no pod
  bound has share 0, so waiting gangs keep their creation order; the share
  tells apart jobs that already hold pods (a ready job with pods still
  waiting, a gang that lost pods). ``largest-first`` (gangkit's) puts the
  GPUs of the whole gang, largest first, before creation. With the sla
  plugin (:mod:`gangkit.volcano.plugins.sla`), jobs with a waiting time
  come before the drf share (in the gang plugin's tier) or before priority
  (in a tier before gang's), earliest deadline first.

A job's share changes only when its pods do: it is computed when the job
first needs a key in a session (from its bound pods, over the ready nodes'
total) and then moved by each pod the session binds for it, as the drf
plugin's AllocateFunc moves it.

Within a session, allocate takes a job's waiting pods from a
:class:`Worksheet`, Volcano's per-job task queue
(``organizeJobWorksheet`` in ``pkg/scheduler/actions/allocate/allocate.go``):
each pod is tried at most once per session, and a pod of a role (pod set)
that fitted nowhere leaves the other pods of that role untried
(``JobInfo.TaskHasFitErrors``).
"""

from __future__ import annotations

import math

from gangkit.engine.sockets import Cluster
from gangkit.engine.state import JobState, NodeState, PodState
from gangkit.model.resources import INFINITE, ZERO, Resources, pod_resources
from gangkit.volcano.api import Queue, VolcanoSetup, job_min_resources
from gangkit.volcano.cache import INQUEUE, PENDING, RUNNING, JobCache, PendingJob, exact_give_back
from gangkit.volcano.plugins.drf import dominant_share
from gangkit.volcano.plugins.gang import gang_ready, ready_pods, role_minimums
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
        self.worksheets: dict[int, Worksheet] = {}  # job index -> its waiting pods in this session (allocate)
        self.allocated: dict[int, Resources] = {}  # job index -> what its pods hold (the drf plugin's allocated)
        self._total: Resources | None = None  # the ready nodes' total (the drf plugin's totalResource)

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

    def job_key(self, js: JobState, entry: PendingJob | None = None) -> tuple:
        """Volcano's job order within a queue (see the module doc).

        ``entry`` is the job's heap entry in a line of jobs with no pod bound (its order when it was queued:
        not ready, drf share 0); without it the job is keyed from its pods (it holds some).
        """
        if entry is not None:
            prio, ready, share, seq = entry.neg_priority, 0, 0.0, entry.seq
        else:
            prio, ready, seq = -js.priority, 1 if ready_pods(js) >= js.gang_size else 0, js.seq
            share = self.share(js)
        tail = (share, -sum(p.pod_set.gpus for p in js.pods), seq) if self.ordering == "largest-first" else (share, seq)
        sla = self.cache.sla
        if sla is not None:  # the sla plugin's JobOrderFn, after gang's in its tier, or before priority's
            key = sla.order_key(js, self.cache.created.get(js.index, self.now))
            return (key, prio, ready, *tail) if sla.first_tier else (prio, ready, key, *tail)
        return (prio, ready, *tail)

    def plain_job_order(self) -> bool:
        """The job order of a heap entry is the entry's own (priority, then creation): no ``largest-first``, no sla
        plugin. :meth:`job_key` is then ``(entry.neg_priority, 0, 0.0, entry.seq)``, which allocate builds inline."""
        return self.ordering != "largest-first" and self.cache.sla is None

    def share(self, js: JobState) -> float:
        """The drf plugin's share of the job: the dominant share of what its bound pods hold
        (:func:`gangkit.volcano.plugins.drf.dominant_share`), 0 for a job with none bound."""
        if not js.bound:
            return 0.0
        held = self.allocated.get(js.index)
        if held is None:
            held = self.allocated[js.index] = sum_resources(p for p in js.pods if p.node is not None)
        return dominant_share(held, self.total())

    def total(self) -> Resources:
        """The ready nodes' total, once per session (GPUs alone when no node models CPU or memory)."""
        if self._total is None:
            cap = self.sim.capacity
            if cap.models_cpu_or_memory:
                self._total = cluster_resources(self.sim)[0]
            else:
                self._total = Resources(float(cap.total_ready_gpus), math.inf, math.inf)
        return self._total

    def worksheet(self, js: JobState, pods: list[PodState]) -> Worksheet:
        """The job's :class:`Worksheet` for this session, made from ``pods`` (its allocatable waiting pods, in
        order) at its first turn."""
        ws = self.worksheets.get(js.index)
        if ws is None:
            ws = self.worksheets[js.index] = Worksheet(js, pods)
        return ws

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
    def commit(self, js: JobState, placement: list, taken: bool = False, ws: Worksheet | None = None) -> None:
        """Bind the placed pods; the queue's allocation, the job's drf share, the PodGroup's phase and the partly
        placed jobs follow.

        ``taken``: the placement is a kept trial's (:func:`trial` with ``keep``), its resources already taken.
        ``ws``: the job's worksheet, which knows (without a look at every pod) whether the job is ready and
        how many of its pods still wait."""
        bind = self.sim.bind
        for pod, node in placement:
            bind(pod, node, taken)
        cache = self.cache
        cache.shortfall.pop(js.index, None)  # allocate's figure is of the job with none of these bound
        attr = self.attr_of(js) if self.attrs else None
        placed = None
        if attr is not None:
            placed = sum_resources(p for p, _ in placement)
            attr.allocated = attr.allocated + placed
            attr.update_share()
        held = self.allocated.get(js.index)
        if held is not None:  # the drf plugin's AllocateFunc
            self.allocated[js.index] = held + (placed if placed is not None else sum_resources(p for p, _ in placement))
        if ws is not None:
            ws.bound(placement)
            ready, waiting = ws.ready(), ws.waiting > 0
        else:
            ready, waiting = gang_ready(js), any(p.node is None and not p.done for p in js.pods)
        if ready:
            cache.phase[js.index] = RUNNING
        if waiting:
            cache.partial[js.index] = js
        else:
            cache.partial.pop(js.index, None)


class Worksheet:
    """One job's waiting pods in one session: Volcano allocate's task queue for the job, and its readiness.

    Volcano v1.15.1 (``pkg/scheduler/actions/allocate/allocate.go``) builds, once per session, a queue of each
    job's pending pods that allocate may place (``organizeJobWorksheet``); each turn of the job
    (``allocateResourcesForTasks``) pops pods from it, so a pod tried in one turn is not tried again in the
    session. ``at`` is how far the turns have gone in ``pods``; ``failed`` holds the roles (pod sets) of the
    pods that fitted nowhere (``JobInfo.NodesFitErrors``: the other pods of that role are passed over,
    ``TaskHasFitErrors``); ``waiting`` counts the job's pods not bound (those allocate may not place too).

    Readiness (the gang plugin's JobReadyFn, :func:`gangkit.volcano.plugins.gang.gang_ready`) is kept as
    counts so that a turn asks it per pod at no cost: ``need``, the pods still missing to ``minMember``, and,
    when roles have minimums, ``short``: per role short of its minimum, the pods it still misses.
    ``reached``: the last turn (:func:`trial` with the worksheet) left the job ready with what it placed.
    """

    __slots__ = ("js", "pods", "at", "failed", "waiting", "need", "short", "reached", "_exact")

    def __init__(self, js: JobState, pods: list[PodState]):
        self.js = js
        self.pods = pods
        self.at = 0
        self.failed: set[str] = set()
        self.waiting = sum(1 for p in js.pods if p.node is None and not p.done)
        self.need = js.gang_size - ready_pods(js)
        mins = role_minimums(js)
        short: dict[str, int] = {}
        if mins:
            have: dict[str, int] = {}
            for p in js.pods:
                if p.node is not None or p.done:
                    have[p.pod_set.name] = have.get(p.pod_set.name, 0) + 1
            short = {role: m - have.get(role, 0) for role, m in mins.items() if m > have.get(role, 0)}
        self.short = short
        self.reached = False  # the last turn left the job ready (with what it placed)
        self._exact: bool | None = None

    def exact(self, cap) -> bool:
        """:func:`keeps_exactly` for the worksheet's pods (asked once per session)."""
        if self._exact is None:
            self._exact = keeps_exactly(cap, self.pods)
        return self._exact

    def left(self) -> bool:
        """Pods remain in the job's queue for this session (Volcano pushes the job back while ``tasks.Len() > 0``)."""
        return self.at < len(self.pods)

    def ready(self) -> bool:
        """JobReady with the job's bound (and finished) pods."""
        return self.need <= 0 and not self.short

    def bound(self, placement: list) -> None:
        """The pods of a turn were bound: readiness and the waiting count follow."""
        self.need -= len(placement)
        self.waiting -= len(placement)
        if self.short:
            for p, _ in placement:
                role = p.pod_set.name
                m = self.short.get(role)
                if m is not None:
                    if m <= 1:
                        del self.short[role]
                    else:
                        self.short[role] = m - 1

    def go_on(self, placed: list) -> bool:
        """A pod just fitted nowhere (its role is in ``failed``): does the turn try the job's next pods?

        Volcano's ``JobInfo.NeedContinueAllocating`` (v1.15.1 ``pkg/scheduler/api/job_info.go``): never
        when ``minMember`` is the job's pod count (a whole gang stops at its first pod that fits nowhere);
        when ``minMember`` is below the sum of the roles' minimums, while the pods bound, placed in this
        turn and not yet placed outside the failed roles could still reach ``minMember``; otherwise unless
        a failed role with a minimum has fewer pods bound and placed than that minimum.
        """
        js = self.js
        if js.gang_size == len(js.pods):
            return False
        mins = {ps.name: ps.min_member for ps in js.spec.pod_sets if ps.min_member is not None}
        in_turn = {id(p) for p, _ in placed}
        if js.gang_size < sum(mins.values()):
            left = sum(1 for p in js.pods if p.node is None and not p.done and id(p) not in in_turn
                       and p.pod_set.name not in self.failed)
            return ready_pods(js) + len(placed) + left >= js.gang_size
        for role in self.failed:
            m = mins.get(role, 0)
            if m and sum(1 for p in js.pods if p.pod_set.name == role
                         and (p.node is not None or p.done or id(p) in in_turn)) < m:
                return False
        return True


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
          keep: bool = False, ws: Worksheet | None = None) -> list[tuple[PodState, NodeState]]:
    """Where the pods would go, in order, stopping at the first that fits nowhere (no state kept).

    Each pod goes on the best-scoring node (:meth:`gangkit.engine.capacity.FreeCapacity.choose`),
    as Volcano's allocate places one task after another; a pod of a one-per-node pod set
    skips the nodes of its group's pods, bound or placed earlier in this trial
    (the predicates plugin runs kube-scheduler's InterPodAffinity Filter,
    ``pkg/scheduler/plugins/predicates``, Volcano v1.15.1). With the queue's
    figures (``attr``), a pod that would take the queue above its deserved
    share is left out (proportion's AllocatableFn).

    With a worksheet (``ws``) the trial is one *turn* of the job, as
    Volcano v1.15.1's ``allocateResourcesForTasks`` makes it: the pods come
    from the worksheet (``pods`` is ignored), each taken off it as it is
    tried; the turn stops as soon as the job is ready (so a job already
    ready gets one pod); a pod that fits nowhere marks its role failed, the
    other pods of that role are passed over, and the turn goes on only when
    :meth:`Worksheet.go_on` says so. ``ws.at`` is left after the last pod
    tried.

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
    if ws is not None:  # readiness as two counts: pods still missing to minMember, roles short of their minimum
        pods, i, failed = ws.pods, ws.at, ws.failed
        need, short = ws.need, dict(ws.short) if ws.short else None
        missing = len(short) if short else 0
    else:
        i, failed = 0, ()
    n = len(pods)
    while i < n:
        p = pods[i]
        i += 1
        ps = p.pod_set
        if attr is not None:
            r = pod_resources(ps)
            if not attr.allocatable(r, taken):
                continue
        if ws is not None and ps.name in failed:
            continue  # TaskHasFitErrors: a pod of this role fitted nowhere in this session
        node = cap.choose(*ps.request) if not ps.one_per_node else cap.choose_for(p, placed)  # choose_for, inline
        if node is None:
            if ws is None:
                break
            failed.add(ps.name)
            if ws.go_on(placed):
                continue
            break
        cap.take(node, ps.gpus, ps.cpu, ps.memory)
        placed.append((p, node))
        if attr is not None:
            taken = taken + r
        if ws is not None:
            need -= 1
            if short:
                m = short.get(ps.name)
                if m is not None:
                    short[ps.name] = m - 1
                    if m == 1:
                        missing -= 1
            if need <= 0 and not missing:
                break  # JobReady: the turn ends, the job goes back to its queue's order
    if ws is not None:
        ws.at = i
        ws.reached = need <= 0 and not missing
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
