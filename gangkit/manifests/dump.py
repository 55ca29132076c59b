"""Writing a scenario back as Kubernetes manifests: the reader's mirror.

Picture the reading desks working backwards: each object of a
:class:`~gangkit.model.scenario.Scenario` is handed to the desk that reads
its kind, which writes it out as the manifest it would have read. The result
is one multi-document YAML file that :func:`gangkit.manifests.load.load_manifests`
reads back into the same scenario::

    # Scenario two-gangs, written by gangkit.manifests.dump_manifests
    apiVersion: v1
    kind: Node
    ...
"""

from __future__ import annotations

import dataclasses
from typing import Any

import yaml

from gangkit.kueue import dump as kueue
from gangkit.manifests.companions import coscheduling_manifest
from gangkit.manifests.core import GROUP_MIN_MEMBER, VOLCANO_SCHEDULER
from gangkit.manifests.core_dump import (
    has_pod_group,
    job_manifest,
    node_manifest,
    pod_group_manifest,
    priority_class_manifest,
    priority_class_name,
)
from gangkit.manifests.lws import lws_manifests, lws_problems
from gangkit.manifests.simulation import simulation_manifest
from gangkit.manifests.training import REPLICA_KINDS, jobset_manifest, replica_job_manifest, replica_problems
from gangkit.model.errors import Problem, ScenarioError
from gangkit.model.jobs import BATCH_JOB, DEPLOYMENT, JOBSET, LEADERWORKERSET, POD, STATEFULSET, Job
from gangkit.model.quantity import format_duration
from gangkit.model.scenario import Scenario
from gangkit.placement.manifests import dump_problems as gang_dump_problems
from gangkit.placement.manifests import gang_form, gang_objects, pod_spec_for, scheduler_name
from gangkit.supply import dump as supply
from gangkit.supply.provisioning_request import CONSUME_ANNOTATION
from gangkit.volcano import manifests as volcano
from gangkit.volcano.api import DEFAULT_QUEUE
from gangkit.volcano.plugins.sla import ANNOTATIONS as SLA_ANNOTATIONS

__all__ = ["dump_manifests", "select_documents"]

REPLICA_FRAMEWORKS = {rk.framework: kind for kind, rk in REPLICA_KINDS.items()}  # Kueue's name -> the kind


def dump_manifests(scenario: Scenario) -> str:
    """The scenario as multi-document YAML that :func:`~gangkit.manifests.load.load_manifests` reads back.

    Writes Nodes, the PriorityClasses the jobs need (``gangkit-priority-<value>``),
    the Kueue setup (:mod:`gangkit.kueue.dump`: ResourceFlavors, Cohorts,
    ClusterQueues, LocalQueues, AdmissionChecks, the WorkloadPriorityClasses
    the jobs name, and Kueue's Configuration when it is not the default),
    Jobs with gangkit's annotations (and the ``schedulerName`` of the stack's
    gang scheduler: ``volcano``, ``scheduler-plugins-scheduler``), a job's gang in
    the form its stack's placement layer reads (:func:`~gangkit.placement.manifests.gang_form`:
    a scheduler-plugins PodGroup, YuniKorn task groups, a Kubernetes Workload, or with
    ``kube_gang_release="1.36"`` a ``scheduling.k8s.io/v1alpha2`` PodGroup and the pods'
    ``schedulingGroup``), else a PodGroup per Job with ``min_member``
    (a job of framework ``jobset.x-k8s.io/jobset`` as a JobSet, :mod:`gangkit.manifests.training`)
    (or a Volcano queue or ``min_resources``), Volcano Queues and Volcano Jobs
    (:mod:`gangkit.volcano.manifests`), the node suppliers the run uses (Karpenter's
    NodePools, gangkit's Karpenter and ClusterAutoscaler kinds: :mod:`gangkit.supply.dump`),
    and one Simulation. A node's pool becomes a ``karpenter.sh/nodepool`` label
    and a job's queue a ``kueue.x-k8s.io/queue-name`` label when they are not
    implied already; with a Kueue setup every Job carries that label, as Kueue
    manages only the Jobs that name their LocalQueue. A pod set's ``min_count``
    becomes Kueue's ``kueue.x-k8s.io/job-min-parallelism`` annotation. Jobs must have one pod set (a batch/v1 Job has one pod
    template) and a whole number of seconds as ``max_run_time``.
    """
    problems = [p for j in scenario.jobs for p in _job_dump_problems(j, scenario)]
    problems.extend(supply.dump_problems(scenario))
    if problems:
        raise ScenarioError(problems)
    docs = _documents(scenario)
    header = f"# Scenario {scenario.name}, written by gangkit.manifests.dump_manifests\n"
    return header + yaml.dump_all(docs, Dumper=_Dumper, sort_keys=False, default_flow_style=False,
                                  allow_unicode=True, width=100)


