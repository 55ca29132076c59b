"""Node suppliers: Karpenter and cluster-autoscaler, which add nodes for pods that cannot be placed.

A supplier is not a gate a job passes: it watches the pods the placement layer
leaves unschedulable (or a ProvisioningRequest) and launches nodes, each of
which passes through its stages (launched, registered, initialized, ...)
before its GPUs can be used.

Each supplier comes in two parts: its configuration (:class:`KarpenterSetup`,
:class:`AutoscalerSetup`: what a scenario carries and the manifests build,
frozen) and the supplier a run uses (:class:`Karpenter`,
:class:`ClusterAutoscaler`), built fresh from the configuration for each run
(``Karpenter.from_setup(setup)``, ``ClusterAutoscaler.from_setup(setup)``). Building a ``Karpenter`` or ``ClusterAutoscaler``
directly makes its configuration too (``.setup``); on a scenario, only that
configuration is used.
"""

from gangkit.supply.autoscaler import ClusterAutoscaler, NodeGroup
from gangkit.supply.autoscaler_setup import AutoscalerSetup, default_autoscaler
from gangkit.supply.cloud import InstanceType, Stages, lognormal, uniform
from gangkit.supply.karpenter import Karpenter, NodePool
from gangkit.supply.karpenter_setup import KarpenterSetup, default_karpenter
from gangkit.supply.provisioning_request import ProvisioningRequest

__all__ = ["AutoscalerSetup", "ClusterAutoscaler", "InstanceType", "Karpenter", "KarpenterSetup", "NodeGroup", "NodePool",
           "ProvisioningRequest", "Stages", "default_autoscaler", "default_karpenter", "lognormal", "uniform"]
