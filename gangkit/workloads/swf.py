"""The Standard Workload Format (SWF) of the Parallel Workloads Archive, mapped into gang jobs.

The format of the Parallel Workloads Archive (Feitelson et al.): logs of HPC supercomputers whose jobs
are *rigid*: a job asks for N processors and runs only when all N are given at once - the HPC ancestor
of gang scheduling. 18 whitespace-separated fields per line, ``-1`` meaning "unknown"; header comments
(``;``) give the machine size (``MaxNodes``, ``MaxProcs``). Each processor becomes one pod with one
"GPU" (a stand-in: the logs predate GPUs), so a job is a gang of that many pods (:func:`load_swf`).
The overview of all three traces gangkit reads is :mod:`gangkit.workloads.traces`.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import pandas as pd

from gangkit.model.errors import Problem, ScenarioError
from gangkit.model.jobs import Job, PodSet
from gangkit.model.nodes import Node
from gangkit.model.quantity import MAX_DURATION_S, MAX_QUANTITY
from gangkit.workloads.trace_load import CHANGED, DROPPED, MAPPED, TraceLoad, file_problem, report_rows

__all__ = ["MAX_SWF_MACHINE", "SWF_FIELDS", "load_swf", "read_swf"]

#: The largest machine an SWF log may describe (nodes, and processors): 10^6 pods' worth, gangkit's
#: limit for the pods of one input (gangkit.model.reading.MAX_SCENARIO_PODS).
MAX_SWF_MACHINE = 1_000_000

#: The 18 fields of an SWF line, in order (Parallel Workloads Archive, SWF 2.2).
SWF_FIELDS = (
    "job_number", "submit_time", "wait_time", "run_time", "allocated_processors", "average_cpu_time",
    "used_memory", "requested_processors", "requested_time", "requested_memory", "status", "user_id",
    "group_id", "executable_number", "queue_number", "partition_number", "preceding_job", "think_time",
)


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
        raise file_problem(path, "", "no such file") from None
    except IsADirectoryError:
        raise file_problem(path, "", "expected an SWF file, got a directory") from None
    except (OSError, EOFError) as e:
        raise file_problem(path, "", f"cannot read: {e}") from None
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
            raise file_problem(path, f"line {lineno}", f"expected {len(SWF_FIELDS)} whitespace-separated SWF fields, got {len(parts)}")
        bad = next((j for j, x in enumerate(parts) if not _swf_number(x)), None)
        if bad is not None:
            raise file_problem(path, SWF_FIELDS[bad], f"expected a number from -{MAX_QUANTITY} to {MAX_QUANTITY} on line "
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
    return TraceLoad(str(path), node_list, jobs, report_rows(names, outcomes, reasons), 1, notes)


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
            raise file_problem(path, key, f"expected a whole number in the header, got {v!r}") from None

    procs, node_count = hnum("MaxProcs"), hnum("MaxNodes")
    procs = procs or node_count
    node_count = node_count or procs
    if not procs or procs < 1:
        raise file_problem(path, "MaxProcs", "expected MaxProcs or MaxNodes in the header comments "
                   "(or pass machine_processors=)")
    if procs > MAX_SWF_MACHINE or not 1 <= node_count <= MAX_SWF_MACHINE:
        raise file_problem(path, "MaxNodes" if node_count != procs else "MaxProcs",
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
