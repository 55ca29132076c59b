"""A ProvisioningRequest: capacity for a whole set of pods, asked for before any of them is created.

A ProvisioningRequest (``autoscaling.x-k8s.io/v1``, served by
cluster-autoscaler) is a booking for a party: "find room for these eight
pods, all of them, or tell me you cannot". It lists pod sets, each a
PodTemplate and a count, and names a class that says how to look for room:

- ``best-effort-atomic-scale-up.autoscaling.x-k8s.io``: scale up one node
  group for all the pods at once, or not at all;
- ``check-capacity.autoscaling.x-k8s.io``: only look at the capacity there is
  (nothing is launched).

Who makes one: Kueue's ProvisioningRequest admission check
(:mod:`gangkit.kueue.provisioning`) creates one per workload and admits the
workload only once it is Provisioned; or a user applies one directly, with
the PodTemplates it names (:class:`ProvisioningRequestSpec`, on
``Scenario.provisioning_requests``), and then creates pods that carry the
annotation ``autoscaling.x-k8s.io/consume-provisioning-request: <name>``.
Either way cluster-autoscaler (:mod:`gangkit.supply.autoscaler`) serves it,
and the pods are placed by the ordinary scheduler.

The rules of the booking, from cluster-autoscaler's
``processors/provreq/processor.go``, ``pods_filter.go`` and
``provisioningrequest/conditions/conditions.go`` (kubernetes-sigs/cluster-autoscaler,
the code of CA 1.35):

- **Consumers never trigger a scale-up**: an unschedulable pod with the
  consume annotation (or the deprecated
  ``cluster-autoscaler.kubernetes.io/consume-provisioning-request``) is
  dropped from CA's scale-up input, whatever the state of the request it
  names, and even when no such request exists (CA's event: "Unschedulable pod
  didn't trigger scale-up, because it's consuming ProvisioningRequest ...").
  Kueue's pods carry the annotation too (Kueue's podSetUpdates).
- **Booking**: once Provisioned, the request's pods are injected as fake pods
  into CA's simulation, so other requests and scale-down do not take that
  room, until ``BookingExpired`` is set: 10 minutes after Provisioned
  (reason ``CapacityReservationTimeExpired``), or as soon as as many pods
  naming it are scheduled as it asked for (``CapacityBookingConsumed``).
  Only CA honours a booking: kube-scheduler may place any pod on booked room.
- **Expiry**: a request not Provisioned within 7 days is ``Failed`` (reason
  ``Expired``).
- ``CapacityRevoked`` is defined by the API ("requested resources are not
  longer valid") but cluster-autoscaler never sets it; gangkit does not
  either. (Kueue evicts an admitted workload whose request shows it.)

Simplified: CA books all of a request's pods while its consumers run;
gangkit books only the pods not yet bound (the bound ones hold their room
themselves), so that room is not counted twice.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gangkit.model.errors import Problem
from gangkit.model.jobs import PodSet
from gangkit.model.quantity import MAX_DURATION_S, shown

BEST_EFFORT_ATOMIC = "best-effort-atomic-scale-up.autoscaling.x-k8s.io"
CHECK_CAPACITY = "check-capacity.autoscaling.x-k8s.io"
PROVISIONING_CLASSES = (BEST_EFFORT_ATOMIC, CHECK_CAPACITY)
#: the pod annotation that makes a pod a consumer of a ProvisioningRequest (v1 ``ProvisioningRequestPodAnnotationKey``)
CONSUME_ANNOTATION = "autoscaling.x-k8s.io/consume-provisioning-request"
#: the same, in its older spelling, which cluster-autoscaler still reads
DEPRECATED_CONSUME_ANNOTATION = "cluster-autoscaler.kubernetes.io/consume-provisioning-request"
#: the pod annotation naming the request's class (Kueue sets it with the consume annotation)
CLASS_ANNOTATION = "autoscaling.x-k8s.io/provisioning-class-name"
BOOKING = 600.0  # CA books a provisioned request's capacity for 10 minutes (defaultReservationTime)
RESERVATION_EXPIRED = "CapacityReservationTimeExpired"
BOOKING_CONSUMED = "CapacityBookingConsumed"


@dataclass(frozen=True)
class ProvisioningRequestSpec:
    """A ProvisioningRequest a user applies directly: what the object and the PodTemplates it names say.

    ``pod_sets`` are the request's ``spec.podSets``: each a count of pods
    shaped by its PodTemplate (GPUs, cpu, memory, node selector; only
    ``count``, the requests and ``node_selector`` of a :class:`PodSet` are
    read). ``create_time``: when it is applied, in seconds of the run.
    Consumers are the jobs of the same namespace whose
    ``consume_provisioning_request`` names it.
    """

    name: str
    pod_sets: tuple[PodSet, ...]
    provisioning_class: str = BEST_EFFORT_ATOMIC
    namespace: str | None = None
    create_time: float = 0.0

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}" if self.namespace else self.name

    @property
    def pod_count(self) -> int:
        return sum(ps.count for ps in self.pod_sets)

    def pods(self) -> list[tuple]:
        """One ``(gpus, cpu, memory, node_selector)`` per pod, as cluster-autoscaler simulates them."""
        out = []
        for ps in self.pod_sets:
            out.extend([(ps.gpus, ps.cpu or 0.0, ps.memory or 0, tuple(sorted(ps.node_selector)))] * ps.count)
        return out

    def problems(self) -> list[Problem]:
        obj = f"ProvisioningRequest {self.key}"
        out = []
        if not isinstance(self.name, str) or not self.name:
            out.append(Problem(obj, "name", f"expected a non-empty name, got {self.name!r}"))
        if self.provisioning_class not in PROVISIONING_CLASSES:
            out.append(Problem(obj, "spec.provisioningClassName", f"expected one of {', '.join(PROVISIONING_CLASSES)}, "
                                                                   f"got {self.provisioning_class!r}"))
        if not self.pod_sets or not all(isinstance(ps, PodSet) for ps in self.pod_sets):
            out.append(Problem(obj, "spec.podSets", f"expected at least one pod set (a PodSet each), got {self.pod_sets!r}"))
        else:
            for i, ps in enumerate(self.pod_sets):
                if type(ps.count) is not int or ps.count < 1:
                    out.append(Problem(obj, f"spec.podSets[{i}].count", f"expected a whole number >= 1, got {ps.count!r}"))
        t = self.create_time
        if not isinstance(t, (int, float)) or not 0 <= t <= MAX_DURATION_S:
            out.append(Problem(obj, "create_time", f"expected seconds from 0 to {MAX_DURATION_S:.0f}, got {shown(t)}"))
        return out

    def request(self) -> ProvisioningRequest:
        """The live object cluster-autoscaler works on in one run (a new one each run)."""
        groups = [("ProvisioningRequest", self.key, ps.name) if ps.one_per_node else None
                  for ps in self.pod_sets for _ in range(ps.count)]
        return ProvisioningRequest(self.name, self.pods(), self.provisioning_class, namespace=self.namespace,
                                   groups=groups if any(groups) else None)


@dataclass(eq=False)
class ProvisioningRequest:
    """An ``autoscaling.x-k8s.io`` ProvisioningRequest as cluster-autoscaler works on it during one run.

    ``pods`` lists one ``(gpus, cpu, memory, node_selector)`` per pod.
    ``state`` is ``Pending``, ``Provisioned`` or ``Failed``; ``reason`` and
    ``message`` say why (CA's condition reasons: ``CapacityIsFound``,
    ``CapacityIsProvisioned``, ``CapacityIsNotFound``, ``Expired``).
    ``booking_expired`` is the reason of its ``BookingExpired`` condition once
    set (``CapacityReservationTimeExpired`` or ``CapacityBookingConsumed``).
    ``job`` is the job of Kueue's check that made it (None for one a user applied).
    ``groups``: per pod, its one-per-node group (required pod anti-affinity on
    ``kubernetes.io/hostname``, :mod:`gangkit.supply.apart`), None for none: CA's
    simulation of the request runs the scheduler's filters, that rule included.
    """

    name: str
    pods: list
    provisioning_class: str = BEST_EFFORT_ATOMIC
    created: float = 0.0
    job: object = None
    namespace: str | None = None
    state: str = "Pending"
    reason: str = ""
    message: str = ""
    provisioned_at: float | None = None
    failed_at: float | None = None
    next_try: float = 0.0
    tries: int = 0
    nodes: list = field(default_factory=list)  # names of the nodes booked for it
    booking_lost: bool = False  # a booked node never became ready and was given up
    booking_expired: str = ""  # the BookingExpired condition's reason, once set
    consumers: list = field(default_factory=list)  # indices of the run's jobs whose pods name it (a user's request)
    groups: list | None = None  # per pod, its one-per-node group (gangkit.supply.apart), or None without the rule
    on_change: object = None  # called with the request when its state changes


def consumed_name(annotations: dict) -> str | None:
    """The ProvisioningRequest a pod's annotations say it consumes (the current key first, as CA reads them)."""
    name = annotations.get(CONSUME_ANNOTATION)
    return name if name is not None else annotations.get(DEPRECATED_CONSUME_ANNOTATION)
