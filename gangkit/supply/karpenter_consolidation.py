"""Karpenter's disruption of its own nodes: consolidation, and the NodeClaims it keeps books on.

The rules (Karpenter v1.14 ``pkg/controllers/disruption``; the module
docstring of :mod:`gangkit.supply.karpenter` tells them in full):

- **WhenEmpty**: a node ready and empty for ``consolidateAfter`` is removed.
- **WhenEmptyOrUnderutilized** (delete consolidation): a ready node whose pods
  have not changed for ``consolidateAfter`` is deleted when every pod on it
  fits in the free room of the other ready nodes; one non-empty node per
  instant (single-node consolidation), its pods evicted.
- **Balanced** (``pkg/controllers/disruption/balanced.go``): as
  WhenEmptyOrUnderutilized, a non-empty node deleted only when the move's
  score is at least 1/k = 0.5.
- A node with pending pods nominated to it is not a candidate; at most
  ``budget`` nodes of a pool go at one instant, the others are tried again
  after the disruption controller's 10 s polling period.

:class:`Consolidation` is the part of :class:`~gangkit.supply.karpenter.Karpenter`
that does it; its run state (the NodeClaims, the per-instant removal counts,
the counters) is the Karpenter run object's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from gangkit.model.precision import TOLERANCE
from gangkit.model.reasons import Reason
from gangkit.model.resources import Room
from gangkit.supply.apart import OnePerNode, group_of
from gangkit.supply.cloud import InstanceType
from gangkit.supply.fit import capacity
from gangkit.supply.nodepool import NodePool

DISRUPTION_POLL = 10.0  # Karpenter's disruption controller polls every 10 s
#: Balanced consolidation approves a move when its score is at least 1/k (Karpenter ``pkg/apis/v1``, ``BalancedK``).
BALANCED_K = 2


def pending(p) -> bool:
    """A pod that exists, waits in the placement layer and is not bound."""
    return p.node is None and not p.done and p.job.placing


def eviction_cost(p) -> float:
    """Karpenter's cost of evicting one pod (``pkg/utils/disruption``, ``EvictionCost``): 1 plus its priority / 2^25,
    clamped to [-10, 10] (the ``controller.kubernetes.io/pod-deletion-cost`` term is 0: gangkit has no such annotation)."""
    return min(10.0, max(-10.0, 1.0 + p.priority / 2**25))


def disruption_cost(st) -> float:
    """A node's disruption cost for Balanced consolidation: 1 per node plus its pods' positive eviction costs."""
    return 1.0 + sum(max(0.0, eviction_cost(p)) for p in st.pods)


@dataclass(eq=False)
class Claim:
    """A NodeClaim: one node Karpenter launched (or owns from the start), in flight or ready, and its books."""

    name: str
    pool: NodePool
    itype: InstanceType | None
    pods: list = field(default_factory=list)  # pods it was meant for (forgotten when ready)
    stages: dict = field(default_factory=dict)
    ready: bool = False
    empty_since: float | None = None  # since when its pods have not changed (empty or not)
    seen: frozenset = frozenset()  # its pods at the last look
    waiting_room: bool = False  # held back (its pods did not fit elsewhere, or pending pods are nominated
    #                             to it): looked at again at the next cluster change
    nominees: set = field(default_factory=set)  # pending pods nominated to it once ready
    nominated_until: float = -math.inf
    timer: int = 0


class Consolidation:
    """Karpenter's consolidation of its nodes (see the module docstring), a part of its run object."""

    # -- consolidation ------------------------------------------------------------
    def _watch_empty(self, sim, now: float) -> None:
        """Note when each ready node's pods last changed; arm its consolidation timer."""
        cap = sim.capacity
        for c in self._claims.values():
            st = cap.by_name.get(c.name)
            if st is None or not c.ready or c.pool.consolidate_after is None or c.pool.static:
                continue
            pods = frozenset(st.pods)
            under = c.pool.consolidation_policy != "WhenEmpty"
            if c.empty_since is None or pods != c.seen:
                c.seen = pods
                c.waiting_room = False
                if pods and not under:
                    c.empty_since = None
                    c.timer += 1  # a pending timer is void
                    continue
                c.empty_since = now
                self._arm(sim, c, now + c.pool.consolidate_after)
            elif c.waiting_room:  # the cluster changed: its pods may fit elsewhere, its nominees may be gone
                c.waiting_room = False
                self._arm(sim, c, now)

    def _arm(self, sim, c: Claim, at: float) -> None:
        c.timer += 1
        token = c.timer
        sim.call_at(max(at, sim.now), lambda t: self._consolidate(sim, c, t, token), after_cycles=True)

    def _consolidate(self, sim, c: Claim, now: float, token: int) -> None:
        st = sim.capacity.by_name.get(c.name)
        if token != c.timer or st is None or self._claims.get(c.name) is not c:
            return
        if c.empty_since is None:
            return
        if frozenset(st.pods) != c.seen:  # its pods changed meanwhile: the next look re-arms it
            return
        if st.pods and c.pool.consolidation_policy == "WhenEmpty":
            return
        due = c.empty_since + c.pool.consolidate_after
        if now < due - TOLERANCE:
            self._arm(sim, c, due)
            return
        if any(pending(p) for p in c.nominees):  # not a candidate while pods nominated to it wait
            c.waiting_room = True
            return
        if now < c.nominated_until:
            self._arm(sim, c, c.nominated_until)
            return
        pool = c.pool
        pool_nodes = sum(1 for x in self._claims.values() if x.pool is pool)
        key = (pool.name, now)
        if self._removed_at.get(key, 0) >= pool.allowed_disruptions(pool_nodes + self._removed_at.get(key, 0)):
            self._arm(sim, c, now + DISRUPTION_POLL)
            return
        reason = "empty"
        if st.pods:
            if self._moved_at.get(now):  # single-node consolidation: one non-empty node per instant
                self._arm(sim, c, now + DISRUPTION_POLL)
                return
            if not self._fits_elsewhere(sim, st):
                c.waiting_room = True
                return
            score = None
            if pool.consolidation_policy == "Balanced":
                score = self._balanced_score(sim, c, st)
                if score < 1.0 / BALANCED_K:  # not worth the disruption now; the totals change with the cluster
                    c.waiting_room = True
                    return
            self._moved_at[now] = True
            reason = "underutilized"
            scored = "" if score is None else f" and the move scores {score:.2f} >= {1.0 / BALANCED_K:g}"
            why = Reason("karpenter", "Consolidation", f"node {c.name} deleted by consolidation "
                         f"({pool.consolidation_policy}): its pods fit on other nodes{scored}", {"node": c.name})
            for p in sorted(st.pods, key=lambda p: (p.job.index, p.index)):
                if p.node is st:
                    sim.evict_pod(p, why)
        self._removed_at[key] = self._removed_at.get(key, 0) + 1
        sim.remove_node(c.name, supplier=self.name)
        del self._claims[c.name]
        self._used[pool.name] = {r: v - capacity(c.itype)[r] for r, v in self._used[pool.name].items()}
        n = self._disrupted_count[pool.name, reason] = self._disrupted_count.get((pool.name, reason), 0) + 1
        self._disrupted.append((now, pool.name, c.name, reason, n))
        self._sample_usage(now)

    def _balanced_score(self, sim, c: Claim, st) -> float:
        """Karpenter's Balanced score of deleting ``c``'s node: (its price / the pool's price) over (its pods'
        disruption cost / the pool's), the pool taken as all its live NodeClaims (Karpenter
        ``pkg/controllers/disruption/balanced.go``, ``ScoreMove``; 0 when the pool costs nothing)."""
        claims = [x for x in self._claims.values() if x.pool is c.pool]
        total_cost = sum(x.itype.price_per_hour for x in claims)
        total_disruption = sum(disruption_cost(sim.capacity.by_name[x.name]) for x in claims
                               if x.name in sim.capacity.by_name)
        savings = c.itype.price_per_hour
        if total_cost <= 0 or total_disruption <= 0 or savings <= 0:
            return 0.0
        return (savings / total_cost) / (disruption_cost(st) / total_disruption)

    @staticmethod
    def _fits_elsewhere(sim, st) -> bool:
        """Karpenter's delete-consolidation test: every pod of ``st`` fits in the free room of the other ready nodes
        (a one-per-node pod only on a node without a pod of its group, :mod:`gangkit.supply.apart`)."""
        room = [(o, Room(o.free_gpus, o.free_cpu, o.free_memory)) for o in sim.capacity.nodes
                if o is not st and o.ready and sim.capacity.by_name.get(o.node.name) is o]
        apart = OnePerNode()
        for p in sorted(st.pods, key=lambda p: (-p.pod_set.gpus, p.job.index, p.index)):
            ps = p.pod_set
            g = group_of(p)
            for o, r in room:
                if r.fits(ps.gpus, ps.cpu, ps.memory) and o.node.matches(ps.node_selector) and (
                        g is None or apart.allows(o.node.name, g, o.pods)):
                    r.take(ps.gpus, ps.cpu or 0.0, ps.memory or 0)
                    apart.give(o.node.name, p)
                    break
            else:
                return False
        return True
