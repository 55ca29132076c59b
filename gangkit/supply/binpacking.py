"""cluster-autoscaler's scheduling simulation: first-fit packing of pending pods onto nodes and templates.

Before it scales up, cluster-autoscaler asks "where would these pods go?":
it drops the pods that fit on existing or already requested nodes
(filter-out-schedulable) and packs the rest, first fit, onto empty
*templates* of each node group (its binpacking estimator,
``cluster-autoscaler/estimator/binpacking_estimator.go``). Scale-down asks
the same question the other way round: would a node's pods fit elsewhere?
A :class:`Slot` is the free room of one node or template; :func:`place`
is the first-fit pass shared by both questions.
"""

from __future__ import annotations

from dataclasses import dataclass

from gangkit.model.resources import Room, labels_match
from gangkit.supply.apart import OnePerNode


@dataclass(eq=False)
class Slot(Room):
    """Free room on one node, or on an empty template of a node group, in CA's scheduling simulation."""

    name: str = ""
    labels: dict | tuple = ()

    def holds(self, req: tuple) -> bool:
        gpus, cpu, memory, selector = req
        return self.fits(gpus, cpu, memory) and labels_match(self.labels, selector)

    def take_request(self, req: tuple) -> None:
        self.take(req[0], req[1] or 0.0, req[2] or 0)


def pod_request(p) -> tuple:
    """A pending pod as the simulation sees it: ``(gpus, cpu, memory, node selector)``."""
    ps = p.pod_set
    return (ps.gpus, ps.cpu or 0.0, ps.memory or 0, ps.node_selector)


def place(rooms: dict, reqs: list, groups: list | None = None, held: dict | None = None) -> tuple[list, dict]:
    """First fit in the given order; returns the requests left over and request index -> node name.

    ``groups``: each request's one-per-node group (:func:`gangkit.supply.apart.group_of`, None without
    the rule) and ``held``: node name -> the pods bound there; a request of a group skips a node that
    holds, or was given here, a pod of it."""
    left, where = [], {}
    apart = OnePerNode()
    for i, req in enumerate(reqs):
        g = groups[i] if groups else None
        for r in rooms.values():
            if r.holds(req) and (g is None or apart.allows(r.name, g, (held or {}).get(r.name, ()))):
                r.take_request(req)
                apart.give_group(r.name, g)
                where[i] = r.name
                break
        else:
            left.append(i)
    return left, where
