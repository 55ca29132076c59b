"""Training jobs as they are submitted in practice: the JobSet, a set of batch/v1 Jobs started together.

A distributed training run is rarely one batch/v1 Job. It has roles (a
driver and its workers, a launcher and its ranks), each a Job of its own,
and something must create them together, give their pods stable names and
restart them together. The JobSet controller (``jobset.x-k8s.io/v1alpha2``,
kubernetes-sigs/jobset v0.12) does that: each ``spec.replicatedJobs[]``
entry is a Job template stamped out ``replicas`` times::

    apiVersion: jobset.x-k8s.io/v1alpha2
    kind: JobSet
    metadata:
      name: train
      labels: {kueue.x-k8s.io/queue-name: team-a}
      annotations: {gangkit/run-time: 2h}
    spec:
      replicatedJobs:
      - name: driver          # 1 Job of 1 pod
        template: {spec: {parallelism: 1, template: {spec: {containers: [...]}}}}
      - name: workers         # 2 Jobs of 4 pods: 8 pods
        replicas: 2
        template: {spec: {parallelism: 4, completions: 4, template: {spec: {containers: [...]}}}}

How gangkit reads it (a :class:`~gangkit.model.jobs.Job` with
``framework="jobset.x-k8s.io/jobset"``):

- **One pod set per replicatedJob**, named after it, of ``replicas x
  min(parallelism, completions)`` pods: the pod sets and counts of the
  Workload Kueue's JobSet integration creates (Kueue
  ``pkg/controller/jobs/jobset``, ``PodsCountPerReplica``). A replicatedJob
  of ``replicas: 0`` makes no pods and no pod set.
- **Pods exist from submission**: the child Jobs are created at once
  (``startupPolicyOrder: AnyOrder``, the default) and create their pods as
  batch/v1 Jobs do. ``InOrder`` start-up and ``dependsOn`` are not modelled
  (listed in the warning of fields gangkit does not read).
- **One priority**: Kueue takes the JobSet's priority from the first pod
  template naming a ``priorityClassName``; gangkit models one priority per
  job, so templates naming different classes are an error.
- **No gang of its own**: a JobSet is not all-or-nothing by itself. Kueue
  admits its Workload whole (quota for every pod set at once); a gang
  scheduler sees the pods' own labels and annotations, as for a batch/v1 Job
  (Volcano's ``scheduling.k8s.io/group-name``, scheduler-plugins'
  ``scheduling.x-k8s.io/pod-group``, YuniKorn's task groups; the JobSet CRD's
  pod template has no ``workloadRef``, so no Kubernetes Workload reference).
  gangkit models one gang per job: every template that
  names a gang must name the same one, and the gang size counts the pods of
  all replicatedJobs.
- **Failures**: gangkit's restart churn fails the JobSet once more pods have
  failed than the smallest child ``backoffLimit`` (the first child Job to
  fail fails the JobSet when ``failurePolicy.maxRestarts`` is 0, the
  default); JobSet restarts (``maxRestarts``) are not modelled.
- ``activeDeadlineSeconds``: the smallest of the child Jobs' (backfilling's
  estimate). gangkit's annotations (``gangkit/run-time``...) sit on the
  JobSet's own metadata, Kueue's queue label too.

Kueue's partial admission (``kueue.x-k8s.io/job-min-parallelism``) is for
batch/v1 Jobs only; on a JobSet it is reported and has no effect.

Kubeflow's v1 training kinds, still common in 2026 clusters: the
``PyTorchJob`` (``kubeflow.org/v1``, training-operator v1.9) and the
``MPIJob`` (``kubeflow.org/v2beta1``, mpi-operator v0.6). Each lists its
roles in a map of replica specs (``pytorchReplicaSpecs: {Master: ..., Worker: ...}``,
``mpiReplicaSpecs: {Launcher: ..., Worker: ...}``), each a pod template and
a ``replicas`` count (default 1):

- **One pod set per replica type**, in the operator's order (Master, Worker;
  Launcher, Worker), named in lower case (``master``, ``worker``,
  ``launcher``) with ``replicas`` pods: the Workload Kueue's kubeflow and
  mpijob integrations create. The operators' webhooks allow only those
  replica types, and one Master or Launcher.
- **The gang is the operator's**: run with a gang scheduler, the operator
  creates one PodGroup per job, named after it, of ``minMember`` =
  ``runPolicy.schedulingPolicy.minAvailable`` (default: every pod), with the
  policy's ``queue``, ``priorityClass`` and (scheduler-plugins)
  ``scheduleTimeoutSeconds``. Which gang scheduler the operator was started
  with is a flag of the operator, not of the job; gangkit reads it from the
  pods' ``schedulerName`` (``volcano``: a Volcano PodGroup;
  ``scheduler-plugins-scheduler``: a scheduler-plugins PodGroup). With any
  other scheduler a ``schedulingPolicy`` has no effect (reported).
- ``runPolicy.activeDeadlineSeconds`` and ``runPolicy.backoffLimit`` are the
  job's maximum run time and failed-pod limit. An MPIJob's
  ``launcherCreationPolicy: WaitForWorkersReady`` (the launcher created once
  the workers run) and a PyTorchJob's ``elasticPolicy`` are not modelled.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from gangkit.manifests import core
from gangkit.manifests.reader import (
    ANY,
    JOB_ANNOTATIONS,
    META,
    POD_SPEC,
    QUEUE_LABEL,
    ManifestObject,
    Reader,
    short,
    spec_of,
)
from gangkit.model.errors import Problem
from gangkit.model.jobs import DEFAULT_BACKOFF_LIMIT, JOBSET, MPIJOB, PYTORCHJOB, Job, PodSet
from gangkit.placement.manifests import (
    POD_GROUP_LABEL,
    SCHEDULING_POLICY,
    TASK_GROUP_NAME,
    TASK_GROUPS,
    GangObjects,
    read_gang,
)

__all__ = ["JOBSET_API", "KNOWN_FIELDS", "REPLICA_KINDS", "jobset_manifest", "read_jobset", "read_object",
           "read_replica_job", "read_trainjob", "replica_job_manifest", "replica_problems"]

JOBSET_API = "jobset.x-k8s.io/v1alpha2"
MIN_PARALLELISM = "kueue.x-k8s.io/job-min-parallelism"
_NAMES = dict.fromkeys

KNOWN_FIELDS: dict[str, dict] = {
    "JobSet": {
        "apiVersion": ANY, "kind": ANY, "metadata": META, "status": ANY,
        "spec": {
            # read, or without effect on scheduling; the others (successPolicy, failurePolicy, startupPolicy,
            # coordinator, volumeClaimPolicies, dependsOn) are listed in the warning as not modelled
            **_NAMES(["suspend", "network", "managedBy", "ttlSecondsAfterFinished"], ANY),
            "replicatedJobs": [{
                "name": ANY, "replicas": ANY, "groupName": ANY,
                "template": {"metadata": META, "spec": {
                    **core.KNOWN_FIELDS["Job"]["spec"],
                    "template": {"metadata": META, "spec": POD_SPEC}}},  # the CRD's pod spec has no 1.35 workloadRef
            }],
        },
    },
}
KNOWN_ANNOTATIONS = (*JOB_ANNOTATIONS, core.RENDEZVOUS_TIMEOUT)


@dataclass(frozen=True)
class ReplicaKind:
    """A Kubeflow job kind whose roles are a map of replica specs."""

    api_version: str
    field: str  # the map of replica specs under spec
    replica_types: tuple[str, ...]  # the ones the operator's webhook allows, in the operator's order
    single: str  # the replica type that has at most one replica (Master, Launcher)
    framework: str  # Kueue's integration name
    extra: tuple[str, ...]  # other spec fields of the CRD (accepted; the unmodelled ones are listed below)


REPLICA_KINDS = {
    "PyTorchJob": ReplicaKind("kubeflow.org/v1", "pytorchReplicaSpecs", ("Master", "Worker"), "Master", PYTORCHJOB,
                              ("nprocPerNode",)),
    "MPIJob": ReplicaKind("kubeflow.org/v2beta1", "mpiReplicaSpecs", ("Launcher", "Worker"), "Launcher", MPIJOB,
                          ("slotsPerWorker", "sshAuthMountPath", "mpiImplementation", "runLauncherAsWorker")),
}
POLICY_FIELDS = ("minAvailable", "queue", "priorityClass", "scheduleTimeoutSeconds")  # runPolicy.schedulingPolicy
GANG_SCHEDULERS = {"volcano": "Volcano", "scheduler-plugins-scheduler": "scheduler-plugins"}
for _kind, _rk in REPLICA_KINDS.items():
    KNOWN_FIELDS[_kind] = {
        "apiVersion": ANY, "kind": ANY, "metadata": META, "status": ANY,
        "spec": {**_NAMES(_rk.extra, ANY),
                 _rk.field: {"*": {"replicas": ANY, "restartPolicy": ANY, "template": {"metadata": META, "spec": POD_SPEC}}},
                 "runPolicy": {**_NAMES(["activeDeadlineSeconds", "backoffLimit", "cleanPodPolicy", "managedBy", "suspend",
                                         "ttlSecondsAfterFinished"], ANY),
                               "schedulingPolicy": _NAMES(POLICY_FIELDS, ANY)}},
    }

# Kubeflow Trainer v2 (trainer.kubeflow.org/v1alpha1): a TrainJob names a runtime, whose JobSet template it fills in
TRAINER_API = "trainer.kubeflow.org/v1alpha1"
ANCESTOR = "trainer.kubeflow.org/trainjob-ancestor-step"  # the label that marks a runtime's steps
VOLCANO_QUEUE = "scheduling.volcano.sh/queue-name"  # the annotation Trainer's volcano plugin reads the queue from
DEFAULT_TIMEOUT = 60  # podGroupPolicy.coscheduling.scheduleTimeoutSeconds default
STAND_INS = {"torch-distributed"}  # default ClusterTrainingRuntimes Trainer installs, which gangkit can stand in for
KNOWN_FIELDS["TrainJob"] = {
    "apiVersion": ANY, "kind": ANY, "metadata": META, "status": ANY,
    "spec": {"runtimeRef": _NAMES(["apiGroup", "kind", "name"], ANY), "suspend": ANY, "managedBy": ANY,
             "activeDeadlineSeconds": ANY,
             "trainer": _NAMES(["image", "command", "args", "env", "numNodes", "numProcPerNode", "resourcesPerNode"], ANY)},
}
for _kind in ("TrainingRuntime", "ClusterTrainingRuntime"):
    KNOWN_FIELDS[_kind] = {
        "apiVersion": ANY, "kind": ANY, "metadata": META,
        "spec": {"mlPolicy": _NAMES(["numNodes", "torch", "mpi", "jax", "xgboost", "flux"], ANY),
                 "podGroupPolicy": {"coscheduling": {"scheduleTimeoutSeconds": ANY}, "volcano": {}},
                 "template": {"metadata": META, "spec": KNOWN_FIELDS["JobSet"]["spec"]}},
    }


def read_object(r: Reader, doc: Mapping, where: str, role: str) -> ManifestObject | None:
    """Check one JobSet (its metadata, unknown fields and gangkit annotations); read later by :func:`read_jobset`."""
    return r.check_object(doc, where, KNOWN_FIELDS[role], KNOWN_ANNOTATIONS)


def read_jobset(r: Reader, o: ManifestObject, classes: dict, default_priority: int, groups: dict, used_groups: dict,
                gangs: GangObjects) -> Job | None:
    """A JobSet as one gangkit Job: a pod set per replicatedJob (see the module for every rule)."""
    obj = o.label
    meta = r.mapping(o.doc.get("metadata"), obj, "metadata")
    labels = r.strings(meta.get("labels"), obj, "metadata.labels")
    annotations = r.strings(meta.get("annotations"), obj, "metadata.annotations")
    spec = r.mapping(o.doc.get("spec"), obj, "spec")
    if MIN_PARALLELISM in annotations:
        r.notes.append(f"{obj}: metadata.annotations.{MIN_PARALLELISM} has no effect: Kueue's partial admission "
                       "is for batch/v1 Jobs, not JobSets")
    entries = spec.get("replicatedJobs")
    if not isinstance(entries, list) or not entries:
        r.error(obj, "spec.replicatedJobs", f"expected a list of at least one replicated Job, got {_shown(entries)}")
        return None
    roles = []  # (index, name, count, template metadata, pod spec) of each replicatedJob with pods
    seen: set[str] = set()
    ok = True
    deadlines, limits = [], []
    for i, entry in enumerate(entries):
        where = f"spec.replicatedJobs[{i}]"
        name = entry.get("name")
        if not isinstance(name, str) or not name:
            r.error(obj, f"{where}.name", f"expected a non-empty name, got {_shown(name)}")
            ok = False
            continue
        if name in seen:
            r.error(obj, f"{where}.name", f"Duplicate value: {name!r} (replicatedJobs is a list keyed by name)")
            ok = False
            continue
        seen.add(name)
        replicas = r.whole(entry.get("replicas", 1), obj, f"{where}.replicas", 0)
        template = entry.get("template")
        if not isinstance(template, Mapping):
            r.error(obj, f"{where}.template", "expected a Job template (a mapping with spec.template); it is required")
            ok = False
            continue
        jspec = r.mapping(template.get("spec"), obj, f"{where}.template.spec")
        parallelism = r.whole(jspec.get("parallelism", 1), obj, f"{where}.template.spec.parallelism", 0)
        completions = parallelism
        if jspec.get("completions") is not None:
            completions = r.whole(jspec["completions"], obj, f"{where}.template.spec.completions", 0)
        if "activeDeadlineSeconds" in jspec:
            deadline = r.whole(jspec["activeDeadlineSeconds"], obj, f"{where}.template.spec.activeDeadlineSeconds", 1)
            deadlines.append(deadline)
        limit = _within(r, obj, f"{where}.template.spec", lambda sub, jspec=jspec: core.backoff_limit(sub, jspec, obj))
        limits.append(limit)
        pod_template = jspec.get("template")
        if not isinstance(pod_template, Mapping):
            r.error(obj, f"{where}.template.spec.template",
                    "expected a pod template (a mapping with spec.containers); it is required")
            ok = False
            continue
        if None in (replicas, parallelism, completions, limit):
            ok = False
            continue
        count = replicas * min(parallelism, completions)
        tmeta = r.mapping(pod_template.get("metadata"), obj, f"{where}.template.spec.template.metadata")
        pod = r.mapping(pod_template.get("spec"), obj, f"{where}.template.spec.template.spec")
        if count:
            roles.append((i, name, count, tmeta, pod))
    if not ok:
        return None
    if not roles:
        r.error(obj, "spec.replicatedJobs", "expected at least one pod: every replicatedJob has replicas, "
                "parallelism or completions 0")
        return None

    pod_sets, requests_ok = [], True
    for i, name, count, _tmeta, pod in roles:
        base = f"spec.replicatedJobs[{i}].template.spec"
        request = _within(r, obj, base, lambda sub, pod=pod: sub.pod_request(pod, obj))
        selector = r.strings(pod.get("nodeSelector"), obj, f"{base}.template.spec.nodeSelector")
        if request is None:
            requests_ok = False
            continue
        gpus, cpu, memory = request
        pod_sets.append(PodSet(name, count, gpus, cpu, memory, selector))
    timing = core.read_timing(r, annotations, obj)
    pods = sum(count for _, _, count, _, _ in roles)
    gang = _gang(r, o, roles, pods, classes, default_priority, groups, used_groups, gangs,
                 [f"spec.replicatedJobs[{i}].template.spec" for i, *_ in roles])
    if not requests_ok or gang is None:
        return None
    priority, gang_fields = gang
    deadline = min((d for d in deadlines if d is not None), default=None)
    return Job(
        name=o.name,
        namespace=o.namespace,
        pod_sets=pod_sets,
        priority=priority,
        queue=labels.get(QUEUE_LABEL) or o.namespace or "default",
        max_run_time=None if deadline is None else float(deadline),
        labels=labels,
        backoff_limit=min(limits, default=DEFAULT_BACKOFF_LIMIT),
        framework=JOBSET,
        **timing,
        **gang_fields,
    )


def read_replica_job(r: Reader, o: ManifestObject, classes: dict, default_priority: int, groups: dict,
                     used_groups: dict, gangs: GangObjects) -> Job | None:
    """A PyTorchJob or MPIJob as one gangkit Job: a pod set per replica type (see the module)."""
    rk = REPLICA_KINDS[o.role]
    obj = o.label
    meta = r.mapping(o.doc.get("metadata"), obj, "metadata")
    labels = r.strings(meta.get("labels"), obj, "metadata.labels")
    annotations = r.strings(meta.get("annotations"), obj, "metadata.annotations")
    spec = r.mapping(o.doc.get("spec"), obj, "spec")
    specs = spec.get(rk.field)
    if not isinstance(specs, Mapping) or not specs:
        r.error(obj, f"spec.{rk.field}", f"expected a map of replica specs ({', '.join(rk.replica_types)}), "
                f"got {_shown(specs)}")
        return None
    roles, ok = [], True
    for rtype in specs:
        if rtype not in rk.replica_types:
            r.error(obj, f"spec.{rk.field}.{rtype}", f"expected a replica type {' or '.join(rk.replica_types)} "
                    f"(the {o.role} webhook allows no other), got {_shown(rtype)}")
            ok = False
    for rtype in (t for t in rk.replica_types if t in specs):
        where = f"spec.{rk.field}.{rtype}"
        entry = r.mapping(specs[rtype], obj, where)
        replicas = r.whole(entry.get("replicas", 1), obj, f"{where}.replicas", 0)
        if rtype == rk.single and replicas is not None and replicas > 1:
            r.error(obj, f"{where}.replicas", f"expected at most 1 {rtype} replica, got {replicas}")
            ok = False
        template = entry.get("template")
        if not isinstance(template, Mapping):
            r.error(obj, f"{where}.template", "expected a pod template (a mapping with spec.containers); it is required")
            ok = False
            continue
        if replicas:
            roles.append((where, rtype.lower(), replicas, r.mapping(template.get("metadata"), obj, f"{where}.template.metadata"),
                          r.mapping(template.get("spec"), obj, f"{where}.template.spec")))
    if not ok:
        return None
    if not roles:
        r.error(obj, f"spec.{rk.field}", "expected at least one pod: every replica type has replicas 0")
        return None
    pod_sets, requests_ok = [], True
    for where, name, count, _tmeta, pod in roles:
        request = _within(r, obj, where, lambda sub, pod=pod: sub.pod_request(pod, obj))
        selector = r.strings(pod.get("nodeSelector"), obj, f"{where}.template.spec.nodeSelector")
        if request is None:
            requests_ok = False
            continue
        pod_sets.append(PodSet(name, count, *request, selector))
    run_policy = r.mapping(spec.get("runPolicy"), obj, "spec.runPolicy")
    policy = r.mapping(run_policy.get("schedulingPolicy"), obj, "spec.runPolicy.schedulingPolicy")
    deadline = (r.whole(run_policy["activeDeadlineSeconds"], obj, "spec.runPolicy.activeDeadlineSeconds", 1)
                if "activeDeadlineSeconds" in run_policy else None)
    limit = (r.whole(run_policy["backoffLimit"], obj, "spec.runPolicy.backoffLimit", 0)
             if "backoffLimit" in run_policy else DEFAULT_BACKOFF_LIMIT)
    timing = core.read_timing(r, annotations, obj)
    pods = sum(count for _, _, count, _, _ in roles)
    first = roles[0][0]
    gang = _gang(r, o, roles, pods, classes, default_priority, groups, used_groups, gangs, [w for w, *_ in roles])
    if not requests_ok or gang is None or limit is None:
        return None
    priority, gang_fields = gang
    scheduler = roles[0][4].get("schedulerName")
    operator_gang = _operator_gang(r, obj, policy, pods, scheduler, classes, gang_fields, f"{first}.template.spec")
    if operator_gang is None:
        return None
    if "priority" in operator_gang:
        priority = operator_gang.pop("priority")
    return Job(
        name=o.name, namespace=o.namespace, pod_sets=pod_sets, priority=priority,
        queue=labels.get(QUEUE_LABEL) or o.namespace or "default",
        max_run_time=None if deadline is None else float(deadline), labels=labels, backoff_limit=limit,
        framework=rk.framework, **timing, **(gang_fields | operator_gang),
    )


def read_trainjob(r: Reader, o: ManifestObject, runtimes: dict, classes: dict, default_priority: int, groups: dict,
                  used_groups: dict, gangs: GangObjects) -> Job | None:
    """A Kubeflow Trainer TrainJob as the JobSet its runtime makes (Trainer v2, ``pkg/runtime``).

    ``runtimes`` are the input's TrainingRuntimes and ClusterTrainingRuntimes by
    (kind, namespace or None, name). The rules, as Trainer's runtime framework applies them:

    - the runtime's ``template`` is the JobSet; its step labelled
      ``trainer.kubeflow.org/trainjob-ancestor-step: trainer`` runs ``numNodes``
      pods (the TrainJob's ``trainer.numNodes``, else the runtime's
      ``mlPolicy.numNodes``, else 1; Trainer sets that step's parallelism and
      completions), and the TrainJob's ``trainer.resourcesPerNode`` replaces
      the resources of its container named ``node``;
    - the dataset and model initializer steps run before the trainer
      (``dependsOn``); gangkit leaves them out (reported): it starts the
      trainer step at submission;
    - ``podGroupPolicy.volcano``: Trainer makes a Volcano PodGroup of every pod
      (``minMember`` = all), in the queue of the annotation
      ``scheduling.volcano.sh/queue-name`` (TrainJob, else runtime template);
      ``podGroupPolicy.coscheduling``: a scheduler-plugins PodGroup of every pod
      with ``scheduleTimeoutSeconds`` (default 60 s);
    - a TrainJob naming ``torch-distributed``, Trainer's default runtime, that
      the input does not hold runs on a stand-in of it (one step ``node``, one
      node; reported).
    """
    obj = o.label
    spec = r.mapping(o.doc.get("spec"), obj, "spec")
    ref = r.mapping(spec.get("runtimeRef"), obj, "spec.runtimeRef")
    kind = ref.get("kind", "ClusterTrainingRuntime")
    name = ref.get("name")
    if kind not in ("ClusterTrainingRuntime", "TrainingRuntime") or not isinstance(name, str) or not name:
        r.error(obj, "spec.runtimeRef", "expected the name and kind (ClusterTrainingRuntime or TrainingRuntime) of a "
                f"runtime, got {_shown(dict(ref))}")
        return None
    key = (kind, (o.namespace or "default") if kind == "TrainingRuntime" else None, name)
    runtime = runtimes.get(key)
    if runtime is None and kind == "ClusterTrainingRuntime" and name in STAND_INS:
        runtime = _stand_in(name)
        r.notes.append(f"{obj}: ClusterTrainingRuntime {name!r} is not in the input: gangkit runs it on a stand-in for "
                       "Trainer's default runtime (one trainer step 'node' of mlPolicy.numNodes 1; add your "
                       "installation's runtime to simulate its own steps)")
    if runtime is None:
        where = f"in namespace {key[1]!r}" if key[1] else "in the input"
        r.error(obj, "spec.runtimeRef.name", f"names {kind} {name!r}, which is not {where} (Trainer's default "
                f"runtimes come with its installation; add the runtime's manifest)")
        return None
    rspec = spec_of(runtime)
    rlabel = runtime.label
    template = r.mapping(rspec.get("template"), rlabel, "spec.template")
    jobset_spec = copy.deepcopy(r.mapping(template.get("spec"), rlabel, "spec.template.spec"))
    trainer = r.mapping(spec.get("trainer"), obj, "spec.trainer")
    ml_policy = r.mapping(rspec.get("mlPolicy"), rlabel, "spec.mlPolicy")
    nodes = trainer.get("numNodes", ml_policy.get("numNodes", 1))
    where_nodes = "spec.trainer.numNodes" if "numNodes" in trainer else f"{rlabel} spec.mlPolicy.numNodes"
    nodes = r.whole(nodes, obj, where_nodes, 0)
    resources = trainer.get("resourcesPerNode")
    entries = jobset_spec.get("replicatedJobs")
    kept, left_out = [], []
    for entry in entries if isinstance(entries, list) else []:
        labels = _dig_map(entry, "template", "metadata", "labels")
        step = labels.get(ANCESTOR)
        if step in ("dataset-initializer", "model-initializer"):
            left_out.append(str(entry.get("name")))
            continue
        if step == "trainer" and nodes is not None and isinstance(entry.get("template"), Mapping):
            jspec = entry["template"].setdefault("spec", {})
            if isinstance(jspec, dict):
                jspec["parallelism"] = jspec["completions"] = nodes
                containers = _dig_map(jspec, "template", "spec").get("containers")
                for c in containers if isinstance(containers, list) else []:
                    if isinstance(c, dict) and c.get("name") == "node" and resources is not None:
                        c["resources"] = resources
        kept.append(entry)
    if left_out:
        r.notes.append(f"{obj}: the initializer steps {', '.join(left_out)} of {rlabel} run before the trainer; gangkit "
                       "leaves them out and starts the trainer step at submission")
    jobset_spec["replicatedJobs"] = kept
    policy = r.mapping(rspec.get("podGroupPolicy"), rlabel, "spec.podGroupPolicy")
    scheduler = "volcano" if "volcano" in policy else "scheduler-plugins-scheduler" if "coscheduling" in policy else None
    for entry in kept:
        pod = _dig_map(entry, "template", "spec", "template", "spec")
        if scheduler and isinstance(entry.get("template"), Mapping) and pod is not None:
            entry["template"]["spec"]["template"]["spec"] = {**pod, "schedulerName": scheduler}
    meta = o.doc.get("metadata") if isinstance(o.doc.get("metadata"), Mapping) else {}
    view = ManifestObject({"apiVersion": JOBSET_API, "kind": "JobSet", "metadata": dict(meta), "spec": jobset_spec},
                          o.kind, o.where, o.name, o.namespace, o.role, o.namespaced)
    job = _within(r, obj, f"{rlabel} spec.template.spec",
                  lambda sub: read_jobset(sub, view, classes, default_priority, groups, used_groups, gangs))
    if job is None or nodes is None:
        return None
    if "activeDeadlineSeconds" in spec:
        deadline = r.whole(spec["activeDeadlineSeconds"], obj, "spec.activeDeadlineSeconds", 1)
        job.max_run_time = None if deadline is None else float(deadline)
    if scheduler == "volcano":
        queue = _dig_map(o.doc, "metadata", "annotations").get(VOLCANO_QUEUE) or \
            _dig_map(template, "metadata", "annotations").get(VOLCANO_QUEUE)
        if isinstance(queue, str) and queue:
            job.volcano_queue = queue
    if scheduler == "scheduler-plugins-scheduler":
        timeout = r.mapping(policy.get("coscheduling"), rlabel, "spec.podGroupPolicy.coscheduling").get(
            "scheduleTimeoutSeconds", DEFAULT_TIMEOUT)
        timeout = r.whole(timeout, rlabel, "spec.podGroupPolicy.coscheduling.scheduleTimeoutSeconds", 1)
        job.schedule_timeout = None if timeout is None else float(timeout)
    return job


def _stand_in(name: str) -> ManifestObject:
    """gangkit's stand-in for a default runtime of Trainer's installation (the torch-distributed shape)."""
    doc = {"apiVersion": TRAINER_API, "kind": "ClusterTrainingRuntime", "metadata": {"name": name},
           "spec": {"mlPolicy": {"numNodes": 1, "torch": {}}, "template": {"spec": {"replicatedJobs": [{
               "name": "node", "template": {"metadata": {"labels": {ANCESTOR: "trainer"}}, "spec": {"template": {
                   "spec": {"containers": [{"name": "node", "image": "pytorch/pytorch"}]}}}}}]}}}}
    return ManifestObject(doc, "ClusterTrainingRuntime", "gangkit's stand-in", name, None, "ClusterTrainingRuntime")


def collect_runtimes(objects: list[ManifestObject]) -> dict:
    """The input's TrainingRuntimes and ClusterTrainingRuntimes by (kind, namespace or None, name)."""
    return {(o.role, (o.namespace or "default") if o.role == "TrainingRuntime" else None, o.name): o
            for o in objects if o.role in ("TrainingRuntime", "ClusterTrainingRuntime") and o.name}


