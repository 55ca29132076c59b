"""Real workload traces, mapped into gangkit jobs and nodes.

Synthetic streams (Poisson arrivals, exponential run times) teach the
mechanics; real traces show what clusters actually see: most GPU tasks are
small, run times span six orders of magnitude, and a few big jobs hold most
of the GPU time. This module reads three public traces. None of them ships
with gangkit: every loader takes a *path*, and the data stays where you put it.

**Alibaba GPU cluster trace 2023 ("openb")** - :func:`load_alibaba_openb`.
Published with the FGD paper (Weng et al., "Beware of Fragmentation",
USENIX ATC 2023; github.com/alibaba/clusterdata, cluster-trace-gpu-v2023).
A pod list (one row per *pod*: CPU, memory, GPUs, a GPU fraction, allowed
GPU models, QoS class, phase, creation/scheduling/deletion times in seconds)
and a node list (GPUs and GPU model per node) of a heterogeneous cluster.

- What it can say: the *shape* of GPU demand (most tasks ask for one GPU or
  a fraction of one; a few ask for 8), the node mix, the time each pod held
  its resources.
- What it cannot say: **this trace has single pods, not gangs.** There is no
  job id tying pods together, so it says nothing about which pods must start
  together. Every pod becomes a one-pod gangkit Job; a gang mix must be
  *derived* by a rule you choose (:func:`derive_gangs`).
  The times span about 149 days and pods still ``Running`` at the end are
  cut off (censored) at the trace end; the FGD paper itself uses the lists
  as a placement workload, not as a timed arrival stream. Fractional-GPU
  pods (GPU sharing) have no exact counterpart in gangkit, which counts
  whole GPUs: you choose a mapping.

**Microsoft Philly run times** - :func:`load_philly_runtimes`. One column,
``runtime``, in seconds: 83k run times of DNN training jobs on Microsoft's
Philly cluster (Jeon et al., USENIX ATC 2019), as extracted by Alibaba's
PAI analysis. No GPU counts, no arrival times: use it as an *empirical
run-time distribution* (sample from it), not as a replayable stream.

**Standard Workload Format (SWF)** - :func:`load_swf`. The format of the
Parallel Workloads Archive (Feitelson et al.): logs of HPC supercomputers
whose jobs are *rigid*: a job asks for N processors and runs only when all N
are given at once - the HPC ancestor of gang scheduling. 18 whitespace-
separated fields per line, ``-1`` meaning "unknown"; header comments (``;``)
give the machine size (``MaxNodes``, ``MaxProcs``). Each processor becomes
one pod with one "GPU" (a stand-in: the logs predate GPUs), so a job is a
gang of that many pods.

The Alibaba and SWF loaders return a :class:`TraceLoad` that carries a *mapping report*:
how many rows were mapped as they are, mapped with a change, or dropped, and
why. Print it before trusting a result built on the trace.

:func:`derive_gangs` groups the Alibaba single pods into gang jobs by a
stated, seeded rule: an *invented* gang mix, not something the trace says.
"""

from __future__ import annotations

import gzip
import math
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from gangkit.model.errors import Problem, ScenarioError
from gangkit.model.jobs import Job, PodSet
from gangkit.model.nodes import Node
from gangkit.model.quantity import MAX_DURATION_S, MAX_QUANTITY
from gangkit.model.scenario import Scenario

__all__ = [
    "GPU_MODEL_LABEL", "SWF_FIELDS", "TraceLoad", "derive_gangs", "load_alibaba_openb", "load_philly_runtimes", "load_swf",
]

#: The node label that carries a GPU model (``model`` of the node list) and that
#: single-model ``gpu_spec`` constraints select on.
GPU_MODEL_LABEL = "gpu-model"

MAPPED, CHANGED, DROPPED = "mapped", "changed", "dropped"

ALIBABA_POD_COLUMNS = ("name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli")
ALIBABA_TIME_COLUMNS = ("creation_time", "deletion_time", "scheduled_time")
ALIBABA_NODE_COLUMNS = ("sn", "cpu_milli", "memory_mib", "gpu")
MIB = 2**20

#: The largest machine an SWF log may describe (nodes, and processors): 10^6 pods' worth, gangkit's
#: limit for the pods of one input (gangkit.model.reading.MAX_SCENARIO_PODS).
MAX_SWF_MACHINE = 1_000_000

#: The 18 fields of an SWF line, in order (Parallel Workloads Archive, SWF 2.2).
SWF_FIELDS = (
    "job_number", "submit_time", "wait_time", "run_time", "allocated_processors", "average_cpu_time",
    "used_memory", "requested_processors", "requested_time", "requested_memory", "status", "user_id",
    "group_id", "executable_number", "queue_number", "partition_number", "preceding_job", "think_time",
)


