"""Flavor assignment: which flavor of each resource a workload would take, and at what cost.

For each pod set, and for each resource group the pod set asks for, Kueue
scans the group's flavors *in list order* and rates each one:

- ``Fit``: the request fits in what the ClusterQueue can take now (its
  *borrowing level* says whether it borrows, and from how high in the tree);
- ``Preempt``: it would fit if some admitted workloads were preempted
  (``Reclaim`` when all of them sit in other ClusterQueues);
- ``NoFit``: it cannot fit, or it is more than the queue could ever have.

``flavorFungibility`` says when to stop: by default a flavor that fits stops
the scan even if it must borrow (``whenCanBorrow: MayStopSearch``), while a
flavor that needs preemption is remembered and the next ones are tried
(``whenCanPreempt: TryNextFlavor``); in the end the best flavor seen wins.
All resources of one group come from the same flavor. Rules after Kueue's
``pkg/scheduler/flavorassigner``.

With Topology-Aware Scheduling (``tas``, a :class:`~gangkit.kueue.tas.cache.TopologyCache`)
a flavor must also suit the pod set's topology ask (Kueue's
``checkPodSetAndFlavorMatchForTAS``), checked before its node labels.

Simplification: each scan starts at the first flavor; Kueue resumes after
the last flavor it tried when a workload was skipped in a busy cycle.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gangkit.kueue.objects import ClusterQueue, FlavorResource, PodSetSpec, ResourceFlavor, Workload
from gangkit.kueue.quota import QuotaNode
from gangkit.model.quantity import format_memory

NOFIT, NO_CANDIDATES, PREEMPT, RECLAIM, FIT = range(5)
MODE_NAMES = {NOFIT: "NoFit", NO_CANDIDATES: "Preempt", PREEMPT: "Preempt", RECLAIM: "Preempt", FIT: "Fit"}


@dataclass(frozen=True)
class Mode:
    """How a flavor would serve a request: the preemption mode and the borrowing level."""

    mode: int
    borrow: int = 0


def _mode(mode: int, borrow: int = 0) -> Mode:
    """The shared :class:`Mode` of these values (modes are immutable; assignment asks for a few per workload)."""
    m = _MODES.get((mode, borrow))
    if m is None:
        m = _MODES[(mode, borrow)] = Mode(mode, borrow)
    return m


_MODES: dict[tuple[int, int], Mode] = {}
_FIT, _NOFIT = _mode(FIT), _mode(NOFIT)  # the two asked for most


def is_preferred(a: Mode, b: Mode, preference: str | None) -> bool:
    """Is ``a`` better than ``b``?"""
    if a.mode == NOFIT:
        return False
    if b.mode == NOFIT:
        return True
    if (a.mode == NO_CANDIDATES) != (b.mode == NO_CANDIDATES):
        return b.mode == NO_CANDIDATES
    if preference == "PreemptionOverBorrowing":
        if a.borrow != b.borrow:
            return a.borrow < b.borrow
        return a.mode > b.mode
    if a.mode != b.mode:
        return a.mode > b.mode
    return a.borrow < b.borrow


@dataclass
class PodSetAssignment:
    name: str
    count: int
    flavors: dict[str, str] = field(default_factory=dict)  # resource -> flavor
    modes: dict[str, Mode] = field(default_factory=dict)
    requests: dict[str, int] = field(default_factory=dict)  # totals for the pod set
    reasons: list[str] = field(default_factory=list)
    causes: list[str] = field(default_factory=list)  # per reason: QuotaTooSmall, QuotaExhausted or ""
    error: str = ""  # a TAS request that cannot be built (Kueue's psError): the pod set cannot be admitted
    topology: object = None  # its TopologyAssignment (gangkit.kueue.objects), when TAS placed it
    tas_flavor: str | None = None


@dataclass
class Assignment:
    """The result of flavor assignment for a whole workload."""

    podsets: list[PodSetAssignment]
    usage: dict[FlavorResource, int]
    borrowing: int
    mode: int  # NOFIT, PREEMPT or FIT: the worst over all pod sets and resources
    tas_usage: list = field(default_factory=list)  # (flavor, leaf domain, per-pod requests, pods) of its topology assignments

    @property
    def message(self) -> str:
        error = next((ps for ps in self.podsets if ps.error), None)
        if error is not None:
            return f"failed to assign flavors to pod set {error.name}: {error.error}"
        ps = self._failing()
        return f"couldn't assign flavors to pod set {ps.name}: " + "; ".join(ps.reasons) if ps else ""

    @property
    def cause(self) -> str:
        """Why the message's pod set did not fit, as a code: ``QuotaTooSmall`` when no flavor could ever hold it
        (every reason is a request above the maximum capacity, or a resource the ClusterQueue has no quota
        for), ``QuotaExhausted`` when some flavor lacks unused quota now, else ``""``."""
        ps = self._failing()
        if ps is None or not ps.causes:
            return ""
        if "QuotaExhausted" in ps.causes:
            return "QuotaExhausted"
        return "QuotaTooSmall" if all(c == "QuotaTooSmall" for c in ps.causes) else ""

    def _failing(self) -> PodSetAssignment | None:
        for ps in self.podsets:
            if ps.reasons and (not ps.flavors or self.mode != FIT):
                return ps
        return None

    def frs_needing_preemption(self) -> set[FlavorResource]:
        return {(ps.flavors[r], r) for ps in self.podsets for r, m in ps.modes.items() if m.mode in (NO_CANDIDATES, PREEMPT, RECLAIM)}


def amount(res: str, v: int) -> str:
    """An amount as Kueue's messages print it (a Kubernetes quantity): cores from millicores (``2``, ``500m``),
    bytes in the largest binary unit that divides them (``64Gi``), counts as they are."""
    if res == "cpu":
        return str(v // 1000) if v % 1000 == 0 else f"{v}m"
    if res == "memory":
        return format_memory(v)
    return str(v)


def unused_quota_reason(flavor: str, res: str, val: int, avail: int) -> str:
    """Kueue's reason when a request is within the quota but not within what is unused now, in Kueue's words
    (v0.19 ``pkg/scheduler/flavorassigner/flavorassigner.go`` ``fitsResourceQuota``: the amount still missing)."""
    return f"insufficient unused quota for {res} in flavor {flavor}, {amount(res, val - max(0, avail))} more needed"


def max_capacity_reason(flavor: str, res: str, assumed: int, request: int, cap: int) -> str:
    """Kueue's reason when a request is beyond what the ClusterQueue can ever have (its quota and what it may
    borrow), in Kueue's words (v0.19 ``fitsResourceQuota``): the earlier pod sets' requests, this one's, the most."""
    return (f"insufficient quota for {res} in flavor {flavor}, previously considered podsets requests "
            f"({amount(res, assumed)}) + current podset request ({amount(res, request)}) > maximum capacity "
            f"({amount(res, cap)})")


