"""Diagnosis: which layer holds a job, and why, in plain words.

A help desk does not answer "your job is pending"; it answers "your team's
GPU budget is used up", "your 16 workers need 2 free nodes and the largest
gap is 12 GPUs", or "your nodes are still booting, 2 of 4 are ready". A
layered stack lets us say that, because each layer refuses for its own
reason (``Result.diagnose``)::

    result.diagnose(job="train-7", at=600)   # one job at t=600 s
    result.diagnose(at=600)                  # every job at t=600 s, with a headline

How a past instant is known: a run is deterministic (same scenario and seed,
same run; DESIGN.md), so the diagnosis *replays* the run up to ``at`` and
asks each layer about its live state, exactly as the layers decide (Kueue's
flavor assignment, Volcano's trial placement, Karpenter's in-flight
NodeClaims). The replay runs at the ``full`` recording level whatever level
the result was recorded at; it needs the scenario and a stack chosen by name
(a result built from a hand-made :class:`~gangkit.stacks.Stack` cannot be
replayed and says so; :func:`gangkit.simulate.replay` does the replay). The recorded ``events`` tell the same story in rows
(``admitted``, ``nominated``, ``node_registered``...); the diagnosis turns
the state into one sentence.

The reasons (``code``), in the order a job meets them (each is also in the one
catalogue of codes, :data:`gangkit.model.reasons.CATALOGUE`; the diagnosis decides
from the layers' codes and causes, never from their messages):

=======================  ==========================================================
code                     meaning
=======================  ==========================================================
``NotSubmitted``         submitted after ``at``
``Rejected``             no node could ever hold one of its pods
``QuotaExhausted``       Kueue: not enough unused quota in its ClusterQueue (and
                         its cohort) for the whole workload, now
``QuotaTooSmall``        Kueue: the workload asks for more than its ClusterQueue can
                         ever have (nominal quota plus borrowing): it stays
                         inadmissible, as Kueue never rejects
``Queued``               Kueue: quota would allow it, but it waits its turn (next
                         cycle, behind a StrictFIFO head, preemption in progress)
``AdmissionCheck``       quota reserved; an admission check (e.g.
                         ProvisioningRequest) has not said Ready yet
``WaitingForNodes``      admitted; nodes a supplier launched for it are not ready
``NodePoolLimit``        cannot fit, and the provisioner will not launch a node: its
                         NodePools are at their GPU limits
``GangCannotFit``        gang placement: the whole gang does not fit on the nodes
                         there are (nothing held), no node coming
``PartiallyPlaced``      pod-by-pod placement: some pods bound and hold GPUs
                         without progress, the others unschedulable
``Unschedulable``        pod-by-pod placement: no pod of the job fits
``WaitingForSession``    it fits now; the placement layer binds it at its next
                         session (or it waits behind a gang that blocks, strict)
``Running``              started, progressing
``Finished``             finished (the diagnosis says where its wait went)
``Deactivated``          taken out by an admission layer
=======================  ==========================================================

Simplification: a job is diagnosed by the first layer that holds it; a job
whose pods are partly placed under gang placement (``minMember`` below the
pod count) is ``Running`` once its gang is ready.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import pandas as pd

from gangkit.engine.waits import awaited_at
from gangkit.model.errors import Problem, ScenarioError

#: What a node does while a job waits for it, by wait bucket.
STAGE_VERBS = {
    "node_launch": "launching",
    "node_registration": "booting and registering",
    "node_initialization": "initializing",
    "image_pull": "pulling images",
}
#: The codes of :mod:`gangkit.results.diagnosis`, in the order a job meets them.
CODES = ("NotSubmitted", "Rejected", "QuotaExhausted", "QuotaTooSmall", "Queued", "AdmissionCheck", "WaitingForNodes",
         "NodePoolLimit", "GangCannotFit", "PartiallyPlaced", "Unschedulable", "WaitingForSession",
         "Running", "Finished", "Deactivated")
WAITING = ("QuotaExhausted", "QuotaTooSmall", "Queued", "AdmissionCheck", "WaitingForNodes", "NodePoolLimit", "GangCannotFit",
           "PartiallyPlaced", "Unschedulable", "WaitingForSession")


@dataclass(frozen=True)
class Diagnosis:
    """Why one job is where it is at one instant: the layer holding it, a code, plain words, the numbers."""

    job: str
    time: float
    layer: str
    code: str
    message: str
    numbers: dict = field(default_factory=dict, compare=False)

    @property
    def waiting(self) -> bool:
        return self.code in WAITING

    def __str__(self) -> str:
        where = f"[{self.layer}] " if self.layer else ""
        return f"{self.job} at t={_g(self.time)} s: {where}{self.code}: {self.message}"

    __repr__ = __str__


@dataclass
class ClusterDiagnosis:
    """Every job at one instant (``table``), the GPU state and a one-line headline."""

    time: float
    table: pd.DataFrame
    gpus: dict
    headline: str

    def __str__(self) -> str:
        lines = [self.headline]
        for row in self.table.itertuples():
            if row.code in WAITING:
                lines.append(f"  {row.job}: [{row.layer}] {row.message}")
        return "\n".join(lines)

    __repr__ = __str__


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}" + ("" if count == 1 else "s")


def _g(x: float) -> str:
    return f"{round(x, 3):.12g}"


# ------------------------------------------------------------------------------ replay
def replay(result, at: float):
    """The live :class:`~gangkit.engine.simulation.Simulation` of ``result``'s run after the events of instant ``at``
    (through ``result.replay``, which :func:`gangkit.simulate` leaves on every result of a stack chosen by name)."""
    if result.replay is None:
        raise ScenarioError([Problem("Result", "diagnose",
            f"this result's stack {result.stack!r} was built by hand (a Stack object), so its run cannot be replayed; "
            "simulate with a stack name to diagnose it")])
    if not isinstance(at, (int, float)) or isinstance(at, bool) or math.isnan(at) or at < 0:
        raise ScenarioError([Problem("Result", "diagnose", f"at: expected a time in seconds >= 0, got {at!r}")])
    return result.replay(float(at))


# ---------------------------------------------------------------------------- one job
def diagnose_job(sim, js, at: float, result=None) -> Diagnosis:
    """The diagnosis of one job state ``js`` of the live simulation ``sim`` at time ``at``."""
    spec = js.spec
    name = js.name
    if spec.submit_time > at:
        return Diagnosis(name, at, "", "NotSubmitted", f"submitted at t={_g(spec.submit_time)} s, after t={_g(at)} s")
    if js.state == "Rejected":
        return Diagnosis(name, at, js.reason.layer if js.reason else "", "Rejected", js.reason.message if js.reason else "rejected")
    if js.state == "Deactivated":
        return Diagnosis(name, at, js.reason.layer if js.reason else "", "Deactivated",
                         f"deactivated at t={_g(js.deactivated_at)} s: {js.reason.message if js.reason else ''}")
    if js.state == "Finished":
        return _finished(js, at, result)
    if js.started_at is not None:
        if js.progressing:
            return Diagnosis(name, at, "", "Running", f"running since t={_g(js.started_at)} s on {js.gpus_bound} GPUs")
    for layer in sim.stack.admission:
        if js.layer == layer.name:
            return _admission(sim, layer, js, at)
    return _placement(sim, js, at)


def _finished(js, at: float, result) -> Diagnosis:
    wait = js.started_at - js.spec.submit_time
    msg = f"finished at t={_g(js.finished_at)} s; waited {_g(wait)} s"
    numbers = {"wait_s": wait}
    if wait > 0 and js.waits:
        bucket, seconds = max(js.waits.items(), key=lambda kv: (kv[1], kv[0]))
        msg += f", mostly in {bucket} ({_g(seconds)} s)"
        numbers["dominant_bucket"] = bucket
    return Diagnosis(js.name, at, "", "Finished", msg, numbers)


def _admission(sim, layer, js, at: float) -> Diagnosis:
    why = layer.pending_reason(js)
    text = why.message if why is not None else "waiting for the layer's next cycle"
    if layer.name == "quota":
        cq = (why.numbers.get("cluster_queue") if why is not None else None) or "?"
        gpus = js.spec.gpus
        cause = why.cause if why is not None else ""
        if cause == "QuotaTooSmall":  # Kueue's flavor assigner: more than the ClusterQueue can ever have
            return Diagnosis(js.name, at, "quota", "QuotaTooSmall",
                             f"the workload asks for {gpus} GPUs, more than ClusterQueue {cq} can ever have; it stays "
                             f"inadmissible: {text}", {"cluster_queue": cq, "gpus": gpus})
        if cause == "QuotaExhausted":
            return Diagnosis(js.name, at, "quota", "QuotaExhausted",
                             f"quota exhausted in ClusterQueue {cq}: the workload asks for {gpus} GPUs; {text}",
                             {"cluster_queue": cq, "gpus": gpus})
        return Diagnosis(js.name, at, "quota", "Queued", f"queued in ClusterQueue {cq}: {text}", {"cluster_queue": cq})
    if layer.name == "admission_check":
        text = why.numbers.get("waiting_for", text) if why is not None else text  # what the check waits for
        return Diagnosis(js.name, at, layer.name, "AdmissionCheck", f"quota reserved; admission check not ready: {text}")
    return Diagnosis(js.name, at, layer.name, "Queued", f"waits in layer {layer.name}: {text}")


def _placement(sim, js, at: float) -> Diagnosis:
    admitted = "admitted" if sim.stack.admission else "pods pending"
    hit = awaited_at(at, js.awaited, sim.node_stages)
    waiting = [p for p in js.pods if p.node is None and not p.done]
    g = max((p.pod_set.gpus for p in waiting), default=0)
    if hit is not None:
        # nodes launched for it: those still in flight, and those ready with room for one of its pods
        pending: dict[str, int] = {}
        ready = 0
        for n, since in sorted(js.awaited.items()):
            if since > at:
                continue
            h = awaited_at(at, {n: since}, sim.node_stages)
            if h is not None:
                pending[h[1]] = pending.get(h[1], 0) + 1
            else:
                st = sim.capacity.by_name.get(n)
                ready += st is not None and st.ready and st.free_gpus >= g
        k = sum(pending.values())
        nodes = range(k + ready)
        doing = ", ".join(f"{c} {STAGE_VERBS.get(b, b)}" for b, c in pending.items()) if len(pending) > 1 \
            else STAGE_VERBS.get(hit[1], hit[1])
        ready_at = max(sim.node_stages[hit[0]].values())
        return Diagnosis(js.name, at, hit[1], "WaitingForNodes",
                         f"{admitted}; {k} of {_n(len(nodes), 'node')} launched for it still {doing} (last ready at t={_g(ready_at)} s)",
                         {"nodes": len(nodes), "not_ready": k, "bucket": hit[1], "ready_at": ready_at})
    cap = sim.capacity
    free, largest = cap.free_ready_gpus, cap.max_free_gpus()
    numbers = {"free_gpus": free, "largest_free_block": largest, "pod_gpus": g}
    why = sim.stack.placement.pending_reason(sim, js)
    if why is not None and why.code == "WaitingForSession":
        return Diagnosis(js.name, at, "placement", "WaitingForSession", why.message, numbers)
    limit = _supplier_limit(sim, waiting)
    tail = f"; no node coming: {limit}" if limit else ""
    code = "NodePoolLimit" if limit else None
    if js.bound and js.spec.progress == "sync":
        stuck = "; nothing can change any more: deadlock" if sim.env.peek() == math.inf else ""
        return Diagnosis(js.name, at, "placement", code or "PartiallyPlaced",
                         f"{js.bound} of {len(js.pods)} pods bound hold {js.gpus_bound} GPUs without progress; "
                         f"{_n(len(waiting), 'pod')} of {g} GPUs unschedulable (largest free block is {largest} GPUs){tail}{stuck}",
                         {**numbers, "bound_pods": js.bound, "held_gpus": js.gpus_bound})
    if why is not None and why.code == "GangCannotFit":
        k = js.gang_size
        total = sum(p.pod_set.gpus for p in js.pods)
        msg = (f"gang of {_n(k, 'pod')} ({total} GPUs, {g} per pod) cannot fit: largest free block is {largest} GPUs, "
               f"{free} GPUs free in all{tail}")
        return Diagnosis(js.name, at, "placement", code or "GangCannotFit", msg, {**numbers, "gang": k})
    msg = (f"{len(waiting)} of {_n(len(js.pods), 'pod')} of {g} GPUs unschedulable: Insufficient nvidia.com/gpu "
           f"(largest free block is {largest} GPUs){tail}")
    return Diagnosis(js.name, at, "placement", code or "Unschedulable", msg, numbers)


def _supplier_limit(sim, waiting: list) -> str:
    """Plain words when a node supplier will not launch a node for these pods (its limits), else ""."""
    if not waiting:
        return ""
    for s in sim.stack.suppliers:
        words = s.launch_blocked(waiting)
        if words:
            return words
    return ""


# ------------------------------------------------------------------------- entry point
def diagnose(result, job: str | None = None, at: float | None = None):
    """For ``job`` (a name) or every job, at time ``at`` (default: the end of the run).

    Returns a :class:`Diagnosis` for one job, a :class:`ClusterDiagnosis` for all.
    """
    end = float(result.figures["makespan_s"])
    t = end if at is None else at
    sim = replay(result, t)
    t = float(t)
    states = {js.name: js for js in sim.all_jobs()}
    if job is not None:
        if job not in states:
            names = ", ".join(sorted(states)[:8])
            raise ScenarioError([Problem("Result", "diagnose", f"job: no job named {job!r}; jobs are {names}"
                                         + (", ..." if len(states) > 8 else ""))])
        return diagnose_job(sim, states[job], t, result)
    rows = []
    for js in sim.all_jobs():
        d = diagnose_job(sim, js, t, result)
        rows.append((d.job, d.layer, d.code, d.message))
    table = pd.DataFrame(rows, columns=["job", "layer", "code", "message"])
    gpus = sim.books.gpus()
    return ClusterDiagnosis(t, table, gpus, headline(t, table, gpus))


def headline(t: float, table: pd.DataFrame, gpus: dict) -> str:
    """One line: how many jobs run, where the others wait, and the GPU split."""
    counts = table.code.value_counts()
    parts = [f"{counts.get('Running', 0)} running", f"{counts.get('Finished', 0)} finished"]
    waiting = [(c, int(counts[c])) for c in WAITING if c in counts]
    if waiting:
        parts.append(f"{sum(n for _, n in waiting)} waiting (" + ", ".join(f"{n} {c}" for c, n in waiting) + ")")
    g = gpus
    return (f"t={_g(t)} s: " + ", ".join(parts) + f"; GPUs: {g['capacity']} = {g['useful']} useful + "
            f"{g['held_idle']} held idle + {g['free']} free + {g['not_ready']} not ready")
