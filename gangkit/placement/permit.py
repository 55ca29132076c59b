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
its GPUs count as *held idle* (bound to a job that does not progress), and a
rejection gives them back through ``Cluster.release`` (not an eviction:
nothing ran, no restart is counted).

What a node provisioner sees: pods waiting at Permit hold a node (assumed,
not bound) and are not unschedulable; each layer's ``unschedulable()``
lists the pods that carry ``PodScheduled=False`` with reason
``Unschedulable`` (see each layer's docstring).

When is a rejected group tried again? kube-scheduler puts a rejected pod
among the unschedulable pods and moves it back when a cluster event could
help it (its queueing hints). gangkit keeps one count of *capacity
events*: capacity that others free (a job finishes or is evicted, a node
becomes ready) and capacity that a Permit timeout gives back.

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
  rejection never wakes it (otherwise it would retry for ever at one
  instant; kube-scheduler's per-pod backoff, 1 s doubling to 10 s, spaces
  those retries, each as fruitless as the last).

Simplified: the per-pod backoff and the 5-minute flush of unschedulable
pods (``podMaxInUnschedulablePodsDuration``) are not modelled. A retry they
would cause without a change in the cluster finds the same nodes taken and
ends the same way, so leaving them out changes no placement; the retry
after a timeout, the one that holds seats again, is modelled.
"""

from __future__ import annotations

from dataclasses import dataclass

from gangkit.engine.sockets import Cluster, PlacementLayer
from gangkit.engine.state import JobState, PodState
from gangkit.model.reasons import Reason


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
        """Pods holding a node at Permit (none once the group is permitted)."""
        return [] if self.permitted else [p for p in self.job.pods if p.node is not None]

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
        self._free_after_cycle: int | None = None
        self._released_since_cycle = 0
        self._timed_out_at: float | None = None  # a deadline fired at this instant, and no cycle ran since

    def add(self, js: JobState, now: float) -> Group:
        g = self.groups.get(js.index)
        if g is None or g.job is not js:
            g = Group(js, now, self._order)
            self._order += 1
            self.groups[js.index] = g
        return g

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

    # -- capacity events ---------------------------------------------------------
    def start_cycle(self, sim: Cluster) -> None:
        """Count capacity freed by others since the last cycle as one event."""
        free = sim.capacity.free_ready_gpus
        if self._free_after_cycle is not None and free > self._free_after_cycle + self._released_since_cycle:
            self.events += 1
        self._released_since_cycle = 0

    def end_cycle(self, sim: Cluster) -> None:
        self._free_after_cycle = sim.capacity.free_ready_gpus
        self._released_since_cycle = 0
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
        token = g.timer

        def fire(t: float) -> None:
            if token != g.timer or g.permitted:
                return
            if self._timed_out_at == t:  # another group's deadline freed pods at this instant: its cycle first
                sim.call_at(t, fire, after_cycles=True)
                self._timed_out_at = None
                return
            self._timed_out_at = t
            on_timeout(g, t)

        sim.call_at(g.deadline, fire)

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
        held = sum(p.pod_set.gpus for p in g.waiting())
        g.timer += 1
        g.deadline = None
        g.failed_at = now
        g.rejections += 1
        g.rejected_because = reason.message
        if timed_out:
            self.events += 1
        g.wake_at_event = self.events if timed_out else self.events + 1
        if held:
            self._released_since_cycle += held
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

    def forget(self, js: JobState) -> None:
        self.room.drop(js)

    def unschedulable(self) -> list[PodState]:
        """Pods the last cycle tried and left without a node (what an autoscaler sees).

        Pods never tried are not listed: kube-gang's pods held at PreEnqueue
        until ``minCount`` of them exist are invisible to an autoscaler.
        """
        return [p for p in self._unschedulable if p.node is None and not p.done and p.job.placing]
