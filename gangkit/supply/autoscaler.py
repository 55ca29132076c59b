"""A node supplier with cluster-autoscaler's semantics: node groups that grow and shrink on a scan loop.

cluster-autoscaler is a caretaker who walks through the building every ten
seconds. Each round it looks at the pods nobody could place, pictures a
fresh machine of each *node group* (every machine of a group is alike), and
asks "how many of these would the waiting pods need?". An *expander* picks
one group, and the caretaker asks the cloud for that many machines. When
the machines of a request are not all up within ``max_node_provision_time``,
the group is *backed off* for a while, so the next round tries another one;
a machine that has not even joined the cluster by then is deleted.
Machines that stay under-used for ``scale_down_unneeded_time`` are drained
and removed::

    pods unschedulable ──> scan (every 10 s) ──> template nodes per group ──> expander ──> scale-up
                                                  (pods that fit on existing        least-waste | random |
                                                   or upcoming nodes are dropped)   most-pods | price
      launched ── registered ── initialized ── ready          a scale-up not done after 15 min: group backed off
                 (same Stages as Karpenter)                    5 min, doubling to 30 min; unregistered nodes deleted
      utilization < 50 % and pods fit elsewhere for 10 min ──> node removed (its pods evicted)

Rules, and the cluster-autoscaler behaviour each one models (flag names and
defaults from cluster-autoscaler 1.36, ``cluster-autoscaler/config/flags/flags.go``
and ``config/const.go``, and its FAQ):

- **Scan loop** (``--scan-interval``, 10 s): scans happen at multiples of
  ``scan_interval``, at least one interval apart, and only while there is
  something to do (pending pods,
  a node that may time out, an unneeded node, a ProvisioningRequest);
  otherwise the loop sleeps until the next deadline or cluster change.
- **Scale-up**: pending pods that fit on existing ready nodes or on nodes
  already requested (*upcoming* nodes, counted as empty templates) are
  dropped, as CA's filter-out-schedulable does. For each node group that is
  not backed off and below ``max_size``, the remaining pods that match the
  group's labels are packed first-fit, largest first, onto template nodes
  (CA's binpacking estimator), up to ``max_size``. The *expander*
  (``--expander``; :mod:`gangkit.supply.expander`, ``least-waste`` by default since
  CA 1.33) picks one option. One group is scaled up per scan. A pod of a one-per-node pod
  set (required pod anti-affinity on ``kubernetes.io/hostname``) goes neither
  to a node that holds a pod of its group nor to a node or template given one
  earlier in the same simulation (CA runs kube-scheduler's InterPodAffinity
  Filter on its template nodes); a ProvisioningRequest's simulation keeps it
  too. Simplified: scale-down's simulation, and the room a booking holds,
  do not apply that rule.
- **Stages**: the new nodes pass through the same :class:`~gangkit.supply.cloud.Stages`
  as Karpenter's (launched, registered, initialized, optionally image pulled).
- **max-node-provision-time** (15 min; cluster-autoscaler 1.35
  ``clusterstate/clusterstate.go`` and ``core/static_autoscaler.go``). Two
  rules, in this order at each scan:

  1. *The scale-up request times out.* A scale-up makes (or, for a group
     with one open, grows) the group's request, due ``max_node_provision_time``
     later (``registerOrUpdateScaleUpNoLock``). At a scan the request ends
     well when every node of the group is *provisioned*: ready, or
     registered for more than ``max_node_startup_time`` (15 min,
     ``--max-node-startup-time``; such a node is ``Unready``). Past its due
     time it *times out* (``ScaleUpTimedOut``, a failed scale-up with reason
     ``timeout``): the group is backed off, nothing is deleted. A node that
     registered in time but is slower to get ready keeps booting, and its
     GPUs serve pods once it is ready.
  2. *Long-unregistered nodes are deleted* (``removeOldUnregisteredNodes``).
     CA first spots a new instance in the loop after the scale-up (one
     ``scan_interval`` later, ``UnregisteredSince``); an instance still not
     registered ``max_node_provision_time`` after that is deleted
     (``DeleteUnregistered``), never taking the group below ``min_size``,
     and never joins later; its GPUs leave the books at that scan.

  A backoff lasts 5 min after the first failure
  (``--initial-node-group-backoff-duration``), doubling for each failure
  that finds the group out of backoff, up to 30 min
  (``--max-node-group-backoff-duration``); a failure while the group is
  still backed off keeps the duration. The record is forgotten 3 h after the
  last failure (``--node-group-backoff-reset-timeout``;
  ``utils/backoff/exponential_backoff.go``). Upcoming nodes (CA's empty
  templates in its simulation) are the nodes that are not ready and are
  either registered less than ``max_node_startup_time`` ago or not yet
  long-unregistered, backed-off groups included. A group with
  ``stockout=True`` models a cloud that accepts the request but never
  delivers the machine (it never registers, so it is deleted). Simplified:
  CA's loop starts a moment after each tick, so a deadline that falls on a
  scan is taken as passed at that scan (CA compares with a strict
  ``Before``); a node counts as ready for CA when gangkit's last stage
  ends; scale-down does not consider nodes that are not ready
  (``--scale-down-unready-time``), which here all become ready in the end.
  These are 1.35's rules (1.35.2); 1.36 changes two of them: a timed-out
  request's target size is decreased again (``DecreaseTargetSize``), and a
  group without an open request, or backed off, has no upcoming nodes.
- **Scale-down** (``--scale-down-unneeded-time`` 10 min,
  ``--scale-down-delay-after-add`` 10 min, ``--scale-down-gpu-utilization-threshold``
  0.5): in a scan without scale-up, at least 10 min after the last scale-up,
  a node of a group above ``min_size`` is *unneeded* when its GPU
  utilization (for GPU nodes CA measures GPUs only), counting pending pods
  the simulation put there, is below the threshold (simplified: a node
  without GPUs counts as utilization 0, where CA would use CPU and memory
  against ``--scale-down-utilization-threshold``, also 0.5) and every pod bound to it fits on the other
  ready nodes. A node unneeded for 10 min is removed: empty nodes first, up
  to ``--max-scale-down-parallelism`` (10) nodes per scan, then non-empty
  nodes up to ``--max-drain-parallelism`` (1) and what is left of the first
  budget, each only if its pods fit on the other ready nodes after those of
  the nodes drained before it (CA's ``core/scaledown/budgets``; the two
  flags replaced ``--max-empty-bulk-delete``, removed in 1.33, which
  :class:`ClusterAutoscaler` refuses by name). gangkit removes a node at
  once, so no deletion is in progress across scans. The pods of a removed
  node are evicted; a synchronous job loses all its pods and restarts from
  its last checkpoint.
- **ProvisioningRequests** (``--enable-provisioning-requests``): when both
  regular pods and ProvisioningRequests wait, scans alternate between them,
  and a ProvisioningRequest scan handles one request (the oldest), as CA's
  wrapper orchestrator does. Class ``best-effort-atomic-scale-up``: if its
  pods fit on existing capacity it is Provisioned at once; otherwise one node
  group must hold *all* remaining pods within ``max_size`` (all or nothing);
  the scale-up is requested and the request is Provisioned immediately (best
  effort: CA does not wait for the nodes). Class ``check-capacity``: only
  existing ready capacity counts, nothing is launched. Capacity found is
  *booked* for the request's pods: other pods are not counted on it in CA's
  simulation. A request not provisioned is retried 1 min later, doubling up
  to 10 min (``--provisioning-request-initial-backoff-time``,
  ``--provisioning-request-max-backoff-time``), and marked Failed (reason
  ``Expired``) when not provisioned within ``provisioning_request_expiry``
  (7 days in CA). A Provisioned request's booking ends with its
  ``BookingExpired`` condition: 10 minutes after Provisioned, or at the first
  scan that finds as many of its consumers' pods bound as it asked for.
  Requests come from Kueue's admission check or are applied by a user
  (``Scenario.provisioning_requests``, created at their ``create_time``);
  pods that consume a request (its job's pods, or pods with the
  ``autoscaling.x-k8s.io/consume-provisioning-request`` annotation) never
  trigger a scale-up, whatever the request's state
  (:mod:`gangkit.supply.provisioning_request` gives the sources).

Only nodes this autoscaler launched are ever removed; scenario nodes stay.
"""

