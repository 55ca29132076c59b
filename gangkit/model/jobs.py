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
POD, DEPLOYMENT, STATEFULSET = "pod", "deployment", "statefulset"
#: The kinds a job can be written as, by the name of Kueue's integration for it (Kueue's Configuration
#: ``integrations.frameworks``): a batch/v1 Job (or, with ``controller="volcano"``, a Volcano Job), a JobSet,
#: Kubeflow's PyTorchJob (training-operator v1) and MPIJob (mpi-operator v2beta1), bare Pods (and a ReplicaSet's),
#: a Deployment's, a StatefulSet's (gangkit.manifests.apps).
FRAMEWORKS = (BATCH_JOB, JOBSET, PYTORCHJOB, MPIJOB, POD, DEPLOYMENT, STATEFULSET)
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
    ``minMember``; default: every pod). ``max_run_time`` is the declared
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
    replica type), bare Pods, a Deployment's or StatefulSet's pods
    (:mod:`gangkit.manifests.training`, :mod:`gangkit.manifests.apps`). Only
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

    def problems(self) -> list[Problem]:
        """Every way this job is invalid (empty when it is valid)."""
        obj = f"Job {self.key}"
        out: list[Problem] = []

        def bad(fieldname: str, msg: str) -> None:
            out.append(Problem(obj, fieldname, msg))

        if not self.name:
            bad("name", "expected a non-empty name")
        if not self.pod_sets:
            bad("pod_sets", "expected at least one pod set")
        for i, ps in enumerate(self.pod_sets):
            where = f"pod_sets[{i}]"
            if not _whole(ps.count) or not 1 <= ps.count <= MAX_JOB_PODS:
                bad(f"{where}.count", f"expected a whole number from 1 to {MAX_JOB_PODS}, got {shown(ps.count)}")
            if not _whole(ps.gpus) or not 0 <= ps.gpus <= MAX_QUANTITY:
                bad(f"{where}.gpus", f"expected a whole number of GPUs from 0 to 2^63-1, got {shown(ps.gpus)}")
            if not _finite(ps.cpu) or not 0 <= ps.cpu <= MAX_QUANTITY:
                bad(f"{where}.cpu", f"expected cores from 0 to 2^63-1, got {shown(ps.cpu)}")
            if not _whole(ps.memory) or not 0 <= ps.memory <= MAX_QUANTITY:
                bad(f"{where}.memory", f"expected bytes from 0 to 2^63-1, got {shown(ps.memory)}")
            if ps.min_count is not None and (not _whole(ps.min_count) or not 1 <= ps.min_count <= ps.count):
                bad(f"{where}.min_count", f"expected a whole number from 1 to {ps.count}, got {ps.min_count!r}")
            if ps.min_member is not None and (not _whole(ps.min_member) or not 0 <= ps.min_member <= ps.count):
                bad(f"{where}.min_member", f"expected a whole number from 0 to {ps.count}, got {ps.min_member!r}")
            if ps.one_per_node is not False and ps.one_per_node is not True:
                bad(f"{where}.one_per_node", f"expected True or False (one pod of the pod set per node), "
                                             f"got {ps.one_per_node!r}")
        if not _finite(self.run_time) or not 0 < self.run_time <= MAX_DURATION_S:
            bad("run_time", f"expected a run time > 0 seconds, at most {MAX_DURATION_S:.0f}, got {shown(self.run_time)}")
        if not _finite(self.submit_time) or not 0 <= self.submit_time <= MAX_DURATION_S:
            bad("submit_time", f"expected a submit time >= 0 seconds, at most {MAX_DURATION_S:.0f}, "
                               f"got {shown(self.submit_time)}")
        if not _whole(self.priority):
            bad("priority", f"expected a whole number, got {self.priority!r}")
        if self.progress not in PROGRESS_MODES:
            bad("progress", f"expected one of {', '.join(PROGRESS_MODES)}, got {self.progress!r}")
        if self.min_member is not None and self.pod_sets and (
            not _whole(self.min_member) or not 1 <= self.min_member <= self.pod_count
        ):
            bad("min_member", f"expected a whole number from 1 to {self.pod_count}, got {self.min_member!r}")
        if self.max_run_time is not None and (not _finite(self.max_run_time) or self.max_run_time <= 0):
            bad("max_run_time", f"expected seconds > 0, got {self.max_run_time!r}")
        if self.checkpoint_interval is not None and (
            not _finite(self.checkpoint_interval) or self.checkpoint_interval <= 0
        ):
            bad("checkpoint_interval", f"expected seconds > 0, got {self.checkpoint_interval!r}")
        if not isinstance(self.volcano_queue, str) or not self.volcano_queue:
            bad("volcano_queue", f"expected a Volcano Queue name, got {self.volcano_queue!r}")
        if self.controller not in CONTROLLERS:
            bad("controller", f"expected one of {', '.join(CONTROLLERS)}, got {self.controller!r}")
        if self.min_resources is not None and (
            not isinstance(self.min_resources, Resources) or any(not a >= 0 for a in self.min_resources)
        ):
            bad("min_resources", f"expected Resources with amounts >= 0, got {self.min_resources!r}")
        for name in ("schedule_timeout", "placeholder_timeout", "sla_waiting_time"):
            value = getattr(self, name)
            if value is not None and (not _finite(value) or value <= 0):
                bad(name, f"expected seconds > 0, got {value!r}")
        if self.gang_style is not None and self.gang_style not in GANG_STYLES:
            bad("gang_style", f"expected one of {', '.join(GANG_STYLES)}, got {self.gang_style!r}")
        if self.placeholder_request is not None and not _one_pod(self.placeholder_request):
            bad("placeholder_request", "expected Resources of one pod (whole GPUs, cores and whole bytes, each from 0 "
                                       f"to 2^63-1), got {self.placeholder_request!r}")
        if self.rendezvous_timeout is not None and (not _finite(self.rendezvous_timeout) or self.rendezvous_timeout <= 0):
            bad("rendezvous_timeout", f"expected seconds > 0 (None: wait for ever), got {self.rendezvous_timeout!r}")
        if self.elastic is not False and (self.elastic is not True or self.progress != "sync"):
            bad("elastic", f"expected True only for a sync job (elastic training), got {self.elastic!r} with progress "
                           f"{self.progress!r}")
        if not _whole(self.backoff_limit) or self.backoff_limit < 0:
            bad("backoff_limit", f"expected a whole number of failed pods >= 0, got {self.backoff_limit!r}")
        if self.snapshot is not None and not isinstance(self.snapshot, JobSnapshot):
            bad("snapshot", f"expected a JobSnapshot (or None), got {type(self.snapshot).__name__}")
        elif self.snapshot is not None and self.snapshot.admission is not None and self.pod_sets and (
                len(self.snapshot.admission.counts) != len(self.pod_sets)):
            bad("snapshot.admission", f"expected a pod set assignment for each of the {len(self.pod_sets)} pod sets, "
                                      f"got {len(self.snapshot.admission.counts)}")
        names = [ps.name for ps in self.pod_sets]
        protected = self.volcano_not_preemptable
        if not isinstance(protected, tuple) or any(not isinstance(n, str) or n not in names for n in protected) \
                or len(set(protected)) != len(protected):
            bad("volcano_not_preemptable", f"expected a tuple of distinct pod set names (of {', '.join(map(repr, names))}) "
                                           f"whose pods are not preemptable, got {protected!r}")
        if self.consume_provisioning_request is not None and (
                not isinstance(self.consume_provisioning_request, str) or not self.consume_provisioning_request):
            bad("consume_provisioning_request", "expected the name of a ProvisioningRequest (or None), "
                                                f"got {self.consume_provisioning_request!r}")
        if self.framework not in FRAMEWORKS:
            bad("framework", f"expected one of {', '.join(FRAMEWORKS)}, got {self.framework!r}")
        elif self.framework != BATCH_JOB and self.controller != "batch":
            bad("framework", f"{self.framework}'s pods are made at submission, as a batch/v1 Job's: expected controller "
                             f"'batch', got {self.controller!r}")
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


def _whole(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _one_pod(r) -> bool:
    """Resources one pod can request: whole GPUs, cores, whole bytes, each from 0 to 2^63-1."""
    return (isinstance(r, Resources) and all(_finite(a) and 0 <= a <= MAX_QUANTITY for a in r)
            and float(r.gpus).is_integer() and float(r.memory).is_integer())


def _finite(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)
