"""``predict`` as named steps: check, read, find the new workloads, choose what to draw, read the snapshot,
sample, sum up.

Each step is a function of its own below, in the order :func:`predict` calls them; the concepts they
use live in the package's other modules (residual life, the filter verdicts, sampling, the snapshot,
the Prediction value).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable

from gangkit.analysis.predict.filters import tolerations_in
from gangkit.analysis.predict.inputs import annotated, object_key, owns, worth_reading, yaml_objects, yaml_paths
from gangkit.analysis.predict.prediction import Prediction, WorkloadPrediction, percentiles
from gangkit.analysis.predict.residual import SERVES, ResidualLife, draw_run_times
from gangkit.analysis.predict.sampling import launch_rows, run_all, with_run_times
from gangkit.analysis.predict.snapshot import AtSnapshot, NewWorkload, dump_time, read_snapshot
from gangkit.model.errors import Problem, ScenarioError

#: the reader's notes about the default run time, which a prediction replaces by its draws
DEFAULT_RUN_TIME_NOTES = ("no gangkit/run-time annotation on ", "job(s) had run longer than their run time")
_OBJ = "predict"


def predict(dump, jobs: Iterable = (), *, stack: str | None = None, samples: int = 100, seed: int = 0,
            horizon: float | None = None, runtime_quantiles=None, workers: int | None = None, client=None,
            snapshot_time=None) -> Prediction:
    """Submit the workloads of ``jobs`` (YAML files) to the cluster of ``dump`` (a dump's file, or several read
    together) at its snapshot time, run ``samples`` futures and sum up each new workload's (see the package).

    ``stack``: as ``gangkit run --stack`` (default: the files' Simulation, else ``gang``). ``horizon``: seconds
    after the snapshot within which a start counts (default: the run's horizon, 30 days). ``runtime_quantiles``: a
    CSV ``quantile,value`` of run times (default: the shipped Philly table). ``workers``: processes (default one per
    CPU; 1 runs here); ``client``: a ``dask.distributed.Client``. ``snapshot_time``: a ``datetime`` (default: the
    dump's latest timestamp). Deterministic for a ``seed``, whatever ``workers``.
    """
    check_arguments(samples=samples, seed=seed, horizon=horizon, workers=workers, stack=stack)
    dump_paths, job_paths = yaml_paths(dump, "dump"), yaml_paths(jobs, "workload file")
    if not job_paths:
        raise ScenarioError([Problem(_OBJ, "jobs", "expected at least one YAML file of workloads to submit")])
    life = ResidualLife.load(runtime_quantiles)
    scenario = load_scenario(dump_paths + job_paths, snapshot_time=snapshot_time, horizon=horizon, stack=stack,
                             seed=seed)
    dump_docs = [d for p in dump_paths if worth_reading(p) for d in yaml_objects(p)]
    job_docs = [d for p in job_paths for d in yaml_objects(p)]
    new = find_new_workloads(scenario, job_docs)
    sampled = jobs_to_draw(scenario, dump_docs + job_docs, life)
    scenario.validate()
    draws = [(i, draw_run_times(scenario.jobs, sampled, life, seed, i)) for i in range(samples)]
    at = read_snapshot(scenario, with_run_times(scenario, sampled, draws[0][1]), new, dump_docs)
    todo = [w.key for w in new if w.key not in at.never]
    results = run_all(scenario, sampled, todo, draws, workers, client) if todo else []
    workloads = [sum_up(w, at, results) for w in new]
    return Prediction(dump_time(scenario), len(results), float(scenario.settings.horizon), scenario.settings.stack,
                      workloads, [scenario.jobs[k].key for k in sampled])


def check_arguments(*, samples, seed, horizon, workers, stack) -> None:
    """Every bad argument at once, each named with what was expected (one :class:`ScenarioError`)."""
    from gangkit.stacks import STACKS

    problems = []
    if isinstance(samples, bool) or not isinstance(samples, int) or samples < 1:
        problems.append(Problem(_OBJ, "samples", f"expected a whole number >= 1, got {samples!r}"))
    if isinstance(seed, bool) or not isinstance(seed, int):
        problems.append(Problem(_OBJ, "seed", f"expected a whole number, got {seed!r}"))
    if horizon is not None and (isinstance(horizon, bool) or not isinstance(horizon, (int, float))
                                or not horizon > 0 or not math.isfinite(horizon)):
        problems.append(Problem(_OBJ, "horizon", f"expected seconds > 0, got {horizon!r}"))
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        problems.append(Problem(_OBJ, "workers", f"expected a whole number >= 1, got {workers!r}"))
    if stack is not None and stack not in STACKS:
        from gangkit.model.scenario import did_you_mean

        hint = did_you_mean(str(stack), list(STACKS))
        problems.append(Problem(_OBJ, "stack", f"unknown stack {stack!r}; " + (hint or f"expected one of {', '.join(STACKS)}")))
    if problems:
        raise ScenarioError(problems)


def load_scenario(paths: list, *, snapshot_time, horizon, stack, seed):
    """The dump and the workload files read together, as ``gangkit run`` reads them, with the run's settings. The
    reader's notes about the default run time are dropped (the samples draw run times instead); the rest are
    passed on."""
    from gangkit.manifests import load_files

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        scenario = load_files(paths, snapshot_time=snapshot_time)
    for w in caught:
        if not any(note in str(w.message) for note in DEFAULT_RUN_TIME_NOTES):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    if horizon is not None:
        scenario = scenario.with_settings(horizon=float(horizon))
    return scenario.with_settings(stack=stack, seed=seed)


def find_new_workloads(scenario, job_docs: list[dict]) -> list[NewWorkload]:
    """The scenario's jobs read from the workload files (not from the dump: they have no snapshot state), in the
    scenario's order; an error when the files hold none."""
    docs = [(object_key(d), d) for d in job_docs if "metadata" in d and d.get("kind") not in ("List",)]
    new = []
    for k, j in enumerate(scenario.jobs):
        doc = next((d for key, d in docs if owns(key, j)), None)
        if doc is not None and j.snapshot is None:
            new.append(NewWorkload(k, j.key, str(doc.get("kind")), tolerations_in(doc)))
    if not new:
        raise ScenarioError([Problem(_OBJ, "jobs", "the workload files hold no workload gangkit runs (a Job, JobSet, "
                                                   "PyTorchJob, Volcano Job, Deployment...)")])
    return new


def jobs_to_draw(scenario, docs: list[dict], life: ResidualLife) -> list[int]:
    """Positions of the jobs whose run times each sample draws: every job that ends (not a Deployment's or
    StatefulSet's pods) and carries no ``gangkit/run-time`` annotation of its own. A warning names them."""
    marked = annotated(docs)
    sampled = [k for k, j in enumerate(scenario.jobs) if j.run_time < SERVES and not any(owns(a, j) for a in marked)]
    if sampled:
        from gangkit.manifests import GangkitInputWarning

        names = ", ".join(scenario.jobs[k].key for k in sampled[:5]) + (", ..." if len(sampled) > 5 else "")
        warnings.warn(f"{len(sampled)} job(s) without a gangkit/run-time annotation: each sample draws their run "
                      f"times from {life.table.source or 'the quantile table'}, given how long they have run: {names}",
                      GangkitInputWarning, stacklevel=3)
    return sampled


def sum_up(w: NewWorkload, at: AtSnapshot, results: list[dict]) -> WorkloadPrediction:
    """One new workload over the samples: the share that start, the start's p10/p50/p90, the bucket holding most of
    its wait (summed over the samples), the snapshot's reason and rows, and the nodes a supplier launched."""
    key = w.key
    if key in at.never:
        return WorkloadPrediction(key, w.kind, 0.0, None, None, at.reasons[key], at.positions.get(key), at.nodes[key],
                                  never=True)
    starts = [r[key]["start"] for r in results if r[key]["start"] is not None]
    waits: dict[str, float] = {}
    for r in results:
        for b, s in r[key]["waits"].items():
            waits[b] = waits.get(b, 0.0) + s
    longest = max(waits.items(), key=lambda kv: kv[1], default=(None, 0.0))
    rows = list(at.nodes[key]) + launch_rows([r[key]["launched"] for r in results])
    return WorkloadPrediction(key, w.kind, round(len(starts) / len(results), 4), percentiles(starts),
                              longest[0] if longest[1] > 0 else None, at.reasons[key], at.positions.get(key), rows)
