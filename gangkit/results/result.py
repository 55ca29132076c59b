"""What a run leaves behind: tables, a summary, and the deadlock report.

Four pandas DataFrames, one row per thing:

- ``jobs``: one row per job: when it was submitted, started and finished,
  its terminal state, its wait split by layer, GPU-seconds used and held idle;
- ``pods``: one row per pod placement: which node, from when to when;
- ``events``: one row per state change (the unit of every "events/s");
- ``timeline``: the GPU accounting over time, one row per change: useful,
  held-idle, free and not-ready GPUs (they add up to the capacity); the
  last row is the end of the run;
- ``nodes``: one row per node that existed during the run (GPUs, pool),
  ``ready`` at the end of the run, and ``removed_s``, when a node supplier
  removed it (scale-down, consolidation, a node that never registered), NaN
  for a node still there at the end: the nodes not removed add up to the
  timeline's last ``capacity_gpus``, and those of them not ready to its
  last ``not_ready_gpus``.

Terminal states (exactly one per job): ``Finished``; ``Deadlocked`` (holds
GPUs without progress when nothing can change any more: the verdict is
:mod:`gangkit.results.deadlock`'s); ``WaitingAtEnd``
(has not started when the run ends); ``RunningAtEnd`` (started, still
running when the horizon cuts the run); ``Rejected`` (no node could ever
hold one of its pods); ``Deactivated`` (taken out by an admission layer,
e.g. Kueue after too many waitForPodsReady requeues); ``Failed`` (restart
churn: more of its pods failed than its backoffLimit).

Restart churn (:mod:`gangkit.engine.churn`): when a job of the scenario has a
rendezvous timeout, the ``jobs`` table has three more columns, ``pod_failures``
(pods failed, counted against the backoffLimit), ``failed_s`` (when the Job
failed for good) and ``failed_pod_gpu_s`` (GPU-seconds its pods held before
they failed: all of it held idle, part of ``held_idle_gpu_s``), and the
summary three more figures, ``jobs_failed``, ``pod_failures`` and
``failed_pod_gpu_seconds``. Runs without one keep the tables they always had.

Waits: a job's wait is the time from submission to its first start; a job
that never starts is counted to the end of the run and flagged ``censored``.
The wait is split into one column per layer (``wait_quota_s``,
``wait_placement_s``, ...), each from that layer's own timestamps, and an
``wait_unattributed_s`` column that stays 0.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, NamedTuple

import numpy as np
import pandas as pd

from gangkit.engine.simulation import Simulation
from gangkit.engine.state import JobState, OnePodJobs
from gangkit.engine.waits import NODE_BUCKETS
from gangkit.model.reasons import Reason
from gangkit.results.deadlock import HOLDER_COLUMNS, Holder, holder, run_deadlocked, terminal_state
from gangkit.results.deadlock import report as deadlock_report
from gangkit.results.metrics import collect as collect_metrics


class JobHead(NamedTuple):
    """The first columns of a job's row in the ``jobs`` table (:data:`JOB_COLUMNS`), before its wait buckets."""

    job: str
    queue: str
    priority: int
    progress: str
    pods: int
    gpus: int
    gang_size: int
    submit_s: float
    start_s: float  # NaN: never started
    finish_s: float  # NaN: never finished
    state: str  # its terminal state (module doc)
    wait_s: float  # NaN: rejected
    censored: bool  # never started: its wait is counted to the end


class JobTail(NamedTuple):
    """The last columns of a job's row (:data:`JOB_TAIL_COLUMNS`), after its wait buckets."""

    run_time_s: float
    restarts: int
    useful_gpu_s: float
    held_idle_gpu_s: float
    reason: str


class ChurnTail(NamedTuple):
    """The last columns of a job's row in a run with restart churn (:data:`CHURN_TAIL_COLUMNS`)."""

    run_time_s: float
    restarts: int
    pod_failures: int
    failed_s: float  # NaN: has not failed for good
    useful_gpu_s: float
    held_idle_gpu_s: float
    failed_pod_gpu_s: float
    reason: str


