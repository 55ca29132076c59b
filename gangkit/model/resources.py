"""Resource vectors as Volcano's scheduler compares them: GPUs, CPU and memory side by side.

A queue's budget, a PodGroup's ``minResources`` and a node's free room are
each a *vector* of amounts, one per resource (``nvidia.com/gpu``, ``cpu``,
``memory``), like a shopping list checked line by line against a pantry.
Volcano's ``api.Resource`` compares them dimension by dimension; the rules
gangkit models (Volcano ``pkg/scheduler/api/resource_info.go``):

- ``a.fits_in(b, dims)``: every dimension the request asks for (``dims``, or
  every dimension where ``a`` is above zero) is at most ``b``'s
  (``LessEqualWithDimension``: a resource nobody asked for is not compared);
- ``a - b`` never goes below zero (``ExceededPart``); ``a + b`` and
  ``a * f`` are plain arithmetic.

A dimension that is not modelled (a node without ``cpu`` in its
allocatable, say) is infinite: it never limits anything. GPUs are whole
numbers in manifests but floats here, because a proportional share of 5
GPUs between two queues is 2.5 each, as in Volcano.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

DIMS = ("gpus", "cpu", "memory")
EPS = 1e-9


@dataclass(frozen=True)
class Resources:
    """GPUs, CPU cores and memory bytes (``math.inf`` where a resource is not modelled)."""

    gpus: float = 0.0
    cpu: float = 0.0
    memory: float = 0.0

    def __add__(self, other: "Resources") -> "Resources":
        return Resources(self.gpus + other.gpus, self.cpu + other.cpu, self.memory + other.memory)

    def __sub__(self, other: "Resources") -> "Resources":
        """The part of ``self`` above ``other``, dimension by dimension (never below zero)."""
        return Resources(*(_minus(a, b) for a, b in zip(self, other)))

    def __mul__(self, factor: float) -> "Resources":
        return Resources(*(a * factor for a in self))

    def __iter__(self):
        return iter((self.gpus, self.cpu, self.memory))

    def minimum(self, other: "Resources") -> "Resources":
        return Resources(*(min(a, b) for a, b in zip(self, other)))

    def maximum(self, other: "Resources") -> "Resources":
        return Resources(*(max(a, b) for a, b in zip(self, other)))

    def asked(self) -> tuple[str, ...]:
        """The dimensions this request asks for (above zero)."""
        return tuple(d for d, a in zip(DIMS, self) if a > EPS)

    def fits_in(self, limit: "Resources", dims: tuple[str, ...] | None = None) -> bool:
        """At most ``limit`` in every dimension of ``dims`` (default: the dimensions ``self`` asks for)."""
        dims = self.asked() if dims is None else dims
        return all(getattr(self, d) <= getattr(limit, d) + _tol(getattr(limit, d)) for d in dims)

    def all_at_most(self, other: "Resources") -> bool:
        """At most ``other`` in every dimension (Volcano's ``LessEqual`` with zero as the default)."""
        return all(a <= b + _tol(b) for a, b in zip(self, other))

    def is_empty(self) -> bool:
        return all(a <= EPS for a in self)

    def short(self) -> str:
        """``4 GPUs, 8 cpu, 16Gi`` for messages (dimensions that are zero or unmodelled are left out)."""
        parts = []
        if self.gpus and math.isfinite(self.gpus):
            parts.append(f"{self.gpus:g} GPUs")
        if self.cpu and math.isfinite(self.cpu):
            parts.append(f"{self.cpu:g} cpu")
        if self.memory and math.isfinite(self.memory):
            parts.append(f"{self.memory / 2**30:g}Gi memory")
        return ", ".join(parts) or "nothing"


ZERO = Resources()
INFINITE = Resources(math.inf, math.inf, math.inf)


def pod_resources(pod_set) -> Resources:
    """One pod's request as a vector."""
    return Resources(float(pod_set.gpus), float(pod_set.cpu), float(pod_set.memory))


def _minus(a: float, b: float) -> float:
    if math.isinf(a):
        return a if not (math.isinf(b) and b > 0) else 0.0
    return max(0.0, a - b)


def _tol(x: float) -> float:
    return EPS * max(1.0, abs(x)) if math.isfinite(x) else 0.0
