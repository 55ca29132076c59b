"""Karpenter's NodePool, as gangkit reads it: which instance types, what limits, how it consolidates.

A NodePool (``karpenter.sh/v1``, Karpenter v1.14) is a template for the nodes Karpenter may launch:
the instance types its requirements allow, ``limits`` on the total capacity of its nodes, its
disruption settings (``consolidationPolicy``, ``consolidateAfter``, a budget of nodes disrupted at
once), labels, a weight, and (a *static* pool, ``spec.replicas``) a fixed number of nodes. How the
provisioner and the disruption controller use it is :mod:`gangkit.supply.karpenter`.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field
from typing import Union

from gangkit.supply.adoption import POOL_LABEL
from gangkit.supply.cloud import GPU, TYPE_LABEL
from gangkit.supply.fit import CPU, MEMORY

__all__ = ["LIMITED", "POLICIES", "NodePool"]

#: The resources whose NodePool limits gangkit enforces on a dynamic pool, in the order it reports them: the
#: resources it models. A limit on any other resource is not modelled.
LIMITED = (GPU, CPU, MEMORY)
POLICIES = ("WhenEmpty", "WhenEmptyOrUnderutilized", "Balanced")


@dataclass(frozen=True)
class NodePool:
    """A subset of ``karpenter.sh/v1`` NodePool.

    - ``instance_types``: the type names its requirements allow;
    - ``limits``: e.g. ``{"nvidia.com/gpu": 16, "cpu": 384, "memory": 2**41}``
      (GPUs, cores, bytes; each enforced against the capacity of the pool's
      nodes, see the module docstring); a static pool's only limit is
      ``nodes``;
    - ``consolidation_policy``: ``WhenEmpty``, ``WhenEmptyOrUnderutilized``
      (also deletes a node whose pods fit on the other nodes) or ``Balanced``
      (only when that is worth the disruption: see the module docstring);
    - ``consolidate_after``: seconds a node must stay empty (None = Never;
      Karpenter's default is 0 s);
    - ``budget``: nodes that may be disrupted at once: an int or a
      percentage string of the pool's nodes, rounded up (default ``"10%"``);
    - ``labels``: put on its nodes (pods may select them); ``weight``: pools
      with a higher weight are tried first;
    - ``min_values``: its requirements' ``minValues``
      (:class:`~gangkit.supply.catalogue.MinValues`), checked per NodeClaim;
    - ``replicas``: set for a *static* NodePool, which keeps that many nodes
      from the start whatever the pods ask (at most ``limits["nodes"]``, the
      only limit a static pool may have), launches none for pending pods and
      is never consolidated (its policy is ignored); None: a dynamic pool.
    """

    name: str
    instance_types: tuple[str, ...]
    limits: dict = field(default_factory=dict)
    consolidation_policy: str = "WhenEmpty"
    consolidate_after: float | None = 0.0
    budget: Union[int, str] = "10%"
    labels: dict = field(default_factory=dict)
    weight: int = 0
    min_values: tuple = ()
    replicas: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "instance_types", tuple(self.instance_types))
        object.__setattr__(self, "min_values", tuple(self.min_values))
        if self.consolidation_policy not in POLICIES:
            raise ValueError(f"NodePool {self.name}: consolidation_policy: expected one of {', '.join(POLICIES)}, "
                             f"got {self.consolidation_policy!r}")
        if self.replicas is not None:
            if isinstance(self.replicas, bool) or not isinstance(self.replicas, int) or self.replicas < 0:
                raise ValueError(f"NodePool {self.name}: replicas: expected a whole number >= 0, got {self.replicas!r}")
            if set(self.limits) - {"nodes"}:
                raise ValueError(f"NodePool {self.name}: limits: only 'limits.nodes' is supported on static NodePools, "
                                 f"got {sorted(self.limits)}")
            if self.weight:
                raise ValueError(f"NodePool {self.name}: weight: 'weight' is not supported on static NodePools")
            return
        other = sorted(set(map(str, self.limits)) - set(LIMITED))
        if other:
            raise ValueError(f"NodePool {self.name}: limits: gangkit enforces limits on {', '.join(LIMITED)} only; "
                             f"got {other} (a manifest's other limits are noted as not modelled and dropped)")
        for r, v in self.limits.items():
            if isinstance(v, bool) or not isinstance(v, numbers.Real) or not v >= 0:
                raise ValueError(f"NodePool {self.name}: limits.{r}: expected a number >= 0, got {v!r}")

    @property
    def static(self) -> bool:
        """A static NodePool (``spec.replicas`` set)?"""
        return self.replicas is not None

    @property
    def gpu_limit(self) -> float:
        return self.limit(GPU)

    def limit(self, resource: str) -> float:
        """The pool's limit of one resource (``inf`` when it sets none)."""
        v = self.limits.get(resource)
        return math.inf if v is None else v

    @property
    def enforced(self) -> dict:
        """The limits the provisioner enforces, resource -> amount, in :data:`LIMITED` order (none on a static pool,
        whose ``nodes`` limit only caps its replicas)."""
        return {} if self.static else {r: self.limits[r] for r in LIMITED if r in self.limits}

    def allowed_disruptions(self, pool_nodes: int) -> int:
        b = self.budget
        if isinstance(b, str) and b.endswith("%"):
            return math.ceil(float(b[:-1]) / 100.0 * pool_nodes)
        return int(b)

    def node_labels(self, itype: str) -> dict:
        labels = dict(self.labels)
        labels[POOL_LABEL] = self.name
        labels[TYPE_LABEL] = itype
        return labels
