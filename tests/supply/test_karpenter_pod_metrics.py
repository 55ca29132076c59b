"""Karpenter's pod metrics: bound and startup durations from creation, and from Karpenter's first decision.

Each case is a small scenario whose expected durations follow from its own
settings: the batch window (``IDLE``: Karpenter's 1 s ``batchIdleDuration``)
and fixed node stages (``REGISTERED``, ``INITIALIZED``, ``PULL``). A pod
first seen unschedulable at ``t`` is simulated at ``t + IDLE``, its node is
ready ``REGISTERED + INITIALIZED (+ PULL)`` later, and it binds then.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

import gangkit as gk
from gangkit import Node, Stack, job
from gangkit.kueue.layer import KueueLayer
from gangkit.kueue.objects import ClusterQueue, FlavorQuotas, LocalQueue, Quota, ResourceFlavor, ResourceGroup
from gangkit.kueue.scheduler import Kueue
from gangkit.model.snapshot import JobSnapshot
from gangkit.placement.kube_gang import KubeGang
from gangkit.placement.kube_scheduler import KubeScheduler
from gangkit.supply.cloud import InstanceType, Stages
from gangkit.supply.karpenter import Karpenter, NodePool
from gangkit.supply.karpenter_pod_metrics import COLUMNS, NAMES, SchedulableTimes
from gangkit.volcano.scheduler import VolcanoGang

GPU = "nvidia.com/gpu"
# Karpenter v1.14.1's names (pkg/controllers/metrics/pod/controller.go)
BOUND, STARTUP = "karpenter_pods_bound_duration_seconds", "karpenter_pods_startup_duration_seconds"
PROVISIONING_BOUND = "karpenter_pods_provisioning_bound_duration_seconds"
PROVISIONING_STARTUP = "karpenter_pods_provisioning_startup_duration_seconds"
UNBOUND, UNSTARTED = "karpenter_pods_unbound_time_seconds", "karpenter_pods_unstarted_time_seconds"
IDLE, REGISTERED, INITIALIZED, PULL = 1.0, 60.0, 90.0, 45.0
BOOT = REGISTERED + INITIALIZED  # launch -> ready of a new node without image pull
RUN = 100.0
HORIZON = 1000.0
CPU_ONLY = [Node("system-0", 0)]  # a scenario needs a node; Karpenter brings the GPU nodes


def karpenter(pull: float = 0.0, limit: int | None = None) -> Karpenter:
    pool = NodePool("gpu", ["g8"], limits={} if limit is None else {GPU: limit}, consolidate_after=None)
    return Karpenter([pool], [InstanceType("g8", 8, 8.0)], batch_idle=IDLE,
                     stages=Stages(registered=REGISTERED, initialized=INITIALIZED, image_pull=pull))


def stack(kind: str, k: Karpenter) -> Stack:
    if kind == "pod":
        return Stack(KubeScheduler(), suppliers=[k], name="pod+karpenter")
    if kind == "gang":
        return Stack(VolcanoGang(period=1.0), suppliers=[k], name="gang+karpenter")
    if kind == "kube-gang":
        return Stack(KubeGang(), suppliers=[k], name="kube-gang+karpenter")
    cq = ClusterQueue("cq", [ResourceGroup((GPU,), (FlavorQuotas("default-flavor", {GPU: Quota(8)}),))])
    kueue = Kueue([ResourceFlavor("default-flavor")], [cq], [LocalQueue("default", "default", "cq")])
    return Stack(VolcanoGang(period=1.0), admission=[KueueLayer(kueue)], suppliers=[k], name="kueue+gang+karpenter")


# name: (stack, nodes, jobs, karpenter options,
#        {pod: (bound at, created at, simulated at or None)} for every pod observed,
#        {pod: created at} for every pod still pending at the end)
CASES = {
    "a pod that fits a node is bound at once; Karpenter never simulated it": (
        "pod", [Node("n0", 8)], [job("a", gpus=1, run_time=RUN)], {},
        {"a-0": (0.0, 0.0, None)}, {}),
    "a pod that waits for a new NodeClaim: bound when the node is ready": (
        "pod", CPU_ONLY, [job("b", gpus=8, run_time=RUN, submit_time=5.0)], {},
        {"b-0": (5.0 + IDLE + BOOT, 5.0, 5.0 + IDLE)}, {}),
    "an image pull is a node stage: the pod binds after it": (
        "pod", CPU_ONLY, [job("b", gpus=8, run_time=RUN)], {"pull": PULL},
        {"b-0": (IDLE + BOOT + PULL, 0.0, IDLE)}, {}),
    "a Volcano gang waits for two NodeClaims of one batch": (
        "gang", CPU_ONLY, [job("g", pods=2, gpus=8, run_time=RUN)], {},
        {"g-0": (IDLE + BOOT, 0.0, IDLE), "g-1": (IDLE + BOOT, 0.0, IDLE)}, {}),
    "behind Kueue a pod is created at admission: b, admitted when a ends, binds on a's node at once": (
        "kueue", CPU_ONLY, [job("a", gpus=8, run_time=RUN), job("b", gpus=8, run_time=RUN)], {},
        {"a-0": (IDLE + BOOT, 0.0, IDLE), "b-0": (IDLE + BOOT + RUN, IDLE + BOOT + RUN, None)}, {}),
    "a pod held at Permit is bound when its group is: with its sibling on the new node": (
        "kube-gang", [Node("n0", 8)], [job("g", pods=2, gpus=8, run_time=RUN)], {},
        {"g-0": (IDLE + BOOT, 0.0, None), "g-1": (IDLE + BOOT, 0.0, IDLE)}, {}),
    "a pod the NodePool limit leaves out never binds: no observation, pending at the end": (
        "pod", CPU_ONLY, [job("a", gpus=8, run_time=10 * HORIZON), job("b", gpus=8, run_time=10 * HORIZON)],
        {"limit": 8},
        {"a-0": (IDLE + BOOT, 0.0, IDLE)}, {"b-0": 0.0}),
    "a pod a snapshot shows bound was never seen pending: only the new pod is observed": (
        "pod", [Node("n0", 8)], [job("s", gpus=8, run_time=10 * RUN, snapshot=JobSnapshot(nodes=("n0",), elapsed=(10.0,))),
                                 job("t", gpus=8, run_time=RUN, submit_time=2.0)], {},
        {"t-0": (2.0 + IDLE + BOOT, 2.0, 2.0 + IDLE)}, {}),
}


def rows(frame) -> dict:
    return {pod: (t, v) for t, pod, v in zip(frame.time_s, frame.pod, frame.value)}


@pytest.mark.parametrize("case", CASES)
def test_pod_metrics(case):
    kind, nodes, jobs, options, observed, pending = CASES[case]
    result = gk.simulate(gk.Scenario(list(nodes), jobs), stack=stack(kind, karpenter(**options)), horizon=HORIZON)
    m = result.metrics
    for name in NAMES:
        assert list(m[name].columns) == COLUMNS, name
    from_creation = {pod: (bound, bound - created) for pod, (bound, created, _) in observed.items()}
    from_decision = {pod: (bound, bound - at) for pod, (bound, _, at) in observed.items() if at is not None}
    assert rows(m[BOUND]) == from_creation
    assert rows(m[STARTUP]) == from_creation  # gangkit: a pod is ready when it is bound
    assert rows(m[PROVISIONING_BOUND]) == from_decision
    assert rows(m[PROVISIONING_STARTUP]) == from_decision
    still = {pod: (HORIZON, HORIZON - created) for pod, created in pending.items()}
    assert rows(m[UNBOUND]) == still
    assert rows(m[UNSTARTED]) == still


def test_other_recording_levels_keep_no_pod_metrics():
    result = gk.simulate(gk.Scenario(list(CPU_ONLY), [job("b", gpus=8, run_time=RUN)]),
                         stack=stack("pod", karpenter()), horizon=HORIZON, record="jobs")
    assert all(result.metrics[name].empty for name in NAMES)


def a_pod() -> SimpleNamespace:
    """A stand-in for the engine's pod: what SchedulableTimes reads."""
    return SimpleNamespace(job=SimpleNamespace(name="j"), name="j-0", created=0.0, node=None)


