"""The node suppliers' configurations in YAML: NodePools, gangkit's Karpenter and ClusterAutoscaler kinds.

They become a :class:`~gangkit.supply.KarpenterSetup` and an
:class:`~gangkit.supply.AutoscalerSetup` (each run builds its supplier from
them). gangkit's ``Karpenter`` kind gives the instance types (capacity,
price), batching windows and node stages; its ``ClusterAutoscaler`` kind gives
cluster-autoscaler's flags and node groups (``maxEmptyBulkDelete`` refused by
name: cluster-autoscaler 1.33 removed ``--max-empty-bulk-delete``).

For a ``karpenter.sh/v1`` NodePool, what is read: the instance types a NodePool's requirements allow (every
operator; which types it chooses from and how each key is evaluated:
:mod:`gangkit.supply.catalogue`), its limits on ``nvidia.com/gpu``, ``cpu`` and
``memory`` (a limit on any other resource is noted as not modelled), its
disruption policy and budget, its weight and node labels, and
``spec.replicas`` for a static NodePool (with ``limits.nodes``). The checks
are the NodePool CRD's (Karpenter v1.14 ``pkg/apis/crds/karpenter.sh_nodepools.yaml``);
each problem names the object and field. The rest of the suppliers' YAML:
:mod:`gangkit.supply.manifests` (which also holds the fields each kind may carry).
"""

from __future__ import annotations

from typing import Any

from gangkit.model.quantity import format_cpu, format_memory
from gangkit.model.reading import GPU, ManifestObject, Reader, short
from gangkit.supply.autoscaler_setup import AutoscalerSetup
from gangkit.supply.catalogue import (
    CAPACITY_TYPE,
    CATALOGUE_KEYS,
    OPERATORS,
    WELL_KNOWN,
    ZONE,
    MinValues,
    Requirement,
    catalogue,
    close_names,
    default_labels,
    wants_catalogue,
)
from gangkit.supply.cloud import TYPE_LABEL, InstanceType, Stages
from gangkit.supply.expander import EXPANDERS
from gangkit.supply.fit import CPU, MEMORY
from gangkit.supply.karpenter_setup import KarpenterSetup
from gangkit.supply.node_groups import NodeGroup
from gangkit.supply.nodepool import LIMITED, NodePool

#: The highest price per hour gangkit reads for one machine: costs add up over a run (price x hours x
#: nodes) and must stay numbers, not infinity.
MAX_PRICE = 1e12


def _price(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, (int, float)) and 0 <= value <= MAX_PRICE


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


def read_karpenter(r: Reader, settings: list, pools: list) -> KarpenterSetup | None:
    """``karpenter.sh/v1`` NodePools and gangkit's ``Karpenter`` kind (instance types, batching, stages).

    Which instance types a NodePool chooses from, and how its requirements
    are evaluated: :mod:`gangkit.supply.catalogue`. Without a ``Karpenter``
    object listing ``spec.instanceTypes``: gangkit's default types
    (``gpu-1``, ``gpu-2``, ``gpu-4``, ``gpu-8``, priced 1.0 per GPU-hour),
    plus the catalogue for a NodePool that asks for it.
    """
    if not settings and not pools:
        return None
    for o in settings[1:]:
        r.error(o.label, "kind", f"expected at most one Karpenter; {settings[0].label} comes first")
    kw: dict[str, Any] = {}
    listed: list | None = None  # the Karpenter object's instance types (None: it lists none)
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
        if spec.get("instanceTypes") is not None:
            items = r.named_items(spec, "instanceTypes", obj, "instance type")
            if items is None:
                return None
            listed = []
            for where, t, name in items:
                cap = read_capacity(r, t, obj, where)
                price = t.get("pricePerHour", float(cap[0]) if cap else 0.0)
                if not _price(price):
                    r.error(obj, f"{where}.pricePerHour", f"expected a number from 0 to {MAX_PRICE:g}, got {short(price)}")
                    continue
                if cap is not None:
                    listed.append(InstanceType(name, cap[0], float(price), cap[1], cap[2]))
    owner = settings[0].label if settings else None
    node_pools = []
    from_catalogue: set[str] = set()
    for o in pools:
        pool = read_nodepool(r, o, listed, owner)
        if pool is not None:
            node_pools.append(pool)
            if listed is None:
                from_catalogue.update(t for t in pool.instance_types if t not in DEFAULT_TYPES)
    if not pools:
        r.error(settings[0].label, "kind", "a Karpenter object needs at least one NodePool (karpenter.sh/v1)")
        return None
    if r.problems:
        return None
    types = listed if listed is not None else list(DEFAULT_TYPES.values()) + [
        c.instance_type() for name, c in catalogue().items() if name in from_catalogue]
    note_unmeasured_limits(r, node_pools, types)
    return KarpenterSetup(node_pools, types, **kw)


