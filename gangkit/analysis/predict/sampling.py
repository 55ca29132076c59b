"""Sampling in parallel: many runs of one dump, each with its own run times, spread over processes.

A sample is one ordinary run of the scenario (its stack, through the general engine, as
:func:`gangkit.simulate.replay` runs it) with the drawn run times put into the jobs. Samples are
independent of one another, so they are spread over worker processes (or a Dask client) as
:func:`gangkit.analysis.sweep.sweep` spreads its points. The run times are drawn beforehand in the calling
process (:func:`gangkit.analysis.predict.residual.draw_run_times`, seeded per sample) and each result
is put back in its sample's place, so a seed gives the same prediction whatever the number of workers.

A sample stops as soon as every new workload has started: nothing later changes when they started, and a
run is deterministic, so its events up to then are those of the whole run. A sample costs the events
before the starts it predicts, not the rest of the dump's future.
"""

from __future__ import annotations

import math
import os
import warnings
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import replace

from gangkit.analysis.predict.prediction import percentiles


def with_run_times(scenario, sampled: list[int], run_times: list[float]):
    """``scenario`` with the jobs at positions ``sampled`` given these run times."""
    jobs = list(scenario.jobs)
    for k, rt in zip(sampled, run_times):
        jobs[k] = replace(jobs[k], run_time=rt)
    return replace(scenario, jobs=jobs)


def run_sample(scenario, new: Sequence[str]) -> dict:
    """One sample: the run of ``scenario`` until every workload of ``new`` has started, or the horizon.

    Per workload: its start time (None if it did not start), its wait per bucket (``JobState.waits``; a wait
    still going on is counted to the end, as :func:`gangkit.results.result.build_result` counts it) and the
    nodes the stack's suppliers launched before it started.
    """
    from gangkit.engine.simulation import Simulation
    from gangkit.stacks import build_stack

    sc = scenario.with_settings(record="jobs")
    sim = Simulation(sc, build_stack(sc.settings.stack, sc.settings, sc))
    sim.run(until=0.0)
    wanted = set(new)
    states = {js.spec.key: js for js in sim.all_jobs() if js.spec.key in wanted}
    waiting = [js for js in states.values() if js.started_at is None]
    env, horizon = sim.env, sim.horizon
    peek, step = env.peek, env.step
    while waiting and peek() <= horizon:
        step()
        if any(js.started_at is not None for js in waiting):
            waiting = [js for js in waiting if js.started_at is None]
    end = env.now if not waiting else horizon
    launched = launches(sim)
    sample = {}
    for key in new:
        js = states[key]
        start = js.started_at
        waits = dict(js.waits)
        if start is None:
            for bucket, seconds in sim.wait_split(js, end).items():
                waits[bucket] = waits.get(bucket, 0.0) + seconds
        until = start if start is not None else math.inf
        sample[key] = {"start": None if start is None else float(start),
                       "waits": {b: float(v) for b, v in waits.items()},
                       "launched": [x for x in launched if x[2] <= until]}
    return sample


def run_samples(task: tuple) -> list[dict]:
    """Run some samples of one prediction (one task of the pool): ``(scenario, sampled, new, [(index, run_times)])``
    -> one :func:`run_sample` outcome per sample, in the task's order."""
    scenario, sampled, new, runs = task
    out = []
    for _index, run_times in runs:
        with warnings.catch_warnings():  # the snapshot's own run has reported them
            warnings.simplefilter("ignore")
            out.append(run_sample(with_run_times(scenario, sampled, run_times), new))
    return out


def run_all(scenario, sampled: list[int], new: list[str], draws: list, workers: int | None, client) -> list[dict]:
    """Every sample's outcome, in sample order: here (one worker), in processes, or on a Dask client. The samples
    are dealt round-robin into one task per worker, and each outcome is put back at its sample's index."""
    if client is not None:
        n = max(1, len(client.ncores()) if hasattr(client, "ncores") else 1)
    else:
        n = min(workers or os.cpu_count() or 1, len(draws))
    chunks = [draws[i::n] for i in range(n)]
    tasks = [(scenario, sampled, new, c) for c in chunks if c]
    if client is not None:
        futures = client.map(run_samples, tasks, pure=False)
        parts = client.gather(futures)
    elif len(tasks) == 1:
        parts = [run_samples(tasks[0])]
    else:
        with ProcessPoolExecutor(max_workers=len(tasks)) as pool:
            parts = list(pool.map(run_samples, tasks))
    results: list[dict | None] = [None] * len(draws)
    for c, part in zip(chunks, parts):
        for (i, _), r in zip(c, part):
            results[i] = r
    return results  # type: ignore[return-value]


def launches(sim) -> list[tuple]:
    """(supplier, instance type, launched_s, ready_s) of every node the run's suppliers launched so far (the rows of
    their ``gangkit_karpenter_nodeclaim_stages`` / ``gangkit_autoscaler_node_stages`` tables)."""
    out = []
    for supplier in sim.stack.suppliers:
        for row in getattr(supplier, "_ready_rows", ()):  # (name, pool or group, instance type, launched, ..., ready_at, _)
            if not math.isnan(float(row[6])):  # a node that never became ready (a failed launch) is left out
                out.append((supplier.name, row[2], float(row[3]), float(row[6])))
    return out


def launch_rows(per_sample: list[list[tuple]]) -> list[dict]:
    """The nodes a supplier launched before the workload started, per (supplier, instance type): in what share of
    the samples, how many (median), and when the first was ready (p10/p50/p90 over those samples)."""
    kinds: dict[tuple, list] = {}
    for launched in per_sample:
        seen: dict[tuple, list] = {}
        for supplier, itype, _t0, ready in launched:
            seen.setdefault((supplier, itype), []).append(ready)
        for key, readies in seen.items():
            kinds.setdefault(key, []).append((len(readies), min(readies)))
    rows = []
    for (supplier, itype), got in sorted(kinds.items()):
        counts = sorted(c for c, _ in got)
        rows.append({"pod_set": None, "node": itype, "count": counts[len(counts) // 2], "filter": None,
                     "reason": f"{supplier} launches {itype}", "detail": f"in {len(got)} of {len(per_sample)} samples",
                     "share": round(len(got) / max(1, len(per_sample)), 4),
                     "ready_s": percentiles([r for _, r in got])})
    return rows
