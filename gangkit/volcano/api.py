"""Volcano's objects as plain data: Queues, the scenario's Volcano setup, and a job's PodGroup minimum.

A Volcano **Queue** (``scheduling.volcano.sh/v1beta1``) is a team's slice of
the cluster: a *weight* (how big a slice of the free room it gets), a
*capability* (a hard cap), a *guarantee* (room kept for it whoever else asks)
and a *priority* among queues. How the slices are computed is the proportion
plugin's business (:mod:`gangkit.volcano.plugins.proportion`); this module
holds only what the objects say.

Every Volcano cluster has a queue named ``default`` (weight 1, reclaimable);
gangkit adds it when the input declares none of that name.

A job's **PodGroup** carries ``minMember`` (the gang size, on the job) and
``minResources``: given in the PodGroup, or computed by the Volcano Job
controller from the job's tasks (:func:`job_min_resources`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from gangkit.model.errors import Problem, ScenarioError
from gangkit.model.jobs import Job
from gangkit.model.resources import ZERO, Resources, pod_resources
from gangkit.volcano.plugins.sla import SlaPlugin

DEFAULT_QUEUE = "default"
DEFAULT_OVERCOMMIT_FACTOR = 1.2  # Volcano overcommit plugin's default ``overcommit-factor``


@dataclass(frozen=True)
class Queue:
    """One Volcano Queue: ``weight``, ``capability`` (None: unlimited), ``guarantee``, ``priority``.

    ``deserved`` is the Queue's ``spec.deserved``, read by Volcano's capacity
    plugin, which gangkit does not model; kept only to report it.
    ``reclaimable: False`` protects the queue's jobs from reclaim.
    """

    name: str
    weight: int = 1
    capability: Resources | None = None
    guarantee: Resources = ZERO
    deserved: Resources | None = None
    priority: int = 0
    reclaimable: bool = True

    def problems(self) -> list[Problem]:
        obj = f"Queue {self.name}"
        out = []
        if not self.name:
            out.append(Problem("Queue", "metadata.name", "expected a non-empty name"))
        if isinstance(self.weight, bool) or not isinstance(self.weight, int) or not 1 <= self.weight <= 65535:
            out.append(Problem(obj, "spec.weight", f"expected a whole number from 1 to 65535, got {self.weight!r}"))
        for name, value in (("capability", self.capability), ("guarantee.resource", self.guarantee)):
            if value is not None and any(a < 0 for a in value):
                out.append(Problem(obj, f"spec.{name}", f"expected amounts >= 0, got {value}"))
        limit = self.limit()
        if limit is not None and not self.guarantee.fits_in(limit, ("gpus", "cpu", "memory")):
            out.append(Problem(obj, "spec.guarantee.resource",
                               f"expected at most the capability ({self.capability.short()}), got {self.guarantee.short()}"))
        return out

    def limit(self) -> Resources | None:
        """The capability as the proportion plugin applies it (None: no capability).

        Volcano's OnSessionOpen treats a capability whose ``cpu`` or
        ``memory`` is zero (or left out) as unlimited in that resource; a GPU
        amount is taken as written, so ``nvidia.com/gpu: 0`` allows no GPU
        (in Python, write ``math.inf`` for GPUs without a cap).
        """
        if self.capability is None:
            return None
        c = self.capability
        return Resources(c.gpus, c.cpu if c.cpu > 0 else math.inf, c.memory if c.memory > 0 else math.inf)


@dataclass
class VolcanoSetup:
    """The Volcano objects of a scenario that are not jobs: queues, and two settings of the scheduler's configuration.

    ``overcommit_factor`` is the overcommit plugin's ``overcommit-factor``.
    ``enqueue`` says whether the configuration's ``actions`` list has
    ``enqueue`` (Volcano's default, ``"enqueue, allocate, backfill"``). Without
    it, the allocate action moves every Pending PodGroup to Inqueue at once,
    with no proportion or overcommit check at the door (Volcano
    ``pkg/scheduler/actions/allocate/allocate.go``, ``buildAllocateContext``,
    since v1.7): a Volcano Job then gets its pods at once, which is how
    Volcano is run in front of a node provisioner on a cluster that scales
    to zero.

    ``overcommit``: the configuration's tiers list the overcommit plugin (as
    Volcano's default does); without it the enqueue action does not compare
    a PodGroup's minimum with the cluster's idle room at all.

    ``sla``: the sla plugin, when the configuration's ``tiers`` list it
    (:class:`~gangkit.volcano.plugins.sla.SlaPlugin`; None: not configured,
    as in Volcano's default configuration, and jobs' ``sla-waiting-time``
    annotations do nothing).
    """

    queues: list[Queue] = field(default_factory=list)
    overcommit_factor: float = DEFAULT_OVERCOMMIT_FACTOR
    enqueue: bool = True
    sla: SlaPlugin | None = None
    overcommit: bool = True

    def all_queues(self) -> dict[str, Queue]:
        """Queues by name, with Volcano's ``default`` queue added when not declared."""
        out = {q.name: q for q in self.queues}
        out.setdefault(DEFAULT_QUEUE, Queue(DEFAULT_QUEUE))
        return dict(sorted(out.items()))

    def validate(self, jobs=()) -> None:
        """One :class:`ScenarioError` with every problem (a job naming an unknown queue is one).

        Volcano's admission webhook refuses a Job or PodGroup whose queue does
        not exist; gangkit refuses the scenario.
        """
        problems: list[Problem] = []
        seen = set()
        for q in self.queues:
            problems.extend(q.problems())
            if q.name in seen:
                problems.append(Problem(f"Queue {q.name}", "metadata.name", "expected a unique name; another Queue has it"))
            seen.add(q.name)
        if not isinstance(self.overcommit_factor, (int, float)) or not self.overcommit_factor >= 1.0:
            problems.append(Problem("Volcano setup", "overcommit_factor",
                                    f"expected a number >= 1.0 (Volcano's overcommit-factor), got {self.overcommit_factor!r}"))
        if not isinstance(self.overcommit, bool):
            problems.append(Problem("Volcano setup", "overcommit",
                                    f"expected True or False (whether the tiers list the overcommit plugin), got {self.overcommit!r}"))
        if not isinstance(self.enqueue, bool):
            problems.append(Problem("Volcano setup", "enqueue",
                                    f"expected True or False (whether the scheduler's actions include enqueue), got {self.enqueue!r}"))
        if self.sla is not None:
            if isinstance(self.sla, SlaPlugin):
                problems.extend(self.sla.problems())
            else:
                problems.append(Problem("Volcano setup", "sla", f"expected a SlaPlugin (or None), got {self.sla!r}"))
        names = set(self.all_queues())
        for j in jobs:
            if j.volcano_queue not in names:
                problems.append(Problem(f"Job {j.key}", "volcano_queue",
                                        f"names Volcano Queue {j.volcano_queue!r}, which does not exist "
                                        f"(queues: {', '.join(sorted(names))})"))
        if problems:
            raise ScenarioError(problems)

    @property
    def trivial(self) -> bool:
        """One queue without capability or guarantee: proportion can refuse nothing the nodes could hold."""
        qs = self.all_queues()
        return len(qs) == 1 and all(q.capability is None and q.guarantee.is_empty() for q in qs.values())


def job_min_resources(spec: Job) -> Resources | None:
    """The PodGroup's ``minResources``: as given, else computed for a Volcano Job, else None.

    A Volcano Job's controller (``calcPGMinResources``) sums the requests of
    the pods that make up the minimum: each task's ``minAvailable`` first,
    then further pods in task order up to the job's ``minAvailable``; when
    the job's ``minAvailable`` is below the sum of the tasks', the first
    ``minAvailable`` pods in task order. (Tasks are ordered by their
    priority class; gangkit has one priority per job, so task order stays.)
    """
    if spec.min_resources is not None or spec.controller != "volcano":
        return spec.min_resources
    need = spec.gang_size
    per_task = [(ps, ps.count if ps.min_member is None else ps.min_member) for ps in spec.pod_sets]
    total = ZERO
    if need < sum(m for _, m in per_task):
        for ps in spec.pod_sets:
            take = min(ps.count, need)
            total = total + pod_resources(ps) * take
            need -= take
        return total
    for ps, m in per_task:
        total = total + pod_resources(ps) * m
        need -= m
    for ps, m in per_task:
        take = min(ps.count - m, need)
        if take > 0:
            total = total + pod_resources(ps) * take
            need -= take
    return total
