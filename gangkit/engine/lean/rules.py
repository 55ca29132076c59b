"""What the lean engines ask of a placement layer: a small protocol of their own, not a socket.

A lean engine applies a placement layer's rule itself, on a plain event
heap, so it must know the rule. It asks the layer, through the two questions
below; a layer that does not answer them (every layer but Volcano's gang
layer, :class:`gangkit.volcano.scheduler.VolcanoGang`) never goes through a
lean engine. These are no part of :class:`gangkit.engine.sockets.PlacementLayer`:
a layer of one's own needs neither.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from gangkit.model.scenario import Scenario


class LeanRules(Protocol):
    """The questions a placement layer answers to let a run through a lean engine."""

    def places_in_arrival_order(self, scenario: "Scenario") -> bool:
        """True when, for this scenario (every job one pod of one shape), each cycle of this layer binds the
        waiting jobs in the order they arrived while a node has room for the next one, and does nothing else
        (the rule of :mod:`gangkit.engine.lean.one_size`). False is always correct."""
        ...

    def one_pod_order(self, scenario: "Scenario") -> str | None:
        """For a run whose jobs are all one pod asking for GPUs alone, of any sizes: how each cycle of this layer
        visits the waiting jobs, if it does nothing else, as one of :data:`gangkit.engine.lean.sizes.ORDERS`
        (``skip``, ``strict``, ``largest-first``), binding each on the node
        :meth:`~gangkit.engine.capacity.FreeCapacity.choose` picks. None is always correct."""
        ...


def asks(layer: object, question: str, scenario: "Scenario"):
    """The layer's answer to one of :class:`LeanRules`' questions, or None when it does not answer them."""
    answer = getattr(layer, question, None)
    return None if answer is None else answer(scenario)
