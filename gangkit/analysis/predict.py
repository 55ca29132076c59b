"""Before you submit: will my job start, when, and why not (``gangkit predict``).

A live cluster's dump (``kubectl get ... -o yaml``, read as ``gangkit run DUMP.yaml``
reads it: :mod:`gangkit.manifests.snapshot`) says where every pod is, but not how long
the running ones will still run. :func:`predict` submits new workloads at the snapshot
time and runs the dump forward many times (*samples*), each time with other remaining
run times drawn for the pods that run, and sums up per new workload when it starts::

    import gangkit.analysis.predict as p
    pred = p.predict("cluster.yaml", ["job.yaml"], stack="kueue+gang", samples=100, seed=0)
    pred.table()          # one row per new workload
    print(pred)           # one paragraph per new workload
    pred.to_json()        # the object ``gangkit predict --json`` prints

What is sampled (docs/reference/predict.md):

- **Residual life.** A job without its own ``gangkit/run-time`` annotation that has run
  ``a`` seconds at the snapshot gets a total run time ``T`` drawn from the run-time
  distribution *conditioned on* ``T > a``: with ``F`` the distribution's CDF, ``u`` is
  uniform on ``[F(a), 1)`` and ``T = F^-1(u)`` (inverse CDF). The distribution is a
  quantile table (:class:`gangkit.workloads.run_times.Empirical`: the CDF is a straight
  line between two rows), by default the 101 quantiles of 83,154 job run times of
  Microsoft's Philly cluster the package ships (``gangkit/data/philly_runtime_quantiles.csv``,
  ``tools/make_runtime_quantiles.py``), or a table of one's own (``runtime_quantiles``).
  Past the table's last value (the longest run time it knows) the CDF is 1 and there is
  nothing to condition on: such a job's remaining time is drawn from an exponential
  distribution (memoryless) whose mean is the mean remaining time in the table's last
  step, half its width. A sync job's age is the time since its *last* pod started (it
  progresses only with every pod running, as the engine resumes it); an independent
  job's, the time since its earliest pod started, so that every pod's time left is > 0.
- **A job's own run time wins**: a job (of the dump or new) whose manifest carries the
  annotation ``gangkit/run-time`` keeps it, as ``gangkit run`` reads it. New workloads
  and waiting jobs without one draw theirs unconditioned (``a = 0``). Deployments' and
  StatefulSets' pods serve until the horizon, as in any run.
- Nothing else is sampled: every sample is the same simulation of the same dump and
  stack, with its own run times. Samples are independent runs, spread over processes
  (or a Dask client), as :func:`gangkit.analysis.sweep.sweep` spreads its points; the run
  times of sample ``i`` are drawn from a generator seeded by ``(seed, i)`` in this
  process, so the result is the same for any number of workers.

Per new workload (:class:`WorkloadPrediction`): ``will_start`` (share of samples in which
it starts within the horizon), ``start_s`` (p10, p50, p90 of its start time after the
snapshot over the samples in which it starts), ``waits_in`` (the wait bucket of
``Result.jobs``, ``wait_<bucket>_s``, holding most of its wait summed over the samples:
``quota``, ``placement``, ``node_launch``...), ``reason`` (the diagnosis at the snapshot,
:func:`gangkit.results.diagnosis.diagnose`, after the events of time 0),
``queue_position`` (Kueue's ``positionInClusterQueue`` of the visibility API, from 0) and
``nodes`` (kube-scheduler's Filter verdict per node group for a pod that fits on no node
now; the nodes a supplier launches). A workload that can never start (a pod larger than
any node or anything a supplier can launch: the engine's ``Rejected``; a ClusterQueue
whose quota can never hold it: ``QuotaTooSmall``) is reported at once, without sampling.
"""

from __future__ import annotations

import json
import math
import os
import random
import warnings
from bisect import bisect_right
from collections.abc import Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from gangkit.model.errors import Problem, ScenarioError
from gangkit.model.quantity import MAX_DURATION_S
from gangkit.workloads.run_times import Empirical, philly_runtime

