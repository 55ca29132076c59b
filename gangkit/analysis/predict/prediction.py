"""A prediction as a value: per new workload, what the samples say, and its three forms.

The same answer is read three ways: a paragraph per workload in plain words (``print(pred)``, what
``gangkit predict`` prints), one table row per workload (``pred.table()``, a DataFrame for a notebook),
and one JSON object (``pred.to_json()``, ``gangkit predict --json``) whose keys the reference lists
(docs/reference/predict.md). A spread over samples is always given as p10, p50 and p90: the start
that one sample in ten beats, the middle one, and the one that one sample in ten is later than.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass, field

import pandas as pd

#: the quantiles a spread over samples is given at (keys ``p10``, ``p50``, ``p90``)
QUANTILES = (0.1, 0.5, 0.9)
#: the paragraph form's lines are wrapped at this many columns: they read whole in a terminal and in a notebook's output
WIDTH = 88


def wrapped(line: str, indent: str = "") -> str:
    """``line`` wrapped at :data:`WIDTH` columns between words (never inside one), its follow-on lines indented by
    ``indent`` more than its own."""
    lead = line[:len(line) - len(line.lstrip(" "))]
    return textwrap.fill(line, WIDTH, initial_indent="", subsequent_indent=lead + indent, break_long_words=False,
                         break_on_hyphens=False)


def percentiles(values: Sequence[float]) -> dict | None:
    """``{"p10": ..., "p50": ..., "p90": ...}`` of ``values`` (linear between order statistics), None if empty."""
    if not values:
        return None
    s = pd.Series(sorted(values), dtype=float)
    return {f"p{round(q * 100)}": round(float(s.quantile(q)), 3) for q in QUANTILES}


def in_words(seconds: float) -> str:
    """Seconds in words a reader takes in at once: 0 s, 45 s, 12 min, 3.5 h, 2.1 d."""
    if seconds < 60:
        return f"{seconds:.0f} s"
    if seconds < 3600:
        return f"{seconds / 60:.0f} min"
    if seconds < 86400:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} d"


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
        """The table form: one paragraph in plain words (the start, why it waits now, where, its queue, the nodes)."""
        lines = [self._headline(samples, horizon)]
        if not self.never:
            lines.append(f"At the snapshot: [{self.reason['code']}] {self.reason['message'].rstrip('.')}.")
        if self.waits_in:
            lines.append(f"It waits longest in {self.waits_in}.")
        if self.queue_position is not None:
            lines.append(f"Position in its ClusterQueue: {self.queue_position} (positionInClusterQueue).")
        lines.extend(_node_line(row) for row in self.nodes)
        return "\n".join(wrapped(line, "    ") for line in lines)

    def _headline(self, samples: int, horizon: float) -> str:
        """Whether and when it starts: never, not within the horizon, at once, or p10/p50/p90 after the snapshot."""
        head = f"{self.kind} {self.name}"
        if self.never:
            return f"{head} can never start: [{self.reason['code']}] {self.reason['message']}"
        if self.will_start == 0:
            return f"{head} did not start within the horizon ({in_words(horizon)}) in any of {samples} samples."
        s = self.start_s
        share = f"{self.will_start:.0%} of {samples} samples" if self.will_start < 1 else f"all {samples} samples"
        if s["p90"] == 0:
            return f"{head} starts at once (in {share})."
        return (f"{head} starts within the horizon in {share}: after {in_words(s['p10'])} (p10), "
                f"{in_words(s['p50'])} (p50), {in_words(s['p90'])} (p90).")


def _node_line(row: dict) -> str:
    """One node row in words: a filter's verdict on a group of nodes, or the nodes a supplier launches."""
    if row["filter"] is None:
        return (f"  {row['reason']}: {row['count']} node(s) in {row['share']:.0%} of samples, ready after "
                f"{in_words(row['ready_s']['p50'])} (p50)")
    return (f"  pod set {row['pod_set']}: {row['count']} node(s) like {row['node']}: {row['filter']}: "
            f"{row['reason']} ({row['detail']})")


@dataclass
class Prediction:
    """The prediction for the new workloads of one dump (:func:`gangkit.analysis.predict.predict`)."""

    snapshot_time: str | None
    samples: int
    horizon: float
    stack: str
    workloads: list[WorkloadPrediction]
    #: the jobs (``namespace/name``) whose run times each sample draws: those that end and carry no ``gangkit/run-time``
    #: annotation, the new workloads among them (``gangkit predict`` also warns with their names)
    drawn_run_times: list[str] = field(default_factory=list)

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
                f"   horizon {in_words(self.horizon)}")
        parts = [head]
        if self.drawn_run_times:
            parts[0] += "\n" + wrapped(f"Run times drawn in each sample (no gangkit/run-time annotation): "
                                       f"{', '.join(self.drawn_run_times)}.", "    ")
        return "\n\n".join(parts + [w.paragraph(self.samples, self.horizon) for w in self.workloads])
