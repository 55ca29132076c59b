"""The backfilling orderings inside a Volcano session.

Two different things share the word *backfill*:

- **Reservations** (``easy-backfill``, ``conservative-backfill``): the
  batch-scheduling idea (EASY backfilling, Lifka 1995; conservative
  backfilling, Mu'alem and Feitelson 2001). A job that cannot start now is
  promised the earliest time at which its pods fit on specific nodes
  (:class:`gangkit.volcano.reservations.Profile`, the book of future capacity); a later
  job may start now only where it does not touch a promise. Volcano has no
  such thing; gangkit runs it in place of Volcano's allocate step, as a
  contrast. :class:`ReservationSession` answers, job by job in the session's
  visiting order, "start it now, promise it a time, or neither".
- **Volcano's backfill action** (``volcano-backfill``, Volcano
  ``pkg/scheduler/actions/backfill``): last in the session, it places the pods
  that ask for nothing (*best-effort* pods, :func:`best_effort`), which
  allocate leaves out. It never looks ahead and never places a pod that asks
  for a GPU. The layer runs it (``VolcanoGang._backfill_action`` in
  :mod:`gangkit.volcano.scheduler`); this module only says which pods it concerns.

One book per session, over every queue. The book is the cluster's nodes,
which all queues share, so a reservation made for a job of one queue is
protected against every later job of any queue. Jobs are looked at in the
order allocate would visit them: queues by queue order (priority, then
lowest share, the share updated after each job started), one job at a time,
each queue's jobs in Volcano's job order. So ``easy-backfill`` has one head
for the whole cluster (the first job in that order that cannot start), and
``conservative-backfill`` gives every waiting job of every queue a
reservation in that order.

Queue shares. A job whose queue would not let it have its pods *now*
(proportion's AllocatableFn: allocated + request <= deserved, with what the
queue holds now) gets neither a start nor a reservation: it waits for its
queue's share, not for nodes, and holds no nodes from others. A queue at or
above its deserved share is skipped for the session, as in allocate.
**Simplification:** a reservation does not foresee queue shares; a
reservation made while the queue allowed the job is kept in later sessions
only if the queue still allows it, so with several queues a job may start
after its first reservation; with one queue and no queue limits the
promises of :mod:`gangkit.volcano.reservations` hold.
"""

from __future__ import annotations

from typing import Callable

from gangkit.volcano.reservations import INF, Profile, estimate
from gangkit.engine.simulation import Simulation
from gangkit.engine.state import JobState
from gangkit.volcano.plugins.gang import gang_ready, ready_pods

RESERVING = ("easy-backfill", "conservative-backfill")  # orderings that plan with a book of future capacity
SHAPE_SKIPPING = ("skip", "largest-first", "volcano-backfill")  # move on past a shape that does not fit


def best_effort(request: tuple) -> bool:
    """A pod that asks for nothing (Volcano's BestEffort task: its resource request is empty)."""
    gpus, cpu, memory, _selector = request
    return not gpus and not cpu and not memory


class ReservationSession:
    """One session's book and its answers, for ``easy-backfill`` or ``conservative-backfill``.

    A gang is planned for ``minMember`` of its waiting pods (and every
    role's ``minTaskMember``), for its estimated run
    (:func:`gangkit.volcano.reservations.estimate`); a sync gang whose ``minMember`` is
    below its pod count would hold its GPUs without progress until all are
    placed, so it is planned as holding them without end.
    """

    def __init__(self, sim: Simulation, now: float, conservative: bool, shape: Callable[[JobState], tuple],
                 shortcuts: bool = True, factor: float = 1.0):
        self.now = now
        self.factor = factor  # estimated run time = true run time x factor, without activeDeadlineSeconds
        self.conservative = conservative
        self.shape = shape
        self.shortcuts = shortcuts  # False: no memos, no cheap tests (the plain search, for a differential test)
        self.book = Profile(sim, now, self.factor, shortcuts)
        self.head: JobState | None = None  # EASY: the one job holding a reservation
        self.reservations: dict[int, float] = {}  # job index -> reservation time
        self._failed: dict[tuple, float] = {}  # shape -> shortest run that could not start now (longer ones fail too)
        self._planned: dict[tuple, tuple[float, float]] = {}  # shape of identical pods -> (run, earliest start found)

    def consider(self, js: JobState, may_start: Callable[[list], bool]) -> list | None:
        """The placement to bind now, or None (the job waits; it may have been given a reservation).

        ``may_start(placement)`` is the queue's verdict on the job's pods,
        with what the queue holds now; a job it refuses gets neither a start
        nor a reservation.
        """
        waiting = [p for p in js.pods if p.node is None and not p.done]
        need = max(js.gang_size - ready_pods(js), 1)
        completes = js.spec.progress == "independent" or need >= len(waiting)
        duration = estimate(js, self.factor, waiting) if completes else INF

        def ready(placement: list) -> bool:
            return gang_ready(js, [p for p, _ in placement])

        if self.conservative or self.head is None:
            # identical pods: a twin (same shape, run no longer) found no start before `earlier`,
            # and the book has only lost capacity since, so this job cannot start before it either
            twin = (self.shape(js) if self.shortcuts and not js.bound and len({p.request for p in js.pods}) == 1
                    else None)
            earlier = -INF
            if twin in self._planned and duration >= self._planned[twin][0]:
                earlier = self._planned[twin][1]
            found = None if earlier == INF else self.book.earliest(waiting, need, duration, earlier, ready)
            if twin is not None and (twin not in self._planned or duration <= self._planned[twin][0]):
                self._planned[twin] = (duration, INF if found is None else found[0])
            if found is None:
                return None  # no start in the book: no reservation
            start, placement = found
            if not may_start(placement):
                return None  # its queue holds it back: no start, no reservation
            if start == self.now:
                self.book.reserve(placement, self.now, self.now + duration)
                return placement
            self.book.reserve(placement, start, start + duration)
            self.reservations[js.index] = start
            self.head = js
            return None
        shape = self.shape(js) if self.shortcuts and not js.bound else None
        gpus = sum(sorted(p.pod_set.gpus for p in waiting)[:need])
        twin_failed = shape in self._failed and duration >= self._failed[shape]
        if (self.shortcuts and gpus > self.book.free_gpus_now) or twin_failed:
            return None  # cannot start now: too few GPUs free, or a shorter twin failed
        placement = self.book.place(waiting, self.now, duration)
        if len(placement) >= need and ready(placement):
            if not may_start(placement):
                return None
            self.book.reserve(placement, self.now, self.now + duration)
            return placement
        if shape is not None:
            self._failed[shape] = min(duration, self._failed.get(shape, INF))
        return None
