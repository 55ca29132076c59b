"""The core kinds: Nodes, batch/v1 Jobs, PriorityClasses, and gangkit's Simulation and WorkloadGenerator.

Picture the front desk of a small cluster: a Node says what a machine has,
a Job what a team wants run, a PriorityClass who goes first::

    apiVersion: v1
    kind: Node
    metadata: {name: gpu-0, labels: {karpenter.sh/nodepool: a100}}
    status: {allocatable: {nvidia.com/gpu: "8", cpu: "96", memory: 1Ti}}
    ---
    apiVersion: batch/v1
    kind: Job
    metadata:
      name: train
      annotations: {gangkit/run-time: 1h, gangkit/progress: sync}
    spec:
      parallelism: 4
      template:
        spec:
          containers:
          - {name: worker, image: trainer:1.0, resources: {limits: {nvidia.com/gpu: "2"}}}

What is read of each:

- ``v1`` **Node**: GPUs, CPU and memory from ``status.allocatable`` (else
  ``status.capacity``), labels, the node pool from its Karpenter or GKE label;
- ``batch/v1`` **Job**: ``spec.parallelism`` pods, each asking for the sum of
  its containers' requests; ``nodeSelector``; ``priorityClassName``;
  ``spec.backoffLimit``; gangkit's annotations say how long it runs, when it
  is submitted and how long its started pods wait for each other
  (``gangkit/rendezvous-timeout``, restart churn: :mod:`gangkit.engine.churn`);
  the gang it names (:mod:`gangkit.placement.manifests`); the pod template's
  ``volcano.sh/preemptable`` (:func:`read_preemptable`); one form of
  ``affinity``, required pod anti-affinity on ``kubernetes.io/hostname``
  among the Job's own pods (:func:`read_one_per_node`);
- ``scheduling.volcano.sh/v1beta1`` **PodGroup**: the gang size
  (``spec.minMember``) and priority of the Job whose pods name it (its queue,
  ``minResources`` and ``volcano.sh/preemptable``: :mod:`gangkit.volcano.manifests`);
- ``scheduling.k8s.io/v1`` **PriorityClass**: the priority value;
- ``gangkit/v1alpha1`` **Simulation**: the run settings (stack, ordering...);
- ``gangkit/v1alpha1`` **WorkloadGenerator**: a seeded stream of jobs, read by
  :func:`gangkit.manifests.streams.stream_from_manifest`.

The Simulation's spec is read in :mod:`gangkit.manifests.simulation`; the same kinds are
written back in :mod:`gangkit.manifests.core_dump` (for :mod:`gangkit.manifests.dump` and the
writers of the kinds whose templates are a batch/v1 Job's).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gangkit.manifests.streams import YAML_FIELDS as GENERATOR_FIELDS
from gangkit.manifests.streams import stream_from_manifest
from gangkit.model.jobs import DEFAULT_BACKOFF_LIMIT, PROGRESS_MODES, Job, PodSet
from gangkit.model.nodes import Node
from gangkit.model.reading import (
    ANY,
    CHECKPOINT_INTERVAL,
    GPU,
    JOB_ANNOTATIONS,
    META,
    POD_SPEC,
    PROGRESS,
    QUEUE_LABEL,
    RUN_TIME,
    SUBMIT_TIME,
    ManifestObject,
    Reader,
    is_whole,
    spec_of,
)
from gangkit.placement.manifests import (
    POD_GROUP_LABEL,
    SCHEDULING_GROUP,
    TASK_GROUP_NAME,
    TASK_GROUPS,
    WORKLOAD_REF,
    GangObjects,
    read_gang,
)
from gangkit.supply.manifests import read_consumer
from gangkit.volcano.manifests import read_preemptable

__all__ = ["DEFAULT_RUN_TIME", "KNOWN_FIELDS", "read_object"]

HOSTNAME = "kubernetes.io/hostname"  # the well-known node label: one node is one topology domain
JOB_NAME_LABEL = "batch.kubernetes.io/job-name"  # the Job controller adds it (and job-name) to the Job's pods
REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
ONE_PER_NODE_FORM = (
    "gangkit reads only affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution with one term "
    f"of topologyKey {HOSTNAME} whose labelSelector (matchLabels, or matchExpressions with operator In) the "
    f"Job's own pods match (their template labels, or {JOB_NAME_LABEL}): one pod of the Job per node"
)

DEFAULT_RUN_TIME = 3600.0
"""Seconds of run time for a Job without a ``gangkit/run-time`` annotation (reported in a warning)."""

DESCRIPTION = "gangkit/description"
ELASTIC = "elastic"  # gangkit/progress: elastic is a sync job whose throughput follows its admitted pods
RENDEZVOUS_TIMEOUT = "gangkit/rendezvous-timeout"  # seconds a started pod of a sync job waits for the others
MAX_INT32 = 2_147_483_647  # the API server's backoffLimit default when backoffLimitPerIndex is set
GROUP_NAME = "scheduling.k8s.io/group-name"  # Volcano's pod annotation naming the pod's PodGroup
#: The annotation on a pod's controller (here a batch/v1 Job's own metadata) that Volcano's podgroup controller
#: reads as the minMember of the PodGroup it creates for pods that name no PodGroup (Volcano v1.15.1,
#: ``VolcanoGroupMinMemberAnnotationKey``, ``volcano.sh/apis`` ``pkg/apis/scheduling/v1beta1/labels.go``).
GROUP_MIN_MEMBER = "scheduling.volcano.sh/group-min-member"
VOLCANO_SCHEDULER = "volcano"  # the default of Volcano's --scheduler-name, the only schedulerName its controller serves
POOL_LABELS = ("karpenter.sh/nodepool", "cloud.google.com/gke-nodepool")
SYSTEM_PRIORITY_CLASSES = {"system-cluster-critical": 2_000_000_000, "system-node-critical": 2_000_001_000}
HIGHEST_USER_PRIORITY = 1_000_000_000  # scheduling.HighestUserDefinablePriority

_NAMES = dict.fromkeys
KNOWN_FIELDS: dict[str, dict] = {
    "Node": {
        "apiVersion": ANY, "kind": ANY, "metadata": META, "status": ANY,
        "spec": _NAMES(["providerID", "podCIDR", "podCIDRs", "externalID"], ANY),
    },
    "Job": {
        "apiVersion": ANY, "kind": ANY, "metadata": META, "status": ANY,
        "spec": {
            **_NAMES(
                ["parallelism", "completions", "activeDeadlineSeconds", "backoffLimit", "backoffLimitPerIndex",
                 "maxFailedIndexes", "completionMode", "ttlSecondsAfterFinished", "suspend", "manualSelector",
                 "selector", "podFailurePolicy", "podReplacementPolicy", "successPolicy", "managedBy"],
                ANY,
            ),
            "template": {"metadata": META, "spec": {**POD_SPEC, "workloadRef": WORKLOAD_REF,  # 1.35
                                                    "schedulingGroup": SCHEDULING_GROUP,  # 1.36
                                                    "affinity": ANY}},  # one form read: read_one_per_node
        },
    },
    "PodGroup": {
        "apiVersion": ANY, "kind": ANY, "metadata": META, "status": ANY,
        "spec": _NAMES(["minMember", "priorityClassName", "queue", "minResources"], ANY),
    },
    "PriorityClass": _NAMES(
        ["apiVersion", "kind", "metadata", "value", "globalDefault", "description", "preemptionPolicy"], ANY
    )
    | {"metadata": META},
    "Simulation": {
        "apiVersion": ANY, "kind": ANY, "metadata": _NAMES(["name", "labels", "annotations"], ANY),
        "spec": {**_NAMES(["stack", "ordering", "scoring", "preemption", "sessionPeriod", "seed", "horizon", "record",
                           "estimateFactor", "kubeGangRelease"], ANY),
                 # RequestedToCapacityRatio: as NodeResourcesFit's scoringStrategy writes them
                 "scoringResources": [_NAMES(["name", "weight"], ANY)],
                 "requestedToCapacityRatio": {"shape": [_NAMES(["utilization", "score"], ANY)]}},
    },
    "WorkloadGenerator": {
        "apiVersion": ANY, "kind": ANY, "metadata": _NAMES(["name", "namespace", "labels", "annotations"], ANY),
        "spec": GENERATOR_FIELDS,
    },
}
KNOWN_ANNOTATIONS = {  # gangkit's own annotations, per kind; other gangkit/* keys are reported
    "Job": (*JOB_ANNOTATIONS, RENDEZVOUS_TIMEOUT),
    "Simulation": (DESCRIPTION,),
}


def read_object(r: Reader, doc: Mapping, where: str, role: str) -> ManifestObject | None:
    """Check one object of a core kind (its metadata, unknown fields and gangkit annotations).

    A Volcano PodGroup's ``spec.minMember`` is checked here, used by a Job
    or not: Volcano's CRD (``scheduling.volcano.sh_podgroups.yaml``,
    v1.16) makes it an int32 with ``minimum: 0``, so the API server refuses
    a negative one at creation.
    """
    o = r.check_object(doc, where, KNOWN_FIELDS[role], KNOWN_ANNOTATIONS.get(role, ()))
    if o is not None and role == "PodGroup":
        r.spec_count(o, "minMember", 0)
    return o


# --- reading --------------------------------------------------------------------


def read_priority_classes(r: Reader, objects: list[ManifestObject]) -> tuple[dict[str, int], int]:
    """PriorityClass name -> value, and the value pods get without a class (the globalDefault one, else 0).

    Models the Priority admission plugin: a user class value is at most
    1000000000, only one class may be ``globalDefault``, and the two
    ``system-*`` classes always exist.
    """
    classes = dict(SYSTEM_PRIORITY_CLASSES)
    default, default_from = 0, None
    for o in objects:
        value = o.doc.get("value")
        if isinstance(value, bool) or not isinstance(value, int) or value > HIGHEST_USER_PRIORITY:
            r.error(o.label, "value", f"expected a whole number <= {HIGHEST_USER_PRIORITY}, got {value!r}")
            continue
        classes[o.name] = value
        is_default = o.doc.get("globalDefault", False)
        if not isinstance(is_default, bool):
            r.error(o.label, "globalDefault", f"expected true or false, got {is_default!r}")
        elif is_default and default_from:
            r.error(o.label, "globalDefault", f"expected only one globalDefault PriorityClass; {default_from} is one")
        elif is_default:
            default, default_from = value, o.label
        policy = o.doc.get("preemptionPolicy", "PreemptLowerPriority")
        if policy != "PreemptLowerPriority":
            r.unknown.append(f"{o.label}: preemptionPolicy")
    return classes, default


def read_node(r: Reader, o: ManifestObject) -> Node | None:
    """A Node: the scheduler counts ``status.allocatable``; the API server defaults it to ``capacity``."""
    obj, meta = o.label, r.mapping(o.doc.get("metadata"), o.label, "metadata")
    labels = r.strings(meta.get("labels"), obj, "metadata.labels")
    status = r.mapping(o.doc.get("status"), obj, "status")
    part = "allocatable" if status.get("allocatable") is not None else "capacity"
    resources = r.mapping(status.get(part), obj, f"status.{part}")
    where = f"status.{part}."
    gpus = r.gpus(resources.get(GPU, 0), obj, where + GPU)
    cpu = r.cpu(resources["cpu"], obj, where + "cpu") if "cpu" in resources else None
    memory = r.memory(resources["memory"], obj, where + "memory") if "memory" in resources else None
    pool = next((labels[k] for k in POOL_LABELS if k in labels), "default")
    if gpus is None:
        return None
    return Node(o.name, gpus, cpu=cpu, memory=memory, labels=labels, pool=pool)


def active_deadline(r: Reader, spec: Mapping, obj: str) -> float | None:
    """A Job's ``spec.activeDeadlineSeconds`` (the Job controller fails the Job past it), as gangkit's max run time."""
    if "activeDeadlineSeconds" not in spec:
        return None
    deadline = r.whole(spec["activeDeadlineSeconds"], obj, "spec.activeDeadlineSeconds", 1)
    return None if deadline is None else float(deadline)


def read_job(r: Reader, o: ManifestObject, classes: dict, default_priority: int, groups: dict, used_groups: dict,
             gangs: GangObjects) -> Job | None:
    """A batch/v1 Job: ``parallelism`` identical pods (one wave), requests summed over containers.

    ``groups`` are Volcano's PodGroups by (namespace, name); the one the
    Job's pods name is recorded in ``used_groups``. ``gangs`` are the
    holding gang schedulers' objects (:mod:`gangkit.placement.manifests`).
    """
    obj = o.label
    meta = r.mapping(o.doc.get("metadata"), obj, "metadata")
    labels = r.strings(meta.get("labels"), obj, "metadata.labels")
    annotations = r.strings(meta.get("annotations"), obj, "metadata.annotations")
    spec = r.mapping(o.doc.get("spec"), obj, "spec")
    pods = r.whole(spec.get("parallelism", 1), obj, "spec.parallelism", 1)
    if "completions" in spec:
        completions = r.whole(spec["completions"], obj, "spec.completions", 1)
        if completions is not None and pods is not None and completions != pods:
            r.notes.append(
                f"{obj}: spec.completions is {completions} but spec.parallelism is {pods}; "
                f"gangkit models one wave of {pods} pod(s) that run together"
            )
    max_run_time = active_deadline(r, spec, obj)
    limit = backoff_limit(r, spec, obj)

    if not isinstance(spec.get("template"), Mapping):
        r.error(obj, "spec.template", "expected a pod template (a mapping with spec.containers); it is required")
        return None
    tmeta = r.mapping(spec["template"].get("metadata"), obj, "spec.template.metadata")
    tannotations = r.strings(tmeta.get("annotations"), obj, "spec.template.metadata.annotations")
    pod = r.mapping(spec["template"].get("spec"), obj, "spec.template.spec")
    request = r.pod_request(pod, obj)
    selector = r.strings(pod.get("nodeSelector"), obj, "spec.template.spec.nodeSelector")
    tlabels = r.strings(tmeta.get("labels"), obj, "spec.template.metadata.labels")
    one_per_node = read_one_per_node(r, pod, {**tlabels, JOB_NAME_LABEL: o.name, "job-name": o.name}, obj)

    timing = read_timing(r, annotations, obj)
    consumer = read_consumer(r, tannotations, annotations, obj)  # cluster-autoscaler's consume-provisioning-request
    # the pods' volcano.sh/preemptable (a batch/v1 Job's pods get their metadata from the template alone)
    preemptable = read_preemptable(r, tmeta, obj, "spec.template.metadata", checked=True)

    # the PodGroup named by the pods (Volcano's annotation), else by the Job itself
    group_field, group_name = next(
        ((f"{w}.annotations.{GROUP_NAME}", a[GROUP_NAME]) for w, a in
         (("spec.template.metadata", tannotations), ("metadata", annotations)) if GROUP_NAME in a),
        (None, None),
    )
    group = claim_pod_group(r, obj, o.namespace, group_field, group_name, groups, used_groups)
    group_spec = spec_of(group) if group else {}  # a spec that is no mapping was reported with the PodGroup
    min_member = read_min_member(r, group, group_spec) if group else None
    priority = pod_priority(r, pod, group, group_spec, classes, default_priority, obj)
    gang = read_gang(r, gangs, o, pods, tmeta, pod, volcano=group_name is not None)  # the holding gang schedulers
    min_member = gang.pop("min_member", min_member)
    gang_object = gang.pop("gang_object", None) or (group.label if group else None)  # the diagnosis names it
    if o.kind == "Job" and group_name is not None and GROUP_MIN_MEMBER in annotations:
        r.notes.append(f"{obj}: metadata.annotations.{GROUP_MIN_MEMBER} is ignored: its pods name PodGroup "
                       f"{group_name!r} ({group_field}), so Volcano's podgroup controller makes no PodGroup for them")
    elif o.kind == "Job" and group_name is None and not gang and not other_gang(tmeta, pod):
        min_member = read_group_min_member(r, annotations, pod, pods, obj)

    if pods is None or request is None or priority is None or limit is None:
        return None
    gpus, cpu, memory = request
    return Job(
        name=o.name,
        namespace=o.namespace,
        pod_sets=[PodSet("workers", pods, gpus, cpu, memory, selector, one_per_node=one_per_node)],
        priority=priority,
        queue=labels.get(QUEUE_LABEL) or o.namespace or "default",
        min_member=min_member,
        max_run_time=max_run_time,
        labels=labels,
        backoff_limit=limit,
        volcano_not_preemptable=("workers",) if preemptable is False else (),
        consume_provisioning_request=consumer,
        gang_object=gang_object,
        **timing,
        **gang,
    )


def read_one_per_node(r: Reader, pod: Mapping, pod_labels: dict, obj: str, others: tuple = (),
                      where: str = "spec.template.spec.affinity") -> bool:
    """Does the pod template ask for one pod of its pod set per node? (``PodSet.one_per_node``)

    True for exactly one form of ``affinity``: ``podAntiAffinity`` with one
    ``requiredDuringSchedulingIgnoredDuringExecution`` term of topologyKey
    ``kubernetes.io/hostname`` whose ``labelSelector`` the pod set's own pods
    match (``pod_labels``: the template's labels and those the controllers
    add, e.g. ``batch.kubernetes.io/job-name`` and ``job-name`` of the Job
    controller) and the pods of the job's other pod sets (``others``, their
    labels) do not: ``matchLabels`` and ``matchExpressions`` with operator
    ``In``. kube-scheduler's InterPodAffinity Filter then keeps the pods on
    distinct nodes (``pkg/scheduler/framework/plugins/interpodaffinity``,
    Kubernetes 1.35). Any other affinity, ``where``, is listed among the
    fields gangkit does not read, with the form it reads. Simplified: the
    rule holds among the pod set's own pods; pods of other jobs that the
    selector also matches are not counted.
    """
    affinity = pod.get("affinity")
    if affinity is None:
        return False
    if _one_per_node_form(affinity, pod_labels):
        if not any(_one_per_node_form(affinity, labels) for labels in others):
            return True
        r.unknown.append(f"{obj}: {where} (its labelSelector also picks the pods of another of the job's pod sets; "
                         "gangkit keeps pods apart within one pod set only)")
        return False
    r.unknown.append(f"{obj}: {where} ({ONE_PER_NODE_FORM})")
    return False


def _one_per_node_form(affinity: Any, pod_labels: dict) -> bool:
    """The one form of affinity :func:`read_one_per_node` reads, with a selector ``pod_labels`` match."""
    if not isinstance(affinity, Mapping) or set(affinity) != {"podAntiAffinity"}:
        return False
    anti = affinity["podAntiAffinity"]
    if not isinstance(anti, Mapping) or set(anti) != {REQUIRED}:
        return False
    terms = anti[REQUIRED]
    if not isinstance(terms, list) or len(terms) != 1 or not isinstance(terms[0], Mapping):
        return False
    term = terms[0]
    if set(term) != {"labelSelector", "topologyKey"} or term["topologyKey"] != HOSTNAME:
        return False
    sel = term["labelSelector"]
    if not isinstance(sel, Mapping) or not sel or not set(sel) <= {"matchLabels", "matchExpressions"}:
        return False
    match = sel.get("matchLabels", {})
    exprs = sel.get("matchExpressions", [])
    if not isinstance(match, Mapping) or not isinstance(exprs, list) or not (match or exprs):
        return False
    if any(not isinstance(v, str) or pod_labels.get(k) != v for k, v in match.items()):
        return False
    for e in exprs:
        if not isinstance(e, Mapping) or set(e) != {"key", "operator", "values"} or e["operator"] != "In":
            return False
        values = e["values"]
        if not isinstance(values, list) or not values or pod_labels.get(e["key"]) not in values:
            return False
    return True


def one_per_node_affinity(j: Job) -> dict:
    """The pod template's ``affinity`` that :func:`read_one_per_node` reads as one pod of ``j`` per node."""
    term = {"labelSelector": {"matchLabels": {JOB_NAME_LABEL: j.name}}, "topologyKey": HOSTNAME}
    return {"podAntiAffinity": {REQUIRED: [term]}}


