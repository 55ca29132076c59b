"""Restart churn (gangkit.engine.churn): rendezvous timeouts fail started pods, the Job controller replaces them.

Rules (docs/reference/simulator.md, "Restart churn"): a started pod of a sync job with a
``rendezvous_timeout`` fails when it has waited that long and its job's pods are not all
running; the Job controller counts it, creates the missing pods again together after
min(10 s x 2**(n-1), 600 s) from the n-th failure, and fails the Job (BackoffLimitExceeded)
once more pods failed than ``backoff_limit``. Off by default: without a timeout every run is
exactly as before.
"""

from __future__ import annotations

import dataclasses
import math

import pandas as pd
import pytest

import gangkit as gk
from gangkit import Node, Scenario, job
from gangkit.engine.churn import backoff_delay
from gangkit.manifests import load_manifests
from gangkit.manifests.core_dump import job_manifest
from gangkit.model.jobs import validate_jobs
from gangkit.model.nodes import nodes
from gangkit.placement.yunikorn import YuniKorn
from gangkit.stacks import Stack
from gangkit.supply.cloud import InstanceType, Stages
from gangkit.supply.karpenter import Karpenter, NodePool
from gangkit.workloads import scenarios

from builders import gang, gpu_nodes, simulate_on

NAN = math.nan
CHURN_FIGURES = ("jobs_failed", "pod_failures", "failed_pod_gpu_seconds")


def two_gangs(**per_job) -> Scenario:
    """The two-gangs deadlock (4 one-GPU nodes; A and B, 4 sync workers each, submitted together), with
    ``per_job[name]`` settings on each job (``{"A": {...}, "B": {...}}``) or one dict for both (key ``"*"``)."""
    sc = scenarios.two_gangs_deadlock()
    both = per_job.get("*", {})
    return dataclasses.replace(sc, jobs=[dataclasses.replace(j, **{**both, **per_job.get(j.name, {})}) for j in sc.jobs])


def churned(**kw) -> Scenario:
    return two_gangs(**{"*": {"rendezvous_timeout": 600.0, "backoff_limit": 6}, **kw})


def events(result, kind: str, name: str) -> list[float]:
    ev = result.events
    return [float(t) for t in ev[(ev.event == kind) & (ev.job == name)].time_s]


def rows(result):
    return result.jobs.set_index("job")


# -- the two-gangs deadlock under the plain kube-scheduler ---------------------------------------
# Derivation (stack "pod", timeout 600 s, backoffLimit 6 on both jobs). At t=0 the pods are created
# interleaved, A-0 B-0 A-1 B-1 A-2 B-2 A-3 B-3, and kube-scheduler binds the first four: A and B hold
# two nodes each, their other two pods wait. At 600 the four bound pods have waited 600 s: A-0, B-0,
# A-1, B-1 fail (A and B: failures 1 and 2; the second failure sets the creation at 600 + 20 = 620).
# The same instant's cycle binds the four pods that waited since t=0 (A-2 B-2 A-3 B-3): 2 + 2 again.
# At 620, B-0, B-1 are created again and wait. At 1200, B-2, B-3 fail (failures 3
# and 4: creation at 1200 + 80 = 1280) and the pods created at 620 take the nodes (A's first: created
# first); at 1800 failures 5 and 6 (creation at 1800 + 320 = 2120); at 2400 the first failing pod of
# each job is its 7th failure, 7 > 6: A and B are Failed, their other pods deleted. Nobody ever ran.
PAIRS = [600.0, 600.0, 1200.0, 1200.0, 1800.0, 1800.0]
DEADLOCK = [
    # (id, job, its pod failures, its pods created again, its state, when it failed)
    ("A: two bound pods fail together every 600 s; the 7th failure (backoffLimit 6) fails the Job at 2400 s",
     "A", PAIRS + [2400.0], [620.0, 620.0, 1280.0, 1280.0, 2120.0, 2120.0], "Failed", 2400.0),
    ("B: the mirror image of A, one event later at each instant", "B", PAIRS + [2400.0],
     [620.0, 620.0, 1280.0, 1280.0, 2120.0, 2120.0], "Failed", 2400.0),
]


@pytest.mark.parametrize("name, failures, created, state, failed_at", [c[1:] for c in DEADLOCK],
                         ids=[c[0] for c in DEADLOCK])
