"""Pod-by-pod placement with kube-scheduler's semantics (the layer that deadlocks gangs).

kube-scheduler is a clerk who serves one pod at a time and never asks which
job the pod belongs to. It pops the first pod of its queue, filters the nodes
with room, scores them, and binds the pod to the best one at once. A pod that
fits nowhere is set aside as *unschedulable* and tried again only when the
cluster changes in a way that may help it. Nothing here knows about gangs:
workers A and B of a three-worker job bind as soon as they fit and hold their
GPUs while worker C waits; two such jobs can each hold what the other needs,
for ever.

The queue (Kubernetes 1.35, ``pkg/scheduler/backend/queue``: ``scheduling_queue.go``,
``active_queue.go``, ``backoff_queue.go``; the ``PrioritySort`` queue-sort plugin;
feature gates ``SchedulerQueueingHints`` and ``SchedulerPopFromBackoffQ``, both on
by default in 1.35):

- each pod carries a queue *timestamp* and an unschedulable count. A new pod
  (also a pod recreated after an eviction) enters activeQ with the time it
  was added and a count of 0;
- activeQ pops by priority (higher first), then by timestamp (older first);
- a pod that fails is put back with its count raised by one and its
  timestamp *refreshed to now* (``AddUnschedulableIfNotPresent``), into
  unschedulablePods. So a pod that failed goes behind every pod added
  before the failure, including pods of jobs that arrived after its own;
- cluster events move pods out of unschedulablePods, decided by the queueing
  hints of the plugins that rejected them: the deletion of a bound (or
  nominated) pod moves every pod NodeResourcesFit rejected; a node that
  becomes usable moves the pods whose request its allocatable holds
  (NodeResourcesFit), whose node selector it matches (NodeAffinity), and the
  one-per-node pods (InterPodAffinity). Binding a pod moves nobody, nor does
  a new pending pod;
- a moved pod goes to backoffQ while it is backing off, else to activeQ. Its
  backoff ends at its timestamp plus 1 s doubled per failure past the first,
  at most 10 s (``podInitialBackoffSeconds`` 1, ``podMaxBackoffSeconds`` 10),
  truncated to the whole second (the backoffQ ordering window); it is
  backing off while that end is not before the current whole second;
- when activeQ is empty the scheduler pops from backoffQ at once
  (``SchedulerPopFromBackoffQ``), ordered by backoff end, then priority, then
  timestamp; pods whose backoff has ended are moved to activeQ once a second;
- every 30 s, pods unschedulable for more than 5 minutes (now minus their
  timestamp, ``podMaxInUnschedulablePodsDuration``) are moved back
  (``flushUnschedulablePodsLeftover``).

How the simulator applies it. Its cycles take no time: a cycle drains
activeQ, then backoffQ, so both are empty after every cycle and every
waiting pod sits in unschedulablePods. Backoff therefore never delays a pod
here; it decides whether a moved pod is tried with the new and long-waiting
pods (activeQ) or after all of them (backoffQ). Whether a cluster event
happened since the last cycle is read from the free capacity: its
``grow_version`` grows with every resource given back and every node added
or made ready; what the nodes do not account for is a pod deleted.

The 5-minute flush is applied lazily, without timers, when preemption is
off. Claim: with preemption off, a pod the flush retries fails again.
Proof: since the pod last failed, nothing moved it; so no bound pod was
deleted (which would have moved it) and every node made usable is too small
for it or does not match its selector (else it would have moved it); the
free room of every other node has only shrunk (binds) or stayed. The filter
that failed on each node fails again. So the flush's only effect is on the
pod's timestamp and count: it is retried at the first 30-s tick more than
300 s after its timestamp, fails, gets that tick as timestamp, and is retried
again every 330 s (the next tick more than 300 s later). That depends on the
pod alone, so its timestamp and count at any time follow from its last real
attempt (:func:`flushed`), and applying the flushes due by ``t1`` and later
those due by ``t2`` gives what applying those due by ``t2`` at once gives: it
does not matter when the layer applies them, as long as it does before it
reads a timestamp or count. Two pods flushed at the same tick keep their
earlier order, since both had not been flushed before (no tick lies strictly
between 330 and 300 s before a tick). The flush reads only a pod's
timestamp and count, so pods that share both are flushed alike and keep their
order among themselves: the grouped queue (below) flushes a whole epoch at
once, and orders epochs flushed to the same tick by their last real failure. With preemption on, a flushed pod may
preempt pods of lower priority bound since it failed (or take room a
nominated pod gave back): for a pod that failed before the last such change
the first flush after it runs for real, on a timer; every other flush is
applied lazily as above. So the timers, too, grow with events, not with
simulated time.

Simplified: the scheduler starts at time 0, so its 30-s ticks fall on
multiples of 30 s and its whole seconds on whole simulated seconds; pods
that fail in the same instant keep the order they were tried in (in
kube-scheduler they fail milliseconds apart in that order); NodeResourcesFit
is taken to be among the plugins that rejected every waiting pod (true as
soon as one node lacks room for it), and NodeAffinity among them when the
pod has a node selector; a node counts as added when it becomes usable
(a node that registers earlier with a startup taint would move and fail
its pods once more); the victims of a preemption are deleted after the
cycle that chose them; queue sorting ties are broken by the order pods were
created or failed.

Optional preemption follows kube-scheduler's DefaultPreemption: a pod that
fits nowhere may evict pods of *strictly lower* priority from one node. On
each candidate node all lower-priority pods are removed, then as many as
possible are put back (highest priority first) while the preemptor still
fits; the node chosen has the lowest highest-victim priority, then the
lowest sum of victim priorities, then the fewest victims. The preemptor is
bound in a later cycle, once its victims are gone; meanwhile the room they
left is kept for it (kube-scheduler's nominated node), so that no pod of
lower priority takes it first.

Speed: within a cycle free capacity only shrinks (until a nominated pod's
kept room or a preemption's victims give some back), so once a pod fails,
every later pod of the same request shape (:func:`queue_key`) fails too and
is not filtered again; it still counts as tried. Without preemption
(the run's fast path ``grouped_queue``, on by default) the queue is kept by groups of pods that
share priority, timestamp, shape and count (counts of 5 and more kept as 5:
they all back off 10 s), :mod:`gangkit.placement.kube_queue`: a cycle moves,
backs off, flushes and fails whole groups, and costs a step per pod bound,
per shape that fails and per group, not per waiting pod; the results are the
per-pod queue's to the last bit (``tests/placement/test_kube_scheduler_groups.py``).
With preemption, or ``FastPaths(grouped_queue=False)``, the layer keeps a record per
pod, and a cycle after a pod deletion visits every waiting pod. The pods of a one-per-node pod set
(:attr:`gangkit.model.jobs.PodSet.one_per_node`, required pod anti-affinity on
``kubernetes.io/hostname``) have a key per job and pod set: where one fits
depends on where its own group's pods are bound. A preemptor of such a pod
set looks only at nodes without a pod of its group. (A simplification: a
nominated pod counts for the rule only once bound.)
"""