def claim_pod_group(r: Reader, obj: str, namespace: str | None, fieldname: str | None, name: str | None, groups: dict,
                    used_groups: dict) -> ManifestObject | None:
    """The Volcano PodGroup a workload's pods name (``fieldname``), recorded as used by ``obj``; None if none or refused."""
    if name is None:
        return None
    namespace = namespace or "default"
    group = groups.get((namespace, name))
    if group is None:
        r.error(obj, fieldname, f"names PodGroup {name!r} in namespace {namespace!r}, which is not in the input")
    elif (namespace, name) in used_groups:
        r.error(obj, fieldname, f"PodGroup {name!r} is already used by {used_groups[(namespace, name)]}; "
                "gangkit models one PodGroup per Job")
        return None
    else:
        used_groups[(namespace, name)] = obj
    return group


def read_timing(r: Reader, annotations: dict, obj: str) -> dict:
    """gangkit's annotations of a workload: how long it runs, when it comes, how it progresses (Job fields).

    ``run_time`` is None when the annotation is absent: the default is filled
    in (and reported) once every Job is read.
    """
    def duration(key: str) -> float | None:
        if key not in annotations:
            return None
        return r.duration(annotations[key], obj, f"metadata.annotations.{key}")

    run_time = duration(RUN_TIME)
    if run_time == 0:
        r.error(obj, f"metadata.annotations.{RUN_TIME}", f"expected a run time > 0, got {annotations[RUN_TIME]!r}")
    checkpoint = duration(CHECKPOINT_INTERVAL)
    if checkpoint == 0:
        r.error(obj, f"metadata.annotations.{CHECKPOINT_INTERVAL}", "expected an interval > 0 (leave it out for no checkpoints)")
    rendezvous_timeout = duration(RENDEZVOUS_TIMEOUT)
    if rendezvous_timeout == 0:
        r.error(obj, f"metadata.annotations.{RENDEZVOUS_TIMEOUT}", "expected a timeout > 0 (leave it out to wait for ever)")
    progress = annotations.get(PROGRESS, "sync")
    elastic = progress == ELASTIC  # sync, with a throughput that follows the admitted pods
    if progress not in (*PROGRESS_MODES, ELASTIC):
        r.error(obj, f"metadata.annotations.{PROGRESS}",
                f"expected one of {', '.join((*PROGRESS_MODES, ELASTIC))}, got {progress!r}")
    return {"run_time": run_time, "submit_time": duration(SUBMIT_TIME) or 0.0,
            "progress": "sync" if elastic else progress, "elastic": elastic,
            "checkpoint_interval": checkpoint, "rendezvous_timeout": rendezvous_timeout or None}


