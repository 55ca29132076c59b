"""Timeouts against node provisioning: a wait that gives up before the nodes can be there.

Picture a taxi booked to leave at 9:05 for a guest whose train arrives at
9:20: the taxi leaves empty every time. Several layers give a gang a time
limit, and a gang that needs new nodes cannot be ready before the node
supplier has launched them and they have passed their stages
(:meth:`gangkit.consistency.supply.Supply.provisioning_time`: Karpenter's
batching window, then registered, initialized, image pulled):

- Kueue's ``waitForPodsReady.timeout`` (default 30 minutes with Kueue
  v0.19's v1beta2 Configuration) runs from admission until every pod is
  ready: shorter than the provisioning, the workload is evicted every time
  before its nodes are ready, and requeued with backoff;
- scheduler-plugins Coscheduling's ``scheduleTimeoutSeconds`` (default
  ``permitWaitingTimeSeconds``, 60 s), YuniKorn's
  ``placeholderTimeoutInSeconds`` (default 15 minutes) and the 1.35
  GangScheduling plugin's fixed 5 minutes bound how long pods already on a
  node wait for the rest of their gang: when the existing Nodes hold part
  of the gang and the rest needs new nodes, the part that is placed gives
  up first (Coscheduling holds again at once, YuniKorn ``Soft`` falls back
  to pod-by-pod placement, ``Hard`` fails the application). Coscheduling
  keeps pods waiting only while at most ``podGroupRejectPercentage`` (10 %)
  of ``minMember`` is missing; with more missing its PostFilter rejects the
  group at once, nothing is held, and the timeout does not matter.

"Needs new nodes" is judged in an empty cluster: the existing Nodes cannot
hold the pods that must run together (:func:`gangkit.consistency.demand.demand`).
All four are warnings: nodes launched for one attempt may still be there at
the next; ``--simulate`` shows what the run makes of it.
"""

from __future__ import annotations

from gangkit.consistency.capacity import usable_shapes
from gangkit.consistency.demand import cluster_queue_of, demand
from gangkit.consistency.findings import Finding
from gangkit.consistency.inventory import Inventory, JobEntry, dig, display
from gangkit.consistency.supply import Supply, supply_of
from gangkit.placement.coscheduling import PERMIT_WAITING_TIME, REJECT_PERCENTAGE
from gangkit.placement.kube_gang import SCHEDULING_TIMEOUT
from gangkit.placement.yunikorn import PLACEHOLDER_TIMEOUT

__all__ = ["findings"]


def findings(inv: Inventory) -> list[Finding]:
    supply = supply_of(inv)
    if supply.empty or (inv.karpenter is None and inv.autoscaler is None):
        return []
    out = []
    for e in inv.jobs:
        need = _needs_nodes(inv, supply, e)
        if need is None:
            continue
        seconds, how, placed = need
        out.extend(_kueue(inv, e, seconds, how))
        out.extend(_gang(inv, e, seconds, how, placed))
    return out


def _needs_nodes(inv: Inventory, supply: Supply, e: JobEntry) -> tuple[float, str, int] | None:
    """(shortest provisioning seconds, how they add up, pods of the gang the existing Nodes hold) for a gang
    that needs new nodes; None when the existing Nodes hold it, or no supplier can add what it needs."""
    if e.job is None:
        return None
    pods = demand(e.job)
    if not pods:
        return None
    index = {id(ps): i for i, ps in enumerate(e.job.pod_sets)}
    slowest, placed = None, 0.0
    for ps, n in pods:
        shapes = usable_shapes(inv, supply, e, e.job.pod_sets[index[id(ps)]])
        if not shapes:
            return None
        on_nodes = max(supply.on_nodes(s) for s in shapes)
        placed += min(on_nodes, n)
        if on_nodes >= n:
            continue
        times = [t for t in (supply.provisioning_time(s) for s in shapes) if t is not None]
        if not times:
            return None
        fastest = min(times)
        if slowest is None or fastest[0] > slowest[0]:
            slowest = fastest
    if slowest is None:
        return None
    return slowest[0], slowest[1], int(placed)


