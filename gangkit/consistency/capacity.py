"""Jobs against the nodes: a pod no node can hold, a gang the whole supply cannot hold at once.

Picture a furniture delivery: a wardrobe taller than every van's door
cannot be delivered at all, and twelve wardrobes that must arrive together
cannot come in a fleet that carries ten. Kubernetes gives a pod its GPUs,
CPU and memory from one node (a pod never splits), and a gang runs only
when all of its pods are placed at the same time. What "all" means comes
from :func:`gangkit.consistency.demand.demand`: every pod of a sync job,
the gang of an independent one.

The supply is every Node of the files plus what the node suppliers may add
(:class:`gangkit.consistency.supply.Supply`: NodePools up to their GPU
limits, a static NodePool's ``min(spec.replicas, spec.limits.nodes)``
nodes, node groups up to ``maxSize``); under Kueue a pod's nodeSelector
includes its flavor's nodeLabels (each flavor the queue may give it is
tried, the best counts). The rules run only when the files say something
about nodes (a Node, a NodePool or a node group).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from gangkit.consistency.demand import demand, flavor_labels, shape
from gangkit.consistency.findings import Finding
from gangkit.consistency.inventory import Inventory, JobEntry, dig, display
from gangkit.consistency.supply import Shape, Supply, supply_of
from gangkit.manifests.training import REPLICA_KINDS

__all__ = ["findings", "usable_shapes"]


def usable_shapes(inv: Inventory, supply: Supply, e: JobEntry, ps):
    """The pod's shape with each flavor's labels that some node carries; empty when Kueue never admits the pod
    set anywhere (no flavor matches its nodeSelector: ``kueue-no-flavor-matches``) or no flavor's labels are
    carried by a node (``kueue-flavor-matches-no-node``): those are their own findings."""
    options = [shape(ps).with_labels(labels) for labels in flavor_labels(inv, e, ps)]
    return [s for s in options if supply.carries(tuple(set(s.selector) - set(ps.node_selector))) or
            s.selector == ps.node_selector]


def _replica_spec(e: JobEntry, index: int) -> str | None:
    """A Kubeflow training job's replica spec for pod set ``index``, with the key as the manifest writes it
    (``spec.tfReplicaSpecs.Worker``: the pod set is named ``worker``); None for other kinds."""
    kind = REPLICA_KINDS.get(e.obj.role)
    if kind is None:
        return None
    name = e.job.pod_sets[index].name
    specs = dig(e.obj.doc, "spec", kind.field)
    key = next((k for k in specs if str(k).lower() == name), name) if isinstance(specs, Mapping) else name
    return f"spec.{kind.field}.{key}"


def _containers(e: JobEntry, index: int) -> str:
    if (replica := _replica_spec(e, index)) is not None:
        return f"{replica}.template.spec.containers"
    if e.obj.role == "VolcanoJob":
        return f"spec.tasks[{index}].template.spec.containers"
    if e.obj.role == "LeaderWorkerSet":  # pod sets leader and worker, or main (no leaderTemplate: the workers')
        template = "leaderTemplate" if e.job.pod_sets[index].name == "leader" else "workerTemplate"
        return f"spec.leaderWorkerTemplate.{template}.spec.containers"
    if e.obj.role == "CronJob":
        return "spec.jobTemplate.spec.template.spec.containers"
    return "spec.template.spec.containers"


def _pods_field(e: JobEntry, index: int) -> str:
    """The field that sets how many pods of pod set ``index`` the workload makes."""
    if (replica := _replica_spec(e, index)) is not None:
        return f"{replica}.replicas"
    fields = {"Job": "spec.parallelism", "JobSet": f"spec.replicatedJobs[{index}].replicas",
              "CronJob": "spec.jobTemplate.spec.parallelism", "LeaderWorkerSet": "spec.leaderWorkerTemplate.size",
              "Deployment": "spec.replicas", "ReplicaSet": "spec.replicas", "StatefulSet": "spec.replicas"}
    return fields.get(e.obj.role, f"spec.tasks[{index}].replicas")


def _count(x: float) -> str:
    return "unlimited" if math.isinf(x) else f"{x:g}"


def findings(inv: Inventory) -> list[Finding]:
    supply = supply_of(inv)
    if supply.empty:
        return []
    out = []
    for e in inv.jobs:
        j = e.job
        if j is None:
            continue
        options = {i: usable_shapes(inv, supply, e, ps) for i, ps in enumerate(j.pod_sets)}
        if any(not shapes for shapes in options.values()):
            continue  # Kueue never sends it to a node: kueue-no-flavor-matches or kueue-flavor-matches-no-node
        too_big = [(i, ps) for i, ps in enumerate(j.pod_sets) if not any(supply.holds(s) for s in options[i])]
        if too_big:
            out.append(_too_big(inv, supply, e, too_big, options))
            continue
        short = _short(inv, supply, e, options)
        if short is not None:
            out.append(short)
    return out


def _too_big(inv: Inventory, supply: Supply, e: JobEntry, too_big: list, options: dict) -> Finding:
    parts, fields, numbers = [], [], {}
    for i, ps in too_big:
        s = options[i][0]
        biggest = supply.largest(s)
        where = [f"the largest Node{' with its labels' if s.selector else ''} has {biggest['node_gpus']}"]
        if "nodepool_gpus" in biggest:
            where.append(f"the NodePools may launch at most {biggest['nodepool_gpus']}")
        if "node_group_gpus" in biggest:
            where.append(f"the node groups at most {biggest['node_group_gpus']}")
        selector = f" with nodeSelector {dict(s.selector)}" if s.selector else ""
        parts.append(f"pod set {ps.name!r} asks for {s.words()} per pod{selector}; " + ", ".join(where)
                     + " GPUs (or too little CPU or memory)")
        fields.append((e.obj.label, _containers(e, i)))
        if s.selector and supply.holds(Shape(s.gpus, s.cpu, s.memory, ())):
            parts[-1] += "; without the nodeSelector it would fit"
        numbers[ps.name] = {"gpus_per_pod": s.gpus, **biggest}
    supply_words = ("any Node or any machine the node suppliers may launch"
                    if inv.karpenter is not None or inv.autoscaler is not None else "any Node")
    return Finding(
        "pod-fits-no-node", (e.name,),
        f"{e.name}: " + "; ".join(parts) + f". A pod takes its resources from one node, and none of "
        f"{supply_words} can hold it: its pods never run.",
        "ask for less per pod (more, smaller pods), or add a Node or an instance type that holds the pod",
        tuple(dict.fromkeys(fields)), numbers)


def _short(inv: Inventory, supply: Supply, e: JobEntry, options: dict) -> Finding | None:
    """A gang that is larger than the most the supply holds at once. It names the field that bounds each
    NodePool: each limit a dynamic pool sets (``spec.limits.nvidia.com/gpu``, ``.cpu``, ``.memory``; the GPU
    limit when it sets none), ``spec.replicas`` (and ``spec.limits.nodes``) for a static one, whose share is its
    nodes, not a resource limit."""
    autoscaler = next((display(o) for o in inv.of_role("ClusterAutoscaler")), "ClusterAutoscaler")
    need = demand(e.job)
    index = {id(ps): i for i, ps in enumerate(e.job.pod_sets)}
    lines, fields, numbers, objects = [], [], {}, [e.name]
    pools = {} if inv.karpenter is None else {p.name: p for p in inv.karpenter.nodepools}
    static_seen = False
    for ps, n in need:
        best, parts = max((supply.most_pods(s) for s in options[index[id(ps)]]), key=lambda x: x[0])
        if best >= n:
            continue
        static = {name: _static_words(inv.karpenter, pools[name[len("NodePool "):]], v) for name, v in parts.items()
                  if name.startswith("NodePool ") and pools[name[len("NodePool "):]].static}
        places = ", ".join(f"{k} {_count(v)}{static[k][0] if k in static else ''}" for k, v in parts.items())
        lines.append(f"{n} pods of pod set {ps.name!r} ({shape(ps).words()} each) at once, but at most "
                     f"{_count(best)} fit ({places})")
        fields.append((e.obj.label, _pods_field(e, index[id(ps)])))
        numbers[ps.name] = {"needed": n, "most": best, "where": dict(parts)}
        if static:
            numbers[ps.name]["static"] = {k: words[1] for k, words in static.items()}
        for s in options[index[id(ps)]]:
            for pool in supply.pools_for(s):
                objects.append(f"NodePool {pool}")
                if pools[pool].static:  # its nodes are min(spec.replicas, limits.nodes): no resource limit applies
                    static_seen = True
                    fields.append((f"NodePool {pool}", "spec.replicas"))
                    if "nodes" in pools[pool].limits:
                        fields.append((f"NodePool {pool}", "spec.limits.nodes"))
                else:  # each limit the provisioner enforces bounds it (GPUs, cores, bytes: gangkit.supply.limits)
                    limited = list(pools[pool].enforced) or ["nvidia.com/gpu"]
                    fields.extend((f"NodePool {pool}", f"spec.limits.{r}") for r in limited)
            if supply.groups_for(s):
                objects.append(autoscaler)
    if not lines and len(need) > 1:  # several pod shapes: their GPUs together
        gpus = sum(ps.gpus * n for ps, n in need)
        total = supply.gpus_for(())
        if gpus > total:
            lines.append(f"{gpus} GPUs at once, more than the {_count(total)} of every Node and every machine the "
                         "suppliers may launch")
            numbers["gpus"] = {"needed": gpus, "most": total}
    if not lines:
        return None
    why = ("it is sync: all its pods must run together" if e.job.progress == "sync"
           else f"its gang needs {e.job.gang_size} pods together")
    hint = "raise the NodePool's limits or the node group's maxSize, add Nodes, or make the gang smaller"
    if static_seen:
        hint = ("raise the static NodePool's spec.replicas (and spec.limits.nodes, which caps it), the other "
                "NodePools' limits or the node group's maxSize, add Nodes, or make the gang smaller")
    return Finding(
        "supply-too-small", tuple(dict.fromkeys(objects)),
        f"{e.name} needs " + "; ".join(lines) + f" ({why}): the gang can never start.",
        hint, tuple(dict.fromkeys(fields)), numbers)


def _static_words(karpenter, pool, pods: float) -> tuple[str, dict]:
    """A static pool's share of a ``supply-too-small`` finding: its node count, ``min(spec.replicas,
    spec.limits.nodes)`` (Karpenter v1.14 ``pkg/controllers/static/provisioning``), and its nodes' type, in words
    and as numbers. Its nodes are launched as one type and never more of them: no resource limit is involved."""
    it, count = karpenter.static_nodes.get(pool.name, (None, 0))
    cap = pool.limits.get("nodes")
    rule = f"spec.replicas {pool.replicas}" if cap is None else \
        f"min(spec.replicas {pool.replicas}, spec.limits.nodes {cap})"
    words = f" on its {rule} = {count} static node{'' if count == 1 else 's'}"
    numbers = {"replicas": pool.replicas, "limits_nodes": cap, "nodes": count,
               "instance_type": None if it is None else it.name, "pods_per_node": pods / count if count else 0.0}
    if it is not None and count:
        words += f" of {it.name}"
    return words, numbers
