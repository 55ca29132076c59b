"""Gang placement with the default scheduler's own GangScheduling plugin (Kubernetes 1.35 and 1.36, alpha).

Since Kubernetes 1.35 kube-scheduler can gang-schedule without add-ons,
behind the alpha feature gates ``GenericWorkload`` and ``GangScheduling``. A
``Workload`` object (``scheduling.k8s.io/v1alpha1``) lists pod groups, each
with a policy; a ``gang`` policy has a ``minCount``. Pods join a group through
their ``spec.workloadRef`` (Workload name and pod group name). The plugin
adds two barriers to the ordinary pod-by-pod cycle:

- PreEnqueue: a pod does not even enter the scheduling queue until its
  Workload exists and at least ``minCount`` pods of its group exist
  ("waiting for minCount pods from a gang to appear in scheduling queue",
  ``gangscheduling.go``). Nothing checks ``minCount`` against the pods
  that will be made: a group whose ``minCount`` exceeds them waits for ever
  (gangkit applies this to every job, ``progress: independent`` too);
- Permit: a placed pod waits, holding its node, until ``minCount`` pods of
  the group are assumed or bound; then all are allowed. The wait has a
  fixed timeout of 5 minutes per attempt of the group (not configurable in
  1.35); when it expires, the waiting pods are rejected, their nodes freed,
  and the group tries again at once (the release requeues its pods that
  found no node; see :mod:`gangkit.placement.permit`), holding what it gets.

Between the barriers nothing is gang-aware: pods are taken in the default
queue order (priority, then the time each pod entered the queue, which a
failed attempt refreshes), so two gangs created together interleave, each
holds part of the cluster, both wait out their 5 minutes, and the freed
pods interleave again: a livelock, which KEP-4671 lists among what the 1.35
alpha does not address. Unlike coscheduling there is no PostFilter that
gives the seats back early.

What a node provisioner sees (``unschedulable()``): pods a cycle tried and
found no node for, and pods rejected at Permit that wait for a cluster
event (their ``PodScheduled`` condition says ``Unschedulable``, which is
what Karpenter provisions for). Pods held at PreEnqueue are never tried,
so they get no such condition: a gang with fewer than ``minCount`` pods is
invisible to Karpenter, which launches nothing for it. Pods waiting at
Permit are assumed on their node, not listed (with KEP-5278, beta in 1.35,
the scheduler also writes the expected node into ``nominatedNodeName``,
and Karpenter's ``IsProvisionable`` skips such pods). At scale-to-zero
pods bind as nodes become ready and wait at Permit from the first node on:
nodes whose start-up times spread over more than 5 minutes make the group
time out, release its nodes and take them again at once.

Queue order: a pod keeps its place in the queue until a failed attempt
that a cluster event prompted (kube-scheduler requeues an unschedulable
pod only on an event that may help it); gangkit's cycle tries every
pending pod, and a retry no capacity event prompted does not move it back.

Versions modelled (``release``, the run setting ``kube_gang_release``):

- **1.35** (the default; KEP-4671 alpha; plugin
  ``pkg/scheduler/framework/plugins/gangscheduling`` of release-1.35, scheduling
  timeout ``DefaultSchedulingTimeoutDuration`` = 5 min): the two barriers above.
- **1.36** (API ``scheduling.k8s.io/v1alpha2``: standalone PodGroup objects,
  the pod field ``spec.schedulingGroup``): the same PreEnqueue barrier, then
  the *PodGroup scheduling cycle* (Kubernetes docs, "PodGroup Scheduling"):
  when the queue reaches a group's first pod, all its queued pods are tried
  against one snapshot, each on its best node; if at least ``minCount`` fit
  (with those already bound), they are bound together and the others wait to
  join them; if not, nothing is bound and the group waits for a capacity
  event. Nothing waits at Permit, so nothing is held and there is no
  timeout; the livelock of 1.35 cannot happen. KEP-4671 plans a fuller
  workload scheduling cycle (with workload-aware preemption) for 1.37.

See ``docs/reference/kube-gang.md``.

Simplified: no preemption (DefaultPreemption is not run for gang pods
here); retries of rejected groups follow :mod:`gangkit.placement.permit`
(1.35: the pods a timeout rejects have GangScheduling as their only
unschedulable plugin, whose events are Pod add and Workload add, so only
their group's Permit ``Activate`` brings them back; the group's pod that
found no node is requeued at once by the forgotten pods' deletion events:
the retry gangkit models, sooner than the real queue by at most the
10-s per-pod backoff when the scheduler is busy); a job with
``progress: independent`` is placed pod by pod (a ``basic`` pod group),
once PreEnqueue lets its pods in.

Speed: a cycle sorts the pods that may be tried (O(n log n) in pending
pods) and stops trying a request shape at its first failure.
"""

