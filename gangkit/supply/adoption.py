"""Nodes a NodePool owns when the run starts: Karpenter takes them up as its own.

A live cluster's Karpenter nodes were launched before the snapshot, and a
scenario may start with nodes that belong to a NodePool. Karpenter knows a
node as a pool's by its label ``karpenter.sh/nodepool`` (Karpenter v1.14):

- its *capacity counts against the pool's limits*, launched by this
  Karpenter or not (``pkg/controllers/provisioning/scheduling/scheduler.go``,
  ``updateRemainingResources``: every state node with the pool's label);
- with its NodeClaim it is a *disruption candidate* like any node the pool
  launched: consolidated when empty (or underutilized) for
  ``consolidateAfter``, within the pool's disruption budget
  (``pkg/controllers/disruption``; ``StateNode.Managed`` is "has a NodeClaim").

gangkit takes a scenario node whose ``karpenter.sh/nodepool`` label names one
of the run's dynamic NodePools as launched by that pool, NodeClaim and all
(simplified: a node labelled by hand, without a NodeClaim, counts against
the limits in Karpenter but is never disrupted; gangkit disrupts it too).
Its instance type is its ``node.kubernetes.io/instance-type`` label when the
run's catalogue has it; otherwise one is made from the node itself, priced
0 (so Balanced consolidation, which weighs prices, never picks it). A node
named for a static pool, or for no pool of the run, stays a plain node.
"""

from __future__ import annotations

from gangkit.supply.cloud import TYPE_LABEL, InstanceType

POOL_LABEL = "karpenter.sh/nodepool"


def pool_of(node, pools: dict) -> object | None:
    """The dynamic NodePool of ``pools`` (name -> NodePool) whose label ``node`` carries, else None."""
    pool = pools.get(dict(node.labels).get(POOL_LABEL))
    return None if pool is None or pool.static else pool


def instance_type_of(node, catalogue: dict) -> InstanceType:
    """The node's instance type from the catalogue (name -> InstanceType), else one made from the node, priced 0."""
    name = dict(node.labels).get(TYPE_LABEL)
    known = catalogue.get(name) if name else None
    if known is not None and known.gpus == node.gpus:
        return known
    return InstanceType(name or f"{node.name}-type", node.gpus, 0.0, cpu=node.cpu, memory=node.memory)


def adoptable(sim, pools: dict) -> list:
    """The scenario's ready nodes that a dynamic NodePool of ``pools`` owns, in node order."""
    return [st for st in sim.capacity.nodes if st.ready and pool_of(st.node, pools) is not None]