from __future__ import annotations

import math
from dataclasses import fields

import pandas as pd

from gangkit.engine.sockets import NodeSupplier
from gangkit.model.nodes import Node
from gangkit.model.precision import TOLERANCE, next_boundary
from gangkit.supply.apart import OnePerNode, group_of
from gangkit.supply.autoscaler_requests import ProvisioningRequests
from gangkit.supply.autoscaler_setup import DAY, AutoscalerSetup, default_autoscaler  # noqa: F401 (re-exported)
from gangkit.supply.binpacking import Slot, place, pod_request
from gangkit.supply.cloud import GPU
from gangkit.supply.expander import EXPANDERS, choose, waste
from gangkit.supply.node_groups import GroupState, Launched, NodeGroup
from gangkit.supply.provisioning_request import (
    BEST_EFFORT_ATOMIC,
    BOOKING,
    CHECK_CAPACITY,
    ProvisioningRequest,
)
from gangkit.supply.scale_down import ScaleDown


class ClusterAutoscaler(ProvisioningRequests, ScaleDown, NodeSupplier):
    """The ``autoscaler`` node supplier (see the module docstring for its rules)."""

    name = "autoscaler"

    def __init__(self, node_groups: list[NodeGroup], **flags):
        """``flags``: the fields of :class:`~gangkit.supply.autoscaler_setup.AutoscalerSetup` (its defaults)."""
        self._take(AutoscalerSetup(tuple(node_groups), **flags))

    @classmethod
    def from_setup(cls, setup: "AutoscalerSetup | ClusterAutoscaler") -> "ClusterAutoscaler":
        """A fresh cluster-autoscaler for one run (no node, backoff or request yet) from a scenario's configuration:
        an :class:`AutoscalerSetup`, or a ClusterAutoscaler whose configuration is taken (a scenario may carry
        either)."""
        autoscaler = cls.__new__(cls)
        autoscaler._take(setup.setup if isinstance(setup, ClusterAutoscaler) else setup)
        return autoscaler

    def for_run(self) -> "ClusterAutoscaler":
        """A fresh cluster-autoscaler with this one's configuration."""
        return ClusterAutoscaler.from_setup(self.setup)

    def _take(self, setup: AutoscalerSetup) -> None:
        """This run's state, empty, and the configuration's flags at hand."""
        self.setup = setup
        for f in fields(setup):
            setattr(self, f.name, getattr(setup, f.name))
        self.node_groups = list(setup.node_groups)
        self._sim = None  # the run this autoscaler serves (it serves one)
        self._nodes: dict[str, Launched] = {}
        self._groups = {g.name: GroupState() for g in self.node_groups}
        self._count = {g.name: 0 for g in self.node_groups}
        self._pending: list = []
        self._requests: list[ProvisioningRequest] = []
        self._provreq_mode = False
        self._next_scan: float | None = None
        self._last_scan = -math.inf
        self._token = 0
        self._last_scale_up = -math.inf
        self._last_removal = -math.inf
        self._scale_ups: list[tuple] = []
        self._scale_downs: list[tuple] = []
        self._failures: list[tuple] = []
        self._unregistered_removed: list[tuple] = []
        self._stage_row: dict[str, int] = {}  # node name -> its row of _ready_rows
        self._provreq_rows: list[tuple] = []
        self._ready_rows: list[tuple] = []

    def provisionable_gpus(self, scenario=None) -> int:
        """The GPUs all node groups hold at their ``max_size``."""
        return self.setup.provisionable_gpus(scenario)

    def group_size(self, name: str) -> int:
        """Nodes of group ``name`` now (requested, joining or ready)."""
        return sum(1 for n in self._nodes.values() if n.group.name == name)

    # -- the NodeSupplier socket ------------------------------------------------
    def can_ever_fit(self, gpus: int, cpu: float, memory: int, selector: tuple) -> bool:
        return self.setup.can_ever_fit(gpus, cpu, memory, selector)

    def observe(self, sim, now: float, unschedulable: list) -> None:
        self._bind(sim)
        self._pending = list(unschedulable)
        self._mark_ready(sim)
        if self._has_work(now):
            self._wake(sim, now)
        else:
            self._wake_at_deadline(sim, now)

    def _bind(self, sim) -> None:
        """Bind the run this autoscaler serves, at its first call (the engine's ``start``, or a Kueue check's
        request): a cluster-autoscaler serves one run (a stack name builds a fresh one, :meth:`from_setup`)."""
        if self._sim is None:
            self._sim = sim
        elif sim is not self._sim:
            raise ValueError("ClusterAutoscaler cluster-autoscaler: this autoscaler has already served a run; build a "
                             "fresh one for each run (ClusterAutoscaler.from_setup(autoscaler.setup), or put it on "
                             "Scenario.autoscaler)")

    def launch_blocked(self, pods: list) -> str:
        """cluster-autoscaler's event for pods that consume a ProvisioningRequest: they trigger no scale-up."""
        named = {(p.job.spec.namespace or "default", p.job.spec.consume_provisioning_request) for p in pods}
        if not pods or any(name is None for _, name in named):
            return ""
        return ("Unschedulable pod didn't trigger scale-up, because it's consuming ProvisioningRequest "
                + ", ".join(f"{ns}/{name}" for ns, name in sorted(named)))

    # -- the loop ----------------------------------------------------------------
    def _has_work(self, now: float) -> bool:
        if any(pr.state == "Pending" and pr.next_try <= now for pr in self._requests):
            return True
        if self._regular_pending():
            return True
        if any(self._booked(pr, now) and self._consumed(pr) >= len(pr.pods) for pr in self._requests):
            return True  # its BookingExpired (CapacityBookingConsumed) is set at the next scan
        return self.scale_down and any(n.ready and n.unneeded_since is None for n in self._nodes.values())

    def _regular_pending(self) -> list:
        """The pending pods scale-up is for: not those that consume a ProvisioningRequest (CA's pods filter)."""
        kueue = self._kueue_consumers()
        return [p for p in self._pending if p.node is None and not p.done and p.job.placing
                and p.job.spec.consume_provisioning_request is None and id(p.job) not in kueue]

    def _aligned(self, t: float) -> float:
        """The next scan at or after ``t`` (scans run every scan_interval seconds)."""
        return next_boundary(t, self.scan_interval)

    def _wake(self, sim, at: float) -> None:
        at = self._aligned(max(at, sim.now, self._last_scan + self.scan_interval))
        if self._next_scan is not None and self._next_scan <= at:
            return
        self._next_scan = at
        self._token += 1
        token = self._token
        sim.call_at(at, lambda t: self._scan(sim, t, token), after_cycles=True)

    def _deadlines(self, now: float) -> list[float]:
        out = []
        for g in self.node_groups:
            due = self._groups[g.name].expected_add
            if due is not None and any(not n.ready for n in self._nodes.values() if n.group is g):
                out.append(due)
        for n in self._nodes.values():
            if not n.ready:  # when it would turn LongUnregistered, or Unready (no longer upcoming either way)
                if n.registered > now:
                    out.append(self._long_unregistered_at(n))
                out.append(n.registered + self.max_node_startup_time)
            elif n.unneeded_since is not None:
                out.append(max(n.unneeded_since + self.scale_down_unneeded_time, self._last_scale_up + self.scale_down_delay_after_add))
        for pr in self._requests:
            if self._booked(pr, now):
                out.append(pr.provisioned_at + BOOKING)
            if pr.state == "Pending":
                out.append(pr.next_try)
                out.append(pr.created + self.provisioning_request_expiry)
        if self._regular_pending():
            out.extend(g.backoff_until for g in self._groups.values() if g.backoff_until > now)
        if self.scale_down and any(n.ready and n.unneeded_since is None for n in self._nodes.values()):
            out.append(self._last_scale_up + self.scale_down_delay_after_add)
        return [t for t in out if t > now - TOLERANCE and math.isfinite(t)]

    def _wake_at_deadline(self, sim, now: float) -> None:
        future = self._deadlines(now)
        if future:
            self._wake(sim, min(future))

    def _mark_ready(self, sim) -> None:
        cap = sim.capacity
        for n in self._nodes.values():
            st = cap.by_name.get(n.name)
            if not n.ready and st is not None and st.ready:
                n.ready = True

    def _scan(self, sim, now: float, token: int) -> None:
        if token != self._token:
            return
        self._next_scan = None
        self._last_scan = now
        self._mark_ready(sim)
        self._update_scale_requests(sim, now)
        self._remove_old_unregistered(sim, now)
        self._expire_requests(now)
        self._expire_bookings(now)
        scaled = False
        waiting = [pr for pr in self._requests if pr.state == "Pending" and pr.next_try <= now + TOLERANCE]
        regular = self._regular_pending()
        if waiting and (self._provreq_mode or not regular):
            self._provreq_mode = False
            scaled = self._serve_request(sim, waiting[0], now)
        elif regular:
            self._provreq_mode = bool(waiting)
            scaled = self._scale_up(sim, regular, now)
        cropped = False
        if not scaled and self.scale_down:
            cropped = self._scale_down(sim, now)
        more = cropped or scaled and self._regular_pending() or any(
            pr.state == "Pending" and pr.next_try <= now + TOLERANCE for pr in self._requests)
        if more:
            self._wake(sim, now + self.scan_interval)
        else:
            self._wake_at_deadline(sim, now + TOLERANCE)

    # -- the simulation CA runs ------------------------------------------------------
    def _room(self, sim, include_upcoming: bool = True, exclude=()) -> dict:
        """Free room per node as CA's simulation sees it: ready nodes, plus upcoming nodes as empty templates,
        minus capacity booked for ProvisioningRequests whose pods are not bound yet."""
        rooms = {}
        for st in sim.capacity.nodes:
            if sim.capacity.by_name.get(st.node.name) is not st or st.node.name in exclude:
                continue
            if not st.ready and not (include_upcoming and st.node.name in self._nodes
                                     and self._upcoming(self._nodes[st.node.name], sim.now)):
                continue
            rooms[st.node.name] = Slot(st.free_gpus, st.free_cpu, st.free_memory, st.node.name, st.node.labels)
        if include_upcoming:
            for n in self._nodes.values():
                if not n.exists and n.name not in exclude and self._upcoming(n, sim.now):
                    it = n.group.instance_type
                    rooms[n.name] = Slot(it.gpus, it.cpu, it.memory, n.name, n.group.node_labels())
        for pr in self._requests:
            if not self._booked(pr, sim.now):
                continue
            for req in pr.pods[self._consumed(pr):]:
                for name in pr.nodes:
                    r = rooms.get(name)
                    if r is not None and r.holds(req):
                        r.take_request(req)
                        break
        return rooms

    def _options(self, reqs: list, now: float, atomic: bool, groups: list | None = None) -> list[tuple]:
        """For each usable group: (group, nodes needed, requests helped), packing largest first onto templates
        (a request of a one-per-node group, ``groups`` as for :func:`gangkit.supply.binpacking.place`, at most one per template)."""
        out = []
        order = sorted(range(len(reqs)), key=lambda i: -reqs[i][0])
        for g in self.node_groups:
            state = self._groups[g.name]
            free_slots = g.max_size - self.group_size(g.name)
            if state.backoff_until > now or free_slots <= 0:
                continue
            it = g.instance_type
            labels = g.node_labels()
            templates: list[Slot] = []
            helped = []
            apart = OnePerNode()  # keyed by template number
            for i in order:
                req = reqs[i]
                if not g.holds(*req):
                    continue
                group = groups[i] if groups else None
                for k, t in enumerate(templates):
                    if t.holds(req) and apart.allows(str(k), group):
                        t.take_request(req)
                        apart.give_group(str(k), group)
                        helped.append(i)
                        break
                else:
                    if len(templates) < free_slots:
                        t = Slot(it.gpus, it.cpu, it.memory, g.name, labels)
                        t.take_request(req)
                        apart.give_group(str(len(templates)), group)
                        templates.append(t)
                        helped.append(i)
            if not templates or (atomic and len(helped) < len(reqs)):
                continue
            out.append((g, len(templates), sorted(helped), waste(g, len(templates), [reqs[i] for i in helped])))
        return out

    def _launch(self, sim, g: NodeGroup, count: int, now: float, request: ProvisioningRequest | None = None) -> list[str]:
        names = []
        for _ in range(count):
            k = self._count[g.name]
            while f"{g.name}-{k}" in sim.capacity.by_name or f"{g.name}-{k}" in self._nodes:
                k += 1
            self._count[g.name] = k + 1
            name = f"{g.name}-{k}"
            stages = self.stages.draw(sim.rng, now)
            it = g.instance_type
            if g.stockout:
                sim.record_event("node_requested", None, node=name, layer=self.name, detail=f"node group {g.name}: the cloud has no {it.name} machine")
            else:
                sim.launch_node(Node(name, it.gpus, cpu=it.cpu, memory=it.memory, labels=g.node_labels(), pool=g.name),
                                stages, supplier=self.name)
                ready_at = max(stages.values())
                self._stage_row[name] = len(self._ready_rows)
                self._ready_rows.append((name, g.name, it.name, stages["launched"], stages["registered"],
                                         stages["initialized"], ready_at, ready_at - now))
            self._nodes[name] = Launched(name, g, now, stages, exists=not g.stockout, request=request)
            names.append(name)
        self._last_scale_up = now
        # clusterstate's RegisterScaleUp: the group's request (new, or its times moved on) is due in max-node-provision-time
        self._groups[g.name].requested = now
        self._groups[g.name].expected_add = now + self.max_node_provision_time
        self._scale_ups.append((now, g.name, count, self.group_size(g.name), "ProvisioningRequest" if request else "pods"))
        return names

    def _scale_up(self, sim, pods: list, now: float) -> bool:
        reqs = [pod_request(p) for p in pods]
        groups = [group_of(p) for p in pods]
        if not any(groups):
            groups = None  # no pod with the one-per-node rule
        held = {st.node.name: st.pods for st in sim.capacity.nodes} if groups else None
        left, _ = place(self._room(sim), reqs, groups, held)
        if not left:
            return False
        rest = [reqs[i] for i in left]
        options = self._options(rest, now, atomic=False, groups=[groups[i] for i in left] if groups else None)
        if not options:
            return False
        g, count, _, _ = choose(self.expander, options, sim.rng)
        self._launch(sim, g, count, now)
        return True

    # -- failed scale-ups and unregistered nodes ------------------------------------------
    def _upcoming(self, n: Launched, now: float) -> bool:
        """Is ``n`` one of CA's upcoming nodes (an empty template in its simulation)? Not ready, and either
        registered less than max-node-startup-time ago (NotStarted) or not registered and not yet
        long-unregistered (clusterstate's GetUpcomingNodes)."""
        if n.ready:
            return False
        if n.registered <= now:
            return now < n.registered + self.max_node_startup_time - TOLERANCE
        return now < self._long_unregistered_at(n) - TOLERANCE

    def _provisioned(self, n: Launched, now: float) -> bool:
        """Does ``n`` count as provisioned for its group's scale-up request? Ready, or registered and past
        max-node-startup-time (Unready): clusterstate's Registered minus NotStarted."""
        return n.ready or (n.registered <= now and now >= n.registered + self.max_node_startup_time - TOLERANCE)

    def _long_unregistered_at(self, n: Launched) -> float:
        """When ``n``, if still unregistered, becomes LongUnregistered: CA first spots the instance in the loop
        after the scale-up (UnregisteredSince), and gives it max-node-provision-time from then."""
        return n.launched + self.scan_interval + self.max_node_provision_time

    def _update_scale_requests(self, sim, now: float) -> None:
        """clusterstate's updateScaleRequests: a group's scale-up request ends when none of its nodes is still
        upcoming; past its ExpectedAddTime it times out, a failed scale-up that backs the group off."""
        for g in self.node_groups:
            state = self._groups[g.name]
            if state.expected_add is None:
                continue
            if all(self._provisioned(n, now) for n in self._nodes.values() if n.group is g):
                state.expected_add = None  # the scale-up finished successfully
            elif now >= state.expected_add - TOLERANCE:
                state.expected_add = None
                self._back_off(sim, g, now, now - state.requested)

    def _back_off(self, sim, g: NodeGroup, now: float, waited: float) -> None:
        """A failed scale-up of ``g`` (reason ``timeout``, ``waited`` seconds after the request): CA's exponential
        backoff of the node group."""
        state = self._groups[g.name]
        if now - state.last_failure >= self.backoff_reset:  # RemoveStaleBackoffData
            state.failures, state.backoff = 0, 0.0
        if not state.backoff:
            duration = self.initial_backoff
        elif now >= state.backoff_until:  # not backed off now: the duration doubles
            duration = min(2 * state.backoff, self.max_backoff)
        else:  # concurrent failures do not make the backoff grow
            duration = state.backoff
        state.failures += 1
        state.backoff = duration
        state.last_failure = now
        state.backoff_until = now + duration
        sim.record_event("node_group_backoff", None, layer=self.name,
                         detail=f"ScaleUpTimedOut: Nodes added to group {g.name} failed to register within "
                                f"{go_duration(waited)}; node group {g.name} backed off until "
                                f"t={state.backoff_until:g} s (failure {state.failures})")
        self._failures.append((now, g.name, "timeout", state.failures, state.backoff_until))

    def _remove_old_unregistered(self, sim, now: float) -> None:
        """static_autoscaler's removeOldUnregisteredNodes: a node still unregistered max-node-provision-time
        after CA first spotted it is deleted (never above the group's min size); it never joins later."""
        for g in self.node_groups:
            size = self.group_size(g.name)
            old = [n for n in self._nodes.values() if n.group is g and not n.ready and n.registered > now
                   and now >= self._long_unregistered_at(n) - TOLERANCE]
            for n in old[:max(0, size - g.min_size)]:
                del self._nodes[n.name]
                for pr in self._requests:
                    if n.name in pr.nodes:
                        pr.booking_lost = True  # CA's simulation no longer holds room for it
                if n.exists:
                    sim.remove_node(n.name, supplier=self.name)
                    row = self._stage_row.pop(n.name)
                    self._ready_rows[row] = self._ready_rows[row][:4] + (math.nan,) * 4  # no later stage is reached
                else:
                    sim.record_event("node_removed", None, node=n.name, layer=self.name,
                                     detail=f"DeleteUnregistered: Removed unregistered node {n.name}")
                self._unregistered_removed.append((now, g.name, n.name))

    # -- metrics ---------------------------------------------------------------------------
    def metrics(self) -> dict:
        """DataFrames named after cluster-autoscaler's Prometheus metrics (plus two of gangkit's own)."""
        return {
            "cluster_autoscaler_scaled_up_nodes_total": pd.DataFrame(
                self._scale_ups, columns=["time_s", "node_group", "value", "group_size", "reason"]),
            "cluster_autoscaler_scaled_down_nodes_total": pd.DataFrame(
                self._scale_downs, columns=["time_s", "node_group", "node", "reason"]),
            "cluster_autoscaler_failed_scale_ups_total": pd.DataFrame(
                self._failures, columns=["time_s", "node_group", "reason", "failures", "backoff_until_s"]),
            "cluster_autoscaler_old_unregistered_nodes_removed_count": pd.DataFrame(
                self._unregistered_removed, columns=["time_s", "node_group", "node"]),
            "gangkit_autoscaler_node_stages": pd.DataFrame(
                self._ready_rows, columns=["node", "node_group", "instance_type", "launched_s", "registered_s",
                                           "initialized_s", "ready_s", "value"]),
            "gangkit_provisioning_requests": pd.DataFrame(
                self._provreq_rows, columns=["time_s", "provisioning_request", "state", "reason", "pods"]),
        }

    # -- wait buckets ------------------------------------------------------------------
    def awaited_nodes(self) -> list[tuple]:
        """(pod, node name): pending pods of a job whose ProvisioningRequest booked nodes still in flight.

        Those pods consume the request's capacity, so their job waits for exactly
        those nodes (see gangkit.engine.waits); pods of plain scale-ups are not tied to a node.
        """
        out = []
        for n in self._nodes.values():
            pr = n.request
            if pr is None or not n.exists or n.ready:
                continue
            out.extend((p, n.name) for js in self._consumer_jobs(pr) for p in js.pods if p.node is None and not p.done)
        return out


def go_duration(seconds: float) -> str:
    """``seconds`` as Go's ``time.Duration`` prints it, as in cluster-autoscaler's messages: ``1m40s``, ``15m0s``, ``1h0m0s``.

    >>> go_duration(100), go_duration(900), go_duration(3600), go_duration(2.5), go_duration(0)
    ('1m40s', '15m0s', '1h0m0s', '2.5s', '0s')
    """
    hours, rest = divmod(float(seconds), 3600.0)
    minutes, secs = divmod(rest, 60.0)
    text = f"{round(secs, 9):g}s"
    if hours or minutes:
        text = f"{int(minutes)}m" + text
    if hours:
        text = f"{int(hours)}h" + text
    return text


__all__ = ["ClusterAutoscaler", "NodeGroup", "ProvisioningRequest", "default_autoscaler", "EXPANDERS",
           "BEST_EFFORT_ATOMIC", "CHECK_CAPACITY", "GPU"]
