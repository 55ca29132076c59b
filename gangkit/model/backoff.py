"""Exponential backoff, capped: the delay before the n-th retry.

Kueue's requeuing (``backoffBaseSeconds`` doubling up to ``backoffMaxSeconds``), Kueue's
ProvisioningRequest retries, and cluster-autoscaler's node-group and ProvisioningRequest backoffs
all wait ``base * 2**(n-1)`` seconds before the n-th retry, at most ``cap``. Computed naively, the
power overflows a float after about a thousand retries (a gang no node can hold, requeued for a
long run); here the cap is applied *before* the power is taken, so any ``n`` is safe and the cost
does not grow with ``n``.
"""

from __future__ import annotations

import math

#: Doublings beyond which any positive float base exceeds every finite float.
_MAX_DOUBLINGS = 1100


def doubling(base: float, n: int, cap: float | None = None) -> float:
    """``base * 2**(n-1)`` seconds, at most ``cap`` (None: no cap), for the n-th retry (n >= 1).

    >>> doubling(60, 1, 3600), doubling(60, 3, 3600), doubling(60, 10**9, 3600)
    (60.0, 240.0, 3600.0)
    """
    base = float(base)
    n = max(int(n), 1)
    limit = math.inf if cap is None else float(cap)
    if base <= 0.0 or limit <= 0.0:
        return max(min(base, limit), 0.0)
    if n - 1 >= _MAX_DOUBLINGS or (math.isfinite(limit) and n - 1 >= math.log2(limit / base) + 1):
        return limit
    return min(base * 2.0 ** (n - 1), limit)
