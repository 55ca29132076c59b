"""Which instance type a NodeClaim of Karpenter's scheduling simulation can be, for the pods it holds.

Karpenter's provisioner (v1.14, ``pkg/controllers/provisioning/scheduling/nodeclaim.go``)
keeps, for each NodeClaim it is filling, the instance types that could
still hold all its pods and whose labels match their node selectors, and
drops the types that would take the NodePool past what is left of its
limits (``filterByRemainingResources``). The NodeClaim launches as the
cheapest type left (gangkit's tie rule: fewer GPUs, then the name).
"""

from __future__ import annotations

from gangkit.model.precision import TOLERANCE
from gangkit.model.resources import labels_match
from gangkit.supply.cloud import GPU, InstanceType

CPU, MEMORY = "cpu", "memory"


def capacity(it: InstanceType) -> dict:
    """What one node of this type adds to its pool's usage, per limited resource: its capacity (GPUs, cores,
    bytes; a type without a CPU or memory figure adds 0 of it)."""
    return {GPU: it.gpus, CPU: it.cpu or 0.0, MEMORY: it.memory or 0}


def within(cap: dict, left: dict) -> bool:
    """Does a type of this capacity fit in what is left of every limit (``filterByRemainingResources``; cores with
    gangkit's tolerance, GPUs and bytes exactly)?"""
    return all(cap[r] <= v + (TOLERANCE if r == CPU else 0) for r, v in left.items())


def cheapest_type(pool, instance_types: dict, pods: list, room: dict) -> InstanceType | None:
    """The cheapest of the pool's types that holds all ``pods`` within ``room`` (what is left of its limits).

    None when no type does, or when ``minValues`` (``minValuesPolicy: Strict``) leaves too few options.
    """
    g = sum(p.pod_set.gpus for p in pods)
    cpu = sum(p.pod_set.cpu for p in pods)
    mem = sum(p.pod_set.memory for p in pods)
    best = None
    fitting = []
    for t in pool.instance_types:
        it = instance_types[t]
        if not within(capacity(it), room) or not it.holds(g, cpu, mem):
            continue
        labels = pool.node_labels(t)
        if not all(labels_match(labels, p.pod_set.node_selector) for p in pods):
            continue
        fitting.append(t)
        key = (it.price_per_hour, it.gpus, it.name)
        if best is None or key < best[0]:
            best = (key, it)
    if best is not None and not all(mv.met(fitting) for mv in pool.min_values):
        return None  # minValuesPolicy Strict: too few options left to launch from
    return None if best is None else best[1]
