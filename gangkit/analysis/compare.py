"""Same workload, same seed, several stacks: one comparison table.

Like testing one recipe in several ovens: the jobs, nodes and random
stream are identical, only the layers differ, so every difference in the
table comes from the layers. One row per stack::

    gk.compare("three-workers", stacks=["pod", "gang", "kueue+gang"], seed=0)

Columns:

- ``finished``, ``deadlocked`` (jobs in each terminal state), ``waiting_at_end``,
  ``deadlock`` (the run is deadlocked);
- ``mean_wait_s``, ``p95_wait_s`` (censored waits counted to the end of the
  run, as in ``Result.summary()``), ``censored`` (jobs that never started);
- GPU-hours ``useful``, ``held_idle``, ``free``, ``not_ready`` (they add up to
  ``capacity_gpu_h``) and ``effective_utilization``;
- ``dominant_wait``: the wait bucket (:mod:`gangkit.engine.waits`) with the most
  job-seconds, and its ``dominant_wait_share`` of all wait; ``-`` when no
  job waited.
"""

from __future__ import annotations

import pandas as pd

from gangkit.model.errors import Problem, ScenarioError
from gangkit.results.result import Result
from gangkit.stacks import STACKS

COLUMNS = ["stack", "finished", "deadlocked", "waiting_at_end", "deadlock", "mean_wait_s", "p95_wait_s", "censored",
           "useful_gpu_h", "held_idle_gpu_h", "free_gpu_h", "not_ready_gpu_h", "capacity_gpu_h",
           "effective_utilization", "dominant_wait", "dominant_wait_share"]


def run_stacks(scenario, stacks=None, seed: int | None = None, **settings) -> dict[str, Result]:
    """Simulate ``scenario`` (an object or a built-in name) through each stack; results by stack name."""
    from gangkit.simulate import simulate

    if isinstance(stacks, str) or (stacks is not None and (not stacks or not all(isinstance(s, str) for s in stacks))):
        raise ScenarioError([Problem("compare", "stacks", f"expected a non-empty list of stack names, got {stacks!r}")])
    if isinstance(scenario, str):
        from gangkit.workloads.scenarios import load

        scenario = load(scenario, seed=seed)
    stacks = list(STACKS if stacks is None else stacks)
    return {name: simulate(scenario, stack=name, seed=seed, **settings) for name in dict.fromkeys(stacks)}


def row(result: Result) -> dict:
    """The comparison row of one result."""
    f = result.figures
    h = lambda key: round(f[key] / 3600.0, 3)  # noqa: E731 - GPU-seconds to GPU-hours
    waits = result.wait_breakdown() if len(result.jobs) else pd.DataFrame({"bucket": [], "seconds": []})
    waits = waits[waits.bucket != "unattributed"]
    total = float(waits.seconds.sum())
    if total > 0:
        top = waits.sort_values("seconds", ascending=False, kind="stable").iloc[0]
        dominant, share = top.bucket, round(float(top.seconds) / total, 3)
    else:
        dominant, share = "-", 0.0
    return {
        "stack": result.stack, "finished": f["jobs_finished"], "deadlocked": f["jobs_deadlocked"],
        "waiting_at_end": f["jobs_waiting_at_end"], "deadlock": f["deadlock"],
        "mean_wait_s": f["mean_wait_s"], "p95_wait_s": f["p95_wait_s"], "censored": f["censored_jobs"],
        "useful_gpu_h": h("useful_gpu_seconds"), "held_idle_gpu_h": h("held_idle_gpu_seconds"),
        "free_gpu_h": h("free_gpu_seconds"), "not_ready_gpu_h": h("not_ready_gpu_seconds"),
        "capacity_gpu_h": h("capacity_gpu_seconds"), "effective_utilization": f["effective_utilization"],
        "dominant_wait": dominant, "dominant_wait_share": share,
    }


def table(results: dict[str, Result]) -> pd.DataFrame:
    """One row per result, in the order given."""
    return pd.DataFrame([row(r) for r in results.values()], columns=COLUMNS)


def compare(scenario, stacks=None, seed: int | None = None, **settings) -> pd.DataFrame:
    """Run the same scenario and seed through ``stacks`` (default: every stack) and compare them.

    Other keyword arguments are run settings (``ordering``, ``horizon``, ...)
    applied to every run.
    """
    return table(run_stacks(scenario, stacks, seed=seed, **settings))
