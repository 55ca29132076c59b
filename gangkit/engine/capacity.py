"""Free capacity, and how a scheduler picks a node for one pod.

Think of the cluster as a car park with rows of different lengths: a pod is
a vehicle that must fit into *one* row. The scheduler first filters the rows
with enough room (kube-scheduler's Filter phase: NodeResourcesFit, node
selector), then scores them (the Score phase) and takes the best:

- ``LeastAllocated`` prefers the node with the largest share left free after
  placement, GPUs included (spreading pods out by free GPUs: kube-scheduler's
  default strategy, but on the resources gangkit models; see below);
- ``MostAllocated`` prefers the node with the smallest share left (packing);
- ``RequestedToCapacityRatio`` draws the curve (:mod:`gangkit.engine.ratio`);
- ``default-profile`` is what a stock kube-scheduler 1.35 does: LeastAllocated
  on CPU and memory plus BalancedAllocation, in kube-scheduler's integer
  arithmetic, GPUs not scored (:mod:`gangkit.engine.default_profile`).

What gangkit's ``LeastAllocated`` is in real terms: the mean, over the
resources a node models (GPUs, and CPU and memory where the node has them),
of the share left free after placement. That is kube-scheduler's
NodeResourcesFit ``LeastAllocated`` with a KubeSchedulerConfiguration whose
``scoringStrategy.resources`` lists ``nvidia.com/gpu`` (and ``cpu`` and
``memory`` when the nodes model them), all weight 1, with NodeResourcesBalancedAllocation
adding nothing that ranks the nodes (it does not, for pods that ask for no
CPU or memory, or on nodes that model neither), up to three differences:
kube-scheduler rounds each resource's score down to a whole point of 0..100
and the mean down again, so nodes less than a point apart tie (and are
chosen at random), where gangkit ranks them by the exact share; it counts a
pod without a CPU or memory request as 100m and 200 MiB (gangkit's
``LeastAllocated`` counts what pods ask for); and it leaves GPUs out for a
pod that asks for none (gangkit's ``LeastAllocated`` keeps the GPU share in
the mean). On GPU-only nodes with pods that ask for GPUs, the ranking is the
same but for the rounding. ``MostAllocated`` is one minus the same mean. A
stock scheduler does not score GPUs at all: that is ``default-profile``.

Ties go to the node that comes first in the cluster's node list
(kube-scheduler picks at random among equal scores; a fixed rule keeps runs
reproducible without touching the random stream).

:class:`FreeCapacity` keeps nodes grouped by (GPU capacity, free GPUs), so a
choice costs a handful of group look-ups rather than a scan of every node.
Pods that also ask for CPU or memory on nodes that model them, or that carry
a node selector, are scored on every resource the node models (the mean of
the shares left free). They take a second index, built on first use: nodes
grouped by *kind* (same capacities and labels) and free GPUs, each group
sorted by free share. The literal algorithm is the plain scan over every node
(:meth:`FreeCapacity.choose_by_scan`); the index gives the same node, and
``tests/engine/test_capacity.py`` checks that on random clusters.

A pod of a *one-per-node* pod set (:attr:`gangkit.model.jobs.PodSet.one_per_node`:
required pod anti-affinity on ``kubernetes.io/hostname`` against its own
job's pods of that set) is asked with :meth:`FreeCapacity.choose_for`: the
nodes that hold, or were given earlier in the same trial, a pod of its group
are filtered out (kube-scheduler's InterPodAffinity Filter,
``pkg/scheduler/framework/plugins/interpodaffinity/filtering.go``,
Kubernetes 1.35, which counts bound and assumed pods alike), then the same
Score picks among the rest.
"""

from __future__ import annotations

import bisect
from collections import defaultdict

from gangkit.engine import default_profile, ratio
from gangkit.engine.kind_index import KindIndex, node_kind, share_left
from gangkit.engine.state import NodeState
from gangkit.model.nodes import Node
from gangkit.model.resources import Room, labels_match


def avoided_nodes(pod, placed=()) -> set:
    """The nodes a pod may not go to under its pod set's one-per-node rule (empty without the rule).

    They are the nodes of the pods of the same job and pod set that are bound,
    and of those in ``placed`` (``(pod, node)`` pairs a trial or dry run has
    placed, but not bound, before this pod): kube-scheduler's Filter sees a
    pod assumed in this cycle as it sees a bound one.
    """
    ps = pod.pod_set
    if not ps.one_per_node:
        return set()
    js, name = pod.job, ps.name
    avoid = {q.node for q in js.pods if q.node is not None and q.pod_set.name == name}
    for q, node in placed:
        if q.job is js and q.pod_set.name == name:
            avoid.add(node)
    return avoid


