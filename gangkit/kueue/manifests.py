"""Kueue's own YAML: ResourceFlavors, ClusterQueues, LocalQueues, Cohorts, Workloads.

Picture Kueue's desk in the sorting office of :mod:`gangkit.manifests.load`:
the board (:mod:`gangkit.manifests.kinds`) sends it every object whose kind
is one of Kueue's, the way an operator ``kubectl apply``-es them::

    apiVersion: kueue.x-k8s.io/v1beta2
    kind: ClusterQueue
    metadata: {name: team-a}
    spec:
      cohortName: research          # budgets in a cohort lend to each other
      namespaceSelector: {}         # every namespace may use it
      resourceGroups:
      - coveredResources: [nvidia.com/gpu]
        flavors:
        - name: a100
          resources:
          - {name: nvidia.com/gpu, nominalQuota: 8, borrowingLimit: 8}

This module checks each object (:func:`read_object`), reads the setup into a
:class:`~gangkit.kueue.objects.KueueSetup` (the queue objects themselves:
:mod:`gangkit.kueue.setup_manifests`) and the Workloads, pending or already
holding quota when ``status.admission`` says so (:class:`KueueReader`), and
gives ``gangkit run`` what Kueue reads of a Job (:func:`read_for_scenario`).
``gangkit admit`` reads a whole snapshot with :mod:`gangkit.manifests.kueue_snapshot`.

Both API versions Kueue serves are read: ``kueue.x-k8s.io/v1beta2`` and the
older ``v1beta1`` (where ClusterQueue ``spec.cohortName`` is called
``spec.cohort``), and Kueue's ``Configuration`` (``config.kueue.x-k8s.io``
v1beta2 or v1beta1). Quantities become Kueue's canonical integers: CPU in
millicores, memory in bytes, everything else (GPUs, pods) as a count,
rounded up as Kueue rounds.

Bad input is checked with Kueue's own cheap rules (its webhooks and the CEL
rules of its CRDs): every problem, one line each naming object and field, in
one :class:`~gangkit.model.errors.ScenarioError`. Fields gangkit does not
model join the one warning about unread fields. Two decisions differ from
Kueue, which has no error for them but keeps the queues concerned *inactive*
(admitting nothing), a state gangkit does not model: a ClusterQueue naming a
ResourceFlavor that is not in the input, and a cycle of Cohort parents, are
errors here.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from gangkit.kueue.objects import DEFAULT_POD_SET, Admission, KueueSetup, PodSetSpec, Workload
from gangkit.kueue.setup_manifests import API_VERSIONS, FEATURE_GATES, KIND_NAMES, V1BETA1, SetupReader, canonical
from gangkit.kueue.tas.cache import unmodelled_problems
from gangkit.kueue.tas.manifests import (
    TOPOLOGY_FIELDS,
    UNNAMED_TOPOLOGY,
    check_tas_nodes,
    drop_companion_notes,
    read_topology_requests,
)
from gangkit.model.reading import ANY, META, POD_SPEC, QUEUE_LABEL, ManifestObject, Reader, new_object, short

__all__ = ["API_VERSIONS", "KIND_NAMES", "KueueReader", "LoadedWorkload", "known_fields", "read_for_scenario",
           "read_object"]

NAMESPACED = ("LocalQueue", "Workload")
PRIORITY_CLASS_LABEL = "kueue.x-k8s.io/priority-class"  # a Job's WorkloadPriorityClass
MIN_PARALLELISM = "kueue.x-k8s.io/job-min-parallelism"  # a Job's minCount (partial admission)
PODS = "pods"


# --- which fields gangkit reads, per kind and version (the tree language of gangkit.model.reading) ---

_QUOTA = dict.fromkeys(["name", "nominalQuota", "borrowingLimit", "lendingLimit"], ANY)
_RESOURCE_GROUPS = [{"coveredResources": ANY, "flavors": [{"name": ANY, "resources": [_QUOTA]}]}]
_FAIR_SHARING = {"weight": ANY}
_ANY_RESOURCES = {"*": ANY}
_CONTAINER = {**POD_SPEC["containers"][0], "resources": {"limits": _ANY_RESOURCES, "requests": _ANY_RESOURCES}}
_TEMPLATE_POD = {**POD_SPEC, "containers": [_CONTAINER], "initContainers": [{**_CONTAINER, "restartPolicy": ANY}]}
_TOP = {"apiVersion": ANY, "kind": ANY, "metadata": META}
_CQ_SPEC = {
    "resourceGroups": _RESOURCE_GROUPS,
    "queueingStrategy": ANY,
    "namespaceSelector": {},  # {} (every namespace) is modelled; a real selector is reported
    "preemption": {"withinClusterQueue": ANY, "reclaimWithinCohort": ANY,
                   "borrowWithinCohort": {"policy": ANY, "maxPriorityThreshold": ANY}},
    "flavorFungibility": dict.fromkeys(["whenCanBorrow", "whenCanPreempt", "preference"], ANY),
    "fairSharing": _FAIR_SHARING,
    "stopPolicy": ANY,  # None is modelled; Hold and HoldAndDrain are reported
    "admissionChecksStrategy": {"admissionChecks": [{"name": ANY}]},  # onFlavors is reported
}
_WORKLOAD_STATUS = {
    "admission": {"clusterQueue": ANY,
                  "podSetAssignments": [dict.fromkeys(["name", "flavors", "resourceUsage", "count"], ANY)]},
    "conditions": ANY,
    "resourceRequests": ANY,  # informative: Kueue recomputes requests from the pod sets
}
_WORKLOAD_SPEC = {
    "queueName": ANY, "priority": ANY, "active": ANY,
    "podSets": [{"name": ANY, "count": ANY, "minCount": ANY,
                 "template": {"metadata": dict.fromkeys(["name", "namespace", "labels", "annotations", "finalizers"], ANY),
                              "spec": _TEMPLATE_POD}}],
}
_CONFIG_OPERATIONAL = dict.fromkeys(
    ["namespace", "health", "metrics", "webhook", "leaderElection", "controller", "clientConnection",
     "internalCertManagement", "pprofBindAddress", "visibilityServer", "tls", "integrations", "metadata",
     "manageJobsWithoutQueueName", "managedJobsNamespaceSelector"], ANY)
_REQUEUING = dict.fromkeys(["timestamp", "backoffLimitCount", "backoffBaseSeconds", "backoffMaxSeconds"], ANY)


def known_fields(kind: str, api_version: str) -> dict:
    """The fields gangkit reads (or knows to be harmless) for one kind and apiVersion; others are reported."""
    v1 = api_version.endswith("v1beta1")
    if kind == "ResourceFlavor":
        return {**_TOP, "spec": {"nodeLabels": ANY, "topologyName": ANY}}
    if kind == "Topology":
        return TOPOLOGY_FIELDS
    if kind == "ClusterQueue":
        extra = {"cohort": ANY, "admissionChecks": ANY} if v1 else {"cohortName": ANY}
        return {**_TOP, "spec": {**_CQ_SPEC, **extra}}
    if kind == "AdmissionCheck":
        return {**_TOP, "spec": {"controllerName": ANY, "parameters": dict.fromkeys(["apiGroup", "kind", "name"], ANY)}}
    if kind == "ProvisioningRequestConfig":  # managedResources, parameters, podSetUpdates, podSetMergePolicy: reported
        return {**_TOP, "spec": {"provisioningClassName": ANY, "retryStrategy": dict.fromkeys(
            ["backoffLimitCount", "backoffBaseSeconds", "backoffMaxSeconds"], ANY)}}
    if kind == "Cohort":
        return {**_TOP, "spec": {"parentName": ANY, "resourceGroups": _RESOURCE_GROUPS, "fairSharing": _FAIR_SHARING}}
    if kind == "LocalQueue":
        return {**_TOP, "spec": {"clusterQueue": ANY, "stopPolicy": ANY, "fairSharing": _FAIR_SHARING}}
    if kind == "WorkloadPriorityClass":
        return {**_TOP, "value": ANY, "description": ANY}
    if kind == "Workload":
        priority = ({"priorityClassName": ANY, "priorityClassSource": ANY} if v1
                    else {"priorityClassRef": dict.fromkeys(["group", "kind", "name"], ANY)})
        return {**_TOP, "spec": {**_WORKLOAD_SPEC, **priority}, "status": _WORKLOAD_STATUS}
    if kind == "Configuration":
        wfpr = {"timeout": ANY, "blockAdmission": ANY, "requeuingStrategy": _REQUEUING}
        fs = {"preemptionStrategies": ANY}
        if v1:
            wfpr, fs = {**wfpr, "enable": ANY}, {**fs, "enable": ANY}
        return {"apiVersion": ANY, "kind": ANY, **_CONFIG_OPERATIONAL, "waitForPodsReady": wfpr, "fairSharing": fs,
                "featureGates": dict.fromkeys(FEATURE_GATES, ANY)}
    raise KeyError(kind)


# --- the family's part of reading (called by gangkit.manifests.load) -------------------------------


def read_object(r: Reader, doc: Mapping, where: str, role: str) -> ManifestObject | None:
    """Check one Kueue object's metadata, and report its unread fields (the registry calls it)."""
    kind, api = doc.get("kind"), doc.get("apiVersion")
    meta = doc.get("metadata") if isinstance(doc.get("metadata"), Mapping) else {}
    o = new_object(doc, where)
    if kind == "Configuration":  # a file for Kueue's manager, not an API object: metadata is optional
        o.name = o.name or None
        o.namespace = None
    else:
        if not isinstance(doc.get("metadata"), Mapping):
            r.error(o.label, "metadata", "expected a mapping with at least a name")
            return None
        if not isinstance(meta.get("name"), str) or not o.name:
            r.error(o.label, "metadata.name", f"expected a non-empty name, got {short(meta.get('name'))}")
            return None
        if meta.get("namespace") is not None and (not isinstance(o.namespace, str) or not o.namespace):
            r.error(o.label, "metadata.namespace", f"expected a non-empty string, got {short(meta.get('namespace'))}")
            return None
        if kind not in NAMESPACED:
            o.namespace = None  # cluster-scoped: the API server ignores a namespace
    if not r.find_unknown(o.doc, known_fields(kind, api), o.label, ""):
        return None  # a name that is not a string: reported, and not read further
    return o


