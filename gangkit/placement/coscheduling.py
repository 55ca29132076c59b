"""Gang placement with the scheduler-plugins Coscheduling plugin (``scheduling.x-k8s.io`` PodGroup).

Coscheduling keeps kube-scheduler's pod-by-pod cycle and adds a waiting
room. Pods that name a PodGroup (label ``scheduling.x-k8s.io/pod-group``)
are sorted so that a group's pods come one after another; each pod that
finds a node *waits at Permit*, holding that node, until ``minMember`` pods
of its group have found one; then all of them are allowed at once. If the
group does not fill up within ``scheduleTimeoutSeconds``, every waiting pod
is rejected and its node freed. Seats are kept for friends who may not come:
unlike Volcano, a waiting gang *holds* GPUs while it gathers.

Modelled (kubernetes-sigs/scheduler-plugins ``pkg/coscheduling``, master of
August 2026, ``v0.35.4-devel``; defaults from ``apis/config/v1/defaults.go``):

- QueueSort: higher priority first, then the group's creation time (the
  time of its last failure after a rejection, so that a failed group does
  not block the line), then the pod's name;
- PreFilter: a pod is refused while its group is backed off
  (``podGroupBackoffSeconds``, default 0 = off) or while fewer pods of the
  group exist than ``minMember`` ("pre-filter pod ... cannot find enough
  sibling pods, current pods number: N, minMember of group: M",
  ``pkg/coscheduling/core/core.go``, the same in v0.31.8, v0.32.7 and master).
  The API server accepts a ``minMember`` above the pods that will ever
  exist (the plugin's install guide makes one: ``minMember: 3`` over a
  Deployment of 2 replicas), and then the pods wait for ever, whatever the
  job's ``progress``;
- Permit: a placed pod is allowed when the group's assigned pods (waiting or
  bound) reach ``minMember``, else it waits, at most the PodGroup's
  ``scheduleTimeoutSeconds`` (default: the plugin's
  ``permitWaitingTimeSeconds``, 60 s), counted from the first waiting pod;
  when it times out, Unreserve rejects all the group's waiting pods, and
  the group tries again at once, holding its seats anew (the release
  requeues its unplaced pod, whose Permit activates the others; see
  :mod:`gangkit.placement.permit`): a timeout bounds one wait, not the holding;
- PostFilter, the documented threshold: when a pod of a group finds no node
  and fewer than ``minMember`` pods are assigned, the group is rejected at
  once (its waiting pods freed) unless the missing share
  ``(minMember - assigned) / minMember`` is at most
  ``podGroupRejectPercentage`` (default 10 %); within that small gap the
  group keeps its seats and waits for the timeout.

What a node provisioner sees (``unschedulable()``; Karpenter provisions
only for pods whose ``PodScheduled`` condition is False with reason
``Unschedulable``, Karpenter ``pkg/utils/pod/scheduling.go``
``IsProvisionable``): every pod a cycle tried and found no node for, and
every pod PreFilter refused. PreFilter answers
``UnschedulableAndUnresolvable``, which kube-scheduler records as reason
``Unschedulable``, so a group with fewer pods than ``minMember``, a
backed-off group and a rejected group waiting to be retried are all
visible: Karpenter launches nodes for them even when the group cannot use
them yet. Pods waiting at Permit are assumed on their node and are not
listed. At scale-to-zero a group's nodes often become ready at different
times: while more than 10 % of ``minMember`` is missing the group is
rejected at once (nothing held); within 10 % the placed pods wait at
Permit, and if the last node takes longer than the Permit timeout (60 s)
they are rejected each minute and take their nodes again at once, until it
is ready.

Simplified (see ``docs/reference/coscheduling.md``): ``minResources`` is
not checked; no preemption; retries of rejected groups follow
:mod:`gangkit.placement.permit`: after a PostFilter rejection the real
group retries continuously (its own rejection requeues its failed pod, and
kube-scheduler pops it from backoffQ while the active queue is empty), and
gangkit waits for the next capacity event instead: the same placements,
without the momentary holds, and a rejected group keeps its rejection time
as sort key where the real plugin refreshes it at every retry (gangkit can
try it before a group created later); a job with ``progress: independent`` is placed pod by
pod without Permit's wait (gangkit starts an independent pod as soon as it is
bound, so it cannot wait at Permit), though PreFilter's count of its pods applies.

Speed: a cycle visits each waiting group once and stops trying a request
shape at its first failure (capacity only shrinks within a cycle, except
when a rejection frees some, which resets that memory). A group that this
cycle would bind and then reject at the same instant is rejected after a
dry run, without the zero-length binds.
"""