@dataclass
class TraceLoad:
    """What a loader made of a trace: nodes, jobs, and a report of every row.

    ``rows`` has one row per input row: ``name``, ``outcome`` (``mapped``,
    ``changed`` or ``dropped``) and ``reason`` (empty for ``mapped``; several
    reasons are joined by ``" | "``). :attr:`report` counts them;
    :meth:`summary` prints them. ``gpu_unit`` is how many gangkit "GPUs" one
    physical GPU is (1, or 1000 when fractional GPUs are shared in milli-GPUs).
    """

    source: str
    nodes: list[Node]
    jobs: list[Job]
    rows: pd.DataFrame
    gpu_unit: int = 1
    notes: list[str] = field(default_factory=list)

    @property
    def counts(self) -> dict[str, int]:
        """``{"rows": ..., "mapped": ..., "changed": ..., "dropped": ...}``."""
        vc = self.rows["outcome"].value_counts()
        out = {"rows": len(self.rows)}
        out.update({k: int(vc.get(k, 0)) for k in (MAPPED, CHANGED, DROPPED)})
        return out

    @property
    def report(self) -> pd.DataFrame:
        """Row counts per outcome and reason (one reason per line: a row changed twice counts twice)."""
        r = self.rows[["outcome", "reason"]].copy()
        r["reason"] = r["reason"].str.split(" | ", regex=False)
        r = r.explode("reason")
        table = r.groupby(["outcome", "reason"], sort=False).size().rename("rows").reset_index()
        order = {MAPPED: 0, CHANGED: 1, DROPPED: 2}
        return table.sort_values(["outcome", "rows"], key=lambda s: s.map(order) if s.name == "outcome" else -s,
                                 ignore_index=True)

    def summary(self) -> str:
        """A printable account: rows read, mapped, changed, dropped, and why."""
        c = self.counts
        lines = [
            f"{self.source}: {c['rows']} rows -> {len(self.jobs)} jobs, {len(self.nodes)} nodes",
            f"  mapped as is: {c['mapped']}   mapped with a change: {c['changed']}   dropped: {c['dropped']}",
        ]
        for outcome, reason, n in self.report.itertuples(index=False):
            if outcome != MAPPED:
                lines.append(f"  {outcome:8s} {n:7d}  {reason}")
        if self.gpu_unit != 1:
            lines.append(f"  note: 1 physical GPU = {self.gpu_unit} gangkit GPUs (milli-GPUs)")
        lines.extend(f"  note: {n}" for n in self.notes)
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()

    def scenario(self, name: str | None = None, **settings) -> Scenario:
        """A :class:`Scenario` of these nodes and jobs (``settings`` go to ``with_settings``).

        Unless ``horizon`` is given, it is set to cover the whole trace (the
        last submit plus run time, plus one second): the default 30-day horizon
        would end an Alibaba replay before most pods arrive.
        """
        sc = Scenario(self.nodes, self.jobs, name=name or Path(self.source).stem)
        if "horizon" not in settings and self.jobs:
            settings["horizon"] = max(j.submit_time + j.run_time for j in self.jobs) + 1.0
        return sc.with_settings(**settings) if settings else sc


# ---------------------------------------------------------------------------------------------- helpers


def _bad(path, column: str, message: str) -> ScenarioError:
    return ScenarioError([Problem(f"file {path}", column, message)])


def _read_csv(path) -> pd.DataFrame:
    """The CSV file at ``path``; one problem naming it when it is missing, a directory, unreadable or not CSV text."""
    try:
        return pd.read_csv(path)
    except FileNotFoundError:
        raise _bad(path, "", "no such file") from None
    except IsADirectoryError:
        raise _bad(path, "", "expected a CSV file, got a directory") from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as e:
        raise _bad(path, "", f"expected a CSV file with a header line; {type(e).__name__}: {e}") from None
    except OSError as e:  # permission denied, a broken compressed file
        raise _bad(path, "", f"cannot be read: {e.strerror or e}") from None
    except ValueError as e:  # pandas' other complaints about what it was given
        raise _bad(path, "", f"expected a CSV file; {e}") from None


def _require(df: pd.DataFrame, path, columns) -> None:
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise ScenarioError([
            Problem(f"file {path}", c, f"expected this column; the file has {', '.join(map(str, df.columns))}")
            for c in missing
        ])


