"""gangkit.plots.quota: per ClusterQueue, nominal quota, what it reserves, borrows and lends, and the cohort tree.

The data the picture draws is :func:`gangkit.plots.quota_table`; its rules are checked on a table of
runs (two teams borrowing and reclaiming, limits, a lending limit, three teams, nested cohorts with
quota of their own, a ClusterQueue alone), then the few figures the lesson quotes, the cohort tree,
the errors, and that the figure draws.
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

import gangkit as gk  # noqa: E402
from gangkit.kueue.objects import GPU, Cohort, FlavorQuotas, Quota, ResourceGroup  # noqa: E402
from gangkit.lessons import lesson03  # noqa: E402
from gangkit.model.nodes import nodes as make_nodes  # noqa: E402
from gangkit.model.scenario import Scenario  # noqa: E402
from gangkit.results import plots  # noqa: E402

EPS = 1e-6


def _gpu_quota(nominal: int, lending_limit: int | None = None) -> list[ResourceGroup]:
    return [ResourceGroup((GPU,), (FlavorQuotas(lesson03.FLAVOR, {GPU: Quota(nominal, None, lending_limit)}),))]


def nested_cohorts() -> Scenario:
    """Cohort ``org`` (4 GPUs of its own) holds ClusterQueue ``z`` and Cohort ``lab``; ``lab`` holds ``x`` and
    ``y`` (lendingLimit 2). ``x`` floods with twelve 1-GPU jobs from t=0; ``z`` sends two at t=600 s."""
    queues = [lesson03.team_queue("x", 4, cohort="lab"), lesson03.team_queue("y", 4, cohort="lab", lending_limit=2),
              lesson03.team_queue("z", 4, cohort="org")]
    setup = lesson03.kueue_setup(queues)
    setup.cohorts = [Cohort("org", None, _gpu_quota(4)), Cohort("lab", "org", [])]
    jobs = [lesson03.team_job("x", f"x-{i}", 1, run_time=3600, submit_time=i) for i in range(12)]
    jobs += [lesson03.team_job("z", f"z-{i}", 1, run_time=1800, submit_time=600) for i in range(2)]
    return Scenario(make_nodes(2, gpus=8), jobs, kueue=setup, name="nested-cohorts")


CASES = {
    "two teams, team B reclaims with Any": lambda: lesson03.two_teams(reclaim="Any"),
    "two teams, team B waits with Never": lambda: lesson03.two_teams(),
    "team A capped by borrowingLimit 4": lambda: lesson03.two_teams(a_borrowing_limit=4),
    "team B lends at most 4 (lendingLimit 4)": lambda: lesson03.two_teams(b_lending_limit=4),
    "team B lends nothing (lendingLimit 0)": lambda: lesson03.lending_story(0),
    "team B of 12 GPUs lends at most 4": lambda: lesson03.lending_story(4),
    "three teams, one idle, fair sharing on": lambda: lesson03.fair_story(fair_sharing=True),
    "nested cohorts, a cohort with quota of its own": nested_cohorts,
    "one ClusterQueue without cohort": lambda: lesson03.fifo_story(),
}


@pytest.fixture(scope="module", params=list(CASES), ids=list(CASES))
def run(request):
    scenario = CASES[request.param]()
    result = gk.simulate(scenario, stack="kueue+gang")
    return request.param, result, plots.quota_table(result)


def _queues(table: pd.DataFrame) -> pd.DataFrame:
    return table[table["kind"] == "ClusterQueue"]


def test_borrowed_is_only_what_is_reserved_above_nominal(run):
    _, _, table = run
    q = _queues(table)
    assert (q.loc[q["borrowed"] > 0, "reserved"] > q.loc[q["borrowed"] > 0, "nominal"]).all()
    expected = (q["reserved"] - q["nominal"]).clip(lower=0).where(q["cohort"].notna(), 0.0)
    assert (q["borrowed"] - expected).abs().max() < EPS


def test_what_a_queue_lends_and_uses_itself_fits_in_its_nominal_quota(run):
    _, _, table = run
    q = _queues(table)
    own_use = q[["reserved", "nominal"]].min(axis=1)
    assert (q["lent"] + own_use <= q["nominal"] + EPS).all()
    assert (q["lent"] <= q["lendable"] + EPS).all() and (q["lent"] >= 0).all()


def test_no_queue_lends_beyond_its_lending_limit_or_borrows_beyond_its_borrowing_limit(run):
    _, _, table = run
    q = _queues(table)
    lending = q[q["lending_limit"].notna()]
    assert (lending["lent"] <= lending["lending_limit"].astype(float) + EPS).all()
    assert (lending["lendable"] <= lending["lending_limit"].astype(float) + EPS).all()
    borrowing = q[q["borrowing_limit"].notna()]
    assert (borrowing["borrowed"] <= borrowing["borrowing_limit"].astype(float) + EPS).all()


def test_at_each_instant_the_lenders_lend_what_the_borrowers_borrow(run):
    _, _, table = run
    per_instant = table.groupby("time_s")[["borrowed", "lent"]].sum()
    assert (per_instant["borrowed"] - per_instant["lent"]).abs().max() < EPS


def test_the_table_starts_at_zero_ends_at_the_run_end_and_is_in_time_order(run):
    _, result, table = run
    times = table["time_s"]
    assert times.iloc[0] == 0.0 and times.iloc[-1] == result.figures["makespan_s"]
    assert times.is_monotonic_increasing
    assert list(table.columns) == plots.QUOTA_TABLE_COLUMNS


@pytest.mark.parametrize(("story", "t", "expected"), [
    (lambda: lesson03.two_teams(reclaim="Any"), 30.0,
     {"team-a": (16, 8, 0), "team-b": (0, 0, 8)}),
    (lambda: lesson03.two_teams(reclaim="Any"), 900.0,
     {"team-a": (8, 0, 0), "team-b": (8, 0, 0)}),
    (lambda: lesson03.two_teams(b_lending_limit=4), 20.0,
     {"team-a": (12, 4, 0), "team-b": (0, 0, 4)}),
    (lambda: lesson03.lending_story(4), 600.0,
     {"team-a": (8, 4, 0), "team-b": (8, 0, 4)}),
    (nested_cohorts, 600.0, {"x": (12, 8, 0), "y": (0, 0, 2), "z": (2, 0, 2)}),
], ids=["team A borrows all of team B's 8 GPUs, team B lends them",
        "after the reclaim nobody borrows or lends",
        "a lendingLimit of 4 lends 4 and keeps the rest",
        "team B of 12 GPUs uses 8 and lends its 4, the most it may",
        "nested: lab's own lender gives first, then the org's ClusterQueue and quota share the rest"])
def test_reserved_borrowed_and_lent_at_an_instant(story, t, expected):
    table = plots.quota_table(gk.simulate(story(), stack="kueue+gang"))
    q = _queues(table).set_index(["time_s", "name"])
    got = {name: tuple(int(round(q.loc[(t, name), c])) for c in ("reserved", "borrowed", "lent")) for name in expected}
    assert got == expected


def test_a_cohorts_own_quota_lends_beside_its_queues():
    table = plots.quota_table(gk.simulate(nested_cohorts(), stack="kueue+gang"))
    org = table[(table["kind"] == "Cohort") & (table["time_s"] == 600.0)]
    # x borrows 8: y lends 2 inside lab; org serves 6 from z's 2 unused GPUs and its own 4, in proportion 2:4
    assert org[["name", "nominal", "lent"]].values.tolist() == [["org", 4, 4.0]]


def test_cluster_queues_keeps_their_rows_but_counts_every_lender():
    r = gk.simulate(lesson03.two_teams(reclaim="Any"), stack="kueue+gang")
    only_b = plots.quota_table(r, cluster_queues=["team-b"])
    assert set(only_b["name"]) == {"team-b"}
    assert only_b.set_index("time_s").loc[30.0, "lent"] == 8.0


def test_until_cuts_the_table():
    r = gk.simulate(lesson03.two_teams(reclaim="Any"), stack="kueue+gang")
    table = plots.quota_table(r, until=1000)
    assert sorted(set(table["time_s"]))[-2:] == [900.0, 1000.0]


def test_the_same_run_gives_the_same_table():
    a = plots.quota_table(gk.simulate(lesson03.lending_story(4), stack="kueue+gang"))
    b = plots.quota_table(gk.simulate(lesson03.lending_story(4), stack="kueue+gang"))
    assert a.equals(b)


def test_a_run_without_kueue_objects_uses_the_default_cluster_queue():
    r = gk.simulate("two-gangs-deadlock", stack="kueue+gang")
    table = plots.quota_table(r)
    assert set(table["name"]) == {"cluster-queue"} and table["cohort"].isna().all()
    assert table["nominal"].iloc[0] == int(r.nodes["gpus"].sum())
    assert (table["lent"] == 0).all() and (table["borrowed"] == 0).all()


# ---------------------------------------------------------------------------------- the cohort tree
@pytest.mark.parametrize(("story", "rows"), [
    (lambda: lesson03.two_teams(b_lending_limit=4),
     [("research", "Cohort", None, 0, None, None, 12),
      ("├─ team-a", "ClusterQueue", "research", 8, None, None, 8),
      ("└─ team-b", "ClusterQueue", "research", 8, None, 4, 8)]),
    (nested_cohorts,
     [("org", "Cohort", None, 4, None, None, 14),
      ("├─ lab", "Cohort", "org", 0, None, None, 6),
      ("│  ├─ x", "ClusterQueue", "lab", 4, None, None, 4),
      ("│  └─ y", "ClusterQueue", "lab", 4, None, 2, 4),
      ("└─ z", "ClusterQueue", "org", 4, None, None, 4)]),
    (lambda: lesson03.fifo_story(), [("team-a", "ClusterQueue", None, 8, None, None, 8)]),
], ids=["two teams under cohort research: the cohort's subtree quota is team A's 8 and the 4 team B may lend",
        "nested cohorts: lab's subtree quota is x's 4 and the 2 y lends; org adds z's 4 and its own 4",
        "a ClusterQueue without cohort is a tree of its own"])
def test_cohort_tree_lists_nodes_under_their_parents_with_their_quotas(story, rows):
    tree = plots.cohort_tree(story())
    cols = ["tree", "kind", "parent", "nominal", "borrowing_limit", "lending_limit", "subtree_quota"]
    assert [tuple(r) for r in tree[cols].itertuples(index=False)] == rows


def test_cohort_tree_reads_a_result_like_its_scenario():
    sc = lesson03.two_teams()
    assert plots.cohort_tree(gk.simulate(sc, stack="kueue+gang")).equals(plots.cohort_tree(sc.kueue))


# ---------------------------------------------------------------------------------- errors
@pytest.mark.parametrize(("call", "message"), [
    (lambda r: plots.quota_table(gk.simulate("two-gangs-deadlock", stack="gang")), "no Kueue layer"),
    (lambda r: plots.quota(gk.simulate("two-gangs-deadlock", stack="gang")), "kueue\\+ stack"),
    (lambda r: plots.quota_table(r, cluster_queues=["team-z"]), "no ClusterQueue 'team-z'"),
    (lambda r: plots.quota(r, ax=[Figure().subplots()]), "expected 2 Axes"),
    (lambda r: plots.quota(r, unit="weeks"), "unit: expected one of"),
    (lambda r: plots.cohort_tree(42), "expected a Result of a kueue\\+ stack"),
], ids=["a run without a Kueue layer has no quota table", "nor a quota picture",
        "an unknown ClusterQueue is named", "one Axes for two ClusterQueues is refused",
        "an unknown time unit is refused", "a number is no cohort tree"])
def test_bad_input_gets_one_clear_error(call, message):
    r = gk.simulate(lesson03.two_teams(), stack="kueue+gang")
    with pytest.raises(ValueError, match=message):
        call(r)


# ---------------------------------------------------------------------------------- the figure
def test_the_figure_draws_a_panel_per_queue_a_legend_and_the_tree_outside_pyplot():
    import matplotlib.pyplot as plt

    before = plt.get_fignums()
    fig = Figure(figsize=(10, 4.4))
    r = gk.simulate(lesson03.two_teams(b_lending_limit=4, reclaim="Any"), stack="kueue+gang")
    axes = plots.quota(r, ax=fig, until=7200)
    assert plt.get_fignums() == before
    assert [a.get_title(loc="left") for a in axes] == ["ClusterQueue team-a (cohort research)",
                                                        "ClusterQueue team-b (cohort research)"]
    assert len(fig.axes) == 3 and axes[0].get_xlim() == (0.0, 7200.0)
    side = fig.axes[2]
    labels = [t.get_text() for t in side.get_legend().get_texts()]
    assert labels[:4] == [plots.QUOTA_LABELS["reserved"], plots.QUOTA_LABELS["lent"], plots.QUOTA_LABELS["borrowed"],
                          "nominalQuota"]
    tree = side.texts[0].get_text()
    assert "└─ team-b" in tree and "lendingLimit 4" in tree
    assert len(axes[1].collections) == 2  # team B: reserved and lent (it never borrows)
    fig.canvas.draw()  # renders


def test_given_axes_get_the_panels_and_the_legend():
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(2, 1)
    axes = plots.quota(gk.simulate(lesson03.two_teams(), stack="kueue+gang"), ax=ax, unit="min")
    assert list(axes) == list(ax) and axes[0].get_legend() is not None
    assert axes[1].get_xlabel() == "simulated time (minutes)"
    plt.close(fig)