from __future__ import annotations

import math

from gangkit.engine.sockets import Cluster
from gangkit.engine.state import JobState, PodState
from gangkit.model.errors import Problem, ScenarioError
from gangkit.model.reasons import Reason
from gangkit.placement.permit import Group, PermitLayer, WaitingRoom, asked_dims, free_room, in_words, requested

PERMIT_WAITING_TIME = 60.0  # permitWaitingTimeSeconds
REJECT_PERCENTAGE = 10  # podGroupRejectPercentage


class Coscheduling(PermitLayer):
    """The ``coscheduling`` placement layer."""
    period = 0.0  # a kube-scheduler plugin: cycles run on events

    def __init__(self, permit_waiting_time: float = PERMIT_WAITING_TIME, pod_group_backoff: float = 0.0,
                 reject_percentage: float = REJECT_PERCENTAGE):
        problems = []
        if not _number(permit_waiting_time) or permit_waiting_time <= 0:
            problems.append(Problem("Coscheduling", "permit_waiting_time", f"expected seconds > 0, got {permit_waiting_time!r}"))
        if not _number(pod_group_backoff) or pod_group_backoff < 0:
            problems.append(Problem("Coscheduling", "pod_group_backoff", f"expected seconds >= 0, got {pod_group_backoff!r}"))
        if not _number(reject_percentage) or not 0 <= reject_percentage <= 100:
            problems.append(Problem("Coscheduling", "reject_percentage", f"expected a percentage from 0 to 100, got {reject_percentage!r}"))
        if problems:
            raise ScenarioError(problems)
        self.permit_waiting_time = float(permit_waiting_time)
        self.pod_group_backoff = float(pod_group_backoff)
        self.reject_percentage = float(reject_percentage)
        super().__init__()
        self.rejections = 0

    def timeout_of(self, js: JobState) -> float:
        """The PodGroup's ``scheduleTimeoutSeconds``, else the plugin's ``permitWaitingTimeSeconds``."""
        return self.permit_waiting_time if js.spec.schedule_timeout is None else float(js.spec.schedule_timeout)

    @staticmethod
    def sort_key(g: Group) -> tuple:
        """Coscheduling's QueueSort: priority, then group creation (or last failure) time, then name."""
        return (-g.job.priority, g.created if g.failed_at is None else g.failed_at, g.order)

    # -- one cycle -------------------------------------------------------------
    def cycle(self, sim: Cluster, now: float) -> None:
        room = self.room
        room.start_cycle(sim)
        cap = sim.capacity
        failed: set[tuple] = set()  # request shapes that found no node in this cycle
        doomed: dict[tuple, int] = {}  # group shape -> pods placed before PostFilter rejected it, this cycle
        unschedulable: list[PodState] = []
        waiting = (g for g in room.groups.values() if g.job.placing and g.job.bound + g.job.pods_done < len(g.job.pods))
        for g in sorted(waiting, key=self.sort_key):
            pending = g.pending()
            if not pending:
                continue
            js = g.job
            gang = js.spec.progress == "sync"
            if len(js.pods) < g.min_member or gang and (not room.may_retry(g) or now < g.backoff_until):
                unschedulable.extend(pending)  # PreFilter refuses, or the group waits for a capacity event
                continue
            if gang and not g.permitted and self._doomed(sim, g, pending, failed, doomed):
                unschedulable.extend(pending)
                continue
            for i, p in enumerate(pending):
                node = None if p.request in failed else cap.choose_for(p)
                if node is not None:
                    sim.bind(p, node)
                    if not gang:
                        continue
                    if g.permitted or js.bound >= g.min_member:
                        g.failed_at = None  # ClearPodGroupScheduleFailure
                        room.allow(g)
                    else:
                        room.wait(sim, g, now, self.timeout_of(js), lambda g, t: self._timed_out(sim, g, t))
                    continue
                if not p.pod_set.one_per_node:  # a one-per-node pod's failure is its own job's
                    failed.add(p.request)
                unschedulable.append(p)
                if not gang or g.permitted or js.bound >= g.min_member:
                    continue
                missing = g.min_member - js.bound
                if 100.0 * missing / g.min_member <= self.reject_percentage:
                    continue  # a small gap: keep the seats, try the next pods
                self._reject(sim, g, now, p, missing)
                failed.clear()  # capacity was freed
                doomed.clear()
                unschedulable.extend(q for q in pending[i + 1:])
                unschedulable.extend(q for q in pending[:i] if q.node is None)
                break
        self._unschedulable = unschedulable
        room.end_cycle(sim)

    def _doomed(self, sim: Cluster, g: Group, pending: list[PodState], failed: set, doomed: dict) -> bool:
        """Would this cycle end with PostFilter rejecting the group? Then reject it without binding.

        A dry run places the pending pods one by one (as the cycle would)
        up to the first that fits nowhere. If the group then still misses
        more than ``podGroupRejectPercentage`` of ``minMember``, the real
        plugin would assume those pods for an instant and free them in the
        same cycle: gangkit skips those zero-length holds (same outcome,
        fewer events) and rejects at once, freeing any pods that waited from
        earlier cycles.
        """
        js = g.job
        cap = sim.capacity
        shape = (tuple(p.request for p in pending), g.min_member, js.bound)
        if any(ps.one_per_node for ps in js.spec.pod_sets):  # its dry run depends on where its own pods are
            shape = shape + (("job", js.index),)
        if shape in doomed:  # capacity only shrank since a group of this shape was rejected
            placed = doomed[shape]
            self._reject(sim, g, sim.now, pending[placed], g.min_member - placed)
            return True
        taken = []
        for p in pending:
            node = None if p.request in failed else cap.choose_for(p, taken)
            if node is None:
                # it fails on this cycle's capacity, not only after the group's own pods
                if not taken and not p.pod_set.one_per_node:
                    failed.add(p.request)
                break
            ps = p.pod_set
            cap.take(node, ps.gpus, ps.cpu, ps.memory)
            taken.append((p, node))
        for p, node in taken:
            ps = p.pod_set
            cap.give(node, ps.gpus, ps.cpu, ps.memory)
        placed = len(taken)
        if placed == len(pending) or js.bound + placed >= g.min_member:
            return False
        missing = g.min_member - js.bound - placed
        if 100.0 * missing / g.min_member <= self.reject_percentage:
            return False
        held = js.bound
        self._reject(sim, g, sim.now, pending[placed], missing)
        if held:
            failed.clear()  # capacity was freed
            doomed.clear()
        else:
            doomed[shape] = placed
        return True

    def _reject(self, sim: Cluster, g: Group, now: float, pod: PodState, missing: int) -> None:
        """PostFilter: the whole group's waiting pods are rejected; the group backs off if configured."""
        self.rejections += 1
        js = g.job
        reason = Reason("placement", "PodGroupRejected",
                        f"PodGroup {js.name} gets rejected: pod {pod.name} is unschedulable and {missing} of "
                        f"minMember {g.min_member} are missing (more than {self.reject_percentage:g} %)",
                        {"missing": missing, "min_member": g.min_member})
        self.room.reject(sim, g, now, reason, timed_out=False)
        if self.pod_group_backoff > 0 and len(js.pods) >= g.min_member:
            g.backoff_until = now + self.pod_group_backoff
            sim.call_at(g.backoff_until, lambda t: sim.request_cycle())

    def _timed_out(self, sim: Cluster, g: Group, now: float) -> None:
        """A waiting pod's Permit timer expired: Unreserve rejects every waiting pod of the group."""
        self.timeouts += 1
        waiting = g.waiting()
        reason = Reason("placement", "PermitTimeout",
                        f"{len(waiting)} of minMember {g.min_member} pods waited at Permit for "
                        f"{self.timeout_of(g.job):g} s; all rejected", {"waiting": len(waiting), "min_member": g.min_member})
        self.room.reject(sim, g, now, reason, timed_out=True)

    # -- diagnosis ---------------------------------------------------------------
    def pending_reason(self, sim: Cluster, js: JobState) -> Reason | None:
        g = self.room.groups.get(js.index)
        pending = [p for p in js.pods if p.node is None and not p.done]
        if g is None or not pending:
            return None
        return permit_reason(sim, self.room, g, pending, self.timeout_of(js), now=sim.now,
                             backoff_until=g.backoff_until, who="PodGroup", size="minMember")


