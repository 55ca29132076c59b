"""Nodes and the cluster they form.

A node is a machine with a fixed number of GPUs (and, optionally, CPU cores
and memory). Pods take GPUs from exactly one node, so eight free GPUs spread
over eight nodes cannot hold one pod that asks for two: what matters is the
*shape* of free capacity, not its total.

Nodes belong to a node pool (Karpenter's NodePool, a cluster-autoscaler node
group) and carry labels that pods may select on.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from gangkit.model.errors import Problem, ScenarioError
from gangkit.model.quantity import MAX_QUANTITY, shown
from gangkit.model.resources import labels_match


@dataclass(frozen=True)
class Node:
    """One machine: ``gpus`` GPUs, optional ``cpu`` cores and ``memory`` bytes, labels, a pool.

    ``cpu`` or ``memory`` left at ``None`` means "not modelled": placement
    then ignores that resource on this node.
    """

    name: str
    gpus: int
    cpu: float | None = None
    memory: int | None = None
    labels: tuple[tuple[str, str], ...] = ()
    pool: str = "default"

    def __post_init__(self) -> None:
        if isinstance(self.labels, dict):
            object.__setattr__(self, "labels", tuple(sorted(self.labels.items())))

    def matches(self, selector: tuple[tuple[str, str], ...]) -> bool:
        """True when every ``key=value`` of a pod's nodeSelector is among this node's labels."""
        return labels_match(self.labels, selector)

    def problems(self) -> list[Problem]:
        obj = f"Node {self.name}"
        out = []
        if not self.name:
            out.append(Problem("Node", "metadata.name", "expected a non-empty name"))
        if not isinstance(self.gpus, int) or isinstance(self.gpus, bool) or not 0 <= self.gpus <= MAX_QUANTITY:
            out.append(Problem(obj, "gpus", f"expected a whole number of GPUs from 0 to 2^63-1, got {shown(self.gpus)}"))
        if self.cpu is not None and (not isinstance(self.cpu, (int, float)) or isinstance(self.cpu, bool)
                                     or not math.isfinite(self.cpu) or not 0 <= self.cpu <= MAX_QUANTITY):
            out.append(Problem(obj, "cpu", f"expected cores from 0 to 2^63-1, got {shown(self.cpu)}"))
        if self.memory is not None and (not isinstance(self.memory, int) or isinstance(self.memory, bool)
                                        or not 0 <= self.memory <= MAX_QUANTITY):
            out.append(Problem(obj, "memory", f"expected bytes from 0 to 2^63-1, got {shown(self.memory)}"))
        return out


def nodes(count: int, gpus: int = 8, *, prefix: str = "node", pool: str = "default", **extra) -> list[Node]:
    """``count`` identical nodes named ``node-0``, ``node-1``, ...

    >>> [n.name for n in nodes(2, gpus=2)]
    ['node-0', 'node-1']
    """
    width = len(str(max(count - 1, 0)))
    return [Node(f"{prefix}-{i:0{width}d}" if count > 10 else f"{prefix}-{i}", gpus, pool=pool, **extra) for i in range(count)]


def validate_nodes(node_list: list[Node]) -> None:
    """Raise one :class:`ScenarioError` listing every problem with the nodes."""
    problems: list[Problem] = []
    seen: set[str] = set()
    for n in node_list:
        problems.extend(n.problems())
        if n.name in seen:
            problems.append(Problem(f"Node {n.name}", "metadata.name", "expected a unique name; another node has it"))
        seen.add(n.name)
    if problems:
        raise ScenarioError(problems)
