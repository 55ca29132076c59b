"""The default scheduler's GangScheduling plugin (Kubernetes 1.35 alpha), as a table of cases.

Rows follow KEP-4671 and the 1.35 plugin: PreEnqueue holds a gang's pods
until ``minCount`` of them exist; Permit holds placed pods until ``minCount``
are assumed or bound, for a fixed 5 minutes; pods are taken in the default
queue order, so gangs created together interleave.
"""

from __future__ import annotations

import math

import pytest

import gangkit as gk
from gangkit import Job, PodSet, Scenario, job, nodes
from gangkit.placement.kube_gang import SCHEDULING_TIMEOUT, KubeGang
from gangkit.stacks import Stack

NAN = math.nan

CASES = [
    # (id, nodes, jobs, stack, horizon, {job: (start, state)}, GPU-seconds held idle)
    ("two gangs created together interleave, each holds half, time out together and race again: a livelock "
     "(KEP-4671 lists scheduling livelocks among what the 1.35 alpha does not address)",
     nodes(4, gpus=1), gk.scenarios.two_gangs_deadlock().jobs, "kube-gang", 10_000,
     {"A": (NAN, "WaitingAtEnd"), "B": (NAN, "WaitingAtEnd")}, 4 * 10_000),
    ("a partly placed gang holds its GPUs at Permit for 300 s; at the timeout its unplaced pod takes one freed GPU "
     "and Y, queued behind it, the other; X waits again holding one, and starts when Z ends",
     nodes(2, gpus=2), gk.scenarios.three_workers().jobs, "kube-gang", 10_000,
     {"X": (600, "Finished"), "Y": (300, "Finished"), "Z": (0, "Finished")}, 2 * SCHEDULING_TIMEOUT + 1 * 300),
    ("a gang that fits is allowed as soon as its minCount-th pod reaches Permit",
     nodes(1, gpus=4), [job("g", pods=4, run_time=100)], "kube-gang", 10_000,
     {"g": (0, "Finished")}, 0.0),
    ("a gang that never fits holds what it got, round after round of 300 s, to the end of the run",
     nodes(1, gpus=3), [job("g", pods=4, run_time=100)], "kube-gang", 10_000,
     {"g": (NAN, "WaitingAtEnd")}, 3 * 10_000),
    ("PreEnqueue: with 3 of minCount 4 pods (Kueue admitted 3) none is scheduled, nothing is held",
     nodes(3, gpus=1), [Job("g", [PodSet("workers", 4, 1, min_count=3)], run_time=100, min_member=4)],
     "kueue+kube-gang", 10_000, {"g": (NAN, "WaitingAtEnd")}, 0.0),
    ("PreEnqueue passes once minCount pods exist: minCount 3 of the 3 pods Kueue admitted",
     nodes(3, gpus=1), [Job("g", [PodSet("workers", 4, 1, min_count=3)], run_time=100, min_member=3)],
     "kueue+kube-gang", 10_000, {"g": (0, "Finished")}, 0.0),
    ("a basic pod group (independent pods) is placed pod by pod",
     nodes(1, gpus=3), [job("batch", pods=4, run_time=100, progress="independent")], "kube-gang", 10_000,
     {"batch": (0, "Finished")}, 0.0),
]


@pytest.mark.parametrize("node_list, jobs, stack, horizon, expected, held", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_kube_gang_case(node_list, jobs, stack, horizon, expected, held):
    r = gk.simulate(Scenario(node_list, jobs, name="case"), stack=stack, horizon=horizon)
    rows = r.jobs.set_index("job")
    for name, (start, state) in expected.items():
        assert rows.loc[name, "state"] == state, rows.loc[name, "reason"]
        got = rows.loc[name, "start_s"]
        assert (math.isnan(got) and math.isnan(start)) or got == start, (name, got)
    assert r.figures["held_idle_gpu_seconds"] == pytest.approx(held)


def test_the_timeout_is_five_minutes_and_fixed():
    assert SCHEDULING_TIMEOUT == 300.0
    assert KubeGang().scheduling_timeout == 300.0


def test_pods_are_held_until_min_count_exist_and_say_so():
    sc = Scenario(nodes(3, gpus=1), [Job("g", [PodSet("workers", 4, 1, min_count=3)], run_time=100, min_member=4)], name="gate")
    r = gk.simulate(sc, stack="kueue+kube-gang", horizon=100)
    assert r.jobs.reason[0] == ("[placement] WaitingForPods: waiting for minCount pods from a gang to appear in "
                                "scheduling queue: 3 of minCount 4 pods exist")
    assert "pod_bound" not in set(r.events.event)


def test_timeout_releases_the_waiting_pods_every_300_s():
    """Each timeout frees the nodes, the group's unplaced pod is requeued by it, and the group holds them again."""
    sc = Scenario(nodes(1, gpus=3), [job("g", pods=4, run_time=100)], name="timeout")
    r = gk.simulate(sc, stack=Stack(KubeGang(), name="kube-gang"), horizon=1000)
    released = r.events[r.events.event == "released"]
    assert released.time_s.tolist() == [300.0, 600.0, 900.0]
    assert set(released.detail) == {"3 of minCount 4 pods waited at Permit for 300 s; all rejected"}
    assert r.jobs.restarts.tolist() == [0]


TWO_GANGS = [
    # (id, stack, jobs finished, stalled)
    ("alone, the two gangs livelock: no deadlock, but no progress in 30 days (the run is flagged stalled)",
     "kube-gang", 0, True),
    ("behind Kueue, whose quota matches the cluster, one gang is admitted at a time and both finish",
     "kueue+kube-gang", 2, False),
]


@pytest.mark.parametrize("stack, finished, stalled", [c[1:] for c in TWO_GANGS], ids=[c[0] for c in TWO_GANGS])
def test_two_gangs_without_a_deadlock(stack, finished, stalled):
    r = gk.simulate("two-gangs-deadlock", stack=stack)
    f = r.summary()
    assert not r.deadlock and f["jobs_deadlocked"] == 0
    assert (f["jobs_finished"], f["stalled"]) == (finished, stalled)


@pytest.mark.parametrize("stack", ["coscheduling", "yunikorn", "kube-gang", "kueue+coscheduling", "kueue+yunikorn",
                                   "kueue+kube-gang"])
def test_gpu_accounting_adds_up_while_gangs_hold_and_release(stack):
    """useful + held idle + free + not ready = capacity at every instant, and held idle is never negative."""
    from gangkit.lessons import lesson02

    r = gk.simulate(lesson02.contended(), stack=stack)
    tl = r.timeline
    total = tl.useful_gpus + tl.held_idle_gpus + tl.free_gpus + tl.not_ready_gpus
    assert (total == tl.capacity_gpus).all()
    assert (tl.held_idle_gpus >= 0).all() and (tl.free_gpus >= 0).all()
    f = r.figures
    assert f["useful_gpu_seconds"] + f["held_idle_gpu_seconds"] + f["free_gpu_seconds"] == pytest.approx(f["capacity_gpu_seconds"])
    assert r.jobs.held_idle_gpu_s.sum() == pytest.approx(f["held_idle_gpu_seconds"])
