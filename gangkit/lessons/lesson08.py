"""Lesson 08, the capstone: three tenants of a real GPU cluster, their goals, and a layered design that meets them.

Picture the platform team of a shared GPU cluster on a Monday morning. Three
tenants send work: ``production`` (latency-sensitive pods that must start at
once and must not be killed), ``research`` (a few large, long pods, some of
which need a whole 8-GPU machine), and ``batch`` (many short best-effort
pods). Each has stated goals; the cluster as a whole must not sit idle. The
team has the layers of the course to work with: Kueue ClusterQueues (quota,
borrowing and lending in a cohort, preemption), a gang layer, Karpenter
behind it for more nodes, and Kueue's ``waitForPodsReady``. The learner fills
in a :class:`Design`, runs it on three days of a real trace, and reads the
score: one row per goal, met or not, and why.

**The workload** (:func:`capstone_workload`) is three days of the Alibaba GPU
cluster trace 2023 ("openb"), committed as ``gangkit/data/capstone_pods.csv``
and ``capstone_nodes.csv`` (``gangkit/data/CAPSTONE_TRACE.md`` says where they
come from, under which licence, and how they were cut). It is read with
:func:`gangkit.load_alibaba_openb` and its defaults:

- *fractional GPUs are rounded up*: a pod asking for 0.46 of a GPU gets a
  whole one, as on a cluster whose device plugin hands out whole
  ``nvidia.com/gpu`` (no GPU sharing); the trace's cluster shared GPUs, so
  this over-states the demand of those pods;
- *CPU and memory requests are kept*: nodes enforce them, and every
  ClusterQueue of a :class:`Design` covers ``nvidia.com/gpu``, ``cpu`` and
  ``memory`` in one resource group. A ClusterQueue that does not cover a
  resource a pod requests admits nothing (Kueue's flavor assigner finds no
  flavor for it). Only GPUs are rationed: each ClusterQueue's CPU and memory
  quota is what the cluster can hold at its largest (static nodes plus the
  NodePool limit, at a G3 node's 16 cores and 96 GiB per GPU), so quota never
  binds on them;
- *tenants come from the trace's QoS column* (:data:`QOS_TENANT`): ``LS``
  (latency-sensitive) is ``production``, ``Burstable`` and ``Guaranteed``
  are ``research``, ``BE`` (best-effort) is ``batch``. The trace names no
  users or teams; this mapping is the lesson's rule;
- *gangs are derived, not read*: the trace has single pods only. Each
  tenant's pods go through :func:`gangkit.derive_gangs` with its defaults
  (consecutive identical requests within 60 s, target sizes 2, 4 or 8 drawn
  with ``random.Random(gang_seed)``), so a gang never mixes tenants. The gang
  mix is invented by that rule;
- *the cluster* is the first :data:`STATIC_NODES` G3 nodes of the trace's node
  list (8 GPUs, 128 cores, 768 GiB each), a documented subset: the pod list
  is a small sample of its cluster (about 8,000 pods of a 6,212-GPU
  cluster), so it is replayed on a cluster sized to the sample's load.
  Karpenter, when the design has a NodePool, adds G3 nodes.

**The goals** (:data:`GOALS`) and **the score** (:func:`score`) use gangkit's
own figures: waits from :func:`gangkit.job_waits` (submission to the start of
all pods; a job that never starts counts to the end of the run), evictions
from the jobs table's ``restarts``, effective utilization from
:func:`gangkit.utilization` over the arrival window, and the run's deadlock
flag. :data:`NAIVE` (one queue for everyone, pod by pod, no NodePool) misses
several; :data:`REFERENCE` and the :data:`ALTERNATIVES` meet them all;
:func:`compare_designs` puts designs side by side, :func:`stretch` makes the
workload harder (a burst, a flood, a node down), and :func:`capstone_explorer`
is the lesson's widget.

Kueue semantics are gangkit's model of Kueue v0.19 (``gangkit.kueue``), the
gang layers and Karpenter those of ``gangkit.placement``, ``gangkit.volcano`` and
``gangkit.supply.karpenter``. All figures are simulated, never measured on a
real cluster.
"""

from __future__ import annotations

