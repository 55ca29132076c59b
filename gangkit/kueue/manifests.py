"""Kueue's own YAML: ResourceFlavors, ClusterQueues, LocalQueues, Cohorts, Workloads.

An operator sets Kueue up with a handful of objects, ``kubectl apply``-ed
like any other manifest::

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

This module reads those objects into a :class:`~gangkit.kueue.objects.KueueSetup`
and, for ``gangkit admit``, into Workloads (pending, or already holding quota
when ``status.admission`` says so). Both API versions Kueue serves are read:
``kueue.x-k8s.io/v1beta2`` and the older ``v1beta1`` (where ClusterQueue
``spec.cohortName`` is called ``spec.cohort``), and Kueue's ``Configuration``
(``config.kueue.x-k8s.io`` v1beta2 or v1beta1). A ``batch/v1`` Job labelled
``kueue.x-k8s.io/queue-name`` becomes the Workload Kueue's job integration
would create: one pod set ``main`` of ``min(parallelism, completions)`` pods.

Quantities become Kueue's canonical integers: CPU in millicores, memory in
bytes, everything else (GPUs, pods) as a count, rounded up as Kueue rounds.

Bad input is checked with Kueue's own cheap rules (its webhooks and the CEL
rules of its CRDs): every problem, one line each naming object and field, in
one :class:`~gangkit.model.errors.ScenarioError`. Fields gangkit does not model
join the one warning about unread fields that :mod:`gangkit.manifests.load`
gives. Two decisions differ from Kueue, which has no error for them but
keeps the queues concerned *inactive* (admitting nothing), a state gangkit
does not model: a ClusterQueue naming a ResourceFlavor that is not in the
input, and a cycle of Cohort parents, are errors here.
"""

from __future__ import annotations

import dataclasses
import math
import os
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from fractions import Fraction
from pathlib import Path
from typing import Any

from gangkit.model.errors import Problem, ScenarioError
from gangkit.manifests.load import (
    _META,
    _POD_SPEC,
    ANY,
    QUEUE_LABEL,
    SUBMIT_TIME,
    GangkitInputWarning,
    _looks_like_path,
    _Object,
    _parse_yaml,
    _Reader,
)
from gangkit.model.quantity import parse_duration, parse_quantity
from gangkit.kueue.objects import (
    Admission,
    ClusterQueue,
    Cohort,
    FlavorFungibility,
    FlavorQuotas,
    KueueConfig,
    KueueSetup,
    LocalQueue,
    PodSetSpec,
    Preemption,
    Quota,
    ResourceFlavor,
    ResourceGroup,
    Workload,
)

__all__ = ["API_VERSIONS", "KINDS", "KueueInput", "LoadedWorkload", "known_fields", "load_kueue"]

GROUP = "kueue.x-k8s.io"
V1BETA2, V1BETA1 = f"{GROUP}/v1beta2", f"{GROUP}/v1beta1"
CONFIG_V1BETA2, CONFIG_V1BETA1 = "config.kueue.x-k8s.io/v1beta2", "config.kueue.x-k8s.io/v1beta1"
API_VERSIONS: dict[str, tuple[str, ...]] = {
    "ResourceFlavor": (V1BETA2, V1BETA1),
    "ClusterQueue": (V1BETA2, V1BETA1),
    "LocalQueue": (V1BETA2, V1BETA1),
    "Cohort": (V1BETA2, V1BETA1),
    "WorkloadPriorityClass": (V1BETA2, V1BETA1),
    "Workload": (V1BETA2, V1BETA1),
    "AdmissionCheck": (V1BETA2, V1BETA1),
    "ProvisioningRequestConfig": (V1BETA2, V1BETA1),
    "Configuration": (CONFIG_V1BETA2, CONFIG_V1BETA1),
}
KINDS = tuple(API_VERSIONS)
NAMESPACED = ("LocalQueue", "Workload")
PRIORITY_CLASS_LABEL = "kueue.x-k8s.io/priority-class"  # a Job's WorkloadPriorityClass
MIN_PARALLELISM = "kueue.x-k8s.io/job-min-parallelism"  # a Job's minCount (partial admission)
DEFAULT_POD_SET = "main"  # kueue.DefaultPodSetName
PODS = "pods"

QUEUEING_STRATEGIES = ("StrictFIFO", "BestEffortFIFO")
WITHIN_CQ = ("Never", "LowerPriority", "LowerOrNewerEqualPriority")
RECLAIM = ("Never", "LowerPriority", "Any")
BORROW = ("Never", "LowerPriority")
FUNGIBILITY = ("MayStopSearch", "TryNextFlavor")
PREFERENCES = ("BorrowingOverPreemption", "PreemptionOverBorrowing")
FS_STRATEGIES = (("LessThanOrEqualToFinalShare",), ("LessThanInitialShare",),
                 ("LessThanOrEqualToFinalShare", "LessThanInitialShare"))
STOP_POLICIES = ("None", "Hold", "HoldAndDrain")
# Kueue feature gates gangkit models (Configuration featureGates -> KueueConfig field); other gates are reported.
FEATURE_GATES = {name: attr for name, attr in {"SchedulingEquivalenceHashing": "equivalence_hashing"}.items()
                 if attr in KueueConfig.__dataclass_fields__}


