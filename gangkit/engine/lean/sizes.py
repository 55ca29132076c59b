"""The lean engine for one-pod jobs of several shapes through Volcano's layer alone.

:mod:`gangkit.engine.lean.one_size` runs one-pod jobs of one shape, where free GPUs
anywhere mean room for the next pod. Mix shapes (lesson 04's one-GPU jobs
and whole-node jobs of one 8-GPU pod, benchmark case f) and which node a pod
lands on decides whether a bigger pod fits later: fragmentation. This engine
keeps the nodes' free room in the general engine's own
:class:`~gangkit.engine.capacity.FreeCapacity`, picks every node with its
:meth:`~gangkit.engine.capacity.FreeCapacity.choose` (the Score of the
scenario's ``scoring``), and otherwise applies the rule the placement layer
states for such runs (``one_pod_order``, the lean engines' question to a placement layer,
:class:`gangkit.engine.lean.LeanRules`;
Volcano's default setup, :meth:`gangkit.volcano.scheduler.VolcanoGang.one_pod_order`):

- each session visits the waiting jobs in arrival order (``largest-first``:
  most GPUs first, then arrival) and binds each on the node ``choose`` picks;
- a job that fits nowhere is passed over (``skip``), and so is every later
  job of its shape in that session (a session only takes room away, so they
  cannot fit either), or it ends the session (``strict``).

The waiting jobs are kept in one first-in-first-out line per shape, so a
session costs the jobs it binds plus one look per shape, whatever the
length of the lines. Events of one instant run in SimPy's order and every
time and integral is computed with the general engine's float operations,
as in :mod:`gangkit.engine.lean.one_size`; tests/engine/test_lean_engine.py compares both
engines on random scenarios, table by table.
"""

from __future__ import annotations

import heapq
import math
from array import array
from collections import defaultdict, deque
from collections.abc import Callable

from gangkit.engine.lean.one_size import OnePodGangRun, snapshot_from_locals
from gangkit.engine.lean.rules import asks
from gangkit.engine.state import JobState
from gangkit.model.precision import ROUNDING, TOLERANCE
from gangkit.model.scenario import Scenario

_NORMAL, _LATE = 1, 2  # SimPy's NORMAL priority, and the engine's LATE (scheduling cycles)
_ARRIVE, _FINISH, _CYCLE = 0, 1, 2
#: the visiting rules :class:`OnePodShapesRun` applies (see the module doc)
ORDERS = ("skip", "strict", "largest-first")


def applies(scenario: Scenario, stack) -> bool:
    """Is this a run of one-pod jobs, asking for GPUs only, through a placement layer alone whose
    sessions follow one of :data:`ORDERS` for them (see the module doc)?"""
    s = scenario.settings
    if (s.engine != "auto" or stack.admission or stack.suppliers or s.record not in ("summary", "jobs")
            or not scenario.jobs or not math.isfinite(s.horizon)):
        return False
    first = scenario.jobs[0]
    prio, queue = first.priority, first.volcano_queue
    most = max((n.gpus for n in scenario.nodes), default=0)
    for j in scenario.jobs:
        if len(j.pod_sets) != 1 or j.priority != prio or j.volcano_queue != queue:
            return False
        ps = j.pod_sets[0]
        if (ps.count != 1 or not 1 <= ps.gpus <= most or ps.cpu or ps.memory or ps.node_selector
                or ps.one_per_node or ps.min_member not in (None, 1) or j.min_member not in (None, 1)
                or j.controller != "batch" or j.min_resources is not None or j.rendezvous_timeout is not None
                or j.snapshot is not None):
            return False
    return asks(stack.placement, "one_pod_order", scenario) in ORDERS


