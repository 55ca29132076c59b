"""Resources: the room a pod needs on one node, and vectors of amounts as Volcano compares them.

**Room.** A pod takes its GPUs, CPU and memory from one node, so the question
every scheduler, provisioner and reservation book asks is "does this pod fit
in this room?": the free GPUs, cores and bytes of one node (or of an empty
machine of some type). :class:`Room` is that room, with the one rule
(:meth:`Room.fits`): at most the free GPUs, at most the free cores (within
:data:`~gangkit.model.precision.TOLERANCE`), at most the free bytes; a
resource the node does not model (``None``) never stops a pod. A pod's node
selector is matched against a node's labels by :func:`labels_match`.

**Vectors.**

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
from collections.abc import Mapping
from dataclasses import dataclass

from gangkit.model.precision import TOLERANCE

DIMS = ("gpus", "cpu", "memory")
EPS = TOLERANCE  # an amount at most this is nothing (Resources.asked, is_empty)


@dataclass(eq=False)
class Room:
    """Free room on one node: GPUs, and cores and bytes where the node models them (``None``: not modelled).

    >>> r = Room(8, 16.0, None)
    >>> r.fits(4, 16.0, 2**40), r.fits(9, 0.0, 0)
    (True, False)
    >>> r.take(4, 15.5, 0); (r.free_gpus, r.free_cpu)
    (4, 0.5)
    """

    free_gpus: int
    free_cpu: float | None = None
    free_memory: int | None = None

    def fits(self, gpus: int, cpu: float = 0.0, memory: int = 0) -> bool:
        """The rule: at most the free GPUs, cores (within TOLERANCE) and bytes; an unmodelled resource never stops a pod."""
        return (gpus <= self.free_gpus
                and (not cpu or self.free_cpu is None or cpu <= self.free_cpu + TOLERANCE)
                and (not memory or self.free_memory is None or memory <= self.free_memory))

    def take(self, gpus: int, cpu: float = 0.0, memory: int = 0) -> None:
        """Take a pod's request out of the room (an unmodelled resource stays unmodelled)."""
        self.free_gpus -= gpus
        if self.free_cpu is not None:
            self.free_cpu -= cpu
        if self.free_memory is not None:
            self.free_memory -= memory

    def give(self, gpus: int, cpu: float = 0.0, memory: int = 0) -> None:
        """Give a pod's request back."""
        self.free_gpus += gpus
        if self.free_cpu is not None:
            self.free_cpu += cpu
        if self.free_memory is not None:
            self.free_memory += memory


def labels_match(labels: Mapping[str, str] | tuple, selector: tuple) -> bool:
    """True when every ``key=value`` of a pod's node selector is among the labels (a dict or sorted pairs).

    >>> labels_match({"zone": "a", "gpu": "h100"}, (("gpu", "h100"),)), labels_match((("zone", "a"),), (("zone", "b"),))
    (True, False)
    """
    if not selector:
        return True
    if not isinstance(labels, Mapping):
        labels = dict(labels)
    return all(labels.get(k) == v for k, v in selector)


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
