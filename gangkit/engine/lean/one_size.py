"""The lean engine for the simplest gang runs: one-pod jobs of one size through Volcano's layer alone.

Why this exists: the queueing-theory checks (an M/M/c queue) and the speed
benchmark run millions of jobs of the plainest kind: each job one pod with
the same number of GPUs, one Volcano queue, no admission layer and no node
supplier. For such a run the general engine's machinery (SimPy events,
PodGroup phases, shape heaps, trial placements) changes nothing in the
outcome, yet costs about ten times more per job. This module applies the
very same rules with a plain heap of events:

- a placement layer that says, for this scenario, that each of its cycles
  binds the waiting jobs in arrival order while a node has room for the next
  pod, and does nothing else (``places_in_arrival_order``, the lean engines' question to a placement
  layer, :class:`gangkit.engine.lean.LeanRules`: Volcano's session with the default setup says so for one-pod batch/v1 Jobs
  of one shape, see :meth:`gangkit.volcano.scheduler.VolcanoGang.places_in_arrival_order`);
- every node's GPU count is a multiple of the pod's, so free GPUs anywhere
  mean room for one more pod (no fragmentation); the node is still picked by
  :meth:`gangkit.engine.capacity.FreeCapacity.choose`, as the general engine picks it;
- events of one instant run in SimPy's order (time, then priority, then the
  order they were scheduled), and every time is computed with the same float
  operations, so the GPU-second integrals, waits and timeline are the same
  to the last bit.

:func:`applies` says when a run qualifies (the setting ``engine="general"``
or the fast path ``lean_engine`` off turns the lean engine off; so does a rendezvous timeout on any job: restart
churn, :mod:`gangkit.engine.churn`, is the general engine's); :func:`gangkit.simulate.run_engine` then runs
:class:`OnePodGangRun` and goes to the general engine when
:attr:`OnePodGangRun.needs_general_engine` (a ``jobs``-level run that the
horizon cuts with jobs still in the system or not yet submitted: their rows
need the placement layer's reasons and states). At the ``jobs`` level the
run keeps each job's start, finish and arrival in arrays, and
:func:`gangkit.results.result.build_result` turns them into the same
``jobs`` table the general engine's job states give. tests/engine/test_lean_engine.py
runs both engines on random scenarios and compares every table and figure.
"""

from __future__ import annotations

import heapq
import math
from array import array
from collections import deque

from gangkit.engine.lean.rules import asks
from gangkit.engine.simulation import Simulation
from gangkit.engine.state import JobState, OnePodJobs, PodState
from gangkit.model.precision import ROUNDING, TOLERANCE
from gangkit.model.scenario import Scenario

_NORMAL, _LATE = 1, 2  # SimPy's NORMAL priority, and the engine's LATE (scheduling cycles)
_ARRIVE, _FINISH, _CYCLE = 0, 1, 2
#: the books' GPU-second integrals the loop keeps as locals (Books.integrals' keys, Books.advance's order)
_INTEGRALS = ("capacity", "useful", "held_idle", "free", "not_ready", "waiting_jobs")


def snapshot_from_locals(timeline: list, t: float, C, useful, bound, not_ready, running, waiting) -> None:
    """Books.snapshot at the jobs level, from the loop's locals: a row of the timeline when a count changed
    (the last row replaced when it is of the same instant)."""
    row = (t, C, useful, bound - useful, C - not_ready - bound, not_ready, running, waiting)
    if timeline and timeline[-1][0] == t:
        timeline[-1] = row
    elif not timeline or timeline[-1][1:] != row[1:]:
        timeline.append(row)


