"""Kueue's scheduling cycle: one head per ClusterQueue, ranked, admitted or requeued.

Each ClusterQueue keeps its pending workloads (:mod:`.pending`) in a heap (priority, then
creation time) and a set of *inadmissible* ones parked aside. A cycle:

1. takes the head of every ClusterQueue's heap;
2. assigns flavors to each head against the quota at the start of the cycle
   (:mod:`.flavor_assigner`), and finds preemption victims where needed
   (:mod:`.preemption`);
3. ranks the heads together: lower borrowing level first (0 = within the
   queue's nominal quota), then higher priority, then older;
4. processes them in that order, re-checking each against the quota that
   earlier heads of the same cycle took; a head that needs preemption but
   found no victims still reserves its capacity for the rest of the cycle
   (unless ``reclaimWithinCohort: Any``); a head that found victims preempts
   them and is admitted in a later cycle, once they have released their quota;
5. requeues the others. With ``StrictFIFO`` a head that cannot be admitted
   goes straight back and blocks its queue; with ``BestEffortFIFO`` it is
   parked as inadmissible until an event in its cohort tree (a workload
   finishes or is evicted) moves the parked workloads back. Under both, a
   head that waits for its victims, or that fitted at nomination but lost
   capacity to an earlier head, goes straight back to the heap.

Quota is reserved for the whole workload at once. Rules after Kueue's
``pkg/scheduler/scheduler.go`` and ``pkg/cache/queue``. With a TAS flavor
in the setup, the nominations also get topology assignments and the cycle
checks them (:mod:`gangkit.kueue.tas.cache`).

Speed (gangkit's, the results unchanged; ``tests/test_fast_paths.py`` runs
both ways): a pending workload's scheduling hash is computed once
(``CACHE_SCHEDULING_HASH``), and a nomination that needs preemption reuses
the victims the flavor assigner just asked for when it asked for the same
request (``REUSE_TARGETS``). A class parked after a failed nomination is
retried after every release (BestEffortFIFO); in a ClusterQueue without
cohort, whose three preemption policies are ``Never`` (so no victim is ever
found) and without fair sharing, the retry of a workload without
``minCount`` replays the class's last failed flavor assignment when each of
its quota checks would come out as it did, with the reasons' "available"
figures quoted anew (``FAST_REJECT``): the flavor assigner then runs only
when something it looked at crossed its request. Such a class's last
assignment that fitted is replayed the same way (``FAST_FIT``; a fit has no
reason to quote), and the layer stops its cycles at an instant once no
ClusterQueue has a head left to pop (:meth:`Kueue.has_heads`): a cycle
without heads changes nothing. In such a queue, with BestEffortFIFO, a head
whose class's last failure replays is parked with its class where it stands
(``FAST_PARK``): popping it, nominating it and pushing it back would leave
the same queue and the same reason. The reason's text is kept per class and
per unused-quota figure it quotes (:meth:`Kueue._park_reason`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gangkit.kueue.fair_sharing import order_entries
from gangkit.kueue.flavor_assigner import (
    FIT,
    NOFIT,
    PREEMPT,
    Assignment,
    FlavorAssigner,
    PodSetAssignment,
    unused_quota_reason,
)
from gangkit.kueue.objects import (
    Admission,
    ClusterQueue,
    Cohort,
    KueueConfig,
    KueueSetup,
    LocalQueue,
    ResourceFlavor,
    Workload,
)
from gangkit.kueue.pending import PendingWorkloads
from gangkit.kueue.preemption import Preemptor
from gangkit.kueue.quota import QuotaTree
from gangkit.kueue.targets import Target
from gangkit.kueue.tas.cache import TopologyCache
from gangkit.model.errors import Problem, ScenarioError

#: reuse the flavor assigner's last preemption targets in the nomination when asked the same (see Kueue._nominate)
REUSE_TARGETS = True
#: replay a class's last failed flavor assignment while its quota checks come out the same (see Kueue._replay_reject)
FAST_REJECT = True
#: with FAST_REJECT, replay a class's last fitting assignment the same way (a FIT quotes no figure: it replays as it is)
FAST_FIT = True
#: with FAST_REJECT, a BestEffortFIFO head whose class's last failure replays is parked with its class where it
#: stands, instead of being popped, nominated, processed and pushed back (see Kueue._park_in_place)
FAST_PARK = True

PENDING_PREEMPTION = "PendingPreemption"
SKIPPED = "FailedAfterNomination"


@dataclass
class Entry:
    workload: Workload
    cq: str
    assignment: Assignment | None = None
    targets: list[Target] = field(default_factory=list)
    status: str = ""  # "admitted", "preempting", "" (requeue)
    requeue_reason: str = "NoFit"
    message: str = ""
    cause: str = ""  # the message's cause code when quota is why (Assignment.cause)


@dataclass
class CycleResult:
    admitted: list[Workload] = field(default_factory=list)
    preempted: list[tuple[Workload, str, Workload]] = field(default_factory=list)  # victim, reason, preemptor
    changed: bool = False


class Kueue:
    """The queue and quota layer's state and its scheduling cycle (no notion of time or pods)."""

    @classmethod
    def from_setup(cls, setup: KueueSetup) -> "Kueue":
        """A fresh Kueue (empty queues, nothing admitted) from a scenario's Kueue objects."""
        kueue = cls(setup.flavors, setup.cluster_queues, setup.local_queues, setup.cohorts, setup.config, setup.topologies,
                    setup.admission_checks)
        kueue.topology_requests = setup.topology_requests
        return kueue

    def __init__(self, flavors: list[ResourceFlavor], cluster_queues: list[ClusterQueue], local_queues: list[LocalQueue],
                 cohorts: list[Cohort] | None = None, config: KueueConfig | None = None, topologies: list | None = None,
                 admission_checks: list = ()):
        self.flavors = {f.name: f for f in flavors}
        # an inactive ClusterQueue is left out of Kueue's snapshot: it admits nothing and lends nothing in its
        # cohort (pkg/cache snapshot: InactiveClusterQueueSets); its workloads wait, "ClusterQueue <name> is inactive"
        self.inactive = {q.name: q for q in cluster_queues if q.inactive}
        cluster_queues = [q for q in cluster_queues if not q.inactive]
        self.cluster_queues = {q.name: q for q in cluster_queues}
        self.local_queues = {(lq.namespace, lq.name): lq for lq in local_queues}
        self.cohorts = {c.name: c for c in cohorts or []}
        self.config = config or KueueConfig()
        self.tree = QuotaTree(cluster_queues, cohorts or [])
        self.queues = {q.name: PendingWorkloads(q.queueing_strategy, self.config.equivalence_hashing) for q in cluster_queues}
        self.admitted: dict[str, dict[int, Workload]] = {q.name: {} for q in cluster_queues}
        self.preemptor = Preemptor(self.tree, self.cluster_queues, self.admitted, self.config)
        # made once: a cycle runs after every change, and the ClusterQueues and their settings are fixed for the run
        self._queue_names = sorted(self.queues)
        self._assigners: dict[str, FlavorAssigner] = {}
        self._last_oracle: tuple | None = None  # (workload, cq, request, frs, targets) of the assigner's last question
        self._never_preempts: dict[str, bool] = {}  # ClusterQueue -> FAST_REJECT applies to it (see _replay_reject)
        self._rejects: dict[tuple, tuple] = {}  # (ClusterQueue, class) -> its last failed assignment, to replay
        self._park_reasons: dict[tuple, tuple] = {}  # (ClusterQueue, class) -> (its memo, {figures: (message, cause)})
        self._fit_memos: dict[tuple, tuple] = {}  # (ClusterQueue, class) -> its last fitting assignment (FAST_FIT)
        self._replay_missed: Workload | None = None  # the head whose class's failure FAST_PARK found not to replay
        # Topology-Aware Scheduling, when a flavor names a Topology (its replays would not see the nodes: no FAST_REJECT)
        self.tas = None
        self.topology_requests: dict = {}  # (job key, pod set) -> TopologyRequest, read by the layer (workload_for)
        if any(f.topology_name is not None for f in flavors):
            self.tas = TopologyCache(self.flavors, topologies or [], self.cluster_queues, list(admission_checks))
            self._never_preempts.update({q: False for q in self.cluster_queues if self.tas.cq_flavors[q] & set(self.tas.flavors)})
        self.workloads: dict[int, Workload] = {}
        self.orphans: dict[int, Workload] = {}  # no such LocalQueue or ClusterQueue
        self._seq = 0
        self.cycles = 0
        self.now = 0.0
        # bumped by every change to the queues or the quota usage, so that the metrics
        # (sampled after every change the layer sees) skip the samples where nothing changed
        self.revision = 0
        # bumped by every lasting change of quota usage (reserve, release): every other change of
        # usage (trials within a cycle, preemption's what-ifs) is undone before the call returns
        self.usage_revision = 0

    # -- workloads in and out ------------------------------------------------
    def submit(self, wl: Workload) -> None:
        """A new pending workload (Kueue's job integration created it)."""
        self.revision += 1
        wl.seq = self._seq
        self._seq += 1
        self.workloads[wl.seq] = wl
        lq = self.local_queues.get((wl.namespace or "default", wl.queue_name))
        if lq is None:
            wl.pending_reason = f"LocalQueue {wl.queue_name} doesn't exist in namespace {wl.namespace or 'default'}"
            wl.pending_cause = ""
            self.orphans[wl.seq] = wl
            return
        if lq.cluster_queue in self.inactive:
            wl.cluster_queue = lq.cluster_queue
            wl.pending_reason = f"ClusterQueue {lq.cluster_queue} is inactive"
            wl.pending_cause = ""
            self.orphans[wl.seq] = wl
            return
        if lq.cluster_queue not in self.cluster_queues:
            wl.pending_reason = f"ClusterQueue {lq.cluster_queue} doesn't exist"
            wl.pending_cause = ""
            self.orphans[wl.seq] = wl
            return
        wl.cluster_queue = lq.cluster_queue
        self.queues[wl.cluster_queue].push(wl)

    def admit_existing(self, wl: Workload, admission: Admission, at: float = 0.0) -> None:
        """A workload that already holds quota (``status.admission`` in the input)."""
        if admission.cluster_queue in self.inactive:
            raise ScenarioError([Problem(f"Workload {wl.key}", "status.admission.clusterQueue",
                                         f"ClusterQueue {admission.cluster_queue} is inactive "
                                         f"({self.inactive[admission.cluster_queue].inactive}); gangkit does not model "
                                         "workloads admitted before their queue became inactive")])
        wl.seq = self._seq
        self._seq += 1
        self.workloads[wl.seq] = wl
        wl.cluster_queue = admission.cluster_queue
        self._reserve(wl, admission, at)

    def _reserve(self, wl: Workload, admission: Admission, now: float) -> None:
        self.revision += 1
        self.usage_revision += 1
        wl.admission = admission
        wl.quota_reserved_at = now
        wl.pending_reason = wl.pending_cause = ""
        node = self.tree.cq[admission.cluster_queue]
        for fr, v in admission.usage.items():
            node.add_usage(fr, v)
        if self.tas is not None:
            self.tas.add(wl)
        self.admitted[admission.cluster_queue][wl.seq] = wl
        self.queues[admission.cluster_queue].remove(wl)

    def _release(self, wl: Workload) -> None:
        adm = wl.admission
        if adm is None:
            return
        self.revision += 1
        self.usage_revision += 1
        node = self.tree.cq[adm.cluster_queue]
        for fr, v in adm.usage.items():
            node.remove_usage(fr, v)
        if self.tas is not None:
            self.tas.remove(wl)
        self.admitted[adm.cluster_queue].pop(wl.seq, None)
        wl.admission = None
        wl.quota_reserved_at = None

    def finish(self, wl: Workload) -> None:
        """The workload's job finished: its quota goes back, parked workloads of the tree are retried."""
        self.revision += 1
        cq = wl.admission.cluster_queue if wl.admission else wl.cluster_queue
        self._release(wl)
        wl.finished = True
        self.workloads.pop(wl.seq, None)
        if cq:
            self.queues[cq].remove(wl)
            self._retry_inadmissible(cq)

    def evict(self, wl: Workload, reason: str, requeue_at: float | None = None, order_time: float | None = None) -> None:
        """Take the workload's quota back and queue it again.

        A preempted workload keeps its creation time. After a PodsReady
        timeout it waits out its backoff (``requeue_at``) parked as
        inadmissible, and may queue behind newer workloads (``order_time``).
        """
        self.revision += 1
        cq = wl.admission.cluster_queue
        self._release(wl)
        wl.preempted_reason = reason
        wl.requeued_at = self.now
        if order_time is not None:
            wl.order_time = order_time
        wl.requeue_at = requeue_at
        if requeue_at is not None and requeue_at > self.now:
            wl.pending_reason = f"waiting for the requeue backoff after {reason} (until t={requeue_at:g} s)"
            wl.pending_cause = ""
            self.queues[cq].park(wl)
        else:
            self.queues[cq].push(wl)
        self._retry_inadmissible(cq)

    def deactivate(self, wl: Workload, reason: str) -> None:
        """Take the workload out of Kueue for good (``spec.active: false``), releasing its quota."""
        self.revision += 1
        cq = wl.admission.cluster_queue if wl.admission else wl.cluster_queue
        self._release(wl)
        wl.deactivated = True
        wl.pending_reason, wl.pending_cause = reason, ""
        if cq:
            self.queues[cq].remove(wl)
            self._retry_inadmissible(cq)

    def backoff_expired(self, wl: Workload, now: float) -> None:
        """The requeue backoff is over: the workload queues again (Kueue's Requeued=True)."""
        self.now = max(self.now, now)
        self.revision += 1
        if wl.admission is None and not wl.deactivated and not wl.finished and wl.cluster_queue:
            wl.requeue_at = None
            self.queues[wl.cluster_queue].push(wl)

    def topology_changed(self, flavors: set[str]) -> None:
        """Nodes of these TAS flavors gained room (a node came, pods outside TAS left): Kueue's TAS controllers
        requeue the inadmissible workloads of the ClusterQueues that use them (``NotifyRetryInadmissible``)."""
        for name in self._queue_names:
            if self.tas.uses(name, flavors):
                self._retry_inadmissible(name)

    def has_heads(self) -> bool:
        """Would a cycle now find a head in some ClusterQueue? (Without one it changes nothing.)"""
        for name in self._queue_names:
            if self.queues[name].has_head():
                return True
        return False

    def _retry_inadmissible(self, cq_name: str) -> bool:
        self.revision += 1
        moved = False
        for name in self.tree.tree_of(cq_name):
            moved |= self.queues[name].requeue_inadmissible(self.now)
        return moved

    # -- the cycle ----------------------------------------------------------------
    def cycle(self, now: float = 0.0) -> CycleResult:
        """One scheduling cycle; returns what it admitted and which workloads it preempted."""
        self.cycles += 1
        self.now = max(self.now, now)
        result = CycleResult()
        heads = []
        parked = False
        fast_park = FAST_PARK and FAST_REJECT and self.tas is None
        for name in self._queue_names:
            q = self.queues[name]
            if fast_park and q.equivalence:
                done = self._park_in_place(name, q)
                if done is None:
                    continue  # no head in this queue: pop would find none either
                if done:
                    parked = result.changed = True
                    continue
            wl = q.pop()
            if wl is not None:
                heads.append(Entry(wl, name))
        if not heads:
            if parked:
                self.revision += 1
            return result
        self.revision += 1  # heads left their queues (and go back, or are admitted)
        for e in heads:
            self._nominate_entry(e)
        reserved: list[tuple] = []  # capacity held for the rest of this cycle only
        preempted: dict[int, tuple[Target, Workload]] = {}
        if self.config.fair_sharing:
            order = order_entries(self.tree, heads, lambda e: e.assignment.usage if e.assignment else {},
                                  lambda e: e.workload.priority, lambda e: e.workload.queue_timestamp)
        elif len(heads) == 1:  # one ClusterQueue with pending work: nothing to rank
            order = heads
        else:
            order = sorted(heads, key=lambda e: (e.assignment.borrowing if e.assignment else 0, -e.workload.priority,
                                                 e.workload.queue_timestamp, e.workload.seq))
        for e in order:  # with fair sharing each pick sees the admissions made before it
            self._process(e, reserved, preempted, now, result)
        for node, fr, v in reversed(reserved):
            node.remove_usage(fr, v)
        if self.tas is not None:
            self.tas.end_cycle()
        for e in heads:
            if e.status != "admitted":
                self._requeue(e, result)
        for target, by in preempted.values():
            result.preempted.append((target.workload, target.reason, by))
            self.evict(target.workload, target.reason)
        result.changed = result.changed or bool(result.admitted or result.preempted)
        return result

    def _park_in_place(self, name: str, q: PendingWorkloads) -> bool | None:
        """FAST_PARK: park the head of ``q`` with its class when its class's last failure replays; True if done,
        None when ``q`` has no head.

        Only in a ClusterQueue where FAST_REJECT replays (no cohort, every preemption policy ``Never``, no fair
        sharing) and classes are shared (BestEffortFIFO): nothing else in the cycle reads or changes its quota,
        so the head's fate is its replayed nomination alone. A failed nomination there ends with the head back
        in its class and the class parked (``NoFit`` or ``PreemptionNoCandidates``; the capacity such a head
        holds for the rest of the cycle is its own queue's, which no other head uses), and the head's
        pending reason written: what this does, without taking the head out and putting it back.
        """
        wl = q.peek()
        if wl is None:
            return None
        if not self._never_preempts.get(name, True):
            return False
        key = (name, q.class_of(wl))
        memo = self._rejects.get(key)
        if not memo:
            return False
        reason = self._park_reason(key, memo, self.tree.cq[name])
        if reason is None:
            self._replay_missed = wl  # _nominate need not replay it again
            return False
        wl.pending_reason, wl.pending_cause = reason
        q.park_head(wl)
        return True

    def _park_reason(self, key: tuple, memo: tuple, node) -> tuple[str, str] | None:
        """The pending reason and cause of :meth:`_replay_reject`'s assignment, or None when it does not replay.

        They depend on the memo and on the unused quota its reasons quote alone, so they are kept per class for
        the figures seen (a full ClusterQueue parks its classes again and again with the same few figures).
        """
        a, checks, index, template = memo
        usage = node.usage
        if not _checks_hold(checks, usage):
            return None
        figures = () if index is None else tuple(usage[r[2]] for r in template if type(r) is not str)
        kept = self._park_reasons.get(key)
        if kept is None or kept[0] is not memo or len(kept[1]) >= 256:
            kept = self._park_reasons[key] = (memo, {})
        reason = kept[1].get(figures)
        if reason is None:
            a = self._replay_reject(memo, node)
            reason = kept[1][figures] = (a.message if a.mode == NOFIT else (a.message or "no preemption candidates"),
                                         a.cause)
        return reason

    def _nominate_entry(self, e: Entry) -> None:
        """The nomination, then (TAS) the topology it would hold if it must preempt (Kueue's getAssignments)."""
        self._nominate(e)
        if self.tas is not None:
            self.tas.for_preemption(e.workload, e.cq, e.assignment, e.targets)

    def _assign(self, assigner: FlavorAssigner, wl: Workload, counts: dict | None = None) -> Assignment:
        """Flavor assignment, then (TAS) the topology assignment of its pod sets (Kueue's FlavorAssigner.Assign)."""
        a = assigner.assign(wl, counts)
        if self.tas is not None:
            self.tas.assign(wl, assigner.cq.name, a)
        return a

    def _nominate(self, e: Entry) -> None:
        assigner = self._assigner(e.cq)
        key = memo = None
        if FAST_REJECT and self._never_preempts.get(e.cq, True):
            key = (e.cq, self.queues[e.cq].class_of(e.workload))
            memo = self._rejects.get(key)  # absent: never traced; False: traced the next time
            fit = self._fit_memos.get(key) if FAST_FIT else None  # its last assignment that fitted (FAST_FIT)
            missed, self._replay_missed = self._replay_missed is e.workload, None  # FAST_PARK replayed memo already
            for kept in (memo, fit):
                if kept and not (missed and kept is memo):
                    replayed = self._replay_reject(kept, self.tree.cq[e.cq])
                    if replayed is not None:
                        e.assignment = replayed  # no victims (every policy is Never), no minCount: nothing else to do
                        return
            # a class is traced from its first nomination with FAST_FIT (where classes are shared: one memo per
            # class, not per workload), else after its first failure
            traced = memo is not None or fit is not None or (FAST_FIT and self.queues[e.cq].equivalence and self._replayable(e))
            if traced:
                assigner.trace, assigner.trace_quotes = [], {}
        else:
            traced = False
        self._last_oracle = None
        e.assignment = self._assign(assigner, e.workload)
        if traced:
            self._remember_reject(key, e.assignment, assigner)
        elif key is not None and e.assignment.mode != FIT and self._replayable(e):
            self._rejects[key] = False
        if e.assignment.mode == PREEMPT:
            usage, frs = e.assignment.usage, e.assignment.frs_needing_preemption()
            last = self._last_oracle
            if REUSE_TARGETS and last is not None and last[0] is e.workload and last[1] == e.cq \
                    and last[2] == usage and last[3] == frs:
                # the assigner's last question was this one, and nothing has changed since (it undoes its
                # what-ifs before it returns): Preemptor.targets would give the same victims again
                e.targets = list(last[4])
            else:
                e.targets = self.preemptor.targets(e.workload, e.cq, usage, frs)
        if e.assignment.mode == FIT or (e.assignment.mode == PREEMPT and e.targets):
            return
        partial = self._partial_admission(e, assigner)
        if partial is not None:
            e.assignment, e.targets = partial

    def _replayable(self, e: Entry) -> bool:
        """FAST_REJECT's conditions: a ClusterQueue without cohort whose preemption policies are all ``Never``, no
        fair sharing, and a workload without ``minCount`` (so the nomination is the flavor assignment alone)."""
        ok = self._never_preempts.get(e.cq)
        if ok is None:
            p = self.cluster_queues[e.cq].preemption
            ok = self._never_preempts[e.cq] = (
                self.tree.cq[e.cq].parent is None and not self.config.fair_sharing
                and p.within_cluster_queue == p.reclaim_within_cohort == p.borrow_within_cohort == "Never")
        return ok and all(ps.min_count is None or ps.min_count == ps.count for ps in e.workload.pod_sets)

    def _remember_reject(self, key: tuple, a: Assignment, assigner: FlavorAssigner) -> None:
        """Keep a failed assignment of ``key``'s class with the quota checks it made (see _replay_reject)."""
        checks, quotes = assigner.trace, assigner.trace_quotes
        assigner.trace, assigner.trace_quotes = None, {}
        if a.mode == FIT:
            # a fit quotes no figure (it has no reason): with FAST_FIT it is kept beside the class's last failure
            # and replayed as it is (a class that fits and fails in turn replays both); else the next is traced
            if FAST_FIT:
                self._fit_memos[key] = (a, checks, None, None)
            else:
                self._rejects[key] = False
            return
        failing = a._failing()
        index = None if failing is None else a.podsets.index(failing)
        template = None if failing is None else [quotes.get(id(r), r) for r in failing.reasons]
        self._rejects[key] = (a, checks, index, template)

    def _replay_reject(self, memo: tuple, node) -> Assignment | None:
        """The flavor assignment of a class head, as it would come out now, or None when it could differ.

        In a ClusterQueue without cohort, a resource of one pod set fits when the request (with what earlier
        pod sets of the workload took of it) is within the quota and within the quota less the usage; that is
        all the assignment looks at, besides what cannot change (the workload's pod sets, the queue's flavors
        and quotas), and the preemptor finds no victims when every policy is ``Never``. When each check it
        made comes out as it did, it takes the same steps to the same result, and only the reasons that
        quote the unused quota read the usage: they are written again with today's figure.
        """
        a, checks, index, template = memo
        usage = node.usage
        if not _checks_hold(checks, usage):
            return None
        if index is None:
            return a
        reasons = [r if type(r) is str else unused_quota_reason(r[0], r[1], r[3], r[4] - usage[r[2]]) for r in template]
        podsets = list(a.podsets)
        ps = podsets[index]
        podsets[index] = PodSetAssignment(ps.name, ps.count, ps.flavors, ps.modes, ps.requests, reasons, ps.causes)
        return Assignment(podsets, a.usage, a.borrowing, a.mode)

    def _assigner(self, cq_name: str) -> FlavorAssigner:
        """The ClusterQueue's flavor assigner (it reads the live quota tree, so one per queue serves every cycle)."""
        assigner = self._assigners.get(cq_name)
        if assigner is None:
            oracle = lambda wl, request, frs: self._oracle(wl, cq_name, request, frs)  # noqa: E731
            assigner = FlavorAssigner(self.cluster_queues[cq_name], self.tree.cq[cq_name], self.flavors, oracle,
                                      self.config.fair_sharing, self.tree.cq, self.tas)
            self._assigners[cq_name] = assigner
        return assigner

    def _oracle(self, wl: Workload, cq_name: str, request: dict, frs: set) -> list[Target]:
        """The flavor assigner's question to the preemptor; the last question and answer are kept for _nominate."""
        found = self.preemptor.targets(wl, cq_name, request, frs)
        self._last_oracle = (wl, cq_name, dict(request), set(frs), found)
        return found

    def _partial_admission(self, e: Entry, assigner: FlavorAssigner):
        """The largest pod counts between ``minCount`` and ``count`` that fit (or fit by preemption).

        Kueue reduces every pod set with a ``minCount`` in step: at step k of
        ``total`` a pod set with ``delta = count - minCount`` has
        ``count - delta * k // total`` pods, and a binary search finds the
        smallest k that works (Kueue's ``podset_reducer.go``).
        """
        wl = e.workload
        deltas = [ps.count - (ps.min_count if ps.min_count is not None else ps.count) for ps in wl.pod_sets]
        total = sum(deltas)
        if total == 0:
            return None

        def attempt(k: int):
            counts = {ps.name: ps.count - d * k // total for ps, d in zip(wl.pod_sets, deltas)}
            a = self._assign(assigner, wl, counts)
            if a.mode == FIT:
                return a, []
            if a.mode == PREEMPT:
                targets = self.preemptor.targets(wl, e.cq, a.usage, a.frs_needing_preemption())
                if targets:
                    return a, targets
            return None

        lo, hi, found = 0, total + 1, None
        while lo < hi:  # Go's sort.Search: the smallest k for which attempt(k) succeeds
            mid = (lo + hi) // 2
            r = attempt(mid)
            if r is not None:
                hi, found = mid, (mid, r)
            else:
                lo = mid + 1
        if found is not None and found[0] == lo:
            return found[1]
        return None

    def _process(self, e: Entry, reserved: list, preempted: dict, now: float, result: CycleResult) -> None:
        if self.tas is not None and e.assignment.tas_usage and self._fits(e, preempted, topology=False) \
                and not self._fits(e, preempted):
            e.targets = []  # its domains were taken in this cycle: TASRecomputeAssignmentWithinSchedulingCycle
            self._nominate_entry(e)
        a = e.assignment
        node = self.tree.cq[e.cq]
        if a.mode == NOFIT:
            e.requeue_reason, e.message, e.cause = "NoFit", a.message, a.cause
            return
        if a.mode == PREEMPT and not e.targets:
            e.requeue_reason, e.message = "PreemptionNoCandidates", a.message or "no preemption candidates"
            e.cause = a.cause
            if self.cluster_queues[e.cq].preemption.reclaim_within_cohort != "Any":
                for fr, v in self._to_reserve(e).items():
                    if v > 0:
                        node.add_usage(fr, v)
                        reserved.append((node, fr, v))
                if self.tas is not None:
                    self.tas.reserve(a)
            return
        if e.targets and any(t.workload.seq in preempted for t in e.targets):
            e.requeue_reason, e.message = SKIPPED, "Workload has overlapping preemption targets with another workload"
            return
        if not self._fits(e, preempted):
            e.requeue_reason, e.message = SKIPPED, "Workload no longer fits after processing another workload"
            return
        if a.mode == PREEMPT:
            for fr, v in a.usage.items():  # the preemptor holds its capacity for the rest of the cycle
                node.add_usage(fr, v)
                reserved.append((node, fr, v))
            for t in e.targets:
                preempted[t.workload.seq] = (t, e.workload)
            e.status = "preempting"
            e.requeue_reason = PENDING_PREEMPTION
            e.message = f"waiting for {len(e.targets)} preempted workloads to release their quota"
            return
        flavors = {ps.name: dict(ps.flavors) for ps in a.podsets}
        counts = {ps.name: ps.count for ps in a.podsets}
        topology = {ps.name: ps.topology for ps in a.podsets if ps.topology is not None}
        self._reserve(e.workload, Admission(e.cq, flavors, counts, dict(a.usage), topology), now)
        e.status = "admitted"
        result.admitted.append(e.workload)

    def _fits(self, e: Entry, preempted: dict, topology: bool = True) -> bool:
        """Does the entry still fit, counting as gone every victim chosen so far in this cycle? With ``topology``
        (and TAS), its topology assignment's domains must still hold its pods too."""
        node = self.tree.cq[e.cq]
        tas = topology and self.tas is not None
        if not preempted and not e.targets:  # no victims anywhere in this cycle: the quota as it stands
            return all(v <= node.available(fr) for fr, v in e.assignment.usage.items()) and (
                not tas or self.tas.fits(e.assignment))
        gone = {t.workload.seq: t.workload for t, _ in preempted.values()}
        gone.update({t.workload.seq: t.workload for t in e.targets})
        for wl in gone.values():
            for fr, v in wl.admission.usage.items():
                self.tree.cq[wl.admission.cluster_queue].remove_usage(fr, v)
        try:
            return all(v <= node.available(fr) for fr, v in e.assignment.usage.items()) and (
                not tas or self.tas.fits(e.assignment, gone.values()))
        finally:
            for wl in gone.values():
                for fr, v in wl.admission.usage.items():
                    self.tree.cq[wl.admission.cluster_queue].add_usage(fr, v)

    def _to_reserve(self, e: Entry) -> dict:
        node = self.tree.cq[e.cq]
        out = {}
        for fr, req in e.assignment.usage.items():
            q = node.quotas.get(fr)
            if e.assignment.borrowing > 0:
                out[fr] = req if q is None or q.borrowing_limit is None else min(req, q.nominal + q.borrowing_limit - node.usage[fr])
            else:
                out[fr] = max(0, min(req, node.nominal(fr) - node.usage[fr]))
        return out

    def _requeue(self, e: Entry, result: CycleResult) -> None:
        wl, q = e.workload, self.queues[e.cq]
        wl.pending_reason, wl.pending_cause = e.message, e.cause
        immediate = q.strategy == "StrictFIFO" or e.requeue_reason in (SKIPPED, PENDING_PREEMPTION)
        if e.requeue_reason == PENDING_PREEMPTION:
            q.preemptor = wl
        if immediate:
            q.push(wl)
        else:
            q.park(wl, bulk=e.requeue_reason in ("NoFit", "PreemptionNoCandidates"))
            result.changed = True

    def run(self, cycles: int | None = None, now: float = 0.0, limit: int = 100000) -> CycleResult:
        """Run ``cycles`` cycles, or (``None``) until a cycle changes nothing; merge their results."""
        total = CycleResult()
        n = 0
        while True:
            r = self.cycle(now)
            n += 1
            total.admitted.extend(r.admitted)
            total.preempted.extend(r.preempted)
            total.changed |= r.changed
            if cycles is not None and n >= cycles:
                break
            if cycles is None and not r.changed:
                break
            if n >= limit:
                raise RuntimeError(f"Kueue did not settle after {limit} cycles")
        return total

    # -- reporting ------------------------------------------------------------------
    def pending_state(self, wl: Workload) -> tuple[str, str]:
        """("active" | "inadmissible", reason) for a pending workload."""
        state, reason, _ = self.pending_explained(wl)
        return state, reason

    def pending_explained(self, wl: Workload) -> tuple[str, str, str]:
        """("active" | "inadmissible", reason, cause code) for a pending workload (the cause: Workload.pending_cause)."""
        if wl.seq in self.orphans:
            return "inadmissible", wl.pending_reason, wl.pending_cause
        q = self.queues[wl.cluster_queue]
        if q.is_inadmissible(wl):
            if wl.seq not in q.parked and q.class_of(wl) in q.blocked:
                reason, cause = q.class_reason.get(q.class_of(wl), (wl.pending_reason, wl.pending_cause))
                return "inadmissible", reason, cause
            return "inadmissible", wl.pending_reason, wl.pending_cause
        return "active", wl.pending_reason, wl.pending_cause


def _checks_hold(checks: list, usage) -> bool:
    """Each quota check a traced flavor assignment made comes out as it did: (flavor and resource, request, quota,
    whether it fitted), against the ClusterQueue's usage now (see Kueue._replay_reject)."""
    for fr, val, cap, fits in checks:
        if (val <= cap and val <= cap - usage[fr]) != fits:
            return False
    return True
