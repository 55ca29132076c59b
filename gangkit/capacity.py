"""Free capacity, and how a scheduler picks a node for one pod.

Think of the cluster as a car park with rows of different lengths: a pod is
a vehicle that must fit into *one* row. The scheduler first filters the rows
with enough room (kube-scheduler's Filter phase: NodeResourcesFit, node
selector), then scores them (the Score phase) and takes the best:

- ``LeastAllocated`` prefers the node with the largest share left free after
  placement (spreading pods out; kube-scheduler's default strategy);
- ``MostAllocated`` prefers the node with the smallest share left (packing).

Ties go to the node that comes first in the cluster's node list
(kube-scheduler picks at random among equal scores; a fixed rule keeps runs
reproducible without touching the random stream).

:class:`FreeCapacity` keeps nodes grouped by (GPU capacity, free GPUs), so a
choice costs a handful of group look-ups rather than a scan of every node.
Pods that also ask for CPU or memory on nodes that model them, or that carry
a node selector, take the plain scan, which gives the same answer.
"""

from __future__ import annotations

import bisect
from collections import defaultdict

from .cluster import Node, NodeState


class FreeCapacity:
    """The free GPUs (and CPU, memory) of every node, indexed for fast node choice."""

    def __init__(self, scoring: str = "LeastAllocated"):
        self.scoring = scoring
        self.nodes: list[NodeState] = []
        self.by_name: dict[str, NodeState] = {}
        # (gpu capacity, free gpus) -> sorted node indices (ready nodes only)
        self._groups: dict[tuple[int, int], list[int]] = defaultdict(list)
        self.models_cpu_or_memory = False
        self.total_ready_gpus = 0
        self.free_ready_gpus = 0

    # -- membership -------------------------------------------------------
    def add(self, node: Node, ready: bool = True) -> NodeState:
        st = NodeState(node, len(self.nodes), node.gpus, node.cpu, node.memory, ready=False)
        self.nodes.append(st)
        self.by_name[node.name] = st
        if node.cpu is not None or node.memory is not None:
            self.models_cpu_or_memory = True
        if ready:
            self.set_ready(st)
        return st

    def set_ready(self, st: NodeState) -> None:
        st.ready = True
        self.total_ready_gpus += st.node.gpus
        self.free_ready_gpus += st.free_gpus
        bisect.insort(self._groups[(st.node.gpus, st.free_gpus)], st.index)

    def set_gone(self, st: NodeState) -> None:
        """Remove a (ready, empty) node from the index."""
        if st.ready:
            self._groups[(st.node.gpus, st.free_gpus)].remove(st.index)
            self.total_ready_gpus -= st.node.gpus
            self.free_ready_gpus -= st.free_gpus
        st.ready = False

    # -- changes ----------------------------------------------------------
    def take(self, st: NodeState, gpus: int, cpu: float, memory: int) -> None:
        self._move(st, st.free_gpus - gpus)
        if st.free_cpu is not None:
            st.free_cpu -= cpu
        if st.free_memory is not None:
            st.free_memory -= memory

    def give(self, st: NodeState, gpus: int, cpu: float, memory: int) -> None:
        self._move(st, st.free_gpus + gpus)
        if st.free_cpu is not None:
            st.free_cpu += cpu
        if st.free_memory is not None:
            st.free_memory += memory

    def _move(self, st: NodeState, new_free: int) -> None:
        if st.ready:
            old = self._groups[(st.node.gpus, st.free_gpus)]
            del old[bisect.bisect_left(old, st.index)]
            bisect.insort(self._groups[(st.node.gpus, new_free)], st.index)
            self.free_ready_gpus += new_free - st.free_gpus
        st.free_gpus = new_free

    # -- questions ----------------------------------------------------------
    def max_free_gpus(self) -> int:
        best = 0
        for (_, free), members in self._groups.items():
            if members and free > best:
                best = free
        return best

    def choose(self, gpus: int, cpu: float = 0.0, memory: int = 0, selector: tuple = ()) -> NodeState | None:
        """The node kube-scheduler's Filter and Score would pick for one pod, or None."""
        if selector or ((cpu or memory) and self.models_cpu_or_memory):
            return self._choose_by_scan(gpus, cpu, memory, selector)
        best_key = None
        best_index = -1
        for (cap, free), members in self._groups.items():
            if not members or free < gpus:
                continue
            key = self._score(cap, free, gpus)
            first = members[0]
            if best_key is None or key > best_key or (key == best_key and first < best_index):
                best_key, best_index = key, first
        return None if best_key is None else self.nodes[best_index]

    def _score(self, cap: int, free: int, gpus: int) -> float:
        if cap == 0:
            return 0.0
        left = (free - gpus) / cap
        return left if self.scoring == "LeastAllocated" else 1.0 - left

    def _choose_by_scan(self, gpus, cpu, memory, selector) -> NodeState | None:
        best, best_key = None, None
        for st in self.nodes:
            if not st.fits(gpus, cpu, memory, selector):
                continue
            shares = []
            if st.node.gpus:
                shares.append((st.free_gpus - gpus) / st.node.gpus)
            if st.node.cpu:
                shares.append((st.free_cpu - cpu) / st.node.cpu)
            if st.node.memory:
                shares.append((st.free_memory - memory) / st.node.memory)
            left = sum(shares) / len(shares) if shares else 0.0
            key = left if self.scoring == "LeastAllocated" else 1.0 - left
            if best_key is None or key > best_key:
                best, best_key = st, key
        return best

    def could_ever_hold(self, gpus: int, cpu: float, memory: int, selector: tuple) -> bool:
        """Could any existing node hold this pod when empty (ready or not)?"""
        for st in self.nodes:
            n = st.node
            if gpus > n.gpus or not n.matches(selector):
                continue
            if cpu and n.cpu is not None and cpu > n.cpu + 1e-9:
                continue
            if memory and n.memory is not None and memory > n.memory:
                continue
            return True
        return False