JOB_COLUMNS = list(JobHead._fields)
EVENT_COLUMNS = ["time_s", "event", "job", "pod", "node", "layer", "detail"]
NODE_COLUMNS = ["node", "gpus", "cpu", "memory", "pool", "ready", "removed_s"]
JOB_TAIL_COLUMNS = list(JobTail._fields)  # after the wait columns
#: With restart churn: the tail columns with the Job controller's figures (module doc).
CHURN_TAIL_COLUMNS = list(ChurnTail._fields)
POD_COLUMNS = ["job", "pod", "pod_set", "gpus", "node", "created_s", "bound_s", "released_s", "state"]
TIMELINE_COLUMNS = ["time_s", "capacity_gpus", "useful_gpus", "held_idle_gpus", "free_gpus", "not_ready_gpus", "running_jobs", "waiting_jobs"]


@dataclass
class Result:
    """The outcome of :func:`gangkit.simulate`: tables, summary figures, plots."""

    scenario_name: str
    stack: str
    ordering: str
    seed: int
    jobs: pd.DataFrame
    pods: pd.DataFrame
    events: pd.DataFrame
    timeline: pd.DataFrame
    holders: pd.DataFrame
    nodes: pd.DataFrame
    figures: dict = field(default_factory=dict)
    metrics: dict = field(default_factory=dict)  # per-layer metrics, named after the real ones (gangkit.results.metrics)
    scenario: object = field(default=None, repr=False)  # what was run
    #: ``replay(t)``: the live simulation after the events of instant ``t`` (set by :func:`gangkit.simulate`
    #: for a stack chosen by name; None for a hand-made Stack, whose layers cannot be made again)
    replay: Callable[[float], Simulation] | None = field(default=None, repr=False, compare=False)

    def metric(self, name: str) -> pd.DataFrame:
        """One metric by its real name (see :mod:`gangkit.results.metrics`); a clear error lists those this run has."""
        if name not in self.metrics:
            from gangkit.model.errors import Problem, ScenarioError

            raise ScenarioError([Problem("Result", "metrics", f"no metric {name!r} in a {self.stack} run; "
                                         f"available: {', '.join(sorted(self.metrics)) or '(none)'}")])
        return self.metrics[name]

    def diagnose(self, job: str | None = None, at: float | None = None):
        """Which layer holds ``job`` (or every job) at time ``at`` (default: the end), and why, in plain words.

        See :mod:`gangkit.results.diagnosis` (the run is replayed up to ``at``).
        """
        from gangkit.results.diagnosis import diagnose

        return diagnose(self, job=job, at=at)

    def wait_breakdown(self) -> pd.DataFrame:
        """Seconds of wait per bucket, summed over jobs (censored waits counted to the end)."""
        cols = [c for c in self.jobs.columns if c.startswith("wait_") and c.endswith("_s") and c != "wait_s"]
        sums = self.jobs[cols].sum()
        return pd.DataFrame({"bucket": [c[5:-2] for c in cols], "seconds": [round(float(v), 3) for v in sums]})

    @property
    def deadlock(self) -> bool:
        return bool(self.figures["deadlock"])

    def summary(self) -> dict:
        """The headline figures (simulated only, never wall-clock), as a plain dict."""
        return dict(self.figures)

    def summary_table(self) -> pd.DataFrame:
        """The summary as a one-column table, for display."""
        return pd.DataFrame({"value": pd.Series(self.figures, dtype=object)})

    def deadlock_report(self) -> str:
        """Which job holds which GPUs on which nodes, and which pods each still waits for."""
        if not self.deadlock:
            return "no deadlock"
        return deadlock_report(self.figures["deadlock_at_s"], list(self.holders.itertuples()))

    def __repr__(self) -> str:
        f = self.figures
        return (f"<Result {self.scenario_name} stack={self.stack} jobs={f['jobs_total']} finished={f['jobs_finished']} "
                f"deadlock={f['deadlock']} effective_utilization={f['effective_utilization']}>")

    # plots live in gangkit.results.plots; these are shortcuts for notebooks
    def plot_gantt(self, **kw):
        from gangkit.results.plots import gantt
        return gantt(self, **kw)

    def plot_gpu_states(self, **kw):
        from gangkit.results.plots import gpu_states
        return gpu_states(self, **kw)

    def plot_waits(self, **kw):
        from gangkit.results.plots import wait_distribution
        return wait_distribution(self, **kw)


