"""Fair sharing: who gets the next borrowed GPU, and who gives one back.

With fair sharing on, Kueue measures how much each ClusterQueue (or cohort)
borrows as its *dominant resource share* (DRS): for every resource, what it
uses beyond its own quota as a share (per mille) of what its parent could
lend it; the largest of those shares, divided by its ``fairSharing.weight``.
A queue within its quota has share 0.

- Admission: instead of "lower borrowing level first", heads compete in a
  tournament up the cohort tree; at each cohort the entry whose subtree does
  not borrow wins, then the lower share (counting the entry's own request),
  then higher priority, then age.
- Preemption: a queue may take back borrowed capacity from the queue with
  the highest share, victim by victim, as long as its share after admission
  stays at or below the target's share after the preemption
  (``LessThanOrEqualToFinalShare``), then, for the leftover candidates, as
  long as it stays below the target's share before it
  (``LessThanInitialShare``). Reason ``InCohortFairSharing``.

Rules after Kueue's ``fair_sharing.go``, ``fair_sharing_iterator.go`` and
``preemption/fairsharing``. Simplification: the target queue is chosen by
share among all borrowing queues of the tree, compared at the child of the
two queues' lowest common ancestor, rather than by Kueue's descent cohort by
cohort (the same on one-level cohorts).
"""

from __future__ import annotations

import math

from gangkit.kueue.quota import QuotaNode, QuotaTree
from gangkit.kueue.targets import fill_back


def drs(node: QuotaNode, extra: dict | None = None) -> float:
    """The dominant resource share of ``node`` (per mille, divided by its weight); 0 at the root."""
    if node.parent is None:
        return 0.0
    extra = extra or {}
    borrowed: dict[str, int] = {}
    for fr in set(node.subtree) | set(extra) | {fr for fr, v in node.usage.items() if v}:
        b = extra.get(fr, 0) + node.usage[fr] - node.subtree.get(fr, 0)
        if b > 0:
            borrowed[fr[1]] = borrowed.get(fr[1], 0) + b
    if not borrowed:
        return 0.0
    if node.weight == 0:
        return math.inf
    root = node.root()
    lendable: dict[str, int] = {}
    for fr in root.subtree:
        lendable[fr[1]] = lendable.get(fr[1], 0) + node.parent.potential_available(fr)
    best = 0.0
    for res in sorted(borrowed):
        if lendable.get(res, 0) > 0:
            best = max(best, borrowed[res] * 1000 / lendable[res])
    return best / node.weight


def _with_usage(tree: QuotaTree, cq: str, usage: dict, fn):
    node = tree.cq[cq]
    for fr, v in usage.items():
        node.add_usage(fr, v)
    try:
        return fn()
    finally:
        for fr, v in usage.items():
            node.remove_usage(fr, v)


def path_to_root(node: QuotaNode) -> list[QuotaNode]:
    out = [node]
    out.extend(node.ancestors())
    return out


def child_towards(ancestor: QuotaNode, node: QuotaNode) -> QuotaNode:
    """The child of ``ancestor`` on the path down to ``node``."""
    for n in path_to_root(node):
        if n.parent is ancestor:
            return n
    raise ValueError("not an ancestor")


def almost_lca(a: QuotaNode, b: QuotaNode) -> tuple[QuotaNode, QuotaNode]:
    """The children of the lowest common ancestor of ``a`` and ``b`` on the paths to each."""
    ancestors_a = path_to_root(a)
    for n in path_to_root(b):
        if n in ancestors_a:
            lca = n
            break
    return child_towards(lca, a), child_towards(lca, b)


def order_entries(tree: QuotaTree, entries: list, usage_of, priority_of, timestamp_of):
    """Yield entries in fair-sharing order; the caller processes each before the next is chosen."""
    remaining = list(entries)
    while remaining:
        first = sorted(remaining, key=lambda e: e.cq)[0]
        node = tree.cq[first.cq]
        if node.parent is None:
            remaining.remove(first)
            yield first
            continue
        root = node.root()
        in_tree = [e for e in remaining if tree.cq[e.cq].root() is root]
        winner = _tournament(tree, root, in_tree, usage_of, priority_of, timestamp_of)
        remaining.remove(winner)
        yield winner