def _job_dump_problems(j: Job, scenario: Scenario) -> list[Problem]:
    """What keeps job ``j`` from being written as manifests that read back the same: a shape its kind's
    manifests cannot say (a batch/v1 Job has one pod template, a JobSet's pod template no Kubernetes gang
    field), fractional seconds where the manifests take whole ones, a snapshot's live state."""
    problems = []
    if len(j.pod_sets) != 1 and j.controller == "batch" and j.framework == BATCH_JOB:
        problems.append(Problem(f"Job {j.key}", "pod_sets", "a batch/v1 Job has one pod template; "
                                f"expected one pod set, got {len(j.pod_sets)} (a JobSet has one per "
                                "replicatedJob: framework='jobset.x-k8s.io/jobset')"))
    if j.framework == JOBSET and any(ps.min_count is not None for ps in j.pod_sets):
        problems.append(Problem(f"Job {j.key}", "pod_sets", "Kueue's partial admission (min_count) is for "
                                "batch/v1 Jobs; a JobSet has none"))
    if j.framework == LEADERWORKERSET:
        return [Problem(f"Job {j.key}", "framework", m) for m in lws_problems(j, scenario.settings.stack)]
    if j.framework in (POD, DEPLOYMENT, STATEFULSET):
        problems.append(Problem(f"Job {j.key}", "framework", f"gangkit does not write {j.framework} workloads back "
                                "yet; export the scenario to a stack (gangkit export), which writes batch/v1 Jobs"))
    if j.framework in REPLICA_FRAMEWORKS:
        problems.extend(Problem(f"Job {j.key}", "pod_sets", m) for m in replica_problems(j, REPLICA_FRAMEWORKS[j.framework]))
    if j.framework == JOBSET and gang_form(j, scenario.settings.stack) == "kube-gang":
        field, objects = (("schedulingGroup", "PodGroup") if scenario.settings.kube_gang_release == "1.36"
                          else ("workloadRef", "Workload"))
        problems.append(Problem(f"Job {j.key}", "framework", f"the JobSet CRD's pod template has no {field}: "
                                f"a Kubernetes {objects} gang cannot be written for a JobSet"))
    if any(ps.one_per_node for ps in j.pod_sets) and (j.controller != "batch"
                                                       or j.framework not in (BATCH_JOB, JOBSET)):
        problems.append(Problem(f"Job {j.key}", "pod_sets", "one_per_node (required pod anti-affinity on "
                                "kubernetes.io/hostname) is written only into a batch/v1 Job's or a JobSet's pod "
                                "templates; "
                                f"got framework {j.framework!r}, controller {j.controller!r}"))
    if j.max_run_time is not None and j.max_run_time != int(j.max_run_time):
        problems.append(Problem(f"Job {j.key}", "max_run_time",
                                f"activeDeadlineSeconds is whole seconds; got {j.max_run_time!r}"))
    for name in ("schedule_timeout", "placeholder_timeout"):
        value = getattr(j, name)
        if value is not None and value != int(value):
            problems.append(Problem(f"Job {j.key}", name, f"the manifests take whole seconds; got {value!r}"))
    problems.extend(Problem(f"Job {j.key}", "gang", message) for message in gang_dump_problems(j))
    if j.snapshot is not None:
        problems.append(Problem(f"Job {j.key}", "snapshot", "a job taken from a live cluster's snapshot (admitted "
                                "or running) is not written back: the manifests describe jobs before they start "
                                "(give the dump itself to gangkit run, docs/reference/snapshot.md)"))
    return problems