__all__ = ["FILTER_ORDER", "NEVER_CODES", "Prediction", "ResidualLife", "WorkloadPrediction", "node_filters", "predict"]

#: the diagnosis codes that mean "never": no node could ever hold a pod; no quota could ever hold the workload
NEVER_CODES = ("Rejected", "QuotaTooSmall")
#: kube-scheduler 1.35's Filter plugins gangkit checks per node, in the default profile's order (a node's first
#: failing plugin is its verdict) and their reasons (``pkg/scheduler/framework/plugins/.../*.go``)
FILTER_ORDER = ("NodeUnschedulable", "TaintToleration", "NodeAffinity", "NodeResourcesFit")
UNSCHEDULABLE = "node(s) were unschedulable"
UNTOLERATED = "node(s) had untolerated taint(s)"
SELECTOR_MISMATCH = "node(s) didn't match Pod's node affinity/selector"
RESOURCE_NAMES = {"gpus": "nvidia.com/gpu", "cpu": "cpu", "memory": "memory"}
#: a pod's run time at or beyond this serves until the horizon (a Deployment's, a StatefulSet's pods)
SERVES = 1e9
QUANTILES = (0.1, 0.5, 0.9)
#: the reader's notes about the default run time, which a prediction replaces by its draws
DEFAULT_RUN_TIME_NOTES = ("no gangkit/run-time annotation on ", "job(s) had run longer than their run time")
_OBJ = "predict"


# ------------------------------------------------------------------------------------------ residual life
@dataclass(frozen=True)
class ResidualLife:
    """Run times drawn from a quantile table, given how long a job has already run (see the module docstring)."""

    table: Empirical

    @classmethod
    def load(cls, path: str | os.PathLike[str] | None = None) -> ResidualLife:
        """The shipped Philly table, or a CSV ``quantile,value`` of one's own (an error names the file and field)."""
        if path is None:
            return cls(philly_runtime())
        p = Path(path)
        if not p.is_file():
            raise ScenarioError([Problem(f"--runtime-quantiles {path}", "", "not found (expected a CSV file with the "
                                                                            "columns quantile,value)")])
        return cls(Empirical.from_table(p))

    def cdf(self, a: float) -> float:
        """``F(a)``: the share of run times <= ``a`` (linear between the table's rows)."""
        q, v = self.table.quantiles, self.table.values
        if a < v[0]:
            return 0.0
        if a >= v[-1]:
            return 1.0
        i = bisect_right(v, a) - 1  # v[i] <= a < v[i + 1]
        return q[i] + (q[i + 1] - q[i]) * (a - v[i]) / (v[i + 1] - v[i])

    @property
    def tail_mean(self) -> float:
        """The mean remaining time past the table's last value: half the width of its last step (at least 1 s)."""
        v = self.table.values
        return max(1.0, (v[-1] - v[-2]) / 2)

    def remaining(self, a: float, rng: random.Random) -> float:
        """Seconds left for a job that has run ``a`` seconds: ``F^-1(u) - a``, ``u`` uniform on ``[F(a), 1)``."""
        a = max(0.0, float(a))
        f = self.cdf(a)
        if f >= 1.0:
            return rng.expovariate(1.0 / self.tail_mean)
        u = f + (1.0 - f) * rng.random()
        return max(0.0, self.table.quantile(u) - a)

    def total(self, a: float, rng: random.Random) -> float:
        """A whole run time for a job that has run ``a`` seconds: ``a`` plus :meth:`remaining` (at least 1 s, the
        shortest run time gangkit runs; at most gangkit's longest duration)."""
        return min(MAX_DURATION_S, max(1.0, a + self.remaining(a, rng)))


def _age(job) -> float:
    """How long a job of the snapshot has progressed: a sync job since its last pod started (0 unless every pod is
    bound), an independent job since its earliest pod started."""
    snap = job.snapshot
    if snap is None or not snap.elapsed or not snap.bound:
        return 0.0
    if job.progress == "sync":
        return min(snap.elapsed) if snap.bound == len(snap.nodes) else 0.0
    return max(snap.elapsed)


