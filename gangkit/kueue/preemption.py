"""Choosing victims: which admitted workloads to preempt so that a pending one fits.

Kueue looks for candidates in two places, as the ClusterQueue's
``spec.preemption`` allows:

- ``withinClusterQueue``: workloads of the same queue with lower priority
  (``LowerPriority``), or also equal priority and newer
  (``LowerOrNewerEqualPriority``); reason ``InClusterQueue``;
- ``reclaimWithinCohort``: workloads of *other* queues in the cohort tree
  that are over their nominal quota (they borrowed); reason
  ``InCohortReclamation``, or ``InCohortReclaimWhileBorrowing`` when the
  preemptor itself borrows, which ``borrowWithinCohort`` must allow (up to
  ``maxPriorityThreshold``).

Candidates are ordered: other ClusterQueues first, then lowest priority,
then the most recently admitted. They are removed one by one until the
preemptor fits; then each is put back, if the preemptor still fits
without evicting it, so the set is minimal. A queue that is back within its
nominal quota stops being a source of victims. Rules after Kueue's
``pkg/scheduler/preemption`` (classical preemption).
"""

from __future__ import annotations

from gangkit.kueue.fair_sharing import fair_targets
from gangkit.kueue.objects import ClusterQueue, FlavorResource, Workload
from gangkit.kueue.quota import QuotaNode, QuotaTree
from gangkit.kueue.targets import (
    HIERARCHICAL_RECLAIM,
    RECLAIM_WHILE_BORROWING,
    RECLAIM_WITHOUT_BORROWING,
    WITHIN_CQ,
    Target,
    fill_back,
    satisfies,
)


def _uses(wl: Workload, frs: set[FlavorResource]) -> bool:
    return any(fr in frs for fr in wl.admission.usage)


