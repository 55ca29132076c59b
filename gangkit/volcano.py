"""Gang placement with Volcano's semantics: all of a gang's pods, or none.

Volcano's scheduler works in *sessions* (one per second by default). In each
session its ``allocate`` action takes the waiting jobs in order (priority
first, then jobs not yet ready, then creation time) and, for each one, makes
a *trial* placement of its pods on the current nodes. If at least
``minMember`` pods (the PodGroup's gang size) could be placed, the trial is
committed and the pods are bound; otherwise the trial is discarded and
*nothing is held* until the next session. A waiting gang never sits on GPUs.

What happens when a job does not fit is the ``ordering`` setting:

- ``skip`` (Volcano's behaviour): move on and try the next job, so small jobs
  may start while a big gang waits;
- ``strict``: stop the session at the first job that does not fit, so nobody
  overtakes it (head-of-line blocking: the gang is protected, GPUs idle);
- ``largest-first`` ("most servers first"): waiting jobs ordered by the GPUs
  of the whole gang, largest first (after priority; ties by arrival), then
  placed as ``skip`` places them. ``skip`` rather than ``strict``, because
  under ``strict`` the largest waiting gang would idle the whole cluster
  whenever it does not fit; with ``skip`` the big gangs get the first pick
  of every session and the small ones fill what is left (first-fit
  decreasing). It favours big gangs but does not guarantee them a start:
  small jobs started in earlier sessions may keep a big gang waiting;
- ``easy-backfill`` (EASY backfilling, Lifka 1995; Mu'alem and Feitelson
  2001): jobs start in order while they fit; the first that does not fit
  (the *head*) gets a reservation: the earliest time at which its pods fit
  on specific nodes, computed from the estimated ends of the running pods
  on each node (:mod:`gangkit.backfill`). A later job may start now only if
  it fits in what stays free over its whole estimated run once the
  reservation is set aside: on nodes or GPUs the reservation does not need,
  or ending (by estimate) before the reservation starts. Only the head has
  a reservation; a head that no book can hold (bigger than what will ever
  be free) gets none, and the next job that does not fit becomes the head;
- ``conservative-backfill``: every waiting job, in queue order, gets a
  reservation in the book (the earliest start that fits around the running
  pods and every earlier reservation); a job starts now only when its
  reservation is now, so no job delays any earlier job's reservation.
  Cost: each session re-plans every waiting job against a book whose
  change points grow with the queue, so a session costs about
  (waiting jobs)^2 x nodes; nothing is capped, so keep such runs small;
- ``volcano-backfill``: Volcano's own ``backfill`` action after ``allocate``
  (pkg/scheduler/actions/backfill). It only places *best-effort* pods, those
  whose resource request is empty (Volcano's ``TaskInfo.BestEffort``: no
  CPU, memory or GPU asked for); ``allocate`` skips exactly those pods. It
  takes them one by one in job order, on the best-scoring node that passes
  the filters, and stops at the first that fits nowhere; a job's pods are
  bound only once the job is ready (its session dispatches a job's pods when
  ``minMember`` are allocated). It never looks at future capacity and never
  places a pod that asks for a GPU, so **it cannot help GPU gangs**: for them
  this ordering is Volcano's allocate, i.e. ``skip``. In gangkit a pod is
  best-effort when it asks for 0 GPUs, 0 CPU and 0 memory. A job that mixes
  both kinds of pods and whose ``minMember`` needs both never becomes ready
  here (allocate sees only one kind, backfill only the other).

Backfilling schedulers plan with *estimated* run times: real ones use the
limit each user declares. gangkit uses a job's declared maximum run time
(``activeDeadlineSeconds``) when it has one, otherwise its true run time
times the run's ``estimate_factor`` (see :mod:`gangkit.backfill`).
Reservations are re-planned at every session from the current state (so a
job that ends early lets reservations move earlier). A job starts at the
first session at or after its reservation time.

Within a trial, pods are placed one after another on the best-scoring node
(:mod:`gangkit.capacity`), and the trial stops at the first pod that fits
nowhere, as Volcano's allocate does. A job whose ``minMember`` is smaller
than its pod count is *ready* once ``minMember`` pods are bound; its other
pods are placed in later sessions as room appears.

Not modelled here: Volcano queues and the enqueue action, pipelining onto
capacity that is being released, preempt and reclaim (see the reference
page).

Speed: waiting jobs are kept in one heap per *shape* (their pod requests and
gang size). Capacity only shrinks within a session, so once the first job of
a shape fails, all jobs of that shape behind it fail too: a session costs a
few trials per shape plus one per job started, whatever the queue length.
"""

