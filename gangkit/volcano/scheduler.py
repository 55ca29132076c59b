"""Gang placement with Volcano's semantics: all of a gang's pods, or none.

Volcano's scheduler works in *sessions* (one per second by default,
``RunSettings.session_period``). Each session runs its actions in turn
(Volcano ``pkg/scheduler/actions``), as in the configuration
``actions: "enqueue, allocate, preempt, reclaim"``:

1. **enqueue** (:mod:`gangkit.volcano.actions.enqueue`): a PodGroup goes from
   ``Pending`` to ``Inqueue`` when its ``minResources`` fit its queue's
   capability and the cluster's idle room times the overcommit factor. A
   Volcano Job's pods are created only then (they can be placed from the
   next session on); a batch/v1 Job's pods exist from the start.
2. **allocate**: queues are visited lowest share first
   (:mod:`gangkit.volcano.plugins.proportion`), one job at a time, each queue's jobs by
   priority, then jobs not yet ready, then creation. For each job Volcano
   makes a *trial* placement of its pods on the current nodes; if the job is
   then *ready* (``minMember`` pods and every role's ``minTaskMember``,
   :mod:`gangkit.volcano.plugins.gang`), the trial is committed and the pods are
   bound; otherwise the trial is discarded and *nothing is held* until the
   next session. A queue at or above its deserved share is skipped for the
   session, and a pod that would take its queue above its deserved share is
   left out of the trial.
3. **preempt** and **reclaim** (:mod:`gangkit.volcano.actions.preempt`, only with
   ``RunSettings.preemption``): a waiting gang evicts lower-priority jobs of
   its own queue, or jobs of queues above their deserved share, never
   leaving a victim gang running below its minMember.
4. **backfill**, only with ``ordering: volcano-backfill`` (below).

What allocate does within a queue is the ``ordering`` setting (the
backfilling ones are in :mod:`gangkit.volcano.actions.backfill`):

- ``skip`` (Volcano's behaviour): move on and try the queue's next job, so
  small jobs may start while a big gang waits; a job that can never fit
  blocks nobody;
- ``strict``: the queue stops at its first job that does not fit, so nobody
  of that queue overtakes it (head-of-line blocking: the gang is protected,
  GPUs idle). Other queues go on;
- ``largest-first`` ("most servers first"): each queue's jobs ordered by the
  GPUs of the whole gang, largest first (after priority and readiness; ties
  by creation), then placed as ``skip`` places them. ``skip`` rather than
  ``strict``, because under ``strict`` the largest waiting gang would idle
  its queue whenever it does not fit; with ``skip`` the big gangs get the
  first pick and the small ones fill what is left (first-fit decreasing).
  It favours big gangs but does not guarantee them a start;
- ``volcano-backfill``: ``skip``, then Volcano's own ``backfill`` action
  after allocate, preempt and reclaim (``pkg/scheduler/actions/backfill``).
  It places only *best-effort* pods, whose resource request is empty
  (Volcano's ``TaskInfo.BestEffort``; in gangkit: 0 GPUs, 0 CPU, 0 memory),
  which allocate leaves out; one by one in queue order then job order, on
  the best-scoring node, stopping at the first that fits nowhere; a job's
  pods are bound only once the job is ready (the session's ``Allocate``, in
  pkg/scheduler/framework/session.go, dispatches a job's allocated pods only
  when ``minMember`` are allocated). It never looks ahead and never
  places a pod that asks for a GPU, so **it cannot help GPU gangs**: for
  them it is ``skip``. A job that mixes both kinds of pods and whose
  ``minMember`` needs both never becomes ready (allocate sees one kind,
  backfill the other);
- ``easy-backfill`` and ``conservative-backfill`` replace the trial
  placement of allocate by *reservations* in a book of future capacity per
  node (:mod:`gangkit.volcano.reservations`). **One book per session over all queues**:
  jobs are taken in the order allocate visits them (queues by queue order,
  one job at a time, each queue's jobs in job order); with EASY the first of
  them that cannot start is the head and the only one with a reservation,
  with conservative every one gets a reservation in that order; a job
  starts now only where it touches no reservation; a job whose queue's
  deserved share would not let it have its pods now gets neither a start
  nor a reservation. Reservations are re-planned at every session, with
  estimated run times (a job's ``activeDeadlineSeconds``, else its true run
  time times ``RunSettings.estimate_factor``). Volcano has no reservations:
  these two are gangkit's contrast, from batch schedulers.

Within a trial, pods are placed one after another on the best-scoring node
(:mod:`gangkit.engine.capacity`), and the trial stops at the first pod that fits
nowhere, as Volcano's allocate does. A job whose ``minMember`` is smaller
than its pod count is ready once ``minMember`` pods are bound; its other
pods are placed in later sessions as room appears.

Not modelled: pipelining onto capacity that is being released,
hierarchical queues, network topology (see the reference pages,
docs/reference/volcano.md and docs/reference/simulator.md).

Speed: jobs waiting in allocate are kept per queue in one heap per *shape*
(their pod requests and gang sizes). Room only shrinks within a session, so
once the first job of a shape fails, all jobs of that shape behind it fail
too: a session costs a few trials per shape plus one per job started,
whatever the queue length (``easy-backfill`` and ``conservative-backfill``
look at every waiting job: see :mod:`gangkit.volcano.reservations`). With several
queues (or queue limits), each session also sums what every live job holds and asks for, as the proportion
plugin does at session open: that part grows with the number of live jobs.
"""

