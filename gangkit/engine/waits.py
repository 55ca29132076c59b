"""Wait buckets: every second a job waits is charged to exactly one layer, from that layer's timestamps.

Picture a parcel's tracking page: "at the depot", "customs check", "out
for delivery, waiting for the van". A job's wait (submission to first
start) is cut the same way, into buckets that add up exactly to the total:

- one bucket per admission layer, named after the layer (``quota`` for
  Kueue's queue and quota layer, ``admission_check`` for an admission check
  such as ProvisioningRequest): from entering that layer to being admitted
  by it (its ``admitted`` event);
- ``placement``: the job's pods exist but cannot all be placed on the nodes
  there are, and *no node is coming for it* (this includes a provisioner's
  batching window, before any NodeClaim is launched, and the wait for the
  next scheduling session once a node is ready);
- node buckets: the job waits for nodes a supplier launched for it. The
  bucket names the stage the node has not reached yet (the stage awaited):

  ==========================  ==========================================
  bucket                      from ... to
  ==========================  ==========================================
  ``node_launch``             counted on, until the instance is launched
  ``node_registration``       launched, until the kubelet registers
  ``node_initialization``     registered, until initialized (GPU device
                              plugin advertises ``nvidia.com/gpu``)
  ``image_pull``              initialized, until the image is pulled
  ==========================  ==========================================

  (a stage with another name ``s`` gives a bucket ``node_s``).

**When does a job wait for nodes?** When a node supplier has *nominated*
one of the job's unplaced pods to a node still in flight: Karpenter's
scheduling simulation assigns each pending pod to a NodeClaim (a new one,
or room on one already launching) and remembers it until the node is ready
(Karpenter ``pkg/controllers/provisioning``: pods are nominated to
NodeClaims). A supplier tells the engine through an optional method
``awaited_nodes()`` returning ``(pod, node name)`` pairs; the engine notes,
per job, the first instant each node was counted on (an event
``nominated`` at the ``full`` level). A supplier without that method
leaves all of its jobs' time in ``placement``.

**Which node, when several are awaited?** A gang starts only when its
*last* node is ready, so at each instant the job is charged to the stage of
the awaited, not-yet-ready node with the latest ready time (the critical
path). Once that node is ready and the job still does not run, the time
goes back to ``placement`` (or to the next awaited node).

**Who writes the buckets.** Only this module: the engine closes a job's
stretch when the job leaves a layer (:func:`close_wait`), and a layer that
sends a job back from where it waits (an admission layer evicting a job that
waits in a later admission layer, an admission check that failed) first
asks the engine, through ``Cluster.charge_wait``, to count the stretch up to
now (:func:`charge_wait`). Layers never write ``JobState.waits`` themselves.

Waits stop at the first start (a restart after an eviction does not add
wait). A job that never starts is counted to the end of the run (flagged
``censored``) in the bucket it was in. Nothing is left over: the
``unattributed`` column of ``Result.jobs`` is the total wait minus the sum
of the buckets, and stays 0.
"""

from __future__ import annotations

import heapq
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from gangkit.engine.state import JobState

#: Bucket of the interval that ends when a node reaches this stage.
STAGE_BUCKETS = {
    "launched": "node_launch",
    "registered": "node_registration",
    "initialized": "node_initialization",
    "image_pulled": "image_pull",
}
#: The node buckets every stack with a node supplier reports, in order.
NODE_BUCKETS = tuple(STAGE_BUCKETS.values())


def stage_bucket(stage: str) -> str:
    """The wait bucket for the time spent before a node reaches ``stage``."""
    return STAGE_BUCKETS.get(stage, f"node_{stage}")


def awaited_at(t: float, awaited: dict, node_stages: dict) -> tuple[str, str] | None:
    """The node a waiting job is charged to at time ``t`` and its bucket, or None.

    ``awaited`` maps node names to the time the job started counting on them;
    ``node_stages`` maps node names to ``{stage: time}`` in time order.
    """
    best = None
    for node, since in awaited.items():
        stages = node_stages.get(node)
        if not stages or since > t:
            continue
        ready = max(stages.values())
        if t >= ready:
            continue
        key = (ready, node)
        if best is None or key > best[0]:
            best = (key, node, stages)
    if best is None:
        return None
    _, node, stages = best
    stage = next(s for s, when in stages.items() if when > t)
    return node, stage_bucket(stage)


def split_placement(enter: float, leave: float, awaited: dict, node_stages: dict) -> dict[str, float]:
    """Cut the stretch ``[enter, leave)`` a job spent in the placement layer into buckets.

    The cut points are the instants the job started counting on a node and
    the stage times of those nodes; between two cut points the bucket is
    constant (the rule of :func:`awaited_at`). The pieces add up to
    ``leave - enter``. A sweep over the cut points with a heap of the nodes
    counted on (latest ready first) costs O(k log k) for k nodes, so a job
    that outlives many launches stays cheap.
    """
    out: dict[str, float] = {}
    if leave <= enter:
        return out
    if not awaited:  # counted on no node (no supplier, or none yet): one stretch in the placement bucket
        return {"placement": leave - enter}
    rank = {node: i for i, node in enumerate(sorted(awaited))}  # ties on ready time: the larger name wins
    starts = []  # (since, node) in time order
    cuts = {enter, leave}
    for node, since in awaited.items():
        stages = node_stages.get(node)
        if not stages:
            continue
        starts.append((since, node))
        cuts.add(since)
        cuts.update(stages.values())
    starts.sort()
    points = sorted(c for c in cuts if enter <= c <= leave)
    heap: list = []
    i = 0
    for a, b in zip(points, points[1:]):
        while i < len(starts) and starts[i][0] <= a:
            node = starts[i][1]
            heapq.heappush(heap, (-max(node_stages[node].values()), -rank[node], node))
            i += 1
        while heap and -heap[0][0] <= a:  # ready by now: no longer awaited
            heapq.heappop(heap)
        if heap:
            stages = node_stages[heap[0][2]]
            bucket = stage_bucket(next(st for st, when in stages.items() if when > a))
        else:
            bucket = "placement"
        out[bucket] = out.get(bucket, 0.0) + (b - a)
    return out


def wait_split(js: "JobState", now: float, node_stages: dict) -> dict[str, float]:
    """The buckets of the stretch since ``js`` entered its current layer, up to ``now``."""
    if js.layer == "placement":
        return split_placement(js.layer_enter, now, js.awaited, node_stages)
    return {js.layer: now - js.layer_enter} if js.layer else {}


def close_wait(js: "JobState", now: float, node_stages: dict) -> None:
    """The job leaves its layer now: add that stretch to its wait buckets (and forget the nodes it counted on)."""
    waits = js.waits
    for bucket, seconds in wait_split(js, now, node_stages).items():
        waits[bucket] = waits.get(bucket, 0.0) + seconds
    if js.awaited:
        js.awaited = {}


def charge_wait(js: "JobState", now: float, node_stages: dict) -> None:
    """Count the stretch ``js`` has waited in its current layer up to ``now``; its next stretch there starts now.

    For a layer about to send a job back from where it waits (the engine's
    eviction then moves it, and closes only a placement stretch itself).
    Nothing for a job that has started (waits end at the first start) or is
    in no layer.
    """
    if js.started_at is None and js.layer:
        close_wait(js, now, node_stages)
        js.layer_enter = now