def _numeric(df: pd.DataFrame, path, column: str, *, allow_missing: bool = False,
             maximum: float = MAX_QUANTITY) -> pd.Series:
    """The column as floats; a clear error naming the first non-numeric, missing or out-of-range value.

    A value is at most ``maximum`` in magnitude: by default 2^63-1, the
    largest quantity Kubernetes represents (:mod:`gangkit.model.quantity`);
    ``inf`` and ``nan`` written in the file are not numbers gangkit can use.
    """
    raw = df[column]
    try:
        num = pd.to_numeric(raw, errors="coerce").astype(float)
    except (OverflowError, TypeError, ValueError):  # an integer too large for any numeric type pandas has
        num = pd.Series([_float(x) for x in raw], index=raw.index, dtype=float)
    bad = num.isna() & raw.notna()
    if not allow_missing:
        bad |= raw.isna()
    out_of_range = num.notna() & ~(num.abs() <= maximum)
    if (bad | out_of_range).any():
        i = int((bad | out_of_range).to_numpy().nonzero()[0][0])
        within = f" from -{maximum:.4g} to {maximum:.4g}" if out_of_range.iat[i] else ""
        cell = raw.iloc[i]
        shown = repr(cell) if isinstance(cell, str) else str(cell)
        raise _bad(path, column, f"expected a number{within} on data line {i + 1}, got {shown[:60]}")
    return num


def _float(x) -> float:
    try:
        return float(x)
    except (OverflowError, TypeError, ValueError):
        return math.inf  # out of range: reported by the caller


def _rows(names, outcome, reasons) -> pd.DataFrame:
    return pd.DataFrame({"name": list(names), "outcome": list(outcome), "reason": list(reasons)})


# ---------------------------------------------------------------------------------------------- Alibaba


def load_alibaba_nodes(path) -> list[Node]:
    """The Alibaba openb node list (``sn, cpu_milli, memory_mib, gpu, model``) as gangkit Nodes.

    ``sn`` -> name, ``gpu`` -> GPUs, ``cpu_milli / 1000`` -> cores,
    ``memory_mib * 2**20`` -> bytes, ``model`` (empty for CPU-only nodes) ->
    the label :data:`GPU_MODEL_LABEL`.
    """
    df = _read_csv(path)
    _require(df, path, ALIBABA_NODE_COLUMNS)
    cpu = _numeric(df, path, "cpu_milli")
    mem = _numeric(df, path, "memory_mib", maximum=MAX_QUANTITY / MIB)
    gpu = _numeric(df, path, "gpu")
    if (gpu < 0).any() or (gpu % 1 != 0).any():
        i = int(((gpu < 0) | (gpu % 1 != 0)).to_numpy().nonzero()[0][0])
        raise _bad(path, "gpu", f"expected a whole number >= 0 on data line {i + 1}, got {df['gpu'].iloc[i]!r}")
    models = df["model"] if "model" in df.columns else pd.Series([None] * len(df))
    out = []
    for sn, c, m, g, model in zip(df["sn"], cpu, mem, gpu, models):
        labels = {GPU_MODEL_LABEL: str(model)} if isinstance(model, str) and model else {}
        out.append(Node(str(sn), int(g), cpu=c / 1000, memory=int(m) * MIB, labels=labels))
    return out


