"""The sockets a stack is built from, and the cluster as a layer sees it.

A cluster's admission stack is a row of gatekeepers. Each *admission or
placement layer* looks at the current state and either lets a job through
or refuses, saying why (a :class:`~gangkit.model.reasons.Reason`). *Node
suppliers* stand to one side: they are not a gate a job passes, they watch
for pods that cannot be placed and add (or remove) nodes, each node passing
through stages before it is usable.

- :class:`AdmissionLayer`: a queue-and-quota layer such as Kueue. It receives
  submitted jobs, and in each scheduling cycle returns those it admits, in
  order; the next layer receives them.
- :class:`PlacementLayer`: the last layer, which binds pods to nodes
  (kube-scheduler pod by pod, Volcano gang by gang).
- :class:`NodeSupplier`: reacts to unschedulable pods (Karpenter,
  cluster-autoscaler) by launching nodes.

The engine sees a layer only through these protocols. Members marked
*optional* have a default here; a layer class that subclasses the protocol
gets them (every built-in layer does), and a layer that does not subclass
must define them all (``Stack`` says which one is missing). Methods marked
*required* have no default: a subclass that leaves one out cannot be made.

Layers see the engine only through :class:`Cluster`: the time, the free
capacity, the random generator, and the calls that change the state (bind,
evict, release, deactivate, launch or remove a node, a timer, a request for a
cycle, an event for the record). Every change goes through it, so that each
is recorded as an event and counted in the GPU-second accounting.
"""

from __future__ import annotations

import random
from abc import abstractmethod
from typing import TYPE_CHECKING, Callable, Iterable, Protocol, runtime_checkable

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from gangkit.engine.capacity import FreeCapacity
    from gangkit.engine.state import JobState, NodeState, PodState
    from gangkit.model.nodes import Node
    from gangkit.model.reasons import Reason


class Cluster(Protocol):
    """The engine, as layers and suppliers see it (:class:`gangkit.engine.simulation.Simulation` is one)."""

    capacity: "FreeCapacity"  # free room per node, and the node choice of kube-scheduler's Filter and Score
    rng: random.Random  # the run's one seeded random generator

    @property
    def now(self) -> float:
        """The simulated time, in seconds."""

    def bind(self, pod: "PodState", node: "NodeState", taken: bool = False) -> None:
        """Bind one pod to one node (``taken``: the caller has already taken the pod's resources of the node)."""

    def evict(self, js: "JobState", reason: "Reason", to_admission: int | None = None) -> None:
        """Stop a job and recreate its pods (back to admission layer ``to_admission`` if given)."""

    def evict_pod(self, pod: "PodState", reason: "Reason") -> None:
        """Evict one pod (a sync job stops whole)."""

    def release(self, js: "JobState", reason: "Reason", pods: list["PodState"] | None = None) -> None:
        """Give back what pods of a job that has not started hold (Permit, placeholders)."""

    def deactivate(self, js: "JobState", reason: "Reason") -> None:
        """Take a job out of the run for good."""

    def launch_node(self, node: "Node", stages: dict[str, float], supplier: str = "") -> "NodeState":
        """Add a node now; usable at the last of its stage times."""

    def remove_node(self, name: str, supplier: str = "") -> None:
        """Remove an empty node."""

    def call_at(self, t: float, fn: Callable[[float], None], after_cycles: bool = False) -> None:
        """Call ``fn(now)`` at simulated time ``t`` (after that instant's cycle with ``after_cycles``)."""

    def request_cycle(self) -> None:
        """Ask for a scheduling cycle after this instant's other events."""

    def record_event(self, kind: str, js: "JobState | None", *, pod: str = "", node: str = "", layer: str = "",
                     detail: str = "") -> None:
        """Add a row to the run's events (kept at the ``full`` recording level, counted at every level)."""

    def charge_wait(self, js: "JobState", now: float) -> None:
        """Count the job's wait in the layer it waits in, up to now, in its wait buckets; its next stretch there
        starts now (:func:`gangkit.engine.waits.charge_wait`). A layer calls it before it sends a job back from
        a later admission layer (:meth:`evict` closes only a placement stretch); nothing once the job has started."""