import dataclasses
import math
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import ipywidgets as W
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

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
from gangkit.lessons.explorer import Explorer
from gangkit.manifests.dump import dump_manifests
from gangkit.model.errors import Problem, ScenarioError
from gangkit.model.jobs import Job
from gangkit.model.nodes import Node
from gangkit.model.scenario import ORDERINGS, Scenario
from gangkit.results import plots
from gangkit.results.waiting import job_waits, utilization
from gangkit.simulate import simulate
from gangkit.stacks import PLACEMENTS
from gangkit.supply.cloud import InstanceType
from gangkit.supply.karpenter import Karpenter, NodePool
from gangkit.workloads.traces import TraceLoad, derive_gangs, load_alibaba_openb

DATA = Path(__file__).resolve().parents[1] / "data"
#: The committed slice of the trace's pod list, and its G3 nodes (``gangkit/data/CAPSTONE_TRACE.md``).
PODS_CSV = DATA / "capstone_pods.csv"
NODES_CSV = DATA / "capstone_nodes.csv"

#: The tenants, in the order every table lists them.
TENANTS = ("production", "research", "batch")
#: The lesson's rule: the trace's ``qos`` column -> tenant.
QOS_TENANT = {"LS": "production", "Burstable": "research", "Guaranteed": "research", "BE": "batch"}
#: Static nodes: the first G3 nodes of the trace's node list.
STATIC_NODES = 2
#: The ResourceFlavor of every node (all are G3), and the machine type Karpenter launches.
FLAVOR = "g3"
G3 = InstanceType("G3", 8, 8.0, cpu=128.0, memory=786432 * 2**20)  # price: 1 unit per GPU-hour (an assumption)
#: The slice's arrivals span three days; the run goes on 12 h more so that queues can drain.
WINDOW_S = 3 * 86400.0
HORIZON_S = WINDOW_S + 12 * 3600.0
#: The cohort a design's ClusterQueues join unless it says otherwise.
COHORT = "capstone"
_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")  # a DNS-1123 label: Kueue object names

#: the two node scorings the capstone offers (spreading, packing): gangkit.model.scenario.SCORINGS has a third
SCORINGS = ("LeastAllocated", "MostAllocated")


# ------------------------------------------------------------------------------------------- the workload
@dataclass
class CapstoneWorkload:
    """The capstone's cluster and jobs: static nodes, each tenant's jobs, the arrival window and the horizon.

    Every job is sent to the LocalQueue named after its tenant, in the namespace
    of that name (job ``openb-pod-6375`` of ``research`` is the workload
    ``research/openb-pod-6375``). ``load`` is the trace loader's report
    (print it: rows mapped, changed, dropped, and why).
    """

    nodes: list[Node]
    jobs: list[Job]
    window_s: float = WINDOW_S
    horizon_s: float = HORIZON_S
    load: TraceLoad | None = field(default=None, repr=False)
    description: str = ""

    def tenant_of(self) -> dict[str, str]:
        """Job key (``namespace/name``) -> tenant."""
        return {j.key: j.namespace for j in self.jobs}

    def table(self) -> pd.DataFrame:
        """One row per tenant: jobs, gangs among them, pods, GPUs asked, GPU-hours of work, the largest pod."""
        rows = []
        for t in TENANTS:
            mine = [j for j in self.jobs if j.namespace == t]
            rows.append({"tenant": t, "jobs": len(mine), "gangs": sum(j.pod_count > 1 for j in mine),
                         "pods": sum(j.pod_count for j in mine), "gpus": sum(j.gpus for j in mine),
                         "gpu_hours": round(sum(j.gpus * j.run_time for j in mine) / 3600.0, 1),
                         "largest_pod_gpus": max((ps.gpus for j in mine for ps in j.pod_sets), default=0),
                         "median_run_s": float(np.median([j.run_time for j in mine])) if mine else math.nan})
        return pd.DataFrame(rows).set_index("tenant")


