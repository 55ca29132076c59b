"""Volcano's allocate action: gangs placed whole or not at all, then one pod per turn once ready.

Picture a maître d' seating parties: a party is seated only if a table can
be laid for enough of it; otherwise nobody of it sits down and nothing is kept
for it. Once a party has its minimum seated, its latecomers get one chair at
a time, each after every other party in the line has had its turn.

Volcano v1.15.1's allocate (``pkg/scheduler/actions/allocate/allocate.go``,
``allocateResources`` and ``allocateResourcesForTasks``) pops the queue that
comes first in queue order, pops that queue's first job in job order
(:meth:`gangkit.volcano.session.Session.job_key`: priority, then jobs not
yet ready, then the drf plugin's share, then creation) and gives the job a
*turn*: its waiting pods (its task queue for the session,
:class:`gangkit.volcano.session.Worksheet`), one after another, each on the
best-scoring node (:func:`gangkit.volcano.session.trial`), until the job is
*ready* (``minMember`` pods and every role's ``minTaskMember``,
:mod:`gangkit.volcano.plugins.gang`). If it is then ready, the turn is
committed and its pods bound; otherwise it is discarded and *nothing is
held* until the next session, and the job has no other turn in this session.
A committed job that still has pods in its task queue goes back into its
queue's job order (now ready, so after every job not yet ready, and with a
larger drf share), and the queue goes back into the queue order: a job whose
``minMember`` is below its pod count gets its ``minMember`` pods in its
first turn and then **one pod per turn**. Each pod is tried once per
session; a pod that fits nowhere ends the turn of a whole gang
(``minMember`` equal to its pod count), while a job with more pods than its
``minMember`` passes over that pod's role and goes on with the next pods as
long as it can still become ready (``JobInfo.NeedContinueAllocating``,
:meth:`gangkit.volcano.session.Worksheet.go_on`). A ready job whose pods do
not fit in this session keeps them waiting: each session gives it turns
again, behind the jobs not yet ready and those with a smaller share.

A queue at or above its deserved share is skipped for the rest of the
session, and a pod that would take its queue above its deserved share is
left out of the turn (the proportion plugin's OverusedFn and AllocatableFn).

What allocate does within a queue is the ``ordering`` setting:

- ``skip`` (Volcano's behaviour): move on and try the queue's next job, so
  small jobs may start while a big gang waits; a job that can never fit
  blocks nobody;
- ``strict``: the queue stops at its first job that does not fit, so nobody
  of that queue overtakes it (head-of-line blocking: the gang is protected,
  GPUs idle). Other queues go on;
- ``largest-first`` ("most servers first"): each queue's jobs ordered by the
  GPUs of the whole gang, largest first (after priority, readiness and the
  drf share; ties by creation), then placed as ``skip`` places them
  (first-fit decreasing).
  It favours big gangs but does not guarantee them a start;
- ``volcano-backfill``: ``skip``, leaving the best-effort pods to Volcano's
  backfill action (:mod:`gangkit.volcano.actions.backfill`);
- ``easy-backfill`` and ``conservative-backfill`` replace the trial placement
  by *reservations* in a book of future capacity
  (:mod:`gangkit.volcano.reservations`); Volcano has no reservations: these two
  are gangkit's contrast, from batch schedulers, and give a job all its pods
  that fit in one go (no turns).

With the sla plugin in a tier before gang's (:mod:`gangkit.volcano.plugins.sla`),
a job that has waited its ``sla-waiting-time`` is *pipelined*: a trial that
leaves its gang short is kept, unbound, to the end of the session, so the
jobs after it cannot take that room; the next session starts from nothing again.

A job's turns in one session share its worksheet, so giving a ready job one
pod per turn costs one node choice per pod, not a new look at all its pods.

gangkit's exact shortcuts (fast paths: a head's trial skipped while it can
only fail again, a job refused by its GPU shortfall or by a count of the
pods that fit, a kept trial bound as it stands) are told in
:mod:`gangkit.volcano.shortcuts`; each hooks in below at a line marked
``# fast path:``.
"""

from __future__ import annotations

import heapq
from collections import defaultdict

from gangkit.engine.state import JobState, PodState
from gangkit.model.precision import TOLERANCE
from gangkit.volcano.actions.backfill import best_effort
from gangkit.volcano.cache import INQUEUE, PendingJob
from gangkit.volcano.plugins.gang import role_minimums
from gangkit.volcano.reservations import RESERVING, ReservationSession
from gangkit.volcano.session import Session, Worksheet, give_back, sum_resources, trial
from gangkit.volcano.shortcuts import too_few_fit, trial_and_commit


