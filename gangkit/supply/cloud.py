"""What a cloud offers a node supplier: machine types, and how long a new machine takes to become usable.

An :class:`InstanceType` is a kind of machine (GPUs, cores, memory, price per
hour). A machine that a supplier orders passes through *stages* before its
GPUs can be used (:class:`Stages`): launched (the cloud accepted the
request), registered (the instance booted and its kubelet joined the
cluster), initialized (the GPU driver and device plugin advertise
``nvidia.com/gpu``), and optionally image pulled. Each stage takes fixed
seconds or a draw from the run's seeded random generator (:func:`uniform`,
:func:`lognormal`). Karpenter (:mod:`gangkit.supply.karpenter`) and
cluster-autoscaler (:mod:`gangkit.supply.autoscaler`) use the same ones.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Union

from gangkit.model.resources import Room

GPU = "nvidia.com/gpu"
TYPE_LABEL = "node.kubernetes.io/instance-type"

Duration = Union[float, Callable]


def uniform(low: float, high: float) -> Callable:
    """A stage duration drawn uniformly from [low, high] with the run's random generator."""
    return lambda rng: rng.uniform(low, high)


def lognormal(median: float, sigma: float) -> Callable:
    """A stage duration drawn from a log-normal with this median (seconds) and shape ``sigma``."""
    return lambda rng: rng.lognormvariate(math.log(median), sigma)


@dataclass(frozen=True)
class Stages:
    """How long a new node takes in each stage (seconds, or a function of ``sim.rng``).

    Defaults are assumptions, not measurements (see the reference page):
    ``registered`` 60 s after launch (instance boot, kubelet registers),
    ``initialized`` 90 s after that (GPU driver and device plugin ready),
    ``image_pull`` 0 s (set it to model pulling a large image before pods
    can run; counted as a node stage, ``image_pulled``).
    """

    registered: Duration = 60.0
    initialized: Duration = 90.0
    image_pull: Duration = 0.0

    def draw(self, rng, now: float) -> dict[str, float]:
        def d(x):
            v = x(rng) if callable(x) else float(x)
            return max(0.0, float(v))

        t1 = now + d(self.registered)
        t2 = t1 + d(self.initialized)
        out = {"launched": now, "registered": t1, "initialized": t2}
        pull = d(self.image_pull)
        if pull > 0:
            out["image_pulled"] = t2 + pull
        return out


@dataclass(frozen=True)
class InstanceType:
    """A machine type a cloud offers: GPUs, optional CPU cores and memory bytes, price per hour."""

    name: str
    gpus: int
    price_per_hour: float
    cpu: float | None = None
    memory: int | None = None

    def holds(self, gpus: int, cpu: float, memory: int) -> bool:
        """Could an empty machine of this type hold such a pod?"""
        return Room(self.gpus, self.cpu, self.memory).fits(gpus, cpu, memory)
