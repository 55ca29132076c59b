"""The waiting room at Permit: pods that hold a node while their group gathers.

kube-scheduler's framework lets a plugin answer *Wait* at its Permit stage:
the pod has been given a node (the scheduler *assumes* it there, so nobody
else gets that room) but is not bound until the plugin allows it, or until a
timeout rejects it. Picture guests keeping seats for friends at a concert:
the seats are taken, nobody sits in them, and if the friends do not come by
the time the lights go down, the usher frees all the group's seats at once.

Two gang schedulers work this way: the scheduler-plugins Coscheduling plugin
(:mod:`gangkit.placement.coscheduling`) and the default scheduler's own GangScheduling
plugin (:mod:`gangkit.placement.kube_gang`). This module holds what they share: the
per-group record, the timer that ends a wait, and when a rejected group is
worth trying again.

In gangkit a pod waiting at Permit is bound through ``Cluster.bind``, so
what it asks for (GPUs, cores, bytes) is taken on its node and its GPUs
count as *held idle* (bound to a job that does not progress); a rejection
gives all of it back through ``Cluster.release`` (not an eviction: nothing
ran, no restart is counted). Every resource is held and given back the
same way: a pod that asks only for CPU or memory waits at Permit and is
rejected like a GPU pod (kube-scheduler's Unreserve forgets the assumed pod
whatever it requests).

What a node provisioner sees: pods waiting at Permit hold a node (assumed,
not bound) and are not unschedulable; each layer's ``unschedulable()``
lists the pods that carry ``PodScheduled=False`` with reason
``Unschedulable`` (see each layer's docstring).

When is a rejected group tried again? kube-scheduler puts a rejected pod
among the unschedulable pods and moves it back when a cluster event could
help it (its queueing hints). gangkit keeps one count of *capacity
events*: capacity that others free (a job finishes or is evicted, a node
becomes ready) and capacity that a Permit timeout gives back. Capacity is
every resource gangkit models: free GPUs, and free cores and bytes where
nodes model them (:func:`free_room`); more free room in any of them is an
event. kube-scheduler requeues a pod on any deletion of a scheduled pod
(NodeResourcesFit's queueing hint, ``plugins/noderesources/fit.go``, 1.35),
but freed cores help only a pod that asks for cores: gangkit counts cores
and bytes only while some pod in the room asks for them, and leaves out
the retries that cannot help (see "Simplified" below).

- A group whose Permit wait **timed out** tries again at once and holds
  its seats again. In kube-scheduler the timeout's Unreserve forgets the
  assumed pods (an ``AssignedPodDelete`` event); the group's pod that Filter
  had found no node for is requeued by NodeResourcesFit's queueing hint for
  that event, takes a freed node, and at Permit the plugin activates its
  siblings (coscheduling's ``ActivateSiblings``; GangScheduling likewise).
  So a gang that can never be complete holds its nodes round after round,
  one timeout after another (scheduler-plugins v0.34/v0.35
  ``pkg/coscheduling``; kube-scheduler ``pkg/scheduler/backend/queue``).
- A group **rejected at once** (coscheduling's PostFilter, more than
  ``podGroupRejectPercentage`` missing) held its seats for no time at all;
  it waits for the next capacity event after its rejection. Its own
  rejection never wakes it.

What the real queue does, and what gangkit leaves out (Kubernetes 1.35
``pkg/scheduler/backend/queue`` and ``schedule_one.go``; scheduler-plugins
``pkg/coscheduling`` v0.35; the 1.35 GangScheduling plugin). A pod rejected
at Permit (timeout, or PostFilter's "optimistic rejection") fails with its
plugin (``Coscheduling``, ``GangScheduling``) as its only unschedulable
plugin and goes to the unschedulable pods; those plugins register only pod
and PodGroup/Workload *additions* (Coscheduling: Pod add, PodGroup add and
update; GangScheduling 1.35: Pod add of the same Workload, Workload add),
so no capacity event moves such a pod: its group's Permit activates it
(``ActivateSiblings``; GangScheduling's ``Activate`` of the group's
unscheduled pods). The group's pod that Filter found no node for has
NodeResourcesFit among its unschedulable plugins, whose hints move it on a
node added or grown and on the deletion of an assigned pod; forgetting the
rejected assumed pods counts as such deletions (``handleBindingCycleError``,
deferred). So a rejection requeues that pod, into backoffQ (1 s doubling to
10 s per failure); while activeQ is empty it is popped at once
(``SchedulerPopFromBackoffQ``, on by default since 1.33), finds the room its
siblings gave back and waits at Permit, activating them. After a timeout
that is the retry gangkit models. After a PostFilter rejection it means the
real group retries *continuously*: each retry assumes its pods for a moment
and is rejected again (podGroupBackoffSeconds exists to damp that), and
each calls ``MarkPodGroupScheduleFailure``, so coscheduling's QueueSort
keeps moving the group behind the groups created before its latest retry.

Simplified: gangkit collapses those fruitless retries into one wait for the
next capacity event. Placements are the same (each retry ends in the same
rejection, and the seats it takes for a moment are given back), but
(a) gangkit never shows the momentary holds, nor their ``FailedScheduling``
events; (b) a rejected group keeps as sort key the time of its last
rejection, so at the next capacity event gangkit tries it *before* a group
created after that rejection, where the real plugin, whose failure time
is refreshed by every retry, tends to try the newer group first; (c) when the
scheduler is busy (activeQ not empty) a real retry waits up to 10 s of
backoff, gangkit's happens in the instant of its event: gangkit retries
sooner, by at most 10 s. The 5-minute flush of unschedulable pods
(``podMaxInUnschedulablePodsDuration``, every 30 s) is not modelled: it
retries pods no event moved, which find the same nodes taken and end the
same way, as for the ``pod`` stack (:mod:`gangkit.placement.kube_scheduler`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

from gangkit.engine.capacity import FreeCapacity
from gangkit.engine.sockets import Cluster, PlacementLayer
from gangkit.engine.state import JobState, PodState
from gangkit.model.precision import TOLERANCE
from gangkit.model.reasons import Reason
from gangkit.model.resources import ZERO, Resources


def free_room(cap: FreeCapacity, dims: tuple[str, ...] = ("cpu", "memory")) -> Resources:
    """The free GPUs of the ready nodes, and their free cores and bytes where nodes model them (only ``dims`` of those).

    The cores and bytes are a sum over the nodes (``FreeCapacity`` keeps a
    running total of free GPUs only), so the waiting room asks for them only
    when some pod in it asks for cores or bytes.
    """
    if not dims or not cap.models_cpu_or_memory:
        return Resources(cap.free_ready_gpus, 0.0, 0.0)
    cpu = memory = 0.0
    for st in cap.nodes:
        if st.ready:
            cpu += st.free_cpu or 0.0
            memory += st.free_memory or 0
    return Resources(cap.free_ready_gpus, cpu if "cpu" in dims else 0.0, memory if "memory" in dims else 0.0)


def requested(pods: list[PodState]) -> Resources:
    """What ``pods`` ask for together: GPUs, cores, bytes."""
    return Resources(sum(p.pod_set.gpus for p in pods), sum(p.pod_set.cpu for p in pods),
                     sum(p.pod_set.memory for p in pods))


def asked_dims(pods: list[PodState]) -> tuple[str, ...]:
    """The resources a gang is described in: GPUs when its pods ask for any, else the cores and bytes they ask for."""
    if any(p.pod_set.gpus for p in pods):
        return ("gpus",)
    return tuple(d for d in ("cpu", "memory") if any(getattr(p.pod_set, d) for p in pods)) or ("gpus",)


def in_words(room: Resources, dims: tuple[str, ...]) -> str:
    """``room`` in the resources ``dims``: ``8 GPUs``, ``2.5 cpu``, ``16Gi memory``."""
    words = {"gpus": lambda x: f"{x:.12g} GPUs", "cpu": lambda x: f"{round(x, 3):.12g} cpu",
             "memory": lambda x: f"{round(x / 2**30, 3):.12g}Gi memory"}
    return ", ".join(words[d](getattr(room, d)) for d in dims)


def _grew(now: Resources, before: Resources) -> bool:
    """More free room in some resource than ``before`` (cores with the float tolerance)."""
    return now.gpus > before.gpus or now.cpu > before.cpu + TOLERANCE or now.memory > before.memory


@dataclass(eq=False)
class Group:
    """One gang (a PodGroup, a Workload's pod group) as a Permit-based scheduler tracks it."""

    job: JobState
    created: float  # when its pods reached the scheduler (stands for the group's creation time)
    order: int  # tie-break: the order in which groups reached the scheduler
    failed_at: float | None = None  # last rejection (coscheduling sorts a failed group by this)
    timer: int = 0  # bumped whenever a pending deadline must be ignored
    deadline: float | None = None  # when the pods waiting at Permit are rejected
    permitted: bool = False  # minMember reached: its pods are bound for good
    wake_at_event: int | None = None  # rejected: retried once the event count reaches this
    backoff_until: float = 0.0  # coscheduling's podGroupBackoffSeconds
    rejections: int = 0
    rejected_because: str = ""  # the message of its last rejection

    def pending(self) -> list[PodState]:
        return [p for p in self.job.pods if p.node is None and not p.done]

    def waiting(self) -> list[PodState]:
        """Pods holding a node at Permit (none once the group is permitted, none of a job without a gang)."""
        if self.permitted or self.job.spec.progress != "sync":
            return []
        return [p for p in self.job.pods if p.node is not None]

    @property
    def min_member(self) -> int:
        """The group's minMember/minCount as written, not lowered when fewer pods exist
        (Kueue's partial admission creates fewer pods but does not edit the PodGroup or Workload);
        a job that names no gang size counts the pods that exist."""
        written = self.job.spec.min_member
        return len(self.job.pods) if written is None else written


class WaitingRoom:
    """Groups, capacity events, and the Permit timers of one scheduler."""

    def __init__(self):
        self.groups: dict[int, Group] = {}
        self.events = 0  # capacity events seen so far
        self._order = 0
        self._free_after_cycle: Resources | None = None
        self._released_since_cycle = ZERO
        # how many groups have pods that ask for cores, for bytes: freed cores can help only pods that ask for cores
        self._asking = {"cpu": 0, "memory": 0}
        self._dims_after_cycle: tuple[str, ...] = ()
        self._timed_out_at: float | None = None  # a deadline fired at this instant, and no cycle ran since

    def add(self, js: JobState, now: float) -> Group:
        g = self.groups.get(js.index)
        if g is None or g.job is not js:
            if g is not None:
                self._count(g.job, -1)
            g = Group(js, now, self._order)
            self._order += 1
            self.groups[js.index] = g
            self._count(js, +1)
        return g

    def _count(self, js: JobState, sign: int) -> None:
        for d in self._asking:
            if any(getattr(ps, d) for ps in js.spec.pod_sets):
                self._asking[d] += sign

    def watched(self) -> tuple[str, ...]:
        """The resources besides GPUs whose freeing is a capacity event: those some pod in the room asks for."""
        return tuple(d for d, n in self._asking.items() if n > 0)

    def reset(self, js: JobState, now: float) -> Group:
        """The job's pods were recreated (an eviction): same group and place in line, fresh state."""
        old = self.groups.get(js.index)
        if old is None:
            return self.add(js, now)
        old.timer += 1
        g = self.groups[js.index] = Group(js, old.created, old.order)
        return g

    def drop(self, js: JobState) -> None:
        g = self.groups.pop(js.index, None)
        if g is not None:
            g.timer += 1
            self._count(g.job, -1)

    # -- capacity events ---------------------------------------------------------
    def start_cycle(self, sim: Cluster) -> None:
        """Count capacity freed by others since the last cycle (GPUs, cores or bytes) as one event."""
        before = self._free_after_cycle
        if before is not None and _grew(free_room(sim.capacity, self._dims_after_cycle),
                                        before + self._released_since_cycle):
            self.events += 1
        self._released_since_cycle = ZERO

    def end_cycle(self, sim: Cluster) -> None:
        self._dims_after_cycle = self.watched()
        self._free_after_cycle = free_room(sim.capacity, self._dims_after_cycle)
        self._released_since_cycle = ZERO
        self._timed_out_at = None

    def may_retry(self, g: Group) -> bool:
        return g.wake_at_event is None or self.events >= g.wake_at_event

    # -- Permit ------------------------------------------------------------------
    def wait(self, sim: Cluster, g: Group, now: float, timeout: float, on_timeout) -> None:
        """The group has pods at Permit: start its deadline unless one is running.

        Deadlines that fall on one instant are handled one at a time, each
        after the scheduling cycle that the one before it caused. In
        kube-scheduler the group whose first pod reached Permit first times
        out first, and the pods its Unreserve frees can complete another
        group before that group's own deadline (two gangs created together
        and interleaved: the first to time out lets the other start). gangkit
        places those pods in one instant, so it keeps that order explicitly.
        """
        if g.deadline is not None and g.deadline >= now:  # one deadline per group, renewed only once it has fired
            return
        g.timer += 1
        g.deadline = now + timeout
        sim.call_at(g.deadline, partial(self._deadline, sim, g, g.timer, on_timeout))

    def _deadline(self, sim: Cluster, g: Group, token: int, on_timeout, t: float) -> None:
        """A deadline set by :meth:`wait` is due (a partial, not a closure: a closure that schedules itself again
        is a reference cycle, which would keep the group and its job until a full collection)."""
        if token != g.timer or g.permitted:
            return
        if self._timed_out_at == t:  # another group's deadline freed pods at this instant: its cycle first
            sim.call_at(t, partial(self._deadline, sim, g, token, on_timeout), after_cycles=True)
            self._timed_out_at = None
            return
        self._timed_out_at = t
        on_timeout(g, t)

    def allow(self, g: Group) -> None:
        """minMember reached: every waiting pod is allowed; the deadline no longer matters."""
        g.permitted = True
        g.deadline = None
        g.timer += 1
        g.wake_at_event = None

    def reject(self, sim: Cluster, g: Group, now: float, reason: Reason, timed_out: bool) -> None:
        """Reject the group's pods waiting at Permit and give their nodes back.

        ``timed_out``: a Permit timeout, not a rejection in the cycle. The
        released capacity then counts as a capacity event, so groups rejected
        earlier may try again, and the group itself tries again at once (see
        the module docstring).
        """
        waiting = g.waiting()
        g.timer += 1
        g.deadline = None
        g.failed_at = now
        g.rejections += 1
        g.rejected_because = reason.message
        if timed_out:
            self.events += 1
        g.wake_at_event = self.events if timed_out else self.events + 1
        if waiting:  # whatever they ask for: GPUs, cores, bytes
            self._released_since_cycle += requested(waiting)
            sim.release(g.job, reason)


class PermitLayer(PlacementLayer):
    """What the two Permit-holding placement layers share: the waiting room and the socket around it.

    :class:`gangkit.placement.coscheduling.Coscheduling` and :class:`gangkit.placement.kube_gang.KubeGang`
    both place pods one by one into a :class:`WaitingRoom`; they differ in
    when a group may start and when its held pods are released.
    """

    # both are kube-scheduler plugins: their unschedulable pods sit in kube-scheduler's own queue
    pending_metrics = ("scheduler_pending_pods", None)

    name = "placement"

    def __init__(self) -> None:
        self.room = WaitingRoom()
        self._unschedulable: list[PodState] = []  # pods the last cycle tried and found no node for
        self.timeouts = 0

    def enqueue(self, jobs: list[JobState], now: float) -> None:
        for js in jobs:
            self.room.add(js, now)

    def requeue(self, js: JobState, now: float) -> None:
        self.room.reset(js, now)

    def resume(self, sim: Cluster, js: JobState, now: float) -> None:
        """A job of a live cluster's snapshot with pods bound: a bound pod has passed Permit, so a group with
        ``minMember`` pods bound is permitted (its other pods are placed as they fit); a group with fewer is
        taken up as waiting at Permit, holding what it holds. A job with no pod bound is enqueued as a new one."""
        self.enqueue([js], now)
        g = self.room.groups[js.index]
        if js.bound and js.bound >= g.min_member:
            g.permitted = True

    def forget(self, js: JobState) -> None:
        self.room.drop(js)

    def started(self, js: JobState) -> bool:
        """Pods held at Permit have not started: their rendezvous clock waits for the group to be permitted."""
        g = self.room.groups.get(js.index)
        return g is None or g.permitted or js.spec.progress != "sync"

    def unschedulable(self) -> list[PodState]:
        """Pods the last cycle tried and left without a node (what an autoscaler sees).

        Pods never tried are not listed: kube-gang's pods held at PreEnqueue
        until ``minCount`` of them exist are invisible to an autoscaler.
        """
        return [p for p in self._unschedulable if p.node is None and not p.done and p.job.placing]
