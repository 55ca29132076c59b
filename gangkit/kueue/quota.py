"""Quota arithmetic: what a ClusterQueue may still take, in its cohort tree.

Every ClusterQueue and Cohort is a node of a tree, and for every
(flavor, resource) pair each node knows its quota and its usage. The rules,
as Kueue's ``resource_node.go`` computes them:

- A node *hides* part of its quota from its parent: ``nominal - lendingLimit``
  (nothing is hidden without a lendingLimit). A cohort's quota is its own
  nominal quota plus what its children do not hide.
- Usage is charged to the node; only what does not fit in the node's hidden
  part is charged to its parent, and so on up.
- What a ClusterQueue can take now (*available*) is what is left of its
  hidden part plus what its parent can give, capped by its
  ``borrowingLimit``. *Potential available* is the same with no usage at all:
  the most the queue could ever get.
- The *borrowing level* of a request is the height of the lowest subtree in
  which it fits: 0 within the queue's own quota, 1 in its cohort, and so on.

All amounts are integers (CPU in millicores), as in Kueue.
"""

from __future__ import annotations

from collections import defaultdict

from gangkit.kueue.objects import ClusterQueue, Cohort, FlavorResource, Quota, ResourceGroup


class QuotaNode:
    """A ClusterQueue or a Cohort in the quota tree."""

    __slots__ = ("name", "is_cluster_queue", "parent", "children", "quotas", "subtree", "usage", "weight")

    def __init__(self, name: str, is_cluster_queue: bool, groups: list[ResourceGroup], weight: float = 1.0):
        self.name = name
        self.is_cluster_queue = is_cluster_queue
        self.parent: QuotaNode | None = None
        self.children: list[QuotaNode] = []
        self.quotas: dict[FlavorResource, Quota] = {}
        for rg in groups:
            for fq in rg.flavors:
                for res, q in fq.resources.items():
                    self.quotas[(fq.flavor, res)] = q
        self.subtree: dict[FlavorResource, int] = {}
        self.usage: dict[FlavorResource, int] = defaultdict(int)
        self.weight = weight

    def __repr__(self) -> str:
        return f"QuotaNode({self.name})"

    # -- static quota --------------------------------------------------------
    def nominal(self, fr: FlavorResource) -> int:
        q = self.quotas.get(fr)
        return q.nominal if q else 0

    def local_quota(self, fr: FlavorResource) -> int:
        """The part of the subtree quota hidden from the parent (guaranteed to this node)."""
        q = self.quotas.get(fr)
        if q is None or q.lending_limit is None:
            return 0
        return max(0, self.subtree.get(fr, 0) - q.lending_limit)

    def local_available(self, fr: FlavorResource) -> int:
        return max(0, self.local_quota(fr) - self.usage[fr])

    # -- usage ------------------------------------------------------------------
    def add_usage(self, fr: FlavorResource, v: int) -> None:
        if self.parent is None:  # a root (a ClusterQueue without cohort): nothing is charged further up
            self.usage[fr] += v
            return
        la = self.local_available(fr)
        self.usage[fr] += v
        if v > la:
            self.parent.add_usage(fr, v - la)

    def remove_usage(self, fr: FlavorResource, v: int) -> None:
        if self.parent is None:
            self.usage[fr] -= v
            return
        stored_in_parent = self.usage[fr] - self.local_quota(fr)
        self.usage[fr] -= v
        if stored_in_parent > 0:
            self.parent.remove_usage(fr, min(v, stored_in_parent))

    # -- questions ----------------------------------------------------------------
    def available(self, fr: FlavorResource) -> int:
        """What this node can still take of ``fr`` now (may be negative after a quota cut)."""
        if self.parent is None:
            return self.subtree.get(fr, 0) - self.usage[fr]
        parent_avail = self.parent.available(fr)
        q = self.quotas.get(fr)
        if q is not None and q.borrowing_limit is not None:
            lq = self.local_quota(fr)
            stored_in_parent = self.subtree.get(fr, 0) - lq
            used_in_parent = max(0, self.usage[fr] - lq)
            parent_avail = min(parent_avail, stored_in_parent - used_in_parent + q.borrowing_limit)
        return self.local_available(fr) + parent_avail

    def potential_available(self, fr: FlavorResource) -> int:
        """The most this node could ever take of ``fr`` (all usage ignored)."""
        if self.parent is None:
            return self.subtree.get(fr, 0)
        avail = self.local_quota(fr) + self.parent.potential_available(fr)
        q = self.quotas.get(fr)
        if q is not None and q.borrowing_limit is not None:
            avail = min(avail, self.subtree.get(fr, 0) + q.borrowing_limit)
        return avail

    def fit_figures(self, fr: FlavorResource, v: int) -> tuple[int, int, bool, int]:
        """What flavor assignment asks about ``v`` more of ``fr``, in one call: (potential available,
        borrowing level, may reclaim, available); see the methods of those names. When ``v`` is
        more than the potential available, the other three are not needed and are given as 0.

        Asked for every resource of every head of every cycle; a root (a ClusterQueue without
        cohort) answers from its own figures: it never borrows and has nobody to reclaim from.
        """
        if self.parent is None:
            cap = self.subtree.get(fr, 0)
            return (cap, 0, False, 0) if v > cap else (cap, 0, False, cap - self.usage[fr])
        cap = self.potential_available(fr)
        if v > cap:
            return cap, 0, False, 0
        borrow, may_reclaim = self.borrowing_level(fr, v)
        return cap, borrow, may_reclaim, self.available(fr)

    def borrowing_with(self, fr: FlavorResource, v: int) -> bool:
        """Would usage + v go beyond this node's own quota (nominal for a queue, subtree for a cohort)?"""
        limit = self.nominal(fr) if self.is_cluster_queue else self.subtree.get(fr, 0)
        return self.usage[fr] + v > limit

    def height(self) -> int:
        """Distance to the furthest leaf: a cohort of ClusterQueues has height 1."""
        if self.is_cluster_queue:
            return 0
        h = 1 if self.children else 0
        for c in self.children:
            if not c.is_cluster_queue:
                h = max(h, c.height() + 1)
        return h

    def ancestors(self):
        node = self.parent
        while node is not None:
            yield node
            node = node.parent

    def root(self) -> "QuotaNode":
        node = self
        while node.parent is not None:
            node = node.parent
        return node

    def borrowing_level(self, fr: FlavorResource, v: int) -> tuple[int, bool]:
        """(height of the lowest subtree where ``v`` more of ``fr`` fits, may reclaim in the hierarchy)."""
        if not self.borrowing_with(fr, v) or self.parent is None:
            return 0, self.parent is not None
        remaining = v - self.local_available(fr)
        for node in self.ancestors():
            if not node.borrowing_with(fr, remaining):
                return node.height(), node.parent is not None
            remaining -= node.local_available(fr)
        return self.root().height(), False

    def within_nominal(self, frs) -> bool:
        """Is usage within the node's own quota for every one of ``frs``?"""
        limit = (lambda fr: self.nominal(fr)) if self.is_cluster_queue else (lambda fr: self.subtree.get(fr, 0))
        return all(self.usage[fr] <= limit(fr) for fr in frs)

    def fits_in_quota(self, request: dict[FlavorResource, int]) -> tuple[bool, dict[FlavorResource, int]]:
        """Does ``request`` fit within this node's quota; and what is left over for the parent."""
        fits = True
        remaining = {}
        for fr, v in request.items():
            limit = self.nominal(fr) if self.is_cluster_queue else self.subtree.get(fr, 0)
            if self.usage[fr] + v > limit:
                fits = False
            remaining[fr] = max(0, v - self.local_available(fr))
        return fits, remaining


