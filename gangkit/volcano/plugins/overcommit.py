"""Volcano's overcommit plugin: how much room the enqueue action may promise to waiting gangs.

A restaurant that seats parties only when a table is free would leave tables
empty while the next party walks in; it books a little more than the tables
it has free, knowing that some guests leave early. The overcommit plugin
(Volcano ``pkg/scheduler/plugins/overcommit``) lets the enqueue action move a
PodGroup to ``Inqueue`` while ``inqueue + minResources <= total x
overcommit-factor - used`` over the whole cluster (factor 1.2 by default),
where ``inqueue`` is what the Inqueue jobs were promised and not yet given.
So pods are ready the moment capacity frees up, and the promise stays bounded.
"""

from __future__ import annotations

from dataclasses import dataclass

from gangkit.model.resources import ZERO, Resources


@dataclass
class ClusterRoom:
    """The overcommit plugin's view: ``idle = total x factor - used``, and what Inqueue jobs were promised."""

    idle: Resources
    inqueue: Resources = ZERO

    def permits(self, min_req: Resources) -> bool:
        """JobEnqueueableFn: the promises so far plus this minimum fit in the idle room."""
        return (self.inqueue + min_req).fits_in(self.idle)
