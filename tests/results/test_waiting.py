"""Waiting metrics: hand-checkable cases for waits, slowdown, starvation, utilization and stability.

The small story (one node of 2 GPUs, stack gang, Volcano sessions every 1 s, whole-second times):

    A 2 GPUs x 100 s at t=0    B 1 GPU x 5 s at t=0    E 2 GPUs x 10 s at t=1    C 1 GPU x 50 s at t=10

skip:   A 0-100, B 100-105, C 100-150 (C fits beside B), E 150-160: E waits 149 s.
strict: A 0-100, B 100-105, E 105-115 (E blocks C), C 115-165: E waits 104 s, C 105 s.
"""

from __future__ import annotations

import math

import pytest

from gangkit import nodes, simulate
from gangkit.model.errors import ScenarioError
from gangkit.model.jobs import job
from gangkit.results.waiting import (
    SIZE_CLASSES,
    TAU_S,
    idle_while_waiting,
    job_waits,
    metrics,
    size_class,
    stability,
    starvation,
    t_quantile,
    utilization,
    wait_table,
)
from gangkit.workloads.generators import mm_c

from builders import gpu_nodes, simulate_on


def story(ordering: str, **settings):
    jobs = [job("A", gpus=2, run_time=100), job("B", gpus=1, run_time=5), job("E", gpus=2, run_time=10, submit_time=1),
            job("C", gpus=1, run_time=50, submit_time=10)]
    return simulate_on(gpu_nodes(1, gpus=2), jobs, stack="gang", ordering=ordering, **settings)


# wait and bounded slowdown max(1, (wait + run) / max(run, 10)) per job, by hand
WAITS = [
    ("skip", "A", 0, 1.0),
    ("skip", "B", 100, (100 + 5) / 10),
    ("skip", "C", 90, (90 + 50) / 50),
    ("skip", "E", 149, (149 + 10) / 10),
    ("strict", "B", 100, 10.5),
    ("strict", "E", 104, (104 + 10) / 10),
    ("strict", "C", 105, (105 + 50) / 50),
]


@pytest.mark.parametrize("ordering, name, wait, slowdown", WAITS)
def test_job_wait_and_bounded_slowdown(ordering, name, wait, slowdown):
    row = job_waits(story(ordering)).set_index("job").loc[name]
    assert row["wait_s"] == pytest.approx(wait)
    assert row["bounded_slowdown"] == pytest.approx(slowdown)
    assert not row["censored"]


@pytest.mark.parametrize("ordering, cls, mean, maximum", [
    ("skip", "1", 95.0, 100.0),       # B 100, C 90
    ("skip", "2-8", 74.5, 149.0),     # A 0, E 149
    ("strict", "1", 102.5, 105.0),    # B 100, C 105
    ("strict", "2-8", 52.0, 104.0),   # A 0, E 104
    ("skip", "all", 84.75, 149.0),
])
def test_wait_table_per_size_class(ordering, cls, mean, maximum):
    table = wait_table(story(ordering))
    assert table.loc[cls, "mean_wait_s"] == pytest.approx(mean)
    assert table.loc[cls, "max_wait_s"] == pytest.approx(maximum)
    assert table.loc[cls, "jobs"] == (4 if cls == "all" else 2)


def test_percentiles_interpolate_between_waits():
    table = wait_table(story("skip"))
    # waits 0, 90, 100, 149: median halfway between 90 and 100; p95 = 100 + 0.85 * 49
    assert table.loc["all", "p50_wait_s"] == pytest.approx(95.0)
    assert table.loc["all", "p95_wait_s"] == pytest.approx(100 + 0.85 * 49)


@pytest.mark.parametrize("ordering, wait", [("skip", 149.0), ("strict", 104.0)])
def test_starvation_is_the_longest_wait_of_the_largest_gangs(ordering, wait):
    s = starvation(story(ordering))
    assert s == {"largest_gpus": 2, "starved_job": "E", "starvation_wait_s": wait, "starvation_censored": False}