def draw_run_times(jobs: list, sampled: list[int], life: ResidualLife, seed: int, index: int) -> list[float]:
    """Sample ``index``'s run times for the jobs at positions ``sampled`` (a generator seeded by ``(seed, index)``)."""
    rng = random.Random(f"gangkit-predict/{seed}/{index}")
    return [round(life.total(_age(jobs[k]), rng), 3) for k in sampled]


# ------------------------------------------------------------------------------------------ results
@dataclass
class WorkloadPrediction:
    """What the samples say about one new workload (the keys of ``gangkit predict --json``)."""

    name: str
    kind: str
    will_start: float
    start_s: dict | None
    waits_in: str | None
    reason: dict
    queue_position: int | None
    nodes: list[dict] = field(default_factory=list)
    never: bool = False

    def as_dict(self) -> dict:
        return {"name": self.name, "kind": self.kind, "will_start": self.will_start, "start_s": self.start_s,
                "waits_in": self.waits_in, "reason": self.reason, "queue_position": self.queue_position,
                "nodes": self.nodes}

    def paragraph(self, samples: int, horizon: float) -> str:
        """The table form: one paragraph in plain words."""
        head = f"{self.kind} {self.name}"
        lines = []
        if self.never:
            lines.append(f"{head} can never start: [{self.reason['code']}] {self.reason['message']}")
        elif self.will_start == 0:
            lines.append(f"{head} did not start within the horizon ({_t(horizon)}) in any of {samples} samples.")
        else:
            s = self.start_s
            share = f"{self.will_start:.0%} of {samples} samples" if self.will_start < 1 else f"all {samples} samples"
            if s["p90"] == 0:
                lines.append(f"{head} starts at once (in {share}).")
            else:
                lines.append(f"{head} starts within the horizon in {share}: after {_t(s['p10'])} (p10), "
                             f"{_t(s['p50'])} (p50), {_t(s['p90'])} (p90).")
        if not self.never:
            lines.append(f"At the snapshot: [{self.reason['code']}] {self.reason['message'].rstrip('.')}.")
        if self.waits_in:
            lines.append(f"It waits longest in {self.waits_in}.")
        if self.queue_position is not None:
            lines.append(f"Position in its ClusterQueue: {self.queue_position} (positionInClusterQueue).")
        for row in self.nodes:
            if row["filter"] is None:
                lines.append(f"  {row['reason']}: {row['count']} node(s) in {row['share']:.0%} of samples, ready after "
                             f"{_t(row['ready_s']['p50'])} (p50)")
            else:
                lines.append(f"  pod set {row['pod_set']}: {row['count']} node(s) like {row['node']}: {row['filter']}: "
                             f"{row['reason']} ({row['detail']})")
        return "\n".join(lines)


@dataclass
class Prediction:
    """The prediction for the new workloads of one dump (:func:`predict`)."""

    snapshot_time: str | None
    samples: int
    horizon: float
    stack: str
    workloads: list[WorkloadPrediction]

    def to_dict(self) -> dict:
        return {"snapshot_time": self.snapshot_time, "samples": self.samples,
                "workloads": [w.as_dict() for w in self.workloads]}

    def to_json(self) -> str:
        """The object ``gangkit predict --json`` prints (keys in the order the reference lists them)."""
        return json.dumps(self.to_dict(), allow_nan=False)

    def table(self) -> pd.DataFrame:
        """One row per new workload: the JSON's keys, ``start_s`` and ``reason`` spread over columns."""
        rows = []
        for w in self.workloads:
            s = w.start_s or {}
            rows.append({"name": w.name, "kind": w.kind, "will_start": w.will_start, "start_p10_s": s.get("p10"),
                         "start_p50_s": s.get("p50"), "start_p90_s": s.get("p90"), "waits_in": w.waits_in,
                         "code": w.reason["code"], "message": w.reason["message"], "queue_position": w.queue_position,
                         "nodes": len(w.nodes)})
        return pd.DataFrame(rows, columns=["name", "kind", "will_start", "start_p10_s", "start_p50_s", "start_p90_s",
                                           "waits_in", "code", "message", "queue_position", "nodes"])

    def __str__(self) -> str:
        head = (f"snapshot {self.snapshot_time or '(no time: not a dump)'}   stack {self.stack}   samples {self.samples}"
                f"   horizon {_t(self.horizon)}")
        return "\n\n".join([head] + [w.paragraph(self.samples, self.horizon) for w in self.workloads])


