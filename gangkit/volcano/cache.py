"""What Volcano's scheduler remembers between sessions: every job it holds, and its PodGroup's phase.

Volcano's scheduler keeps a *cache* of the cluster (``pkg/scheduler/cache``)
and, at each session, takes a snapshot of it. gangkit's cache is the part the
gang layer needs: the jobs it holds, each PodGroup's phase (``Pending`` until
the enqueue action lets it in, then ``Inqueue``, then ``Running`` once the
gang is ready), and the waiting lines the actions read:

- ``pending``: per queue, a heap of the PodGroups still Pending (the enqueue
  action's line), in job order (priority, then creation);
- ``creating``: Volcano Jobs whose PodGroup went Inqueue, until their
  controller has created the pods (one session later);
- ``shapes``: per queue and per *shape* (pod requests, gang size, role
  minimums), a heap of Inqueue jobs with no pod bound (allocate's line);
- ``partial``: jobs with some pods bound and some still waiting.

Heap entries are :class:`PendingJob` tuples ``(neg_priority, seq, index, job)``
(``creating`` holds :class:`CreatingJob` tuples ``(at, seq, index, job)``),
compared as plain tuples, so the heaps keep their order; an entry is built with
``tuple.__new__`` (no call of the named tuple's own ``__new__``, the cost of a
plain tuple) and read by name. An entry goes stale when
its job leaves that line (bound, evicted, finished); stale entries are
dropped when they reach the top (:meth:`JobCache.drop_stale`), so leaving a
line costs nothing.

Why shapes: room only shrinks within a session, so once the first job of a
shape fails, every job of that shape behind it fails too. A session then
costs a few trials per shape plus one per job started, whatever the length
of the queue.

The same holds across sessions for a *monotone* shape (:func:`monotone`:
all its pods ask for the same, in amounts a trial gives back bit for bit):
its trial places as many pods as the free room holds, whatever the node
order, so a head that failed fails again until the room grows. ``failed``
keeps, per line, the capacity's ``grow_version`` and the head of the last
failure (gangkit's shortcut; Volcano tries the head every session).

Bookkeeping that replaces scans (gangkit's, the results unchanged;
``tests/engine/test_fast_paths.py`` runs both ways): a job's shape is kept in the
cache (``JobCache.shapes_of``) from its first look-up until its pods may have
changed, that is until it reaches the layer again (``add``, ``drop_shape``) or
ends (fast path ``keep_shapes``); the PodGroups with
``minResources`` in the Pending lines are counted, and the lines that a
session emptied are noted, so that a session neither walks the Pending lines
to see whether it needs the queues' figures nor every line to prune the
empty ones (``count_lines``). ``shortfall`` keeps, per job whose trial was
refused before any pod was tried because too few GPUs were free, the GPUs it
needs at the least (``remember_shortfall``); the figure goes when
the job enters a line again (its pods may have changed) or ends.
"""

from __future__ import annotations

import heapq
from collections import defaultdict
from typing import NamedTuple

from gangkit.engine.state import JobState
from gangkit.model.fast_paths import ALL_ON, FastPaths
from gangkit.model.reasons import Reason
from gangkit.volcano.api import job_min_resources
from gangkit.volcano.plugins.sla import SlaPlugin

PENDING, INQUEUE, RUNNING = "Pending", "Inqueue", "Running"  # PodGroup phases

#: marks a shape whose pods include some of a one-per-node pod set (PodSet.one_per_node)
ONE_PER_NODE = "one-per-node"
class PendingJob(NamedTuple):
    """An entry of a line of waiting PodGroups (``pending``, ``shapes``): job order is tuple order (priority, then
    the order the job reached placement, ``seq``)."""

    neg_priority: int  # -priority: higher priority first
    seq: int  # when the job reached placement (JobState.seq)
    index: int
    job: JobState


class CreatingJob(NamedTuple):
    """An entry of ``creating``: a Volcano Job whose pods its controller has created by ``at``."""

    at: float
    seq: int
    index: int
    job: JobState


