"""Placement rules as a table of cases: each row is one sentence a lesson could say.

Each case names a cluster, jobs, a stack and settings, and what must follow:
start and finish times, terminal states, deadlock, GPUs held idle at the end.
"""

from __future__ import annotations

import math

import pytest

import gangkit as gk
from gangkit import Job, PodSet, job, nodes

from conftest import check_times

NAN = math.nan


def fillers(n, gpus, run_time=1000):
    """``n`` one-pod jobs of ``gpus`` GPUs that occupy the cluster first."""
    return [job(f"fill-{i}", pods=1, gpus=gpus, run_time=run_time) for i in range(n)]


CASES = [
    # (id, nodes, jobs, settings, expected {job: (start, finish, state)}, extra expectations)
    ("pod-by-pod binds two of three workers and holds them idle",
     nodes(2, gpus=2), gk.scenarios.three_workers().jobs, dict(stack="pod"),
     {"Z": (0, 600, "Finished"), "X": (600, 900, "Finished"), "Y": (600, 900, "Finished")},
     dict(held_idle_gpu_seconds=1200.0)),
    ("gang with skip lets Y start at once while X waits whole",
     nodes(2, gpus=2), gk.scenarios.three_workers().jobs, dict(stack="gang", ordering="skip"),
     {"Z": (0, 600, "Finished"), "X": (600, 900, "Finished"), "Y": (60, 360, "Finished")},
     dict(held_idle_gpu_seconds=0.0)),
    ("gang with strict makes Y wait behind X",
     nodes(2, gpus=2), gk.scenarios.three_workers().jobs, dict(stack="gang", ordering="strict"),
     {"Z": (0, 600, "Finished"), "X": (600, 900, "Finished"), "Y": (600, 900, "Finished")},
     dict(held_idle_gpu_seconds=0.0)),
    ("pod-by-pod deadlocks two gangs that each take half",
     nodes(4, gpus=1), gk.scenarios.two_gangs_deadlock().jobs, dict(stack="pod"),
     {"A": (NAN, NAN, "Deadlocked"), "B": (NAN, NAN, "Deadlocked")},
     dict(deadlock=True, held_idle_gpus_at_end=4, deadlock_at_s=0.0)),
    ("gang runs the two gangs one after the other",
     nodes(4, gpus=1), gk.scenarios.two_gangs_deadlock().jobs, dict(stack="gang"),
     {"A": (0, 600, "Finished"), "B": (600, 1200, "Finished")},
     dict(deadlock=False, held_idle_gpus_at_end=0)),
    ("8 GPUs free on 8 different nodes refuse a gang of 2 pods x 4 GPUs",
     nodes(8, gpus=4), fillers(8, 3) + [job("big", pods=2, gpus=4, run_time=100, submit_time=1)], dict(stack="gang"),
     {"big": (1000, 1100, "Finished"), "fill-0": (0, 1000, "Finished")},
     dict(held_idle_gpu_seconds=0.0)),
    ("pod-by-pod finds no node for a 4-GPU pod among 8 one-GPU holes either",
     nodes(8, gpus=4), fillers(8, 3) + [job("big", pods=2, gpus=4, run_time=100, submit_time=1)], dict(stack="pod"),
     {"big": (1000, 1100, "Finished")}, {}),
    ("higher priority is placed first whatever the list order",
     nodes(1, gpus=1), [job("low", run_time=100), job("high", run_time=100, priority=10)], dict(stack="pod"),
     {"high": (0, 100, "Finished"), "low": (100, 200, "Finished")}, {}),
    ("equal priority goes by creation time",
     nodes(1, gpus=1), [job("second", run_time=100, submit_time=5), job("first", run_time=100)], dict(stack="pod"),
     {"first": (0, 100, "Finished"), "second": (100, 200, "Finished")}, {}),
    ("gang orders by priority too",
     nodes(1, gpus=2), [job("low", pods=2, run_time=100), job("high", pods=2, run_time=100, priority=1)], dict(stack="gang"),
     {"high": (0, 100, "Finished"), "low": (100, 200, "Finished")}, {}),
    ("LeastAllocated spreads two small pods, so a 2-GPU pod must wait",
     nodes(2, gpus=2), [job("a", run_time=100), job("b", run_time=100), job("pair", gpus=2, run_time=100, submit_time=1)],
     dict(stack="pod", scoring="LeastAllocated"),
     {"pair": (100, 200, "Finished")}, {}),
    ("MostAllocated packs two small pods, so a 2-GPU pod fits at once",
     nodes(2, gpus=2), [job("a", run_time=100), job("b", run_time=100), job("pair", gpus=2, run_time=100, submit_time=1)],
     dict(stack="pod", scoring="MostAllocated"),
     {"pair": (1, 101, "Finished")}, {}),
    ("a pod larger than every node is rejected at submission, not left hanging",
     nodes(2, gpus=8), [job("huge", gpus=16), job("ok", gpus=8, run_time=10)], dict(stack="pod"),
     {"huge": (NAN, NAN, "Rejected"), "ok": (0, 10, "Finished")}, dict(jobs_rejected=1)),
    ("the gang stack rejects the same oversized pod",
     nodes(2, gpus=8), [job("huge", gpus=16)], dict(stack="gang"),
     {"huge": (NAN, NAN, "Rejected")}, dict(jobs_rejected=1)),
    ("an independent batch job progresses pod by pod",
     nodes(2, gpus=1), [job("batch", pods=4, run_time=100, progress="independent")], dict(stack="pod"),
     {"batch": (0, 200, "Finished")}, dict(held_idle_gpu_seconds=0.0)),
    ("a gang larger than the cluster waits holding nothing and does not block others under skip",
     nodes(2, gpus=1), [job("too-big", pods=3, run_time=100), job("small", run_time=100, submit_time=1)], dict(stack="gang"),
     {"too-big": (NAN, NAN, "WaitingAtEnd"), "small": (1, 101, "Finished")}, dict(deadlock=False, held_idle_gpus_at_end=0)),
    ("under strict the same gang blocks everything behind it",
     nodes(2, gpus=1), [job("too-big", pods=3, run_time=100), job("small", run_time=100, submit_time=1)],
     dict(stack="gang", ordering="strict"),
     {"too-big": (NAN, NAN, "WaitingAtEnd"), "small": (NAN, NAN, "WaitingAtEnd")}, dict(deadlock=False)),
    ("minMember below the pod count lets a gang start partly, and a sync job then holds GPUs idle",
     nodes(2, gpus=1), [Job("elastic", [PodSet("workers", 3, 1)], run_time=100, min_member=2)], dict(stack="gang"),
     {"elastic": (NAN, NAN, "Deadlocked")}, dict(deadlock=True, held_idle_gpus_at_end=2)),
    ("the Volcano session aligns starts to its period",
     nodes(1, gpus=1), [job("a", run_time=10, submit_time=0.5)], dict(stack="gang", session_period=1.0),
     {"a": (1.0, 11.0, "Finished")}, {}),
    ("kube-scheduler reacts at once",
     nodes(1, gpus=1), [job("a", run_time=10, submit_time=0.5)], dict(stack="pod"),
     {"a": (0.5, 10.5, "Finished")}, {}),
    ("preemption evicts a strictly lower priority job, which restarts from zero",
     nodes(1, gpus=1), [job("low", run_time=100), job("high", run_time=50, priority=5, submit_time=10)],
     dict(stack="pod", preemption=True),
     {"high": (10, 60, "Finished"), "low": (0, 160, "Finished")}, {}),
    ("without preemption the high priority job waits",
     nodes(1, gpus=1), [job("low", run_time=100), job("high", run_time=50, priority=5, submit_time=10)],
     dict(stack="pod", preemption=False),
     {"high": (100, 150, "Finished"), "low": (0, 100, "Finished")}, {}),
    ("equal priority never preempts",
     nodes(1, gpus=1), [job("first", run_time=100), job("same", run_time=50, submit_time=10)],
     dict(stack="pod", preemption=True),
     {"same": (100, 150, "Finished")}, {}),
    ("a checkpoint keeps progress across a preemption",
     nodes(1, gpus=1), [job("low", run_time=100, checkpoint_interval=30), job("high", run_time=50, priority=5, submit_time=70)],
     dict(stack="pod", preemption=True),
     {"high": (70, 120, "Finished"), "low": (0, 160, "Finished")}, {}),
]


