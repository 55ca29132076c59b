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
_INTEGRALS = ("capacity", "useful", "held_idle", "free", "not_ready")


def snapshot_from_locals(timeline: list, t: float, C, useful, bound, not_ready, running, waiting) -> None:
    """Books.snapshot at the jobs level, from the loop's locals: a row of the timeline when a count changed
    (the last row replaced when it is of the same instant)."""
    row = (t, C, useful, bound - useful, C - not_ready - bound, not_ready, running, waiting)
    if timeline and timeline[-1][0] == t:
        timeline[-1] = row
    elif not timeline or timeline[-1][1:] != row[1:]:
        timeline.append(row)


def arrival_columns(specs: list) -> tuple[list, list]:
    """What the loops read of each job, as plain lists: the submit times, with ``inf`` after the last job (a
    scan for due jobs then stops without an index test), and the run times as floats."""
    return [s.submit_time for s in specs] + [math.inf], [float(s.run_time) for s in specs]


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

    def run(self, until: float | None = None) -> None:
        """The event loop, in SimPy's order: each turn, the arrivals due now, the session they or a finish ask for,
        then the next event: a finish, the arrivals' timeout, or a session (binds the oldest waiting jobs)."""
        at, run_s, finish_events, keep, period, horizon, retired, timeline, C, not_ready = self._setup(until)
        n = unfinished = len(run_s)
        g = self._specs[0].pod_sets[0].gpus
        free = self.capacity.free_ready_gpus  # only free GPUs: room for one pod anywhere is room on some node
        i_cap, i_use, i_held, i_free, i_nr = self._integrals()
        bound = useful = running = waiting = events = finished = eid = i = 0
        last_t, last_progress, last_end, now = self.books.last_t, 0.0, 0.0, 0.0
        heap, fifo, push, pop = [], deque(), heapq.heappush, heapq.heappop
        cycle_pending, timed_out, arrivals_due, ask = False, False, True, False  # arrivals start at time 0
        while True:
            if arrivals_due:  # Simulation._arrivals: the batches (jobs of one submit time) due now, then the timeout
                first, due = i, (at[i] if timed_out and at[i] > now else now)  # to the next; after the timeout its
                while at[i] <= due:  # batch is due even if float rounding puts now before it (``at`` ends with inf)
                    i += 1
                arrivals_due = timed_out = False
                if i > first:
                    events, waiting = events + i - first, waiting + i - first  # submitted
                    if (dt := now - last_t) > 0:  # the books advance (Books.advance inlined, same float operations)
                        i_cap += C * dt; i_use += useful * dt; i_held += (bound - useful) * dt
                        i_free += (C - not_ready - bound) * dt; i_nr += not_ready * dt; last_t = now
                    for j in range(first, i):
                        fifo.append((j, now))
                    if keep:
                        snapshot_from_locals(timeline, now, C, useful, bound, not_ready, running, waiting)
                    ask = True
                if i < n:
                    eid += 1
                    push(heap, (now + (at[i] - now), _NORMAL, eid, _ARRIVE, 0, 0.0, 0.0))
            if ask and not cycle_pending:  # Simulation.request_cycle: a session at next_boundary(now, period), inlined
                boundary = math.ceil(now / period) if period else 0  # (an ask while one is pending: that session)
                cycle_at = now if not period or (boundary >= 1 and now - (boundary - 1) * period <= min(TOLERANCE * period, ROUNDING * now)) else max(now, boundary * period)
                cycle_pending, ask, eid = True, False, eid + 1
                push(heap, (now + (cycle_at - now), _LATE, eid, _CYCLE, 0, 0.0, 0.0))
            if not unfinished or not heap or heap[0][0] > horizon:
                break
            now, _, _, kind, j, start, enter = pop(heap)
            if kind == _FINISH or (kind == _CYCLE and fifo and free >= g):  # a finish, or a session that binds
                if (dt := now - last_t) > 0:
                    i_cap += C * dt; i_use += useful * dt; i_held += (bound - useful) * dt
                    i_free += (C - not_ready - bound) * dt; i_nr += not_ready * dt; last_t = now
            if kind == _FINISH:  # (events come in time order: this finish is the last so far)
                useful, free = useful - g, free + g  # (at most three names a line: no tuple is built)
                bound, running = bound - g, running - 1
                unfinished, finished, events = unfinished - 1, finished + 1, events + finish_events[j]
                last_progress, last_end, ask = now, now, True
                retired.append(start - at[j])
                if keep:
                    self.finish_s[j] = now
                    snapshot_from_locals(timeline, now, C, useful, bound, not_ready, running, waiting)
            elif kind == _ARRIVE:
                arrivals_due = timed_out = True
            else:  # a Volcano session: enqueue every Pending PodGroup, then allocate in creation order
                cycle_pending, ask, k = False, False, 0  # (the asks since the last session are answered)
                while fifo and free >= g:  # the oldest waiting job starts now, with its finish event
                    j, enter = fifo.popleft()
                    free, k, eid = free - g, k + 1, eid + 1
                    if keep:
                        self.start_s[j], self.enter_s[j] = now, enter
                    push(heap, (now + run_s[j], _NORMAL, eid, _FINISH, j, now, enter))
                if k:
                    bound, useful = bound + k * g, useful + k * g
                    waiting, running = waiting - k, running + k
                    events, last_progress = events + 2 * k, now  # pod_bound, job_started
                    if keep:
                        snapshot_from_locals(timeline, now, C, useful, bound, not_ready, running, waiting)
        self._write_back(now, bool(heap), i, events, (bound, useful, running, waiting), (i_cap, i_use, i_held, i_free,
                         i_nr), last_t, last_progress, last_end, unfinished, finished)
        self._live_at_end(heap, fifo, g)
        self._close_run(g)

    def _setup(self, until: float | None) -> tuple:
        """The run's jobs in arrival order (a stable sort, as Simulation.run's, kept as ``_specs``), and what the
        loop reads as locals: their :func:`arrival_columns`, the events each job's end counts (``pod_finished``
        too for an independent job), whether the run keeps the ``jobs`` level's per-job arrays (made here),
        the session period, the horizon, the retired waits, the timeline, the capacity and the not-ready GPUs."""
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
        books = self.books
        return (*arrival_columns(specs), finish_events, keep, self.stack.placement.period, self.horizon, self.retired_waits,
                books.timeline, books.capacity_gpus, books.not_ready_gpus)

    def _integrals(self) -> tuple[float, ...]:
        """The books' GPU-second integrals, in the order the loop keeps them (and _write_back writes them)."""
        return tuple(self.books.integrals[k] for k in _INTEGRALS)

    def _write_back(self, now: float, events_left: bool, arrived: int, events: int, counts: tuple, integrals: tuple,
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