def load_alibaba_openb(
    pod_csv,
    node_csv=None,
    *,
    fractional: str = "round-up",
    cpu_only: str = "drop",
    pending: str = "keep",
    gpu_spec: str = "select",
    run_time: float | None = None,
    limit: int | None = None,
    cpu_memory: bool = True,
) -> TraceLoad:
    """Map an Alibaba openb pod list (and optionally its node list) into gangkit Jobs and Nodes.

    **This trace has single pods, not gangs**: each row becomes a one-pod
    Job named after ``name`` (``progress="sync"``, which makes no difference
    for one pod). The mapping, row by row:

    - ``submit_time`` = ``creation_time`` minus the first (smallest) ``creation_time``.
    - ``run_time`` = ``deletion_time - scheduled_time``: how long the pod held
      its resources. Pods never scheduled (``pod_phase`` ``Pending``, empty
      ``scheduled_time``) have no run time; ``pending="keep"`` (default)
      takes ``deletion_time - creation_time`` instead (how long the demand
      stood; recorded as a change), ``pending="drop"`` drops them. Rows with a
      missing or non-positive run time are dropped. ``Failed`` pods are kept:
      they held GPUs until they failed. ``Running`` pods are censored at the
      trace end (their deletion time is the end of the trace).
    - GPUs: ``num_gpu`` GPUs per pod. Fractional pods (``num_gpu == 1`` and
      ``gpu_milli < 1000``, GPU sharing) map by ``fractional``:
      ``"round-up"`` (default) asks for one whole GPU (a change);
      ``"drop"`` drops them; ``"share"`` counts GPUs in *milli-GPUs*: every
      node gets ``1000 x gpu`` units and every pod ``gpu_milli`` (or
      ``1000 x num_gpu``) units. ``share`` is fluid within a node: it lets
      0.6 + 0.6 + 0.6 GPU share a 2-GPU node, which a real GPU-sharing
      scheduler could not place, so it over-estimates packing.
    - CPU-only pods (``num_gpu == 0``): ``cpu_only="drop"`` (default; gangkit
      is about GPUs) or ``"keep"`` (a pod with 0 GPUs and its CPU and memory).
    - CPU and memory: ``cpu_milli / 1000`` cores, ``memory_mib x 2**20`` bytes.
      ``cpu_memory=False`` leaves both out of pods and nodes (GPUs only):
      placement then takes its fast path instead of scanning every node for
      every pod, several times faster on the 1,523-node list.
    - ``gpu_spec`` (allowed GPU models, ``|``-separated, empty = any):
      ``gpu_spec="select"`` (default) turns a *single* model into the node
      selector ``{GPU_MODEL_LABEL: model}``; gangkit's node selectors are
      exact ``key=value`` matches and cannot say "any of", so a multi-model
      spec is widened to "any model" (a change). ``"ignore"`` drops all
      constraints (not counted as a change).
    - ``qos`` and ``pod_phase`` are kept as job labels (``qos``, ``pod-phase``);
      they set neither priority nor queue.

    ``node_csv``: the node list (see :func:`load_alibaba_nodes`); without it
    the result has no nodes. ``run_time``: for pod lists without time
    columns (``openb_pod_list_multigpu50.csv``): every pod is submitted at 0
    and runs this long (a placement workload, as in the FGD paper); without
    it such a file is an error. ``limit``: read only the first ``limit`` rows.
    """
    _check_openb_options(fractional, cpu_only, pending, gpu_spec, limit)
    pods = _read_openb_pods(pod_csv, limit, run_time)
    unit = 1000 if fractional == "share" else 1
    jobs: list[Job] = []
    outcomes, reasons = [], []
    for i in range(len(pods.names)):
        drop, why, r, gpus, selector = _map_openb_pod(pods, i, fractional, cpu_only, pending, gpu_spec, unit)
        outcomes.append(DROPPED if drop is not None else CHANGED if why else MAPPED)
        reasons.append(drop if drop is not None else " | ".join(why))
        if drop is None:
            jobs.append(_openb_job(pods, i, r, gpus, selector, cpu_memory))
    node_list = _openb_nodes(node_csv, unit, cpu_memory)
    notes = ["single pods, not gangs: every job has exactly one pod"]
    if not pods.has_times:
        notes.append(f"no time columns: all pods submitted at 0 with run time {run_time} s")
    return TraceLoad(str(pod_csv), node_list, jobs, _rows(pods.names, outcomes, reasons), unit, notes)


def _check_openb_options(fractional, cpu_only, pending, gpu_spec, limit) -> None:
    """One problem for the first option of :func:`load_alibaba_openb` outside its choices."""
    for pname, value, allowed in (
        ("fractional", fractional, ("round-up", "drop", "share")),
        ("cpu_only", cpu_only, ("drop", "keep")),
        ("pending", pending, ("keep", "drop")),
        ("gpu_spec", gpu_spec, ("select", "ignore")),
    ):
        if value not in allowed:
            raise ScenarioError([Problem("load_alibaba_openb", pname,
                                         f"expected one of {', '.join(allowed)}, got {value!r}")])
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 0):
        raise ScenarioError([Problem("load_alibaba_openb", "limit", f"expected a whole number >= 0 or None, got {limit!r}")])


@dataclass
class _OpenbPods:
    """The columns of an openb pod list that the mapping reads, checked and converted (one entry per row).

    Without time columns (a placement workload): every ``submit`` and ``scheduled`` is 0, every run
    time ``rt`` the loader's ``run_time``, and ``created``, ``deleted`` are None.
    """

    names: pd.Series
    num_gpu: pd.Series
    gpu_milli: pd.Series
    cpu: pd.Series
    mem: pd.Series
    has_times: bool
    submit: pd.Series
    scheduled: pd.Series
    rt: pd.Series
    created: pd.Series | None
    deleted: pd.Series | None
    phase: pd.Series
    qos: pd.Series
    specs: pd.Series