def _dig_map(doc: Any, *keys: str) -> dict:
    for k in keys:
        doc = doc.get(k) if isinstance(doc, Mapping) else None
    return doc if isinstance(doc, dict) else {}


def _operator_gang(r: Reader, obj: str, policy: dict, pods: int, scheduler: Any, classes: dict, named: dict,
                   scheduler_field: str) -> dict | None:
    """The PodGroup the training operator creates for a job when it runs with the pods' gang scheduler."""
    layer = GANG_SCHEDULERS.get(scheduler)
    if layer is None:
        if policy:
            r.notes.append(f"{obj}: spec.runPolicy.schedulingPolicy has no effect: the operator makes a PodGroup only "
                           f"for a gang scheduler (schedulerName volcano or scheduler-plugins-scheduler), and "
                           f"{scheduler_field}.schedulerName is {_shown(scheduler)}")
        return {}
    out: dict[str, Any] = {}
    if named.get("min_member") is None:
        minimum = policy.get("minAvailable")
        if minimum is not None:
            m = r.whole(minimum, obj, "spec.runPolicy.schedulingPolicy.minAvailable", 1, pods)
            if m is None:
                return None
            out["min_member"] = None if m == pods else m  # None: every pod, as without minAvailable
    if policy.get("priorityClass") is not None:
        name = policy["priorityClass"]
        if name not in classes:
            r.error(obj, "spec.runPolicy.schedulingPolicy.priorityClass",
                    f"no PriorityClass named {name!r} in the input (known: {', '.join(sorted(classes))})")
            return None
        out["priority"] = classes[name]
    if layer == "Volcano" and policy.get("queue") is not None:
        if not isinstance(policy["queue"], str) or not policy["queue"]:
            r.error(obj, "spec.runPolicy.schedulingPolicy.queue", f"expected a Volcano Queue name, got {_shown(policy['queue'])}")
            return None
        out["volcano_queue"] = policy["queue"]
    if layer == "scheduler-plugins" and policy.get("scheduleTimeoutSeconds") is not None:
        t = r.whole(policy["scheduleTimeoutSeconds"], obj, "spec.runPolicy.schedulingPolicy.scheduleTimeoutSeconds", 1)
        if t is None:
            return None
        out["schedule_timeout"] = float(t)
    return out


