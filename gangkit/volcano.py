"""Gang placement with Volcano's semantics: all of a gang's pods, or none.

Volcano's scheduler works in *sessions* (one per second by default). In each
session its ``allocate`` action takes the waiting jobs in order (priority
first, then jobs not yet ready, then creation time) and, for each one, makes
a *trial* placement of its pods on the current nodes. If at least
``minMember`` pods (the PodGroup's gang size) could be placed, the trial is
committed and the pods are bound; otherwise the trial is discarded and
*nothing is held* until the next session. A waiting gang never sits on GPUs.

What happens when a job does not fit is the ``ordering`` setting:

- ``skip`` (Volcano's behaviour): move on and try the next job, so small jobs
  may start while a big gang waits;
- ``strict``: stop the session at the first job that does not fit, so nobody
  overtakes it (head-of-line blocking: the gang is protected, GPUs idle).

Within a trial, pods are placed one after another on the best-scoring node
(:mod:`gangkit.capacity`), and the trial stops at the first pod that fits
nowhere, as Volcano's allocate does. A job whose ``minMember`` is smaller
than its pod count is *ready* once ``minMember`` pods are bound; its other
pods are placed in later sessions as room appears.

Not modelled here: Volcano queues and the enqueue action, pipelining onto
capacity that is being released, preempt and reclaim (see the reference
page).

Speed: waiting jobs are kept in one heap per *shape* (their pod requests and
gang size). Capacity only shrinks within a session, so once the first job of
a shape fails, all jobs of that shape behind it fail too: a session costs a
few trials per shape plus one per job started, whatever the queue length.
"""

from __future__ import annotations

import heapq
from collections import defaultdict

from .engine import JobState, PodState, Simulation
from .layers import Reason