def _documents(scenario: Scenario) -> list[dict]:
    """The documents of :func:`dump_manifests`, in its order: Nodes, PriorityClasses, the Kueue setup,
    Volcano Queues, node suppliers, the Jobs, their gang objects (or PodGroups), coscheduling's setup,
    the Simulation."""
    docs: list[dict] = [node_manifest(n) for n in scenario.nodes]
    docs.extend(priority_class_manifest(value) for value in sorted({j.priority for j in scenario.jobs if j.priority != 0}))
    docs.extend(kueue.kueue_manifests(scenario.kueue, scenario.jobs))
    docs.extend(volcano.queue_manifests(scenario.volcano))
    docs.extend(supply.supply_manifests(scenario))
    stack, release = scenario.settings.stack, scenario.settings.kube_gang_release
    scheduler = scheduler_name(stack)
    groups = [j for j in scenario.jobs if j.framework == LEADERWORKERSET]  # written as their LeaderWorkerSets
    docs.extend(_job_manifest(j, scenario.kueue is not None, scheduler, gang_form(j, stack), release,
                              _template_annotations(scenario, j))
                for j in scenario.jobs if j.framework != LEADERWORKERSET)
    docs.extend(lws_manifests(groups, scenario.kueue is not None, scheduler) if groups else [])
    for j in scenario.jobs:
        form = gang_form(j, stack)
        if j.framework == LEADERWORKERSET:
            continue  # its gang is LWS's own (a Volcano PodGroup per group, made by LWS's provider)
        docs.extend(gang_objects(j, form, release))  # a scheduler-plugins PodGroup, a Workload or a 1.36 PodGroup
        if form is None and has_pod_group(j):
            docs.append(pod_group_manifest(j, volcano.pod_group_fields(j)))
    if scenario.coscheduling is not None:
        docs.append(coscheduling_manifest(scenario.coscheduling))
    docs.append(simulation_manifest(scenario))
    return docs

def _job_manifest(j: Job, kueue_managed: bool, scheduler: str | None, gang: str | None, release: str = "1.35",
                  template_annotations: dict | None = None) -> dict:
    """A batch/v1 or Volcano Job, with the label and annotation Kueue's Job integration reads, and on each pod
    set's template the annotations of ``template_annotations`` (pod set name -> annotations: Kueue's
    topology requests, :func:`gangkit.kueue.dump.pod_template_annotations`).

    A batch/v1 Job's pods name the stack's gang scheduler in ``schedulerName``
    (:func:`~gangkit.placement.manifests.scheduler_name`): without it the
    default scheduler would place them one by one, ignoring their gang. A
    ``kube-gang`` gang is named in the field of the Kubernetes ``release``
    (``workloadRef`` in 1.35, ``schedulingGroup`` in 1.36).
    """
    if kueue_managed:
        j = dataclasses.replace(j, labels=kueue.job_labels(j))
    if j.controller != "batch":
        return volcano_job_manifest(j)
    if j.framework == JOBSET:
        doc = jobset_manifest(j, gang)
        templates = [rj["template"]["spec"]["template"] for rj in doc["spec"]["replicatedJobs"]]
    elif j.framework in REPLICA_FRAMEWORKS:
        kind = REPLICA_FRAMEWORKS[j.framework]
        doc = replica_job_manifest(j, kind)
        templates = [r["template"] for r in doc["spec"][REPLICA_KINDS[kind].field].values()]
    else:
        doc = job_manifest(j, gang)
        doc["metadata"]["annotations"].update(kueue.job_annotations(j))
        doc["spec"]["template"]["spec"] = pod_spec_for(release, doc["spec"]["template"]["spec"], j)
        templates = [doc["spec"]["template"]]
    if scheduler is not None:
        for template in templates:
            template["spec"] = {"schedulerName": scheduler} | template["spec"]
    if volcano_min_member(j, scheduler, gang) is not None:
        doc["metadata"]["annotations"][GROUP_MIN_MEMBER] = volcano_min_member(j, scheduler, gang)
    for ps, template in zip(j.pod_sets, templates):  # a template per pod set, in order
        extra = (template_annotations or {}).get(ps.name)
        if extra:
            meta = dict(template.get("metadata") or {})
            meta["annotations"] = {**meta.get("annotations", {}), **extra}
            rest = {k: v for k, v in template.items() if k != "metadata"}
            template.clear()
            template.update({"metadata": meta, **rest})
    return doc


