"""A node provisioner with Karpenter's semantics: pods that cannot be placed make nodes appear.

Karpenter is a builder who watches the waiting room. When pods are left
*unschedulable* by the scheduler, it does not act at once: it waits for the
burst to end (a *batch window*), then packs the waiting pods into as few new
machines as it can, picks the cheapest machine type for each, and orders them.
Each machine then takes its time before pods can use it::

    pods unschedulable ──> batch window ──> bin-pack into NodeClaims ──> launch
         (scheduler)      idle 1 s / max 10 s   cheapest type, NodePool limit
                                                                   │
      launched ── registered ── initialized ── (image pulled) ── ready: pods bind
         │  boot + kubelet   │  GPU device plugin  │                     │
         └──────────── GPUs count as "not ready" ──────────────┘         │
                                                                         ▼
                        empty for consolidateAfter ──> node removed (disruption budget)

Rules, and the Karpenter behaviour each one models:

- **Batching** (``batchIdleDuration``, ``batchMaxDuration``): a window opens
  with the first unschedulable pod not already covered by an in-flight
  NodeClaim; each newly seen pod extends it to ``batch_idle`` seconds later,
  never beyond ``batch_max`` seconds after it opened. Karpenter only sees a
  pod after the scheduler marked it unschedulable, so under Volcano's 1 s
  sessions pods are seen at session boundaries. A pod seen exactly at the
  idle deadline still joins the window (the window closes after that
  instant's scheduling cycle).
- **Scheduling simulation**: at the end of the window the pending pods are
  sorted by GPUs, largest first (first-fit decreasing), and each goes to the
  first place that holds it: room left on an existing or in-flight node, then
  a NodeClaim already opened in this batch, then a new NodeClaim of the first
  NodePool (highest ``weight``, then name) that allows it. A NodeClaim keeps
  taking pods while some allowed instance type holds them all; it is launched
  as the *cheapest* such type (absolute ``price_per_hour``, as Karpenter's
  lowest-price launch does; ties: fewer GPUs, then name). A pod of a
  one-per-node pod set skips every place that holds, or was given in this
  batch, a pod of its group (:mod:`gangkit.supply.apart`).
- **NodePool limits** on ``nvidia.com/gpu``, ``cpu`` and ``memory`` (Karpenter
  v1.14 ``pkg/controllers/provisioning/scheduling/scheduler.go``,
  ``filterByRemainingResources``): a pool's usage is the sum of the
  *capacity* of its live nodes, in flight or ready, and of this batch's
  NodeClaims; a type whose capacity of a limited resource is above what is
  left is filtered out (equal is allowed), and a NodeClaim with no type left
  is not created. So a limit may block a large type and not a smaller one.
  A type without a CPU or memory figure adds 0 of it. Other limits (``pods``,
  ``ephemeral-storage``, ``nodes`` on a dynamic pool) are not modelled.
  Simplified: Karpenter charges a new NodeClaim the largest capacity of the
  types it may still become (``subtractMax``), gangkit the type it launches.
  Nodes a pool owns from the start count too, and are consolidated like
  its own (:mod:`gangkit.supply.adoption`). Nothing is atomic for a gang: with a limit of 16 GPUs, a gang of
  four 8-GPU pods gets two nodes and waits for the other two for ever.
- **In-flight NodeClaims** remember which pods they were meant for; those pods
  trigger nothing new until the node is ready (then they are forgotten: if
  they still cannot be placed they start a new batch).
- **Nomination**: pending pods are *nominated* to the node Karpenter counts
  on for them: the NodeClaim launched for them, and, once that node is
  ready, still that node while they stay pending (a gang that cannot start
  on part of its nodes keeps its pods nominated to the part that came); and
  any ready node the scheduling simulation of a later batch puts them on.
  **A node with pending pods nominated to it is not a consolidation
  candidate** (Karpenter ``pkg/controllers/disruption``: a candidate "is
  nominated for a pending pod" is skipped), so a node launched for pods
  that still wait is never removed as empty under them. Karpenter renews a
  nomination on every provisioning pass while the pods stay pending, and it
  lasts Karpenter's nomination window, ``max(2 x batch_max, 10 s)``, after
  the last renewal. Here passes happen at cluster changes, so a node stays
  held while its nominated pods are pending, and for one window after they
  stop pending (bound elsewhere, or removed with their workload) or after
  the nodes launched in the same batch are ready. Without this rule a
  NodePool limit below a gang's size with ``consolidateAfter: 0`` would
  launch part of the gang's nodes, remove them as soon as they are ready
  and empty, and launch them again, one round per node start-up time.
- **Consolidation, WhenEmpty**: a Karpenter node that has been ready and empty
  for ``consolidate_after`` seconds is removed; a node that got pods meanwhile
  stays. At most ``budget`` nodes of a pool are removed at one instant
  (``"10%"`` of the pool's nodes, rounded up, by default); the others are
  tried again after Karpenter's 10 s disruption polling period.
- **Consolidation, WhenEmptyOrUnderutilized** (Karpenter's delete
  consolidation): a ready node whose pods have not changed for
  ``consolidate_after`` seconds (Karpenter counts from the last pod
  scheduled on or removed from the node) is deleted when every pod on it
  fits in the free room of the *other* ready nodes (first fit, largest
  first: GPUs, CPU, memory, node selector). Its pods are evicted first; a
  synchronous job loses all its pods, not only those on the node, and
  restarts from its last checkpoint (its pods are recreated and placed
  again). At most one non-empty node is deleted at one instant (single-node
  consolidation), fewest pods first, within the same budget. A candidate
  whose pods do not fit is tried again at the next cluster change.
  Replacing a node by a cheaper one, and multi-node consolidation, are not
  modelled.
- **Consolidation, Balanced** (Karpenter v1.14, ``designs/balanced-consolidation.md``
  and ``pkg/controllers/disruption/balanced.go``): as WhenEmptyOrUnderutilized,
  and a non-empty node is deleted only when the move's *score* is at least
  1/k = 0.5: (the node's price / the price of all the pool's NodeClaims)
  over (its disruption cost / the pool's). A node's disruption cost is 1
  plus, per pod on it, ``max(0, EvictionCost)``, where EvictionCost is 1 +
  priority / 2^25 clamped to [-10, 10] (``pod-deletion-cost`` annotations are
  not modelled). Empty nodes are removed as under WhenEmpty (Karpenter's
  emptiness method scores nothing). A move scored too low is looked at again
  at the next cluster change (the pool's totals change with it). Karpenter
  scores replacements too; gangkit models deletions only, so the score is
  that of a delete. Karpenter ranks candidates by their score; gangkit keeps
  its order (fewest pods first).
- **minValues** (``minValuesPolicy: Strict``, Karpenter's default): a
  NodeClaim is made only while the types that hold its pods span at least
  ``minValues`` values of the requirement's key
  (:class:`~gangkit.supply.catalogue.MinValues`); it is still launched as
  the cheapest of them.
- **Static NodePools** (``spec.replicas``; Karpenter v1.14,
  ``designs/static-capacity.md`` and ``pkg/controllers/static/provisioning``):
  the pool keeps ``min(replicas, limits.nodes)`` nodes, launched without any
  pending pod as the cheapest type it allows, each going through the
  stages. They are never consolidated (``consolidationPolicy`` and
  ``consolidateAfter`` are ignored, as the CRD says), the provisioner never
  opens a NodeClaim of a static pool for pending pods, and the scheduling
  simulation counts their room (in flight or ready) like any node's.
  Karpenter launches them as soon as the NodePool is ready; gangkit's
  engine lets a supplier act first at the run's first scheduling cycle, so
  they are launched there: at t = 0 when a job is submitted at 0, else at
  the first job's submission. Scaling ``replicas`` during a run, drift and
  expiry replacements are not modelled.
- **Stages**: launched -> registered -> initialized (GPU device plugin
  advertises ``nvidia.com/gpu``) -> optionally image pulled; each duration
  is fixed seconds or a random distribution drawn from the run's seeded
  ``sim.rng``. Defaults are assumptions (docs/reference/provisioning.md).

Emptiness is noticed at the scheduling cycle after the last pod leaves (at
the next Volcano session under gang placement), so a removal may come up to
one session period later than ``consolidate_after`` after the pod finished.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import pandas as pd

from gangkit.engine.sockets import NodeSupplier
from gangkit.model.nodes import Node
from gangkit.model.precision import TOLERANCE
from gangkit.model.reasons import Reason
from gangkit.model.resources import Room, labels_match
from gangkit.supply.adoption import adoptable, instance_type_of, pool_of
from gangkit.supply.apart import OnePerNode, group_of
from gangkit.supply.cloud import GPU, InstanceType, Stages
from gangkit.supply.fit import CPU, MEMORY, capacity, cheapest_type, within
from gangkit.supply.karpenter_pod_metrics import SchedulableTimes, pod_metrics
from gangkit.supply.limits import at_limit, most_gpus
from gangkit.supply.nodepool import NodePool

NODES = "nodes"
DISRUPTION_POLL = 10.0  # Karpenter's disruption controller polls every 10 s
#: Balanced consolidation approves a move when its score is at least 1/k (Karpenter ``pkg/apis/v1``, ``BalancedK``).
BALANCED_K = 2
#: ``reason`` of ``karpenter_nodeclaims_created_total`` for a NodeClaim made for pending pods, and for a static
#: pool's (Karpenter v1.14 ``pkg/metrics/constants.go``, ``ProvisionedReason``; ``pkg/controllers/provisioning``
#: and ``pkg/controllers/static/provisioning`` create NodeClaims with it).
PROVISIONED_REASON = "provisioned"
#: ``min_values_relaxed`` of the same counter: always ``"false"`` here, since gangkit models only
#: ``minValuesPolicy: Strict``, which never relaxes minValues (``"true"`` marks a NodeClaim for which
#: ``BestEffort`` relaxed them).
MIN_VALUES_RELAXED = "false"


def resource_type(resource: str) -> str:
    """Karpenter's ``resource_type`` label of a resource: lower case, ``-`` as ``_`` (v1.14
    ``pkg/controllers/metrics/nodepool/controller.go``): ``nvidia.com/gpu``, ``cpu``, ``ephemeral_storage``."""
    return resource.lower().replace("-", "_")


def _pending(p) -> bool:
    """A pod that exists, waits in the placement layer and is not bound."""
    return p.node is None and not p.done and p.job.placing


def eviction_cost(p) -> float:
    """Karpenter's cost of evicting one pod (``pkg/utils/disruption``, ``EvictionCost``): 1 plus its priority / 2^25,
    clamped to [-10, 10] (the ``controller.kubernetes.io/pod-deletion-cost`` term is 0: gangkit has no such annotation)."""
    return min(10.0, max(-10.0, 1.0 + p.priority / 2**25))


def _disruption_cost(st) -> float:
    """A node's disruption cost for Balanced consolidation: 1 per node plus its pods' positive eviction costs."""
    return 1.0 + sum(max(0.0, eviction_cost(p)) for p in st.pods)


@dataclass(eq=False)
class _Claim:
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


class Karpenter(NodeSupplier):
    """The ``karpenter`` node supplier (see the module docstring for its rules)."""

    name = "karpenter"

    def __init__(self, nodepools: list[NodePool], instance_types: list[InstanceType], batch_idle: float = 1.0,
                 batch_max: float = 10.0, stages: Stages | None = None):
        self.nodepools = sorted(nodepools, key=lambda p: (-p.weight, p.name))
        self.instance_types = {it.name: it for it in instance_types}
        for pool in self.nodepools:
            for t in pool.instance_types:
                if t not in self.instance_types:
                    raise ValueError(f"NodePool {pool.name}: instance type {t!r} is not among the instance types given")
        #: static pool name -> (the type its nodes are launched as: the cheapest it allows, how many)
        self.static_nodes: dict[str, tuple[InstanceType, int]] = {}
        for pool in self.nodepools:
            if pool.static:
                count = min(pool.replicas, pool.limits.get("nodes", pool.replicas))
                options = [self.instance_types[t] for t in pool.instance_types]
                if count and not options:
                    raise ValueError(f"NodePool {pool.name}: replicas {pool.replicas} but no instance type to launch")
                if count:
                    self.static_nodes[pool.name] = (min(options, key=lambda it: (it.price_per_hour, it.gpus, it.name)), count)
        self.batch_idle = float(batch_idle)
        self.batch_max = float(batch_max)
        self.stages = stages or Stages()
        #: Karpenter's nomination window: how long a nomination outlives its last renewal
        self.nomination_window = max(2 * self.batch_max, 10.0)
        self._sim = None
        self._reset()

    def _reset(self) -> None:
        self._claims: dict[str, _Claim] = {}  # live Karpenter nodes (in flight or ready)
        self._covered: dict = {}  # pod -> claim name (in-flight claims only)
        self._count: dict[str, int] = {}  # pool -> NodeClaims created
        self._used: dict[str, dict] = {}  # pool -> capacity of its live nodes (in flight or ready), per resource
        self._disrupted_count: dict[tuple, int] = {}  # (pool, reason) -> count: one counter series each
        self._created_count: dict[str, int] = {}  # pool -> count (reason and min_values_relaxed never vary)
        self._last_pending: list = []
        self._window_first: float | None = None
        self._window_last = 0.0
        self._window_seen: set = set()
        self._window_token = 0
        self._removed_at: dict = {}  # (pool, time) -> nodes removed at that instant
        self._moved_at: dict = {}  # time -> a non-empty node was consolidated at that instant
        self._created: list[tuple] = []
        self._disrupted: list[tuple] = []
        self._usage: list[tuple] = []
        self._ready_rows: list[tuple] = []
        self._batches: list[tuple] = []
        self._seen: dict = {}  # pod -> (time first listed as unschedulable, its job's name)
        self._schedulable = SchedulableTimes()  # when a simulation first found each pod a place (pod metrics)

    def provisionable_gpus(self, scenario) -> int:
        """GPUs this Karpenter could add for ``scenario``: the GPUs of its static pools' nodes plus, per dynamic
        pool, its GPU limit, lowered when it limits ``cpu`` or ``memory`` to the most GPUs of the types it may
        launch within those limits (:func:`gangkit.supply.limits.most_gpus`: 96 cores of 8-GPU types of 96
        cores are one node, 8 GPUs); when some dynamic pool is bounded by none, every GPU the scenario's jobs ask
        for (a default Kueue quota can use it)."""
        static = sum(it.gpus * n for it, n in self.static_nodes.values())
        pools = {p.name: p for p in self.nodepools}
        owned = {p.name: sum(n.gpus for n in scenario.nodes if pool_of(n, pools) is p) for p in self.nodepools}
        bounds = [max(0, most_gpus(p.enforced, [c for c in (capacity(self.instance_types[t]) for t in p.instance_types)
                                                if within(c, p.enforced)]) - owned[p.name])
                  for p in self.nodepools if not p.static]  # the GPUs of nodes it owns already count against it
        if all(math.isfinite(b) for b in bounds):
            return int(sum(bounds)) + static
        return sum(j.gpus for j in scenario.jobs)

    # -- the NodeSupplier socket ------------------------------------------------
    def can_ever_fit(self, gpus: int, cpu: float, memory: int, selector: tuple) -> bool:
        for name, (it, _) in self.static_nodes.items():
            pool = next(p for p in self.nodepools if p.name == name)
            if it.holds(gpus, cpu, memory) and labels_match(pool.node_labels(it.name), selector):
                return True
        for pool in self.nodepools:
            if pool.static:
                continue
            for t in pool.instance_types:
                it = self.instance_types[t]
                if within(capacity(it), pool.enforced) and it.holds(gpus, cpu, memory) \
                        and labels_match(pool.node_labels(t), selector):
                    return True
        return False

    def observe(self, sim, now: float, unschedulable: list) -> None:
        if sim is not self._sim:  # a new run with the same object: start afresh
            self._sim = sim
            self._reset()
            self._launch_static(sim, now)
            self._adopt(sim, now)
        cap = sim.capacity
        for c in self._claims.values():
            st = cap.by_name.get(c.name)
            if not c.ready and st is not None and st.ready:
                c.ready = True
                for p in c.pods:
                    self._covered.pop(p, None)
                c.nominees.update(p for p in c.pods if _pending(p))  # still nominated to it while they wait
                c.pods = []
            if c.nominees:  # a provisioning pass renews the nomination; pods no longer pending drop out
                c.nominated_until = max(c.nominated_until, now + self.nomination_window)
                c.nominees = {p for p in c.nominees if _pending(p)}
        self._watch_empty(sim, now)
        self._last_pending = list(unschedulable)
        for p in unschedulable:
            if p not in self._seen:
                self._seen[p] = (now, p.job.name, p.name)
        new = [p for p in unschedulable if p not in self._covered and p not in self._window_seen
               and p.node is None and not p.done]
        if not new:
            return
        if self._window_first is None:
            self._window_first = now
        self._window_seen.update(new)
        self._window_last = now
        self._window_token += 1
        token = self._window_token
        end = min(self._window_last + self.batch_idle, self._window_first + self.batch_max)
        sim.call_at(max(now, end), lambda t: self._end_batch(sim, t, token), after_cycles=True)

    # -- provisioning -----------------------------------------------------------
    def _pool_usage(self, pool: NodePool, extra: list | None = None) -> dict:
        """The capacity of the pool's live nodes and of its NodeClaims in ``extra``, per resource."""
        used = dict(self._used.get(pool.name) or {GPU: 0, CPU: 0.0, MEMORY: 0})
        for cap in (capacity(c.itype) for c in extra or [] if c.pool is pool and c.itype is not None):
            used = {r: v + cap[r] for r, v in used.items()}
        return used

    def _left(self, pool: NodePool, new: list, mine: _Claim | None = None) -> dict:
        """What is left of each of the pool's limits after its live nodes and this batch's NodeClaims (``mine``'s
        own type given back: a NodeClaim of this batch may grow into another type)."""
        used = self._pool_usage(pool, new)
        give_back = capacity(mine.itype) if mine is not None else {}
        return {r: limit - used[r] + give_back.get(r, 0) for r, limit in pool.enforced.items()}

    def _cheapest(self, pool: NodePool, pods: list, room: dict) -> InstanceType | None:
        return cheapest_type(pool, self.instance_types, pods, room)

    def _end_batch(self, sim, now: float, token: int) -> None:
        """The batch's provisioning pass (Karpenter v1 ``pkg/controllers/provisioning/scheduling/scheduler.go``):
        each pending pod, largest first, goes to room on an existing or in-flight node, else to a NodeClaim
        of this batch that can grow to hold it, else to a new NodeClaim of the first NodePool that can."""
        if token != self._window_token or self._window_first is None:
            return  # the window was extended; a later timer ends it
        started = self._window_first
        self._window_first, self._window_seen = None, set()
        pods = [p for p in self._last_pending if p.node is None and not p.done and p.job.placing and p not in self._covered]
        pods.sort(key=lambda p: -p.pod_set.gpus)  # stable: scheduler's order among equals
        room = self._room_now(sim)
        new: list[_Claim] = []
        nominated: list[_Claim] = []  # ready nodes the simulation counts on for pending pods
        left_out = []
        apart = OnePerNode()  # one pod of a one-per-node group per node (gangkit.supply.apart)
        for p in pods:
            if not (self._onto_existing(p, room, apart, nominated) or self._onto_batch_claim(p, apart, new)
                    or self._onto_new_claim(sim, p, new)):
                left_out.append(p)
        out = set(left_out)
        self._schedulable.mark(now, [p for p in pods if p not in out], left_out)
        for c in new:
            self._start(sim, c, now)
        # a nomination lasts until the nodes launched in this batch are ready, plus the nomination
        # window: Karpenter re-nominates on every provisioning pass while the pods stay pending
        until = max([now] + [max(c.stages.values()) for c in new]) + self.nomination_window
        for c in nominated:
            c.nominated_until = max(c.nominated_until, until)
        if new:
            self._sample_usage(now)
        self._batches.append((started, now, len(pods), len(new), len(left_out), ", ".join(p.name for p in left_out)))

    def _room_now(self, sim) -> dict:
        """Room on the existing and in-flight nodes, less what in-flight NodeClaims keep for their own pods."""
        cap = sim.capacity
        room = {}
        for st in cap.nodes:
            if cap.by_name.get(st.node.name) is not st:
                continue
            room[st.node.name] = (st, Room(st.free_gpus, st.free_cpu, st.free_memory))
        for c in self._claims.values():
            r = room.get(c.name)
            for p in c.pods:
                if r is not None and p.node is None and not p.done:
                    r[1].take(p.pod_set.gpus, p.pod_set.cpu, p.pod_set.memory)
        return room

    def _onto_existing(self, p, room: dict, apart: OnePerNode, nominated: list) -> bool:
        """Put ``p`` on the first existing or in-flight node with room (nominating a ready one); False if none."""
        ps = p.pod_set
        g = group_of(p)
        home = None
        for st, r in room.values():
            if r.fits(ps.gpus, ps.cpu, ps.memory) and st.node.matches(ps.node_selector) and (
                    g is None or apart.allows(st.node.name, g, st.pods, self._meant_for(st.node.name))):
                home = (st, r)
                break
        if home is None:
            return False
        home[1].take(ps.gpus, ps.cpu, ps.memory)
        apart.give(home[0].node.name, p)
        c = self._claims.get(home[0].node.name)
        if c is not None:
            if c.ready:
                nominated.append(c)
                c.nominees.add(p)
            else:
                c.pods.append(p)
                self._covered[p] = c.name
        return True

    def _onto_batch_claim(self, p, apart: OnePerNode, new: list) -> bool:
        """Grow a NodeClaim of this batch (a larger instance type of its pool) to hold ``p``; False if none can."""
        g = group_of(p)
        for c in new:
            if g is not None and not apart.allows(c.name, g, c.pods):
                continue
            it = self._cheapest(c.pool, c.pods + [p], self._left(c.pool, new, c))
            if it is not None:
                c.itype = it
                c.pods.append(p)
                return True
        return False

    def _onto_new_claim(self, sim, p, new: list) -> bool:
        """A new NodeClaim for ``p`` from the first NodePool (by weight) with an instance type within its limits."""
        cap = sim.capacity
        for pool in self.nodepools:
            if pool.static:  # a static pool never launches for pending pods
                continue
            it = self._cheapest(pool, [p], self._left(pool, new))
            if it is not None:
                k = self._count.get(pool.name, 0)
                while f"{pool.name}-{k}" in cap.by_name:  # never take a scenario node's name
                    k += 1
                self._count[pool.name] = k + 1
                new.append(_Claim(f"{pool.name}-{k}", pool, it, [p]))
                return True
        return False

    def _meant_for(self, name: str) -> list:
        """The pods an in-flight NodeClaim was launched for (empty for other nodes)."""
        c = self._claims.get(name)
        return c.pods if c is not None else []

    def _sample_usage(self, now: float) -> None:
        """One ``karpenter_nodepools_usage`` sample per pool: its GPUs, and each other resource it limits."""
        for pool in self.nodepools:
            used = self._pool_usage(pool)
            used[NODES] = sum(1 for c in self._claims.values() if c.pool is pool)
            for r in (GPU, *(r for r in (CPU, MEMORY, NODES) if r in pool.limits)):
                row = (now, pool.name, resource_type(r), used[r])
                if self._usage and self._usage[-1][:3] == row[:3]:
                    self._usage[-1] = row
                else:
                    self._usage.append(row)

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

    def _arm(self, sim, c: _Claim, at: float) -> None:
        c.timer += 1
        token = c.timer
        sim.call_at(max(at, sim.now), lambda t: self._consolidate(sim, c, t, token), after_cycles=True)

    def _consolidate(self, sim, c: _Claim, now: float, token: int) -> None:
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
        if any(_pending(p) for p in c.nominees):  # not a candidate while pods nominated to it wait
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

    def _balanced_score(self, sim, c: _Claim, st) -> float:
        """Karpenter's Balanced score of deleting ``c``'s node: (its price / the pool's price) over (its pods'
        disruption cost / the pool's), the pool taken as all its live NodeClaims (Karpenter
        ``pkg/controllers/disruption/balanced.go``, ``ScoreMove``; 0 when the pool costs nothing)."""
        claims = [x for x in self._claims.values() if x.pool is c.pool]
        total_cost = sum(x.itype.price_per_hour for x in claims)
        total_disruption = sum(_disruption_cost(sim.capacity.by_name[x.name]) for x in claims
                               if x.name in sim.capacity.by_name)
        savings = c.itype.price_per_hour
        if total_cost <= 0 or total_disruption <= 0 or savings <= 0:
            return 0.0
        return (savings / total_cost) / (_disruption_cost(st) / total_disruption)

    def _launch_static(self, sim, now: float) -> None:
        """Launch every static pool's nodes (Karpenter's static provisioning controller), none for any pod."""
        launched = False
        for pool in self.nodepools:
            if pool.name not in self.static_nodes:
                continue
            it, count = self.static_nodes[pool.name]
            for _ in range(count):
                k = self._count.get(pool.name, 0)
                while f"{pool.name}-{k}" in sim.capacity.by_name:  # never take a scenario node's name
                    k += 1
                self._count[pool.name] = k + 1
                c = _Claim(f"{pool.name}-{k}", pool, it)
                self._start(sim, c, now)
                launched = True
        if launched:
            self._sample_usage(now)

    def _adopt(self, sim, now: float) -> None:
        """Take up, ready, the scenario's nodes a dynamic NodePool owns (:mod:`gangkit.supply.adoption`)."""
        pools = {p.name: p for p in self.nodepools}
        for st in adoptable(sim, pools):
            c = _Claim(st.node.name, pool_of(st.node, pools), instance_type_of(st.node, self.instance_types), ready=True)
            self._claims[c.name], self._used[c.pool.name] = c, self._pool_usage(c.pool, [c])
        if self._claims:
            self._sample_usage(now)

    def _start(self, sim, c: _Claim, now: float) -> None:
        """Launch one NodeClaim's node and record it."""
        c.stages = self.stages.draw(sim.rng, now)
        labels = c.pool.node_labels(c.itype.name)
        node = Node(c.name, c.itype.gpus, cpu=c.itype.cpu, memory=c.itype.memory, labels=labels, pool=c.pool.name)
        sim.launch_node(node, c.stages, supplier=self.name)
        self._claims[c.name] = c
        self._used[c.pool.name] = self._pool_usage(c.pool, [c])
        for p in c.pods:
            self._covered[p] = c.name
        n = self._created_count[c.pool.name] = self._created_count.get(c.pool.name, 0) + 1
        self._created.append((now, c.pool.name, c.itype.name, c.name, PROVISIONED_REASON, MIN_VALUES_RELAXED, n))
        ready_at = max(c.stages.values())
        self._ready_rows.append((c.name, c.pool.name, c.itype.name, c.stages["launched"], c.stages["registered"],
                                 c.stages["initialized"], ready_at, ready_at - now))

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

    def launch_blocked(self, pods: list) -> str:
        """Why no node will be launched for these pods: every dynamic NodePool has a limit that leaves no room for
        any instance type it allows that holds one of them (Karpenter's ``filterByRemainingResources`` leaves
        none), each such limit named (``nvidia.com/gpu``, ``cpu``, ``memory``), else ``""``."""
        if not self.nodepools or not pods:
            return ""
        full = []
        dynamic = [p for p in self.nodepools if not p.static]
        if not dynamic:
            return "; ".join(f"NodePool {p.name} is static (spec.replicas {p.replicas}): it launches no node for "
                             "pending pods" for p in self.nodepools)
        shapes = {(p.pod_set.gpus, p.pod_set.cpu, p.pod_set.memory) for p in pods}
        for pool in dynamic:
            if not pool.enforced:
                return ""  # this pool can still grow
            used = self._pool_usage(pool)
            left = self._left(pool, [])
            caps = [capacity(self.instance_types[t]) for t in pool.instance_types
                    if any(self.instance_types[t].holds(*s) for s in shapes)]
            if any(within(cap, left) for cap in caps):
                return ""
            blocking = [r for r in pool.enforced if not caps or any(cap[r] > left[r] for cap in caps)]
            full.append(f"NodePool {pool.name} " + " and ".join(
                at_limit(r, used[r], pool.enforced[r], min((cap[r] for cap in caps), default=None))
                for r in blocking))
        return "; ".join(full)

    # -- metrics -----------------------------------------------------------------------
    def metrics(self) -> dict:
        """DataFrames named after Karpenter's Prometheus metrics (``value`` is the metric's value).

        The label columns carry Karpenter v1.14's label names and values (``pkg/metrics/metrics.go``,
        ``pkg/controllers/metrics/nodepool``): ``karpenter_nodeclaims_created_total`` by ``reason``
        (``provisioned``), ``nodepool`` and ``min_values_relaxed``; ``karpenter_nodeclaims_disrupted_total`` by
        ``reason`` (``empty``, ``underutilized``: the disruption method's reason in snake case) and ``nodepool``,
        its ``value`` counting per (nodepool, reason); ``karpenter_nodepools_limit`` by ``nodepool`` and
        ``resource_type`` (:func:`resource_type`: ``nvidia.com/gpu``, ``cpu`` in cores, ``memory`` in bytes,
        ``nodes`` for a static pool), a row per limit the pool sets; ``karpenter_nodepools_usage`` by the same
        labels, the capacity of the pool's live nodes: ``nvidia.com/gpu`` for every pool, and each other resource
        the pool limits. A counter row is one event, so ``time_s``, ``instance_type`` and ``nodeclaim`` say which;
        they are not labels of the real metric. Simplified: the disrupted counter has no ``capacity_type``
        (gangkit models no capacity types); Karpenter reports usage of ``cpu``, ``memory``, ``pods``,
        ``ephemeral_storage``, ``nodes`` and every resource of its nodes for every pool (its ``status.resources``),
        gangkit only the series above. The ``karpenter_pods_*`` tables: :mod:`gangkit.supply.karpenter_pod_metrics`.
        """
        limits = [(p.name, resource_type(r), p.limits[r]) for p in self.nodepools
                  for r in (GPU, CPU, MEMORY, NODES) if r in p.limits]
        return {
            "karpenter_nodeclaims_created_total": pd.DataFrame(
                self._created, columns=["time_s", "nodepool", "instance_type", "nodeclaim", "reason",
                                        "min_values_relaxed", "value"]),
            "karpenter_nodeclaims_disrupted_total": pd.DataFrame(
                self._disrupted, columns=["time_s", "nodepool", "nodeclaim", "reason", "value"]),
            "karpenter_nodepools_usage": pd.DataFrame(self._usage, columns=["time_s", "nodepool", "resource_type", "value"]),
            "karpenter_nodepools_limit": pd.DataFrame(limits, columns=["nodepool", "resource_type", "value"]),
            "gangkit_karpenter_nodeclaim_stages": pd.DataFrame(
                self._ready_rows, columns=["nodeclaim", "nodepool", "instance_type", "launched_s", "registered_s",
                                           "initialized_s", "ready_s", "value"]),
            "gangkit_karpenter_batches": pd.DataFrame(
                self._batches, columns=["start_s", "end_s", "pods", "nodeclaims", "pods_not_provisioned", "not_provisioned"]),
            # gangkit's own table, not a Karpenter metric: when each pod first looked provisionable to Karpenter
            "gangkit_karpenter_pods_seen": pd.DataFrame(
                list(self._seen.values()), columns=["time_s", "job", "pod"]),
            **pod_metrics(self._sim, self._schedulable),
        }

    # -- wait buckets --------------------------------------------------------------------
    def awaited_nodes(self) -> list[tuple]:
        """(pod, node name) for each pending pod nominated to a NodeClaim still in flight (see gangkit.engine.waits)."""
        return [(p, name) for p, name in self._covered.items() if p.node is None and not p.done]


def default_karpenter(scenario=None, stages: Stages | None = None) -> Karpenter:
    """A Karpenter for a scenario that brings no NodePools of its own (what a ``+karpenter`` stack name uses).

    One NodePool ``default`` without limits, consolidating empty nodes after
    Karpenter's default of 0 s, allowing instance types of 1, 2, 4 and 8 GPUs
    plus the GPU counts of the scenario's nodes and pods, each priced 1.0 per
    GPU-hour (an assumption: only relative prices matter here). ``stages``:
    how long its new nodes take (default :class:`~gangkit.supply.cloud.Stages`).
    """
    sizes = {1, 2, 4, 8}
    if scenario is not None:
        sizes.update(n.gpus for n in scenario.nodes if n.gpus > 0)
        sizes.update(ps.gpus for j in scenario.jobs for ps in j.pod_sets if ps.gpus > 0)
    types = [InstanceType(f"gpu-{g}", g, float(g)) for g in sorted(sizes)]
    return Karpenter([NodePool("default", [t.name for t in types])], types, stages=stages)
