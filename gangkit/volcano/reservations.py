"""Future free capacity per node, and reservations in it (``easy-backfill``, ``conservative-backfill``).

Picture a restaurant that takes bookings. The host knows when each table
should come free (every diner said how long they would stay), so a party of
twelve that cannot be seated now can be *promised* the two long tables at
8 pm. A couple arriving later may still sit down at once, but only at a
table that is free now and that the promise does not need before they have
left. That is backfilling; the promise is a *reservation*.

A :class:`Profile` is the host's book for a cluster: for every ready node,
a step function of what will be free over future time, built from what is
free now and the *estimated* end of every running pod, minus the
reservations made so far. Two questions are asked of it:

- :meth:`Profile.earliest` — the earliest time at which a gang's pods all
  fit on specific nodes for the whole of its estimated run, and where;
- :meth:`Profile.place` at ``now`` — whether a job can start now without
  touching any reservation already in the book.

Placement in the book follows the same rule as placement in the cluster
(kube-scheduler's Filter and Score, :mod:`gangkit.engine.capacity`), applied to the
capacity that stays free over the job's whole estimated run, so a job
started now lands where the scheduler would put it when no reservation is
in the way.

Run-time estimates. Real backfilling schedulers (EASY, the first one, at
Argonne; Slurm; PBS) plan with the *user's* estimate, the time limit the
job declares, and kill jobs that exceed it. gangkit takes a
job's declared maximum run time (``Job.max_run_time``, the batch/v1 Job's
``spec.activeDeadlineSeconds``) when there is one; otherwise the estimate is
the true run time (of the work left, after a restart) times the run's
``estimate_factor`` (1 = exact estimates; users typically overestimate).
**Simplifications:** gangkit does not kill a job at its deadline; a job
running past its estimate is expected to end at the next instant. A job
that holds GPUs without progressing (a sync gang missing pods) is expected
never to release them. Nodes that are not ready yet are not in the book.

Where the book is asked (:class:`ReservationSession`, in place of allocate's
trial placement; EASY backfilling, Lifka 1995; conservative backfilling,
Mu'alem and Feitelson 2001; Volcano has no reservations: these orderings are
gangkit's contrast from batch schedulers). One book per session, over every
queue. The book is the cluster's nodes, which all queues share, so a
reservation made for a job of one queue is protected against every later job
of any queue. Jobs are looked at in the order allocate would visit them
(:mod:`gangkit.volcano.actions.allocate`): queues by queue order (priority,
then lowest share, the share updated after each job started), one job at a
time, each queue's jobs in Volcano's job order. So ``easy-backfill`` has one
head for the whole cluster (the first job in that order that cannot start),
and ``conservative-backfill`` gives every waiting job of every queue a
reservation in that order.

Queue shares. A job whose queue would not let it have its pods *now*
(proportion's AllocatableFn: allocated + request <= deserved, with what the
queue holds now) gets neither a start nor a reservation: it waits for its
queue's share, not for nodes, and holds no nodes from others. A queue at or
above its deserved share is skipped for the session, as in allocate.
**Simplification:** a reservation does not foresee queue shares; a
reservation made while the queue allowed the job is kept in later sessions
only if the queue still allows it, so with several queues a job may start
after its first reservation; with one queue and no queue limits the
promises hold.

Cost: the book is built once per scheduling session from the pods bound
now (sorted, so the result does not depend on set order), and each question
costs a pass over the nodes per candidate start time; the candidate times
are the book's change points.
"""

from __future__ import annotations

import bisect
import math
from typing import TYPE_CHECKING, Callable, Iterable

from gangkit.model.precision import TOLERANCE
from gangkit.volcano.plugins.gang import gang_ready, ready_pods

if TYPE_CHECKING:  # pragma: no cover
        from gangkit.engine.sockets import Cluster
from gangkit.engine.state import JobState, NodeState, PodState

INF = math.inf
RESERVING = ("easy-backfill", "conservative-backfill")  # orderings that plan with a book of future capacity


def estimate(js: "JobState", factor: float, pods: Iterable["PodState"] = ()) -> float:
    """The run time a backfilling scheduler plans with for ``js`` (declared maximum, else true x factor).

    For a sync job that is the work left (``remaining``); for an independent
    job, the longest work left among ``pods`` (default: all its pods).
    """
    declared = js.spec.max_run_time
    if declared is not None:
        return float(declared)
    if js.spec.progress == "independent":
        left = max((p.remaining for p in (pods or js.pods)), default=0.0)
    else:
        left = js.remaining / js.speed  # an elastic job with fewer pods runs longer
    return left * factor