def capstone_workload(static_nodes: int = STATIC_NODES, *, gang_seed: int = 0, pods_csv=PODS_CSV,
                      nodes_csv=NODES_CSV) -> CapstoneWorkload:
    """The capstone's world, from the committed trace slice (module docstring: every mapping rule).

    ``static_nodes``: how many of the G3 nodes (in the node list's order) the
    cluster has before any provisioner adds one. ``gang_seed``: the seed of
    :func:`gangkit.derive_gangs` (same seed, same gangs).
    """
    if isinstance(static_nodes, bool) or not isinstance(static_nodes, int) or static_nodes < 1:
        raise ScenarioError([Problem("capstone_workload", "static_nodes", f"expected a whole number >= 1, got {static_nodes!r}")])
    load = load_alibaba_openb(pods_csv, nodes_csv)
    if static_nodes > len(load.nodes):
        raise ScenarioError([Problem("capstone_workload", "static_nodes",
                                     f"expected at most {len(load.nodes)} (the G3 nodes of the node list), got {static_nodes}")])
    jobs: list[Job] = []
    for tenant in TENANTS:
        mine = [dataclasses.replace(j, queue=tenant, namespace=tenant) for j in load.jobs
                if QOS_TENANT.get(j.labels.get("qos")) == tenant]
        jobs += derive_gangs(mine, seed=gang_seed)
    jobs.sort(key=lambda j: (j.submit_time, j.key))
    nodes = list(load.nodes[:static_nodes])
    gpus = sum(n.gpus for n in nodes)
    return CapstoneWorkload(nodes, jobs, load=load,
                            description=f"Alibaba openb, 3 days ({len(jobs)} jobs of 3 tenants); "
                                        f"{static_nodes} G3 nodes ({gpus} GPUs)")


#: The kinds of :func:`stretch`, and what each does.
STRETCHES = {
    "batch-flood": "batch sends all its pods of the slice's second day at once, at the start of that day",
    "production-burst": "production sends every pod of the slice's second day twice (a copy named <pod>-again, 1 s later)",
    "node-down": "one static node fewer for the whole run",
}


def stretch(kind: str = "production-burst", workload: CapstoneWorkload | None = None) -> CapstoneWorkload:
    """A harder variant of the workload (:data:`STRETCHES`), to test a design's robustness."""
    if kind not in STRETCHES:
        raise ScenarioError([Problem("stretch", "kind", f"expected one of {', '.join(STRETCHES)}, got {kind!r}")])
    base = workload or _default_workload()
    if kind == "node-down":
        if len(base.nodes) < 2:
            raise ScenarioError([Problem("stretch", "workload", "expected at least 2 static nodes to take one away")])
        return dataclasses.replace(base, nodes=base.nodes[:-1],
                                   description=f"{base.description}; stretch: one static node down")
    day = 86400.0
    on_day_2 = [j for j in base.jobs if day <= j.submit_time < 2 * day]
    if kind == "batch-flood":
        moved = {j.key for j in on_day_2 if j.namespace == "batch"}
        jobs = [dataclasses.replace(j, submit_time=day) if j.key in moved else j for j in base.jobs]
        what = f"batch's {len(moved)} jobs of day 2 all at t = 1 d"
    else:
        copies = [dataclasses.replace(j, name=f"{j.name}-again", submit_time=j.submit_time + 1.0)
                  for j in on_day_2 if j.namespace == "production"]
        jobs = base.jobs + copies
        what = f"production's day 2 sent twice (+{len(copies)} jobs)"
    jobs = sorted(jobs, key=lambda j: (j.submit_time, j.key))
    return dataclasses.replace(base, jobs=jobs, description=f"{base.description}; stretch: {what}")


# ------------------------------------------------------------------------------------------- the design
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
        workload = workload or _default_workload()
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
        workload = workload or _default_workload()
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


@lru_cache(maxsize=1)
def _default_workload() -> CapstoneWorkload:
    return capstone_workload()


# ------------------------------------------------------------------------------------------- goals and score
@dataclass(frozen=True)
class Goal:
    """One stated goal: whose, what is measured, the target, which way is good, and the sentence that states it."""

    tenant: str  # a tenant, or "cluster"
    goal: str  # the measure: "p95 wait", "max wait", "evictions", "effective utilization", "deadlocked jobs"
    target: float
    at_most: bool  # True: measured <= target meets the goal; False: measured >= target
    unit: str
    text: str


