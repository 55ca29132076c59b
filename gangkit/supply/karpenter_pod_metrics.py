"""Karpenter's pod metrics: how long each pod waited for a node, as Karpenter's pod metrics controller reports it.

Picture four stopwatches hung on each pod. Karpenter starts two when the
pod is created: one stops when the pod is *bound* to a node (``PodScheduled=True``),
the other when it is *ready* (``Ready=True``). Two more start later, at the
moment Karpenter's own scheduling simulation first found the pod a place
(room on an existing or in-flight node, or a NodeClaim to launch), and stop
at the same two events: they time what happens *after* Karpenter decided,
i.e. mostly the node's start-up::

    created ─────────── simulated: a place found ─────── bound ─── ready
       │                       │                           │         │
       │                       └── provisioning_bound ─────┘         │
       │                       └── provisioning_startup ─────────────┘
       └──────────────────── bound_duration ──────────────┘          │
       └──────────────────── startup_duration ──────────────────────┘

Sources: Karpenter v1.14.1 ``pkg/controllers/metrics/pod/controller.go``
(the metrics and when each is observed) and
``pkg/controllers/state/cluster.go`` (``MarkPodSchedulingDecisions``,
``PodSchedulingSuccessTime``). The rules gangkit follows:

- ``karpenter_pods_bound_duration_seconds`` (histogram, no labels): bind
  time minus creation, once per pod; ``karpenter_pods_startup_duration_seconds``
  (summary, no labels): ready time minus creation, once per pod, never for
  a pod that ends without becoming ready. Each is observed only for a pod
  the controller saw pending, so a pod a live cluster's snapshot shows bound
  at the start gives none.
- The ``provisioning_`` histograms (alpha) measure from the pod's
  *schedulable time*: the first provisioning simulation that found it a
  place; a later simulation that finds it none forgets it (Karpenter deletes
  the entry for a pod with a scheduling error), the next success sets it
  again. A pod Karpenter never simulated (it fit a node at once) gives none.
- A pod made again (an eviction, a restart, consolidation) is a new pod in
  Kubernetes with a new creation time: gangkit keeps one pod object per
  index and renews its ``created`` time, so a pod here is a (pod, creation
  time) pair, and each incarnation is observed on its own.
- ``karpenter_pods_unbound_time_seconds`` and
  ``karpenter_pods_unstarted_time_seconds`` (gauges by ``name`` and
  ``namespace``): a snapshot at the run's end, one row per pod still pending.

What the times are in gangkit. *Creation* is when the engine made the pod:
a job behind Kueue gets its pods when Kueue admits it, not at submission.
*Bound* is the engine's bind, except under a Permit gang scheduler
(coscheduling, kube-gang): a pod waiting at Permit holds its node but is not
bound, so its bind is the moment its group was permitted (its
``minMember``-th pod placed), and a pod rejected at Permit was never bound.
*Ready*: in gangkit a pod binds only to a ready node, and a slow image pull
is a node stage (``image_pulled``), so a pod's containers run as soon as it
is bound: ready = bound, and the startup metrics equal the bound ones.
Simplified: in Kubernetes the first pods of a new node bind once it
advertises its GPUs and pull their image afterwards, so Karpenter's bound
duration would be shorter than gangkit's by the pull; readiness probes are
not modelled. Under YuniKorn a pod sitting in its own placeholder's spot
counts as bound when that placeholder was allocated (not at the swap), and
placeholder pods themselves are not reported. Karpenter simulates at every
provisioning pass, gangkit at the end of each batch window, so a pod's
schedulable time is the end of the first batch that placed it.

The per-pod tables need the engine's pod records, kept at the ``full``
recording level (the default); at other levels they are empty.
"""

from __future__ import annotations

import pandas as pd

from gangkit.placement.permit import PermitLayer

BOUND = "karpenter_pods_bound_duration_seconds"
STARTUP = "karpenter_pods_startup_duration_seconds"
PROVISIONING_BOUND = "karpenter_pods_provisioning_bound_duration_seconds"
PROVISIONING_STARTUP = "karpenter_pods_provisioning_startup_duration_seconds"
UNBOUND = "karpenter_pods_unbound_time_seconds"
UNSTARTED = "karpenter_pods_unstarted_time_seconds"
NAMES = (BOUND, STARTUP, PROVISIONING_BOUND, PROVISIONING_STARTUP, UNBOUND, UNSTARTED)
#: one row per observation (a gauge: per pod at the run's end): when, which pod, the seconds
COLUMNS = ["time_s", "job", "pod", "value"]
RELEASED = "Released"  # the pod table's state of a pod given back before it ran (Permit rejection, placeholder)