def execute(ssn: Session, estimate_factor: float = 1.0) -> None:
    """Run allocate for this session (``estimate_factor`` for the reserving orderings)."""
    cache, now = ssn.cache, ssn.now
    while cache.creating and cache.creating[0].at <= now + TOLERANCE:
        js = heapq.heappop(cache.creating).job
        if cache.phase.get(js.index) == INQUEUE:
            cache.to_allocate(js)
    if ssn.ordering in RESERVING:
        _allocate_reserving(ssn, estimate_factor)
        return
    heads: dict[str, list] = defaultdict(list)  # queue -> heap of (order key, shape or ("job", index))
    plain = ssn.plain_job_order()
    for q, shapes in cache.shapes.items():
        for shape, h in shapes.items():
            cache.drop_stale(h, (q, shape))
            if h:
                e = h[0]
                heads[q].append(((e.neg_priority, 0, 0.0, e.seq) if plain else ssn.job_key(e.job, e), shape))
    for js in cache.partial.values():
        heads[js.spec.volcano_queue].append((ssn.job_key(js), ("job", js.index)))
    blocked: list[JobState] = []
    if len(heads) == 1 and ssn.attrs is None:  # one queue with work and no queue figures: no queue order to keep
        for q, hq in heads.items():
            heapq.heapify(hq)
            strict = ssn.ordering == "strict"
            while hq:
                _, key = heapq.heappop(hq)
                if not _allocate_head(ssn, q, key, hq, blocked) and strict:
                    break  # the queue waits behind its head
        ssn.blocked = blocked
        return
    attrs = ssn.attrs or {}
    queues = []
    for q in heads:
        heapq.heapify(heads[q])
        queues.append((ssn.queue_key(q), q))
    heapq.heapify(queues)
    while queues:
        _, q = heapq.heappop(queues)
        if q in attrs and attrs[q].overused():
            continue  # at or above its deserved share: skipped for this session
        _, key = heapq.heappop(heads[q])
        placed = _allocate_head(ssn, q, key, heads[q], blocked)
        if not placed and ssn.ordering == "strict":
            continue  # the queue waits behind its head
        if heads[q]:
            heapq.heappush(queues, (ssn.queue_key(q), q))
    ssn.blocked = blocked


def _allocate_head(ssn: Session, q: str, key, heads: list, blocked: list) -> bool:
    """One turn of the best job of one shape (or of one job holding pods); False when it could not be placed.

    A job whose turn was committed with pods still in its worksheet goes back into ``heads`` under its new
    key (now ready, its drf share grown), as Volcano pushes it back into its queue's job order."""
    cache = ssn.cache
    if key[0] == "job":
        js = cache.partial[key[1]]
        ws = ssn.worksheet(js, allocatable_pods(ssn, js))
        placed = place_gang(ssn, js, ws=ws)
        if ws.waiting <= 0:
            cache.partial.pop(key[1], None)
        if placed is None:
            if not ws.ready():
                blocked.append(js)
                return False
            return True
        if ws.left():
            heapq.heappush(heads, (ssn.job_key(js), key))
        return True
    h = cache.shapes[q][key]
    js = h[0].job
    cap = ssn.sim.capacity
    piped = cache.sla is not None and ssn.pipelined(js)  # it keeps what its trial finds: the trial must be made
    line = (q, key)
    fast = cache.fast_paths
    remember = (fast.skip_repeated_failures and ssn.attrs is None and cap.exact_amounts and line not in cache.mixed
                and not piped)
    if remember and cache.failed.get(line) == (cap.grow_version, js.index):  # fast path: skip_repeated_failures
        blocked.append(js)
        return False  # failed on this much room or more, and the room has not grown since
    short = cache.shortfall.get(js.index) if fast.remember_shortfall and not piped else None
    if short is not None and short[1] == js.pods_done and short[0] > cap.free_ready_gpus:
        if remember:
            cache.failed[line] = (cap.grow_version, js.index)
        blocked.append(js)
        return False  # fast path: remember_shortfall (place_gang would refuse it again: too few GPUs free)
    ws = ssn.worksheet(js, allocatable_pods(ssn, js))
    if place_gang(ssn, js, cache.shortfall if fast.remember_shortfall else None, ws) is None:
        if remember:
            cache.failed[line] = (cap.grow_version, js.index)
        blocked.append(js)
        return False  # the whole shape fails for the rest of this session
    heapq.heappop(h)  # (Session.commit filed the job in ``partial`` if some of its pods still wait)
    cache.drop_stale(h, line)
    if h:
        e = h[0]
        heapq.heappush(heads, ((e.neg_priority, 0, 0.0, e.seq) if ssn.plain_job_order() else ssn.job_key(e.job, e), key))
    if ws.left():  # ready with pods still to try: back into the queue's job order, as a job holding pods
        heapq.heappush(heads, (ssn.job_key(js), ("job", js.index)))
    return True


