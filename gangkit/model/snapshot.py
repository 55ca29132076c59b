"""Where a job stood when a live cluster was photographed: the state a run starts from.

A run usually starts from an empty cluster. A run from a *snapshot*
(``kubectl get ... -o yaml``, read by :mod:`gangkit.manifests.snapshot`)
starts from the middle of a film instead: some jobs already hold quota, some
pods are already bound to nodes and have been running for a while. A job
that was still waiting has no :class:`JobSnapshot` and is submitted at time 0
like any other; a job that was admitted or had pods bound carries one, and
the engine (``Simulation._resume``) puts it back where it was before the
first scheduling cycle: its Kueue quota reserved, its pods bound to the same
nodes, its run time shortened by the time its pods have already run.

Time 0 of the run is the moment of the snapshot.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from gangkit.model.errors import Problem

__all__ = ["JobSnapshot", "KueueAdmission"]


@dataclass(frozen=True)
class KueueAdmission:
    """A Workload's ``status.admission`` as the snapshot shows it: the ClusterQueue, and per pod set (in the
    job's pod-set order) the flavor of each resource and the admitted pod count (``podSetAssignments``)."""

    cluster_queue: str
    flavors: tuple[dict[str, str], ...]
    counts: tuple[int, ...]


@dataclass(frozen=True)
class JobSnapshot:
    """A job admitted or running at the snapshot.

    ``nodes``: per pod of the job (pod sets in order, then pods), the node it
    is bound to, or None for a pod still Pending. ``elapsed``: per pod, the
    seconds its containers had run at the snapshot (its ``status.startTime``
    before the snapshot time; 0 for a pod not started). A sync job has
    progressed since its last pod started (the least of ``elapsed``) if every
    pod is bound; an independent pod since its own start. ``admission``:
    Kueue's reservation (None: Kueue does not manage the job, or the input
    had no Workload for it, and Kueue's reservation is worked out from the
    nodes the pods run on, see :class:`gangkit.kueue.layer.KueueLayer`).
    ``order``: per pod, its place among all the snapshot's pods in the order
    they were created (``creationTimestamp``, then the pod's index, then the
    job's place: pods created in one second interleave, as gangkit's job
    controllers create them), the order kube-scheduler's queue keeps after
    priority; None for a pod the snapshot does not show. A job whose pods
    all wait, with no admission, carries only this: it is submitted as
    usual, its pods queued in their place.
    """

    nodes: tuple[str | None, ...]
    elapsed: tuple[float, ...]
    admission: KueueAdmission | None = None
    order: tuple[int | None, ...] = ()

    @property
    def bound(self) -> int:
        return sum(1 for n in self.nodes if n is not None)

    def problems(self, obj: str, pod_count: int, node_names: set[str]) -> list[Problem]:
        """Every way this state cannot belong to a job of ``pod_count`` pods on these nodes."""
        out = []
        pods = pod_count if self.admission is None else sum(self.admission.counts)  # partial admission: fewer pods
        if len(self.nodes) != pods or len(self.elapsed) != pods:
            out.append(Problem(obj, "snapshot", f"expected a node and an elapsed time for each of the job's {pods} "
                                                f"pods, got {len(self.nodes)} and {len(self.elapsed)}"))
        for i, node in enumerate(self.nodes):
            if node is not None and node not in node_names:
                out.append(Problem(obj, f"snapshot.nodes[{i}]", f"names node {node!r}, which is not in the scenario"))
        if self.order and len(self.order) != len(self.nodes):
            out.append(Problem(obj, "snapshot.order", f"expected a place for each of the {len(self.nodes)} pods, "
                                                      f"got {len(self.order)}"))
        for i, e in enumerate(self.elapsed):
            if not isinstance(e, (int, float)) or not math.isfinite(e) or e < 0:
                out.append(Problem(obj, f"snapshot.elapsed[{i}]", f"expected seconds >= 0, got {e!r}"))
        return out
