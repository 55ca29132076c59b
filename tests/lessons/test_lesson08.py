"""Lesson 08, the capstone: the committed trace slice, the designs, the goals and their score.

The figures a test expects are recomputed here from the run's own tables (``result.jobs``,
``result.timeline``) or from the committed CSV with pandas, never typed in.
"""

from __future__ import annotations

import dataclasses
import os
import re
import subprocess
import sys
from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import gangkit as gk
from gangkit.kueue.objects import GPU, ClusterQueue, FlavorQuotas, ResourceGroup
from gangkit.lessons import lesson08
from gangkit.lessons.lesson08 import GOALS, NAIVE, REFERENCE, TENANTS, Design, QueueDesign

from paths import REPO

try:
    from conftest import shared_path
except ImportError:  # tests/ imported as a package
    from tests.conftest import shared_path

TOOL = REPO / "tools" / "derive_capstone_trace.py"
FULL_TRACE = shared_path("traces", "alibaba-openb-2023")
needs_full_trace = pytest.mark.skipif(
    not (FULL_TRACE / "openb_pod_list_default.csv").is_file(),
    reason=f"the full openb trace ({FULL_TRACE}) is absent; it sits beside the repository, not in it")


@lru_cache(maxsize=None)
def result_of(label: str):
    """One run per named design (a design of this file's tables, or REFERENCE, NAIVE, an alternative)."""
    return lesson08.run(DESIGNS[label])


def queues_with(**changed: QueueDesign) -> dict:
    return {**REFERENCE.queues, **changed}


#: Designs the tests run, by label: the module's own, and one per goal that misses it.
DESIGNS: dict[str, Design] = {
    "reference": REFERENCE,
    "naive": NAIVE,
    **{f"alternative: {k}": d for k, d in lesson08.ALTERNATIVES.items()},
    "production may not borrow": dataclasses.replace(
        REFERENCE, queues=queues_with(production=QueueDesign(8, borrowing_limit=0, reclaim_within_cohort="Any"))),
    "waitForPodsReady after 60 s": dataclasses.replace(REFERENCE, pods_ready_timeout=60.0),
    "NodePool of one node": dataclasses.replace(REFERENCE, pool_limit=8),
    "batch may not borrow": dataclasses.replace(REFERENCE, queues=queues_with(batch=QueueDesign(4, borrowing_limit=0))),
    "pods spread": dataclasses.replace(REFERENCE, scoring="LeastAllocated"),
}


def tenant_jobs(result, tenant: str) -> pd.DataFrame:
    jobs = result.jobs
    return jobs[jobs["job"].str.startswith(f"{tenant}/") & (jobs["state"] != "Rejected")]


def recomputed(result, tenant: str, goal: str, window_s: float = lesson08.WINDOW_S) -> float:
    """The goal's figure straight from the run's tables, without the module's helpers."""
    if goal == "effective utilization":
        tl = result.timeline
        t = tl["time_s"].to_numpy(dtype=float)
        edges = np.clip(np.append(t, max(t[-1], window_s)), 0.0, window_s)
        dt = np.diff(edges)
        return float(np.sum(tl["useful_gpus"].to_numpy() * dt) / np.sum(tl["capacity_gpus"].to_numpy() * dt))
    if goal == "deadlocked jobs":
        return float((result.jobs["state"] == "Deadlocked").sum())
    mine = tenant_jobs(result, tenant)
    if goal == "evictions":
        return float(mine["restarts"].sum())
    waits = mine["wait_s"].to_numpy(dtype=float)
    return float(np.percentile(waits, 95)) if goal == "p95 wait" else float(waits.max())


def missed(table: pd.DataFrame) -> set:
    return set(zip(table.loc[~table["met"], "tenant"], table.loc[~table["met"], "goal"]))


# ------------------------------------------------------------------------------------------- the data
def test_the_committed_tables_are_in_the_package_and_small():
    data = Path(gk.__file__).resolve().parent / "data"
    for path in (lesson08.PODS_CSV, lesson08.NODES_CSV):
        assert path.parent == data and path.stat().st_size < 1_000_000


