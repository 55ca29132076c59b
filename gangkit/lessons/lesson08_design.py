"""Lesson 08's design: the learner's configuration of the whole stack, checked, and turned into a run.

A :class:`Design` names the ClusterQueues (each a :class:`QueueDesign`: GPU quota, borrowing and
lending limits, preemption policies, queueing strategy), which tenant's LocalQueue points to which,
the cohort, the tenants' priorities, the placement layer and its node scoring, and a Karpenter NodePool.
:meth:`Design.problems` lists everything wrong with it at once, with Kueue's own rule where Kueue's
webhook has one (a limit without a cohort, a lending limit above the nominal quota,
``reclaimWithinCohort: Never`` with ``borrowWithinCohort``); :meth:`Design.scenario` builds the run on
the capstone's workload (:mod:`gangkit.lessons.lesson08_workload`). Kueue semantics are gangkit's model
of Kueue v0.19 (``gangkit.kueue``).
"""

from __future__ import annotations

import dataclasses
import math
import re
from dataclasses import dataclass, field

from gangkit.kueue.objects import (
    BORROW_POLICIES,
    GPU,
    QUEUEING_STRATEGIES,
    RECLAIM_POLICIES,
    WITHIN_CQ_POLICIES,
    ClusterQueue,
    FlavorQuotas,
    KueueConfig,
    KueueSetup,
    LocalQueue,
    Preemption,
    Quota,
    ResourceFlavor,
    ResourceGroup,
)
from gangkit.lessons.lesson08_workload import TENANTS, CapstoneWorkload, default_workload
from gangkit.model.errors import Problem, ScenarioError
from gangkit.model.scenario import ORDERINGS, Scenario
from gangkit.stacks import PLACEMENTS
from gangkit.supply.cloud import InstanceType
from gangkit.supply.karpenter import Karpenter, NodePool

__all__ = ["COHORT", "FLAVOR", "G3", "SCORINGS", "Design", "QueueDesign"]

#: The ResourceFlavor of every node (all are G3), and the machine type Karpenter launches.
FLAVOR = "g3"
G3 = InstanceType("G3", 8, 8.0, cpu=128.0, memory=786432 * 2**20)  # price: 1 unit per GPU-hour (an assumption)
#: The cohort a design's ClusterQueues join unless it says otherwise.
COHORT = "capstone"
_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")  # a DNS-1123 label: Kueue object names

#: the two node scorings the capstone offers (spreading, packing): gangkit.model.scenario.SCORINGS has a third
SCORINGS = ("LeastAllocated", "MostAllocated")


@dataclass
class QueueDesign:
    """One ClusterQueue of a design: its ``nvidia.com/gpu`` quota and its preemption policies.

    ``nominal``, ``borrowing_limit`` and ``lending_limit`` are Kueue's
    ``nominalQuota``, ``borrowingLimit`` and ``lendingLimit`` of GPUs (``None``:
    no limit); ``reclaim_within_cohort``, ``within_cluster_queue`` and
    ``borrow_within_cohort`` its ``spec.preemption`` policies
    (``reclaimWithinCohort``: Never, LowerPriority, Any;
    ``withinClusterQueue``: Never, LowerPriority, LowerOrNewerEqualPriority;
    ``borrowWithinCohort.policy``: Never, LowerPriority), and
    ``queueing_strategy`` its ``queueingStrategy``. Kueue's defaults throughout.
    """

    nominal: int
    borrowing_limit: int | None = None
    lending_limit: int | None = None
    reclaim_within_cohort: str = "Never"
    within_cluster_queue: str = "Never"
    borrow_within_cohort: str = "Never"
    queueing_strategy: str = "BestEffortFIFO"


