"""kube-scheduler's scheduling queue kept by groups of pods (the ``pod`` layer without preemption).

:mod:`gangkit.placement.kube_scheduler` states the queue's rules (1.35:
timestamps refreshed at each failure, backoff, queueing-hint moves,
SchedulerPopFromBackoffQ, the 5-minute flush applied lazily). This module
applies the same rules to *groups* of pods, so that a cycle costs a step per
pod it binds, per request shape that fails and per group, not per waiting pod.
Its results are those of the per-pod queue to the last bit
(``tests/placement/test_kube_scheduler_groups.py`` runs both).

Why groups suffice. Every rule of the queue reads a pod's priority, request
shape (:func:`~gangkit.placement.kube_scheduler.queue_key`), timestamp and
unschedulable count, and nothing else:

- a move by an event depends on the shape alone (the queueing hints), the
  lazy flush on the timestamp and count alone, backoff on timestamp and count;
- counts of 5 and more all back off for the 10-s cap (1 s doubled four times is
  more than 10 s), so a count is kept only up to 5 (:data:`SETTLED`);
- within a cycle a shape that found no node finds none again (free room only
  shrinks without preemption), so after the first failure of a shape every
  later pod of that shape fails without a filter, in the order it is tried.

So pods of one priority, timestamp, shape and count move, back off, flush and
fail together and keep their order among themselves. The queue holds
*epochs*: the pods of one priority that share a timestamp and took it in one
cycle (a failure, or a flush of such pods; ``cst`` orders epochs of equal
timestamp, as the pods' stamps would). An epoch holds one *group* per shape
and count: a deque of pods in queue order. A pod's place in its epoch is an
integer *label*; labels order the pods of an epoch across its groups (a
job's pods of two shapes, two jobs interleaved), so the order of a pod
within its priority is (timestamp, ``cst``, label), the per-pod queue's
(timestamp, stamp).

Why the order is the per-pod queue's: within one priority, epochs of equal
timestamp hold disjoint runs of the per-pod queue's stamps, in ``cst``
order, and within an epoch labels follow stamps. A cycle's failures take stamps
above all earlier ones, in the order they are tried; those of one priority
become one epoch whose labels follow that order; the pods an event does not move keep
their epoch, timestamp and stamps; a flush changes the timestamp of a whole
epoch and no stamp.

A cycle sorts the moved parts of epochs (*pieces*: an epoch's groups that go
to activeQ; those that go to backoffQ, by backoff end) as the per-pod queue
sorts pods, and tries, piece after piece, the heads of the groups whose shape
has not failed, in label order. A bound pod leaves its group's front. Every
pod left in a piece then failed in this cycle, in piece order and within a
piece in label order: the pieces of one priority become one new epoch. Its
labels must rise in that order; where a piece's labels do not lie above
those before it, the smaller side is relabelled (a step per pod relabelled),
and groups that become one (same shape and count) are joined, end to end when
their labels do not interleave, else by a sorted merge. Pods that leave
the queue otherwise (their job forgotten, or requeued after an eviction) stay
in their deques, marked only in the layer's entries, and are dropped when
they reach a front.

Cost. A cycle with a pod deletion moves every epoch into one per priority: a
step per epoch and per group, which the cycles between create (one epoch per
cycle with new pods); a cycle without a move touches only its new pods. A
node made usable moves the groups whose shape it may help: a step per epoch
and group. Not bounded by events: relabelling the smaller side where labels
do not rise (a step per pod relabelled: the pods that arrived since the last
move, in the common case) and the sorted merge of groups of one shape whose
labels interleave (rare; done in C); a one-per-node pod set is a shape per
job (:func:`~gangkit.placement.kube_scheduler.queue_key`), so such jobs cost a
step each per move; ``unschedulable()`` (asked at the ``full`` recording
level and by node suppliers) lists every waiting pod.
"""

from __future__ import annotations

import heapq
import math
from bisect import bisect_left
from collections import deque
from itertools import chain
from operator import attrgetter

from gangkit.placement import queue_timing as ks

#: Unschedulable counts at or past this back off for ``podMaxBackoffSeconds``: a count is kept only up to it.
SETTLED = 5

_LAB = attrgetter("lab")


class Rec:
    """A waiting pod's place: its label within its epoch and its shape (the layer's entry for the pod)."""

    __slots__ = ("pod", "lab", "key")

    def __init__(self, pod, lab: int, key: tuple):
        self.pod, self.lab, self.key = pod, lab, key


class Epoch:
    """Pods of one priority that took one timestamp in one cycle: groups by (shape, count), each a deque in label order."""

    __slots__ = ("prio", "ts", "cst", "groups")

    def __init__(self, prio: int, ts: float, cst: int, groups: dict):
        self.prio, self.ts, self.cst, self.groups = prio, ts, cst, groups

    def flush(self, now: float) -> None:
        """Apply the lazy flushes due by ``now`` (:func:`~gangkit.placement.kube_scheduler.flushed`): a new
        timestamp, and every count raised by the number of flushes."""
        if now <= self.ts + ks.MAX_IN_UNSCHEDULABLE:
            return
        ts, n = ks.flushed(self.ts, 0, now)
        if n == 0:
            return
        self.ts = ts
        groups: dict = {}
        for (key, cc), dq in self.groups.items():
            add(groups, (key, min(cc + n, SETTLED)), dq)
        self.groups = groups