def _t(seconds: float) -> str:
    """Seconds in words a reader takes in at once: 0 s, 45 s, 12 min, 3.5 h, 2.1 d."""
    if seconds < 60:
        return f"{seconds:.0f} s"
    if seconds < 3600:
        return f"{seconds / 60:.0f} min"
    if seconds < 86400:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} d"


# ------------------------------------------------------------------------------------------ the inputs
def _paths(value, what: str) -> list[Path]:
    items = [value] if isinstance(value, (str, os.PathLike)) else list(value)
    out = []
    for item in items:
        p = Path(item)
        if not p.is_file():
            raise ScenarioError([Problem(f"{what} {item}", "", "not found (expected a YAML file)")])
        out.append(p)
    return out


def _docs(path: Path) -> list[dict]:
    """The objects of one YAML file, a ``kind: List`` unpacked (for the fields the scenario does not keep)."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        docs = [d for d in yaml.load_all(path.read_text(), Loader=loader) if isinstance(d, dict)]
    except yaml.YAMLError:
        return []  # the scenario's reader has refused it already, with the line
    out = []
    for d in docs:
        items = d.get("items") if d.get("kind") == "List" else None
        out.extend(i for i in items if isinstance(i, dict)) if isinstance(items, list) else out.append(d)
    return out


def _worth_reading(path: Path) -> bool:
    """Whether a dump holds what the scenario does not keep (a ``gangkit/run-time`` annotation, a Node's taints or
    ``unschedulable``): reading a large dump's YAML again costs as much as reading it once, so only then."""
    text = path.read_text()
    return any(word in text for word in ("gangkit/run-time", "taints", "unschedulable"))


def _meta(doc: dict) -> tuple[str, str]:
    meta = doc.get("metadata") if isinstance(doc.get("metadata"), dict) else {}
    return str(meta.get("namespace") or "default"), str(meta.get("name") or "")


def _owns(doc_key: tuple[str, str], job) -> bool:
    """Whether the scenario job ``job`` was read from the object ``doc_key`` (a Deployment's pods are ``name-i``)."""
    ns, name = doc_key
    if (job.namespace or "default") != ns:
        return False
    rest = job.name[len(name) + 1:] if job.name.startswith(name + "-") else None
    return job.name == name or (rest is not None and rest.isdigit())


def _annotated(docs: list[dict]) -> set[tuple[str, str]]:
    """(namespace, name) of the objects whose metadata carries ``gangkit/run-time``."""
    from gangkit.manifests import RUN_TIME

    out = set()
    for d in docs:
        ann = (d.get("metadata") or {}).get("annotations") if isinstance(d.get("metadata"), dict) else None
        if isinstance(ann, dict) and RUN_TIME in ann:
            out.add(_meta(d))
    return out


def _tolerations(node: Any) -> list[dict]:
    """Every toleration written anywhere in a manifest (its pod templates), as a list of dicts."""
    out: list[dict] = []
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "tolerations" and isinstance(v, list):
                out.extend(t for t in v if isinstance(t, dict))
            else:
                out.extend(_tolerations(v))
    elif isinstance(node, list):
        for v in node:
            out.extend(_tolerations(v))
    return out


