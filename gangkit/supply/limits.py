"""The most a NodePool's limits let it launch: machines packed into a budget of GPUs, cores and bytes.

Picture a club that may spend at most 100 coins on drinks and carry at most
12 bottles home: whatever it buys must respect both purses at once, and a
bottle dearer than the whole coin purse is never bought at all. A Karpenter
NodePool's ``spec.limits`` are such purses: each ``nvidia.com/gpu``, ``cpu``
and ``memory`` limit bounds the summed *capacity* of the pool's nodes
(Karpenter v1.14 ``pkg/controllers/provisioning/scheduling/scheduler.go``,
``filterByRemainingResources``: an instance type whose capacity of a limited
resource is above what is left is not launched), and a type whose own
capacity is above a limit is never launched by that pool. How much the
machines bring (pods of some shape, GPUs) is then a knapsack:

- :func:`most_in_budget`: one budget (say 16 GPUs), machines of (size, value):
  the most value in whole machines, exactly up to :data:`DP_LIMIT` units,
  above that a continuous upper bound;
- :func:`most_within`: several budgets at once. Each limit is solved on its
  own and the smallest answer is kept: an *upper* bound (machines that fit
  every budget alone may not fit them all together), which is the side the
  callers need (``gangkit check`` calls a gang impossible only when even this
  bound is too small; Kueue's default quota covers at least what may come);
- :func:`most_gpus`: the GPUs a pool may bring: its GPU limit counted in
  full, lowered by its ``cpu`` and ``memory`` limits when it sets any (96
  cores of 8-GPU types of 96 cores: one node, 8 GPUs).

Amounts are read as exact decimals (``96.0`` cores, ``1.5`` cores), so
sums of cores carry no float error; a limit equal to the machines' total is
allowed, as Karpenter allows it. The callers decide which instance types a
pool may launch at all (:func:`gangkit.supply.karpenter.within` of its
capacity and the pool's limits).
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import reduce

from gangkit.model.quantity import format_memory
from gangkit.supply.cloud import GPU

__all__ = ["DP_LIMIT", "most_gpus", "most_in_budget", "most_within"]

DP_LIMIT = 200_000  # budget units counted exactly; above, a continuous bound


def most_in_budget(budget: float, options: list[tuple[int, float]]) -> float:
    """Unbounded knapsack: the most value in machines of (size, value each) within ``budget`` (whole sizes)."""
    options = [(g, k) for g, k in options if k > 0 and g <= budget]
    if not options:
        return 0.0
    if any(g == 0 or math.isinf(k) for g, k in options) or math.isinf(budget):
        return math.inf
    cap = int(budget)
    if cap > DP_LIMIT:
        return math.floor(cap * max(k / g for g, k in options))
    best = [0.0] * (cap + 1)
    for b in range(1, cap + 1):
        best[b] = max([best[b - 1]] + [best[b - g] + k for g, k in options if g <= b])
    return best[cap]


def _exact(x: float) -> Fraction:
    """A figure as the decimal it was written as: ``1.5`` is 3/2, ``0.1`` is 1/10."""
    return Fraction(x) if isinstance(x, int) else Fraction(repr(float(x)))


def _in_units(limit: float, options: list[tuple[float, float]]) -> float:
    """:func:`most_in_budget` for sizes of any kind (cores, bytes): sizes and budget in whole units of the sizes'
    greatest common divisor, so 150 cores with types of 96 and 48 is a budget of 3 units of 48."""
    options = [(_exact(size), v) for size, v in options if v > 0]
    if math.isinf(limit) or any(size == 0 for size, _ in options):
        return math.inf if options else 0.0
    if not options:
        return 0.0
    scale = reduce(math.lcm, (size.denominator for size, _ in options), 1)
    unit = Fraction(reduce(math.gcd, (int(size * scale) for size, _ in options)), scale)
    return most_in_budget(math.floor(_exact(limit) / unit), [(int(size / unit), v) for size, v in options])


def most_within(limits: dict, options: list[tuple[dict, float]]) -> float:
    """The most value of machines within every limit, each limit taken on its own (an upper bound).

    ``limits``: resource -> amount (GPUs, cores, bytes); ``options``: (capacity per resource, value) of each
    machine the pool may launch, a type whose capacity is above a limit already left out. No limit: ``inf``
    when some machine brings anything, else 0. GPUs are whole and packed as they are; cores and bytes in units
    of their sizes' greatest common divisor.
    """
    positive = [(cap, v) for cap, v in options if v > 0]
    if not limits:
        return math.inf if positive else 0.0
    best = math.inf
    for resource, limit in limits.items():
        sizes = [(cap[resource], v) for cap, v in positive]
        best = min(best, most_in_budget(limit, sizes) if resource == GPU else _in_units(limit, sizes))
    return best


def most_gpus(limits: dict, capacities: list[dict]) -> float:
    """The most GPUs a dynamic pool with these limits may bring, of machines of these capacities (the types it may
    launch): its ``nvidia.com/gpu`` limit (``inf`` without one), lowered to the most GPUs within its ``cpu`` and
    ``memory`` limits when it sets any."""
    gpus = limits.get(GPU, math.inf)
    other = {r: v for r, v in limits.items() if r != GPU}
    return min(gpus, most_within(other, [(c, c[GPU]) for c in capacities])) if other else gpus


def _amount(resource: str, value) -> str:
    return format_memory(int(value)) if resource == "memory" else f"{value:g}"


def at_limit(resource: str, used, limit, smallest) -> str:
    """A pool's usage of one resource against its limit, in words (Karpenter's ``launch_blocked``): ``smallest``
    is the smallest capacity of that resource among the instance types that hold the pods (None: not known)."""
    if resource == GPU:
        return f"at {used} of its {limit:g}-GPU limit"
    words = f"at {_amount(resource, used)} of its {_amount(resource, limit)} {resource} limit (spec.limits.{resource}"
    if smallest is not None:
        words += (f": {_amount(resource, max(0, limit - used))} left, the smallest instance type that holds these "
                  f"pods has {_amount(resource, smallest)}")
    return words + ")"
