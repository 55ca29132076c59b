"""Wait buckets: every second of a job's wait is charged to one layer, and the buckets add up.

Case tables for the rule of gangkit.engine.waits (critical path over the nodes a
supplier launched for the job, the bucket named after the stage awaited),
exact bucket values on small stories through Karpenter, hand-made
suppliers and admission layers, the per-layer metrics, and a Hypothesis
property over random small scenarios through every stack: the buckets add
up to the wait (``wait_unattributed_s`` = 0) and GPU-seconds add up to the
capacity, not-ready term included.
"""

from __future__ import annotations

import math

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gangkit as gk
from gangkit import Job, Node, PodSet, Reason, Stack, job, nodes
from gangkit.engine.waits import awaited_at, split_placement, stage_bucket
from gangkit.supply.cloud import InstanceType, Stages
from gangkit.supply.karpenter import Karpenter, NodePool
from gangkit.volcano.scheduler import VolcanoGang

from builders import gang, gpu_nodes, holder, scenario, simulate_on, supplied

STAGES = {
    "n1": {"launched": 10.0, "registered": 70.0, "initialized": 160.0},
    "n2": {"launched": 10.0, "registered": 40.0, "initialized": 100.0, "image_pulled": 130.0},
    "late": {"requested": 0.0, "launched": 20.0, "registered": 50.0},
}


@pytest.mark.parametrize("name, enter, leave, awaited, expected", [
    ("no node coming: all placement", 0.0, 100.0, {}, {"placement": 100.0}),
    ("one node, through its stages, then the session", 0.0, 170.0, {"n1": 10.0},
     {"placement": 20.0, "node_registration": 60.0, "node_initialization": 90.0}),
    ("counted on mid-stage: from that instant", 0.0, 160.0, {"n1": 100.0},
     {"placement": 100.0, "node_initialization": 60.0}),
    ("two nodes: the one ready last sets the bucket", 0.0, 160.0, {"n1": 10.0, "n2": 10.0},
     {"placement": 10.0, "node_registration": 60.0, "node_initialization": 90.0}),
    ("image pull of the node ready last", 0.0, 130.0, {"n2": 10.0},
     {"placement": 10.0, "node_registration": 30.0, "node_initialization": 60.0, "image_pull": 30.0}),
    ("censored mid-initialization", 0.0, 120.0, {"n1": 10.0},
     {"placement": 10.0, "node_registration": 60.0, "node_initialization": 50.0}),
    ("launch not yet requested: node_launch, other stage names: node_<name>", 0.0, 50.0, {"late": 0.0},
     {"node_launch": 20.0, "node_registration": 30.0}),
    ("a node counted on after it was ready changes nothing", 0.0, 200.0, {"n2": 150.0}, {"placement": 200.0}),
    ("an empty stretch", 5.0, 5.0, {"n1": 10.0}, {}),
])
def test_split_placement(name, enter, leave, awaited, expected):
    got = split_placement(enter, leave, awaited, STAGES)
    assert got == pytest.approx(expected)
    assert math.isclose(sum(got.values()), max(0.0, leave - enter))


@pytest.mark.parametrize("stage, bucket", [("launched", "node_launch"), ("registered", "node_registration"),
                                           ("initialized", "node_initialization"), ("image_pulled", "image_pull"),
                                           ("requested", "node_requested")])
def test_stage_buckets_name_the_stage_awaited(stage, bucket):
    assert stage_bucket(stage) == bucket


def test_awaited_at_picks_the_node_ready_last():
    assert awaited_at(50.0, {"n1": 10.0, "n2": 10.0}, STAGES) == ("n1", "node_registration")
    assert awaited_at(165.0, {"n1": 10.0, "n2": 10.0}, STAGES) is None


# ------------------------------------------------------------------------ stories
def _busy_then(*jobs_, gpus=8):
    """One node kept busy by Z for 1000 s, then the given jobs."""
    return scenario(gpu_nodes(1, gpus), [holder(gpus), *jobs_])


def _karpenter(limit=None, stages=None, consolidate_after=0.0):
    pool = NodePool("gpu", ["g8"], limits={} if limit is None else {"nvidia.com/gpu": limit},
                    consolidate_after=consolidate_after)
    return Karpenter([pool], [InstanceType("g8", 8, 8.0)], stages=stages)