# name: (steps, expected schedulable time of the pod's last incarnation); a step is
# ("placed" | "failed" | "bound" | "created", time): a simulation that found the pod a place or none,
# a bind, a re-creation
MARKS = {
    "the first success counts, later ones do not move it": ([("placed", 1.0), ("placed", 5.0)], 1.0),
    "a failure forgets it; the next success sets it again": ([("placed", 1.0), ("failed", 3.0), ("placed", 7.0)], 7.0),
    "never placed: no time": ([("failed", 1.0)], None),
    "a bound pod is not marked": ([("bound", 0.0), ("placed", 2.0)], None),
    "a pod made again starts afresh": ([("placed", 1.0), ("created", 4.0), ("placed", 6.0)], 6.0),
    "a pod made again and not simulated has no time": ([("placed", 1.0), ("created", 4.0)], None),
}


@pytest.mark.parametrize("case", MARKS)
def test_schedulable_times(case):
    steps, expected = MARKS[case]
    times, pod = SchedulableTimes(), a_pod()
    for kind, t in steps:
        if kind == "placed":
            times.mark(t, [pod], [])
        elif kind == "failed":
            times.mark(t, [], [pod])
        elif kind == "bound":
            pod.node = "n0"
        else:
            pod.created = t
    assert times.of(pod, pod.created) == expected
