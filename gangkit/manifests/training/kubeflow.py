"""Kubeflow's v1 training kinds: the PyTorchJob, TFJob, JAXJob, PaddleJob, XGBoostJob and MPIJob.

All are still common in 2026 clusters: the ``PyTorchJob``, ``TFJob``,
``JAXJob``, ``PaddleJob`` and ``XGBoostJob`` (``kubeflow.org/v1``,
training-operator v1.9, ``pkg/apis/kubeflow.org/v1/*_types.go``) and the
``MPIJob`` (``kubeflow.org/v2beta1``, mpi-operator v0.6). Each lists its
roles in a map of replica specs (``pytorchReplicaSpecs: {Master: ..., Worker: ...}``,
``tfReplicaSpecs``, ``jaxReplicaSpecs``, ``paddleReplicaSpecs``,
``xgbReplicaSpecs``, ``mpiReplicaSpecs: {Launcher: ..., Worker: ...}``), each
a pod template and a ``replicas`` count (default 1):

- **One pod set per replica type**, in the order of Kueue's integration for
  the kind (Kueue v0.19 ``pkg/controller/jobs/kubeflow/jobs/*/*_controller.go``,
  ``OrderedReplicaTypes``: PyTorchJob Master, Worker; TFJob Chief, Master,
  PS, Worker, Evaluator; JAXJob Worker; PaddleJob and XGBoostJob Master,
  Worker; MPIJob Launcher, Worker), named in lower case (``master``,
  ``worker``, ``ps``, ``evaluator``, ``launcher``...) with ``replicas`` pods:
  the Workload Kueue's kubeflow and mpijob integrations create. Other replica
  types are refused: the webhooks of the PyTorchJob, JAXJob, PaddleJob,
  XGBoostJob and MPIJob refuse them; the TFJob webhook does not, but the TFJob
  API defines no other and Kueue's tfjob integration counts no other. The
  webhooks' limits on counts are kept: at most one Master (PyTorchJob) or
  Launcher (MPIJob); exactly one XGBoostJob Master, which is required; at
  most one of a TFJob's Chief and Master (training-operator v1.9
  ``pkg/webhooks/*/*_webhook.go``). The operator's defaulting renames a
  ``kubeflow.org/v1`` replica type written in another case (``worker`` ->
  ``Worker``, ``defaulting_utils.go`` ``setTypeNameToCamelCase``); gangkit
  does the same.
- **The gang is the operator's**: run with a gang scheduler, the operator
  creates one PodGroup per job, named after it, of ``minMember`` =
  ``runPolicy.schedulingPolicy.minAvailable`` (default: every pod), with the
  policy's ``queue``, ``priorityClass`` and (scheduler-plugins)
  ``scheduleTimeoutSeconds``; every ``kubeflow.org/v1`` kind goes through the
  same reconcile (training-operator v1.9 ``pkg/controller.v1/common/job.go``,
  ``ReconcileJobs``). Which gang scheduler the operator was started
  with is a flag of the operator, not of the job; gangkit reads it from the
  pods' ``schedulerName`` (``volcano``: a Volcano PodGroup;
  ``scheduler-plugins-scheduler``: a scheduler-plugins PodGroup). With any
  other scheduler a ``schedulingPolicy`` has no effect (reported).
  ``schedulingPolicy.minResources`` is not modelled.
- ``runPolicy.activeDeadlineSeconds`` and ``runPolicy.backoffLimit`` are the
  job's maximum run time and failed-pod limit. An MPIJob's
  ``launcherCreationPolicy: WaitForWorkersReady`` (the launcher created once
  the workers run), the ``elasticPolicy`` of a PyTorchJob or PaddleJob, a
  TFJob's ``successPolicy`` and ``enableDynamicWorker`` are not modelled.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gangkit.manifests import core, core_dump
from gangkit.manifests.training.jobset import role_gang, shown, within
from gangkit.model.jobs import (
    DEFAULT_BACKOFF_LIMIT,
    JAXJOB,
    MPIJOB,
    PADDLEJOB,
    PYTORCHJOB,
    TFJOB,
    XGBOOSTJOB,
    Job,
    PodSet,
)
from gangkit.model.reading import (
    ANY,
    META,
    POD_SPEC,
    QUEUE_LABEL,
    ManifestObject,
    Reader,
)
from gangkit.placement.manifests import GangObjects

__all__ = ["KNOWN_FIELDS", "REPLICA_KINDS", "read_replica_job", "replica_job_manifest", "replica_problems"]

_NAMES = dict.fromkeys
KNOWN_FIELDS: dict[str, dict] = {}


@dataclass(frozen=True)
class ReplicaKind:
    """A Kubeflow job kind whose roles are a map of replica specs."""

    api_version: str
    field: str  # the map of replica specs under spec
    replica_types: tuple[str, ...]  # the ones the kind allows, in the order of Kueue's integration
    single: tuple[str, ...]  # the replica types that have at most one replica (Master, Launcher)
    framework: str  # Kueue's integration name
    extra: tuple[str, ...]  # other spec fields of the CRD accepted silently (no effect on scheduling); any other
    # (elasticPolicy, successPolicy, enableDynamicWorker...) is named in the warning of fields gangkit does not read
    why: str = "the {kind} webhook allows no other"  # why other replica types are refused
    one_of: tuple[str, ...] = ()  # at most one of these replica types (a TFJob's Chief and Master)
    required: tuple[str, ...] = ()  # replica types that must be there (an XGBoostJob's Master)
    camel_case: bool = True  # the operator's defaulting renames a replica type written in another case
    container: str = ""  # the container name the webhook requires in every template (written so; not checked)


V1 = "kubeflow.org/v1"  # training-operator v1.9
REPLICA_KINDS = {
    "PyTorchJob": ReplicaKind(V1, "pytorchReplicaSpecs", ("Master", "Worker"), ("Master",), PYTORCHJOB,
                              ("nprocPerNode",), container="pytorch"),
    "MPIJob": ReplicaKind("kubeflow.org/v2beta1", "mpiReplicaSpecs", ("Launcher", "Worker"), ("Launcher",), MPIJOB,
                          ("slotsPerWorker", "sshAuthMountPath", "mpiImplementation", "runLauncherAsWorker"),
                          camel_case=False),
    "TFJob": ReplicaKind(V1, "tfReplicaSpecs", ("Chief", "Master", "PS", "Worker", "Evaluator"), (), TFJOB, (),
                         why="the TFJob API defines no other, and Kueue's tfjob integration counts no other",
                         one_of=("Chief", "Master"), container="tensorflow"),
    "JAXJob": ReplicaKind(V1, "jaxReplicaSpecs", ("Worker",), (), JAXJOB, (), container="jax"),
    "PaddleJob": ReplicaKind(V1, "paddleReplicaSpecs", ("Master", "Worker"), (), PADDLEJOB, (), container="paddle"),
    "XGBoostJob": ReplicaKind(V1, "xgbReplicaSpecs", ("Master", "Worker"), (), XGBOOSTJOB, (), required=("Master",),
                              container="xgboost"),
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


def read_replica_job(r: Reader, o: ManifestObject, classes: dict, default_priority: int, groups: dict,
                     used_groups: dict, gangs: GangObjects) -> Job | None:
    """A Kubeflow job (PyTorchJob, TFJob, JAXJob, PaddleJob, XGBoostJob, MPIJob) as one gangkit Job: a pod set per
    replica type (see the module)."""
    rk = REPLICA_KINDS[o.role]
    obj = o.label
    meta = r.mapping(o.doc.get("metadata"), obj, "metadata")
    labels = r.strings(meta.get("labels"), obj, "metadata.labels")
    annotations = r.strings(meta.get("annotations"), obj, "metadata.annotations")
    spec = r.mapping(o.doc.get("spec"), obj, "spec")
    specs = spec.get(rk.field)
    if not isinstance(specs, Mapping) or not specs:
        r.error(obj, f"spec.{rk.field}", f"expected a map of replica specs ({', '.join(rk.replica_types)}), "
                f"got {shown(specs)}")
        return None
    by_type = _replica_types(r, obj, o.role, rk, specs)
    ok = by_type is not None
    roles = []
    for rtype, (key, value) in (by_type or {}).items():
        where = f"spec.{rk.field}.{key}"
        entry = r.mapping(value, obj, where)
        replicas = r.whole(entry.get("replicas", 1), obj, f"{where}.replicas", 0)
        if rtype in rk.single and replicas is not None and replicas > 1:
            r.error(obj, f"{where}.replicas", f"expected at most 1 {rtype} replica, got {replicas}")
            ok = False
        if rtype in rk.required and replicas is not None and replicas != 1:
            r.error(obj, f"{where}.replicas", f"expected 1 {rtype} replica (the {o.role} webhook requires one), "
                    f"got {replicas}")
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
        request = within(r, obj, where, lambda sub, pod=pod: sub.pod_request(pod, obj))
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
    gang = role_gang(r, o, roles, pods, classes, default_priority, groups, used_groups, gangs, [w for w, *_ in roles])
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


def _replica_types(r: Reader, obj: str, kind: str, rk: ReplicaKind, specs: Mapping) -> dict[str, tuple[str, Any]] | None:
    """The replica specs by replica type, in the order of Kueue's integration, each with the key it was written
    under; None after recording the problems (a type the kind does not allow, a required one missing...)."""
    ok, found = True, {}
    canonical = {t.lower(): t for t in rk.replica_types} if rk.camel_case else {t: t for t in rk.replica_types}
    for key in specs:
        rtype = canonical.get(key.lower() if rk.camel_case and isinstance(key, str) else key)
        if rtype is None:
            r.error(obj, f"spec.{rk.field}.{key}", f"expected a replica type {' or '.join(rk.replica_types)} "
                    f"({rk.why.format(kind=kind)}), got {shown(key)}")
            ok = False
        elif rtype in found:
            r.error(obj, f"spec.{rk.field}.{key}", f"expected one replica spec per replica type; "
                    f"{found[rtype][0]} and {key} are both {rtype}")
            ok = False
        else:
            found[rtype] = (key, specs[key])
    both = [t for t in rk.one_of if t in found]
    if len(both) > 1:
        r.error(obj, f"spec.{rk.field}", f"expected at most one of {' and '.join(rk.one_of)} (the {kind} webhook "
                f"allows one), got {' and '.join(both)}")
        ok = False
    for rtype in rk.required:
        if rtype not in found and ok:
            r.error(obj, f"spec.{rk.field}.{rtype}", f"expected a {rtype} replica spec (the {kind} webhook requires one)")
            ok = False
    return {t: found[t] for t in rk.replica_types if t in found} if ok else None


def _operator_gang(r: Reader, obj: str, policy: dict, pods: int, scheduler: Any, classes: dict, named: dict,
                   scheduler_field: str) -> dict | None:
    """The PodGroup the training operator creates for a job when it runs with the pods' gang scheduler."""
    layer = GANG_SCHEDULERS.get(scheduler)
    if layer is None:
        if policy:
            r.notes.append(f"{obj}: spec.runPolicy.schedulingPolicy has no effect: the operator makes a PodGroup only "
                           f"for a gang scheduler (schedulerName volcano or scheduler-plugins-scheduler), and "
                           f"{scheduler_field}.schedulerName is {shown(scheduler)}")
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
            r.error(obj, "spec.runPolicy.schedulingPolicy.queue", f"expected a Volcano Queue name, got {shown(policy['queue'])}")
            return None
        out["volcano_queue"] = policy["queue"]
    if layer == "scheduler-plugins" and policy.get("scheduleTimeoutSeconds") is not None:
        t = r.whole(policy["scheduleTimeoutSeconds"], obj, "spec.runPolicy.schedulingPolicy.scheduleTimeoutSeconds", 1)
        if t is None:
            return None
        out["schedule_timeout"] = float(t)
    return out


