"""The JobSet (``jobset.x-k8s.io/v1alpha2``), a set of batch/v1 Jobs started together.

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

The gang and priority of a job of several roles (:func:`role_gang`) and the
re-labelling of the batch/v1 Job readers' fields (:func:`within`) serve the
other training kinds too.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

from gangkit.manifests import core, core_dump
from gangkit.model.errors import Problem
from gangkit.model.jobs import DEFAULT_BACKOFF_LIMIT, JOBSET, Job, PodSet
from gangkit.model.reading import (
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
from gangkit.placement.manifests import (
    POD_GROUP_LABEL,
    SCHEDULING_POLICY,
    TASK_GROUP_NAME,
    TASK_GROUPS,
    GangObjects,
    read_gang,
)

__all__ = ["JOBSET_API", "KNOWN_FIELDS", "jobset_manifest", "read_jobset", "role_gang", "shown", "within"]

JOBSET_API = "jobset.x-k8s.io/v1alpha2"
JOBSET_NAME = "jobset.sigs.k8s.io/jobset-name"  # labels the JobSet controller puts on its pods
REPLICATED_JOB_NAME = "jobset.sigs.k8s.io/replicatedjob-name"
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
                    # the CRD's pod spec has no 1.35 workloadRef; one form of affinity is read (core.read_one_per_node)
                    "template": {"metadata": META, "spec": {**POD_SPEC, "affinity": ANY}}}},
            }],
        },
    },
}
KNOWN_ANNOTATIONS = (*JOB_ANNOTATIONS, core.RENDEZVOUS_TIMEOUT)


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
        r.error(obj, "spec.replicatedJobs", f"expected a list of at least one replicated Job, got {shown(entries)}")
        return None
    ok, roles, replicas_of, deadlines, limits = _read_replicated_jobs(r, obj, entries)
    if not ok:
        return None
    if not roles:
        r.error(obj, "spec.replicatedJobs", "expected at least one pod: every replicatedJob has replicas, "
                "parallelism or completions 0")
        return None
    pod_sets, requests_ok = _role_pod_sets(r, o, roles, replicas_of)
    timing = core.read_timing(r, annotations, obj)
    pods = sum(count for _, _, count, _, _ in roles)
    gang = role_gang(r, o, roles, pods, classes, default_priority, groups, used_groups, gangs,
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


def _read_replicated_jobs(r: Reader, obj: str, entries: list) -> tuple[bool, list, dict[int, int], list, list]:
    """Read every replicatedJob (each named once, with a Job template and a pod template): whether all were
    read, the roles that have pods (index, name, count, template metadata, pod spec; count = replicas x
    min(parallelism, completions)), the replicas of each, and the Jobs' activeDeadlineSeconds and backoffLimits."""
    roles = []  # (index, name, count, template metadata, pod spec) of each replicatedJob with pods
    replicas_of: dict[int, int] = {}
    seen: set[str] = set()
    ok = True
    deadlines, limits = [], []
    for i, entry in enumerate(entries):
        where = f"spec.replicatedJobs[{i}]"
        name = entry.get("name")
        if not isinstance(name, str) or not name:
            r.error(obj, f"{where}.name", f"expected a non-empty name, got {shown(name)}")
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
        limit = within(r, obj, f"{where}.template.spec", lambda sub, jspec=jspec: core.backoff_limit(sub, jspec, obj))
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
            replicas_of[i] = replicas
    return ok, roles, replicas_of, deadlines, limits


def _role_pod_sets(r: Reader, o: ManifestObject, roles: list, replicas_of: dict[int, int]) -> tuple[list, bool]:
    """A pod set per role: its pods' request, node selector and one-per-node anti-affinity (against the pods of
    its own replicatedJob, the others' labels known); and whether every request was read."""
    obj = o.label
    pod_sets, requests_ok = [], True
    by_role = {i: pod_labels(o.name, name, tmeta, replicas_of[i]) for i, name, _count, tmeta, _pod in roles}
    for i, name, count, _tmeta, pod in roles:
        base = f"spec.replicatedJobs[{i}].template.spec"
        request = within(r, obj, base, lambda sub, pod=pod: sub.pod_request(pod, obj))
        selector = r.strings(pod.get("nodeSelector"), obj, f"{base}.template.spec.nodeSelector")
        apart = core.read_one_per_node(r, pod, by_role[i], obj, tuple(v for k, v in by_role.items() if k != i),
                                       f"{base}.template.spec.affinity")
        if request is None:
            requests_ok = False
            continue
        gpus, cpu, memory = request
        pod_sets.append(PodSet(name, count, gpus, cpu, memory, selector, one_per_node=apart))
    return pod_sets, requests_ok