class VolcanoGang:
    """The ``gang`` placement layer."""

    name = "placement"

    def __init__(self, ordering: str = "skip", period: float = 1.0):
        self.ordering = ordering
        self.period = period
        self._shapes: dict[tuple, list] = defaultdict(list)  # shape -> heap of (-prio, seq, job)
        self._partial: dict[int, JobState] = {}  # jobs with some pods bound and some waiting
        self._blocked_jobs: list[JobState] = []

    # -- socket -------------------------------------------------------------
    def enqueue(self, jobs: list[JobState], now: float) -> None:
        for js in jobs:
            self._add(js)

    def requeue(self, js: JobState, now: float) -> None:
        # the job keeps its place: Volcano orders by the PodGroup's creation time
        self._partial.pop(js.index, None)
        self._add(js)

    def forget(self, js: JobState) -> None:
        self._partial.pop(js.index, None)  # heap entries of a job no longer placing are stale

    def _add(self, js: JobState) -> None:
        if js.bound:
            self._partial[js.index] = js
        else:
            heapq.heappush(self._shapes[self.shape(js)], (-js.priority, js.seq, js.index, js))

    @staticmethod
    def shape(js: JobState) -> tuple:
        """Jobs of one shape succeed or fail together against the same free capacity.

        The shape is taken from the pods (an admission layer may have added a
        flavor's node selector to them).
        """
        return (tuple(p.request for p in js.pods), js.gang_size)

    def unschedulable(self) -> list[PodState]:
        """Pods of the jobs that could not be placed in the last session (what autoscalers see).

        With ``skip`` a session stops trying a shape at its first failure; the
        waiting jobs of the same shape behind it are unschedulable too.
        """
        out = [p for js in self._blocked_jobs for p in js.pods if p.node is None and not p.done]
        if self.ordering == "skip":
            listed = {js.index for js in self._blocked_jobs}
            shapes = {self.shape(js) for js in self._blocked_jobs if not js.bound}
            for shape in sorted(shapes, key=repr):
                for entry in sorted(self._shapes.get(shape, ())):
                    js = entry[3]
                    if js.index not in listed and js.placing and not js.bound and js.state == "Pending":
                        listed.add(js.index)
                        out.extend(p for p in js.pods if p.node is None and not p.done)
        return out

    # -- one session ------------------------------------------------------------
    def cycle(self, sim: Simulation, now: float) -> None:
        heads = []
        for shape, q in self._shapes.items():
            self._drop_stale(q)
            if q:
                heads.append(((q[0][0], 0, q[0][1]), shape))
        for js in self._partial.values():
            ready = 1 if js.bound >= js.gang_size else 0
            heads.append(((-js.priority, ready, js.seq), ("job", js.index)))
        heapq.heapify(heads)
        blocked: list[JobState] = []
        while heads:
            _, key = heapq.heappop(heads)
            if key[0] == "job":
                js = self._partial[key[1]]
                placed = self._allocate(sim, js)
                if not any(p.node is None and not p.done for p in js.pods):
                    del self._partial[key[1]]
                if placed is None and js.bound < js.gang_size:
                    blocked.append(js)
                    if self.ordering == "strict":
                        break
                continue
            q = self._shapes[key]
            js = q[0][3]
            if self._allocate(sim, js) is None:
                blocked.append(js)
                if self.ordering == "strict":
                    break
                continue  # the whole shape fails for the rest of this session
            heapq.heappop(q)
            if any(p.node is None and not p.done for p in js.pods):
                self._partial[js.index] = js
            self._drop_stale(q)
            if q:
                heapq.heappush(heads, ((q[0][0], 0, q[0][1]), key))
        self._blocked_jobs = blocked
        for shape in [s for s, q in self._shapes.items() if not q]:
            del self._shapes[shape]

    @staticmethod
    def _drop_stale(q: list) -> None:
        while q and (q[0][3].bound or q[0][3].state != "Pending" or not q[0][3].placing):
            heapq.heappop(q)

    def _allocate(self, sim: Simulation, js: JobState) -> int | None:
        """Trial-place the job's waiting pods; commit if the gang is then ready.

        Returns the number of pods bound, or None when the trial was discarded.
        """
        waiting = [p for p in js.pods if p.node is None and not p.done]
        need = js.gang_size - js.bound
        cap = sim.capacity
        if need > 0 and sum(sorted(p.pod_set.gpus for p in waiting)[:need]) > cap.free_ready_gpus:
            return None  # not enough free GPUs in total: no trial can succeed
        trial = self.trial(sim, waiting)
        if len(trial) < need or not trial:
            return None
        for pod, node in trial:
            sim.bind(pod, node)
        return len(trial)

    @staticmethod
    def trial(sim: Simulation, pods: list[PodState]) -> list[tuple[PodState, object]]:
        """Where the pods would go, in order, stopping at the first that fits nowhere (no state kept)."""
        cap = sim.capacity
        placed = []
        for p in pods:
            node = cap.choose(*p.request)
            if node is None:
                break
            ps = p.pod_set
            cap.take(node, ps.gpus, ps.cpu, ps.memory)
            placed.append((p, node))
        for p, node in placed:  # discard the statement: give everything back
            ps = p.pod_set
            cap.give(node, ps.gpus, ps.cpu, ps.memory)
        return placed

    # -- diagnosis ---------------------------------------------------------------
    def pending_reason(self, sim: Simulation, js: JobState) -> Reason | None:
        waiting = [p for p in js.pods if p.node is None and not p.done]
        if not waiting:
            return None
        k = js.gang_size
        fit = len(self.trial(sim, waiting)) + js.bound
        cap = sim.capacity
        largest = cap.max_free_gpus()
        if fit >= k:
            msg = (f"gang of {k} fits now but waits behind a job that does not fit (ordering strict)"
                   if self.ordering == "strict" else f"gang of {k} fits now; placed at the next session")
            return Reason("placement", "WaitingForSession", msg, {"gang": k})
        msg = (f"gang of {k} cannot fit: only {fit} of {k} pods would fit now "
               f"({cap.free_ready_gpus} GPUs free, largest free block {largest} GPUs on one node)")
        return Reason("placement", "GangCannotFit", msg, {"gang": k, "would_fit": fit, "free_gpus": cap.free_ready_gpus, "largest_free_block": largest})
