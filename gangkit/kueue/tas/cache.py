"""Kueue's TAS cache: the nodes of every TAS flavor, the room on them, and Kueue's TAS steps in a cycle.

Quota is a number per team; Topology-Aware Scheduling also looks at the
nodes. :class:`TopologyCache` is what Kueue keeps for that
(``pkg/cache/scheduler/tas_cache.go``, ``tas_flavor.go``,
``tas_nodes_cache.go``, ``tas_non_tas_pod_cache.go``):

- per TAS flavor, its **nodes**: ready nodes carrying the flavor's
  ``nodeLabels`` and a label for every level of its Topology, as a domain
  tree (:class:`~gangkit.kueue.tas.search.TopologyTree`), rebuilt when they change;
- per node, the room that **pods outside TAS** take (bound, not finished,
  not of a workload admitted with a topology assignment);
- per domain, what **admitted TAS workloads** were given: their
  ``topologyAssignment`` times their pods' requests. Flavors whose topology
  ends with ``kubernetes.io/hostname`` share it host by host
  (``TASHandleOverlappingFlavors``, on in v0.19).

The scheduler (:mod:`gangkit.kueue.scheduler`) calls it at Kueue's TAS
steps (``pkg/scheduler/flavorassigner/tas_flavorassigner.go``,
``flavorassigner.go``, ``scheduler.go``):

1. flavor matching: a pod set that asks for TAS (an annotation, or none in a
   ClusterQueue whose flavors are all TAS flavors: Kueue's *implied* TAS,
   searched as ``unconstrained``) takes only TAS flavors whose topology has
   its level; a pod set that does not ask takes no TAS flavor;
2. after the quota fits, a topology assignment for every TAS pod set
   (:meth:`~gangkit.kueue.tas.search.TASFlavorSnapshot.find`). None: the reason joins the pod set's
   (``couldn't assign flavors to pod set main: topology "t" allows to fit
   only 6 out of 8 pod(s)``) and the workload needs preemption if it would
   fit on an empty topology (no TAS usage), else it does not fit at all;
3. a workload that needs preemption but has no victim keeps, for the rest
   of the cycle, the assignment it would get on the empty topology;
4. a nomination that no longer fits its domains after earlier admissions of
   the cycle is computed again (``TASRecomputeAssignmentWithinSchedulingCycle``,
   on in v0.19), and admitted or skipped as Kueue does.

Not modelled yet (refused with a clear error where they would matter):
preemption by a TAS workload (a ClusterQueue with a TAS flavor must keep its
three preemption policies at ``Never``: Kueue's victim search then checks
topology too), TAS with admission checks (Kueue then assigns the topology
after provisioning), and TAS workloads resumed from a live cluster's
snapshot. Kueue requeues inadmissible workloads in batches (every few
seconds) when nodes or pods outside TAS free room; gangkit at the next
cycle. Node failures and Kueue's node replacement (``TASFailedNodeReplacement``)
are not modelled.
"""

from __future__ import annotations

from collections.abc import Iterable

from gangkit.kueue.flavor_assigner import NOFIT, PREEMPT, Assignment, Mode, PodSetAssignment
from gangkit.kueue.objects import GPU, HOSTNAME, ClusterQueue, ResourceFlavor, Topology, Workload
from gangkit.kueue.tas.search import TASFlavorSnapshot, TopologyTree, add_into, domain_id
from gangkit.model.errors import Problem, ScenarioError
from gangkit.model.nodes import Node

MAX_LEVELS = 16  # Topology spec.levels: MaxItems


def topology_problems(topologies: list[Topology], flavors: Iterable[ResourceFlavor], manifest: bool = False) -> list[Problem]:
    """Problems with a setup's Topologies and TAS flavors, by Kueue's CRD rules (and a Topology that is missing).

    ``manifest`` names the fields as the YAML does (``spec.topologyName``) rather than as the Python objects.
    """
    problems: list[Problem] = []
    known: dict[str, Topology] = {}
    for t in topologies:
        obj = f"Topology {t.name}"
        levels = "spec.levels" if manifest else "levels"
        if t.name in known:
            problems.append(Problem(obj, "metadata.name" if manifest else "name", "appears twice; a Topology name is unique"))
        known[t.name] = t
        if not 1 <= len(t.levels) <= MAX_LEVELS:
            problems.append(Problem(obj, levels, f"expected 1 to {MAX_LEVELS} levels, got {len(t.levels)}"))
        if len(set(t.levels)) != len(t.levels):
            problems.append(Problem(obj, levels, "must be unique"))
        if HOSTNAME in t.levels[:-1]:
            problems.append(Problem(obj, levels, f"the {HOSTNAME} label can only be used at the lowest level of topology"))
    for f in flavors:
        if f.topology_name is None:
            continue
        obj = f"ResourceFlavor {f.name}"
        if f.topology_name not in known:
            problems.append(Problem(obj, "spec.topologyName" if manifest else "topology_name", f"names Topology "
                                    f"{f.topology_name!r}, which is not in the input (Kueue keeps every ClusterQueue "
                                    "using this flavor inactive: TopologyNotFound)"))
        if not f.node_labels:
            problems.append(Problem(obj, "spec" if manifest else "node_labels",
                                    "at least one nodeLabel is required when topology is set"))
    return problems


