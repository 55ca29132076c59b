"""Jobs, the pods they are made of, and how a job makes progress.

Picture a distributed training job as a rowing crew: the boat only moves when
every rower is in their seat. A ``sync`` job (all-reduce data or tensor
parallel training) is such a crew: it progresses only while *all* its pods
run. An ``independent`` job (a batch of map tasks) is a group of swimmers:
each pod progresses on its own, and the job is done when the last one is.

A job is a list of :class:`PodSet` objects (a master and its workers, say),
each with a count and a per-pod request. Kubernetes gives every pod its GPUs
from one node; a job never splits a pod across nodes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal

from gangkit.model.errors import Problem, ScenarioError
from gangkit.model.quantity import MAX_DURATION_S, MAX_JOB_PODS, MAX_QUANTITY, shown
from gangkit.model.resources import Resources
from gangkit.model.snapshot import JobSnapshot

Progress = Literal["sync", "independent"]
PROGRESS_MODES = ("sync", "independent")
Controller = Literal["batch", "volcano"]
CONTROLLERS = ("batch", "volcano")
GANG_STYLES = ("Soft", "Hard")  # YuniKorn's gangSchedulingStyle
BATCH_JOB, JOBSET = "batch/job", "jobset.x-k8s.io/jobset"
PYTORCHJOB, MPIJOB = "kubeflow.org/pytorchjob", "kubeflow.org/mpijob"
TFJOB, JAXJOB = "kubeflow.org/tfjob", "kubeflow.org/jaxjob"
PADDLEJOB, XGBOOSTJOB = "kubeflow.org/paddlejob", "kubeflow.org/xgboostjob"
POD, DEPLOYMENT, STATEFULSET = "pod", "deployment", "statefulset"
LEADERWORKERSET = "leaderworkerset.x-k8s.io/leaderworkerset"
#: The kinds a job can be written as, by the name of Kueue's integration for it (Kueue's Configuration
#: ``integrations.frameworks``): a batch/v1 Job (or, with ``controller="volcano"``, a Volcano Job), a JobSet,
#: Kubeflow's PyTorchJob, TFJob, JAXJob, PaddleJob and XGBoostJob (training-operator v1) and MPIJob (mpi-operator
#: v2beta1), bare Pods (and a ReplicaSet's), a Deployment's, a StatefulSet's (gangkit.manifests.apps), a
#: LeaderWorkerSet's group (gangkit.manifests.lws).
FRAMEWORKS = (BATCH_JOB, JOBSET, PYTORCHJOB, MPIJOB, POD, DEPLOYMENT, STATEFULSET, TFJOB, JAXJOB, PADDLEJOB, XGBOOSTJOB,
              LEADERWORKERSET)
DEFAULT_BACKOFF_LIMIT = 6  # batch/v1 JobSpec.backoffLimit default (Kubernetes 1.35)


@dataclass(frozen=True)
class PodSet:
    """``count`` identical pods, each asking for ``gpus`` GPUs (and optional CPU and memory).

    ``cpu`` is in cores and ``memory`` in bytes, as Kubernetes quantities
    resolve; ``node_selector`` restricts the pods to nodes with those labels.

    ``one_per_node``: no two pods of this pod set of one job share a node. It
    models the pod template's required pod anti-affinity on
    ``kubernetes.io/hostname`` whose label selector picks the job's own pods
    (``affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution``;
    kube-scheduler's InterPodAffinity Filter, Kubernetes 1.35). Pods of other
    pod sets and other jobs may share a node with them.
    """

    name: str = "workers"
    count: int = 1
    gpus: int = 1
    cpu: float = 0.0
    memory: int = 0
    node_selector: tuple[tuple[str, str], ...] = ()
    min_count: int | None = None  # Kueue partial admission: the fewest pods worth starting with
    min_member: int | None = None  # Volcano minTaskMember of this role (a Volcano Job task's minAvailable)
    one_per_node: bool = False  # required pod anti-affinity on kubernetes.io/hostname among these pods

    def __post_init__(self) -> None:
        if isinstance(self.node_selector, dict):
            object.__setattr__(self, "node_selector", tuple(sorted(self.node_selector.items())))
        # made once: the fields are frozen, and placement asks for it at every node choice
        # (not a field: equality, hashing, repr and dataclasses.replace see the fields alone)
        object.__setattr__(self, "_request", (self.gpus, self.cpu, self.memory, self.node_selector))

    @property
    def request(self) -> tuple:
        """The shape of one pod's request: what placement needs to know about it."""
        return self._request


@dataclass(slots=True)
class Job:
    """A job: pods, priority, queue, when it is submitted and how long it must run.

    ``run_time`` is the time the job needs *while progressing*; a sync job
    that holds only some of its GPUs does not progress at all. ``min_member``
    is the gang size a gang scheduler waits for (Volcano's PodGroup
    ``minMember``; default: every pod); it may exceed the pods, as the API
    server allows, and the job then waits for ever under a gang layer
    (:attr:`gang_larger_than_pods`). ``max_run_time`` is the declared
    maximum (Kubernetes ``activeDeadlineSeconds``), which backfilling uses.
    ``checkpoint_interval``: after an eviction a sync job restarts from its
    last checkpoint; ``None`` means it restarts from zero.

    Volcano's view of the job (:mod:`gangkit.volcano.scheduler`): ``volcano_queue`` is
    the PodGroup's ``spec.queue``; ``controller`` says who makes the pods:
    ``batch`` (a batch/v1 Job joined to a PodGroup: its pods exist, Pending,
    from submission) or ``volcano`` (a batch.volcano.sh Job: its pods are
    created only once the PodGroup is Inqueue); ``min_resources`` is the
    PodGroup's ``spec.minResources`` (a ``volcano`` Job computes it from its
    tasks when left out; a ``batch`` Job without it is always enqueued).

    Per-job settings of the holding gang schedulers (``None``: the
    scheduler's default): ``schedule_timeout`` is the coscheduling PodGroup's
    ``scheduleTimeoutSeconds`` (how long placed pods wait at Permit);
    ``placeholder_timeout`` and ``gang_style`` are YuniKorn's
    ``placeholderTimeoutInSeconds`` and ``gangSchedulingStyle`` (``Soft`` or
    ``Hard``). ``placeholder_request`` is the request of each of YuniKorn's
    placeholder pods, its task group's ``minResource`` (``None``: the pods'
    own requests); only the ``yunikorn`` layer reads it
    (:mod:`gangkit.placement.yunikorn` says what a size that differs does).

    Restart churn (:mod:`gangkit.engine.churn`): ``rendezvous_timeout`` is
    how long a started pod of a ``sync`` job waits for all pods of its job to
    run before its training launcher gives up and the pod fails (torchrun's
    rendezvous ``join_timeout``; ``None``: it waits for ever, and no pod ever
    fails). The clock of each pod starts when that pod starts running; once
    every pod runs, the rendezvous is complete and no pod fails any more,
    until an eviction restarts the job. Pods of ``independent`` jobs wait for
    nobody and never fail this way. ``backoff_limit`` is the Job's
    ``spec.backoffLimit``: once more pods have failed than that, the Job is
    Failed for good (it only matters when pods fail).

    ``framework`` is the kind the job is written as, named as Kueue names its
    integrations (:data:`FRAMEWORKS`): ``batch/job`` (one pod set), a JobSet
    (a pod set per replicatedJob), a PyTorchJob or MPIJob (a pod set per
    replica type), bare Pods, a Deployment's or StatefulSet's pods, one group
    of a LeaderWorkerSet (:mod:`gangkit.manifests.training`,
    :mod:`gangkit.manifests.apps`, :mod:`gangkit.manifests.lws`). Only
    the manifests read and written differ: their pods exist from submission,
    as a batch/v1 Job's do, so the simulation is the same. ``kueue_managed``
    False: Kueue does not manage the job (a manifest without the queue-name
    label, :func:`gangkit.kueue.manifests.read_for_scenario`): a ``kueue+``
    stack hands it to the placement layer at once, as if Kueue were not there.

    ``elastic``: a ``sync`` job whose throughput follows its workers (elastic
    data-parallel training, ``torchrun --nnodes=MIN:MAX``): admitted with
    ``n`` of its ``N`` pods (Kueue's partial admission, ``min_count``), it
    needs ``run_time x N / n`` seconds. All admitted pods still progress
    together. (A simplification: real scaling is sublinear, and gangkit does
    not grow a running job when more GPUs free up.)

    ``snapshot``: where the job stood in a live cluster's snapshot
    (:class:`~gangkit.model.snapshot.JobSnapshot`: admitted, pods bound, for
    how long they had run); None for a job that starts from nothing.

    ``volcano_not_preemptable``: the names of the pod sets whose pods carry
    Volcano's ``volcano.sh/preemptable: "false"`` (or whose PodGroup does):
    Volcano's preempt and reclaim never choose them as victims
    (:mod:`gangkit.volcano.actions.preempt`). Empty (the default): every pod
    may be a victim, as Volcano assumes of a pod without the annotation.

    ``sla_waiting_time``: the PodGroup's ``sla-waiting-time`` annotation, in
    seconds: how long the job may wait before Volcano's sla plugin puts it
    first and lets it through enqueue (:mod:`gangkit.volcano.plugins.sla`;
    it does something only when the scenario's Volcano setup enables the
    plugin). None: the plugin's own ``sla-waiting-time``, if any.

    ``consume_provisioning_request``: the name its pods give in
    cluster-autoscaler's ``autoscaling.x-k8s.io/consume-provisioning-request``
    annotation: they are to run on the capacity that ProvisioningRequest (in
    the job's namespace) booked, and cluster-autoscaler never scales up for
    them (:mod:`gangkit.supply.provisioning_request`). None: no annotation.

    ``gang_object``: the object that holds the job's gang, as a manifest names it
    (``PodGroup pg1``, ``Workload train``), read from the input; only the diagnosis's
    words use it (:mod:`gangkit.results.diagnosis`). None: a job made in Python, or one
    whose gang object is the job's own (a Volcano Job's PodGroup). Not compared: two
    jobs that differ only in it simulate alike.
    """

    name: str
    pod_sets: list[PodSet]
    run_time: float
    submit_time: float = 0.0
    priority: int = 0
    queue: str = "default"
    progress: Progress = "sync"
    min_member: int | None = None
    max_run_time: float | None = None
    namespace: str | None = None
    checkpoint_interval: float | None = None
    labels: dict[str, str] = field(default_factory=dict)
    volcano_queue: str = "default"
    controller: Controller = "batch"
    min_resources: Resources | None = None
    schedule_timeout: float | None = None
    placeholder_timeout: float | None = None
    gang_style: str | None = None
    rendezvous_timeout: float | None = None
    backoff_limit: int = DEFAULT_BACKOFF_LIMIT
    framework: str = BATCH_JOB
    kueue_managed: bool = True
    elastic: bool = False
    snapshot: JobSnapshot | None = None
    placeholder_request: Resources | None = None
    volcano_not_preemptable: tuple[str, ...] = ()
    sla_waiting_time: float | None = None
    consume_provisioning_request: str | None = None
    gang_object: str | None = field(default=None, compare=False, repr=False)

    @property
    def key(self) -> str:
        """``namespace/name``, or the bare name when there is no namespace."""
        return f"{self.namespace}/{self.name}" if self.namespace else self.name

    @property
    def pod_count(self) -> int:
        return sum(ps.count for ps in self.pod_sets)

    @property
    def gpus(self) -> int:
        """GPUs the whole job asks for (all pods together)."""
        return sum(ps.count * ps.gpus for ps in self.pod_sets)

    @property
    def gang_size(self) -> int:
        """How many pods a gang scheduler must place at once (minMember)."""
        return self.pod_count if self.min_member is None else self.min_member

    @property
    def gang_larger_than_pods(self) -> bool:
        """The gang asks for more members than the job has pods: a gang layer never places it.

        Kubernetes accepts it (nothing checks a PodGroup's ``minMember`` against the pods that
        name it); the pods wait for a quorum that never comes: Coscheduling's PreFilter refuses
        each pod, Kubernetes' GangScheduling plugin holds them at PreEnqueue, Volcano's gang
        plugin finds the job invalid (``JobValid``: not enough valid tasks). YuniKorn creates
        ``minMember`` placeholders, so the job runs once they are all allocated.
        """
        return self.min_member is not None and self.min_member > self.pod_count

    def gang_label(self, kind: str = "PodGroup") -> str:
        """How a layer's words name the object holding this job's gang: the one the manifests named
        (``gang_object``, e.g. ``PodGroup pg1 (of pause)``), else ``<kind> of <job>``."""
        return f"{self.gang_object} (of {self.name})" if self.gang_object else f"{kind} of {self.name}"

    def problems(self) -> list[Problem]:
        """Every way this job is invalid (empty when it is valid): the rows of :data:`_JOB_HEAD_CHECKS`,
        then those of :data:`_POD_SET_CHECKS` for each pod set, then those of :data:`_JOB_CHECKS`."""
        obj = f"Job {self.key}"
        out = [Problem(obj, f, msg) for f, check in _JOB_HEAD_CHECKS if (msg := check(self)) is not None]
        for i, ps in enumerate(self.pod_sets):
            out += [Problem(obj, f"pod_sets[{i}].{f}", msg) for f, check in _POD_SET_CHECKS
                    if (msg := check(ps)) is not None]
        out += [Problem(obj, f, msg) for f, check in _JOB_CHECKS if (msg := check(self)) is not None]
        return out


def job(
    name: str,
    pods: int = 1,
    gpus: int = 1,
    run_time: float = 600.0,
    *,
    submit_time: float = 0.0,
    priority: int = 0,
    queue: str = "default",
    progress: Progress = "sync",
    min_member: int | None = None,
    **extra,
) -> Job:
    """A job of ``pods`` identical workers with ``gpus`` GPUs each: the two-line way to make one.

    >>> job("X", pods=3, gpus=1, run_time=300).gpus
    3
    """
    return Job(
        name=name,
        pod_sets=[PodSet("workers", pods, gpus)],
        run_time=run_time,
        submit_time=submit_time,
        priority=priority,
        queue=queue,
        progress=progress,
        min_member=min_member,
        **extra,
    )


def validate_jobs(jobs: list[Job]) -> None:
    """Raise one :class:`ScenarioError` listing every problem in ``jobs``."""
    problems: list[Problem] = []
    seen: set[str] = set()
    for j in jobs:
        if not _plainly_valid(j):
            problems.extend(j.problems())
        key = j.key
        if key in seen:
            problems.append(Problem(f"Job {key}", "name", "expected a unique name; another job has it"))
        seen.add(key)
    if problems:
        raise ScenarioError(problems)


def _plainly_valid(j: Job) -> bool:
    """A quick screen for the common job (plain fields, no optional settings): True only when
    :meth:`Job.problems` would find nothing. Streams of millions of jobs pass here at a fraction
    of the cost; any other job gets the full check, which names every problem."""
    if not (j.name and j.pod_sets and j.progress in PROGRESS_MODES and j.controller in CONTROLLERS
            and j.min_member is None and j.max_run_time is None and j.checkpoint_interval is None
            and j.min_resources is None and j.schedule_timeout is None and j.placeholder_timeout is None
            and j.gang_style is None and type(j.priority) is int and type(j.volcano_queue) is str and j.volcano_queue
            and j.rendezvous_timeout is None and type(j.backoff_limit) is int and j.backoff_limit >= 0
            and j.framework == BATCH_JOB and j.kueue_managed is True and j.elastic is False and j.snapshot is None
            and j.placeholder_request is None and j.volcano_not_preemptable == () and j.sla_waiting_time is None
            and j.consume_provisioning_request is None):
        return False
    rt, st = j.run_time, j.submit_time
    if not ((type(rt) is float or type(rt) is int) and 0 < rt <= MAX_DURATION_S
            and (type(st) is float or type(st) is int) and 0 <= st <= MAX_DURATION_S):
        return False
    for ps in j.pod_sets:
        c, g, cpu, mem = ps.count, ps.gpus, ps.cpu, ps.memory
        if not (type(c) is int and 1 <= c <= MAX_JOB_PODS and type(g) is int and 0 <= g <= MAX_QUANTITY
                and type(mem) is int and 0 <= mem <= MAX_QUANTITY
                and (type(cpu) is float or type(cpu) is int) and 0 <= cpu <= MAX_QUANTITY
                and ps.min_count is None and ps.min_member is None and ps.one_per_node is False):
            return False
    return True


# The validators of Job.problems: each takes the pod set or the job and returns what is wrong with one
# field (the problem's text), or None. The tables give their order, which is the order of the problems.

def _ps_count(ps: PodSet) -> str | None:
    if not _whole(ps.count) or not 1 <= ps.count <= MAX_JOB_PODS:
        return f"expected a whole number from 1 to {MAX_JOB_PODS}, got {shown(ps.count)}"
    return None


def _ps_gpus(ps: PodSet) -> str | None:
    if not _whole(ps.gpus) or not 0 <= ps.gpus <= MAX_QUANTITY:
        return f"expected a whole number of GPUs from 0 to 2^63-1, got {shown(ps.gpus)}"
    return None


def _ps_cpu(ps: PodSet) -> str | None:
    if not _finite(ps.cpu) or not 0 <= ps.cpu <= MAX_QUANTITY:
        return f"expected cores from 0 to 2^63-1, got {shown(ps.cpu)}"
    return None


def _ps_memory(ps: PodSet) -> str | None:
    if not _whole(ps.memory) or not 0 <= ps.memory <= MAX_QUANTITY:
        return f"expected bytes from 0 to 2^63-1, got {shown(ps.memory)}"
    return None


def _ps_min_count(ps: PodSet) -> str | None:
    """Kueue's partial admission: ``minCount`` is at least 1 and at most the pod set's count."""
    if ps.min_count is None:
        return None
    if not _whole(ps.count):  # the count is reported on its own: only the kind of minCount is checked here
        return None if _whole(ps.min_count) and ps.min_count >= 1 else f"expected a whole number >= 1, got {ps.min_count!r}"
    if not _whole(ps.min_count) or not 1 <= ps.min_count <= ps.count:
        return f"expected a whole number from 1 to {ps.count}, got {ps.min_count!r}"
    return None


def _ps_min_member(ps: PodSet) -> str | None:
    """Volcano's task ``minAvailable`` (minTaskMember): from 0 to the task's replicas."""
    if ps.min_member is None:
        return None
    if not _whole(ps.count):  # the count is reported on its own
        return None if _whole(ps.min_member) and ps.min_member >= 0 else f"expected a whole number >= 0, got {ps.min_member!r}"
    if not _whole(ps.min_member) or not 0 <= ps.min_member <= ps.count:
        return f"expected a whole number from 0 to {ps.count}, got {ps.min_member!r}"
    return None


def _ps_one_per_node(ps: PodSet) -> str | None:
    if ps.one_per_node is not False and ps.one_per_node is not True:
        return f"expected True or False (one pod of the pod set per node), got {ps.one_per_node!r}"
    return None


#: (field of ``pod_sets[i]``, validator) rows, checked for each pod set in turn.
_POD_SET_CHECKS = (
    ("count", _ps_count),
    ("gpus", _ps_gpus),
    ("cpu", _ps_cpu),
    ("memory", _ps_memory),
    ("min_count", _ps_min_count),
    ("min_member", _ps_min_member),
    ("one_per_node", _ps_one_per_node),
)


def _check_name(j: Job) -> str | None:
    return None if j.name else "expected a non-empty name"


def _check_pod_sets(j: Job) -> str | None:
    return None if j.pod_sets else "expected at least one pod set"


def _check_run_time(j: Job) -> str | None:
    if not _finite(j.run_time) or not 0 < j.run_time <= MAX_DURATION_S:
        return f"expected a run time > 0 seconds, at most {MAX_DURATION_S:.0f}, got {shown(j.run_time)}"
    return None


def _check_submit_time(j: Job) -> str | None:
    if not _finite(j.submit_time) or not 0 <= j.submit_time <= MAX_DURATION_S:
        return f"expected a submit time >= 0 seconds, at most {MAX_DURATION_S:.0f}, got {shown(j.submit_time)}"
    return None


def _check_priority(j: Job) -> str | None:
    return None if _whole(j.priority) else f"expected a whole number, got {j.priority!r}"


def _check_progress(j: Job) -> str | None:
    if j.progress not in PROGRESS_MODES:
        return f"expected one of {', '.join(PROGRESS_MODES)}, got {j.progress!r}"
    return None


def _check_min_member(j: Job) -> str | None:
    """The gang size (a PodGroup's ``minMember``, a pod group's ``minCount``): a whole number >= 1.

    It may exceed the job's pods: the API servers accept such a PodGroup (scheduler-plugins' install
    guide makes one on purpose), and each gang layer keeps the pods pending for a quorum that never
    comes (see :attr:`Job.gang_larger_than_pods`). Only a Volcano Job's own ``spec.minAvailable`` is
    refused above its replicas, by Volcano's admission webhook, where its manifest is read.
    """
    if j.min_member is not None and (not _whole(j.min_member) or not 1 <= j.min_member <= MAX_JOB_PODS):
        return f"expected a whole number from 1 to {MAX_JOB_PODS}, got {j.min_member!r}"
    return None


def _seconds_or_none(name: str, expected: str = "expected seconds > 0"):
    """A validator of an optional duration field: None, or finite seconds > 0."""
    def check(j: Job) -> str | None:
        value = getattr(j, name)
        if value is not None and (not _finite(value) or value <= 0):
            return f"{expected}, got {value!r}"
        return None
    check.__name__ = f"_check_{name}"
    return check


def _check_volcano_queue(j: Job) -> str | None:
    if not isinstance(j.volcano_queue, str) or not j.volcano_queue:
        return f"expected a Volcano Queue name, got {j.volcano_queue!r}"
    return None


def _check_controller(j: Job) -> str | None:
    if j.controller not in CONTROLLERS:
        return f"expected one of {', '.join(CONTROLLERS)}, got {j.controller!r}"
    return None


def _check_min_resources(j: Job) -> str | None:
    """Volcano's PodGroup ``spec.minResources``: amounts >= 0."""
    if j.min_resources is not None and (
        not isinstance(j.min_resources, Resources) or any(not a >= 0 for a in j.min_resources)
    ):
        return f"expected Resources with amounts >= 0, got {j.min_resources!r}"
    return None


def _check_gang_style(j: Job) -> str | None:
    """YuniKorn's ``gangSchedulingStyle``: Soft or Hard."""
    if j.gang_style is not None and j.gang_style not in GANG_STYLES:
        return f"expected one of {', '.join(GANG_STYLES)}, got {j.gang_style!r}"
    return None


def _check_placeholder_request(j: Job) -> str | None:
    """YuniKorn's task group ``minResource``: what one placeholder pod requests."""
    if j.placeholder_request is not None and not _one_pod(j.placeholder_request):
        return ("expected Resources of one pod (whole GPUs, cores and whole bytes, each from 0 "
                f"to 2^63-1), got {j.placeholder_request!r}")
    return None


def _check_elastic(j: Job) -> str | None:
    if j.elastic is not False and (j.elastic is not True or j.progress != "sync"):
        return f"expected True only for a sync job (elastic training), got {j.elastic!r} with progress {j.progress!r}"
    return None


def _check_backoff_limit(j: Job) -> str | None:
    """batch/v1 ``spec.backoffLimit``: a whole number >= 0."""
    if not _whole(j.backoff_limit) or j.backoff_limit < 0:
        return f"expected a whole number of failed pods >= 0, got {j.backoff_limit!r}"
    return None


def _check_snapshot(j: Job) -> str | None:
    if j.snapshot is not None and not isinstance(j.snapshot, JobSnapshot):
        return f"expected a JobSnapshot (or None), got {type(j.snapshot).__name__}"
    return None


def _check_snapshot_admission(j: Job) -> str | None:
    """Kueue's ``status.admission.podSetAssignments``: one per pod set (checked only of a JobSnapshot)."""
    snap = j.snapshot
    if isinstance(snap, JobSnapshot) and snap.admission is not None and j.pod_sets and (
            len(snap.admission.counts) != len(j.pod_sets)):
        return (f"expected a pod set assignment for each of the {len(j.pod_sets)} pod sets, "
                f"got {len(snap.admission.counts)}")
    return None


def _check_volcano_not_preemptable(j: Job) -> str | None:
    """Volcano's ``volcano.sh/preemptable: "false"``: given by distinct names of the job's pod sets."""
    names = [ps.name for ps in j.pod_sets]
    protected = j.volcano_not_preemptable
    if not isinstance(protected, tuple) or any(not isinstance(n, str) or n not in names for n in protected) \
            or len(set(protected)) != len(protected):
        return (f"expected a tuple of distinct pod set names (of {', '.join(map(repr, names))}) "
                f"whose pods are not preemptable, got {protected!r}")
    return None


def _check_consume_provisioning_request(j: Job) -> str | None:
    """cluster-autoscaler's ``autoscaling.x-k8s.io/consume-provisioning-request``: a non-empty name."""
    if j.consume_provisioning_request is not None and (
            not isinstance(j.consume_provisioning_request, str) or not j.consume_provisioning_request):
        return f"expected the name of a ProvisioningRequest (or None), got {j.consume_provisioning_request!r}"
    return None


def _check_framework(j: Job) -> str | None:
    """One of Kueue's integrations (:data:`FRAMEWORKS`)."""
    if j.framework not in FRAMEWORKS:
        return f"expected one of {', '.join(FRAMEWORKS)}, got {j.framework!r}"
    return None


def _check_framework_controller(j: Job) -> str | None:
    """Only a batch/v1 Job may be a Volcano Job: every other kind's pods are made at submission."""
    if j.framework in FRAMEWORKS and j.framework != BATCH_JOB and j.controller != "batch":
        return (f"{j.framework}'s pods are made at submission, as a batch/v1 Job's: expected controller "
                f"'batch', got {j.controller!r}")
    return None


#: (field, validator) rows of :meth:`Job.problems` checked before the pod sets' rows ...
_JOB_HEAD_CHECKS = (
    ("name", _check_name),
    ("pod_sets", _check_pod_sets),
)

#: ... and those checked after them, in the order the problems are listed.
_JOB_CHECKS = (
    ("run_time", _check_run_time),
    ("submit_time", _check_submit_time),
    ("priority", _check_priority),
    ("progress", _check_progress),
    ("min_member", _check_min_member),
    ("max_run_time", _seconds_or_none("max_run_time")),
    ("checkpoint_interval", _seconds_or_none("checkpoint_interval")),
    ("volcano_queue", _check_volcano_queue),
    ("controller", _check_controller),
    ("min_resources", _check_min_resources),
    ("schedule_timeout", _seconds_or_none("schedule_timeout")),
    ("placeholder_timeout", _seconds_or_none("placeholder_timeout")),
    ("sla_waiting_time", _seconds_or_none("sla_waiting_time")),
    ("gang_style", _check_gang_style),
    ("placeholder_request", _check_placeholder_request),
    ("rendezvous_timeout", _seconds_or_none("rendezvous_timeout", "expected seconds > 0 (None: wait for ever)")),
    ("elastic", _check_elastic),
    ("backoff_limit", _check_backoff_limit),
    ("snapshot", _check_snapshot),
    ("snapshot.admission", _check_snapshot_admission),
    ("volcano_not_preemptable", _check_volcano_not_preemptable),
    ("consume_provisioning_request", _check_consume_provisioning_request),
    ("framework", _check_framework),
    ("framework", _check_framework_controller),
)


def _whole(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _one_pod(r) -> bool:
    """Resources one pod can request: whole GPUs, cores, whole bytes, each from 0 to 2^63-1."""
    return (isinstance(r, Resources) and all(_finite(a) and 0 <= a <= MAX_QUANTITY for a in r)
            and float(r.gpus).is_integer() and float(r.memory).is_integer())


def _finite(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)
