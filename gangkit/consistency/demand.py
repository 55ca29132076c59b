"""What a job needs at once, and where Kueue would send its pods.

Picture a choir booking a stage: a choir that only sings together needs
room for every singer at the same time; soloists need room for one at a
time. gangkit's ``progress`` says which a job is: a ``sync`` job (all-reduce
training) advances only while all its pods run, so all of them must fit at
once; an ``independent`` job needs only its gang (``minMember``) at once, or
a single pod when it has no gang. :func:`demand` gives those pods, per pod
set, with their :class:`~gangkit.consistency.supply.Shape`.

Under Kueue a pod's nodeSelector grows by the nodeLabels of the flavor its
workload is admitted with. :func:`flavor_labels` lists the label sets the
job's ClusterQueue may give it (one per flavor of the resource group that
covers its GPUs, or its first resource), as Kueue's flavor assigner would
consider them: a flavor whose labels disagree with the pod's own
nodeSelector is skipped (:func:`gangkit.kueue.flavor_assigner.flavor_matches`).
"""

from __future__ import annotations

from gangkit.consistency.inventory import Inventory, JobEntry
from gangkit.consistency.supply import Shape
from gangkit.kueue.flavor_assigner import flavor_matches
from gangkit.kueue.objects import GPU, ClusterQueue, PodSetSpec
from gangkit.model.jobs import Job, PodSet

__all__ = ["cluster_queue_of", "demand", "flavor_labels", "shape"]


def shape(ps: PodSet) -> Shape:
    return Shape(ps.gpus, ps.cpu, ps.memory, ps.node_selector)


def demand(j: Job | None) -> list[tuple[PodSet, int]]:
    """The pods of ``j`` that must run at the same time, per pod set (empty: one pod at a time is enough)."""
    if j is None:
        return []
    if j.progress == "sync":
        return [(ps, ps.count) for ps in j.pod_sets]
    if j.min_member is None:
        return []
    # the pods Volcano's job controller counts in minResources (gangkit.volcano.api.job_min_resources):
    # each task's minAvailable (default: its replicas) first, then further pods in task order; with a
    # job minAvailable below the tasks' sum, simply the first pods in task order
    need = j.min_member
    mins = [ps.count if ps.min_member is None else ps.min_member for ps in j.pod_sets]
    if j.controller != "volcano" or need < sum(mins):
        mins = [0] * len(j.pod_sets)
    take = list(mins)
    left = need - sum(take)
    for i, ps in enumerate(j.pod_sets):
        more = max(0, min(ps.count - take[i], left))
        take[i] += more
        left -= more
    return [(ps, n) for ps, n in zip(j.pod_sets, take) if n > 0]


def cluster_queue_of(inv: Inventory, namespace: str | None, queue: str) -> ClusterQueue | None:
    """The ClusterQueue a LocalQueue (``namespace/queue``) points to, or None when either is missing."""
    lq = next((q for q in inv.kueue.local_queues if q.namespace == (namespace or "default") and q.name == queue), None)
    if lq is None:
        return None
    return next((c for c in inv.kueue.cluster_queues if c.name == lq.cluster_queue), None)


def flavor_labels(inv: Inventory, e: JobEntry, ps: PodSet) -> list[tuple[tuple[str, str], ...]]:
    """The nodeLabels Kueue may add to the pods of ``ps``: ``[()]`` when the job is not Kueue's (or its queue
    is missing), ``[]`` when no flavor of its ClusterQueue matches its nodeSelector (Kueue never admits it)."""
    if e.kueue is None:
        return [()]
    cq = cluster_queue_of(inv, e.kueue.workload.namespace, e.kueue.workload.queue_name)
    if cq is None or not cq.resource_groups:
        return [()]
    covered = GPU if ps.gpus else None
    group = next((rg for rg in cq.resource_groups if covered in rg.covered), cq.resource_groups[0])
    flavors = {f.name: f for f in inv.kueue.flavors}
    spec = PodSetSpec(ps.name, ps.count, {}, node_selector=ps.node_selector)
    out = [flavors[fq.flavor].node_labels for fq in group.flavors
           if fq.flavor in flavors and flavor_matches(flavors[fq.flavor], spec)]
    return out