def _waits(result, name):
    row = result.jobs.set_index("job").loc[name]
    return {c[5:-2]: row[c] for c in result.jobs.columns if c.startswith("wait_") and c != "wait_s" and row[c] != 0}


@pytest.mark.parametrize("name, stack, stages, limit, horizon, expected", [
    ("batch window in placement, then registration and initialization", "gang+karpenter", None, None, None,
     {"placement": 1.0, "node_registration": 60.0, "node_initialization": 90.0}),
    ("image pull is its own bucket", "gang+karpenter", Stages(image_pull=30.0), None, None,
     {"placement": 1.0, "node_registration": 60.0, "node_initialization": 90.0, "image_pull": 30.0}),
    ("with Kueue in front: quota says yes at once, the nodes take the time", "kueue+gang+karpenter", None, None, None,
     {"placement": 1.0, "node_registration": 60.0, "node_initialization": 90.0}),
    ("NodePool limit: one of the gang's two nodes comes, then placement until Z ends", "gang+karpenter", None, 8, None,
     {"placement": 850.0, "node_registration": 60.0, "node_initialization": 90.0}),
    ("censored mid-initialization", "gang+karpenter", None, None, 100.0,
     {"placement": 1.0, "node_registration": 60.0, "node_initialization": 39.0}),
])
def test_waits_through_karpenter(name, stack, stages, limit, horizon, expected):
    sc = _busy_then(job("A", pods=2, gpus=8, run_time=100))
    sc.karpenter = _karpenter(limit, stages, consolidate_after=None)  # Never: no churn of the idle node
    if horizon:
        sc = sc.with_settings(horizon=horizon)
    result = gk.simulate(sc, stack=stack)
    got = _waits(result, "A")
    got.pop("unattributed", None)
    assert got == pytest.approx(expected)
    assert (result.jobs.wait_unattributed_s == 0).all()
    assert result.jobs.set_index("job").loc["A", "censored"] == bool(horizon)


def test_the_nominated_events_say_which_nodes_a_job_waits_for():
    sc = _busy_then(job("A", pods=2, gpus=8, run_time=100))
    sc.karpenter = _karpenter()
    ev = gk.simulate(sc, stack="gang+karpenter").events
    nominated = ev[ev.event == "nominated"]
    assert list(zip(nominated.time_s, nominated.job, nominated.node, nominated.layer)) == [
        (1.0, "A", "gpu-0", "karpenter"), (1.0, "A", "gpu-1", "karpenter")]


class SilentSupplier(gk.NodeSupplier):
    """One 4-GPU node per unschedulable pod, with the given stages (seconds after launch)."""

    name = "staged"

    def __init__(self, stages: list[dict]):
        self.stages, self.for_pod, self.n = stages, {}, 0

    def can_ever_fit(self, gpus, cpu, memory, selector):
        return gpus <= 4

    def observe(self, sim, now, unschedulable):
        for pod in unschedulable:
            if pod in self.for_pod:
                continue
            rel = self.stages[self.n % len(self.stages)]
            name = f"s-{self.n}"
            self.n += 1
            sim.launch_node(Node(name, 4), {k: now + v for k, v in rel.items()}, supplier=self.name)
            self.for_pod[pod] = name


class TellingSupplier(SilentSupplier):
    """The same, and it says which pod each node is for (the optional ``awaited_nodes``)."""

    def awaited_nodes(self):
        return [(p, n) for p, n in self.for_pod.items() if p.node is None and not p.done]


@pytest.mark.parametrize("name, stages, supplier, expected", [
    ("the gang waits for the node ready last", [{"launched": 0, "registered": 30, "initialized": 90},
                                                {"launched": 0, "registered": 50, "initialized": 200}], TellingSupplier,
     {"node_registration": 50.0, "node_initialization": 150.0}),
    ("a launch requested before the instance exists", [{"requested": 0, "launched": 40, "registered": 100}],
     TellingSupplier, {"node_launch": 40.0, "node_registration": 60.0}),
    ("a supplier that does not say leaves it all in placement", [{"launched": 0, "registered": 30}], SilentSupplier,
     {"placement": 30.0}),
])
def test_waits_with_a_hand_made_supplier(name, stages, supplier, expected):
    result = simulate_on(gpu_nodes(1, gpus=4), [holder(4), gang("A", 2, 4, run_time=10)],
                         stack=supplied(VolcanoGang(period=0.0), supplier(stages)))
    assert _waits(result, "A") == pytest.approx(expected)


