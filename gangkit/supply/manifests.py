"""The node suppliers' YAML: Karpenter's NodePools, gangkit's Karpenter and ClusterAutoscaler kinds.

Picture the purchasing office of a cluster: it does not run anything, it
buys machines when pods wait. Its orders are written down as manifests::

    apiVersion: karpenter.sh/v1
    kind: NodePool
    metadata: {name: a100}
    spec:
      limits: {nvidia.com/gpu: "32"}          # at most 32 GPUs bought
      template:
        spec:
          requirements:
          - {key: node.kubernetes.io/instance-type, operator: In, values: [gpu-8]}
      disruption: {consolidationPolicy: WhenEmpty, consolidateAfter: 5m}

What is read (see ``docs/reference/scenario-yaml.md`` for every field):

- ``karpenter.sh/v1`` **NodePool**: the instance types it may launch, its
  GPU limit, its disruption policy and budget, its weight and node labels;
- ``gangkit/v1alpha1`` **Karpenter**: the instance types (capacity, price),
  batching windows and the stages a new node goes through (registered,
  initialized, image pull). Without one, gangkit's default instance types;
- ``gangkit/v1alpha1`` **ClusterAutoscaler**: cluster-autoscaler's flags
  (scan interval, expander, back-off, scale-down) and its node groups.

They become :class:`~gangkit.supply.Karpenter` and
:class:`~gangkit.supply.ClusterAutoscaler` on ``Scenario.karpenter`` and
``Scenario.autoscaler``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gangkit.manifests.reader import ANY, GPU, META, ManifestObject, Reader, short
from gangkit.supply import ClusterAutoscaler, InstanceType, Karpenter, NodeGroup, NodePool, Stages
from gangkit.supply.autoscaler import EXPANDERS
from gangkit.supply.cloud import TYPE_LABEL

__all__ = ["EXPANDERS", "KNOWN_FIELDS", "MAX_PRICE", "read_cluster_autoscaler", "read_karpenter", "read_object"]

_NAMES = dict.fromkeys
KNOWN_FIELDS: dict[str, dict] = {
    "NodePool": {
        "apiVersion": ANY, "kind": ANY, "metadata": META,
        "spec": {
            "weight": ANY, "limits": ANY,
            "template": {"metadata": _NAMES(["labels", "annotations"], ANY),
                         "spec": {"nodeClassRef": ANY, "requirements": [_NAMES(["key", "operator", "values"], ANY)]}},
            "disruption": {"consolidationPolicy": ANY, "consolidateAfter": ANY, "budgets": [{"nodes": ANY}]},
        },
    },
    "Karpenter": {
        "apiVersion": ANY, "kind": ANY, "metadata": _NAMES(["name", "labels", "annotations"], ANY),
        "spec": {
            **_NAMES(["batchIdleDuration", "batchMaxDuration"], ANY),
            "stages": _NAMES(["registered", "initialized", "imagePull"], ANY),
            "instanceTypes": [_NAMES(["name", "capacity", "pricePerHour"], ANY)],
        },
    },
    "ClusterAutoscaler": {
        "apiVersion": ANY, "kind": ANY, "metadata": _NAMES(["name", "labels", "annotations"], ANY),
        "spec": {
            **_NAMES(["scanInterval", "expander", "maxNodeProvisionTime", "initialNodeGroupBackoffDuration",
                      "maxNodeGroupBackoffDuration", "scaleDownUnneededTime", "scaleDownDelayAfterAdd",
                      "scaleDownUtilizationThreshold", "provisioningRequestExpiry"], ANY),
            "stages": _NAMES(["registered", "initialized", "imagePull"], ANY),
            "nodeGroups": [_NAMES(["name", "minSize", "maxSize", "instanceType", "capacity", "pricePerHour", "labels",
                                   "stockout"], ANY)],
        },
    },
}


#: The highest price per hour gangkit reads for one machine: costs add up over a run (price x hours x
#: nodes) and must stay numbers, not infinity.
MAX_PRICE = 1e12


def _price(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, (int, float)) and 0 <= value <= MAX_PRICE


def read_object(r: Reader, doc: Mapping, where: str, role: str) -> ManifestObject | None:
    """Check one supplier object (its metadata and unknown fields)."""
    return r.check_object(doc, where, KNOWN_FIELDS[role])


def read_stages(r: Reader, value: Any, obj: str) -> Stages | None:
    """``stages: {registered, initialized, imagePull}`` -> :class:`~gangkit.supply.Stages` (None when absent)."""
    stages = r.mapping(value, obj, "spec.stages")
    if not stages:
        return None
    st = {}
    for key, attr in (("registered", "registered"), ("initialized", "initialized"), ("imagePull", "image_pull")):
        if key in stages:
            v = r.duration(stages[key], obj, f"spec.stages.{key}")
            if v is not None:
                st[attr] = v
    return Stages(**st)


def read_capacity(r: Reader, g: dict, obj: str, where: str) -> tuple | None:
    """``capacity: {nvidia.com/gpu, cpu, memory}`` -> (gpus, cpu, memory), or None after reporting a problem."""
    capacity = r.mapping(g.get("capacity"), obj, f"{where}.capacity")
    gpus = r.gpus(capacity.get(GPU, 0), obj, f"{where}.capacity.{GPU}")
    cpu = r.cpu(capacity["cpu"], obj, f"{where}.capacity.cpu") if "cpu" in capacity else None
    memory = r.memory(capacity["memory"], obj, f"{where}.capacity.memory") if "memory" in capacity else None
    if gpus is None or ("cpu" in capacity and cpu is None) or ("memory" in capacity and memory is None):
        return None
    return gpus, cpu, memory


def read_karpenter(r: Reader, settings: list, pools: list) -> Karpenter | None:
    """``karpenter.sh/v1`` NodePools and gangkit's ``Karpenter`` kind (instance types, batching, stages).

    Without a ``Karpenter`` object the instance types are gangkit's defaults
    (``gpu-1``, ``gpu-2``, ``gpu-4``, ``gpu-8``, priced 1.0 per GPU-hour).
    """
    if not settings and not pools:
        return None
    for o in settings[1:]:
        r.error(o.label, "kind", f"expected at most one Karpenter; {settings[0].label} comes first")
    kw: dict[str, Any] = {}
    types: list = []
    if settings:
        o = settings[0]
        obj = o.label
        spec = r.mapping(o.doc.get("spec"), obj, "spec")
        for key, attr in (("batchIdleDuration", "batch_idle"), ("batchMaxDuration", "batch_max")):
            if key in spec:
                v = r.duration(spec[key], obj, f"spec.{key}")
                if v is not None:
                    kw[attr] = v
        stages = read_stages(r, spec.get("stages"), obj)
        if stages is not None:
            kw["stages"] = stages
        items = r.named_items(spec, "instanceTypes", obj, "instance type")
        if items is None:
            return None
        for where, t, name in items:
            cap = read_capacity(r, t, obj, where)
            price = t.get("pricePerHour", float(cap[0]) if cap else 0.0)
            if not _price(price):
                r.error(obj, f"{where}.pricePerHour", f"expected a number from 0 to {MAX_PRICE:g}, got {short(price)}")
                continue
            if cap is not None:
                types.append(InstanceType(name, cap[0], float(price), cap[1], cap[2]))
    else:
        types = [InstanceType(f"gpu-{g}", g, float(g)) for g in (1, 2, 4, 8)]
    type_names = [t.name for t in types]
    node_pools = []
    for o in pools:
        obj = o.label
        spec = r.mapping(o.doc.get("spec"), obj, "spec")
        template = r.mapping(spec.get("template"), obj, "spec.template")
        labels = r.strings(r.mapping(template.get("metadata"), obj, "spec.template.metadata").get("labels"), obj,
                           "spec.template.metadata.labels")
        tspec = r.mapping(template.get("spec"), obj, "spec.template.spec")
        allowed = list(type_names)
        requirements = tspec.get("requirements") or []
        if not isinstance(requirements, list):
            r.error(obj, "spec.template.spec.requirements", f"expected a list of requirements, got {short(requirements)}")
            requirements = []
        for i, req in enumerate(requirements):
            where = f"spec.template.spec.requirements[{i}]"
            req = r.mapping(req, obj, where)
            if req.get("key") == TYPE_LABEL and req.get("operator") == "In":
                values = req.get("values") or []
                if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
                    r.error(obj, f"{where}.values", f"expected a list of instance type names, got {short(values)}")
                    continue
                unknown = [v for v in values if v not in type_names]
                if unknown:
                    r.error(obj, f"{where}.values", f"instance types {unknown} are not among the Karpenter instance types "
                            f"({', '.join(type_names)})")
                allowed = [v for v in values if v in type_names]
            else:
                r.notes.append(f"{obj}: {where} ({req.get('key')} {req.get('operator')}) is not modelled; gangkit "
                               f"reads only {TYPE_LABEL} In [...]")
        limits = r.mapping(spec.get("limits"), obj, "spec.limits")
        lim = {}
        if GPU in limits:
            g = r.gpus(limits[GPU], obj, f"spec.limits.{GPU}")
            if g is not None:
                lim[GPU] = g
        if set(limits) - {GPU}:
            r.notes.append(f"{obj}: spec.limits {sorted(set(limits) - {GPU})} are not enforced (only {GPU} is)")
        disruption = r.mapping(spec.get("disruption"), obj, "spec.disruption")
        policy = disruption.get("consolidationPolicy", "WhenEmptyOrUnderutilized")
        if policy not in ("WhenEmpty", "WhenEmptyOrUnderutilized"):
            r.error(obj, "spec.disruption.consolidationPolicy", f"expected WhenEmpty or WhenEmptyOrUnderutilized, got {policy!r}")
            continue
        after_raw = disruption.get("consolidateAfter", "0s")
        after = None if after_raw == "Never" else r.duration(after_raw, obj, "spec.disruption.consolidateAfter")
        if after is None and after_raw != "Never":
            continue
        budget: Any = "10%"
        budgets = disruption.get("budgets")
        if isinstance(budgets, list) and budgets:
            nodes = r.mapping(budgets[0], obj, "spec.disruption.budgets[0]").get("nodes", "10%")
            if isinstance(nodes, str) and nodes.endswith("%") and nodes[:-1].isascii() and nodes[:-1].isdigit() \
                    and len(nodes) <= 4:
                budget = nodes
            elif isinstance(nodes, str) and nodes.isascii() and nodes.isdigit() and len(nodes) <= 10:
                budget = int(nodes)
            else:
                r.error(obj, "spec.disruption.budgets[0].nodes", f"expected a count or a percentage like \"10%\", got {nodes!r}")
                continue
            if len(budgets) > 1:
                r.notes.append(f"{obj}: only the first disruption budget is modelled")
        weight = spec.get("weight", 0)
        if isinstance(weight, bool) or not isinstance(weight, int):
            r.error(obj, "spec.weight", f"expected a whole number, got {weight!r}")
            continue
        node_pools.append(NodePool(o.name, allowed, lim, policy, after, budget, labels, weight))
    if not pools:
        r.error(settings[0].label, "kind", "a Karpenter object needs at least one NodePool (karpenter.sh/v1)")
        return None
    if r.problems:
        return None
    return Karpenter(node_pools, types, **kw)


def read_cluster_autoscaler(r: Reader, objects: list) -> ClusterAutoscaler | None:
    """gangkit's ``ClusterAutoscaler`` kind -> :class:`~gangkit.supply.ClusterAutoscaler` (flags and node groups)."""
    if not objects:
        return None
    for o in objects[1:]:
        r.error(o.label, "kind", f"expected at most one ClusterAutoscaler; {objects[0].label} comes first")
    o = objects[0]
    obj = o.label
    spec = r.mapping(o.doc.get("spec"), obj, "spec")
    kw: dict[str, Any] = {}
    durations = {"scanInterval": "scan_interval", "maxNodeProvisionTime": "max_node_provision_time",
                 "initialNodeGroupBackoffDuration": "initial_backoff", "maxNodeGroupBackoffDuration": "max_backoff",
                 "scaleDownUnneededTime": "scale_down_unneeded_time", "scaleDownDelayAfterAdd": "scale_down_delay_after_add",
                 "provisioningRequestExpiry": "provisioning_request_expiry"}
    for key, attr in durations.items():
        if key in spec:
            value = r.duration(spec[key], obj, f"spec.{key}")
            if value is not None:
                kw[attr] = value
    if "expander" in spec:
        if spec["expander"] in EXPANDERS:
            kw["expander"] = spec["expander"]
        else:
            r.error(obj, "spec.expander", f"expected one of {', '.join(EXPANDERS)}, got {spec['expander']!r}")
    if "scaleDownUtilizationThreshold" in spec:
        v = spec["scaleDownUtilizationThreshold"]
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 <= v <= 1:
            r.error(obj, "spec.scaleDownUtilizationThreshold", f"expected a number from 0 to 1, got {v!r}")
        else:
            kw["utilization_threshold"] = float(v)
    stages = read_stages(r, spec.get("stages"), obj)
    if stages is not None:
        kw["stages"] = stages
    groups = []
    items = r.named_items(spec, "nodeGroups", obj, "node group")
    if items is None:
        return None
    for where, g, name in items:
        capacity = r.mapping(g.get("capacity"), obj, f"{where}.capacity")
        gpus = r.gpus(capacity.get(GPU, 0), obj, f"{where}.capacity.{GPU}")
        cpu = r.cpu(capacity["cpu"], obj, f"{where}.capacity.cpu") if "cpu" in capacity else None
        memory = r.memory(capacity["memory"], obj, f"{where}.capacity.memory") if "memory" in capacity else None
        lo = r.whole(g.get("minSize", 0), obj, f"{where}.minSize", 0)
        hi = r.whole(g.get("maxSize", 10), obj, f"{where}.maxSize", 0)
        price = g.get("pricePerHour", float(gpus or 0))
        if not _price(price):
            r.error(obj, f"{where}.pricePerHour", f"expected a number from 0 to {MAX_PRICE:g}, got {short(price)}")
            continue
        stockout = g.get("stockout", False)
        if not isinstance(stockout, bool):
            r.error(obj, f"{where}.stockout", f"expected true or false, got {stockout!r}")
            continue
        itype = g.get("instanceType", name)
        if not isinstance(itype, str) or not itype:
            r.error(obj, f"{where}.instanceType", f"expected a name, got {itype!r}")
            continue
        if None in (gpus, lo, hi) or ("cpu" in capacity and cpu is None) or ("memory" in capacity and memory is None):
            continue
        if lo > hi:
            r.error(obj, f"{where}.minSize", f"expected minSize <= maxSize ({hi}), got {lo}")
            continue
        labels = r.strings(g.get("labels"), obj, f"{where}.labels")
        groups.append(NodeGroup(name, InstanceType(itype, gpus, float(price), cpu, memory), lo, hi, labels, stockout))
    names = [g.name for g in groups]
    for n in sorted({n for n in names if names.count(n) > 1}):
        r.error(obj, "spec.nodeGroups", f"expected unique names; {n!r} is used twice")
    if r.problems:  # every skipped node group recorded its error
        return None
    try:
        return ClusterAutoscaler(groups, **kw)
    except ValueError as e:
        r.error(obj, "spec", str(e))
        return None
