"""Lesson 01's explorer: the pod-level deadlock, for any cluster size and any number of sync jobs.

A synchronous training job makes progress only when all its workers run at
once. A pod-by-pod scheduler binds whichever pods fit, so two such jobs
that arrive together can each take part of the cluster and wait for ever
for the rest: a deadlock, with GPUs allocated and nothing running. Gang
admission (all of a job's pods or none) removes it. Whether pod by pod
deadlocks depends on the sizes, and on how the jobs' pods interleave: this
module lets the lesson try them.

- :func:`deadlock_scenario` builds ``jobs`` identical sync jobs on
  ``nodes`` identical nodes (its defaults are the ``two-gangs-deadlock``
  story), arriving together (:data:`ARRIVALS`: interleaved) or one after
  another;
- :func:`explore_deadlock` simulates it under one stack and returns the
  headline figures (:data:`DEADLOCK_COLUMNS`); :func:`compare_stacks`
  gives one row per stack, ``pod`` and ``gang``;
- :func:`deadlock_explorer` is the lesson's widget: sliders over
  :func:`render_deadlock`, which adds both runs' GPU states to the table.

All figures are simulated by gangkit, never measured on a real cluster.
"""

from __future__ import annotations

import dataclasses

import ipywidgets as W
import pandas as pd
from matplotlib.figure import Figure

from gangkit.lessons.explorer import Explorer
from gangkit.model.jobs import job as make_job
from gangkit.model.nodes import nodes as make_nodes
from gangkit.model.scenario import Scenario
from gangkit.results import plots
from gangkit.simulate import simulate

#: How the jobs of :func:`deadlock_scenario` arrive: all at the same instant (their pods are then
#: created interleaved, A-0, B-0, A-1, ..., as the Job controller's concurrent syncs may), or one second apart.
ARRIVALS = ("interleaved", "one after another")

#: The columns of :func:`explore_deadlock` and :func:`compare_stacks`, from the run's summary.
DEADLOCK_COLUMNS = [
    "deadlock", "jobs_finished", "jobs_deadlocked", "jobs_waiting_at_end", "jobs_rejected", "held_idle_gpus_at_end",
    "allocated_utilization", "effective_utilization", "mean_wait_s", "makespan_s",
]


# --------------------------------------------------------------------------- the experiment
def deadlock_scenario(nodes: int = 4, gpus_per_node: int = 1, jobs: int = 2, workers: int = 4,
                      gpus_per_worker: int = 1, arrival: str = "interleaved", run_time: float = 600.0) -> Scenario:
    """``jobs`` sync jobs of ``workers`` pods each on ``nodes`` identical nodes.

    Jobs are named A, B, C, ...; with ``arrival="interleaved"`` they are all
    submitted at t=0, with ``"one after another"`` job *i* is submitted at
    t=*i* seconds. The default is the ``two-gangs-deadlock`` story.
    """
    if arrival not in ARRIVALS:
        raise ValueError(f"arrival: expected one of {', '.join(ARRIVALS)}, got {arrival!r}")
    gap = 0.0 if arrival == "interleaved" else 1.0
    job_list = [make_job(_job_name(i), pods=workers, gpus=gpus_per_worker, run_time=run_time, submit_time=i * gap)
                for i in range(jobs)]
    return Scenario(make_nodes(nodes, gpus=gpus_per_node), job_list, name="deadlock-explorer",
                    description=f"{nodes} nodes x {gpus_per_node} GPUs; {jobs} sync jobs of {workers} workers x "
                                f"{gpus_per_worker} GPUs, arriving {arrival}")


def _job_name(i: int) -> str:
    letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    return letters[i] if i < len(letters) else f"J{i}"


def _deadlock_row(result) -> dict:
    f = result.summary()
    return {k: f[k] for k in DEADLOCK_COLUMNS}


def explore_deadlock(nodes: int = 4, gpus_per_node: int = 1, jobs: int = 2, workers: int = 4, gpus_per_worker: int = 1,
                     stack: str = "pod", arrival: str = "interleaved") -> dict:
    """Simulate :func:`deadlock_scenario` under one stack; return its headline figures as a dict.

    >>> explore_deadlock(stack="pod")["deadlock"], explore_deadlock(stack="gang")["deadlock"]
    (True, False)
    """
    sc = deadlock_scenario(nodes, gpus_per_node, jobs, workers, gpus_per_worker, arrival)
    return _deadlock_row(simulate(sc, stack=stack))


def _run_stacks(nodes, gpus_per_node, jobs, workers, gpus_per_worker, arrival) -> dict:
    sc = deadlock_scenario(nodes, gpus_per_node, jobs, workers, gpus_per_worker, arrival)
    return {stack: simulate(sc, stack=stack) for stack in ("pod", "gang")}


def compare_stacks(nodes: int = 4, gpus_per_node: int = 1, jobs: int = 2, workers: int = 4, gpus_per_worker: int = 1,
                   arrival: str = "interleaved") -> pd.DataFrame:
    """The same :func:`deadlock_scenario` under ``pod`` and ``gang``: one row per stack."""
    results = _run_stacks(nodes, gpus_per_node, jobs, workers, gpus_per_worker, arrival)
    return _stack_table(results)


