"""The simulator against queueing theory (fixed seeds; every tolerance is stated where it is used).

1. **Erlang C.** One-GPU jobs, Poisson arrivals, exponential run times, ``c``
   GPUs: an M/M/c queue. Its mean wait in queue E[Wq] and its probability of
   waiting P(wait > 0) have closed forms (Erlang's C formula). We estimate both
   from the simulated waits with a 99% *batch-means* confidence interval: drop
   a warm-up (the queue starts empty), cut the rest of the jobs, in arrival
   order, into batches, and treat the batch averages as roughly independent
   normal draws. The interval must cover the formula's value. We test the
   wait in queue, not the response time (wait + run time), whose run-time
   part would dilute any error in the wait.

   How many jobs? Waits at high load are strongly correlated from job to job,
   so a precise interval needs very many jobs. The sizes in :data:`CASES` were
   found by measurement: with these seeds the half-width of E[Wq] is 3.9%
   (c=8, load 0.75, 1.62 M jobs), 3.2% (c=8, load 0.9, 4.68 M) and 4.3%
   (c=64, load 0.9, 13 M: the waits there are short and rare, so relatively
   noisy), and that of P(wait) 2% or less; smaller runs (0.96 M, 3 M, 12 M)
   gave 5.6%, 5.3% and 4.8% for E[Wq]. Such runs take the lean engine
   (:mod:`gangkit.engine.lean`, about 10 us per job; making the jobs and their
   table costs more than simulating them): about 10 CPU minutes in all. The
   jobs are split into independent replications (separate seeds, run two at a
   time in parallel processes), each cut into the same number of batches
   after its warm-up: 30 batches in all, and no process holds more than
   1.3 M jobs (about 2.3 GiB). One reduced case (c=8, load 0.75, 6 x 45,000
   jobs) runs through the general engine too (``engine="general"``), with a
   15% bound on the half-width (measured: 8.2% for E[Wq], 3.6% for P(wait)).

2. **Little's law per class**, L = lambda W, with the number in system L
   taken from integrals over time (the timeline's running + waiting jobs for
   the total, the event log's submissions and completions per class), never
   from the jobs' own sojourn times.
3. **Busy GPU-time** (the timeline's useful GPUs integrated over time) equals
   the sum of GPUs x run time of the completed jobs.
4. **Strict ordering** with equal priorities and the placement layer alone:
   the jobs that have started are always a prefix of the arrival order.
"""

from __future__ import annotations

import math
import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import pandas as pd
import pytest

from gangkit import nodes, simulate
from gangkit.workloads.generators import (
    Constant,
    Exponential,
    JobClass,
    Lognormal,
    Poisson,
    Stream,
    mm_c,
    tiered_training,
)

pytestmark = pytest.mark.statistical

MEAN_RUN_S = 100.0
WARMUP = 0.05  # share of each replication's jobs dropped as warm-up (the relaxation time is ~350 arrivals)
BATCHES = 30
T_99_29 = 2.7564  # Student t, 0.995 quantile, 29 degrees of freedom (30 batches)
TOLERANCE = 0.05  # max half-width of each 99% interval, as a share of the value it estimates

# (c, load, replications, jobs per replication): 30 batches in all, 30 / replications per replication
CASES = [
    (8, 0.75, 6, 270_000),
    (8, 0.90, 6, 780_000),
    (64, 0.90, 10, 1_300_000),
]


def erlang_c(c: int, a: float) -> float:
    """P(wait > 0) in M/M/c with offered load ``a`` = lambda / mu (Erlang B by its recursion, then C)."""
    b = 1.0
    for k in range(1, c + 1):
        b = a * b / (k + a * b)
    rho = a / c
    return b / (1.0 - rho + rho * b)


def mmc_theory(c: int, load: float, mean_run: float) -> tuple[float, float]:
    """(E[Wq], P(wait > 0)): E[Wq] = C(c, a) / (c mu - lambda)."""
    a = c * load
    p = erlang_c(c, a)
    return p * mean_run / (c - a), p


