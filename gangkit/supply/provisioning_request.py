"""A ProvisioningRequest: capacity for a whole set of pods, asked for before any of them is created.

A ProvisioningRequest (``autoscaling.x-k8s.io/v1``, served by
cluster-autoscaler) is a booking for a party: "find room for these eight
pods, all of them, or tell me you cannot". Kueue's ProvisioningRequest
admission check (:mod:`gangkit.kueue.provisioning`) creates one per workload
and admits the workload only once it is Provisioned, so the gang's capacity
exists before its pods do. cluster-autoscaler (:mod:`gangkit.supply.autoscaler`)
processes it according to its class:

- ``best-effort-atomic-scale-up.autoscaling.x-k8s.io``: scale up one node
  group for all the pods at once, or not at all;
- ``check-capacity.autoscaling.x-k8s.io``: only look at the capacity there is
  (nothing is launched).
"""

from __future__ import annotations

from dataclasses import dataclass, field

BEST_EFFORT_ATOMIC = "best-effort-atomic-scale-up.autoscaling.x-k8s.io"
CHECK_CAPACITY = "check-capacity.autoscaling.x-k8s.io"
PROVISIONING_CLASSES = (BEST_EFFORT_ATOMIC, CHECK_CAPACITY)


@dataclass(eq=False)
class ProvisioningRequest:
    """An ``autoscaling.x-k8s.io`` ProvisioningRequest: capacity for a set of pods, asked for at once.

    ``pods`` lists one ``(gpus, cpu, memory, node_selector)`` per pod.
    ``state`` is ``Pending``, ``Provisioned`` or ``Failed``; ``message``
    says why (CA's condition reasons: ``CapacityIsFound``,
    ``CapacityIsProvisioned``, ``CapacityIsNotFound``, ``Expired``).
    """

    name: str
    pods: list
    provisioning_class: str = BEST_EFFORT_ATOMIC
    created: float = 0.0
    job: object = None
    state: str = "Pending"
    reason: str = ""
    message: str = ""
    provisioned_at: float | None = None
    failed_at: float | None = None
    next_try: float = 0.0
    tries: int = 0
    nodes: list = field(default_factory=list)  # names of the nodes booked for it
    booking_lost: bool = False  # a booked node never became ready and was given up
    on_change: object = None  # called with the request when its state changes
