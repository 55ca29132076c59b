"""The names by which the holding gang schedulers' manifests put pods in a gang.

A gang scheduler that holds pods until their whole gang fits learns the gang from objects and fields of
its own: scheduler-plugins Coscheduling from a ``scheduling.x-k8s.io/v1alpha1`` PodGroup joined by a pod
label; YuniKorn from annotations on the pod template (task groups, the pod's task group, the policy
parameters); Kubernetes' GangScheduling plugin from a ``scheduling.k8s.io`` Workload (1.35,
``v1alpha1``) or PodGroup (1.36, ``v1alpha2``). The reading of those objects is
:mod:`gangkit.placement.manifests`, the writing :mod:`gangkit.placement.dump`; both spell the names
from here.
"""

from __future__ import annotations

__all__ = [
    "COSCHEDULING_API", "POD_GROUP_API", "POD_GROUP_LABEL", "SCHEDULING_POLICY", "TASK_GROUPS", "TASK_GROUP_NAME",
    "WORKLOAD_API", "WORKLOAD_POD_GROUP",
]

POD_GROUP_LABEL = "scheduling.x-k8s.io/pod-group"  # scheduler-plugins: the pod's PodGroup
TASK_GROUPS = "yunikorn.apache.org/task-groups"
TASK_GROUP_NAME = "yunikorn.apache.org/task-group-name"
SCHEDULING_POLICY = "yunikorn.apache.org/schedulingPolicyParameters"
COSCHEDULING_API = "scheduling.x-k8s.io/v1alpha1"
WORKLOAD_API = "scheduling.k8s.io/v1alpha1"
# Kubernetes 1.36: PodGroup and Workload (templates). KEP-4671's examples write scheduling.k8s.io/v1beta1, the
# version it plans for 1.37; the 1.36 docs pages and API reference say v1alpha2, which is followed here.
POD_GROUP_API = "scheduling.k8s.io/v1alpha2"
WORKLOAD_POD_GROUP = "workers"  # the pod group name gangkit writes into a Workload
