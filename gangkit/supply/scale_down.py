"""cluster-autoscaler's scale-down: which nodes are unneeded, and which of them it removes in a scan.

cluster-autoscaler 1.35 (``core/scaledown``): in a scan without scale-up, and not within
``--scale-down-delay-after-add`` of one, a node of a group above its minimum size is *unneeded*
when its GPU utilization (its bound pods, and the pending pods CA's simulation puts there) is below
the threshold and its pods fit on the other ready nodes; once unneeded for
``--scale-down-unneeded-time`` it may go. The budgets (``core/scaledown/budgets``): empty nodes
first, up to ``--max-scale-down-parallelism``; then nodes to drain, up to
``--max-drain-parallelism`` and what the first budget left. The full list of rules and
simplifications is :mod:`gangkit.supply.autoscaler`'s.

:class:`ScaleDown` is a part of :class:`~gangkit.supply.autoscaler.ClusterAutoscaler`, kept here so
that each module holds one concept.
"""

from __future__ import annotations

from gangkit.model.precision import TOLERANCE
from gangkit.model.reasons import Reason
from gangkit.supply.binpacking import Slot, place, pod_request
from gangkit.supply.node_groups import Launched

__all__ = ["ScaleDown"]


class ScaleDown:
    """Scale-down of unneeded nodes (a mix-in of :class:`~gangkit.supply.autoscaler.ClusterAutoscaler`)."""

    def _scale_down(self, sim, now: float) -> bool:
        """Mark unneeded nodes and remove those due, within the budgets; True when the budgets left some due
        node for the next scan."""
        cap = sim.capacity
        cooldown = now < self._last_scale_up + self.scale_down_delay_after_add - TOLERANCE
        # where CA's simulation puts the pending pods (they count towards utilization)
        rooms = self._room(sim, include_upcoming=True)
        _, where = place(rooms, [pod_request(p) for p in self._regular_pending()])
        expected: dict[str, int] = {}
        pend = self._regular_pending()
        for i, name in where.items():
            expected[name] = expected.get(name, 0) + pend[i].pod_set.gpus
        booked = {name for pr in self._requests if self._booked(pr, now) for name in pr.nodes}
        sizes = {g.name: self.group_size(g.name) for g in self.node_groups}
        removable_empty, removable_busy = [], []
        for n in sorted(self._nodes.values(), key=lambda n: n.name):
            st = cap.by_name.get(n.name)
            if not n.ready or st is None or n.name in booked:
                n.unneeded_since = None
                continue
            used = (st.node.gpus - st.free_gpus) + expected.get(n.name, 0)
            util = used / st.node.gpus if st.node.gpus else 0.0
            if util >= self.utilization_threshold or not self._movable(sim, st):
                n.unneeded_since = None
                continue
            if n.unneeded_since is None:
                n.unneeded_since = now
            if (not cooldown and now >= n.unneeded_since + self.scale_down_unneeded_time - TOLERANCE
                    and sizes[n.group.name] > n.group.min_size):
                (removable_busy if st.pods else removable_empty).append(n)
        if now == self._last_removal:  # another scan at this instant already removed nodes
            return False
        # CA's scale-down budget (core/scaledown/budgets): empty nodes first, up to max-scale-down-parallelism;
        # then nodes to drain, up to max-drain-parallelism and what is left of the first budget. gangkit removes
        # a node at once, so no deletion is ever in progress at a scan.
        removed = 0
        cropped = False
        for n in removable_empty:
            if sizes[n.group.name] <= n.group.min_size:
                continue
            if removed >= self.max_scale_down_parallelism:
                cropped = self.max_scale_down_parallelism > 0  # a budget of 0 never removes: no scan for it
                break
            self._remove(sim, n, now, "empty")
            sizes[n.group.name] -= 1
            removed += 1
        drain = min(self.max_drain_parallelism, self.max_scale_down_parallelism - removed)
        moved: list = []  # the pods of nodes drained in this scan, placed before the next node's
        for n in removable_busy:
            if drain <= 0:
                cropped = cropped or min(self.max_drain_parallelism, self.max_scale_down_parallelism) > 0
                break
            st = cap.by_name[n.name]
            if sizes[n.group.name] > n.group.min_size and self._movable(sim, st, moved):
                moved.extend(st.pods)
                self._remove(sim, n, now, "underutilized")
                sizes[n.group.name] -= 1
                drain -= 1
        return cropped

    @staticmethod
    def _movable(sim, st, moved: tuple | list = ()) -> bool:
        """Do the pods bound to ``st`` fit on the other ready nodes, after ``moved`` (pods of nodes drained
        earlier in the same scan) have been placed there?"""
        if not st.pods:
            return True
        rooms = {o.node.name: Slot(o.free_gpus, o.free_cpu, o.free_memory, o.node.name, o.node.labels)
                 for o in sim.capacity.nodes if o is not st and o.ready and sim.capacity.by_name.get(o.node.name) is o}
        order = lambda p: (-p.pod_set.gpus, p.job.index, p.index)
        if moved:
            left, _ = place(rooms, [pod_request(p) for p in sorted(moved, key=order)])
            if left:
                return False
        left, _ = place(rooms, [pod_request(p) for p in sorted(st.pods, key=order)])
        return not left

    def _remove(self, sim, n: Launched, now: float, reason: str) -> None:
        st = sim.capacity.by_name[n.name]
        why = Reason("autoscaler", "ScaleDown", f"node {n.name} removed by scale-down: unneeded for "
                     f"{self.scale_down_unneeded_time:g} s and its pods fit elsewhere", {"node": n.name})
        for p in sorted(st.pods, key=lambda p: (p.job.index, p.index)):
            if p.node is st:
                sim.evict_pod(p, why)
        sim.remove_node(n.name, supplier=self.name)
        del self._nodes[n.name]
        self._last_removal = now
        self._scale_downs.append((now, n.group.name, n.name, reason))