@pytest.mark.parametrize("ordering, start, end, effective", [
    # GPU-seconds: A 200 + B 5 + C 50 + E 20 = 275
    ("skip", None, None, 275 / (2 * 160)),
    ("strict", None, None, 275 / (2 * 165)),
    ("skip", 0, 100, 1.0),          # A alone fills the node
    ("skip", 105, 150, 0.5),        # C alone
])
def test_utilization_over_the_run_and_a_window(ordering, start, end, effective):
    u = utilization(story(ordering), start, end)
    assert u["effective_utilization"] == pytest.approx(effective, abs=5e-5)
    assert u["allocated_utilization"] == u["effective_utilization"]  # gang: nothing held idle


def test_whole_run_utilization_matches_the_summary():
    r = story("skip")
    u = utilization(r)
    assert u["effective_utilization"] == r.summary()["effective_utilization"]
    assert u["allocated_utilization"] == r.summary()["allocated_utilization"]


def test_censored_wait_counts_to_the_end_and_is_flagged():
    r = story("strict", horizon=110)  # C never starts: waits 110 - 10 = 100 at least
    rows = job_waits(r).set_index("job")
    assert rows.loc["C", "censored"] and rows.loc["C", "wait_s"] == pytest.approx(100)
    table = wait_table(r)
    assert table.loc["1", "censored"] == 1 and table.loc["1", "jobs"] == 2  # kept, not dropped


def test_rejected_job_is_counted_but_has_no_wait():
    jobs = [job("A", gpus=1, run_time=10), job("huge", gpus=4, run_time=10)]
    r = simulate_on(gpu_nodes(1, gpus=2), jobs, stack="gang")
    table = wait_table(r)
    assert table.loc["2-8", "rejected"] == 1 and math.isnan(table.loc["2-8", "mean_wait_s"])
    assert table.loc["all", "jobs"] == 2 and table.loc["all", "mean_wait_s"] == 0


@pytest.mark.parametrize("gpus, label", [(0, "0"), (1, "1"), (2, "2-8"), (8, "2-8"), (9, "9-32"), (32, "9-32"),
                                         (33, "33+"), (512, "33+")])
def test_size_classes(gpus, label):
    assert size_class(gpus) == label


def test_tau_default_is_ten_seconds():
    assert TAU_S == 10.0
    assert [c[0] for c in SIZE_CLASSES] == ["1", "2-8", "9-32", "33+"]


@pytest.mark.parametrize("p, df, value", [(0.975, 1, 12.7062), (0.975, 8, 2.3060), (0.975, 30, 2.0423),
                                          (0.995, 30, 2.7500), (0.95, 4, 2.1318)])
def test_t_quantiles_match_printed_tables(p, df, value):
    assert t_quantile(p, df) == pytest.approx(value, abs=2e-4)


# ---------------------------------------------------------------- stability
def queue_growing_by_one_every_10s(n=101):
    """One 1-GPU node held by a very long job; then a job every 10 s: the queue grows by 360 jobs per hour."""
    jobs = [job("hog", run_time=1e6)] + [job(f"j{i:03d}", run_time=5, submit_time=10 * i) for i in range(1, n)]
    return simulate_on(gpu_nodes(1, gpus=1), jobs, stack="gang", horizon=2000)


def test_linear_queue_growth_reads_unstable_with_its_exact_slope():
    st = stability(queue_growing_by_one_every_10s())
    # window: second half of the arrivals, 500 s to 1000 s; batch means on a staircase are exactly linear
    assert (st.window_start_s, st.window_end_s) == (500.0, 1000.0)
    assert st.slope_per_h == pytest.approx(360.0)
    assert st.low_per_h == pytest.approx(360.0) and st.verdict == "unstable"


def test_empty_queue_reads_stable_with_zero_slope():
    jobs = [job(f"j{i}", run_time=5, submit_time=10 * i) for i in range(50)]
    st = stability(simulate_on(gpu_nodes(1, gpus=1), jobs, stack="gang"))
    assert (st.verdict, st.slope_per_h, st.low_per_h, st.high_per_h, st.mean_queue) == ("stable", 0, 0, 0, 0)


