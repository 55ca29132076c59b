"""Pod-by-pod placement with kube-scheduler's semantics (the layer that deadlocks gangs).

kube-scheduler is a clerk who serves one pod at a time and never asks which
job the pod belongs to. It keeps an *active queue* ordered by priority, then
by creation time; it pops the first pod, filters the nodes with room, scores
them, and binds the pod to the best one at once. A pod that fits nowhere is
set aside as *unschedulable* and tried again only when the cluster changes
(a pod finishes, a node appears): kube-scheduler's queueing hints.

Nothing here knows about gangs. Workers A and B of a three-worker job bind
as soon as they fit, and hold their GPUs while worker C waits; two such jobs
can each hold what the other needs, for ever.

Optional preemption follows kube-scheduler's DefaultPreemption: a pod that
fits nowhere may evict pods of *strictly lower* priority from one node. On
each candidate node all lower-priority pods are removed, then as many as
possible are put back (highest priority first) while the preemptor still
fits; the node chosen has the lowest highest-victim priority, then the
lowest sum of victim priorities, then the fewest victims. The preemptor is
bound in a later cycle, once its victims are gone; meanwhile the room they
left is kept for it (kube-scheduler's nominated node), so that no pod of
lower priority takes it first.

Speed: pending pods are kept in one heap per request shape. Within a cycle
free capacity only shrinks, so once a shape's first pod fails to fit, every
pod of that shape behind it fails too; a cycle costs a few heap operations
per shape and per bind, not a pass over the whole queue. The order of binds
is the same as trying every pod in queue order. The pods of a one-per-node pod
set (:attr:`gangkit.model.jobs.PodSet.one_per_node`, required pod
anti-affinity on ``kubernetes.io/hostname``) have a heap per job and pod set
(:func:`queue_key`): where one of them fits depends on where its own group's
pods are bound, so its failure says nothing of another job's pods. A
preemptor of such a pod set looks only at nodes without a pod of its group.
(A simplification: a nominated pod counts for the rule only once bound.)
"""

from __future__ import annotations

import heapq
from collections import defaultdict

from gangkit.engine.capacity import avoided_nodes
from gangkit.engine.sockets import Cluster, PlacementLayer
from gangkit.engine.state import JobState, NodeState, PodState
from gangkit.model.reasons import Reason
from gangkit.model.resources import Room


class KubeScheduler(PlacementLayer):
    """The ``pod`` placement layer."""

    name = "placement"
    period = 0.0  # kube-scheduler reacts to events at once
    pending_metrics = ("scheduler_pending_pods", None)  # the unschedulable queue of kube-scheduler's own gauge

    def __init__(self, preemption: bool = False):
        self.preemption = preemption
        self._queues: dict[tuple, list] = defaultdict(list)  # request shape -> heap of (-priority, creation seq, pod)
        self._blocked: list[tuple] = []
        self._nominated: dict[PodState, NodeState] = {}  # preemptor -> node whose room is kept for it
        self._capacity = None

    # -- socket --------------------------------------------------------------
    def enqueue(self, jobs: list[JobState], now: float) -> None:
        for js in jobs:
            for p in js.pods:
                if p.node is None and not p.done:
                    self._push(p)

    def requeue(self, js: JobState, now: float) -> None:
        self.forget(js)
        for p in js.pods:
            if p.node is None and not p.done:
                self._push(p)

    def forget(self, js: JobState) -> None:
        """Drop the job's nominations (finished jobs have no pods left in the queues)."""
        for p in js.pods:
            node = self._nominated.pop(p, None)
            if node is not None:
                self._capacity.give(node, *p.request[:3])

    def _push(self, p: PodState) -> None:
        heapq.heappush(self._queues[queue_key(p)], (-p.priority, p.seq, p))

    def unschedulable(self) -> list[PodState]:
        """Pods left unschedulable by the last cycle, in queue order."""
        out = []
        for shape in self._blocked:
            out.extend(e[2] for e in sorted(self._queues.get(shape, ())) if not self._stale(e))
        return out

    def cycle(self, sim: Cluster, now: float) -> None:
        cap = self._capacity = sim.capacity
        heads = []  # heap of (key, shape) over the shapes still worth trying in this cycle
        for shape, q in self._queues.items():
            self._drop_stale(q)
            if q:
                heads.append((q[0][:2], shape))
        heapq.heapify(heads)
        blocked: list[tuple] = []
        while heads:
            _, shape = heapq.heappop(heads)
            q = self._queues[shape]
            pod = q[0][2]
            reserved = self._nominated.pop(pod, None)
            if reserved is not None:  # our turn: the room kept for us is ours to take
                cap.give(reserved, *pod.request[:3])
            node = cap.choose_for(pod)
            if node is None and self.preemption:
                target = self._preempt(sim, pod)
                if target is not None:
                    # kube-scheduler's nominatedNodeName: the room the victims leave is kept
                    # for this pod, so that no lower-priority pod takes it first
                    cap.take(target, *pod.request[:3])
                    self._nominated[pod] = target
            if node is None:
                blocked.append(shape)
                continue
            heapq.heappop(q)
            sim.bind(pod, node)
            self._drop_stale(q)
            if q:
                heapq.heappush(heads, (q[0][:2], shape))
        self._blocked = blocked
        for shape in [s for s, q in self._queues.items() if not q]:
            del self._queues[shape]

    @staticmethod
    def _stale(entry: tuple) -> bool:
        p = entry[2]
        return p.node is not None or p.done or entry[1] != p.seq or not p.job.placing

    def _drop_stale(self, q: list) -> None:
        while q and self._stale(q[0]):
            heapq.heappop(q)

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


def queue_key(p: PodState) -> tuple:
    """The heap a pending pod waits in: its request shape, and for a one-per-node pod also its job and pod set."""
    if p.pod_set.one_per_node:
        return p.request + (("one-per-node", p.job.index, p.pod_set.name),)
    return p.request


def _fits_without(st: NodeState, victims: list[PodState], ps) -> bool:
    """Would a pod of pod set ``ps`` fit on ``st`` if ``victims`` were gone (GPUs, CPU, memory)?"""
    cpu, memory = st.free_cpu, st.free_memory
    room = Room(st.free_gpus + sum(v.pod_set.gpus for v in victims),
                None if cpu is None else cpu + sum(v.pod_set.cpu for v in victims),
                None if memory is None else memory + sum(v.pod_set.memory for v in victims))
    return room.fits(ps.gpus, ps.cpu, ps.memory)
