"""How long jobs wait, who starves, and whether the queue keeps growing: the metrics of one run.

Picture a post office with several counters. The manager can report how busy
the counters were (*utilization*), but the customers care about the queue:
how long the typical one waited (*mean, median*), how long the unlucky ones
waited (*p95, p99, max*), and whether the customer who needs all the counters
at once (the *largest gang*) was ever served (*starvation*). If the queue
keeps getting longer all afternoon, more customers come than the counters can
serve: the office is past its *stable load*, and every waiting figure only
says how long the afternoon was.

All figures come from a :class:`~gangkit.results.result.Result` (a run recorded at
level ``jobs`` or ``full``):

- :func:`utilization`: allocated (GPUs bound to pods) and effective (GPUs
  bound to a job that progresses) as fractions of the capacity, integrated
  over the timeline (``useful_gpus``, ``held_idle_gpus``, ``capacity_gpus``),
  over the whole run or over a window;
- :func:`job_waits` and :func:`wait_table`: waits and *bounded slowdown*
  ``max(1, (wait + run) / max(run, tau))`` per job and per job-size class
  (:data:`SIZE_CLASSES`, by GPUs per job), with ``tau`` = :data:`TAU_S` = 10 s
  so that a 1-second job that waited 20 s does not count as 21 times slower;
- :func:`starvation`: the longest wait among the jobs that ask for the most GPUs;
- :func:`idle_while_waiting`: the share of capacity left free while jobs waited;
- :func:`stability`: the slope of the queue length over the second half of
  the arrival period, with a confidence interval (see its docstring);
- :func:`metrics`: all of it as one flat dict (a row of :func:`gangkit.analysis.sweep`).

Censored waits: a job that never started is counted until the end of the run
and flagged ``censored`` (its true wait is longer); it is never dropped.
Each class row says how many of its waits are censored. Rejected jobs (no
node could ever hold one of their pods) never wait and are left out of the
waits, but counted in ``rejected``.

These are the usual figures of the job-scheduling literature (bounded
slowdown as in Feitelson's parallel workload studies, with a threshold of
10 s); the simulated numbers are not measurements of a real cluster.
"""

from __future__ import annotations

import functools
import math
from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd

from gangkit.model.errors import Problem, ScenarioError

#: Bounded slowdown's threshold (seconds): run times below it count as ``TAU_S``.
TAU_S = 10.0

#: Job-size classes by GPUs per job: (label, smallest, largest). One-GPU jobs are the textbook
#: M/M/c customers; 2-8 GPUs fit on one 8-GPU node; 9-32 span a few nodes; 33+ are the big gangs.
SIZE_CLASSES: tuple[tuple[str, int, float], ...] = (
    ("1", 1, 1),
    ("2-8", 2, 8),
    ("9-32", 9, 32),
    ("33+", 33, math.inf),
)

#: The per-class figures of :func:`wait_table` (and, suffixed with ``[class]``, of :func:`metrics`).
CLASS_COLUMNS = ["jobs", "censored", "rejected", "mean_wait_s", "p50_wait_s", "p95_wait_s", "p99_wait_s",
                 "max_wait_s", "mean_bounded_slowdown"]


def size_class(gpus: float, classes=SIZE_CLASSES) -> str:
    """The label of the class a job asking for ``gpus`` GPUs falls in (``"0"`` for a job with no GPUs)."""
    for label, lo, hi in classes:
        if lo <= gpus <= hi:
            return label
    return "0"


def _jobs_table(result) -> pd.DataFrame:
    jobs = result.jobs
    if jobs is None or (len(jobs) == 0 and result.summary().get("jobs_total", 0) > 0):
        raise ScenarioError([Problem(f"Result {result.scenario_name}", "jobs",
                                     "expected a run recorded with record='jobs' or 'full' (this one kept only the totals)")])
    return jobs


def job_waits(result, tau: float = TAU_S, classes=SIZE_CLASSES) -> pd.DataFrame:
    """One row per job: its size class, wait, censored flag, run time and bounded slowdown.

    Rejected jobs keep their row with a NaN wait and slowdown.
    """
    if not tau > 0:
        raise ScenarioError([Problem("job_waits", "tau", f"expected seconds > 0, got {tau!r}")])
    jobs = _jobs_table(result)
    out = pd.DataFrame({
        "job": jobs["job"], "gpus": jobs["gpus"],
        "size_class": [size_class(g, classes) for g in jobs["gpus"]],
        "submit_s": jobs["submit_s"], "wait_s": jobs["wait_s"], "censored": jobs["censored"].astype(bool),
        "run_time_s": jobs["run_time_s"], "rejected": jobs["state"] == "Rejected",
    })
    run = out["run_time_s"].to_numpy(dtype=float)
    wait = out["wait_s"].to_numpy(dtype=float)
    out["bounded_slowdown"] = np.maximum(1.0, (wait + run) / np.maximum(run, tau))
    return out.reset_index(drop=True)