def backoff_limit(r: Reader, spec: Mapping, obj: str) -> int | None:
    """``spec.backoffLimit``: failed pods a Job tolerates (restart churn). Absent: 6, or, when
    ``backoffLimitPerIndex`` is set, 2147483647 (the API server's defaults in Kubernetes 1.35;
    per-index limits themselves are not modelled)."""
    if "backoffLimit" in spec:
        return r.whole(spec["backoffLimit"], obj, "spec.backoffLimit", 0)
    return MAX_INT32 if spec.get("backoffLimitPerIndex") is not None else DEFAULT_BACKOFF_LIMIT


def other_gang(tmeta: Mapping, pod: Mapping) -> bool:
    """Does the pod template name a gang of another scheduler (scheduler-plugins, YuniKorn, Kubernetes)?"""
    labels = tmeta.get("labels") if isinstance(tmeta.get("labels"), Mapping) else {}
    annotations = tmeta.get("annotations") if isinstance(tmeta.get("annotations"), Mapping) else {}
    return (POD_GROUP_LABEL in labels or TASK_GROUP_NAME in annotations or TASK_GROUPS in annotations
            or pod.get("workloadRef") is not None or pod.get("schedulingGroup") is not None)


def read_group_min_member(r: Reader, annotations: dict, pod: Mapping, pods: int | None, obj: str) -> int | None:
    """The gang size of a batch/v1 Job whose pods name no Volcano PodGroup (``scheduling.k8s.io/group-name``).

    Volcano v1.15.1's podgroup controller (``pkg/controllers/podgroup/pg_controller.go``,
    ``processNextReq``; ``pg_controller_handler.go``, ``buildPodGroupFromPod`` and
    ``getMinMemberFromUpperRes``) creates a PodGroup ``podgroup-<owner uid>`` for every pod whose
    ``schedulerName`` is Volcano's and that names no PodGroup. Its ``minMember`` is the
    owner's (the Job's ``metadata.annotations``) ``scheduling.volcano.sh/group-min-member``
    (read with ``--inherit-owner-annotations``, true by default), else 1: such a Job is
    no gang unless it carries the annotation. Its ``minResources`` are ``minMember``
    times one pod's requests, its ``priorityClassName`` the pod's, its queue the pods'
    ``scheduling.volcano.sh/queue-name`` (else ``default``).

    gangkit reads the annotation into ``Job.min_member`` (a whole number of at least 1, None
    when it is ``parallelism``: gangkit's default gang of every pod; above ``parallelism`` it is
    read, as ``getMinMemberFromUpperRes`` does not compare it with the pods, and the job waits;
    Volcano would take an unparsable or negative value as 1, and 0 as no
    gang: gangkit refuses them with an error naming the field). Without it, a Job
    whose pods name ``schedulerName: volcano`` gets ``min_member`` 1, as on the
    cluster, with a note; a Job whose pods name another scheduler (or none) keeps gangkit's
    default, a gang of every pod (Volcano's controller does not serve it; the
    annotation is then noted as ignored). Simplified: the PodGroup's
    ``minResources`` are not derived (``Job.min_resources`` stays unset).
    """
    scheduler = pod.get("schedulerName")
    where = f"metadata.annotations.{GROUP_MIN_MEMBER}"
    if scheduler != VOLCANO_SCHEDULER:
        if GROUP_MIN_MEMBER in annotations:
            r.notes.append(f"{obj}: {where} is ignored: Volcano's podgroup controller serves only pods with "
                           f"spec.template.spec.schedulerName {VOLCANO_SCHEDULER!r}, these name "
                           f"{scheduler if scheduler is not None else 'none (default-scheduler)'!r}")
        return None
    if GROUP_MIN_MEMBER not in annotations:
        if pods is None or pods <= 1:
            return None  # one pod: a gang of 1 either way
        r.notes.append(f"{obj}: its pods go to Volcano (schedulerName {VOLCANO_SCHEDULER!r}) and name no PodGroup "
                       f"({GROUP_NAME}), and the Job has no {GROUP_MIN_MEMBER} annotation: Volcano's podgroup "
                       f"controller gives them a PodGroup of minMember 1, so gangkit places its {pods} pods "
                       f"without a gang (write {GROUP_MIN_MEMBER}: \"{pods}\" for a gang of all of them)")
        return 1
    text = annotations[GROUP_MIN_MEMBER]
    value = int(text) if text.isdigit() else None
    if value is None or value < 1:
        r.error(obj, where, f"expected a whole number >= 1 as a string, got {text!r}")
        return None
    return None if value == pods else value  # every pod: gangkit's default gang (min_member None)