def applies(scenario: Scenario, stack) -> bool:
    """Is this a run of one-pod, same-shape jobs through a placement layer alone that places them in
    arrival order (see the module doc)?"""
    s = scenario.settings
    if (s.engine != "auto" or stack.admission or stack.suppliers or s.record not in ("summary", "jobs")
            or not scenario.jobs or not math.isfinite(s.horizon)):
        return False
    first = scenario.jobs[0]
    if len(first.pod_sets) != 1:
        return False
    g, prio, queue = first.pod_sets[0].gpus, first.priority, first.volcano_queue
    if g < 1:
        return False
    for j in scenario.jobs:
        if len(j.pod_sets) != 1 or j.priority != prio or j.volcano_queue != queue:
            return False
        ps = j.pod_sets[0]
        if (ps.count != 1 or ps.gpus != g or ps.cpu or ps.memory or ps.node_selector
                or ps.min_member not in (None, 1) or j.min_member not in (None, 1)
                or j.controller != "batch" or j.min_resources is not None or j.rendezvous_timeout is not None
                or j.snapshot is not None):
            return False
    return (all(n.gpus % g == 0 for n in scenario.nodes) and any(n.gpus >= g for n in scenario.nodes)
            and asks(stack.placement, "places_in_arrival_order", scenario) is True)


