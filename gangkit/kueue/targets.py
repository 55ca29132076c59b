"""Preemption targets: a workload to preempt and why, and how a sufficient set of them is made minimal.

Both ways Kueue chooses victims, classical preemption
(:mod:`gangkit.kueue.preemption`) and fair sharing
(:mod:`gangkit.kueue.fair_sharing`), produce :class:`Target` objects, each
with the reason Kueue records on the evicted Workload (``InClusterQueue``,
``InCohortReclamation``, ``InCohortReclaimWhileBorrowing``,
``InCohortFairSharing``; Kueue ``pkg/scheduler/preemption``), and both end
with :func:`fill_back`: put victims back while the preemptor still fits, so
no workload is evicted that did not need to be.
"""

from __future__ import annotations

from dataclasses import dataclass

from gangkit.kueue.objects import Workload
from gangkit.kueue.quota import QuotaNode

IN_CLUSTER_QUEUE = "InClusterQueue"
IN_COHORT_RECLAMATION = "InCohortReclamation"
IN_COHORT_RECLAIM_WHILE_BORROWING = "InCohortReclaimWhileBorrowing"
IN_COHORT_FAIR_SHARING = "InCohortFairSharing"

WITHIN_CQ, HIERARCHICAL_RECLAIM, RECLAIM_WITHOUT_BORROWING, RECLAIM_WHILE_BORROWING = range(4)
REASONS = {
    WITHIN_CQ: IN_CLUSTER_QUEUE,
    HIERARCHICAL_RECLAIM: IN_COHORT_RECLAMATION,
    RECLAIM_WITHOUT_BORROWING: IN_COHORT_RECLAMATION,
    RECLAIM_WHILE_BORROWING: IN_COHORT_RECLAIM_WHILE_BORROWING,
}


@dataclass
class Target:
    """A workload to preempt, and why."""

    workload: Workload
    variant: int
    lca: QuotaNode | None = None
    override: str | None = None  # the reason fair-sharing preemption gives

    @property
    def reason(self) -> str:
        return self.override or REASONS[self.variant]


def satisfies(policy: str, candidate: Workload, preemptor: Workload) -> bool:
    if policy == "LowerPriority":
        return candidate.priority < preemptor.priority
    if policy == "LowerOrNewerEqualPriority":
        return candidate.priority < preemptor.priority or (
            candidate.priority == preemptor.priority and preemptor.queue_timestamp < candidate.queue_timestamp)
    return policy == "Any"


def fill_back(removed: list[Target], give, take, fits) -> list[Target]:
    """Make a sufficient victim set minimal: put each victim back, latest first but one, if the preemptor still fits.

    ``removed`` is updated in place (victims put back leave it); the minimal set is returned.
    """
    result = list(removed)
    for i in range(len(result) - 2, -1, -1):
        give(result[i])
        if fits():
            removed.remove(result[i])
            result.pop(i)
        else:
            take(result[i])
    return result
