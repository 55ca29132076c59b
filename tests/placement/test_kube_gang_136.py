"""Kubernetes 1.36's gang scheduling: the PodGroup scheduling cycle, next to 1.35's Permit barrier.

The rows follow the Kubernetes documentation of 1.36 ("PodGroup Scheduling",
"Gang Scheduling"): PreEnqueue holds a gang's pods until ``minCount`` of them
exist, as in 1.35; then, when the queue reaches the group, all its queued
pods are tried against one snapshot; at least ``minCount`` placed: they are
bound together (the rest wait to join them); fewer: nothing is bound, the
group goes back to the queue. Nothing waits at Permit, so nothing is held.
Each row runs both releases on the same input: the difference is the lesson.
"""

from __future__ import annotations

import math

import pytest

import gangkit as gk
from gangkit import Job, PodSet, Scenario, job, nodes
from gangkit.lessons import lesson02
from gangkit.model.errors import ScenarioError
from gangkit.placement.kube_gang import KubeGang

NAN = math.nan

CASES = [
    # (id, nodes, jobs, stack, {release: ({job: (start, state)}, GPU-seconds held idle)})
    ("two gangs created together: 1.35 interleaves them into a livelock; 1.36 places A whole, then B",
     nodes(4, gpus=1), gk.scenarios.two_gangs_deadlock().jobs, "kube-gang",
     {"1.35": ({"A": (NAN, "WaitingAtEnd"), "B": (NAN, "WaitingAtEnd")}, 4 * 10_000),
      "1.36": ({"A": (0, "Finished"), "B": (600, "Finished")}, 0.0)}),
    ("a gang that never fits: 1.35 holds what it got, round after round; 1.36 holds nothing",
     nodes(1, gpus=3), [job("g", pods=4, run_time=100)], "kube-gang",
     {"1.35": ({"g": (NAN, "WaitingAtEnd")}, 3 * 10_000), "1.36": ({"g": (NAN, "WaitingAtEnd")}, 0.0)}),
    ("three-workers: 1.36 keeps node-1 free for Y, and X starts when Z leaves",
     nodes(2, gpus=2), gk.scenarios.three_workers().jobs, "kube-gang",
     {"1.35": ({"X": (600, "Finished"), "Y": (300, "Finished"), "Z": (0, "Finished")}, 2 * 300 + 1 * 300),
      "1.36": ({"X": (600, "Finished"), "Y": (60, "Finished"), "Z": (0, "Finished")}, 0.0)}),
    ("minCount below the pod count: 3 of 4 pods fit, the group is bound with 3 and the fourth joins later",
     nodes(1, gpus=3), [Job("g", [PodSet("workers", 4, 1)], run_time=100, min_member=3, progress="independent"),
                        job("blocker", pods=1, gpus=1, run_time=50, submit_time=1)], "kube-gang",
     {"1.35": ({"g": (0, "Finished")}, 0.0), "1.36": ({"g": (0, "Finished")}, 0.0)}),
    ("PreEnqueue is the same in both: 3 of minCount 4 pods (Kueue admitted 3) are never tried",
     nodes(3, gpus=1), [Job("g", [PodSet("workers", 4, 1, min_count=3)], run_time=100, min_member=4)], "kueue+kube-gang",
     {"1.35": ({"g": (NAN, "WaitingAtEnd")}, 0.0), "1.36": ({"g": (NAN, "WaitingAtEnd")}, 0.0)}),
    ("CPU-only pods: 1.36 tries the group in cores as in GPUs (nothing held, ten pods of 1 cpu on 9 cores)",
     [gk.Node("n1", gpus=0, cpu=9.0)], [Job("g", [PodSet("workers", 10, 0, cpu=1.0)], run_time=100)], "kube-gang",
     {"1.35": ({"g": (NAN, "WaitingAtEnd")}, 0.0), "1.36": ({"g": (NAN, "WaitingAtEnd")}, 0.0)}),
]


@pytest.mark.parametrize("release", ["1.35", "1.36"])
@pytest.mark.parametrize("node_list, jobs, stack, expected", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_release_case(node_list, jobs, stack, expected, release):
    starts, held = expected[release]
    r = gk.simulate(Scenario(node_list, jobs, name="case"), stack=stack, horizon=10_000, kube_gang_release=release)
    rows = r.jobs.set_index("job")
    for name, (start, state) in starts.items():
        assert rows.loc[name, "state"] == state, rows.loc[name, "reason"]
        got = rows.loc[name, "start_s"]
        assert (math.isnan(got) and math.isnan(start)) or got == start, (name, got)
    assert r.figures["held_idle_gpu_seconds"] == pytest.approx(held)


def test_a_group_the_cycle_refuses_holds_nothing_and_says_why():
    sc = Scenario(nodes(1, gpus=3), [job("g", pods=4, run_time=100)], name="refused")
    r = gk.simulate(sc, stack="kube-gang", kube_gang_release="1.36", horizon=100)
    assert "pod_bound" not in set(r.events.event) and "released" not in set(r.events.event)
    reason = r.jobs.reason[0]
    assert reason.startswith("[placement] GangRejected: PodGroup g was rejected") and \
        "found nodes for 3 of minCount 4 pods; none bound (PodGroupScheduled=False, reason Unschedulable)" in reason


def test_a_refused_group_is_tried_again_when_capacity_frees_up():
    """A one-GPU job holds one of four GPUs until 500 s; the gang of 4 behind it starts then, not before."""
    sc = Scenario(nodes(1, gpus=4), [job("first", pods=1, run_time=500), job("g", pods=4, run_time=100, submit_time=1)],
                  name="retry")
    rows = gk.simulate(sc, stack="kube-gang", kube_gang_release="1.36").jobs.set_index("job")
    assert rows.loc["g", "start_s"] == 500.0


def test_lesson_02_contended_workload_holds_nothing_under_1_36():
    """The big gang waits, holding nothing, and starts no later than under 1.35, where it held GPUs for hours."""
    old = gk.simulate(lesson02.contended(), stack="kube-gang").jobs.set_index("job").loc["big"]
    new = gk.simulate(lesson02.contended(), stack="kube-gang", kube_gang_release="1.36").jobs.set_index("job").loc["big"]
    assert old.held_idle_gpu_s > 0 and new.held_idle_gpu_s == 0
    assert new.start_s <= old.start_s


@pytest.mark.parametrize("value", ["1.34", "1.37", 1.36])
def test_an_unknown_release_is_one_clear_error(value):
    with pytest.raises(ScenarioError) as info:
        gk.simulate(Scenario(nodes(1), [job("j")], name="bad"), stack="kube-gang", kube_gang_release=value)
    assert [(p.obj, p.field) for p in info.value.problems] == [("Simulation settings", "kube_gang_release")]


def test_the_layer_refuses_an_unknown_release():
    with pytest.raises(ScenarioError) as info:
        KubeGang(release="1.37")
    assert [(p.obj, p.field) for p in info.value.problems] == [("KubeGang", "release")]


def test_the_release_is_written_back_and_read():
    from gangkit.manifests import dump_manifests, load_manifests

    sc = Scenario(nodes(1, gpus=4), [job("g", pods=4, run_time=100)], name="rt").with_settings(
        stack="kube-gang", kube_gang_release="1.36")
    assert load_manifests(dump_manifests(sc)).settings.kube_gang_release == "1.36"