def estimated_end(pod: "PodState", factor: float, now: float) -> float:
    """When a bound pod is expected to release its node (INF when its job does not progress)."""
    js = pod.job
    if js.spec.progress == "independent":
        since = pod.progress_since
        if since is None or pod.done:
            return INF
        est = float(js.spec.max_run_time) if js.spec.max_run_time is not None else pod.remaining * factor
    else:
        since = js.progress_since if js.progressing else None
        if since is None:
            return INF
        est = estimate(js, factor)
    end = since + est
    return end if end > now else math.nextafter(now, INF)  # overran its estimate: "any moment now"


class Profile:
    """Free capacity per ready node as a step function of future time, with reservations.

    ``times[i]`` are the change points of node ``i`` (the first is ``now``),
    ``free[i][k]`` the (GPUs, cores, bytes) free from ``times[i][k]`` to the
    next change point; cores and bytes are ``INF`` on nodes that do not
    model them.
    """

    def __init__(self, sim: "Cluster", now: float, factor: float, shortcuts: bool = True):
        self.now = now
        self.shortcuts = shortcuts  # FastPaths.reservation_shortcuts; False: the plain search
        self.scoring = sim.capacity.scoring
        self.capacity = sim.capacity
        self.models_cpu_or_memory = sim.capacity.models_cpu_or_memory
        self.nodes: list["NodeState"] = [st for st in sim.capacity.nodes if st.ready]
        self.times: list[list[float]] = []
        self.free: list[list[list[float]]] = []
        job_end: dict[int, float] = {}  # a sync job's pods all end together: estimate once per job
        for st in self.nodes:
            releases: dict[float, list[float]] = {}
            for pod in sorted(st.pods, key=lambda p: (p.job.index, p.index)) if st.pods else ():
                js = pod.job
                if js.spec.progress == "sync":
                    end = job_end.get(js.index)
                    if end is None:
                        end = job_end[js.index] = estimated_end(pod, factor, now)
                else:
                    end = estimated_end(pod, factor, now)
                if end == INF:
                    continue
                ps = pod.pod_set
                r = releases.setdefault(end, [0, 0.0, 0])
                r[0] += ps.gpus
                r[1] += ps.cpu
                r[2] += ps.memory
            level = [st.free_gpus,
                     INF if st.free_cpu is None else st.free_cpu,
                     INF if st.free_memory is None else st.free_memory]
            times, free = [now], [list(level)]
            for t in sorted(releases):
                level = [a + b for a, b in zip(level, releases[t])]
                times.append(t)
                free.append(list(level))
            self.times.append(times)
            self.free.append(free)
        self.free_gpus_now = sum(free[0][0] for free in self.free)  # what every node has free now, in total

    # -- the step function -------------------------------------------------
    def window(self, i: int, start: float, end: float, gpus: int = 0) -> list[float] | None:
        """What node ``i`` has free throughout [start, end): the minimum over that window.

        None as soon as the window is found to hold fewer than ``gpus`` GPUs.
        """
        times, free = self.times[i], self.free[i]
        k = max(bisect.bisect_right(times, start) - 1, 0)
        low = list(free[k])
        if low[0] < gpus:
            return None
        k += 1
        n = len(times)
        while k < n and times[k] < end:
            seg = free[k]
            if seg[0] < low[0]:
                if seg[0] < gpus:
                    return None
                low[0] = seg[0]
            if seg[1] < low[1]:
                low[1] = seg[1]
            if seg[2] < low[2]:
                low[2] = seg[2]
            k += 1
        return low

    def _total_gpus(self) -> list[tuple[float, float, bool]]:
        """(change point, GPUs free then on all nodes together, whether some node gains anything), in time order."""
        deltas: dict[float, float] = {}
        rises: dict[float, bool] = {}
        for times, free in zip(self.times, self.free):
            for k in range(1, len(times)):
                t, now_, before = times[k], free[k], free[k - 1]
                deltas[t] = deltas.get(t, 0) + now_[0] - before[0]
                if not rises.get(t) and (now_[0] > before[0] or now_[1] > before[1] or now_[2] > before[2]):
                    rises[t] = True
        total = self.free_gpus_now
        out = [(self.now, total, True)]
        for t in sorted(deltas):
            total += deltas[t]
            out.append((t, total, rises.get(t, False)))
        return out

    def change_points(self) -> list[float]:
        """Every time at which some node's free capacity changes, from now on (sorted)."""
        return sorted({t for times in self.times for t in times})

    def reserve(self, placement: list[tuple["PodState", "NodeState"]], start: float, end: float) -> None:
        """Take the placed pods' requests out of their nodes over [start, end)."""
        index = {st.index: i for i, st in enumerate(self.nodes)}
        for pod, st in placement:
            i = index[st.index]
            ps = pod.pod_set
            self._split(i, start)
            if end != INF:
                self._split(i, end)
            times, free = self.times[i], self.free[i]
            k = bisect.bisect_left(times, start)
            if k == 0:
                self.free_gpus_now -= ps.gpus
            while k < len(times) and times[k] < end:
                seg = free[k]
                seg[0] -= ps.gpus
                seg[1] -= ps.cpu
                seg[2] -= ps.memory
                k += 1

    def _split(self, i: int, t: float) -> None:
        times, free = self.times[i], self.free[i]
        k = bisect.bisect_left(times, t)
        if k < len(times) and times[k] == t:
            return
        times.insert(k, t)
        free.insert(k, list(free[k - 1]))

    # -- questions ---------------------------------------------------------
    def place(self, pods: list["PodState"], start: float, duration: float) -> list[tuple["PodState", "NodeState"]]:
        """Place pods one by one in what stays free over [start, start + duration).

        Nodes are filtered and scored as :class:`gangkit.engine.capacity.FreeCapacity`
        does; placement stops at the first pod that fits nowhere (as a
        Volcano trial does). Returns the pods placed, in order, with their nodes.
        """
        end = start + duration
        avail: dict[int, list[float]] = {}
        short: dict[int, int] = {}  # node -> a GPU count its window was found not to hold
        placed = []
        at_now = start <= self.now
        for pod in pods:
            ps = pod.pod_set
            scan = bool(ps.node_selector) or bool((ps.cpu or ps.memory) and self.models_cpu_or_memory)
            best, best_key = None, None
            for i, st in enumerate(self.nodes):
                n = st.node
                if ps.node_selector and not n.matches(ps.node_selector):
                    continue
                a = avail.get(i)
                if a is None:
                    if i in short and ps.gpus >= short[i]:
                        continue
                    if at_now and ps.gpus > self.free[i][0][0]:
                        continue  # not even free now (a cheap test before the window)
                    a = self.window(i, start, end, ps.gpus)
                    if a is None:
                        short[i] = ps.gpus
                        continue
                    avail[i] = a
                # Room.fits inline (a hot loop of the reserving orderings): a is (free GPUs, CPU, memory) over the window
                if ps.gpus > a[0] or (ps.cpu and ps.cpu > a[1] + TOLERANCE) or (ps.memory and ps.memory > a[2]):
                    continue
                key = self._score(n, a, ps, scan)
                if best_key is None or key > best_key:
                    best, best_key = i, key
            if best is None:
                break
            a = avail[best]
            a[0] -= ps.gpus
            a[1] -= ps.cpu
            a[2] -= ps.memory
            placed.append((pod, self.nodes[best]))
        return placed

    def _score(self, n, a: list[float], ps, scan: bool) -> float:
        """kube-scheduler's NodeResourcesFit score, as :mod:`gangkit.engine.capacity` computes it."""
        if self.capacity.ratio:
            return float(self.capacity.ratio_score(n, tuple(a), ps.gpus, ps.cpu, ps.memory))
        if not scan:
            left = (a[0] - ps.gpus) / n.gpus if n.gpus else 0.0
        else:
            shares = []
            if n.gpus:
                shares.append((a[0] - ps.gpus) / n.gpus)
            if n.cpu:
                shares.append((a[1] - ps.cpu) / n.cpu)
            if n.memory:
                shares.append((a[2] - ps.memory) / n.memory)
            left = sum(shares) / len(shares) if shares else 0.0
        return left if self.scoring == "LeastAllocated" else 1.0 - left

    def earliest(self, pods: list["PodState"], need: int, duration: float,
                 not_before: float = -INF, accept=None) -> tuple[float, list] | None:
        """The earliest start (now or a change point) at which ``need`` of the pods fit for ``duration``.

        Returns (start, placement), or None when no start in the book works
        (the gang is bigger than what will ever be free, or needs GPUs that
        are held without an expected end). Starts before ``not_before`` are
        not tried (the caller knows they fail). ``accept(placement)``, when
        given, must also approve a placement (e.g. every role's minimum).
        """
        total = sum(sorted(p.pod_set.gpus for p in pods)[:need])
        totals = self._total_gpus()
        if not self.shortcuts:  # the plain search: try every change point
            for t, _, _ in totals:
                placement = self.place(pods, t, duration)
                if len(placement) >= need and placement and (accept is None or accept(placement)):
                    return t, placement
            return None
        identical = len({p.request for p in pods}) == 1
        for k, (t, free_total, rises) in enumerate(totals):
            if free_total < total or t < not_before:
                continue  # not enough GPUs free in the whole cluster at t: no need to try nodes
            if identical and not rises and k and t < totals[k - 1][0] + duration:
                # nothing comes free at t, so every node's window from t holds no more than the
                # window from the change point before, which failed: identical pods fail here too
                continue
            j, end = k + 1, t + duration
            while j < len(totals) and totals[j][0] < end and totals[j][1] >= total:
                j += 1
            if j < len(totals) and totals[j][0] < end:
                continue  # the cluster as a whole runs short before the run would end
            placement = self.place(pods, t, duration)
            if len(placement) >= need and placement and (accept is None or accept(placement)):
                return t, placement
        return None