def tolerates(tolerations: list[dict], taint: dict) -> bool:
    """Kubernetes' ``Toleration.ToleratesTaint`` (``k8s.io/api/core/v1/toleration.go``): an empty effect matches
    every effect; an empty key with ``Exists`` matches every key; ``Exists`` ignores the value, ``Equal`` (the
    default operator) compares it. (The 1.35 alpha comparison operators ``Lt``/``Gt`` are not read.)"""
    for t in tolerations:
        if t.get("effect") and t.get("effect") != taint.get("effect"):
            continue
        op = t.get("operator") or "Equal"
        if not t.get("key"):
            if op == "Exists":
                return True
            continue
        if t.get("key") != taint.get("key"):
            continue
        if op == "Exists" or str(t.get("value") or "") == str(taint.get("value") or ""):
            return True
    return False


def _node_marks(docs: list[dict]) -> dict[str, dict]:
    """Per Node of the dump, what gangkit's run does not read: its ``spec.taints`` and ``spec.unschedulable``."""
    out = {}
    for d in docs:
        if d.get("kind") != "Node" or not isinstance(d.get("spec"), dict):
            continue
        spec = d["spec"]
        taints = [t for t in spec.get("taints") or [] if isinstance(t, dict)
                  and t.get("effect") in ("NoSchedule", "NoExecute")]
        if taints or spec.get("unschedulable") is True:
            out[_meta(d)[1]] = {"taints": taints, "unschedulable": spec.get("unschedulable") is True}
    return out


# ------------------------------------------------------------------------------------------ kube-scheduler's filters
def node_filters(cap_nodes: Iterable, pod_set, tolerations: list[dict], marks: dict[str, dict]) -> list[dict]:
    """kube-scheduler's Filter verdict for one pod of ``pod_set`` on each node, grouped: one row per group of nodes
    with the same verdict, capacity and room. Empty when some node takes the pod now.

    The plugins are checked in the order of kube-scheduler 1.35's default profile, and a node's verdict is its
    first failing plugin (the framework stops there): NodeUnschedulable ("node(s) were unschedulable": the Node's
    ``spec.unschedulable`` without a toleration of ``node.kubernetes.io/unschedulable:NoSchedule``),
    TaintToleration (``node_taint_toleration.go``: 1.35 no longer names the taint in the pod's status, "node(s) had
    untolerated taint(s)"; gangkit's detail names it, and a node not ready yet carries
    ``node.kubernetes.io/not-ready:NoSchedule``), NodeAffinity (the pod's node selector), NodeResourcesFit
    ("Insufficient <resource>" for each resource short). Simplified: the run itself does not read taints or
    ``unschedulable`` (gangkit's nodes have none), so a tainted node still takes pods there; the pod's
    tolerations are every ``tolerations`` list in its manifest.
    """
    gpus, cpu, memory, selector = pod_set.gpus, pod_set.cpu, pod_set.memory, pod_set.node_selector
    groups: dict[tuple, dict] = {}
    for st in cap_nodes:
        node = st.node
        mark = marks.get(node.name, {})
        verdict = None
        if mark.get("unschedulable") and not tolerates(tolerations, {"key": "node.kubernetes.io/unschedulable",
                                                                        "effect": "NoSchedule"}):
            verdict = ("NodeUnschedulable", UNSCHEDULABLE, "spec.unschedulable: true (cordoned)")
        if verdict is None:
            taints = list(mark.get("taints", ()))
            if not st.ready:
                taints.insert(0, {"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"})
            bad = next((t for t in taints if not tolerates(tolerations, t)), None)
            if bad is not None:
                words = "not ready" if bad["key"] == "node.kubernetes.io/not-ready" and not st.ready else "taint"
                verdict = ("TaintToleration", UNTOLERATED,
                           f"{words} {bad['key']}{'=' + str(bad['value']) if bad.get('value') else ''}:{bad['effect']}")
        if verdict is None and not node.matches(selector):
            verdict = ("NodeAffinity", SELECTOR_MISMATCH, f"labels do not match {dict(selector)}")
        if verdict is None:
            short = _short(st, gpus, cpu, memory)
            if not short:
                return []
            verdict = ("NodeResourcesFit", ", ".join(f"Insufficient {RESOURCE_NAMES[d]}" for d in short),
                       _room(st, short, gpus, cpu, memory))
        key = (verdict, node.gpus, node.cpu, node.memory)
        row = groups.get(key)
        if row is None:
            groups[key] = {"pod_set": pod_set.name, "node": node.name, "count": 1, "filter": verdict[0],
                           "reason": verdict[1], "detail": verdict[2]}
        else:
            row["count"] += 1
    return sorted(groups.values(), key=lambda r: (FILTER_ORDER.index(r["filter"]), -r["count"], r["node"]))