def _class_row(rows: pd.DataFrame) -> dict:
    ok = rows[~rows["rejected"]]
    waits = ok["wait_s"].to_numpy(dtype=float)
    if len(waits) == 0:
        return {"jobs": int(len(rows)), "censored": 0, "rejected": int(rows["rejected"].sum()),
                **{c: math.nan for c in CLASS_COLUMNS[3:]}}
    return {
        "jobs": int(len(rows)),
        "censored": int(ok["censored"].sum()),
        "rejected": int(rows["rejected"].sum()),
        "mean_wait_s": round(math.fsum(waits) / len(waits), 3),
        "p50_wait_s": round(float(np.percentile(waits, 50)), 3),
        "p95_wait_s": round(float(np.percentile(waits, 95)), 3),
        "p99_wait_s": round(float(np.percentile(waits, 99)), 3),
        "max_wait_s": round(float(waits.max()), 3),
        "mean_bounded_slowdown": round(math.fsum(ok["bounded_slowdown"]) / len(ok), 4),
    }


def wait_table(result, tau: float = TAU_S, classes=SIZE_CLASSES) -> pd.DataFrame:
    """Wait figures per job-size class (rows in class order, classes without jobs left out), then ``all``.

    Percentiles use numpy's default (linear interpolation between order
    statistics); censored waits are included at their lower bound.
    """
    per_job = job_waits(result, tau, classes)
    labels = [label for label, *_ in classes] + ["0"]
    rows, index = [], []
    for label in labels:
        part = per_job[per_job["size_class"] == label]
        if len(part):
            rows.append(_class_row(part))
            index.append(label)
    rows.append(_class_row(per_job))
    index.append("all")
    return pd.DataFrame(rows, index=pd.Index(index, name="size_class"), columns=CLASS_COLUMNS)


def starvation(result) -> dict:
    """The longest wait among the jobs that ask for the most GPUs (the largest gangs).

    Returns the GPUs of that size, the job, its wait and whether the wait is
    censored (the job never started: it waited at least that long).
    """
    per_job = job_waits(result)
    ok = per_job[~per_job["rejected"]]
    if len(ok) == 0:
        return {"largest_gpus": 0, "starved_job": "", "starvation_wait_s": 0.0, "starvation_censored": False}
    largest = ok[ok["gpus"] == ok["gpus"].max()]
    worst = largest.loc[largest["wait_s"].idxmax()]
    return {"largest_gpus": int(worst["gpus"]), "starved_job": str(worst["job"]),
            "starvation_wait_s": round(float(worst["wait_s"]), 3), "starvation_censored": bool(worst["censored"])}


# --------------------------------------------------------------------------- timeline integrals
def _step_integral(times: np.ndarray, values: np.ndarray, a: float, b: float) -> float:
    """Integral over [a, b] of the step function that holds ``values[i]`` from ``times[i]`` to ``times[i+1]``."""
    if b <= a or len(times) == 0:
        return 0.0
    edges = np.clip(np.append(times, max(times[-1], b)), a, b)
    return float(np.sum(values * np.diff(edges)))


def utilization(result, start: float | None = None, end: float | None = None) -> dict:
    """Allocated and effective utilization over ``[start, end]`` (default: the whole run).

    Allocated counts every GPU bound to a pod (useful + held idle); effective
    counts only GPUs of jobs that progress. Both are fractions of the
    capacity integrated over the same window.
    """
    tl = result.timeline
    t = tl["time_s"].to_numpy(dtype=float)
    a = float(t[0]) if start is None else float(start)
    b = float(t[-1]) if end is None else float(end)
    cap = _step_integral(t, tl["capacity_gpus"].to_numpy(dtype=float), a, b)
    useful = _step_integral(t, tl["useful_gpus"].to_numpy(dtype=float), a, b)
    held = _step_integral(t, tl["held_idle_gpus"].to_numpy(dtype=float), a, b)
    if cap <= 0:
        return {"allocated_utilization": 0.0, "effective_utilization": 0.0}
    return {"allocated_utilization": round((useful + held) / cap, 4), "effective_utilization": round(useful / cap, 4)}


