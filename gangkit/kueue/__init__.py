"""The queue and quota layer, with Kueue's semantics (Kueue v0.19, API kueue.x-k8s.io v1beta2).

One module per concept, as Kueue splits its own code: the API objects
(:mod:`.objects`), quota arithmetic in the cohort tree (:mod:`.quota`),
flavor assignment (:mod:`.flavor_assigner`), victim choice
(:mod:`.preemption`), the scheduling cycle and the queues
(:mod:`.scheduler`), Topology-Aware Scheduling (the package :mod:`.tas`),
and the adapter that plugs it into a simulated stack (:mod:`.layer`).
"""

from gangkit.kueue.objects import (
                      GPU,
                      Admission,
                      ClusterQueue,
                      Cohort,
                      FlavorFungibility,
                      FlavorQuotas,
                      KueueConfig,
                      LocalQueue,
                      PodSetSpec,
                      Preemption,
                      Quota,
                      ResourceFlavor,
                      ResourceGroup,
                      Topology,
                      TopologyAssignment,
                      TopologyRequest,
                      Workload,
)
from gangkit.kueue.scheduler import CycleResult, Kueue

__all__ = [
    "GPU", "Admission", "ClusterQueue", "Cohort", "CycleResult", "FlavorFungibility", "FlavorQuotas", "Kueue",
    "KueueConfig", "LocalQueue", "PodSetSpec", "Preemption", "Quota", "ResourceFlavor", "ResourceGroup", "Topology",
    "TopologyAssignment", "TopologyRequest", "Workload",
]