def test_the_two_gangs_deadlock_becomes_restart_churn(name, failures, created, state, failed_at):
    r = gk.simulate(churned(), stack="pod")
    assert events(r, "pod_failed", name) == failures
    assert events(r, "pod_created", name) == created
    row = rows(r).loc[name]
    assert (row.state, row.failed_s, row.pod_failures) == (state, failed_at, len(failures))
    assert row.reason.startswith("[job-controller] BackoffLimitExceeded: Job has reached the specified backoff limit")
    assert math.isnan(row.start_s) and row.censored and row.wait_s == failed_at


# The whole run: 4 GPUs held idle from 0 to 2400 s (9600 GPU-s, all of the capacity). Of it, the 14
# pods that failed held 14 x 600 = 8400; the rest is the pod of each job still bound, deleted at 2400.
FIGURES = [
    ("both jobs fail; nothing finishes", {"jobs_failed": 2, "jobs_finished": 0, "pod_failures": 14}),
    ("every GPU-second was held idle; 8400 of the 9600 by pods that then failed",
     {"held_idle_gpu_seconds": 9600.0, "failed_pod_gpu_seconds": 8400.0, "useful_gpu_seconds": 0.0}),
    ("the run ends with the second failure: neither a deadlock nor a stall",
     {"makespan_s": 2400.0, "deadlock": False, "stalled": False, "held_idle_gpus_at_end": 0}),
]


@pytest.mark.parametrize("expected", [c[1] for c in FIGURES], ids=[c[0] for c in FIGURES])
def test_the_churn_in_the_summary(expected):
    f = gk.simulate(churned(), stack="pod").summary()
    assert {k: f[k] for k in expected} == expected


def test_churn_is_not_a_stall_even_with_a_short_stall_window():
    """No job starts for 2400 s, but every pod failure moves a job towards its end."""
    assert gk.simulate(churned(), stack="pod", stall_window=700).figures["stalled"] is False


# When the settings differ, one job gives up first and the other takes the GPUs.
ASYMMETRIC = [
    # (id, per-job settings, {job: (state, start_s, finish_s, pod failures)})
    ("A with backoffLimit 0 fails at its first failure (A-0 at 600 s; A-1 is deleted); B-0 and B-1 fail at the "
     "same instant, B-2 and B-3 take the freed nodes, B-0 and B-1 come back at 620: B runs 620-1220",
     {"A": {"backoff_limit": 0}}, {"A": ("Failed", NAN, NAN, 1), "B": ("Finished", 620.0, 1220.0, 2)}),
    ("A with backoffLimit 2: at 1200 its 3rd failure fails it; B's pods created at 620 take two nodes, its "
     "3rd and 4th failed pods come back at 1200 + 80: B runs 1280-1880",
     {"A": {"backoff_limit": 2}}, {"A": ("Failed", NAN, NAN, 3), "B": ("Finished", 1280.0, 1880.0, 4)}),
    ("backoffLimit 0 on both: the first failure of each fails it, at 600 s",
     {"*": {"rendezvous_timeout": 600.0, "backoff_limit": 0}}, {"A": ("Failed", NAN, NAN, 1), "B": ("Failed", NAN, NAN, 1)}),
]


def _same(a, b) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == b


@pytest.mark.parametrize("settings, expected", [c[1:] for c in ASYMMETRIC], ids=[c[0] for c in ASYMMETRIC])
def test_the_deadlock_breaks_by_chance_when_the_jobs_differ(settings, expected):
    t = rows(gk.simulate(churned(**settings), stack="pod"))
    for name, (state, start, finish, failures) in expected.items():
        row = t.loc[name]
        assert row.state == state and row.pod_failures == failures, (name, row.state, row.reason)
        assert _same(row.start_s, start) and _same(row.finish_s, finish), (name, row.start_s, row.finish_s)


# -- the backoff ----------------------------------------------------------------------------------
DELAYS = [
    # (failures, seconds): 10 s doubling, cut at the controller's MaxJobPodFailureBackOff (10 min)
    (1, 10.0), (2, 20.0), (3, 40.0), (4, 80.0), (5, 160.0), (6, 320.0), (7, 600.0), (8, 600.0), (10**15, 600.0),
    (0, 0.0),
]


@pytest.mark.parametrize("failures, seconds", DELAYS, ids=[f"failure {n}" for n, _ in DELAYS])
def test_backoff_delay(failures, seconds):
    assert backoff_delay(failures) == seconds


