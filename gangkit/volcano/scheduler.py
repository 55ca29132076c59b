"""Gang placement with Volcano's semantics: all of a gang's pods, or none.

Volcano's scheduler works in *sessions* (one per second by default,
``RunSettings.session_period``, Volcano's ``--schedule-period``), and only while
something waits. Sessions happen on the grid of the period counted from the
scheduler's start, t = 0, p, 2p, ... (v1.15.1 ``pkg/scheduler/scheduler.go``:
``Run`` starts ``wait.Until(pc.runOnce, pc.schedulePeriod, stopCh)``, a session
at once, then one a period after the last; gangkit's sessions take no time):
the engine puts a layer's cycle at the first grid point at or after a change
(:func:`gangkit.model.precision.next_boundary`), so a quiet stretch costs no
session. Simplified: a real session takes time, which shifts the grid. Each session
opens a snapshot (:mod:`gangkit.volcano.session`: the proportion and
overcommit plugins' figures), then runs its actions in turn (Volcano
``pkg/scheduler/actions``), as in the configuration
``actions: "enqueue, allocate, preempt, reclaim"``:

1. **enqueue** (:mod:`gangkit.volcano.actions.enqueue`): a PodGroup goes from
   ``Pending`` to ``Inqueue`` when its ``minResources`` fit its queue's
   capability and the cluster's idle room times the overcommit factor. A
   Volcano Job's pods are created only then (they can be placed from the
   next session on); a batch/v1 Job's pods exist from the start. A
   configuration without enqueue (``VolcanoSetup(enqueue=False)``) lets every
   PodGroup in unchecked.
2. **allocate** (:mod:`gangkit.volcano.actions.allocate`): queues lowest share
   first, one job at a time; each job's pods are placed in a trial until the
   gang is ready, committed only if it then is, otherwise discarded:
   *nothing is held* until the next session. A ready job with pods still
   waiting gets one pod per turn, going back into its queue's job order
   (behind the jobs not yet ready, by the drf plugin's share) after each. The ``ordering`` setting says what allocate does
   within a queue (``skip``, ``strict``, ``largest-first``,
   ``volcano-backfill``, and gangkit's reserving ``easy-backfill`` and
   ``conservative-backfill``, :mod:`gangkit.volcano.reservations`).
3. **preempt** and **reclaim** (:mod:`gangkit.volcano.actions.preempt`,
   :mod:`gangkit.volcano.actions.reclaim`, only with ``RunSettings.preemption``):
   a waiting gang evicts lower-priority jobs of its own queue, or jobs of
   queues above their deserved share, never leaving a victim gang running
   below its minMember.
4. **backfill** (:mod:`gangkit.volcano.actions.backfill`), only with
   ``ordering: volcano-backfill``: the best-effort pods allocate left out.

Between sessions the layer keeps its cache (:mod:`gangkit.volcano.cache`:
the jobs, their PodGroups' phases, the lines of waiting PodGroups) and the
last session's figures, which the reasons it gives refer to.

The plugins gangkit models: gang (:mod:`gangkit.volcano.plugins.gang`),
proportion (:mod:`gangkit.volcano.plugins.proportion`), overcommit
(:mod:`gangkit.volcano.plugins.overcommit`), priority and drf (the job order,
:mod:`gangkit.volcano.plugins.drf`), and,
when the setup enables it, sla (:mod:`gangkit.volcano.plugins.sla`: a session
at each job's deadline, when its votes change);
nodes are chosen as kube-scheduler's NodeResourcesFit scores them
(:mod:`gangkit.engine.capacity`).

Speed (gangkit's shortcut, not Volcano's): a session that can only repeat
the last one is skipped (``skip_clean_sessions``; :meth:`VolcanoGang.clean`
gives the conditions), as is the trial of a head that failed while the room
has not grown (:mod:`gangkit.volcano.actions.allocate`).

Not modelled: pipelining onto capacity that is being released,
hierarchical queues, network topology (see the reference pages,
docs/reference/volcano.md and docs/reference/simulator.md).

Speed: a session costs a few trials per shape plus one per job started,
whatever the queue length (the cache's shapes); ``easy-backfill`` and
``conservative-backfill`` look at every waiting job. With several queues (or
queue limits), each session also sums what every live job holds and asks for,
as the proportion plugin does at session open: that part grows with the
number of live jobs.
"""

from __future__ import annotations

