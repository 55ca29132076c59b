"""Kueue's setup in YAML: the flavors, queues and cohorts an operator applies once.

Picture the org chart and the budget sheet of a company before any project
starts: ResourceFlavors say what kinds of machines exist, ClusterQueues hold
quota of each flavor, Cohorts let budgets lend to each other, LocalQueues
are the doors a namespace submits through, WorkloadPriorityClasses rank the
work, AdmissionChecks add a gate (a ProvisioningRequest), Topologies
describe the data centre for topology-aware flavors (:mod:`gangkit.kueue.tas.manifests`),
and Kueue's Configuration switches features on. :class:`SetupReader` reads them into a
:class:`~gangkit.kueue.objects.KueueSetup` with Kueue's own rules (its
webhooks and the CEL rules of its CRDs), every problem naming object and
field. Workloads, which are judged against this setup, are read by
:class:`gangkit.kueue.manifests.KueueReader`, which builds on this one.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from gangkit.kueue.objects import (
    ClusterQueue,
    Cohort,
    FlavorFungibility,
    FlavorQuotas,
    KueueConfig,
    KueueSetup,
    LocalQueue,
    Preemption,
    Quota,
    ResourceFlavor,
    ResourceGroup,
)
from gangkit.kueue.provisioning import CONTROLLER, AdmissionCheck, ProvisioningRequestConfig
from gangkit.kueue.tas.cache import topology_problems
from gangkit.kueue.tas.manifests import read_topology
from gangkit.model.reading import ManifestObject, Reader, short

__all__ = ["API_VERSIONS", "KIND_NAMES", "MAX_COHORT_DEPTH", "SetupReader", "canonical"]

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
#: Kueue's kinds the readers take, Topology included (the board of kinds routes it to its companion objects'
#: reader, which checks its metadata: its spec is read here)
KIND_NAMES = (*API_VERSIONS, "Topology")
TOPOLOGY_VERSIONS = (V1BETA2, V1BETA1)

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


#: The deepest cohort tree gangkit reads: cohorts from a leaf to its root. Kueue sets no such limit;
#: gangkit's quota tree (gangkit/kueue/quota.py) is summed recursively, a call per level, which
#: Python stops near 1000; a real organisation's tree (company, department, team) has a few.
MAX_COHORT_DEPTH = 100


def canonical(resource: str, value: Fraction) -> int:
    """Kueue's integer for a quantity: CPU in millicores, anything else in units, both rounded up."""
    return math.ceil(value * 1000) if resource == "cpu" else math.ceil(value)


