"""Volcano's preempt and reclaim actions: taking capacity back, one gang at a time.

Two ways a waiting gang may take room from running ones:

- **preempt**, within a queue: a waiting job evicts *lower-priority* jobs of
  its own queue (Volcano ``pkg/scheduler/actions/preempt`` and
  ``gangpreempt``);
- **reclaim**, across queues: a job of a queue below its deserved share
  evicts jobs of *other* queues that hold more than their deserved share,
  the most over-served queue first (``actions/reclaim`` and ``gangreclaim``;
  the proportion plugin's ReclaimableFn allows victims from a queue only
  while its allocation is above its deserved share; a queue with
  ``reclaimable: false`` is never a victim; the reclaiming queue must not be
  overused, and its allocation plus the job's request must stay within its
  deserved share, the PreemptiveFn; see
  :class:`gangkit.volcano.plugins.proportion.QueueAttr` for each comparison).

gangkit's reclaim blends the two Volcano actions: victims come in
``gangreclaim``'s bundles (below) and are filtered by proportion's
ReclaimableFn as the task-by-task ``reclaim`` filters them. In Volcano
v1.15.1, ``gangreclaim`` alone does not ask the proportion plugin about
victims, and ``reclaim`` alone never takes a whole job.

The gang rule for victims (the gang plugin's PreemptableFn/ReclaimableFn):
a pod may be taken from a running job only while the job keeps at least
``minMember`` ready pods (counting down as victims are chosen), and, with
Volcano 1.15's gang-aware eviction (``actions/utils/bundle.go``), at least
each role's ``minTaskMember``. Those pods form the job's *safe* bundle.
The rest can only go together with the whole job (its *whole* bundle), so a
victim gang is never left running below its minimum.

Choosing victims: safe bundles before whole ones; then, for preempt, the
lowest-priority and newest job first; for reclaim, the queue with the
highest share first. Victims are added one pod at a time (a whole bundle at
once) until the waiting job's trial placement succeeds, as Volcano's
preempt evicts "until the preemptor fits": exactly enough, no more. If even
every candidate is not enough, nobody is evicted.

Simplified: a ``sync`` job stops as a whole when it loses any pod (gangkit's
sync jobs progress only with all pods; a Volcano Job with the
``PodEvicted: RestartJob`` policy behaves so), so a sync job's pods are
only ever one whole bundle; safe bundles exist for ``independent`` jobs.
Evicted pods free their room at once (no graceful termination), and the
preemptor is bound in the same session rather than pipelined to the next.
Volcano's network-topology domains are not modelled: the whole cluster is
one domain.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Callable

from gangkit.engine.state import JobState, PodState
from gangkit.volcano.plugins.gang import ready_pods, role_minimums


@dataclass
class Bundle:
    """Pods of one victim job that go together: its safe surplus, or (``whole``) every bound pod of it."""

    job: JobState
    pods: list[PodState]
    whole: bool


def job_bundles(js: JobState) -> list[Bundle]:
    """The safe bundle (pods above minMember and each role's minimum) and the whole bundle of a running job."""
    bound = [p for p in js.pods if p.node is not None]
    if not bound:
        return []
    if js.spec.progress == "sync":
        return [Bundle(js, bound, whole=True)]
    surplus = ready_pods(js) - js.gang_size  # finished pods count towards the gang too
    mins = role_minimums(js)
    role_left = Counter(p.pod_set.name for p in bound)
    safe, rest = [], []
    for p in sorted(bound, key=lambda p: -p.seq):  # the newest pods go first
        role = p.pod_set.name
        role_safe = role not in mins or role_left[role] > mins[role]
        if surplus > 0 and role_safe:
            safe.append(p)
            surplus -= 1
            role_left[role] -= 1
        else:
            rest.append(p)
    out = [Bundle(js, safe, whole=False)] if safe else []
    if rest:
        out.append(Bundle(js, bound, whole=True))  # taking any of the rest means taking the whole job
    return out


def select_victims(
    bundles: list[Bundle],
    fits: Callable[[list[PodState]], bool],
    allowed: Callable[[Bundle, list[PodState]], bool] = lambda b, chosen: True,
) -> list[PodState] | None:
    """The fewest pods, in bundle order, whose eviction lets the waiting job fit; None if none do.

    ``bundles`` come ordered (safe first, then the caller's victim order);
    ``fits(victims)`` tries the waiting job with those pods' room given back;
    ``allowed(bundle, chosen)`` is the queue rule (reclaim: the victim's
    queue is still above its deserved share).
    """
    chosen: list[PodState] = []
    for b in bundles:
        if not allowed(b, chosen):
            continue
        if b.whole:
            taken = set(map(id, chosen))
            chosen.extend(p for p in b.pods if id(p) not in taken)
            if fits(chosen):
                return chosen
            continue
        for p in b.pods:
            if not allowed(b, chosen):
                break
            chosen.append(p)
            if fits(chosen):
                return chosen
    return None
