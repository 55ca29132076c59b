"""One ClusterQueue's pending workloads, as Kueue's queue manager keeps them (``pkg/queue``).

Kueue's scheduler takes one head per ClusterQueue in each cycle
(:mod:`gangkit.kueue.scheduler`); this module holds what it takes them from:
the active heap, ordered by priority and then creation time (or the time of
the last eviction, per ``requeuingStrategy``), and the workloads parked as
inadmissible until something in their cohort tree changes.
"""

from __future__ import annotations

import heapq
from collections import Counter

from gangkit.kueue.objects import Workload


def scheduling_hash(wl: Workload) -> tuple:
    """Workloads with equal hashes are equivalent for admission (Kueue's SchedulingEquivalenceHashing)."""
    return (wl.priority, tuple((ps.name, ps.count, tuple(sorted(ps.requests.items())), ps.min_count, ps.node_selector,
                                ps.topology) for ps in wl.pod_sets))


class PendingWorkloads:
    """One ClusterQueue's pending workloads: the active heap and the inadmissible ones.

    Kueue (BestEffortFIFO, with its default SchedulingEquivalenceHashing)
    parks, together with a head that cannot fit, every pending workload
    *equivalent* to it (same priority and pod sets): they would fail the
    same way until something in the cohort changes. Here the pending
    workloads are kept in one heap per equivalence class, so parking a class
    and requeueing everything cost a step per class, not per workload.
    Workloads waiting out a requeue backoff are parked one by one.

    Why ``heads`` exists: taking the queue's head must not look at every
    class (a trace replay has thousands of distinct request shapes, and a
    cycle runs after every change), so a heap holds the head entry of each
    class that is not parked, with stale entries dropped when they surface.
    Likewise the number of parked workloads is kept as a running count.
    """

    def __init__(self, strategy: str, equivalence: bool = True, cache_hash: bool = True):
        self.strategy = strategy
        self.cache_hash = cache_hash  # fast path: cache_scheduling_hash (a pending workload's class computed once)
        self.equivalence = equivalence and strategy == "BestEffortFIFO"
        self.classes: dict = {}  # class -> heap of (key, seq, wl)
        self.class_numbers: dict[tuple, int] = {}  # scheduling hash -> its class (see class_of)
        self.blocked: set[tuple] = set()  # classes parked as a whole
        self.parked: dict[int, Workload] = {}  # parked one by one
        self.members: dict[int, tuple] = {}  # seq -> the key of its live heap entry
        self.preemptor: Workload | None = None
        self.class_reason: dict[tuple, tuple[str, str]] = {}  # why a parked class waits (its head's reason, cause)
        self.in_class: dict[int, tuple] = {}  # seq -> class, for workloads in the class heaps
        self.class_count: Counter = Counter()  # live workloads per class (so counting costs a step per class)
        self.heads: list = []  # (key, seq, class) of every class not parked, plus stale entries
        self.registered: dict[tuple, tuple] = {}  # class -> the (key, seq) of its entry in heads
        self.blocked_count = 0  # live workloads in the parked classes
        self.class_by_seq: dict[int, int] = {}  # seq -> class, while the workload is pending (cache_hash)

    def _key(self, wl: Workload) -> tuple:
        sticky = 0 if (self.strategy == "BestEffortFIFO" and wl is self.preemptor) else 1
        return (sticky, -wl.priority, wl.queue_timestamp, wl.seq)

    def class_of(self, wl: Workload) -> tuple | int:
        """The workload's equivalence class: a small number per distinct scheduling hash.

        Why a number: the class is looked up in several dicts and sets per push and pop,
        and a nested tuple is hashed anew at every look-up.
        """
        if not self.equivalence:
            return (wl.seq,)
        if self.cache_hash:  # fast path: cache_scheduling_hash
            # the hash reads the priority and pod sets, which nothing changes while the workload is pending;
            # the number is forgotten when the workload leaves the queue (remove)
            number = self.class_by_seq.get(wl.seq)
            if number is None:
                number = self.class_by_seq[wl.seq] = self._number(scheduling_hash(wl))
            return number
        return self._number(scheduling_hash(wl))

    def _number(self, h: tuple) -> int:
        """The class of a scheduling hash (numbered in order of first sight)."""
        number = self.class_numbers.get(h)
        if number is None:
            number = self.class_numbers[h] = len(self.class_numbers)
        return number

    def push(self, wl: Workload) -> None:
        """Into the active heap (a workload of a parked class stays parked with its class)."""
        self.parked.pop(wl.seq, None)
        key = self._key(wl)
        self.members[wl.seq] = key
        h = self.class_of(wl)
        if wl.seq not in self.in_class:
            self.in_class[wl.seq] = h
            self.class_count[h] += 1
            if h in self.blocked:
                self.blocked_count += 1
        heapq.heappush(self.classes.setdefault(h, []), (key, wl.seq, wl))
        if h not in self.blocked:
            self._refresh(h)

    def _leave_class(self, seq: int) -> None:
        h = self.in_class.pop(seq, None)
        if h is not None:
            self.class_count[h] -= 1
            if h in self.blocked:
                self.blocked_count -= 1

    def _block(self, h: tuple) -> None:
        if h not in self.blocked:
            self.blocked.add(h)
            self.blocked_count += self.class_count[h]
            self.registered.pop(h, None)  # its entry in heads is stale until the class is unparked

    def park(self, wl: Workload, bulk: bool = False) -> None:
        """Set aside as inadmissible; ``bulk`` parks every equivalent workload with it."""
        if bulk and self.equivalence:
            self.push(wl)
            self._block(self.class_of(wl))
            self.class_reason[self.class_of(wl)] = (wl.pending_reason, wl.pending_cause)
        else:
            self.members[wl.seq] = None
            self.parked[wl.seq] = wl
            self._leave_class(wl.seq)

    def _live(self, entry) -> bool:
        key, seq, wl = entry
        return self.members.get(seq) == key and wl.admission is None

    def _top(self, h: tuple) -> tuple | None:
        """The live head entry of class ``h`` (stale entries on top are dropped)."""
        heap = self.classes.get(h)
        while heap and not self._live(heap[0]):
            heapq.heappop(heap)
        return heap[0] if heap else None

    def _refresh(self, h: tuple) -> None:
        """Make the entry of class ``h`` in ``heads`` its live head (a new entry when the head changed)."""
        top = self._top(h)
        if top is None:
            self.registered.pop(h, None)
        elif self.registered.get(h) != top[:2]:
            self.registered[h] = top[:2]
            heapq.heappush(self.heads, (top[0], top[1], h))

    def _head(self) -> tuple | None:
        """The entry in ``heads`` of the first live workload over all classes not parked (stale entries dropped)."""
        heads = self.heads
        while heads:
            key, seq, h = top = heads[0]
            if self.registered.get(h) != (key, seq):
                heapq.heappop(heads)  # stale: the class has a newer entry, or is parked
                continue
            heap = self.classes[h]
            if not heap or heap[0][1] != seq or not self._live(heap[0]):
                self._refresh(h)  # its head left the queue (admitted, finished): register the next one
                continue
            return top
        return None

    def has_head(self) -> bool:
        """Would :meth:`pop` return a workload?"""
        return self._head() is not None

    def peek(self) -> Workload | None:
        """The workload :meth:`pop` would return, left in place."""
        top = self._head()
        return None if top is None else self.classes[top[2]][0][2]

    def park_head(self, wl: Workload) -> None:
        """Park the head ``wl`` (:meth:`peek`) with its class, where it stands: what :meth:`pop` then
        ``park(wl, bulk=True)`` leave, without taking it out and putting it back (the fast path fast_park, gangkit.kueue.shortcuts)."""
        h = self.class_of(wl)
        self._block(h)
        self.class_reason[h] = (wl.pending_reason, wl.pending_cause)

    def pop(self) -> Workload | None:
        """The first live workload over all classes not parked (ordered by priority, then creation)."""
        top = self._head()
        if top is None:
            return None
        h = top[2]
        heapq.heappop(self.heads)
        _, seq, wl = heapq.heappop(self.classes[h])
        del self.members[seq]
        self._leave_class(seq)
        del self.registered[h]
        self._refresh(h)
        return wl

    def remove(self, wl: Workload) -> None:
        self.class_by_seq.pop(wl.seq, None)
        self.members.pop(wl.seq, None)
        self.parked.pop(wl.seq, None)
        self._leave_class(wl.seq)
        if self.preemptor is wl:
            self.preemptor = None

    def requeue_inadmissible(self, now: float) -> bool:
        """Move parked workloads back to the heap, except those still in their requeue backoff."""
        if not self.blocked and not self.parked:  # nothing parked (asked after every finish)
            self.blocked_count = 0
            return False
        moved = bool(self.blocked)
        blocked = list(self.blocked)
        self.blocked.clear()
        for h in blocked:
            self._refresh(h)
        self.blocked_count = 0
        for wl in [w for w in self.parked.values() if w.requeue_at is None or w.requeue_at <= now]:
            self.push(wl)
            moved = True
        return moved

    def is_inadmissible(self, wl: Workload) -> bool:
        return wl.seq in self.parked or (wl.seq in self.members and self.class_of(wl) in self.blocked)

    def counts(self) -> tuple[int, int]:
        """(active, inadmissible) pending workloads."""
        inadmissible = len(self.parked) + self.blocked_count
        return len(self.members) - inadmissible, inadmissible