def read_cluster_autoscaler(r: Reader, objects: list) -> AutoscalerSetup | None:
    """gangkit's ``ClusterAutoscaler`` kind -> :class:`~gangkit.supply.AutoscalerSetup` (flags and node groups)."""
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
    if "maxEmptyBulkDelete" in spec:
        r.error(obj, "spec.maxEmptyBulkDelete", "cluster-autoscaler removed --max-empty-bulk-delete in 1.33 (its "
                "successors are --max-scale-down-parallelism, default 10, and --max-drain-parallelism, default 1, "
                "which this kind leaves at their defaults); expected no such field, got "
                f"{short(spec['maxEmptyBulkDelete'])}")
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
        return AutoscalerSetup(tuple(groups), **kw)
    except ValueError as e:
        r.error(obj, "spec", str(e))
        return None


# -- ProvisioningRequests a user applies, and the pods that consume them ----------------------------


#: gangkit's default instance types: ``gpu-N`` with N GPUs at N per hour (no CPU or memory figures).
DEFAULT_TYPES = {f"gpu-{g}": InstanceType(f"gpu-{g}", g, float(g)) for g in (1, 2, 4, 8)}
#: The most nodes a static NodePool may keep: Kubernetes supports clusters of at most 5,000 nodes
#: ("Considerations for large clusters").
MAX_STATIC_NODES = 5000
REQ = "spec.template.spec.requirements"
POLICIES = ("WhenEmpty", "WhenEmptyOrUnderutilized", "Balanced")


def read_nodepool(r: Reader, o: ManifestObject, listed: list | None, owner: str | None) -> NodePool | None:
    """One ``karpenter.sh/v1`` NodePool -> :class:`~gangkit.supply.NodePool` (None after reporting its problems,
    all of them: the API server refuses the object for each)."""
    obj = o.label
    before = len(r.problems)
    spec = r.mapping(o.doc.get("spec"), obj, "spec")
    template = r.mapping(spec.get("template"), obj, "spec.template")
    labels = r.strings(r.mapping(template.get("metadata"), obj, "spec.template.metadata").get("labels"), obj,
                       "spec.template.metadata.labels")
    tspec = r.mapping(template.get("spec"), obj, "spec.template.spec")
    requirements = read_requirements(r, tspec.get("requirements"), obj)
    chosen = None if requirements is None else choose_types(r, obj, requirements, listed, owner)
    replicas = None
    if spec.get("replicas") is not None:
        replicas = r.whole(spec["replicas"], obj, "spec.replicas", 0, MAX_STATIC_NODES)
    limits = r.mapping(spec.get("limits"), obj, "spec.limits")
    lim: dict[str, Any] = {}
    if "replicas" in spec and spec["replicas"] is not None:  # a static NodePool (the CRD's CEL rules)
        if set(limits) - {"nodes"}:
            r.error(obj, "spec.limits", "only 'limits.nodes' is supported on static NodePools (spec.replicas is set); "
                                        f"got {sorted(map(str, limits))}")
        if "nodes" in limits:
            n = r.quantity(limits["nodes"], obj, "spec.limits.nodes")
            if n is not None and (n.denominator != 1 or n < 0):
                r.error(obj, "spec.limits.nodes", f"expected a whole number of nodes, got {short(limits['nodes'])}")
            elif n is not None:
                lim["nodes"] = min(int(n), MAX_STATIC_NODES)
        if "weight" in spec:
            r.error(obj, "spec.weight", "'weight' is not supported on static NodePools (spec.replicas is set)")
    else:
        lim = read_limits(r, limits, obj)
    disruption = r.mapping(spec.get("disruption"), obj, "spec.disruption")
    policy = disruption.get("consolidationPolicy", "WhenEmptyOrUnderutilized")
    if policy not in POLICIES:
        hint = (" (the documentation's list of choices: write one of them)"
                if isinstance(policy, str) and "|" in policy else "")
        r.error(obj, "spec.disruption.consolidationPolicy", f"expected one of {', '.join(POLICIES)}, got {policy!r}{hint}")
    after_raw = disruption.get("consolidateAfter", "0s")
    after = None if after_raw == "Never" else r.duration(after_raw, obj, "spec.disruption.consolidateAfter")
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
        if len(budgets) > 1:
            r.notes.append(f"{obj}: only the first disruption budget is modelled")
    weight = spec.get("weight", 0)
    if isinstance(weight, bool) or not isinstance(weight, int):
        r.error(obj, "spec.weight", f"expected a whole number, got {weight!r}")
    if chosen is None or len(r.problems) > before:
        return None
    allowed, min_values = chosen
    return NodePool(o.name, allowed, lim, policy, after, budget, labels, 0 if replicas is not None else weight,
                    min_values=min_values, replicas=replicas)