def role_gang(r: Reader, o: ManifestObject, roles: list, pods: int, classes: dict, default_priority: int, groups: dict,
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
                        f"expected {shown(first[key][0])}, as in {bases[0].removesuffix('.template.spec')}: "
                        f"gangkit models one {key} per "
                        f"{o.kind}, the same in every pod template; got {shown(value)}")
                return None
    _, _, _, tmeta, pod = roles[0]
    base = bases[0]
    group_name = first["Volcano PodGroup"][0]
    group_field = f"{base}.template.metadata.annotations.{core.GROUP_NAME}"
    group = core.claim_pod_group(r, obj, o.namespace, group_field, group_name, groups, used_groups)
    group_spec = spec_of(group) if group else {}
    min_member = core.read_min_member(r, group, group_spec) if group else None
    priority = within(r, obj, base, lambda sub: core.pod_priority(sub, pod, group, group_spec, classes,
                                                                   default_priority, obj))
    no_ref = {k: v for k, v in pod.items() if k != "workloadRef"}  # not in these CRDs: warned about, not read
    fields = within(r, obj, base, lambda sub: read_gang(sub, gangs, o, pods, tmeta, no_ref,
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


def within(r: Reader, obj: str, base: str, read: Callable[[Reader], Any]) -> Any:
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


def shown(value: Any) -> str:
    return "nothing" if value is None else short(value)


# --- writing ----------------------------------------------------------------------------------------------------


def pod_labels(jobset: str, replicated_job: str, tmeta: Any, replicas: int) -> dict[str, str]:
    """The labels a replicatedJob's pods carry: their template's, and those the JobSet controller adds
    (``jobset.sigs.k8s.io/jobset-name`` and ``replicatedjob-name``; with one replica also its one child Job's
    name, ``<jobset>-<replicatedJob>-0``, which the Job controller adds)."""
    own = tmeta.get("labels") if isinstance(tmeta, Mapping) else None
    out = {k: v for k, v in own.items() if isinstance(v, str)} if isinstance(own, Mapping) else {}
    out.update({JOBSET_NAME: jobset, REPLICATED_JOB_NAME: replicated_job})
    if replicas == 1:
        out.update({core.JOB_NAME_LABEL: f"{jobset}-{replicated_job}-0", "job-name": f"{jobset}-{replicated_job}-0"})
    return out


def jobset_manifest(j: Job, gang: str | None = None) -> dict:
    """A job as a JobSet: one replicatedJob per pod set (``replicas: 1``, ``parallelism`` = its pods).

    Each replicatedJob's Job template is what :func:`gangkit.manifests.core_dump.job_manifest`
    writes for that pod set (its pod template names the job's gang); the
    JobSet carries the job's labels and gangkit's annotations.
    """
    doc = core_dump.job_manifest(j, gang)
    gang_metadata = doc["spec"]["template"].get("metadata")  # the whole job's gang, the same in every template
    replicated = []
    for ps in j.pod_sets:
        spec = core_dump.job_manifest(dataclasses.replace(j, pod_sets=[ps]), gang)["spec"]
        pod = spec["template"]["spec"]
        if ps.one_per_node:  # the pod set's own pods, by the labels the JobSet controller gives them
            pod["affinity"] = {"podAntiAffinity": {core.REQUIRED: [{"labelSelector": {"matchLabels": {
                JOBSET_NAME: j.name, REPLICATED_JOB_NAME: ps.name}}, "topologyKey": core.HOSTNAME}]}}
        spec["template"] = ({"metadata": gang_metadata} if gang_metadata else {}) | {"spec": pod}
        replicated.append({"name": ps.name, "replicas": 1, "template": {"spec": spec}})
    return {"apiVersion": JOBSET_API, "kind": "JobSet", "metadata": doc["metadata"],
            "spec": {"replicatedJobs": replicated}}
