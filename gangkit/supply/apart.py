"""One pod of a group per node, in the node suppliers' scheduling simulations.

A pod of a *one-per-node* pod set (:attr:`gangkit.model.jobs.PodSet.one_per_node`:
required pod anti-affinity on ``kubernetes.io/hostname`` against its own
job's pods of that set) never shares a node with another pod of its group.
A supplier that simulates where its pending pods would go must keep that
rule too, or it launches too few nodes: four such pods never share one
eight-GPU node, they need four nodes.

Karpenter's scheduling simulation (v1.14, ``pkg/controllers/provisioning/scheduling``:
``topology.go`` tracks the pod anti-affinity domains of bound pods and of
pods the simulation has placed, ``existingnode.go`` and ``nodeclaim.go`` ask
it before adding a pod) refuses an existing or in-flight node, and a
NodeClaim of the batch, that holds, or was given in this batch, a pod the
term selects. A NodeClaim's hostname is its own, so each gets at most one
pod of a group.
"""

from __future__ import annotations

from collections import defaultdict


def group_of(p) -> tuple | None:
    """The one-per-node group of a pod, ``(job index, pod set name)``; None for a pod without the rule."""
    ps = p.pod_set
    return (p.job.index, ps.name) if ps.one_per_node else None


class OnePerNode:
    """The groups each node (or NodeClaim) of one simulation was given, by name."""

    def __init__(self):
        self.given: dict[str, set] = defaultdict(set)

    def allows(self, name: str, group: tuple | None, *holding) -> bool:
        """May a pod of ``group`` go to node ``name``, which holds the pods of the lists in ``holding``?"""
        if group is None:
            return True
        if group in self.given.get(name, ()):
            return False
        return all(group_of(q) != group for pods in holding for q in pods)

    def give(self, name: str, p) -> None:
        """Note that the simulation put ``p`` on node ``name``."""
        self.give_group(name, group_of(p))

    def give_group(self, name: str, group: tuple | None) -> None:
        """Note that the simulation put a pod of ``group`` (None: a pod without the rule) on node ``name``."""
        if group is not None:
            self.given[name].add(group)
