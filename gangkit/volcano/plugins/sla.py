"""Volcano's sla plugin: a job that has waited past its ``sla-waiting-time`` is let in, and goes first.

A job's *waiting time* is the PodGroup's annotation ``sla-waiting-time`` (or
``volcano.sh/sla-waiting-time``; a Volcano Job passes its annotations on to
its PodGroup), else the plugin's own argument ``sla-waiting-time``, else
none. Its *deadline* is the PodGroup's creation plus that time. The plugin
registers three functions (Volcano v1.15.1 ``pkg/scheduler/plugins/sla/sla.go``):

- **JobOrderFn**: jobs with a waiting time come before jobs without one,
  earlier deadline first (whether or not the deadline has passed);
- **JobEnqueueableFn**: Permit once the job has waited its waiting time
  since creation, else Abstain. A Permit in an earlier tier than the
  proportion and overcommit plugins (which refuse a PodGroup whose
  ``minResources`` do not fit) lets the PodGroup go Inqueue regardless;
- **JobPipelinedFn**: the same votes. allocate keeps a trial that left the
  job short of its gang, instead of discarding it, when the session's
  JobPipelined says yes: those pods stay allocated, *unbound*, for the rest
  of the session, so no job after it in that session can take that room.

What the votes decide depends on where the plugin sits in the scheduler's
``tiers`` (``pkg/scheduler/framework/session_plugins.go``): within a tier, a
Reject returns at once, whichever plugin casts it; a Permit is final only at
the end of its tier. Volcano's sla design page
(``docs/design/sla-plugin.md``) places the plugin after ``priority`` and
``gang`` in the first tier. There the gang plugin's JobPipelinedFn, which
says Reject for a gang not yet complete, is asked first, so the partial
allocation the design page describes is never kept; the plugin orders
jobs after priority and gang, and lets late PodGroups in at the enqueue
door. Only a tier of its own *before* the gang plugin's
(:attr:`SlaPlugin.first_tier`) makes its Permit the answer: its order then
comes before priority's, and a late job keeps, session after session, the
room it finds, until its gang is complete.

gangkit's simplifications: a PodGroup is "created" when its job first
reaches the gang layer (a Volcano Job's PodGroup is created at once; after
Kueue's admission for a Kueue-managed job), and keeps that time until the
job ends; the reserving orderings (``easy-backfill``,
``conservative-backfill``, gangkit's own) use the order but keep nothing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from gangkit.engine.state import JobState
from gangkit.model.errors import Problem
from gangkit.model.precision import TOLERANCE

#: the PodGroup annotations the plugin reads, the first found wins (api/job_info.go, SetPodGroup)
ANNOTATIONS = ("volcano.sh/sla-waiting-time", "sla-waiting-time")


@dataclass(frozen=True)
class SlaPlugin:
    """The sla plugin in the scheduler's configuration.

    ``waiting_time`` is its argument ``sla-waiting-time`` in seconds (None:
    only jobs with the annotation have one). ``first_tier``: the plugin is
    in a tier before the one with ``priority`` and ``gang``, so its votes
    decide (see the module doc); False is the placement Volcano's sla design
    page shows.
    """

    waiting_time: float | None = None
    first_tier: bool = False

    def problems(self) -> list[Problem]:
        out = []
        w = self.waiting_time
        if w is not None and (isinstance(w, bool) or not isinstance(w, (int, float)) or not math.isfinite(w) or w <= 0):
            out.append(Problem("Volcano sla plugin", "waiting_time",
                               f"expected seconds > 0 (the plugin's sla-waiting-time; None: none), got {w!r}"))
        if not isinstance(self.first_tier, bool):
            out.append(Problem("Volcano sla plugin", "first_tier",
                               f"expected True or False (whether the plugin is in a tier before gang's), got {self.first_tier!r}"))
        return out

    def waiting_time_of(self, js: JobState) -> float | None:
        """The job's waiting time: its PodGroup's annotation, else the plugin's argument."""
        own = js.spec.sla_waiting_time
        return own if own is not None else self.waiting_time

    def order_key(self, js: JobState, created: float) -> tuple:
        """JobOrderFn as a sort key: jobs with a waiting time first, by deadline."""
        w = self.waiting_time_of(js)
        return (1, 0.0) if w is None else (0, created + w)

    def permits(self, js: JobState, created: float, now: float) -> bool:
        """JobEnqueueableFn and JobPipelinedFn: Permit once the job has waited its waiting time."""
        w = self.waiting_time_of(js)
        return w is not None and now - created >= w - TOLERANCE

    def deadline(self, js: JobState, created: float) -> float | None:
        w = self.waiting_time_of(js)
        return None if w is None else created + w
