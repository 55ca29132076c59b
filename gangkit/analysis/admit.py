"""``gangkit admit``: what Kueue would decide, right now, for the workloads in some manifests.

Picture pausing a cluster: nothing finishes, nothing new arrives, and Kueue
runs its scheduling cycles on exactly the objects in the files. Workloads
that already hold quota (``status.admission``) keep it unless preempted;
pending ones (Workload objects, and batch/v1 Jobs labelled
``kueue.x-k8s.io/queue-name``) are offered to their ClusterQueues, one head
per queue per cycle. After ``--cycles N`` cycles (default 1), or once a
cycle changes nothing (``--until-quiet``), every workload is either
admitted (where, with which flavors, for how many pods) or pending (still
in the active heap, or parked as inadmissible, with Kueue's reason), and
the preemptions issued on the way are listed with Kueue's reason.

Preempted workloads release their quota at once and queue again (Kueue
waits for their pods to stop; here nothing runs), so a preemptor is
admitted in the cycle after the one that preempted its victims.

``--json`` prints exactly one object (a stable contract)::

    {"admitted":  {"<namespace>/<name>": {"cluster_queue": "...",
                                          "flavors": {"<podset>": {"<resource>": "<flavor>"}},
                                          "counts":  {"<podset>": <int>}}},
     "preempted": [{"name": "<namespace>/<name>", "reason": "<Kueue's reason>"}, ...],
     "pending":   {"<namespace>/<name>": {"state": "active" | "inadmissible", "reason": "..."}}}

A workload without a namespace is named by its bare name.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from gangkit.kueue.scheduler import Kueue
from gangkit.manifests.kueue_snapshot import KueueInput, load_kueue
from gangkit.model.errors import load_reporting

__all__ = ["admit", "cmd_admit", "format_report"]


def admit(source: KueueInput, cycles: int | None = 1) -> dict[str, Any]:
    """Run ``cycles`` scheduling cycles (``None``: until a cycle changes nothing) on a snapshot; the decisions.

    ``source`` is what :func:`gangkit.manifests.kueue_snapshot.load_kueue` read. Returns
    the ``--json`` object: ``admitted``, ``preempted`` and ``pending``.
    """
    return _decide(source, cycles)[0]


def _decide(source: KueueInput, cycles: int | None) -> tuple[dict[str, Any], int]:
    """The decisions, and how many cycles ran."""
    kueue = Kueue.from_setup(source.setup)
    out_of_queue: dict[str, str] = {}
    for lw in source.workloads:
        wl = lw.workload
        if lw.out_of_queue:
            out_of_queue[wl.key] = lw.out_of_queue
        elif lw.admission is not None:
            at = source.now if wl.quota_reserved_at is None else wl.quota_reserved_at
            kueue.admit_existing(wl, lw.admission, at)
        else:
            kueue.submit(wl)
    result = kueue.run(cycles, now=source.now)
    admitted: dict[str, dict] = {}
    pending: dict[str, dict] = {}
    for lw in source.workloads:
        wl = lw.workload
        if wl.key in out_of_queue:
            pending[wl.key] = {"state": "inadmissible", "reason": out_of_queue[wl.key]}
        elif wl.admission is not None:
            a = wl.admission
            admitted[wl.key] = {"cluster_queue": a.cluster_queue,
                                "flavors": {ps: dict(f) for ps, f in a.flavors.items()},
                                "counts": dict(a.counts)}
        else:
            state, reason = kueue.pending_state(wl)
            pending[wl.key] = {"state": state, "reason": reason or _why_not_tried(kueue, wl, state)}
    preempted = [{"name": victim.key, "reason": reason} for victim, reason, _ in result.preempted]
    return {"admitted": admitted, "preempted": preempted, "pending": pending}, kueue.cycles


def _why_not_tried(kueue: Kueue, wl, state: str) -> str:
    """A pending workload no cycle has looked at yet (or one just preempted)."""
    if wl.preempted_reason:
        return f"preempted ({wl.preempted_reason}): it released its quota and is queued again"
    cq = kueue.cluster_queues[wl.cluster_queue]
    if state == "inadmissible":
        return (f"parked with an equivalent workload (same priority and pod sets) that ClusterQueue {cq.name} "
                "could not admit (SchedulingEquivalenceHashing)")
    if cq.queueing_strategy == "StrictFIFO":
        return f"waiting behind the head of ClusterQueue {cq.name} (StrictFIFO: the head blocks the queue)"
    return f"not yet considered: ClusterQueue {cq.name} offers one workload, its head, per cycle"


def format_report(report: dict[str, Any], cycles: int) -> str:
    """The decisions as a short table for people (``gangkit admit`` without ``--json``)."""
    admitted, preempted, pending = report["admitted"], report["preempted"], report["pending"]
    names = list(admitted) + [p["name"] for p in preempted] + list(pending)
    width = max((len(n) for n in names), default=8)
    lines = [f"{cycles} scheduling cycle{'s' if cycles != 1 else ''}: {len(admitted)} admitted, "
             f"{len(pending)} pending, {len(preempted)} preemption{'s' if len(preempted) != 1 else ''}"]
    if admitted:
        lines += ["", "admitted"]
        for name, a in admitted.items():
            parts = []
            for ps, count in a["counts"].items():
                flavors = ", ".join(f"{r}={f}" for r, f in sorted(a["flavors"].get(ps, {}).items()))
                parts.append(f"{ps}: {count} pod{'s' if count != 1 else ''}" + (f" ({flavors})" if flavors else ""))
            lines.append(f"  {name:<{width}}  ClusterQueue {a['cluster_queue']}  " + "; ".join(parts))
    if preempted:
        lines += ["", "preempted"]
        lines += [f"  {p['name']:<{width}}  {p['reason']}" for p in preempted]
    if pending:
        lines += ["", "pending"]
        lines += [f"  {name:<{width}}  {p['state']:<12}  {p['reason']}" for name, p in pending.items()]
    return "\n".join(lines)


def cmd_admit(args: argparse.Namespace) -> int:
    """``gangkit admit FILE... [--cycles N | --until-quiet] [--json]``: 0, or 2 on bad input."""
    cycles = None if args.until_quiet else (args.cycles if args.cycles is not None else 1)
    source, status = load_reporting(lambda: load_kueue(*args.files))
    if status is not None:
        return status
    report, ran = _decide(source, cycles)
    if args.json:
        print(json.dumps(report))
    else:
        print(format_report(report, ran))
    return 0
