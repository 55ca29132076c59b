"""Volcano Queues against their gangs: a gang larger than its queue's capability.

Picture a flatmate's shelf with a hard cap of eight jars: a recipe that
needs twelve jars on the shelf at once can never be cooked, however empty
the rest of the kitchen. Volcano's proportion plugin lets a PodGroup in
(Pending -> Inqueue) only while its ``minResources`` fits the queue's
realCapability, which is at most ``spec.capability``, and allocates a
queue's pods only within its deserved share, itself capped by the same
capability (:mod:`gangkit.volcano.plugins.proportion`). So a gang whose
pods together need more than the capability, in any resource it asks for,
never starts.

The pods counted are the ones that must run together
(:func:`gangkit.consistency.demand.demand`: every pod of a sync job), or
the PodGroup's ``minResources`` when that is larger. A capability that
leaves ``cpu`` or ``memory`` out, or sets it to 0, does not limit it
(:meth:`gangkit.volcano.api.Queue.limit`).
"""

from __future__ import annotations

from gangkit.consistency.demand import demand
from gangkit.consistency.findings import Finding
from gangkit.consistency.inventory import Inventory
from gangkit.model.precision import TOLERANCE
from gangkit.model.resources import ZERO, pod_resources
from gangkit.volcano.api import job_min_resources

__all__ = ["findings"]

NAMES = {"gpus": "nvidia.com/gpu", "cpu": "cpu", "memory": "memory"}


def findings(inv: Inventory) -> list[Finding]:
    if inv.volcano is None:
        return []
    queues = inv.volcano.all_queues()
    objects = {o.name: o for o in inv.of_role("Queue")}
    out = []
    for e in inv.jobs:
        j = e.job
        in_volcano = j is not None and (j.controller == "volcano" or (e.gang is not None and e.gang.layer == "volcano"
                                                                       and not e.gang.missing))
        q = queues.get(j.volcano_queue) if in_volcano else None
        if q is None or q.limit() is None or j.volcano_queue not in objects:
            continue
        limit = q.limit()
        need = ZERO
        for ps, n in demand(j):
            need = need + pod_resources(ps) * n
        minimum = job_min_resources(j)
        if minimum is not None:
            need = need.maximum(minimum)
        over = {dim: (getattr(need, dim), getattr(limit, dim)) for dim in ("gpus", "cpu", "memory")
                if getattr(need, dim) > 0 and getattr(need, dim) > getattr(limit, dim) * (1 + TOLERANCE)}
        if not over:
            continue
        words = ", ".join(f"{_amount(dim, a)} {NAMES[dim]} > capability {_amount(dim, b)}" for dim, (a, b) in over.items())
        queue = objects[j.volcano_queue]
        out.append(Finding(
            "volcano-capability-too-small", (e.name, f"Queue {q.name}"),
            f"{e.name}'s gang needs {words} of Queue {q.name}: Volcano never lets it in (enqueue) nor allocates it "
            "that much, so it never starts.",
            f"raise Queue {q.name}'s spec.capability to at least what the gang needs, or send it to another queue",
            ((queue.label, "spec.capability"), ((e.obj if e.obj.role == "VolcanoJob" else e.gang.target).label, "spec.queue")),
            {NAMES[d]: {"needed": a, "capability": b} for d, (a, b) in over.items()}))
    return out


def _amount(dim: str, value: float) -> str:
    if dim == "memory":
        return f"{value / 2**30:g}Gi"
    return f"{value:g}"