def read_min_member(r: Reader, group: ManifestObject, spec: dict) -> int | None:
    """Volcano's ``spec.minMember``: how many pods must start together. Absent: every pod.

    The CRD allows 0 (no gang at all); gangkit needs a gang of at least 1. Above the pods' count is
    read: nothing upstream checks a PodGroup against the pods that name it (Volcano v1.15.1 has
    no PodGroup webhook that does), and its gang plugin keeps such a job pending
    (:func:`gangkit.volcano.plugins.gang.job_valid`); ``gangkit check`` reports it.
    A value the CRD refuses was reported when the PodGroup was read (:func:`read_object`).
    """
    if spec.get("minMember") is None:
        return None
    m = spec["minMember"]
    if not is_whole(m, 0):
        return None
    if m < 1:
        r.error(group.label, "spec.minMember", f"expected a whole number >= 1 (0 is Volcano's 'no gang', "
                                               f"which gangkit does not model), got {m!r}")
        return None
    return m


def pod_priority(r: Reader, pod: dict, group: ManifestObject | None, group_spec: dict, classes: dict, default: int,
              obj: str) -> int | None:
    """The Job's priority: the value of its PriorityClass (pod template, else PodGroup), else the globalDefault one."""
    values = []
    for owner, fieldname, name in (
        (obj, "spec.template.spec.priorityClassName", pod.get("priorityClassName")),
        (group.label if group else "", "spec.priorityClassName", group_spec.get("priorityClassName")),
    ):
        if name is None:
            continue
        if name not in classes:
            known = ", ".join(sorted(classes))
            r.error(owner, fieldname, f"no PriorityClass named {name!r} in the input (known: {known})")
            return None
        values.append((owner, fieldname, name, classes[name]))
    if len(values) == 2 and values[0][3] != values[1][3]:
        (_, _, pod_class, pod_value), (owner, fieldname, group_class, group_value) = values
        r.error(owner, fieldname, f"{group_class!r} (value {group_value}) differs from the pod template's "
                f"{pod_class!r} (value {pod_value}); gangkit models one priority per Job")
        return None
    return values[0][3] if values else default


def read_generated_jobs(r: Reader, objects: list[ManifestObject], node_list: list[Node], jobs: list[Job]) -> list[Job]:
    """The jobs of every WorkloadGenerator (gangkit.workloads.generators), in its namespace; names must not clash."""
    gpus = sum(n.gpus for n in node_list)
    taken = {j.key: "a Job" for j in jobs}
    out = []
    for o in objects:
        stream = stream_from_manifest(r, o, gpus, r.base)
        for j in stream.jobs() if stream is not None else ():
            j.namespace = o.namespace
            j.queue = o.namespace or j.queue
            if j.key in taken:
                r.error(o.label, "spec.classes", f"its job {j.key} has the name of {taken[j.key]}; use other class names")
                break
            taken[j.key] = o.label
            out.append(j)
    return out
