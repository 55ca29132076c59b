"""cluster-autoscaler's configuration: its node groups and flags.

An :class:`AutoscalerSetup` is what a scenario carries
(``Scenario.autoscaler``), what the manifests reader builds from gangkit's
``ClusterAutoscaler`` kind, and what :func:`default_autoscaler` gives the
``+autoscaler`` stack names. It is frozen: a run never changes it. Each run
builds its own :class:`~gangkit.supply.autoscaler.ClusterAutoscaler` from it
(``ClusterAutoscaler.from_setup``), with no node, backoff or request yet, as
Kueue's scheduler is built from a ``KueueSetup`` (``Kueue.from_setup``); so one
setup serves any number of runs, one after the other or side by side.

The fields are cluster-autoscaler's flags, with 1.36's defaults
(``cluster-autoscaler/config/flags/flags.go``): ``--scan-interval`` 10 s,
``--expander`` ``least-waste`` (since 1.33), ``--max-node-provision-time``
15 min, ``--max-node-startup-time`` 15 min,
``--initial-node-group-backoff-duration`` 5 min,
``--max-node-group-backoff-duration`` 30 min,
``--node-group-backoff-reset-timeout`` 3 h, ``--scale-down-enabled``,
``--scale-down-unneeded-time`` 10 min, ``--scale-down-delay-after-add``
10 min, ``--scale-down-gpu-utilization-threshold`` 0.5,
``--max-scale-down-parallelism`` 10, ``--max-drain-parallelism`` 1, and the
ProvisioningRequest settings (expiry 7 days,
``--provisioning-request-initial-backoff-time`` 1 min,
``--provisioning-request-max-backoff-time`` 10 min). What each one does:
:mod:`gangkit.supply.autoscaler`. ``--max-empty-bulk-delete``, removed in
1.33, is refused by name.
"""

from __future__ import annotations

import math
from dataclasses import KW_ONLY, InitVar, dataclass

from gangkit.supply.cloud import InstanceType, Stages
from gangkit.supply.expander import DEFAULT_EXPANDER, EXPANDERS
from gangkit.supply.node_groups import NodeGroup

__all__ = ["DAY", "AutoscalerSetup", "default_autoscaler"]

DAY = 86400.0
#: The fields that are seconds (or a fraction): kept as floats, as the flags' durations are read.
_FLOATS = ("scan_interval", "max_node_provision_time", "max_node_startup_time", "initial_backoff", "max_backoff",
           "backoff_reset", "scale_down_unneeded_time", "scale_down_delay_after_add", "utilization_threshold",
           "provisioning_request_expiry", "provisioning_request_initial_backoff", "provisioning_request_max_backoff")


@dataclass(frozen=True, eq=False)
class AutoscalerSetup:
    """cluster-autoscaler's configuration for any number of runs (see the module docstring)."""

    node_groups: tuple[NodeGroup, ...]
    _: KW_ONLY
    scan_interval: float = 10.0
    expander: str = DEFAULT_EXPANDER
    max_node_provision_time: float = 900.0
    max_node_startup_time: float = 900.0
    initial_backoff: float = 300.0
    max_backoff: float = 1800.0
    backoff_reset: float = 10800.0
    scale_down: bool = True
    scale_down_unneeded_time: float = 600.0
    scale_down_delay_after_add: float = 600.0
    utilization_threshold: float = 0.5
    max_scale_down_parallelism: int = 10
    max_drain_parallelism: int = 1
    provisioning_request_expiry: float = 7 * DAY
    provisioning_request_initial_backoff: float = 60.0
    provisioning_request_max_backoff: float = 600.0
    stages: Stages = None  # type: ignore[assignment]  # None: the default Stages
    max_empty_bulk_delete: InitVar[int | None] = None

    def __post_init__(self, max_empty_bulk_delete: int | None) -> None:
        if max_empty_bulk_delete is not None:
            raise ValueError("ClusterAutoscaler: max_empty_bulk_delete: cluster-autoscaler removed --max-empty-bulk-delete "
                             "in 1.33; expected max_scale_down_parallelism (nodes removed at once, empty or drained; "
                             "default 10) and max_drain_parallelism (non-empty nodes drained at once; default 1), "
                             f"got max_empty_bulk_delete={max_empty_bulk_delete!r}")
        for flag in ("max_scale_down_parallelism", "max_drain_parallelism"):
            value = getattr(self, flag)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"ClusterAutoscaler: {flag}: expected a whole number >= 0, got {value!r}")
        names = [g.name for g in self.node_groups]
        if len(set(names)) != len(names):
            raise ValueError(f"ClusterAutoscaler: node_groups: expected unique names, got {names}")
        if self.expander not in EXPANDERS:
            raise ValueError(f"ClusterAutoscaler: expander: expected one of {', '.join(EXPANDERS)}, got {self.expander!r}")
        if not self.scan_interval > 0:
            raise ValueError(f"ClusterAutoscaler: scan_interval: expected seconds > 0, got {self.scan_interval!r}")
        object.__setattr__(self, "node_groups", tuple(self.node_groups))
        for name in _FLOATS:
            object.__setattr__(self, name, float(getattr(self, name)))
        object.__setattr__(self, "stages", self.stages or Stages())

    def provisionable_gpus(self, scenario=None) -> int:
        """The GPUs all node groups hold at their ``max_size``."""
        return sum(g.max_size * g.instance_type.gpus for g in self.node_groups)

    def can_ever_fit(self, gpus: int, cpu: float, memory: int, selector: tuple) -> bool:
        """Could a node of some group that may grow hold such a pod (its labels matching ``selector``)?"""
        return any(g.max_size > 0 and g.holds(gpus, cpu, memory, selector) for g in self.node_groups)


def default_autoscaler(scenario=None) -> AutoscalerSetup:
    """The cluster-autoscaler of a scenario that brings no node groups of its own (the ``+autoscaler`` stacks).

    One node group per GPU size (1, 2, 4, 8 and the sizes of the scenario's
    nodes and pods), named ``gpu-N``, priced 1.0 per GPU-hour, ``min_size``
    0 and a ``max_size`` large enough for every GPU the jobs ask for; CA's
    default expander, ``least-waste`` since cluster-autoscaler 1.33.
    """
    sizes = {1, 2, 4, 8}
    need = 0
    if scenario is not None:
        sizes.update(n.gpus for n in scenario.nodes if n.gpus > 0)
        sizes.update(ps.gpus for j in scenario.jobs for ps in j.pod_sets if ps.gpus > 0)
        need = sum(j.gpus for j in scenario.jobs)
    groups = [NodeGroup(f"gpu-{g}", InstanceType(f"gpu-{g}", g, float(g)), 0, max(1, math.ceil(need / g)))
              for g in sorted(sizes)]
    return AutoscalerSetup(groups)