class OnePodShapesRun(OnePodGangRun):
    """The general engine's state and bookkeeping, driven by a plain event heap (see the module doc)."""

    def run(self, until: float | None = None) -> None:
        """:meth:`OnePodGangRun.run`'s loop with the nodes' free room in the capacity, a line of waiting jobs per shape."""
        at, run_s, finish_events, keep, period, horizon, retired, timeline, C, not_ready = self._setup(until)
        n = unfinished = len(run_s)
        heap, push, pop = [], heapq.heappush, heapq.heappop
        gpus, lines, session = self._session_for(run_s, heap, keep)
        smallest, give, free = min(gpus), self.capacity.give, self.capacity.free_ready_gpus
        i_cap, i_use, i_held, i_free, i_nr = self._integrals()
        bound = useful = running = waiting = events = finished = eid = i = 0
        last_t, last_progress, last_end, now = self.books.last_t, 0.0, 0.0, 0.0
        cycle_pending, timed_out, arrivals_due, ask = False, False, True, False  # arrivals start at time 0
        while True:
            if arrivals_due:  # Simulation._arrivals, as in OnePodGangRun.run
                first, due = i, (at[i] if timed_out and at[i] > now else now)
                while at[i] <= due:
                    i += 1
                arrivals_due = timed_out = False
                if i > first:
                    events, waiting = events + i - first, waiting + i - first  # submitted
                    if (dt := now - last_t) > 0:  # the books advance
                        i_cap += C * dt; i_use += useful * dt; i_held += (bound - useful) * dt
                        i_free += (C - not_ready - bound) * dt; i_nr += not_ready * dt; last_t = now
                    for j in range(first, i):
                        lines[gpus[j]].append((j, now))
                    if keep:
                        snapshot_from_locals(timeline, now, C, useful, bound, not_ready, running, waiting)
                    ask = True
                if i < n:
                    eid += 1
                    push(heap, (now + (at[i] - now), _NORMAL, eid, _ARRIVE, 0, 0.0, 0.0, None))
            if ask and not cycle_pending:  # Simulation.request_cycle, as in OnePodGangRun.run
                boundary = math.ceil(now / period) if period else 0
                cycle_at = now if not period or (boundary >= 1 and now - (boundary - 1) * period <= min(TOLERANCE * period, ROUNDING * now)) else max(now, boundary * period)
                cycle_pending, ask, eid = True, False, eid + 1
                push(heap, (now + (cycle_at - now), _LATE, eid, _CYCLE, 0, 0.0, 0.0, None))
            if not unfinished or not heap or heap[0][0] > horizon:
                break
            now, _, _, kind, j, start, enter, node = pop(heap)
            if kind == _FINISH:  # (events come in time order: this finish is the last so far)
                if (dt := now - last_t) > 0:  # the books advance before any count changes
                    i_cap += C * dt; i_use += useful * dt; i_held += (bound - useful) * dt
                    i_free += (C - not_ready - bound) * dt; i_nr += not_ready * dt; last_t = now
                g = gpus[j]
                give(node, g, 0.0, 0)
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
            else:  # a Volcano session: its visits and binds (see the module doc); the asks till now are answered
                cycle_pending = ask = False
                k, taken, eid = session(free, now, eid) if waiting and free >= smallest else (0, 0, eid)
                if not k:
                    continue
                if (dt := now - last_t) > 0:
                    i_cap += C * dt; i_use += useful * dt; i_held += (bound - useful) * dt
                    i_free += (C - not_ready - bound) * dt; i_nr += not_ready * dt; last_t = now
                free, bound, useful = free - taken, bound + taken, useful + taken
                waiting, running = waiting - k, running + k
                events, last_progress = events + 2 * k, now  # pod_bound, job_started
                if keep:
                    snapshot_from_locals(timeline, now, C, useful, bound, not_ready, running, waiting)
        self._write_back(now, bool(heap), i, events, (bound, useful, running, waiting), (i_cap, i_use, i_held, i_free,
                         i_nr), last_t, last_progress, last_end, unfinished, finished)
        self._live_on_nodes(heap, lines)
        self._close_run(array("q", gpus))

    def _session_for(self, run_s: list, heap: list, keep: bool) -> tuple[list, dict, Callable]:
        """Each job's GPUs, the lines of waiting jobs (GPUs of the pod -> that shape's jobs, (index, arrival),
        oldest first) and the run's session, ``session(free, now, eid)``: its visits and binds. It visits the waiting jobs in
        the order ``order`` says (the oldest head of the shapes' lines, or with ``largest-first`` the head of
        the biggest shape), binds each on the node ``FreeCapacity.choose`` picks and pushes its finish event
        (``eid`` counting on); a job that fits nowhere passes over its shape (``skip``, ``largest-first``)
        or ends the session (``strict``). It returns the jobs bound, the GPUs they took and the last event
        id used. (A closure made once per run: what it reads is bound here, not looked up per session.)"""
        gpus, lines = [s.pod_sets[0].gpus for s in self._specs], defaultdict(deque)
        choose, take, push = self.capacity.choose, self.capacity.take, heapq.heappush
        order = asks(self.stack.placement, "one_pod_order", self.scenario)
        strict, largest = order == "strict", order == "largest-first"
        start_s, enter_s = (self.start_s, self.enter_s) if keep else (None, None)

        def session(free: int, now: float, eid: int) -> tuple[int, int, int]:
            k = taken = 0
            tried = list(filter(None, lines.values()))  # the shapes with jobs waiting, not yet passed over
            while tried:
                best = tried[0]
                for line in tried:
                    if (gpus[line[0][0]] > gpus[best[0][0]]) if largest else (line[0][0] < best[0][0]):
                        best = line
                j, enter = best[0]
                g = gpus[j]
                target = choose(g, 0.0, 0, ()) if free - taken >= g else None
                if target is None:
                    if strict:
                        break
                    tried.remove(best)
                    continue
                best.popleft()
                if not best:
                    tried.remove(best)
                take(target, g, 0.0, 0)
                k, taken, eid = k + 1, taken + g, eid + 1
                if keep:
                    start_s[j], enter_s[j] = now, enter
                push(heap, (now + run_s[j], _NORMAL, eid, _FINISH, j, now, enter, target))
            return k, taken, eid

        return gpus, lines, session

    def _live_on_nodes(self, heap: list, lines: dict) -> None:
        """Job states, in arrival order, for the jobs still running or waiting when the run ends.

        A running pod is on the node it was bound to: the capacity already
        counts it, and the node's ``pods`` (left empty during the run: only
        the free room matters then) get the pod states made here.
        """
        running = sorted((eid, j, start, enter, node) for _, _, eid, kind, j, start, enter, node in heap if kind == _FINISH)
        live: dict[int, JobState] = {}
        for _, j, start, enter, node in running:
            live[j] = self._running_state(j, start, enter, node)
        for line in lines.values():
            for j, enter in line:
                live[j] = self._waiting_state(j, enter)
        self.live = {j: live[j] for j in sorted(live)}
