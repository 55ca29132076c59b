"""Kueue's quota against the workloads sent to it: a workload no ClusterQueue could ever admit.

Picture a team budget that is smaller than the one purchase the team has
to make: it does not matter how long the team saves, the purchase never
goes through. Kueue reserves quota for a whole workload at once, and never
rejects one; a workload larger than everything its ClusterQueue could ever
have stays pending for ever.

The rule is Kueue's own, reused from gangkit's Kueue layer: flavor
assignment (:class:`gangkit.kueue.flavor_assigner.FlavorAssigner`) on an
empty quota tree (:class:`gangkit.kueue.quota.QuotaTree`), where nothing
is used, so "no flavor fits" means "no flavor will ever fit". A request
fits a flavor when it is at most the queue's *potential available* quota:
its nominalQuota plus what its cohort tree may lend (the other queues'
nominal quota, or their lendingLimit where set, and cohort quotas), capped
by its borrowingLimit. A resource the ClusterQueue does not cover, or a
nodeSelector that disagrees with every flavor's nodeLabels, fails the
same way. With partial admission (``kueue.x-k8s.io/job-min-parallelism``)
the workload is judged at its minimum count.

Workloads are what Kueue's job integration makes of queue-labelled batch/v1
Jobs (:meth:`gangkit.manifests.kueue_snapshot.SnapshotReader.job_workload`: every
requested resource, in Kueue's canonical units) and the files' own
Workload objects.
"""

from __future__ import annotations

from gangkit.consistency.demand import cluster_queue_of
from gangkit.consistency.findings import Finding
from gangkit.consistency.inventory import Inventory, display
from gangkit.kueue.flavor_assigner import NOFIT, FlavorAssigner, pod_set_requests
from gangkit.kueue.objects import Workload
from gangkit.kueue.scheduler import Kueue

__all__ = ["findings"]


def findings(inv: Inventory) -> list[Finding]:
    if not inv.kueue.cluster_queues:
        return []
    kueue = Kueue.from_setup(inv.kueue)  # nothing admitted: its quota tree is empty
    out = []
    wanted = [(e.obj, e.kueue.workload) for e in inv.jobs if e.kueue is not None and e.kueue.admission is None]
    wanted += [(o, lw.workload) for o, lw in inv.kueue_workloads if lw.admission is None and not lw.out_of_queue]
    for o, wl in wanted:
        cq = cluster_queue_of(inv, wl.namespace, wl.queue_name)
        if cq is None:
            continue  # a missing LocalQueue or ClusterQueue is its own finding
        out.extend(_judge(kueue, cq.name, o, wl))
    return out


def _judge(kueue: Kueue, cq_name: str, o, wl: Workload) -> list[Finding]:
    if cq_name not in kueue.cluster_queues:  # inactive: it admits nothing, and why is a finding of its own
        return []
    cq, node = kueue.cluster_queues[cq_name], kueue.tree.cq[cq_name]
    assigner = FlavorAssigner(cq, node, kueue.flavors, lambda *args: [])
    counts = {ps.name: ps.min_count if ps.min_count is not None else ps.count for ps in wl.pod_sets}
    a = assigner.assign(wl, counts)
    if a.mode != NOFIT:
        return []
    failing = a.podsets[-1]  # assignment stops at the pod set that fits no flavor
    ps_spec = next(ps for ps in wl.pod_sets if ps.name == failing.name)
    name = display(o)
    kueue_says = "; ".join(failing.reasons)
    counts_pods = any("pods" in rg.covered for rg in cq.resource_groups)
    requests = pod_set_requests(ps_spec, failing.count, counts_pods)
    if all(c == "" for c in failing.causes):  # every flavor skipped for node affinity
        labels = {fq.flavor: dict(kueue.flavors[fq.flavor].node_labels) for rg in cq.resource_groups
                  for fq in rg.flavors if fq.flavor in kueue.flavors}
        return [Finding(
            "kueue-no-flavor-matches", (name, f"ClusterQueue {cq_name}"),
            f"{name}'s nodeSelector {dict(ps_spec.node_selector)} disagrees with the nodeLabels of every flavor of "
            f"ClusterQueue {cq_name} ({labels}): Kueue never admits it (\"{kueue_says}\").",
            "make the pod's nodeSelector match a flavor's nodeLabels, or drop it and let the flavor choose the nodes",
            ((o.label, "spec.template.spec.nodeSelector"),), {"node_selector": dict(ps_spec.node_selector)})]
    numbers: dict = {"pod_set": failing.name, "count": failing.count}
    details = []
    for res, val in sorted(requests.items()):
        rg = cq.group_for(res)
        if rg is None:
            details.append(f"ClusterQueue {cq_name} has no quota for {res}")
            numbers.setdefault("uncovered", []).append(res)
            continue
        for fq in rg.flavors:
            fr = (fq.flavor, res)
            cap = node.potential_available(fr)
            if val <= cap:
                continue
            q = fq.resources.get(res)
            nominal = q.nominal if q else 0
            limit = "none" if q is None or q.borrowing_limit is None else str(q.borrowing_limit)
            cohort = f"cohort {cq.cohort}" if cq.cohort else "no cohort"
            details.append(f"{val} {res} requested, at most {cap} in flavor {fq.flavor} (nominalQuota {nominal}, "
                           f"{max(0, cap - nominal)} more borrowed in {cohort}, borrowingLimit {limit})")
            numbers.setdefault("flavors", {})[fq.flavor] = {"resource": res, "requested": val, "maximum": cap,
                                                             "nominal_quota": nominal}
    fields = [(o.label, {"Job": "spec.template.spec.containers", "JobSet": "spec.replicatedJobs"}.get(o.role, "spec.podSets"))]
    return [Finding(
        "kueue-quota-never-fits", (name, f"ClusterQueue {cq_name}"),
        f"{name} asks for more than ClusterQueue {cq_name} can ever have: {'; '.join(details) or kueue_says}. "
        f"Kueue keeps it pending for ever (\"{kueue_says}\").",
        f"raise ClusterQueue {cq_name}'s nominalQuota (or what its cohort may lend it), or ask for less",
        tuple(fields), numbers)]
