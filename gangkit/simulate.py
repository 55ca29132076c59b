"""Run a scenario through a stack: the one call the lessons use.

>>> from gangkit import simulate, scenarios
>>> simulate(scenarios.two_gangs_deadlock(), stack="pod").deadlock
True
"""

from __future__ import annotations

import gc
from contextlib import contextmanager
from functools import partial

from gangkit.engine.lean import lean_run_for
from gangkit.engine.simulation import Simulation
from gangkit.model.scenario import Scenario
from gangkit.results.result import Result, build_result
from gangkit.stacks import Stack, build_stack
from gangkit.workloads import scenarios


def simulate(scenario: Scenario | str, stack: str | Stack | None = None, *, ordering: str | None = None,
             seed: int | None = None, **settings) -> Result:
    """Simulate ``scenario`` (an object or a built-in name) and return its :class:`Result`.

    ``stack``, ``ordering``, ``seed`` and any other :class:`RunSettings`
    field given here override the scenario's own settings. ``stack`` may
    also be a :class:`Stack` of layer objects (to plug in your own layer).
    """
    if isinstance(scenario, str):
        scenario = scenarios.load(scenario, seed=seed)
    custom = stack if isinstance(stack, Stack) else None
    scenario = scenario.with_settings(stack=None if custom else stack, ordering=ordering, seed=seed, **settings)
    scenario.validate()
    layers = custom or build_stack(scenario.settings.stack, scenario.settings, scenario)
    with fewer_collections():
        sim = run_engine(scenario, layers, rebuild=custom is None)
        result = build_result(sim)
    if custom is None:  # a stack built by name can be built again: the run can be replayed
        result.replay = partial(replay, result.scenario)
    return result


def run_engine(scenario: Scenario, layers: Stack, rebuild: bool) -> Simulation:
    """Run the scenario through the engine that fits it, and return that engine with its run done.

    1. A lean engine (:mod:`gangkit.engine.lean`, :func:`~gangkit.engine.lean.lean_run_for`), when the settings
       allow it (``engine="auto"`` and the fast path ``lean_engine``), the layers were built by name
       (``rebuild``: they can be built afresh) and the scenario is one it runs by the same rules.
    2. Else, or when the lean run ends in a state only the general engine keeps (its
       ``needs_general_engine``), the general engine (:class:`~gangkit.engine.simulation.Simulation`),
       with fresh layers after a lean run.
    """
    s = scenario.settings
    if rebuild and s.engine == "auto" and s.fast_paths.lean_engine:
        lean_run = lean_run_for(scenario, layers)
        if lean_run is not None:
            lean_run.run()
            if not lean_run.needs_general_engine:
                return lean_run
            layers = build_stack(s.stack, s, scenario)  # fresh layers
    sim = Simulation(scenario, layers)
    sim.run()
    return sim


def replay(scenario: Scenario, until: float) -> Simulation:
    """The live state of ``scenario``'s run after the events of instant ``until``, through the general engine,
    recording everything (what :meth:`gangkit.results.result.Result.diagnose` asks the layers about)."""
    scenario = scenario.with_settings(record="full")
    sim = Simulation(scenario, build_stack(scenario.settings.stack, scenario.settings, scenario))
    sim.run(until=float(until))
    return sim


#: the cyclic garbage collector's thresholds during a run (Python's defaults are 700, 10, 10)
RUN_GC_THRESHOLDS = (50_000, 20, 100)


@contextmanager
def fewer_collections():
    """Run with the cyclic garbage collector's passes spaced further apart; restore its thresholds after.

    Why: a run allocates and frees small objects (events, job and pod
    states) at a high rate, and Python starts a collection every 700 net
    allocations; the fuller passes walk every live object, the scenario's
    jobs included, so their cost grows with the scenario's size. With the
    default thresholds they took about a fifth of a 100k-job ``mixed`` run
    (benchmark case b). Objects are still freed as soon as nothing refers to
    them; only reference cycles wait a little longer. A collector switched
    off (threshold 0) stays off.
    """
    old = gc.get_threshold()
    if old[0]:
        gc.set_threshold(*(max(a, b) for a, b in zip(old, RUN_GC_THRESHOLDS)))
    try:
        yield
    finally:
        gc.set_threshold(*old)