#: ``_row(JobHead, values)``: a named row made as a plain tuple is (a NamedTuple's own ``__new__`` is a Python
#: call with one argument per field, about a microsecond a row of the ``jobs`` table; the values are in field order)
_row = tuple.__new__


@dataclass
class JobRows:
    """The jobs' rows as :func:`build_result` gathers them, one entry per job in each list but ``holders``."""

    heads: list[JobHead] = field(default_factory=list)
    tails: list[JobTail | ChurnTail] = field(default_factory=list)
    waits: list[dict[str, float]] = field(default_factory=list)  # seconds per wait bucket
    holders: list[Holder] = field(default_factory=list)  # the deadlocked jobs only (gangkit.results.deadlock)


def build_result(sim: Simulation) -> Result:
    """Turn a finished :class:`Simulation` into a :class:`Result`.

    Steps: the jobs' rows and the deadlock verdict (:func:`job_rows`, :mod:`gangkit.results.deadlock`),
    the tables, the counts of terminal states and waits (with the jobs a ``summary`` run retired),
    then the headline figures.
    """
    quiescent = sim.quiescent_at is not None
    rows = job_rows(sim, quiescent)
    layers = wait_buckets(sim)
    layers += sorted({b for waits in rows.waits for b in waits if b not in layers})
    jobs = _jobs_table(rows.heads, rows.tails, rows.waits, layers,
                       JOB_TAIL_COLUMNS if sim.churn is None else CHURN_TAIL_COLUMNS)
    events = pd.DataFrame(sim.events, columns=EVENT_COLUMNS).astype({"time_s": float})
    nodes = _nodes_table(sim)
    pods = _pods_table(sim)
    timeline = pd.DataFrame(sim.books.timeline, columns=TIMELINE_COLUMNS).astype({"time_s": float})
    states = Counter(h.state for h in rows.heads)
    waits = [h.wait_s for h in rows.heads if h.state != "Rejected"]
    censored = sum(1 for h in rows.heads if h.censored)
    if sim.retire_jobs:  # add the jobs already retired, and those that never arrived
        jobs = jobs.iloc[0:0] if sim.one_pod_jobs is None else one_pod_jobs_table(sim.one_pod_jobs, layers)
        censored += _add_retired(sim, states, waits)
    figures = _figures(sim, states, np.asarray(waits, dtype=float), censored, run_deadlocked(quiescent, rows.holders))
    return Result(sim.scenario.name, sim.stack.name, sim.settings.ordering, sim.settings.seed,
                  jobs, pods, events, timeline, pd.DataFrame(rows.holders, columns=HOLDER_COLUMNS),
                  nodes, figures, collect_metrics(sim), sim.scenario)


def job_rows(sim: Simulation, quiescent: bool) -> JobRows:
    """The row of every job state the run still holds, and the holders of a deadlock."""
    rows = JobRows()
    end, churn = sim.end_time, sim.churn
    add_head, add_waits, add_tail = rows.heads.append, rows.waits.append, rows.tails.append  # a row per job
    for js in sim.all_jobs():
        state = terminal_state(js, quiescent)
        waits = dict(js.waits)
        failures = churn.record(js) if churn is not None else None
        wait = _wait(sim, js, state, failures, end, waits)
        reason = js.reason
        if reason is None and state in ("WaitingAtEnd", "Deadlocked"):
            reason = _pending_reason(sim, js)
        add_head(_head(js, state, wait))
        add_waits(waits)
        add_tail(_tail(js, churn is not None, failures, "" if reason is None else str(reason)))
        if state == "Deadlocked":
            rows.holders.append(holder(js))
    return rows


