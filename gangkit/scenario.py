"""A scenario: the cluster, the jobs, and the settings of one run.

A scenario is plain data. Built-in ones come from :mod:`gangkit.scenarios`;
YAML manifests load into the same object through :mod:`gangkit.manifests`;
notebooks build one in two lines::

    sc = Scenario(nodes=nodes(4, gpus=1), jobs=[job("A", pods=4), job("B", pods=4)])
    result = simulate(sc, stack="pod")
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field

from .cluster import Node, validate_nodes
from .errors import Problem, ScenarioError
from .workload import Job, validate_jobs

ORDERINGS = ("skip", "strict")
SCORINGS = ("LeastAllocated", "MostAllocated")
RECORDINGS = ("summary", "jobs", "full")
DAY = 86400.0


@dataclass(frozen=True)
class RunSettings:
    """How to run a scenario (gangkit's own ``Simulation`` kind in YAML).

    - ``stack``: the layers in order joined by ``+`` (``pod``, ``gang``, ...).
    - ``ordering``: the placement layer's queue discipline: ``skip`` starts
      whatever fits (Volcano's allocate moves on to the next job), ``strict``
      stops at the first job that does not fit (head-of-line blocking).
    - ``scoring``: kube-scheduler's NodeResourcesFit strategy for choosing
      among nodes with room: ``LeastAllocated`` (spread, the default) or
      ``MostAllocated`` (pack).
    - ``preemption``: let the pod-by-pod scheduler evict strictly
      lower-priority pods (kube-scheduler's DefaultPreemption).
    - ``session_period``: seconds between Volcano scheduling sessions
      (Volcano's default is 1 s); a session runs only when something changed.
    - ``horizon``: the run ends here at the latest (simulated seconds).
    - ``record``: ``full`` keeps every event and pod; ``jobs`` keeps jobs and
      the timeline; ``summary`` keeps only the totals (for very large runs).
    - ``stall_window``: a run whose timers still tick (requeue backoffs) but
      in which no job started or finished during this last stretch, while
      jobs wait, is flagged ``stalled``.
    """

    stack: str = "gang"
    ordering: str = "skip"
    scoring: str = "LeastAllocated"
    preemption: bool = False
    session_period: float = 1.0
    seed: int = 0
    horizon: float = 30 * DAY
    record: str = "full"
    stall_window: float = DAY

    def problems(self) -> list[Problem]:
        obj = "Simulation settings"
        out = []
        if self.ordering not in ORDERINGS:
            out.append(Problem(obj, "ordering", f"expected one of {', '.join(ORDERINGS)}, got {self.ordering!r}"))
        if self.scoring not in SCORINGS:
            out.append(Problem(obj, "scoring", f"expected one of {', '.join(SCORINGS)}, got {self.scoring!r}"))
        if self.record not in RECORDINGS:
            out.append(Problem(obj, "record", f"expected one of {', '.join(RECORDINGS)}, got {self.record!r}"))
        if not isinstance(self.session_period, (int, float)) or not self.session_period >= 0:
            out.append(Problem(obj, "session_period", f"expected seconds >= 0, got {self.session_period!r}"))
        if not isinstance(self.horizon, (int, float)) or not (self.horizon > 0) or math.isnan(self.horizon):
            out.append(Problem(obj, "horizon", f"expected seconds > 0, got {self.horizon!r}"))
        if not isinstance(self.seed, int) or isinstance(self.seed, bool):
            out.append(Problem(obj, "seed", f"expected a whole number, got {self.seed!r}"))
        return out


@dataclass
class Scenario:
    """Nodes, jobs and run settings: everything one simulation needs."""

    nodes: list[Node]
    jobs: list[Job]
    settings: RunSettings = field(default_factory=RunSettings)
    name: str = "scenario"
    description: str = ""
    warnings: list[str] = field(default_factory=list)
    kueue: object = None  # gangkit.kueue.KueueSetup: the Kueue objects, for kueue+ stacks
    karpenter: object = None  # gangkit.karpenter.Karpenter: NodePools and instance types, for +karpenter stacks
    autoscaler: object = None  # gangkit.autoscaler.ClusterAutoscaler: node groups, for +autoscaler stacks
    admission_check: object = None  # gangkit.kueue.provisioning.AdmissionCheck, for the kueue+provreq stack

    def with_settings(self, **changes) -> "Scenario":
        """A copy with some run settings changed (``None`` values are ignored)."""
        changes = {k: v for k, v in changes.items() if v is not None}
        return dataclasses.replace(self, settings=dataclasses.replace(self.settings, **changes))

    def validate(self) -> None:
        """Raise one :class:`ScenarioError` listing every problem found."""
        problems: list[Problem] = []
        for part in (lambda: validate_nodes(self.nodes), lambda: validate_jobs(self.jobs)):
            try:
                part()
            except ScenarioError as e:
                problems.extend(e.problems)
        problems.extend(self.settings.problems())
        if not self.nodes:
            problems.append(Problem(f"Scenario {self.name}", "nodes", "expected at least one Node"))
        if problems:
            raise ScenarioError(problems)