def _short(st, gpus: int, cpu: float, memory: int) -> list[str]:
    out = []
    if gpus > st.free_gpus:
        out.append("gpus")
    if cpu and st.free_cpu is not None and cpu > st.free_cpu + 1e-9:
        out.append("cpu")
    if memory and st.free_memory is not None and memory > st.free_memory:
        out.append("memory")
    return out


def _room(st, short: list[str], gpus: int, cpu: float, memory: int) -> str:
    parts = []
    for d in short:
        if d == "gpus":
            parts.append(f"asks {gpus} GPUs, {st.free_gpus} of {st.node.gpus} free")
        elif d == "cpu":
            parts.append(f"asks {cpu:g} cores, {st.free_cpu:g} of {st.node.cpu:g} free")
        else:
            parts.append(f"asks {memory} bytes, {st.free_memory} of {st.node.memory} free")
    return "; ".join(parts)


# ------------------------------------------------------------------------------------------ one sample
def _percentiles(values: Sequence[float]) -> dict | None:
    if not values:
        return None
    s = pd.Series(sorted(values), dtype=float)
    return {f"p{round(q * 100)}": round(float(s.quantile(q)), 3) for q in QUANTILES}


def run_samples(task: tuple) -> list[dict]:
    """Run some samples of one prediction (one task of the pool): per sample, per new workload, its start, its wait
    per bucket and the nodes a supplier launched before it started."""
    scenario, sampled, new, runs = task
    out = []
    for _index, run_times in runs:
        with warnings.catch_warnings():  # the snapshot's own run has reported them
            warnings.simplefilter("ignore")
            out.append(run_sample(_with_run_times(scenario, sampled, run_times), new))
    return out