def read_for_scenario(r: Reader, objects: list[ManifestObject], jobs: list, classes: dict[str, int]) -> KueueSetup | None:
    """Kueue's objects of a ``gangkit run`` scenario (``objects``: every object of the input).

    Also gives each Job what Kueue's job integration reads from it: the
    value of its WorkloadPriorityClass (label ``kueue.x-k8s.io/priority-class``)
    as its priority, its ``kueue.x-k8s.io/job-min-parallelism`` as the
    pod set's ``min_count`` (partial admission), and its pod templates'
    topology annotations (:mod:`gangkit.kueue.tas.manifests`). Returns ``None``
    when the input has no ClusterQueue (``kueue+`` stacks then use gangkit's
    default setup). Problems and notes go to ``r``.
    """
    kueue_objects = [o for o in objects if o.kind in KIND_NAMES]
    kr = KueueReader(r, kueue_objects, classes, 0)
    setup = kr.setup()
    job_objects = {(o.namespace, o.name): o for o in objects if o.kind == "Job"}
    unlabelled, volcano_jobs = [], []
    for j in jobs:
        obj = f"Job {j.key}"
        name = j.labels.get(PRIORITY_CLASS_LABEL)
        if name is not None:
            value = kr.workload_priority_class(name, obj, f"metadata.labels.{PRIORITY_CLASS_LABEL}")
            if value is not None:
                j.priority = value
        o = job_objects.get((j.namespace, j.name))
        annotations = _dig_mapping(o.doc, "metadata", "annotations") if o is not None else {}
        if MIN_PARALLELISM in annotations and len(j.pod_sets) == 1:
            min_count = kr.min_parallelism(annotations[MIN_PARALLELISM], j.pod_sets[0].count, obj)
            if min_count is not None:
                j.pod_sets = [dataclasses.replace(j.pod_sets[0], min_count=min_count)]
        if j.controller == "volcano":  # Kueue has no integration for batch.volcano.sh Jobs (pkg/controller/jobs)
            j.kueue_managed = False
            volcano_jobs.append(j.key)
        elif QUEUE_LABEL in j.labels and setup.cluster_queues:
            kr.check_local_queue(obj, f"metadata.labels.{QUEUE_LABEL}", j.namespace, j.queue)
        elif setup.cluster_queues:
            unlabelled.append(j)
    _without_queue_name(r, unlabelled, setup)
    if setup.topologies or any(f.topology_name is not None for f in setup.flavors):
        _topology(r, objects, jobs, setup)
    if volcano_jobs and kueue_objects:
        r.notes.append(f"Kueue has no integration for Volcano Jobs (batch.volcano.sh): it does not manage them, so under a "
                       f"kueue+ stack they go straight to Volcano, past every ClusterQueue (write a batch/v1 Job with a "
                       f"Volcano PodGroup for Kueue in front of Volcano): {', '.join(volcano_jobs)}")
    workloads = [o for o in kueue_objects if o.kind == "Workload"]
    for o in workloads:
        kr.workload(o)
    if workloads:
        r.notes.append(f"gangkit run simulates batch/v1 Jobs, not Workload objects; {len(workloads)} Workload(s) "
                       f"were checked and left out (gangkit admit reads them): {', '.join(o.label for o in workloads)}")
    if not setup.cluster_queues:
        if any(o.kind != "WorkloadPriorityClass" for o in kueue_objects):
            r.notes.append("no ClusterQueue in the input: kueue+ stacks use gangkit's default Kueue setup "
                           "(one ClusterQueue holding every GPU)")
        return None
    return setup