class JobCache:
    """The jobs the gang layer holds, their PodGroups' phases, and the lines of waiting PodGroups."""

    def __init__(self, fast_paths: FastPaths = ALL_ON):
        self.fast_paths = fast_paths  # the run's exact shortcuts (gangkit.volcano.shortcuts), read by allocate too
        self.keep_shapes = fast_paths.keep_shapes  # fast path: a job's shape kept until its pods may change
        self.count_lines = fast_paths.count_lines  # fast path: the lines counted, not scanned
        self.jobs: dict[int, JobState] = {}  # every job this layer holds, until it ends
        self.phase: dict[int, str] = {}  # job -> its PodGroup's phase
        self.pending: dict[str, list[PendingJob]] = defaultdict(list)  # queue -> heap of PodGroups still Pending
        self.creating: list[CreatingJob] = []  # heap: Volcano Jobs whose pods appear at a time
        self.shapes: dict[str, dict[tuple, list]] = defaultdict(lambda: defaultdict(list))  # queue -> shape -> heap
        self.partial: dict[int, JobState] = {}  # jobs with some pods bound and some waiting
        self.refused: dict[int, Reason] = {}  # why a PodGroup is still Pending
        self.failed: dict[tuple, tuple[int, int]] = {}  # (queue, shape) -> (grow_version, head index) of its last failure
        self.mixed: set[tuple] = set()  # (queue, shape) lines whose shape is not monotone
        self._monotone: dict[tuple, bool] = {}  # shape -> monotone(shape)
        self.shapes_of: dict[int, tuple] = {}  # job -> its shape, kept until its pods may change (keep_shapes)
        self.pending_minimums = 0  # entries of the Pending lines (current or stale) whose job has minResources
        self.emptied: list[tuple] = []  # lines emptied since the last prune: (queue,) of pending, (queue, shape)
        self.emptied_unknown = False  # a line was emptied that is not in emptied: prune scans every line
        self.shortfall: dict[int, tuple[int, int]] = {}  # job -> (GPUs its waiting pods need at the least, pods done)
        self.sla: SlaPlugin | None = None  # the sla plugin, when configured: it orders the lines too
        self.created: dict[int, float] = {}  # job -> when its PodGroup was created (it reached the layer)

    def shape(self, js: JobState) -> tuple:
        """Jobs of one shape succeed or fail together against the same free capacity.

        The shape is taken from the pods (an admission layer may have added a
        flavor's node selector to them), the gang size and the role minimums.
        With the sla plugin it also holds the job's waiting time (and, when the
        plugin's order comes before priority's, the priority), so that within
        one line the job order is the order of creation, as the heap keeps it.
        A job with a one-per-node pod set has that in its shape too, pod by pod
        (its trial spreads those pods over distinct nodes).
        """
        s = self.shapes_of.get(js.index)
        if s is None or not self.keep_shapes:  # dropped when the job reaches the layer again (its pods may have changed)
            s = (tuple(p.request for p in js.pods), js.gang_size, tuple(ps.min_member for ps in js.spec.pod_sets))
            if any(ps.one_per_node for ps in js.spec.pod_sets):  # where its pods may go depends on each other
                s = s + ((ONE_PER_NODE, tuple(p.pod_set.one_per_node for p in js.pods)),)
            sla = self.sla
            if sla is not None:
                s = s + ((sla.waiting_time_of(js), js.priority) if sla.first_tier else (sla.waiting_time_of(js),))
            self.shapes_of[js.index] = s
        return s

    def drop_shape(self, js: JobState) -> None:
        """The job reaches the layer (again): the engine made or changed its pods, so its shape is derived anew."""
        self.shapes_of.pop(js.index, None)

    def add(self, js: JobState) -> None:
        """A job reaches the layer: its PodGroup is Pending."""
        self.jobs[js.index] = js
        self.shapes_of.pop(js.index, None)
        self.to_pending(js)

    def to_pending(self, js: JobState) -> None:
        self.phase[js.index] = PENDING
        self.shortfall.pop(js.index, None)
        heapq.heappush(self.pending[js.spec.volcano_queue], tuple.__new__(PendingJob, (-js.priority, js.seq, js.index, js)))
        if job_min_resources(js.spec) is not None:
            self.pending_minimums += 1

    def needs_minimums(self) -> bool:
        """Does a Pending line hold an entry (current or stale) of a PodGroup with ``minResources``?"""
        if self.count_lines:
            return self.pending_minimums > 0
        return any(job_min_resources(e.job.spec) is not None for h in self.pending.values() for e in h)

    def pending_left(self, queue: str) -> None:
        """The enqueue action went through the Pending line of ``queue``: what it kept there are PodGroups
        refused for their ``minResources`` (so all with one); an emptied line is noted for prune."""
        heap = self.pending[queue]
        if not heap:
            self.emptied.append((queue,))
        self.pending_minimums = sum(len(h) for h in self.pending.values())

    def to_allocate(self, js: JobState) -> None:
        """An Inqueue job whose pods exist: allocate may place it."""
        self.shortfall.pop(js.index, None)
        if js.bound:
            self.partial[js.index] = js
        else:
            q, shape = js.spec.volcano_queue, self.shape(js)
            flag = self._monotone.get(shape)
            if flag is None:
                flag = self._monotone[shape] = monotone(shape)
            if not flag:
                self.mixed.add((q, shape))
            heapq.heappush(self.shapes[q][shape], tuple.__new__(PendingJob, (-js.priority, js.seq, js.index, js)))

    def forget(self, js: JobState) -> None:
        """The job ended: it leaves every line (its heap entries go stale)."""
        for d in (self.jobs, self.phase, self.partial, self.refused, self.shortfall, self.created, self.shapes_of):
            d.pop(js.index, None)

    def waits_whole(self, js: JobState, phase: str) -> bool:
        """The heap entry is current: the job waits with no pod bound, in this phase."""
        return self.phase.get(js.index) == phase and js.placing and not js.bound and js.state == "Pending"

    def drop_stale(self, heap: list, line: tuple | None = None) -> None:
        """Pop the entries at the top of an allocate heap whose jobs no longer wait there.

        ``line`` is the heap's (queue, shape): an emptied heap is noted for prune (without it, prune scans)."""
        phase = self.phase
        while heap:
            js = heap[0].job  # waits_whole(js, INQUEUE), inline (a look per session and line)
            if phase.get(js.index) == INQUEUE and js.placing and not js.bound and js.state == "Pending":
                break
            heapq.heappop(heap)
        if not heap:
            if line is None:
                self.emptied_unknown = True
            else:
                self.emptied.append(line)

    def nothing_waits(self) -> bool:
        """No PodGroup waits to be enqueued or allocated."""
        return not (self.pending or self.creating or self.partial or any(self.shapes.values()))

    def prune(self) -> None:
        """Drop the empty lines (after a session).

        A line is empty only if a session emptied it since the last prune (every line is made with an entry):
        those noted in ``emptied`` are looked at, in the order they were noted (a dict keeps the order of
        the keys it keeps, whatever the order of the deletions)."""
        emptied, self.emptied = self.emptied, []
        if self.count_lines and not self.emptied_unknown:
            for line in emptied:
                if len(line) == 1:
                    h = self.pending.get(line[0])
                    if h is not None and not h:
                        del self.pending[line[0]]
                    continue
                q, shape = line
                shapes = self.shapes.get(q)
                h = shapes.get(shape) if shapes is not None else None
                if h is not None and not h:
                    del shapes[shape]
                    self.failed.pop(line, None)
                    self.mixed.discard(line)
            return
        self.emptied_unknown = False
        for q in [q for q, h in self.pending.items() if not h]:
            del self.pending[q]
        for q, shapes in self.shapes.items():
            for shape in [s for s, h in shapes.items() if not h]:
                del shapes[shape]
                self.failed.pop((q, shape), None)
                self.mixed.discard((q, shape))


