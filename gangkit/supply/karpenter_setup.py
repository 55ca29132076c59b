"""Karpenter's configuration: its NodePools, instance types, batch window and node stages.

A :class:`KarpenterSetup` is what a scenario carries (``Scenario.karpenter``),
what the manifests reader builds from NodePools and gangkit's ``Karpenter``
kind, and what :func:`default_karpenter` gives a ``+karpenter`` stack name. It
is frozen: a run never changes it. Each run builds its own
:class:`~gangkit.supply.karpenter.Karpenter` from it (``Karpenter.from_setup``),
with no NodeClaim, batch or counter yet, as Kueue's scheduler is built from a
``KueueSetup`` (``Kueue.from_setup``). So one setup serves any number of runs,
one after the other or side by side, each as if it were the first.

The settings are Karpenter v1.14's: ``batchIdleDuration`` and
``batchMaxDuration`` (``--batch-idle-duration``, ``--batch-max-duration``, or
``BATCH_IDLE_DURATION``, ``BATCH_MAX_DURATION``; 1 s and 10 s by default,
``pkg/operator/options/options.go``), and the NodePools (:mod:`gangkit.supply.nodepool`). A static
pool (``spec.replicas``) keeps ``min(replicas, limits.nodes)`` nodes of the
cheapest type it allows; the nomination window, ``max(2 x batchMaxDuration,
10 s)``, is how long a nomination outlives its last renewal (Karpenter
``pkg/controllers/state/statenode.go``). The stages a new node goes through are
gangkit's assumptions (:class:`~gangkit.supply.cloud.Stages`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from gangkit.model.resources import labels_match
from gangkit.supply.adoption import pool_of
from gangkit.supply.cloud import GPU, InstanceType, Stages
from gangkit.supply.fit import CPU, MEMORY, capacity, within
from gangkit.supply.limits import at_limit, most_gpus
from gangkit.supply.nodepool import NodePool

__all__ = ["KarpenterSetup", "default_karpenter"]


def _cheapest(options: list[InstanceType]) -> InstanceType:
    """Karpenter's lowest-price launch: the cheapest type (ties: fewer GPUs, then name)."""
    return min(options, key=lambda it: (it.price_per_hour, it.gpus, it.name))


