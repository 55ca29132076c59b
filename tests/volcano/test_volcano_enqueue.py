"""Volcano's enqueue action on its Pending lines: which PodGroups go Inqueue in one session.

The line keeps an entry per PodGroup that went Pending; an entry goes stale when its job leaves the layer (or goes
Pending again) before a session reads it. Only current entries may go Inqueue, with or without ``minResources``
(with none in the lines the action takes its short path, :func:`gangkit.volcano.actions.enqueue.execute`).
"""

from __future__ import annotations

import dataclasses

import pytest

from gangkit import Scenario, job, nodes
from gangkit.engine.simulation import Simulation
from gangkit.engine.state import JobState
from gangkit.model.resources import Resources
from gangkit.stacks import build_stack
from gangkit.volcano.actions import enqueue
from gangkit.volcano.cache import INQUEUE, PENDING
from gangkit.volcano.session import open_session


def pending_session(min_gpus: float | None, leaves: str):
    """Three one-pod jobs reach Volcano's layer at t=0; then job j1 leaves (``forget``) or is made Pending twice
    (``requeue``, two entries for one PodGroup); then one session's enqueue runs at t=1."""
    specs = [job(f"j{k}", pods=1, gpus=2, run_time=100.0) for k in range(3)]
    if min_gpus is not None:
        specs = [dataclasses.replace(s, min_resources=Resources(min_gpus, 0.0, 0)) for s in specs]
    sc = Scenario(nodes(2, gpus=8), specs)
    sim = Simulation(sc, build_stack("gang", sc.settings, sc))
    states = [JobState(spec, k, remaining=100.0) for k, spec in enumerate(specs)]
    sim._resuming = False
    sim._to_placement(states, 0.0)
    layer = sim.stack.placement
    if leaves == "forget":
        layer.forget(states[1])
    else:
        layer.requeue(states[1], 0.5)
    ssn = open_session(sim, 1.0, layer.cache, layer.setup, layer.queues, layer.ordering, layer.proportional)
    enqueue.execute(ssn, layer.period)
    return layer.cache, states


@pytest.mark.parametrize(("min_gpus", "leaves", "phases"), [
    (None, "forget", [INQUEUE, None, INQUEUE]),  # the short path: no PodGroup has minResources
    (None, "requeue", [INQUEUE, INQUEUE, INQUEUE]),  # two entries of j1: it goes Inqueue once
    (2.0, "forget", [INQUEUE, None, INQUEUE]),  # the full action: each minimum is checked
    (2.0, "requeue", [INQUEUE, INQUEUE, INQUEUE]),
])
def test_only_current_entries_go_inqueue(min_gpus, leaves, phases):
    cache, states = pending_session(min_gpus, leaves)
    assert [cache.phase.get(js.index) for js in states] == phases
    in_lines = [e[3].index for per_shape in cache.shapes.values() for h in per_shape.values() for e in h]
    assert sorted(in_lines) == [js.index for js, p in zip(states, phases) if p == INQUEUE]
    assert not any(cache.pending.values()) and PENDING not in cache.phase.values()
