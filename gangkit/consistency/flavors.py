"""Kueue's ResourceFlavors against the nodes: flavors that point at no node, quota larger or smaller than its nodes.

Picture a library's catalogue listing a shelf that does not exist: every
reader sent there comes back empty-handed. A ResourceFlavor names a kind of
node by its ``spec.nodeLabels``, and Kueue adds those labels to the
nodeSelector of every pod it admits with that flavor. If no Node carries
them, and no NodePool or node group may launch a machine that does
(:meth:`gangkit.consistency.supply.Supply.carries`), the admitted pods never
find a node. And the quota of a flavor is only a promise: a flavor with more
GPU quota (summed over every ClusterQueue and Cohort) than its nodes can
ever hold lets Kueue admit work whose pods then wait for nodes that cannot
come. The other way round, a flavor whose whole quota the existing Nodes
already cover leaves a NodePool or node group with nothing to do: every Kueue
workload waits for quota, never for a node (checked when Kueue manages every
Job of the files).

Both rules run only when the files say something about nodes, and only for
flavors some ClusterQueue names.
"""

from __future__ import annotations

import math

from gangkit.consistency.findings import Finding
from gangkit.consistency.inventory import Inventory, display
from gangkit.consistency.supply import supply_of
from gangkit.kueue.objects import GPU

__all__ = ["findings"]


def findings(inv: Inventory) -> list[Finding]:
    supply = supply_of(inv)
    if supply.empty or not inv.kueue.cluster_queues:
        return []
    users: dict[str, list[str]] = {}
    quota: dict[str, int] = {}
    for owner, groups in [(f"ClusterQueue {q.name}", q.resource_groups) for q in inv.kueue.cluster_queues] + \
                         [(f"Cohort {c.name}", c.resource_groups) for c in inv.kueue.cohorts]:
        for rg in groups:
            for fq in rg.flavors:
                users.setdefault(fq.flavor, []).append(owner)
                if GPU in fq.resources:
                    quota[fq.flavor] = quota.get(fq.flavor, 0) + fq.resources[GPU].nominal
    out = []
    objects = {o.name: o for o in inv.of_role("ResourceFlavor")}
    complete = set(users) <= {f.name for f in inv.kueue.flavors}  # a missing flavor's quota is a finding of its own
    for flavor in inv.kueue.flavors:
        o = objects.get(flavor.name)
        if o is None or flavor.name not in users:
            continue
        named = tuple(dict.fromkeys([display(o)] + [u for u in users[flavor.name] if u.startswith("ClusterQueue")]))
        labels = dict(flavor.node_labels)
        if flavor.node_labels and not supply.carries(flavor.node_labels):
            out.append(Finding(
                "kueue-flavor-matches-no-node", named,
                f"{display(o)} selects nodes labelled {labels} (spec.nodeLabels), but no Node carries these labels and "
                "no NodePool or node group may launch one that does: pods admitted with this flavor stay Pending.",
                "fix spec.nodeLabels, or label the nodes (a NodePool's spec.template.metadata.labels or requirements)",
                ((o.label, "spec.nodeLabels"),), {"node_labels": labels}))
            continue
        nominal = quota.get(flavor.name, 0)
        gpus = supply.gpus_for(flavor.node_labels)
        if nominal and not math.isinf(gpus) and nominal > gpus:
            out.append(Finding(
                "kueue-quota-exceeds-supply", named,
                f"the ClusterQueues and Cohorts hold {nominal} nvidia.com/gpu of nominal quota in flavor {flavor.name}, "
                f"but its nodes (every Node with its labels, and what the suppliers may launch) hold at most {gpus:g}: "
                "Kueue admits work its nodes can never run; the pods wait (and waitForPodsReady evicts them).",
                f"lower the flavor's nominalQuota to {gpus:g} in all, or raise the NodePool limits / node group sizes",
                tuple((u, "spec.resourceGroups") for u in named[1:]), {"nominal_quota": nominal, "gpus": gpus}))
            continue
        on_nodes = sum(n.gpus for n in supply.nodes if n.matches(flavor.node_labels))
        added = gpus - on_nodes
        if complete and nominal and added > 0 and nominal <= on_nodes and inv.jobs and all(e.kueue is not None for e in inv.jobs):
            more = "without limit" if math.isinf(added) else f"up to {added:g} more"
            out.append(Finding(
                "kueue-quota-below-supply", named,
                f"the suppliers may add {more} nvidia.com/gpu of flavor {flavor.name} to the Nodes' {on_nodes}, but "
                f"the ClusterQueues and Cohorts hold only {nominal} of its nominal quota, which the Nodes already "
                "cover: Kueue admits nothing that needs a new node, so a node is added only when the Nodes are too "
                "fragmented for an admitted pod, and every Job waits for quota instead.",
                f"raise the flavor's quota above {on_nodes} GPUs (up to {gpus:g}), or lower the NodePool limits",
                tuple((u, "spec.resourceGroups") for u in named[1:]),
                {"nominal_quota": nominal, "gpus_on_nodes": on_nodes, "gpus": gpus}))
    return out