from __future__ import annotations

import heapq
from collections import defaultdict

from .backfill import INF, Profile, estimate
from .engine import JobState, PodState, Simulation
from .layers import Reason

RESERVING = ("easy-backfill", "conservative-backfill")  # orderings that plan with a book of future capacity
SHAPE_SKIPPING = ("skip", "largest-first", "volcano-backfill")  # move on past a shape that does not fit


def best_effort(request: tuple) -> bool:
    """A pod that asks for nothing (Volcano's BestEffort task: its resource request is empty)."""
    gpus, cpu, memory, _selector = request
    return not gpus and not cpu and not memory


class VolcanoGang:
    """The ``gang`` placement layer."""

    name = "placement"

    def __init__(self, ordering: str = "skip", period: float = 1.0):
        self.ordering = ordering
        self.period = period
        self._shapes: dict[tuple, list] = defaultdict(list)  # shape -> heap of (-prio, seq, job)
        self._partial: dict[int, JobState] = {}  # jobs with some pods bound and some waiting
        self._blocked_jobs: list[JobState] = []
        self.reservations: dict[int, float] = {}  # job index -> reservation time, from the last session
        self.first_reservation: dict[str, float] = {}  # job name -> the first reservation it was given

    # -- socket -------------------------------------------------------------
    def enqueue(self, jobs: list[JobState], now: float) -> None:
        for js in jobs:
            self._add(js)

    def requeue(self, js: JobState, now: float) -> None:
        # the job keeps its place: Volcano orders by the PodGroup's creation time
        self._partial.pop(js.index, None)
        self._add(js)

    def forget(self, js: JobState) -> None:
        self._partial.pop(js.index, None)  # heap entries of a job no longer placing are stale

    def _add(self, js: JobState) -> None:
        if js.bound:
            self._partial[js.index] = js
        else:
            heapq.heappush(self._shapes[self.shape(js)], (-js.priority, js.seq, js.index, js))

    @staticmethod
    def shape(js: JobState) -> tuple:
        """Jobs of one shape succeed or fail together against the same free capacity.

        The shape is taken from the pods (an admission layer may have added a
        flavor's node selector to them).
        """
        return (tuple(p.request for p in js.pods), js.gang_size)

    def unschedulable(self) -> list[PodState]:
        """Pods of the jobs that could not be placed in the last session (what autoscalers see).

        With ``skip`` a session stops trying a shape at its first failure; the
        waiting jobs of the same shape behind it are unschedulable too.
        """
        out = [p for js in self._blocked_jobs for p in js.pods if p.node is None and not p.done]
        if self.ordering in SHAPE_SKIPPING:
            listed = {js.index for js in self._blocked_jobs}
            shapes = {self.shape(js) for js in self._blocked_jobs if not js.bound}
            for shape in sorted(shapes, key=repr):
                for entry in sorted(self._shapes.get(shape, ())):
                    js = entry[3]
                    if js.index not in listed and js.placing and not js.bound and js.state == "Pending":
                        listed.add(js.index)
                        out.extend(p for p in js.pods if p.node is None and not p.done)
        return out

    # -- one session ------------------------------------------------------------
    def _key(self, js: JobState, ready: int, entry: tuple | None = None) -> tuple:
        """Volcano's job order: priority, then jobs not yet ready, then creation.

        ``largest-first`` puts the GPUs of the whole gang (largest first)
        before creation. ``entry`` is the job's heap entry (its order when queued).
        """
        prio, seq = (entry[0], entry[1]) if entry is not None else (-js.priority, js.seq)
        if self.ordering == "largest-first":
            return (prio, ready, -sum(p.pod_set.gpus for p in js.pods), seq)
        return (prio, ready, seq)

    def cycle(self, sim: Simulation, now: float) -> None:
        if self.ordering in RESERVING:
            self._cycle_reserving(sim, now)
            return
        heads = []
        for shape, q in self._shapes.items():
            self._drop_stale(q)
            if q:
                heads.append((self._key(q[0][3], 0, q[0]), shape))
        for js in self._partial.values():
            ready = 1 if js.bound >= js.gang_size else 0
            heads.append((self._key(js, ready), ("job", js.index)))
        heapq.heapify(heads)
        blocked: list[JobState] = []
        while heads:
            _, key = heapq.heappop(heads)
            if key[0] == "job":
                js = self._partial[key[1]]
                placed = self._allocate(sim, js)
                if not any(p.node is None and not p.done for p in js.pods):
                    del self._partial[key[1]]
                if placed is None and js.bound < js.gang_size:
                    blocked.append(js)
                    if self.ordering == "strict":
                        break
                continue
            q = self._shapes[key]
            js = q[0][3]
            if self._allocate(sim, js) is None:
                blocked.append(js)
                if self.ordering == "strict":
                    break
                continue  # the whole shape fails for the rest of this session
            heapq.heappop(q)
            if any(p.node is None and not p.done for p in js.pods):
                self._partial[js.index] = js
            self._drop_stale(q)
            if q:
                heapq.heappush(heads, (self._key(q[0][3], 0, q[0]), key))
        if self.ordering == "volcano-backfill":
            self._backfill_best_effort(sim)
            blocked = [js for js in blocked if any(p.node is None and not p.done for p in js.pods)]
        self._blocked_jobs = blocked
        for shape in [s for s, q in self._shapes.items() if not q]:
            del self._shapes[shape]

    # -- Volcano's backfill action ----------------------------------------------
    def _backfill_best_effort(self, sim: Simulation) -> None:
        """Place waiting best-effort pods one by one; stop at the first that fits nowhere."""
        candidates = []
        for shape, q in self._shapes.items():
            if any(best_effort(r) for r in shape[0]):
                candidates.extend((self._key(e[3], 0, e), e[3]) for e in q if self._fresh(e[3]))
        for js in self._partial.values():
            candidates.append((self._key(js, 1 if js.bound >= js.gang_size else 0), js))
        seen = set()
        for _, js in sorted(candidates, key=lambda kv: kv[0]):
            if js.index in seen:
                continue
            seen.add(js.index)
            placed, stuck = [], False
            for p in js.pods:
                if p.node is None and not p.done and best_effort(p.request):
                    node = sim.capacity.choose(*p.request)
                    if node is None:
                        stuck = True
                        break
                    placed.append((p, node))
            if placed and js.bound + len(placed) >= js.gang_size:
                self._bind(sim, js, placed)
            if stuck:
                break

    # -- backfilling with reservations ------------------------------------------
    @staticmethod
    def _fresh(js: JobState) -> bool:
        return not js.bound and js.state == "Pending" and js.placing

    def _waiting(self) -> list[JobState]:
        """Every job with pods waiting here, in Volcano's job order (a pass over the queue)."""
        keyed, seen = [], set()
        for q in self._shapes.values():
            for entry in q:
                js = entry[3]
                if self._fresh(js) and js.index not in seen:
                    seen.add(js.index)
                    keyed.append((self._key(js, 0, entry), js))
        for js in self._partial.values():
            if js.index not in seen and any(p.node is None and not p.done for p in js.pods):
                seen.add(js.index)
                keyed.append((self._key(js, 1 if js.bound >= js.gang_size else 0), js))
        keyed.sort(key=lambda kv: kv[0])
        return [js for _, js in keyed]

    def _bind(self, sim: Simulation, js: JobState, placement: list) -> None:
        for pod, node in placement:
            sim.bind(pod, node)
        if any(p.node is None and not p.done for p in js.pods):
            self._partial[js.index] = js
        else:
            self._partial.pop(js.index, None)

    def _cycle_reserving(self, sim: Simulation, now: float) -> None:
        """One session of ``easy-backfill`` or ``conservative-backfill`` (see the module docstring).

        A gang is planned for ``minMember`` of its waiting pods, for its
        estimated run; a gang whose ``minMember`` is below its pod count would
        hold its GPUs without progress until all are placed, so it is planned
        as holding them without end.
        """
        factor = sim.settings.estimate_factor
        conservative = self.ordering == "conservative-backfill"
        waiting_jobs = self._waiting()
        self.reservations = {}
        self._blocked_jobs = []
        if not waiting_jobs:
            return
        book = Profile(sim, now, factor)
        head = None
        blocked: list[JobState] = []
        failed: dict[tuple, float] = {}  # shape -> shortest run that could not start now (longer ones fail too)
        planned: dict[tuple, tuple[float, float]] = {}  # shape of identical pods -> (run, earliest start found)
        for js in waiting_jobs:
            waiting = [p for p in js.pods if p.node is None and not p.done]
            need = max(js.gang_size - js.bound, 1)
            completes = js.spec.progress == "independent" or need >= len(waiting)
            duration = estimate(js, factor, waiting) if completes else INF
            if conservative or head is None:
                # identical pods: a twin (same shape, run no longer) found no start before `earlier`,
                # and the book has only lost capacity since, so this job cannot start before it either
                twin = self.shape(js) if not js.bound and len({p.request for p in js.pods}) == 1 else None
                earlier = -INF
                if twin in planned and duration >= planned[twin][0]:
                    earlier = planned[twin][1]
                found = None if earlier == INF else book.earliest(waiting, need, duration, earlier)
                if twin is not None and (twin not in planned or duration <= planned[twin][0]):
                    planned[twin] = (duration, INF if found is None else found[0])
                if found is None:
                    blocked.append(js)  # no start in the book: no reservation
                    continue
                start, placement = found
                if start == now:
                    self._bind(sim, js, placement)
                    book.reserve(placement, now, now + duration)
                    continue
                book.reserve(placement, start, start + duration)
                self.reservations[js.index] = start
                self.first_reservation.setdefault(js.name, start)
                blocked.append(js)
                head = js
                continue
            shape = self.shape(js) if not js.bound else None
            gpus = sum(sorted(p.pod_set.gpus for p in waiting)[:need])
            if gpus > book.free_gpus_now or (shape in failed and duration >= failed[shape]):
                blocked.append(js)  # cannot start now: too few GPUs free, or a shorter twin failed
                continue
            placement = book.place(waiting, now, duration)
            if len(placement) >= need:
                self._bind(sim, js, placement)
                book.reserve(placement, now, now + duration)
            else:
                blocked.append(js)
                if shape is not None:
                    failed[shape] = min(duration, failed.get(shape, INF))
        self._blocked_jobs = blocked
        shapes: dict[tuple, list] = defaultdict(list)  # rebuilt: placed jobs leave no stale entries
        for js in waiting_jobs:
            if self._fresh(js):
                shapes[self.shape(js)].append((-js.priority, js.seq, js.index, js))
        for q in shapes.values():
            heapq.heapify(q)
        self._shapes = shapes

    @staticmethod
    def _drop_stale(q: list) -> None:
        while q and (q[0][3].bound or q[0][3].state != "Pending" or not q[0][3].placing):
            heapq.heappop(q)

    def _allocate(self, sim: Simulation, js: JobState) -> int | None:
        """Trial-place the job's waiting pods; commit if the gang is then ready.

        Returns the number of pods bound, or None when the trial was discarded.
        """
        waiting = [p for p in js.pods if p.node is None and not p.done]
        if self.ordering == "volcano-backfill":  # allocate skips best-effort pods (backfill takes them)
            waiting = [p for p in waiting if not best_effort(p.request)]
        need = js.gang_size - js.bound
        cap = sim.capacity
        if need > 0 and sum(sorted(p.pod_set.gpus for p in waiting)[:need]) > cap.free_ready_gpus:
            return None  # not enough free GPUs in total: no trial can succeed
        trial = self.trial(sim, waiting)
        if len(trial) < need or not trial:
            return None
        for pod, node in trial:
            sim.bind(pod, node)
        return len(trial)

    @staticmethod
    def trial(sim: Simulation, pods: list[PodState]) -> list[tuple[PodState, object]]:
        """Where the pods would go, in order, stopping at the first that fits nowhere (no state kept)."""
        cap = sim.capacity
        placed = []
        for p in pods:
            node = cap.choose(*p.request)
            if node is None:
                break
            ps = p.pod_set
            cap.take(node, ps.gpus, ps.cpu, ps.memory)
            placed.append((p, node))
        for p, node in placed:  # discard the statement: give everything back
            ps = p.pod_set
            cap.give(node, ps.gpus, ps.cpu, ps.memory)
        return placed

    # -- diagnosis ---------------------------------------------------------------
    def pending_reason(self, sim: Simulation, js: JobState) -> Reason | None:
        waiting = [p for p in js.pods if p.node is None and not p.done]
        if not waiting:
            return None
        k = js.gang_size
        fit = len(self.trial(sim, waiting)) + js.bound
        cap = sim.capacity
        largest = cap.max_free_gpus()
        if js.index in self.reservations:
            at = self.reservations[js.index]
            return Reason("placement", "WaitingForReservation",
                          f"gang of {k} holds a reservation at t={at:g} s (ordering {self.ordering})",
                          {"gang": k, "reservation_s": at})
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