class QuotaTree:
    """All ClusterQueues and Cohorts, linked; implicit cohorts are created for names with no object."""

    def __init__(self, cluster_queues: list[ClusterQueue], cohorts: list[Cohort]):
        self.cq: dict[str, QuotaNode] = {}
        self.cohort: dict[str, QuotaNode] = {}
        self._trees: dict[str, tuple[str, ...]] = {}  # ClusterQueue -> tree_of's answer
        for c in cohorts:
            self.cohort[c.name] = QuotaNode(c.name, False, c.resource_groups, c.fair_sharing_weight)
        for c in cohorts:
            if c.parent:
                self._link(self.cohort[c.name], self._cohort(c.parent))
        for q in cluster_queues:
            node = QuotaNode(q.name, True, q.resource_groups, q.fair_sharing_weight)
            self.cq[q.name] = node
            if q.cohort:
                self._link(node, self._cohort(q.cohort))
        for root in {n.root() for n in list(self.cq.values()) + list(self.cohort.values())}:
            self._compute_subtree(root)

    def _cohort(self, name: str) -> QuotaNode:
        if name not in self.cohort:  # an implicit cohort: no quota, no parent
            self.cohort[name] = QuotaNode(name, False, [])
        return self.cohort[name]

    @staticmethod
    def _link(child: QuotaNode, parent: QuotaNode) -> None:
        child.parent = parent
        parent.children.append(child)

    def _compute_subtree(self, node: QuotaNode) -> None:
        subtree = {fr: q.nominal for fr, q in node.quotas.items()}
        for child in node.children:
            self._compute_subtree(child)
            for fr, v in child.subtree.items():
                subtree[fr] = subtree.get(fr, 0) + v - child.local_quota(fr)
        node.subtree = subtree

    def tree_of(self, cq_name: str) -> list[str]:
        """Names of every ClusterQueue in the same root cohort tree (itself alone without cohort).

        Asked after every finish and eviction; the tree is fixed once built, so each answer is kept.
        """
        names = self._trees.get(cq_name)
        if names is None:
            names = self._trees[cq_name] = tuple(self._tree_of(cq_name))
        return list(names)

    def _tree_of(self, cq_name: str) -> list[str]:
        node = self.cq[cq_name]
        root = node.root()
        out = []
        stack = [root]
        while stack:
            n = stack.pop()
            if n.is_cluster_queue:
                out.append(n.name)
            stack.extend(n.children)
        return sorted(out)
