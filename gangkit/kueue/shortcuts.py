"""Kueue's fast paths: gangkit's exact shortcuts beside Kueue's cycle, not Kueue's.

Kueue's cycle (:mod:`gangkit.kueue.scheduler`) reads as Kueue's own numbered
steps; each shortcut below hooks in at a line marked ``# fast path: <name>``
and is one field of :class:`gangkit.model.fast_paths.FastPaths`. Every one
leaves the queues, the admissions and each reason's text as the plain steps
leave them (``tests/engine/test_fast_paths.py`` runs each case both ways).

- **cache_scheduling_hash**: a pending workload's scheduling hash (its
  equivalence class) is computed once (:meth:`gangkit.kueue.pending.PendingWorkloads.class_of`).
- **reuse_targets**: a nomination that needs preemption reuses the victims
  the flavor assigner just asked the preemptor for, when it asked for the
  same request (the assigner undoes its what-ifs before it returns, so
  ``Preemptor.targets`` would answer the same).
- **fast_reject**: a class parked after a failed nomination is retried after
  every release (BestEffortFIFO). In a ClusterQueue without cohort, whose
  three preemption policies are ``Never`` (so no victim is ever found) and
  without fair sharing, the retry of a workload without ``minCount``
  replays the class's last failed flavor assignment when each of its quota
  checks would come out as it did, with the reasons' "available" figures
  quoted anew: the flavor assigner then runs only when something it looked
  at crossed its request (:meth:`Replays.replay`).
- **fast_fit** (with fast_reject): such a class's last assignment that
  fitted is replayed the same way (a fit has no reason to quote).
- **fast_park** (with fast_reject; not with Topology-Aware Scheduling, whose
  replays would not see the nodes): in such a queue, with BestEffortFIFO, a
  head whose class's last failure replays is parked with its class where it
  stands: popping it, nominating it and pushing it back would leave the
  same queue and the same reason. The reason's text is kept per class and
  per unused-quota figure it quotes (:meth:`Replays.park_reason`).

The layer also stops its cycles at an instant once no ClusterQueue has a
head left to pop (:meth:`gangkit.kueue.scheduler.Kueue.has_heads`): a cycle
without heads changes nothing.
"""

from __future__ import annotations

from gangkit.kueue.flavor_assigner import FIT, NOFIT, Assignment, FlavorAssigner, PodSetAssignment, unused_quota_reason
from gangkit.kueue.pending import PendingWorkloads
from gangkit.model.fast_paths import FastPaths