def _stack_table(results: dict) -> pd.DataFrame:
    table = pd.DataFrame([_deadlock_row(r) for r in results.values()], index=pd.Index(list(results), name="stack"))
    return table[DEADLOCK_COLUMNS]


# --------------------------------------------------------------------------- the explorer
def _window(results) -> float:
    """A time span that shows every change of every run (a deadlocked run stays flat after it)."""
    span = 0.0
    for r in results:
        last = float(r.events["time_s"].max()) if not r.events.empty else 0.0
        span = max(span, last)
    return span if span > 0 else 600.0


def render_deadlock(nodes: int = 4, gpus_per_node: int = 1, jobs: int = 2, workers: int = 4, gpus_per_worker: int = 1,
                    arrival: str = "interleaved") -> tuple[pd.DataFrame, Figure]:
    """What :func:`deadlock_explorer` shows: the pod-vs-gang table and both runs' GPU states."""
    results = _run_stacks(nodes, gpus_per_node, jobs, workers, gpus_per_worker, arrival)
    window = _window(results.values())
    fig = Figure(figsize=(8.5, 5.6))
    axes = fig.subplots(2, 1)
    for ax, r in zip(axes, results.values()):
        plots.gpu_states(r, ax=ax, until=window)
    fig.subplots_adjust(left=0.08, right=0.84, bottom=0.09, top=0.9, hspace=0.65)
    return _stack_table(results), fig


def deadlock_explorer(nodes: int = 4, gpus_per_node: int = 1, jobs: int = 2, workers: int = 4, gpus_per_worker: int = 1,
                      arrival: str = "interleaved") -> Explorer:
    """Lesson 01's explorer: size the cluster and the jobs, see whether pod-by-pod placement deadlocks.

    Sliders for the nodes, GPUs per node, jobs, workers per job and GPUs per
    worker; a toggle for the arrival order. Shows :func:`compare_stacks` and
    the GPU states of both runs (:func:`gangkit.results.plots.gpu_states`).
    """
    style = {"description_width": "9em"}
    layout = W.Layout(width="26em")

    def slider(description: str, value: int, lo: int, hi: int) -> W.IntSlider:
        return W.IntSlider(value=value, min=lo, max=hi, description=description, continuous_update=False,
                           style=style, layout=layout)

    controls = {
        "nodes": slider("nodes", nodes, 1, 12),
        "gpus_per_node": slider("GPUs per node", gpus_per_node, 1, 8),
        "jobs": slider("jobs", jobs, 1, 6),
        "workers": slider("workers per job", workers, 1, 8),
        "gpus_per_worker": slider("GPUs per worker", gpus_per_worker, 1, 8),
        "arrival": W.ToggleButtons(options=list(ARRIVALS), value=arrival, description="arrival", style=style),
    }
    return Explorer("Deadlock explorer",
                    "Each job is a sync job: it runs only when all its workers run. "
                    "Move a slider: both stacks are simulated again (simulated figures).",
                    controls, render_deadlock)


# --------------------------------------------------------------------------- what follows a deadlock
#: PyTorch elastic's rendezvous join timeout (torchrun's c10d backend, ``join_timeout``), seconds.
RENDEZVOUS_TIMEOUT_S = 600.0


def with_churn(scenario: Scenario, timeout: float = RENDEZVOUS_TIMEOUT_S, backoff_limit: int = 6) -> Scenario:
    """``scenario`` with every job's started pods giving up after ``timeout`` s without all their peers.

    Each failed pod is replaced by the Job controller after its backoff, until more pods have
    failed than ``backoff_limit`` (the Job's ``spec.backoffLimit``, 6 by default): then the Job
    fails (:mod:`gangkit.engine.churn`).
    """
    jobs = [dataclasses.replace(j, rendezvous_timeout=float(timeout), backoff_limit=int(backoff_limit))
            for j in scenario.jobs]
    return dataclasses.replace(scenario, jobs=jobs, name=f"{scenario.name} + churn")


def churn_row(result) -> dict:
    """Pod failures, GPU-hours held idle (and how much of it by pods that then failed), jobs finished and failed."""
    s = result.summary()
    return {"pod_failures": int(s.get("pod_failures", 0)), "held_idle_gpu_s": s["held_idle_gpu_seconds"],
            "by_failed_pods_gpu_s": s.get("failed_pod_gpu_seconds", 0.0), "jobs_finished": int(s["jobs_finished"]),
            "jobs_failed": int(s.get("jobs_failed", 0)), "deadlock": bool(s["deadlock"]), "makespan_s": s["makespan_s"]}


def churn_table(jobs_counts=(2, 3)) -> pd.DataFrame:
    """:func:`deadlock_scenario` with 2 and 3 jobs, pod by pod: without a timeout, and with a 600 s rendezvous timeout."""
    rows = {}
    for n in jobs_counts:
        sc = deadlock_scenario(jobs=n)
        rows[(f"{n} jobs", "no timeout")] = churn_row(simulate(sc, stack="pod"))
        rows[(f"{n} jobs", "rendezvous timeout 600 s")] = churn_row(simulate(with_churn(sc), stack="pod"))
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis(["workload", "launcher"])