# --- which fields gangkit reads, per kind and version (same tree language as gangkit.manifests.load) ---

_QUOTA = dict.fromkeys(["name", "nominalQuota", "borrowingLimit", "lendingLimit"], ANY)
_RESOURCE_GROUPS = [{"coveredResources": ANY, "flavors": [{"name": ANY, "resources": [_QUOTA]}]}]
_FAIR_SHARING = {"weight": ANY}
_ANY_RESOURCES = {"*": ANY}
_CONTAINER = {**_POD_SPEC["containers"][0], "resources": {"limits": _ANY_RESOURCES, "requests": _ANY_RESOURCES}}
_TEMPLATE_POD = {**_POD_SPEC, "containers": [_CONTAINER], "initContainers": [{**_CONTAINER, "restartPolicy": ANY}]}
_TOP = {"apiVersion": ANY, "kind": ANY, "metadata": _META}
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
     "internalCertManagement", "pprofBindAddress", "visibilityServer", "tls", "integrations", "metadata"], ANY)
_REQUEUING = dict.fromkeys(["timestamp", "backoffLimitCount", "backoffBaseSeconds", "backoffMaxSeconds"], ANY)


def known_fields(kind: str, api_version: str) -> dict:
    """The fields gangkit reads (or knows to be harmless) for one kind and apiVersion; others are reported."""
    v1 = api_version.endswith("v1beta1")
    if kind == "ResourceFlavor":
        return {**_TOP, "spec": {"nodeLabels": ANY}}
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


# --- hooks called by gangkit.manifests.load ---------------------------------------------------------


def read_object(r: _Reader, doc: Mapping, where: str) -> _Object | None:
    """Check one Kueue object's apiVersion and metadata, and report its unread fields (``_Reader.objects``)."""
    kind, api = doc.get("kind"), doc.get("apiVersion")
    meta = doc.get("metadata") if isinstance(doc.get("metadata"), Mapping) else {}
    o = _Object(dict(doc), str(kind), where, meta.get("name"), meta.get("namespace"))
    if api not in API_VERSIONS[kind]:
        r.error(o.label, "apiVersion", f"unknown apiVersion {api!r} for kind {kind}: expected {' or '.join(API_VERSIONS[kind])}")
        return None
    if kind == "Configuration":  # a file for Kueue's manager, not an API object: metadata is optional
        o.name = o.name if isinstance(o.name, str) and o.name else None
        o.namespace = None
    else:
        if not isinstance(doc.get("metadata"), Mapping):
            r.error(o.label, "metadata", "expected a mapping with at least a name")
            return None
        if not isinstance(o.name, str) or not o.name:
            r.error(o.label, "metadata.name", f"expected a non-empty name, got {o.name!r}")
            return None
        if o.namespace is not None and (not isinstance(o.namespace, str) or not o.namespace):
            r.error(o.label, "metadata.namespace", f"expected a non-empty string, got {o.namespace!r}")
            return None
        if kind not in NAMESPACED:
            o.namespace = None  # cluster-scoped: the API server ignores a namespace
    r.find_unknown(o.doc, known_fields(kind, api), o.label, "")
    return o


def read_for_scenario(r: _Reader, objects: list[_Object], jobs: list, classes: dict[str, int]) -> KueueSetup | None:
    """Kueue's objects of a ``gangkit run`` scenario (``objects``: every object of the input).

    Also gives each Job what Kueue's job integration reads from it: the
    value of its WorkloadPriorityClass (label ``kueue.x-k8s.io/priority-class``)
    as its priority, and its ``kueue.x-k8s.io/job-min-parallelism`` as the
    pod set's ``min_count`` (partial admission). Returns ``None`` when the
    input has no ClusterQueue (``kueue+`` stacks then use gangkit's default
    setup). Problems and notes go to ``r``.
    """
    kueue_objects = [o for o in objects if o.kind in KINDS]
    kr = _KueueReader(r, kueue_objects, classes, 0)
    setup = kr.setup()
    job_objects = {(o.namespace, o.name): o for o in objects if o.kind == "Job"}
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
        if QUEUE_LABEL in j.labels and setup.cluster_queues:
            kr.check_local_queue(obj, f"metadata.labels.{QUEUE_LABEL}", j.namespace, j.queue)
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


def _dig_mapping(doc: Any, *keys: str) -> dict:
    for k in keys:
        doc = doc.get(k) if isinstance(doc, Mapping) else None
    return dict(doc) if isinstance(doc, Mapping) else {}


# --- gangkit admit: the input as a snapshot ----------------------------------------------------


@dataclass
class LoadedWorkload:
    """A Workload of the input, and where it stands: pending, already holding quota, or out of the queues."""

    workload: Workload
    admission: Admission | None = None  # status.admission of a workload that holds quota
    out_of_queue: str = ""  # why Kueue does not queue it at all (finished, deactivated)


@dataclass
class KueueInput:
    """What ``gangkit admit`` reads: the Kueue objects, the workloads, and the time of the snapshot."""

    setup: KueueSetup
    workloads: list[LoadedWorkload]
    now: float = 0.0  # the snapshot's time: the latest timestamp of the input, in seconds from the earliest
    warnings: list[str] = field(default_factory=list)


Source = str | os.PathLike | Mapping | Iterable