def join(a: deque, b: deque) -> deque:
    """One deque of the pods of ``a`` and ``b`` in label order: end to end when they do not interleave, else
    the smaller one's runs put into the gaps of the larger (:func:`_into_gaps`)."""
    if not a:
        return b
    if not b:
        return a
    if a[-1].lab < b[0].lab:
        first, second = a, b
    elif b[-1].lab < a[0].lab:
        first, second = b, a
    else:
        return _into_gaps(a, b) if len(a) <= len(b) else _into_gaps(b, a)
    if len(first) >= len(second):
        first.extend(second)
        return first
    second.extendleft(reversed(first))
    return second


#: A join puts at most this many runs of the smaller deque into gaps of the larger; more are merged by a sort.
MAX_GAPS = 16


def _into_gaps(small: deque, big: deque) -> deque:
    """``small``'s pods put into ``big`` where their labels fall: each run of them that falls in one gap of
    ``big`` is found by bisection and put in by rotating ``big`` (C steps, the fewer of the pods before and
    after the gap); with more than :data:`MAX_GAPS` runs, one sort of both."""
    runs = []
    items = list(small)
    k = 0
    while k < len(items):
        i = bisect_left(big, items[k].lab, key=_LAB)
        end = big[i].lab if i < len(big) else math.inf
        j = k + 1
        while j < len(items) and items[j].lab < end:
            j += 1
        runs.append((i, items[k:j]))
        if len(runs) > MAX_GAPS:
            return deque(sorted(chain(big, small), key=_LAB))
        k = j
    for i, run in reversed(runs):  # from the back, so the earlier gaps' places stay as found
        big.rotate(-i)
        big.extendleft(reversed(run))
        big.rotate(i)
    return big


def add(groups: dict, gkey: tuple, dq: deque) -> None:
    """Put ``dq`` into ``groups`` under ``gkey``, joined with what is there."""
    have = groups.get(gkey)
    groups[gkey] = dq if have is None else join(have, dq)


