"""The two kinds of sockets a stack is built from, and the reasons layers give.

A cluster's admission stack is a row of gatekeepers. Each *admission or
placement layer* looks at the current state and either lets a job through
or refuses, saying why (a :class:`Reason`). *Node suppliers* stand to one
side: they are not a gate a job passes, they watch for pods that cannot be
placed and add (or remove) nodes, each node passing through stages before
it is usable.

- :class:`AdmissionLayer`: a queue-and-quota layer such as Kueue. It receives
  submitted jobs, and in each scheduling cycle returns those it admits, in
  order; the next layer receives them.
- :class:`PlacementLayer`: the last layer, which binds pods to nodes
  (kube-scheduler pod by pod, Volcano gang by gang).
- :class:`NodeSupplier`: reacts to unschedulable pods (Karpenter,
  cluster-autoscaler) by launching nodes through
  :meth:`gangkit.engine.simulation.Simulation.launch_node`.

Layers never touch nodes directly: they call the simulation's ``bind``,
``evict``, ``launch_node`` and ``remove_node`` so that every change is
recorded as an event and counted in the GPU-second accounting.

An admission or placement layer may also define ``idle() -> bool``: True
when nothing waits in it and a cycle now would change none of its state.
When every layer says so (and no node supplier or per-cycle metric is
involved), the engine skips that cycle's work (see
:meth:`gangkit.engine.simulation.Simulation._idle`); a layer without ``idle`` is never
skipped, so leaving it out is always correct.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Iterable, Protocol, runtime_checkable

if TYPE_CHECKING:  # pragma: no cover
    from gangkit.engine.simulation import JobState, PodState, Simulation


@dataclass(frozen=True)
class Reason:
    """Why a layer refuses (or holds) a job: the layer, a short code, plain words, the numbers.

    >>> Reason("placement", "GangCannotFit", "gang of 3 cannot fit: 2 of 3 pods placed", {"placed": 2})
    Reason(layer='placement', code='GangCannotFit', message='gang of 3 cannot fit: 2 of 3 pods placed', numbers={'placed': 2})
    """

    layer: str
    code: str
    message: str
    numbers: dict = field(default_factory=dict, compare=False)

    def __str__(self) -> str:
        return f"[{self.layer}] {self.code}: {self.message}"


@runtime_checkable
class AdmissionLayer(Protocol):
    """A gate in front of placement (queueing and quota, admission checks).

    ``name`` is the wait bucket the job's time in this layer is counted in
    (``quota``, ``admission_check``, ...).
    """

    name: str

    def submit(self, job: "JobState", now: float) -> None:
        """A job arrives at this layer (from submission or from the layer before)."""

    def cycle(self, sim: "Simulation", now: float) -> Iterable["JobState"]:
        """Decide for the current state; return the jobs admitted now, in order."""

    def release(self, job: "JobState", now: float) -> None:
        """A job this layer admitted has finished or was evicted: give back what it took."""

    def pending_reason(self, job: "JobState") -> Reason | None:
        """Why ``job`` still waits in this layer (None if it does not)."""


@runtime_checkable
class PlacementLayer(Protocol):
    """The last layer: binds pods to nodes through ``sim.bind``."""

    name: str

    def enqueue(self, jobs: list["JobState"], now: float) -> None:
        """Jobs whose pods now exist and wait for nodes (pods created in this order)."""

    def requeue(self, job: "JobState", now: float) -> None:
        """A job's pods were recreated after an eviction (Job controller semantics)."""

    def cycle(self, sim: "Simulation", now: float) -> None:
        """One scheduling cycle at ``now``: bind what the rules allow."""

    def forget(self, job: "JobState") -> None:
        """The job no longer waits here (finished or removed)."""

    def unschedulable(self) -> list["PodState"]:
        """Pods that wait for room after the last cycle (what autoscalers see)."""

    def pending_reason(self, sim: "Simulation", job: "JobState") -> Reason | None:
        """Why ``job`` is not (fully) placed in the current state."""


@runtime_checkable
class NodeSupplier(Protocol):
    """Adds or removes nodes in reaction to unschedulable pods."""

    name: str

    def can_ever_fit(self, gpus: int, cpu: float, memory: int, selector: tuple) -> bool:
        """Could this supplier ever bring a node that holds such a pod?"""

    def observe(self, sim: "Simulation", now: float, unschedulable: list["PodState"]) -> None:
        """Called after every scheduling cycle that leaves pods unschedulable."""