def _replication(args) -> np.ndarray:
    """Waits (in arrival order) of one M/M/c run on one node of ``c`` GPUs (``engine``: the run setting)."""
    c, load, n, seed, *engine = args
    import gc

    stream = mm_c(rate=load * c / MEAN_RUN_S, mean_run_time_s=MEAN_RUN_S, n_jobs=n, seed=seed)
    # gang placement with no session period: a job starts the instant a GPU frees (no 1 s alignment)
    sc = stream.scenario(nodes(1, gpus=c), stack="gang", session_period=0.0, record="jobs", horizon=1e15)
    gc.collect()
    gc.freeze()  # a million long-lived objects: keep the cyclic collector from rescanning them
    r = simulate(sc, engine=engine[0] if engine else "auto")
    jobs = r.jobs
    assert (jobs["state"] == "Finished").all()
    return jobs["wait_s"].to_numpy(dtype=float)


def batch_means(waits_per_rep: list[np.ndarray], statistic) -> tuple[float, float]:
    """Point estimate and 99% half-width from the batches of every replication (warm-up dropped from each)."""
    per_rep = BATCHES // len(waits_per_rep)
    means = []
    for w in waits_per_rep:
        w = w[int(len(w) * WARMUP):]
        m = len(w) // per_rep
        for b in range(per_rep):
            means.append(statistic(w[b * m:(b + 1) * m]))
    means = np.array(means)
    assert len(means) == BATCHES
    return float(means.mean()), T_99_29 * float(means.std(ddof=1)) / math.sqrt(len(means))


@pytest.mark.parametrize("c,load,reps,n", CASES, ids=lambda x: str(x))
def test_mmc_wait_matches_erlang_c(c, load, reps, n):
    wq, pw = mmc_theory(c, load, MEAN_RUN_S)
    args = [(c, load, n, 1000 * c + int(100 * load) + k) for k in range(reps)]
    workers = min(2, os.cpu_count() or 1)
    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork")) as pool:
        reps_waits = list(pool.map(_replication, args))
    est_wq, hw_wq = batch_means(reps_waits, np.mean)
    est_p, hw_p = batch_means(reps_waits, lambda w: float(np.mean(w > 0)))
    report = (f"c={c} load={load} ({reps} x {n} jobs): E[Wq] {est_wq:.4g} +- {hw_wq:.3g} (theory {wq:.4g}, "
              f"half-width {hw_wq / wq:.1%}); P(wait) {est_p:.4f} +- {hw_p:.4f} (theory {pw:.4f}, half-width {hw_p / pw:.1%})")
    print(report)
    # the 99% intervals cover Erlang C ...
    assert abs(est_wq - wq) <= hw_wq, report
    assert abs(est_p - pw) <= hw_p, report
    # ... and are narrow enough to mean something
    assert hw_wq <= TOLERANCE * wq, report
    assert hw_p <= TOLERANCE * pw, report


#: The general engine (the lean one off) on a reduced case: 6 x 45,000 jobs at c=8, load 0.75, about
#: 40 CPU s. Fewer jobs, so a wider interval: its half-width must stay within GENERAL_TOLERANCE.
GENERAL_CASE = (8, 0.75, 6, 45_000)
GENERAL_TOLERANCE = 0.15


def test_mmc_wait_matches_erlang_c_through_the_general_engine():
    """The same check through the general engine, so that Erlang C does not rest on the lean engine alone."""
    c, load, reps, n = GENERAL_CASE
    wq, pw = mmc_theory(c, load, MEAN_RUN_S)
    args = [(c, load, n, 7000 + k, "general") for k in range(reps)]
    with ProcessPoolExecutor(min(2, os.cpu_count() or 1), mp_context=multiprocessing.get_context("fork")) as pool:
        reps_waits = list(pool.map(_replication, args))
    est_wq, hw_wq = batch_means(reps_waits, np.mean)
    est_p, hw_p = batch_means(reps_waits, lambda w: float(np.mean(w > 0)))
    report = (f"general engine, c={c} load={load} ({reps} x {n} jobs): E[Wq] {est_wq:.4g} +- {hw_wq:.3g} "
              f"(theory {wq:.4g}); P(wait) {est_p:.4f} +- {hw_p:.4f} (theory {pw:.4f})")
    print(report)
    assert abs(est_wq - wq) <= hw_wq and abs(est_p - pw) <= hw_p, report
    assert hw_wq <= GENERAL_TOLERANCE * wq and hw_p <= GENERAL_TOLERANCE * pw, report


