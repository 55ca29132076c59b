"""Per-layer metrics, named after the ones the real systems export, in one place: ``Result.metrics``.

An operator on call does not read a scheduler's mind; they read each
layer's dashboard. "Quota exhausted", "gang cannot fit" and "nodes not
ready yet" each show up in a different layer's metric, so a run leaves one
DataFrame per metric, keyed by the real metric's name:

============================================  ==============================================
metric (``Result.metrics[name]``)             layer, and what a row is
============================================  ==============================================
``kueue_pending_workloads``                   Kueue: pending workloads per ClusterQueue
                                              (``active`` in the heap, ``inadmissible``
                                              parked), a row per change
``kueue_admission_wait_time_seconds``         Kueue: per quota reservation, the wait since
                                              creation or the last requeue
``kueue_admission_checks_wait_time_seconds``  admission checks (a layer named
                                              ``admission_check``): per admission, the time
                                              from quota reservation to admission
``volcano_unschedule_task_count``,            Volcano (``gang`` placement): pods and jobs
``volcano_unschedule_job_count``              left unschedulable by a session, a row per
                                              change
``scheduler_pending_pods``                    kube-scheduler (``pod`` placement): pods in
                                              the unschedulable queue, a row per change
``karpenter_nodepools_usage`` / ``_limit``    Karpenter: GPUs of a NodePool's nodes against
                                              its limit
``karpenter_nodeclaims_created_total`` /      Karpenter: NodeClaims created (reason
``karpenter_nodeclaims_disrupted_total``      ``provisioned``) and disrupted (``empty``,
                                              ``underutilized``), per NodePool
``gangkit_karpenter_nodeclaim_stages``        gangkit's own: per NodeClaim, its stage times
                                              (launched, registered, initialized, ready)
============================================  ==============================================

Names that start with ``gangkit_`` are gangkit's own tables (a NodeClaim's stage times,
Karpenter's batches, a ProvisioningRequest's states...), not metrics any project exports; the
reference pages name the closest real metric for each. Plus the other Kueue and Karpenter frames (reservations, evictions,
NodeClaims created and disrupted, provisioning batches), see
:mod:`gangkit.kueue.metrics` and :mod:`gangkit.supply.karpenter`. The real
metrics are Prometheus gauges, counters and histograms; here a gauge is a
time series with a row per change and a histogram keeps every observation.

Simplification: the unschedulable counts are sampled after each scheduling
cycle and only at the ``full`` recording level (counting the unschedulable
pods costs a pass over the waiting jobs of blocked shapes).
"""

from __future__ import annotations

import pandas as pd

ADMISSION_CHECK = "admission_check"


def pending_frames(placement, rows: list[tuple]) -> dict[str, pd.DataFrame]:
    """The unschedulable pods and jobs counts sampled after each cycle (:class:`gangkit.engine.books.PendingSamples`),
    under the names the placement layer reports them by (its ``pending_metrics``)."""
    tasks, jobs = placement.pending_metrics
    df = pd.DataFrame(rows, columns=["time_s", "pods", "jobs"])
    out = {}
    if tasks == "scheduler_pending_pods":  # kube-scheduler's gauge has a queue label
        out[tasks] = pd.DataFrame({"time_s": df.time_s, "queue": "unschedulable", "value": df.pods})
    else:
        out[tasks] = pd.DataFrame({"time_s": df.time_s, "value": df.pods})
    if jobs:
        out[jobs] = pd.DataFrame({"time_s": df.time_s, "value": df.jobs})
    return out


def admission_check_frame(rows: list[tuple]) -> pd.DataFrame:
    """``kueue_admission_checks_wait_time_seconds`` from the engine's admission rows (time, job, layer, seconds)."""
    picked = [(t, job, s) for t, job, layer, s in rows if layer == ADMISSION_CHECK]
    return pd.DataFrame(picked, columns=["time_s", "workload", "wait_s"]).astype({"time_s": float, "wait_s": float})


def collect(sim) -> dict[str, pd.DataFrame]:
    """Every metric of a finished run: each layer's own frames, then the engine's."""
    out: dict[str, pd.DataFrame] = {}
    for layer in [*sim.stack.admission, sim.stack.placement, *sim.stack.suppliers]:
        out.update(layer.metrics())
    if any(layer.name == ADMISSION_CHECK for layer in sim.stack.admission):
        out.setdefault("kueue_admission_checks_wait_time_seconds", admission_check_frame(sim.admission_rows))
    if sim.record == "full":
        out.update(pending_frames(sim.stack.placement, sim.pending_samples.rows))
    return out
