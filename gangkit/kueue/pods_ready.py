"""waitForPodsReady: Kueue's own guard against partially started gangs.

Quota reserved is not pods running. If a workload's pods are not all ready
within ``timeout`` of its admission (some of them cannot be placed, say),
Kueue evicts it with reason ``PodsReadyTimeout``: its pods are deleted, its
quota goes back, and it queues again after a backoff that doubles each time,
``min(backoffBaseSeconds * 2**(n-1), backoffMaxSeconds)`` for the n-th
requeue. With ``backoffLimitCount`` set, the workload is deactivated once
it has been requeued that many times. With ``requeuingStrategy.timestamp:
Eviction`` (the default) the requeued workload queues by its eviction time,
behind the ones that waited meanwhile.

``blockAdmission: true`` goes further: Kueue admits nothing while any
admitted workload is not ready yet, so two gangs are never started together.

Defaults are Kueue v0.19's (v1beta2 Configuration): on, 30 min timeout,
backoff 60 s to 3600 s, no limit, blockAdmission false. Simplifications: no
jitter on the backoff (Kueue adds up to 0.01 %), and no recoveryTimeout
(simulated pods do not fail after they started).
"""

from __future__ import annotations

from gangkit.kueue.objects import KueueConfig, Workload
from gangkit.model.backoff import doubling

PODS_READY_TIMEOUT = "PodsReadyTimeout"
REQUEUING_LIMIT_EXCEEDED = "RequeuingLimitExceeded"


def backoff(config: KueueConfig, n: int) -> float:
    """Seconds before the n-th requeue after a PodsReady timeout (n >= 1)."""
    return doubling(config.backoff_base, n, config.backoff_max or None)  # backoffMaxSeconds 0: no cap


def pods_ready(wl: Workload) -> bool:
    """PodsReady: every pod of the job is running (or already done)."""
    js = wl.job
    if js is None or not js.pods:
        return False
    return all(p.node is not None or p.done for p in js.pods)


def on_timeout(config: KueueConfig, wl: Workload, now: float) -> tuple[str, float | None]:
    """What Kueue does to a workload whose pods were not ready in time: (action, requeue time).

    ``("deactivate", None)`` once ``backoffLimitCount`` requeues were used up,
    else ``("requeue", now + backoff)``.
    """
    n = wl.requeue_count + 1
    if config.backoff_limit_count is not None and n > config.backoff_limit_count:
        return "deactivate", None
    wl.requeue_count = n
    return "requeue", now + backoff(config, n)