class SetupReader:
    """Reads Kueue's setup objects into gangkit's Kueue dataclasses, collecting problems in a ``Reader``.

    ``objects`` are the input's Kueue objects; ``classes`` and
    ``default_priority`` its PriorityClasses (what a Job's pod template names).
    """

    def __init__(self, r: Reader, objects: list[ManifestObject], classes: dict[str, int], default_priority: int):
        self.r = r
        self.objects = objects
        self.classes = classes
        self.default_priority = default_priority
        self.by_kind: dict[str, list[ManifestObject]] = {k: [o for o in objects if o.kind == k] for k in KIND_NAMES}
        self.wpc: dict[str, int] = {}
        self.queues: dict[str, ClusterQueue] = {}
        self.local_queues: dict[tuple[str, str], LocalQueue] = {}
        self.inactive: dict[str, str] = {}  # ClusterQueue label -> why Kueue keeps it inactive

    # small typed getters ------------------------------------------------------------------

    def quantity(self, resource: str, value: Any, obj: str, where: str) -> int | None:
        q = self.r.quantity(value, obj, where)
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
        """A whole number that fits Kueue's int32 fields (priorities, backoff seconds and counts)."""
        if isinstance(value, bool) or not isinstance(value, int):
            self.r.error(obj, where, f"expected a whole number, got {short(value)}")
            return None
        if not -(2**31) <= value < 2**31:
            self.r.error(obj, where, f"expected a whole number from -2147483648 to 2147483647 (an int32), got {short(value)}")
            return None
        return value

    def listed(self, value: Any, obj: str, where: str) -> list:
        """A list (null: empty); anything else is recorded and read as empty."""
        if value is None:
            return []
        if not isinstance(value, list):
            self.r.error(obj, where, f"expected a list, got {type(value).__name__} {short(value)}")
            return []
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
        q = self.r.quantity(fs["weight"], obj, "spec.fairSharing.weight")
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
            value = self.integer(o.doc.get("value"), o.label, "value")
            if value is not None:
                self.wpc[o.name] = value
        flavors = [self.resource_flavor(o) for o in self.by_kind["ResourceFlavor"]]
        topologies = [t for o in self.by_kind["Topology"] if o.doc.get("apiVersion") in TOPOLOGY_VERSIONS
                      and (t := read_topology(self.r, o)) is not None]
        for p in topology_problems(topologies, flavors, manifest=True):
            self.r.error(p.obj, p.field, p.message)
        flavor_names = {f.name for f in flavors}
        cohorts = [c for c in (self.cohort(o, flavor_names) for o in self.by_kind["Cohort"]) if c is not None]
        self.check_cohort_tree(cohorts)
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
        labels = {o.name: o.label for o in self.by_kind["ClusterQueue"]}
        for cq in self.queues.values():
            reason = self.inactive.get(labels.get(cq.name, ""), "")
            if reason:
                cq.inactive = reason
                self.r.notes.append(f"{labels[cq.name]} is inactive, as Kueue keeps it ({reason}): it admits nothing, and "
                                    "its workloads wait")
        return KueueSetup(flavors, list(self.queues.values()), list(self.local_queues.values()), cohorts, config, checks,
                          topologies)

    # admission checks ----------------------------------------------------------------------

    def admission_checks(self) -> list:
        """The AdmissionChecks the ClusterQueues name (ProvisioningRequest checks only), with their configs.

        gangkit models one admission check for the whole stack: the check a
        ClusterQueue lists applies to every workload of ``kueue+provreq+autoscaler``.
        """
        configs = self._provisioning_request_configs()
        checks, other_controllers = self._admission_check_objects(configs)
        return self._checks_used(checks, other_controllers)

    def _provisioning_request_configs(self) -> dict[str, ProvisioningRequestConfig]:
        """The ProvisioningRequestConfigs by name: ``provisioningClassName`` (required) and the
        ``retryStrategy`` (Kueue v1beta1 ProvisioningRequestConfig; counts and seconds >= 0)."""
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
        return configs

    def _admission_check_objects(self, configs: dict) -> tuple[dict[str, AdmissionCheck], dict[str, str]]:
        """The AdmissionChecks of Kueue's ProvisioningRequest controller by name (their ``spec.parameters``
        naming a ProvisioningRequestConfig of the input), and the controllers of the others, which gangkit
        does not run (noted: the ClusterQueues listing them stay inactive)."""
        checks: dict[str, AdmissionCheck] = {}
        other_controllers: dict[str, str] = {}  # AdmissionChecks of controllers gangkit does not run
        for o in self.by_kind["AdmissionCheck"]:
            spec = self.r.mapping(o.doc.get("spec"), o.label, "spec")
            controller = spec.get("controllerName")
            if controller != CONTROLLER:
                if not isinstance(controller, str) or not controller:
                    self.r.error(o.label, "spec.controllerName", f"expected the name of a controller, got {short(controller)}")
                    continue
                other_controllers[o.name] = controller
                self.r.notes.append(f"{o.label} belongs to controller {controller}, which gangkit does not run (it models "
                                    f"{CONTROLLER} only): the ClusterQueues that list it stay inactive and admit nothing"
                                    + (", as their workloads would go to other clusters" if "multikueue" in controller else ""))
                continue
            params = self.r.mapping(spec.get("parameters"), o.label, "spec.parameters")
            ref = params.get("name")
            if params.get("kind") != "ProvisioningRequestConfig" or params.get("apiGroup") != GROUP or not isinstance(ref, str) \
                    or not ref:
                self.r.error(o.label, "spec.parameters", f"expected apiGroup {GROUP}, kind ProvisioningRequestConfig and "
                             f"a name, got {dict(params)!r}")
                continue
            if ref not in configs:
                self.r.error(o.label, "spec.parameters.name", f"ProvisioningRequestConfig {ref!r} is not in the input")
                continue
            checks[o.name] = AdmissionCheck(o.name, controller, configs[ref])
        return checks, other_controllers

    def _checks_used(self, checks: dict[str, AdmissionCheck], other_controllers: dict[str, str]) -> list:
        """The checks the ClusterQueues list (``admissionChecksStrategy``, or v1beta1's ``admissionChecks``), in
        first-listed order; a ClusterQueue naming an AdmissionCheck of another controller is inactive
        (``AdmissionCheckInactive``), one naming a missing AdmissionCheck too (``AdmissionCheckNotFound``)."""
        used: list[str] = []
        per_queue: dict[str, set] = {}
        for o in self.by_kind["ClusterQueue"]:
            spec = o.doc.get("spec") if isinstance(o.doc.get("spec"), Mapping) else {}
            names = []
            strategy = spec.get("admissionChecksStrategy")
            if isinstance(strategy, Mapping):
                where = "spec.admissionChecksStrategy.admissionChecks"
                for i, entry in enumerate(self.listed(strategy.get("admissionChecks"), o.label, where)):
                    entry = self.r.mapping(entry, o.label, f"{where}[{i}]")
                    names.append((entry.get("name"), f"{where}[{i}].name"))
            if o.doc.get("apiVersion") == V1BETA1:
                for i, name in enumerate(self.listed(spec.get("admissionChecks"), o.label, "spec.admissionChecks")):
                    names.append((name, f"spec.admissionChecks[{i}]"))
            for name, where in names:
                if not isinstance(name, str) or not name:
                    self.r.error(o.label, where, f"expected the name of an AdmissionCheck, got {short(name)}")
            names = [(name, where) for name, where in names if isinstance(name, str) and name]
            per_queue[o.label] = {name for name, _ in names}
            for name, where in names:
                if name in checks:
                    if name not in used:
                        used.append(name)
                elif name in other_controllers:
                    self.inactive.setdefault(o.label, f"AdmissionCheckInactive: {where} names AdmissionCheck {name!r} "
                                             f"of controller {other_controllers[name]}, which gangkit does not run")
                elif not any(c.name == name for c in self.by_kind["AdmissionCheck"]):
                    self.inactive.setdefault(o.label, f"AdmissionCheckNotFound: {where} names AdmissionCheck {name!r}, "
                                             "which is not in the input")
        if len(used) > 1:
            self.r.notes.append(f"the ClusterQueues use {len(used)} AdmissionChecks ({', '.join(used)}); gangkit applies "
                                f"the first, {used[0]}, to every workload")
        lacking = [label for label, names in per_queue.items() if used and used[0] not in names]
        if lacking:
            self.r.notes.append(f"gangkit applies AdmissionCheck {used[0]} to every workload; these ClusterQueues do not "
                                f"list it: {', '.join(lacking)}")
        return [checks[n] for n in used]

    def resource_flavor(self, o: ManifestObject) -> ResourceFlavor:
        spec = self.r.mapping(o.doc.get("spec"), o.label, "spec")
        labels = self.r.strings(spec.get("nodeLabels"), o.label, "spec.nodeLabels")
        topology = spec.get("topologyName")
        if topology is not None and (not isinstance(topology, str) or not topology):
            self.r.error(o.label, "spec.topologyName", f"expected the name of a Topology, got {short(topology)}")
            topology = None
        return ResourceFlavor(o.name, tuple(sorted(labels.items())), topology)

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
                    self.inactive.setdefault(obj, f"FlavorNotFound: {fbase}.name names ResourceFlavor {fname!r}, "
                                                  "which is not in the input")
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

    def cohort(self, o: ManifestObject, flavor_names: set[str]) -> Cohort | None:
        spec = self.r.mapping(o.doc.get("spec"), o.label, "spec")
        parent = self.name_ref(spec.get("parentName"), o.label, "spec.parentName")
        groups = self.resource_groups(spec, o.label, flavor_names, parent is not None, True)
        return Cohort(o.name, parent, groups, self.weight(spec, o.label))

    def check_cohort_tree(self, cohorts: list[Cohort]) -> None:
        """The parent chains of the Cohorts: no cycle, and at most :data:`MAX_COHORT_DEPTH` levels.

        Kueue leaves every queue of a cohort tree with a cycle inactive;
        gangkit refuses the cycle, naming the first of its cohorts in the
        input. Each chain is walked once (a cohort's depth is kept), so a
        chain of thousands of cohorts costs as many steps.
        """
        parents = {c.name: c.parent for c in cohorts}
        order = {c.name: i for i, c in enumerate(cohorts)}
        depth: dict[str, int] = {}  # cohort -> cohorts from it to its root, itself included; -1: on or below a cycle
        for c in cohorts:
            path: list[str] = []
            on_path: set[str] = set()
            node: str | None = c.name
            while node is not None and node in parents and node not in depth and node not in on_path:
                path.append(node)
                on_path.add(node)
                node = parents[node]
            if node in on_path:  # the walk came back: the cycle is the path from node on
                cycle = path[path.index(node):]
                first = min(cycle, key=order.__getitem__)
                ring = cycle[cycle.index(first):] + cycle[:cycle.index(first)]
                self.r.error(f"Cohort {first}", "spec.parentName", "the parent chain forms a cycle: "
                             + " -> ".join([*ring, first]) + " (Kueue would admit nothing in this tree)")
                below = -1
            elif node is None or node not in parents:  # a root, or a parent Kueue creates implicitly
                below = 0 if node is None else 1
            else:
                below = depth[node]
            for name in reversed(path):
                below = -1 if below < 0 else below + 1
                depth[name] = below
        deepest = max(depth, key=depth.__getitem__, default=None)
        if deepest is not None and depth[deepest] > MAX_COHORT_DEPTH:
            self.r.error(f"Cohort {deepest}", "spec.parentName", f"expected a cohort tree at most {MAX_COHORT_DEPTH} "
                         f"levels deep, got {depth[deepest]} levels from this cohort to its root (gangkit's limit; "
                         "an organisation's tree has a few)")

    def cluster_queue(self, o: ManifestObject, flavor_names: set[str]) -> ClusterQueue | None:
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

    def local_queue(self, o: ManifestObject) -> LocalQueue | None:
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

    def configuration(self, o: ManifestObject) -> KueueConfig:
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
                t = self.r.duration(wfpr["timeout"], obj, "waitForPodsReady.timeout")
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
        manage = doc.get("manageJobsWithoutQueueName", False)
        if not isinstance(manage, bool):
            self.r.error(obj, "manageJobsWithoutQueueName", f"expected true or false, got {short(manage)}")
        else:
            cfg.manage_jobs_without_queue_name = manage
        if doc.get("managedJobsNamespaceSelector") is not None:
            self.r.notes.append(f"{obj}: managedJobsNamespaceSelector is not evaluated: gangkit treats every namespace "
                                "as managed (Kueue's default leaves out kube-system and kueue-system)")
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
        if not isinstance(name, str) or name not in self.wpc:
            known = ", ".join(sorted(self.wpc)) or "none"
            self.r.error(obj, where, f"no WorkloadPriorityClass named {name!r} in the input (known: {known})")
            return None
        return self.wpc[name]

    def priority_class(self, name: Any, obj: str, where: str) -> int | None:
        if not isinstance(name, str):
            self.r.error(obj, where, f"expected the name of a PriorityClass, got {short(name)}")
            return None
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
