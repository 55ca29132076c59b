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

import pandas as pd

from gangkit.engine.sockets import NodeSupplier
from gangkit.model.nodes import Node
from gangkit.model.resources import Room
from gangkit.supply.adoption import adoptable, instance_type_of, pool_of
from gangkit.supply.apart import OnePerNode, group_of
from gangkit.supply.cloud import GPU, InstanceType, Stages
from gangkit.supply.fit import CPU, MEMORY, capacity, cheapest_type, within  # noqa: F401 (within: re-exported)
from gangkit.supply.karpenter_consolidation import Claim, Consolidation, pending
from gangkit.supply.karpenter_pod_metrics import SchedulableTimes, pod_metrics
from gangkit.supply.karpenter_setup import KarpenterSetup, default_karpenter  # noqa: F401 (re-exported)
from gangkit.supply.nodepool import NodePool

NODES = "nodes"
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


class Karpenter(Consolidation, NodeSupplier):
    """The ``karpenter`` node supplier (see the module docstring for its rules)."""

    name = "karpenter"

    def __init__(self, nodepools: list[NodePool], instance_types: list[InstanceType], batch_idle: float = 1.0,
                 batch_max: float = 10.0, stages: Stages | None = None):
        self._take(KarpenterSetup(nodepools, instance_types, batch_idle, batch_max, stages))

    @classmethod
    def from_setup(cls, setup: "KarpenterSetup | Karpenter") -> "Karpenter":
        """A fresh Karpenter for one run (no NodeClaim, batch or counter yet) from a scenario's configuration:
        a :class:`KarpenterSetup`, or a Karpenter whose configuration is taken (a scenario may carry either)."""
        karpenter = cls.__new__(cls)
        karpenter._take(setup.setup if isinstance(setup, Karpenter) else setup)
        return karpenter

    def for_run(self) -> "Karpenter":
        """A fresh Karpenter with this one's configuration."""
        return Karpenter.from_setup(self.setup)

    def _take(self, setup: KarpenterSetup) -> None:
        """This run's state, empty, and the configuration's settings at hand."""
        self.setup = setup
        self.nodepools = setup.nodepools
        self.instance_types = setup.instance_types
        self.static_nodes = setup.static_nodes
        self.batch_idle = setup.batch_idle
        self.batch_max = setup.batch_max
        self.stages = setup.stages
        self.nomination_window = setup.nomination_window
        self._run = None  # the run this Karpenter serves (it serves one)
        self._sim = None  # the same, from its first scheduling cycle on
        self._claims: dict[str, Claim] = {}  # live Karpenter nodes (in flight or ready)
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
        """GPUs this Karpenter could add for ``scenario`` (:meth:`KarpenterSetup.provisionable_gpus`)."""
        return self.setup.provisionable_gpus(scenario)

    # -- the NodeSupplier socket ------------------------------------------------
    def can_ever_fit(self, gpus: int, cpu: float, memory: int, selector: tuple) -> bool:
        return self.setup.can_ever_fit(gpus, cpu, memory, selector)

    def start(self, sim, jobs: list) -> None:
        """Bind this run (a Karpenter serves one run: a stack name builds a fresh one from the scenario's
        configuration, :meth:`from_setup`)."""
        if self._run is not None:
            raise ValueError("Karpenter karpenter: this Karpenter has already served a run; build a fresh one for "
                             "each run (Karpenter.from_setup(karpenter.setup), or put it on Scenario.karpenter)")
        self._run = sim

    def observe(self, sim, now: float, unschedulable: list) -> None:
        if self._sim is None:  # the run's first scheduling cycle: static pools launch, owned nodes join
            self._sim = sim  # (the pod metrics read the run from here: none without a cycle to look at)
            self._launch_static(sim, now)
            self._adopt(sim, now)
        cap = sim.capacity
        for c in self._claims.values():
            st = cap.by_name.get(c.name)
            if not c.ready and st is not None and st.ready:
                c.ready = True
                for p in c.pods:
                    self._covered.pop(p, None)
                c.nominees.update(p for p in c.pods if pending(p))  # still nominated to it while they wait
                c.pods = []
            if c.nominees:  # a provisioning pass renews the nomination; pods no longer pending drop out
                c.nominated_until = max(c.nominated_until, now + self.nomination_window)
                c.nominees = {p for p in c.nominees if pending(p)}
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

    def _left(self, pool: NodePool, new: list, mine: Claim | None = None) -> dict:
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
        new: list[Claim] = []
        nominated: list[Claim] = []  # ready nodes the simulation counts on for pending pods
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
                new.append(Claim(f"{pool.name}-{k}", pool, it, [p]))
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
                c = Claim(f"{pool.name}-{k}", pool, it)
                self._start(sim, c, now)
                launched = True
        if launched:
            self._sample_usage(now)

    def _adopt(self, sim, now: float) -> None:
        """Take up, ready, the scenario's nodes a dynamic NodePool owns (:mod:`gangkit.supply.adoption`)."""
        pools = {p.name: p for p in self.nodepools}
        for st in adoptable(sim, pools):
            c = Claim(st.node.name, pool_of(st.node, pools), instance_type_of(st.node, self.instance_types), ready=True)
            self._claims[c.name], self._used[c.pool.name] = c, self._pool_usage(c.pool, [c])
        if self._claims:
            self._sample_usage(now)

    def _start(self, sim, c: Claim, now: float) -> None:
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

    def launch_blocked(self, pods: list) -> str:
        """Why no node will be launched for these pods, given this run's live nodes
        (:meth:`KarpenterSetup.launch_blocked`), else ``""``."""
        return self.setup.launch_blocked(pods, self._pool_usage)

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