def load_kueue(*sources: Source) -> KueueInput:
    """Read Kueue objects, Workloads and queue-labelled batch/v1 Jobs from files, YAML strings or dicts.

    Other kinds gangkit reads (Node, PodGroup, Simulation...) are checked and
    ignored; PriorityClasses give Jobs and Workloads their priority. Raises
    :class:`ScenarioError` with every problem; warnings are emitted as
    :class:`GangkitInputWarning` and kept on the result.
    """
    r = _Reader("YAML input")
    objects: list[_Object] = []
    for source in sources:
        docs, r.label = _documents(source)
        objects.extend(r.objects(docs))
    r.check_unique(objects)
    classes, default_priority = r.priority_classes([o for o in objects if o.kind == "PriorityClass"])
    kr = _KueueReader(r, [o for o in objects if o.kind in KINDS], classes, default_priority)
    setup = kr.setup()
    loaded = kr.snapshot_workloads([o for o in objects if o.kind in ("Workload", "Job")])
    if r.problems:
        raise ScenarioError(r.problems)
    notes = []
    if r.unknown:
        notes.append(f"gangkit does not read these {len(r.unknown)} field(s) (typos, or features it does not model):\n"
                     + "\n".join(f"  {u}" for u in r.unknown))
    notes.extend(r.notes)
    for message in notes:
        warnings.warn(message, GangkitInputWarning, stacklevel=2)
    return KueueInput(setup, loaded, kr.now, notes)


def _documents(source: Source) -> tuple[list, str]:
    if isinstance(source, os.PathLike) or (isinstance(source, str) and _looks_like_path(source)):
        path = Path(source)
        if not path.is_file():
            raise ScenarioError([Problem(f"File {source}", "", "not found")])
        return _parse_yaml(path.read_text(encoding="utf-8"), path.name), path.name
    if isinstance(source, str):
        return _parse_yaml(source, "YAML input"), "YAML input"
    if isinstance(source, Mapping):
        return [source], "manifests"
    return list(source), "manifests"


# --- the reader -------------------------------------------------------------------------------


def canonical(resource: str, value: Fraction) -> int:
    """Kueue's integer for a quantity: CPU in millicores, anything else in units, both rounded up."""
    return math.ceil(value * 1000) if resource == "cpu" else math.ceil(value)


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