@pytest.mark.parametrize("load, verdict", [(0.5, "stable"), (0.7, "stable"), (1.3, "unstable"), (1.5, "unstable")])
def test_mm_c_stable_below_capacity_unstable_above(load, verdict):
    """M/M/8, 2000 jobs, mean run time 100 s, seed 1: the queue grows only past load 1."""
    stream = mm_c(rate=load * 8 / 100, mean_run_time_s=100, n_jobs=2000, seed=1)
    r = simulate(stream.scenario(nodes(1, gpus=8)), stack="gang", ordering="strict", record="jobs")
    assert stability(r).verdict == verdict


def test_metrics_row_is_flat_and_complete():
    row = metrics(story("skip"))
    for key in ("allocated_utilization", "effective_utilization", "window_effective_utilization", "mean_wait_s",
                "p99_wait_s", "mean_bounded_slowdown", "mean_wait_s[1]", "max_wait_s[2-8]", "starvation_wait_s",
                "starved_job", "stability", "queue_slope_low_per_h", "censored"):
        assert key in row
    assert row["max_wait_s[2-8]"] == 149.0 and row["starved_job"] == "E"
    assert all(not hasattr(v, "dtype") for v in row.values())  # plain Python values


@pytest.mark.parametrize("call, field", [
    (lambda r: stability(r, batches=2), "batches"),
    (lambda r: stability(r, confidence=1.5), "confidence"),
    (lambda r: job_waits(r, tau=0), "tau"),
])
def test_bad_arguments_name_the_field(call, field):
    with pytest.raises(ScenarioError, match=field):
        call(story("skip"))


def test_summary_only_run_is_refused_with_a_reason():
    with pytest.raises(ScenarioError, match="record='jobs'"):
        wait_table(story("skip", record="summary"))


@pytest.mark.parametrize("ordering, start, end, share", [
    # skip: C runs beside B, then alone while E waits (150 - 105 s, 1 GPU free): 45 of 2 x 160 GPU-s
    ("skip", None, None, 45 / 320),
    # strict: 100-105 s, B runs and 1 GPU is free while E and C wait: 5 of 2 x 165; after 115 s nobody waits
    ("strict", None, None, 5 / 330),
    ("skip", 0, 100, 0.0),          # A fills the node
])
def test_idle_while_waiting_counts_free_gpus_only_when_someone_waits(ordering, start, end, share):
    assert idle_while_waiting(story(ordering), start, end) == pytest.approx(share, abs=5e-5)


@pytest.mark.parametrize("servers, offered, expected", [
    (1, 0.5, 0.5),  # M/M/1: P(wait) = rho
    (2, 1.0, 1 / 3),  # M/M/2 at a = 1: C = 1/3
    (8, 6.0, None),  # M/M/8 at load 0.75: against the textbook sum below
    (64, 57.6, None),
])
def test_erlang_c_against_known_values(servers, offered, expected):
    import math

    from gangkit.results.waiting import erlang_c

    if expected is None:  # C = (a^c / c!) (c / (c - a)) / (sum_{k<c} a^k / k! + (a^c / c!) (c / (c - a)))
        tail = offered ** servers / math.factorial(servers) * servers / (servers - offered)
        expected = tail / (sum(offered ** k / math.factorial(k) for k in range(servers)) + tail)
    assert erlang_c(servers, offered) == pytest.approx(expected, rel=1e-9)


def test_mmc_wait_and_batch_means():
    from gangkit.results.waiting import batch_means, mmc_wait

    wq, p = mmc_wait(1, 0.5, 100.0)  # M/M/1: E[Wq] = rho / (mu - lambda) = 0.5 / (0.01 - 0.005)
    assert (wq, p) == (pytest.approx(100.0), pytest.approx(0.5))
    mean, half = batch_means([0.0] * 100 + [1.0] * 100, batches=4, warmup=0.0)
    assert mean == 0.5 and half > 0
    with pytest.raises(ValueError, match="0 < offered load < servers"):
        mmc_wait(2, 1.0, 10.0)
