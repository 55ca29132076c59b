"""Stacks: which layers a run goes through, chosen by name.

A stack name lists the layers in order, joined by ``+``: ``pod`` is the
plain kube-scheduler, ``gang`` is Volcano's all-or-nothing placement, and
later names put Kueue's queue and quota layer in front (``kueue+gang``) or a
node provisioner behind (``kueue+gang+karpenter``). A name whose layers are
not built yet is refused with a clear error rather than silently replaced.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .errors import Problem, ScenarioError
from .kube_scheduler import KubeScheduler
from .layers import AdmissionLayer, NodeSupplier, PlacementLayer
from .scenario import RunSettings
from .volcano import VolcanoGang

#: Stack names that run today.
STACKS = ("pod", "gang", "kueue+pod", "kueue+gang", "gang+karpenter", "kueue+gang+karpenter", "kueue+provreq+autoscaler")
#: Stack names of the layered design whose layers are still being built.
PLANNED = (
    "coscheduling", "yunikorn", "kube-gang",
    "kueue+coscheduling", "kueue+yunikorn", "kueue+kube-gang",
)


@dataclass
class Stack:
    """Admission layers (in order), one placement layer, and node suppliers."""

    placement: PlacementLayer
    admission: list[AdmissionLayer] = field(default_factory=list)
    suppliers: list[NodeSupplier] = field(default_factory=list)
    name: str = "custom"


def build_stack(name: str, settings: RunSettings, scenario=None) -> Stack:
    """The layers for a stack name, configured from the run settings (and the scenario's Kueue objects)."""
    if name == "pod":
        return Stack(KubeScheduler(preemption=settings.preemption), name=name)
    if name == "gang":
        return Stack(VolcanoGang(ordering=settings.ordering, period=settings.session_period), name=name)
    if name in ("kueue+pod", "kueue+gang"):
        from .kueue.layer import KueueLayer, default_setup

        setup = getattr(scenario, "kueue", None)
        kueue = setup.build() if setup is not None else default_setup(scenario)
        placement = build_stack(name.split("+")[1], settings).placement
        return Stack(placement, admission=[KueueLayer(kueue)], name=name)
    if name in ("gang+karpenter", "kueue+gang+karpenter"):
        from .karpenter import default_karpenter

        supplier = getattr(scenario, "karpenter", None) or default_karpenter(scenario)
        placement = build_stack("gang", settings).placement
        admission = []
        if name.startswith("kueue+"):
            from .kueue.layer import KueueLayer, default_setup

            setup = getattr(scenario, "kueue", None)
            if setup is not None:
                kueue = setup.build()
            else:  # the default ClusterQueue's quota covers the nodes Karpenter may add
                kueue = default_setup(scenario, sum(n.gpus for n in scenario.nodes) + supplier.provisionable_gpus(scenario))
            admission = [KueueLayer(kueue)]
        return Stack(placement, admission=admission, suppliers=[supplier], name=name)
    if name == "kueue+provreq+autoscaler":
        return _provreq_stack(name, settings, scenario)
    if name in PLANNED:
        missing = [layer for layer in name.split("+") if layer not in ("pod", "gang", "kueue", "karpenter", "provreq", "autoscaler")]
        raise ScenarioError([Problem("Simulation settings", "stack",
            f"stack {name!r} is planned, but its layer {missing[0]!r} is not built yet; available: {', '.join(STACKS)}")])
    raise ScenarioError([Problem("Simulation settings", "stack",
        f"unknown stack {name!r}; expected one of {', '.join(STACKS)}")])


def _provreq_stack(name: str, settings: RunSettings, scenario) -> Stack:
    """Kueue (quota), its ProvisioningRequest admission check, the pod-by-pod kube-scheduler, cluster-autoscaler.

    Capacity for the whole gang is asked for before admission, so the plain
    scheduler places the pods on nodes requested for them; the scenario's
    node groups (``scenario.autoscaler``) or :func:`gangkit.autoscaler.default_autoscaler`.
    """
    from .autoscaler import default_autoscaler
    from .kueue.layer import KueueLayer, default_setup
    from .kueue.provisioning import ProvisioningRequestCheck

    supplier = getattr(scenario, "autoscaler", None) or default_autoscaler(scenario)
    setup = getattr(scenario, "kueue", None)
    if setup is not None:
        kueue = setup.build()
    else:  # the default ClusterQueue's quota covers the nodes the autoscaler may add
        kueue = default_setup(scenario, sum(n.gpus for n in scenario.nodes) + supplier.provisionable_gpus(scenario))
    quota = KueueLayer(kueue)
    check_spec = getattr(scenario, "admission_check", None)
    if check_spec is None and setup is not None and setup.admission_checks:
        check_spec = setup.admission_checks[0]  # the AdmissionCheck the scenario's ClusterQueues name
    check = ProvisioningRequestCheck(quota, supplier, check_spec)
    placement = KubeScheduler(preemption=settings.preemption)
    return Stack(placement, admission=[quota, check], suppliers=[supplier], name=name)
