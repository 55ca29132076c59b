"""kube-scheduler's scheduling queue (1.35) in the ``pod`` layer, as tables of cases.

The queue timestamp is refreshed at every failed attempt, backoff doubles
from 1 s to 10 s, higher priority goes first whatever the timestamps, and
the 5-minute flush of unschedulablePods reorders pods that wait apart.
"""

from __future__ import annotations

import math

import pytest

from gangkit import job, nodes
from gangkit.model.scenario import Scenario
from gangkit.placement.kube_scheduler import backing_off, backoff_end, backoff_seconds, first_flush, flushed
from gangkit.simulate import simulate


@pytest.mark.parametrize("count, seconds", [
    (0, 0.0), (1, 1.0), (2, 2.0), (3, 4.0), (4, 8.0), (5, 10.0), (9, 10.0),
], ids=[
    "a pod never tried has no backoff",
    "the first failure backs off 1 s",
    "the second doubles it to 2 s",
    "the third to 4 s",
    "the fourth to 8 s",
    "the fifth reaches the 10 s cap",
    "later failures stay at 10 s",
])
def test_backoff_doubles_to_10_s(count, seconds):
    assert backoff_seconds(count) == seconds


@pytest.mark.parametrize("ts, count, now, expected", [
    (10.4, 1, 11.0, True),   # ends at floor(11.4) = 11, not before the current second 11
    (10.4, 1, 12.0, False),
    (10.4, 3, 13.9, True),   # ends at floor(14.4) = 14
    (10.4, 3, 14.0, True),
    (10.4, 3, 15.0, False),
    (10.4, 0, 10.4, False),
], ids=[
    "backoff that ends within the current second still holds",
    "backoff that ended in an earlier second is over",
    "4 s after the third failure the pod still backs off",
    "in the second its backoff ends it still backs off",
    "a second later it is over",
    "a pod never tried does not back off",
])
def test_backing_off_uses_whole_second_windows(ts, count, now, expected):
    assert backing_off(ts, count, now) is expected
    assert backoff_end(ts, count) == math.floor(ts + backoff_seconds(count))


@pytest.mark.parametrize("ts, count, now, expected", [
    (0.0, 1, 329.0, (0.0, 1)),
    (0.0, 1, 330.0, (330.0, 2)),
    (0.0, 1, 659.0, (330.0, 2)),
    (0.0, 1, 660.0, (660.0, 3)),
    (29.0, 1, 330.0, (330.0, 2)),
    (30.0, 1, 359.0, (30.0, 1)),
    (30.0, 1, 360.0, (360.0, 2)),
], ids=[
    "no flush before the first tick more than 300 s later",
    "the tick at 330 s flushes a pod that failed at 0 s",
    "it is not flushed again for 330 s",
    "the next flush comes 330 s after the last",
    "pods that failed within the same 30 s are flushed at the same tick",
    "a pod that failed at 30 s is not due at 330 s",
    "it is flushed at 360 s",
])
def test_flush_of_pods_unschedulable_for_5_minutes(ts, count, now, expected):
    assert flushed(ts, count, now) == expected
    assert first_flush(ts) > ts + 300


def _starts(jobs, n_nodes=1, gpus=1, **settings):
    r = simulate(Scenario(nodes(n_nodes, gpus=gpus), jobs, name="queue"), stack="pod", **settings)
    return {row.job: row.start_s for row in r.jobs.itertuples()}


ORDER_CASES = [
    ("a pod put back after failing goes behind a pod created later",
     # early fails at 5 s and late at 35 s (no room); the flush retries early at 330 s (more than 300 s after 5 s),
     # it fails again and takes 330 s as its timestamp; late, due at 360 s, now goes first when blocker ends at 345 s
     [job("blocker", run_time=345), job("early", run_time=100, submit_time=5), job("late", run_time=100, submit_time=35)],
     ["blocker", "late", "early"]),
    ("without a flush between, the pod that failed first goes first",
     [job("blocker", run_time=300), job("early", run_time=100, submit_time=5), job("late", run_time=100, submit_time=35)],
     ["blocker", "early", "late"]),
    ("a higher-priority pod goes first regardless of timestamps",
     [job("blocker", run_time=300), job("early", run_time=100, submit_time=5),
      job("late-high", run_time=100, submit_time=35, priority=10)],
     ["blocker", "late-high", "early"]),
    ("pods that failed within the same 30-s flush window keep their order",
     [job("blocker", run_time=345), job("early", run_time=100, submit_time=1), job("late", run_time=100, submit_time=25)],
     ["blocker", "early", "late"]),
]


@pytest.mark.parametrize("jobs, order", [c[1:] for c in ORDER_CASES], ids=[c[0] for c in ORDER_CASES])
def test_queue_order(jobs, order):
    starts = _starts(jobs)
    assert sorted(starts, key=lambda j: starts[j]) == order


def _two_gangs(gap: float, free_at: float):
    """5 one-GPU nodes; filler F holds 3 until ``free_at``; gang A (4 x 1 GPU) at 1 s binds 2; gang B at 1 + gap."""
    jobs = [job("F", pods=3, run_time=free_at), job("A", pods=4, run_time=600, submit_time=1),
            job("B", pods=4, run_time=600, submit_time=1 + gap)]
    return simulate(Scenario(nodes(5, gpus=1), jobs, name="two-gangs-apart"), stack="pod").summary()["deadlock"]


@pytest.mark.parametrize("gap, free_at, deadlock", [
    (30, 200, False),
    (30, 345, True),
    (30, 375, False),
    (300, 345, True),
    (300, 645, False),
    (300, 675, True),
    (10, 345, False),
], ids=[
    "two jobs 30 s apart do not interleave when room frees before the first flush",
    "two jobs arriving 30 s apart interleave and deadlock when room frees between their flushes",
    "and do not once the later job's pods are flushed too",
    "5 minutes apart they deadlock just after the first job's flush",
    "but not in the 30 s after the second job's flush",
    "and again once the first job is flushed once more",
    "jobs whose pods are flushed at the same tick never swap",
])
def test_jobs_arriving_apart_can_interleave_and_deadlock(gap, free_at, deadlock):
    assert _two_gangs(gap, free_at) is deadlock


@pytest.mark.parametrize("gap, before, after, when", [
    (10, 0.0, 0.0, "-"),
    (30, 0.0, 0.5, "345"),
], ids=[
    "lesson 02's table: 10 s apart never deadlock",
    "lesson 02's table: 30 s apart deadlock only when room frees between the two flushes",
])
def test_lesson02_interleaving_table(gap, before, after, when):
    from gangkit.lessons import lesson02

    row = lesson02.interleaving(gaps=(gap,), free_at=(200, 345, 375)).loc[gap]
    assert (row["deadlock_share_before_330_s"], row["deadlock_share_after_330_s"],
            row["deadlocked_when_freed_at_s"]) == (before, after, when)
