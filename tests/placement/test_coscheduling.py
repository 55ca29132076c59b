"""The scheduler-plugins Coscheduling plugin, as a table of cases from its documented behaviour.

Each row is a sentence of ``docs/reference/coscheduling.md``: a cluster, jobs,
the plugin's settings, and what must follow (start times, terminal states,
GPU-seconds held idle while pods waited at Permit).
"""

from __future__ import annotations

import math

import pytest

import gangkit as gk
from gangkit import Scenario, job, nodes
from gangkit.placement.coscheduling import PERMIT_WAITING_TIME, REJECT_PERCENTAGE, Coscheduling
from gangkit.stacks import Stack

NAN = math.nan


def run(node_list, jobs, horizon=3600.0, **layer):
    sc = Scenario(node_list, jobs, name="case")
    return gk.simulate(sc, stack=Stack(Coscheduling(**layer), name="coscheduling"), horizon=horizon)


def blocker(gpus, run_time=10_000):
    return job("blocker", pods=1, gpus=gpus, run_time=run_time)


CASES = [
    # (id, nodes, jobs, layer settings, {job: (start, state)}, GPU-seconds held idle in the run, Permit releases)
    ("a group of 3 on a node with room for 3 is admitted at once",
     nodes(1, gpus=3), [job("g", pods=3, run_time=100)], {},
     {"g": (0, "Finished")}, 0.0, 0),
    ("a group of 4 on a node with room for 3 is rejected by PostFilter at once (25 % missing > 10 %): nothing held",
     nodes(1, gpus=3), [job("g", pods=4, run_time=100)], {},
     {"g": (NAN, "WaitingAtEnd")}, 0.0, 0),
    ("a group of 10 with room for 9 keeps its seats (10 % missing): each 60 s timeout frees them and the group "
     "takes them again at once, to the end of the run",
     nodes(1, gpus=9), [job("g", pods=10, run_time=100)], {},
     {"g": (NAN, "WaitingAtEnd")}, 9 * 3600.0, 3600 / PERMIT_WAITING_TIME),
    ("the PodGroup's scheduleTimeoutSeconds replaces the plugin's default: rounds of 30 s",
     nodes(1, gpus=9), [job("g", pods=10, run_time=100, schedule_timeout=30)], {},
     {"g": (NAN, "WaitingAtEnd")}, 9 * 3600.0, 3600 / 30),
    ("the plugin's permitWaitingTimeSeconds is the default timeout: rounds of 10 s",
     nodes(1, gpus=9), [job("g", pods=10, run_time=100)], {"permit_waiting_time": 10},
     {"g": (NAN, "WaitingAtEnd")}, 9 * 3600.0, 3600 / 10),
    ("with podGroupRejectPercentage 30 a group missing 1 of 4 keeps its seats, round after round",
     nodes(1, gpus=3), [job("g", pods=4, run_time=100)], {"reject_percentage": 30},
     {"g": (NAN, "WaitingAtEnd")}, 3 * 3600.0, 3600 / PERMIT_WAITING_TIME),
    ("a timeout frees the seats for a job queued behind the group (it sorts before the group's new failure time); "
     "short of 2 of 10 the group is rejected, and it holds its seats again once the job has finished",
     nodes(1, gpus=10), [blocker(1, run_time=1000), job("g", pods=10, run_time=100),
                         job("late", pods=1, run_time=100, submit_time=10)], {},
     {"late": (PERMIT_WAITING_TIME, "Finished"), "g": (1000, "Finished")},
     9 * PERMIT_WAITING_TIME + 9 * (1000 - PERMIT_WAITING_TIME - 100), 1 + (1000 - 160) // 60),
    ("a rejected group is tried again when capacity is freed, and then starts whole",
     nodes(1, gpus=4), [blocker(2, run_time=500), job("g", pods=4, run_time=100)], {},
     {"g": (500, "Finished")}, 0.0, 0),
    ("podGroupBackoffSeconds keeps a rejected group out until it expires, even when room appears earlier",
     nodes(1, gpus=4), [blocker(2, run_time=10), job("g", pods=4, run_time=100)], {"pod_group_backoff": 30},
     {"g": (30, "Finished")}, 0.0, 0),
    ("without a backoff the same group starts as soon as room appears",
     nodes(1, gpus=4), [blocker(2, run_time=10), job("g", pods=4, run_time=100)], {},
     {"g": (10, "Finished")}, 0.0, 0),
    ("minMember below the pod count: the group is permitted with 3, and a sync job then holds them for ever",
     nodes(1, gpus=3), [job("g", pods=4, run_time=100, min_member=3)], {},
     {"g": (NAN, "Deadlocked")}, None, None),
    ("a group's pods are sorted together: the first group takes the whole node, the second waits whole",
     nodes(1, gpus=4), [job("a", pods=4, run_time=100), job("b", pods=4, run_time=100)], {},
     {"a": (0, "Finished"), "b": (100, "Finished")}, 0.0, 0),
    ("higher priority first, whatever the creation order",
     nodes(1, gpus=4), [job("a", pods=4, run_time=100), job("b", pods=4, run_time=100, priority=5)], {},
     {"b": (0, "Finished"), "a": (100, "Finished")}, 0.0, 0),
    ("independent pods have no group: they are placed one by one",
     nodes(1, gpus=3), [job("batch", pods=4, run_time=100, progress="independent")], {},
     {"batch": (0, "Finished")}, 0.0, 0),
]


@pytest.mark.parametrize("node_list, jobs, layer, expected, held, releases", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_coscheduling_case(node_list, jobs, layer, expected, held, releases):
    r = run(node_list, jobs, **layer)
    rows = r.jobs.set_index("job")
    for name, (start, state) in expected.items():
        assert rows.loc[name, "state"] == state, rows.loc[name, "reason"]
        got = rows.loc[name, "start_s"]
        assert (math.isnan(got) and math.isnan(start)) or got == start, (name, got)
    if held is not None:
        assert r.figures["held_idle_gpu_seconds"] == pytest.approx(held)
    if releases is not None:
        assert (r.events.event == "released").sum() == releases


def test_the_documented_defaults():
    """permitWaitingTimeSeconds 60, podGroupRejectPercentage 10, podGroupBackoffSeconds 0 (apis/config/v1/defaults.go)."""
    layer = Coscheduling()
    assert (PERMIT_WAITING_TIME, REJECT_PERCENTAGE) == (60.0, 10)
    assert (layer.permit_waiting_time, layer.reject_percentage, layer.pod_group_backoff) == (60.0, 10.0, 0.0)


@pytest.mark.parametrize("stack", ["coscheduling", "kueue+coscheduling"])
def test_two_gangs_end_without_a_deadlock(stack):
    r = gk.simulate("two-gangs-deadlock", stack=stack)
    assert set(r.jobs.state) == {"Finished"}
    assert not r.deadlock and r.figures["jobs_deadlocked"] == 0


@pytest.mark.parametrize(
    "jobs, code, words",
    [
        ([job("g", pods=10, run_time=100)], "WaitingAtPermit", "9 of minMember 10 pods wait at Permit holding 9 GPUs"),
        ([job("g", pods=4, run_time=100)], "GangRejected", "was rejected at t=0 s"),
    ],
    ids=["waiting at Permit", "rejected by PostFilter"],
)
def test_a_waiting_group_says_why(jobs, code, words):
    sc = Scenario(nodes(1, gpus=9 if jobs[0].pod_count == 10 else 3), jobs, name="why")
    r = gk.simulate(sc, stack="coscheduling", horizon=30)
    reason = r.jobs.set_index("job").loc["g", "reason"]
    assert code in reason and words in reason


def test_pods_waiting_at_permit_are_released_not_evicted():
    """A Permit timeout gives the GPUs back without a restart (the job never ran), and the group takes them again."""
    sc = Scenario(nodes(1, gpus=9), [job("g", pods=10, run_time=100)], name="release")
    r = gk.simulate(sc, stack="coscheduling", horizon=90)
    assert list(r.events.event) == ["submitted"] + ["pod_bound"] * 9 + ["released"] + ["pod_bound"] * 9
    assert r.jobs.restarts.tolist() == [0]
    assert r.pods.state.value_counts().to_dict() == {"Released": 9, "Bound": 9}
    assert r.events.detail.iloc[10] == "9 of minMember 10 pods waited at Permit for 60 s; all rejected"