class _KueueReader:
    """Reads Kueue objects into gangkit's Kueue dataclasses, collecting problems in a ``_Reader``."""

    def __init__(self, r: _Reader, objects: list[_Object], classes: dict[str, int], default_priority: int):
        self.r = r
        self.objects = objects
        self.classes = classes
        self.default_priority = default_priority
        self.by_kind: dict[str, list[_Object]] = {k: [o for o in objects if o.kind == k] for k in KINDS}
        self.wpc: dict[str, int] = {}
        self.queues: dict[str, ClusterQueue] = {}
        self.local_queues: dict[tuple[str, str], LocalQueue] = {}
        self.now = 0.0

    # small typed getters ------------------------------------------------------------------

    def quantity(self, resource: str, value: Any, obj: str, where: str) -> int | None:
        q = self.r.attempt(parse_quantity, value, obj, where)
        if q is None:
            return None
        if q < 0:
            self.r.error(obj, where, f"must be greater than or equal to 0, got {value!r}")
            return None
        return canonical(resource, q)

    def choice(self, value: Any, allowed: tuple, obj: str, where: str, default: str) -> str:
        if value is None:
            return default
        if value not in allowed:
            self.r.error(obj, where, f"expected one of {', '.join(allowed)}, got {value!r}")
            return default
        return value

    def integer(self, value: Any, obj: str, where: str) -> int | None:
        if isinstance(value, bool) or not isinstance(value, int):
            self.r.error(obj, where, f"expected a whole number, got {value!r}")
            return None
        return value

    def name_ref(self, value: Any, obj: str, where: str) -> str | None:
        if value is None or value == "":
            return None
        if not isinstance(value, str):
            self.r.error(obj, where, f"expected a name, got {value!r}")
            return None
        return value

    def weight(self, spec: dict, obj: str) -> float:
        fs = self.r.mapping(spec.get("fairSharing"), obj, "spec.fairSharing")
        if "weight" not in fs:
            return 1.0
        q = self.r.attempt(parse_quantity, fs["weight"], obj, "spec.fairSharing.weight")
        if q is None:
            return 1.0
        if q < 0 or (0 < q <= Fraction(1, 10**9)):
            self.r.error(obj, "spec.fairSharing.weight", f"expected 0 or a weight > 10e-9, got {fs['weight']!r}")
            return 1.0
        return float(q)

    def stop_policy(self, spec: dict, obj: str) -> None:
        policy = self.choice(spec.get("stopPolicy"), STOP_POLICIES, obj, "spec.stopPolicy", "None")
        if policy != "None":
            self.r.unknown.append(f"{obj}: spec.stopPolicy: {policy} (not modelled: gangkit keeps the queue active)")

    # the setup ----------------------------------------------------------------------------

    def setup(self) -> KueueSetup:
        for o in self.by_kind["WorkloadPriorityClass"]:
            value = o.doc.get("value")
            if isinstance(value, bool) or not isinstance(value, int):
                self.r.error(o.label, "value", f"expected a whole number, got {value!r}")
            else:
                self.wpc[o.name] = value
        flavors = [self.resource_flavor(o) for o in self.by_kind["ResourceFlavor"]]
        flavor_names = {f.name for f in flavors}
        cohorts = [c for c in (self.cohort(o, flavor_names) for o in self.by_kind["Cohort"]) if c is not None]
        self.check_cohort_cycles(cohorts)
        for o in self.by_kind["ClusterQueue"]:
            cq = self.cluster_queue(o, flavor_names)
            if cq is not None:
                self.queues[cq.name] = cq
        for o in self.by_kind["LocalQueue"]:
            lq = self.local_queue(o)
            if lq is not None:
                self.local_queues[(lq.namespace, lq.name)] = lq
        configs = self.by_kind["Configuration"]
        for o in configs[1:]:
            self.r.error(o.label, "kind", f"expected at most one Configuration; {configs[0].label} comes first")
        config = self.configuration(configs[0]) if configs else KueueConfig()
        checks = self.admission_checks()
        return KueueSetup(flavors, list(self.queues.values()), list(self.local_queues.values()), cohorts, config, checks)

    # admission checks ----------------------------------------------------------------------

    def admission_checks(self) -> list:
        """The AdmissionChecks the ClusterQueues name (ProvisioningRequest checks only), with their configs.

        gangkit models one admission check for the whole stack: the check a
        ClusterQueue lists applies to every workload of ``kueue+provreq+autoscaler``.
        """
        from gangkit.kueue.provisioning import CONTROLLER, AdmissionCheck, ProvisioningRequestConfig

        configs: dict[str, ProvisioningRequestConfig] = {}
        for o in self.by_kind["ProvisioningRequestConfig"]:
            spec = self.r.mapping(o.doc.get("spec"), o.label, "spec")
            kw: dict = {"name": o.name}
            cls = spec.get("provisioningClassName")
            if not isinstance(cls, str) or not cls:
                self.r.error(o.label, "spec.provisioningClassName", f"expected a class name, got {cls!r}")
                continue
            kw["provisioning_class"] = cls
            retry = self.r.mapping(spec.get("retryStrategy", {}), o.label, "spec.retryStrategy")
            for key, attr, low in (("backoffLimitCount", "backoff_limit_count", 0), ("backoffBaseSeconds", "backoff_base_seconds", 0),
                                   ("backoffMaxSeconds", "backoff_max_seconds", 0)):
                if key in retry:
                    value = self.integer(retry[key], o.label, f"spec.retryStrategy.{key}")
                    if value is not None and value < low:
                        self.r.error(o.label, f"spec.retryStrategy.{key}", f"expected a whole number >= {low}, got {value}")
                    elif value is not None:
                        kw[attr] = value if attr == "backoff_limit_count" else float(value)
            try:
                configs[o.name] = ProvisioningRequestConfig(**kw)
            except ValueError as e:
                self.r.error(o.label, "spec.provisioningClassName", str(e).split(": ", 2)[-1])
        checks: dict[str, AdmissionCheck] = {}
        for o in self.by_kind["AdmissionCheck"]:
            spec = self.r.mapping(o.doc.get("spec"), o.label, "spec")
            controller = spec.get("controllerName")
            if controller != CONTROLLER:
                self.r.error(o.label, "spec.controllerName", f"gangkit models the ProvisioningRequest check only: "
                             f"expected {CONTROLLER!r}, got {controller!r}")
                continue
            params = self.r.mapping(spec.get("parameters"), o.label, "spec.parameters")
            ref = params.get("name")
            if params.get("kind") != "ProvisioningRequestConfig" or params.get("apiGroup") != GROUP or not ref:
                self.r.error(o.label, "spec.parameters", f"expected apiGroup {GROUP}, kind ProvisioningRequestConfig and "
                             f"a name, got {dict(params)!r}")
                continue
            if ref not in configs:
                self.r.error(o.label, "spec.parameters.name", f"ProvisioningRequestConfig {ref!r} is not in the input")
                continue
            checks[o.name] = AdmissionCheck(o.name, controller, configs[ref])
        used: list[str] = []
        per_queue: dict[str, set] = {}
        for o in self.by_kind["ClusterQueue"]:
            spec = o.doc.get("spec") if isinstance(o.doc.get("spec"), Mapping) else {}
            names = []
            strategy = spec.get("admissionChecksStrategy")
            if isinstance(strategy, Mapping):
                for i, entry in enumerate(strategy.get("admissionChecks") or []):
                    name = entry.get("name") if isinstance(entry, Mapping) else None
                    names.append((name, f"spec.admissionChecksStrategy.admissionChecks[{i}].name"))
            if o.doc.get("apiVersion") == V1BETA1:
                for i, name in enumerate(spec.get("admissionChecks") or []):
                    names.append((name, f"spec.admissionChecks[{i}]"))
            per_queue[o.label] = {name for name, _ in names}
            for name, where in names:
                if name in checks:
                    if name not in used:
                        used.append(name)
                elif not any(c.name == name for c in self.by_kind["AdmissionCheck"]):
                    self.r.error(o.label, where, f"AdmissionCheck {name!r} is not in the input (Kueue would keep this "
                                 "ClusterQueue inactive)")
        if len(used) > 1:
            self.r.notes.append(f"the ClusterQueues use {len(used)} AdmissionChecks ({', '.join(used)}); gangkit applies "
                                f"the first, {used[0]}, to every workload")
        lacking = [label for label, names in per_queue.items() if used and used[0] not in names]
        if lacking:
            self.r.notes.append(f"gangkit applies AdmissionCheck {used[0]} to every workload; these ClusterQueues do not "
                                f"list it: {', '.join(lacking)}")
        return [checks[n] for n in used]

    def resource_flavor(self, o: _Object) -> ResourceFlavor:
        spec = self.r.mapping(o.doc.get("spec"), o.label, "spec")
        labels = self.r.strings(spec.get("nodeLabels"), o.label, "spec.nodeLabels")
        return ResourceFlavor(o.name, tuple(sorted(labels.items())))

    def resource_groups(self, spec: dict, obj: str, flavor_names: set[str], has_parent: bool,
                        is_cohort: bool) -> list[ResourceGroup]:
        """``spec.resourceGroups`` with Kueue's webhook rules (``validateResourceGroups``) and CEL rules."""
        groups = spec.get("resourceGroups")
        if groups is None:
            return []
        if not isinstance(groups, list):
            self.r.error(obj, "spec.resourceGroups", f"expected a list of resource groups, got {groups!r}")
            return []
        parent = "parent" if is_cohort else "cohort"
        seen_resources: set[str] = set()
        seen_flavors: set[str] = set()
        out = []
        for i, rg in enumerate(groups):
            base = f"spec.resourceGroups[{i}]"
            rg = self.r.mapping(rg, obj, base)
            covered = rg.get("coveredResources")
            if not isinstance(covered, list) or not covered or not all(isinstance(c, str) and c for c in covered):
                self.r.error(obj, f"{base}.coveredResources", f"expected a list of resource names, got {covered!r}")
                continue
            for j, res in enumerate(covered):
                if res in seen_resources:
                    self.r.error(obj, f"{base}.coveredResources[{j}]", f"Duplicate value: {res!r} (a resource belongs to one group)")
                seen_resources.add(res)
            fqs = rg.get("flavors")
            if not isinstance(fqs, list) or not fqs:
                self.r.error(obj, f"{base}.flavors", f"expected a list of flavors, got {fqs!r}")
                continue
            flavors = []
            for j, fq in enumerate(fqs):
                fbase = f"{base}.flavors[{j}]"
                fq = self.r.mapping(fq, obj, fbase)
                fname = fq.get("name")
                if not isinstance(fname, str) or not fname:
                    self.r.error(obj, f"{fbase}.name", f"expected the name of a ResourceFlavor, got {fname!r}")
                    continue
                if fname in seen_flavors:
                    self.r.error(obj, f"{fbase}.name", f"Duplicate value: {fname!r} (a flavor belongs to one group)")
                seen_flavors.add(fname)
                if not is_cohort and fname not in flavor_names:
                    self.r.error(obj, f"{fbase}.name", f"names ResourceFlavor {fname!r}, which is not in the input "
                                 "(Kueue would keep this ClusterQueue inactive, admitting nothing)")
                resources = fq.get("resources")
                if not isinstance(resources, list) or len(resources) != len(covered):
                    self.r.error(obj, f"{fbase}.resources",
                                 f"flavors must have the same number of resources as the coveredResources ({len(covered)})")
                    continue
                quotas: dict[str, Quota] = {}
                for k, rq in enumerate(resources):
                    rbase = f"{fbase}.resources[{k}]"
                    rq = self.r.mapping(rq, obj, rbase)
                    res = rq.get("name")
                    if res != covered[k]:
                        self.r.error(obj, f"{rbase}.name", f"must match the name in coveredResources ({covered[k]!r}), got {res!r}")
                        continue
                    if "nominalQuota" not in rq:
                        self.r.error(obj, f"{rbase}.nominalQuota", "Required value")
                        continue
                    nominal = self.quantity(res, rq["nominalQuota"], obj, f"{rbase}.nominalQuota")
                    limits = {}
                    for key in ("borrowingLimit", "lendingLimit"):
                        if rq.get(key) is None:
                            continue
                        limits[key] = self.quantity(res, rq[key], obj, f"{rbase}.{key}")
                        if not has_parent:
                            self.r.error(obj, f"{rbase}.{key}", f"must be nil when {parent} is empty")
                    lend = limits.get("lendingLimit")
                    if not is_cohort and lend is not None and nominal is not None and lend > nominal:
                        self.r.error(obj, f"{rbase}.lendingLimit", f"must be less than or equal to the nominalQuota "
                                     f"({rq['lendingLimit']} > {rq['nominalQuota']})")
                    if nominal is not None:
                        quotas[res] = Quota(nominal, limits.get("borrowingLimit"), lend)
                flavors.append(FlavorQuotas(fname, quotas))
            out.append(ResourceGroup(tuple(covered), tuple(flavors)))
        return out

    def cohort(self, o: _Object, flavor_names: set[str]) -> Cohort | None:
        spec = self.r.mapping(o.doc.get("spec"), o.label, "spec")
        parent = self.name_ref(spec.get("parentName"), o.label, "spec.parentName")
        groups = self.resource_groups(spec, o.label, flavor_names, parent is not None, True)
        return Cohort(o.name, parent, groups, self.weight(spec, o.label))

    def check_cohort_cycles(self, cohorts: list[Cohort]) -> None:
        """Kueue leaves every queue of a cohort tree with a cycle inactive; gangkit refuses the cycle."""
        parents = {c.name: c.parent for c in cohorts}
        reported: set[str] = set()
        for c in cohorts:
            seen = [c.name]
            node = c.parent
            while node is not None and node not in seen:
                seen.append(node)
                node = parents.get(node)
            if node is not None and node == c.name and c.name not in reported:
                reported.update(seen)
                self.r.error(f"Cohort {c.name}", "spec.parentName", "the parent chain forms a cycle: "
                             + " -> ".join(seen + [c.name]) + " (Kueue would admit nothing in this tree)")

    def cluster_queue(self, o: _Object, flavor_names: set[str]) -> ClusterQueue | None:
        obj = o.label
        spec = self.r.mapping(o.doc.get("spec"), obj, "spec")
        cohort_field = "spec.cohort" if o.doc.get("apiVersion") == V1BETA1 else "spec.cohortName"
        cohort = self.name_ref(spec.get(cohort_field.split(".")[1]), obj, cohort_field)
        groups = self.resource_groups(spec, obj, flavor_names, cohort is not None, False)
        strategy = self.choice(spec.get("queueingStrategy"), QUEUEING_STRATEGIES, obj, "spec.queueingStrategy", "BestEffortFIFO")
        if "namespaceSelector" not in spec:
            self.r.notes.append(f"{obj} has no spec.namespaceSelector: Kueue admits nothing through it (a null "
                                "selector matches no namespace); gangkit admits from every namespace, as with "
                                "namespaceSelector: {}")
        self.stop_policy(spec, obj)
        return ClusterQueue(o.name, groups, cohort, strategy, self.preemption(spec, obj),
                            self.fungibility(spec, obj, o.doc.get("apiVersion") == V1BETA1), self.weight(spec, obj))

    def preemption(self, spec: dict, obj: str) -> Preemption:
        p = self.r.mapping(spec.get("preemption"), obj, "spec.preemption")
        within = self.choice(p.get("withinClusterQueue"), WITHIN_CQ, obj, "spec.preemption.withinClusterQueue", "Never")
        reclaim = self.choice(p.get("reclaimWithinCohort"), RECLAIM, obj, "spec.preemption.reclaimWithinCohort", "Never")
        bwc = self.r.mapping(p.get("borrowWithinCohort"), obj, "spec.preemption.borrowWithinCohort")
        borrow = self.choice(bwc.get("policy"), BORROW, obj, "spec.preemption.borrowWithinCohort.policy", "Never")
        threshold = None
        if bwc.get("maxPriorityThreshold") is not None:
            threshold = self.integer(bwc["maxPriorityThreshold"], obj, "spec.preemption.borrowWithinCohort.maxPriorityThreshold")
        if reclaim == "Never" and borrow != "Never":
            self.r.error(obj, "spec.preemption", "reclaimWithinCohort=Never and borrowWithinCohort.Policy!=Never")
        return Preemption(within, reclaim, borrow, threshold)

    def fungibility(self, spec: dict, obj: str, v1beta1: bool) -> FlavorFungibility:
        ff = self.r.mapping(spec.get("flavorFungibility"), obj, "spec.flavorFungibility")
        values = {}
        for key, default, old in (("whenCanBorrow", "MayStopSearch", "Borrow"), ("whenCanPreempt", "TryNextFlavor", "Preempt")):
            value = ff.get(key)
            if v1beta1 and value == old:  # deprecated v1beta1 value, converted as Kueue converts it
                value = "MayStopSearch"
            values[key] = self.choice(value, FUNGIBILITY, obj, f"spec.flavorFungibility.{key}", default)
        preference = None
        if ff.get("preference") is not None:
            preference = self.choice(ff["preference"], PREFERENCES, obj, "spec.flavorFungibility.preference", None)
            if values["whenCanBorrow"] != "TryNextFlavor" or values["whenCanPreempt"] != "TryNextFlavor":
                self.r.error(obj, "spec.flavorFungibility.preference", f"preference {ff['preference']!r} requires both "
                             "whenCanBorrow and whenCanPreempt to be TryNextFlavor")
        return FlavorFungibility(values["whenCanBorrow"], values["whenCanPreempt"], preference)

    def local_queue(self, o: _Object) -> LocalQueue | None:
        spec = self.r.mapping(o.doc.get("spec"), o.label, "spec")
        cq = self.name_ref(spec.get("clusterQueue"), o.label, "spec.clusterQueue")
        self.stop_policy(spec, o.label)
        self.weight(spec, o.label)
        if cq is None:
            self.r.notes.append(f"{o.label} has no spec.clusterQueue: its workloads stay pending")
            cq = ""
        elif cq not in {c.name for c in self.by_kind["ClusterQueue"]}:
            self.r.notes.append(f"{o.label}: spec.clusterQueue names ClusterQueue {cq!r}, which is not in the input: "
                                "its workloads stay pending")
        return LocalQueue(o.name, o.namespace or "default", cq)

    def configuration(self, o: _Object) -> KueueConfig:
        """Kueue's Configuration with the defaults of Kueue v0.19 for its version (v1beta2, or v1beta1)."""
        obj, doc = o.label, o.doc
        v1 = doc.get("apiVersion") == CONFIG_V1BETA1
        cfg = KueueConfig()
        wfpr = self.r.mapping(doc.get("waitForPodsReady"), obj, "waitForPodsReady")
        if v1 and "enable" in wfpr and not isinstance(wfpr["enable"], bool):
            self.r.error(obj, "waitForPodsReady.enable", f"expected true or false, got {wfpr['enable']!r}")
        # v1beta2 has no switch: Kueue v0.19 always enables it; v1beta1 only with enable: true
        enabled = wfpr.get("enable") is True if v1 else True
        cfg.wait_for_pods_ready = enabled
        if enabled:
            cfg.pods_ready_timeout = 300.0 if v1 else 1800.0
            if wfpr.get("timeout") is not None:
                t = self.r.attempt(parse_duration, wfpr["timeout"], obj, "waitForPodsReady.timeout")
                if t is not None and t > 0:
                    cfg.pods_ready_timeout = t
                elif t == 0 and v1:
                    self.r.error(obj, "waitForPodsReady.timeout", "must be specified (a duration > 0)")
            block = wfpr.get("blockAdmission")
            if block is not None and not isinstance(block, bool):
                self.r.error(obj, "waitForPodsReady.blockAdmission", f"expected true or false, got {block!r}")
                block = None
            cfg.block_admission = (v1 if block is None else block)
            rs = self.r.mapping(wfpr.get("requeuingStrategy"), obj, "waitForPodsReady.requeuingStrategy")
            where = "waitForPodsReady.requeuingStrategy"
            cfg.requeuing_timestamp = self.choice(rs.get("timestamp"), ("Eviction", "Creation"), obj, f"{where}.timestamp", "Eviction")
            for key, attr in (("backoffBaseSeconds", "backoff_base"), ("backoffMaxSeconds", "backoff_max"),
                              ("backoffLimitCount", "backoff_limit_count")):
                if rs.get(key) is None:
                    continue
                value = self.integer(rs[key], obj, f"{where}.{key}")
                if value is not None and value < 0:
                    self.r.error(obj, f"{where}.{key}", f"must be greater than or equal to 0, got {value}")
                elif value is not None:
                    setattr(cfg, attr, value if attr == "backoff_limit_count" else float(value))
        gates = self.r.mapping(doc.get("featureGates"), obj, "featureGates")
        for gate, attr in FEATURE_GATES.items():
            if gate in gates:
                if isinstance(gates[gate], bool):
                    setattr(cfg, attr, gates[gate])
                else:
                    self.r.error(obj, f"featureGates.{gate}", f"expected true or false, got {gates[gate]!r}")
        fs = self.r.mapping(doc.get("fairSharing"), obj, "fairSharing")
        cfg.fair_sharing = (fs.get("enable") is True) if v1 else ("fairSharing" in doc and doc["fairSharing"] is not None)
        if cfg.fair_sharing:
            strategies = fs.get("preemptionStrategies")
            if strategies is None and v1:
                strategies = list(cfg.fair_sharing_strategies)
            if not strategies:
                self.r.error(obj, "fairSharing.preemptionStrategies", "must be specified")
            elif not isinstance(strategies, list) or tuple(strategies) not in FS_STRATEGIES:
                valid = "; ".join(",".join(s) for s in FS_STRATEGIES)
                self.r.error(obj, "fairSharing.preemptionStrategies", f"expected one of {valid}, got {strategies!r}")
            else:
                cfg.fair_sharing_strategies = tuple(strategies)
        return cfg

    # priorities and queues -----------------------------------------------------------------

    def workload_priority_class(self, name: Any, obj: str, where: str) -> int | None:
        if name not in self.wpc:
            known = ", ".join(sorted(self.wpc)) or "none"
            self.r.error(obj, where, f"no WorkloadPriorityClass named {name!r} in the input (known: {known})")
            return None
        return self.wpc[name]

    def priority_class(self, name: Any, obj: str, where: str) -> int | None:
        if name not in self.classes:
            self.r.error(obj, where, f"no PriorityClass named {name!r} in the input (known: {', '.join(sorted(self.classes))})")
            return None
        return self.classes[name]

    def check_local_queue(self, obj: str, where: str, namespace: str | None, queue: str) -> None:
        ns = namespace or "default"
        if (ns, queue) not in self.local_queues:
            self.r.notes.append(f"{obj}: {where} names LocalQueue {queue!r} in namespace {ns!r}, which is not in the "
                                "input: Kueue leaves it pending")

    # workloads ------------------------------------------------------------------------------

    def snapshot_workloads(self, objects: list[_Object]) -> list[LoadedWorkload]:
        """Workload objects and queue-labelled Jobs, in input order, with times relative to the earliest one."""
        read: list[tuple[LoadedWorkload, datetime | None, datetime | None]] = []
        keys: dict[str, str] = {}
        for o in objects:
            got = self.workload(o) if o.kind == "Workload" else self.job_workload(o)
            if got is None:
                continue
            lw, created, reserved = got
            key = lw.workload.key
            if key in keys:
                self.r.error(o.label, "metadata.name", f"gangkit names a Job's Workload after the Job; {keys[key]} "
                             f"already uses the name {key!r}")
                continue
            keys[key] = o.label
            read.append((lw, created, reserved))
        stamps = [t for _, c, q in read for t in (c, q) if t is not None]
        origin = min(stamps) if stamps else None
        latest = 0.0
        for lw, created, reserved in read:
            wl = lw.workload
            if created is not None:
                wl.created = (created - origin).total_seconds()
            if lw.admission is not None:
                wl.quota_reserved_at = None if reserved is None else (reserved - origin).total_seconds()
            latest = max(latest, wl.created, wl.quota_reserved_at or 0.0)
        self.now = latest
        for lw, _, _ in read:  # "no QuotaReserved time" counts as now, as in Kueue's candidate ordering
            if lw.admission is not None and lw.workload.quota_reserved_at is None:
                lw.workload.quota_reserved_at = latest
        return [lw for lw, _, _ in read]

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

        def one(c: Any, where: str) -> dict[str, int]:
            nonlocal ok
            c = self.r.mapping(c, obj, where)
            res = self.r.mapping(c.get("resources"), obj, f"{where}.resources")
            limits = self.r.mapping(res.get("limits"), obj, f"{where}.resources.limits")
            requests = self.r.mapping(res.get("requests"), obj, f"{where}.resources.requests")
            out: dict[str, int] = {}
            for name in list(dict.fromkeys([*requests, *limits])):
                rf, lf = f"{where}.resources.requests.{name}", f"{where}.resources.limits.{name}"
                if name == PODS:
                    self.r.error(obj, rf if name in requests else lf, "the key is reserved for internal kueue use")
                    ok = False
                    continue
                req = self.r.attempt(parse_quantity, requests[name], obj, rf) if name in requests else None
                lim = self.r.attempt(parse_quantity, limits[name], obj, lf) if name in limits else None
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
            return out

        total: dict[str, int] = {}
        for i, c in enumerate(containers):
            for name, v in one(c, f"{base}.containers[{i}]").items():
                total[name] = total.get(name, 0) + v
        init_max: dict[str, int] = {}
        sidecars: dict[str, int] = {}
        init = pod.get("initContainers") or []
        for i, c in enumerate(init if isinstance(init, list) else []):
            reqs = one(c, f"{base}.initContainers[{i}]")
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

    def workload(self, o: _Object) -> tuple[LoadedWorkload, datetime | None, datetime | None] | None:
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
            ps = by_name.get(name)
            if ps is None or name in flavors:
                self.r.error(obj, f"{base}.name", f"Not found: {name!r} (expected one of the pod sets: {', '.join(by_name)})")
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

    def job_workload(self, o: _Object) -> tuple[LoadedWorkload, datetime | None, None] | None:
        """The Workload Kueue's batch/v1 Job integration creates for a Job labelled with a LocalQueue.

        Kueue names it ``job-<name>-<hash>``; gangkit names it after the Job.
        """
        obj = o.label
        meta = self.r.mapping(o.doc.get("metadata"), obj, "metadata")
        labels = self.r.strings(meta.get("labels"), obj, "metadata.labels")
        annotations = self.r.strings(meta.get("annotations"), obj, "metadata.annotations")
        queue = labels.get(QUEUE_LABEL)
        if not queue:
            self.r.notes.append(f"{obj} has no {QUEUE_LABEL} label: Kueue does not manage it, gangkit admit leaves it out")
            return None
        spec = self.r.mapping(o.doc.get("spec"), obj, "spec")
        count = self.r.whole(spec.get("parallelism", 1), obj, "spec.parallelism", 1)
        if spec.get("completions") is not None:
            completions = self.r.whole(spec["completions"], obj, "spec.completions", 1)
            if completions is not None and count is not None:
                count = min(count, completions)
        template = spec.get("template")
        if not isinstance(template, Mapping):
            self.r.error(obj, "spec.template", "expected a pod template (a mapping with spec.containers); it is required")
            return None
        pod = self.r.mapping(template.get("spec"), obj, "spec.template.spec")
        requests = self.pod_requests(pod, obj, "spec.template.spec", api_server=True)
        selector = self.r.strings(pod.get("nodeSelector"), obj, "spec.template.spec.nodeSelector")
        if PRIORITY_CLASS_LABEL in labels:
            priority = self.workload_priority_class(labels[PRIORITY_CLASS_LABEL], obj, f"metadata.labels.{PRIORITY_CLASS_LABEL}")
        elif pod.get("priorityClassName") is not None:
            priority = self.priority_class(pod["priorityClassName"], obj, "spec.template.spec.priorityClassName")
        else:
            priority = self.default_priority
        min_count = None
        if MIN_PARALLELISM in annotations and count is not None:
            min_count = self.min_parallelism(annotations[MIN_PARALLELISM], count, obj)
        created = self.time(meta.get("creationTimestamp"), obj, "metadata.creationTimestamp")
        submit = 0.0
        if created is None and SUBMIT_TIME in annotations:
            submit = self.r.attempt(parse_duration, annotations[SUBMIT_TIME], obj, f"metadata.annotations.{SUBMIT_TIME}") or 0.0
        if count is None or requests is None or priority is None:
            return None
        self.check_local_queue(obj, f"metadata.labels.{QUEUE_LABEL}", o.namespace, queue)
        ps = PodSetSpec(DEFAULT_POD_SET, count, requests, min_count, tuple(sorted(selector.items())))
        wl = Workload(o.name, o.namespace, queue, [ps], priority=priority, created=submit)
        return LoadedWorkload(wl), created, None