def test_the_backoff_reaches_its_cap_in_a_run():
    """One node, a job of two one-GPU pods: one binds, the other waits. Each time the bound pod fails
    (600 s after its bind) the waiting one takes the node at once, so a failure comes every 600 s; each
    failed pod is created again after the backoff: 10, 20, ..., 320, then 600 (capped: not 640, 1280).
    The 9th failure is past backoffLimit 8."""
    r = simulate_on(gpu_nodes(1, gpus=1), [gang("lone", 2, 1, rendezvous_timeout=600, backoff_limit=8)], stack="pod")
    failed, created = events(r, "pod_failed", "lone"), events(r, "pod_created", "lone")
    assert failed == [600.0 * k for k in range(1, 10)]
    assert [c - f for f, c in zip(failed, created)] == [10.0, 20.0, 40.0, 80.0, 160.0, 320.0, 600.0, 600.0]
    assert rows(r).loc["lone", "state"] == "Failed" and rows(r).loc["lone", "failed_s"] == 5400.0


# -- when no clock runs out -------------------------------------------------------------------------
def _without_churn_columns(result) -> pd.DataFrame:
    return result.jobs.drop(columns=["pod_failures", "failed_s", "failed_pod_gpu_s"])


NEVER = [
    # (id, stack, scenario settings)
    ("Volcano places whole gangs: A runs, then B", "gang", {}),
    ("coscheduling: A's group is complete at Permit, B waits whole", "coscheduling", {}),
    ("kube-gang: likewise", "kube-gang", {}),
    ("YuniKorn: A's placeholders are all allocated, B's none", "yunikorn", {}),
    ("Kueue's quota lets one job in at a time, in front of pod-by-pod placement", "kueue+pod", {}),
]


@pytest.mark.parametrize("stack, settings", [c[1:] for c in NEVER], ids=[c[0] for c in NEVER])
def test_jobs_whose_pods_start_together_never_fail(stack, settings):
    with_timeout = gk.simulate(churned(), stack=stack)
    without = gk.simulate(two_gangs(), stack=stack)
    assert with_timeout.figures["pod_failures"] == 0 and list(with_timeout.jobs.pod_failures) == [0, 0]
    assert {k: v for k, v in with_timeout.figures.items() if k not in CHURN_FIGURES} == without.figures
    pd.testing.assert_frame_equal(_without_churn_columns(with_timeout), without.jobs)
    for name in ("pods", "events", "timeline"):
        pd.testing.assert_frame_equal(getattr(with_timeout, name), getattr(without, name))


def test_a_job_that_arrives_alone_starts_before_its_clocks_run_out():
    """One after another (lesson 01's other arrival): A's four pods bind at 0 and it runs; B waits whole."""
    r = gk.simulate(churned(B={"submit_time": 1.0}), stack="pod")
    assert r.figures["pod_failures"] == 0 and list(r.jobs.state) == ["Finished", "Finished"]


OFF = [
    # (id, per-job settings): runs that must be exactly today's
    ("no timeout: today's deadlock, whatever the backoffLimit", {"*": {"backoff_limit": 0}}),
    ("a timeout on independent jobs does nothing: their pods wait for nobody",
     {"*": {"rendezvous_timeout": 60.0, "progress": "independent"}}),
]


@pytest.mark.parametrize("settings", [c[1] for c in OFF], ids=[c[0] for c in OFF])
def test_without_a_sync_timeout_a_run_is_todays(settings):
    base = two_gangs(**{"*": {k: v for k, v in settings["*"].items() if k == "progress"}})
    got, today = gk.simulate(two_gangs(**settings), stack="pod"), gk.simulate(base, stack="pod")
    assert got.figures == today.figures and "pod_failures" not in got.figures
    for name in ("jobs", "pods", "events", "timeline", "holders"):
        pd.testing.assert_frame_equal(getattr(got, name), getattr(today, name))


def test_the_lean_engine_leaves_runs_with_a_timeout_to_the_general_engine():
    """One-pod jobs never wait for a sibling: the same figures, from the general engine (churn columns)."""
    jobs = [job(f"j{i}", pods=1, gpus=1, run_time=100, submit_time=10 * i) for i in range(6)]
    plain = Scenario(nodes(2, gpus=1), jobs, name="one-pod")
    timed = dataclasses.replace(plain, jobs=[dataclasses.replace(j, rendezvous_timeout=30.0) for j in jobs])
    a, b = gk.simulate(plain, stack="gang", record="jobs"), gk.simulate(timed, stack="gang", record="jobs")
    assert "pod_failures" in b.jobs and b.figures["pod_failures"] == 0
    assert {k: v for k, v in b.figures.items() if k not in CHURN_FIGURES} == a.figures