@dataclass
class Design:
    """The learner's configuration of the whole stack; :meth:`scenario` and :meth:`stack` turn it into a run.

    - ``queues``: ClusterQueue name -> :class:`QueueDesign`; empty: no Kueue at all.
    - ``tenant_queues``: tenant -> the ClusterQueue its LocalQueue points to
      (default: the ClusterQueue named after the tenant). Several tenants
      may share one ClusterQueue.
    - ``cohort``: the cohort every ClusterQueue joins (``None``: none; then
      no ClusterQueue may borrow or lend, and limits are refused, as Kueue's
      webhook refuses them).
    - ``priorities``: tenant -> the value of the WorkloadPriorityClass its jobs
      carry (default 0); Kueue's preemption and the gang layer's order read it.
    - ``placement``: the layer that places pods (``pod``: kube-scheduler pod
      by pod; ``gang``: Volcano; ``coscheduling``, ``yunikorn``,
      ``kube-gang``); ``ordering``: Volcano's job order (``gang`` only).
    - ``scoring``: how a pod's node is chosen among those with room
      (kube-scheduler's NodeResourcesFit ``LeastAllocated``, which spreads,
      or ``MostAllocated``, which packs; gangkit applies it to every
      placement layer).
    - ``pool_limit``: the ``nvidia.com/gpu`` limit of a Karpenter NodePool of
      G3 nodes (0: no NodePool, the static nodes only);
      ``consolidate_after``: seconds a Karpenter node stays empty before it
      is removed (the NodePool's ``consolidateAfter``; Karpenter's default
      0 s). A new node's stages are gangkit's default assumptions
      (:class:`gangkit.Stages`: ready 150 s after launch).
    - ``wait_for_pods_ready``, ``pods_ready_timeout``: Kueue's
      ``waitForPodsReady`` (on, 1800 s by default in Kueue v0.19).

    The stack is ``kueue+`` (when there are ClusterQueues), the placement,
    and ``+karpenter`` (when there is a NodePool): :meth:`stack`.
    """

    queues: dict[str, QueueDesign] = field(default_factory=dict)
    tenant_queues: dict[str, str] = field(default_factory=dict)
    cohort: str | None = COHORT
    priorities: dict[str, int] = field(default_factory=dict)
    placement: str = "gang"
    ordering: str = "skip"
    scoring: str = "LeastAllocated"
    pool_limit: int = 0
    consolidate_after: float = 0.0
    wait_for_pods_ready: bool = True
    pods_ready_timeout: float = 1800.0
    name: str = "design"

    # ---------------------------------------------------------------- checks
    def queue_of(self, tenant: str) -> str | None:
        """The ClusterQueue ``tenant``'s LocalQueue points to (``None`` without Kueue)."""
        if not self.queues:
            return None
        return self.tenant_queues.get(tenant, tenant)

    def problems(self) -> list[Problem]:
        """Everything wrong with the design, one :class:`Problem` each (empty: valid)."""
        obj = f"Design {self.name}"
        out: list[Problem] = []

        def bad(where: str, message: str) -> None:
            out.append(Problem(obj, where, message))

        if not isinstance(self.queues, dict):
            bad("queues", f"expected a dict of ClusterQueue name -> QueueDesign, got {type(self.queues).__name__}")
            return out
        if self.cohort is not None and not (isinstance(self.cohort, str) and _NAME.match(self.cohort)):
            bad("cohort", f"expected None or a lowercase name (letters, digits, '-'), got {self.cohort!r}")
        for name, q in self.queues.items():
            where = f"queues[{name!r}]"
            if not (isinstance(name, str) and _NAME.match(name)):
                bad("queues", f"expected ClusterQueue names in lowercase letters, digits and '-', got {name!r}")
            if not isinstance(q, QueueDesign):
                bad(where, f"expected a QueueDesign, got {type(q).__name__}")
                continue
            out.extend(Problem(obj, f"{where}.{f}", m) for f, m in _queue_problems(q, self.cohort))
        if not self.queues and self.tenant_queues:
            bad("tenant_queues", "expected no tenant_queues without ClusterQueues (queues is empty: no Kueue)")
        if isinstance(self.tenant_queues, dict):
            for tenant, cq in self.tenant_queues.items():
                if tenant not in TENANTS:
                    bad("tenant_queues", f"expected tenants among {', '.join(TENANTS)}, got {tenant!r}")
                elif self.queues and cq not in self.queues:
                    bad(f"tenant_queues[{tenant!r}]", f"names ClusterQueue {cq!r}, which is not in queues "
                        f"({', '.join(self.queues)}): its workloads would stay pending")
            if self.queues:
                for tenant in TENANTS:
                    if tenant not in self.tenant_queues and tenant not in self.queues:
                        bad("tenant_queues", f"tenant {tenant!r} has no ClusterQueue: name one in tenant_queues or "
                            f"add a queue named {tenant!r}")
        else:
            bad("tenant_queues", f"expected a dict of tenant -> ClusterQueue name, got {type(self.tenant_queues).__name__}")
        if isinstance(self.priorities, dict):
            for tenant, value in self.priorities.items():
                if tenant not in TENANTS:
                    bad("priorities", f"expected tenants among {', '.join(TENANTS)}, got {tenant!r}")
                elif isinstance(value, bool) or not isinstance(value, int):
                    bad(f"priorities[{tenant!r}]", f"expected a whole number (a WorkloadPriorityClass value), got {value!r}")
        else:
            bad("priorities", f"expected a dict of tenant -> whole number, got {type(self.priorities).__name__}")
        if self.placement not in PLACEMENTS:
            bad("placement", f"expected one of {', '.join(PLACEMENTS)}, got {self.placement!r}")
        if self.ordering not in ORDERINGS:
            bad("ordering", f"expected one of {', '.join(ORDERINGS)}, got {self.ordering!r}")
        elif self.ordering != "skip" and self.placement != "gang":
            bad("ordering", f"Volcano's job orders apply to placement 'gang' only; placement {self.placement!r} "
                "needs ordering 'skip'")
        if self.scoring not in SCORINGS:
            bad("scoring", f"expected one of {', '.join(SCORINGS)}, got {self.scoring!r}")
        if isinstance(self.pool_limit, bool) or not isinstance(self.pool_limit, int) or self.pool_limit < 0:
            bad("pool_limit", f"expected a whole number of GPUs >= 0 (0: no NodePool), got {self.pool_limit!r}")
        if not _seconds(self.consolidate_after, allow_zero=True):
            bad("consolidate_after", f"expected seconds >= 0, got {self.consolidate_after!r}")
        if not isinstance(self.wait_for_pods_ready, bool):
            bad("wait_for_pods_ready", f"expected True or False, got {self.wait_for_pods_ready!r}")
        if not _seconds(self.pods_ready_timeout, allow_zero=False):
            bad("pods_ready_timeout", f"expected seconds > 0, got {self.pods_ready_timeout!r}")
        return out

    def validate(self) -> "Design":
        """Raise one :class:`gangkit.ScenarioError` listing every problem; return the design when valid."""
        problems = self.problems()
        if problems:
            raise ScenarioError(problems)
        return self

    # ---------------------------------------------------------------- building the run
    def stack(self) -> str:
        """The stack name: ``kueue+`` when there are ClusterQueues, the placement, ``+karpenter`` with a NodePool."""
        self.validate()
        return f"{'kueue+' if self.queues else ''}{self.placement}{'+karpenter' if self.pool_limit else ''}"

    def kueue_setup(self, workload: CapstoneWorkload | None = None) -> KueueSetup | None:
        """The Kueue objects: one ResourceFlavor ``g3``, the ClusterQueues, one LocalQueue per tenant (None without queues)."""
        self.validate()
        if not self.queues:
            return None
        workload = workload or default_workload()
        most_gpus = sum(n.gpus for n in workload.nodes) + self.pool_limit
        cpu_milli = int(most_gpus * G3.cpu / G3.gpus * 1000)
        memory = int(most_gpus * G3.memory // G3.gpus)
        cqs = []
        for name, q in self.queues.items():
            quotas = {GPU: Quota(q.nominal, q.borrowing_limit, q.lending_limit),
                      "cpu": Quota(cpu_milli), "memory": Quota(memory)}
            cqs.append(ClusterQueue(
                name, [ResourceGroup((GPU, "cpu", "memory"), (FlavorQuotas(FLAVOR, quotas),))], cohort=self.cohort,
                queueing_strategy=q.queueing_strategy,
                preemption=Preemption(within_cluster_queue=q.within_cluster_queue,
                                      reclaim_within_cohort=q.reclaim_within_cohort,
                                      borrow_within_cohort=q.borrow_within_cohort)))
        lqs = [LocalQueue(t, t, self.queue_of(t)) for t in TENANTS]
        config = KueueConfig(wait_for_pods_ready=self.wait_for_pods_ready, pods_ready_timeout=float(self.pods_ready_timeout))
        return KueueSetup([ResourceFlavor(FLAVOR)], cqs, lqs, config=config)

    def karpenter(self) -> Karpenter | None:
        """A Karpenter with one NodePool ``g3`` of G3 nodes up to ``pool_limit`` GPUs (None without a limit)."""
        self.validate()
        if not self.pool_limit:
            return None
        pool = NodePool(FLAVOR, [G3.name], limits={GPU: self.pool_limit}, consolidate_after=float(self.consolidate_after))
        return Karpenter([pool], [G3])

    def scenario(self, workload: CapstoneWorkload | None = None) -> Scenario:
        """The gangkit Scenario of this design on ``workload`` (default: :func:`capstone_workload`)."""
        self.validate()
        workload = workload or default_workload()
        jobs = [dataclasses.replace(j, priority=self.priorities.get(j.namespace, 0)) if self.priorities.get(j.namespace)
                else j for j in workload.jobs]
        sc = Scenario(list(workload.nodes), jobs, kueue=self.kueue_setup(workload), karpenter=self.karpenter(),
                      name=f"capstone, {self.name}", description=f"{workload.description}; design {self.name}")
        return sc.with_settings(stack=self.stack(), ordering=self.ordering, scoring=self.scoring,
                                horizon=workload.horizon_s, record="jobs")


def _seconds(value, *, allow_zero: bool) -> bool:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    return ok and (value >= 0 if allow_zero else value > 0)


def _limit_ok(value) -> bool:
    return value is None or (isinstance(value, int) and not isinstance(value, bool) and value >= 0)


def _queue_problems(q: QueueDesign, cohort: str | None) -> list[tuple[str, str]]:
    """(field, message) for each thing wrong with one ClusterQueue, with Kueue's own rule where it has one."""
    out = []
    if isinstance(q.nominal, bool) or not isinstance(q.nominal, int) or q.nominal < 0:
        out.append(("nominal", f"expected a whole number of GPUs >= 0, got {q.nominal!r}"))
    for f in ("borrowing_limit", "lending_limit"):
        v = getattr(q, f)
        if not _limit_ok(v):
            out.append((f, f"expected None (no limit) or a whole number of GPUs >= 0, got {v!r}"))
        elif v is not None and cohort is None:
            out.append((f, "must be None when cohort is None (Kueue: a limit must be nil when the cohort is empty)"))
    if (_limit_ok(q.lending_limit) and q.lending_limit is not None and isinstance(q.nominal, int)
            and q.lending_limit > q.nominal):
        out.append(("lending_limit", f"must be less than or equal to the nominal quota ({q.lending_limit} > {q.nominal})"))
    for f, allowed in (("reclaim_within_cohort", RECLAIM_POLICIES), ("within_cluster_queue", WITHIN_CQ_POLICIES),
                       ("borrow_within_cohort", BORROW_POLICIES), ("queueing_strategy", QUEUEING_STRATEGIES)):
        v = getattr(q, f)
        if v not in allowed:
            out.append((f, f"expected one of {', '.join(allowed)}, got {v!r}"))
    if q.reclaim_within_cohort == "Never" and q.borrow_within_cohort not in ("Never",) and q.borrow_within_cohort in BORROW_POLICIES:
        out.append(("borrow_within_cohort", "needs reclaim_within_cohort other than Never (Kueue refuses "
                    "reclaimWithinCohort=Never with borrowWithinCohort.policy!=Never)"))
    return out