class CheckLayer(gk.AdmissionLayer):
    """An admission check that says Ready ``delay`` seconds after a job reaches it (ProvisioningRequest-like)."""

    name = "admission_check"

    def __init__(self, delay: float):
        self.delay, self.due, self.new = delay, {}, []

    def submit(self, js, now):
        self.due[js] = now + self.delay
        self.new.append(js)

    def cycle(self, sim, now):
        for js in self.new:
            sim.call_at(self.due[js], lambda t: sim.request_cycle())
        self.new = []
        out = [js for js, t in self.due.items() if t <= now]
        for js in out:
            del self.due[js]
        return out

    def release(self, js, now):
        pass

    def pending_reason(self, js):
        return Reason("admission_check", "Pending", "capacity not provisioned yet")


def _checked_stack(sc, delay=120.0):
    from gangkit.kueue.layer import KueueLayer, default_setup

    return Stack(VolcanoGang(period=0.0), admission=[KueueLayer(default_setup(sc)), CheckLayer(delay)], name="kueue+check+gang")


def test_an_admission_layer_named_admission_check_gets_its_bucket_and_metric():
    sc = gk.Scenario(nodes(2, gpus=4), [job("a", gpus=4, run_time=100), job("b", pods=2, gpus=4, run_time=100, submit_time=10)])
    result = gk.simulate(sc, stack=_checked_stack(sc))
    jobs = result.jobs.set_index("job")
    # a: checked for 120 s, runs 120-220; b: quota waits until a releases at 220, checked until 340
    assert _waits(result, "a") == {"admission_check": 120.0}
    assert _waits(result, "b") == {"quota": 210.0, "admission_check": 120.0}
    assert jobs.loc["b", "start_s"] == 340.0 and (result.jobs.wait_unattributed_s == 0).all()
    m = result.metric("kueue_admission_checks_wait_time_seconds")
    assert list(zip(m.workload, m.time_s, m.wait_s)) == [("a", 120.0, 120.0), ("b", 340.0, 120.0)]


# ------------------------------------------------------------------------ metrics
@pytest.mark.parametrize("stack, name, expected", [
    # Z1 and Z2 hold the two nodes; A (two 8-GPU pods) cannot be placed from t=0 to t=1000
    ("gang", "volcano_unschedule_task_count", [(0.0, 2), (1000.0, 0)]),
    ("gang", "volcano_unschedule_job_count", [(0.0, 1), (1000.0, 0)]),
    ("pod", "scheduler_pending_pods", [(0.0, 2), (1000.0, 0)]),
])
def test_unschedulable_counts(stack, name, expected):
    sc = gk.Scenario(nodes(2, gpus=8), [job("Z1", gpus=8, run_time=1000), job("Z2", gpus=8, run_time=1000),
                                        job("A", pods=2, gpus=8, run_time=100)])
    result = gk.simulate(sc, stack=stack)
    m = result.metric(name)
    assert list(zip(m.time_s, m.value)) == expected
    if name == "scheduler_pending_pods":
        assert set(m["queue"]) == {"unschedulable"}


def test_unschedulable_counts_are_kept_only_at_the_full_level():
    result = gk.simulate(_busy_then(job("A", pods=2, gpus=8, run_time=100)), stack="gang", record="jobs")
    assert "volcano_unschedule_task_count" not in result.metrics


@pytest.mark.parametrize("stack, names", [
    ("kueue+gang", ["kueue_pending_workloads", "kueue_admission_wait_time_seconds", "volcano_unschedule_job_count"]),
    ("kueue+gang+karpenter", ["kueue_pending_workloads", "karpenter_nodepools_usage", "karpenter_nodepools_limit",
                              "gangkit_karpenter_nodeclaim_stages", "volcano_unschedule_task_count"]),
    ("pod", ["scheduler_pending_pods"]),
])
def test_every_layer_reports_under_result_metrics(stack, names):
    sc = _busy_then(job("A", pods=2, gpus=8, run_time=100))
    sc.karpenter = _karpenter(limit=16)
    result = gk.simulate(sc, stack=stack)
    for name in names:
        assert isinstance(result.metric(name), pd.DataFrame), name