def read_limits(r: Reader, limits: dict, obj: str) -> dict[str, Any]:
    """A dynamic NodePool's ``spec.limits`` -> the limits gangkit enforces: ``nvidia.com/gpu`` (a whole number),
    ``cpu`` (cores) and ``memory`` (bytes), each a Kubernetes quantity. A limit on any other resource
    (``pods``, ``ephemeral-storage``, ``nodes``...) is accepted, as the CRD accepts it, with a note that gangkit
    does not model it (Karpenter enforces it against its nodes' capacity of that resource)."""
    out: dict[str, Any] = {}
    for key, parse in ((GPU, r.gpus), (CPU, r.cpu), (MEMORY, r.memory)):
        if key in limits:
            v = parse(limits[key], obj, f"spec.limits.{key}")
            if v is not None:
                out[key] = v
    other = sorted(str(k) for k in limits if k not in LIMITED)
    if other:
        these = f"the limit on {other[0]} is" if len(other) == 1 else f"the limits on {', '.join(other)} are"
        r.notes.append(f"{obj}: spec.limits: {these} not modelled and ignored: gangkit enforces only "
                       f"{', '.join(LIMITED[:-1])} and {LIMITED[-1]} (Karpenter enforces every limit against the "
                       "capacity of the pool's nodes)")
    return out


def note_unmeasured_limits(r: Reader, pools: list[NodePool], types: list[InstanceType]) -> None:
    """A ``cpu`` or ``memory`` limit on a pool whose instance types do not all give that figure: those types add 0 of
    it to the pool's usage (gangkit's default ``gpu-N`` types give none), so say which."""
    by_name = {t.name: t for t in types}
    for pool in pools:
        for key in (CPU, MEMORY):
            if key in pool.enforced:
                blind = [t for t in pool.instance_types if getattr(by_name[t], key) is None]
                if len(blind) == 1:
                    r.notes.append(f"NodePool {pool.name}: spec.limits.{key}: instance type {blind[0]} has no {key} "
                                   f"capacity, so it counts 0 {key} against the limit (describe it with its {key} in "
                                   "a Karpenter object's spec.instanceTypes)")
                elif blind:
                    r.notes.append(f"NodePool {pool.name}: spec.limits.{key}: instance types {_names(blind)} have no "
                                   f"{key} capacity, so they count 0 {key} against the limit (describe them with "
                                   f"their {key} in a Karpenter object's spec.instanceTypes)")