def _kueue(inv: Inventory, e: JobEntry, seconds: float, how: str) -> list[Finding]:
    config = inv.kueue.config
    if e.kueue is None or not config.wait_for_pods_ready:
        return []
    if cluster_queue_of(inv, e.kueue.workload.namespace, e.kueue.workload.queue_name) is None:
        return []
    timeout = config.pods_ready_timeout
    if timeout >= seconds:
        return []
    cfg = next(iter(inv.of_role("Configuration")), None)
    objects = (e.name,) + ((display(cfg),) if cfg is not None else ())
    given = dig(cfg.doc, "waitForPodsReady", "timeout") if cfg is not None else None
    source = "waitForPodsReady.timeout" if given is not None else "Kueue's default waitForPodsReady timeout"
    return [Finding(
        "kueue-pods-ready-timeout", objects,
        f"{e.name} needs new nodes, which take at least {seconds:g} s ({how}), but {source} is {timeout:g} s: "
        "Kueue evicts the workload before its pods can be ready, and requeues it with backoff.",
        f"set waitForPodsReady.timeout above {seconds:g} s (with room for the pods to start)",
        ((cfg.label, "waitForPodsReady.timeout"),) if cfg is not None else (),
        {"timeout_s": timeout, "provisioning_s": seconds})]


def _gang(inv: Inventory, e: JobEntry, seconds: float, how: str, placed: int) -> list[Finding]:
    g = e.gang
    j = e.job
    if g is None or g.missing or not 0 < min(placed, j.gang_size) < j.gang_size:
        return []
    if g.layer == "coscheduling":
        missing = (j.gang_size - placed) / j.gang_size
        if missing > REJECT_PERCENTAGE / 100:
            return []  # PostFilter rejects the group at once: nothing waits at Permit for the new nodes
        given = dig(g.target.doc, "spec", "scheduleTimeoutSeconds")
        timeout = float(j.schedule_timeout) if j.schedule_timeout is not None else PERMIT_WAITING_TIME
        code, where = "coscheduling-timeout", (g.target.label, "spec.scheduleTimeoutSeconds")
        words = "scheduleTimeoutSeconds" if given is not None else "the plugin's permitWaitingTimeSeconds default"
        then = "the pods waiting at Permit are rejected, and the gang holds its seats again, until the nodes are ready"
        objects = (e.name, display(g.target))
    elif g.layer == "yunikorn":
        timeout = float(j.placeholder_timeout) if j.placeholder_timeout is not None else PLACEHOLDER_TIMEOUT
        code = "yunikorn-placeholder-timeout"
        where = (e.obj.label, "spec.template.metadata.annotations.yunikorn.apache.org/schedulingPolicyParameters")
        words = "placeholderTimeoutInSeconds" if j.placeholder_timeout is not None else "YuniKorn's default placeholder timeout"
        then = ("the application fails (gangSchedulingStyle Hard)" if j.gang_style == "Hard"
                else "the placeholders are released and the pods are placed one by one (Soft)")
        objects = (e.name,)
    elif g.layer == "kube-gang":
        if inv.settings.kube_gang_release == "1.36":
            return []  # the PodGroup scheduling cycle holds nothing at Permit: there is no timeout
        timeout, code = SCHEDULING_TIMEOUT, "kube-gang-timeout"
        where, words = (g.target.label, "spec.podGroups"), "the GangScheduling plugin's fixed timeout"
        then = "the pods waiting at Permit are rejected and the gang is tried again"
        objects = (e.name, display(g.target))
    else:
        return []
    if timeout >= seconds:
        return []
    return [Finding(
        code, objects,
        f"the existing Nodes hold part of {e.name}'s gang and the rest needs new nodes, which take at least "
        f"{seconds:g} s ({how}); {words} is {timeout:g} s: the part already placed gives up first, so {then}.",
        f"raise the timeout above {seconds:g} s, or keep enough nodes for the whole gang",
        (where,), {"timeout_s": timeout, "provisioning_s": seconds})]
