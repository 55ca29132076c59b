"""Topology-Aware Scheduling: in which domains of a data centre one pod set fits (Kueue v0.19's TAS).

Picture a hotel booking a wedding party: the party wants all its rooms on
one floor (``required``), or on one floor if it can and else in one wing
(``preferred``), or anywhere at all (``unconstrained``). The clerk first
counts, for every room, how many guests it can still take, and adds the
counts up floor by floor and wing by wing; then picks a floor with room for
the whole party, and inside it fills the roomiest rooms first.

Kueue does the same with a **Topology** (levels such as block, rack, host,
each a node label) over the nodes of a TAS ResourceFlavor:

1. **Count** (``fillInCounts``): each node at the lowest level takes as many
   pods as its free room holds for every resource the pod asks for (free
   room: allocatable, minus what pods outside TAS use there, minus what
   admitted TAS workloads were given there, minus what earlier pod sets of
   the same workload were just given). When the lowest level is not
   ``kubernetes.io/hostname``, a lowest domain pools the room of all its
   nodes and is counted as one. A domain's count is the sum of its
   children's.
2. **Choose the level** (``findLevelWithFitDomains``): at the requested
   level, the domains sorted by count, largest first (Kueue's *BestFit*),
   and of those that hold every pod the one with the *smallest* such count.
   None holds them: ``required`` fails with Kueue's message ("topology "t"
   allows to fit only 6 out of 8 pod(s)"); ``preferred`` tries the level
   above, and at the top takes domains largest first (the last one again
   the tightest that suffices). ``unconstrained`` (and a pod set without
   annotation in a ClusterQueue whose flavors are all TAS flavors) searches
   the lowest level with *LeastFreeCapacity* (feature gate
   ``TASProfileMixed``, on since v0.15): the fullest domain that still holds
   every pod, else the fullest first until the pods are placed.
3. **Descend** (``updateCountsToMinimumGeneric``): level by level down to
   the lowest, the children of the chosen domains, sorted the same way,
   take pods roomiest first, the last child again the tightest that
   suffices.
4. **Write the assignment** (``buildAssignment``): the lowest domains with
   their pod counts, sorted by their level values; only the hostname when
   the topology ends with ``kubernetes.io/hostname``, else every level.

Rules after Kueue v0.19.2 ``pkg/cache/scheduler/tas_flavor_snapshot.go`` and
``tas_topology_tree.go``, with v0.19's feature gates: ``TASProfileMixed``
on, ``TASBalancedPlacement`` and ``TASRespectNodeAffinityPreferred`` off.

Not modelled: pod set slices (``podset-slice-required-topology``,
``podset-slice-size``, the multi-layer constraints) and pod set groups
(``podset-group-name``, leader and workers), which this increment does not
read; node taints and node affinity (gangkit's nodes and pods have none);
the ``pods`` resource (a node's ``allocatable.pods``, 110 on a default
kubelet, is unlimited here); and a resource a gangkit node does not model
(its ``cpu`` or ``memory`` left at ``None``) limits nothing, as in
gangkit's placement.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from gangkit.kueue.objects import HOSTNAME, Topology, TopologyAssignment, TopologyRequest
from gangkit.model.resources import labels_match

#: Kueue counts pods in an int32 and clamps at its largest value (``pkg/resources`` ``CountInWithLimitingResource``)
MAX_COUNT = 2**31 - 1

Resources = dict[str, int]  # resource name -> amount in Kueue's units (millicores, bytes, counts)


def count_in(requests: Resources, room: Resources) -> tuple[int, str]:
    """How many pods of ``requests`` fit in ``room``, and the resource that limits them (Kueue's
    ``CountInWithLimitingResource``: the smallest count, ties to the first name in order). A resource
    ``room`` does not list is not modelled on that node and limits nothing."""
    best, limiting = MAX_COUNT, "pods"  # Kueue adds one "pods" to every request; gangkit's nodes have no pod limit
    for name, value in requests.items():
        if not value or name not in room:
            count = MAX_COUNT
        else:
            count = max(0, min(room[name] // value, MAX_COUNT))
        if count < best or (count == best and name < limiting):
            best, limiting = count, name
    return best, limiting


def add_into(total: Resources, amounts: Resources, times: int = 1) -> None:
    for name, value in amounts.items():
        total[name] = total.get(name, 0) + value * times


class Domain:
    """One topology domain (a block, a rack, a host): its level values, parent, children and, during one
    search, its pod count (Kueue's ``domain`` with its ``domainState.podCount``)."""

    __slots__ = ("id", "values", "parent", "children", "count", "labels", "capacity")

    def __init__(self, values: tuple[str, ...], domain_id: str):
        self.id, self.values = domain_id, values
        self.parent: Domain | None = None
        self.children: list[Domain] = []
        self.count = 0
        self.labels: dict[str, str] = {}  # a host's node labels (lowest level kubernetes.io/hostname)
        self.capacity: Resources = {}  # a lowest domain's allocatable, summed over its nodes


def domain_id(values: Iterable[str]) -> str:
    """Kueue's ``TopologyDomainID``: the level values joined by commas."""
    return ",".join(values)


class TopologyTree:
    """The domains of one TAS flavor's nodes, from the roots (first level) to the leaves (last level).

    ``nodes`` are ``(name, labels, allocatable)``, each carrying every level's label. A leaf is a host
    (id: its hostname) when the last level is ``kubernetes.io/hostname``; else the nodes sharing all
    level values, their allocatable summed (a resource counts only where every node of the leaf models it).
    """

    def __init__(self, topology: Topology, nodes: Iterable[tuple[str, dict, Resources]]):
        self.topology = topology
        self.levels = topology.levels
        self.hostname_leaf = self.levels[-1] == HOSTNAME
        self.per_level: list[dict[str, Domain]] = [{} for _ in self.levels]
        self.leaves = self.per_level[-1]
        self.leaf_of: dict[str, str] = {}  # node name -> its leaf's id
        for name, labels, capacity in nodes:
            values = tuple(labels[k] for k in self.levels)
            leaf_id = values[-1] if self.hostname_leaf else domain_id(values)
            leaf = self.leaves.get(leaf_id)
            if leaf is None:
                leaf = self.leaves[leaf_id] = Domain(values, leaf_id)
                leaf.labels, leaf.capacity = dict(labels), dict(capacity)
            else:
                leaf.capacity = {r: v + capacity[r] for r, v in leaf.capacity.items() if r in capacity}
            self.leaf_of[name] = leaf_id
        for leaf in list(self.leaves.values()):
            child = leaf
            for depth in range(len(self.levels) - 2, -1, -1):
                values = child.values[:depth + 1]
                parent = self.per_level[depth].get(domain_id(values))
                created = parent is None
                if created:
                    parent = self.per_level[depth][domain_id(values)] = Domain(values, domain_id(values))
                child.parent = parent
                parent.children.append(child)
                if not created:
                    break
                child = parent
        self.roots = list(self.per_level[0].values())


class Exclusions:
    """Why nodes took no pod, for Kueue's message (``tasExclusionStats``): nodes that fail the pod's
    nodeSelector, and per resource the nodes it left without room for one pod."""

    def __init__(self) -> None:
        self.total = 0
        self.node_selector = 0
        self.resources: Counter = Counter()

    def __str__(self) -> str:
        reasons = [f"nodeSelector: {self.node_selector}"] if self.node_selector else []
        reasons += [f'resource "{name}": {n}' for name, n in sorted(self.resources.items())]
        return ", ".join(sorted(reasons))


class TASFlavorSnapshot:
    """One TAS flavor's topology with the room left in each leaf, and Kueue's search over it.

    ``free``: per leaf id, allocatable minus what pods outside TAS use; ``used``: per leaf id, what
    admitted (and, within a cycle, reserved) TAS workloads hold. Both are read, never changed.
    """

    def __init__(self, tree: TopologyTree, free: dict[str, Resources], used: Iterable[dict[str, Resources]] = ()):
        self.tree, self.free, self.used = tree, free, list(used)
        self.name = tree.topology.name
        self.levels = tree.levels

    def has_level(self, request: TopologyRequest | None) -> bool:
        """Kueue's ``HasLevel``: the request names a level (the lowest one for ``unconstrained: true``) of this topology."""
        key = self.level_key(request, implied=False)
        return key is not None and key in self.levels

    def level_key(self, request: TopologyRequest | None, implied: bool) -> str | None:
        """The level to search (Kueue's ``levelKeyWithImpliedFallback``)."""
        if request is not None:
            if request.required is not None:
                return request.required
            if request.preferred is not None:
                return request.preferred
            if request.unconstrained:
                return self.levels[-1]
        return self.levels[-1] if implied else None

    def room(self, leaf: Domain, simulate_empty: bool, assumed: dict[str, Resources]) -> Resources:
        """What one leaf can still take: free, less the TAS usage (none when ``simulate_empty``), less ``assumed``."""
        room = dict(self.free.get(leaf.id, leaf.capacity))
        taken = [] if simulate_empty else [u.get(leaf.id) for u in self.used]
        taken.append(assumed.get(leaf.id))
        for amounts in taken:
            for name, value in (amounts or {}).items():
                if name in room:
                    room[name] -= value
        return room

    # -- the search ------------------------------------------------------------------------------------------

    def find(self, count: int, requests: Resources, selector: tuple = (), request: TopologyRequest | None = None,
             implied: bool = False, assumed: dict[str, Resources] | None = None,
             simulate_empty: bool = False) -> tuple[TopologyAssignment | None, str]:
        """The topology assignment of ``count`` pods of ``requests`` each, or ``(None, Kueue's reason)``.

        ``selector`` is the pod's nodeSelector (checked per host when the lowest level is the hostname);
        ``implied``: the pod set has no annotation but its ClusterQueue's flavors are all TAS flavors.
        Kueue's ``findTopologyAssignment`` for one pod set without slices or leader.
        """
        required = request is not None and request.required is not None
        unconstrained = implied or (request is not None and request.unconstrained is True)
        key = self.level_key(request, implied)
        if key is None:
            return None, "topology level not specified"
        if key not in self.levels:
            return None, f"no requested topology level: {key}"
        stats = self._fill_counts(requests, selector, assumed or {}, simulate_empty)
        found = self._find_level(self.levels.index(key), count, required, unconstrained, stats)
        if isinstance(found, str):
            return None, found
        level, fit = found
        fit = self._to_minimum(fit, count, unconstrained)
        while fit is not None and level < len(self.levels) - 1:
            fit = self._to_minimum(self._sorted([c for d in fit for c in d.children], unconstrained), count, unconstrained)
            level += 1
        return self._build(fit or []), ""

    def _fill_counts(self, requests: Resources, selector: tuple, assumed: dict, simulate_empty: bool) -> Exclusions:
        stats = Exclusions()
        for per_level in self.tree.per_level:
            for d in per_level.values():
                d.count = 0
        hosts = self.tree.hostname_leaf
        for leaf in self.tree.leaves.values():
            stats.total += 1
            if hosts and selector and not labels_match(leaf.labels, selector):
                stats.node_selector += 1  # a pod's nodeSelector is checked node by node only
                continue
            leaf.count, limiting = count_in(requests, self.room(leaf, simulate_empty, assumed))
            if leaf.count == 0:
                stats.resources[limiting] += 1
        for root in self.tree.roots:
            _sum_counts(root)
        return stats

    def _sorted(self, domains: list[Domain], unconstrained: bool) -> list[Domain]:
        """BestFit: most pods first; LeastFreeCapacity (unconstrained): fewest first; ties by level values."""
        if unconstrained:
            return sorted(domains, key=lambda d: (d.count, d.values))
        return sorted(domains, key=lambda d: (-d.count, d.values))

    def _not_fit(self, fit: int, total: int, stats: Exclusions) -> str:
        """Kueue's ``notFitMessage``."""
        if fit == 0:
            text = f'topology "{self.name}" doesn\'t allow to fit any of {total} pod(s)'
        else:
            text = f'topology "{self.name}" allows to fit only {fit} out of {total} pod(s)'
        if stats.node_selector or stats.resources:
            text += f". Total nodes: {stats.total}; excluded: {stats}"
        return text

    def _find_level(self, level: int, count: int, required: bool, unconstrained: bool,
                    stats: Exclusions) -> tuple[int, list[Domain]] | str:
        domains = list(self.tree.per_level[level].values())
        if not domains:
            return f"no topology domains at level: {self.levels[level]}"
        ordered = self._sorted(domains, unconstrained)
        top = ordered[0]
        if unconstrained:  # LeastFreeCapacity: the fullest domain that still holds every pod
            for d in ordered:
                if d.count >= count:
                    return level, [d]
        elif top.count >= count:
            top = _best_fit(ordered, count)
        if top.count >= count:
            return level, [top]
        if required:
            return self._not_fit(top.count, count, stats)
        if level > 0 and not unconstrained:
            return self._find_level(level - 1, count, required, unconstrained, stats)
        chosen, remaining = [], count
        for i, d in enumerate(ordered):
            if remaining <= 0:
                break
            if not unconstrained and d.count >= remaining:
                d = _best_fit(ordered[i:], remaining)
            chosen.append(d)
            remaining -= d.count
        if remaining > 0:
            return self._not_fit(count - remaining, count, stats)
        return level, chosen

    def _to_minimum(self, domains: list[Domain], count: int, unconstrained: bool) -> list[Domain] | None:
        """Give ``count`` pods to ``domains`` in order, each domain as many as it holds, the last one (BestFit)
        the tightest that suffices; each chosen domain's count becomes the pods it is given."""
        out, remaining = [], count
        for i, d in enumerate(domains):
            if not unconstrained and d.count >= remaining:
                d = _best_fit(domains[i:], remaining)
            out.append(d)
            if d.count >= remaining:
                d.count = remaining
                return out
            remaining -= d.count
        return None  # Kueue logs "unexpected remainingCount": the counts promised more than the children hold

    def _build(self, domains: list[Domain]) -> TopologyAssignment:
        first = len(self.levels) - 1 if self.tree.hostname_leaf else 0
        return TopologyAssignment(self.levels[first:], tuple(
            (d.values[first:], d.count) for d in sorted(domains, key=lambda d: d.values) if d.count > 0))

    # -- checks ------------------------------------------------------------------------------------------------

    def fits(self, leaf_id: str, requests: Resources, count: int, gone: dict[str, Resources] | None = None) -> bool:
        """Do ``count`` pods of ``requests`` still fit in this leaf (Kueue's ``TASFlavorSnapshot.Fits``)? ``gone``:
        usage of workloads being preempted, counted as free."""
        leaf = self.tree.leaves.get(leaf_id)
        if leaf is None:
            return False
        room = self.room(leaf, False, {})
        for name, value in ((gone or {}).get(leaf_id) or {}).items():
            if name in room:
                room[name] += value
        return count_in(requests, room)[0] >= count


def _sum_counts(domain: Domain) -> int:
    if domain.children:
        domain.count = sum(_sum_counts(c) for c in domain.children)
    return domain.count


def _best_fit(domains: list[Domain], needed: int) -> Domain:
    """The first domain with the smallest count that is still >= ``needed`` (Kueue's ``findBestFitDomainBy``);
    the first domain when none is."""
    best, best_count = domains[0], None
    for d in domains:
        if d.count >= needed and (best_count is None or d.count < best_count):
            best, best_count = d, d.count
    return best
