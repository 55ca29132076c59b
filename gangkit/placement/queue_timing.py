"""kube-scheduler's queue timing: per-pod backoff, the 5-minute flush, and the shape a pending pod waits in.

Pure functions of a pod's queue record (its timestamp and its count of unschedulable attempts), after
Kubernetes 1.35 ``pkg/scheduler/backend/queue/`` (``scheduling_queue.go``, ``backoff_queue.go``): both the
per-pod queue of :mod:`gangkit.placement.kube_scheduler` and the grouped queue of
:mod:`gangkit.placement.kube_queue` read them, so the two agree by construction. The proof that the flush
may be applied lazily is in :mod:`gangkit.placement.kube_scheduler`'s docstring.
"""

from __future__ import annotations

import math

from gangkit.engine.state import PodState

#: kube-scheduler's defaults (KubeSchedulerConfiguration v1 and ``scheduling_queue.go``, 1.35), in seconds.
POD_INITIAL_BACKOFF = 1.0  # podInitialBackoffSeconds
POD_MAX_BACKOFF = 10.0  # podMaxBackoffSeconds
MAX_IN_UNSCHEDULABLE = 300.0  # DefaultPodMaxInUnschedulablePodsDuration
FLUSH_PERIOD = 30.0  # flushUnschedulablePodsLeftover runs every 30 s
#: A pod flushed at a tick is flushed again at the first tick more than 300 s later.
FLUSH_AGAIN = FLUSH_PERIOD * (math.floor(MAX_IN_UNSCHEDULABLE / FLUSH_PERIOD) + 1)


def backoff_seconds(count: int) -> float:
    """A pod's backoff after ``count`` unschedulable attempts: 0, then 1 s doubled per attempt, at most 10 s."""
    if count <= 0:
        return 0.0
    if count > 64:  # long past the cap (and 2.0 ** count would overflow)
        return POD_MAX_BACKOFF
    return min(POD_INITIAL_BACKOFF * 2.0 ** (count - 1), POD_MAX_BACKOFF)


def backoff_end(ts: float, count: int) -> float:
    """When the backoff ends: timestamp plus backoff, truncated to the whole second (the ordering window)."""
    return float(math.floor(ts + backoff_seconds(count)))


def backing_off(ts: float, count: int, now: float) -> bool:
    """``isPodBackingoff``: the backoff end is not before the current whole second (never for a pod not yet tried)."""
    return count > 0 and backoff_end(ts, count) >= math.floor(now)


def first_flush(ts: float) -> float:
    """The first 30-s tick strictly more than 300 s after ``ts``."""
    return FLUSH_PERIOD * (math.floor((ts + MAX_IN_UNSCHEDULABLE) / FLUSH_PERIOD) + 1)


def flushed(ts: float, count: int, now: float) -> tuple[float, int]:
    """Timestamp and count at ``now`` of a pod left unschedulable at ``ts`` after ``count`` attempts, every
    flush since having retried it and failed (see the module's proof)."""
    t1 = first_flush(ts)
    if now < t1:
        return ts, count
    n = 1 + math.floor((now - t1) / FLUSH_AGAIN)
    return t1 + FLUSH_AGAIN * (n - 1), count + n


def flushed_before(ts: float, count: int, limit: float) -> tuple[float, int]:
    """As :func:`flushed`, counting only the flush ticks strictly before ``limit``."""
    t1 = first_flush(ts)
    if limit <= t1:
        return ts, count
    n = 1 + math.floor((limit - t1) / FLUSH_AGAIN)
    if t1 + FLUSH_AGAIN * (n - 1) >= limit:
        n -= 1
    return (t1 + FLUSH_AGAIN * (n - 1), count + n) if n > 0 else (ts, count)


def queue_key(p: PodState) -> tuple:
    """The heap a pending pod waits in: its request shape, and for a one-per-node pod also its job and pod set."""
    if p.pod_set.one_per_node:
        return p.request + (("one-per-node", p.job.index, p.pod_set.name),)
    return p.request