from __future__ import annotations

import math
from operator import attrgetter

from gangkit.engine.capacity import avoided_nodes
from gangkit.engine.sockets import Cluster, PlacementLayer
from gangkit.engine.state import JobState, NodeState, PodState
from gangkit.model.fast_paths import ALL_ON, FastPaths
from gangkit.model.reasons import Reason
from gangkit.model.resources import Room
from gangkit.placement.queue_timing import (  # noqa: F401 - the queue's rules, read here and by tests
    FLUSH_AGAIN,
    FLUSH_PERIOD,
    MAX_IN_UNSCHEDULABLE,
    POD_INITIAL_BACKOFF,
    POD_MAX_BACKOFF,
    backing_off,
    backoff_end,
    backoff_seconds,
    first_flush,
    flushed,
    flushed_before,
    queue_key,
)

_SEQ = attrgetter("seq")


def _first3(k: tuple) -> tuple:
    return k[:3]


def _first4(k: tuple) -> tuple:
    return k[:4]


class _Entry:
    """A waiting pod's queue record (``QueuedPodInfo``): timestamp, order of that timestamp, unschedulable count."""

    __slots__ = ("pod", "ts", "stamp", "count", "key", "prio")

    def __init__(self, pod: PodState, ts: float, stamp: int, count: int):
        self.pod, self.ts, self.stamp, self.count = pod, ts, stamp, count
        self.key, self.prio = queue_key(pod), pod.priority  # fixed for the pod's life


