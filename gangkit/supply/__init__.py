"""Node suppliers: Karpenter and cluster-autoscaler, which add nodes for pods that cannot be placed.

A supplier is not a gate a job passes: it watches the pods the placement layer
leaves unschedulable (or a ProvisioningRequest) and launches nodes, each of
which passes through its stages (launched, registered, initialized, ...)
before its GPUs can be used.
"""

from gangkit.supply.autoscaler import ClusterAutoscaler, NodeGroup, default_autoscaler
from gangkit.supply.cloud import InstanceType, Stages, lognormal, uniform
from gangkit.supply.karpenter import Karpenter, NodePool, default_karpenter
from gangkit.supply.provisioning_request import ProvisioningRequest

__all__ = ["ClusterAutoscaler", "InstanceType", "Karpenter", "NodeGroup", "NodePool", "ProvisioningRequest", "Stages",
           "default_autoscaler", "default_karpenter", "lognormal", "uniform"]
