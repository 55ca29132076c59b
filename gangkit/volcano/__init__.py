"""Volcano's scheduler, laid out like its own ``pkg/scheduler``: the session, its actions, its plugins.

The ``gang`` placement layer (:class:`VolcanoGang`) and the objects a scenario
configures it with (:class:`VolcanoSetup`, :class:`Queue`, :class:`SlaPlugin`).
"""

from gangkit.volcano.api import Queue, VolcanoSetup
from gangkit.volcano.plugins.sla import SlaPlugin
from gangkit.volcano.scheduler import VolcanoGang

__all__ = ["Queue", "SlaPlugin", "VolcanoGang", "VolcanoSetup"]