def _gang(r: Reader, o: ManifestObject, roles: list, pods: int, classes: dict, default_priority: int, groups: dict,
          used_groups: dict, gangs: GangObjects, bases: list[str]) -> tuple[int, dict] | None:
    """A job's priority and gang: read from the first role's pod template; the others must say the same.

    ``bases[k]`` is where role ``k``'s pod template sits, less ``.template``
    (a JobSet's ``spec.replicatedJobs[i].template.spec``, a PyTorchJob's
    ``spec.pytorchReplicaSpecs.Worker``).
    """
    obj = o.label
    signatures = [_signature(tmeta, pod) for _, _, _, tmeta, pod in roles]
    first = signatures[0]
    for base, sig in zip(bases[1:], signatures[1:]):
        for key, (value, where) in sig.items():
            if value != first[key][0]:
                r.error(obj, f"{base}.template.{where}",
                        f"expected {_shown(first[key][0])}, as in {bases[0].removesuffix('.template.spec')}: "
                        f"gangkit models one {key} per "
                        f"{o.kind}, the same in every pod template; got {_shown(value)}")
                return None
    _, _, _, tmeta, pod = roles[0]
    base = bases[0]
    group_name = first["Volcano PodGroup"][0]
    group_field = f"{base}.template.metadata.annotations.{core.GROUP_NAME}"
    group = core.claim_pod_group(r, obj, o.namespace, group_field, group_name, groups, used_groups)
    group_spec = spec_of(group) if group else {}
    min_member = core.read_min_member(r, group, group_spec, pods, obj) if group else None
    priority = _within(r, obj, base, lambda sub: core.pod_priority(sub, pod, group, group_spec, classes,
                                                                   default_priority, obj))
    no_ref = {k: v for k, v in pod.items() if k != "workloadRef"}  # not in these CRDs: warned about, not read
    fields = _within(r, obj, base, lambda sub: read_gang(sub, gangs, o, pods, tmeta, no_ref,
                                                         volcano=group_name is not None))
    min_member = fields.pop("min_member", min_member)
    if priority is None:
        return None
    return priority, fields | {"min_member": min_member}