def replica_job_manifest(j: Job, kind: str, gang: str | None = None) -> dict:
    """A job as a Kubeflow job of ``kind`` (see :data:`REPLICA_KINDS`): one replica spec per pod set, named after it.

    The pod sets must be named after the kind's replica types in lower case
    (``master``/``worker``, ``launcher``/``worker``, ``chief``/``ps``/``worker``/``evaluator``...;
    see :func:`replica_problems`).
    A gang of another size than every pod is written as ``runPolicy.schedulingPolicy.minAvailable``
    (the operator's PodGroup); a scheduler-plugins timeout as its ``scheduleTimeoutSeconds``.
    """
    rk = REPLICA_KINDS[kind]
    doc = core_dump.job_manifest(dataclasses.replace(j, min_member=None, schedule_timeout=None), None)
    by_name = {t.lower(): t for t in rk.replica_types}
    specs = {}
    for ps in j.pod_sets:
        one = core_dump.job_manifest(dataclasses.replace(j, pod_sets=[ps], min_member=None, schedule_timeout=None), None)
        template = one["spec"]["template"]
        template["spec"]["restartPolicy"] = "OnFailure"
        if rk.container:  # the webhook wants one container of this name (training-operator v1.9 pkg/webhooks)
            template["spec"]["containers"][0]["name"] = rk.container
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
    """Why a job cannot be written as a Kubeflow job of ``kind`` (empty when it can)."""
    rk = REPLICA_KINDS[kind]
    allowed = [t.lower() for t in rk.replica_types]
    names = [ps.name for ps in j.pod_sets]
    out = []
    if any(n not in allowed for n in names) or len(set(names)) != len(names):
        out.append(f"a {kind} has one pod set per replica type, named {' and '.join(allowed)}; got {names}")
    for rtype in rk.single:
        if any(ps.name == rtype.lower() and ps.count > 1 for ps in j.pod_sets):
            out.append(f"a {kind} has at most one {rtype}")
    for rtype in rk.required:
        if not any(ps.name == rtype.lower() and ps.count == 1 for ps in j.pod_sets):
            out.append(f"a {kind} has one {rtype}: a pod set named {rtype.lower()} of 1 pod")
    if sum(t.lower() in names for t in rk.one_of) > 1:
        out.append(f"a {kind} has at most one of {' and '.join(rk.one_of)}")
    if any(ps.min_count is not None for ps in j.pod_sets):
        out.append(f"Kueue's partial admission (min_count) is for batch/v1 Jobs; a {kind} has none")
    if j.placeholder_timeout is not None or j.gang_style is not None:
        out.append(f"the training operator makes Volcano or scheduler-plugins PodGroups; a {kind} has no YuniKorn gang")
    return out
