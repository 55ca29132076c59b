"""Builders for what the tests make over and over: nodes, jobs, Kueue queues, scenarios, stacks, one run.

Each builder fills every field a case does not care about with a plain
default and takes the ones it does care about as keywords, so that a row of
a case table names only what makes it that case. Kueue's tests do the same
for their API objects (``pkg/util/testing``: ``MakeWorkload("a", "ns").Queue("q").Obj()``);
here plain functions with keyword arguments play the wrappers' part::

    from builders import gang, gpu_nodes, simulate_on

    result = simulate_on(gpu_nodes(2, gpus=8), [gang("A", pods=2, gpus=8, run_time=100)], stack="pod")

They build on the library's own shorthands (:func:`gangkit.nodes`,
:func:`gangkit.job`) and add only what tests need beyond them: a pod set
with CPU, memory or anti-affinity in one call, the GPU-less node a
node-supplier scenario starts from, the one-queue Kueue setup, a scenario
whose objects and run settings are given in one list of keywords. A test
whose setup is special keeps a helper of its own, built on these where it
can (its docstring says what it adds).
"""

from __future__ import annotations

import dataclasses

from gangkit import Job, Node, PodSet, Result, Scenario, Stack, nodes, simulate
from gangkit.kueue.objects import (
    GPU,
    ClusterQueue,
    FlavorQuotas,
    KueueSetup,
    LocalQueue,
    Quota,
    ResourceFlavor,
    ResourceGroup,
)

#: One gibibyte in bytes: ``memory=16 * GIB`` reads as the manifests' ``16Gi``.
GIB = 2**30

__all__ = ["CPU_ONLY", "GIB", "GPU", "gang", "gpu_nodes", "holder", "one_cluster_queue", "placement_layer", "scenario",
           "simulate_on", "supplied", "system_node"]


# -- nodes -------------------------------------------------------------------------------------------------------
def gpu_nodes(count: int, gpus: int = 8, *, prefix: str = "node", **fields) -> list[Node]:
    """``count`` identical nodes of ``gpus`` GPUs, named ``node-0``, ``node-1``, ... (:func:`gangkit.nodes`).

    ``fields`` go to every :class:`~gangkit.Node`: ``cpu=8.0`` (cores),
    ``memory=64 * GIB`` (bytes), ``labels={"zone": "a"}``, ``pool="gpu"``.
    Two groups of nodes are two calls added together, with different prefixes.
    """
    return nodes(count, gpus=gpus, prefix=prefix, **fields)


def system_node(name: str = "system-0", **fields) -> Node:
    """A node with no GPU: the one a scenario of node suppliers starts with.

    :meth:`Scenario.validate` asks for at least one node; Karpenter or the
    cluster-autoscaler then brings the GPU nodes. ``fields`` as for
    :func:`gpu_nodes` (``cpu=8.0`` when the case counts cores).
    """
    return Node(name, 0, **fields)


#: The node list of a scenario whose GPU nodes all come from a node supplier: one :func:`system_node`.
#: Shared by the tests that use it: pass it (a scenario copies it), never append to it.
CPU_ONLY: list[Node] = [system_node()]


# -- jobs --------------------------------------------------------------------------------------------------------
def gang(name: str = "g", pods: int = 1, gpus: int = 1, *, run_time: float = 600.0, submit: float = 0.0,
         pod_set: str = "workers", cpu: float = 0.0, memory: int = 0, min_count: int | None = None,
         one_per_node: bool = False, node_selector=(), **fields) -> Job:
    """A job of ``pods`` identical pods of ``gpus`` GPUs each, in one pod set: the shape nearly every case uses.

    Under a gang stack all its pods start together (a sync job's gang is
    all its pods unless ``min_member=`` says fewer); under ``pod`` they are
    placed one by one. The pod set's own fields are keywords here:
    ``cpu`` (cores) and ``memory`` (bytes) per pod, ``min_count`` (Kueue's
    partial admission), ``one_per_node`` (required pod anti-affinity on the
    hostname), ``node_selector``; ``pod_set`` names it (``workers``, as
    :func:`gangkit.job` names it). ``submit`` is the submit time in seconds
    (``submit_time=``, the Job's own name for it, works too);
    any other :class:`~gangkit.Job` field goes through ``fields``
    (``priority=1``, ``queue="team-a"``, ``min_member=2``,
    ``progress="independent"``, ``volcano_queue="b"``, ...).

    >>> gang("A", pods=2, gpus=8, run_time=100, submit=5).gpus
    16
    """
    submit = fields.pop("submit_time", submit)  # the Job's own name for it, as gangkit.job takes it
    ps = PodSet(pod_set, pods, gpus, cpu=cpu, memory=memory, node_selector=node_selector, min_count=min_count,
                one_per_node=one_per_node)
    return Job(name, [ps], run_time=run_time, submit_time=submit, **fields)


