"""Kueue's API objects, as plain data.

Picture a company's GPU budget. A **ResourceFlavor** is a kind of machine
(``a100``, ``h100-spot``), named by the node labels that pick those nodes. A
**ClusterQueue** is one team's budget: for each flavor, a ``nominalQuota`` of
each resource (GPUs, CPU, memory, pods). Budgets in the same **Cohort** lend
each other what they do not use: ``borrowingLimit`` caps how much a team may
borrow, ``lendingLimit`` caps how much of its own quota it lends. Cohorts may
nest (a Cohort with a parent), and a Cohort may hold quota of its own. A
**LocalQueue** is the namespaced door through which a team's jobs reach their
ClusterQueue. A **Workload** is Kueue's view of a job: pod sets with counts
and per-pod requests, a priority and a creation time; Kueue reserves quota for
a whole workload at once, never pod by pod.

For Topology-Aware Scheduling (:mod:`gangkit.kueue.tas`) a **Topology**
names the levels of a data centre (block, rack, host), each a node label; a
ResourceFlavor that names one is a *TAS flavor*, a pod set asks for a level
(its **TopologyRequest**), and an admission says where its pods go (its
**TopologyAssignment**).

Quantities here are whole numbers in Kueue's canonical units: CPU in
millicores, memory in bytes, GPUs and pods as counts.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gangkit.engine.admitted import Admitted

DEFAULT_POD_SET = "main"  # kueue.DefaultPodSetName: the pod set of a batch/v1 Job's (and a lone Pod's) Workload

GPU = "nvidia.com/gpu"
FlavorResource = tuple[str, str]  # (flavor, resource)

WITHIN_CQ_POLICIES = ("Never", "LowerPriority", "LowerOrNewerEqualPriority")
RECLAIM_POLICIES = ("Never", "LowerPriority", "Any")
BORROW_POLICIES = ("Never", "LowerPriority")
QUEUEING_STRATEGIES = ("StrictFIFO", "BestEffortFIFO")
FUNGIBILITY_POLICIES = ("MayStopSearch", "TryNextFlavor")
PREFERENCES = (None, "BorrowingOverPreemption", "PreemptionOverBorrowing")


HOSTNAME = "kubernetes.io/hostname"  # the node label every kubelet sets (corev1.LabelHostname)


@dataclass(frozen=True)
class ResourceFlavor:
    """A kind of node, chosen by ``node_labels`` (ResourceFlavor ``spec.nodeLabels``); ``topology_name``
    (``spec.topologyName``) makes it a TAS flavor."""

    name: str
    node_labels: tuple[tuple[str, str], ...] = ()
    topology_name: str | None = None

    def __post_init__(self) -> None:
        if isinstance(self.node_labels, dict):
            object.__setattr__(self, "node_labels", tuple(sorted(self.node_labels.items())))


@dataclass(frozen=True)
class Topology:
    """The levels of a data centre, coarse to fine, each a node label (Kueue ``Topology`` ``spec.levels[].nodeLabel``).

    ``kubernetes.io/hostname`` may only be the last level; with it, Kueue counts room node by node.
    """

    name: str
    levels: tuple[str, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "levels", tuple(self.levels))


@dataclass(frozen=True)
class TopologyRequest:
    """A pod set's topology ask (Workload ``spec.podSets[].topologyRequest``), read from its pod template's
    annotations ``kueue.x-k8s.io/podset-required-topology``, ``podset-preferred-topology`` (a level's node
    label) or ``podset-unconstrained-topology`` (``"true"``/``"false"``)."""

    required: str | None = None
    preferred: str | None = None
    unconstrained: bool | None = None

    @property
    def explicit(self) -> bool:
        """Kueue's ``IsExplicitlyRequestingTAS``: any of the three is set (``unconstrained: false`` too)."""
        return self.required is not None or self.preferred is not None or self.unconstrained is not None