# ---------------------------------------------------------------- Little's law
def integral(times: np.ndarray, values: np.ndarray, end: float) -> float:
    """Integral of a piecewise-constant function: ``values[i]`` holds from ``times[i]`` to the next time."""
    t = np.append(times, end)
    return float(np.sum(values * np.diff(t)))


def little_stream(n=12_000, seed=4, pods=2):
    """Two classes on 16 GPUs at load 0.8: one-GPU jobs and 4-GPU jobs (``pods`` pods of 4 / ``pods`` GPUs).

    Pod by pod, gangs of 2 pods deadlock on this stream (kube-scheduler's refreshed queue timestamps
    interleave two gangs' pods), and a run that does not end empty has no Little's law to check: the
    ``pod`` case takes its 4-GPU jobs as one pod each."""
    classes = [JobClass("one", 0.75, 1, 1, run_time=Exponential(100.0)),
               JobClass("gang4", 0.25, pods, 4 // pods, run_time=Lognormal(150.0, 0.7))]
    probe = Stream(Poisson(1.0), classes, n_jobs=n, seed=seed, name="little")
    return Stream(Poisson(probe.rate_for_load(0.8, 16)), classes, n_jobs=n, seed=seed, name="little")


@pytest.mark.parametrize("stack,ordering", [("gang", "skip"), ("gang", "strict"), ("pod", "skip")])
def test_littles_law_per_class(stack, ordering):
    stream = little_stream(pods=1 if stack == "pod" else 2)
    r = simulate(stream.scenario(nodes(4, gpus=4), stack=stack, ordering=ordering, session_period=0.0,
                                 record="full", horizon=1e12))
    jobs, events, tl = r.jobs, r.events, r.timeline
    assert (jobs["state"] == "Finished").all()
    end = float(tl["time_s"].iloc[-1])
    # total number in system, from the timeline (one row per change; the last row is the end of the run)
    n_total = (tl["running_jobs"] + tl["waiting_jobs"]).to_numpy(dtype=float)
    area_total = integral(tl["time_s"].to_numpy()[:-1], n_total[:-1], end)
    sojourn = (jobs["finish_s"] - jobs["submit_s"]).to_numpy()
    # identity: over a run that ends empty, the integral of N equals the sum of sojourns (float noise only)
    assert area_total == pytest.approx(sojourn.sum(), rel=1e-9)
    # per class: N_k(t) from the event log (+1 at submission, -1 at completion)
    cls = {name: name.rsplit("-", 1)[0] for name in jobs["job"]}
    ev = events[events["event"].isin(["submitted", "finished"])].copy()
    ev["k"] = ev["job"].map(cls)
    ev["d"] = np.where(ev["event"] == "submitted", 1, -1)
    areas = {}
    steps = []
    for k, g in ev.groupby("k"):
        g = g.groupby("time_s")["d"].sum().sort_index()
        n_k = g.cumsum()
        areas[k] = integral(n_k.index.to_numpy(), n_k.to_numpy(dtype=float), end)
        steps.append(n_k.rename(k))
    # the per-class counts add up to the timeline's total at every timeline row
    both = pd.concat(steps, axis=1).sort_index().ffill().fillna(0).sum(axis=1)
    at_rows = both.reindex(both.index.union(tl["time_s"])).ffill().fillna(0).loc[tl["time_s"].to_numpy()[:-1]]
    assert np.array_equal(at_rows.to_numpy(), n_total[:-1])
    rate = stream.arrivals.rate
    for c in stream.classes:
        sel = jobs["job"].map(cls) == c.name
        L = areas[c.name] / end
        W = float(sojourn[sel.to_numpy()].mean())
        # exact form with the observed arrival rate (n_k / T): float noise only
        assert L == pytest.approx(sel.sum() / end * W, rel=1e-9)
        # L = lambda W with the stream's nominal rate lambda_k = p_k lambda: within 5%
        # (the observed count of arrivals has a relative s.e. of 1/sqrt(n_k) <= 1.9%)
        assert L == pytest.approx(c.probability * rate * W, rel=0.05), c.name


# ---------------------------------------------------------------- busy GPU-time
BUSY_CASES = {
    "mmc-gang": (lambda: mm_c(rate=0.07, mean_run_time_s=100.0, n_jobs=5000, seed=2), 8, 1, "gang", "skip"),
    "tiered-gang-strict": (lambda: tiered_training(load=0.9, gpus=256, n_jobs=400, seed=5), 32, 8, "gang", "strict"),
    "tiered-gang-skip": (lambda: tiered_training(load=0.9, gpus=256, n_jobs=400, seed=5), 32, 8, "gang", "skip"),
    "independent-pod": (lambda: Stream(Poisson(0.05), [JobClass("map", 1.0, pods=4, gpus_per_pod=1, progress="independent",
                                                                 run_time=Constant(300.0))], n_jobs=2000, seed=3), 4, 4, "pod", "skip"),
}


@pytest.mark.parametrize("name", BUSY_CASES)
def test_busy_gpu_time_equals_work_done(name):
    make, n_nodes, gpus, stack, ordering = BUSY_CASES[name]
    r = simulate(make().scenario(nodes(n_nodes, gpus=gpus), stack=stack, ordering=ordering, record="jobs", horizon=1e12))
    jobs, tl = r.jobs, r.timeline
    assert (jobs["state"] == "Finished").all()
    end = float(tl["time_s"].iloc[-1])
    busy = integral(tl["time_s"].to_numpy()[:-1], tl["useful_gpus"].to_numpy(dtype=float)[:-1], end)
    work = float((jobs["gpus"] * jobs["run_time_s"]).sum())
    assert busy == pytest.approx(work, rel=1e-9)
    assert r.figures["useful_gpu_seconds"] == pytest.approx(work, rel=1e-9)
    assert float(jobs["useful_gpu_s"].sum()) == pytest.approx(work, rel=1e-9)


# ---------------------------------------------------------------- strict ordering
def prefix_stream(seed):
    """Equal priorities, sizes from 1 to 32 GPUs on 8-GPU nodes: big gangs block under strict."""
    classes = [JobClass("g1", 0.5, 1, 1, run_time=Exponential(600.0)),
               JobClass("g8", 0.3, 1, 8, run_time=Exponential(900.0)),
               JobClass("g32", 0.2, 4, 8, run_time=Exponential(1200.0))]
    probe = Stream(Poisson(1.0), classes, n_jobs=3000, seed=seed)
    return Stream(Poisson(probe.rate_for_load(0.85, 64)), classes, n_jobs=3000, seed=seed)


def started_is_prefix(jobs: pd.DataFrame) -> bool:
    """At every instant the started jobs are a prefix of the arrival order ⇔ start times never
    decrease along the arrival order (the jobs table lists jobs in arrival order)."""
    start = jobs["start_s"].to_numpy(dtype=float)
    return bool(np.all(np.diff(start) >= 0))


@pytest.mark.parametrize("session_period", [0.0, 1.0])
@pytest.mark.parametrize("seed", [1, 2])
def test_strict_starts_a_prefix_of_arrivals(seed, session_period):
    sc = prefix_stream(seed).scenario(nodes(8, gpus=8), record="jobs", horizon=1e12)
    strict = simulate(sc, stack="gang", ordering="strict", session_period=session_period)
    jobs = strict.jobs
    assert (jobs["state"] == "Finished").all()
    assert jobs["submit_s"].is_monotonic_increasing
    assert started_is_prefix(jobs)
    # the property is not vacuous: under skip, small jobs overtake the waiting gangs
    skip = simulate(sc, stack="gang", ordering="skip", session_period=session_period)
    assert not started_is_prefix(skip.jobs)