@runtime_checkable
class AdmissionLayer(Protocol):
    """A gate in front of placement (queueing and quota, admission checks).

    ``name`` is the wait bucket the job's time in this layer is counted in
    (``quota``, ``admission_check``, ...).
    """

    name: str

    @abstractmethod
    def submit(self, job: "JobState", now: float) -> None:
        """Required. A job arrives at this layer (from submission or from the layer before)."""

    @abstractmethod
    def cycle(self, sim: Cluster, now: float) -> Iterable["JobState"]:
        """Required. Decide for the current state; return the jobs admitted now, in order."""

    @abstractmethod
    def release(self, job: "JobState", now: float) -> None:
        """Required. A job this layer admitted has finished or was evicted: give back what it took."""

    @abstractmethod
    def pending_reason(self, job: "JobState") -> "Reason | None":
        """Required. Why ``job`` still waits in this layer (None if it does not)."""

    def resume(self, sim: Cluster, job: "JobState", now: float) -> None:
        """Optional. A job a live cluster's snapshot shows past this layer (admitted, or with pods bound):
        take it up as admitted, holding what it held (:mod:`gangkit.model.snapshot`). Called at time 0,
        before the first cycle, instead of :meth:`submit`; the job then goes straight on. The default
        refuses: a layer that keeps no state of its own for admitted jobs says so by overriding it.
        Not required of a layer written without the protocol (the engine then refuses, as here).
        """
        from gangkit.model.errors import Problem, ScenarioError

        raise ScenarioError([Problem(f"Job {job.spec.key}", "snapshot", f"the {self.name} layer "
                                     f"({type(self).__name__}) cannot start from a job admitted before the snapshot")])

    def idle(self) -> bool:
        """Optional. True when nothing waits here and a cycle now would change none of this layer's state.

        When every layer says so (and no node supplier or per-cycle metric is
        involved) the engine skips that cycle's work. The default, False, is
        always correct.
        """
        return False

    #: Optional. Does a cycle of this layer look at whether an admitted job's pods are all bound (Kueue's
    #: waitForPodsReady with blockAdmission, an admission check)? The engine then runs a cycle when a job's last pod is bound.
    #: A layer without the attribute is taken to look (True, always correct).
    waits_for_ready_pods = True

    def metrics(self) -> dict[str, "pd.DataFrame"]:
        """Optional. This layer's metrics at the end of the run, by the real metric's name."""
        return {}


@runtime_checkable
class PlacementLayer(Protocol):
    """The last layer: binds pods to nodes through ``sim.bind``.

    ``period``: seconds between scheduling sessions (Volcano's session); 0
    for a layer that reacts to every change (kube-scheduler). The engine
    aligns the cycles to it (:func:`gangkit.model.precision.next_boundary`).
    ``pending_metrics``: the names of the unschedulable pods and jobs counts
    the engine samples after each cycle at the ``full`` level (``None``: not
    reported), named after the real metric where one exists (the default names, with ``gangkit_``,
    are gangkit's own).
    """

    name: str
    period: float = 0.0
    pending_metrics: tuple[str, str | None] = ("gangkit_unschedulable_pods", "gangkit_unschedulable_jobs")

    @abstractmethod
    def enqueue(self, jobs: list["JobState"], now: float) -> None:
        """Required. Jobs whose pods now exist and wait for nodes (pods created in this order)."""

    @abstractmethod
    def requeue(self, job: "JobState", now: float) -> None:
        """Required. A job's pods were recreated after an eviction (Job controller semantics)."""

    @abstractmethod
    def cycle(self, sim: Cluster, now: float) -> None:
        """Required. One scheduling cycle at ``now``: bind what the rules allow."""

    @abstractmethod
    def forget(self, job: "JobState") -> None:
        """Required. The job no longer waits here (finished or removed)."""

    @abstractmethod
    def unschedulable(self) -> list["PodState"]:
        """Required. Pods that wait for room after the last cycle (what autoscalers see)."""

    @abstractmethod
    def pending_reason(self, sim: Cluster, job: "JobState") -> "Reason | None":
        """Required. Why ``job`` is not (fully) placed in the current state."""

    def resume(self, sim: Cluster, job: "JobState", now: float) -> None:
        """Optional. A job of a live cluster's snapshot whose pods the engine has just bound where the snapshot
        shows them (all, some or none of them; :mod:`gangkit.model.snapshot`): take it up from there.
        Not required of a layer written without the protocol (the engine then does what this default does).

        The default suits a layer that keeps no state for running jobs (kube-scheduler): the pods still
        without a node are queued, as :meth:`enqueue` queues them; a job with every pod bound needs nothing.
        """
        if any(p.node is None and not p.done for p in job.pods):
            self.enqueue([job], now)

    def idle(self) -> bool:
        """Optional. As :meth:`AdmissionLayer.idle`."""
        return False

    def metrics(self) -> dict[str, "pd.DataFrame"]:
        """Optional. This layer's metrics at the end of the run, by the real metric's name."""
        return {}

    def started(self, job: "JobState") -> bool:
        """Optional. Have the bound pods of ``job`` started (their containers run)?

        False while this layer holds them bound before their start: pods
        waiting at Permit, placeholders. Asked only in runs with restart churn
        (:mod:`gangkit.engine.churn`), for a sync job with a rendezvous timeout
        whose pods are not all running: a pod's rendezvous clock starts when
        it is bound and its job's pods have started, and the engine asks again
        after each scheduling cycle. The default, True, is right for a layer
        that binds only pods that run. Not required of a layer written
        without the protocol (the engine then takes True).
        """
        return True