def flavor_matches(flavor: ResourceFlavor | None, ps: PodSetSpec) -> bool:
    """A pod's nodeSelector, restricted to the keys the flavor's nodeLabels mention, must match them."""
    if flavor is None:
        return False
    if not ps.node_selector:  # nothing to compare
        return True
    labels = dict(flavor.node_labels)
    return all(labels[k] == v for k, v in ps.node_selector if k in labels)


def pod_set_requests(ps: PodSetSpec, count: int, counts_pods: bool) -> dict[str, int]:
    """The pod set's total requests; ``counts_pods``: the ClusterQueue has quota for ``pods``."""
    req = {r: v * count for r, v in ps.requests.items() if v}
    if counts_pods:
        req["pods"] = count
    return req


class FlavorAssigner:
    """Assign flavors for one workload in one ClusterQueue, against the current quota tree."""

    def __init__(self, cq: ClusterQueue, node: QuotaNode, flavors: dict[str, ResourceFlavor], oracle, fair_sharing: bool = False,
                 cq_nodes: dict[str, QuotaNode] | None = None, tas=None):
        self.cq, self.node, self.flavors, self.oracle = cq, node, flavors, oracle
        self.tas = tas  # the TopologyCache when a flavor of the setup has a topology
        self.cq_nodes = cq_nodes or {cq.name: node}
        p = cq.preemption
        self.can_preempt_while_borrowing = p.borrow_within_cohort != "Never" or (fair_sharing and p.reclaim_within_cohort != "Never")
        # the ClusterQueue is fixed for the run: its resource groups are looked up once
        self._group = {r: rg for rg in reversed(cq.resource_groups) for r in rg.covered}  # the first group wins
        self._counts_pods = "pods" in self._group
        # the quota checks of one assignment, when the scheduler asks to see them (the fast path fast_reject, gangkit.kueue.shortcuts): per
        # resource of a ClusterQueue without cohort, (flavor-resource, value, potential available, fits), and
        # the reasons that quote what is available now, by id: (flavor, resource, fr, value, potential available)
        self.trace: list | None = None
        self.trace_quotes: dict[int, tuple] = {}

    def assign(self, wl: Workload, counts: dict[str, int] | None = None) -> Assignment:
        usage: dict[FlavorResource, int] = {}
        out: list[PodSetAssignment] = []
        worst = _FIT
        borrowing = 0
        for ps in wl.pod_sets:
            count = counts[ps.name] if counts else ps.count
            psa = PodSetAssignment(ps.name, count, requests=pod_set_requests(ps, count, self._counts_pods))
            out.append(psa)
            for res in sorted(psa.requests):
                if res in psa.flavors:
                    continue
                rg = self._group.get(res)
                if rg is None:
                    psa.reasons.append(f"resource {res} unavailable in ClusterQueue")
                    psa.causes.append("QuotaTooSmall")
                    return Assignment(out, usage, borrowing, NOFIT)
                chosen, mode, reasons, causes = self._find_flavor(wl, rg, ps, psa.requests, usage)
                if chosen is None:
                    psa.reasons.extend(reasons)
                    psa.causes.extend(causes)
                    return Assignment(out, usage, borrowing, NOFIT)
                for r in rg.covered:
                    if r in psa.requests:
                        psa.flavors[r] = chosen
                        psa.modes[r] = mode
                        fr = (chosen, r)
                        usage[fr] = usage.get(fr, 0) + psa.requests[r]
                if mode.mode != FIT:
                    psa.reasons.extend(reasons)
                    psa.causes.extend(causes)
                if worst.mode > mode.mode:
                    worst = _mode(mode.mode, worst.borrow)
                if mode.borrow > borrowing:
                    borrowing = mode.borrow
        rep = FIT if worst.mode == FIT else (NOFIT if worst.mode == NOFIT else PREEMPT)
        return Assignment(out, usage, borrowing, rep)

    def _find_flavor(self, wl, rg, ps, requests, usage):
        ff = self.cq.flavor_fungibility
        best, best_mode = None, _NOFIT
        reasons: list[str] = []
        causes: list[str] = []
        node = self.node
        # a root (a ClusterQueue without cohort) fits a request within its own free quota with
        # no borrowing and nothing to note (QuotaNode.fit_figures' root figures); checked here,
        # the usual case of a replay needs no call per resource and head
        root_usage = node.usage if node.parent is None else None
        trace = self.trace if root_usage is not None else None
        for fq in rg.flavors:
            f = fq.flavor
            if self.tas is not None:
                why = self.tas.flavor_mismatch(self.cq.name, ps, f, rg.covered)
                if why:
                    reasons.append(why)
                    causes.append("")
                    continue
            if not flavor_matches(self.flavors.get(f), ps):
                reasons.append(f"flavor {f} doesn't match node affinity")
                causes.append("")
                continue
            mode = _FIT
            for r in rg.covered:
                if r not in requests:
                    continue
                fr = (f, r)
                val = usage.get(fr, 0) + requests[r]
                if root_usage is not None:
                    cap = node.subtree.get(fr, 0)
                    if val <= cap and val <= cap - root_usage[fr]:
                        if trace is not None:
                            trace.append((fr, val, cap, True))
                        continue  # Fit without borrowing: the mode stays as it is
                m, why, cause = self._fits_resource_quota(wl, fr, val, requests[r])
                if trace is not None:
                    trace.append((fr, val, cap, False))
                    if why and val <= cap:  # "... {more} more needed": replayed with the usage of the moment
                        self.trace_quotes[id(why)] = (f, r, fr, val, cap)
                if why:
                    reasons.append(why)
                    causes.append(cause)
                if m is not mode and is_preferred(mode, m, ff.preference):  # a mode is never preferred to itself
                    mode = m
                if mode.mode == NOFIT:
                    break
            if mode.mode == NOFIT:
                continue
            if mode is _FIT or not self._try_next(mode):  # a fit without borrowing always stops the scan
                return f, mode, reasons, causes
            if is_preferred(mode, best_mode, ff.preference):
                best, best_mode = f, mode
        return best, best_mode, reasons, causes

    def _try_next(self, mode: Mode) -> bool:
        ff = self.cq.flavor_fungibility
        if mode.mode in (NOFIT, NO_CANDIDATES):
            return True
        if mode.mode in (PREEMPT, RECLAIM) and ff.when_can_preempt == "TryNextFlavor":
            return True
        return mode.borrow > 0 and ff.when_can_borrow == "TryNextFlavor"

    def _borrow_after(self, targets, fr: FlavorResource, val: int) -> int:
        """The borrowing level once the victims are gone (Kueue's ``borrowAfterPreemptions``)."""
        tree_nodes = []
        for t in targets:
            adm = t.workload.admission
            cq_node = self.cq_nodes[adm.cluster_queue]
            for f, v in adm.usage.items():
                cq_node.remove_usage(f, v)
            tree_nodes.append((cq_node, adm.usage))
        try:
            return self.node.borrowing_level(fr, val)[0]
        finally:
            for cq_node, usage in tree_nodes:
                for f, v in usage.items():
                    cq_node.add_usage(f, v)

    def _fits_resource_quota(self, wl: Workload, fr: FlavorResource, val: int, request: int) -> tuple[Mode, str, str]:
        """The mode for ``val`` of ``fr`` (``request`` of it this pod set's), why it is not a plain fit, and that
        reason's cause code."""
        node = self.node
        cap, borrow, may_reclaim, avail = node.fit_figures(fr, val)
        if val > cap:
            flavor, res = fr
            return _NOFIT, max_capacity_reason(flavor, res, val - request, request, cap), "QuotaTooSmall"
        if val <= avail:
            return _mode(FIT, borrow) if borrow else _FIT, "", ""
        flavor, res = fr
        why = unused_quota_reason(flavor, res, val, avail)
        if node.nominal(fr) >= val or may_reclaim or self.can_preempt_while_borrowing:
            targets = self.oracle(wl, {fr: val}, {fr})
            if not targets:
                return _mode(NO_CANDIDATES, borrow), why, "QuotaExhausted"
            after = self._borrow_after(targets, fr, val)
            if all(t.workload.cluster_queue != self.cq.name for t in targets):
                return _mode(RECLAIM, after), why, "QuotaExhausted"
            return _mode(PREEMPT, after), why, "QuotaExhausted"
        return _mode(NOFIT, borrow), why, "QuotaExhausted"