def _topology(r: Reader, objects: list[ManifestObject], jobs: list, setup: KueueSetup) -> None:
    """Topology-aware scheduling: the jobs' topology requests, the TAS flavors' nodes, what is not modelled yet."""
    drop_companion_notes(r, objects, setup, UNNAMED_TOPOLOGY)  # the board's words for a Topology no flavor names
    read_topology_requests(r, objects, jobs, setup)
    check_tas_nodes(r, objects, setup)
    for p in unmodelled_problems(setup.flavors, setup.cluster_queues, setup.admission_checks, manifest=True):
        r.error(p.obj, p.field, p.message)


def _without_queue_name(r: Reader, jobs: list, setup: KueueSetup) -> None:
    """Kueue's rule for jobs without the ``kueue.x-k8s.io/queue-name`` label (Kueue ``pkg/controller/jobframework``).

    - A namespace with a LocalQueue named ``default``: Kueue's webhook gives the
      job ``queue-name: default`` (``ApplyDefaultLocalQueue``).
    - Else, with ``manageJobsWithoutQueueName: true`` in Kueue's Configuration,
      Kueue suspends the job and its Workload names no LocalQueue: it is never
      admitted.
    - Else (the default) Kueue does not manage the job at all: it runs as if
      Kueue were not installed, placed at once by the placement layer.

    Every namespace counts as managed (``managedJobsNamespaceSelector``, which
    by default leaves out kube-system and kueue-system, is not evaluated).
    """
    defaults = {lq.namespace for lq in setup.local_queues if lq.name == "default"}
    given, waiting, unmanaged = [], [], []
    for j in jobs:
        if (j.namespace or "default") in defaults:
            j.queue = "default"
            given.append(j.key)
        elif setup.config.manage_jobs_without_queue_name:
            j.queue = ""
            waiting.append(j.key)
        else:
            j.kueue_managed = False
            unmanaged.append(j.key)
    if given:
        r.notes.append(f"{len(given)} job(s) without the {QUEUE_LABEL} label get the LocalQueue 'default' of their "
                       f"namespace, as Kueue's webhook gives it: {', '.join(given)}")
    if waiting:
        r.notes.append(f"{len(waiting)} job(s) without the {QUEUE_LABEL} label are suspended by Kueue "
                       "(manageJobsWithoutQueueName: true) and never admitted, since their Workload names no "
                       f"LocalQueue: {', '.join(waiting)}")
    if unmanaged:
        r.notes.append(f"{len(unmanaged)} job(s) without the {QUEUE_LABEL} label are not managed by Kueue "
                       "(manageJobsWithoutQueueName is false): under a kueue+ stack they go straight to the "
                       f"placement layer, past every quota: {', '.join(unmanaged)}")