def _read_openb_pods(pod_csv, limit: int | None, run_time: float | None) -> _OpenbPods:
    """Read the pod list's first ``limit`` rows; one problem for the first missing column or bad value."""
    df = _read_csv(pod_csv)
    if limit is not None:
        df = df.iloc[:limit].reset_index(drop=True)
    _require(df, pod_csv, ALIBABA_POD_COLUMNS)
    has_times = all(c in df.columns for c in ALIBABA_TIME_COLUMNS)
    if not has_times and run_time is None:
        _require(df, pod_csv, ALIBABA_TIME_COLUMNS)  # raises, naming the missing columns
    if run_time is not None and not (isinstance(run_time, (int, float)) and not isinstance(run_time, bool)
                                     and 0 < run_time <= MAX_DURATION_S):
        raise ScenarioError([Problem("load_alibaba_openb", "run_time", f"expected seconds > 0, got {run_time!r}")])

    num_gpu = _numeric(df, pod_csv, "num_gpu")
    bad = (num_gpu < 0) | (num_gpu % 1 != 0)
    if bad.any():
        i = int(bad.to_numpy().nonzero()[0][0])
        raise _bad(pod_csv, "num_gpu", f"expected a whole number >= 0 on data line {i + 1}, got {df['num_gpu'].iloc[i]!r}")
    gpu_milli = _numeric(df, pod_csv, "gpu_milli")
    cpu = _numeric(df, pod_csv, "cpu_milli") / 1000
    mem = _numeric(df, pod_csv, "memory_mib", maximum=MAX_QUANTITY / MIB)
    names = df["name"].astype(str)
    if names.duplicated().any():
        dup = names[names.duplicated()].iloc[0]
        raise _bad(pod_csv, "name", f"expected unique pod names; {dup!r} appears more than once")

    n = len(df)
    if has_times:
        created = _numeric(df, pod_csv, "creation_time", allow_missing=True, maximum=MAX_DURATION_S)
        deleted = _numeric(df, pod_csv, "deletion_time", allow_missing=True, maximum=MAX_DURATION_S)
        scheduled = _numeric(df, pod_csv, "scheduled_time", allow_missing=True, maximum=MAX_DURATION_S)
        submit = created - created.min()
        rt = deleted - scheduled
    else:
        submit = pd.Series([0.0] * n)
        scheduled = pd.Series([0.0] * n)
        rt = pd.Series([float(run_time)] * n)
        created = deleted = None
    phase = df["pod_phase"].astype(str) if "pod_phase" in df.columns else pd.Series([""] * n)
    qos = df["qos"].astype(str) if "qos" in df.columns else pd.Series([""] * n)
    specs = df["gpu_spec"] if "gpu_spec" in df.columns else pd.Series([None] * n)
    return _OpenbPods(names, num_gpu, gpu_milli, cpu, mem, has_times, submit, scheduled, rt, created, deleted,
                      phase, qos, specs)


def _map_openb_pod(pods: _OpenbPods, i: int, fractional: str, cpu_only: str, pending: str, gpu_spec: str,
                   unit: int) -> tuple[str | None, list[str], float, int, dict[str, str]]:
    """Row ``i`` by the rules of :func:`load_alibaba_openb`: why it is dropped (or None), the changes made
    to it, its run time, GPUs (in ``unit`` per GPU) and node selector."""
    why: list[str] = []
    drop: str | None = None
    has_times = pods.has_times
    g, milli = int(pods.num_gpu.iat[i]), pods.gpu_milli.iat[i]
    r = pods.rt.iat[i]
    if has_times and math.isnan(pods.scheduled.iat[i]):
        if pending == "drop":
            drop = "never scheduled (no scheduled_time; pending='drop')"
        else:
            r = pods.deleted.iat[i] - pods.created.iat[i]
            why.append("never scheduled: run time = deletion_time - creation_time")
    if drop is None and has_times and math.isnan(pods.submit.iat[i]):
        drop = "no creation_time"
    if drop is None and not (r > 0):  # also catches NaN
        drop = "no valid run time (missing time or run time <= 0)"
    if drop is None and g == 0:
        if cpu_only == "drop":
            drop = "CPU-only pod (num_gpu = 0; cpu_only='drop')"
    gpus = g * unit
    if drop is None and g == 1 and 0 < milli < 1000:
        if fractional == "drop":
            drop = "fractional GPU (gpu_milli < 1000; fractional='drop')"
        elif fractional == "round-up":
            why.append("fractional GPU rounded up to 1 GPU")
        else:
            gpus = int(milli)
    selector: dict[str, str] = {}
    spec = pods.specs.iat[i]
    if drop is None and gpu_spec == "select" and isinstance(spec, str) and spec.strip():
        models = [m for m in spec.split("|") if m]
        if len(models) == 1:
            selector = {GPU_MODEL_LABEL: models[0]}
        else:
            why.append("multi-model gpu_spec widened to any model")
    return drop, why, r, gpus, selector


def _openb_job(pods: _OpenbPods, i: int, r: float, gpus: int, selector: dict[str, str], cpu_memory: bool) -> Job:
    """The one-pod Job of row ``i``; ``qos`` and ``pod_phase`` become the labels ``qos`` and ``pod-phase``."""
    labels = {"qos": pods.qos.iat[i]}
    if pods.phase.iat[i]:
        labels["pod-phase"] = pods.phase.iat[i]
    return Job(
        name=pods.names.iat[i],
        pod_sets=[PodSet("pod", 1, gpus, cpu=float(pods.cpu.iat[i]) if cpu_memory else 0.0,
                         memory=int(pods.mem.iat[i]) * MIB if cpu_memory else 0, node_selector=selector)],
        run_time=float(r),
        submit_time=float(pods.submit.iat[i]),
        labels=labels,
    )


