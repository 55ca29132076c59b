"""How gangkit compares amounts and times: one tolerance, and one rule for period boundaries.

CPU requests are fractions of a core (a trace pod asks for 3.152 cores), and
a node's free CPU is what is left after many takes and gives, so it carries
rounding noise in its last bits: 4.0 - 3.152 + 3.152 need not be 4.0 again.
Times are sums of floats too (a session every 0.1 s reaches 0.30000000000000004).
gangkit allows :data:`TOLERANCE` wherever such a float is compared with a
limit: a pod fits when it asks for at most the free room plus the tolerance,
a timer is due when the clock is within the tolerance of it.

Memory and GPUs are whole numbers and compared exactly.
"""

from __future__ import annotations

import math

#: The slack allowed when a float amount (cores, seconds) is compared with a limit.
TOLERANCE = 1e-9
#: How far past a period boundary a clock may be, relative to the clock itself, and still be on it: a few
#: thousand rounding steps of a double, more than a run's sums of floats carry, and no duration a scenario names.
ROUNDING = 1e-12


def next_boundary(now: float, period: float) -> float:
    """The first multiple of ``period`` at or after ``now`` (``now`` itself when ``period`` is 0).

    A loop that runs every ``period`` seconds from time 0 (Volcano's
    scheduling session, cluster-autoscaler's scan) aligns its next run to
    this boundary. A clock that is a rounding step past a boundary is taken
    to be on it: within :data:`ROUNDING` of the clock's own size (and never
    more than :data:`TOLERANCE` periods), so a clock just after 0 is never on
    the boundary 0, whatever the period. The result is never before ``now``.

    >>> next_boundary(2.3, 1.0), next_boundary(3.0, 1.0), next_boundary(0.30000000000000004, 0.1), next_boundary(7.5, 0)
    (3.0, 3.0, 0.30000000000000004, 7.5)
    >>> next_boundary(1e-7, 600.0), next_boundary(600.0000001, 600.0), next_boundary(0.0, 600.0)
    (600.0, 1200.0, 0.0)
    """
    if not period:
        return now
    k = math.ceil(now / period)
    if k >= 1 and now - (k - 1) * period <= min(TOLERANCE * period, ROUNDING * now):
        return now
    return max(now, k * period)
