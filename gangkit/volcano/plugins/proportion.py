"""Volcano queues and the proportion plugin: how a cluster is shared between teams.

Picture a shared kitchen with shelves for several flatmates. Each queue
(``scheduling.volcano.sh/v1beta1`` Queue) is a flatmate with a *weight* (how
big a slice of the free shelves they get), a *capability* (a hard cap: never
more than this) and a *guarantee* (shelf space kept for them whoever else
is cooking). Nobody gets more than they actually asked for: what a flatmate
cannot use is handed on to the others. Their resulting fair slice is
Volcano's *deserved* share.

The proportion plugin (Volcano ``pkg/scheduler/plugins/proportion``,
``OnSessionOpen``, as of v1.15.1) computes, at the start of every session:

- ``realCapability = (total - sum of the guarantees of all queues) + own
  guarantee``, capped by the queue's ``capability``. *All* queues: a
  guarantee is kept for its queue even while that queue has no job;
- ``deserved`` by *water-filling*, over the queues that hold jobs: in
  rounds, every queue not yet satisfied gets ``remaining * weight / (sum of
  their weights)``; its deserved is then cut to its realCapability and to
  its *request* (what its pods ask for, allocated or pending), and raised to
  its guarantee. A queue whose request is met, or whose deserved stopped
  growing, leaves the rounds; what it did not take goes back to
  ``remaining`` for the next round;
- ``share = max over resources of allocated / deserved``: queues with the
  lowest share are served first (after the queue ``priority``).

The plugin's checks, one method each on :class:`QueueAttr` (and the
enqueue check in :mod:`gangkit.volcano.actions.enqueue`):

======================  ==================================================  =====================
Volcano function        comparison                                          gangkit
======================  ==================================================  =====================
OverusedFn              ``deserved <= allocated`` in *every* resource       ``overused()``
AllocatableFn           ``allocated + pod <= deserved``, asked resources    ``allocatable()``
PreemptiveFn            ``allocated + pods <= deserved``, asked resources   ``preemptive()``
ReclaimableFn           victim while ``allocated > deserved`` somewhere     ``reclaimable()``
JobEnqueueableFn        ``min + allocated + inqueue - elastic <=            ``enqueue_verdict()``
                        realCapability``, asked resources
======================  ==================================================  =====================

So a queue's *deserved* share, not its capability, bounds what allocate
gives it: a gang larger than its queue's deserved share cannot start while
other queues ask for enough to keep that share small (Volcano's capacity
plugin, which gangkit does not model, lets a queue allocate up to its
realCapability instead).

The Queue objects themselves are in :mod:`gangkit.volcano.api`.

Simplified: one level of queues (Volcano's hierarchical queues and the
capacity plugin, which reads ``spec.deserved``, are not modelled); a queue
is always ``Open``; ``guarantee`` is taken as given, with no check that
the guarantees fit into the cluster; comparisons allow a relative
tolerance (:data:`gangkit.model.precision.TOLERANCE`) where Volcano allows 0.1 milli-units.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from gangkit.model.resources import EPS, INFINITE, ZERO, Resources
from gangkit.volcano.api import Queue


@dataclass
class QueueAttr:
    """What the proportion plugin knows about one queue during a session (its ``queueAttr``)."""

    queue: Queue
    allocated: Resources = ZERO
    request: Resources = ZERO
    inqueue: Resources = ZERO
    elastic: Resources = ZERO
    deserved: Resources = ZERO
    real_capability: Resources = INFINITE
    share: float = 0.0

    @property
    def name(self) -> str:
        return self.queue.name

    def update_share(self) -> None:
        """``max of allocated / deserved`` over the resources the queue deserves (proportion's ``updateQueueAttrShare``).

        A queue that deserves nothing has share 0, as in Volcano, which
        looks only at the resources named in ``deserved``.
        """
        best = 0.0
        for d in self.deserved.asked():
            best = max(best, getattr(self.allocated, d) / getattr(self.deserved, d))
        self.share = best

    def overused(self) -> bool:
        """Proportion's OverusedFn: ``deserved <= allocated`` in *every* resource (``LessEqual``, zero for a missing one).

        Allocate (Volcano ``actions/allocate``) skips an overused queue for
        the rest of the session, and reclaim (``actions/reclaim``) lets no
        job of it reclaim. A queue below its share in any one resource is
        not overused: its pods asking only for that resource may still go.
        """
        return self.deserved.all_at_most(self.allocated)

    def allocatable(self, request: Resources, already: Resources = ZERO) -> bool:
        """Proportion's AllocatableFn: ``allocated (+ already in this trial) + request <= deserved``.

        Asked of every pod before allocate places it (a pod refused is
        skipped, the next one tried). Compared against *deserved*, not
        realCapability, and only in the resources the request asks for
        (``LessEqualWithDimensionAndResourcesName``).
        """
        return (self.allocated + already + request).fits_in(self.deserved, request.asked())

    def preemptive(self, candidates: Resources) -> bool:
        """Proportion's PreemptiveFn: may this queue reclaim for pods asking ``candidates`` in all?

        The same comparison as :meth:`allocatable`, for a group of pods:
        ``allocated + candidates <= deserved`` in the resources asked for.
        gangkit asks it once for all the waiting pods of the reclaiming job,
        as Volcano's ``gangreclaim`` does.
        """
        return self.allocatable(candidates)

    def reclaimable(self, taken: Resources = ZERO) -> bool:
        """Proportion's ReclaimableFn: may reclaim take a (further) pod from this queue?

        Yes while what the queue holds, less what reclaim has already chosen
        from it (``taken``), is above its deserved share in some resource
        (``!allocated.LessEqual(deserved)``). A queue at or below its
        deserved share gives nothing.
        """
        return not (self.allocated - taken).all_at_most(self.deserved)

    def order_key(self) -> tuple:
        """QueueOrderFn: higher queue priority first, then the lowest share, then the name (gangkit's tie-break)."""
        return (-self.queue.priority, self.share, self.name)


def proportion(total: Resources, attrs: dict[str, QueueAttr], queues: Iterable[Queue] | None = None) -> None:
    """Fill in ``real_capability``, ``deserved`` and ``share`` of every queue (water-filling by weight).

    ``attrs`` carry each queue's ``allocated`` and ``request`` already.
    Volcano computes deserved only for queues that hold jobs; so does the
    caller. ``queues`` are all the queues of the cluster (default: those
    of ``attrs``): their guarantees are all kept out of every other
    queue's realCapability, whether they hold jobs or not.
    """
    total_guarantee = ZERO
    for q in (queues if queues is not None else [a.queue for a in attrs.values()]):
        total_guarantee = total_guarantee + q.guarantee
    for a in attrs.values():
        real = (total - total_guarantee) + a.queue.guarantee
        limit = a.queue.limit()
        a.real_capability = real.minimum(limit) if limit is not None else real
        a.deserved = ZERO
    remaining = total
    met: set[str] = set()
    # With one resource each round satisfies a queue or hands out all that remains; with several,
    # a queue capped in one resource can keep a small remainder shrinking round after round:
    # stop after enough rounds for it to be negligible (Volcano stops when it falls below 0.1 milli-units).
    for _ in range(4 * len(attrs) + 64):
        weight = sum(a.queue.weight for n, a in attrs.items() if n not in met)
        if weight == 0:
            break
        increased, decreased = ZERO, ZERO
        for name, a in attrs.items():
            if name in met:
                continue
            old = a.deserved
            grown = old + remaining * (a.queue.weight / weight)
            grown = grown.minimum(a.real_capability).minimum(a.request).maximum(a.queue.guarantee)
            a.deserved = grown
            if a.request.all_at_most(grown) or _same(grown, old):
                met.add(name)
            increased = increased + (grown - old)
            decreased = decreased + (old - grown)
        before = remaining
        remaining = (remaining + decreased) - increased
        if remaining.is_empty() or _same(remaining, before):
            break
    for a in attrs.values():
        a.update_share()


def _same(a: Resources, b: Resources) -> bool:
    return all(x == y or abs(x - y) <= EPS * max(1.0, abs(x)) for x, y in zip(a, b))
