"""The node choice's index for nodes that differ in CPU and memory: ready nodes by kind and free GPUs.

:class:`gangkit.engine.capacity.FreeCapacity` picks the node kube-scheduler's NodeResourcesFit would
score best for a pod. When pods ask for CPU and memory too, a node's score depends on its own free
CPU and memory, so nodes cannot be lumped by free GPUs alone; :class:`KindIndex` groups them so that
a pod looks at few nodes and still gets exactly the node a scan of every node would pick.
"""

from __future__ import annotations

import bisect

from gangkit.engine.state import NodeState
from gangkit.model.nodes import Node
from gangkit.model.precision import TOLERANCE
from gangkit.model.resources import labels_match

__all__ = ["KindIndex", "node_kind", "share_left"]


def share_left(cap_gpus, cap_cpu, cap_memory, free_gpus, free_cpu, free_memory, gpus, cpu, memory) -> float:
    """The mean share of a node's modelled resources left free after placing one pod (0 if it models none).

    The score of NodeResourcesFit's LeastAllocated strategy (MostAllocated is one minus it). The
    node choice's inner loop repeats these lines inline, for speed, with the same operations.
    """
    total, count = 0.0, 0
    if cap_gpus:
        total += (free_gpus - gpus) / cap_gpus
        count += 1
    if cap_cpu:
        total += (free_cpu - cpu) / cap_cpu
        count += 1
    if cap_memory:
        total += (free_memory - memory) / cap_memory
        count += 1
    return total / count if count else 0.0


def node_kind(node: Node) -> tuple:
    """Nodes of one kind have the same capacities and labels: a pod ranks them by free share alone."""
    return (node.gpus, node.cpu, node.memory, node.labels)