def test_an_unknown_metric_is_one_clear_error():
    result = gk.simulate("three-workers", stack="gang")
    with pytest.raises(gk.ScenarioError, match="no metric 'kueue_pending_workloads' in a gang run; available: volcano"):
        result.metric("kueue_pending_workloads")


# ------------------------------------------------------------------------ property
@st.composite
def small_scenarios(draw):
    """1-3 nodes of 2-8 GPUs, 2-6 jobs of 1-4 pods of 1-8 GPUs, arrivals on a coarse grid."""
    gpus = draw(st.lists(st.sampled_from([2, 4, 8]), min_size=1, max_size=3))
    jobs_ = []
    for i in range(draw(st.integers(2, 6))):
        count = draw(st.integers(1, 4))
        jobs_.append(Job(f"j{i}", [PodSet("w", count, draw(st.sampled_from([1, 2, 4, 8])))],
                         run_time=draw(st.integers(10, 900)), submit_time=draw(st.integers(0, 4)) * 60,
                         priority=draw(st.integers(0, 1)), progress=draw(st.sampled_from(["sync", "sync", "independent"]))))
    # horizons that cut the run or not; not 30 days: a gang that a NodePool limit keeps out for ever makes
    # Karpenter launch and consolidate a node every 151 s, which is slow to simulate for a month
    horizon = draw(st.sampled_from([20000.0, 400.0, 2000.0]))
    sc = gk.Scenario([Node(f"n{i}", g) for i, g in enumerate(gpus)], jobs_, name="random").with_settings(horizon=horizon)
    limit = draw(st.sampled_from([None, 8, 16]))
    image = draw(st.sampled_from([0.0, 20.0]))
    after = draw(st.sampled_from([0.0, None, 60.0]))
    sc.karpenter = Karpenter([NodePool("gpu", ["g2", "g4", "g8"], limits={} if limit is None else {"nvidia.com/gpu": limit},
                                       consolidate_after=after)],
                             [InstanceType("g2", 2, 2.0), InstanceType("g4", 4, 4.0), InstanceType("g8", 8, 8.0)],
                             stages=Stages(image_pull=image))
    return sc


@pytest.mark.parametrize("stack", gk.STACKS)
@settings(max_examples=10, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(sc=small_scenarios())
def test_buckets_add_up_to_the_wait_and_gpu_seconds_to_the_capacity_in_every_stack(stack, sc):
    result = gk.simulate(sc, stack=stack)
    jobs = result.jobs[result.jobs.state != "Rejected"]
    buckets = [c for c in jobs.columns if c.startswith("wait_") and c not in ("wait_s", "wait_unattributed_s")]
    assert (jobs.wait_unattributed_s == 0).all(), stack
    assert ((jobs[buckets] >= 0).all().all()), stack
    assert ((jobs[buckets].sum(axis=1) - jobs.wait_s).abs() < 1e-6).all(), stack
    s = result.summary()
    parts = s["useful_gpu_seconds"] + s["held_idle_gpu_seconds"] + s["free_gpu_seconds"] + s["not_ready_gpu_seconds"]
    assert math.isclose(parts, s["capacity_gpu_seconds"], rel_tol=1e-9, abs_tol=1e-3), stack
    t = result.timeline
    assert ((t.useful_gpus + t.held_idle_gpus + t.free_gpus + t.not_ready_gpus) == t.capacity_gpus).all(), stack


def test_kueue_pending_workloads_has_one_row_per_instant_and_change():
    from gangkit.lessons import lesson05

    m = gk.simulate(lesson05.layered_story(), stack="kueue+gang").metric("kueue_pending_workloads")
    assert list(zip(m.time_s, m.active, m.inadmissible)) == [
        (0.0, 0, 1), (60.0, 0, 2), (120.0, 0, 3), (1800.0, 0, 2), (3600.0, 0, 1)]


def test_a_provisioning_request_books_nodes_and_its_job_waits_for_them():
    """kueue+provreq+autoscaler: the admission check, then the nodes the request booked, stage by stage."""
    from gangkit.lessons import lesson05

    result = gk.simulate(lesson05.layered_story(), stack="kueue+provreq+autoscaler")
    assert _waits(result, "train-b") == {"admission_check": 10.0, "node_registration": 60.0, "node_initialization": 90.0}
    assert (result.jobs.wait_unattributed_s == 0).all()
