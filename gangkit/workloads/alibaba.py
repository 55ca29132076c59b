"""The Alibaba GPU cluster trace 2023 ("openb"), mapped into gangkit jobs and nodes.

Published with the FGD paper (Weng et al., "Beware of Fragmentation", USENIX ATC 2023;
github.com/alibaba/clusterdata, cluster-trace-gpu-v2023): a pod list (one row per *pod*: CPU, memory,
GPUs, a GPU fraction, allowed GPU models, QoS class, phase, creation/scheduling/deletion times in
seconds) and a node list (GPUs and GPU model per node) of a heterogeneous cluster.

**This trace has single pods, not gangs**: no job id ties pods together, so every pod becomes a
one-pod Job (:func:`load_alibaba_openb`, row by row as its docstring says); a gang mix must be derived
by a stated rule (:func:`gangkit.workloads.gang_rules.derive_gangs`). Fractional-GPU pods (GPU sharing)
have no exact counterpart in gangkit, which counts whole GPUs: the caller chooses a mapping, and the
:class:`~gangkit.workloads.trace_load.TraceLoad` reports every row changed or dropped. The overview of
all three traces is :mod:`gangkit.workloads.traces`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from gangkit.model.errors import Problem, ScenarioError
from gangkit.model.jobs import Job, PodSet
from gangkit.model.nodes import Node
from gangkit.model.quantity import MAX_DURATION_S, MAX_QUANTITY
from gangkit.workloads.trace_load import (
    CHANGED,
    DROPPED,
    MAPPED,
    TraceLoad,
    file_problem,
    numeric_column,
    read_csv,
    report_rows,
    require_columns,
)

__all__ = ["GPU_MODEL_LABEL", "load_alibaba_nodes", "load_alibaba_openb"]

#: The node label that carries a GPU model (``model`` of the node list) and that
#: single-model ``gpu_spec`` constraints select on.
GPU_MODEL_LABEL = "gpu-model"

ALIBABA_POD_COLUMNS = ("name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli")
ALIBABA_TIME_COLUMNS = ("creation_time", "deletion_time", "scheduled_time")
ALIBABA_NODE_COLUMNS = ("sn", "cpu_milli", "memory_mib", "gpu")
MIB = 2**20


def load_alibaba_nodes(path) -> list[Node]:
    """The Alibaba openb node list (``sn, cpu_milli, memory_mib, gpu, model``) as gangkit Nodes.

    ``sn`` -> name, ``gpu`` -> GPUs, ``cpu_milli / 1000`` -> cores,
    ``memory_mib * 2**20`` -> bytes, ``model`` (empty for CPU-only nodes) ->
    the label :data:`GPU_MODEL_LABEL`.
    """
    df = read_csv(path)
    require_columns(df, path, ALIBABA_NODE_COLUMNS)
    cpu = numeric_column(df, path, "cpu_milli")
    mem = numeric_column(df, path, "memory_mib", maximum=MAX_QUANTITY / MIB)
    gpu = numeric_column(df, path, "gpu")
    if (gpu < 0).any() or (gpu % 1 != 0).any():
        i = int(((gpu < 0) | (gpu % 1 != 0)).to_numpy().nonzero()[0][0])
        raise file_problem(path, "gpu", f"expected a whole number >= 0 on data line {i + 1}, got {df['gpu'].iloc[i]!r}")
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
    return TraceLoad(str(pod_csv), node_list, jobs, report_rows(pods.names, outcomes, reasons), unit, notes)


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
    df = read_csv(pod_csv)
    if limit is not None:
        df = df.iloc[:limit].reset_index(drop=True)
    require_columns(df, pod_csv, ALIBABA_POD_COLUMNS)
    has_times = all(c in df.columns for c in ALIBABA_TIME_COLUMNS)
    if not has_times and run_time is None:
        require_columns(df, pod_csv, ALIBABA_TIME_COLUMNS)  # raises, naming the missing columns
    if run_time is not None and not (isinstance(run_time, (int, float)) and not isinstance(run_time, bool)
                                     and 0 < run_time <= MAX_DURATION_S):
        raise ScenarioError([Problem("load_alibaba_openb", "run_time", f"expected seconds > 0, got {run_time!r}")])

    num_gpu = numeric_column(df, pod_csv, "num_gpu")
    bad = (num_gpu < 0) | (num_gpu % 1 != 0)
    if bad.any():
        i = int(bad.to_numpy().nonzero()[0][0])
        raise file_problem(pod_csv, "num_gpu", f"expected a whole number >= 0 on data line {i + 1}, got {df['num_gpu'].iloc[i]!r}")
    gpu_milli = numeric_column(df, pod_csv, "gpu_milli")
    cpu = numeric_column(df, pod_csv, "cpu_milli") / 1000
    mem = numeric_column(df, pod_csv, "memory_mib", maximum=MAX_QUANTITY / MIB)
    names = df["name"].astype(str)
    if names.duplicated().any():
        dup = names[names.duplicated()].iloc[0]
        raise file_problem(pod_csv, "name", f"expected unique pod names; {dup!r} appears more than once")

    n = len(df)
    if has_times:
        created = numeric_column(df, pod_csv, "creation_time", allow_missing=True, maximum=MAX_DURATION_S)
        deleted = numeric_column(df, pod_csv, "deletion_time", allow_missing=True, maximum=MAX_DURATION_S)
        scheduled = numeric_column(df, pod_csv, "scheduled_time", allow_missing=True, maximum=MAX_DURATION_S)
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