@runtime_checkable
class NodeSupplier(Protocol):
    """Adds or removes nodes in reaction to unschedulable pods."""

    name: str

    @abstractmethod
    def can_ever_fit(self, gpus: int, cpu: float, memory: int, selector: tuple) -> bool:
        """Required. Could this supplier ever bring a node that holds such a pod?"""

    @abstractmethod
    def observe(self, sim: Cluster, now: float, unschedulable: list["PodState"]) -> None:
        """Required. Called after every scheduling cycle that leaves pods unschedulable."""

    def start(self, sim: Cluster, jobs: list) -> None:
        """Optional. Called once as the run starts, with the run's job specs in the order of their indices
        (a supplier with work of its own from time 0, such as ProvisioningRequests a user applied, starts it)."""

    def awaited_nodes(self) -> Iterable[tuple["PodState", str]]:
        """Optional. (pod, node name) pairs: the in-flight nodes this supplier has nominated waiting pods to.

        The engine charges a job's wait to the stage of the node it waits for
        (:mod:`gangkit.engine.waits`); a supplier that names none leaves all
        of its jobs' time in ``placement``.
        """
        return ()

    def launch_blocked(self, pods: list["PodState"]) -> str:
        """Optional. Plain words when this supplier will launch no node for these waiting pods because of its
        limits (a NodePool whose GPU, cpu or memory limit leaves too little for every instance type that holds
        them: "at 8 of its 8-GPU limit", "at 144 of its 150 cpu limit (spec.limits.cpu: ...)"), else ``""``
        (the diagnosis asks it)."""
        return ""

    def metrics(self) -> dict[str, "pd.DataFrame"]:
        """Optional. This supplier's metrics at the end of the run, by the real metric's name."""
        return {}


#: The members of each socket: (required, optional). ``Stack`` checks a layer against them.
MEMBERS = {
    AdmissionLayer: (("name", "submit", "cycle", "release", "pending_reason"), ("idle", "metrics")),
    PlacementLayer: (("name", "enqueue", "requeue", "cycle", "forget", "unschedulable", "pending_reason"),
                     ("period", "pending_metrics", "idle", "metrics")),
    NodeSupplier: (("name", "can_ever_fit", "observe"), ("start", "awaited_nodes", "launch_blocked", "metrics")),
}


def missing_members(layer: object, socket: type) -> list[str]:
    """The members of ``socket`` that ``layer`` lacks (required ones first)."""
    required, optional = MEMBERS[socket]
    return [m for m in (*required, *optional) if not hasattr(layer, m)]