def test_the_workload_loads_from_the_committed_tables_alone():
    pods = pd.read_csv(lesson08.PODS_CSV)
    nodes = pd.read_csv(lesson08.NODES_CSV)
    w = lesson08.capstone_workload()
    gpu_pods = pods[pods["num_gpu"] > 0]
    assert sum(j.pod_count for j in w.jobs) == len(gpu_pods)  # CPU-only pods dropped, every other pod kept
    assert sum(j.gpus for j in w.jobs) == int(gpu_pods["num_gpu"].clip(lower=1).sum())  # fractions rounded up
    assert [n.name for n in w.nodes] == list(nodes["sn"].iloc[:lesson08.STATIC_NODES])
    assert set(nodes["model"]) == {"G3"} and all(n.gpus == 8 and n.cpu == 128 for n in w.nodes)
    table = w.table()
    by_qos = gpu_pods["qos"].map(lesson08.QOS_TENANT).value_counts()
    assert table["pods"].to_dict() == {t: int(by_qos.get(t, 0)) for t in TENANTS}


def test_every_job_belongs_to_the_tenant_its_qos_names():
    w = lesson08.capstone_workload()
    assert {(j.namespace, j.queue) for j in w.jobs} == {(t, t) for t in TENANTS}
    for j in w.jobs:
        assert lesson08.QOS_TENANT[j.labels["qos"]] == j.namespace
    gangs = [j for j in w.jobs if j.pod_count > 1]
    assert gangs and all(j.min_member == j.pod_count and j.labels["derived-gang-size"] == str(j.pod_count) for j in gangs)


def test_the_gang_seed_changes_only_the_gang_mix():
    a, b = lesson08.capstone_workload(gang_seed=0), lesson08.capstone_workload(gang_seed=0)
    assert [(j.key, j.pod_count, j.submit_time) for j in a.jobs] == [(j.key, j.pod_count, j.submit_time) for j in b.jobs]
    c = lesson08.capstone_workload(gang_seed=5)
    assert sum(j.pod_count for j in c.jobs) == sum(j.pod_count for j in a.jobs)


def test_the_trace_notes_state_the_counts_of_the_committed_table():
    text = " ".join((lesson08.DATA / "CAPSTONE_TRACE.md").read_text().split())
    pods = pd.read_csv(lesson08.PODS_CSV)
    qos = pods["qos"].value_counts()
    frac = int(((pods["num_gpu"] == 1) & (pods["gpu_milli"] < 1000)).sum())
    assert (f"{len(pods)} pods, of which {int((pods['num_gpu'] == 0).sum())} ask for no GPU, {frac} ask for a "
            f"fraction of one GPU, and {int(pods['scheduled_time'].isna().sum())} were never scheduled") in text
    assert (f"{qos['LS']} `LS`, {qos['BE']} `BE`, {qos['Burstable']} `Burstable`, {qos['Guaranteed']} "
            "`Guaranteed`") in text
    assert f"`{pods['name'].iloc[0]}` to `{pods['name'].iloc[-1]}`" in text
    assert "Apache License 2.0" in text and "Beware of Fragmentation" in text