def read_requirements(r: Reader, raw: Any, obj: str) -> list[tuple[str, Requirement]] | None:
    """``spec.template.spec.requirements`` -> (field, :class:`Requirement`) pairs, checked as the NodePool CRD
    checks them (its schema and CEL rules); None after reporting a problem."""
    if raw is None:
        return []
    if not isinstance(raw, list):
        r.error(obj, REQ, f"expected a list of requirements, got {short(raw)}")
        return None
    out, ok = [], True
    for i, item in enumerate(raw):
        where = f"{REQ}[{i}]"
        req = r.mapping(item, obj, where)
        key, op, values = req.get("key"), req.get("operator"), req.get("values")
        values = [] if values is None else values
        problem = ""
        if not isinstance(key, str) or not key:
            r.error(obj, f"{where}.key", f"expected a label key, got {short(key)}")
            ok = False
            continue
        domain = key.split("/", 1)[0] if "/" in key else ""
        if key == "karpenter.sh/nodepool":
            problem = 'label "karpenter.sh/nodepool" is restricted'
        elif key == "kubernetes.io/hostname":
            problem = 'label "kubernetes.io/hostname" is restricted'
        elif domain.endswith("karpenter.sh") and key != CAPACITY_TYPE:
            problem = 'label domain "karpenter.sh" is restricted'
        if problem:
            r.error(obj, f"{where}.key", problem)
            ok = False
            continue
        if op not in OPERATORS:
            r.error(obj, f"{where}.operator", f"expected one of {', '.join(OPERATORS)}, got {short(op)}")
            ok = False
            continue
        if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
            what = "instance type names" if key == TYPE_LABEL else "strings"
            r.error(obj, f"{where}.values", f"expected a list of {what}, got {short(values)}")
            ok = False
            continue
        if op == "In" and not values:
            problem = "requirements with operator 'In' must have a value defined"
        elif op in ("Gt", "Lt", "Gte", "Lte") and (len(values) != 1 or not values[0].isascii() or not values[0].isdigit()):
            problem = "requirements operator 'Gt', 'Lt', 'Gte', or 'Lte' must have a single positive integer value"
        if problem:
            r.error(obj, f"{where}.values", f"{problem}, got {short(values)}")
            ok = False
            continue
        min_values = None
        if req.get("minValues") is not None:
            min_values = r.whole(req["minValues"], obj, f"{where}.minValues", 1, 50)
            if min_values is None:
                ok = False
                continue
            if op == "In" and min_values > len(values):
                r.error(obj, f"{where}.minValues", "requirements with 'minValues' must have at least that many values "
                                                   f"specified in the 'values' field; got {min_values} for {len(values)}")
                ok = False
                continue
        out.append((where, Requirement(key, op, tuple(values), min_values)))
    return out if ok else None


def choose_types(r: Reader, obj: str, requirements: list[tuple[str, Requirement]], listed: list | None,
                 owner: str | None) -> tuple[list[str], tuple[MinValues, ...]] | None:
    """The instance types a NodePool allows, in the order its instance-type requirement names them, and its
    minValues; None after reporting a problem. The rules are :mod:`gangkit.supply.catalogue`'s."""
    reqs = [q for _, q in requirements]
    if listed is not None:
        universe = {t.name: {TYPE_LABEL: frozenset({t.name})} for t in listed}
        modelled: tuple[str, ...] = (TYPE_LABEL,)
        whose = "the Karpenter object's instance types carry only their name"
    else:
        universe = {name: default_labels(name) for name in DEFAULT_TYPES}
        modelled = WELL_KNOWN
        whose = (f"gangkit models {', '.join(WELL_KNOWN)} and the karpenter.k8s.aws/ labels of its catalogue "
                 f"({', '.join(k.split('/')[1] for k in CATALOGUE_KEYS)})")
        if wants_catalogue(reqs):
            universe |= {name: c.labels() for name, c in catalogue().items()}
            modelled = WELL_KNOWN + CATALOGUE_KEYS
    allowed = list(universe)
    order: list[str] | None = None
    min_values = []
    for where, q in requirements:
        if q.key == ZONE:
            if q.operator != "Exists":
                r.notes.append(f"{obj}: {where} ({q}) is accepted, not modelled: gangkit has no zones, every instance "
                               "type counts as offered in every zone")
            continue
        if q.key not in modelled:
            r.notes.append(f"{obj}: {where} ({q.key} {q.operator}) is not modelled; {whose}"
                           + ("; its minValues is not checked" if q.min_values else ""))
            continue
        if q.key == TYPE_LABEL:
            unknown = [v for v in dict.fromkeys(q.values) if v not in universe]
            if unknown and q.operator == "In":
                r.error(obj, f"{where}.values", unknown_types(unknown, listed, owner))
                return None
            if unknown:
                r.notes.append(f"{obj}: {where}.values: {', '.join(map(repr, unknown))} name no instance type gangkit "
                               "knows" + _did_you_mean(unknown, listed))
            if q.operator == "In" and order is None:
                order = list(dict.fromkeys(q.values))
        if q.key == CAPACITY_TYPE and q.admits({CAPACITY_TYPE: frozenset({"spot"})}):
            r.notes.append(f"{obj}: {where} ({q}) allows spot: spot capacity is modelled as on demand (the on-demand "
                           "price, never interrupted)")
        left = [t for t in allowed if q.admits(universe[t])]
        if not left:
            why = (" (reserved capacity needs a capacity reservation, which gangkit does not model; the types are "
                   "offered on demand and as spot)" if q.key == CAPACITY_TYPE else "")
            r.error(obj, where, f"no instance type satisfies {q} together with the requirements before it{why}; "
                                f"the candidates were {_names(allowed)}")
            return None
        allowed = left
        if q.min_values:
            min_values.append((q.key, q.min_values))
    if order is not None:
        allowed = [t for t in order if t in allowed]
    checks = tuple(MinValues(key, n, {t: universe[t].get(key, frozenset()) for t in allowed}) for key, n in min_values)
    for mv in checks:
        if not mv.met(allowed):
            r.error(obj, REQ, f"minValues {mv.count} of {mv.key}: the instance types the requirements allow "
                              f"({_names(allowed)}) span fewer values, so Karpenter (minValuesPolicy Strict) "
                              "would launch no node")
            return None
    return allowed, checks


