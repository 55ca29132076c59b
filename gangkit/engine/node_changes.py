"""Nodes that join and leave during a run: what a node supplier asks of the engine.

A supplier (Karpenter, cluster-autoscaler) launches a node that passes through its stages
(launched, registered, initialized...) before its GPUs can be used: until the last stage they count
as *not ready* in the GPU accounting. It removes a node it no longer needs (scale-down,
consolidation) or gives up (cluster-autoscaler deletes a machine that never registered): its GPUs
leave the capacity, and a node removed before it was ready reaches no later stage.

:class:`NodeChanges` is a part of :class:`gangkit.engine.simulation.Simulation`, kept here so that
the engine's main module stays about jobs and cycles.
"""

from __future__ import annotations

from gangkit.engine.events import Call
from gangkit.engine.state import NodeState
from gangkit.model.errors import ScenarioError
from gangkit.model.nodes import Node

__all__ = ["NodeChanges"]


class NodeChanges:
    """Launching and removing nodes (a mix-in of :class:`~gangkit.engine.simulation.Simulation`)."""

    def launch_node(self, node: Node, stages: dict[str, float], supplier: str = "") -> NodeState:
        """Add a node now; it becomes usable at the last of its ``stages`` (absolute times).

        ``stages`` maps stage names (``launched``, ``registered``,
        ``initialized``, ...) to the simulated time each is reached; the
        node's GPUs count as not-ready until the last one. A node removed
        before then (:meth:`remove_node`: cluster-autoscaler gives up a node
        not ready within ``max-node-provision-time``) reaches no later stage.
        """
        now = self.env.now
        if node.name in self.capacity.by_name:
            raise ScenarioError(f"Node {node.name}: metadata.name: a node with this name exists already")
        self.books.advance(now)
        st = self.capacity.add(node, ready=False)
        self.books.capacity_gpus += node.gpus
        self.books.not_ready_gpus += node.gpus
        ordered = sorted(stages.items(), key=lambda kv: kv[1])
        self.node_stages[node.name] = dict(ordered)
        if "launched" not in self.node_stages[node.name]:
            self.record_event("node_launched", None, node=node.name, layer=supplier)
        for stage, t in ordered:
            if t < now:
                raise ValueError(f"Node {node.name}: stage {stage} at {t} is before now ({now})")
        ready_at = ordered[-1][1] if ordered else now

        def here() -> bool:  # a node removed before it became ready (given up by its supplier) never will
            return self.capacity.by_name.get(node.name) is st

        for stage, when in ordered[:-1]:
            Call(self.env, when - now, lambda t, stage=stage: here() and self.record_event(
                f"node_{stage}", None, node=node.name, layer=supplier))

        def ready(t: float) -> None:
            if not here():
                return
            self.books.advance(t)
            self.books.not_ready_gpus -= node.gpus
            self.capacity.set_ready(st)
            if ordered:
                self.record_event(f"node_{ordered[-1][0]}", None, node=node.name, layer=supplier)
            self.record_event("node_ready", None, node=node.name, layer=supplier)
            self.books.snapshot(t)
            self.request_cycle()

        Call(self.env, ready_at - now, ready)
        self.books.snapshot(now)
        return st

    def remove_node(self, name: str, supplier: str = "") -> None:
        """Remove an empty node (scale-down, consolidation, a node given up before it registered).

        A node removed before it was ready reaches no later stage: its stages
        end now (the one it was in ends at the removal), so a job that counted
        on it waits in the placement layer from now on.
        """
        st = self.capacity.by_name[name]
        if st.pods:
            raise RuntimeError(f"node {name} still holds pods")
        now = self.env.now
        self.books.advance(now)
        if not st.ready:
            self.books.not_ready_gpus -= st.node.gpus
            stages = self.node_stages.get(name)
            if stages:
                reached = {stage: t for stage, t in stages.items() if t <= now}
                cut = next((stage for stage, t in stages.items() if t > now), None)
                if cut is not None:
                    reached[cut] = now
                self.node_stages[name] = reached
        self.capacity.set_gone(st)
        self.books.capacity_gpus -= st.node.gpus
        del self.capacity.by_name[name]
        self.removed_at[st.index] = now
        self.record_event("node_removed", None, node=name, layer=supplier)
        self.books.snapshot(now)
