"""A trace loader's result, and the checked reading of a trace's CSV columns.

A real trace never maps one-to-one into gangkit: some rows are mapped as they are, some with a change
(a fractional GPU rounded up, a missing processor count taken from the request), some are dropped
(no run time, larger than the machine). A loader says which, row by row: its :class:`TraceLoad` carries
the nodes and jobs it made and a *mapping report* (``rows``: one outcome and reason per input row),
which :meth:`TraceLoad.summary` prints. Read it before trusting a result built on the trace.

The column readers here turn a bad file into one :class:`~gangkit.model.errors.ScenarioError` naming
the file, the column and the first bad value (with its data line), not a pandas traceback. The loaders
themselves are :mod:`gangkit.workloads.alibaba` (the Alibaba openb pod and node lists),
:mod:`gangkit.workloads.swf` (Standard Workload Format logs) and :mod:`gangkit.workloads.traces`
(the overview, and Philly run times).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from gangkit.model.errors import Problem, ScenarioError
from gangkit.model.jobs import Job
from gangkit.model.nodes import Node
from gangkit.model.quantity import MAX_QUANTITY
from gangkit.model.scenario import Scenario

__all__ = ["CHANGED", "DROPPED", "MAPPED", "TraceLoad", "file_problem", "numeric_column", "read_csv", "report_rows",
           "require_columns"]

#: The outcomes of one input row: mapped as it is, mapped with a change, dropped.
MAPPED, CHANGED, DROPPED = "mapped", "changed", "dropped"


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


def file_problem(path, column: str, message: str) -> ScenarioError:
    """One problem naming the file ``path`` and its ``column`` (or line, or header field)."""
    return ScenarioError([Problem(f"file {path}", column, message)])


def read_csv(path) -> pd.DataFrame:
    """The CSV file at ``path``; one problem naming it when it is missing, a directory, unreadable or not CSV text."""
    try:
        return pd.read_csv(path)
    except FileNotFoundError:
        raise file_problem(path, "", "no such file") from None
    except IsADirectoryError:
        raise file_problem(path, "", "expected a CSV file, got a directory") from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as e:
        raise file_problem(path, "", f"expected a CSV file with a header line; {type(e).__name__}: {e}") from None
    except OSError as e:  # permission denied, a broken compressed file
        raise file_problem(path, "", f"cannot be read: {e.strerror or e}") from None
    except ValueError as e:  # pandas' other complaints about what it was given
        raise file_problem(path, "", f"expected a CSV file; {e}") from None


def require_columns(df: pd.DataFrame, path, columns) -> None:
    """One problem for each of ``columns`` the file lacks."""
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise ScenarioError([
            Problem(f"file {path}", c, f"expected this column; the file has {', '.join(map(str, df.columns))}")
            for c in missing
        ])


def numeric_column(df: pd.DataFrame, path, column: str, *, allow_missing: bool = False,
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
        raise file_problem(path, column, f"expected a number{within} on data line {i + 1}, got {shown[:60]}")
    return num


def _float(x) -> float:
    try:
        return float(x)
    except (OverflowError, TypeError, ValueError):
        return math.inf  # out of range: reported by the caller


def report_rows(names, outcome, reasons) -> pd.DataFrame:
    """The ``rows`` table of a :class:`TraceLoad`: one name, outcome and reason per input row."""
    return pd.DataFrame({"name": list(names), "outcome": list(outcome), "reason": list(reasons)})