def _openb_nodes(node_csv, unit: int, cpu_memory: bool) -> list[Node]:
    """The node list (none without ``node_csv``), in ``unit`` GPUs per GPU, without CPU and memory unless
    ``cpu_memory``."""
    node_list = load_alibaba_nodes(node_csv) if node_csv is not None else []
    if unit != 1 or not cpu_memory:
        node_list = [Node(nd.name, nd.gpus * unit, nd.cpu if cpu_memory else None,
                          nd.memory if cpu_memory else None, nd.labels, nd.pool) for nd in node_list]
    return node_list


# ---------------------------------------------------------------------------------------------- Philly


def load_philly_runtimes(path, column: str = "runtime") -> pd.Series:
    """Philly job run times in **seconds**, as a float Series named ``run_time_s``.

    The file (``philly_runtime.csv``) has one column, ``runtime``. Empty
    cells are dropped; a non-numeric or negative value is an error. Zero
    run times are kept (they are in the trace: jobs that failed at once);
    gangkit Jobs need ``run_time > 0``, so sample from ``s[s > 0]``::

        s = load_philly_runtimes(path)
        run_times = s[s > 0].sample(1000, replace=True, random_state=1).to_numpy()
    """
    df = _read_csv(path)
    _require(df, path, (column,))
    s = _numeric(df, path, column, allow_missing=True, maximum=MAX_DURATION_S).dropna()
    if (s < 0).any():
        i = int((s < 0).to_numpy().nonzero()[0][0])
        raise _bad(path, column, f"expected seconds >= 0, got {s.iloc[i]!r}")
    return s.reset_index(drop=True).rename("run_time_s")


# ---------------------------------------------------------------------------------------------- SWF


def read_swf(path) -> tuple[dict[str, str], pd.DataFrame]:
    """The header fields (``{"MaxProcs": "128", ...}``) and the 18 SWF fields of every job line.

    Reads plain or gzip-compressed (``.gz``) files. ``-1`` is kept as it is.
    """
    p = Path(path)
    try:
        opener = gzip.open if p.suffix == ".gz" else open
        with opener(p, "rt", encoding="utf-8", errors="replace") as f:
            text = f.read()
    except FileNotFoundError:
        raise _bad(path, "", "no such file") from None
    except IsADirectoryError:
        raise _bad(path, "", "expected an SWF file, got a directory") from None
    except (OSError, EOFError) as e:
        raise _bad(path, "", f"cannot read: {e}") from None
    header: dict[str, str] = {}
    records = []
    for lineno, line in enumerate(text.splitlines(), 1):
        s = line.strip()
        if not s:
            continue
        if s.startswith(";"):
            key, sep, value = s[1:].partition(":")
            if sep and key.strip() and " " not in key.strip():
                header.setdefault(key.strip(), value.strip())
            continue
        parts = s.split()
        if len(parts) != len(SWF_FIELDS):
            raise _bad(path, f"line {lineno}", f"expected {len(SWF_FIELDS)} whitespace-separated SWF fields, got {len(parts)}")
        bad = next((j for j, x in enumerate(parts) if not _swf_number(x)), None)
        if bad is not None:
            raise _bad(path, SWF_FIELDS[bad], f"expected a number from -{MAX_QUANTITY} to {MAX_QUANTITY} on line "
                       f"{lineno}, got {parts[bad]!r}")
        records.append([float(x) for x in parts])
    return header, pd.DataFrame(records, columns=list(SWF_FIELDS))


def _swf_number(x: str) -> bool:
    """A field gangkit can use: a finite number of at most 2^63-1 in magnitude (``nan``, ``inf`` are not)."""
    try:
        return abs(float(x)) <= MAX_QUANTITY
    except (ValueError, OverflowError):
        return False


