"""A scenario: the cluster, the jobs, and the settings of one run.

A scenario is plain data. Built-in ones come from :mod:`gangkit.workloads.scenarios`;
YAML manifests load into the same object through :mod:`gangkit.manifests.load`;
notebooks build one in two lines::

    sc = Scenario(nodes=nodes(4, gpus=1), jobs=[job("A", pods=4), job("B", pods=4)])
    result = simulate(sc, stack="pod")
"""

from __future__ import annotations

import dataclasses
import difflib
import math
from collections.abc import Iterable
from dataclasses import dataclass, field

from gangkit.model.errors import Problem, ScenarioError
from gangkit.model.fast_paths import FastPaths
from gangkit.model.jobs import Job, validate_jobs
from gangkit.model.nodes import Node, validate_nodes
from gangkit.model.snapshot import JobSnapshot

#: The placement layers a stack name may end with (built in :mod:`gangkit.stacks`, as every stack is).
PLACEMENTS = ("pod", "gang", "coscheduling", "yunikorn", "kube-gang")
#: Every layer name a stack name may be made of.
LAYERS = (*PLACEMENTS, "kueue", "provreq", "karpenter", "autoscaler")
#: Stack names that run today: each placement layer alone, behind Kueue, with Karpenter behind it,
#: and with both; plus cluster-autoscaler behind kube-scheduler, alone or with Kueue's ProvisioningRequest check.
STACKS = (
    "pod", "gang", "kueue+pod", "kueue+gang", "gang+karpenter", "kueue+gang+karpenter",
    "kueue+provreq+autoscaler", "pod+autoscaler",
    "coscheduling", "yunikorn", "kube-gang", "kueue+coscheduling", "kueue+yunikorn", "kueue+kube-gang",
    "pod+karpenter", "coscheduling+karpenter", "yunikorn+karpenter", "kube-gang+karpenter",
    "kueue+pod+karpenter", "kueue+coscheduling+karpenter", "kueue+yunikorn+karpenter", "kueue+kube-gang+karpenter",
)
ORDERINGS = ("skip", "strict", "easy-backfill", "conservative-backfill", "volcano-backfill", "largest-first")
SCORINGS = ("LeastAllocated", "MostAllocated", "RequestedToCapacityRatio", "default-profile")
#: the resources a RequestedToCapacityRatio score may weigh (gangkit.engine.ratio)
RATIO_RESOURCES = ("nvidia.com/gpu", "cpu", "memory")
RECORDINGS = ("summary", "jobs", "full")
ENGINES = ("auto", "general")
#: the Kubernetes releases whose GangScheduling the kube-gang layer follows (gangkit.placement.kube_gang)
KUBE_GANG_RELEASES = ("1.35", "1.36")
DAY = 86400.0


def did_you_mean(word: object, choices: Iterable[str]) -> str:
    """``"did you mean gang?"`` for a misspelt name close to one of ``choices`` (difflib's ratio >= 0.6), else ``""``."""
    close = difflib.get_close_matches(str(word), list(choices), n=1)
    return f"did you mean {close[0]}?" if close else ""


def one_of(value: object, choices: Iterable[str]) -> str:
    """The message for a name that is not among ``choices``: every choice, and the closest one if any."""
    choices = list(choices)
    hint = did_you_mean(value, choices)
    return f"expected one of {', '.join(choices)}, got {value!r}" + (f"; {hint}" if hint else "")


def stack_problem(name: object) -> str | None:
    """What is wrong with a stack name, or None when :data:`STACKS` has it.

    The same rule :func:`gangkit.stacks.build_stack` applies, checked with
    the other settings: a scenario file's ``Simulation`` is reported even
    when ``--stack`` overrides its stack. A close name is suggested first
    (``unknown stack 'gnag'; did you mean gang?``), else every stack is listed.
    """
    if not isinstance(name, str):
        return f"expected a stack name (a string), got {name!r}"
    if name in STACKS:
        return None
    layers = name.split("+")
    if all(layer in LAYERS for layer in layers):
        return (f"stack {name!r} combines layers gangkit has ({', '.join(layers)}), but not in this combination; "
                f"available: {', '.join(STACKS)}")
    hint = did_you_mean(name, STACKS)
    return f"unknown stack {name!r}; " + (hint or f"expected one of {', '.join(STACKS)}")