def _signature(tmeta: dict, pod: dict) -> dict[str, tuple[Any, str]]:
    """What a pod template says about its gang and priority: (value, field under the pod template) per topic."""
    labels = tmeta.get("labels") if isinstance(tmeta.get("labels"), Mapping) else {}
    ann = tmeta.get("annotations") if isinstance(tmeta.get("annotations"), Mapping) else {}
    return {
        "Volcano PodGroup": (ann.get(core.GROUP_NAME), f"metadata.annotations.{core.GROUP_NAME}"),
        "scheduler-plugins PodGroup": (labels.get(POD_GROUP_LABEL), f"metadata.labels.{POD_GROUP_LABEL}"),
        "YuniKorn task group": ((ann.get(TASK_GROUPS), ann.get(TASK_GROUP_NAME), ann.get(SCHEDULING_POLICY)),
                                f"metadata.annotations.{TASK_GROUP_NAME}"),
        "priority class": (pod.get("priorityClassName"), "spec.priorityClassName"),
        "scheduler": (pod.get("schedulerName"), "spec.schedulerName"),
    }


def _within(r: Reader, obj: str, base: str, read: Callable[[Reader], Any]) -> Any:
    """``read`` with a scratch reader, its report copied into ``r`` with ``obj``'s fields moved under ``base``.

    The batch/v1 Job's readers name fields from the Job's ``spec``
    (``spec.template.spec.containers[0]...``); in a JobSet the same fields sit
    under ``spec.replicatedJobs[i].template.spec``.
    """
    sub = Reader(r.label, base=r.base)
    value = read(sub)
    for p in sub.problems:
        moved = f"{base}{p.field[len('spec'):]}" if p.obj == obj and p.field.startswith("spec.") else p.field
        r.problems.append(Problem(p.obj, moved, p.message))
    r.unknown.extend(sub.unknown)
    r.notes.extend(sub.notes)
    return value


