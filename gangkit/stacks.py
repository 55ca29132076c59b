"""Stacks: which layers a run goes through, chosen by name.

A stack name lists the layers in order, joined by ``+``: ``pod`` is the
plain kube-scheduler, ``gang`` is Volcano's all-or-nothing placement,
``coscheduling``, ``yunikorn`` and ``kube-gang`` are the gang schedulers
that hold capacity while a gang gathers (scheduler-plugins Coscheduling,
YuniKorn placeholders, Kubernetes 1.35's GangScheduling plugin), and later
names put Kueue's queue and quota layer in front (``kueue+gang``), a
node provisioner behind (``gang+karpenter``), or both
(``kueue+coscheduling+karpenter``); every placement layer comes in all four
forms. A name that is not in
:data:`STACKS` is refused with a clear error rather than silently replaced,
also when its layers exist but are not built in that combination.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gangkit.engine.sockets import AdmissionLayer, NodeSupplier, PlacementLayer, missing_members
from gangkit.kueue.layer import KueueLayer, default_objects
from gangkit.kueue.provisioning import ProvisioningRequestCheck
from gangkit.kueue.scheduler import Kueue
from gangkit.model.errors import Problem, ScenarioError
from gangkit.model.scenario import LAYERS, PLACEMENTS, STACKS, RunSettings
from gangkit.placement.coscheduling import Coscheduling
from gangkit.placement.kube_gang import KubeGang
from gangkit.placement.kube_scheduler import KubeScheduler
from gangkit.placement.yunikorn import YuniKorn
from gangkit.supply.autoscaler import ClusterAutoscaler, default_autoscaler
from gangkit.supply.karpenter import Karpenter, default_karpenter
from gangkit.volcano.scheduler import VolcanoGang

# The names (PLACEMENTS, LAYERS, STACKS) are run settings' vocabulary, with the orderings: RunSettings
# checks a stack name where it checks the others (gangkit.model.scenario); this module builds them.


def _placement(name: str, settings: RunSettings, scenario=None) -> PlacementLayer:
    """The placement layer a stack name ends with, configured from the run settings."""
    if name == "pod":
        return KubeScheduler(preemption=settings.preemption, fast_paths=settings.fast_paths)
    if name == "gang":
        return VolcanoGang(ordering=settings.ordering, period=settings.session_period,
                           setup=getattr(scenario, "volcano", None), preemption=settings.preemption,
                           estimate_factor=settings.estimate_factor, fast_paths=settings.fast_paths)
    if name == "coscheduling":
        args = getattr(scenario, "coscheduling", None)  # a KubeSchedulerConfiguration's Coscheduling args
        return Coscheduling() if args is None else Coscheduling(args.permit_waiting_time, args.pod_group_backoff)
    if name == "yunikorn":
        return YuniKorn()
    if name == "kube-gang":
        return KubeGang(release=settings.kube_gang_release)
    raise ScenarioError([Problem("Simulation settings", "stack",
                                 f"unknown placement layer {name!r}; expected one of {', '.join(PLACEMENTS)}")])


@dataclass
class Stack:
    """Admission layers (in order), one placement layer, and node suppliers."""

    placement: PlacementLayer
    admission: list[AdmissionLayer] = field(default_factory=list)
    suppliers: list[NodeSupplier] = field(default_factory=list)
    name: str = "custom"

    def __post_init__(self) -> None:
        """Every layer must have the members of its socket (a layer that subclasses it has the optional ones)."""
        problems = []
        parts = [("placement", self.placement, PlacementLayer)]
        parts += [(f"admission[{i}]", layer, AdmissionLayer) for i, layer in enumerate(self.admission)]
        parts += [(f"suppliers[{i}]", s, NodeSupplier) for i, s in enumerate(self.suppliers)]
        for where, layer, socket in parts:
            missing = missing_members(layer, socket)
            if missing:
                problems.append(Problem(f"Stack {self.name}", where,
                    f"{type(layer).__name__} has no {', '.join(missing)}: a {socket.__name__} needs them "
                    f"(subclass gangkit.{socket.__name__} to get the optional ones' defaults)"))
        if problems:
            raise ScenarioError(problems)


def build_stack(name: str, settings: RunSettings, scenario=None) -> Stack:
    """The layers for a stack name, configured from the run settings (and the scenario's Kueue objects).

    Every name but ``kueue+provreq+autoscaler`` and ``pod+autoscaler`` has
    the shape ``[kueue+]PLACEMENT[+karpenter]``: an optional Kueue in front,
    one placement layer, an optional Karpenter behind it. ProvisioningRequests
    a scenario applies directly need cluster-autoscaler: another stack is refused.
    """
    requests = getattr(scenario, "provisioning_requests", None)
    if requests and name in STACKS and not name.endswith("+autoscaler"):
        raise ScenarioError([Problem(f"ProvisioningRequest {requests[0].key}", "stack",
            f"a ProvisioningRequest is served by cluster-autoscaler, and stack {name!r} has none: "
            "use pod+autoscaler (or kueue+provreq+autoscaler)")])
    if name == "kueue+provreq+autoscaler":
        return _provreq_stack(name, settings, scenario)
    if name == "pod+autoscaler":
        supplier = ClusterAutoscaler.from_setup(getattr(scenario, "autoscaler", None) or default_autoscaler(scenario))
        return Stack(KubeScheduler(preemption=settings.preemption, fast_paths=settings.fast_paths), suppliers=[supplier], name=name)
    layers = name.split("+")
    with_kueue = layers[:1] == ["kueue"]
    with_karpenter = layers[-1:] == ["karpenter"]
    middle = layers[int(with_kueue):len(layers) - int(with_karpenter)]
    if name in STACKS and len(middle) == 1 and middle[0] in PLACEMENTS:
        placement = _placement(middle[0], settings, scenario)
        suppliers = []
        gpus = None  # GPUs a default ClusterQueue's quota covers (None: the scenario's nodes)
        if with_karpenter:
            supplier = Karpenter.from_setup(getattr(scenario, "karpenter", None) or default_karpenter(scenario))
            suppliers = [supplier]
            # the default ClusterQueue's quota covers the nodes Karpenter may add
            gpus = sum(n.gpus for n in scenario.nodes) + supplier.provisionable_gpus(scenario)
        admission = [_kueue(scenario, gpus, settings)] if with_kueue else []
        return Stack(placement, admission=admission, suppliers=suppliers, name=name)
    if all(layer in LAYERS for layer in layers):
        raise ScenarioError([Problem("Simulation settings", "stack",
            f"stack {name!r} combines layers gangkit has ({', '.join(layers)}), but not in this combination; "
            f"available: {', '.join(STACKS)}")])
    raise ScenarioError([Problem("Simulation settings", "stack",
        f"unknown stack {name!r}; expected one of {', '.join(STACKS)}")])


def _kueue(scenario, gpus: int | None, settings: RunSettings):
    """Kueue built from the scenario's objects, or its default setup (quota ``gpus`` if given)."""
    setup = getattr(scenario, "kueue", None)
    return KueueLayer(Kueue.from_setup(setup if setup is not None else default_objects(scenario, gpus),
                                       settings.fast_paths))


def _provreq_stack(name: str, settings: RunSettings, scenario) -> Stack:
    """Kueue (quota), its ProvisioningRequest admission check, the pod-by-pod kube-scheduler, cluster-autoscaler.

    Capacity for the whole gang is asked for before admission, so the plain
    scheduler places the pods on nodes requested for them; the scenario's
    node groups (``scenario.autoscaler``) or :func:`gangkit.supply.autoscaler.default_autoscaler`.
    """
    supplier = ClusterAutoscaler.from_setup(getattr(scenario, "autoscaler", None) or default_autoscaler(scenario))
    setup = getattr(scenario, "kueue", None)
    objects = setup  # else the default ClusterQueue, whose quota covers the nodes the autoscaler may add
    if objects is None:
        objects = default_objects(scenario, sum(n.gpus for n in scenario.nodes) + supplier.provisionable_gpus(scenario))
    kueue = Kueue.from_setup(objects, settings.fast_paths)
    quota = KueueLayer(kueue)
    check_spec = getattr(scenario, "admission_check", None)
    if check_spec is None and setup is not None and setup.admission_checks:
        check_spec = setup.admission_checks[0]  # the AdmissionCheck the scenario's ClusterQueues name
    check = ProvisioningRequestCheck(quota, supplier, check_spec)
    placement = KubeScheduler(preemption=settings.preemption, fast_paths=settings.fast_paths)
    return Stack(placement, admission=[quota, check], suppliers=[supplier], name=name)
