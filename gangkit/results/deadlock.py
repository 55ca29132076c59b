"""The deadlock verdict: lesson 01's central idea, in one place.

A synchronous job (all-reduce training) makes progress only while *all* of
its workers run; its pods are a gang. A placement that binds pods one at a
time can bind part of a gang and leave the rest pending. When two gangs each
hold part of what the other needs, neither starts, so neither finishes, so
no GPU is ever given back: a deadlock. Three things make one, and this module
checks exactly these:

1. **pods bound**: the job holds capacity (``JobState.bound > 0``);
2. **gang incomplete**: it does not progress (``not JobState.progressing``:
   a sync job progresses only once every pod is bound; an ``independent``
   job progresses from its first bound pod, so it never deadlocks);
3. **nothing can ever free capacity**: the run is *quiescent*, no future
   event is scheduled (:func:`gangkit.engine.quiescence.nothing_can_change`). No job runs, so none
   finishes; no timer is pending, so no timeout releases a pod and no node
   is coming. The engine notes the instant (``Simulation.quiescent_at``).

A job that meets all three ends ``Deadlocked`` (:func:`terminal_state`), and
the run is deadlocked when at least one job does (:func:`run_deadlocked`).
Which definition this is: gangkit's own (DESIGN.md, "Deadlock"); Kubernetes
has no such status, a real deadlock simply lasts until someone intervenes.

Which stacks can reach it: those whose placement binds part of a gang and
then waits with no timer left. Pod-by-pod placement (``pod``: kube-scheduler
binds each pod that fits, lesson 01; ``two-gangs-deadlock`` deadlocks under
it). A gang placement whose ``minMember`` is below the pod count (lesson 07's
``gang, minMember 1``): the gang starts with its minimum bound and its other
pods wait, but a sync job still needs all of them. Whole-gang placements
(``gang`` with the full ``minMember``) never bind part of a gang. Where a
timer gives back what a partial gang holds (coscheduling's Permit timeout,
YuniKorn's placeholder timeout, the 5-minute scheduling timeout of
``kube-gang``, Kueue's waitForPodsReady, a rendezvous timeout's restart
churn in :mod:`gangkit.engine.churn`), the run is not quiescent while it
ticks: no deadlock; a run in which no job starts or finishes for a stall
window is flagged ``stalled`` instead. Layers around the placement can keep
it from happening: Kueue admits a whole workload only when its quota holds
it (``kueue+pod`` runs ``two-gangs-deadlock`` to the end, one job at a time),
and a node supplier can add the nodes the pending pods need. A horizon that
cuts a run still busy is not a deadlock either: its jobs end
``RunningAtEnd`` or ``WaitingAtEnd``.

The verdict is made once, when the run ends; :func:`holder` says what each
deadlocked job holds and waits for (``Result.holders``, :func:`report`).
"""

from __future__ import annotations

from typing import NamedTuple

from gangkit.engine.state import JobState

#: A job's state that is already final before the run ends (set by the engine as it happens).
ENDED = ("Finished", "Rejected", "Deactivated", "Failed")
#: The columns of ``Result.holders``: one row per deadlocked job.
HOLDER_COLUMNS = ["job", "gpus_held", "nodes", "waiting_pods"]


class Holder(NamedTuple):
    """One row of ``Result.holders``: a deadlocked job, the GPUs it holds and the pods it still waits for."""

    job: str
    gpus_held: int
    nodes: str  # "node:GPUs" per node it holds GPUs on, by node name
    waiting_pods: str  # its pods not bound and not done, or "(none)"


def holds_without_progress(js: JobState) -> bool:
    """Pods bound, gang incomplete: the job holds capacity and does no work."""
    return bool(js.bound) and not js.progressing


def terminal_state(js: JobState, quiescent: bool) -> str:
    """A job's one terminal state when the run ends (``quiescent``: the run ended with nothing left to happen).

    ``Finished``, ``Rejected``, ``Deactivated`` and ``Failed`` are final when they happen;
    ``Deadlocked`` is the three conditions of this module; ``RunningAtEnd`` a job that
    progresses, or started and still holds its pods, when the horizon cuts the run;
    ``WaitingAtEnd`` everything else.
    """
    if js.state in ENDED:
        return js.state
    if quiescent and holds_without_progress(js):
        return "Deadlocked"
    if js.progressing or (js.started_at is not None and js.bound):
        return "RunningAtEnd"
    return "WaitingAtEnd"


def run_deadlocked(quiescent: bool, holders: list[Holder]) -> bool:
    """The run is deadlocked: it ended quiescent and some job holds GPUs without progress."""
    return quiescent and bool(holders)


def holder(js: JobState) -> Holder:
    """What a deadlocked job holds (GPUs per node, by node name) and which of its pods still wait."""
    by_node: dict[str, int] = {}
    for p in js.pods:
        if p.node is not None:
            by_node[p.node.node.name] = by_node.get(p.node.node.name, 0) + p.pod_set.gpus
    waiting = [p.name for p in js.pods if p.node is None and not p.done]
    return Holder(js.name, sum(by_node.values()), ", ".join(f"{n}:{g}" for n, g in sorted(by_node.items())),
                  ", ".join(waiting) if waiting else "(none)")


def report(deadlock_at: float, holders) -> str:
    """The deadlock report's text: when, then one line per holder (rows with Holder's fields)."""
    lines = [f"deadlock at t={deadlock_at:g} s: {len(holders)} jobs hold GPUs without progress"]
    for row in holders:
        lines.append(f"  {row.job} holds {row.gpus_held} GPUs on {row.nodes}; waits for {row.waiting_pods}")
    return "\n".join(lines)