def _shown(value: Any) -> str:
    return "nothing" if value is None else short(value)


# --- writing ----------------------------------------------------------------------------------------------------


def jobset_manifest(j: Job, gang: str | None = None) -> dict:
    """A job as a JobSet: one replicatedJob per pod set (``replicas: 1``, ``parallelism`` = its pods).

    Each replicatedJob's Job template is what :func:`gangkit.manifests.core.job_manifest`
    writes for that pod set (its pod template names the job's gang); the
    JobSet carries the job's labels and gangkit's annotations.
    """
    doc = core.job_manifest(j, gang)
    gang_metadata = doc["spec"]["template"].get("metadata")  # the whole job's gang, the same in every template
    replicated = []
    for ps in j.pod_sets:
        spec = core.job_manifest(dataclasses.replace(j, pod_sets=[ps]), gang)["spec"]
        spec["template"] = ({"metadata": gang_metadata} if gang_metadata else {}) | {"spec": spec["template"]["spec"]}
        replicated.append({"name": ps.name, "replicas": 1, "template": {"spec": spec}})
    return {"apiVersion": JOBSET_API, "kind": "JobSet", "metadata": doc["metadata"],
            "spec": {"replicatedJobs": replicated}}



def replica_job_manifest(j: Job, kind: str, gang: str | None = None) -> dict:
    """A job as a PyTorchJob or MPIJob (``kind``): one replica spec per pod set, named after it.

    The pod sets must be named after the kind's replica types in lower case
    (``master``/``worker``, ``launcher``/``worker``; see :func:`replica_problems`).
    A gang of another size than every pod is written as ``runPolicy.schedulingPolicy.minAvailable``
    (the operator's PodGroup); a scheduler-plugins timeout as its ``scheduleTimeoutSeconds``.
    """
    rk = REPLICA_KINDS[kind]
    doc = core.job_manifest(dataclasses.replace(j, min_member=None, schedule_timeout=None), None)
    by_name = {t.lower(): t for t in rk.replica_types}
    specs = {}
    for ps in j.pod_sets:
        one = core.job_manifest(dataclasses.replace(j, pod_sets=[ps], min_member=None, schedule_timeout=None), None)
        template = one["spec"]["template"]
        template["spec"]["restartPolicy"] = "OnFailure"
        specs[by_name[ps.name]] = {"replicas": ps.count, "restartPolicy": "OnFailure", "template": template}
    spec: dict[str, Any] = {rk.field: specs}
    policy: dict[str, Any] = {}
    if j.min_member is not None and j.min_member != j.pod_count:
        policy["minAvailable"] = j.min_member
    if j.schedule_timeout is not None:
        policy["scheduleTimeoutSeconds"] = int(j.schedule_timeout)
    if j.volcano_queue != "default":
        policy["queue"] = j.volcano_queue
    run_policy: dict[str, Any] = {}
    if j.max_run_time is not None:
        run_policy["activeDeadlineSeconds"] = int(j.max_run_time)
    if j.backoff_limit != DEFAULT_BACKOFF_LIMIT:
        run_policy["backoffLimit"] = j.backoff_limit
    if policy:
        run_policy["schedulingPolicy"] = policy
    if run_policy:
        spec["runPolicy"] = run_policy
    return {"apiVersion": rk.api_version, "kind": kind, "metadata": doc["metadata"], "spec": spec}


def replica_problems(j: Job, kind: str) -> list[str]:
    """Why a job cannot be written as a PyTorchJob or MPIJob (empty when it can)."""
    rk = REPLICA_KINDS[kind]
    allowed = [t.lower() for t in rk.replica_types]
    names = [ps.name for ps in j.pod_sets]
    out = []
    if any(n not in allowed for n in names) or len(set(names)) != len(names):
        out.append(f"a {kind} has one pod set per replica type, named {' and '.join(allowed)}; got {names}")
    if any(ps.name == rk.single.lower() and ps.count > 1 for ps in j.pod_sets):
        out.append(f"a {kind} has at most one {rk.single}")
    if any(ps.min_count is not None for ps in j.pod_sets):
        out.append(f"Kueue's partial admission (min_count) is for batch/v1 Jobs; a {kind} has none")
    if j.placeholder_timeout is not None or j.gang_style is not None:
        out.append(f"the training operator makes Volcano or scheduler-plugins PodGroups; a {kind} has no YuniKorn gang")
    return out