def idle_while_waiting(result, start: float | None = None, end: float | None = None) -> float:
    """The share of GPU capacity that sat free while at least one job waited, over ``[start, end]``.

    This is the capacity an ordering policy leaves on the table: under
    ``strict``, a gang at the head that does not fit keeps every job behind
    it waiting while GPUs are free. (Free GPUs with an empty queue are just
    a quiet cluster, and are not counted.)
    """
    tl = result.timeline
    t = tl["time_s"].to_numpy(dtype=float)
    a = float(t[0]) if start is None else float(start)
    b = float(t[-1]) if end is None else float(end)
    free = tl["free_gpus"].to_numpy(dtype=float) * (tl["waiting_jobs"].to_numpy() > 0)
    cap = _step_integral(t, tl["capacity_gpus"].to_numpy(dtype=float), a, b)
    return round(_step_integral(t, free, a, b) / cap, 4) if cap > 0 else 0.0


# --------------------------------------------------------------------------- stability
@functools.lru_cache(maxsize=64)
def t_quantile(p: float, df: int) -> float:
    """The ``p`` quantile of Student's t distribution with ``df`` degrees of freedom.

    Found by bisection on the CDF, which is integrated numerically
    (Simpson's rule on the density); accurate to about 1e-6, enough for
    confidence intervals, and free of a scipy dependency.
    """
    if not 0.5 <= p < 1 or df < 1:
        raise ValueError(f"t_quantile needs 0.5 <= p < 1 and df >= 1, got p={p}, df={df}")
    c = math.exp(math.lgamma((df + 1) / 2) - math.lgamma(df / 2)) / math.sqrt(df * math.pi)

    def cdf(x: float) -> float:
        n = 2000
        h = x / n
        f = [c * (1 + (h * i) ** 2 / df) ** (-(df + 1) / 2) for i in range(n + 1)]
        return 0.5 + h / 3 * (f[0] + f[-1] + 4 * sum(f[1:-1:2]) + 2 * sum(f[2:-1:2]))

    lo, hi = 0.0, 1.0
    while cdf(hi) < p:
        lo, hi = hi, hi * 2
    for _ in range(50):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if cdf(mid) < p else (lo, mid)
    return (lo + hi) / 2


@dataclass(frozen=True)
class Stability:
    """The verdict of :func:`stability` and the numbers behind it (slopes in waiting jobs per hour)."""

    verdict: str  # "stable" or "unstable"
    slope_per_h: float
    low_per_h: float
    high_per_h: float
    window_start_s: float
    window_end_s: float
    batches: int
    confidence: float
    mean_queue: float

    def as_dict(self) -> dict:
        return asdict(self)


def stability(result, batches: int = 10, confidence: float = 0.95) -> Stability:
    """Is the run past its stable load? The slope of the queue length, with a confidence interval.

    The queue length is the number of waiting jobs (``timeline.waiting_jobs``).
    The window is the second half of the arrival period (from the first to
    the last submission): the first half is the warm-up from an empty
    cluster, and after the last arrival the queue drains whatever the load,
    so neither says anything about stability. The window is cut into
    ``batches`` equal stretches; each stretch gives its time-weighted mean
    queue length (a *batch mean*, which averages away most of the
    correlation between nearby instants). An ordinary least-squares line
    through the batch means against the stretches' midpoints gives the
    slope; its two-sided ``confidence`` interval uses Student's t with
    ``batches - 2`` degrees of freedom.

    Verdict ``unstable`` when the whole interval lies above 0 (the queue
    grows: more work arrives than the cluster serves), else ``stable``.
    This is a test, not a certainty: a stable run reads ``unstable`` with
    probability about (1 - confidence) / 2, more often if the batches are
    too short to be nearly independent; and a run just past its limit may
    need more jobs before its growth shows.
    """
    if not isinstance(batches, int) or batches < 3:
        raise ScenarioError([Problem("stability", "batches", f"expected a whole number >= 3, got {batches!r}")])
    if not 0 < confidence < 1:
        raise ScenarioError([Problem("stability", "confidence", f"expected a fraction between 0 and 1, got {confidence!r}")])
    jobs = _jobs_table(result)
    tl = result.timeline
    t = tl["time_s"].to_numpy(dtype=float)
    q = tl["waiting_jobs"].to_numpy(dtype=float)
    first, last = float(jobs["submit_s"].min()), float(jobs["submit_s"].max())
    a, b = first + (last - first) / 2, last
    if not b > a:
        return Stability("stable", 0.0, 0.0, 0.0, a, b, batches, confidence, 0.0)
    edges = np.linspace(a, b, batches + 1)
    means = np.array([_step_integral(t, q, lo, hi) / (hi - lo) for lo, hi in zip(edges, edges[1:])])
    mids = (edges[:-1] + edges[1:]) / 2 / 3600.0
    x = mids - mids.mean()
    sxx = float(np.sum(x * x))
    slope = float(np.sum(x * (means - means.mean())) / sxx)
    resid = means - means.mean() - slope * x
    se = math.sqrt(float(np.sum(resid * resid)) / (batches - 2) / sxx)
    half = t_quantile(0.5 + confidence / 2, batches - 2) * se
    low, high = slope - half, slope + half
    verdict = "unstable" if low > 0 else "stable"
    return Stability(verdict, round(slope, 6), round(low, 6), round(high, 6), round(a, 3), round(b, 3),
                     batches, confidence, round(float(np.mean(means)), 4))