@dataclass(frozen=True)
class TopologyAssignment:
    """Where an admitted pod set's pods go (``podSetAssignments[].topologyAssignment``): the ``levels`` (the
    lowest only, ``kubernetes.io/hostname``, when the topology ends with it; else all), and per domain its
    level values and pod count, domains in Kueue's order (sorted by their values)."""

    levels: tuple[str, ...]
    domains: tuple[tuple[tuple[str, ...], int], ...]

    @property
    def pods(self) -> int:
        return sum(count for _, count in self.domains)

    def pod_labels(self) -> list[dict[str, str]]:
        """The node labels Kueue's topology ungater gives each pod, by rank: the first domain's to the first
        ``count`` pods, and so on (``pkg/controller/tas/topology_ungater.go``)."""
        out = []
        for values, count in self.domains:
            labels = dict(zip(self.levels, values))
            out.extend(labels for _ in range(count))
        return out


@dataclass(frozen=True)
class Quota:
    """One resource of one flavor: ``nominalQuota``, optional ``borrowingLimit`` and ``lendingLimit``."""

    nominal: int
    borrowing_limit: int | None = None
    lending_limit: int | None = None


@dataclass(frozen=True)
class FlavorQuotas:
    """One flavor's quotas inside a resource group: resource name -> :class:`Quota`."""

    flavor: str
    resources: dict[str, Quota]


@dataclass(frozen=True)
class ResourceGroup:
    """Resources that must come from the same flavor (``coveredResources``), flavors in order."""

    covered: tuple[str, ...]
    flavors: tuple[FlavorQuotas, ...]


@dataclass(frozen=True)
class Preemption:
    """ClusterQueue ``spec.preemption`` (Kueue's defaults: never preempt)."""

    within_cluster_queue: str = "Never"
    reclaim_within_cohort: str = "Never"
    borrow_within_cohort: str = "Never"
    max_priority_threshold: int | None = None


@dataclass(frozen=True)
class FlavorFungibility:
    """ClusterQueue ``spec.flavorFungibility``: when to stop scanning flavors."""

    when_can_borrow: str = "MayStopSearch"
    when_can_preempt: str = "TryNextFlavor"
    preference: str | None = None


@dataclass
class ClusterQueue:
    """A team's budget (ClusterQueue ``spec``)."""

    name: str
    resource_groups: list[ResourceGroup] = field(default_factory=list)
    cohort: str | None = None
    queueing_strategy: str = "BestEffortFIFO"
    preemption: Preemption = field(default_factory=Preemption)
    flavor_fungibility: FlavorFungibility = field(default_factory=FlavorFungibility)
    fair_sharing_weight: float = 1.0
    inactive: str = ""  # why Kueue keeps it inactive (its Active condition's reason: message); "" when active

    def group_for(self, resource: str) -> ResourceGroup | None:
        for rg in self.resource_groups:
            if resource in rg.covered:
                return rg
        return None


@dataclass
class Cohort:
    """A group of budgets that lend to each other; may have a parent and quota of its own."""

    name: str
    parent: str | None = None
    resource_groups: list[ResourceGroup] = field(default_factory=list)
    fair_sharing_weight: float = 1.0


@dataclass(frozen=True)
class LocalQueue:
    """The namespaced door to a ClusterQueue."""

    name: str
    namespace: str
    cluster_queue: str


@dataclass
class KueueConfig:
    """The global settings of Kueue's Configuration kind that gangkit models.

    Defaults are those of Kueue v0.19 with the v1beta2 Configuration:
    waitForPodsReady is on (30 min timeout, backoff 60 s doubling to 3600 s,
    blockAdmission false); fair sharing is off.
    """

    wait_for_pods_ready: bool = True
    pods_ready_timeout: float = 1800.0
    block_admission: bool = False
    backoff_base: float = 60.0
    backoff_max: float = 3600.0
    backoff_limit_count: int | None = None
    requeuing_timestamp: str = "Eviction"
    fair_sharing: bool = False
    fair_sharing_strategies: tuple[str, ...] = ("LessThanOrEqualToFinalShare", "LessThanInitialShare")
    equivalence_hashing: bool = True  # Kueue's SchedulingEquivalenceHashing feature gate (on by default)
    manage_jobs_without_queue_name: bool = False  # manageJobsWithoutQueueName (see gangkit.kueue.manifests)


@dataclass(frozen=True)
class PodSetSpec:
    """One pod set of a workload: ``count`` pods, each requesting ``requests``."""

    name: str
    count: int
    requests: dict[str, int]
    min_count: int | None = None
    node_selector: tuple[tuple[str, str], ...] = ()
    topology: TopologyRequest | None = None


