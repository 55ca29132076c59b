"""gangkit.lessons.lesson03: the lesson's stories do what the lesson says, and the quota explorer follows its knobs.

Each story is a row of a case table: a name that reads like the lesson's sentence, the story, the
stack, and the figures the lesson quotes.
"""

from __future__ import annotations

import math

import matplotlib

matplotlib.use("Agg")

import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

import gangkit as gk  # noqa: E402
from gangkit.kueue.objects import GPU, KueueConfig  # noqa: E402
from gangkit.lessons import lesson03  # noqa: E402

OFF = KueueConfig(wait_for_pods_ready=False)


def _table(scenario, stack="kueue+gang"):
    return lesson03.job_table(gk.simulate(scenario, stack=stack), scenario)


# ---------------------------------------------------------------------------------- building blocks
def test_team_queue_carries_quota_limits_and_policies():
    q = lesson03.team_queue("team-x", 12, borrowing_limit=4, lending_limit=8, strategy="StrictFIFO",
                            reclaim="Any", within="LowerPriority")
    quota = q.resource_groups[0].flavors[0].resources[GPU]
    assert (quota.nominal, quota.borrowing_limit, quota.lending_limit) == (12, 4, 8)
    assert q.resource_groups[0].flavors[0].flavor == lesson03.FLAVOR
    assert (q.cohort, q.queueing_strategy) == (lesson03.COHORT, "StrictFIFO")
    assert (q.preemption.reclaim_within_cohort, q.preemption.within_cluster_queue) == ("Any", "LowerPriority")


def test_every_team_gets_a_local_queue_of_its_own_name_in_its_own_namespace():
    setup = lesson03.kueue_setup([lesson03.team_queue("team-a", 8), lesson03.team_queue("team-b", 8)])
    assert [(lq.name, lq.namespace, lq.cluster_queue) for lq in setup.local_queues] == [
        ("team-a", "team-a", "team-a"), ("team-b", "team-b", "team-b")]
    j = lesson03.team_job("team-b", "b-1", 8, pods=2)
    assert (j.key, j.queue, j.gpus, j.pod_count) == ("team-b/b-1", "team-b", 8, 2)


def test_team_job_refuses_gpus_that_workers_cannot_share_equally():
    with pytest.raises(ValueError, match="cannot be shared equally"):
        lesson03.team_job("team-a", "odd", 5, pods=2)


def test_queues_and_workloads_tables_describe_the_story():
    story = lesson03.two_teams(b_lending_limit=4)
    queues = lesson03.queues_table(story)
    assert list(queues.index) == ["team-a", "team-b"]
    assert queues.loc["team-b", "lendingLimit"] == 4 and queues.loc["team-a", "lendingLimit"] is None
    assert "B lendingLimit 4" in story.description
    workloads = lesson03.workloads_table(story)
    assert workloads["gpus"].sum() == 28 and list(workloads["team"].unique()) == ["team-a", "team-b"]


def test_quota_for_puts_every_job_behind_one_cluster_queue():
    sc = lesson03.quota_for("two-gangs-deadlock", 8, OFF)
    (cq,) = sc.kueue.cluster_queues
    assert cq.resource_groups[0].flavors[0].resources[GPU].nominal == 8 and cq.cohort is None
    assert {lq.cluster_queue for lq in sc.kueue.local_queues} == {cq.name}
    assert sc.kueue.config.wait_for_pods_ready is False