def unknown_types(unknown: list[str], listed: list | None, owner: str | None) -> str:
    """The error for instance-type names no universe has: where gangkit looked, a near name, how to describe one."""
    names = ", ".join(repr(v) for v in unknown)
    these = f"instance type {names} is" if len(unknown) == 1 else f"instance types {names} are"
    it = "it" if len(unknown) == 1 else "each"
    shape = ("{name: %s, capacity: {nvidia.com/gpu: \"<GPUs>\", cpu: \"<cores>\", memory: <bytes, e.g. 96Gi>}, "
             "pricePerHour: <USD>}" % unknown[0])
    if listed is not None:
        known = catalogue()
        if all(v in known for v in unknown):
            entries = "; ".join(_entry(known[v].instance_type()) for v in unknown)
            return (f"{these} not among the Karpenter instance types ({_names(t.name for t in listed)}) of {owner}; "
                    f"gangkit's catalogue has {'it' if len(unknown) == 1 else 'them'}, but a Karpenter object's "
                    f"spec.instanceTypes replace the catalogue: add {entries} (the catalogue's figures)")
        return (f"{these} not among the Karpenter instance types ({_names(t.name for t in listed)}) of {owner} nor in "
                f"gangkit's instance-type catalogue{_did_you_mean(unknown, listed)}; describe {it} in that object's "
                f"spec.instanceTypes: {shape}")
    return (f"{these} not in gangkit's instance-type catalogue nor among its default types ({_names(DEFAULT_TYPES)})"
            f"{_did_you_mean(unknown, None)}; describe {it} in a gangkit/v1alpha1 Karpenter object, whose list then "
            f"replaces the catalogue and the default types: spec.instanceTypes: [{shape}]")


def _did_you_mean(unknown: list[str], listed: list | None) -> str:
    known = [t.name for t in listed] if listed is not None else list(DEFAULT_TYPES)
    known += [n for n in catalogue() if n not in known]
    hints = {v: close[0] for v in unknown if (close := close_names(v, known))}
    if len(unknown) == 1:
        return f" (did you mean {hints[unknown[0]]}?)" if hints else ""
    return f" (did you mean {'; '.join(f'{c} for {v!r}' for v, c in hints.items())}?)" if hints else ""


def _entry(t: InstanceType) -> str:
    cap = f"nvidia.com/gpu: \"{t.gpus}\", cpu: \"{format_cpu(t.cpu or 0)}\", memory: {format_memory(t.memory or 0)}"
    return f"{{name: {t.name}, capacity: {{{cap}}}, pricePerHour: {t.price_per_hour:g}}}"


def _names(names) -> str:
    names = list(names)
    return ", ".join(names[:8]) + (f" and {len(names) - 8} more" if len(names) > 8 else "")