def exact_give_back(cpu: float, memory: int) -> bool:
    """Taking ``cpu`` and ``memory`` from a node and giving them back leaves its free amounts bit for bit as they were.

    True when the CPU is a multiple of 2**-10 cores and the memory a whole
    number of bytes (every quantity Kubernetes writes as ``500m``, ``4``,
    ``64Gi``...), on nodes below 2**42 cores and 2**52 bytes
    (``FreeCapacity.exact_amounts``, which the callers check): the
    subtraction and the addition are then exact in floating point. Otherwise
    a trial's give-back may move a free amount by a rounding step.
    """
    return (float(cpu * 1024).is_integer() and abs(cpu) < 2 ** 20
            and float(memory).is_integer() and abs(memory) < 2 ** 52)


def monotone(shape: tuple) -> bool:
    """Whether a trial of this shape succeeds or fails with the free room alone, more room never failing where less
    succeeded.

    True when every pod asks for the same (one request in the shape) and the
    trial's give-back is exact (:func:`exact_give_back`): identical pods are
    placed one by one while any node holds one, so the trial places
    ``min(pods, sum over nodes of the pods each holds)`` pods whatever node it
    picks first, and the first pods in order are the ones placed. A shape with
    pods of a one-per-node pod set (:data:`ONE_PER_NODE`) is never taken as
    monotone: its trial also depends on which nodes hold room, not only on how
    much room there is.
    """
    requests = shape[0]
    if any(type(part) is tuple and part[:1] == (ONE_PER_NODE,) for part in shape[1:]):
        return False  # where a pod may go depends on where its group's pods went, not on the free room alone
    first = requests[0] if requests else None
    return all(r == first for r in requests) and (first is None or exact_give_back(first[1], first[2]))