def _wait(sim: Simulation, js: JobState, state: str, failures, end: float, waits: dict[str, float]) -> float:
    """A job's wait: submission to first start; a job that never started, to when it ended
    (deactivated, failed) or to the end of the run, those last seconds added to ``waits``."""
    spec, started = js.spec, js.started_at
    if state == "Rejected":
        return math.nan
    if started is not None:
        return started - spec.submit_time
    if state == "Deactivated":
        return js.deactivated_at - spec.submit_time
    if state == "Failed":
        return failures.failed_at - spec.submit_time
    if spec.submit_time > end:  # not yet submitted when the run ended
        js.reason = js.reason or Reason("submission", "NotSubmitted", f"submitted at {spec.submit_time:g} s, after the end of the run")
        return 0.0
    for bucket, seconds in sim.wait_split(js, end).items():  # censored: counted to the end
        waits[bucket] = waits.get(bucket, 0.0) + seconds
    return end - spec.submit_time


def _head(js: JobState, state: str, wait: float) -> JobHead:
    """A job's first columns: what it asked for, when it started and finished, its terminal state and wait."""
    spec, started = js.spec, js.started_at
    pods = spec.pod_count
    return _row(JobHead, (js.name, spec.queue, spec.priority, spec.progress, pods,
                          sum(ps.count * ps.gpus for ps in spec.pod_sets), pods if spec.min_member is None else spec.min_member,
                          float(spec.submit_time), math.nan if started is None else float(started),
                          math.nan if js.finished_at is None else float(js.finished_at), state, wait,
                          state in ("WaitingAtEnd", "Deadlocked", "Deactivated", "Failed") and started is None))


def _tail(js: JobState, churn: bool, failures, reason: str) -> JobTail | ChurnTail:
    """A job's last columns; ``churn``: the run has restart churn (its failures: ``failures``, None if none)."""
    useful, held = _clean(js.useful_gpu_seconds), _clean(js.bound_gpu_seconds - js.useful_gpu_seconds)
    run_time = float(js.spec.run_time)
    if not churn:
        return _row(JobTail, (run_time, js.restarts, useful, held, reason))
    if failures is None:
        return ChurnTail(run_time, js.restarts, 0, math.nan, useful, held, 0.0, reason)
    failed_at = math.nan if failures.failed_at is None else float(failures.failed_at)
    return ChurnTail(run_time, js.restarts, failures.count, failed_at, useful, held,
                     _clean(failures.failed_pod_gpu_seconds), reason)


def _nodes_table(sim: Simulation) -> pd.DataFrame:
    """One row per node that existed during the run; ``removed_s``: when a node supplier removed it (NaN: still there)."""
    rows = [(st.node.name, st.node.gpus, st.node.cpu, st.node.memory, st.node.pool, st.ready,
             sim.removed_at.get(st.index, math.nan)) for st in sim.capacity.nodes]
    return pd.DataFrame(rows, columns=NODE_COLUMNS).astype({"removed_s": float})


def _pods_table(sim: Simulation) -> pd.DataFrame:
    """The pods the engine released, and at the ``full`` level those still bound (``Bound``), by bind time."""
    pod_rows = list(sim.pod_rows)
    if sim.record == "full":
        for js in sim.all_jobs():
            for p in js.pods:
                if p.node is not None:
                    pod_rows.append((js.name, p.name, p.pod_set.name, p.pod_set.gpus, p.node.node.name, p.created, p.bound_at, math.nan, "Bound"))
    pods = pd.DataFrame(pod_rows, columns=POD_COLUMNS).astype({"created_s": float, "bound_s": float, "released_s": float})
    return pods.sort_values(["bound_s", "pod"], kind="stable").reset_index(drop=True)