def unmodelled_problems(flavors: Iterable[ResourceFlavor], cluster_queues: Iterable[ClusterQueue], admission_checks: list = (),
                        manifest: bool = False) -> list[Problem]:
    """What gangkit does not model yet around TAS: preemption by a TAS workload, TAS with admission checks."""
    tas_flavors = {f.name for f in flavors if f.topology_name is not None}
    problems: list[Problem] = []
    for q in cluster_queues:
        used = sorted({fq.flavor for rg in q.resource_groups for fq in rg.flavors} & tas_flavors)
        if not used:
            continue
        p = q.preemption
        if (p.within_cluster_queue, p.reclaim_within_cohort, p.borrow_within_cohort) != ("Never",) * 3:
            problems.append(Problem(f"ClusterQueue {q.name}", "spec.preemption" if manifest else "preemption",
                                    f"it uses the TAS flavor(s) {', '.join(used)}: preemption by topology-aware "
                                    "workloads is not modelled yet; expected withinClusterQueue, reclaimWithinCohort "
                                    "and borrowWithinCohort Never"))
        if admission_checks:
            problems.append(Problem(f"ClusterQueue {q.name}", "spec.admissionChecksStrategy" if manifest else "admission_checks",
                                    f"it uses the TAS flavor(s) {', '.join(used)}: admission checks together with "
                                    "topology-aware scheduling are not modelled yet (Kueue assigns the topology "
                                    "after provisioning)"))
    return problems


def node_capacity(node: Node) -> dict[str, int]:
    """A node's allocatable in Kueue's units; a resource the node does not model is left out (it limits nothing)."""
    out = {GPU: node.gpus}
    if node.cpu is not None:
        out["cpu"] = int(round(node.cpu * 1000))
    if node.memory is not None:
        out["memory"] = node.memory
    return out


def matches_flavor(labels: dict[str, str], flavor: ResourceFlavor, topology: Topology) -> bool:
    """Kueue's ``NodeMatchesFlavor``: the flavor's nodeLabels, and a label for every level."""
    return all(labels.get(k) == v for k, v in flavor.node_labels) and all(level in labels for level in topology.levels)