class FreeCapacity:
    """The free GPUs (and CPU, memory) of every node, indexed for fast node choice."""

    def __init__(self, scoring: str = "LeastAllocated", shape: tuple = ratio.PACKING,
                 resources: tuple = ratio.DEFAULT_RESOURCES):
        self.scoring = scoring
        self.profile = scoring == "default-profile"  # gangkit.engine.default_profile
        # scored by a scan in integer arithmetic (gangkit.engine.ratio, gangkit.engine.default_profile), not the indexes
        self.ratio = scoring in ("RequestedToCapacityRatio", "default-profile")
        # default-profile only: node index -> [its pods that ask for no CPU, for no memory] (counted as 100m, 200 MiB)
        self._defaulted: dict[int, list[int]] = {}
        self.shape, self.resources = shape, resources
        self.nodes: list[NodeState] = []
        self.by_name: dict[str, NodeState] = {}
        # (gpu capacity, free gpus) -> sorted node indices (ready nodes only)
        self._groups: dict[tuple[int, int], list[int]] = defaultdict(list)
        self.models_cpu_or_memory = False
        self.total_ready_gpus = 0
        self.free_ready_gpus = 0
        # every kind of node ever added (capacities and labels) -> how many: for could_ever_hold
        self._kinds_ever: dict[tuple, int] = {}
        self._could_hold: dict[tuple, bool] = {}  # pod request -> could_ever_hold's answer, until a new kind appears
        self._by_kind: KindIndex | None = None  # built on the first pod that needs it
        # ready nodes whose free resources changed since they were last filed in the indexes
        # (the groups, and the kind index once built): taken out of them at the first change,
        # filed again just before the next question that reads them (see take)
        self._stale: dict[int, NodeState] = {}
        # bumped whenever free room may have grown (a node added or ready, resources given back): a placement
        # that failed stays failed while it is unchanged (gangkit.volcano.actions.allocate skips such retries)
        self.grow_version = 0
        # every node's CPU below 2**42 cores and memory below 2**52 bytes: taking a multiple of 2**-10 cores
        # or whole bytes from a free amount and giving it back is then exact in floating point
        self.exact_amounts = True

    # -- membership -------------------------------------------------------
    def add(self, node: Node, ready: bool = True) -> NodeState:
        self.grow_version += 1
        st = NodeState(node.gpus, node.cpu, node.memory, node=node, index=len(self.nodes), ready=False)
        self.nodes.append(st)
        self.by_name[node.name] = st
        kind = node_kind(node)
        if kind not in self._kinds_ever:
            self._could_hold.clear()
        self._kinds_ever[kind] = self._kinds_ever.get(kind, 0) + 1
        if node.cpu is not None or node.memory is not None:
            self.models_cpu_or_memory = True
            if (node.cpu or 0) >= 2 ** 42 or (node.memory or 0) >= 2 ** 52:
                self.exact_amounts = False
        if ready:
            self.set_ready(st)
        return st

    def set_ready(self, st: NodeState) -> None:
        self.grow_version += 1
        st.ready = True
        self.total_ready_gpus += st.node.gpus
        self.free_ready_gpus += st.free_gpus
        bisect.insort(self._groups[(st.node.gpus, st.free_gpus)], st.index)
        if self._by_kind is not None:
            self._by_kind.insert(st)

    def set_gone(self, st: NodeState) -> None:
        """Remove a (ready, empty) node from the index."""
        if st.ready:
            if self._stale.pop(st.index, None) is None:  # a stale node is in no index already
                self._groups[(st.node.gpus, st.free_gpus)].remove(st.index)
                if self._by_kind is not None:
                    self._by_kind.remove(st)
            self.total_ready_gpus -= st.node.gpus
            self.free_ready_gpus -= st.free_gpus
        st.ready = False

    # -- changes ----------------------------------------------------------
    def take(self, st: NodeState, gpus: int, cpu: float, memory: int) -> None:
        """Take resources of a node.

        The indexes are refreshed lazily: a scheduler's trial takes and
        gives back a node's resources, and the bind takes them again, all
        before the next choice. So a changed node leaves the indexes at its
        first change and is filed again, in its state then, just before the
        next question reads them (:meth:`_refile`), which leaves them exactly
        as filing it at every change would. ``free_ready_gpus`` is kept at
        every change.
        """
        if st.ready and st.index not in self._stale:
            self._unfile(st)
        self._move(st, st.free_gpus - gpus)
        if self.profile and (not cpu or not memory):
            self._count_defaults(st, cpu, memory, 1)
        if st.free_cpu is not None:
            st.free_cpu -= cpu
        if st.free_memory is not None:
            st.free_memory -= memory

    def give(self, st: NodeState, gpus: int, cpu: float, memory: int) -> None:
        """Give resources back to a node (the indexes are refreshed lazily, see :meth:`take`)."""
        self.grow_version += 1
        if st.ready and st.index not in self._stale:
            self._unfile(st)
        self._move(st, st.free_gpus + gpus)
        if self.profile and (not cpu or not memory):
            self._count_defaults(st, cpu, memory, -1)
        if st.free_cpu is not None:
            st.free_cpu += cpu
        if st.free_memory is not None:
            st.free_memory += memory

    def _count_defaults(self, st: NodeState, cpu: float, memory: int, step: int) -> None:
        """Count a pod that asks for no CPU (no memory) on or off the node: kube-scheduler scores it as 100m
        (200 MiB) there (every take and give is one pod's request)."""
        counts = self._defaulted.setdefault(st.index, [0, 0])
        if not cpu:
            counts[0] += step
        if not memory:
            counts[1] += step

    def _unfile(self, st: NodeState) -> None:
        """Take a ready node out of the indexes until the next :meth:`_refile`."""
        group = self._groups[(st.node.gpus, st.free_gpus)]
        del group[bisect.bisect_left(group, st.index)]
        if self._by_kind is not None:
            self._by_kind.remove(st)
        self._stale[st.index] = st

    def _refile(self) -> None:
        """File the nodes changed since the last question in the indexes again."""
        by_kind = self._by_kind
        groups = self._groups
        for st in self._stale.values():
            bisect.insort(groups[(st.node.gpus, st.free_gpus)], st.index)
            if by_kind is not None:
                by_kind.insert(st)
        self._stale.clear()

    def _move(self, st: NodeState, new_free: int) -> None:
        if st.ready:
            self.free_ready_gpus += new_free - st.free_gpus
        st.free_gpus = new_free

    # -- questions ----------------------------------------------------------
    def max_free_gpus(self) -> int:
        if self._stale:
            self._refile()
        best = 0
        for (_, free), members in self._groups.items():
            if members and free > best:
                best = free
        return best

    def pods_that_fit(self, gpus: int, most: int) -> int:
        """How many pods of ``gpus`` GPUs (no CPU, memory or node selector), placed one after another by
        :meth:`choose`, the ready nodes could take now; counting stops at ``most``.

        Such a pod fits wherever ``gpus`` GPUs are free, so each node takes ``free // gpus`` of them, whichever
        node each choice picks: the sum over the (GPU capacity, free GPUs) groups. A trial of identical pods
        places exactly ``min(pods, this)`` of them (``gangkit.volcano.actions.allocate`` asks it first).
        """
        if self._stale:
            self._refile()
        n = 0
        for (_, free), members in self._groups.items():
            if free >= gpus and members:
                n += (free // gpus) * len(members)
                if n >= most:
                    return most
        return n

    def choose(self, gpus: int, cpu: float = 0.0, memory: int = 0, selector: tuple = ()) -> NodeState | None:
        """The node kube-scheduler's Filter and Score would pick for one pod, or None."""
        if self.ratio:
            return self.choose_by_scan(gpus, cpu, memory, selector)
        if self._stale:
            self._refile()
        if selector or ((cpu or memory) and self.models_cpu_or_memory):
            if self._by_kind is None:
                self._by_kind = KindIndex(self)
            return self._by_kind.choose(gpus, cpu, memory, selector)
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

    def choose_for(self, pod, placed=()) -> NodeState | None:
        """The node :meth:`choose` would pick for ``pod``, less those its one-per-node rule forbids.

        ``placed``: the ``(pod, node)`` pairs placed before it in the same
        trial and not bound (see :func:`avoided_nodes`). A pod without the rule
        is :meth:`choose` itself.
        """
        if not pod.pod_set.one_per_node:
            return self.choose(*pod.request)
        return self.choose_avoiding(pod.request, avoided_nodes(pod, placed))

    def choose_avoiding(self, request: tuple, avoid) -> NodeState | None:
        """The node :meth:`choose` would pick for a pod of ``request`` if the nodes in ``avoid`` were not there.

        The avoided ready nodes leave the indexes for the question (as a
        changed node does, :meth:`take`) and are filed again before the next
        one, so the choice is the index's own among the other nodes.
        """
        if not avoid:
            return self.choose(*request)
        gpus, cpu, memory, selector = request
        if self.ratio:
            return self.choose_by_scan(gpus, cpu, memory, selector, avoid)
        if self._stale:
            self._refile()
        if (selector or ((cpu or memory) and self.models_cpu_or_memory)) and self._by_kind is None:
            self._by_kind = KindIndex(self)  # built now, from every ready node, as choose would build it
        for st in avoid:
            if st.ready:
                self._unfile(st)
        hidden, self._stale = self._stale, {}
        try:
            return self.choose(gpus, cpu, memory, selector)
        finally:
            self._stale = hidden  # filed again before the next question

    def _score(self, cap: int, free: int, gpus: int) -> float:
        if cap == 0:
            return 0.0
        left = (free - gpus) / cap
        return left if self.scoring == "LeastAllocated" else 1.0 - left

    def score_all(self, st: NodeState, gpus: int, cpu: float, memory: int) -> float:
        """Score of one node for one pod on every resource it models: the mean share left free (or the integer
        score of a scan-scored strategy)."""
        n = st.node
        if self.ratio:
            return float(self.ratio_score(n, (st.free_gpus, st.free_cpu, st.free_memory), gpus, cpu, memory, st))
        left = share_left(n.gpus, n.cpu, n.memory, st.free_gpus, st.free_cpu, st.free_memory, gpus, cpu, memory)
        return left if self.scoring == "LeastAllocated" else 1.0 - left

    def ratio_score(self, n: Node, free: tuple, gpus: int, cpu: float, memory: int, st: NodeState | None = None) -> int:
        """The integer score of node ``n`` with ``free`` (GPUs, cores, bytes) for one pod, under a scan-scored
        strategy: RequestedToCapacityRatio, or the default profile (NodeResourcesFit + BalancedAllocation).

        ``st``: the node's state, for the default profile's count of pods scored at 100m and 200 MiB (looked
        up by name when not given; a planning book that asks about a future ``free`` gets today's count).
        """
        alloc = (n.gpus, n.cpu, n.memory)
        used = tuple((a or 0) - (f if a else 0) for a, f in zip(alloc, free))
        pod = (gpus, cpu, memory)
        if self.profile:
            if st is None:
                st = self.by_name.get(n.name)
            defaulted = self._defaulted.get(st.index, (0, 0)) if st is not None else (0, 0)
            return default_profile.total(self.resources, alloc, used, tuple(defaulted), pod)
        return ratio.score(self.shape, self.resources, alloc, tuple(u + q for u, q in zip(used, pod)), pod)

    def choose_by_scan(self, gpus: int, cpu: float = 0.0, memory: int = 0, selector: tuple = (),
                       avoid=()) -> NodeState | None:
        """The literal Filter and Score over every node, scoring every modelled resource.

        The reference that the kind index of :meth:`choose` must agree with
        (ties go to the first node in the list), and the node choice itself under the scan-scored
        strategies (``RequestedToCapacityRatio``, ``default-profile``).
        """
        best, best_key = None, None
        for st in self.nodes:
            if not st.fits(gpus, cpu, memory, selector) or st in avoid or self.by_name.get(st.node.name) is not st:
                continue
            key = self.score_all(st, gpus, cpu, memory)
            if best_key is None or key > best_key:
                best, best_key = st, key
        return best

    def could_ever_hold(self, gpus: int, cpu: float, memory: int, selector: tuple) -> bool:
        """Could any existing node hold this pod when empty (ready or not)?

        Asked once per job at submission: it looks at each kind of node
        (capacities and labels) once, not at every node, and the answer is
        kept per request until a new kind of node appears (jobs of a trace
        repeat a few requests).
        """
        request = (gpus, cpu, memory, selector)
        answer = self._could_hold.get(request)
        if answer is None:
            if len(self._could_hold) >= 4096:  # many distinct requests: keep the memory bounded
                self._could_hold.clear()
            answer = self._could_hold[request] = self._could_ever_hold(gpus, cpu, memory, selector)
        return answer

    def _could_ever_hold(self, gpus: int, cpu: float, memory: int, selector: tuple) -> bool:
        for kind in self._kinds_ever:
            n_gpus, n_cpu, n_memory, labels = kind
            if Room(n_gpus, n_cpu, n_memory).fits(gpus, cpu, memory) and labels_match(labels, selector):
                return True
        return False
