"""Kueue's scheduling cycle: one head per ClusterQueue, ranked, admitted or requeued.

Each ClusterQueue keeps its pending workloads (:mod:`.pending`) in a heap (priority, then
creation time) and a set of *inadmissible* ones parked aside. A cycle:

A cycle takes the numbered steps of Kueue v0.19's ``schedule()``
(``pkg/scheduler/scheduler.go``), each a short method of :class:`Kueue`:

1. get the heads: the head of every ClusterQueue's heap (:meth:`Kueue._heads`);
2. take a snapshot of the quota: here the live quota tree serves, and what
   the cycle holds on it for the rest of the cycle is taken off at its end;
3. nominate: assign flavors to each head against the quota at the start of
   the cycle (:mod:`.flavor_assigner`), and find preemption victims where
   needed (:mod:`.preemption`) (:meth:`Kueue._nominate_heads`);
4. order the entries: lower borrowing level first (0 = within the queue's
   nominal quota), then higher priority, then older; with fair sharing,
   Kueue's fair-sharing iterator (:meth:`Kueue._ordered`);
5. admit in that order, re-checking each entry against the quota that
   earlier entries of the same cycle took; a head that needs preemption but
   found no victims still reserves its capacity for the rest of the cycle
   (unless ``reclaimWithinCohort: Any``); a head that found victims preempts
   them and is admitted in a later cycle, once they have released their
   quota (:meth:`Kueue._admit_in_order`);
6. requeue the heads not admitted (:meth:`Kueue._requeue_rest`). With
   ``StrictFIFO`` a head that cannot be admitted goes straight back and
   blocks its queue; with ``BestEffortFIFO`` it is parked as inadmissible
   until an event in its cohort tree (a workload finishes or is evicted)
   moves the parked workloads back. Under both, a head that waits for its
   victims, or that fitted at nomination but lost capacity to an earlier
   head, goes straight back to the heap.

Quota is reserved for the whole workload at once. Rules after Kueue's
``pkg/scheduler/scheduler.go`` and ``pkg/cache/queue``. With a TAS flavor
in the setup, the nominations also get topology assignments and the cycle
checks them (:mod:`gangkit.kueue.tas.cache`).

gangkit's exact shortcuts (replaying a class's last reject or fit, parking a
head in place, reusing the preemptor's answer) live beside the cycle in
:mod:`gangkit.kueue.shortcuts`; each hooks in at a line marked ``# fast path:``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from gangkit.kueue.fair_sharing import order_entries
from gangkit.kueue.flavor_assigner import (
    FIT,
    NOFIT,
    PREEMPT,
    Assignment,
    FlavorAssigner,
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
from gangkit.kueue.shortcuts import Replays
from gangkit.kueue.targets import Target
from gangkit.kueue.tas.cache import TopologyCache
from gangkit.model.errors import Problem, ScenarioError
from gangkit.model.fast_paths import ALL_ON, FastPaths

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
    def from_setup(cls, setup: KueueSetup, fast_paths: FastPaths = ALL_ON) -> "Kueue":
        """A fresh Kueue (empty queues, nothing admitted) from a scenario's Kueue objects."""
        kueue = cls(setup.flavors, setup.cluster_queues, setup.local_queues, setup.cohorts, setup.config, setup.topologies,
                    setup.admission_checks, fast_paths)
        kueue.topology_requests = setup.topology_requests
        return kueue

    def __init__(self, flavors: list[ResourceFlavor], cluster_queues: list[ClusterQueue], local_queues: list[LocalQueue],
                 cohorts: list[Cohort] | None = None, config: KueueConfig | None = None, topologies: list | None = None,
                 admission_checks: list = (), fast_paths: FastPaths = ALL_ON):
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
        self.queues = {q.name: PendingWorkloads(q.queueing_strategy, self.config.equivalence_hashing,
                                                fast_paths.cache_scheduling_hash) for q in cluster_queues}
        self.admitted: dict[str, dict[int, Workload]] = {q.name: {} for q in cluster_queues}
        self.preemptor = Preemptor(self.tree, self.cluster_queues, self.admitted, self.config)
        # made once: a cycle runs after every change, and the ClusterQueues and their settings are fixed for the run
        self._queue_names = sorted(self.queues)
        self._assigners: dict[str, FlavorAssigner] = {}
        # Topology-Aware Scheduling, when a flavor names a Topology
        self.tas = None
        self.topology_requests: dict = {}  # (job key, pod set) -> TopologyRequest, read by the layer (workload_for)
        if any(f.topology_name is not None for f in flavors):
            self.tas = TopologyCache(self.flavors, topologies or [], self.cluster_queues, list(admission_checks))
        self.replays = Replays(self, fast_paths)  # the fast paths' kept assignments (gangkit.kueue.shortcuts)
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

    # -- the cycle (Kueue v0.19 pkg/scheduler/scheduler.go, schedule()) ----------------------------
    def cycle(self, now: float = 0.0) -> CycleResult:
        """One scheduling cycle, in the numbered steps of Kueue's ``schedule()``; returns what it admitted and
        which workloads it preempted."""
        self.cycles += 1
        self.now = max(self.now, now)
        result = CycleResult()
        heads = self._heads(result)  # 1. get the heads
        if not heads:
            if result.changed:  # (heads parked in place)
                self.revision += 1
            return result
        self.revision += 1  # heads left their queues (and go back, or are admitted)
        # 2. the snapshot: the live quota tree; what this cycle holds on it is listed in ``reserved``
        self._nominate_heads(heads)  # 3. compute each head's assignment (flavors, borrowing, victims)
        order = self._ordered(heads)  # 4. sort the entries
        reserved: list[tuple] = []  # capacity held for the rest of this cycle only
        preempted: dict[int, tuple[Target, Workload]] = {}
        self._admit_in_order(order, reserved, preempted, now, result)  # 5. admit in order, with the cycle's usage
        self._requeue_rest(heads, reserved, preempted, result)  # 6. requeue the heads not admitted
        result.changed = result.changed or bool(result.admitted or result.preempted)
        return result

    def _heads(self, result: CycleResult) -> list[Entry]:
        """Step 1: the head of every ClusterQueue that has one (Kueue's ``queues.Heads``)."""
        heads = []
        park = self.replays.park
        for name in self._queue_names:
            q = self.queues[name]
            if park and q.equivalence:  # fast path: fast_park (a head whose class's failure replays parks in place)
                done = self.replays.park_in_place(name, q)
                if done is None:
                    continue  # no head in this queue: pop would find none either
                if done:
                    result.changed = True
                    continue
            wl = q.pop()
            if wl is not None:
                heads.append(Entry(wl, name))
        return heads

    def _nominate_heads(self, heads: list[Entry]) -> None:
        """Step 3: each head's flavor assignment and, where it must preempt, its victims (Kueue's ``nominate``)."""
        for e in heads:
            self._nominate_entry(e)

    def _ordered(self, heads: list[Entry]) -> Iterable[Entry]:
        """Step 4: the entries in admission order (Kueue's ``makeIterator``): lower borrowing first, then higher
        priority, then older; with fair sharing, the fair-sharing iterator (lazy: each pick sees the admissions
        made before it)."""
        if self.config.fair_sharing:
            return order_entries(self.tree, heads, lambda e: e.assignment.usage if e.assignment else {},
                                 lambda e: e.workload.priority, lambda e: e.workload.queue_timestamp)
        if len(heads) == 1:  # one ClusterQueue with pending work: nothing to rank
            return heads
        return sorted(heads, key=lambda e: (e.assignment.borrowing if e.assignment else 0, -e.workload.priority,
                                            e.workload.queue_timestamp, e.workload.seq))

    def _admit_in_order(self, order, reserved: list, preempted: dict, now: float, result: CycleResult) -> None:
        """Step 5: admit the entries in order, each checked against the quota the earlier ones took (Kueue's
        ``processEntry``)."""
        for e in order:
            self._process(e, reserved, preempted, now, result)

    def _requeue_rest(self, heads: list[Entry], reserved: list, preempted: dict, result: CycleResult) -> None:
        """Step 6: the cycle's holds taken off the quota, the heads not admitted requeued, the victims evicted."""
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
        """The head's flavor assignment, its preemption targets where it must preempt, and (with ``minCount``) the
        largest partial admission that works (Kueue's ``getAssignments``)."""
        assigner = self._assigner(e.cq)
        replays = self.replays
        key = None
        if replays.reject and replays.never_preempts.get(e.cq, True):  # fast path: fast_reject, fast_fit
            key, replayed, traced = replays.before_nomination(e, assigner)
            if replayed is not None:
                e.assignment = replayed
                return
        replays.last_oracle = None
        e.assignment = self._assign(assigner, e.workload)
        if key is not None:
            replays.after_nomination(key, e, assigner, traced)
        if e.assignment.mode == PREEMPT:
            usage, frs = e.assignment.usage, e.assignment.frs_needing_preemption()
            targets = replays.reused_targets(e, usage, frs)  # fast path: reuse_targets
            e.targets = targets if targets is not None else self.preemptor.targets(e.workload, e.cq, usage, frs)
        if e.assignment.mode == FIT or (e.assignment.mode == PREEMPT and e.targets):
            return
        partial = self._partial_admission(e, assigner)
        if partial is not None:
            e.assignment, e.targets = partial

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
        """The flavor assigner's question to the preemptor; the last question and answer are kept (reuse_targets)."""
        found = self.preemptor.targets(wl, cq_name, request, frs)
        self.replays.last_oracle = (wl, cq_name, dict(request), set(frs), found)  # for reuse_targets
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

