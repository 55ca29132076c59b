"""The engine's timed events: a call at a later instant, with SimPy's priorities for the order within an instant.

SimPy runs the events of one instant by priority, then in the order they
were scheduled. The engine's own events are :class:`Call` instances; the
priorities below put a scheduling cycle after the other events of its
instant, and some timers after the cycle.
"""

from __future__ import annotations

from typing import Callable

import simpy
from simpy.events import NORMAL, Event

LATE = NORMAL + 1  # runs after every ordinary event of the same instant
AFTER_CYCLES = LATE + 1  # runs after the scheduling cycle of the same instant
URGENT = 0  # SimPy's priority of a process's first step (simpy.events.URGENT)


def _call_now(ev: "Call") -> None:
    ev.fn(ev.env.now)


def _call_with(ev: "Call") -> None:
    ev.fn(*ev.args)


# the events' callback lists: one shared tuple each (SimPy only iterates over an event's callbacks)
_NOW, _WITH = (_call_now,), (_call_with,)


class Call(Event):
    """An event that calls ``fn(now)`` after ``delay`` (SimPy's Timeout, with a priority); with ``args``,
    ``fn(*args)`` instead.

    Why no closure: a run makes one of these per finish, cycle and timer, so the
    function and its arguments are kept on the event and one module-level callback calls them.
    """

    __slots__ = ("fn", "args")

    def __init__(self, env: simpy.Environment, delay: float, fn: Callable, priority: int = NORMAL, args: tuple = ()):
        self.env = env  # Event.__init__ inlined
        self.fn = fn
        if args:
            self.args = args
            self.callbacks = _WITH
        else:
            self.callbacks = _NOW
        self._ok = True
        self._value = None
        env.schedule(self, priority, delay)