def permit_reason(sim: Cluster, room: WaitingRoom, g: Group, pending: list[PodState], timeout: float, *,
                  now: float, backoff_until: float, who: str, size: str) -> Reason:
    """Why a Permit-based gang still waits: too few pods, backed off, rejected, or waiting at Permit.

    The words name GPUs when the gang's pods ask for GPUs, else the cores and
    bytes they ask for (a CPU-only gang holds cores, not "0 GPUs").
    """
    js = g.job
    k = g.min_member
    if len(js.pods) < k:
        return Reason("placement", "NotEnoughPods", f"{js.spec.gang_label(who)} has {size} {k} but only {len(js.pods)} pods; "
                      f"PreFilter refuses each (\"pre-filter pod {pending[0].name} cannot find enough sibling pods, "
                      f"current pods number: {len(js.pods)}, minMember of group: {k}\")", {size: k, "pods": len(js.pods)})
    if now < backoff_until:
        return Reason("placement", "PodGroupBackoff", f"{who} {js.name} failed recently; backed off until t={backoff_until:g} s",
                      {"until": backoff_until})
    cap = sim.capacity
    free = cap.free_ready_gpus
    dims = asked_dims(js.pods)
    free_words = f"{free} GPUs" if dims == ("gpus",) else in_words(free_room(cap), dims)
    if not room.may_retry(g):
        return Reason("placement", "GangRejected",
                      f"{who} {js.name} was rejected at t={g.failed_at:g} s ({g.rejections} times; last: "
                      f"{g.rejected_because}); it waits for capacity to be freed ({free_words} free now)",
                      {"rejections": g.rejections, "free_gpus": free})
    waiting = g.waiting()
    if waiting and not g.permitted:
        held = requested(waiting)
        gpus = int(held.gpus)
        held_words = f"{gpus} GPUs" if dims == ("gpus",) else in_words(held, dims)
        deadline = "" if g.deadline is None else f"; rejected at t={g.deadline:g} s if not complete"
        return Reason("placement", "WaitingAtPermit",
                      f"{len(waiting)} of {size} {k} pods wait at Permit holding {held_words}; "
                      f"{len(pending)} pods unschedulable ({free_words} free){deadline}",
                      {"waiting": len(waiting), "held_gpus": gpus, "held_cpu": held.cpu, "held_memory": held.memory,
                       "deadline": g.deadline})
    block = f", largest free block {cap.max_free_gpus()} GPUs" if dims == ("gpus",) else ""
    return Reason("placement", "Unschedulable",
                  f"{len(pending)} of {len(js.pods)} pods unschedulable: {free_words} free{block}",
                  {"pending": len(pending), "free_gpus": free})


def _number(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)