@pytest.mark.parametrize("nodes_, jobs, settings, expected, extra", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_placement_rule(nodes_, jobs, settings, expected, extra):
    result = gk.simulate(gk.Scenario(nodes_, jobs), **settings)
    check_times(result, expected)
    figures = result.summary()
    for key, want in extra.items():
        assert figures[key] == want, f"{key}: {figures[key]} != {want}"


def test_refused_gang_names_the_largest_free_block():
    sc = gk.Scenario(nodes(8, gpus=4), fillers(8, 3) + [job("big", pods=2, gpus=4, run_time=100, submit_time=1)])
    result = gk.simulate(sc, stack="gang", horizon=500)
    row = result.jobs.set_index("job").loc["big"]
    assert row["state"] == "WaitingAtEnd" and row["censored"]
    assert "gang of 2 cannot fit" in row["reason"] and "8 GPUs free" in row["reason"] and "largest free block 1" in row["reason"]


def test_preempted_job_counts_a_restart_and_an_eviction_event():
    sc = gk.Scenario(nodes(1, gpus=1), [job("low", run_time=100), job("high", run_time=50, priority=5, submit_time=10)])
    result = gk.simulate(sc, stack="pod", preemption=True)
    assert result.jobs.set_index("job").loc["low", "restarts"] == 1
    evicted = result.events[result.events.event == "evicted"]
    assert list(evicted.job) == ["low"] and "preempted by high-0" in evicted.iloc[0].detail


def test_preemption_evicts_the_whole_sync_job():
    # 'low' has two workers on two nodes; 'high' needs one node: evicting one worker stops both
    sc = gk.Scenario(nodes(2, gpus=1), [job("low", pods=2, run_time=100), job("high", run_time=10, priority=1, submit_time=5)])
    result = gk.simulate(sc, stack="pod", preemption=True)
    table = result.jobs.set_index("job")
    assert table.loc["high", "start_s"] == 5
    assert table.loc["low", "finish_s"] == 115  # restarted from zero at t=15, when both workers fit again


def test_deadlock_report_names_holders_nodes_and_waiting_pods():
    result = gk.simulate("two-gangs-deadlock", stack="pod")
    report = result.deadlock_report()
    assert "A holds 2 GPUs on node-0:1, node-2:1; waits for A-2, A-3" in report
    assert list(result.holders.job) == ["A", "B"]


def test_waits_split_by_layer_add_up():
    result = gk.simulate("three-workers", stack="pod")
    jobs = result.jobs
    assert (jobs.wait_unattributed_s == 0).all()
    assert (jobs.wait_placement_s == jobs.wait_s).all()


def test_timeline_accounts_for_every_gpu():
    result = gk.simulate("three-workers", stack="pod")
    t = result.timeline
    assert ((t.useful_gpus + t.held_idle_gpus + t.free_gpus + t.not_ready_gpus) == t.capacity_gpus).all()
    s = result.summary()
    assert s["useful_gpu_seconds"] + s["held_idle_gpu_seconds"] + s["free_gpu_seconds"] == s["capacity_gpu_seconds"]


def test_a_ready_partial_gang_yields_to_a_gang_not_yet_ready_even_under_strict():
    # Volcano's gang JobOrderFn puts jobs that are not ready first: j1 (minMember 1, one pod bound)
    # gets its other pods only after j2, which has none, is placed whole.
    nodes_ = [gk.Node(f"n{i}", 1) for i in range(6)]
    jobs = [Job("j0", [PodSet("w", 5, 1)], 1), Job("j1", [PodSet("w", 5, 1)], 1, min_member=1), Job("j2", [PodSet("w", 5, 1)], 1)]
    table = gk.simulate(gk.Scenario(nodes_, jobs), stack="gang", ordering="strict").jobs.set_index("job")
    assert table.loc["j2", "start_s"] == 1 and table.loc["j1", "start_s"] == 2
