"""The general engine's skeleton: what case e costs before any layer's rule runs.

Case e puts a stream of one-pod jobs through the general engine
(:class:`gangkit.engine.simulation.Simulation`) and compares it with a
minimal SimPy model. To tell the engine's own per-job cost from its layers',
this runs the same stream on the engine's parts alone:

- its events (:class:`gangkit.engine.events.Call` on a SimPy clock): one per
  arrival instant, a cycle after every change (at the engine's ``LATE``
  priority, on the next session boundary, as ``Simulation.request_cycle``
  puts it), one per finish;
- its states (:class:`~gangkit.engine.state.JobState` and
  :class:`~gangkit.engine.state.PodState` for every job);
- its free room (:class:`~gangkit.engine.capacity.FreeCapacity`: ``choose``,
  ``take``, ``give``) and its books (:class:`~gangkit.engine.books.Books`);
- a first-in-first-out line in place of every layer: each cycle binds the
  waiting jobs in arrival order while a node has room, which is what Volcano's
  session does for this stream (``VolcanoGang.places_in_arrival_order``).

No admission layer, no PodGroup phases or shape lines, no wait buckets, no
event records. The jobs start when the general engine starts them, so the
mean wait equals case e's (the smoke test checks it): the difference in cost
per job between the two rows is what the layers and the records add.
"""

from __future__ import annotations

import math
from collections import deque

import simpy

from gangkit.engine.books import Books
from gangkit.engine.capacity import FreeCapacity
from gangkit.engine.events import LATE, Call
from gangkit.engine.state import JobState, PodState
from gangkit.model.precision import TOLERANCE


class Skeleton:
    """One run of a scenario's one-pod jobs on the engine's parts alone (see the module doc)."""

    def __init__(self, scenario):
        s = scenario.settings
        self.env = simpy.Environment()
        self.capacity = FreeCapacity(s.scoring, s.scoring_shape, s.scoring_resources)
        self.books = Books("summary")
        self.period = float(s.session_period)
        for node in scenario.nodes:
            self.capacity.add(node, ready=True)
            self.books.capacity_gpus += node.gpus
        self.specs = sorted(scenario.jobs, key=lambda j: j.submit_time)
        for spec in self.specs:
            if len(spec.pod_sets) != 1 or spec.pod_sets[0].count != 1:
                raise ValueError(f"Job {spec.key}: the skeleton runs one-pod jobs only")
        self.line: deque[JobState] = deque()
        self.cycle_pending = False
        self.next_arrival = 0
        self.unfinished = len(self.specs)
        self.waited = 0.0

    def run(self) -> None:
        if self.specs:
            Call(self.env, self.specs[0].submit_time, self._arrive)
        step = self.env.step
        while self.unfinished:
            step()

    def _arrive(self, now: float) -> None:
        specs, i = self.specs, self.next_arrival
        t = specs[i].submit_time
        self.books.advance(now)
        while i < len(specs) and specs[i].submit_time == t:
            spec = specs[i]
            js = JobState(spec, i, remaining=float(spec.run_time))
            js.pods.append(PodState(js, 0, spec.pod_sets[0], f"{spec.name}-0", remaining=float(spec.run_time)))
            self.line.append(js)
            self.books.waiting_jobs += 1
            i += 1
        self.next_arrival = i
        self._request_cycle(now)
        if i < len(specs):
            Call(self.env, specs[i].submit_time - now, self._arrive)

    def _request_cycle(self, now: float) -> None:
        if self.cycle_pending:
            return
        self.cycle_pending = True
        period = self.period
        at = now if not period else max(now, math.ceil(now / period - TOLERANCE) * period)
        Call(self.env, at - now, self._cycle, priority=LATE)

    def _cycle(self, now: float) -> None:
        self.cycle_pending = False
        line, capacity, books = self.line, self.capacity, self.books
        while line:
            js = line[0]
            pod = js.pods[0]
            ps = pod.pod_set
            node = capacity.choose(*ps.request)
            if node is None:
                break
            line.popleft()
            books.advance(now)
            capacity.take(node, ps.gpus, ps.cpu, ps.memory)
            pod.node, pod.bound_at = node, now
            js.bound += 1
            js.started_at = now
            self.waited += now - js.spec.submit_time
            books.bound_gpus += ps.gpus
            books.useful_gpus += ps.gpus
            books.waiting_jobs -= 1
            books.running_jobs += 1
            Call(self.env, js.remaining, self._finish, args=(js,))

    def _finish(self, js: JobState) -> None:
        now = self.env.now
        books = self.books
        books.advance(now)
        pod = js.pods[0]
        ps = pod.pod_set
        self.capacity.give(pod.node, ps.gpus, ps.cpu, ps.memory)
        pod.node, pod.done = None, True
        books.bound_gpus -= ps.gpus
        books.useful_gpus -= ps.gpus
        books.running_jobs -= 1
        js.state, js.finished_at = "Finished", now
        self.unfinished -= 1
        self._request_cycle(now)
