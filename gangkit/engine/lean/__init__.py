"""The lean engines: the general engine's rules for the plainest one-pod gang runs, on a plain event heap.

Two engines, one per kind of run, both subclasses of the general engine's
:class:`~gangkit.engine.simulation.Simulation` that keep its books and hand
it back the state at the end:

- :mod:`gangkit.engine.lean.one_size`: every job one pod of one size, where
  free GPUs anywhere mean room for the next pod (benchmark case a, the
  queueing-theory checks);
- :mod:`gangkit.engine.lean.sizes`: one-pod jobs of several sizes, with the
  nodes' free room kept as the general engine keeps it (lesson 04's mix).

What they ask of the placement layer is :mod:`gangkit.engine.lean.rules`
(Volcano's gang layer answers). They are one of the run's fast paths
(:attr:`gangkit.model.fast_paths.FastPaths.lean_engine`); :func:`lean_run_for`
says which, if either, runs a scenario, and :func:`gangkit.simulate.run_engine`
asks it first.
"""

from __future__ import annotations

from gangkit.engine.lean import sizes
from gangkit.engine.lean.one_size import OnePodGangRun, applies
from gangkit.engine.lean.rules import LeanRules
from gangkit.engine.lean.sizes import OnePodShapesRun

__all__ = ["LeanRules", "OnePodGangRun", "OnePodShapesRun", "applies", "lean_run_for", "sizes"]


def lean_run_for(scenario, stack) -> OnePodGangRun | None:
    """The lean engine for this run, made and not yet run, or None when the run is the general engine's."""
    if applies(scenario, stack):
        return OnePodGangRun(scenario, stack)  # the same rules, without the general machinery
    if sizes.applies(scenario, stack):
        return OnePodShapesRun(scenario, stack)  # the same, for one-pod jobs of several sizes
    return None
