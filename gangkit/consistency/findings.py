"""What ``gangkit check`` reports: a finding, and the catalogue of every finding code with the rule behind it.

Picture a building inspector who reads the plans of every trade at once: the
electrician's, the plumber's, the architect's. Each plan is fine on its own;
the inspector looks for the places where they disagree (a socket behind a
bathtub, a door that opens into a wall). A stack of manifests is such a set
of plans: Kueue's quota, the gang scheduler's PodGroups, the node supply,
the Jobs. Each object is valid on its own (the reader checks that); a
*finding* is a place where two layers disagree::

    error kueue-quota-never-fits: Job team-a/pretrain, ClusterQueue team-a-cq
      asks for 16 nvidia.com/gpu; ClusterQueue team-a-cq can have at most 12 ...

Every finding has a stable ``code`` from :data:`CATALOGUE`, which gives its
severity (``error``: it can never work; ``warning``: it works badly, or only
sometimes), the layers it joins, the real rule it is based on and where that
rule comes from (project, file or page, version). The finding itself names
the objects (``Kind namespace/name``), the fields, the numbers, and a
one-line hint of the fix. The reference page ``docs/reference/check.md``
lists the same catalogue.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["CATALOGUE", "ERROR", "SEVERITIES", "WARNING", "Finding", "Rule"]

ERROR, WARNING = "error", "warning"
SEVERITIES = (ERROR, WARNING)  # most serious first

KUEUE = "Kueue v0.19"
VOLCANO = "Volcano v1.15"
COSCHEDULING = "scheduler-plugins v0.34/v0.35"
KARPENTER = "Karpenter v1.x"
KUBERNETES = "Kubernetes 1.35"


@dataclass(frozen=True)
class Rule:
    """One entry of the catalogue: a code, its severity, the layers it joins, the real rule and its source."""

    code: str
    severity: str
    layers: str
    title: str
    rule: str
    source: str


def _table(*rows: Rule) -> dict[str, Rule]:
    out: dict[str, Rule] = {}
    for row in rows:
        if row.code in out or row.severity not in SEVERITIES:
            raise ValueError(f"catalogue row {row.code}: duplicate code or unknown severity {row.severity!r}")
        out[row.code] = row
    return out


#: Every finding code, in the order the reference page lists them (and reports sort them).
CATALOGUE: dict[str, Rule] = _table(
    # --- names that must resolve -----------------------------------------------------------
    Rule("kueue-local-queue-missing", ERROR, "Job -> Kueue",
         "a queue-name label names no LocalQueue in the Job's namespace",
         "Kueue's workload controller marks such a workload inadmissible (\"LocalQueue <name> doesn't exist\") "
         "and it stays pending until the LocalQueue is created.",
         f"{KUEUE}: pkg/controller/core/workload_controller.go"),
    Rule("kueue-cluster-queue-missing", ERROR, "Kueue",
         "a LocalQueue names a ClusterQueue that does not exist",
         "Workloads of the LocalQueue stay pending (\"ClusterQueue <name> doesn't exist\").",
         f"{KUEUE}: pkg/controller/core/workload_controller.go"),
    Rule("kueue-flavor-missing", ERROR, "Kueue",
         "a ClusterQueue names a ResourceFlavor that does not exist",
         "The ClusterQueue stays inactive (condition Active=False, reason FlavorNotFound) and admits nothing.",
         f"{KUEUE}: pkg/cache ClusterQueue status, kueue.ClusterQueueActiveReasonFlavorNotFound"),
    Rule("kueue-admission-check-missing", ERROR, "Kueue",
         "a ClusterQueue names an AdmissionCheck that does not exist",
         "The ClusterQueue stays inactive (reason AdmissionCheckNotFound) and admits nothing.",
         f"{KUEUE}: kueue.ClusterQueueActiveReasonAdmissionCheckNotFound"),
    Rule("kueue-cluster-queue-selects-no-namespace", ERROR, "Kueue",
         "a ClusterQueue without spec.namespaceSelector",
         "namespaceSelector \"defaults to null which is a nothing selector (no namespaces eligible)\"; "
         "{} selects every namespace. gangkit's simulation admits from every namespace anyway.",
         f"{KUEUE}: ClusterQueueSpec.namespaceSelector (apis/kueue/v1beta2)"),
    Rule("kueue-workload-priority-class-missing", ERROR, "Job -> Kueue",
         "a kueue.x-k8s.io/priority-class label names no WorkloadPriorityClass",
         "Kueue's job integration cannot create the Workload without the class, so the Job never runs.",
         f"{KUEUE}: pkg/controller/jobframework (workload priority class lookup)"),
    Rule("priority-class-missing", ERROR, "Job -> Kubernetes",
         "a priorityClassName names no PriorityClass (and is not a system one)",
         "The Priority admission plugin refuses the pod (\"no PriorityClass with name <name> was found\"), so "
         "the Job's pods are never created; Volcano refuses a PodGroup or Job the same way. "
         "system-cluster-critical and system-node-critical always exist.",
         f"{KUBERNETES}: plugin/pkg/admission/priority; {VOLCANO}: job admission webhook"),
    Rule("volcano-queue-missing", ERROR, "gang layer -> Volcano",
         "a Volcano Job or PodGroup names a Queue that does not exist",
         "Volcano's admission webhook refuses a Job whose queue does not exist; a PodGroup in an unknown "
         "queue is never enqueued. The queue named default always exists.",
         f"{VOLCANO}: pkg/webhooks/admission/jobs/validate, pkg/scheduler (queue lookup)"),
    Rule("gang-object-missing", ERROR, "Job -> gang layer",
         "a pod template names a PodGroup, Workload or task group that does not exist",
         "The gang scheduler cannot find the group and never places the pods (Volcano: the pod's PodGroup; "
         "Coscheduling: PreFilter fails for a missing PodGroup; Kubernetes 1.35 GangScheduling: the "
         "Workload and pod group of spec.workloadRef; YuniKorn: task-group-name among the task groups).",
         f"{VOLCANO}; {COSCHEDULING} pkg/coscheduling; {KUBERNETES} Workload API (alpha); YuniKorn gang scheduling docs"),
    Rule("gang-object-unused", WARNING, "gang layer -> Job",
         "a PodGroup or Workload no pod refers to",
         "A gang object is joined to pods only by the pods' own reference (annotation, label or "
         "spec.workloadRef); one that nobody names gangs nothing, often a typo in a Job.",
         f"{VOLCANO}; {COSCHEDULING}; {KUBERNETES}"),
    Rule("provisioning-request-missing", ERROR, "Job -> cluster-autoscaler",
         "a pod template consumes a ProvisioningRequest that does not exist",
         "cluster-autoscaler leaves every pending pod with the autoscaling.x-k8s.io/consume-provisioning-request "
         "annotation out of scale-up, whether or not the request exists: such pods run only on room that exists.",
         "cluster-autoscaler 1.35: processors/provreq/pods_filter.go"),
    # --- schedulers -------------------------------------------------------------------------
    Rule("scheduler-not-provided", WARNING, "Job -> scheduler",
         "a pod's schedulerName names a scheduler no layer in the files provides",
         "A pod is placed only by the scheduler its spec.schedulerName names; if none runs under that "
         "name it stays Pending. The files provide default-scheduler always, volcano with any Volcano "
         "object, scheduler-plugins-scheduler with a scheduler-plugins PodGroup, yunikorn with YuniKorn "
         "task groups or application labels (and each with a Simulation stack naming that layer).",
         f"{KUBERNETES}: PodSpec.schedulerName; the projects' install guides"),
    Rule("gang-scheduler-mismatch", WARNING, "Job -> gang layer",
         "a Job names a gang object, but its pods go to a scheduler that ignores it",
         "Volcano schedules only pods whose schedulerName is volcano; Coscheduling runs as "
         "scheduler-plugins-scheduler or in place of default-scheduler; YuniKorn's admission "
         "controller takes default-scheduler pods; Kubernetes 1.35's gang plugin is in default-scheduler. "
         "Any other scheduler places the pods one by one, without the gang.",
         f"{VOLCANO}; {COSCHEDULING} (as a second scheduler, or as the only one); YuniKorn admission controller"),
    # --- gang sizes ---------------------------------------------------------------------------
    Rule("gang-larger-than-job", ERROR, "gang layer -> Job",
         "minMember / minAvailable / minCount above the pods the workload creates",
         "A gang starts only when minMember pods can be placed together; a workload with fewer pods never "
         "fills it: the API server accepts the PodGroup or Workload and the pods stay Pending (Coscheduling's "
         "PreFilter: \"cannot find enough sibling pods\"; GangScheduling's PreEnqueue). Volcano's webhook refuses "
         "a Volcano Job whose minAvailable is above its replicas.",
         f"{VOLCANO} gang plugin and job webhook; {COSCHEDULING} PreFilter and Permit (pkg/coscheduling/core); "
         f"{KUBERNETES} GangScheduling"),
    Rule("gang-smaller-than-sync-job", WARNING, "gang layer -> Job",
         "a gang smaller than a sync job's pod count",
         "gangkit's progress: sync (all-reduce training) advances only while every pod runs; a gang "
         "of fewer pods lets part of the job start and hold GPUs while it cannot progress.",
         "gangkit's progress model (gangkit.model.jobs)"),
    # --- capacity -----------------------------------------------------------------------------
    Rule("kueue-quota-never-fits", ERROR, "Job -> Kueue",
         "a workload above its ClusterQueue's nominal quota plus all it may borrow",
         "Flavor assignment gives NoFit when a request is above the queue's potential available quota "
         "(nominalQuota plus what the cohort tree may lend: other queues' lendingLimit or nominal quota, "
         "capped by borrowingLimit), or asks for a resource the ClusterQueue does not cover. Kueue never "
         "rejects: the workload stays pending, inadmissible, for ever.",
         f"{KUEUE}: pkg/scheduler/flavorassigner, pkg/cache/scheduler/resource_node.go (potentialAvailable)"),
    Rule("kueue-no-flavor-matches", ERROR, "Job -> Kueue",
         "a workload whose nodeSelector matches none of its ClusterQueue's flavors",
         "A flavor is skipped when the pod's nodeSelector, on the keys the flavor's nodeLabels name, "
         "disagrees with them (\"flavor <name> doesn't match node affinity\"); with none left, NoFit.",
         f"{KUEUE}: pkg/scheduler/flavorassigner (node affinity check)"),
    Rule("volcano-capability-too-small", ERROR, "Job -> Volcano",
         "a gang above its Volcano Queue's capability",
         "The proportion plugin enqueues a PodGroup only while minResources fits the queue's "
         "realCapability (at most spec.capability) and allocates pods only within the queue's share, "
         "itself capped by the capability: a gang above it never starts.",
         f"{VOLCANO}: pkg/scheduler/plugins/proportion (JobEnqueueableFn, AllocatableFn)"),
    Rule("pod-fits-no-node", ERROR, "Job -> nodes",
         "a pod larger than every Node and every machine the node suppliers may launch",
         "A pod takes its GPUs, CPU and memory from one node; kube-scheduler finds no node "
         "(Unschedulable), and Karpenter or cluster-autoscaler launch only instance types / node groups "
         "whose capacity and labels hold the pod (and, for Karpenter, within the NodePool's limits).",
         f"{KUBERNETES} NodeResourcesFit; {KARPENTER} provisioning; cluster-autoscaler scale-up"),
    Rule("supply-too-small", ERROR, "Job -> nodes",
         "a gang that all Nodes plus every NodePool limit and node group maximum cannot hold at once",
         "A gang (a sync job: all its pods) runs only when all its pods are placed at the same time. "
         "Karpenter launches a NodeClaim only while the NodePool's spec.limits stay respected; "
         "cluster-autoscaler grows a node group at most to its maxSize.",
         f"{KARPENTER}: NodePool spec.limits; cluster-autoscaler --nodes min:max"),
    Rule("kueue-flavor-matches-no-node", ERROR, "Kueue -> nodes",
         "a ResourceFlavor whose nodeLabels match no Node, NodePool or node group",
         "Kueue adds a flavor's nodeLabels to the nodeSelector of the pods it admits with that flavor; "
         "with no node carrying them (and none that a supplier may launch) the pods stay Pending.",
         f"{KUEUE}: ResourceFlavor spec.nodeLabels; {KARPENTER} NodePool template labels and requirements"),
    Rule("kueue-quota-exceeds-supply", WARNING, "Kueue -> nodes",
         "more GPU quota in a flavor than the nodes of that flavor can ever hold",
         "Quota is not capacity: Kueue admits a workload on quota alone, and its pods then wait for nodes "
         "that cannot come (until waitForPodsReady evicts it).",
         f"{KUEUE}: quota reservation and admission (concepts/cluster_queue)"),
    Rule("kueue-quota-below-supply", WARNING, "Kueue -> node supply",
         "a NodePool or node group may add GPUs of a flavor whose whole quota the Nodes already hold",
         "Kueue admits a workload only within quota, and Karpenter or cluster-autoscaler adds a node only for a pod "
         "that is admitted and finds no room; with the quota no larger than the Nodes, the added nodes serve only "
         "fragmentation and the Jobs wait for quota.",
         f"{KUEUE}: quota reservation and admission (concepts/cluster_queue); {KARPENTER}: provisioning"),
    # --- timeouts -----------------------------------------------------------------------------
    Rule("kueue-pods-ready-timeout", WARNING, "Kueue -> node supply",
         "waitForPodsReady.timeout shorter than the provisioning of the nodes the gang needs",
         "The timeout runs from admission until every pod is ready; a gang that needs new nodes waits at "
         "least the provisioner's batching window plus the node stages. It is evicted and requeued with "
         "backoff; it works only if the nodes are still there at the next attempt.",
         f"{KUEUE}: Configuration waitForPodsReady; gangkit's node stages (gangkit.supply.cloud)"),
    Rule("coscheduling-timeout", WARNING, "Coscheduling -> node supply",
         "scheduleTimeoutSeconds shorter than the provisioning of the nodes the gang needs",
         "Pods placed on existing nodes wait at Permit at most scheduleTimeoutSeconds (default: "
         "permitWaitingTimeSeconds, 60 s) while at most podGroupRejectPercentage (10 %) of minMember is missing "
         "(with more missing, PostFilter rejects the group at once); when the rest wait for new nodes longer, "
         "the waiting pods are rejected and the gang holds its seats again, one timeout after another, until "
         "the nodes are ready.",
         f"{COSCHEDULING}: pkg/coscheduling Permit, apis/config defaults"),
    Rule("yunikorn-placeholder-timeout", WARNING, "YuniKorn -> node supply",
         "placeholderTimeoutInSeconds shorter than the provisioning of the nodes the gang needs",
         "The timeout runs from the first placeholder allocated; placeholders on existing nodes time out "
         "while the others wait for new nodes: Soft falls back to pod-by-pod scheduling, Hard fails the "
         "application. Default 15 minutes.",
         "YuniKorn gang scheduling (docs/user_guide/gang_scheduling.md)"),
    Rule("kube-gang-timeout", WARNING, "Kubernetes GangScheduling -> node supply",
         "the gang plugin's fixed 5-minute timeout shorter than the provisioning the gang needs",
         "Pods of a gang wait at Permit at most 5 minutes (not configurable in 1.35); the ones on existing "
         "nodes are rejected while the rest wait for new nodes longer than that. Not raised for 1.36 "
         "(spec.kubeGangRelease), whose PodGroup scheduling cycle holds nothing at Permit.",
         f"{KUBERNETES}: GangScheduling plugin (alpha), DefaultSchedulingTimeoutDuration"),
    # --- the run (--simulate) ----------------------------------------------------------------
    Rule("run-deadlocked", ERROR, "the run",
         "the simulated run deadlocked",
         "Jobs hold GPUs without progress and no future event can change a placement (gangkit's "
         "definition of deadlock).",
         "gangkit simulation (gangkit.results.result)"),
    Rule("run-stalled", ERROR, "the run",
         "the simulated run stalled",
         "Timers still tick (requeues, retries) but no job started or finished for the stall window while "
         "jobs waited.",
         "gangkit simulation (RunSettings.stall_window)"),
    Rule("run-never-admitted", ERROR, "the run",
         "a job an admission layer never admitted in the run",
         "The job ended the run waiting in Kueue or its admission check (or was deactivated there).",
         "gangkit simulation, with Kueue's pending reason"),
    Rule("run-never-started", ERROR, "the run",
         "a job that never started in the run",
         "The job ended the run waiting in the placement layer, or was rejected: no node could ever hold a pod.",
         "gangkit simulation, with the placement layer's reason"),
    Rule("run-waited-for-nodes", WARNING, "the run",
         "a job admitted before its nodes existed",
         "The admission layer reserved quota (or passed its check) while the job's nodes were still "
         "being provisioned; the job waited for them with its quota held.",
         "gangkit simulation (wait buckets node_launch ... image_pull)"),
)


@dataclass(frozen=True)
class Finding:
    """One inconsistency: its code, the objects and fields it joins, the numbers, the words and a hint.

    ``objects`` are named ``Kind namespace/name`` (``Kind name`` for
    cluster-scoped kinds); ``fields`` are ``(object, field path)`` pairs.
    ``explains`` are the reader problems (object label, field) this finding
    stands for: the check reports them as this finding, not as input errors.
    """

    code: str
    objects: tuple[str, ...]
    message: str
    hint: str
    fields: tuple[tuple[str, str], ...] = ()
    numbers: Mapping[str, Any] = field(default_factory=dict, compare=False)
    explains: frozenset = field(default=frozenset(), compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.code not in CATALOGUE:
            raise ValueError(f"unknown finding code {self.code!r}; the catalogue has {', '.join(CATALOGUE)}")
        object.__setattr__(self, "objects", tuple(self.objects))
        object.__setattr__(self, "fields", tuple(tuple(f) for f in self.fields))
        object.__setattr__(self, "numbers", dict(self.numbers))
        object.__setattr__(self, "explains", frozenset(self.explains))

    @property
    def severity(self) -> str:
        return CATALOGUE[self.code].severity

    @property
    def rule(self) -> Rule:
        return CATALOGUE[self.code]

    def sort_key(self) -> tuple:
        codes = list(CATALOGUE)
        return (SEVERITIES.index(self.severity), codes.index(self.code), self.objects, self.message)

    def to_dict(self) -> dict[str, Any]:
        """The finding as plain JSON data (a stable contract)."""
        return {
            "code": self.code, "severity": self.severity, "objects": list(self.objects),
            "fields": [{"object": o, "field": f} for o, f in self.fields],
            "numbers": dict(self.numbers), "message": self.message, "hint": self.hint,
        }
