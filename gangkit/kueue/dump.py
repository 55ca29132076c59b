"""Kueue's setup written back as manifests: the mirror of :mod:`gangkit.kueue.setup_manifests`.

Picture the company's budget sheet copied out again for the next year: the
kinds of machines (ResourceFlavors), the cohorts, each team's budget
(ClusterQueues), the doors (LocalQueues), the capacity gate (AdmissionChecks
and their ProvisioningRequestConfigs), the work ranks (WorkloadPriorityClasses)
and the house rules (Kueue's Configuration). :func:`kueue_manifests` writes a
:class:`~gangkit.kueue.objects.KueueSetup` as the objects an operator would
``kubectl apply`` to Kueue v0.19, ``kueue.x-k8s.io/v1beta2``::

    apiVersion: kueue.x-k8s.io/v1beta2
    kind: ClusterQueue
    metadata: {name: team-a}
    spec:
      cohortName: research
      namespaceSelector: {}
      resourceGroups:
      - coveredResources: [nvidia.com/gpu]
        flavors:
        - name: a100
          resources:
          - {name: nvidia.com/gpu, nominalQuota: 8, borrowingLimit: 4}

Only what differs from Kueue's defaults is written (the defaults of the
v1beta2 CRDs, ``config/components/crd/bases``, and of the Configuration,
``apis/config/v1beta2/defaults.go``, which the reader applies too), plus what
a real Kueue needs: ``namespaceSelector: {}`` (a ClusterQueue without one
admits from no namespace), the ``timeout`` of a ``waitForPodsReady`` section
and the ``preemptionStrategies`` of ``fairSharing`` (both required fields of
the Go types). Quantities are Kubernetes quantities: CPU as cores or
millicores (``96``, ``1500m``), memory in binary units (``768Gi``) or bytes,
GPUs and the rest as whole numbers. A fair-sharing weight that is not a round
decimal (1/3) is written with all the digits of the float; a real API server
keeps nine decimal places of a quantity (a simplification: gangkit reads the
digits back exactly).

Kueue's Configuration v1beta2 has no switch for waitForPodsReady: Kueue
v0.19 always enables it. A setup with waitForPodsReady off is therefore
written as a ``config.kueue.x-k8s.io/v1beta1`` Configuration with
``waitForPodsReady.enable: false``; its other pods-ready settings then take
no effect and are not written.

Topology-Aware Scheduling: each Topology (``spec.levels``) is written
before the ResourceFlavors, and a TAS flavor with its ``topologyName``. A
pod set's topology request goes on its pod template
(:func:`pod_template_annotations` gives the annotations, which
:func:`gangkit.manifests.dump.dump_manifests` puts there).

Kueue's batch/v1 Job integration reads three things from the Job itself
(``pkg/controller/constants``, ``pkg/controller/jobs/job``): the LocalQueue
(label ``kueue.x-k8s.io/queue-name``, written by :func:`job_labels`), the
WorkloadPriorityClass (label ``kueue.x-k8s.io/priority-class``, whose class
is written here) and the partial-admission minimum (annotation
``kueue.x-k8s.io/job-min-parallelism``, :func:`job_annotations`).

What cannot be said in manifests (a quota that is not a whole number of
Kueue's units, a zero pods-ready timeout, which Kueue reads as "use the
default") is refused by name; everything else is checked by reading the
written objects back with :class:`~gangkit.kueue.setup_manifests.SetupReader`,
so nothing is written that the reader, with Kueue's webhook and CEL rules,
would reject. Both kinds of problem come together in one
:class:`~gangkit.model.errors.ScenarioError`.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Sequence
from decimal import Decimal
from typing import Any

# The readers are bound as modules, their names read when called: importing gangkit.kueue.manifests
# imports gangkit.manifests, whose writer imports this module before the readers are complete.
from gangkit.kueue import manifests as job_yaml
from gangkit.kueue import setup_manifests as setup_yaml
from gangkit.kueue.objects import (
    ClusterQueue,
    Cohort,
    KueueConfig,
    KueueSetup,
    LocalQueue,
    ResourceFlavor,
    ResourceGroup,
)
from gangkit.kueue.provisioning import AdmissionCheck, ProvisioningRequestConfig
from gangkit.kueue.tas.manifests import template_annotations, topology_manifest
from gangkit.model.errors import Problem, ScenarioError
from gangkit.model.quantity import format_duration, format_memory
from gangkit.model.reading import QUEUE_LABEL, Reader

__all__ = ["configuration_manifest", "job_annotations", "job_labels", "kueue_manifests", "pod_template_annotations"]

CONFIGURATION = "Kueue Configuration"  # how problems name the Configuration, which has no name
_DEFAULT_CONFIG = KueueConfig()
_DEFAULT_CHECK_CONFIG = ProvisioningRequestConfig()


def kueue_manifests(setup: KueueSetup | None, jobs: Iterable = ()) -> list[dict]:
    """The Kueue objects of ``setup``, and the WorkloadPriorityClasses that ``jobs`` name.

    In the order an operator applies them: Topologies, ResourceFlavors, Cohorts,
    ClusterQueues, LocalQueues, ProvisioningRequestConfigs, AdmissionChecks,
    WorkloadPriorityClasses, then the Configuration when it differs from
    Kueue's defaults. Every ClusterQueue lists every AdmissionCheck of the
    setup (gangkit applies the first to every workload). Raises
    :class:`~gangkit.model.errors.ScenarioError` listing every problem.
    """
    jobs = list(jobs)
    problems = _unwritable(setup) if setup is not None else []
    classes, class_problems = _workload_priority_classes(jobs)
    problems += class_problems
    if problems:
        raise ScenarioError(problems)
    docs: list[dict] = []
    if setup is not None:
        checks = [c.name for c in setup.admission_checks]
        docs += [topology_manifest(t, setup_yaml.V1BETA2) for t in setup.topologies]
        docs += [flavor_manifest(f) for f in setup.flavors]
        docs += [cohort_manifest(c) for c in setup.cohorts]
        docs += [cluster_queue_manifest(q, checks) for q in setup.cluster_queues]
        docs += [local_queue_manifest(q) for q in setup.local_queues]
        docs += admission_check_manifests(setup.admission_checks)
    docs += classes
    config = configuration_manifest(setup.config) if setup is not None else None
    if config is not None:
        docs.append(config)
    problems = _read_back(docs)
    if problems:
        raise ScenarioError(problems)
    return docs


# --- the objects ---------------------------------------------------------------------------------


def flavor_manifest(f: ResourceFlavor) -> dict:
    """A ResourceFlavor; ``spec.nodeLabels`` only when it has labels, ``spec.topologyName`` for a TAS flavor."""
    doc: dict[str, Any] = _object("ResourceFlavor", f.name)
    spec: dict[str, Any] = {}
    if f.node_labels:
        spec["nodeLabels"] = dict(f.node_labels)
    if f.topology_name is not None:
        spec["topologyName"] = f.topology_name
    if spec:
        doc["spec"] = spec
    return doc


def cohort_manifest(c: Cohort) -> dict:
    """A Cohort: its parent (``spec.parentName``), quota of its own and fair-sharing weight."""
    spec: dict[str, Any] = {}
    if c.parent is not None:
        spec["parentName"] = c.parent
    if c.resource_groups:
        spec["resourceGroups"] = _resource_groups(c.resource_groups)
    if c.fair_sharing_weight != 1.0:
        spec["fairSharing"] = {"weight": _weight(c.fair_sharing_weight)}
    return _object("Cohort", c.name) | ({"spec": spec} if spec else {})


def cluster_queue_manifest(q: ClusterQueue, admission_checks: Sequence[str] = ()) -> dict:
    """A ClusterQueue (v1beta2: the cohort is ``spec.cohortName``), open to every namespace."""
    spec: dict[str, Any] = {}
    if q.cohort is not None:
        spec["cohortName"] = q.cohort
    spec["namespaceSelector"] = {}  # {} matches every namespace; a missing selector matches none
    if q.queueing_strategy != "BestEffortFIFO":
        spec["queueingStrategy"] = q.queueing_strategy
    spec["resourceGroups"] = _resource_groups(q.resource_groups)
    p = q.preemption
    preemption: dict[str, Any] = {}
    if p.within_cluster_queue != "Never":
        preemption["withinClusterQueue"] = p.within_cluster_queue
    if p.reclaim_within_cohort != "Never":
        preemption["reclaimWithinCohort"] = p.reclaim_within_cohort
    borrow: dict[str, Any] = {}
    if p.borrow_within_cohort != "Never":
        borrow["policy"] = p.borrow_within_cohort
    if p.max_priority_threshold is not None:
        borrow["maxPriorityThreshold"] = p.max_priority_threshold
    if borrow:
        preemption["borrowWithinCohort"] = borrow
    if preemption:
        spec["preemption"] = preemption
    ff = q.flavor_fungibility
    fungibility: dict[str, Any] = {}
    if ff.when_can_borrow != "MayStopSearch":
        fungibility["whenCanBorrow"] = ff.when_can_borrow
    if ff.when_can_preempt != "TryNextFlavor":
        fungibility["whenCanPreempt"] = ff.when_can_preempt
    if ff.preference is not None:
        fungibility["preference"] = ff.preference
    if fungibility:
        spec["flavorFungibility"] = fungibility
    if q.fair_sharing_weight != 1.0:
        spec["fairSharing"] = {"weight": _weight(q.fair_sharing_weight)}
    if admission_checks:
        spec["admissionChecksStrategy"] = {"admissionChecks": [{"name": name} for name in admission_checks]}
    return _object("ClusterQueue", q.name) | {"spec": spec}


def local_queue_manifest(q: LocalQueue) -> dict:
    """A LocalQueue in its namespace, pointing at its ClusterQueue."""
    doc = {"apiVersion": setup_yaml.V1BETA2, "kind": "LocalQueue", "metadata": {"name": q.name, "namespace": q.namespace}}
    return doc | ({"spec": {"clusterQueue": q.cluster_queue}} if q.cluster_queue else {})


def admission_check_manifests(checks: list[AdmissionCheck]) -> list[dict]:
    """Each ProvisioningRequestConfig once (retry settings that differ from the CRD's), then the AdmissionChecks."""
    configs: dict[str, ProvisioningRequestConfig] = {}
    for c in checks:
        configs.setdefault(c.config.name, c.config)
    docs = []
    for cfg in configs.values():
        retry: dict[str, Any] = {}
        for key, attr in (("backoffLimitCount", "backoff_limit_count"), ("backoffBaseSeconds", "backoff_base_seconds"),
                          ("backoffMaxSeconds", "backoff_max_seconds")):
            if getattr(cfg, attr) != getattr(_DEFAULT_CHECK_CONFIG, attr):
                retry[key] = _whole(getattr(cfg, attr))
        spec: dict[str, Any] = {"provisioningClassName": cfg.provisioning_class}
        if retry:
            spec["retryStrategy"] = retry
        docs.append(_object("ProvisioningRequestConfig", cfg.name) | {"spec": spec})
    for c in checks:
        params = {"apiGroup": setup_yaml.GROUP, "kind": "ProvisioningRequestConfig", "name": c.config.name}
        docs.append(_object("AdmissionCheck", c.name) | {"spec": {"controllerName": c.controller_name, "parameters": params}})
    return docs


def configuration_manifest(c: KueueConfig) -> dict | None:
    """Kueue's Configuration, or None when every setting that takes effect is Kueue v0.19's default.

    v1beta2 when waitForPodsReady is on (the section only when one of its
    settings differs, then always with its ``timeout``), else v1beta1 with
    ``waitForPodsReady.enable: false``. Fair sharing, when on, with its
    ``preemptionStrategies``; the feature gates gangkit models, when not at
    their defaults; ``manageJobsWithoutQueueName`` when true.
    """
    d = _DEFAULT_CONFIG
    doc: dict[str, Any]
    if c.wait_for_pods_ready:
        doc = {"apiVersion": setup_yaml.CONFIG_V1BETA2, "kind": "Configuration"}
        requeuing: dict[str, Any] = {}
        if c.requeuing_timestamp != d.requeuing_timestamp:
            requeuing["timestamp"] = c.requeuing_timestamp
        if c.backoff_limit_count is not None:
            requeuing["backoffLimitCount"] = c.backoff_limit_count
        if c.backoff_base != d.backoff_base:
            requeuing["backoffBaseSeconds"] = _whole(c.backoff_base)
        if c.backoff_max != d.backoff_max:
            requeuing["backoffMaxSeconds"] = _whole(c.backoff_max)
        if requeuing or c.block_admission or c.pods_ready_timeout != d.pods_ready_timeout:
            wfpr: dict[str, Any] = {"timeout": format_duration(c.pods_ready_timeout)}
            if c.block_admission:
                wfpr["blockAdmission"] = True
            if requeuing:
                wfpr["requeuingStrategy"] = requeuing
            doc["waitForPodsReady"] = wfpr
        if c.fair_sharing:
            doc["fairSharing"] = {"preemptionStrategies": list(c.fair_sharing_strategies)}
    else:
        doc = {"apiVersion": setup_yaml.CONFIG_V1BETA1, "kind": "Configuration", "waitForPodsReady": {"enable": False}}
        if c.fair_sharing:
            fs: dict[str, Any] = {"enable": True}
            if tuple(c.fair_sharing_strategies) != d.fair_sharing_strategies:
                fs["preemptionStrategies"] = list(c.fair_sharing_strategies)
            doc["fairSharing"] = fs
    gates = {gate: getattr(c, attr) for gate, attr in setup_yaml.FEATURE_GATES.items() if getattr(c, attr) != getattr(d, attr)}
    if gates:
        doc["featureGates"] = gates
    if c.manage_jobs_without_queue_name:
        doc["manageJobsWithoutQueueName"] = True
    return doc if len(doc) > 2 else None


# --- what Kueue reads of a Job ---------------------------------------------------------------------


def job_labels(job) -> dict[str, str]:
    """A job's labels with ``kueue.x-k8s.io/queue-name``: Kueue manages only Jobs that name their LocalQueue."""
    return {**job.labels, QUEUE_LABEL: job.queue}


def job_annotations(job) -> dict[str, str]:
    """``kueue.x-k8s.io/job-min-parallelism`` for a batch/v1 Job whose pod set may start with fewer pods.

    Kueue's partial admission takes a minimum from 1 to ``parallelism - 1``;
    a ``min_count`` equal to the pod count admits all or nothing, as no
    annotation does, and is not written.
    """
    if job.controller != "batch" or len(job.pod_sets) != 1:
        return {}
    ps = job.pod_sets[0]
    if ps.min_count is None or ps.min_count >= ps.count:
        return {}
    return {job_yaml.MIN_PARALLELISM: str(ps.min_count)}


def pod_template_annotations(setup: KueueSetup | None, job) -> dict[str, dict[str, str]]:
    """Per pod set of ``job``, the pod template annotation of its topology request (``kueue.x-k8s.io/podset-*-topology``)."""
    if setup is None:
        return {}
    return {ps.name: template_annotations(request) for ps in job.pod_sets
            if (request := setup.topology_requests.get((job.key, ps.name))) is not None}


# --- helpers --------------------------------------------------------------------------------------


def _object(kind: str, name: str) -> dict:
    return {"apiVersion": setup_yaml.V1BETA2, "kind": kind, "metadata": {"name": name}}


def _resource_groups(groups: list[ResourceGroup]) -> list[dict]:
    out = []
    for rg in groups:
        flavors = []
        for fq in rg.flavors:
            resources = []
            for res in rg.covered:
                quota = fq.resources[res]
                entry: dict[str, Any] = {"name": res, "nominalQuota": _quantity(res, quota.nominal)}
                if quota.borrowing_limit is not None:
                    entry["borrowingLimit"] = _quantity(res, quota.borrowing_limit)
                if quota.lending_limit is not None:
                    entry["lendingLimit"] = _quantity(res, quota.lending_limit)
                resources.append(entry)
            flavors.append({"name": fq.flavor, "resources": resources})
        out.append({"coveredResources": list(rg.covered), "flavors": flavors})
    return out


def _quantity(resource: str, value: int) -> int | str:
    """A quota in Kueue's canonical units as a Kubernetes quantity: millicores, bytes, counts."""
    if resource == "cpu":
        return value // 1000 if value % 1000 == 0 else f"{value}m"
    if resource == "memory":
        text = format_memory(value)
        return int(text) if text.isdigit() else text
    return value


def _weight(weight: float) -> int | str:
    """A fair-sharing weight as a quantity: a whole number, else its exact decimal (``0.5``, not a float)."""
    if weight == int(weight):
        return int(weight)
    return format(Decimal(repr(float(weight))), "f")


def _whole(value: float) -> Any:
    """Whole seconds as an int (``60.0`` -> ``60``); anything else as it is, for the reader to refuse by name."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


def _is_whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _unwritable(setup: KueueSetup) -> list[Problem]:
    """What the manifests cannot say, or would say differently (the reader judges the rest)."""
    problems = []
    if not setup.cluster_queues:
        problems.append(Problem("Kueue setup", "cluster_queues", "expected at least one ClusterQueue: read back "
                                "without one, kueue+ stacks use gangkit's default setup (one ClusterQueue holding "
                                "every GPU)"))
    for kind, items, key in (("Topology", setup.topologies, lambda o: o.name),
                             ("ResourceFlavor", setup.flavors, lambda o: o.name),
                             ("Cohort", setup.cohorts, lambda o: o.name),
                             ("ClusterQueue", setup.cluster_queues, lambda o: o.name),
                             ("LocalQueue", setup.local_queues, lambda o: f"{o.namespace}/{o.name}"),
                             ("AdmissionCheck", setup.admission_checks, lambda o: o.name)):
        seen: set[str] = set()
        for o in items:
            if key(o) in seen:
                problems.append(Problem(f"{kind} {key(o)}", "name", f"appears twice; a {kind} name is unique"
                                        + (" in its namespace" if kind == "LocalQueue" else "")))
            seen.add(key(o))
    for kind, owners in (("Cohort", setup.cohorts), ("ClusterQueue", setup.cluster_queues)):
        for o in owners:
            problems += _quota_problems(f"{kind} {o.name}", o.resource_groups)
            if not math.isfinite(o.fair_sharing_weight):
                problems.append(Problem(f"{kind} {o.name}", "fair_sharing_weight",
                                        f"expected a finite number, got {o.fair_sharing_weight!r}"))
    configs: dict[str, tuple[str, ProvisioningRequestConfig]] = {}
    for c in setup.admission_checks:
        first = configs.setdefault(c.config.name, (c.name, c.config))
        if first[1] != c.config:
            problems.append(Problem(f"AdmissionCheck {c.name}", "config", f"names ProvisioningRequestConfig "
                                    f"{c.config.name!r} with other settings than AdmissionCheck {first[0]} does"))
    cfg = setup.config
    if cfg.wait_for_pods_ready and not (math.isfinite(cfg.pods_ready_timeout) and cfg.pods_ready_timeout > 0):
        problems.append(Problem(CONFIGURATION, "pods_ready_timeout", "expected seconds > 0 (Kueue reads a "
                                f"zero timeout as its default of 30 min), got {cfg.pods_ready_timeout!r}"))
    for name in ("backoff_base", "backoff_max"):
        if not math.isfinite(getattr(cfg, name)):
            problems.append(Problem(CONFIGURATION, name, f"expected whole seconds, got {getattr(cfg, name)!r}"))
    return problems


def _quota_problems(obj: str, groups: list[ResourceGroup]) -> list[Problem]:
    problems = []
    for i, rg in enumerate(groups):
        for j, fq in enumerate(rg.flavors):
            where = f"resource_groups[{i}].flavors[{j}]"
            if sorted(fq.resources) != sorted(rg.covered):
                problems.append(Problem(obj, f"{where}.resources", f"expected one quota per covered resource "
                                        f"({', '.join(rg.covered)}), got {', '.join(fq.resources) or 'none'}"))
                continue
            for res, quota in fq.resources.items():
                for attr in ("nominal", "borrowing_limit", "lending_limit"):
                    value = getattr(quota, attr)
                    if value is not None and not _is_whole(value):
                        problems.append(Problem(obj, f"{where}.resources[{res}].{attr}", "expected a whole number "
                                                ">= 0 in Kueue's units (CPU in millicores, memory in bytes), "
                                                f"got {value!r}"))
    return problems


def _workload_priority_classes(jobs: list) -> tuple[list[dict], list[Problem]]:
    """One WorkloadPriorityClass per name the jobs' labels give, valued at their priority (Kueue copies it there)."""
    values: dict[str, tuple[int, str]] = {}
    problems = []
    for j in jobs:
        name = j.labels.get(job_yaml.PRIORITY_CLASS_LABEL)
        if name is None:
            continue
        first = values.setdefault(name, (j.priority, j.key))
        if first[0] != j.priority:
            problems.append(Problem(f"Job {j.key}", f"labels.{job_yaml.PRIORITY_CLASS_LABEL}", f"names WorkloadPriorityClass "
                                    f"{name!r} with priority {j.priority}, but Job {first[1]} gives it {first[0]}"))
    docs = [_object("WorkloadPriorityClass", name) | {"value": value} for name, (value, _) in values.items()]
    return docs, problems


def _read_back(docs: list[dict]) -> list[Problem]:
    """The problems Kueue's reader finds in the written objects (its webhook and CEL rules).

    The Configuration has no name: its problems are Kueue Configuration's, as above.
    """
    r = Reader("Kueue setup")
    objects = [o for doc in docs if (o := job_yaml.read_object(r, doc, "written", doc["kind"])) is not None]
    setup_yaml.SetupReader(r, objects, {}, 0).setup()
    return [dataclasses.replace(p, obj=CONFIGURATION) if p.obj == "Configuration (written)" else p for p in r.problems]