def place_gang(ssn: Session, js: JobState, shortfall: dict | None = None, ws: Worksheet | None = None) -> int | None:
    """One turn of the job: trial-place its waiting pods until it is ready; commit if it then is.

    A job not yet ready is given pods until it is ready (``minMember``, and each role's minimum); a job
    already ready is given one pod (Volcano v1.15.1 ``allocateResourcesForTasks`` stops at JobReady). The
    pods come from the job's worksheet ``ws`` for this session (a fresh one without it, as the preempt
    action makes its own). Returns the number of pods bound, or None when nothing was (the trial discarded,
    or no pod fitted). A job refused for too few free GPUs has the GPUs it needs noted in ``shortfall``
    (with its finished pods, which change ``need``).
    """
    if ws is None:
        ws = Worksheet(js, allocatable_pods(ssn, js))
    need = ws.need
    cap = ssn.sim.capacity
    fast = ssn.cache.fast_paths
    piped = ssn.cache.sla is not None and ssn.pipelined(js)
    if need > 0 and not piped:  # a pipelined job keeps what fits, however little
        waiting = ws.pods[ws.at:] if ws.at else ws.pods
        if not waiting:
            return None
        least = waiting[0].pod_set.gpus if len(waiting) == 1 else sum(sorted(p.pod_set.gpus for p in waiting)[:need])
        if least > cap.free_ready_gpus:
            if shortfall is not None and not js.bound:
                shortfall[js.index] = (least, js.pods_done)
            return None  # not enough free GPUs in total: no trial can succeed
        if need > 1 and fast.count_fits and too_few_fit(cap, waiting, need):
            return None  # fast path: count_fits (the trial would place too few, and give back what it took)
    keep = fast.keep_trials and not piped and ws.exact(cap)  # fast path: keep_trials (bind what the trial took)
    if keep and fast.direct_commit and ssn.attrs is None and not role_minimums(js):
        return trial_and_commit(ssn, js, ws)  # fast path: direct_commit
    placed = trial(ssn.sim, ws.pods, ssn.attr_of(js) if ssn.attrs else None, keep, ws)
    if not placed or not ws.reached:
        if keep:
            give_back(cap, placed)
        if placed and piped:
            ssn.keep(placed)  # the sla plugin's JobPipelined: the trial stays allocated for this session
        return None
    ssn.commit(js, placed, keep, ws)
    return len(placed)


def allocatable_pods(ssn: Session, js: JobState) -> list[PodState]:
    """The job's waiting pods that allocate may place (``volcano-backfill``: not the best-effort ones)."""
    waiting = [p for p in js.pods if p.node is None and not p.done]
    if ssn.ordering == "volcano-backfill":
        waiting = [p for p in waiting if not best_effort(p.request)]
    return waiting


# -- allocate with reservations (easy-backfill, conservative-backfill) ---------------
def _allocate_reserving(ssn: Session, estimate_factor: float) -> None:
    """Allocate's visiting order, each job asked of one book of reservations (:mod:`gangkit.volcano.reservations`).

    Nothing stops a queue: a job that cannot start now waits (with a
    reservation, or none) and the queue goes on to its next job.
    """
    cache = ssn.cache
    by_queue = waiting_by_queue(ssn)
    ssn.reservations = {}
    ssn.blocked = []
    if not by_queue:
        return
    book = ReservationSession(ssn.sim, ssn.now, ssn.ordering == "conservative-backfill", cache.shape,
                              cache.fast_paths.reservation_shortcuts,
                              factor=estimate_factor)
    attrs = ssn.attrs or {}
    queues = [(ssn.queue_key(q), q) for q in by_queue]
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
        placement = book.consider(
            js, lambda pl, attr=attr: attr is None or attr.allocatable(sum_resources(p for p, _ in pl)))
        if placement:
            ssn.commit(js, placement)
        else:
            blocked.append(js)
        if nxt[q] < len(by_queue[q]):
            heapq.heappush(queues, (ssn.queue_key(q), q))
    ssn.reservations = book.reservations
    ssn.blocked = blocked
    shapes: dict[str, dict[tuple, list]] = defaultdict(lambda: defaultdict(list))  # rebuilt: no stale entries
    for q, jobs in by_queue.items():
        for js in jobs:
            if cache.waits_whole(js, INQUEUE):
                shapes[q][cache.shape(js)].append(tuple.__new__(PendingJob, (-js.priority, js.seq, js.index, js)))
    for per_shape in shapes.values():
        for h in per_shape.values():
            heapq.heapify(h)
    cache.shapes = shapes


def waiting_by_queue(ssn: Session) -> dict[str, list[JobState]]:
    """Every job allocate may place, per queue, in Volcano's job order (a pass over the queues)."""
    cache = ssn.cache
    keyed: dict[str, list] = defaultdict(list)
    seen = set()
    for q, shapes in cache.shapes.items():
        for h in shapes.values():
            for entry in h:
                js = entry.job
                if js.index not in seen and cache.waits_whole(js, INQUEUE):
                    seen.add(js.index)
                    keyed[q].append((ssn.job_key(js, entry), js))
    for js in cache.partial.values():
        if js.index not in seen and any(p.node is None and not p.done for p in js.pods):
            seen.add(js.index)
            keyed[js.spec.volcano_queue].append((ssn.job_key(js), js))
    return {q: [js for _, js in sorted(kv, key=lambda kv: kv[0])] for q, kv in sorted(keyed.items())}