class GroupedQueue:
    """unschedulablePods (and the cycle's activeQ and backoffQ) by epochs and groups."""

    def __init__(self, entries: dict):
        self.entries = entries  # pod -> Rec, the layer's: a pod is waiting here while its entry is its Rec
        self.epochs: list[Epoch] = []
        self._lab = 0  # labels for new pods
        self.relabelled = 0  # pods relabelled so far (cost not bounded by events; see the module's docstring)

    # -- reading ---------------------------------------------------------------
    def alive(self, r: Rec) -> bool:
        p = r.pod
        return self.entries.get(p) is r and p.node is None and not p.done and p.job.placing

    def unschedulable(self, now: float) -> list:
        """Waiting pods in queue order: priority, timestamp (flushes applied), stamp."""
        keys = []
        for e in self.epochs:
            e.flush(now)
            for dq in e.groups.values():
                for r in dq:
                    if self.alive(r):
                        keys.append((-e.prio, e.ts, e.cst, r.lab, r.pod))
        keys.sort(key=lambda k: k[:4])
        return [k[4] for k in keys]

    # -- the cycle -------------------------------------------------------------
    def cycle(self, layer, sim, cap, now: float, added: list, deleted: bool, ready: list) -> None:
        """One cycle at ``now`` (see :meth:`KubeScheduler.cycle`): ``added`` the new pods in creation order,
        ``deleted``/``ready`` the events since the last cycle."""
        entries = self.entries
        pieces: list[tuple] = []  # (sort key, epoch priority, [(group key, deque)])
        # pods added since the last cycle: activeQ, timestamp now, count 0, stamps in creation order
        fresh: dict[int, dict] = {}
        for p in added:
            if p.node is None and not p.done and p.job.placing:
                self._lab += 1
                r = entries[p] = Rec(p, self._lab, ks.queue_key(p))
                g = fresh.setdefault(p.priority, {})
                dq = g.get((r.key, 0))
                if dq is None:
                    dq = g[(r.key, 0)] = deque()
                dq.append(r)
        for prio, groups in fresh.items():
            layer._stamp += 1
            pieces.append(((0, -prio, now, layer._stamp), prio, list(groups.items())))
        # unschedulable pods moved by the events (a cycle without one leaves them be)
        if deleted or ready:
            self._move(layer, now, deleted, ready, pieces)
        if not pieces:
            return
        # No pod joins a queue during the drain: activeQ in its order, then backoffQ in its.
        pieces.sort(key=lambda pc: pc[0])
        self._drain(sim, cap, pieces)
        self._fail(layer, now, pieces)

    def _move(self, layer, now: float, deleted: bool, ready: list, pieces: list) -> None:
        """Add to ``pieces`` the groups the events move, each epoch's as one piece for activeQ and one per
        backoff end for backoffQ; the groups not moved stay in their epochs."""
        floor_now = math.floor(now)
        hint: dict[tuple, bool] = {}
        keep: list[Epoch] = []
        for e in self.epochs:
            e.flush(now)
            active = []
            backoff: dict[float, list] = {}
            stay: dict = {}
            for gkey, dq in e.groups.items():
                if not dq:
                    continue
                key, cc = gkey
                if not deleted:
                    moved = hint.get(key)
                    if moved is None:
                        pod = dq[0].pod
                        moved = hint[key] = any(layer._moved_by_node(pod, st) for st in ready)
                    if not moved:
                        stay[gkey] = dq
                        continue
                # backing off (isPodBackingoff): its backoff end is not before the current whole second
                if cc > 0 and e.ts + ks.POD_MAX_BACKOFF + 1.0 > now:
                    end = ks.backoff_end(e.ts, cc)
                    if end >= floor_now:
                        backoff.setdefault(end, []).append((gkey, dq))
                        continue
                active.append((gkey, dq))
            if active:
                pieces.append(((0, -e.prio, e.ts, e.cst), e.prio, active))
            for end, groups in backoff.items():
                pieces.append(((1, end, -e.prio, e.ts, e.cst), e.prio, groups))
            if stay:
                e.groups = stay
                keep.append(e)
        self.epochs = keep

    def _drain(self, sim, cap, pieces: list) -> None:
        """Try the pieces in order: in each, the heads of the groups whose shape has not failed, in label order."""
        entries = self.entries
        failed: set = set()  # shapes that found no node in this cycle
        alive = self.alive
        for _, _, groups in pieces:
            if len(groups) == 1:  # one group: its pods in turn
                (key, _), dq = groups[0]
                while dq and key not in failed:
                    r = dq[0]
                    pod = r.pod
                    if entries.get(pod) is not r or pod.node is not None or pod.done or not pod.job.placing:
                        dq.popleft()  # gone (see alive)
                        continue
                    node = cap.choose_for(pod)
                    if node is None:
                        failed.add(key)
                        break
                    dq.popleft()
                    del entries[pod]
                    sim.bind(pod, node)
                continue
            heap = []
            for i, (gkey, dq) in enumerate(groups):
                if gkey[0] in failed:
                    continue
                while dq and not alive(dq[0]):
                    dq.popleft()
                if dq:
                    heap.append((dq[0].lab, i, dq))
            heapq.heapify(heap)
            while heap:
                _, i, dq = heapq.heappop(heap)
                r = dq[0]
                if r.key in failed:
                    continue
                pod = r.pod
                node = cap.choose_for(pod)
                if node is None:
                    failed.add(r.key)
                    continue
                dq.popleft()
                del entries[pod]
                sim.bind(pod, node)
                while dq and not alive(dq[0]):
                    dq.popleft()
                if dq:
                    heapq.heappush(heap, (dq[0].lab, i, dq))

    def _fail(self, layer, now: float, pieces: list) -> None:
        """Every pod left in a piece failed: one more failure each, timestamp now, stamps in the order
        tried. The pieces of each priority become one epoch."""
        parts: dict[int, list] = {}
        for _, prio, groups in pieces:
            part: dict = {}
            for (key, cc), dq in groups:
                if dq:
                    add(part, (key, cc + 1 if cc < SETTLED else SETTLED), dq)
            if part:
                parts.setdefault(prio, []).append(part)
        for prio, in_order in parts.items():
            layer._stamp += 1
            self.epochs.append(Epoch(prio, now, layer._stamp, in_order[0] if len(in_order) == 1 else self._chain(in_order)))

    def _chain(self, parts: list) -> dict:
        """The groups of ``parts`` (in the order tried) in one epoch: labels made to rise from part to part
        (relabelling the smaller side where they do not), groups of one shape and count joined end to end."""
        groups: dict = {}
        acc_lo = acc_hi = acc_n = 0
        for part in parts:
            lo = min(dq[0].lab for dq in part.values())
            hi = max(dq[-1].lab for dq in part.values())
            n = sum(len(dq) for dq in part.values())
            if not groups:
                acc_lo, acc_hi = lo, hi
            elif acc_hi >= lo:  # labels not above those before
                shift = acc_hi - lo + 1
                if n <= acc_n:
                    self._shift(part.values(), shift)
                    lo += shift
                    hi += shift
                    self._lab = max(self._lab, hi)
                else:
                    self._shift(groups.values(), -shift)
                    acc_lo -= shift
                    acc_hi -= shift
            for gkey, dq in part.items():
                have = groups.get(gkey)
                if have is None:
                    groups[gkey] = dq
                elif len(have) >= len(dq):  # dq's labels all lie above have's
                    have.extend(dq)
                else:
                    dq.extendleft(reversed(have))
                    groups[gkey] = dq
            acc_lo, acc_hi, acc_n = min(acc_lo, lo), max(acc_hi, hi), acc_n + n
        return groups

    def _shift(self, groups, by: int) -> None:
        for dq in groups:
            self.relabelled += len(dq)
            for r in dq:
                r.lab += by