def _dig_mapping(doc: Any, *keys: str) -> dict:
    for k in keys:
        doc = doc.get(k) if isinstance(doc, Mapping) else None
    return dict(doc) if isinstance(doc, Mapping) else {}


@dataclass
class LoadedWorkload:
    """A Workload of the input, and where it stands: pending, already holding quota, or out of the queues."""

    workload: Workload
    admission: Admission | None = None  # status.admission of a workload that holds quota
    out_of_queue: str = ""  # why Kueue does not queue it at all (finished, deactivated)


def _timestamp(value: Any) -> datetime | None:
    """An RFC 3339 time (``2025-01-01T10:00:00Z``); YAML may already have made it a datetime."""
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=timezone.utc)
    if isinstance(value, str):
        try:
            t = datetime.fromisoformat(value)
        except ValueError:
            return None
        return t if t.tzinfo else t.replace(tzinfo=timezone.utc)
    return None


def _is_extended(resource: str) -> bool:
    """Kubernetes' extended resources (``nvidia.com/gpu``): a domain prefix outside kubernetes.io."""
    return "/" in resource and not resource.split("/")[0].endswith("kubernetes.io") and not resource.startswith("requests.")


class KueueReader(SetupReader):
    """Reads Kueue's objects: the setup (:class:`SetupReader`), then the Workloads judged against it."""

    def pod_requests(self, pod: dict, obj: str, base: str, api_server: bool) -> dict[str, int] | None:
        """One pod's requests, as Kubernetes and Kueue compute them.

        A limit without a request sets the request; containers add up; an
        init container runs alone, so the pod needs the larger of the two
        (sidecars, init containers with ``restartPolicy: Always``, run beside
        the containers and add up). With ``api_server``, the API server's
        rules for a pod's extended resources (``nvidia.com/gpu``) apply too:
        a whole number, given as a limit, and a request equal to it.
        """
        containers = pod.get("containers")
        if not isinstance(containers, list) or not containers:
            self.r.error(obj, f"{base}.containers", "expected a list of at least one container")
            return None
        ok = True
        total: dict[str, int] = {}
        for i, c in enumerate(containers):
            reqs, c_ok = self._container_requests(c, obj, f"{base}.containers[{i}]", api_server)
            ok = ok and c_ok
            for name, v in reqs.items():
                total[name] = total.get(name, 0) + v
        init_max: dict[str, int] = {}
        sidecars: dict[str, int] = {}
        init = pod.get("initContainers") or []
        for i, c in enumerate(init if isinstance(init, list) else []):
            reqs, c_ok = self._container_requests(c, obj, f"{base}.initContainers[{i}]", api_server)
            ok = ok and c_ok
            if isinstance(c, Mapping) and c.get("restartPolicy") == "Always":
                for name, v in reqs.items():
                    total[name] = total.get(name, 0) + v
                    sidecars[name] = sidecars.get(name, 0) + v
                reqs = dict(sidecars)
            else:
                reqs = {n: reqs.get(n, 0) + sidecars.get(n, 0) for n in {*reqs, *sidecars}}
            for name, v in reqs.items():
                init_max[name] = max(init_max.get(name, 0), v)
        for name, v in init_max.items():
            total[name] = max(total.get(name, 0), v)
        return {n: v for n, v in total.items() if v} if ok else None

    def _container_requests(self, c: Any, obj: str, where: str, api_server: bool) -> tuple[dict[str, int], bool]:
        """One container's requests (a limit without a request sets it), and whether all of them were valid:
        names, quantities >= 0, a request at most its limit; with ``api_server`` the API server's rules for
        extended resources (a whole limit, and a request equal to it)."""
        ok = True
        c = self.r.mapping(c, obj, where)
        res = self.r.mapping(c.get("resources"), obj, f"{where}.resources")
        limits = self.r.mapping(res.get("limits"), obj, f"{where}.resources.limits")
        requests = self.r.mapping(res.get("requests"), obj, f"{where}.resources.requests")
        out: dict[str, int] = {}
        for name in list(dict.fromkeys([*requests, *limits])):
            rf, lf = f"{where}.resources.requests.{name}", f"{where}.resources.limits.{name}"
            if not isinstance(name, str):
                self.r.error(obj, rf if name in requests else lf, f"expected a resource name (a string), got {short(name)}")
                ok = False
                continue
            if name == PODS:
                self.r.error(obj, rf if name in requests else lf, "the key is reserved for internal kueue use")
                ok = False
                continue
            req = self.r.quantity(requests[name], obj, rf) if name in requests else None
            lim = self.r.quantity(limits[name], obj, lf) if name in limits else None
            if (name in requests and req is None) or (name in limits and lim is None):
                ok = False
                continue
            bad = [(f, v) for f, v in ((rf, req), (lf, lim)) if v is not None and v < 0]
            for f, v in bad:
                self.r.error(obj, f, f"must be greater than or equal to 0, got {v}")
            if bad:
                ok = False
                continue
            if api_server and _is_extended(name):
                if req is not None and lim is None:
                    self.r.error(obj, lf, "Limit must be set for non overcommitable resources")
                    ok = False
                elif req is not None and req != lim:
                    self.r.error(obj, rf, f"must be equal to {name} limit of {limits[name]}")
                    ok = False
                elif (lim or 0).denominator != 1:
                    self.r.error(obj, lf, f"must be an integer, got {limits[name]!r}")
                    ok = False
            elif req is not None and lim is not None and req > lim:
                self.r.error(obj, rf, f"must be less than or equal to {name} limit of {limits[name]}")
                ok = False
            value = req if req is not None else lim
            out[name] = canonical(name, value)
        return out, ok

    def workload(self, o: ManifestObject) -> tuple[LoadedWorkload, datetime | None, datetime | None] | None:
        """A Workload object: pod sets, priority, queue, and its status.admission if it holds quota."""
        obj = o.label
        spec = self.r.mapping(o.doc.get("spec"), obj, "spec")
        status = self.r.mapping(o.doc.get("status"), obj, "status")
        meta = self.r.mapping(o.doc.get("metadata"), obj, "metadata")
        queue = self.name_ref(spec.get("queueName"), obj, "spec.queueName")
        pod_sets = self.pod_sets(spec, obj)
        priority = self.workload_priority(spec, obj, o.doc.get("apiVersion") == V1BETA1)
        created = self.time(meta.get("creationTimestamp"), obj, "metadata.creationTimestamp")
        if pod_sets is None or priority is None:
            return None
        wl = Workload(o.name, o.namespace, queue or "", pod_sets, priority=priority)
        lw = LoadedWorkload(wl)
        conditions = self.conditions(status, obj)
        reserved_at = None
        if "QuotaReserved" in conditions and "admission" not in status:
            self.r.error(obj, "status.admission", "must be set while the QuotaReserved condition is true")
        elif "admission" in status and "QuotaReserved" not in conditions:
            self.r.notes.append(f"{obj} has status.admission but no QuotaReserved condition with status True: "
                                "Kueue counts no quota for it, so gangkit queues it as pending")
        elif "admission" in status:
            lw.admission = self.admission(status["admission"], pod_sets, obj)
            reserved_at = conditions["QuotaReserved"]
        if "Finished" in conditions:
            self.r.notes.append(f"{obj} has finished (condition Finished is True): it holds no quota and is not "
                                "queued, so gangkit admit leaves it out")
            return None
        if spec.get("active") is False:
            lw.out_of_queue = "deactivated (spec.active: false): Kueue does not queue it"
            lw.admission = None
        elif queue is None and lw.admission is None:
            self.r.notes.append(f"{obj} has no spec.queueName: Kueue never admits it")
        elif lw.admission is None:
            self.check_local_queue(obj, "spec.queueName", o.namespace, queue)
        return lw, created, reserved_at

    def time(self, value: Any, obj: str, where: str) -> datetime | None:
        if value is None:
            return None
        t = _timestamp(value)
        if t is None:
            self.r.error(obj, where, f"expected an RFC 3339 time such as 2025-01-01T10:00:00Z, got {value!r}")
        return t

    def conditions(self, status: dict, obj: str) -> dict[str, datetime | None]:
        """The types of the conditions with status True, and their lastTransitionTime."""
        out = {}
        conditions = status.get("conditions") or []
        if not isinstance(conditions, list):
            self.r.error(obj, "status.conditions", f"expected a list of conditions, got {conditions!r}")
            return out
        for i, c in enumerate(conditions):
            c = self.r.mapping(c, obj, f"status.conditions[{i}]")
            if c.get("status") == "True" and isinstance(c.get("type"), str):
                out[c["type"]] = self.time(c.get("lastTransitionTime"), obj, f"status.conditions[{i}].lastTransitionTime")
        return out

    def pod_sets(self, spec: dict, obj: str) -> list[PodSetSpec] | None:
        sets = spec.get("podSets")
        if not isinstance(sets, list) or not sets:
            self.r.error(obj, "spec.podSets", "expected a list of at least one pod set")
            return None
        out: list[PodSetSpec] = []
        names: set[str] = set()
        ok, with_min = True, 0
        for i, ps in enumerate(sets):
            base = f"spec.podSets[{i}]"
            ps = self.r.mapping(ps, obj, base)
            name = ps.get("name", DEFAULT_POD_SET)
            if not isinstance(name, str) or not name:
                self.r.error(obj, f"{base}.name", f"expected a name, got {name!r}")
                ok = False
                continue
            if name in names:
                self.r.error(obj, f"{base}.name", f"Duplicate value: {name!r}")
                ok = False
            names.add(name)
            count = self.r.whole(ps.get("count", 1), obj, f"{base}.count", 0)
            min_count = None
            if ps.get("minCount") is not None:
                with_min += 1
                min_count = self.r.whole(ps["minCount"], obj, f"{base}.minCount", 1)
                if min_count is not None and count is not None and min_count > count:
                    self.r.error(obj, f"{base}.minCount", "minCount should be positive and less or equal to count")
                    min_count = None
            template = self.r.mapping(ps.get("template"), obj, f"{base}.template")
            pod = self.r.mapping(template.get("spec"), obj, f"{base}.template.spec")
            requests = self.pod_requests(pod, obj, f"{base}.template.spec", api_server=False)
            selector = self.r.strings(pod.get("nodeSelector"), obj, f"{base}.template.spec.nodeSelector")
            if count is None or requests is None:
                ok = False
                continue
            out.append(PodSetSpec(name, count, requests, min_count, tuple(sorted(selector.items()))))
        if with_min > 1:
            self.r.error(obj, "spec.podSets", "at most one podSet can use minCount")
        return out if ok else None

    def workload_priority(self, spec: dict, obj: str, v1beta1: bool) -> int | None:
        """``spec.priority`` (0 without it): Kueue copies a named class's value there when it creates the Workload.

        As the CRD's CEL rules require, naming a class needs ``spec.priority`` too.
        """
        named = "priorityClassName" if v1beta1 else "priorityClassRef"
        if not v1beta1 and spec.get(named) is not None:
            ref = self.r.mapping(spec[named], obj, f"spec.{named}")
            kinds = {"kueue.x-k8s.io": "WorkloadPriorityClass", "scheduling.k8s.io": "PriorityClass"}
            if ref.get("group") in kinds and ref.get("kind") != kinds[ref["group"]]:
                self.r.error(obj, f"spec.{named}.kind", f"only the {kinds[ref['group']]} kind is allowed for the "
                             f"{ref['group']} group")
        if spec.get(named) is not None and spec.get("priority") is None:
            self.r.error(obj, "spec.priority", f"priority should not be nil when {named} is set")
            return None
        if spec.get("priority") is None:
            return 0
        return self.integer(spec["priority"], obj, "spec.priority")

    def admission(self, value: Any, pod_sets: list[PodSetSpec], obj: str) -> Admission | None:
        """``status.admission`` of a workload holding quota: where, which flavors, how many pods, what usage.

        As in Kueue's cache, the usage is ``resourceUsage`` (per pod set, for
        the resources that have a flavor); without it gangkit computes it
        from the pod sets' requests and the admitted count.
        """
        adm = self.r.mapping(value, obj, "status.admission")
        cq_name = adm.get("clusterQueue")
        cq = self.queues.get(cq_name) if isinstance(cq_name, str) else None
        if cq is None:
            self.r.error(obj, "status.admission.clusterQueue", f"names ClusterQueue {cq_name!r}, which is not in the input")
            return None
        psas = adm.get("podSetAssignments")
        if not isinstance(psas, list) or len(psas) != len(pod_sets):
            self.r.error(obj, "status.admission.podSetAssignments", "podSetAssignments must have the same number of "
                         f"podSets as the spec ({len(pod_sets)})")
            return None
        by_name = {ps.name: ps for ps in pod_sets}
        flavors: dict[str, dict[str, str]] = {}
        counts: dict[str, int] = {}
        usage: dict[tuple[str, str], int] = {}
        for i, psa in enumerate(psas):
            base = f"status.admission.podSetAssignments[{i}]"
            psa = self.r.mapping(psa, obj, base)
            name = psa.get("name", DEFAULT_POD_SET)
            ps = by_name.get(name) if isinstance(name, str) else None
            if ps is None or name in flavors:
                self.r.error(obj, f"{base}.name", f"Not found: {short(name)} (expected one of the pod sets: {', '.join(by_name)})")
                continue
            count = ps.count if psa.get("count") is None else self.r.whole(psa["count"], obj, f"{base}.count", 0)
            assigned = self.r.strings(psa.get("flavors"), obj, f"{base}.flavors")
            for res, flavor in assigned.items():
                rg = cq.group_for(res)
                if rg is None or flavor not in [fq.flavor for fq in rg.flavors]:
                    self.r.error(obj, f"{base}.flavors.{res}", f"ClusterQueue {cq.name} has no flavor {flavor!r} for {res}")
            if count is None:
                continue
            flavors[name], counts[name] = assigned, count
            if psa.get("resourceUsage") is not None:
                totals = {}
                for res, q in self.r.mapping(psa["resourceUsage"], obj, f"{base}.resourceUsage").items():
                    v = self.quantity(res, q, obj, f"{base}.resourceUsage.{res}")
                    if v is not None and count > 0 and v % count:
                        self.r.error(obj, f"{base}.resourceUsage.{res}", f"is not a multiple of {count}")
                    if v is not None:
                        totals[res] = v
            else:
                totals = {res: v * count for res, v in ps.requests.items()}
                if PODS in assigned:
                    totals[PODS] = count
                for res in totals:
                    if res not in assigned:
                        self.r.error(obj, f"{base}.flavors", f"no flavor for the requested resource {res}")
            for res, v in totals.items():
                if res in assigned:
                    fr = (assigned[res], res)
                    usage[fr] = usage.get(fr, 0) + v
        return Admission(cq.name, flavors, counts, usage)

    def min_parallelism(self, text: str, count: int, obj: str) -> int | None:
        """A Job's ``kueue.x-k8s.io/job-min-parallelism``: its pod set's minCount, from 1 to count - 1 (Kueue's webhook)."""
        where = f"metadata.annotations.{MIN_PARALLELISM}"
        if not isinstance(text, str):  # the Job reader reports annotations that are not strings
            return None
        if not text.lstrip("-").isdigit():
            self.r.error(obj, where, f"expected a whole number, got {text!r}")
            return None
        if not 0 < int(text) < count:
            self.r.error(obj, where, f"should be between 0 and {count - 1}, got {text}")
            return None
        return int(text)
