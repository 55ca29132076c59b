"""Capped exponential backoff: the same delays as base * 2**(n-1) capped, for any n, without overflow."""

import math

import pytest

from gangkit.kueue.objects import KueueConfig
from gangkit.kueue.pods_ready import backoff
from gangkit.model.backoff import doubling


@pytest.mark.parametrize(
    "base, n, cap, expected",
    [
        (60, 1, 3600, 60.0),
        (60, 2, 3600, 120.0),
        (60, 6, 3600, 1920.0),
        (60, 7, 3600, 3600.0),  # 3840 capped
        (60, 1000, 3600, 3600.0),
        (60, 10**12, 3600, 3600.0),  # a run long enough for a trillion requeues still has a delay
        (60.0, 2000, None, math.inf),  # no cap: beyond every float
        (10, 3, None, 40.0),
        (1, 1, 0, 0.0),  # a cap of 0 allows no wait
        (0, 50, 3600, 0.0),
    ],
)
def test_doubling(base, n, cap, expected):
    assert doubling(base, n, cap) == expected


@pytest.mark.parametrize("n", [1, 2, 5, 6, 7, 30, 60, 200, 1023, 1024, 1025])
def test_doubling_equals_the_naive_formula_where_that_does_not_overflow(n):
    naive = min(60.0 * 2 ** (n - 1), 3600.0) if n < 1000 else 3600.0
    assert doubling(60.0, n, 3600.0) == naive


def test_kueue_requeue_backoff_for_a_thousand_requeues_does_not_overflow():
    config = KueueConfig(backoff_base=60.0, backoff_max=3600.0)
    assert backoff(config, 1500) == 3600.0
    assert backoff(KueueConfig(backoff_base=60.0, backoff_max=0.0), 5) == 960.0  # backoffMaxSeconds 0: no cap
