"""Volcano's drf plugin, as a job order: the job holding the smallest part of the cluster goes first.

Dominant Resource Fairness looks at each job's *dominant share*: of every
resource the cluster has, the fraction the job's pods hold, and the largest
of those fractions. A job holding 2 of 16 GPUs and 8 of 256 cores has a
dominant share of 2/16 = 0.125. Among jobs that priority and gang rank
equal, the smaller share goes first, so a job that already runs many pods
lets the others have a turn.

What the plugin does (Volcano v1.15.1 ``pkg/scheduler/plugins/drf/drf.go``):

- ``OnSessionOpen``: the cluster's total is the session's ``TotalResource``,
  the allocatable of every ready node (``framework/session.go``, the
  snapshot keeps ready nodes only); each job's ``allocated`` is the sum of
  the requests of its pods in an allocated status (``Allocated``,
  ``Binding``, ``Bound``, ``Running``: ``api.AllocatedStatus``; not
  ``Succeeded``); its share is ``calculateShare``: the largest
  ``allocated / total`` over the resources the total has
  (``Resource.ResourceNames``: CPU, memory and each scalar resource such as
  ``nvidia.com/gpu`` present in the cluster);
- ``jobOrderFn``: the lower share first; equal shares (compared exactly)
  leave the order to the next plugin, and after the last tier to creation
  time, then UID (``Session.JobOrderFn``);
- ``AllocateFunc`` / ``DeallocateFunc``: each pod the session allocates
  (or gives back) adds (or subtracts) its request and the share is
  computed again, so a job's share grows with each pod allocate gives it.

Volcano's default configuration lists drf in its second tier, after
priority and gang in the first (``pkg/scheduler/util.go``
``DefaultSchedulerConf``, and the Helm chart's
``installer/helm/chart/volcano/config/volcano-scheduler.conf``), with the
job order enabled (a plugin's ``enableJobOrder`` defaults to true). So the
job order is: priority, then jobs not yet ready (gang), then the lower drf
share, then creation. gangkit always runs it so (a configuration without
drf is not modelled).

Not modelled: the plugin's hierarchical mode (``enableHierarchy``, which
the proportion plugin excludes), its namespace order, and its preemption
and reclaim votes (``PreemptableFn``, ``ReclaimableFn``).
"""

from __future__ import annotations

from gangkit.model.resources import Resources


def dominant_share(allocated: Resources, total: Resources) -> float:
    """``calculateShare``: the largest ``allocated / total`` over the resources the cluster has (0 with none).

    A resource the nodes do not model is infinite in ``total`` (:func:`gangkit.volcano.session.cluster_resources`):
    its fraction is 0, as the share of a resource nobody is short of.

    >>> dominant_share(Resources(2, 8, 0), Resources(16, 256, 2**40))
    0.125
    >>> dominant_share(Resources(1, 0, 0), Resources(0, 0, 0))
    0.0
    """
    share = 0.0
    for held, whole in ((allocated.gpus, total.gpus), (allocated.cpu, total.cpu), (allocated.memory, total.memory)):
        if whole > 0:  # ResourceNames lists only what the cluster has
            s = held / whole
            if s > share:
                share = s
    return share