# ---------------------------------------------------------------------------------- the stories
@pytest.mark.parametrize(
    "case, scenario, expected_waits",
    [
        ("Never: the lender waits for the borrowers to finish",
         lesson03.two_teams(reclaim="Never"), {"team-a/a-4": 0.0, "team-b/b-1": 2720.0, "team-b/b-2": 2400.0}),
        ("Any: the lender takes its quota back at once",
         lesson03.two_teams(reclaim="Any"), {"team-a/a-4": 0.0, "team-b/b-1": 0.0, "team-b/b-2": 1500.0}),
        ("borrowingLimit 4: team A's fourth job waits for its own quota",
         lesson03.two_teams(a_borrowing_limit=4), {"team-a/a-4": 3580.0, "team-b/b-2": 0.0, "team-b/b-1": 2700.0}),
        ("lendingLimit 0: team B lends nothing and never waits",
         lesson03.two_teams(b_lending_limit=0), {"team-a/a-3": 3580.0, "team-b/b-1": 0.0}),
        ("StrictFIFO: the big head blocks the small job",
         lesson03.fifo_story("StrictFIFO"), {"team-a/big": 3540.0, "team-a/small": 5280.0}),
        ("BestEffortFIFO: the small job passes the big head",
         lesson03.fifo_story("BestEffortFIFO"), {"team-a/big": 3540.0, "team-a/small": 0.0}),
        ("withinClusterQueue Never: the urgent job waits",
         lesson03.priority_story("Never"), {"team-a/urgent": 6300.0}),
        ("withinClusterQueue LowerPriority: the urgent job starts at once",
         lesson03.priority_story("LowerPriority"), {"team-a/urgent": 0.0}),
        ("starvation, StrictFIFO: big waits only for the jobs ahead of it",
         lesson03.starvation_story("StrictFIFO"), {"team-a/big": 750.0}),
        ("starvation, BestEffortFIFO: big waits for the stream of small jobs to end",
         lesson03.starvation_story("BestEffortFIFO"), {"team-a/big": 4050.0}),
        ("fair sharing off: who borrowed first keeps the idle team's quota",
         lesson03.fair_story(False), {"team-b/b-2": 0.0, "team-b/b-3": 2980.0, "team-b/b-4": 2980.0}),
        ("fair sharing on: team B gets its share of the idle quota at once",
         lesson03.fair_story(True), {"team-b/b-2": 0.0, "team-b/b-3": 0.0, "team-b/b-4": 2980.0}),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_story_waits(case, scenario, expected_waits):
    table = _table(scenario)
    assert {job: table.loc[job, "wait_s"] for job in expected_waits} == expected_waits


@pytest.mark.parametrize(
    "case, scenario, victims, reason",
    [
        ("reclaim takes the two most recently admitted borrowers", lesson03.two_teams(reclaim="Any"),
         ["team-a/a-4", "team-a/a-3"], "InCohortReclamation"),
        ("among equal priorities the most recently admitted sweep goes", lesson03.priority_story("LowerPriority"),
         ["team-a/sweep-2"], "InClusterQueue"),
        ("the victim set is minimal: a-3 is put back", lesson03.reclaim_puzzle(), ["team-a/a-2"],
         "InCohortReclamation"),
        ("no reclaim, no preemption", lesson03.two_teams(reclaim="Never"), [], None),
        ("fair sharing takes one borrowed job back from the team over its share", lesson03.fair_story(True),
         ["team-a/a-4"], "InCohortFairSharing"),
        ("without fair sharing nobody may reclaim quota that team C lent", lesson03.fair_story(False), [], None),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_preemptions(case, scenario, victims, reason):
    r = gk.simulate(scenario, stack="kueue+gang")
    pre = lesson03.preemptions(r, scenario)
    assert list(pre["victim"]) == victims
    assert set(pre["reason"]) == ({reason} if reason else set())
    table = lesson03.job_table(r, scenario)
    assert sorted(table.index[table["evicted"] > 0]) == sorted(victims)


def test_admission_log_tells_who_was_admitted_when_and_who_preempted_whom():
    sc = lesson03.two_teams(reclaim="Any")
    log = lesson03.admission_log(gk.simulate(sc, stack="kueue+gang"), sc)
    a4 = log[log["job"] == "team-a/a-4"]
    assert list(a4["event"]) == ["submitted", "admitted", "started", "preempted", "admitted", "started", "finished"]
    row = a4[a4["event"] == "preempted"].iloc[0]
    assert (row["time_s"], row["detail"], row["by"], row["team"]) == (
        900.0, "InCohortReclamation", "team-b/b-1", "team-a")
    assert "evicted" not in set(log["event"])  # a preemption is one row, with Kueue's reason


def test_quota_usage_follows_kueues_reservation_metric():
    sc = lesson03.two_teams(reclaim="Any")
    r = gk.simulate(sc, stack="kueue+gang")
    usage = lesson03.quota_usage(r, sc).set_index("time_s")
    assert list(usage.columns) == ["team-a", "team-b"]
    assert usage.loc[30.0].tolist() == [16, 0]  # team A borrowed all of team B's quota
    assert usage.loc[900.0].tolist() == [8, 8]  # reclaimed
    assert usage.iloc[-1].tolist() == [0, 0] and usage.index[-1] == r.figures["makespan_s"]
    assert (usage.sum(axis=1) <= 16).all()
    assert usage.index.is_monotonic_increasing and not usage.index.has_duplicates


def test_quota_limits_hold_at_every_instant():
    for a_limit, b_lend in [(4, None), (None, 4), (0, 0), (8, 2)]:
        sc = lesson03.two_teams(a_borrowing_limit=a_limit, b_lending_limit=b_lend)
        usage = lesson03.quota_usage(gk.simulate(sc, stack="kueue+gang"), sc)
        borrowed = (usage["team-a"] - 8).clip(lower=0)
        if a_limit is not None:
            assert borrowed.max() <= a_limit
        if b_lend is not None:
            assert borrowed.max() <= b_lend


def test_lending_story_keeps_nominal_minus_lending_limit_for_team_b():
    kept = {}
    for limit in [None, 0, 2, 4, 8, 12, 16]:
        r = gk.simulate(lesson03.lending_story(limit), stack="kueue+gang")
        kept[limit] = lesson03.gpus_admitted_at(r, "team-b", lesson03.LENDING_B_ARRIVAL_S)
    assert kept == {None: 0, 0: 12, 2: 10, 4: 8, 8: 4, 12: 0, 16: 0}


# ------------------------------------------------------------------------- quota versus node shape
def test_quota_matching_capacity_prevents_the_partial_start_and_over_quota_brings_it_back():
    fits = gk.simulate(lesson03.quota_for("two-gangs-deadlock", 4, OFF), stack="kueue+pod")
    assert not fits.deadlock and fits.summary()["held_idle_gpu_seconds"] == 0
    assert fits.jobs.set_index("job").loc["B", "wait_quota_s"] == 600
    over = gk.simulate(lesson03.quota_for("two-gangs-deadlock", 8, OFF), stack="kueue+pod")
    assert over.deadlock


def test_quota_cannot_see_node_shape_but_the_gang_layer_can():
    frag = lesson03.fragmented_story()
    assert frag.kueue.config.wait_for_pods_ready is False
    pod = gk.simulate(frag, stack="kueue+pod").jobs.set_index("job").loc["team-a/G"]
    gang = gk.simulate(frag, stack="kueue+gang").jobs.set_index("job").loc["team-a/G"]
    assert pod["wait_quota_s"] == gang["wait_quota_s"] == 0  # quota says yes at once
    assert pod["wait_placement_s"] == gang["wait_placement_s"] == 1140
    assert pod["held_idle_gpu_s"] == 3 * 1140 and gang["held_idle_gpu_s"] == 0


def test_reasons_name_the_layer_that_refuses():
    quota = lesson03.reasons_at("two-gangs-deadlock", "kueue+pod", 300)
    assert quota.loc["B", "reason"].startswith("[quota] ") and "4 more needed" in quota.loc["B", "reason"]
    gang = lesson03.reasons_at(lesson03.fragmented_story(), "kueue+gang", 300)
    assert gang.loc["team-a/G", "reason"].startswith("[placement] GangCannotFit")


def test_pods_ready_timeout_frees_what_a_partly_started_gang_holds():
    sc = lesson03.fragmented_story(KueueConfig(pods_ready_timeout=300), with_s=True)
    r = gk.simulate(sc, stack="kueue+pod")
    table = lesson03.job_table(r, sc)
    assert table.loc["team-a/G", "evicted"] == 1  # one PodsReadyTimeout eviction
    assert table.loc["team-a/S", "first_admitted_s"] == 360.0  # takes what G gave back
    evicted = r.events[(r.events["event"] == "evicted") & (r.events["job"] == "team-a/G")]
    assert evicted["detail"].str.contains("PodsReadyTimeout").all() and len(evicted) == 1
    off = gk.simulate(lesson03.fragmented_story(with_s=True), stack="kueue+pod")
    assert r.summary()["held_idle_gpu_seconds"] < off.summary()["held_idle_gpu_seconds"]


# ------------------------------------------------------------------------------------ the explorer
def test_explore_quota_defaults_are_section_2_with_never():
    table = lesson03.explore_quota()
    assert list(table.columns) == lesson03.QUOTA_COLUMNS
    assert table.index.name == "job" and len(table) == 6
    assert table.loc["team-b/b-1", "wait_s"] == 2720.0
    assert table.equals(_table(lesson03.two_teams()))


def test_explore_quota_returns_a_copy():
    first = lesson03.explore_quota()
    first.loc["team-b/b-1", "wait_s"] = -1.0
    assert lesson03.explore_quota().loc["team-b/b-1", "wait_s"] == 2720.0


@pytest.mark.parametrize(
    "case, kwargs, job, column, value",
    [
        ("team B's quota above what the nodes hold: b-1 is admitted at once", dict(b_nominal=16), "team-b/b-1",
         "first_admitted_s", 900.0),
        ("... but starts only when team A's GPUs come back", dict(b_nominal=16), "team-b/b-1", "start_s", 3620.0),
        ("quota above capacity: admitted long before it can start", dict(a_nominal=16, b_nominal=16),
         "team-b/b-1", "first_admitted_s", 900.0),
        ("reclaim Any: b-1 starts at once", dict(reclaim="Any"), "team-b/b-1", "wait_s", 0.0),
        ("no quota for team A: it only borrows, and team B's own jobs go first",
         dict(a_nominal=0, b_lending_limit=4), "team-a/a-2", "wait_s", 5390.0),
        ("... while team B keeps the 4 GPUs it does not lend", dict(a_nominal=0, b_lending_limit=4), "team-b/b-2",
         "wait_s", 0.0),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_explore_quota_follows_its_arguments(case, kwargs, job, column, value):
    assert lesson03.explore_quota(**kwargs).loc[job, column] == value


def test_quota_above_capacity_moves_the_wait_to_placement():
    table = lesson03.explore_quota(a_nominal=16, b_nominal=16)
    b1 = table.loc["team-b/b-1"]
    assert b1["start_s"] > b1["first_admitted_s"]


def test_render_quota_draws_outside_pyplot():
    import matplotlib.pyplot as plt

    before = plt.get_fignums()
    table, fig = lesson03.render_quota(reclaim="Any")
    assert isinstance(fig, Figure) and len(fig.axes) == 1
    assert plt.get_fignums() == before
    assert table.equals(lesson03.explore_quota(reclaim="Any"))
    labels = [line.get_label() for line in fig.axes[0].get_lines()]
    assert "team-a: quota held" in labels and "team-b: nominalQuota 8" in labels


def test_limit_labels_round_trip():
    for v in lesson03.LIMITS:
        assert lesson03.limit_value(lesson03.limit_label(v)) == v
    assert lesson03.limit_label(None) == "none"


def test_quota_explorer_builds_quietly_and_follows_its_controls(capsys):
    ex = lesson03.quota_explorer()
    assert capsys.readouterr().out == ""
    assert ex.updates == 1 and ex.table.loc["team-b/b-1", "wait_s"] == 2720.0
    assert len(ex.output.outputs) == 2 and "image/png" in ex.output.outputs[1]["data"]
    ex.controls["reclaim"].value = "Any"
    assert ex.table.loc["team-b/b-1", "wait_s"] == 0.0
    ex.controls["reclaim"].value = "Never"
    ex.controls["b_lending_limit"].value = "0"
    assert ex.table.equals(lesson03.explore_quota(b_lending_limit=0))
    ex.controls["a_borrowing_limit"].value = "4"
    ex.controls["b_lending_limit"].value = "none"
    assert ex.table.equals(lesson03.explore_quota(a_borrowing_limit=4))
    ex.controls["a_nominal"].value = 12
    assert ex.table.equals(lesson03.explore_quota(a_nominal=12, a_borrowing_limit=4))
    assert capsys.readouterr().out == ""
    assert repr(ex) == "Quota explorer (run this cell to use it)"


def test_plot_quota_marks_borrowing():
    sc = lesson03.two_teams()
    ax = lesson03.plot_quota(gk.simulate(sc, stack="kueue+gang"), sc, until=7200)
    assert ax.get_xlim() == (0.0, 120.0)  # minutes
    assert ax.collections, "the borrowed band is drawn"
    import matplotlib.pyplot as plt

    plt.close(ax.figure)


def test_job_table_of_a_job_that_never_starts_has_nan_times():
    sc = lesson03.two_teams(a_nominal=0, b_nominal=0)
    table = _table(sc)
    assert table["first_admitted_s"].isna().all() and table["start_s"].isna().all()
    assert (table["wait_s"] > 0).all() and not math.isnan(table["wait_s"].iloc[0])
    assert isinstance(table, pd.DataFrame)


def test_backoff_limit_count_deactivates_and_the_log_says_so():
    sc = lesson03.quota_for("two-gangs-deadlock", 8, KueueConfig(pods_ready_timeout=300, backoff_limit_count=3))
    r = gk.simulate(sc, stack="kueue+pod")
    table = lesson03.job_table(r, sc)
    assert table["evicted"].tolist() == [4, 4]  # three requeues, then the last timeout
    log = lesson03.admission_log(r, sc)
    assert log.loc[log["event"] == "deactivated", "job"].tolist() == ["A", "B"]
    assert r.summary()["jobs_deactivated"] == 2


@pytest.mark.parametrize("jobs, kinds", [
    (0, ["ResourceFlavor", "ClusterQueue", "ClusterQueue", "LocalQueue", "LocalQueue"]),
    (1, ["ResourceFlavor", "ClusterQueue", "ClusterQueue", "LocalQueue", "LocalQueue", "Job"]),
    (2, ["ResourceFlavor", "ClusterQueue", "ClusterQueue", "LocalQueue", "LocalQueue", "Job", "Job"]),
])
def test_kueue_manifests_show_the_story_as_a_real_cluster_takes_it(jobs, kinds):
    import yaml

    docs = [d for d in yaml.safe_load_all(lesson03.kueue_manifests(lesson03.two_teams(), jobs=jobs)) if d]
    assert [d["kind"] for d in docs] == kinds
    queues = [d for d in docs if d["kind"] == "ClusterQueue"]
    assert {q["spec"]["cohortName"] for q in queues} == {"research"}
    if jobs:
        assert docs[5]["metadata"]["labels"] == {"kueue.x-k8s.io/queue-name": "team-a"}