# -- Kueue without a gang layer, nodes slower than the timeout ------------------------------------
# A 3-GPU node exists; job g has 4 one-GPU pods. Three bind at 0, the fourth waits for a node Karpenter
# launches at 1 s (its 1 s batch window), ready at 1 + 60 + 840 = 901. At 600 the three bound pods fail
# (failures 1-3: creation at 600 + 40 = 640) and the waiting pod takes one of the freed GPUs; at 640 two of
# the three new pods bind on n0, the third waits for the new node. At 901 it binds there: all four run,
# 901-1501. No failure after the first three (backoffLimit 6). Held idle: 3 x 600 (the failed pods) +
# 301 (the fourth pod, 600-901) + 2 x 261 (two new pods, 640-901) = 2623 GPU-s.
SLOW_NODES = [
    ("pod by pod, Karpenter behind", "pod+karpenter"),
    ("Kueue in front: its quota admits the job at once, and changes nothing after", "kueue+pod+karpenter"),
]


def slow_karpenter() -> Karpenter:
    pool = NodePool("gpu", ["g4"], consolidate_after=30.0, budget="100%")
    return Karpenter([pool], [InstanceType("g4", 4, 4.0)], stages=Stages(registered=60, initialized=840))


@pytest.mark.parametrize("stack", [c[1] for c in SLOW_NODES], ids=[c[0] for c in SLOW_NODES])
def test_started_pods_that_wait_for_a_slow_node_fail_and_come_back(stack):
    r = simulate_on([Node("n0", 3)], [gang("g", 4, 1, run_time=600, rendezvous_timeout=600)], stack=stack,
                    horizon=5000, karpenter=slow_karpenter(), name="slow-nodes")
    assert events(r, "pod_failed", "g") == [600.0] * 3 and events(r, "pod_created", "g") == [640.0] * 3
    row = rows(r).loc["g"]
    assert (row.state, row.start_s, row.finish_s) == ("Finished", 901.0, 1501.0)
    assert (row.failed_pod_gpu_s, row.held_idle_gpu_s) == (1800.0, 2623.0)


# -- a placement layer that holds bound pods before their start -------------------------------------
class YuniKornStart(YuniKorn):
    """YuniKorn answering the optional ``started``: placeholders are not the real pods."""

    def started(self, js) -> bool:
        app = self.apps.get(js.index)
        return app is None or app.phase != "Accepted"


class YuniKornBound(YuniKorn):
    """YuniKorn answering as a layer that binds only running pods would (the socket's default)."""

    def started(self, js) -> bool:
        return True


# 3 one-GPU nodes, job g of 4 one-GPU pods: 3 placeholders are allocated at 0 and wait for the 4th, which
# never fits; YuniKorn releases them at its 900 s placeholder timeout (Soft) and places the real pods one
# by one: 3 bind at 900. Their clocks start then, not at 0: they fail at 1500.
HELD = [
    ("a layer that says its placeholders have not started: the clocks start with the real pods",
     YuniKornStart, [1500.0] * 3),
    ("a layer that answers True: the placeholders count as started pods (keep the timeout above the hold)",
     YuniKornBound, [600.0] * 3),
]


@pytest.mark.parametrize("layer, failures", [c[1:] for c in HELD], ids=[c[0] for c in HELD])
def test_pods_held_before_their_start_start_their_clocks_later(layer, failures):
    r = simulate_on(gpu_nodes(3, gpus=1), [gang("g", 4, 1, rendezvous_timeout=600, backoff_limit=2)],
                    stack=Stack(layer(), name="yunikorn"), horizon=4000)
    assert events(r, "pod_failed", "g") == failures


# -- input ------------------------------------------------------------------------------------------
BAD = [
    # (id, job settings, field named, words of the message)
    ("a negative timeout", {"rendezvous_timeout": -5}, "rendezvous_timeout", "expected seconds > 0"),
    ("a zero timeout (leave it out to wait for ever)", {"rendezvous_timeout": 0}, "rendezvous_timeout",
     "expected seconds > 0"),
    ("an infinite timeout", {"rendezvous_timeout": math.inf}, "rendezvous_timeout", "expected seconds > 0"),
    ("a negative backoffLimit", {"backoff_limit": -1}, "backoff_limit", "expected a whole number of failed pods >= 0"),
    ("a backoffLimit that is not whole", {"backoff_limit": 2.5}, "backoff_limit", "expected a whole number"),
    ("a backoffLimit that is a bool", {"backoff_limit": True}, "backoff_limit", "expected a whole number"),
]


@pytest.mark.parametrize("settings, field, words", [c[1:] for c in BAD], ids=[c[0] for c in BAD])
def test_bad_churn_settings_are_refused_by_name(settings, field, words):
    with pytest.raises(gk.ScenarioError) as e:
        validate_jobs([job("train", pods=2, **settings)])
    assert [(p.obj, p.field) for p in e.value.problems] == [("Job train", field)]
    assert words in str(e.value)