from gangkit.engine.sockets import Cluster, PlacementLayer
from gangkit.engine.state import JobState, PodState
from gangkit.model.fast_paths import ALL_ON, FastPaths
from gangkit.model.reasons import Reason
from gangkit.volcano.actions import allocate, backfill, enqueue, preempt, reclaim
from gangkit.volcano.actions.backfill import SHAPE_SKIPPING
from gangkit.volcano.api import VolcanoSetup
from gangkit.volcano.cache import INQUEUE, PENDING, RUNNING, JobCache
from gangkit.volcano.plugins.gang import gang_ready, ready_pods
from gangkit.volcano.plugins.proportion import QueueAttr
from gangkit.volcano.reservations import RESERVING
from gangkit.volcano.session import open_session, trial

#: orderings that place same-shape jobs in creation order, stopping at the first that does not fit
ARRIVAL_ORDERINGS = ("skip", "strict", "largest-first", "volcano-backfill")

#: the orderings whose sessions are allocate alone (volcano-backfill's backfill action may bind what allocate left)
CLEAN_ORDERINGS = ("skip", "strict", "largest-first")


class VolcanoGang(PlacementLayer):
    """The ``gang`` placement layer: Volcano's sessions over its cache of jobs (see the module doc)."""

    name = "placement"
    pending_metrics = ("volcano_unschedule_task_count", "volcano_unschedule_job_count")

    def __init__(self, ordering: str = "skip", period: float = 1.0, setup: VolcanoSetup | None = None,
                 preemption: bool = False, estimate_factor: float = 1.0, fast_paths: FastPaths = ALL_ON):
        self.ordering = ordering
        self.period = period
        self.estimate_factor = estimate_factor  # backfilling's run-time estimates (RunSettings.estimate_factor)
        self.fast_paths = fast_paths  # gangkit's exact shortcuts (gangkit.volcano.shortcuts)
        self.setup = setup if setup is not None else VolcanoSetup()
        self.queues = self.setup.all_queues()
        self.proportional = not self.setup.trivial
        self.preemption = preemption
        self.cache = JobCache(fast_paths)
        self.cache.sla = self.setup.sla
        self.sla_due: list[JobState] = []  # jobs whose sla deadline needs a session, armed at the next cycle
        # the last session's figures, which pending_reason and unschedulable report
        self.attrs: dict[str, QueueAttr] | None = None  # the proportion plugin's, per queue
        self.blocked_jobs: list[JobState] = []  # jobs allocate could not place
        self.reservations: dict[int, float] = {}  # job index -> reservation time
        self.first_reservation: dict[str, float] = {}  # job name -> the first reservation it was given
        # what the last session started from, for clean(): a job entered or left a line since, the room then
        self.dirty = True
        self.session_version = -1

    # -- socket -------------------------------------------------------------
    def enqueue(self, jobs: list[JobState], now: float) -> None:
        self.dirty = True
        for js in jobs:
            self._created(js, now)
            self.cache.add(js)

    def _created(self, js: JobState, now: float) -> None:
        """The job's PodGroup exists from now (the sla plugin's clock); its deadline will need a session."""
        cache = self.cache
        if js.index not in cache.created:
            cache.created[js.index] = now
            if cache.sla is not None and cache.sla.waiting_time_of(js) is not None:
                self.sla_due.append(js)

    def requeue(self, js: JobState, now: float) -> None:
        """Pods recreated after an eviction; the job keeps its place (ordered by creation time)."""
        self.dirty = True
        cache = self.cache
        cache.partial.pop(js.index, None)
        if js.bound:  # some pods still run: the PodGroup stays as it is
            cache.partial[js.index] = js
        else:  # the whole job was stopped: its PodGroup waits to be enqueued again
            cache.to_pending(js)

    def resume(self, sim: Cluster, js: JobState, now: float) -> None:
        """A job of a live cluster's snapshot with pods bound: its PodGroup is Running once ``minAvailable``
        pods are bound (Volcano's PodGroup status), else Inqueue; pods still Pending wait for allocate.
        Its bound pods count in its queue's ``allocated`` from the first session on, as the cache counts
        the pods it finds bound. A job with no pod bound is enqueued as a new one."""
        if not js.bound:
            self.enqueue([js], now)
            return
        self.dirty = True
        cache = self.cache
        self._created(js, now)
        cache.jobs[js.index] = js
        cache.drop_shape(js)  # its pods were made from the snapshot: its shape is derived from them
        cache.phase[js.index] = RUNNING if js.bound >= js.gang_size else INQUEUE
        if any(p.node is None and not p.done for p in js.pods):
            cache.to_allocate(js)

    def forget(self, js: JobState) -> None:
        self.dirty = True
        self.cache.forget(js)

    def unschedulable(self) -> list[PodState]:
        """Pods that wait for room after the last session (what autoscalers see).

        These are the pods of jobs that allocate could not place and, with
        ``skip`` (and the orderings that skip as it does), of the waiting jobs
        of the same shape behind them, and the
        pods of batch/v1 Jobs whose PodGroup is still Pending. A Volcano Job
        whose PodGroup is Pending has no pods yet: nothing of it is listed.
        """
        cache = self.cache
        out = [p for js in self.blocked_jobs for p in js.pods if p.node is None and not p.done]
        listed = {js.index for js in self.blocked_jobs}
        if self.ordering in SHAPE_SKIPPING:
            shapes = {(js.spec.volcano_queue, cache.shape(js)) for js in self.blocked_jobs if not js.bound}
            for q, shape in sorted(shapes, key=repr):
                for entry in sorted(cache.shapes.get(q, {}).get(shape, ())):
                    js = entry.job
                    if js.index not in listed and cache.waits_whole(js, INQUEUE):
                        listed.add(js.index)
                        out.extend(p for p in js.pods if p.node is None and not p.done)
        for q in sorted(cache.pending):
            for entry in sorted(cache.pending[q]):
                js = entry.job
                if js.spec.controller == "batch" and js.index not in listed and cache.waits_whole(js, PENDING):
                    listed.add(js.index)
                    out.extend(p for p in js.pods if p.node is None and not p.done)
        return out

    def places_in_arrival_order(self, scenario) -> bool:
        """True for the default setup (one queue, no Volcano objects) and an ordering that places jobs of one shape
        in creation order, stopping at the first that does not fit: each session then enqueues every Pending
        PodGroup and allocate binds the waiting one-pod jobs in arrival order while a node has room
        (the lean engines' question, :class:`gangkit.engine.lean.rules.LeanRules`: :mod:`gangkit.engine.lean`
        runs such runs on a plain event heap).

        ``strict``, ``skip``, ``largest-first`` and ``volcano-backfill`` all do that when every job has the
        same shape: the first job that does not fit is followed only by jobs that do not fit. Preemption
        changes nothing with one queue and one priority.
        """
        return scenario.volcano is None and self.ordering in ARRIVAL_ORDERINGS and not self.proportional

    def one_pod_order(self, scenario) -> str | None:
        """The default setup (one queue, no Volcano objects) with an ordering of ``ARRIVAL_ORDERINGS``: for one-pod
        jobs of any GPU sizes, each session enqueues every Pending PodGroup, and allocate visits the waiting jobs
        in creation order (``largest-first``: most GPUs first), binding each on the best-scoring node and passing
        over one that fits nowhere (``strict``: stopping there). ``volcano-backfill`` is ``skip`` here: its
        backfill action binds only best-effort pods, and every pod of such a run asks for GPUs.
        """
        if scenario.volcano is not None or self.proportional or self.ordering not in ARRIVAL_ORDERINGS:
            return None
        return "skip" if self.ordering == "volcano-backfill" else self.ordering

    def idle(self) -> bool:
        """A session now would change nothing (the engine then skips it): nothing waits, and the
        figures a session leaves (see cycle) are already those of an empty session."""
        return (self._nothing_waits() and self.attrs is None and not self.blocked_jobs
                and not (self.ordering in RESERVING and self.reservations))

    # -- one session ----------------------------------------------------------
    def _nothing_waits(self) -> bool:
        """No PodGroup waits to be enqueued or allocated (and no queue shares to compute)."""
        return self.cache.nothing_waits() and not self.proportional

    def clean(self, sim: Cluster) -> bool:
        """A session now would leave everything as the last one left it (the layer then skips it).

        It holds when no job entered or left a line since the last session
        started (``enqueue``, ``requeue``, ``forget``), the free room has not
        grown since (``FreeCapacity.grow_version``; binds only shrink it), and
        the session has only allocate's trials to do: an ordering of
        ``CLEAN_ORDERINGS``, no queue figures (not proportional, and no
        ``attrs`` left from the last session), no preemption, no PodGroup
        Pending or being created, no partly placed job, and only monotone
        shapes (:func:`gangkit.volcano.cache.monotone`) on nodes that keep a
        trial's give-back exact (``FreeCapacity.exact_amounts``). Each line's
        head then failed in the last session (or, with ``strict``, waits
        behind one that did) on as much room or more, so it fails again, and
        in the same order (the queue and job orders are fixed): nothing is
        bound and ``blocked_jobs`` stays the same.
        """
        cache = self.cache
        return (self.fast_paths.skip_clean_sessions and not self.dirty and sim.capacity.grow_version == self.session_version
                and self.ordering in CLEAN_ORDERINGS and not self.proportional and not self.preemption
                and self.attrs is None and not cache.pending and not cache.creating and not cache.partial
                and not cache.mixed and sim.capacity.exact_amounts)

    def cycle(self, sim: Cluster, now: float) -> None:
        if self.sla_due:
            self._arm_sla(sim, now)
        if self._nothing_waits():
            # every action below would find nothing to do; these are the figures they would leave
            self.attrs = None
            self.blocked_jobs = []
            if self.ordering in RESERVING:
                self.reservations = {}
            return
        if not self.dirty and self.clean(sim):
            return
        self.dirty = False
        self.session_version = sim.capacity.grow_version
        ssn = open_session(sim, now, self.cache, self.setup, self.queues, self.ordering, self.proportional)
        self.attrs = ssn.attrs
        enqueue.execute(ssn, self.period, checks=self.setup.enqueue)
        allocate.execute(ssn, self.estimate_factor)
        if self.ordering in RESERVING:
            self.reservations = ssn.reservations
            for index, start in self.reservations.items():
                self.first_reservation.setdefault(self.cache.jobs[index].name, start)
        if self.preemption:
            preempt.execute(ssn)
            reclaim.execute(ssn)
        if self.ordering == "volcano-backfill":
            backfill.execute(ssn)
        ssn.release_kept()
        self.blocked_jobs = ssn.blocked
        self.cache.prune()

    def _arm_sla(self, sim: Cluster, now: float) -> None:
        """A session at each new sla deadline still to come: the plugin's votes change then, with nothing else."""
        cache = self.cache
        for js in self.sla_due:
            created = cache.created.get(js.index)
            at = None if created is None else cache.sla.deadline(js, created)
            if at is not None and at > now:
                sim.call_at(at, lambda t: self._sla_deadline(sim))
        self.sla_due = []

    def _sla_deadline(self, sim: Cluster) -> None:
        self.dirty = True
        sim.request_cycle()

    # -- diagnosis ---------------------------------------------------------------
    def pending_reason(self, sim: Cluster, js: JobState) -> Reason | None:
        """Why ``js`` is not (fully) placed now, from the last session's figures and a trial on the nodes now."""
        cache = self.cache
        if cache.phase.get(js.index) == PENDING and js.index in cache.refused:
            return cache.refused[js.index]
        waiting = [p for p in js.pods if p.node is None and not p.done]
        if not waiting:
            return None
        k = js.gang_size
        fit = len(trial(sim, waiting)) + js.bound
        cap = sim.capacity
        largest = cap.max_free_gpus()
        if gang_ready(js) and fit == js.bound:
            return Reason("placement", "PodsCannotFit",
                          f"gang of {k} is ready with {ready_pods(js)} of {len(js.pods)} pods; the other "
                          f"{len(waiting)} cannot fit now ({cap.free_ready_gpus} GPUs free, largest free block "
                          f"{largest} GPUs on one node)", {"gang": k, "waiting": len(waiting)})
        if js.index in self.reservations:
            at = self.reservations[js.index]
            return Reason("placement", "WaitingForReservation",
                          f"gang of {k} holds a reservation at t={at:g} s (ordering {self.ordering})",
                          {"gang": k, "reservation_s": at})
        attr = (self.attrs or {}).get(js.spec.volcano_queue)
        if attr is not None and len(trial(sim, waiting, attr)) + js.bound < fit:
            return Reason("placement", "QueueOverDeserved",
                          f"{len(waiting)} pod(s) of a gang of {k} fit on the nodes, but would take queue {attr.name!r} "
                          f"above its deserved share ({attr.allocated.short()} allocated of {attr.deserved.short()} deserved: "
                          f"the part its weight gives it while other queues ask for resources, at most its "
                          f"realCapability of {attr.real_capability.short()})",
                          {"gang": k, "queue": attr.name, "deserved_gpus": attr.deserved.gpus})
        if fit >= k:
            if self.ordering == "strict":
                msg = f"gang of {k} fits now but waits behind a job that does not fit (ordering strict)"
            elif self.ordering in RESERVING:
                msg = f"gang of {k} fits now but would delay an earlier job's reservation (ordering {self.ordering})"
            else:
                msg = f"gang of {k} fits now; placed at the next session"
            return Reason("placement", "WaitingForSession", msg, {"gang": k})
        msg = (f"gang of {k} cannot fit: only {fit} of {k} pods would fit now "
               f"({cap.free_ready_gpus} GPUs free, largest free block {largest} GPUs on one node)")
        return Reason("placement", "GangCannotFit", msg, {"gang": k, "would_fit": fit, "free_gpus": cap.free_ready_gpus, "largest_free_block": largest})

