"""Reasons, and the one catalogue of every reason code and job state gangkit uses.

A layered stack is a row of gatekeepers, and each one that holds a job back
says why: a :class:`Reason` names the layer, a short code, plain words and the
numbers behind them ("[quota] Pending: insufficient unused quota for
nvidia.com/gpu ..."). Codes are how programs tell reasons apart; the words are
for people. So every code has one entry in :data:`CATALOGUE`: the layer that
gives it, the wait bucket a job's time is counted in while it holds
(``""`` when the code is not a waiting reason, for example an eviction's
cause), what it means, and where the name comes from (the real system's own
condition or event reason, or ``gangkit`` for the simulator's own names).
The diagnosis (:mod:`gangkit.results.diagnosis`) has its own codes, in the
same catalogue with the layer ``diagnosis``; it decides from codes, never by
reading a message.

:data:`JOB_STATES` lists the terminal states a job can end a run in (exactly
one each), with their meanings (DESIGN.md, "Definitions").
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Reason:
    """Why a layer refuses (or holds, or evicts) a job: the layer, a short code, plain words, the numbers.

    ``cause`` is an optional finer code (from :data:`CATALOGUE`) for reasons whose
    real code is coarse: Kueue says ``Pending`` for both "the quota is used up
    now" and "the workload is larger than its ClusterQueue can ever have".

    >>> Reason("placement", "GangCannotFit", "gang of 3 cannot fit: 2 of 3 pods placed", {"placed": 2})
    Reason(layer='placement', code='GangCannotFit', message='gang of 3 cannot fit: 2 of 3 pods placed', numbers={'placed': 2})
    """

    layer: str
    code: str
    message: str
    numbers: dict = field(default_factory=dict, compare=False)
    cause: str = field(default="", compare=False, repr=False, kw_only=True)

    def __str__(self) -> str:
        return f"[{self.layer}] {self.code}: {self.message}"


@dataclass(frozen=True)
class Code:
    """One entry of the catalogue: a code, the layer that gives it, the wait bucket it is counted in, its meaning."""

    code: str
    layer: str
    bucket: str
    meaning: str
    source: str


def _table(*rows: tuple[str, str, str, str, str]) -> dict[str, Code]:
    out: dict[str, Code] = {}
    for row in rows:
        code = Code(*row)
        key = code.code if code.code not in out else f"{code.layer}:{code.code}"
        out[key] = code
    return out


#: Every reason code a built-in layer gives, and every diagnosis code: code -> :class:`Code`.
#: A code given by two layers (``Preempted``) is listed under ``layer:code`` the second time.
CATALOGUE: dict[str, Code] = _table(
    # submission (the engine)
    ("NoNodeCanHoldPod", "placement", "", "a pod asks for more than any node that exists or could be supplied: "
     "the job is rejected at submission", "gangkit"),
    ("NotSubmitted", "submission", "", "the job's submit time is after the end of the run", "gangkit"),
    # Kueue (quota)
    ("Pending", "quota", "quota", "the workload waits for quota (its QuotaReserved condition is False)",
     "Kueue: Workload condition reason"),
    ("Inadmissible", "quota", "quota", "the workload cannot be considered: its LocalQueue or ClusterQueue is missing "
     "or stopped, or it is parked", "Kueue: Workload condition reason"),
    ("Preempted", "quota", "", "evicted by Kueue to make room for a pending workload", "Kueue: eviction reason"),
    ("PodsReadyTimeout", "quota", "", "waitForPodsReady: the pods were not all ready in time; evicted and requeued "
     "with backoff", "Kueue: eviction reason"),
    ("RequeuingLimitExceeded", "quota", "", "waitForPodsReady: backoffLimitCount requeues used up; the workload is "
     "deactivated", "Kueue: deactivation reason"),
    # admission checks (Kueue's ProvisioningRequest check)
    ("ProvisioningRequestPending", "admission_check", "admission_check", "quota reserved; the ProvisioningRequest "
     "is not Provisioned yet", "gangkit (Kueue: AdmissionCheck state Pending)"),
    ("AdmissionCheckRetry", "admission_check", "", "the ProvisioningRequest failed; the workload is evicted and "
     "retried after a backoff", "gangkit (Kueue: AdmissionCheck state Retry)"),
    ("AdmissionCheckRejected", "admission_check", "", "the ProvisioningRequest failed for the last time; the "
     "workload is deactivated", "gangkit (Kueue: AdmissionCheck state Rejected)"),
    # placement: kube-scheduler
    ("Unschedulable", "placement", "placement", "pods do not fit on any node now (pod-by-pod placement)",
     "kube-scheduler: PodScheduled condition reason"),
    ("Preempted", "placement", "", "evicted by a placement layer's preemption (kube-scheduler, Volcano's "
     "preempt action)", "kube-scheduler, Volcano"),
    # placement: Volcano
    ("GangCannotFit", "placement", "placement", "the whole gang does not fit on the nodes there are; nothing is "
     "held", "gangkit (Volcano: PodGroup Unschedulable)"),
    ("PodsCannotFit", "placement", "placement", "the gang is ready; its pods above minMember do not fit now",
     "gangkit"),
    ("WaitingForSession", "placement", "placement", "it fits now; it is placed at the next session (or waits "
     "behind a job that blocks its queue)", "gangkit"),
    ("WaitingForReservation", "placement", "placement", "it holds a reservation in the future (easy- or "
     "conservative-backfill)", "gangkit"),
    ("QueueOverDeserved", "placement", "placement", "its pods fit, but would take its Volcano queue above its "
     "deserved share", "gangkit (Volcano proportion plugin)"),
    ("QueueCapabilityExceeded", "placement", "placement", "the PodGroup stays Pending: its minimum would take its "
     "queue above its capability", "gangkit (Volcano enqueue action)"),
    ("ClusterOverused", "placement", "placement", "the PodGroup stays Pending: its minimum does not fit the idle "
     "room times the overcommit factor", "gangkit (Volcano overcommit plugin)"),
    ("Reclaimed", "placement", "", "evicted by Volcano's reclaim action for a queue below its deserved share",
     "Volcano"),
    # placement: coscheduling and kube-gang (the Permit waiting room)
    ("WaitingAtPermit", "placement", "placement", "some pods wait at Permit holding their nodes until the group "
     "is complete or its timeout", "scheduler-plugins Coscheduling"),
    ("PermitTimeout", "placement", "", "the group did not complete within its scheduleTimeoutSeconds; every waiting "
     "pod is rejected", "scheduler-plugins Coscheduling"),
    ("PodGroupRejected", "placement", "", "a pod was unschedulable with too many of minMember missing; the group's "
     "waiting pods are rejected", "scheduler-plugins Coscheduling"),
    ("PodGroupBackoff", "placement", "placement", "the group failed recently and is backed off", "scheduler-plugins "
     "Coscheduling"),
    ("GangRejected", "placement", "placement", "the group was rejected and waits for capacity to be freed",
     "gangkit"),
    ("NotEnoughPods", "placement", "placement", "fewer pods exist than minMember: none is scheduled",
     "scheduler-plugins Coscheduling"),
    ("WaitingForPods", "placement", "placement", "fewer pods exist than minCount: they wait at PreEnqueue",
     "Kubernetes 1.35 GangScheduling plugin"),
    ("GangSchedulingTimeout", "placement", "", "the gang did not complete at Permit within the fixed timeout; "
     "every waiting pod is rejected", "Kubernetes 1.35 GangScheduling plugin"),
    # placement: YuniKorn
    ("PlaceholdersPending", "placement", "placement", "placeholders hold capacity until all are allocated or "
     "their timeout", "YuniKorn"),
    ("PlaceholderTimeout", "placement", "", "placeholders timed out (gangSchedulingStyle Soft): released, the real "
     "pods are scheduled one by one", "YuniKorn"),
    ("GangSchedulingFailed", "placement", "", "placeholders timed out (gangSchedulingStyle Hard): the application "
     "fails", "YuniKorn"),
    # restart churn (gangkit.engine.churn): the training launcher in a pod, and the Job controller
    ("RendezvousTimeout", "launcher", "", "a started pod of a sync job waited longer than its rendezvous timeout for "
     "the other pods of its job; the launcher gives up and the pod fails (the real message is torchrun's "
     "RendezvousTimeoutError in the pod's log)", "gangkit (PyTorch elastic: RendezvousTimeoutError)"),
    ("BackoffLimitExceeded", "job-controller", "", "more pods of the Job failed than its spec.backoffLimit: the Job is "
     "Failed for good and its remaining pods are deleted", "Kubernetes 1.35: Job condition reason"),
    # node suppliers
    ("Consolidation", "karpenter", "", "the node was deleted by consolidation; its pods are evicted",
     "Karpenter: disruption reason"),
    ("ScaleDown", "autoscaler", "", "the node was removed by scale-down; its pods are evicted",
     "cluster-autoscaler"),
    ("NodeRemoved", "autoscaler", "", "the node never became ready and was removed; its pods are evicted",
     "cluster-autoscaler"),
    # Kueue causes (Reason.cause of a quota Pending)
    ("QuotaExhausted", "diagnosis", "quota", "Kueue: not enough unused quota in its ClusterQueue (and its cohort) "
     "for the whole workload, now", "gangkit"),
    ("QuotaTooSmall", "diagnosis", "quota", "Kueue: the workload asks for more than its ClusterQueue can ever have "
     "(nominal quota plus borrowing); it stays inadmissible, as Kueue never rejects for lack of quota", "gangkit"),
    # the diagnosis (Result.diagnose), in the order a job meets them
    ("QueueMissing", "diagnosis", "quota", "Kueue: the workload's LocalQueue (or the ClusterQueue behind it) does not "
     "exist; Kueue leaves it pending, QuotaReserved False with reason Inadmissible", "gangkit"),
    ("Queued", "diagnosis", "quota", "Kueue: quota would allow it, but it waits its turn", "gangkit"),
    ("AdmissionCheck", "diagnosis", "admission_check", "quota reserved; an admission check has not said Ready yet",
     "gangkit"),
    ("WaitingForNodes", "diagnosis", "node_*", "admitted; nodes a supplier launched for it are not ready yet",
     "gangkit"),
    ("NodePoolLimit", "diagnosis", "placement", "cannot fit, and the provisioner will not launch a node: each "
     "NodePool's limits (spec.limits on nvidia.com/gpu, cpu, memory: GPUs, cores, bytes) leave too little for "
     "every instance type it allows that holds the pods (or every NodePool is static)", "gangkit"),
    ("ConsumingProvisioningRequest", "diagnosis", "placement", "cannot fit, and its pods consume a ProvisioningRequest "
     "(annotation autoscaling.x-k8s.io/consume-provisioning-request), so cluster-autoscaler scales up for none of "
     "them, whatever the request's state; CA's event on each pod (type Normal, no reason) says \"Unschedulable pod "
     "didn't trigger scale-up, because it's consuming ProvisioningRequest <namespace>/<name>\"",
     "gangkit (cluster-autoscaler 1.35: processors/provreq/pods_filter.go)"),
    ("PartiallyPlaced", "diagnosis", "placement", "pod-by-pod placement: some pods bound and hold GPUs without "
     "progress, the others unschedulable", "gangkit"),
    ("Rejected", "diagnosis", "", "no node could ever hold one of its pods", "gangkit"),
    ("Running", "diagnosis", "", "started, progressing", "gangkit"),
    ("Finished", "diagnosis", "", "finished", "gangkit"),
    ("Deactivated", "diagnosis", "", "taken out by an admission layer", "gangkit"),
    # the diagnosis of restart churn (gangkit.engine.churn: RestartChurn.record gives the figures)
    ("PodRestartBackoff", "diagnosis", "placement", "restart churn: some of its pods failed their rendezvous; the "
     "Job controller creates them again when its backoff has passed", "gangkit"),
    ("Failed", "diagnosis", "", "the Job failed for good (BackoffLimitExceeded)", "gangkit"),
)

#: The terminal state of a job at the end of a run (exactly one per job) -> its meaning.
JOB_STATES: dict[str, str] = {
    "Finished": "ran to completion",
    "Deadlocked": "holds capacity without progress when nothing can change any more",
    "WaitingAtEnd": "still waiting, holding nothing, when the run ends (under Kueue: inadmissible, with its reason)",
    "RunningAtEnd": "started, still running when the horizon cuts the run",
    "Rejected": "no node could ever hold one of its pods; refused with a reason at submission",
    "Deactivated": "taken out by an admission layer (e.g. Kueue after too many waitForPodsReady requeues)",
    "Failed": "the Job failed for good: more of its pods failed than its backoffLimit (reason BackoffLimitExceeded); "
              "it holds nothing",
}


def describe(code: str, layer: str = "") -> Code:
    """The catalogue entry of ``code`` (given by ``layer`` when two layers share the code)."""
    entry = CATALOGUE.get(f"{layer}:{code}") if layer else None
    return entry or CATALOGUE[code]
