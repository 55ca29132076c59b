"""Volcano's reclaim action: a queue below its deserved share takes capacity back from queues above theirs.

Reclaim (Volcano ``pkg/scheduler/actions/reclaim`` and ``gangreclaim``) is
preempt across queues: a waiting gang of a queue that is not overused evicts
jobs of *other* queues while those queues hold more than their deserved share
(the proportion plugin's ReclaimableFn), the most over-served queue first,
never leaving a victim gang below its minimum, and never taking a pod that is
not preemptable (``volcano.sh/preemptable``). The victim choice, the gang rule
and that one are preempt's (:mod:`gangkit.volcano.actions.preempt`, which
describes them); only the candidates and the queue rules differ.
"""

from __future__ import annotations

from gangkit.volcano.actions.preempt import take_back_for_starving
from gangkit.volcano.session import Session


def execute(ssn: Session) -> None:
    """Run reclaim for this session (nothing to do with fewer than two queues that hold jobs)."""
    take_back_for_starving(ssn, "reclaim")