def volcano_min_member(j: Job, scheduler: str | None, gang: str | None) -> str | None:
    """The ``scheduling.volcano.sh/group-min-member`` a batch/v1 Job carries when written for Volcano, else None.

    A Job whose pods go to Volcano (``schedulerName: volcano``) and name no PodGroup gets one from
    Volcano's podgroup controller, of ``minMember`` 1 unless the Job carries this annotation (Volcano
    v1.15.1 ``pkg/controllers/podgroup/pg_controller_handler.go``, ``getMinMemberFromUpperRes``). gangkit
    writes a PodGroup (with ``scheduling.k8s.io/group-name`` on the pods) for a job with a gang size, a
    queue, minResources or an sla waiting time (:func:`~gangkit.manifests.core_dump.has_pod_group`), which the
    controller then leaves alone; a job of more than one pod without any of these is a gang of every pod in
    gangkit, so it gets the annotation with its pod count (:func:`~gangkit.manifests.core.read_group_min_member`
    reads it back).
    """
    if (scheduler != VOLCANO_SCHEDULER or gang is not None or j.framework != BATCH_JOB or j.controller != "batch"
            or has_pod_group(j) or j.gang_size <= 1):
        return None
    return str(j.gang_size)


def _template_annotations(scenario: Scenario, j: Job) -> dict:
    """Pod set name -> the annotations its pod template carries: Kueue's topology requests, and
    cluster-autoscaler's consume-provisioning-request for a job whose pods consume a ProvisioningRequest."""
    out = {name: dict(a) for name, a in kueue.pod_template_annotations(scenario.kueue, j).items()}
    if j.consume_provisioning_request is not None:
        for ps in j.pod_sets:
            out.setdefault(ps.name, {})[CONSUME_ANNOTATION] = j.consume_provisioning_request
    return out


class _Dumper(yaml.SafeDumper):
    """Plain YAML without ``&anchors``/``*aliases``, which would puzzle a reader."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def select_documents(text: str, kinds) -> str:
    """Only the documents of ``kinds`` (e.g. ``("ClusterQueue", "Job")``) from a multi-document YAML text, in order.

    For showing part of what :func:`dump_manifests` wrote: the text of each document is kept as
    written, comments before the first document are dropped.
    """
    wanted = set(kinds)
    docs = [d.strip() for d in text.split("\n---\n")]
    keep = [d for d in docs if any(line == f"kind: {k}" for line in d.splitlines() for k in wanted)]
    return "\n---\n".join(keep) + "\n" if keep else ""


def volcano_job_manifest(j: Job) -> dict:
    """A Volcano Job: one task per pod set, each template written as for a batch/v1 Job (and its
    ``volcano.sh/preemptable: "false"`` when the pod set is not preemptable). It lives with the writers, not in
    :mod:`gangkit.volcano.manifests`, because its templates are the batch/v1 Job's (:func:`job_manifest`)."""
    tasks = []
    for ps in j.pod_sets:
        single = dataclasses.replace(j, pod_sets=[ps], min_member=None, controller="batch", volcano_queue=DEFAULT_QUEUE,
                                     min_resources=None, priority=0, max_run_time=None, sla_waiting_time=None)
        template = job_manifest(single)["spec"]["template"]
        if ps.name in j.volcano_not_preemptable:
            tmeta = template.get("metadata", {})
            tmeta["annotations"] = tmeta.get("annotations", {}) | {volcano.PREEMPTABLE: "false"}
            template = {"metadata": tmeta} | template
        task: dict[str, Any] = {"name": ps.name, "replicas": ps.count}
        if ps.min_member is not None:
            task["minAvailable"] = ps.min_member
        task["template"] = template
        tasks.append(task)
    batch = job_manifest(dataclasses.replace(j, pod_sets=j.pod_sets[:1], controller="batch", min_member=None,
                                             volcano_queue=DEFAULT_QUEUE, min_resources=None, max_run_time=None,
                                             sla_waiting_time=None))
    meta = batch["metadata"]
    if j.sla_waiting_time is not None:  # the controller passes it on to the PodGroup
        meta["annotations"] = meta.get("annotations", {}) | {SLA_ANNOTATIONS[0]: format_duration(j.sla_waiting_time)}
    spec: dict[str, Any] = {"minAvailable": j.gang_size, "schedulerName": "volcano", "queue": j.volcano_queue}
    if j.priority:
        spec["priorityClassName"] = priority_class_name(j.priority)
    spec["tasks"] = tasks
    return {"apiVersion": volcano.JOB_API, "kind": "Job", "metadata": meta, "spec": spec}