@dataclass
class Admission:
    """Workload ``status.admission``: where the quota was reserved, for how many pods, and (TAS) where they go."""

    cluster_queue: str
    flavors: dict[str, dict[str, str]]  # podset -> resource -> flavor
    counts: dict[str, int]
    usage: dict[FlavorResource, int]
    topology: dict[str, TopologyAssignment] = field(default_factory=dict)  # podset -> its topologyAssignment

    def handover(self, workload_pod_sets: list, job_pod_sets: list, flavors: dict) -> Admitted:
        """What the job integration starts the job with (Kueue v0.19 ``pkg/podset/podset.go``, ``FromAssignment``;
        :mod:`gangkit.engine.admitted`): per pod set of the job, matched to the Workload's by position, the count
        admitted and the node labels of every flavor assigned to it (each flavor once, in name order); under TAS,
        per pod (its index in the job), those labels and its topology domain's (the topology ungater's)."""
        name_of = {pss.name: ps.name for pss, ps in zip(workload_pod_sets, job_pod_sets)}
        by_name = {}
        for ps_name, res_flavor in self.flavors.items():
            labels: dict[str, str] = {}
            for f in sorted(set(res_flavor.values())):
                labels.update(flavors[f].node_labels)  # the flavor's (label, value) pairs in order
            if labels:
                by_name[name_of.get(ps_name, ps_name)] = labels
        by_pod = {}
        first = 0
        for pss, ps in zip(workload_pod_sets, job_pod_sets) if self.topology else ():
            ta = self.topology.get(pss.name)
            for k, domain in enumerate(ta.pod_labels() if ta is not None else ()):
                by_pod[first + k] = {**by_name.get(ps.name, {}), **domain}
            first += self.counts.get(pss.name, pss.count)
        return Admitted({name_of.get(k, k): v for k, v in self.counts.items()}, by_name, by_pod or None)


@dataclass(eq=False)
class Workload:
    """Kueue's view of one job, and where it stands in Kueue."""

    name: str
    namespace: str | None
    queue_name: str
    pod_sets: list[PodSetSpec]
    priority: int = 0
    created: float = 0.0
    seq: int = 0
    admission: Admission | None = None
    quota_reserved_at: float | None = None
    evicted_at: float | None = None
    requeue_at: float | None = None  # backoff after a PodsReady timeout: stays parked until then
    requeue_count: int = 0
    order_time: float | None = None  # queue position after an eviction (requeuingStrategy: Eviction)
    requeued_at: float | None = None  # last time it went back to pending (Kueue's Requeued condition)
    pending_reason: str = ""
    pending_cause: str = ""  # QuotaExhausted or QuotaTooSmall (gangkit.model.reasons) when quota is why, else ""
    preempted_reason: str = ""
    cluster_queue: str | None = None
    finished: bool = False
    deactivated: bool = False
    job: object = None  # the simulation's JobState, when there is one

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}" if self.namespace else self.name

    @property
    def queue_timestamp(self) -> float:
        """Queue order: creation time, or the eviction time after a PodsReady timeout (requeuingStrategy Eviction)."""
        return self.created if self.order_time is None else self.order_time

    def __repr__(self) -> str:
        return f"Workload({self.key})"


@dataclass
class KueueSetup:
    """All of a scenario's Kueue objects; each run builds a fresh Kueue from it
    (:meth:`gangkit.kueue.scheduler.Kueue.from_setup`)."""

    flavors: list[ResourceFlavor] = field(default_factory=list)
    cluster_queues: list[ClusterQueue] = field(default_factory=list)
    local_queues: list[LocalQueue] = field(default_factory=list)
    cohorts: list[Cohort] = field(default_factory=list)
    config: KueueConfig = field(default_factory=KueueConfig)
    admission_checks: list = field(default_factory=list)  # gangkit.kueue.provisioning.AdmissionCheck, used by ClusterQueues
    topologies: list[Topology] = field(default_factory=list)
    # (job key, pod set name) -> what the pod set's template annotations ask (Kueue copies it into its Workload)
    topology_requests: dict[tuple[str, str], TopologyRequest] = field(default_factory=dict)
