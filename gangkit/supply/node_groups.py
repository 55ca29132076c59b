"""cluster-autoscaler's node groups, and the machines it has asked them for.

A *node group* is a set of identical machines (an AWS Auto Scaling group, a GKE node pool) that
cluster-autoscaler resizes between ``min_size`` and ``max_size``; it never picks a machine type, it
only says "one more of these". :class:`Launched` follows one machine it asked for, from the request
through its stages to ready (or to its deletion), and :class:`GroupState` a group's backoff and its
open scale-up request (cluster-autoscaler 1.35 ``clusterstate/clusterstate.go``: ``ScaleUpRequest``;
``utils/backoff/exponential_backoff.go``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from gangkit.model.resources import labels_match
from gangkit.supply.cloud import TYPE_LABEL, InstanceType
from gangkit.supply.provisioning_request import ProvisioningRequest

__all__ = ["NODE_GROUP_LABEL", "GroupState", "Launched", "NodeGroup"]

NODE_GROUP_LABEL = "gangkit.io/node-group"  # clouds use their own label (e.g. a GKE node pool's)


@dataclass(frozen=True)
class NodeGroup:
    """A group of identical machines cluster-autoscaler may resize between ``min_size`` and ``max_size``.

    ``labels`` are put on its nodes (pods may select them); ``stockout``
    makes every requested machine fail to join (the cloud has none).
    """

    name: str
    instance_type: InstanceType
    min_size: int = 0
    max_size: int = 10
    labels: dict = field(default_factory=dict)
    stockout: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.min_size, int) or not isinstance(self.max_size, int) or not 0 <= self.min_size <= self.max_size:
            raise ValueError(f"NodeGroup {self.name}: min_size/max_size: expected whole numbers 0 <= min_size <= max_size, "
                             f"got {self.min_size!r} and {self.max_size!r}")

    def node_labels(self) -> dict:
        labels = dict(self.labels)
        labels[NODE_GROUP_LABEL] = self.name
        labels[TYPE_LABEL] = self.instance_type.name
        return labels

    def holds(self, gpus: int, cpu: float, memory: int, selector: tuple) -> bool:
        """Could a new node of this group hold such a pod (its type's room, its labels)?"""
        return self.instance_type.holds(gpus, cpu, memory) and labels_match(self.node_labels(), selector)


@dataclass(eq=False)
class Launched:
    """A machine cluster-autoscaler asked a node group for: its stages, and where it stands."""

    name: str
    group: NodeGroup
    launched: float
    stages: dict
    exists: bool  # False: a stockout machine that never joins the cluster
    ready: bool = False
    unneeded_since: float | None = None
    request: ProvisioningRequest | None = None

    @property
    def registered(self) -> float:
        """When its kubelet registers the node (never, for a stockout machine)."""
        return self.stages["registered"] if self.exists else math.inf


@dataclass
class GroupState:
    """A node group's backoff and its open scale-up request."""

    failures: int = 0
    backoff_until: float = -math.inf
    last_failure: float = -math.inf
    backoff: float = 0.0  # the last backoff's duration (CA's exponentialBackoffInfo.duration)
    requested: float = 0.0  # the group's scale-up request: when it was made or last grown (ScaleUpRequest.Time)
    expected_add: float | None = None  # and when it should be fulfilled (ExpectedAddTime); None: no request