class ReservationSession:
    """One session's book and its answers, for ``easy-backfill`` or ``conservative-backfill``.

    A gang is planned for ``minMember`` of its waiting pods (and every
    role's ``minTaskMember``), for its estimated run
    (:func:`gangkit.volcano.reservations.estimate`); a sync gang whose ``minMember`` is
    below its pod count would hold its GPUs without progress until all are
    placed, so it is planned as holding them without end.
    """

    def __init__(self, sim: "Cluster", now: float, conservative: bool, shape: Callable[["JobState"], tuple],
                 shortcuts: bool = True, factor: float = 1.0):
        self.now = now
        self.factor = factor  # estimated run time = true run time x factor, without activeDeadlineSeconds
        self.conservative = conservative
        self.shape = shape
        self.shortcuts = shortcuts  # FastPaths.reservation_shortcuts; False: no memos, no cheap tests (the plain search)
        self.book = Profile(sim, now, self.factor, shortcuts)
        self.head: "JobState | None" = None  # EASY: the one job holding a reservation
        self.reservations: dict[int, float] = {}  # job index -> reservation time
        self._failed: dict[tuple, float] = {}  # shape -> shortest run that could not start now (longer ones fail too)
        self._planned: dict[tuple, tuple[float, float]] = {}  # shape of identical pods -> (run, earliest start found)

    def consider(self, js: "JobState", may_start: Callable[[list], bool]) -> list | None:
        """The placement to bind now, or None (the job waits; it may have been given a reservation).

        ``may_start(placement)`` is the queue's verdict on the job's pods,
        with what the queue holds now; a job it refuses gets neither a start
        nor a reservation.
        """
        waiting = [p for p in js.pods if p.node is None and not p.done]
        need = max(js.gang_size - ready_pods(js), 1)
        completes = js.spec.progress == "independent" or need >= len(waiting)
        duration = estimate(js, self.factor, waiting) if completes else INF

        def ready(placement: list) -> bool:
            return gang_ready(js, [p for p, _ in placement])

        if self.conservative or self.head is None:
            # identical pods: a twin (same shape, run no longer) found no start before `earlier`,
            # and the book has only lost capacity since, so this job cannot start before it either
            twin = (self.shape(js) if self.shortcuts and not js.bound and len({p.request for p in js.pods}) == 1
                    else None)
            earlier = -INF
            if twin in self._planned and duration >= self._planned[twin][0]:
                earlier = self._planned[twin][1]
            found = None if earlier == INF else self.book.earliest(waiting, need, duration, earlier, ready)
            if twin is not None and (twin not in self._planned or duration <= self._planned[twin][0]):
                self._planned[twin] = (duration, INF if found is None else found[0])
            if found is None:
                return None  # no start in the book: no reservation
            start, placement = found
            if not may_start(placement):
                return None  # its queue holds it back: no start, no reservation
            if start == self.now:
                self.book.reserve(placement, self.now, self.now + duration)
                return placement
            self.book.reserve(placement, start, start + duration)
            self.reservations[js.index] = start
            self.head = js
            return None
        shape = self.shape(js) if self.shortcuts and not js.bound else None
        gpus = sum(sorted(p.pod_set.gpus for p in waiting)[:need])
        twin_failed = shape in self._failed and duration >= self._failed[shape]
        if (self.shortcuts and gpus > self.book.free_gpus_now) or twin_failed:
            return None  # cannot start now: too few GPUs free, or a shorter twin failed
        placement = self.book.place(waiting, self.now, duration)
        if len(placement) >= need and ready(placement):
            if not may_start(placement):
                return None
            self.book.reserve(placement, self.now, self.now + duration)
            return placement
        if shape is not None:
            self._failed[shape] = min(duration, self._failed.get(shape, INF))
        return None