class SchedulableTimes:
    """Karpenter's cluster state ``podsSchedulableTimes``: when a simulation first found each pod a place.

    Keyed by (job, pod name, creation time): a pod made again is a new pod.
    """

    def __init__(self) -> None:
        self._times: dict[tuple, float] = {}

    def mark(self, now: float, placed: list, failed: list) -> None:
        """One provisioning simulation's decisions (``MarkPodSchedulingDecisions``): a pod given a place keeps
        its first time (``LoadOrStore``); a pod given none loses it (``Delete``). Bound pods are skipped."""
        for p in failed:
            self._times.pop((p.job.name, p.name, p.created), None)
        for p in placed:
            if p.node is None:
                self._times.setdefault((p.job.name, p.name, p.created), now)

    def of(self, pod, created: float) -> float | None:
        """The schedulable time of ``pod`` made at ``created``, or None when Karpenter never found it a place."""
        return self._times.get((pod.job.name, pod.name, created))


def _empty() -> dict[str, pd.DataFrame]:
    return {name: pd.DataFrame([], columns=COLUMNS).astype({"time_s": float, "value": float}) for name in NAMES}


def _binds(sim) -> list[tuple]:
    """(pod, creation, bind time) of every pod incarnation that was bound in the run, from the engine's pod
    records (pods released, then pods still bound); rows of pods rejected at Permit are left out."""
    pods = {(js.name, p.name): p for js in sim.all_jobs() for p in js.pods}
    rows = [(pods.get((job, pod)), created, bound) for job, pod, _, _, _, created, bound, _, state in sim.pod_rows
            if state != RELEASED]
    rows += [(p, p.created, p.bound_at) for js in sim.all_jobs() for p in js.pods if p.node is not None]
    return [r for r in rows if r[0] is not None and not _from_snapshot(*r)]


def _from_snapshot(pod, created: float, bound: float) -> bool:
    """A pod a live cluster's snapshot shows bound: bound when the run took it up, never seen pending."""
    snap = pod.job.spec.snapshot
    return (snap is not None and pod.index < len(snap.nodes) and snap.nodes[pod.index] is not None
            and bound == created and pod.job.restarts == 0)


def _permitted(sim, rows: list[tuple]) -> tuple[list[tuple], set]:
    """Under a Permit gang scheduler, a sync job's pod is bound when its group is permitted: at the bind of its
    incarnation's ``minMember``-th pod (rows of an incarnation with fewer pods placed are still waiting at
    Permit: not bound). Returns the rows with those bind times, and the pods still waiting."""
    if not isinstance(sim.stack.placement, PermitLayer):
        return rows, set()
    out, groups = [], {}
    for r in rows:
        js = r[0].job
        if js.spec.progress != "sync":
            out.append(r)
        else:
            groups.setdefault((js.index, r[1]), []).append(r)
    waiting = set()
    for members in groups.values():
        js = members[0][0].job
        need = len(js.pods) if js.spec.min_member is None else js.spec.min_member
        times = sorted(r[2] for r in members)
        if len(times) < need:
            waiting.update(r[0] for r in members)
            continue
        at = times[need - 1] if need > 0 else times[0]
        out += [(p, created, max(bound, at)) for p, created, bound in members]
    return out, waiting


def pod_metrics(sim, schedulable: SchedulableTimes) -> dict[str, pd.DataFrame]:
    """The pod metrics of a finished run (``sim``: the Simulation; None before any run), one row per observation
    (columns :data:`COLUMNS`); the gauges hold one row per pod still pending at the run's end."""
    if sim is None or sim.record != "full":
        return _empty()
    rows, waiting = _permitted(sim, _binds(sim))
    out = {name: [] for name in NAMES}
    for p, created, bound in rows:
        ready = bound  # see the module docstring: a pod runs as soon as it is bound
        key = (bound, p.job.name, p.name)
        out[BOUND].append((*key, bound - created))
        out[STARTUP].append((ready, p.job.name, p.name, ready - created))
        at = schedulable.of(p, created)
        if at is not None:
            out[PROVISIONING_BOUND].append((*key, bound - at))
            out[PROVISIONING_STARTUP].append((ready, p.job.name, p.name, ready - at))
    end = sim.end_time if sim.end_time is not None else sim.now
    for js in sim.all_jobs():
        if not js.placing:  # its pods do not exist (not admitted yet, or deleted by Kueue's eviction)
            continue
        for p in js.pods:
            if not p.done and (p.node is None or p in waiting):
                for name in (UNBOUND, UNSTARTED):
                    out[name].append((end, js.name, p.name, end - p.created))
    frames = _empty()
    for name, data in out.items():
        if data:
            frames[name] = (pd.DataFrame(sorted(data, key=lambda r: r[:3]), columns=COLUMNS)
                            .astype({"time_s": float, "value": float}))
    return frames
