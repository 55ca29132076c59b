"""The simulation engine: one SimPy environment, the cluster's state, and the bookkeeping.

Picture a film of the cluster in which only the frames where something
changes are kept: a job arrives, a pod is bound, a job finishes, a node
becomes ready. Between two frames nothing happens, so the engine jumps from
one to the next; the cost of a run grows with the number of changes, never
with the simulated time or with the length of the queues.

After the changes of one instant, the engine runs a *scheduling cycle*: each
admission layer (in stack order) admits what it can, then the placement
layer binds pods, then node suppliers look at what is still unschedulable.
Cycles take no simulated time. A placement layer with a period (Volcano's
scheduling session) has its cycle aligned to that period, and only while
something changed.

The run ends when the last job has finished, or at the horizon. When no
future event can change anything (*quiescence*) while jobs still wait, the
state stays as it is until the horizon; if some of those jobs hold GPUs
without progressing, the run is *deadlocked* (the verdict and its
definition: :mod:`gangkit.results.deadlock`).

GPU accounting, at every instant: useful + held-idle + free + not-ready =
capacity. *Useful* GPUs belong to progressing pods; *held-idle* GPUs are
bound to a job that cannot progress (a sync job missing a worker).

Restart churn (started pods that give up their rendezvous, the Job
controller's backoff and backoffLimit) is :mod:`gangkit.engine.churn`;
:meth:`Simulation.run` installs it only when a job has a rendezvous timeout.
"""

from __future__ import annotations

import dataclasses
import math
import random
from array import array
from collections import Counter
from typing import Callable

import simpy
from simpy.events import NORMAL

from gangkit.engine import waits
from gangkit.engine.books import Books, PendingSamples
from gangkit.engine.capacity import FreeCapacity
from gangkit.engine.churn import RestartChurn
from gangkit.engine.events import AFTER_CYCLES, LATE, URGENT, Call
from gangkit.engine.job_stops import JobStops
from gangkit.engine.node_changes import NodeChanges
from gangkit.engine.quiescence import nothing_can_change
from gangkit.engine.resume import created_before, resume_job
from gangkit.engine.state import JobState, NodeState, OnePodJobs, PodState
from gangkit.model.precision import ROUNDING, TOLERANCE
from gangkit.model.reasons import Reason
from gangkit.model.scenario import Scenario