def _add_retired(sim: Simulation, states: Counter, waits: list[float]) -> int:
    """Count in the jobs a ``summary`` run retired and those that never arrived; return how many are censored."""
    states.update(sim.retired_states)
    waits.extend(sim.retired_waits)
    unsubmitted = sim.job_total - sim.arrived
    states["WaitingAtEnd"] += unsubmitted
    waits.extend([0.0] * unsubmitted)
    return sim.retired_censored + unsubmitted


def _jobs_table(heads: list[JobHead], tails: list[JobTail | ChurnTail], row_waits: list[dict], layers: list[str],
                tail_columns: list[str]) -> pd.DataFrame:
    """The ``jobs`` table, column by column: :data:`JOB_COLUMNS`, a ``wait_<layer>_s`` column per layer
    and ``wait_unattributed_s`` (NaN for a rejected job), then the tail columns."""
    wait_columns = [f"wait_{n}_s" for n in layers] + ["wait_unattributed_s"]
    columns = JOB_COLUMNS + wait_columns + tail_columns
    if not heads:  # no rows: every column an object column, as pandas makes them from no records
        return pd.DataFrame([], columns=columns)
    cols = dict(zip(JOB_COLUMNS, map(list, zip(*heads))))
    rejected = [state == "Rejected" for state in cols["state"]]
    attributed = [0.0] * len(heads)
    for name in layers:
        col = []
        for i, waits in enumerate(row_waits):
            v = math.nan if rejected[i] else round(waits.get(name, 0.0), 6) + 0.0  # _clean, inline
            col.append(v)
            attributed[i] += 0.0 if math.isnan(v) else v
        cols[f"wait_{name}_s"] = col
    cols["wait_unattributed_s"] = [math.nan if r else _clean(w - a)
                                   for r, w, a in zip(rejected, cols["wait_s"], attributed)]
    cols.update(zip(tail_columns, map(list, zip(*tails))))
    return pd.DataFrame(cols, columns=columns)


def one_pod_jobs_table(done: OnePodJobs, layers: list[str]) -> pd.DataFrame:
    """The ``jobs`` table of a lean run in which every job finished, column by column.

    The same table the job states of the general engine give (:func:`job_rows`):
    every job is one pod of ``done.gpus`` GPUs (one count, or one per job) with a gang of one, started once
    and finished, its wait all in ``placement``. ``_clean`` is inlined in the
    comprehensions (the Erlang C tests build tables of millions of rows).
    """
    if layers != ["placement"]:
        raise ValueError(f"a lean run has the placement layer alone, not {layers}")
    specs, g = done.specs, done.gpus
    n = len(specs)
    start, finish, enter = done.start, done.finish, done.enter
    submit = [float(s.submit_time) for s in specs]
    wait = [b - a for a, b in zip(submit, start)]
    # a job that started when it reached placement has no placement stretch (close_wait adds none)
    placement = [round(0.0 + (b - a), 6) + 0.0 if b > a else 0.0 for a, b in zip(enter, start)]
    columns = JOB_COLUMNS + ["wait_placement_s", "wait_unattributed_s"] + JOB_TAIL_COLUMNS
    if not n:  # no rows: pandas makes every column of empty lists an object column
        return pd.DataFrame({c: [] for c in columns}, columns=columns)
    # numpy columns of the dtypes pandas would infer from the lists (it then has nothing to infer): the same table
    floats = lambda values: np.array(values, dtype=np.float64)  # noqa: E731
    ints = lambda value: np.full(n, value, dtype=np.int64)  # noqa: E731
    per_job = not isinstance(g, int)  # several shapes: a count per job
    texts = lambda values: np.array(values, dtype=object)  # noqa: E731
    cols = {
        "job": texts([s.key for s in specs]), "queue": texts([s.queue for s in specs]),
        "priority": np.array([s.priority for s in specs], dtype=np.int64),
        "progress": texts([s.progress for s in specs]), "pods": ints(1), "gang_size": ints(1),
        "gpus": np.array(g, dtype=np.int64) if per_job else ints(g),
        "submit_s": floats(submit), "start_s": floats(start), "finish_s": floats(finish),
        "state": np.full(n, "Finished", dtype=object), "wait_s": floats(wait), "censored": np.zeros(n, dtype=bool),
        "wait_placement_s": floats(placement),
        "wait_unattributed_s": floats([round(w - p, 6) + 0.0 for w, p in zip(wait, placement)]),
        "run_time_s": floats([float(s.run_time) for s in specs]), "restarts": ints(0),
        "useful_gpu_s": floats([round((b - a) * x, 6) + 0.0 for a, b, x in zip(start, finish, g)] if per_job
                               else [round((b - a) * g, 6) + 0.0 for a, b in zip(start, finish)]),
        "held_idle_gpu_s": np.zeros(n, dtype=np.float64), "reason": np.full(n, "", dtype=object),
    }
    return pd.DataFrame(cols, columns=columns)