def _tournament(tree, cohort: QuotaNode, entries, usage_of, priority_of, timestamp_of):
    candidates = []
    for child in cohort.children:
        if child.is_cluster_queue:
            candidates.extend(e for e in entries if e.cq == child.name)
        else:
            w = _tournament(tree, child, entries, usage_of, priority_of, timestamp_of)
            if w is not None:
                candidates.append(w)
    if not candidates:
        return None

    def key(e):
        usage = usage_of(e)
        here = child_towards(cohort, tree.cq[e.cq])

        def measure():
            borrowing = any(here.usage[fr] > here.subtree.get(fr, 0) for fr in usage)
            return (1 if borrowing else 0, drs(here))

        borrowing, share = _with_usage(tree, e.cq, usage, measure)
        return (borrowing, share, -priority_of(e), timestamp_of(e), e.workload.seq)

    return min(candidates, key=key)


def fair_targets(tree: QuotaTree, cq_name: str, request: dict, frs: set, candidates: list, strategies) -> list:
    """Victims chosen by fair sharing (preemption ``Target`` objects from ``candidates``), or [].

    ``candidates`` are in Kueue's candidate order; each chosen target gets
    its reason in ``override``.
    """
    node = tree.cq[cq_name]
    for fr, v in request.items():  # simulate the preemptor admitted
        node.add_usage(fr, v)
    removed: list = []

    def fits() -> bool:  # with the preemptor's own usage taken out again
        for fr, v in request.items():
            node.remove_usage(fr, v)
        try:
            return all(v <= node.available(fr) for fr, v in request.items())
        finally:
            for fr, v in request.items():
                node.add_usage(fr, v)

    def take(t):
        owner = tree.cq[t.workload.cluster_queue]
        for fr, v in t.workload.admission.usage.items():
            owner.remove_usage(fr, v)

    def give(t):
        owner = tree.cq[t.workload.cluster_queue]
        for fr, v in t.workload.admission.usage.items():
            owner.add_usage(fr, v)

    try:
        within_nominal = all(node.usage[fr] <= node.nominal(fr) for fr in frs)
        pending = list(candidates)
        retry: list = []
        found = False
        while pending and not found:
            t = _next_target(tree, node, pending, frs)
            if t is None:
                break
            pending.remove(t)
            if t.workload.cluster_queue == cq_name or within_nominal:
                t.override = "InClusterQueue" if t.workload.cluster_queue == cq_name else "InCohortReclamation"
                take(t)
                removed.append(t)
                found = fits()
                continue
            p_side, t_side = almost_lca(node, tree.cq[t.workload.cluster_queue])
            p_new, t_old = drs(p_side), drs(t_side)
            take(t)
            t_new = drs(t_side)
            first = strategies[0]
            if (first == "LessThanOrEqualToFinalShare" and p_new <= t_new) or (first == "LessThanInitialShare" and p_new < t_old):
                t.override = "InCohortFairSharing"
                removed.append(t)
                found = fits()
            else:
                give(t)
                retry.append((t, p_new, t_old))
        if not found and len(strategies) > 1:
            for t, p_new, t_old in retry:  # LessThanInitialShare on what the first strategy left
                if p_new < t_old:
                    take(t)
                    t.override = "InCohortFairSharing"
                    removed.append(t)
                    if fits():
                        found = True
                        break
        if not found:
            return []
        return fill_back(removed, give, take, fits)  # as classical preemption does
    finally:
        for t in removed:
            give(t)
        for fr, v in request.items():
            node.remove_usage(fr, v)


def _next_target(tree: QuotaTree, node: QuotaNode, pending: list, frs: set):
    """The first candidate of the queue with the highest share (own queue included; ties: candidate order)."""
    best, best_key = None, None
    seen: set[str] = set()
    for i, t in enumerate(pending):
        name = t.workload.cluster_queue
        if name in seen:
            continue
        seen.add(name)
        owner = tree.cq[name]
        if owner is node:
            share = drs(node)
        else:
            if all(owner.usage[fr] <= owner.nominal(fr) for fr in frs):
                continue  # not borrowing: nothing to take back
            share = drs(almost_lca(node, owner)[1])
        key = (-share, i)
        if best_key is None or key < best_key:
            best, best_key = t, key
    return best
