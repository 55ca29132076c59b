"""Lesson 01's restart churn: the deadlock of two (or three) gangs when launchers give up their rendezvous."""

import pytest

from gangkit.lessons import lesson01


@pytest.fixture(scope="module")
def table():
    return lesson01.churn_table()


@pytest.mark.parametrize(
    "workload, launcher, failures, finished, failed, deadlock, makespan",
    [
        ("2 jobs", "no timeout", 0, 0, 0, True, 2592000.0),  # carried to the 30-day horizon
        ("2 jobs", "rendezvous timeout 600 s", 14, 0, 2, False, 2400.0),  # 7 failures each: both Jobs fail
        ("3 jobs", "no timeout", 0, 0, 0, True, 2592000.0),
        ("3 jobs", "rendezvous timeout 600 s", 19, 1, 2, False, 3600.0),  # A and C fail, B runs: luck, not a cure
    ],
)
def test_churn_table(table, workload, launcher, failures, finished, failed, deadlock, makespan):
    row = table.loc[(workload, launcher)]
    assert (row["pod_failures"], row["jobs_finished"], row["jobs_failed"], row["deadlock"], row["makespan_s"]) == (
        failures, finished, failed, deadlock, makespan)


def test_churn_wastes_every_gpu_of_the_two_gang_deadlock_until_the_jobs_fail(table):
    row = table.loc[("2 jobs", "rendezvous timeout 600 s")]
    assert row["held_idle_gpu_s"] == 4 * 2400.0
    assert row["by_failed_pods_gpu_s"] == 8400.0


def test_with_churn_sets_every_job():
    sc = lesson01.with_churn(lesson01.deadlock_scenario(), timeout=300.0, backoff_limit=2)
    assert {(j.rendezvous_timeout, j.backoff_limit) for j in sc.jobs} == {(300.0, 2)}