def wait_buckets(sim: Simulation) -> list[str]:
    """The wait columns of a run: its admission layers, ``placement``, and with a node supplier the
    node buckets (:mod:`gangkit.engine.waits`); any other stage bucket a job was charged to is added after them."""
    out = [layer.name for layer in sim.stack.admission] + ["placement"]
    if sim.stack.suppliers:
        out += list(NODE_BUCKETS)
    return out


def _pending_reason(sim: Simulation, js: JobState):
    for layer in sim.stack.admission:
        if js.layer == layer.name:
            return layer.pending_reason(js)
    return sim.stack.placement.pending_reason(sim, js)


def _clean(x: float) -> float:
    """Round away float noise so that tables print the same on every machine."""
    return round(x, 6) + 0.0


def _figures(sim: Simulation, states: Counter, waits: np.ndarray, censored: int, deadlock: bool) -> dict:
    """The headline figures; waits are summed exactly (math.fsum), so job order cannot change them."""
    I = sim.books.integrals
    cap = I["capacity"]
    def ratio(x: float) -> float:
        return round(x / cap, 4) if cap > 0 else 0.0

    def pct(q: float) -> float:
        return round(float(np.percentile(waits, q)), 3) if len(waits) else 0.0

    held_at_end = int(sim.books.bound_gpus - sim.books.useful_gpus)
    figures = {
        "deadlock": bool(deadlock),
        "deadlock_at_s": float(sim.quiescent_at) if deadlock else None,
        "jobs_total": sim.job_total,
        "jobs_finished": states["Finished"],
        "jobs_rejected": states["Rejected"],
        "jobs_deadlocked": states["Deadlocked"],
        "jobs_waiting_at_end": states["WaitingAtEnd"],
        "jobs_running_at_end": states["RunningAtEnd"],
        "jobs_deactivated": states["Deactivated"],
        "stalled": bool(sim.stalled),
        "allocated_utilization": ratio(I["useful"] + I["held_idle"]),
        "effective_utilization": ratio(I["useful"]),
        "useful_gpu_seconds": round(I["useful"], 3),
        "held_idle_gpu_seconds": round(I["held_idle"], 3),
        "free_gpu_seconds": round(I["free"], 3),
        "not_ready_gpu_seconds": round(I["not_ready"], 3),
        "capacity_gpu_seconds": round(cap, 3),
        "held_idle_gpus_at_end": held_at_end,
        "mean_wait_s": round(math.fsum(waits) / len(waits), 3) if len(waits) else 0.0,
        "p95_wait_s": pct(95),
        "max_wait_s": round(float(waits.max()), 3) if len(waits) else 0.0,
        "censored_jobs": int(censored),
        "makespan_s": round(float(sim.end_time), 3),
        "events": sim.event_count,
    }
    if sim.churn is None:
        return figures
    after = {  # restart churn: each figure goes after its kin
        "jobs_deactivated": {"jobs_failed": states["Failed"]},
        "held_idle_gpu_seconds": {"pod_failures": sim.churn.pod_failures,
                                  "failed_pod_gpu_seconds": round(sim.churn.failed_pod_gpu_seconds, 3)},
    }
    out = {}
    for key, value in figures.items():
        out[key] = value
        out.update(after.get(key, {}))
    return out
