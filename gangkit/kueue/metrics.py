"""Kueue's metrics, as DataFrames named after the Prometheus metrics Kueue exports.

An operator tells "quota exhausted" from "gang cannot fit" by looking at the
right layer's metrics. For the queue and quota layer these are:

- ``kueue_pending_workloads``: pending workloads per ClusterQueue over time,
  split into ``active`` (in the heap) and ``inadmissible`` (parked);
- ``kueue_cluster_queue_resource_reservation``: quota reserved per
  ClusterQueue, flavor and resource over time (the metric's own labels are
  cohort, cluster_queue, flavor, resource and replica_role; gangkit keeps
  cluster_queue, flavor and resource). The columns ``nominal`` and
  ``borrowed`` are gangkit's own additions: Kueue exports no borrowed
  amount (``pkg/metrics/metrics.go``, v0.19); on a real cluster it is this
  metric minus ``kueue_cluster_queue_nominal_quota``, when positive;
- ``kueue_admission_wait_time_seconds``: per admission, the time from
  creation, or from the last requeue (after a preemption or eviction), to
  quota reservation;
- ``kueue_evicted_workloads_total`` and ``kueue_preempted_workloads_total``:
  counts by ClusterQueue and reason.

Each time series keeps a row only when its value changes, and one row per
instant: a gauge scraped at an instant shows the value after the instant's
changes (``kueue_pending_workloads``' two columns are the metric's ``status``
label, ``active`` and ``inadmissible``).
"""

from __future__ import annotations

from collections import Counter

import pandas as pd


class KueueMetrics:
    """Samples a :class:`~gangkit.kueue.Kueue` after every change."""

    def __init__(self, kueue):
        self.kueue = kueue
        self._pending: dict[str, tuple] = {}
        self._pending_at: dict[str, int] = {}  # ClusterQueue -> index of its last pending row
        self._reservation: dict[tuple, int] = {}  # series -> the reserved amount of its last row
        self._revision = -1  # Kueue.revision at the last sample
        self._usage_revision = -1  # Kueue.usage_revision at the last sample
        self._plan: list | None = None  # per ClusterQueue: (name, usage, [(flavor-resource, series key, nominal)])
        self.pending_rows: list[tuple] = []
        self.reservation_rows: list[tuple] = []
        self.wait_rows: list[tuple] = []
        self.evicted: Counter = Counter()
        self.preempted: Counter = Counter()

    def sample(self, now: float) -> None:
        """Add a row to each series whose value changed since its last row.

        Called after every change Kueue sees (about five times per job), so it
        walks a list of (ClusterQueue node, its quota entries) made once: the
        ClusterQueues and their quotas are fixed for the run.
        """
        k = self.kueue
        if k.revision == self._revision:
            return  # nothing in Kueue changed since the last sample: no series has a new value
        self._revision = k.revision
        pending, pending_at, pending_rows = self._pending, self._pending_at, self.pending_rows
        for name, q in k.queues.items():
            value = q.counts()
            if pending.get(name) != value:
                pending[name] = value
                row = (now, name, *value)
                i = pending_at.get(name)
                if i is not None and pending_rows[i][0] == now:  # one row per instant: the last value
                    pending_rows[i] = row
                else:
                    pending_at[name] = len(pending_rows)
                    pending_rows.append(row)
        if k.usage_revision == self._usage_revision:
            return  # no quota reserved or released since the last sample: no reservation series changed
        self._usage_revision = k.usage_revision
        plan = self._plan
        if plan is None:
            plan = self._plan = [(name, node.usage, [(fr, (name, *fr), q.nominal) for fr, q in node.quotas.items()])
                                 for name, node in k.tree.cq.items()]
        reservation = self._reservation
        for name, usage, entries in plan:
            for fr, key, nominal in entries:
                used = usage[fr]  # the series' value (reserved, borrowed) follows from it: the nominal quota is fixed
                if reservation.get(key) != used:  # a first row for every series, then a row per change
                    reservation[key] = used
                    self.reservation_rows.append((now, name, fr[0], fr[1], used, used - nominal if used > nominal else 0, nominal))

    def admitted(self, wl, now: float) -> None:
        since = wl.created if wl.requeued_at is None else wl.requeued_at  # QueuedWaitTime: since the last requeue
        self.wait_rows.append((now, wl.key, wl.admission.cluster_queue, now - since))

    def eviction(self, cq: str, reason: str) -> None:
        self.evicted[(cq, reason)] += 1

    def preemption(self, preempting_cq: str, reason: str) -> None:
        self.preempted[(preempting_cq, reason)] += 1

    def frames(self) -> dict[str, pd.DataFrame]:
        return {k: (v.astype({"time_s": float}) if "time_s" in v else v) for k, v in self._frames().items()}

    def _frames(self) -> dict[str, pd.DataFrame]:
        return {
            "kueue_pending_workloads": self._pending_frame(),
            "kueue_cluster_queue_resource_reservation": pd.DataFrame(
                self.reservation_rows, columns=["time_s", "cluster_queue", "flavor", "resource", "reserved", "borrowed", "nominal"]),
            "kueue_admission_wait_time_seconds": pd.DataFrame(self.wait_rows, columns=["time_s", "workload", "cluster_queue", "wait_s"]),
            "kueue_evicted_workloads_total": pd.DataFrame(
                [(cq, r, n) for (cq, r), n in sorted(self.evicted.items())], columns=["cluster_queue", "reason", "count"]),
            "kueue_preempted_workloads_total": pd.DataFrame(
                [(cq, r, n) for (cq, r), n in sorted(self.preempted.items())], columns=["preempting_cluster_queue", "reason", "count"]),
        }

    def _pending_frame(self) -> pd.DataFrame:
        """Pending workloads per ClusterQueue; a row whose values an instant's changes brought back is dropped."""
        df = pd.DataFrame(self.pending_rows, columns=["time_s", "cluster_queue", "active", "inadmissible"])
        prev = df.groupby("cluster_queue", sort=False)[["active", "inadmissible"]].shift()
        same = (prev["active"] == df["active"]) & (prev["inadmissible"] == df["inadmissible"])
        return df[~same].reset_index(drop=True)
