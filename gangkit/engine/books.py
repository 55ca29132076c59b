"""The books of a run: what every GPU was doing, second by second, and the timeline of it.

Picture a car park's ledger. At every instant each space is exactly one of:
*useful* (a car that is being driven from it: a progressing pod's GPU),
*held idle* (a car parked and going nowhere: a GPU bound to a job that cannot
progress, a pod waiting at Permit, a placeholder), *free*, or *not ready* (a
space still being painted: a node that is booting). So, at every instant::

    useful + held_idle + free + not_ready = capacity

:class:`Books` keeps the running counts and, at every change, adds the time
since the last change times each count to its integral (GPU-seconds), so the
figures of a run are exact sums, never samples. The ``timeline`` gets a row
whenever the counts change (not at the ``summary`` recording level, which keeps
only the integrals). :class:`PendingSamples` counts unschedulable pods and jobs
after each cycle, for the placement layer's metric (``full`` level only).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from gangkit.engine.state import JobState


class Books:
    """Running GPU and job counts, their integrals over time, and the timeline rows."""

    def __init__(self, record: str):
        self.record = record
        self.capacity_gpus = 0
        self.not_ready_gpus = 0
        self.bound_gpus = 0
        self.useful_gpus = 0
        self.running_jobs = 0
        self.waiting_jobs = 0
        self.last_t = 0.0
        self.integrals = dict(capacity=0.0, useful=0.0, held_idle=0.0, free=0.0, not_ready=0.0)  # GPU-seconds
        self.timeline: list[tuple] = []

    def advance(self, now: float) -> None:
        """Add the time since the last change times each GPU count to its integral (the utilization
        figures of the summary; the jobs' counts are read from the timeline, not integrated here).

        The lean engine's loop repeats these lines inline, with the same float
        operations in the same order (benchmark case a needs it).
        """
        dt = now - self.last_t
        if dt <= 0:
            return
        held = self.bound_gpus - self.useful_gpus
        free = self.capacity_gpus - self.not_ready_gpus - self.bound_gpus
        integrals = self.integrals
        integrals["capacity"] += self.capacity_gpus * dt
        integrals["useful"] += self.useful_gpus * dt
        integrals["held_idle"] += held * dt
        integrals["free"] += free * dt
        integrals["not_ready"] += self.not_ready_gpus * dt
        self.last_t = now

    def snapshot(self, now: float, force: bool = False) -> None:
        """Add a timeline row when the counts changed (a row holds until the next one).

        Rows at one instant replace each other; ``force`` adds the run's last
        instant even when nothing changed. The lean engine repeats these lines
        inline (benchmark case a).
        """
        if self.record == "summary" and not force:
            return
        row = (now, self.capacity_gpus, self.useful_gpus, self.bound_gpus - self.useful_gpus,
               self.capacity_gpus - self.not_ready_gpus - self.bound_gpus, self.not_ready_gpus,
               self.running_jobs, self.waiting_jobs)
        tl = self.timeline
        if tl and tl[-1][0] == now:
            tl[-1] = row
        elif force or not tl or tl[-1][1:] != row[1:]:
            tl.append(row)

    def gpus(self) -> dict[str, int]:
        """The GPU split right now: capacity = useful + held idle + free + not ready."""
        return {
            "capacity": self.capacity_gpus, "useful": self.useful_gpus,
            "held_idle": self.bound_gpus - self.useful_gpus,
            "free": self.capacity_gpus - self.not_ready_gpus - self.bound_gpus, "not_ready": self.not_ready_gpus,
        }

    @staticmethod
    def charge_bound(js: "JobState", delta: int, now: float) -> None:
        """A job's GPUs bound change by ``delta`` now: count the stretch before at the old number."""
        js.bound_gpu_seconds += js.bound_gpus * (now - js.bound_since)
        js.bound_gpus += delta
        js.bound_since = now


class PendingSamples:
    """Counts of unschedulable pods and jobs after each scheduling cycle (a row per change)."""

    def __init__(self):
        self.rows: list[tuple] = []

    def sample(self, now: float, pods: list) -> None:
        jobs = len({p.job.index for p in pods})
        row = (float(now), len(pods), jobs)
        if self.rows and self.rows[-1][1:] == row[1:]:
            return
        if self.rows and self.rows[-1][0] == row[0]:
            self.rows[-1] = row
        else:
            self.rows.append(row)