class TopologyCache:
    """The TAS part of one Kueue: its TAS flavors' nodes and the room TAS workloads hold on them."""

    def __init__(self, flavors: dict[str, ResourceFlavor], topologies: list[Topology], cluster_queues: dict[str, ClusterQueue],
                 admission_checks: list = ()):
        problems = topology_problems(topologies, flavors.values())
        problems += unmodelled_problems(flavors.values(), cluster_queues.values(), admission_checks)
        if problems:
            raise ScenarioError(problems)
        by_name = {t.name: t for t in topologies}
        self.flavors = {n: f for n, f in flavors.items() if f.topology_name is not None}
        self.topology = {n: by_name[f.topology_name] for n, f in self.flavors.items()}
        self.scope = {n: HOSTNAME if t.levels[-1] == HOSTNAME else n for n, t in self.topology.items()}
        self.cq_flavors = {q: {fq.flavor for rg in cq.resource_groups for fq in rg.flavors} for q, cq in cluster_queues.items()}
        # Kueue's IsTASOnly: every flavor of the ClusterQueue is a TAS flavor
        self.tas_only = {q: all(f in self.flavors for f in fs) for q, fs in self.cq_flavors.items()}
        self.trees = {n: TopologyTree(t, ()) for n, t in self.topology.items()}
        self.free: dict[str, dict[str, dict]] = {n: {} for n in self.flavors}  # flavor -> leaf -> allocatable - non-TAS
        self._nodes: dict[str, tuple] = {}  # flavor -> the nodes its tree was built from
        self.usage: dict[str, dict[str, dict]] = {}  # scope -> leaf -> what admitted TAS workloads hold
        self.cycle_usage: dict[str, dict[str, dict]] = {}  # scope -> leaf -> held for the rest of one cycle
        self.held: dict[int, list[tuple]] = {}  # workload seq -> its (scope, leaf, amounts) in usage

    # -- what Kueue watches: nodes and pods --------------------------------------------------------------------
    def observe(self, nodes: Iterable[tuple[Node, dict]]) -> set[str]:
        """The ready nodes and, per node, what its pods outside TAS request (Kueue's units); returns the TAS flavors
        whose room grew (a node came, pods outside TAS left), whose inadmissible workloads Kueue then requeues."""
        nodes = list(nodes)
        grew = set()
        for name, flavor in self.flavors.items():
            topology = self.topology[name]
            mine = [(n, used) for n, used in nodes if matches_flavor(dict(n.labels), flavor, topology)]
            key = tuple((n.name, n.labels, n.gpus, n.cpu, n.memory) for n, _ in mine)
            if key != self._nodes.get(name):
                self._nodes[name] = key
                self.trees[name] = TopologyTree(topology, [(n.name, dict(n.labels), node_capacity(n)) for n, _ in mine])
            tree = self.trees[name]
            free = {leaf_id: dict(leaf.capacity) for leaf_id, leaf in tree.leaves.items()}
            for n, used in mine:
                room = free[tree.leaf_of[n.name]]
                for res, value in used.items():
                    if res in room:
                        room[res] -= value
            old = self.free[name]
            if any(leaf not in old or any(v > old[leaf].get(r, v) for r, v in room.items()) for leaf, room in free.items()):
                grew.add(name)
            self.free[name] = free
        return grew

    def observe_nodes(self, nodes: Iterable[Node]) -> set[str]:
        """:meth:`observe` for empty nodes (no pod outside TAS)."""
        return self.observe((n, {}) for n in nodes)

    def snapshot(self, flavor: str) -> TASFlavorSnapshot:
        scope = self.scope[flavor]
        return TASFlavorSnapshot(self.trees[flavor], self.free[flavor],
                                 (self.usage.get(scope, {}), self.cycle_usage.get(scope, {})))

    def uses(self, cq: str, flavors: set[str]) -> bool:
        return bool(self.cq_flavors.get(cq, set()) & flavors)

    # -- flavor matching (checkPodSetAndFlavorMatchForTAS) --------------------------------------------------------
    def implied(self, ps, cq: str) -> bool:
        """Kueue's ``isTASImplied``: no annotation, and every flavor of the ClusterQueue is a TAS flavor."""
        return (ps.topology is None or not ps.topology.explicit) and self.tas_only.get(cq, False)

    def requested(self, ps, cq: str) -> bool:
        return (ps.topology is not None and ps.topology.explicit) or self.implied(ps, cq)

    def flavor_mismatch(self, cq: str, ps, flavor: str, covered: tuple[str, ...]) -> str:
        """Why a flavor cannot serve the pod set for TAS reasons, in Kueue's words; "" when it can."""
        tas = flavor in self.flavors
        if self.requested(ps, cq):
            if self.implied(ps, cq):
                return ""
            if not tas:
                if not any(r in covered for r in ps.requests):
                    return ""  # it serves only resources TAS does not place (a quota-only resource)
                return f'Flavor "{flavor}" does not support TopologyAwareScheduling'
            if not self.snapshot(flavor).has_level(ps.topology):
                return f'Flavor "{flavor}" does not contain the requested level'
            return ""
        return f'Flavor "{flavor}" supports only TopologyAwareScheduling' if tas else ""

    # -- the topology assignment of a nomination -----------------------------------------------------------------
    def _requests(self, wl: Workload, cq: str, a: Assignment) -> list[tuple]:
        """The TAS pod sets of a nomination: (pod set, its assignment, TAS flavor, implied) (``WorkloadsTopologyRequests``)."""
        out = []
        for ps, psa in zip(wl.pod_sets, a.podsets):
            if not self.requested(ps, cq) or psa.error or psa.count == 0:
                continue
            tas = sorted({f for f in psa.flavors.values() if f in self.flavors})
            if len(tas) != 1:
                psa.error = "no TAS flavor assigned" if not tas else f"more than one TAS flavor assigned: {', '.join(tas)}"
                a.mode = NOFIT
                continue
            out.append((ps, psa, tas[0], self.implied(ps, cq)))
        return out

    def _find(self, requests: list[tuple], simulate_empty: bool) -> tuple[dict, tuple | None]:
        """Assignments for every TAS pod set, flavor by flavor in name order (``FindTopologyAssignmentsForWorkload``);
        earlier pod sets' pods count against later ones. Returns (assignments by pod set, first failure)."""
        found: dict[int, object] = {}
        failures = []
        shared: dict[str, dict] = {}  # hosts' assumed usage, shared by every flavor whose topology ends with the hostname
        for flavor in sorted({r[2] for r in requests}):
            snap = self.snapshot(flavor)
            assumed = shared if snap.tree.hostname_leaf else {}
            for index, (ps, psa, f, implied) in enumerate(requests):
                if f != flavor:
                    continue
                ta, reason = snap.find(psa.count, ps.requests, ps.node_selector, ps.topology, implied, assumed, simulate_empty)
                if ta is None:
                    failures.append((index, psa, reason))
                    break
                found[index] = ta
                for values, count in ta.domains:
                    add_into(assumed.setdefault(domain_id(values), {}), ps.requests, count)
        return found, (min(failures, key=lambda x: x[0])[1:] if failures else None)

    def assign(self, wl: Workload, cq: str, a: Assignment) -> None:
        """Kueue's TAS step of flavor assignment, after the quota: see the module's steps 2 and the modes."""
        if a.mode == NOFIT:
            return
        requests = self._requests(wl, cq, a)
        if a.mode == NOFIT or not requests:
            return
        if a.mode != PREEMPT:
            found, failure = self._find(requests, simulate_empty=False)
            if failure is None:
                self._record(a, requests, found)
                return
            psa, reason = failure
            psa.reasons.append(reason)
            psa.causes.append("")
            _set_mode(psa, PREEMPT)
            a.mode = PREEMPT
        _, failure = self._find(requests, simulate_empty=True)
        if failure is not None:  # not even on an empty topology: no preemption can help
            _set_mode(failure[0], NOFIT)
            a.mode = NOFIT
            return
        for _, psa, _, _ in requests:
            _set_mode(psa, PREEMPT)

    def for_preemption(self, wl: Workload, cq: str, a: Assignment, victims: list) -> None:
        """Kueue's ``updateAssignmentForTAS``: a nomination that needs preemption gets the assignment it would have
        once its victims are gone, or, without victims, on the empty topology (so that it can hold it)."""
        if a.mode != PREEMPT:
            return
        requests = [r for r in self._requests(wl, cq, a) if r[1].topology is None]
        if not requests:
            return
        gone = [v.workload for v in victims]
        for w in gone:
            self.remove(w)
        try:
            found, _ = self._find(requests, simulate_empty=not gone)
        finally:
            for w in gone:
                self.add(w)
        self._record(a, requests, found)

    def _record(self, a: Assignment, requests: list[tuple], found: dict) -> None:
        for index, (ps, psa, flavor, _) in enumerate(requests):
            ta = found.get(index)
            if ta is None:
                continue
            psa.topology, psa.tas_flavor = ta, flavor
            a.tas_usage += [(flavor, domain_id(values), ps.requests, count) for values, count in ta.domains]

    # -- usage ----------------------------------------------------------------------------------------------------
    def fits(self, a: Assignment, gone: Iterable[Workload] = ()) -> bool:
        """Does every domain of the nomination still hold its pods (Kueue's ``Fits``), ``gone`` counted as free?"""
        if not a.tas_usage:
            return True
        freed: dict[str, dict[str, dict]] = {}
        for w in gone:
            for scope, leaf, amounts in self.held.get(w.seq, ()):
                add_into(freed.setdefault(scope, {}).setdefault(leaf, {}), amounts)
        return all(self.snapshot(flavor).fits(leaf, requests, count, freed.get(self.scope[flavor]))
                   for flavor, leaf, requests, count in a.tas_usage)

    def reserve(self, a: Assignment) -> None:
        """Hold a nomination's domains for the rest of the cycle (it needs preemption and found no victim)."""
        for flavor, leaf, requests, count in a.tas_usage:
            add_into(self.cycle_usage.setdefault(self.scope[flavor], {}).setdefault(leaf, {}), requests, count)

    def end_cycle(self) -> None:
        self.cycle_usage.clear()

    def add(self, wl: Workload) -> None:
        """An admitted workload's topology assignment holds its domains."""
        adm = wl.admission
        held = []
        for ps in wl.pod_sets:
            ta = adm.topology.get(ps.name)
            flavor = next((f for f in adm.flavors.get(ps.name, {}).values() if f in self.flavors), None)
            if ta is None or flavor is None:
                continue
            for values, count in ta.domains:
                amounts = {r: v * count for r, v in ps.requests.items()}
                held.append((self.scope[flavor], domain_id(values), amounts))
                add_into(self.usage.setdefault(self.scope[flavor], {}).setdefault(domain_id(values), {}), amounts)
        if held:
            self.held[wl.seq] = held

    def remove(self, wl: Workload) -> None:
        for scope, leaf, amounts in self.held.pop(wl.seq, ()):
            add_into(self.usage[scope][leaf], amounts, -1)


def _set_mode(psa: PodSetAssignment, mode: int) -> None:
    """Kueue's ``updateMode``: every flavor of the pod set gets ``mode`` (keeping its borrowing level)."""
    for r, m in psa.modes.items():
        psa.modes[r] = Mode(mode, m.borrow)


__all__ = ["TopologyCache", "matches_flavor", "node_capacity", "topology_problems", "unmodelled_problems"]
