"""Volcano's preempt action (and what reclaim shares with it): taking capacity back, one gang at a time.

Two ways a waiting gang may take room from running ones:

- **preempt**, within a queue: a waiting job evicts *lower-priority* jobs of
  its own queue (Volcano ``pkg/scheduler/actions/preempt`` and
  ``gangpreempt``);
- **reclaim**, across queues: a job of a queue below its deserved share
  evicts jobs of *other* queues that hold more than their deserved share,
  the most over-served queue first (``actions/reclaim`` and ``gangreclaim``;
  the proportion plugin's ReclaimableFn allows victims from a queue only
  while its allocation is above its deserved share; a queue with
  ``reclaimable: false`` is never a victim; the reclaiming queue must not be
  overused, and its allocation plus the job's request must stay within its
  deserved share, the PreemptiveFn; see
  :class:`gangkit.volcano.plugins.proportion.QueueAttr` for each comparison).

gangkit's reclaim blends the two Volcano actions: victims come in
``gangreclaim``'s bundles (below) and are filtered by proportion's
ReclaimableFn as the task-by-task ``reclaim`` filters them. In Volcano
v1.15.1, ``gangreclaim`` alone does not ask the proportion plugin about
victims, and ``reclaim`` alone never takes a whole job.

The gang rule for victims (the gang plugin's PreemptableFn/ReclaimableFn):
a pod may be taken from a running job only while the job keeps at least
``minMember`` ready pods (counting down as victims are chosen), and, with
Volcano 1.15's gang-aware eviction (``actions/utils/bundle.go``), at least
each role's ``minTaskMember``. Those pods form the job's *safe* bundle.
The rest can only go together with the whole job (its *whole* bundle), so a
victim gang is never left running below its minimum.

Choosing victims: safe bundles before whole ones; then, for preempt, the
lowest-priority and newest job first; for reclaim, the queue with the
highest share first. Victims are added one pod at a time (a whole bundle at
once) until the waiting job's trial placement succeeds, as Volcano's
preempt evicts "until the preemptor fits": exactly enough, no more. If even
every candidate is not enough, nobody is evicted.

Pods that are not preemptable (Volcano ``volcano.sh/preemptable``, as of
v1.15.1) are never victims. Volcano reads it at two levels, annotation
before label at each: on the **pod** (``GetPodPreemptable`` in
``pkg/scheduler/api/pod_info.go``: default true, so a pod without it may be
a victim), which every variant of the actions checks (``task.Preemptable``
in ``preempt``, ``reclaim``, ``gangpreempt``, ``gangreclaim``); and on the
**PodGroup**, which ``gangpreempt`` and ``gangreclaim`` check as well
(``IsJobPreemptableForGangEviction`` in ``pkg/scheduler/actions/utils/util.go``:
a PodGroup without it allows eviction; ``JobInfo.Preemptable``, false by
default, is read only when the PodGroup carries it). gangkit's victims come
in the gang actions' bundles, so it applies both: the manifest readers list
the pod sets that are not preemptable in ``Job.volcano_not_preemptable``
(every pod set when the PodGroup says false). A victim job's bundles are
made of its preemptable pods only (``CreateJobBundles`` gets only the
candidate tasks): its *whole* bundle then takes its preemptable pods and
leaves the others running, below the gang's minimum; the readiness figures
(minMember, each role's minimum) still count every pod of the job.

Simplified: a ``sync`` job stops as a whole when it loses any pod (gangkit's
sync jobs progress only with all pods; a Volcano Job with the
``PodEvicted: RestartJob`` policy behaves so), so a sync job's pods are
only ever one whole bundle; safe bundles exist for ``independent`` jobs.
For the same reason a sync job with a bound pod that is not preemptable is
never a victim (Volcano would evict its other pods and leave that one
running; gangkit would stop it with them).
Evicted pods free their room at once (no graceful termination), and the
preemptor is bound in the same session rather than pipelined to the next:
its pods until it is ready (Volcano's preempt works for a job while it is
starving, ``JobStarving``), the others left to allocate's turns.
Volcano's network-topology domains are not modelled: the whole cluster is
one domain.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Callable

from gangkit.engine.state import JobState, PodState
from gangkit.model.reasons import Reason
from gangkit.volcano.actions.allocate import allocatable_pods, place_gang
from gangkit.volcano.cache import INQUEUE, RUNNING
from gangkit.volcano.plugins.gang import gang_ready, ready_pods, role_minimums
from gangkit.volcano.session import Session, Worksheet, sum_resources, trial


def execute(ssn: Session) -> None:
    """Run preempt for this session: waiting gangs evict lower-priority jobs of their own queue."""
    take_back_for_starving(ssn, "preempt")


def take_back_for_starving(ssn: Session, kind: str) -> None:
    """Volcano's preempt (within a queue, by priority) or reclaim (from queues above their deserved share).

    The *starving* jobs are the gangs that wait (no pod bound, or bound but
    not ready), queues in queue order, each queue's by priority then
    creation; a shape that found no victims is not tried again this session.
    """
    cache = ssn.cache
    attrs = ssn.attrs or {}
    if kind == "reclaim" and len(attrs) < 2:
        return
    starving: dict[str, list[JobState]] = defaultdict(list)
    for q, shapes in cache.shapes.items():
        for shape, h in shapes.items():
            cache.drop_stale(h, (q, shape))
            starving[q].extend(e.job for e in sorted(h))
    for js in cache.partial.values():
        if not gang_ready(js):
            starving[js.spec.volcano_queue].append(js)
    for q in ssn.queue_order([q for q in starving if starving[q]]):
        a = attrs.get(q)
        if kind == "reclaim" and (a is None or a.overused()):
            continue
        failed: set[tuple] = set()
        for js in sorted(starving[q], key=lambda j: (-j.priority, j.seq)):
            shape = cache.shape(js)
            if shape in failed or gang_ready(js) or cache.phase.get(js.index) not in (INQUEUE, RUNNING):
                continue
            if not _take_back(ssn, js, kind):
                failed.add(shape)


def _take_back(ssn: Session, js: JobState, kind: str) -> bool:
    """Evict the fewest victims that let ``js`` fit, then place it; False when no victims are enough."""
    sim, cache = ssn.sim, ssn.cache
    attrs = ssn.attrs or {}
    q = js.spec.volcano_queue
    waiting = allocatable_pods(ssn, js)
    if kind == "reclaim" and not attrs[q].preemptive(sum_resources(waiting)):
        return False  # proportion's PreemptiveFn: the job would take its queue above its deserved share
    candidates = []
    for v in cache.jobs.values():
        if v is js or not v.bound or (v.spec.volcano_not_preemptable and not victim_pods(v)):
            continue
        vq = v.spec.volcano_queue
        if kind == "preempt" and vq == q and v.priority < js.priority:
            candidates.append(v)
        elif kind == "reclaim" and vq != q and ssn.queues[vq].reclaimable and vq in attrs:
            candidates.append(v)
    if not candidates:
        return False
    cap = sim.capacity
    need = sum(sorted(p.pod_set.gpus for p in waiting)[:max(0, js.gang_size - ready_pods(js))])
    if need > cap.free_ready_gpus + sum(p.pod_set.gpus for v in candidates for p in victim_pods(v)):
        return False
    bundles = [b for v in candidates for b in job_bundles(v)]
    if kind == "preempt":
        bundles.sort(key=lambda b: (b.whole, b.job.priority, -b.job.seq))
    else:
        bundles.sort(key=lambda b: (b.whole, -attrs[b.job.spec.volcano_queue].share, b.job.priority, -b.job.seq))

    attr = attrs.get(q)

    def fits(victims: list[PodState]) -> bool:
        """The waiting job's trial with the victims' room given back (and, in its queue, their share)."""
        for p in victims:
            cap.give(p.node, p.pod_set.gpus, p.pod_set.cpu, p.pod_set.memory)
        if attr is not None:
            held = attr.allocated
            attr.allocated = held - sum_resources(p for p in victims if p.job.spec.volcano_queue == q)
        turn = Worksheet(js, waiting)  # a turn of the job, as place_gang makes it: until it is ready
        placed = trial(sim, waiting, attr, ws=turn)
        if attr is not None:
            attr.allocated = held
        for p in victims:
            cap.take(p.node, p.pod_set.gpus, p.pod_set.cpu, p.pod_set.memory)
        return bool(placed) and turn.reached

    def over_deserved(b: Bundle, chosen: list[PodState]) -> bool:
        if kind == "preempt":
            return True
        a = attrs[b.job.spec.volcano_queue]
        return a.reclaimable(sum_resources(p for p in chosen if p.job.spec.volcano_queue == a.name))

    victims = select_victims(bundles, fits, over_deserved)
    if victims is None:
        return False
    _evict(ssn, js, victims, kind)
    place_gang(ssn, js)  # pods until it is ready; its others wait among the partly placed jobs for allocate's turns
    return True


def _evict(ssn: Session, preemptor: JobState, victims: list[PodState], kind: str) -> None:
    sim = ssn.sim
    attrs = ssn.attrs or {}
    by_job: dict[int, list[PodState]] = {}
    for p in victims:
        by_job.setdefault(p.job.index, []).append(p)
    action = "preempted" if kind == "preempt" else "reclaimed"
    for pods in by_job.values():
        v = pods[0].job
        a = attrs.get(v.spec.volcano_queue)
        if a is not None:
            a.allocated = a.allocated - sum_resources(pods)
            a.update_share()
        reason = Reason("placement", "Preempted" if kind == "preempt" else "Reclaimed",
                        f"{len(pods)} pod(s) {action} by Volcano for {preemptor.name} "
                        f"(queue {preemptor.spec.volcano_queue!r}, priority {preemptor.priority})",
                        {"pods": len(pods)})
        if v.spec.progress == "sync" or len(pods) == v.bound:
            sim.evict(v, reason)
        else:
            for p in pods:
                sim.evict_pod(p, reason)


def victim_pods(js: JobState) -> list[PodState]:
    """The bound pods preempt and reclaim may take from a job: those not marked ``volcano.sh/preemptable: "false"``.

    None of a ``sync`` job when any of its bound pods is protected (see the
    module doc). With nothing protected: every bound pod.
    """
    bound = [p for p in js.pods if p.node is not None]
    protected = js.spec.volcano_not_preemptable
    if not protected:
        return bound
    if js.spec.progress == "sync" and any(p.pod_set.name in protected for p in bound):
        return []
    return [p for p in bound if p.pod_set.name not in protected]


@dataclass
class Bundle:
    """Pods of one victim job that go together: its safe surplus, or (``whole``) every preemptable bound pod of it."""

    job: JobState
    pods: list[PodState]
    whole: bool


def job_bundles(js: JobState) -> list[Bundle]:
    """The safe bundle (pods above minMember and each role's minimum) and the whole bundle of a running job.

    Both hold only the job's preemptable pods (:func:`victim_pods`); minMember
    and the role minimums are counted over all of its pods.
    """
    bound = victim_pods(js)
    if not bound:
        return []
    if js.spec.progress == "sync":
        return [Bundle(js, bound, whole=True)]
    surplus = ready_pods(js) - js.gang_size  # finished pods count towards the gang too
    mins = role_minimums(js)
    role_left = Counter(p.pod_set.name for p in js.pods if p.node is not None)
    safe, rest = [], []
    for p in sorted(bound, key=lambda p: -p.seq):  # the newest pods go first
        role = p.pod_set.name
        role_safe = role not in mins or role_left[role] > mins[role]
        if surplus > 0 and role_safe:
            safe.append(p)
            surplus -= 1
            role_left[role] -= 1
        else:
            rest.append(p)
    out = [Bundle(js, safe, whole=False)] if safe else []
    if rest:
        out.append(Bundle(js, bound, whole=True))  # taking any of the rest means taking all that may be taken
    return out


def select_victims(
    bundles: list[Bundle],
    fits: Callable[[list[PodState]], bool],
    allowed: Callable[[Bundle, list[PodState]], bool] = lambda b, chosen: True,
) -> list[PodState] | None:
    """The fewest pods, in bundle order, whose eviction lets the waiting job fit; None if none do.

    ``bundles`` come ordered (safe first, then the caller's victim order);
    ``fits(victims)`` tries the waiting job with those pods' room given back;
    ``allowed(bundle, chosen)`` is the queue rule (reclaim: the victim's
    queue is still above its deserved share).
    """
    chosen: list[PodState] = []
    for b in bundles:
        if not allowed(b, chosen):
            continue
        if b.whole:
            taken = set(map(id, chosen))
            chosen.extend(p for p in b.pods if id(p) not in taken)
            if fits(chosen):
                return chosen
            continue
        for p in b.pods:
            if not allowed(b, chosen):
                break
            chosen.append(p)
            if fits(chosen):
                return chosen
    return None