class OnePodGangRun(Simulation):
    """The general engine's state and bookkeeping, driven by a plain event heap (see the module doc)."""

    @property
    def needs_general_engine(self) -> bool:
        """A ``jobs``-level run with jobs still in the system, or never submitted, at its end: their rows
        need the placement layer's states and reasons, which only the general engine keeps."""
        return self.record == "jobs" and bool(self.live or self.arrived < self.job_total)

    def run(self, until: float | None = None) -> None:  # noqa: C901 - one loop, kept whole for speed
        specs, finish_events, keep = self._start(until)
        n = unfinished = len(specs)
        g = specs[0].pod_sets[0].gpus
        period, horizon, books, retired = self.stack.placement.period, self.horizon, self.books, self.retired_waits
        # The engine's counters and GPU-second integrals as locals (written back at the end). No node
        # supplier: capacity and not-ready GPUs stay as they are. Which node a pod runs on shows in no
        # table at these recording levels, so only the free GPUs are counted here (room for one pod
        # anywhere is room on some node, as every node's GPUs are a multiple of the pod's).
        C, not_ready, timeline = books.capacity_gpus, books.not_ready_gpus, books.timeline
        free = self.capacity.free_ready_gpus
        i_cap, i_use, i_held, i_free, i_nr, i_wait = self._integrals()
        bound = useful = running = waiting = events = finished = eid = i = 0
        last_t, last_progress, last_end, now = books.last_t, 0.0, 0.0, 0.0
        heap: list = []
        push, pop = heapq.heappush, heapq.heappop
        fifo: deque = deque()
        cycle_pending = False
        # Books.advance is inlined below (dt > 0: add each count times dt to its integral), with
        # the same float operations in the same order, so the integrals are the same to the last bit.
        # Simulation.request_cycle likewise: the next session boundary at or after now (next_boundary,
        # inlined with the same operations), at priority LATE. Books.snapshot is snapshot_from_locals.
        arrivals_due = True  # the arrivals process (started at time 0) resumes at ``now``
        timed_out = False  # it resumes after its timeout: that batch is due, even if float rounding says now < t
        while True:
            if arrivals_due:  # Simulation._arrivals: every batch due now, then the timeout to the next
                arrivals_due = False
                while i < n:
                    t = specs[i].submit_time
                    if timed_out:
                        timed_out = False
                    elif t > now:
                        eid += 1
                        push(heap, (now + (t - now), _NORMAL, eid, _ARRIVE, 0, 0.0, 0.0))
                        break
                    first = i
                    while i < n and specs[i].submit_time == t:
                        i += 1
                    events += i - first  # submitted
                    waiting += i - first
                    dt = now - last_t
                    if dt > 0:
                        i_cap += C * dt; i_use += useful * dt; i_held += (bound - useful) * dt
                        i_free += (C - not_ready - bound) * dt; i_nr += not_ready * dt; i_wait += waiting * dt
                        last_t = now
                    for j in range(first, i):
                        fifo.append((j, now))
                    if keep:
                        snapshot_from_locals(timeline, now, C, useful, bound, not_ready, running, waiting)
                    if not cycle_pending:
                        cycle_pending = True
                        _boundary_k = math.ceil(now / period) if period else 0
                        at = now if not period or (_boundary_k >= 1 and now - (_boundary_k - 1) * period <= min(TOLERANCE * period, ROUNDING * now)) else max(now, _boundary_k * period)
                        eid += 1
                        push(heap, (now + (at - now), _LATE, eid, _CYCLE, 0, 0.0, 0.0))
            if not unfinished or not heap or heap[0][0] > horizon:
                break
            now, _, _, kind, j, start, enter = pop(heap)
            if kind == _FINISH or (kind == _CYCLE and fifo and free >= g):  # a finish, or a session that binds
                dt = now - last_t
                if dt > 0:
                    i_cap += C * dt; i_use += useful * dt; i_held += (bound - useful) * dt
                    i_free += (C - not_ready - bound) * dt; i_nr += not_ready * dt; i_wait += waiting * dt
                    last_t = now
            if kind == _FINISH:
                useful -= g
                free += g
                bound -= g
                events += finish_events[j]
                last_progress = now
                running -= 1
                unfinished -= 1
                finished += 1
                if now > last_end:
                    last_end = now
                retired.append(start - specs[j].submit_time)
                if keep:
                    self.finish_s[j] = now
                    snapshot_from_locals(timeline, now, C, useful, bound, not_ready, running, waiting)
                if not cycle_pending:
                    cycle_pending = True
                    _boundary_k = math.ceil(now / period) if period else 0
                    at = now if not period or (_boundary_k >= 1 and now - (_boundary_k - 1) * period <= min(TOLERANCE * period, ROUNDING * now)) else max(now, _boundary_k * period)
                    eid += 1
                    push(heap, (now + (at - now), _LATE, eid, _CYCLE, 0, 0.0, 0.0))
            elif kind == _ARRIVE:
                arrivals_due = timed_out = True
            else:  # a Volcano session: enqueue every Pending PodGroup, then allocate in creation order
                cycle_pending = False
                changed = False
                while fifo and free >= g:
                    j, enter = fifo.popleft()
                    free -= g
                    bound += g
                    events += 2  # pod_bound, job_started
                    last_progress = now
                    waiting -= 1
                    running += 1
                    useful += g
                    if keep:
                        self.start_s[j] = now
                        self.enter_s[j] = enter
                    eid += 1
                    push(heap, (now + float(specs[j].run_time), _NORMAL, eid, _FINISH, j, now, enter))
                    changed = True
                if changed and keep:
                    snapshot_from_locals(timeline, now, C, useful, bound, not_ready, running, waiting)
        self._write_back(now, bool(heap), arrived=i, events=events, counts=(bound, useful, running, waiting),
                         integrals=(i_cap, i_use, i_held, i_free, i_nr, i_wait), last_t=last_t,
                         last_progress=last_progress, last_end=last_end, unfinished=unfinished, finished=finished)
        self._live_at_end(heap, fifo, g)
        self._close_run(g)

    def _start(self, until: float | None) -> tuple[list, list[int], bool]:
        """The run's jobs in arrival order (a stable sort, as Simulation.run's), the events each job's end
        counts (``pod_finished`` too for an independent job), and whether the run keeps the ``jobs``
        level's per-job arrays (made here)."""
        if until is not None:
            raise ValueError(f"{type(self).__name__} runs to the end only (diagnosis replays with the general engine)")
        specs = sorted(self.scenario.jobs, key=lambda j: j.submit_time)  # stable, as Simulation.run
        self._specs = specs
        n = self.job_total = self.unfinished = len(specs)
        finish_events = [2 if s.progress == "independent" else 1 for s in specs]  # (pod_finished,) finished
        keep = self.record == "jobs"
        if keep:
            self.start_s = array("d", bytes(8 * n))
            self.finish_s = array("d", bytes(8 * n))
            self.enter_s = array("d", bytes(8 * n))
        return specs, finish_events, keep

    def _integrals(self) -> tuple[float, ...]:
        """The books' GPU-second integrals, in the order the loop keeps them (and _write_back writes them)."""
        return tuple(self.books.integrals[k] for k in _INTEGRALS)

    def _write_back(self, now: float, events_left: bool, *, arrived: int, events: int, counts: tuple, integrals: tuple,
                    last_t: float, last_progress: float, last_end: float, unfinished: int, finished: int) -> None:
        """The loop's locals back into the engine's state, and the end of the run as Simulation.run finds it."""
        books = self.books
        self.arrived = arrived
        self.event_count += events
        books.bound_gpus, books.useful_gpus, books.running_jobs, books.waiting_jobs = counts
        books.integrals.update(zip(_INTEGRALS, integrals))
        books.last_t = last_t
        self.last_progress, self.last_end = last_progress, last_end
        self.unfinished = unfinished
        self.retired_states["Finished"] += finished
        if unfinished == 0:
            self.end_time = max(last_end, now)
        else:
            if not events_left:
                self.quiescent_at = now
            self.end_time = self.horizon
        self.stalled = (unfinished > 0 and self.quiescent_at is None
                        and self.end_time - last_progress >= self.settings.stall_window)
        self.retire_jobs = True  # jobs that ended are retired; only those still in the system get a JobState

    def _close_run(self, gpus) -> None:
        """After the live jobs' states are made: the jobs' columns (``jobs`` level), then the books closed."""
        if self.record == "jobs" and not self.needs_general_engine:
            self.one_pod_jobs = OnePodJobs(self._specs, gpus, self.start_s, self.finish_s, self.enter_s)
        books = self.books
        books.advance(self.end_time)
        self._close_books(self.end_time)
        books.snapshot(self.end_time, force=True)

    def _running_state(self, j: int, start: float, enter: float, node) -> JobState:
        """The state of job ``j``, running on ``node`` since ``start`` (it reached placement at ``enter``)."""
        spec = self._specs[j]
        g = spec.pod_sets[0].gpus
        js = JobState(spec, j, remaining=float(spec.run_time), placing=True, layer="placement", layer_enter=enter)
        self.close_wait(js, start)  # its wait in placement, charged as the general engine charges it at the start
        js.layer = ""  # started: in no layer (Simulation._mark_started)
        js.bound, js.started_at, js.placed_at, js.progressing, js.bound_gpus, js.bound_since = 1, start, start, True, g, start
        pod = PodState(js, 0, spec.pod_sets[0], f"{spec.name}-0", created=enter, node=node, bound_at=start,
                       remaining=float(spec.run_time))
        if spec.progress == "independent":
            pod.progress_since = start
        else:
            js.progress_since = start
        js.pods.append(pod)
        node.pods.add(pod)
        return js

    def _waiting_state(self, j: int, enter: float) -> JobState:
        """The state of job ``j``, waiting in placement since ``enter``."""
        spec = self._specs[j]
        js = JobState(spec, j, remaining=float(spec.run_time), placing=True, layer="placement", layer_enter=enter)
        js.pods.append(PodState(js, 0, spec.pod_sets[0], f"{spec.name}-0", created=enter, remaining=float(spec.run_time)))
        return js

    def _live_at_end(self, heap: list, fifo: deque, g: int) -> None:
        """Job states, in arrival order, for the jobs still running or waiting when the run ends.

        The running pods are put on nodes now, in the order they started, by the general engine's
        node choice (so the capacity left for the waiting jobs' reasons is right in total).
        """
        cap = self.capacity
        running = sorted((eid, j, start, enter) for _, _, eid, kind, j, start, enter in heap if kind == _FINISH)
        live: dict[int, JobState] = {}
        for _, j, start, enter in running:  # finish events were scheduled in start order
            node = cap.choose(g, 0.0, 0, ())
            cap.take(node, g, 0.0, 0)
            live[j] = self._running_state(j, start, enter, node)
        for j, enter in fifo:
            live[j] = self._waiting_state(j, enter)
        self.live = {j: live[j] for j in sorted(live)}