def load_swf(path, *, gpus_per_processor: int = 1, machine_processors: int | None = None) -> TraceLoad:
    """Map a Standard Workload Format log into gang Jobs on a machine of Nodes.

    - Each job line becomes a Job ``swf-<job_number>``: a gang of
      ``allocated_processors`` pods (field 5; when it is ``-1``,
      ``requested_processors``, field 8, as a change), each asking for
      ``gpus_per_processor`` "GPUs" (default 1: a processor stands in for a
      GPU). ``min_member`` = every pod: a rigid job runs all at once or not.
    - ``submit_time`` = field 2 minus the smallest submit time;
      ``run_time`` = field 4. Rows with run time ``-1`` or ``0``, or no
      processor count, are dropped; so are jobs larger than the machine.
    - ``wait_time`` (field 3) is not used: gangkit computes waits itself.
      Some logs (the NASA iPSC/860 one) have none, and their "submit" times
      are really *start* times, so the log's own queueing is invisible.
    - ``queue_number`` and ``status`` are kept as labels.
    - The machine: ``MaxNodes`` nodes with ``MaxProcs / MaxNodes`` processors
      each (header comments), so nodes have ``gpus_per_processor x`` that many
      GPUs. ``machine_processors`` overrides the header (then one processor
      per node); a log with neither is an error.
    """
    for pname, value in (("gpus_per_processor", gpus_per_processor), ("machine_processors", machine_processors)):
        if (value is not None or pname == "gpus_per_processor") and (
                isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_SWF_MACHINE):
            raise ScenarioError([Problem("load_swf", pname, f"expected a whole number from 1 to {MAX_SWF_MACHINE}, "
                                                            f"got {value!r}")])
    header, df = read_swf(path)
    procs, node_count = _swf_machine(path, header, machine_processors)
    per_node = max(procs // node_count, 1)
    width = len(str(node_count - 1))
    node_list = [Node(f"swf-node-{i:0{width}d}", per_node * gpus_per_processor) for i in range(node_count)]

    submit = df["submit_time"]
    first = submit[submit >= 0].min() if (submit >= 0).any() else 0.0
    jobs, names, outcomes, reasons = [], [], [], []
    seen: set[str] = set()
    for row in df.itertuples(index=False):
        name = f"swf-{int(row.job_number)}"
        names.append(name)
        p, why, drop = _map_swf_row(row, name, first, procs, seen)
        if drop is not None:
            outcomes.append(DROPPED)
            reasons.append(drop)
            continue
        seen.add(name)
        outcomes.append(CHANGED if why else MAPPED)
        reasons.append(" | ".join(why))
        jobs.append(_swf_job(row, name, int(p), first, gpus_per_processor))
    notes = [f"machine: {node_count} nodes x {per_node} processors (1 processor = {gpus_per_processor} GPU)"]
    return TraceLoad(str(path), node_list, jobs, _rows(names, outcomes, reasons), 1, notes)


def _swf_machine(path, header: dict[str, str], machine_processors: int | None) -> tuple[int, int]:
    """The machine's processors and nodes: ``machine_processors`` (one processor per node), else the
    header's ``MaxProcs`` and ``MaxNodes`` (either stands for the other when missing)."""
    if machine_processors is not None:
        return int(machine_processors), int(machine_processors)

    def hnum(key):
        v = header.get(key)
        try:
            return int(float(v)) if v is not None else None
        except ValueError:
            raise _bad(path, key, f"expected a whole number in the header, got {v!r}") from None

    procs, node_count = hnum("MaxProcs"), hnum("MaxNodes")
    procs = procs or node_count
    node_count = node_count or procs
    if not procs or procs < 1:
        raise _bad(path, "MaxProcs", "expected MaxProcs or MaxNodes in the header comments "
                   "(or pass machine_processors=)")
    if procs > MAX_SWF_MACHINE or not 1 <= node_count <= MAX_SWF_MACHINE:
        raise _bad(path, "MaxNodes" if node_count != procs else "MaxProcs",
                   f"expected a machine of 1 to {MAX_SWF_MACHINE} nodes and processors, got {node_count} nodes, "
                   f"{procs} processors (or pass machine_processors=)")
    return procs, node_count


def _map_swf_row(row, name: str, first: float, procs: int, seen: set[str]) -> tuple[float, list[str], str | None]:
    """One SWF job line by the rules of :func:`load_swf`: its processors, the changes made to it, and why
    it is dropped (or None)."""
    why, drop = [], None
    p = row.allocated_processors
    if p <= 0:
        if row.requested_processors > 0:
            p = row.requested_processors
            why.append("allocated_processors missing: requested_processors used")
        else:
            drop = "no processor count (fields 5 and 8 are -1 or 0)"
    if drop is None and row.run_time < 0:
        drop = "run time missing (-1)"
    elif drop is None and row.run_time == 0:
        drop = "run time 0"
    if drop is None and row.submit_time < 0:
        drop = "submit time missing (-1)"
    if drop is None and max(row.run_time, row.submit_time - first) > MAX_DURATION_S:
        drop = "run time or submit time beyond 292 years (Go's longest duration)"
    if drop is None and p > procs:
        drop = f"more processors than the machine has ({procs})"
    if drop is None and name in seen:
        drop = "duplicate job number"
    return p, why, drop


def _swf_job(row, name: str, pods: int, first: float, gpus_per_processor: int) -> Job:
    """The rigid gang of one SWF job line (``min_member`` = every pod); queue and status become labels."""
    labels = {}
    if row.queue_number >= 0:
        labels["swf-queue"] = str(int(row.queue_number))
    if row.status >= 0:
        labels["swf-status"] = str(int(row.status))
    return Job(name, [PodSet("processors", pods, gpus_per_processor)], float(row.run_time),
               submit_time=float(row.submit_time - first), min_member=pods, labels=labels)


# ---------------------------------------------------------------------------------------------- gangs


def derive_gangs(
    jobs: list[Job],
    rule: str = "consecutive",
    *,
    sizes: tuple[int, ...] = (2, 4, 8),
    window: float = 60.0,
    seed: int = 0,
) -> list[Job]:
    """Group one-pod jobs (Alibaba openb) into gang jobs by a stated, seeded rule.

    **The trace does not say which pods belong together; this rule invents
    it.** A result built on derived gangs is about the rule as much as about
    the trace: say which rule and seed you used.

    Rule ``"consecutive"`` (the only one): take the jobs in submit order
    (ties by name). Each new group draws a target size from ``sizes`` with a
    ``random.Random(seed)``. The next pod joins the open group when it has
    exactly the same request (GPUs, CPU, memory, node selector), was
    submitted within ``window`` seconds of the group's first pod, and the
    group is below its target size; otherwise the group closes and the pod
    opens a new one. A group of ``n > 1`` pods becomes one sync Job
    ``gang-<first pod>`` of ``n`` identical pods with ``min_member = n``,
    submitted with its first pod, running as long as its longest member
    (a sync job ends with its last worker), labels of the first pod plus
    ``derived-gang-size``. Groups of one, jobs with several pods and
    0-GPU pods are returned unchanged. Same jobs, rule and seed: same gangs.
    """
    import random

    if rule != "consecutive":
        raise ScenarioError([Problem("derive_gangs", "rule", f"expected 'consecutive', got {rule!r}")])
    if not sizes or any(not isinstance(k, int) or k < 1 for k in sizes):
        raise ScenarioError([Problem("derive_gangs", "sizes", f"expected whole numbers >= 1, got {sizes!r}")])
    if not (isinstance(window, (int, float)) and window >= 0):
        raise ScenarioError([Problem("derive_gangs", "window", f"expected seconds >= 0, got {window!r}")])
    rng = random.Random(seed)
    out: list[Job] = []
    group: list[Job] = []
    target = 0

    def close() -> None:
        if len(group) == 1:
            out.append(group[0])
        elif group:
            first, n = group[0], len(group)
            ps = first.pod_sets[0]
            out.append(Job(
                name=f"gang-{first.name}",
                pod_sets=[PodSet(ps.name, n, ps.gpus, ps.cpu, ps.memory, ps.node_selector)],
                run_time=max(j.run_time for j in group),
                submit_time=first.submit_time,
                priority=first.priority,
                queue=first.queue,
                progress="sync",
                min_member=n,
                namespace=first.namespace,
                labels={**first.labels, "derived-gang-size": str(n)},
            ))
        group.clear()

    for j in sorted(jobs, key=lambda j: (j.submit_time, j.name)):
        if j.pod_count != 1 or len(j.pod_sets) != 1 or j.gpus == 0:
            close()
            out.append(j)
            continue
        if (group and len(group) < target and j.pod_sets[0].request == group[0].pod_sets[0].request
                and j.submit_time - group[0].submit_time <= window):
            group.append(j)
            continue
        close()
        group.append(j)
        target = rng.choice(sizes)
    close()
    return out


if __name__ == "__main__":  # python -m gangkit.workloads.traces <traces folder>: print the mapping reports
    import sys

    root = Path(sys.argv[1] if len(sys.argv) > 1 else "../shared/traces")
    ali = root / "alibaba-openb-2023"
    for pods in ("openb_pod_list_default.csv", "openb_pod_list_gpuspec33.csv"):
        load = load_alibaba_openb(ali / pods, ali / "openb_node_list_all_node.csv")
        print(load.summary())
        gangs = derive_gangs(load.jobs, seed=0)
        sizes = pd.Series([j.pod_count for j in gangs]).value_counts().sort_index()
        print(f"  derive_gangs(seed=0): {len(gangs)} jobs; pods per job: {sizes.to_dict()}", end="\n\n")
    print(load_alibaba_openb(ali / "openb_pod_list_multigpu50.csv", ali / "openb_node_list_all_node.csv",
                             run_time=3600.0).summary(), end="\n\n")
    for swf in sorted((root / "nasa-ipsc-1993-swf").glob("*.swf*")):
        print(load_swf(swf).summary(), end="\n\n")
    s = load_philly_runtimes(root / "philly" / "philly_runtime.csv")
    print(f"philly_runtime.csv: {len(s)} run times (s), {int((s == 0).sum())} zero; "
          f"median {s.median():.0f} s, mean {s.mean():.0f} s, p99 {s.quantile(0.99):.0f} s, max {s.max():.0f} s")