#: Each tenant's goals, and the cluster's: the lesson's statement of service levels.
GOALS: tuple[Goal, ...] = (
    Goal("production", "p95 wait", 600.0, True, "s", "95% of production's jobs start within 10 min of submission"),
    Goal("production", "evictions", 0.0, True, "evictions",
         "no production workload is ever evicted (preempted, or timed out by waitForPodsReady)"),
    Goal("research", "max wait", 1800.0, True, "s", "every research job starts within 30 min, whole-node pods included"),
    Goal("batch", "p95 wait", 1800.0, True, "s", "95% of batch's jobs start within 30 min"),
    Goal("cluster", "effective utilization", 0.53, False, "",
         "over the three days of arrivals, at least 53% of the GPU capacity (static and added nodes) does useful work"),
    Goal("cluster", "deadlocked jobs", 0.0, True, "jobs", "no job ends deadlocked (holding GPUs it cannot use)"),
)
SCORE_COLUMNS = ["tenant", "goal", "target", "measured", "measured_h", "met", "reason"]
MEASURES = ("p95 wait", "max wait", "evictions", "effective utilization", "deadlocked jobs")


def goals_table(goals: tuple[Goal, ...] = GOALS) -> pd.DataFrame:
    """The goals as the lesson states them: tenant, goal, target, and the sentence."""
    return pd.DataFrame([{"tenant": g.tenant, "goal": g.goal, "target": g.target, "statement": g.text} for g in goals])


def tenant_of_jobs(jobs: pd.DataFrame) -> pd.Series:
    """Each row's tenant: the namespace of its ``job`` key (``production/openb-pod-6375`` -> ``production``)."""
    return jobs["job"].astype(str).str.split("/", n=1).str[0]


def measure(result, goal: Goal, window_s: float = WINDOW_S) -> tuple[float, str]:
    """The measured value of ``goal`` in ``result``, and the numbers behind it (for a reason line).

    - ``p95 wait`` and ``max wait``: over the tenant's jobs, the waits of
      :func:`gangkit.job_waits` (submission to the start of all pods; a job
      that never started counts until the end of the run, a lower bound);
      numpy's default percentile, as :func:`gangkit.wait_table`;
    - ``evictions``: the sum of the tenant's ``restarts`` in ``result.jobs``
      (every eviction: Kueue preemptions and waitForPodsReady timeouts);
    - ``effective utilization``: :func:`gangkit.utilization` over ``[0, window_s]``;
    - ``deadlocked jobs``: jobs whose terminal state is ``Deadlocked``.
    """
    if goal.goal not in MEASURES:
        raise ScenarioError([Problem(f"Goal {goal.tenant} {goal.goal}", "goal", f"expected one of {', '.join(MEASURES)}")])
    jobs = result.jobs
    if goal.goal == "effective utilization":
        u = utilization(result, 0.0, window_s)
        return float(u["effective_utilization"]), (f"allocated {u['allocated_utilization']:.4f} over the first "
                                                    f"{window_s / 3600:g} h")
    if goal.goal == "deadlocked jobs":
        n = int((jobs["state"] == "Deadlocked").sum())
        return float(n), f"the run {'ended in a deadlock' if result.deadlock else 'did not deadlock'}"
    mine = jobs[tenant_of_jobs(jobs) == goal.tenant]
    if goal.goal == "evictions":
        hit = int((mine["restarts"] > 0).sum())
        return float(mine["restarts"].sum()), f"{hit} of {len(mine)} jobs evicted at least once"
    waits = job_waits(result)
    waits = waits[(tenant_of_jobs(waits) == goal.tenant) & ~waits["rejected"]]
    w = waits["wait_s"].to_numpy(dtype=float)
    if len(w) == 0:
        return 0.0, "no jobs"
    value = float(np.percentile(w, 95)) if goal.goal == "p95 wait" else float(w.max())
    detail = f"{int((w > goal.target).sum())} of {len(w)} jobs waited longer than {goal.target:g} s, the longest {w.max():g} s"
    never = int(waits["censored"].sum())
    if never:
        detail += f"; {never} never started (counted to the end of the run)"
    return round(value, 3), detail