# --------------------------------------------------------------------- queueing theory
def erlang_c(servers: int, offered: float) -> float:
    """P(wait > 0) in an M/M/c queue with ``servers`` servers and offered load ``offered`` = arrival rate / service rate.

    Erlang's C formula, through Erlang B's recursion (stable for large ``servers``):
    B(0) = 1, B(k) = a B(k-1) / (k + a B(k-1)); C = B / (1 - rho + rho B) with rho = a / c.
    """
    if not 0 < offered < servers:
        raise ValueError(f"erlang_c needs 0 < offered load < servers, got {offered} and {servers}")
    b = 1.0
    for k in range(1, servers + 1):
        b = offered * b / (k + offered * b)
    rho = offered / servers
    return b / (1.0 - rho + rho * b)


def mmc_wait(servers: int, load: float, mean_service_s: float) -> tuple[float, float]:
    """(mean wait in queue E[Wq], P(wait > 0)) of an M/M/c queue at utilization ``load`` (0 < load < 1).

    E[Wq] = C(c, a) x mean service / (c - a), with a = c x load. For one-GPU jobs on ``servers`` GPUs
    (gangkit's :func:`gangkit.workloads.generators.mm_c` stream) these are the closed forms the
    simulator must reproduce.
    """
    a = servers * load
    p = erlang_c(servers, a)
    return p * mean_service_s / (servers - a), p


def batch_means(values, batches: int = 20, confidence: float = 0.95, warmup: float = 0.05) -> tuple[float, float]:
    """The mean of ``values`` (in arrival order) and the half-width of its ``confidence`` interval.

    The first ``warmup`` share is dropped (the queue starts empty); the rest is cut into ``batches``
    equal batches whose means are treated as independent draws (Student t): waits of successive jobs
    are correlated, so the plain standard error of all values would be far too narrow.
    """
    v = np.asarray(values, dtype=float)
    v = v[int(len(v) * warmup):]
    m = len(v) // batches
    if m < 1 or batches < 2:
        raise ValueError(f"batch_means needs at least {batches} values after the warm-up, got {len(v)}")
    means = np.array([v[i * m:(i + 1) * m].mean() for i in range(batches)])
    half = t_quantile(0.5 + confidence / 2, batches - 1) * float(means.std(ddof=1)) / math.sqrt(batches)
    return float(means.mean()), half


# --------------------------------------------------------------------------- one flat row
def metrics(result, tau: float = TAU_S, classes=SIZE_CLASSES, batches: int = 10, confidence: float = 0.95) -> dict:
    """Every figure of this module for one run, as one flat dict (one row of a sweep).

    Keys: ``allocated_utilization``, ``effective_utilization`` (whole run),
    ``window_allocated_utilization``, ``window_effective_utilization`` (over
    the stability window: the busy second half of the arrivals, without the
    final drain), the wait figures of all jobs (``mean_wait_s`` ...), the
    same per size class suffixed ``[class]`` (``p95_wait_s[2-8]``) for the
    classes present, the starvation figures, and the stability verdict with
    its slope and interval.
    """
    table = wait_table(result, tau, classes)
    row: dict = {}
    row.update(utilization(result))
    st = stability(result, batches, confidence)
    window = utilization(result, st.window_start_s, st.window_end_s)
    row.update({f"window_{k}": v for k, v in window.items()})
    row["window_idle_while_waiting"] = idle_while_waiting(result, st.window_start_s, st.window_end_s)
    for col in CLASS_COLUMNS:
        row[col] = table.loc["all", col]
    for label in table.index:
        if label == "all":
            continue
        for col in CLASS_COLUMNS:
            row[f"{col}[{label}]"] = table.loc[label, col]
    row.update(starvation(result))
    row.update({"stability": st.verdict, "queue_slope_per_h": st.slope_per_h, "queue_slope_low_per_h": st.low_per_h,
                "queue_slope_high_per_h": st.high_per_h, "mean_queue_window": st.mean_queue})
    row["makespan_s"] = result.summary()["makespan_s"]
    return {k: (v.item() if hasattr(v, "item") else v) for k, v in row.items()}