class Replays:
    """One Kueue's kept assignments per (ClusterQueue, class), and the switches of its fast paths."""

    def __init__(self, kueue, fast_paths: FastPaths):
        """For ``kueue`` (a :class:`gangkit.kueue.scheduler.Kueue`), with the run's fast paths."""
        self.kueue = kueue
        self.reject = fast_paths.fast_reject
        self.fit = fast_paths.fast_fit
        self.park = fast_paths.fast_park and fast_paths.fast_reject and kueue.tas is None
        self.reuse = fast_paths.reuse_targets
        self.last_oracle: tuple | None = None  # (workload, cq, request, frs, targets) of the assigner's last question
        self.never_preempts: dict[str, bool] = {}  # ClusterQueue -> fast_reject applies to it (see replayable)
        self.rejects: dict[tuple, tuple] = {}  # (ClusterQueue, class) -> its last failed assignment, to replay
        self.park_reasons: dict[tuple, tuple] = {}  # (ClusterQueue, class) -> (its memo, {figures: (message, cause)})
        self.fit_memos: dict[tuple, tuple] = {}  # (ClusterQueue, class) -> its last fitting assignment (fast_fit)
        self.replay_missed = None  # the head whose class's failure park_in_place found not to replay
        tas = kueue.tas
        if tas is not None:  # a queue with TAS flavors: its replays would not see the nodes
            self.never_preempts.update({q: False for q in kueue.cluster_queues if tas.cq_flavors[q] & set(tas.flavors)})

    # -- fast_park -----------------------------------------------------------------------------------
    def park_in_place(self, name: str, q: PendingWorkloads) -> bool | None:
        """Park the head of ``q`` with its class when its class's last failure replays; True if done, None when
        ``q`` has no head.

        Only in a ClusterQueue where fast_reject replays (no cohort, every preemption policy ``Never``, no fair
        sharing) and classes are shared (BestEffortFIFO): nothing else in the cycle reads or changes its quota,
        so the head's fate is its replayed nomination alone. A failed nomination there ends with the head back
        in its class and the class parked (``NoFit`` or ``PreemptionNoCandidates``; the capacity such a head
        holds for the rest of the cycle is its own queue's, which no other head uses), and the head's
        pending reason written: what this does, without taking the head out and putting it back.
        """
        wl = q.peek()
        if wl is None:
            return None
        if not self.never_preempts.get(name, True):
            return False
        key = (name, q.class_of(wl))
        memo = self.rejects.get(key)
        if not memo:
            return False
        reason = self.park_reason(key, memo, self.kueue.tree.cq[name])
        if reason is None:
            self.replay_missed = wl  # the nomination need not replay it again
            return False
        wl.pending_reason, wl.pending_cause = reason
        q.park_head(wl)
        return True

    def park_reason(self, key: tuple, memo: tuple, node) -> tuple[str, str] | None:
        """The pending reason and cause of :meth:`replay`'s assignment, or None when it does not replay.

        They depend on the memo and on the unused quota its reasons quote alone, so they are kept per class for
        the figures seen (a full ClusterQueue parks its classes again and again with the same few figures).
        """
        a, checks, index, template = memo
        usage = node.usage
        if not checks_hold(checks, usage):
            return None
        figures = () if index is None else tuple(usage[r[2]] for r in template if type(r) is not str)
        kept = self.park_reasons.get(key)
        if kept is None or kept[0] is not memo or len(kept[1]) >= 256:
            kept = self.park_reasons[key] = (memo, {})
        reason = kept[1].get(figures)
        if reason is None:
            a = self.replay(memo, node)
            reason = kept[1][figures] = (a.message if a.mode == NOFIT else (a.message or "no preemption candidates"),
                                         a.cause)
        return reason

    # -- fast_reject and fast_fit --------------------------------------------------------------------
    def before_nomination(self, e, assigner: FlavorAssigner) -> tuple[tuple, Assignment | None, bool]:
        """(the head's class key, its replayed assignment or None, whether the assigner is to trace its checks)."""
        kueue = self.kueue
        key = (e.cq, kueue.queues[e.cq].class_of(e.workload))
        memo = self.rejects.get(key)  # absent: never traced; False: traced the next time
        fit = self.fit_memos.get(key) if self.fit else None  # its last assignment that fitted (fast_fit)
        missed, self.replay_missed = self.replay_missed is e.workload, None  # park_in_place replayed memo already
        for kept in (memo, fit):
            if kept and not (missed and kept is memo):
                replayed = self.replay(kept, kueue.tree.cq[e.cq])
                if replayed is not None:
                    return key, replayed, False  # no victims (every policy is Never), no minCount: nothing else to do
        # a class is traced from its first nomination with fast_fit (where classes are shared: one memo per
        # class, not per workload), else after its first failure
        traced = memo is not None or fit is not None or (self.fit and kueue.queues[e.cq].equivalence
                                                          and self.replayable(e))
        if traced:
            assigner.trace, assigner.trace_quotes = [], {}
        return key, None, traced

    def after_nomination(self, key: tuple, e, assigner: FlavorAssigner, traced: bool) -> None:
        """Keep the traced assignment of ``key``'s class, or mark the class to be traced at its next nomination."""
        if traced:
            self.remember(key, e.assignment, assigner)
        elif e.assignment.mode != FIT and self.replayable(e):
            self.rejects[key] = False

    def replayable(self, e) -> bool:
        """fast_reject's conditions: a ClusterQueue without cohort whose preemption policies are all ``Never``, no
        fair sharing, and a workload without ``minCount`` (so the nomination is the flavor assignment alone)."""
        ok = self.never_preempts.get(e.cq)
        if ok is None:
            kueue = self.kueue
            p = kueue.cluster_queues[e.cq].preemption
            ok = self.never_preempts[e.cq] = (
                kueue.tree.cq[e.cq].parent is None and not kueue.config.fair_sharing
                and p.within_cluster_queue == p.reclaim_within_cohort == p.borrow_within_cohort == "Never")
        return ok and all(ps.min_count is None or ps.min_count == ps.count for ps in e.workload.pod_sets)

    def remember(self, key: tuple, a: Assignment, assigner: FlavorAssigner) -> None:
        """Keep an assignment of ``key``'s class with the quota checks it made (see :meth:`replay`)."""
        checks, quotes = assigner.trace, assigner.trace_quotes
        assigner.trace, assigner.trace_quotes = None, {}
        if a.mode == FIT:
            # a fit quotes no figure (it has no reason): with fast_fit it is kept beside the class's last failure
            # and replayed as it is (a class that fits and fails in turn replays both); else the next is traced
            if self.fit:
                self.fit_memos[key] = (a, checks, None, None)
            else:
                self.rejects[key] = False
            return
        failing = a._failing()
        index = None if failing is None else a.podsets.index(failing)
        template = None if failing is None else [quotes.get(id(r), r) for r in failing.reasons]
        self.rejects[key] = (a, checks, index, template)

    def replay(self, memo: tuple, node) -> Assignment | None:
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
        if not checks_hold(checks, usage):
            return None
        if index is None:
            return a
        reasons = [r if type(r) is str else unused_quota_reason(r[0], r[1], r[3], r[4] - usage[r[2]]) for r in template]
        podsets = list(a.podsets)
        ps = podsets[index]
        podsets[index] = PodSetAssignment(ps.name, ps.count, ps.flavors, ps.modes, ps.requests, reasons, ps.causes)
        return Assignment(podsets, a.usage, a.borrowing, a.mode)

    # -- reuse_targets -------------------------------------------------------------------------------
    def reused_targets(self, e, usage: dict, frs: set) -> list | None:
        """The victims the flavor assigner's last question found, when it asked for this very request; else None."""
        last = self.last_oracle
        if self.reuse and last is not None and last[0] is e.workload and last[1] == e.cq \
                and last[2] == usage and last[3] == frs:
            # the assigner's last question was this one, and nothing has changed since (it undoes its
            # what-ifs before it returns): Preemptor.targets would give the same victims again
            return list(last[4])
        return None


def checks_hold(checks: list, usage) -> bool:
    """Each quota check a traced flavor assignment made comes out as it did: (flavor and resource, request, quota,
    whether it fitted), against the ClusterQueue's usage now (see Replays.replay)."""
    for fr, val, cap, fits in checks:
        if (val <= cap and val <= cap - usage[fr]) != fits:
            return False
    return True