class KindIndex:
    """Ready nodes grouped by kind and free GPUs, each group sorted by free share.

    Why it exists: scoring on CPU and memory as well as GPUs (mean share left
    free) depends on each node's own free CPU and memory, so nodes cannot be
    lumped by free GPUs alone and :meth:`gangkit.engine.capacity.FreeCapacity.choose_by_scan` looks at
    every node for every pod (a replay of the Alibaba trace, 1.5k nodes, spent
    most of its time there). Within one kind (same capacities, so the same
    request terms), a node's score is a fixed function of its *free share sum*
    ``S`` (free GPUs / GPUs + free CPU / CPU + free memory / memory, for the
    resources the kind models), increasing for LeastAllocated and decreasing
    for MostAllocated. So each (kind, free GPUs) group keeps the distinct
    free states of its nodes sorted best ``S`` first, each state with its nodes
    in list order, and a pod walks each group only to its first state that
    fits (CPU and memory rarely stop a pod that has its GPUs). Nodes in one
    state score exactly alike, so the first of them stands for all.

    To choose exactly the node the scan would choose, despite rounding, the
    states whose ``S`` is within ``TOLERANCE`` of a group's first fitting state are
    all scored with the scan's own formula, and the scan's tie rule (first
    node in the list) decides between equal scores.

    Nodes labelled with their own ``kubernetes.io/hostname`` (as a live
    cluster's are) are each a kind of their own, so the index also files the
    kinds by the free GPU counts of their groups (``kinds_by_free``): on a
    busy cluster a pod visits only the kinds with its GPUs free, in the order
    it would have visited them (:meth:`_kinds_to_visit`).
    """

    EPS = TOLERANCE
    BOUND_MARGIN = 1e-6  # far above the rounding of free CPU kept by repeated takes and gives
    ORDER_CACHE = 1024  # distinct pod requests kept (the openb trace has 87)

    def __init__(self, cap):  # the FreeCapacity it indexes
        self.cap = cap
        self.sign = -1.0 if cap.scoring == "LeastAllocated" else 1.0
        # kind -> free gpus -> sorted list of states (sign * S, free cpu, free memory)
        self.groups: dict[tuple, dict[int, list]] = {}
        # (kind, free gpus, state) -> sorted node indices in that state
        self.members: dict[tuple, list[int]] = {}
        self.entry: dict[int, tuple] = {}  # node index -> its (kind, free gpus, state)
        # free gpus -> the kinds with a group at that count (a dict as an ordered set): the kinds a pod of
        # ``gpus`` GPUs may find room in, without a look at the kinds whose nodes all have fewer free
        self.kinds_by_free: dict[int, dict[tuple, None]] = {}
        self._selector_cache: dict[tuple, list[tuple]] = {}
        self._order_cache: dict[tuple, list[tuple]] = {}  # pod request -> [(best possible score, kind)], best first
        for st in cap.nodes:
            if st.ready:
                self.insert(st)

    def _state(self, st: NodeState) -> tuple:
        n = st.node
        s = 0.0
        if n.gpus:
            s += st.free_gpus / n.gpus
        if n.cpu:
            s += st.free_cpu / n.cpu
        if n.memory:
            s += st.free_memory / n.memory
        return (self.sign * s, st.free_cpu, st.free_memory)

    def insert(self, st: NodeState) -> None:
        kind = node_kind(st.node)
        by_free = self.groups.get(kind)
        if by_free is None:
            by_free = self.groups[kind] = {}
            self._selector_cache.clear()
            self._order_cache.clear()
        state = self._state(st)
        where = (kind, st.free_gpus, state)
        self.entry[st.index] = where
        same = self.members.get(where)
        if same is not None:
            bisect.insort(same, st.index)
            return
        self.members[where] = [st.index]
        lst = by_free.get(st.free_gpus)
        if lst is None:
            by_free[st.free_gpus] = [state]
            bucket = self.kinds_by_free.get(st.free_gpus)
            if bucket is None:
                bucket = self.kinds_by_free[st.free_gpus] = {}
            bucket[kind] = None
        else:
            bisect.insort(lst, state)

    def remove(self, st: NodeState) -> None:
        where = self.entry.pop(st.index)
        same = self.members[where]
        del same[bisect.bisect_left(same, st.index)]
        if not same:
            del self.members[where]
            kind, free, state = where
            by_free = self.groups[kind]
            lst = by_free[free]
            del lst[bisect.bisect_left(lst, state)]
            if not lst:
                del by_free[free]
                bucket = self.kinds_by_free[free]
                del bucket[kind]
                if not bucket:
                    del self.kinds_by_free[free]

    def _kinds_for(self, selector: tuple) -> list[tuple]:
        kinds = self._selector_cache.get(selector)
        if kinds is None:
            kinds = [k for k in self.groups if labels_match(k[3], selector)]
            self._selector_cache[selector] = kinds
        return kinds

    def _kind_order(self, gpus: int, cpu: float, memory: int, selector: tuple) -> tuple[list[tuple], dict]:
        """The kinds that could hold the pod's GPUs, each with the score of an empty node of it, best first,
        and each kind's place in that list.

        Kept per pod request (pods of a trace repeat a few shapes); the cache is
        emptied when a new kind appears and when it grows past ``ORDER_CACHE``.
        """
        key = (gpus, cpu, memory, selector)
        cached = self._order_cache.get(key)
        if cached is None:
            if len(self._order_cache) >= self.ORDER_CACHE:
                self._order_cache.clear()
            order = []
            for kind in self._kinds_for(selector):
                n_gpus, n_cpu, n_memory, _ = kind
                if n_gpus < gpus:
                    continue
                order.append((share_left(n_gpus, n_cpu, n_memory, n_gpus, n_cpu, n_memory, gpus, cpu, memory), kind))
            order.sort(key=lambda bk: -bk[0])  # stable: equal bounds keep the kinds' order
            cached = self._order_cache[key] = (order, {kind: i for i, (_, kind) in enumerate(order)})
        return cached

    def _kinds_to_visit(self, gpus: int, cpu: float, memory: int, selector: tuple) -> list[tuple]:
        """The ``(bound, kind)`` pairs of :meth:`_kind_order` less the kinds with no node of ``gpus`` free GPUs.

        A kind whose groups all have fewer free GPUs than the pod asks for adds
        nothing to the choice (the walk of :meth:`choose` skips each of its
        groups, and the best score found so far is unchanged), so leaving it out
        changes nothing; the others keep their order. When few kinds have the
        GPUs free (a busy cluster whose nodes are each a kind of their own, as
        nodes with a ``kubernetes.io/hostname`` label are), the free-GPU buckets
        name them without a look at every kind.
        """
        order, place = self._kind_order(gpus, cpu, memory, selector)
        buckets = [b for free, b in self.kinds_by_free.items() if free >= gpus]
        if sum(len(b) for b in buckets) * 2 >= len(order):
            return order
        found = set()
        for b in buckets:
            for kind in b:
                i = place.get(kind)
                if i is not None:
                    found.add(i)
        return [order[i] for i in sorted(found)]

    def choose(self, gpus: int, cpu: float, memory: int, selector: tuple) -> NodeState | None:
        """The node :meth:`gangkit.engine.capacity.FreeCapacity.choose_by_scan` would pick.

        The score of a state is computed here from the state itself, term by
        term in the order of :meth:`FreeCapacity.score_all` (so the same
        float): every node of a state has the kind's capacities and the
        state's free GPUs, CPU and memory. This loop runs for every pod placed
        or tried, so it avoids a call per state.

        Why kinds are visited best bound first (LeastAllocated): no node of a
        kind can score above an empty node of that kind, so once the best
        score found is clearly above a kind's bound (by more than any
        rounding), that kind and every later one are skipped. On a cluster
        with many kinds and idle nodes a pod then looks at a few kinds rather
        than all of them. The skipped nodes all score strictly lower, so the
        choice is the same.
        """
        nodes = self.cap.nodes
        members = self.members
        least = self.cap.scoring == "LeastAllocated"
        eps = self.EPS
        tol = TOLERANCE
        best_key, best_index = None, -1
        for bound, kind in self._kinds_to_visit(gpus, cpu, memory, selector):
            if least and best_key is not None and bound + self.BOUND_MARGIN < best_key:
                break
            n_gpus, n_cpu, n_memory, _ = kind
            for free, lst in self.groups[kind].items():
                if free < gpus:
                    continue
                limit = None
                for state in lst:
                    if limit is not None and state[0] > limit:
                        break
                    # every node of a state has the same free CPU and memory: test the first
                    # (Room.fits inline, for CPU and memory: the hot loop of benchmark case d)
                    _, free_cpu, free_memory = state
                    if cpu and free_cpu is not None and cpu > free_cpu + tol:
                        continue
                    if memory and free_memory is not None and memory > free_memory:
                        continue
                    if limit is None:
                        limit = state[0] + eps
                    total, count = 0.0, 0  # share_left inline (the hot loop), for any node of this state
                    if n_gpus:
                        total += (free - gpus) / n_gpus
                        count += 1
                    if n_cpu:
                        total += (free_cpu - cpu) / n_cpu
                        count += 1
                    if n_memory:
                        total += (free_memory - memory) / n_memory
                        count += 1
                    left = total / count if count else 0.0
                    k = left if least else 1.0 - left
                    if best_key is None or k >= best_key:
                        index = members[(kind, free, state)][0]
                        if best_key is None or k > best_key or index < best_index:
                            best_key, best_index = k, index
        return None if best_key is None else nodes[best_index]
