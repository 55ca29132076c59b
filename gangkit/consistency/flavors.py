"""Kueue's ResourceFlavors against the nodes: flavors that point at no node, quota larger than its nodes.

Picture a library's catalogue listing a shelf that does not exist: every
reader sent there comes back empty-handed. A ResourceFlavor names a kind of
node by its ``spec.nodeLabels``, and Kueue adds those labels to the
nodeSelector of every pod it admits with that flavor. If no Node carries
them, and no NodePool or node group may launch a machine that does
(:meth:`gangkit.consistency.supply.Supply.carries`), the admitted pods never
find a node. And the quota of a flavor is only a promise: a flavor with more
GPU quota (summed over every ClusterQueue and Cohort) than its nodes can
ever hold lets Kueue admit work whose pods then wait for nodes that cannot
come.

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
    return out