def score(result, design: Design | None = None, goals: tuple[Goal, ...] = GOALS, window_s: float = WINDOW_S) -> pd.DataFrame:
    """One row per goal: tenant, goal, target, measured value, met, and a one-line reason when missed.

    ``measured`` is in the goal's unit (seconds for a wait); ``measured_h`` gives a wait in hours too
    (two decimals; empty for the other goals), and a missed wait goal's reason gives its seconds in
    hours as well, so that 231815 s reads as 64.39 h. ``result`` is a run of :meth:`Design.scenario` recorded at level ``jobs``
    or ``full``; ``design``, if given, adds to a missed goal's reason what in
    the design decides it. Same design and seed, same score.
    """
    rows = []
    for g in goals:
        value, detail = measure(result, g, window_s)
        met = value <= g.target if g.at_most else value >= g.target
        reason = ""
        if not met:
            unit = " s" if g.unit == "s" else ""
            hours = f" ({value / 3600:.2f} h)" if g.unit == "s" else ""
            reason = (f"{g.tenant} {g.goal} is {_fmt(value)}{unit}{hours}, {'above' if g.at_most else 'below'} the "
                      f"target {_fmt(g.target)}{unit}: {detail}")
            hint = _hint(g, design) if design is not None else ""
            if hint:
                reason += f" ({hint})"
        rows.append({"tenant": g.tenant, "goal": g.goal, "target": g.target, "measured": value,
                     "measured_h": round(value / 3600, 2) if g.unit == "s" else "", "met": bool(met),
                     "reason": reason})
    return pd.DataFrame(rows, columns=SCORE_COLUMNS)


def _fmt(x: float) -> str:
    return f"{x:.4f}".rstrip("0") if 0 < abs(x) < 1 else f"{x:g}"


def _quota_words(design: Design, tenant: str) -> str:
    cq = design.queue_of(tenant)
    if cq is None:
        return "no Kueue: nothing reserves GPUs for it"
    q = design.queues[cq]
    return (f"its ClusterQueue {cq}: nominalQuota {q.nominal}, borrowingLimit "
            f"{'none' if q.borrowing_limit is None else q.borrowing_limit}")


def _hint(goal: Goal, design: Design) -> str:
    """What in ``design`` decides ``goal``: a pointer, not a fix."""
    if goal.goal == "p95 wait":
        return _quota_words(design, goal.tenant)
    if goal.tenant == "research":
        if not design.pool_limit:
            return "no NodePool: an 8-GPU pod needs a whole empty node, and the static nodes are rarely empty"
        return f"NodePool limit {design.pool_limit} GPUs: nodes that other pods keep busy count against it"
    if goal.goal == "evictions":
        timeout = f"waitForPodsReady after {design.pods_ready_timeout:g} s" if design.wait_for_pods_ready else ""
        return "evictions are Kueue preemptions" + (f" and {timeout}" if timeout else "")
    if goal.goal == "effective utilization":
        words = f"scoring {design.scoring}"
        if design.pool_limit:
            words += f", NodePool limit {design.pool_limit} GPUs, consolidateAfter {design.consolidate_after:g} s"
        return words
    if goal.goal == "deadlocked jobs" and design.placement == "pod":
        return "placement 'pod' binds a gang's pods one by one"
    return ""


def run(design: Design, workload: CapstoneWorkload | None = None, seed: int = 0):
    """Simulate ``design`` on ``workload`` (default: :func:`capstone_workload`); returns the Result."""
    return simulate(design.scenario(workload), seed=seed)


def evaluate(design: Design, workload: CapstoneWorkload | None = None, seed: int = 0) -> pd.DataFrame:
    """:func:`score` of one run of ``design`` on ``workload``."""
    workload = workload or _default_workload()
    return score(run(design, workload, seed), design, window_s=workload.window_s)


