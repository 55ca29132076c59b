"""The live state of a run: a node's free room, a pod, a job, as the engine changes them.

The scenario says what there is (:class:`~gangkit.model.nodes.Node`,
:class:`~gangkit.model.jobs.Job`); these say where it is now. A
:class:`NodeState` is a node's free room (a :class:`~gangkit.model.resources.Room`)
and the pods bound to it; a :class:`PodState` is one pod of a job, bound to a
node or waiting; a :class:`JobState` is one job with its pods, the layer it
waits in and its timestamps. Only the engine changes them, through its
public calls (``bind``, ``evict``, ...); layers read them.
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass, field

from gangkit.engine.admitted import Admitted
from gangkit.model.jobs import Job, PodSet
from gangkit.model.nodes import Node
from gangkit.model.reasons import Reason
from gangkit.model.resources import Room


@dataclass(eq=False)
class NodeState(Room):
    """What is free on one node right now (the engine's mutable view of a :class:`Node`), and its pods."""

    node: Node = None
    index: int = 0
    ready: bool = True
    pods: set = field(default_factory=set)

    def fits(self, gpus: int, cpu: float = 0.0, memory: int = 0, selector=()) -> bool:
        """Ready, with room for the pod (:meth:`Room.fits`), and labels that match its node selector."""
        return self.ready and Room.fits(self, gpus, cpu, memory) and self.node.matches(selector)


@dataclass(eq=False, slots=True)
class PodState:
    """One pod of a running simulation."""

    job: "JobState"
    index: int  # within the job
    pod_set: PodSet
    name: str
    created: float = 0.0
    seq: int = 0  # creation order (kube-scheduler's tie-break after priority)
    node: NodeState | None = None
    bound_at: float | None = None
    done: bool = False  # finished; or failed, its replacement not created yet (gangkit.engine.churn): nobody places it
    # independent pods progress alone:
    remaining: float = 0.0
    progress_since: float | None = None
    epoch: int = 0

    @property
    def request(self) -> tuple:
        return self.pod_set.request

    @property
    def priority(self) -> int:
        return self.job.spec.priority


@dataclass(eq=False, slots=True)
class JobState:
    """One job of a running simulation: its pods, where it is, and its timestamps."""

    spec: Job
    index: int
    pods: list[PodState] = field(default_factory=list)
    state: str = "Pending"
    bound: int = 0
    progressing: bool = False
    remaining: float = 0.0  # sync jobs: progress still needed (seconds of work at full size)
    speed: float = 1.0  # an elastic job admitted with fewer pods progresses at pods / full size
    progress_since: float | None = None
    epoch: int = 0  # bumped on eviction: stale finish events are ignored
    seq: int = 0  # order in which the job reached placement
    started_at: float | None = None
    finished_at: float | None = None
    placed_at: float | None = None
    restarts: int = 0
    placing: bool = False  # its pods exist and wait in (or were placed by) the placement layer
    admitted: Admitted | None = None  # what the admission layer handed over: counts and labels (engine.admitted)
    deactivated_at: float | None = None
    layer: str = ""  # the layer the job waits in now
    layer_enter: float = 0.0
    waits: dict = field(default_factory=dict)  # wait bucket -> seconds (gangkit.engine.waits)
    awaited: dict = field(default_factory=dict)  # node name -> since when a supplier's node is meant for it
    reason: Reason | None = None
    bound_gpus: int = 0
    bound_since: float = 0.0
    bound_gpu_seconds: float = 0.0
    useful_gpu_seconds: float = 0.0
    pods_done: int = 0
    # the spec's minMember, kept on first use: a gang scheduler asks for it several times per
    # session and job, and a job's spec does not change during a run
    spec_gang_size: int = field(default=-1, init=False, repr=False)
    # the spec's minTaskMember per role (gangkit.volcano.plugins.gang.role_minimums), kept on first use
    spec_role_minimums: dict | None = field(default=None, init=False, repr=False)

    @property
    def name(self) -> str:
        return self.spec.key

    @property
    def priority(self) -> int:
        return self.spec.priority

    @property
    def gang_size(self) -> int:
        """minMember, never more than the pods that exist (partial admission may create fewer)."""
        g = self.spec_gang_size
        if g < 0:
            g = self.spec_gang_size = self.spec.gang_size
        n = len(self.pods)
        return n if 0 < n < g <= self.spec.pod_count else g  # a gang above the job's pods is never lowered

    @property
    def gpus_bound(self) -> int:
        return sum(p.pod_set.gpus for p in self.pods if p.node is not None)


@dataclass
class OnePodJobs:
    """Every job of a lean run that finished, as columns (:mod:`gangkit.engine.lean`, ``jobs`` level).

    Job ``i`` is ``specs[i]``, one pod of ``gpus`` GPUs (or of ``gpus[i]``, when the jobs
    have several shapes, :mod:`gangkit.engine.lean.sizes`): it reached placement at
    ``enter[i]``, started at ``start[i]`` and finished at ``finish[i]``.
    """

    specs: list[Job]
    gpus: int | array
    start: array
    finish: array
    enter: array