@dataclass(frozen=True)
class RunSettings:
    """How to run a scenario (gangkit's own ``Simulation`` kind in YAML).

    - ``stack``: the layers in order joined by ``+`` (``pod``, ``gang``, ...).
    - ``ordering``: the placement layer's queue discipline: ``skip`` starts
      whatever fits (Volcano's allocate moves on to the next job), ``strict``
      stops at the first job that does not fit (head-of-line blocking; with
      several Volcano queues, each queue stops at its own first such job);
      ``easy-backfill`` and ``conservative-backfill`` plan reservations with
      run-time estimates (one book over all Volcano queues),
      ``volcano-backfill`` adds Volcano's backfill action (best-effort pods
      only), ``largest-first`` takes the biggest gangs of each queue first
      (rules in :mod:`gangkit.volcano.scheduler`).
    - ``estimate_factor``: backfilling plans with estimated run times; a job
      that declares no maximum run time (``activeDeadlineSeconds``) is
      estimated at its true run time times this factor (>= 1; 1 means exact
      estimates). Real schedulers use the users' own estimates, which are
      mostly too long.
    - ``scoring``: how a pod's node is chosen among those with room
      (:mod:`gangkit.engine.capacity`). ``LeastAllocated`` (the default)
      spreads by the mean share left free over every resource the nodes
      model, GPUs included: kube-scheduler's NodeResourcesFit
      ``LeastAllocated`` with ``nvidia.com/gpu`` (and ``cpu``, ``memory``
      where nodes model them) listed in its resources, but for integer
      rounding and the 100m/200 MiB a pod without requests counts as.
      ``MostAllocated`` packs (one minus that mean).
      ``RequestedToCapacityRatio`` scores through ``scoring_shape`` on
      ``scoring_resources`` (:mod:`gangkit.engine.ratio`).
      ``default-profile`` is a stock kube-scheduler 1.35: NodeResourcesFit
      ``LeastAllocated`` on ``scoring_resources`` (default ``cpu`` and
      ``memory``, so GPUs are not scored) plus NodeResourcesBalancedAllocation,
      in kube-scheduler's integer arithmetic, pods without requests counted as
      100m and 200 MiB (:mod:`gangkit.engine.default_profile`). Ties go to
      the first node in the list (kube-scheduler picks one at random).
    - ``preemption``: let the pod-by-pod scheduler evict strictly
      lower-priority pods (kube-scheduler's DefaultPreemption); under the
      ``gang`` layer, run Volcano's preempt and reclaim actions.
    - ``session_period``: seconds between Volcano scheduling sessions
      (Volcano's default is 1 s); a session runs only when something changed.
    - ``horizon``: the run ends here at the latest (simulated seconds).
    - ``record``: ``full`` keeps every event and pod; ``jobs`` keeps jobs and
      the timeline; ``summary`` keeps only the totals (for very large runs).
    - ``stall_window``: a run whose timers still tick (requeue backoffs) but
      in which no job started or finished during this last stretch, while
      jobs wait, is flagged ``stalled``.
    - ``engine``: ``auto`` runs the simplest gang runs (one-pod jobs of one
      shape through the ``gang`` stack alone) through a lean event loop that
      applies the same rules (:mod:`gangkit.engine.lean`) and everything else
      through the general engine; ``general`` always uses the general engine.
      Results are the same either way; only the speed differs. The lean
      engines are one of the run's fast paths (``fast_paths.lean_engine``).
    - ``fast_paths``: which of gangkit's exact shortcuts the run takes
      (:class:`~gangkit.model.fast_paths.FastPaths`; all by default,
      ``FastPaths.none()`` for the plain algorithms). Results are the same.
    - ``kube_gang_release``: the Kubernetes release whose gang scheduling the
      ``kube-gang`` layer follows: ``1.35`` (placed pods wait at Permit, 5
      minutes) or ``1.36`` (the PodGroup scheduling cycle decides for the
      whole group at once; :mod:`gangkit.placement.kube_gang`).
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
    estimate_factor: float = 1.0
    engine: str = "auto"
    fast_paths: FastPaths = FastPaths()
    kube_gang_release: str = "1.35"
    #: NodeResourcesFit's scoringStrategy: RequestedToCapacityRatio's shape, (utilization %, score 0..10) points,
    #: and the (resource, weight) pairs RequestedToCapacityRatio and default-profile score (kube-scheduler's
    #: defaults: cpu and memory, weight 1; gangkit.engine.ratio, gangkit.engine.default_profile)
    scoring_shape: tuple = ((0, 0), (100, 10))
    scoring_resources: tuple = (("cpu", 1), ("memory", 1))

    def problems(self) -> list[Problem]:
        obj = "Simulation settings"
        out = []
        stack = stack_problem(self.stack)
        if stack is not None:
            out.append(Problem(obj, "stack", stack))
        if self.ordering not in ORDERINGS:
            out.append(Problem(obj, "ordering", one_of(self.ordering, ORDERINGS)))
        if self.scoring not in SCORINGS:
            out.append(Problem(obj, "scoring", one_of(self.scoring, SCORINGS)))
        out.extend(self._ratio_problems(obj))
        if self.record not in RECORDINGS:
            out.append(Problem(obj, "record", one_of(self.record, RECORDINGS)))
        if not isinstance(self.session_period, (int, float)) or not self.session_period >= 0:
            out.append(Problem(obj, "session_period", f"expected seconds >= 0, got {self.session_period!r}"))
        if not isinstance(self.horizon, (int, float)) or not (self.horizon > 0) or math.isnan(self.horizon):
            out.append(Problem(obj, "horizon", f"expected seconds > 0, got {self.horizon!r}"))
        f = self.estimate_factor
        if isinstance(f, bool) or not isinstance(f, (int, float)) or not math.isfinite(f) or not f >= 1:
            out.append(Problem(obj, "estimate_factor", f"expected a number >= 1, got {f!r}"))
        if self.engine not in ENGINES:
            out.append(Problem(obj, "engine", one_of(self.engine, ENGINES)))
        if not isinstance(self.fast_paths, FastPaths):
            out.append(Problem(obj, "fast_paths", f"expected a FastPaths value, got {self.fast_paths!r}"))
        else:
            out.extend(Problem(obj, "fast_paths", p) for p in self.fast_paths.problems())
        if self.kube_gang_release not in KUBE_GANG_RELEASES:
            out.append(Problem(obj, "kube_gang_release", one_of(self.kube_gang_release, KUBE_GANG_RELEASES)))
        if not isinstance(self.seed, int) or isinstance(self.seed, bool):
            out.append(Problem(obj, "seed", f"expected a whole number, got {self.seed!r}"))
        return out

    def _ratio_problems(self, obj: str) -> list[Problem]:
        """The shape and resources of RequestedToCapacityRatio, checked as kube-scheduler's validation checks
        them (``pkg/scheduler/apis/config/validation``: 1 to 10 points, utilization 0..100 strictly increasing,
        score 0..10; resources by name once each, weight 1..100)."""
        out = []
        shape = self.scoring_shape
        whole = lambda v, lo, hi: type(v) is int and lo <= v <= hi  # noqa: E731
        if (not isinstance(shape, tuple) or not 1 <= len(shape) <= 10
                or any(not isinstance(p, tuple) or len(p) != 2 or not whole(p[0], 0, 100) or not whole(p[1], 0, 10)
                       for p in shape)
                or any(a[0] >= b[0] for a, b in zip(shape, shape[1:]))):
            out.append(Problem(obj, "scoring_shape", "expected 1 to 10 (utilization, score) points, utilization "
                               f"0..100 strictly increasing, score 0..10, got {shape!r}"))
        res = self.scoring_resources
        if (not isinstance(res, tuple) or not res
                or any(not isinstance(p, tuple) or len(p) != 2 or p[0] not in RATIO_RESOURCES or not whole(p[1], 1, 100)
                       for p in res)
                or len({p[0] for p in res}) != len(res)):
            out.append(Problem(obj, "scoring_resources", f"expected (name, weight) pairs, each of "
                               f"{', '.join(RATIO_RESOURCES)} at most once, weight 1..100, got {res!r}"))
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
    karpenter: object = None  # gangkit.supply.karpenter.Karpenter: NodePools and instance types, for +karpenter stacks
    volcano: object = None  # gangkit.volcano.api.VolcanoSetup: Volcano Queues, for gang stacks
    autoscaler: object = None  # gangkit.supply.autoscaler.ClusterAutoscaler: node groups, for +autoscaler stacks
    admission_check: object = None  # gangkit.kueue.provisioning.AdmissionCheck, for the kueue+provreq stack
    coscheduling: object = None  # gangkit.manifests.companions.CoschedulingArgs: the plugin's arguments, if given
    #: gangkit.supply.provisioning_request.ProvisioningRequestSpec: ProvisioningRequests applied directly (+autoscaler stacks)
    provisioning_requests: list = field(default_factory=list)

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
        if self.volcano is not None:
            try:
                self.volcano.validate(self.jobs)
            except ScenarioError as e:
                problems.extend(e.problems)
        elif any(j.volcano_queue != "default" for j in self.jobs):
            names = sorted({j.volcano_queue for j in self.jobs} - {"default"})
            problems.append(Problem(f"Scenario {self.name}", "volcano",
                                    f"jobs name Volcano Queues {', '.join(map(repr, names))}, but the scenario "
                                    "declares no Volcano queues (set Scenario.volcano to a VolcanoSetup)"))
        if not self.nodes:
            problems.append(Problem(f"Scenario {self.name}", "nodes", "expected at least one Node"))
        seen = set()
        for pr in self.provisioning_requests:
            found = pr.problems() if hasattr(pr, "problems") else [Problem(
                f"Scenario {self.name}", "provisioning_requests", f"expected ProvisioningRequestSpec objects, got {pr!r}")]
            problems.extend(found)
            if not found and pr.key in seen:
                problems.append(Problem(f"ProvisioningRequest {pr.key}", "metadata.name",
                                        "expected a unique name per namespace; it is given twice"))
            seen.add(getattr(pr, "key", None))
        started = [j for j in self.jobs if j.snapshot is not None]
        if started:  # a snapshot's jobs (gangkit.model.snapshot): their pods on nodes of this scenario
            names = {n.name for n in self.nodes}
            for j in started:
                if isinstance(j.snapshot, JobSnapshot):
                    problems.extend(j.snapshot.problems(f"Job {j.key}", j.pod_count, names))
        if problems:
            raise ScenarioError(problems)