def compare_designs(designs: dict[str, Design] | list[Design], workload: CapstoneWorkload | None = None,
                    seed: int = 0) -> pd.DataFrame:
    """Several designs side by side on one workload.

    One row per goal (index: tenant, goal, target) and two columns per design,
    ``(name, "measured")`` and ``(name, "met")``; a last row ``("all", "goals
    met", <number of goals>)`` holds how many each met and whether it met all.
    """
    if isinstance(designs, (list, tuple)):
        designs = {d.name: d for d in designs}
    workload = workload or _default_workload()
    parts = {label: evaluate(d, workload, seed).set_index(["tenant", "goal", "target"])[["measured", "met"]]
             for label, d in designs.items()}
    table = pd.concat(parts, axis=1)
    total = {}
    for label, part in parts.items():
        total[(label, "measured")] = float(part["met"].sum())
        total[(label, "met")] = bool(part["met"].all())
    index = pd.MultiIndex.from_tuples([("all", "goals met", float(len(table)))], names=table.index.names)
    return pd.concat([table, pd.DataFrame([total], index=index)[table.columns]])


# ------------------------------------------------------------------------------------------- before a run
def design_manifests(design: Design, workload: CapstoneWorkload | None = None) -> str:
    """The design's whole stack on ``workload`` as the manifests a cluster takes (:func:`gangkit.dump_manifests`).

    Nodes, Kueue's objects, the NodePool and gangkit's Karpenter kind, every
    Job with its gang in the placement layer's form and ``schedulerName``, one
    Simulation: ``gangkit check`` and ``gangkit run`` read the file as it is.
    """
    return dump_manifests(design.scenario(workload))


def check_designs(designs: dict[str, Design] | list[Design], workload: CapstoneWorkload | None = None) -> pd.DataFrame:
    """What ``gangkit check`` finds in each design's manifests before any run: one row per design and rule.

    Columns: how many findings of the rule (one per set of objects) and the first
    finding's fix; a design with no finding has one row, rule ``-``. Every rule's
    severity and source: ``docs/reference/check.md``.
    """
    from gangkit.consistency import check_manifests

    if isinstance(designs, (list, tuple)):
        designs = {d.name: d for d in designs}
    rows = []
    for label, d in designs.items():
        by_rule: dict[str, list] = {}
        for f in check_manifests(design_manifests(d, workload)):
            by_rule.setdefault(f.code, []).append(f)
        for code, found in by_rule.items():
            rows.append({"design": label, "rule": code, "findings": len(found), "fix": found[0].hint})
        if not by_rule:
            rows.append({"design": label, "rule": "-", "findings": 0, "fix": "-"})
    return pd.DataFrame(rows).set_index(["design", "rule"])


# ------------------------------------------------------------------------------------------- designs
#: Everything in one queue, pod by pod, no NodePool: the static GPUs, first come first served.
NAIVE = Design(queues={"cluster-queue": QueueDesign(8 * STATIC_NODES)},
               tenant_queues={t: "cluster-queue" for t in TENANTS}, cohort=None, placement="pod", name="naive")

#: A worked design that meets every goal. Production's quota covers its own peaks and reclaims what others
#: borrowed; research keeps 8 of its 16 GPUs for itself (lendingLimit 8) and gets whole nodes from the NodePool;
#: batch lives mostly on borrowed quota; pods are packed (MostAllocated) so that added nodes empty and go.
REFERENCE = Design(
    queues={"production": QueueDesign(16, reclaim_within_cohort="Any"),
            "research": QueueDesign(16, lending_limit=8, reclaim_within_cohort="Any"),
            "batch": QueueDesign(4)},
    placement="gang", scoring="MostAllocated", pool_limit=24, name="reference")

#: Other designs that meet every goal on the three days, each in its own way.
ALTERNATIVES: dict[str, Design] = {
    "one queue with priorities": Design(
        queues={"shared": QueueDesign(32, within_cluster_queue="LowerPriority")},
        tenant_queues={t: "shared" for t in TENANTS}, cohort=None, priorities={"production": 100, "research": 50},
        placement="coscheduling", scoring="MostAllocated", pool_limit=16, name="one queue with priorities"),
    "small quotas, wide lending": Design(
        queues={"production": QueueDesign(8, reclaim_within_cohort="Any"),
                "research": QueueDesign(16, lending_limit=8, reclaim_within_cohort="Any"),
                "batch": QueueDesign(8)},
        placement="gang", scoring="MostAllocated", pool_limit=16, name="small quotas, wide lending"),
    "autoscaler only": Design(placement="pod", scoring="MostAllocated", pool_limit=16, name="autoscaler only"),
}