from __future__ import annotations

import heapq
import math
from collections import defaultdict

from gangkit.engine.simulation import Simulation
from gangkit.engine.state import JobState, PodState
from gangkit.model.reasons import Reason
from gangkit.volcano.actions.backfill import RESERVING, SHAPE_SKIPPING, ReservationSession, best_effort
from gangkit.volcano.actions.enqueue import ClusterRoom, admit, enqueue_verdict, job_min_resources
from gangkit.volcano.actions.preempt import Bundle, job_bundles, select_victims
from gangkit.volcano.plugins.proportion import QueueAttr, VolcanoSetup, proportion
from gangkit.volcano.plugins.gang import gang_ready, ready_pods
from gangkit.model.resources import ZERO, Resources, pod_resources
from gangkit.engine.sockets import PlacementLayer

PENDING, INQUEUE, RUNNING = "Pending", "Inqueue", "Running"  # PodGroup phases
#: orderings that place same-shape jobs in creation order, stopping at the first that does not fit
ARRIVAL_ORDERINGS = ("skip", "strict", "largest-first", "volcano-backfill")


class VolcanoGang(PlacementLayer):
    """The ``gang`` placement layer."""

    name = "placement"
    pending_metrics = ("volcano_unschedule_task_count", "volcano_unschedule_job_count")

    def __init__(self, ordering: str = "skip", period: float = 1.0, setup: VolcanoSetup | None = None,
                 preemption: bool = False, shortcuts: bool = True, estimate_factor: float = 1.0):
        self.ordering = ordering
        self.period = period
        self.estimate_factor = estimate_factor  # backfilling's run-time estimates (RunSettings.estimate_factor)
        self.shortcuts = shortcuts  # backfilling's fast paths; False gives the plain search (differential test)
        self.setup = setup if setup is not None else VolcanoSetup()
        self.queues = self.setup.all_queues()
        self.proportional = not self.setup.trivial
        self.preemption = preemption
        self._jobs: dict[int, JobState] = {}  # every job this layer holds, until it ends
        self._phase: dict[int, str] = {}  # job -> its PodGroup's phase
        self._pending: dict[str, list] = defaultdict(list)  # queue -> heap of PodGroups still Pending
        self._creating: list = []  # heap of (time, seq, index, job): Volcano Jobs whose pods appear then
        self._shapes: dict[str, dict[tuple, list]] = defaultdict(lambda: defaultdict(list))  # queue -> shape -> heap
        self._partial: dict[int, JobState] = {}  # jobs with some pods bound and some waiting
        self._blocked_jobs: list[JobState] = []
        self._refused: dict[int, Reason] = {}  # why a PodGroup is still Pending
        self._attrs: dict[str, QueueAttr] | None = None  # the proportion plugin's figures for this session
        self._room = ClusterRoom(ZERO)
        self.reservations: dict[int, float] = {}  # job index -> reservation time, from the last session
        self.first_reservation: dict[str, float] = {}  # job name -> the first reservation it was given

    # -- socket -------------------------------------------------------------
    def enqueue(self, jobs: list[JobState], now: float) -> None:
        for js in jobs:
            self._jobs[js.index] = js
            self._to_pending(js)

    def requeue(self, js: JobState, now: float) -> None:
        """Pods recreated after an eviction; the job keeps its place (ordered by creation time)."""
        self._partial.pop(js.index, None)
        if js.bound:  # some pods still run: the PodGroup stays as it is
            self._partial[js.index] = js
        else:  # the whole job was stopped: its PodGroup waits to be enqueued again
            self._to_pending(js)

    def forget(self, js: JobState) -> None:
        for d in (self._jobs, self._phase, self._partial, self._refused):
            d.pop(js.index, None)  # heap entries of a job no longer here are stale

    def _to_pending(self, js: JobState) -> None:
        self._phase[js.index] = PENDING
        heapq.heappush(self._pending[js.spec.volcano_queue], (-js.priority, js.seq, js.index, js))

    def _to_allocate(self, js: JobState) -> None:
        """An Inqueue job whose pods exist: allocate may place it."""
        if js.bound:
            self._partial[js.index] = js
        else:
            heapq.heappush(self._shapes[js.spec.volcano_queue][self.shape(js)], (-js.priority, js.seq, js.index, js))

    @staticmethod
    def shape(js: JobState) -> tuple:
        """Jobs of one shape succeed or fail together against the same free capacity.

        The shape is taken from the pods (an admission layer may have added a
        flavor's node selector to them), the gang size and the role minimums.
        """
        return (tuple(p.request for p in js.pods), js.gang_size, tuple(ps.min_member for ps in js.spec.pod_sets))

    def unschedulable(self) -> list[PodState]:
        """Pods that wait for room after the last session (what autoscalers see).

        These are the pods of jobs that allocate could not place and, with
        ``skip`` (and the orderings that skip as it does), of the waiting jobs
        of the same shape behind them, and the
        pods of batch/v1 Jobs whose PodGroup is still Pending. A Volcano Job
        whose PodGroup is Pending has no pods yet: nothing of it is listed.
        """
        out = [p for js in self._blocked_jobs for p in js.pods if p.node is None and not p.done]
        listed = {js.index for js in self._blocked_jobs}
        if self.ordering in SHAPE_SKIPPING:
            shapes = {(js.spec.volcano_queue, self.shape(js)) for js in self._blocked_jobs if not js.bound}
            for q, shape in sorted(shapes, key=repr):
                for entry in sorted(self._shapes.get(q, {}).get(shape, ())):
                    js = entry[3]
                    if js.index not in listed and self._waits_whole(js, INQUEUE):
                        listed.add(js.index)
                        out.extend(p for p in js.pods if p.node is None and not p.done)
        for q in sorted(self._pending):
            for entry in sorted(self._pending[q]):
                js = entry[3]
                if js.spec.controller == "batch" and js.index not in listed and self._waits_whole(js, PENDING):
                    listed.add(js.index)
                    out.extend(p for p in js.pods if p.node is None and not p.done)
        return out

    def _waits_whole(self, js: JobState, phase: str) -> bool:
        """The heap entry is current: the job waits with no pod bound, in this phase."""
        return self._phase.get(js.index) == phase and js.placing and not js.bound and js.state == "Pending"

    # -- one session ----------------------------------------------------------
    def _nothing_waits(self) -> bool:
        """No PodGroup waits to be enqueued or allocated (and no queue shares to compute)."""
        return not (self._pending or self._creating or self._partial or self.proportional or any(self._shapes.values()))

    def places_in_arrival_order(self, scenario) -> bool:
        """True for the default setup (one queue, no Volcano objects) and an ordering that places jobs of one shape
        in creation order, stopping at the first that does not fit: each session then enqueues every Pending
        PodGroup and allocate binds the waiting one-pod jobs in arrival order while a node has room
        (:mod:`gangkit.engine.lean` runs such runs on a plain event heap).

        ``strict``, ``skip``, ``largest-first`` and ``volcano-backfill`` all do that when every job has the
        same shape: the first job that does not fit is followed only by jobs that do not fit. Preemption
        changes nothing with one queue and one priority.
        """
        return scenario.volcano is None and self.ordering in ARRIVAL_ORDERINGS and not self.proportional

    def idle(self) -> bool:
        """A session now would change nothing (the engine then skips it): nothing waits, and the
        figures a session leaves (see cycle) are already those of an empty session."""
        return (self._nothing_waits() and self._attrs is None and not self._blocked_jobs
                and not (self.ordering in RESERVING and self.reservations))

    def cycle(self, sim: Simulation, now: float) -> None:
        if self._nothing_waits():
            # every action below would find nothing to do; these are the figures they would leave
            self._attrs = None
            self._blocked_jobs = []
            if self.ordering in RESERVING:
                self.reservations = {}
            return
        self._open_session(sim)
        self._enqueue_action(sim, now)
        self._allocate_action(sim, now)
        if self.preemption:
            self._evict_action(sim, now, "preempt")
            self._evict_action(sim, now, "reclaim")
        if self.ordering == "volcano-backfill":
            self._backfill_action(sim)
        for q in [q for q, h in self._pending.items() if not h]:
            del self._pending[q]
        for shapes in self._shapes.values():
            for shape in [s for s, h in shapes.items() if not h]:
                del shapes[shape]

    def _open_session(self, sim: Simulation) -> None:
        """The proportion and overcommit plugins' figures, when anything can use them."""
        needed = self.proportional or any(
            job_min_resources(e[3].spec) is not None for h in self._pending.values() for e in h)
        if not needed:
            self._attrs = None
            return
        total, used = cluster_resources(sim)
        attrs: dict[str, QueueAttr] = {}
        promised = ZERO
        for js in self._jobs.values():
            q = js.spec.volcano_queue
            a = attrs.get(q) or attrs.setdefault(q, QueueAttr(self.queues[q]))
            phase = self._phase.get(js.index)
            held = _sum(p for p in js.pods if p.node is not None)
            exists = not (js.spec.controller == "volcano" and phase == PENDING)
            waiting = _sum(p for p in js.pods if p.node is None and not p.done) if exists else ZERO
            a.allocated, a.request = a.allocated + held, a.request + held + waiting
            minimum = job_min_resources(js.spec)
            if minimum is None:
                a.elastic = a.elastic + held
                continue
            a.elastic = a.elastic + (held - minimum)
            if phase == INQUEUE or (phase == RUNNING and js.bound >= js.gang_size):  # proportion's OnSessionOpen
                a.inqueue = a.inqueue + (minimum - held)
                promised = promised + (minimum if phase == INQUEUE else minimum - held)
        proportion(total, attrs, self.queues.values())
        self._attrs = attrs
        self._room = ClusterRoom(total * self.setup.overcommit_factor - used, promised)

    def _queue_order(self, names) -> list[str]:
        if len(names) == 1:  # the usual case: one queue with work, nothing to rank
            return list(names)
        attrs = self._attrs or {}
        return sorted(names, key=lambda q: attrs[q].order_key() if q in attrs else (-self.queues[q].priority, 0.0, q))

    # -- enqueue -------------------------------------------------------------
    def _enqueue_action(self, sim: Simulation, now: float) -> None:
        for q in self._queue_order([q for q, h in self._pending.items() if h]):
            heap, kept = self._pending[q], []
            while heap:
                entry = heapq.heappop(heap)
                js = entry[3]
                if not self._waits_whole(js, PENDING):
                    continue
                minimum = job_min_resources(js.spec)
                reason = None if minimum is None else enqueue_verdict(minimum, self._attrs[q], self._room)
                if reason is not None:
                    self._refused[js.index] = reason
                    kept.append(entry)
                    continue
                if minimum is not None:
                    admit(minimum, self._attrs[q], self._room)
                self._refused.pop(js.index, None)
                self._inqueue(sim, js, now)
            for entry in kept:
                heapq.heappush(heap, entry)

    def _inqueue(self, sim: Simulation, js: JobState, now: float) -> None:
        """The PodGroup is Inqueue: a Volcano Job's controller creates its pods now (placed from the next session)."""
        self._phase[js.index] = INQUEUE
        if js.spec.controller == "volcano" and self.period:
            for p in js.pods:
                if p.node is None and not p.done:
                    p.created = now
            heapq.heappush(self._creating, (now + self.period, js.seq, js.index, js))
            sim.call_at(now + self.period, lambda t: sim.request_cycle())
        else:
            self._to_allocate(js)

    # -- allocate --------------------------------------------------------------
    def _key(self, js: JobState, entry: tuple | None = None) -> tuple:
        """Volcano's job order within a queue: priority, then jobs not yet ready, then creation.

        ``largest-first`` puts the GPUs of the whole gang (largest first)
        before creation. ``entry`` is the job's heap entry (its order when
        it was queued); without it the job is partly placed.
        """
        if entry is not None:
            prio, ready, seq = entry[0], 0, entry[1]
        else:
            prio, ready, seq = -js.priority, 1 if gang_ready(js) else 0, js.seq
        if self.ordering == "largest-first":
            return (prio, ready, -sum(p.pod_set.gpus for p in js.pods), seq)
        return (prio, ready, seq)

    def _allocate_action(self, sim: Simulation, now: float) -> None:
        while self._creating and self._creating[0][0] <= now + 1e-9:
            js = heapq.heappop(self._creating)[3]
            if self._phase.get(js.index) == INQUEUE:
                self._to_allocate(js)
        if self.ordering in RESERVING:
            self._allocate_reserving(sim, now)
            return
        heads: dict[str, list] = defaultdict(list)  # queue -> heap of (order key, shape or ("job", index))
        for q, shapes in self._shapes.items():
            for shape, h in shapes.items():
                self._drop_stale(h)
                if h:
                    heads[q].append((self._key(h[0][3], h[0]), shape))
        for js in self._partial.values():
            heads[js.spec.volcano_queue].append((self._key(js), ("job", js.index)))
        attrs = self._attrs or {}
        queues = []
        for q in heads:
            heapq.heapify(heads[q])
            queues.append((self._queue_key(q), q))
        heapq.heapify(queues)
        blocked: list[JobState] = []
        while queues:
            _, q = heapq.heappop(queues)
            if q in attrs and attrs[q].overused():
                continue  # at or above its deserved share: skipped for this session
            _, key = heapq.heappop(heads[q])
            placed = self._allocate_head(sim, q, key, heads[q], blocked)
            if not placed and self.ordering == "strict":
                continue  # the queue waits behind its head
            if heads[q]:
                heapq.heappush(queues, (self._queue_key(q), q))
        self._blocked_jobs = blocked

    def _queue_key(self, q: str) -> tuple:
        attrs = self._attrs or {}
        return attrs[q].order_key() if q in attrs else (-self.queues[q].priority, 0.0, q)

    def _allocate_head(self, sim: Simulation, q: str, key, heads: list, blocked: list) -> bool:
        """Try the best job of one shape (or one partly placed job); False when it could not be placed."""
        if key[0] == "job":
            js = self._partial[key[1]]
            placed = self._allocate(sim, js)
            if not any(p.node is None and not p.done for p in js.pods):
                self._partial.pop(key[1], None)
            if placed is None and not gang_ready(js):
                blocked.append(js)
                return False
            return True
        h = self._shapes[q][key]
        js = h[0][3]
        if self._allocate(sim, js) is None:
            blocked.append(js)
            return False  # the whole shape fails for the rest of this session
        heapq.heappop(h)
        if any(p.node is None and not p.done for p in js.pods):
            self._partial[js.index] = js
        self._drop_stale(h)
        if h:
            heapq.heappush(heads, (self._key(h[0][3], h[0]), key))
        return True

    def _drop_stale(self, q: list) -> None:
        while q and not self._waits_whole(q[0][3], INQUEUE):
            heapq.heappop(q)

    def _allocate(self, sim: Simulation, js: JobState) -> int | None:
        """Trial-place the job's waiting pods; commit if the gang is then ready.

        Returns the number of pods bound, or None when the trial was discarded.
        """
        waiting = self._allocatable_pods(js)
        need = js.gang_size - ready_pods(js)
        cap = sim.capacity
        if need > 0 and sum(sorted(p.pod_set.gpus for p in waiting)[:need]) > cap.free_ready_gpus:
            return None  # not enough free GPUs in total: no trial can succeed
        attr = (self._attrs or {}).get(js.spec.volcano_queue)
        trial = self.trial(sim, waiting, attr)
        if not trial or not gang_ready(js, [p for p, _ in trial]):
            return None
        self._commit(sim, js, trial)
        return len(trial)

    def _allocatable_pods(self, js: JobState) -> list[PodState]:
        """The job's waiting pods that allocate may place (``volcano-backfill``: not the best-effort ones)."""
        waiting = [p for p in js.pods if p.node is None and not p.done]
        if self.ordering == "volcano-backfill":
            waiting = [p for p in waiting if not best_effort(p.request)]
        return waiting

    def _commit(self, sim: Simulation, js: JobState, placement: list) -> None:
        """Bind the placed pods; the queue's allocation, the PodGroup's phase and the partly placed jobs follow."""
        for pod, node in placement:
            sim.bind(pod, node)
        attr = (self._attrs or {}).get(js.spec.volcano_queue)
        if attr is not None:
            attr.allocated = attr.allocated + _sum(p for p, _ in placement)
            attr.update_share()
        if gang_ready(js):
            self._phase[js.index] = RUNNING
        if any(p.node is None and not p.done for p in js.pods):
            self._partial[js.index] = js
        else:
            self._partial.pop(js.index, None)

    @staticmethod
    def trial(sim: Simulation, pods: list[PodState], attr: QueueAttr | None = None) -> list[tuple[PodState, object]]:
        """Where the pods would go, in order, stopping at the first that fits nowhere (no state kept).

        With the queue's figures (``attr``), a pod that would take the queue
        above its deserved share is left out (proportion's AllocatableFn).
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
            node = cap.choose(*p.request)
            if node is None:
                break
            cap.take(node, ps.gpus, ps.cpu, ps.memory)
            placed.append((p, node))
            if attr is not None:
                taken = taken + r
        for p, node in placed:  # discard the statement: give everything back
            ps = p.pod_set
            cap.give(node, ps.gpus, ps.cpu, ps.memory)
        return placed

    # -- allocate with reservations (easy-backfill, conservative-backfill) ---------
    def _allocate_reserving(self, sim: Simulation, now: float) -> None:
        """Allocate's visiting order, each job asked of one book of reservations (:mod:`gangkit.volcano.actions.backfill`).

        Nothing stops a queue: a job that cannot start now waits (with a
        reservation, or none) and the queue goes on to its next job.
        """
        by_queue = self._waiting_by_queue()
        self.reservations = {}
        self._blocked_jobs = []
        if not by_queue:
            return
        session = ReservationSession(sim, now, self.ordering == "conservative-backfill", self.shape, self.shortcuts,
                                     factor=self.estimate_factor)
        attrs = self._attrs or {}
        queues = [(self._queue_key(q), q) for q in by_queue]
        heapq.heapify(queues)
        nxt = dict.fromkeys(by_queue, 0)
        blocked: list[JobState] = []
        while queues:
            _, q = heapq.heappop(queues)
            attr = attrs.get(q)
            if attr is not None and attr.overused():
                continue  # at or above its deserved share: skipped for this session
            js = by_queue[q][nxt[q]]
            nxt[q] += 1
            placement = session.consider(
                js, lambda pl: attr is None or attr.allocatable(_sum(p for p, _ in pl)))
            if placement:
                self._commit(sim, js, placement)
            else:
                blocked.append(js)
            if nxt[q] < len(by_queue[q]):
                heapq.heappush(queues, (self._queue_key(q), q))
        self.reservations = session.reservations
        for index, start in self.reservations.items():
            self.first_reservation.setdefault(self._jobs[index].name, start)
        self._blocked_jobs = blocked
        shapes: dict[str, dict[tuple, list]] = defaultdict(lambda: defaultdict(list))  # rebuilt: no stale entries
        for q, jobs in by_queue.items():
            for js in jobs:
                if self._waits_whole(js, INQUEUE):
                    shapes[q][self.shape(js)].append((-js.priority, js.seq, js.index, js))
        for per_shape in shapes.values():
            for h in per_shape.values():
                heapq.heapify(h)
        self._shapes = shapes

    def _waiting_by_queue(self) -> dict[str, list[JobState]]:
        """Every job allocate may place, per queue, in Volcano's job order (a pass over the queues)."""
        keyed: dict[str, list] = defaultdict(list)
        seen = set()
        for q, shapes in self._shapes.items():
            for h in shapes.values():
                for entry in h:
                    js = entry[3]
                    if js.index not in seen and self._waits_whole(js, INQUEUE):
                        seen.add(js.index)
                        keyed[q].append((self._key(js, entry), js))
        for js in self._partial.values():
            if js.index not in seen and any(p.node is None and not p.done for p in js.pods):
                seen.add(js.index)
                keyed[js.spec.volcano_queue].append((self._key(js), js))
        return {q: [js for _, js in sorted(kv, key=lambda kv: kv[0])] for q, kv in sorted(keyed.items())}

    # -- Volcano's backfill action (ordering volcano-backfill) ----------------------
    def _backfill_action(self, sim: Simulation) -> None:
        """Place waiting best-effort pods one by one, queues in queue order, jobs in job order.

        A job's pods are bound only if the job is then ready; the action
        stops at the first pod that fits nowhere. Best-effort pods ask for
        nothing, so no queue share changes and no queue is skipped.
        """
        by_queue: dict[str, list] = defaultdict(list)
        seen = set()
        for q, shapes in self._shapes.items():
            for shape, h in shapes.items():
                if any(best_effort(r) for r in shape[0]):
                    for e in h:
                        if e[3].index not in seen and self._waits_whole(e[3], INQUEUE):
                            seen.add(e[3].index)
                            by_queue[q].append((self._key(e[3], e), e[3]))
        for js in self._partial.values():
            if js.index not in seen:
                seen.add(js.index)
                by_queue[js.spec.volcano_queue].append((self._key(js), js))
        order = [js for q in self._queue_order(list(by_queue)) for _, js in sorted(by_queue[q], key=lambda kv: kv[0])]
        for js in order:
            placed, stuck = [], False
            for p in js.pods:
                if p.node is None and not p.done and best_effort(p.request):
                    node = sim.capacity.choose(*p.request)
                    if node is None:
                        stuck = True
                        break
                    placed.append((p, node))
            if placed and gang_ready(js, [p for p, _ in placed]):
                self._commit(sim, js, placed)
            if stuck:
                break
        self._blocked_jobs = [j for j in self._blocked_jobs if any(p.node is None and not p.done for p in j.pods)]

    # -- preempt and reclaim -----------------------------------------------------
    def _evict_action(self, sim: Simulation, now: float, kind: str) -> None:
        """Volcano's preempt (within a queue, by priority) or reclaim (from queues above their deserved share)."""
        attrs = self._attrs or {}
        if kind == "reclaim" and len(attrs) < 2:
            return
        starving: dict[str, list[JobState]] = defaultdict(list)
        for q, shapes in self._shapes.items():
            for h in shapes.values():
                self._drop_stale(h)
                starving[q].extend(e[3] for e in sorted(h))
        for js in self._partial.values():
            if not gang_ready(js):
                starving[js.spec.volcano_queue].append(js)
        for q in self._queue_order([q for q in starving if starving[q]]):
            a = attrs.get(q)
            if kind == "reclaim" and (a is None or a.overused()):
                continue
            failed: set[tuple] = set()
            for js in sorted(starving[q], key=lambda j: (-j.priority, j.seq)):
                shape = self.shape(js)
                if shape in failed or gang_ready(js) or self._phase.get(js.index) not in (INQUEUE, RUNNING):
                    continue
                if not self._take_back(sim, js, kind):
                    failed.add(shape)

    def _take_back(self, sim: Simulation, js: JobState, kind: str) -> bool:
        attrs = self._attrs or {}
        q = js.spec.volcano_queue
        waiting = self._allocatable_pods(js)
        if kind == "reclaim" and not attrs[q].preemptive(_sum(waiting)):
            return False  # proportion's PreemptiveFn: the job would take its queue above its deserved share
        candidates = []
        for v in self._jobs.values():
            if v is js or not v.bound:
                continue
            vq = v.spec.volcano_queue
            if kind == "preempt" and vq == q and v.priority < js.priority:
                candidates.append(v)
            elif kind == "reclaim" and vq != q and self.queues[vq].reclaimable and vq in attrs:
                candidates.append(v)
        if not candidates:
            return False
        cap = sim.capacity
        need = sum(sorted(p.pod_set.gpus for p in waiting)[:max(0, js.gang_size - ready_pods(js))])
        if need > cap.free_ready_gpus + sum(v.gpus_bound for v in candidates):
            return False
        bundles = [b for v in candidates for b in job_bundles(v)]
        if kind == "preempt":
            bundles.sort(key=lambda b: (b.whole, b.job.priority, -b.job.seq))
        else:
            bundles.sort(key=lambda b: (b.whole, -attrs[b.job.spec.volcano_queue].share, b.job.priority, -b.job.seq))

        attr = attrs.get(q)

        def fits(victims: list[PodState]) -> bool:
            """The waiting job's trial with the victims' room given back (and, in its queue, their share)."""
            for p in victims:
                cap.give(p.node, p.pod_set.gpus, p.pod_set.cpu, p.pod_set.memory)
            if attr is not None:
                held = attr.allocated
                attr.allocated = held - _sum(p for p in victims if p.job.spec.volcano_queue == q)
            trial = self.trial(sim, waiting, attr)
            if attr is not None:
                attr.allocated = held
            for p in victims:
                cap.take(p.node, p.pod_set.gpus, p.pod_set.cpu, p.pod_set.memory)
            return bool(trial) and gang_ready(js, [p for p, _ in trial])

        def over_deserved(b: Bundle, chosen: list[PodState]) -> bool:
            if kind == "preempt":
                return True
            a = attrs[b.job.spec.volcano_queue]
            return a.reclaimable(_sum(p for p in chosen if p.job.spec.volcano_queue == a.name))

        victims = select_victims(bundles, fits, over_deserved)
        if victims is None:
            return False
        self._evict(sim, js, victims, kind)
        self._allocate(sim, js)  # a job ready with pods still waiting stays among the partly placed jobs
        return True

    def _evict(self, sim: Simulation, preemptor: JobState, victims: list[PodState], kind: str) -> None:
        attrs = self._attrs or {}
        by_job: dict[int, list[PodState]] = {}
        for p in victims:
            by_job.setdefault(p.job.index, []).append(p)
        action = "preempted" if kind == "preempt" else "reclaimed"
        for pods in by_job.values():
            v = pods[0].job
            a = attrs.get(v.spec.volcano_queue)
            if a is not None:
                a.allocated = a.allocated - _sum(pods)
                a.update_share()
            reason = Reason("placement", "Preempted" if kind == "preempt" else "Reclaimed",
                            f"{len(pods)} pod(s) {action} by Volcano for {preemptor.name} "
                            f"(queue {preemptor.spec.volcano_queue!r}, priority {preemptor.priority})",
                            {"pods": len(pods)})
            if v.spec.progress == "sync" or len(pods) == v.bound:
                sim.evict(v, reason)
            else:
                for p in pods:
                    sim.evict_pod(p, reason)

    # -- diagnosis ---------------------------------------------------------------
    def pending_reason(self, sim: Simulation, js: JobState) -> Reason | None:
        if self._phase.get(js.index) == PENDING and js.index in self._refused:
            return self._refused[js.index]
        waiting = [p for p in js.pods if p.node is None and not p.done]
        if not waiting:
            return None
        k = js.gang_size
        fit = len(self.trial(sim, waiting)) + js.bound
        cap = sim.capacity
        largest = cap.max_free_gpus()
        if gang_ready(js) and fit == js.bound:
            return Reason("placement", "PodsCannotFit",
                          f"gang of {k} is ready with {ready_pods(js)} of {len(js.pods)} pods; the other "
                          f"{len(waiting)} cannot fit now ({cap.free_ready_gpus} GPUs free, largest free block "
                          f"{largest} GPUs on one node)", {"gang": k, "waiting": len(waiting)})
        if js.index in self.reservations:
            at = self.reservations[js.index]
            return Reason("placement", "WaitingForReservation",
                          f"gang of {k} holds a reservation at t={at:g} s (ordering {self.ordering})",
                          {"gang": k, "reservation_s": at})
        attr = (self._attrs or {}).get(js.spec.volcano_queue)
        if attr is not None and len(self.trial(sim, waiting, attr)) + js.bound < fit:
            return Reason("placement", "QueueOverDeserved",
                          f"{len(waiting)} pod(s) of a gang of {k} fit on the nodes, but would take queue {attr.name!r} "
                          f"above its deserved share ({attr.allocated.short()} allocated of {attr.deserved.short()} deserved: "
                          f"the part its weight gives it while other queues ask for resources, at most its "
                          f"realCapability of {attr.real_capability.short()})",
                          {"gang": k, "queue": attr.name, "deserved_gpus": attr.deserved.gpus})
        if fit >= k:
            if self.ordering == "strict":
                msg = f"gang of {k} fits now but waits behind a job that does not fit (ordering strict)"
            elif self.ordering in RESERVING:
                msg = f"gang of {k} fits now but would delay an earlier job's reservation (ordering {self.ordering})"
            else:
                msg = f"gang of {k} fits now; placed at the next session"
            return Reason("placement", "WaitingForSession", msg, {"gang": k})
        msg = (f"gang of {k} cannot fit: only {fit} of {k} pods would fit now "
               f"({cap.free_ready_gpus} GPUs free, largest free block {largest} GPUs on one node)")
        return Reason("placement", "GangCannotFit", msg, {"gang": k, "would_fit": fit, "free_gpus": cap.free_ready_gpus, "largest_free_block": largest})


def cluster_resources(sim: Simulation) -> tuple[Resources, Resources]:
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


def _sum(pods) -> Resources:
    total = ZERO
    for p in pods:
        total = total + pod_resources(p.pod_set)
    return total