class KubeScheduler(PlacementLayer):
    """The ``pod`` placement layer."""

    name = "placement"
    period = 0.0  # kube-scheduler reacts to events at once
    pending_metrics = ("scheduler_pending_pods", None)  # the unschedulable queue of kube-scheduler's own gauge

    def __init__(self, preemption: bool = False, fast_paths: FastPaths = ALL_ON):
        self.preemption = preemption
        self._added: list[PodState] = []  # pods added since the last cycle (they go to activeQ)
        self._unsched: dict[PodState, _Entry] = {}  # unschedulablePods
        self._entries: dict[PodState, _Entry] = {}
        self._stamp = 0
        self._nominated: dict[PodState, NodeState] = {}  # preemptor -> node whose room is kept for it
        self._capacity = None
        self._grow = None  # the capacity's grow_version after the last cycle
        self._nodes_seen = 0
        self._not_ready: dict[int, NodeState] = {}  # nodes seen, not usable yet
        self._deleted = False  # a pod was deleted (preemption victims) after the last cycle's snapshot
        self._flush_at: float | None = None  # the flush timer set (preemption only)
        self._flush_now = False  # that timer has fired
        self._change = -math.inf  # preemption only: the last bind or nominated room given back (new victims, new room)
        self._now = 0.0
        self._order: list[PodState] | None = None  # unschedulable(), once per cycle
        self._queue = None  # the queue by groups of pods (without preemption; the same results as per pod)
        if fast_paths.grouped_queue and not preemption:  # fast path: grouped_queue
            from gangkit.placement.kube_queue import GroupedQueue

            self._queue = GroupedQueue(self._entries)

    # -- socket --------------------------------------------------------------
    def enqueue(self, jobs: list[JobState], now: float) -> None:
        for js in jobs:
            for p in js.pods:
                if p.node is None and not p.done:
                    self._added.append(p)

    def requeue(self, js: JobState, now: float) -> None:
        self.forget(js)
        for p in js.pods:
            if p.node is None and not p.done:
                self._added.append(p)

    def forget(self, js: JobState) -> None:
        """Drop the job's pods from the queues and its nominations (their room is given back)."""
        self._order = None
        for p in js.pods:
            self._unsched.pop(p, None)
            self._entries.pop(p, None)
            node = self._nominated.pop(p, None)
            if node is not None:
                self._capacity.give(node, *p.request[:3])

    def unschedulable(self) -> list[PodState]:
        """Pods left unschedulable by the last cycle, in queue order."""
        if self._order is None and self._queue is not None:
            self._order = self._queue.unschedulable(self._now)
        if self._order is None:
            now = self._now
            keys = []
            for e in self._unsched.values():
                p = e.pod
                if p.node is not None or p.done or not p.job.placing:
                    continue
                if now > e.ts + MAX_IN_UNSCHEDULABLE:
                    self._lazy_flush(e, now)
                keys.append((-p.priority, e.ts, e.stamp, p))
            keys.sort(key=_first3)
            self._order = [k[3] for k in keys]
        return list(self._order)

    def _next_stamp(self) -> int:
        self._stamp += 1
        return self._stamp

    # -- events ----------------------------------------------------------------
    def _events(self, cap) -> tuple[bool, list[NodeState]]:
        """(was a pod deleted, nodes made usable) since the last cycle, read from the free capacity."""
        ready: list[NodeState] = []
        bumps = 0
        nodes = cap.nodes
        for st in nodes[self._nodes_seen:]:
            bumps += 1  # added
            if st.ready:
                bumps += 1
                ready.append(st)
            elif cap.by_name.get(st.node.name) is st:
                self._not_ready[st.index] = st
        self._nodes_seen = len(nodes)
        for i, st in list(self._not_ready.items()):
            if st.ready:
                bumps += 1
                ready.append(st)
                del self._not_ready[i]
            elif cap.by_name.get(st.node.name) is not st:
                del self._not_ready[i]
        deleted = self._deleted or (self._grow is not None and cap.grow_version - self._grow > bumps)
        self._deleted = False
        return deleted, ready

    @staticmethod
    def _moved_by_node(p: PodState, st: NodeState) -> bool:
        """The queueing hints for a node made usable: NodeResourcesFit, NodeAffinity, InterPodAffinity."""
        ps = p.pod_set
        n = st.node
        if ps.one_per_node:
            return True
        if ps.node_selector and n.matches(ps.node_selector):
            return True
        return Room(n.gpus, n.cpu, n.memory).fits(ps.gpus, ps.cpu, ps.memory)

    # -- the cycle -------------------------------------------------------------
    def cycle(self, sim: Cluster, now: float) -> None:
        cap = self._capacity = sim.capacity
        self._now = now
        deleted, ready = self._events(cap)
        if self._queue is not None:
            added, self._added = sorted(self._added, key=_SEQ), []
            self._queue.cycle(self, sim, cap, now, added, deleted, ready)
            self._order = None
            self._grow = cap.grow_version
            return
        active = self._added_to_active(now)
        backoff: list[tuple] = []
        # unschedulable pods moved by the events, or by the flush (a cycle without either leaves them be)
        flush_now, self._flush_now = self._flush_now, False
        if deleted or ready or flush_now:
            self._move_unschedulable(now, deleted, ready, flush_now, active, backoff)
        # No pod joins a queue during the drain, so the pop order is fixed: activeQ in its order, then backoffQ in its.
        active.sort(key=_first3)
        backoff.sort(key=_first4)
        if backoff:
            active.extend(backoff)
        self._drain(sim, cap, now, active)
        self._order = None
        self._grow = cap.grow_version
        if self.preemption and self._unsched:
            self._set_flush_timer(sim, now)

    def _added_to_active(self, now: float) -> list[tuple]:
        """activeQ's entries for the pods added since the last cycle, in creation order (a pod recreated after
        an eviction is a new pod): each enters with its timestamp now and an unschedulable count of 0."""
        active: list[tuple] = []
        for p in sorted(self._added, key=lambda p: p.seq):
            if p.node is None and not p.done and p.job.placing:
                self._unsched.pop(p, None)
                e = self._entries[p] = _Entry(p, now, self._next_stamp(), 0)
                active.append((-e.prio, e.ts, e.stamp, e))
        self._added = []
        return active

    def _move_unschedulable(self, now: float, deleted: bool, ready: list, flush_now: bool,
                            active: list[tuple], backoff: list[tuple]) -> None:
        """Move the unschedulable pods that the cluster events' queueing hints (a deletion, a node made usable)
        or the flush move: into backoffQ while backing off (``isPodBackingoff``), else into activeQ; the
        others stay in unschedulablePods (scheduling_queue.go, Kubernetes 1.35)."""
        floor_now = math.floor(now)
        keep: dict[PodState, _Entry] = {}
        for p, e in self._unsched.items():
            if p.node is not None or p.done or not p.job.placing:
                continue
            if now > e.ts + MAX_IN_UNSCHEDULABLE:
                self._lazy_flush(e, now)
            flush = flush_now and first_flush(e.ts) <= now + 1e-9
            if not (deleted or flush or any(self._moved_by_node(p, st) for st in ready)):
                keep[p] = e
                continue
            # backing off (isPodBackingoff): its backoff end is not before the current whole second
            if e.ts + POD_MAX_BACKOFF + 1.0 > now and backoff_end(e.ts, e.count) >= floor_now:
                backoff.append((backoff_end(e.ts, e.count), -e.prio, e.ts, e.stamp, e))
            else:
                active.append((-e.prio, e.ts, e.stamp, e))
        self._unsched = keep

    def _drain(self, sim: Cluster, cap, now: float, queue: list[tuple]) -> None:
        """Pop the pods in ``queue``'s order and schedule each: bind it on the node the Filter and Score pick,
        or (``AddUnschedulableIfNotPresent``) put it back unschedulable with its count raised and its timestamp
        refreshed, after trying preemption (PostFilter, DefaultPreemption) when it is on. A request shape that
        found no node is not tried again in this cycle (nothing frees room during the drain, unless a
        nominated pod gives back the room kept for it)."""
        failed: set = set()  # request shapes that found no node in this cycle
        no_victims: set = set()  # (shape, priority) whose preemption found no node in this cycle
        entries = self._entries
        unsched = self._unsched
        for item in queue:
            e = item[-1]
            pod = e.pod
            if pod.node is not None or pod.done or not pod.job.placing or entries.get(pod) is not e:
                continue
            key = e.key
            node = None
            if self._nominated:
                reserved = self._nominated.pop(pod, None)
                if reserved is not None:  # our turn: the room kept for us is ours to take
                    cap.give(reserved, *pod.request[:3])
                    self._change = now
                    failed.clear()
                    no_victims.clear()
                    node = cap.choose_for(pod)
                elif key not in failed:
                    node = cap.choose_for(pod)
            elif key not in failed:
                node = cap.choose_for(pod)
            if node is None:
                failed.add(key)
                if self.preemption and (key, e.prio) not in no_victims:
                    target = self._preempt(sim, pod)
                    if target is None:
                        no_victims.add((key, e.prio))
                    else:
                        # kube-scheduler's nominatedNodeName: the room the victims leave is kept
                        # for this pod, so that no lower-priority pod takes it first
                        cap.take(target, *pod.request[:3])
                        self._nominated[pod] = target
                        self._deleted = True  # the victims' deletion moves the unschedulable pods
                        failed.clear()
                        no_victims.clear()
                # AddUnschedulableIfNotPresent: one more failure, the timestamp refreshed
                e.count += 1
                e.ts = now
                self._stamp += 1
                e.stamp = self._stamp
                unsched[pod] = e
                continue
            del entries[pod]
            sim.bind(pod, node)
            if self.preemption:
                self._change = now

    def _lazy_flush(self, e: _Entry, now: float) -> None:
        """Apply the flushes that cannot change anything: all of them without preemption; with it, those
        before the last change (a bind, or nominated room given back) that followed the pod's last attempt."""
        if not self.preemption or e.ts >= self._change:
            e.ts, e.count = flushed(e.ts, e.count, now)
        else:
            e.ts, e.count = flushed_before(e.ts, e.count, min(now, self._change))

    def _set_flush_timer(self, sim: Cluster, now: float) -> None:
        """With preemption, a flush after a bind may let a pod preempt the pods bound since it failed: a timer
        at the first tick where such a pod is due (a pod with nothing new since its attempt needs none)."""
        due = math.inf
        for e in self._unsched.values():
            if e.ts < self._change:
                ts, _ = flushed_before(e.ts, e.count, self._change)
                due = min(due, first_flush(ts))
        if due == math.inf:
            return
        due = max(due, FLUSH_PERIOD * (math.floor(now / FLUSH_PERIOD) + 1))
        if self._flush_at is not None and self._flush_at <= due:
            return
        self._flush_at = due

        def tick(t: float) -> None:
            if self._flush_at == due:
                self._flush_at = None
                self._flush_now = True
                sim.request_cycle()

        sim.call_at(due, tick)

    # -- preemption ------------------------------------------------------------
    def _preempt(self, sim: Cluster, pod: PodState) -> NodeState | None:
        """Evict the cheapest set of strictly lower-priority pods from one node; return that node."""
        gpus, cpu, memory, selector = pod.request
        best = None
        avoid = avoided_nodes(pod)
        for st in sim.capacity.nodes:
            if not st.ready or not st.node.matches(selector) or st in avoid:
                continue
            lower = [v for v in st.pods if v.priority < pod.priority]
            if not lower or not _fits_without(st, lower, pod.pod_set):
                continue
            # remove all lower-priority pods, then reprieve the most important ones that can stay
            victims = list(lower)
            for v in sorted(lower, key=lambda v: (-v.priority, v.bound_at, v.job.index, v.index)):
                rest = [u for u in victims if u is not v]
                if _fits_without(st, rest, pod.pod_set):
                    victims = rest  # reprieved: it stays
            if not victims:
                continue
            key = (max(v.priority for v in victims), sum(v.priority for v in victims), len(victims), st.index)
            if best is None or key < best[0]:
                best = (key, st, victims)
        if best is None:
            return None
        _, node, victims = best
        reason = Reason("placement", "Preempted", f"preempted by {pod.name} (priority {pod.priority})", {"preemptor_priority": pod.priority})
        for v in sorted(victims, key=lambda v: (v.job.index, v.index)):
            if v.node is not None:  # an earlier victim of the same sync job may have taken it along
                sim.evict_pod(v, reason)
        return node

    # -- diagnosis ---------------------------------------------------------------
    def pending_reason(self, sim: Cluster, js: JobState) -> Reason | None:
        waiting = [p for p in js.pods if p.node is None and not p.done]
        if not waiting:
            return None
        p = waiting[0]
        gpus = p.pod_set.gpus
        nodes = [n for n in sim.capacity.nodes if n.ready]
        short = sum(1 for n in nodes if n.free_gpus < gpus)
        bound = js.bound
        msg = f"{len(waiting)} of {len(js.pods)} pods unschedulable: 0/{len(nodes)} nodes are available: {short} Insufficient nvidia.com/gpu"
        avoid = avoided_nodes(p)
        apart = sum(1 for n in nodes if n.free_gpus >= gpus and n in avoid)
        if apart:  # InterPodAffinity filters after NodeResourcesFit: the nodes with room that hold one of its group
            msg += f", {apart} node(s) didn't match pod anti-affinity rules"
        if bound and js.spec.progress == "sync":
            msg += f"; {bound} bound pods hold {js.gpus_bound} GPUs without progress"
        return Reason("placement", "Unschedulable", msg, {"waiting_pods": len(waiting), "bound_pods": bound, "nodes_short": short})


def _fits_without(st: NodeState, victims: list[PodState], ps) -> bool:
    """Would a pod of pod set ``ps`` fit on ``st`` if ``victims`` were gone (GPUs, CPU, memory)?"""
    cpu, memory = st.free_cpu, st.free_memory
    room = Room(st.free_gpus + sum(v.pod_set.gpus for v in victims),
                None if cpu is None else cpu + sum(v.pod_set.cpu for v in victims),
                None if memory is None else memory + sum(v.pod_set.memory for v in victims))
    return room.fits(ps.gpus, ps.cpu, ps.memory)
