"""Quiescence: the moment after which nothing in a run can change any more.

The engine jumps from event to event; when no future event is scheduled (no arrival, no finish,
no timer, no node on its way), no placement can ever change again. If jobs still hold GPUs without
progress then, the run is deadlocked (the verdict: :mod:`gangkit.results.deadlock`).
"""

from __future__ import annotations

import math

import simpy

__all__ = ["nothing_can_change"]


def nothing_can_change(env: simpy.Environment) -> bool:
    """Quiescence: no future event is scheduled, so no placement can ever change again."""
    return env.peek() == math.inf