class Preemptor:
    """Classical preemption over a quota tree and the admitted workloads of each ClusterQueue."""

    def __init__(self, tree: QuotaTree, queues: dict[str, ClusterQueue], admitted: dict[str, dict], config=None):
        self.tree, self.queues, self.admitted = tree, queues, admitted
        self.config = config

    def targets(self, wl: Workload, cq_name: str, request: dict[FlavorResource, int], frs: set[FlavorResource]) -> list[Target]:
        if self.config is not None and self.config.fair_sharing:
            return self.fair_sharing_targets(wl, cq_name, request, frs)
        return self.classical_targets(wl, cq_name, request, frs)

    def fair_sharing_targets(self, wl, cq_name, request, frs) -> list[Target]:
        """Candidates: own queue (withinClusterQueue) and every borrowing queue of the tree (reclaimWithinCohort)."""
        cq = self.queues[cq_name]
        node = self.tree.cq[cq_name]
        policy = cq.preemption
        cands = []
        if policy.within_cluster_queue != "Never":
            cands += [Target(w, WITHIN_CQ) for w in self.admitted[cq_name].values()
                      if w is not wl and satisfies(policy.within_cluster_queue, w, wl) and _uses(w, frs)]
        if node.parent is not None and policy.reclaim_within_cohort != "Never":
            for other in self.tree.tree_of(cq_name):
                owner = self.tree.cq[other]
                if other == cq_name or all(owner.usage[fr] <= owner.nominal(fr) for fr in frs):
                    continue
                cands += [Target(w, RECLAIM_WITHOUT_BORROWING) for w in self.admitted[other].values()
                          if satisfies(policy.reclaim_within_cohort, w, wl) and _uses(w, frs)]
        order = lambda t: (t.workload.cluster_queue == cq_name, t.workload.priority,  # noqa: E731
                           -(t.workload.quota_reserved_at or 0.0), -t.workload.seq)
        return fair_targets(self.tree, cq_name, request, frs, sorted(cands, key=order), self.config.fair_sharing_strategies)

    def classical_targets(self, wl: Workload, cq_name: str, request: dict[FlavorResource, int], frs: set[FlavorResource]) -> list[Target]:
        cq = self.queues[cq_name]
        node = self.tree.cq[cq_name]
        policy = cq.preemption
        same: list[Target] = []
        if policy.within_cluster_queue != "Never":
            same = [Target(w, WITHIN_CQ) for w in self.admitted[cq_name].values()
                    if w is not wl and satisfies(policy.within_cluster_queue, w, wl) and _uses(w, frs)]
        hier: list[Target] = []
        if node.parent is not None and policy.reclaim_within_cohort != "Never":
            adv, remaining = node.fits_in_quota(request)
            prev = node
            for anc in node.ancestors():
                for other in self._over_nominal_queues(anc, prev, frs, node):
                    for w in self.admitted[other.name].values():
                        if not (satisfies(policy.reclaim_within_cohort, w, wl) and _uses(w, frs)):
                            continue
                        if adv:
                            variant = HIERARCHICAL_RECLAIM
                        elif policy.borrow_within_cohort == "Never":
                            variant = RECLAIM_WITHOUT_BORROWING
                        elif w.priority >= wl.priority or (
                                policy.max_priority_threshold is not None and w.priority > policy.max_priority_threshold):
                            variant = RECLAIM_WITHOUT_BORROWING
                        else:
                            variant = RECLAIM_WHILE_BORROWING
                        hier.append(Target(w, variant, anc))
                fits, remaining = anc.fits_in_quota(remaining)
                adv = adv or fits
                prev = anc
        order = lambda t: (t.workload.cluster_queue == cq_name, t.workload.priority,  # noqa: E731
                           -(t.workload.quota_reserved_at or 0.0), -t.workload.seq)
        candidates = sorted(hier, key=order) + sorted(same, key=order)
        if not candidates:
            return []
        forbidden = policy.borrow_within_cohort == "Never"
        others = any(t.workload.cluster_queue != cq_name for t in candidates)
        if not others or (forbidden and not all(node.usage[fr] < node.nominal(fr) for fr in frs)):
            attempts = [True]
        elif forbidden and not any(t.variant == HIERARCHICAL_RECLAIM for t in candidates):
            attempts = [False, True]
        else:
            attempts = [True, False]
        for allow_borrowing in attempts:
            found = self._minimal_set(node, cq_name, candidates, request, frs, allow_borrowing)
            if found:
                return found
        return []

    def _over_nominal_queues(self, anc: QuotaNode, exclude: QuotaNode, frs, preemptor_node: QuotaNode):
        """ClusterQueues below ``anc`` (outside ``exclude``'s subtree) that are over nominal, via over-quota cohorts."""
        out = []
        stack = [c for c in anc.children if c is not exclude]
        while stack:
            n = stack.pop()
            if n.is_cluster_queue:
                if n is not preemptor_node and not n.within_nominal(frs):
                    out.append(n)
            elif not n.within_nominal(frs):
                stack.extend(n.children)
        return sorted(out, key=lambda n: n.name)

    def _minimal_set(self, node: QuotaNode, cq_name: str, candidates: list[Target], request, frs, allow_borrowing: bool) -> list[Target]:
        removed: list[Target] = []

        def fits() -> bool:
            return all((allow_borrowing or node.usage[fr] + v <= node.nominal(fr)) and v <= node.available(fr)
                       for fr, v in request.items())

        def take(t: Target) -> None:
            cq = self.tree.cq[t.workload.cluster_queue]
            for fr, v in t.workload.admission.usage.items():
                cq.remove_usage(fr, v)

        def give(t: Target) -> None:
            cq = self.tree.cq[t.workload.cluster_queue]
            for fr, v in t.workload.admission.usage.items():
                cq.add_usage(fr, v)

        try:
            for t in candidates:
                if t.workload.cluster_queue != cq_name:
                    if allow_borrowing and t.variant == RECLAIM_WITHOUT_BORROWING:
                        continue
                    owner = self.tree.cq[t.workload.cluster_queue]
                    if owner.within_nominal(frs):
                        continue
                    if any(a.within_nominal(frs) for a in _ancestors_below(owner, t.lca)):
                        continue
                take(t)
                removed.append(t)
                if fits():
                    return fill_back(removed, give, take, fits)
            return []
        finally:
            for t in removed:
                give(t)


def _ancestors_below(node: QuotaNode, lca: QuotaNode | None):
    out = []
    a = node.parent
    while a is not None and a is not lca:
        out.append(a)
        a = a.parent
    return out