class Simulation(NodeChanges, JobStops):
    """One run of a scenario through a stack. Use :func:`gangkit.simulate` rather than this class.

    Layers see it as a :class:`~gangkit.engine.sockets.Cluster`: ``now``,
    ``capacity``, ``rng`` and the calls below that change the state.
    """

    def __init__(self, scenario: Scenario, stack):
        self.scenario = scenario
        self.settings = scenario.settings
        self.stack = stack
        self.env = simpy.Environment()
        self.rng = random.Random(self.settings.seed)
        s = self.settings
        self.capacity = FreeCapacity(s.scoring, s.scoring_shape, s.scoring_resources)
        self.record = self.settings.record
        self.fast_paths = s.fast_paths  # gangkit's exact shortcuts (gangkit.model.fast_paths)
        self.horizon = float(self.settings.horizon)
        self.jobs: list[JobState] = []
        self.retire_jobs = self.record == "summary"  # jobs that end are dropped, keeping only their figures
        self.live: dict[int, JobState] = {}  # summary level: jobs that have arrived and not ended
        self.retired_states: Counter = Counter()
        self.retired_waits = array("d")
        self.retired_censored = 0
        self.arrived = 0
        self.job_total = 0
        self.last_end = 0.0
        self.events: list[tuple] = []
        self.event_count = 0
        if self.record != "full":  # the events are counted, not kept: one choice for the run (see record_event)
            self.record_event = self._count_event
        self.pod_rows: list[tuple] = []
        self.node_stages: dict[str, dict[str, float]] = {}
        self.removed_at: dict[int, float] = {}  # NodeState.index -> when the node was removed (nodes table)
        self.admission_rows: list[tuple] = []  # (time, job, layer, seconds in that layer) per admission before the start
        self.pending_samples = PendingSamples()  # unschedulable counts after each cycle (full recording only)
        self._pod_seq = 0
        self._job_seq = 0
        self._cycle_pending = False
        self._changed = False
        self.books = Books(self.record)  # GPU and job counts, their integrals over time, the timeline
        self.one_pod_jobs: OnePodJobs | None = None  # the lean engine's job columns (jobs level, all finished)
        self.unfinished = 0
        self.end_time: float | None = None
        self.quiescent_at: float | None = None
        self.last_progress = 0.0  # last time a job started, finished or failed, or a pod failed (gangkit.engine.churn)
        self.stalled = False
        self.churn: RestartChurn | None = None  # rendezvous timeouts and the Job controller's backoff, when a job has one
        for node in scenario.nodes:
            self.capacity.add(node, ready=True)
            self.books.capacity_gpus += node.gpus
        self.books.snapshot(0.0)

    @property
    def now(self) -> float:
        """The simulated time, in seconds."""
        return self.env.now

    # ------------------------------------------------------------------ run
    def run(self, until: float | None = None) -> None:
        """Run to the end. With ``until``, stop after the events of that instant and keep the
        live state as it is (no closing of the books): what :mod:`gangkit.results.diagnosis` replays."""
        specs = sorted(self.scenario.jobs, key=lambda j: j.submit_time)  # stable: list order at ties
        self._specs = specs
        self.job_total = len(specs)
        if any(j.rendezvous_timeout is not None and j.progress == "sync" for j in specs):
            self.churn = RestartChurn(self)  # a run without rendezvous timeouts runs none of it
        self._resuming = any(j.snapshot is not None for j in specs)  # a live cluster's snapshot: see _resume
        self._ready_wakes = any(getattr(layer, "waits_for_ready_pods", True) for layer in self.stack.admission)
        if not self.retire_jobs:
            self.jobs = [JobState(spec, i, remaining=float(spec.run_time)) for i, spec in enumerate(specs)]
        self.unfinished = len(specs)
        for supplier in self.stack.suppliers:
            start = getattr(supplier, "start", None)  # optional (gangkit.engine.sockets.NodeSupplier)
            if start is not None:
                start(self, specs)
        env = self.env
        if not self.fast_paths.arrival_callbacks:  # the plain form: a process waiting from batch to batch
            env.process(self._arrivals())
        elif specs:
            self._next_arrival = 0
            first = specs[0].submit_time
            if first > env.now:  # the process's first step would schedule the timeout to the first batch
                Call(env, first - env.now, self._arrive)
            else:  # the process's first step, at SimPy's URGENT priority, would submit the first batch
                Call(env, 0, self._arrive, priority=URGENT)
        horizon = self.horizon
        last = horizon if until is None else min(horizon, until)  # the last instant whose events run
        peek, step = env.peek, env.step
        while self.unfinished:
            if peek() > last:
                break
            step()
        if until is not None:
            return
        now = env.now
        if self.unfinished == 0:
            self.end_time = max(self.last_end, now)  # a late rejection is an event of the run too
        else:
            if nothing_can_change(env):  # the first condition of a deadlock (gangkit.results.deadlock)
                self.quiescent_at = now
            self.end_time = horizon
        self.stalled = (self.unfinished > 0 and self.quiescent_at is None
                        and self.end_time - self.last_progress >= self.settings.stall_window)
        self.books.advance(self.end_time)
        self._close_books(self.end_time)
        self.books.snapshot(self.end_time, force=True)

    def _arrivals(self):
        """Submit jobs at their submit times; jobs with one submit time arrive together.

        At the ``summary`` recording level a job's state is made when it
        arrives and dropped when it ends (:meth:`_retire`), so memory follows
        the jobs in the system, not the length of the run.
        """
        specs = self._specs
        i = 0
        while i < len(specs):
            t = specs[i].submit_time
            if t > self.env.now:
                yield self.env.timeout(t - self.env.now)
            batch = []
            while i < len(specs) and specs[i].submit_time == t:
                if self.retire_jobs:
                    js = JobState(specs[i], i, remaining=float(specs[i].run_time))
                    self.live[i] = js
                else:
                    js = self.jobs[i]
                batch.append(js)
                i += 1
                self.arrived = i
            self._submit(batch)

    def _arrive(self, now: float) -> None:
        """One batch of :meth:`_arrivals` (the jobs of one submit time), then the event of the next batch.

        The same steps at the same instants as the process: the next batch's
        event is scheduled after this batch's submission, as the process's
        timeout is, so every event keeps its place in SimPy's order.
        """
        specs = self._specs
        n = len(specs)
        i = self._next_arrival
        t = specs[i].submit_time
        batch = []
        retire, live, jobs = self.retire_jobs, self.live, self.jobs
        while i < n and specs[i].submit_time == t:
            if retire:
                spec = specs[i]
                js = live[i] = JobState(spec, i, remaining=float(spec.run_time))
            else:
                js = jobs[i]
            batch.append(js)
            i += 1
        self.arrived = self._next_arrival = i
        self._submit(batch)
        if i < n:
            t = specs[i].submit_time
            env = self.env
            if t > env.now:
                Call(env, t - env.now, self._arrive)
            else:  # (not reached: the times are sorted and this batch took every equal one) as the process
                self._arrive(env.now)

    def _retire(self, js: JobState, ended_at: float | None = None) -> None:
        """A job reached its terminal state: at the ``summary`` level keep only its figures. A job that never
        started waits until it ended: ``ended_at`` (a Failed job), else its deactivation. Its pods are dropped:
        each points back at its job, and that cycle would keep both until a full collection (benchmark case b)."""
        if not self.retire_jobs:
            return
        self.live.pop(js.index, None)
        js.pods = []
        self.retired_states[js.state] += 1
        if js.state == "Rejected":
            return
        start = js.started_at
        if start is None:
            self.retired_censored += 1
            start = js.deactivated_at if ended_at is None else ended_at
        self.retired_waits.append(start - js.spec.submit_time)

    def all_jobs(self) -> list[JobState]:
        """Every job state still held: all jobs, or at the ``summary`` level those not yet ended."""
        return self.jobs if not self.retire_jobs else list(self.live.values())

    # -------------------------------------------------------------- changes
    def _submit(self, batch: list[JobState]) -> None:
        now = self.env.now
        admitted = []
        for js in batch:
            self.record_event("submitted", js)
            reason = self._never_fits(js)
            if reason is not None:
                js.state = "Rejected"
                js.reason = reason
                js.layer = ""
                self.unfinished -= 1
                self.record_event("rejected", js, detail=reason.message)
                self._retire(js)
                continue
            self.books.waiting_jobs += 1
            admitted.append(js)
        if not admitted:
            return
        self.books.advance(now)
        if self._resuming:
            admitted = [js for js in admitted if js.spec.snapshot is None or not self._resume(js, now)]
        layers = self.stack.admission
        if layers:
            for js in admitted:
                js.layer, js.layer_enter = layers[0].name, now
                layers[0].submit(js, now)
        else:
            self._to_placement(admitted, now)
        self.books.snapshot(now)
        self.request_cycle()

    def _resume(self, js: JobState, now: float) -> bool:
        """A job a live cluster's snapshot shows admitted or running takes up where it was (:mod:`gangkit.engine.resume`)."""
        return resume_job(self, js, now)

    def _never_fits(self, js: JobState) -> Reason | None:
        """Rejected at submission: some pod fits on no node that exists or could be supplied."""
        for ps in js.spec.pod_sets:
            req = ps.request
            if self.capacity.could_ever_hold(*req):
                continue
            if any(s.can_ever_fit(*req) for s in self.stack.suppliers):
                continue
            biggest = max((n.node.gpus for n in self.capacity.nodes), default=0)
            sel = f" with labels {dict(ps.node_selector)}" if ps.node_selector else ""
            return Reason(
                "placement",
                "NoNodeCanHoldPod",
                f"a pod of pod set {ps.name!r} asks for {ps.gpus} GPUs{sel}; the largest node has {biggest}",
                {"requested": ps.gpus, "largest_node": biggest},
            )
        return None

    def _to_placement(self, jobs: list[JobState], now: float) -> None:
        """Create the pods of admitted jobs (interleaved, as the Job controller's concurrent syncs may)."""
        for js in jobs:
            if js.started_at is None:
                js.layer, js.layer_enter = "placement", now
            js.placing = True
            js.seq = self._job_seq
            self._job_seq += 1
            admitted = js.admitted  # what Kueue handed over (gangkit.engine.admitted), None without it
            if admitted is not None and admitted.counts and js.pods and len(js.pods) != admitted.total():
                js.pods = []  # readmitted with other counts: the Job controller makes a new set of pods
            if not js.pods:
                i = 0
                for ps in js.spec.pod_sets:
                    for _ in range(ps.count if admitted is None else admitted.count(ps)):
                        js.pods.append(PodState(js, i, ps, f"{js.spec.name}-{i}", remaining=float(js.spec.run_time)))
                        i += 1
            if admitted is not None and (admitted.node_selector or admitted.pod_node_selector):
                for p in js.pods:  # e.g. the node labels of the ResourceFlavor Kueue assigned, per pod under TAS
                    labels = admitted.labels(p)
                    if labels and p.node is None:
                        base = p.pod_set if p.pod_set in js.spec.pod_sets else next(ps for ps in js.spec.pod_sets if ps.name == p.pod_set.name)
                        merged = dict(base.node_selector)
                        merged.update(labels)
                        p.pod_set = dataclasses.replace(base, node_selector=tuple(sorted(merged.items())))
            js.speed = len(js.pods) / js.spec.pod_count if js.spec.elastic else 1.0
        self._create_pods(jobs, now)
        self.stack.placement.enqueue(jobs, now)

    def _create_pods(self, jobs: list[JobState], now: float) -> None:
        if self._resuming:  # pods of a live cluster's snapshot take their places in its creation order
            jobs = created_before(self, jobs)
        pods = jobs[0].pods if len(jobs) == 1 else [  # interleaved: every job's first pod, then every second one...
            js.pods[k] for k in range(max((len(j.pods) for j in jobs), default=0)) for js in jobs if k < len(js.pods)]
        for p in pods:
            if p.node is None and not p.done:
                p.created = now
                p.seq = self._pod_seq
                self._pod_seq += 1

    def admit(self, layer_index: int, jobs: list[JobState], now: float) -> None:
        layers = self.stack.admission
        layer = layers[layer_index]
        for js in jobs:
            if js.started_at is None:  # waits count until the first start only
                if not self.retire_jobs:
                    self.admission_rows.append((now, js.name, layer.name, now - js.layer_enter))
                self.close_wait(js, now)
            self.record_event("admitted", js, layer=layer.name)
        if layer_index + 1 < len(layers):
            nxt = layers[layer_index + 1]
            for js in jobs:
                if js.started_at is None:
                    js.layer, js.layer_enter = nxt.name, now
                nxt.submit(js, now)
        else:
            self._to_placement(jobs, now)

    def bind(self, pod: PodState, node: NodeState, taken: bool = False) -> None:
        """Bind one pod to one node (called by placement layers); ``taken``: a kept trial took its resources."""
        now = self.env.now
        ps = pod.pod_set
        if (node.free_gpus < 0 or not node.ready) if taken else not node.fits(ps.gpus, ps.cpu, ps.memory, ps.node_selector):
            raise RuntimeError(f"placement bug: pod {pod.name} does not fit on node {node.node.name}")
        self.books.advance(now)
        if not taken:
            self.capacity.take(node, ps.gpus, ps.cpu, ps.memory)
        node.pods.add(pod)
        Books.charge_bound(pod.job, ps.gpus, now)
        pod.node = node
        pod.bound_at = now
        js = pod.job
        js.bound += 1
        self.books.bound_gpus += ps.gpus
        self.record_event("pod_bound", js, pod=pod.name, node=node.node.name)
        if js.spec.progress == "independent":
            self._start_pod(pod, now)
        elif js.bound == len(js.pods):
            self._start_sync(js, now)
        if js.bound == len(js.pods) and getattr(self, "_ready_wakes", True):  # a layer looks at bound pods
            self.request_cycle()  # all pods ready: an admission layer may be waiting for that
        self._changed = True

    def _mark_started(self, js: JobState, now: float) -> None:
        self.last_progress = now
        if js.started_at is None:
            js.started_at = now
            self.close_wait(js, now)
            js.layer = ""
            self.books.waiting_jobs -= 1
            self.books.running_jobs += 1
        self.record_event("job_started", js)

    def _start_sync(self, js: JobState, now: float) -> None:
        js.placed_at = now if js.placed_at is None else js.placed_at
        self._mark_started(js, now)
        js.progressing = True
        js.progress_since = now
        g = sum(p.pod_set.gpus for p in js.pods)
        self.books.useful_gpus += g
        epoch = js.epoch
        Call(self.env, js.remaining if js.speed == 1.0 else js.remaining / js.speed, self._finish_sync, args=(js, epoch))

    def _start_pod(self, pod: PodState, now: float) -> None:
        js = pod.job
        if js.started_at is None:
            js.placed_at = now
            self._mark_started(js, now)
            js.progressing = True
        pod.progress_since = now
        self.books.useful_gpus += pod.pod_set.gpus
        epoch = pod.epoch
        Call(self.env, pod.remaining, self._finish_pod, args=(pod, epoch))

    def _finish_sync(self, js: JobState, epoch: int) -> None:
        if epoch != js.epoch:
            return
        now = self.env.now
        self.books.advance(now)
        gpus = sum(p.pod_set.gpus for p in js.pods)
        js.useful_gpu_seconds += (now - js.progress_since) * gpus
        js.progressing = False
        js.remaining = 0.0
        self.books.useful_gpus -= gpus
        for p in js.pods:
            p.done = True
            self._release_pod(p, now)
        self._job_finished(js, now)

    def _finish_pod(self, pod: PodState, epoch: int) -> None:
        if epoch != pod.epoch:
            return
        now = self.env.now
        self.books.advance(now)
        js = pod.job
        js.useful_gpu_seconds += (now - pod.progress_since) * pod.pod_set.gpus
        self.books.useful_gpus -= pod.pod_set.gpus
        pod.remaining = 0.0
        pod.done = True
        self._release_pod(pod, now)
        self.record_event("pod_finished", js, pod=pod.name)
        js.pods_done += 1
        if js.pods_done == len(js.pods):
            js.progressing = False
            self._job_finished(js, now)
        else:
            self.books.snapshot(now)
            self.request_cycle()

    def _release_pod(self, pod: PodState, now: float, state: str | None = None) -> None:
        node = pod.node
        if node is None:
            return
        ps = pod.pod_set
        self.capacity.give(node, ps.gpus, ps.cpu, ps.memory)
        node.pods.discard(pod)
        Books.charge_bound(pod.job, -ps.gpus, now)
        pod.node = None
        pod.job.bound -= 1
        self.books.bound_gpus -= ps.gpus
        if self.record == "full":
            self.pod_rows.append((pod.job.name, pod.name, ps.name, ps.gpus, node.node.name, pod.created, pod.bound_at, now,
                                  state or ("Succeeded" if pod.done else "Evicted")))

    def _job_finished(self, js: JobState, now: float) -> None:
        self.last_progress = now
        js.state = "Finished"
        js.finished_at = now
        self.books.running_jobs -= 1
        self.unfinished -= 1
        self.last_end = max(self.last_end, now)
        self.record_event("finished", js)
        self.stack.placement.forget(js)
        for layer in self.stack.admission:
            layer.release(js, now)
        self._retire(js)
        self.books.snapshot(now)
        self.request_cycle()

    def call_at(self, t: float, fn: Callable[[float], None], after_cycles: bool = False) -> None:
        """Run ``fn(now)`` at simulated time ``t`` (timers of layers and suppliers).

        With ``after_cycles`` the timer runs after that instant's scheduling
        cycle (a provisioner's batch that must see what the cycle left unplaced).
        """
        if after_cycles and self.stack.suppliers:  # wait buckets: see whom the supplier's new nodes are for
            inner = fn

            def fn(now: float) -> None:
                inner(now)
                self._note_awaited(now)
        Call(self.env, max(0.0, t - self.env.now), fn, priority=AFTER_CYCLES if after_cycles else NORMAL)

    # --------------------------------------------------------------- cycles
    def request_cycle(self) -> None:
        """Something changed: run a scheduling cycle after this instant's other events."""
        if self._cycle_pending:
            return
        self._cycle_pending = True
        env, period = self.env, self.stack.placement.period  # next_boundary(now, period), inline (per job and cycle)
        now = env.now
        _boundary_k = math.ceil(now / period) if period else 0
        at = now if not period or (_boundary_k >= 1 and now - (_boundary_k - 1) * period <= min(TOLERANCE * period, ROUNDING * now)) else max(now, _boundary_k * period)
        Call(env, at - now, self._cycle, priority=LATE)

    def _idle(self) -> bool:
        """Would this cycle do nothing? Yes when every layer says it is *idle* (``idle()``:
        nothing waits in it, and its cycle would change none of its state) and nothing else
        runs per cycle: no node supplier, no per-cycle metrics (``full`` recording). The
        sockets' default ``idle()`` says False (:mod:`gangkit.engine.sockets`).

        Why: in a trace replay two cycles of three find nothing to do (the one after a job's
        pods are all bound, the one after a job finishes and nobody waits). The cycle's event
        still happens where it did, so every time and every order stays as it was.
        """
        if self.stack.suppliers or self.record == "full":
            return False
        for layer in (*self.stack.admission, self.stack.placement):
            if not layer.idle():
                return False
        return True

    def _cycle(self, now: float) -> None:
        self._cycle_pending = False
        self._changed = False
        if self._idle():
            return
        for i, layer in enumerate(self.stack.admission):
            admitted = list(layer.cycle(self, now))
            if admitted:
                self.admit(i, admitted, now)
                self._changed = True
        self.stack.placement.cycle(self, now)
        if self.record == "full":  # per-layer metrics: unschedulable pods and jobs (gangkit.results.metrics)
            self.pending_samples.sample(now, self.stack.placement.unschedulable())
        if self.stack.suppliers:
            pending = self.stack.placement.unschedulable()
            for s in self.stack.suppliers:
                s.observe(self, now, pending)
            self._note_awaited(now)
        if self._changed:
            self.books.snapshot(now)

    # ---------------------------------------------------------------- waits
    def wait_split(self, js: JobState, now: float) -> dict[str, float]:
        """The buckets of the stretch since ``js`` entered its current layer (gangkit.engine.waits)."""
        return waits.wait_split(js, now, self.node_stages)

    def close_wait(self, js: JobState, now: float) -> None:
        """The job leaves its layer now: add that stretch to its wait buckets (gangkit.engine.waits)."""
        waits.close_wait(js, now, self.node_stages)

    def charge_wait(self, js: JobState, now: float) -> None:
        """A layer is about to send ``js`` back: count its wait in its layer up to now (gangkit.engine.waits)."""
        waits.charge_wait(js, now, self.node_stages)

    def _note_awaited(self, now: float) -> None:
        """Note, per waiting job, the in-flight nodes a supplier has nominated its pods to.

        Suppliers that can say so expose ``awaited_nodes()`` (pairs of pod
        and node name); the first instant a job counts on a node starts its
        node buckets (gangkit.engine.waits).
        """
        for s in self.stack.suppliers:
            for pod, node in s.awaited_nodes():
                js = pod.job
                stages = self.node_stages.get(node)
                if (js.started_at is None and js.layer == "placement" and pod.node is None and not pod.done
                        and node not in js.awaited and stages and max(stages.values()) > now):
                    js.awaited[node] = now
                    self.record_event("nominated", js, pod=pod.name, node=node, layer=s.name)

    # ----------------------------------------------------------- accounting
    def _close_books(self, end: float) -> None:
        """Count the last stretch of every job's bound and useful GPU-seconds up to ``end``."""
        for js in self.all_jobs():
            Books.charge_bound(js, 0, end)
            if js.progressing and js.spec.progress == "sync" and js.progress_since is not None:
                js.useful_gpu_seconds += (end - js.progress_since) * sum(p.pod_set.gpus for p in js.pods)
            elif js.spec.progress == "independent":
                for p in js.pods:
                    if p.progress_since is not None and not p.done and p.node is not None:
                        js.useful_gpu_seconds += (end - p.progress_since) * p.pod_set.gpus

    def record_event(self, kind: str, js: JobState | None, *, pod: str = "", node: str = "", layer: str = "", detail: str = "") -> None:
        """One row of ``Result.events``: kept at the ``full`` recording level, counted at every level.

        At the other levels the run counts the event alone: :meth:`_count_event` stands in for this
        method, chosen once when the run is made (``__init__``), so no call asks for the level."""
        self.event_count += 1
        self.events.append((self.env.now, kind, js.name if js else "", pod, node, layer, detail))

    def _count_event(self, kind: str, js: JobState | None, *, pod: str = "", node: str = "", layer: str = "",
                     detail: str = "") -> None:
        """:meth:`record_event` below the ``full`` level: the event is counted, not kept."""
        self.event_count += 1
