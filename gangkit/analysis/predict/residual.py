"""Residual life: how much longer a job that has already run ``a`` seconds will run, drawn at random.

A dump shows that a pod runs and since when, never how long it will still run. Knowing only the run
times of many past jobs (a quantile table), the honest guess for a job that has run ``a`` seconds is a
run time from that distribution *given that it is longer than* ``a``: a job that has run 5 hours is no
longer a candidate for a 10-minute run. With ``F`` the table's CDF, draw ``u`` uniform on ``[F(a), 1)``
and take ``T = F^-1(u)`` (the inverse CDF); ``T - a`` is the time left. The table is a
:class:`gangkit.workloads.run_times.Empirical` (its CDF a straight line between two rows): by default
the 101 quantiles of 83,154 job run times of Microsoft's Philly cluster the package ships
(``gangkit/data/philly_runtime_quantiles.csv``, made by ``tools/make_runtime_quantiles.py``).

Past the table's last value (the longest run time it knows) ``F(a) = 1`` and there is nothing left to
condition on: the time left is then exponential (memoryless: no age tells more), with the mean time
left in the table's last step, half its width.

What ``a`` is depends on how a job progresses (as the engine resumes it): a sync job (training, every
pod needed) has progressed since its *last* pod started; an independent job since its earliest pod
started, so that every pod's time left is > 0.
"""

from __future__ import annotations

import os
import random
from bisect import bisect_right
from dataclasses import dataclass
from pathlib import Path

from gangkit.model.errors import Problem, ScenarioError
from gangkit.model.quantity import MAX_DURATION_S
from gangkit.workloads.run_times import Empirical, philly_runtime

#: a pod's run time at or beyond this serves until the horizon (a Deployment's, a StatefulSet's pods): never drawn
SERVES = 1e9


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


def job_age(job) -> float:
    """How long a job of the snapshot has progressed: a sync job since its last pod started (0 unless every pod is
    bound), an independent job since its earliest pod started; 0 for a job that waits or is new."""
    snap = job.snapshot
    if snap is None or not snap.elapsed or not snap.bound:
        return 0.0
    if job.progress == "sync":
        return min(snap.elapsed) if snap.bound == len(snap.nodes) else 0.0
    return max(snap.elapsed)


def draw_run_times(jobs: list, sampled: list[int], life: ResidualLife, seed: int, index: int) -> list[float]:
    """Sample ``index``'s run times for the jobs at positions ``sampled``, from a generator seeded by
    ``(seed, index)`` alone: a sample's draws do not depend on how many samples or workers there are."""
    rng = random.Random(f"gangkit-predict/{seed}/{index}")
    return [round(life.total(job_age(jobs[k]), rng), 3) for k in sampled]