from __future__ import annotations

from gangkit.engine.sockets import Cluster
from gangkit.engine.state import JobState, PodState
from gangkit.model.errors import Problem, ScenarioError
from gangkit.model.reasons import Reason
from gangkit.model.scenario import KUBE_GANG_RELEASES, one_of
from gangkit.placement.permit import Group, PermitLayer

SCHEDULING_TIMEOUT = 300.0  # DefaultSchedulingTimeoutDuration in Kubernetes 1.35: fixed, 5 minutes


class KubeGang(PermitLayer):
    """The ``kube-gang`` placement layer, as in Kubernetes ``release`` 1.35 or 1.36 (see the module doc)."""
    period = 0.0

    def __init__(self, scheduling_timeout: float = SCHEDULING_TIMEOUT, release: str = "1.35"):
        if isinstance(scheduling_timeout, bool) or not isinstance(scheduling_timeout, (int, float)) or not scheduling_timeout > 0:
            raise ScenarioError([Problem("KubeGang", "scheduling_timeout", f"expected seconds > 0, got {scheduling_timeout!r}")])
        if release not in KUBE_GANG_RELEASES:
            raise ScenarioError([Problem("KubeGang", "release", one_of(release, KUBE_GANG_RELEASES))])
        self.scheduling_timeout = float(scheduling_timeout)
        self.release = release
        super().__init__()
        self._stamp: dict[PodState, int] = {}  # when a pod (re)entered the queue, as a counter in event order
        self._failed_at: dict[PodState, int] = {}  # the capacity-event count at a pod's last failure
        self._next = 0
        self._decided: set[int] = set()  # 1.36: groups whose PodGroup scheduling cycle ran in this cycle

    # -- socket (the rest is PermitLayer's) ------------------------------------
    def enqueue(self, jobs: list[JobState], now: float) -> None:
        super().enqueue(jobs, now)
        for p in sorted((p for js in jobs for p in js.pods), key=lambda p: p.seq):  # in creation order
            self._queue_time(p)

    def requeue(self, js: JobState, now: float) -> None:
        super().requeue(js, now)
        for p in js.pods:
            self._stamp.pop(p, None)
            self._failed_at.pop(p, None)
        for p in js.pods:
            self._queue_time(p)

    def forget(self, js: JobState) -> None:
        super().forget(js)
        for p in js.pods:
            self._stamp.pop(p, None)
            self._failed_at.pop(p, None)

    def _queue_time(self, p: PodState) -> int:
        s = self._stamp.get(p)
        if s is None:  # the pod enters the queue now
            s = self._stamp[p] = self._next
            self._next += 1
        return s

    def _refresh(self, p: PodState, rejected: bool = False) -> None:
        """A failed attempt puts the pod back in the queue with a new timestamp.

        kube-scheduler retries an unschedulable pod only after a cluster
        event that may help it; gangkit's cycle tries every pending pod, so a
        failure with no capacity event since the pod's last failure is a
        retry the real scheduler would not have made: the pod keeps its
        place. A rejection at Permit always requeues.
        """
        if not rejected and self._failed_at.get(p) == self.room.events:
            return
        self._failed_at[p] = self.room.events
        self._stamp[p] = self._next
        self._next += 1

    @staticmethod
    def gated(g: Group) -> bool:
        """PreEnqueue: fewer pods exist than the pod group's minCount (for any job: a ``minCount`` above the
        pods that will ever exist keeps them out of the queue for ever)."""
        return len(g.job.pods) < g.min_member

    # -- one cycle -------------------------------------------------------------
    def cycle(self, sim: Cluster, now: float) -> None:
        room = self.room
        room.start_cycle(sim)
        cap = sim.capacity
        candidates: list[tuple] = []
        unschedulable = []
        for g in room.groups.values():
            js = g.job
            if js.bound + js.pods_done >= len(js.pods) or not js.placing or self.gated(g):
                continue  # nothing to place (a running job), or held at PreEnqueue (no condition: invisible)
            if not room.may_retry(g):  # rejected: in the unschedulable pool with its condition, until an event
                unschedulable.extend(g.pending())
                continue
            for p in g.pending():
                candidates.append((-p.priority, self._queue_time(p), p.job.index, p.index, p, g))
        candidates.sort(key=lambda c: c[:4])
        failed: set[tuple] = set()
        members: dict[int, list[PodState]] = {}  # 1.36: a group's queued pods, in queue order
        if self.release == "1.36":
            for *_, p, g in candidates:
                if g.job.spec.progress == "sync" and not g.permitted:
                    members.setdefault(g.job.index, []).append(p)
        for *_, p, g in candidates:
            if p.node is not None or p.done:
                continue
            group = members.pop(g.job.index, None) if members else None
            if group is not None:  # the group's first pod is popped: its PodGroup scheduling cycle
                self._podgroup_cycle(sim, g, group, now, unschedulable, failed)
                continue
            if g.job.index in self._decided:
                continue  # 1.36: tried with its group in this cycle
            node = None if p.request in failed else cap.choose_for(p)
            if node is None:
                if not p.pod_set.one_per_node:  # a one-per-node pod's failure is its own job's
                    failed.add(p.request)
                unschedulable.append(p)
                self._refresh(p)
                continue
            sim.bind(p, node)
            js = g.job
            if js.spec.progress != "sync":
                continue
            if g.permitted or js.bound >= g.min_member:
                room.allow(g)
            else:
                room.wait(sim, g, now, self.scheduling_timeout, lambda g, t: self._timed_out(sim, g, t))
        self._unschedulable = unschedulable
        self._decided.clear()
        room.end_cycle(sim)

    def _podgroup_cycle(self, sim: Cluster, g: Group, pods: list[PodState], now: float, unschedulable: list,
                        failed: set) -> None:
        """Kubernetes 1.36's PodGroup scheduling cycle: all the group's queued pods against one snapshot.

        Each pod in turn gets the best node with room (Filter and Score) and is
        assumed there until the end of the cycle; a pod that fits nowhere is
        passed over (its PostFilter, preemption, is not modelled). If the
        assumed pods, with those already bound, reach ``minCount`` (Permit
        says Success), they go to binding together and the rest wait in the
        queue to join them; otherwise nothing is bound, every pod goes back to
        the queue, and the group is retried on the next capacity event.
        """
        self._decided.add(g.job.index)
        cap = sim.capacity
        placed: list[tuple] = []
        missing: list[PodState] = []
        tried_failed = set(failed)
        for q in pods:
            node = None if q.request in tried_failed else cap.choose_for(q, placed)
            if node is None:
                if not q.pod_set.one_per_node:
                    tried_failed.add(q.request)
                missing.append(q)
                continue
            ps = q.pod_set
            cap.take(node, ps.gpus, ps.cpu, ps.memory)
            placed.append((q, node))
        for q, node in placed:  # the cycle's assumptions end; binding takes the same room again
            ps = q.pod_set
            cap.give(node, ps.gpus, ps.cpu, ps.memory)
        js = g.job
        if placed and len(placed) + js.bound >= g.min_member:
            for q, node in placed:
                sim.bind(q, node)
            self.room.allow(g)
            failed |= tried_failed  # the group's pods now hold their room: what failed with them fails
            for q in missing:
                unschedulable.append(q)
                self._refresh(q)
            return
        for q in pods:
            unschedulable.append(q)
            self._refresh(q)
        reason = Reason("placement", "Unschedulable",
                        f"the PodGroup scheduling cycle found nodes for {len(placed)} of minCount {g.min_member} "
                        f"pods; none bound (PodGroupScheduled=False, reason Unschedulable)",
                        {"would_fit": len(placed), "min_count": g.min_member})
        self.room.reject(sim, g, now, reason, timed_out=False)

    def _timed_out(self, sim: Cluster, g: Group, now: float) -> None:
        """The group's 5 minutes are over: its waiting pods are rejected and their nodes freed."""
        self.timeouts += 1
        waiting = g.waiting()
        reason = Reason("placement", "GangSchedulingTimeout",
                        f"{len(waiting)} of minCount {g.min_member} pods waited at Permit for "
                        f"{self.scheduling_timeout:g} s; all rejected", {"waiting": len(waiting), "min_count": g.min_member})
        for p in waiting:
            self._refresh(p, rejected=True)
        self.room.reject(sim, g, now, reason, timed_out=True)

    # -- diagnosis ---------------------------------------------------------------
    def pending_reason(self, sim: Cluster, js: JobState) -> Reason | None:
        from gangkit.placement.coscheduling import permit_reason

        g = self.room.groups.get(js.index)
        pending = [p for p in js.pods if p.node is None and not p.done]
        if g is None or not pending:
            return None
        if self.gated(g):
            return Reason("placement", "WaitingForPods",
                          f"waiting for minCount pods from a gang to appear in scheduling queue: "
                          f"{len(js.pods)} of minCount {g.min_member} pods exist", {"pods": len(js.pods), "min_count": g.min_member})
        return permit_reason(sim, self.room, g, pending, self.scheduling_timeout, now=sim.now, backoff_until=0.0,
                             who="PodGroup" if self.release == "1.36" else "Workload", size="minCount")
