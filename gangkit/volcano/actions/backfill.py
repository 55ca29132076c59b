"""Volcano's backfill action: place the pods that ask for nothing, which allocate leaves out.

Volcano's backfill action (``ordering: volcano-backfill``;
``pkg/scheduler/actions/backfill``) runs last in the session. It places the
*best-effort* pods, whose resource request is empty (Volcano's
``TaskInfo.BestEffort``; in gangkit: 0 GPUs, 0 CPU, 0 memory,
:func:`best_effort`), one by one in queue order then job order, on the
best-scoring node, stopping at the first that fits nowhere; a job's pods are
bound only once the job is ready (the session's ``Allocate``, in
pkg/scheduler/framework/session.go, dispatches a job's allocated pods only
when ``minMember`` are allocated). It never looks ahead and never places a
pod that asks for a GPU, so **it cannot help GPU gangs**: for them it is
``skip``. A job that mixes both kinds of pods and whose ``minMember`` needs
both never becomes ready (allocate sees one kind, backfill the other).

The other thing called *backfill*, reservations in a book of future capacity
(``easy-backfill``, ``conservative-backfill``), is gangkit's contrast from
batch schedulers: :mod:`gangkit.volcano.reservations`.
"""

from __future__ import annotations

from collections import defaultdict

from gangkit.volcano.cache import INQUEUE
from gangkit.volcano.plugins.gang import gang_ready
from gangkit.volcano.session import Session

SHAPE_SKIPPING = ("skip", "largest-first", "volcano-backfill")  # allocate moves on past a shape that does not fit


def best_effort(request: tuple) -> bool:
    """A pod that asks for nothing (Volcano's BestEffort task: its resource request is empty)."""
    gpus, cpu, memory, _selector = request
    return not gpus and not cpu and not memory


def execute(ssn: Session) -> None:
    """Place waiting best-effort pods one by one, queues in queue order, jobs in job order.

    A job's pods are bound only if the job is then ready; the action
    stops at the first pod that fits nowhere. Best-effort pods ask for
    nothing, so no queue share changes and no queue is skipped.
    """
    cache, sim = ssn.cache, ssn.sim
    by_queue: dict[str, list] = defaultdict(list)
    seen = set()
    for q, shapes in cache.shapes.items():
        for shape, h in shapes.items():
            if any(best_effort(r) for r in shape[0]):
                for e in h:
                    js = e.job
                    if js.index not in seen and cache.waits_whole(js, INQUEUE):
                        seen.add(js.index)
                        by_queue[q].append((ssn.job_key(js, e), js))
    for js in cache.partial.values():
        if js.index not in seen:
            seen.add(js.index)
            by_queue[js.spec.volcano_queue].append((ssn.job_key(js), js))
    order = [js for q in ssn.queue_order(list(by_queue)) for _, js in sorted(by_queue[q], key=lambda kv: kv[0])]
    for js in order:
        placed, stuck = [], False
        for p in js.pods:
            if p.node is None and not p.done and best_effort(p.request):
                node = sim.capacity.choose_for(p, placed)
                if node is None:
                    stuck = True
                    break
                placed.append((p, node))
        if placed and gang_ready(js, [p for p, _ in placed]):
            ssn.commit(js, placed)
        if stuck:
            break
    ssn.blocked = [j for j in ssn.blocked if any(p.node is None and not p.done for p in j.pods)]