def holder(gpus: int, *, run_time: float = 1000.0, name: str = "Z", pods: int = 1, **fields) -> Job:
    """A job submitted first that holds ``gpus`` GPUs (per pod) for ``run_time`` seconds, so that the case's jobs wait.

    The usual opening of a waiting case: ``[holder(8), gang("A", gpus=8, submit=1)]``
    on one 8-GPU node makes A wait until 1000 s. ``fields`` as for :func:`gang`.
    """
    return gang(name, pods, gpus, run_time=run_time, **fields)


# -- Kueue ------------------------------------------------------------------------------------------------------
def one_cluster_queue(gpus: int, *, flavor: str = "f", cluster_queue: str = "cq", local_queue: str = "default",
                      namespace: str = "default", **fields) -> KueueSetup:
    """Kueue objects for the simplest quota: one ResourceFlavor, one ClusterQueue of ``gpus`` GPUs, one LocalQueue.

    Jobs reach the ClusterQueue through the LocalQueue ``local_queue`` in
    ``namespace`` (a :class:`~gangkit.Job`'s ``queue`` and ``namespace``
    default to ``default``, so a plain job lands there). ``fields`` go to
    the :class:`~gangkit.kueue.ClusterQueue` (``cohort=``, ``preemption=``,
    ``queueing_strategy=``). For a quota of all the cluster's GPUs and one
    LocalQueue per job queue, the library's
    :func:`gangkit.kueue.layer.default_objects` does it from the scenario.
    """
    cq = ClusterQueue(cluster_queue, [ResourceGroup((GPU,), (FlavorQuotas(flavor, {GPU: Quota(gpus)}),))], **fields)
    return KueueSetup([ResourceFlavor(flavor)], [cq], [LocalQueue(local_queue, namespace, cluster_queue)])


# -- scenarios, stacks and runs ---------------------------------------------------------------------------------------
_SCENARIO_FIELDS = {f.name for f in dataclasses.fields(Scenario)} - {"nodes", "jobs", "settings"}


def scenario(node_list, jobs, **fields) -> Scenario:
    """A :class:`~gangkit.Scenario` of these nodes and jobs, its objects and run settings in one list of keywords.

    Keywords that name a field of the scenario (``kueue=``, ``volcano=``,
    ``karpenter=``, ``autoscaler=``, ``name=``, ...) set that field; the
    others are run settings (``stack=``, ``horizon=``, ``ordering=``,
    ``record=``, ...; ``None`` leaves the default). The node and job lists
    are copied, so a shared list such as :data:`CPU_ONLY` stays as it was.
    """
    objects = {k: v for k, v in fields.items() if k in _SCENARIO_FIELDS}
    settings = {k: v for k, v in fields.items() if k not in _SCENARIO_FIELDS}
    return Scenario(list(node_list), list(jobs), **objects).with_settings(**settings)


def simulate_on(node_list, jobs, stack: str | Stack = "gang", horizon: float | None = None, **fields) -> Result:
    """Simulate ``jobs`` on ``node_list`` under ``stack`` (a name, or a :class:`~gangkit.Stack` of layer objects).

    The one-line run most cases need: ``horizon`` cuts it (``None``: the
    scenario's default of 30 days); ``fields`` are scenario objects and run
    settings, as :func:`scenario` sorts them.
    """
    return simulate(scenario(node_list, jobs, **fields), stack=stack, horizon=horizon)


def placement_layer(kind: str):
    """A fresh placement layer for ``kind``: ``"gang"`` is Volcano's in 1 s sessions, ``"pod"`` kube-scheduler's.

    The two placements the node-supplier cases run under; build one per run
    (layers keep run state).
    """
    from gangkit.placement.kube_scheduler import KubeScheduler
    from gangkit.volcano.scheduler import VolcanoGang

    if kind == "gang":
        return VolcanoGang(period=1.0)
    if kind == "pod":
        return KubeScheduler()
    raise ValueError(f"placement_layer: kind: expected 'gang' or 'pod', got {kind!r}")


def supplied(placement, *suppliers, name: str = "custom") -> Stack:
    """A :class:`~gangkit.Stack` of one placement layer and these node suppliers (no admission layer).

    ``placement`` is a layer, or ``"gang"``/``"pod"`` for a fresh
    :func:`placement_layer`. Keep a supplier in a variable to read its state
    after the run.
    """
    if isinstance(placement, str):
        placement = placement_layer(placement)
    return Stack(placement, suppliers=list(suppliers), name=name)