def manifest(annotations: dict | None = None, **spec) -> str:
    import yaml

    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n0"},
            "status": {"allocatable": {"nvidia.com/gpu": "4"}}}
    job_doc = {"apiVersion": "batch/v1", "kind": "Job",
               "metadata": {"name": "train", "annotations": {"gangkit/run-time": "10m", **(annotations or {})}},
               "spec": {"parallelism": 2, **spec, "template": {"spec": {"restartPolicy": "Never", "containers": [
                   {"name": "w", "image": "trainer:1", "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}}}}
    return yaml.safe_dump_all([node, job_doc])


READ = [
    # (id, annotations, spec fields, (rendezvous_timeout, backoff_limit))
    ("defaults: no timeout, backoffLimit 6", {}, {}, (None, 6)),
    ("the annotation is a duration; backoffLimit is the real field",
     {"gangkit/rendezvous-timeout": "5m"}, {"backoffLimit": 2}, (300.0, 2)),
    ("a plain number of seconds, as a string", {"gangkit/rendezvous-timeout": "90"}, {"backoffLimit": 0}, (90.0, 0)),
    ("backoffLimitPerIndex makes the API server default backoffLimit to 2147483647", {},
     {"backoffLimitPerIndex": 1, "completionMode": "Indexed"}, (None, 2147483647)),
]


@pytest.mark.parametrize("annotations, spec, expected", [c[1:] for c in READ], ids=[c[0] for c in READ])
def test_a_job_manifest_says_its_timeout_and_backoff_limit_and_writes_them_back(annotations, spec, expected):
    j = load_manifests(manifest(annotations, **spec)).jobs[0]
    assert (j.rendezvous_timeout, j.backoff_limit) == expected
    written = job_manifest(j)
    back = load_manifests(manifest(written["metadata"]["annotations"], **{
        k: v for k, v in written["spec"].items() if k == "backoffLimit"})).jobs[0]
    assert (back.rendezvous_timeout, back.backoff_limit) == expected
    assert ("backoffLimit" in written["spec"]) == (expected[1] != 6)
    assert ("gangkit/rendezvous-timeout" in written["metadata"]["annotations"]) == (expected[0] is not None)


READ_BAD = [
    ("a zero timeout", {"gangkit/rendezvous-timeout": "0s"}, {},
     "metadata.annotations.gangkit/rendezvous-timeout: expected a timeout > 0"),
    ("a timeout that is not a duration", {"gangkit/rendezvous-timeout": "soon"}, {},
     "metadata.annotations.gangkit/rendezvous-timeout"),
    ("a negative backoffLimit", {}, {"backoffLimit": -1}, "spec.backoffLimit: expected a whole number >= 0"),
]


@pytest.mark.parametrize("annotations, spec, words", [c[1:] for c in READ_BAD], ids=[c[0] for c in READ_BAD])
def test_bad_churn_fields_in_a_manifest_are_refused_by_name(annotations, spec, words):
    with pytest.raises(gk.ScenarioError, match="Job default/train|Job train") as e:
        load_manifests(manifest(annotations, **spec))
    assert words in str(e.value)


def test_dump_manifests_writes_both_back_and_only_when_set():
    sc = Scenario(nodes(2, gpus=4), [job("a", pods=2, rendezvous_timeout=300, backoff_limit=3), job("b", pods=2)],
                  name="churn")
    back = load_manifests(gk.dump_manifests(sc))
    assert [(j.name, j.rendezvous_timeout, j.backoff_limit) for j in back.jobs] == [("a", 300.0, 3), ("b", None, 6)]


@pytest.mark.parametrize(
    "stack, failures, start",
    [
        ("coscheduling", 0, 100.0),  # held at Permit: not started, so the rendezvous clock has not begun
        ("kube-gang", 0, 100.0),
        ("pod", 5, 251.0),  # bound pods run and give up after 30 s, again and again, until C's node frees
    ],
)
def test_pods_held_at_permit_have_not_started_their_rendezvous(stack, failures, start):
    jobs = [gang("C", 1, 1, run_time=100),
            gang("G", 3, 1, run_time=200, submit=1, rendezvous_timeout=30.0, schedule_timeout=300.0)]
    r = simulate_on(gpu_nodes(3, gpus=1), jobs, stack=stack)
    assert r.summary()["pod_failures"] == failures
    assert r.jobs.set_index("job").loc["G", "start_s"] == start