@dataclass(frozen=True, eq=False, init=False)
class KarpenterSetup:
    """Karpenter's configuration for any number of runs (see the module docstring)."""

    #: the NodePools, highest ``weight`` first, then by name (the order the provisioner tries them in)
    nodepools: tuple[NodePool, ...]
    #: instance type name -> type
    instance_types: dict[str, InstanceType]
    batch_idle: float
    batch_max: float
    stages: Stages
    #: static pool name -> (the type its nodes are launched as: the cheapest it allows, how many)
    static_nodes: dict[str, tuple[InstanceType, int]]
    #: Karpenter's nomination window: how long a nomination outlives its last renewal
    nomination_window: float

    def __init__(self, nodepools: list[NodePool], instance_types: list[InstanceType], batch_idle: float = 1.0,
                 batch_max: float = 10.0, stages: Stages | None = None):
        pools = tuple(sorted(nodepools, key=lambda p: (-p.weight, p.name)))
        types = {it.name: it for it in instance_types}
        for pool in pools:
            for t in pool.instance_types:
                if t not in types:
                    raise ValueError(f"NodePool {pool.name}: instance type {t!r} is not among the instance types given")
        static = {}
        for pool in pools:
            if pool.static:
                count = min(pool.replicas, pool.limits.get("nodes", pool.replicas))
                options = [types[t] for t in pool.instance_types]
                if count and not options:
                    raise ValueError(f"NodePool {pool.name}: replicas {pool.replicas} but no instance type to launch")
                if count:
                    static[pool.name] = (_cheapest(options), count)
        values = {"nodepools": pools, "instance_types": types, "batch_idle": float(batch_idle),
                  "batch_max": float(batch_max), "stages": stages or Stages(), "static_nodes": static,
                  "nomination_window": max(2 * float(batch_max), 10.0)}
        for name, value in values.items():
            object.__setattr__(self, name, value)

    def provisionable_gpus(self, scenario) -> int:
        """GPUs Karpenter could add for ``scenario``: the GPUs of its static pools' nodes plus, per dynamic
        pool, its GPU limit, lowered when it limits ``cpu`` or ``memory`` to the most GPUs of the types it may
        launch within those limits (:func:`gangkit.supply.limits.most_gpus`: 96 cores of 8-GPU types of 96
        cores are one node, 8 GPUs); when some dynamic pool is bounded by none, every GPU the scenario's jobs ask
        for (a default Kueue quota can use it)."""
        static = sum(it.gpus * n for it, n in self.static_nodes.values())
        pools = {p.name: p for p in self.nodepools}
        owned = {p.name: sum(n.gpus for n in scenario.nodes if pool_of(n, pools) is p) for p in self.nodepools}
        bounds = [max(0, most_gpus(p.enforced, [c for c in (capacity(self.instance_types[t]) for t in p.instance_types)
                                                if within(c, p.enforced)]) - owned[p.name])
                  for p in self.nodepools if not p.static]  # the GPUs of nodes it owns already count against it
        if all(math.isfinite(b) for b in bounds):
            return int(sum(bounds)) + static
        return sum(j.gpus for j in scenario.jobs)

    def can_ever_fit(self, gpus: int, cpu: float, memory: int, selector: tuple) -> bool:
        """Could some node Karpenter may launch hold such a pod: a static pool's, or a type a dynamic pool
        allows within its limits, carrying labels that match ``selector``?"""
        for name, (it, _) in self.static_nodes.items():
            pool = next(p for p in self.nodepools if p.name == name)
            if it.holds(gpus, cpu, memory) and labels_match(pool.node_labels(it.name), selector):
                return True
        for pool in self.nodepools:
            if pool.static:
                continue
            for t in pool.instance_types:
                it = self.instance_types[t]
                if within(capacity(it), pool.enforced) and it.holds(gpus, cpu, memory) \
                        and labels_match(pool.node_labels(t), selector):
                    return True
        return False

    def launch_blocked(self, pods: list, usage: Callable[[NodePool], dict] | None = None) -> str:
        """Why no node will be launched for these pods: every dynamic NodePool has a limit that leaves no room for
        any instance type it allows that holds one of them (Karpenter's ``filterByRemainingResources`` leaves
        none), each such limit named (``nvidia.com/gpu``, ``cpu``, ``memory``), else ``""``. ``usage``: the
        capacity a pool's live nodes use, per resource (a run's; none before any run)."""
        if not self.nodepools or not pods:
            return ""
        full = []
        dynamic = [p for p in self.nodepools if not p.static]
        if not dynamic:
            return "; ".join(f"NodePool {p.name} is static (spec.replicas {p.replicas}): it launches no node for "
                             "pending pods" for p in self.nodepools)
        shapes = {(p.pod_set.gpus, p.pod_set.cpu, p.pod_set.memory) for p in pods}
        for pool in dynamic:
            if not pool.enforced:
                return ""  # this pool can still grow
            used = usage(pool) if usage is not None else {GPU: 0, CPU: 0.0, MEMORY: 0}
            left = {r: limit - used[r] for r, limit in pool.enforced.items()}
            caps = [capacity(self.instance_types[t]) for t in pool.instance_types
                    if any(self.instance_types[t].holds(*s) for s in shapes)]
            if any(within(cap, left) for cap in caps):
                return ""
            blocking = [r for r in pool.enforced if not caps or any(cap[r] > left[r] for cap in caps)]
            full.append(f"NodePool {pool.name} " + " and ".join(
                at_limit(r, used[r], pool.enforced[r], min((cap[r] for cap in caps), default=None))
                for r in blocking))
        return "; ".join(full)


def default_karpenter(scenario=None, stages: Stages | None = None) -> KarpenterSetup:
    """The Karpenter of a scenario that brings no NodePools of its own (what a ``+karpenter`` stack name uses).

    One NodePool ``default`` without limits, consolidating empty nodes after
    Karpenter's default of 0 s, allowing instance types of 1, 2, 4 and 8 GPUs
    plus the GPU counts of the scenario's nodes and pods, each priced 1.0 per
    GPU-hour (an assumption: only relative prices matter here). ``stages``:
    how long its new nodes take (default :class:`~gangkit.supply.cloud.Stages`).
    """
    sizes = {1, 2, 4, 8}
    if scenario is not None:
        sizes.update(n.gpus for n in scenario.nodes if n.gpus > 0)
        sizes.update(ps.gpus for j in scenario.jobs for ps in j.pod_sets if ps.gpus > 0)
    types = [InstanceType(f"gpu-{g}", g, float(g)) for g in sorted(sizes)]
    return KarpenterSetup([NodePool("default", [t.name for t in types])], types, stages=stages)