# ------------------------------------------------------------------------------------------- the explorer
def explored_design(production: int = 16, research: int = 16, batch: int = 4, research_lending: str = "8",
                    pool_limit: int = 24, placement: str = "gang", scoring: str = "MostAllocated",
                    reclaim: str = "Any") -> Design:
    """The design :func:`capstone_explorer`'s controls describe: REFERENCE's shape with these numbers.

    Three ClusterQueues in one cohort; ``reclaim`` is production's and
    research's ``reclaimWithinCohort`` (batch never reclaims);
    ``research_lending`` is research's lendingLimit (``"none"``: no limit;
    capped at its nominalQuota).
    """
    lend = None if research_lending == "none" else min(int(research_lending), int(research))
    queues = {"production": QueueDesign(int(production), reclaim_within_cohort=reclaim),
              "research": QueueDesign(int(research), lending_limit=lend, reclaim_within_cohort=reclaim),
              "batch": QueueDesign(int(batch))}
    return Design(queues=queues, placement=placement, scoring=scoring, pool_limit=int(pool_limit), name="explored")


@lru_cache(maxsize=32)
def _explored_run(*values):
    d = explored_design(*values)
    return d, run(d)


def render_capstone(production: int = 16, research: int = 16, batch: int = 4, research_lending: str = "8",
                    pool_limit: int = 24, placement: str = "gang", scoring: str = "MostAllocated",
                    reclaim: str = "Any") -> tuple[pd.DataFrame, Figure]:
    """What :func:`capstone_explorer` shows: the score of :func:`explored_design`, and what the GPUs did."""
    d, r = _explored_run(int(production), int(research), int(batch), str(research_lending), int(pool_limit),
                         placement, scoring, reclaim)
    fig = Figure(figsize=(9, 3.2))
    ax = fig.subplots()
    plots.gpu_states(r, ax=ax)
    ax.set_title(f"stack {d.stack()}, scoring {d.scoring}: what the GPUs did (simulated)", fontsize=9)
    fig.subplots_adjust(left=0.08, right=0.8, bottom=0.16, top=0.88)
    return score(r, d).set_index(["tenant", "goal"]), fig


def capstone_explorer(production: int = 16, research: int = 16, batch: int = 4, research_lending: str = "8",
                      pool_limit: int = 24, placement: str = "gang", scoring: str = "MostAllocated",
                      reclaim: str = "Any") -> Explorer:
    """Lesson 08's explorer: each tenant's nominalQuota, research's lendingLimit, the NodePool limit, the
    placement layer, kube-scheduler's scoring and the reclaim policy; shows :func:`score` and
    :func:`gangkit.results.plots.gpu_states` of the run (defaults: :data:`REFERENCE`)."""
    style = {"description_width": "14em"}
    layout = W.Layout(width="32em")

    def quota(description: str, value: int) -> W.IntSlider:
        return W.IntSlider(value=value, min=0, max=32, step=4, description=description, continuous_update=False,
                           style=style, layout=layout)

    controls = {
        "production": quota("production nominalQuota", production),
        "research": quota("research nominalQuota", research),
        "batch": quota("batch nominalQuota", batch),
        "research_lending": W.SelectionSlider(options=["0", "4", "8", "16", "none"], value=research_lending,
                                              description="research lendingLimit", continuous_update=False,
                                              style=style, layout=layout),
        "pool_limit": W.IntSlider(value=pool_limit, min=0, max=48, step=8, description="NodePool limit (GPUs)",
                                  continuous_update=False, style=style, layout=layout),
        "placement": W.ToggleButtons(options=["pod", "gang", "coscheduling"], value=placement, description="placement",
                                     style=style),
        "scoring": W.ToggleButtons(options=list(SCORINGS), value=scoring, description="scoring", style=style),
        "reclaim": W.ToggleButtons(options=["Never", "Any"], value=reclaim,
                                   description="reclaimWithinCohort", style=style),
    }
    return Explorer("Capstone explorer",
                    f"three days of the Alibaba openb trace, three tenants on {STATIC_NODES} G3 nodes "
                    f"({8 * STATIC_NODES} GPUs) plus a NodePool of G3 nodes; batch never reclaims (simulated figures).",
                    controls, render_capstone)