def run_sample(scenario, new: Sequence[str]) -> dict:
    """One sample: the run of ``scenario`` (its stack by name, through the general engine, as
    :func:`gangkit.simulate.replay` runs it) until every workload of ``new`` has started, or the horizon.

    Nothing after the last of them starts changes when they started, so the run stops there: the events
    are the same as a whole run's up to that instant (a run is deterministic), and a sample costs the
    events before the start it predicts, not the rest of the dump's future. Per workload: its start time
    (None if it did not start), its wait per bucket (``JobState.waits``; a wait still going on is counted
    to the end, as :func:`gangkit.results.result.build_result` counts it) and the nodes the stack's
    suppliers launched before it started.
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
    launched = _launches(sim)
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


def _with_run_times(scenario, sampled: list[int], run_times: list[float]):
    """``scenario`` with the jobs at positions ``sampled`` given these run times."""
    jobs = list(scenario.jobs)
    for k, rt in zip(sampled, run_times):
        jobs[k] = replace(jobs[k], run_time=rt)
    return replace(scenario, jobs=jobs)


def _launches(sim) -> list[tuple]:
    """(supplier, instance type, launched_s, ready_s) of every node the run's suppliers launched so far (the rows of
    their ``gangkit_karpenter_nodeclaim_stages`` / ``gangkit_autoscaler_node_stages`` tables)."""
    out = []
    for supplier in sim.stack.suppliers:
        for row in getattr(supplier, "_ready_rows", ()):  # (name, pool or group, instance type, launched, ..., ready_at, _)
            if not math.isnan(float(row[6])):  # a node that never became ready (a failed launch) is left out
                out.append((supplier.name, row[2], float(row[3]), float(row[6])))
    return out


# ------------------------------------------------------------------------------------------ the entry point
def predict(dump, jobs: Iterable = (), *, stack: str | None = None, samples: int = 100, seed: int = 0,
            horizon: float | None = None, runtime_quantiles=None, workers: int | None = None, client=None,
            snapshot_time=None) -> Prediction:
    """Submit the workloads of ``jobs`` (YAML files) to the cluster of ``dump`` (a dump's file, or several read
    together) at its snapshot time, run ``samples`` futures and sum up each new workload's (see the module docstring).

    ``stack``: as ``gangkit run --stack`` (default: the files' Simulation, else ``gang``). ``horizon``: seconds
    after the snapshot within which a start counts (default: the run's horizon, 30 days). ``runtime_quantiles``: a
    CSV ``quantile,value`` of run times (default: the shipped Philly table). ``workers``: processes (default one per
    CPU; 1 runs here); ``client``: a ``dask.distributed.Client``. ``snapshot_time``: a ``datetime`` (default: the
    dump's latest timestamp). Deterministic for a ``seed``, whatever ``workers``.
    """
    from gangkit.manifests import load_files
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
    dump_paths, job_paths = _paths(dump, "dump"), _paths(jobs, "workload file")
    if not job_paths:
        raise ScenarioError([Problem(_OBJ, "jobs", "expected at least one YAML file of workloads to submit")])
    life = ResidualLife.load(runtime_quantiles)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        scenario = load_files(dump_paths + job_paths, snapshot_time=snapshot_time)
    for w in caught:  # the default run time is not used here: the samples draw one
        if not any(note in str(w.message) for note in DEFAULT_RUN_TIME_NOTES):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    if horizon is not None:
        scenario = scenario.with_settings(horizon=float(horizon))
    scenario = scenario.with_settings(stack=stack, seed=seed)
    stack_name = scenario.settings.stack

    dump_docs = [d for p in dump_paths if _worth_reading(p) for d in _docs(p)]
    job_docs = [d for p in job_paths for d in _docs(p)]
    new_docs = [(_meta(d), d) for d in job_docs if "metadata" in d and d.get("kind") not in ("List",)]
    new_idx, kinds, tolerations = [], {}, {}
    for k, j in enumerate(scenario.jobs):
        doc = next((d for key, d in new_docs if _owns(key, j)), None)
        if doc is not None and j.snapshot is None:
            new_idx.append(k)
            kinds[j.key] = str(doc.get("kind"))
            tolerations[j.key] = _tolerations(doc)
    if not new_idx:
        raise ScenarioError([Problem(_OBJ, "jobs", "the workload files hold no workload gangkit runs (a Job, JobSet, "
                                                   "PyTorchJob, Volcano Job, Deployment...)")])
    new_keys = [scenario.jobs[k].key for k in new_idx]
    annotated = _annotated(dump_docs + job_docs)
    sampled = [k for k, j in enumerate(scenario.jobs)
               if j.run_time < SERVES and not any(_owns(a, j) for a in annotated)]
    if sampled:
        from gangkit.manifests import GangkitInputWarning

        names = ", ".join(scenario.jobs[k].key for k in sampled[:5]) + (", ..." if len(sampled) > 5 else "")
        warnings.warn(f"{len(sampled)} job(s) without a gangkit/run-time annotation: each sample draws their run "
                      f"times from {life.table.source or 'the quantile table'}, given how long they have run: {names}",
                      GangkitInputWarning, stacklevel=2)

    # the snapshot itself, after the events of time 0: reasons, never-start, queue positions, nodes
    from gangkit.results.diagnosis import diagnose_job
    from gangkit.simulate import replay

    scenario.validate()
    draws = [(i, draw_run_times(scenario.jobs, sampled, life, seed, i)) for i in range(samples)]
    sim = replay(_with_run_times(scenario, sampled, draws[0][1]), 0.0)  # sample 0's run times: a job older than
    # the default run time would otherwise end at time 0
    states = {js.spec.key: js for js in sim.all_jobs()}
    marks = _node_marks(dump_docs)
    positions = _queue_positions(scenario, new_idx)
    reasons, never, node_rows = {}, set(), {}
    for k in new_idx:
        j = scenario.jobs[k]
        d = diagnose_job(sim, states[j.key], 0.0)
        reasons[j.key] = {"code": d.code, "message": d.message}
        if d.code in NEVER_CODES:
            never.add(j.key)
        rows: list[dict] = []
        js = states[j.key]
        if js.started_at is None:
            for ps in j.pod_sets:
                rows.extend(node_filters(sim.capacity.nodes, ps, tolerations[j.key], marks))
        node_rows[j.key] = rows

    # the samples: run times drawn here, the runs spread over processes
    todo = [key for key in new_keys if key not in never]
    results: list[dict] = []
    if todo:
        results = _run_all(scenario, sampled, todo, draws, workers, client)

    out = []
    for k in new_idx:
        j = scenario.jobs[k]
        key = j.key
        if key in never:
            out.append(WorkloadPrediction(key, kinds[key], 0.0, None, None, reasons[key], positions.get(key),
                                          node_rows[key], never=True))
            continue
        starts = [r[key]["start"] for r in results if r[key]["start"] is not None]
        waits: dict[str, float] = {}
        for r in results:
            for b, s in r[key]["waits"].items():
                waits[b] = waits.get(b, 0.0) + s
        longest = max(waits.items(), key=lambda kv: kv[1], default=(None, 0.0))
        rows = list(node_rows[key]) + _launch_rows([r[key]["launched"] for r in results])
        out.append(WorkloadPrediction(key, kinds[key], round(len(starts) / len(results), 4), _percentiles(starts),
                                      longest[0] if longest[1] > 0 else None, reasons[key], positions.get(key), rows))
    at = getattr(scenario, "snapshot_time", None)
    return Prediction(_snapshot_time(scenario, at), len(results), float(scenario.settings.horizon), stack_name, out)


def _snapshot_time(scenario, at) -> str | None:
    """The dump's time (RFC 3339) from the warning the reader leaves (``read as a snapshot taken at ...``)."""
    if at is not None:
        return str(at)
    for w in scenario.warnings:
        text = str(w)
        marker = "read as a snapshot taken at "
        if marker in text:
            return text.split(marker, 1)[1].split(" ", 1)[0]
    return None


def _run_all(scenario, sampled: list[int], new: list[str], draws: list, workers: int | None,
             client) -> list[dict]:
    """Every sample's outcome, in sample order: here (one worker), in processes, or on a Dask client."""
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


def _launch_rows(per_sample: list[list[tuple]]) -> list[dict]:
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
                     "ready_s": _percentiles([r for _, r in got])})
    return rows


def _queue_positions(scenario, new_idx: list[int]) -> dict[str, int]:
    """Kueue's ``positionInClusterQueue`` (visibility API, ``PendingWorkload``; from 0) of each new workload at the
    snapshot: among the ClusterQueue's pending workloads (those without a reservation), ordered as Kueue's queue
    orders them, by priority (highest first), then by creation (the dump's waiting jobs, then the new ones in the
    order of their files). None for a workload Kueue does not manage (or a stack without Kueue)."""
    if "kueue" not in scenario.settings.stack or scenario.kueue is None:
        return {}
    lqs = {(lq.namespace, lq.name): lq.cluster_queue for lq in scenario.kueue.local_queues}

    def cq_of(j) -> str | None:
        if not j.kueue_managed:
            return None
        if j.snapshot is not None and j.snapshot.admission is not None:
            return None  # admitted: not pending
        return lqs.get((j.namespace or "default", j.queue))

    pending: dict[str, list[tuple]] = {}
    for k, j in enumerate(scenario.jobs):
        if j.snapshot is not None and (j.snapshot.admission is not None or j.snapshot.bound):
            continue
        cq = cq_of(j)
        if cq is not None:
            pending.setdefault(cq, []).append((-j.priority, k, j.key))
    out = {}
    for items in pending.values():
        for pos, (_, _, key) in enumerate(sorted(items)):
            out[key] = pos
    return {scenario.jobs[k].key: out[scenario.jobs[k].key] for k in new_idx if scenario.jobs[k].key in out}