def run_tool(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.run([sys.executable, str(TOOL), "--source", str(FULL_TRACE), *args], capture_output=True,
                          text=True, env=env, cwd=REPO, timeout=300)  # the trace folder this module sees


@needs_full_trace
def test_the_tool_rederives_the_committed_tables_from_the_full_trace():
    done = run_tool("--check")
    assert done.returncode == 0, done.stdout + done.stderr
    pods, nodes = (len(pd.read_csv(p)) for p in (lesson08.PODS_CSV, lesson08.NODES_CSV))
    assert f"up to date ({pods} pod rows, {nodes} node rows compared)" in done.stdout


@needs_full_trace
def test_the_tools_check_notices_a_changed_table(tmp_path):
    for path in (lesson08.PODS_CSV, lesson08.NODES_CSV):
        (tmp_path / path.name).write_text(path.read_text())
    changed = tmp_path / lesson08.PODS_CSV.name
    changed.write_text(changed.read_text().replace("openb-pod-6300,", "openb-pod-6300x,", 1))
    done = run_tool("--check", "--output", str(tmp_path))
    assert done.returncode == 1 and f"out of date: {changed.name}" in done.stdout


def test_the_tool_says_where_the_full_trace_should_be(tmp_path):
    done = run_tool("--check", "--source", str(tmp_path))
    assert done.returncode != 0 and "openb_pod_list_default.csv: no such file" in done.stderr


# ------------------------------------------------------------------------------------------- the design
@pytest.mark.parametrize("case, design, stack", [
    ("naive: one ClusterQueue, pod by pod", NAIVE, "kueue+pod"),
    ("reference: queues, Volcano, a NodePool", REFERENCE, "kueue+gang+karpenter"),
    ("no queues: no Kueue", Design(placement="gang"), "gang"),
    ("no queues, a NodePool", Design(placement="coscheduling", pool_limit=8), "coscheduling+karpenter"),
    ("queues, no NodePool", dataclasses.replace(REFERENCE, pool_limit=0, placement="yunikorn"), "kueue+yunikorn"),
])
def test_the_stack_follows_the_design(case, design, stack):
    assert design.stack() == stack and stack in gk.STACKS
    sc = design.scenario()
    assert sc.settings.stack == stack and (sc.kueue is None) == (not design.queues)
    assert (sc.karpenter is None) == (design.pool_limit == 0)


def test_every_cluster_queue_covers_gpus_cpu_and_memory_with_room_for_the_largest_cluster():
    w = lesson08.capstone_workload()
    setup = REFERENCE.kueue_setup(w)
    most_gpus = sum(n.gpus for n in w.nodes) + REFERENCE.pool_limit
    for cq in setup.cluster_queues:
        (group,) = cq.resource_groups
        assert group.covered == (GPU, "cpu", "memory")
        quotas = group.flavors[0].resources
        assert quotas["cpu"].nominal == most_gpus * 16 * 1000 and quotas["memory"].nominal == most_gpus * 96 * 2**30
    assert {(lq.namespace, lq.name, lq.cluster_queue) for lq in setup.local_queues} == {(t, t, t) for t in TENANTS}


def test_a_cluster_queue_that_covers_only_gpus_admits_nothing():
    sc = REFERENCE.scenario()
    gpu_only = [ClusterQueue(q.name, [ResourceGroup((GPU,), (FlavorQuotas(lesson08.FLAVOR, {
        GPU: q.resource_groups[0].flavors[0].resources[GPU]}),))], cohort=q.cohort) for q in sc.kueue.cluster_queues]
    early = [j for j in sc.jobs if j.submit_time < 1800.0]  # the first half hour's jobs, for a short run
    sc = dataclasses.replace(sc, kueue=dataclasses.replace(sc.kueue, cluster_queues=gpu_only), jobs=early)
    r = gk.simulate(sc, horizon=3600.0)
    assert len(r.jobs) == len(early) > 0 and (r.jobs["state"] == "WaitingAtEnd").all()
    assert r.jobs["reason"].str.contains("resource cpu unavailable in ClusterQueue").all()


def test_priorities_reach_the_jobs_of_their_tenant():
    d = lesson08.ALTERNATIVES["one queue with priorities"]
    sc = d.scenario()
    assert {(j.namespace, j.priority) for j in sc.jobs} == {(t, d.priorities.get(t, 0)) for t in TENANTS}
    assert {lq.cluster_queue for lq in sc.kueue.local_queues} == {"shared"}


def replace_queue(name: str, **fields):
    return {"queues": queues_with(**{name: dataclasses.replace(REFERENCE.queues[name], **fields)})}


@pytest.mark.parametrize("case, changes, field, message", [
    ("a negative quota", replace_queue("production", nominal=-1), "queues['production'].nominal",
     "expected a whole number of GPUs >= 0, got -1"),
    ("lending more than the quota", replace_queue("research", lending_limit=24), "queues['research'].lending_limit",
     "must be less than or equal to the nominal quota (24 > 16)"),
    ("a limit without a cohort", {"cohort": None}, "queues['research'].lending_limit",
     "must be None when cohort is None"),
    ("an unknown reclaim policy", replace_queue("production", reclaim_within_cohort="Sometimes"),
     "queues['production'].reclaim_within_cohort", "expected one of Never, LowerPriority, Any, got 'Sometimes'"),
    ("borrowWithinCohort without reclaiming", replace_queue("batch", borrow_within_cohort="LowerPriority"),
     "queues['batch'].borrow_within_cohort", "needs reclaim_within_cohort other than Never"),
    ("an unknown queueing strategy", replace_queue("batch", queueing_strategy="LIFO"),
     "queues['batch'].queueing_strategy", "expected one of StrictFIFO, BestEffortFIFO, got 'LIFO'"),
    ("a tenant without a queue", {"queues": {k: v for k, v in REFERENCE.queues.items() if k != "batch"}},
     "tenant_queues", "tenant 'batch' has no ClusterQueue"),
    ("a LocalQueue to a missing ClusterQueue", {"tenant_queues": {"batch": "spare"}}, "tenant_queues['batch']",
     "names ClusterQueue 'spare', which is not in queues"),
    ("a ClusterQueue name Kueue refuses", {"queues": {"Production": QueueDesign(8), **REFERENCE.queues}}, "queues",
     "expected ClusterQueue names in lowercase letters, digits and '-', got 'Production'"),
    ("a priority for nobody", {"priorities": {"interns": 5}}, "priorities",
     "expected tenants among production, research, batch, got 'interns'"),
    ("a priority that is not whole", {"priorities": {"production": 1.5}}, "priorities['production']",
     "expected a whole number (a WorkloadPriorityClass value), got 1.5"),
    ("an unknown placement", {"placement": "volcano"}, "placement",
     "expected one of pod, gang, coscheduling, yunikorn, kube-gang, got 'volcano'"),
    ("a Volcano order without Volcano", {"placement": "pod", "ordering": "strict"}, "ordering",
     "Volcano's job orders apply to placement 'gang' only"),
    ("an unknown scoring", {"scoring": "Packed"}, "scoring", "expected one of LeastAllocated, MostAllocated, got 'Packed'"),
    ("a negative NodePool limit", {"pool_limit": -8}, "pool_limit", "expected a whole number of GPUs >= 0"),
    ("a NodePool limit that is not whole", {"pool_limit": 8.5}, "pool_limit", "got 8.5"),
    ("a zero timeout", {"pods_ready_timeout": 0}, "pods_ready_timeout", "expected seconds > 0, got 0"),
    ("waitForPodsReady as a word", {"wait_for_pods_ready": "yes"}, "wait_for_pods_ready", "expected True or False"),
])
def test_a_bad_design_gets_one_clear_problem(case, changes, field, message):
    d = dataclasses.replace(REFERENCE, name="mine", **changes)
    with pytest.raises(gk.ScenarioError) as caught:
        d.scenario()
    problems = [p for p in caught.value.problems if p.field == field]
    assert problems and all(p.obj == "Design mine" for p in caught.value.problems)
    assert any(message in p.message for p in problems), [str(p) for p in caught.value.problems]


def test_every_problem_is_reported_at_once():
    d = dataclasses.replace(REFERENCE, placement="volcano", pool_limit=-1, scoring="x")
    assert {p.field for p in d.problems()} == {"placement", "pool_limit", "scoring"}
    assert REFERENCE.problems() == [] and NAIVE.problems() == []


# ------------------------------------------------------------------------------------------- goals and score
def test_the_goals_table_states_every_goal():
    table = lesson08.goals_table()
    assert list(zip(table["tenant"], table["goal"])) == [(g.tenant, g.goal) for g in GOALS]
    assert set(table["tenant"]) == {*TENANTS, "cluster"} and table["statement"].str.len().min() > 20


@pytest.mark.parametrize("label", ["reference", *[f"alternative: {k}" for k in lesson08.ALTERNATIVES]])
def test_the_reference_and_the_alternatives_meet_every_goal(label):
    table = lesson08.score(result_of(label), DESIGNS[label])
    assert table["met"].all(), table.loc[~table["met"], "reason"].tolist()
    assert (table["reason"] == "").all()


def test_the_designs_that_meet_every_goal_differ():
    designs = [REFERENCE, *lesson08.ALTERNATIVES.values()]
    shapes = {(d.stack(), tuple(sorted(d.queues)), d.pool_limit, tuple(sorted(d.priorities.items()))) for d in designs}
    assert len(shapes) == len(designs)


#: What NAIVE misses: production waits behind everyone, research's whole-node pods find no empty node,
#: batch waits behind everyone.
NAIVE_MISSES = {("production", "p95 wait"), ("research", "max wait"), ("batch", "p95 wait")}


def test_naive_misses_the_goals_it_is_documented_to_miss():
    r = result_of("naive")
    table = lesson08.score(r, NAIVE)
    assert missed(table) == NAIVE_MISSES
    for row in table.itertuples():
        assert row.measured == pytest.approx(recomputed(r, row.tenant, row.goal), abs=1e-3)


@pytest.mark.parametrize("label, tenant, goal, only", [
    ("production may not borrow", "production", "p95 wait", True),  # 8 GPUs of its own, never more
    ("waitForPodsReady after 60 s", "production", "evictions", True),  # a new node takes longer than 60 s
    ("NodePool of one node", "research", "max wait", True),  # the one node fills up with others' pods
    ("batch may not borrow", "batch", "p95 wait", False),
    ("pods spread", "cluster", "effective utilization", True),  # a node added for one pod never empties
])
def test_a_design_that_misses_a_goal_is_scored_with_its_numbers(label, tenant, goal, only):
    r = result_of(label)
    table = lesson08.score(r, DESIGNS[label])
    row = table[(table["tenant"] == tenant) & (table["goal"] == goal)].iloc[0]
    assert not row.met
    assert row.measured == pytest.approx(recomputed(r, tenant, goal), abs=1e-3)
    assert missed(table) == {(tenant, goal)} if only else (tenant, goal) in missed(table)
    target = next(g.target for g in GOALS if (g.tenant, g.goal) == (tenant, goal))
    assert row.reason.startswith(f"{tenant} {goal} is {lesson08._fmt(row.measured)}")
    assert f"the target {lesson08._fmt(target)}" in row.reason


def test_a_missed_wait_names_the_late_jobs_and_the_longest_wait():
    r = result_of("production may not borrow")
    waits = tenant_jobs(r, "production")["wait_s"]
    reason = lesson08.score(r, DESIGNS["production may not borrow"]).loc[0, "reason"]
    assert f"{int((waits > 600).sum())} of {len(waits)} jobs waited longer than 600 s, the longest {waits.max():g} s" in reason
    assert "nominalQuota 8, borrowingLimit 0" in reason  # the design's hint


@pytest.mark.parametrize("goal, hours", [
    ("p95 wait", True), ("max wait", True), ("evictions", False), ("effective utilization", False),
    ("deadlocked jobs", False)],
    ids=["a p95 wait is given in hours too", "a maximum wait is given in hours too", "evictions are a count",
         "utilization is a fraction", "deadlocked jobs are a count"])
def test_waits_read_in_hours_as_well_as_seconds(goal, hours):
    table = lesson08.score(result_of("naive"), NAIVE)
    for _, row in table[table["goal"] == goal].iterrows():
        if hours:
            assert row.measured_h == round(row.measured / 3600, 2)
            if not row.met:
                assert row.reason.startswith(f"{row.tenant} {goal} is {lesson08._fmt(row.measured)} s "
                                             f"({row.measured / 3600:.2f} h), above the target")
        else:
            assert row.measured_h == ""


def two_gangs_on_one_node() -> lesson08.CapstoneWorkload:
    """Two research gangs of 4 one-GPU pods on four one-GPU nodes: pod by pod, each gets half (lesson 01)."""
    jobs = [gk.job(n, pods=4, gpus=1, run_time=600, namespace="research", queue="research") for n in ("a", "b")]
    return lesson08.CapstoneWorkload([gk.Node(f"n{i}", 1) for i in range(4)], jobs, window_s=3600.0, horizon_s=7200.0)


@pytest.mark.parametrize("placement, deadlocked", [("pod", True), ("gang", False)])
def test_the_deadlock_goal_counts_the_jobs_that_end_deadlocked(placement, deadlocked):
    w = two_gangs_on_one_node()
    d = Design(placement=placement)
    r = lesson08.run(d, w)
    table = lesson08.score(r, d, window_s=w.window_s).set_index(["tenant", "goal"])
    row = table.loc[("cluster", "deadlocked jobs")]
    assert row.measured == recomputed(r, "cluster", "deadlocked jobs") == (2.0 if deadlocked else 0.0)
    assert bool(row.met) is (not deadlocked)
    if deadlocked:
        assert "the run ended in a deadlock" in row.reason and "binds a gang's pods one by one" in row.reason


def test_the_same_design_and_seed_give_the_same_score():
    a = lesson08.score(lesson08.run(REFERENCE), REFERENCE)
    b = lesson08.score(lesson08.run(REFERENCE), REFERENCE)
    pd.testing.assert_frame_equal(a, b)


def test_compare_designs_puts_each_designs_score_side_by_side():
    table = lesson08.compare_designs({"naive": NAIVE, "reference": REFERENCE})
    assert list(table.columns) == [("naive", "measured"), ("naive", "met"), ("reference", "measured"), ("reference", "met")]
    assert list(table.index[:-1]) == [(g.tenant, g.goal, g.target) for g in GOALS]
    for label in ("naive", "reference"):
        expected = lesson08.score(result_of(label), DESIGNS[label])
        assert table[(label, "measured")].iloc[:-1].tolist() == expected["measured"].tolist()
        assert table.loc[("all", "goals met", float(len(GOALS))), (label, "measured")] == expected["met"].sum()
    assert bool(table[("reference", "met")].iloc[-1]) is True and bool(table[("naive", "met")].iloc[-1]) is False


# ------------------------------------------------------------------------------------------- stretch and widget
def test_a_production_burst_sends_day_twos_production_pods_twice():
    base = lesson08.capstone_workload()
    burst = lesson08.stretch("production-burst", base)
    day_two = [j for j in base.jobs if j.namespace == "production" and 86400 <= j.submit_time < 2 * 86400]
    again = {j.key: j for j in burst.jobs if j.name.endswith("-again")}
    assert len(burst.jobs) == len(base.jobs) + len(day_two) and len(again) == len(day_two)
    assert all(again[f"{j.key}-again"].submit_time == j.submit_time + 1 for j in day_two)


def test_a_batch_flood_moves_day_twos_batch_jobs_to_the_start_of_the_day():
    base = lesson08.capstone_workload()
    flood = lesson08.stretch("batch-flood", base)
    before = {j.key: j.submit_time for j in base.jobs}
    moved = {j.key for j in flood.jobs if j.submit_time != before[j.key]}
    assert moved == {k for k, t in before.items() if k.startswith("batch/") and 86400 < t < 2 * 86400}
    assert all(j.submit_time == 86400 for j in flood.jobs if j.key in moved)


def test_node_down_takes_one_static_node_away_and_unknown_stretches_are_refused():
    base = lesson08.capstone_workload()
    assert lesson08.stretch("node-down", base).nodes == base.nodes[:-1]
    with pytest.raises(gk.ScenarioError, match="stretch: kind: expected one of batch-flood, production-burst, node-down"):
        lesson08.stretch("heatwave")


@pytest.mark.parametrize("static_nodes, message", [
    (0, "expected a whole number >= 1, got 0"),
    (True, "expected a whole number >= 1, got True"),
    (40, "expected at most 39 (the G3 nodes of the node list), got 40"),
])
def test_capstone_workload_refuses_a_cluster_it_cannot_build(static_nodes, message):
    with pytest.raises(gk.ScenarioError, match=re.escape(f"capstone_workload: static_nodes: {message}")):
        lesson08.capstone_workload(static_nodes)


def test_the_explorer_starts_at_the_reference_and_follows_its_controls():
    start = lesson08.explored_design()
    assert (start.queues, start.placement, start.scoring, start.pool_limit) == (
        REFERENCE.queues, REFERENCE.placement, REFERENCE.scoring, REFERENCE.pool_limit)
    box = lesson08.capstone_explorer()
    assert list(box.table.index) == [(g.tenant, g.goal) for g in GOALS] and box.table["met"].all()
    box.controls["pool_limit"].value = 0
    assert not box.table.loc[("research", "max wait"), "met"] and len(box.output.outputs) == 2


CHECKED = [
    ("the naive design: the trace's gangs go to the default scheduler", NAIVE, {"gang-scheduler-mismatch": 52}),
    ("... with a NodePool its one queue's quota cannot use",
     dataclasses.replace(NAIVE, scoring="MostAllocated", pool_limit=16, name="with nodes"),
     {"gang-scheduler-mismatch": 52, "kueue-quota-below-supply": 1}),
    ("the reference design checks clean", REFERENCE, {"-": 0}),
    ("a NodePool behind quota the static nodes hold, with gangs placed by Volcano",
     dataclasses.replace(REFERENCE, queues={"production": lesson08.QueueDesign(8), "research": lesson08.QueueDesign(4),
                                            "batch": lesson08.QueueDesign(4)}, name="small"),
     {"kueue-quota-below-supply": 1}),
]


@pytest.mark.parametrize("design, expected", [c[1:] for c in CHECKED], ids=[c[0] for c in CHECKED])
def test_check_designs_says_what_gangkit_check_finds_before_a_run(design, expected):
    table = lesson08.check_designs([design])
    assert dict(zip(table.index.get_level_values("rule"), table["findings"])) == expected
    assert table.index.get_level_values("design").unique().tolist() == [design.name]
