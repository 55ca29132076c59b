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

===========================  ==========================================================
code                         meaning
===========================  ==========================================================
``NotSubmitted``             submitted after ``at``
``Rejected``                 no node could ever hold one of its pods
``QuotaExhausted``           Kueue: not enough unused quota in its ClusterQueue (and
                             its cohort) for the whole workload, now
``QuotaTooSmall``            Kueue: the workload asks for more than its ClusterQueue can
                             ever have (nominal quota plus borrowing): it stays
                             inadmissible, as Kueue never rejects for lack of quota
``Queued``                   Kueue: quota would allow it, but it waits its turn (next
                             cycle, behind a StrictFIFO head, preemption in progress)
``AdmissionCheck``           quota reserved; an admission check (e.g.
                             ProvisioningRequest) has not said Ready yet
``QueueCapabilityExceeded``  Volcano's enqueue: its minimum would take its queue above
                             its capability (the PodGroup stays Pending; a Volcano Job
                             has no pods yet)
``ClusterOverused``          Volcano's enqueue: its minimum does not fit the idle room
                             times the overcommit factor
``NotEnoughPods``            coscheduling (PreFilter) and Volcano (the gang plugin's
                             JobValid, ``NotEnoughTasks``): fewer pods exist than
                             ``minMember``; for ever when it exceeds the job's pods
``WaitingForPods``           kube-gang: fewer pods exist than ``minCount`` (PreEnqueue)
``PodGroupBackoff``          coscheduling: the group failed recently and is backed off
``GangRejected``             coscheduling: the group was rejected and waits for capacity
                             to be freed
``WaitingForNodes``          admitted; nodes a supplier launched for it are not ready
``NodePoolLimit``            cannot fit, and Karpenter will not launch a node: each
                             NodePool's limits (``spec.limits``: GPUs, cores, memory)
                             leave too little for every instance type that holds the
                             pods ("at 144 of its 150 cpu limit"), or every NodePool is
                             static (also a hand-made supplier's ``launch_blocked``)
``ConsumingProvisioningRequest``
                             cannot fit, and its pods consume a ProvisioningRequest
                             (``autoscaling.x-k8s.io/consume-provisioning-request``),
                             so cluster-autoscaler scales up for none of them; the
                             words quote CA's event on the pod and the request's
                             conditions (see :mod:`gangkit.results.supply_words`)
``GangCannotFit``            gang placement: the whole gang does not fit on the nodes
                             there are (nothing held), no node coming
``QueueOverDeserved``        Volcano's allocate: its pods fit, but would take its queue
                             above its deserved share
``WaitingForReservation``    Volcano backfilling orderings: it holds a reservation later
``PlaceholdersPending``      YuniKorn: its placeholders are not all allocated
``WaitingAtPermit``          coscheduling, kube-gang: some pods wait at Permit holding
                             their nodes until the group is complete or its timeout
``PartiallyPlaced``          pod-by-pod placement: some pods bound and hold GPUs
                             without progress, the others unschedulable
``PodsCannotFit``            Volcano: the gang is ready; its pods above ``minMember`` do
                             not fit
``Unschedulable``            pod-by-pod placement: no pod of the job fits (in
                             kube-scheduler's words: "0/N nodes are available: ...")
``WaitingForSession``        it fits now; the placement layer binds it at its next
                             session (or it waits behind a gang that blocks, strict)
``Running``                  started, progressing
``Finished``                 finished (the diagnosis says where its wait went)
``Deactivated``              taken out by an admission layer
===========================  ==========================================================

Where a placement layer has a reason of its own (every code above from
``QueueCapabilityExceeded`` on that is not the diagnosis's: see
:data:`LAYER_CODES`), its code and words are the diagnosis: the layer knows
why. The diagnosis adds what only the whole cluster knows: nodes launched
for the job (``WaitingForNodes`` comes first), a NodePool limit (on GPUs,
cores or memory) where more nodes would help (the code becomes
``NodePoolLimit``, the words get "no node coming: ..." and name the limit),
pods that cluster-autoscaler leaves out of scale-up because they consume a
ProvisioningRequest (the code becomes ``ConsumingProvisioningRequest``),
and "deadlock" when the job holds pods and nothing can change
any more. Shortages are named in the resources that are short: a pod that
asks for 4 cores on nodes with 2 free is short of CPU, not of GPUs.

Simplification: a job is diagnosed by the first layer that holds it; a job
whose pods are partly placed under gang placement (``minMember`` below the
pod count) is ``Running`` once its gang is ready.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

import pandas as pd

from gangkit.engine.capacity import avoided_nodes
from gangkit.engine.quiescence import nothing_can_change
from gangkit.engine.waits import awaited_at
from gangkit.model.errors import Problem, ScenarioError
from gangkit.model.precision import TOLERANCE
from gangkit.model.resources import Resources
from gangkit.placement.permit import asked_dims, in_words, requested
from gangkit.results.supply_words import CONSUMER_CODE, supplier_limit
from gangkit.volcano.plugins.gang import job_valid
from gangkit.volcano.scheduler import VolcanoGang

#: What a node does while a job waits for it, by wait bucket.
STAGE_VERBS = {
    "node_launch": "launching",
    "node_registration": "booting and registering",
    "node_initialization": "initializing",
    "image_pull": "pulling images",
}
#: The placement codes that say only "it does not fit": the diagnosis words them itself, from the free capacity.
GENERIC_CODES = ("Unschedulable", "GangCannotFit")
#: The codes of the built-in placement layers' own reasons that the diagnosis passes on as they are
#: (``Reason("placement", ...)`` of each layer's ``pending_reason``), in the order a job meets them:
#: Volcano's enqueue (``QueueCapabilityExceeded``, ``ClusterOverused``), PreEnqueue and PreFilter of the
#: Permit layers (``NotEnoughPods``, ``WaitingForPods``, ``PodGroupBackoff``, ``GangRejected``), then
#: Volcano's allocate (``QueueOverDeserved``, ``WaitingForReservation``), YuniKorn's placeholders, the
#: Permit waiting room and Volcano's pods beyond ``minMember``. A hand-made layer's other codes pass too.
LAYER_CODES = ("QueueCapabilityExceeded", "ClusterOverused", "NotEnoughPods", "WaitingForPods", "PodGroupBackoff",
               "GangRejected", "QueueOverDeserved", "WaitingForReservation", "PlaceholdersPending", "WaitingAtPermit",
               "PodsCannotFit")
#: Of the layers' own codes, those that more nodes would end: there a supplier's limit is worth saying (NodePoolLimit,
#: ConsumingProvisioningRequest).
WANTS_NODES = ("ClusterOverused", "GangRejected", "PlaceholdersPending", "WaitingAtPermit", "PodsCannotFit")

#: kube-scheduler's names for what a pod asks for (NodeResourcesFit's "Insufficient <name>").
RESOURCE_NAMES = {"gpus": "nvidia.com/gpu", "cpu": "cpu", "memory": "memory"}
#: NodeAffinity's Filter reason for a node whose labels do not match the pod's node selector.
SELECTOR_MISMATCH = "node(s) didn't match Pod's node affinity/selector"
#: InterPodAffinity's Filter reason for a node that holds a pod the pod's required anti-affinity selects
#: (``ErrReasonAntiAffinityRulesNotMatch``, ``plugins/interpodaffinity/filtering.go``, Kubernetes 1.35).
ANTI_AFFINITY_MISMATCH = "node(s) didn't match pod anti-affinity rules"
#: The codes of :mod:`gangkit.results.diagnosis`, in the order a job meets them (the placement
#: layers' own codes it passes on, LAYER_CODES, where a job meets them).
CODES = ("NotSubmitted", "Rejected", "QueueMissing", "QuotaExhausted", "QuotaTooSmall", "Queued", "AdmissionCheck",
         "QueueCapabilityExceeded", "ClusterOverused", "NotEnoughPods", "WaitingForPods", "PodGroupBackoff", "GangRejected",
         "WaitingForNodes", "NodePoolLimit", "ConsumingProvisioningRequest", "GangCannotFit", "QueueOverDeserved", "WaitingForReservation",
         "PlaceholdersPending", "WaitingAtPermit", "PartiallyPlaced", "PodsCannotFit", "Unschedulable", "WaitingForSession",
         "PodRestartBackoff", "Running", "Finished", "Deactivated", "Failed")
#: The codes of a job that still waits (each has a wait bucket in the catalogue).
WAITING = tuple(c for c in CODES if c not in ("NotSubmitted", "Rejected", "Running", "Finished", "Deactivated", "Failed"))


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
    rec = sim.churn.record(js) if getattr(sim, "churn", None) is not None else None
    if rec is not None and rec.failed_at is not None and rec.failed_at <= at:
        return Diagnosis(name, at, "job-controller", "Failed",
                         f"the Job failed at t={_g(rec.failed_at)} s (BackoffLimitExceeded): {rec.count} pods failed, "
                         f"more than its backoffLimit {spec.backoff_limit}; it holds nothing",
                         {"pod_failures": rec.count, "failed_at": rec.failed_at})
    if rec is not None and rec.missing and js.started_at is None:
        return Diagnosis(name, at, "placement", "PodRestartBackoff",
                         f"restart churn: {_n(len(rec.missing), 'pod')} failed their rendezvous ({rec.count} failures so "
                         f"far, backoffLimit {spec.backoff_limit}); the Job controller creates them again at "
                         f"t={_g(rec.create_at)} s",
                         {"pod_failures": rec.count, "missing": len(rec.missing), "create_at": rec.create_at})
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
            uncovered = re.search(r"resource (\S+) unavailable in ClusterQueue", text)
            asks = (f"a resource ClusterQueue {cq} has no quota for ({uncovered.group(1)})" if uncovered
                    else f"{gpus} GPUs, more than ClusterQueue {cq} can ever have")
            return Diagnosis(js.name, at, "quota", "QuotaTooSmall",
                             f"the workload asks for {asks}; it stays inadmissible: {text}",
                             {"cluster_queue": cq, "gpus": gpus})
        if cause == "QuotaExhausted":
            return Diagnosis(js.name, at, "quota", "QuotaExhausted",
                             f"quota exhausted in ClusterQueue {cq}: the workload asks for {gpus} GPUs; {text}",
                             {"cluster_queue": cq, "gpus": gpus})
        if cq == "?" and why is not None and why.code == "Inadmissible":  # no LocalQueue, or no ClusterQueue behind it
            return Diagnosis(js.name, at, "quota", "QueueMissing", f"in no ClusterQueue: {text}; Kueue leaves the "
                             "workload pending (QuotaReserved False, Inadmissible) until that queue exists", {})
        return Diagnosis(js.name, at, "quota", "Queued", f"queued in ClusterQueue {cq}: {text}", {"cluster_queue": cq})
    if layer.name == "admission_check":
        text = why.numbers.get("waiting_for", text) if why is not None else text  # what the check waits for
        return Diagnosis(js.name, at, layer.name, "AdmissionCheck", f"quota reserved; admission check not ready: {text}")
    return Diagnosis(js.name, at, layer.name, "Queued", f"waits in layer {layer.name}: {text}")


def _placement(sim, js, at: float) -> Diagnosis:
    """A job held by the placement layer (or waiting for nodes).

    Nodes launched for it come first (only the diagnosis sees the
    suppliers). Then the layer's own reason wins whenever it has a specific
    one (:data:`LAYER_CODES`): it knows why. The diagnosis adds what only the
    whole cluster knows: a supplier that will not launch a node
    (``NodePoolLimit``, ``ConsumingProvisioningRequest``) where more nodes
    would help, and the deadlock tail.
    For the generic codes (``GangCannotFit``, ``Unschedulable``) the
    diagnosis words the shortage itself, in the resources that are short.
    """
    admitted = "admitted" if sim.stack.admission else "pods pending"
    hit = awaited_at(at, js.awaited, sim.node_stages)
    waiting = [p for p in js.pods if p.node is None and not p.done]
    g = max((p.pod_set.gpus for p in waiting), default=0)
    if hit is not None:
        return _waiting_for_nodes(sim, js, at, hit, waiting, admitted)
    cap = sim.capacity
    free, largest = cap.free_ready_gpus, cap.max_free_gpus()
    numbers = {"free_gpus": free, "largest_free_block": largest, "pod_gpus": g}
    placement = sim.stack.placement
    why = (isinstance(placement, VolcanoGang) and job_valid(js)) or placement.pending_reason(sim, js)
    code = why.code if why is not None else ""
    if why is not None:
        numbers = {**why.numbers, **numbers}  # the layer's numbers, and the diagnosis's under their documented names
    if code == "WaitingForSession":
        return Diagnosis(js.name, at, "placement", "WaitingForSession", why.message, numbers)
    own = why is not None and code not in GENERIC_CODES  # the layer's own, specific reason
    blocked, limit = supplier_limit(sim, waiting, at) if not own or code in WANTS_NODES else ("", "")
    tail = f"; {limit}" if blocked == CONSUMER_CODE else f"; no node coming: {limit}" if limit else ""
    holds = js.bound and js.spec.progress == "sync"
    stuck = "; nothing can change any more: deadlock" if holds and nothing_can_change(sim.env) else ""
    if holds:
        numbers.update(bound_pods=js.bound, held_gpus=js.gpus_bound)
    if own:
        return Diagnosis(js.name, at, "placement", blocked or code, _named(js, code, why.message) + tail + stuck, numbers)
    dims = asked_dims(js.pods)
    if holds:
        bound = [p for p in js.pods if p.node is not None and not p.done]
        held = f"{js.gpus_bound} GPUs" if dims == ("gpus",) else in_words(requested(bound), dims)
        rest = ""
        if waiting:
            short = _short_dims(cap, waiting[0], dims)
            rest = (f"; {_n(len(waiting), 'pod')} of {_asks(waiting, short)} unschedulable "
                    f"({_most_free(cap, short, waiting[0].request[3])}){_apart(cap, waiting)}")
        return Diagnosis(js.name, at, "placement", blocked or "PartiallyPlaced",
                         f"{js.bound} of {len(js.pods)} pods bound hold {held} without progress{rest}{tail}{stuck}",
                         numbers)
    if code == "GangCannotFit":
        k = js.gang_size
        short = _gang_short_dims(cap, waiting, k - js.bound, dims)
        asks = "; ".join(_gang_asks(js.pods, waiting, d) for d in short)
        selector = waiting[0].request[3] if waiting else ()
        room = "; ".join(_most_and_total_free(cap, d, selector) for d in short)
        return Diagnosis(js.name, at, "placement", blocked or "GangCannotFit",
                         f"gang of {_n(k, 'pod')} ({asks}) cannot fit: {room}{_apart(cap, waiting)}{tail}",
                         {**numbers, "gang": k})
    return _unschedulable(sim, js, waiting, dims, blocked or "Unschedulable", tail, numbers, at)


#: the codes of a gang short of pods, whose words name the object that holds the gang (:func:`_named`)
SHORT_OF_PODS = ("NotEnoughPods", "WaitingForPods")


def _named(js, code: str, message: str) -> str:
    """The layer's words for a gang short of pods, naming the PodGroup (or 1.35 Workload) the input gave it.

    Coscheduling and Volcano's gang plugin name it themselves (:meth:`gangkit.model.jobs.Job.gang_label`);
    the GangScheduling plugin's words name no object. When the manifests named the
    object (``Job.gang_object``, e.g. scheduler-plugins' install guide's ``PodGroup pg1`` over Deployment
    ``pause``), the diagnosis says its name instead, as ``kubectl describe`` of that object would show it.
    """
    obj = js.spec.gang_object
    if obj is None or code not in SHORT_OF_PODS or message.startswith(obj):
        return message  # no name given, another code, or the layer's words name it already
    for who in ("PodGroup", "Workload"):
        if message.startswith(f"{who} of {js.name} "):
            return f"{obj} (of {js.name}) {message[len(who) + len(js.name) + 5:]}"
    return f"{obj} (of {js.name}): {message}"


def _waiting_for_nodes(sim, js, at: float, hit: tuple[str, str], waiting: list, admitted: str) -> Diagnosis:
    """A job counting on nodes launched for it (``hit``: the node it is charged to, and its wait bucket):
    those still in flight, and those ready with room for one of its pods."""
    hit_node, bucket = hit
    biggest = max(waiting, key=lambda p: p.pod_set.gpus).request if waiting else (0, 0.0, 0, ())
    pending: dict[str, int] = {}
    ready = 0
    for n, since in sorted(js.awaited.items()):
        if since > at:
            continue
        still = awaited_at(at, {n: since}, sim.node_stages)  # (node, bucket) while that node is not ready
        if still is not None:
            _, stage_bucket = still
            pending[stage_bucket] = pending.get(stage_bucket, 0) + 1
        else:
            st = sim.capacity.by_name.get(n)
            ready += st is not None and st.fits(*biggest)
    k = sum(pending.values())
    nodes = range(k + ready)
    doing = ", ".join(f"{c} {STAGE_VERBS.get(b, b)}" for b, c in pending.items()) if len(pending) > 1 \
        else STAGE_VERBS.get(bucket, bucket)
    ready_at = max(sim.node_stages[hit_node].values())
    return Diagnosis(js.name, at, bucket, "WaitingForNodes",
                     f"{admitted}; {k} of {_n(len(nodes), 'node')} launched for it still {doing} (last ready at t={_g(ready_at)} s)",
                     {"nodes": len(nodes), "not_ready": k, "bucket": bucket, "ready_at": ready_at})


def fit_error(cap, pod) -> tuple[str, dict[str, int]]:
    """kube-scheduler's FailedScheduling message for one pod on the ready nodes now, and its reason counts.

    The form is the scheduler's FitError (Kubernetes 1.35,
    ``pkg/scheduler/framework/types.go``): ``0/N nodes are available:``, then
    each Filter reason with the number of nodes that gave it, sorted as
    strings and joined by ", ", then ".". A node whose labels do not match
    the selector gives NodeAffinity's reason only (Filter stops at a node's
    first failing plugin); a node with too little room gives NodeResourcesFit's
    ``Insufficient <resource>`` for every resource it lacks
    (``plugins/noderesources/fit.go``); a node with room that holds a pod of
    the pod's one-per-node group gives InterPodAffinity's
    :data:`ANTI_AFFINITY_MISMATCH` (that plugin filters after
    NodeResourcesFit). With no node at all the scheduler
    says ``no nodes available to schedule pods``. Simplified: only ready
    nodes count (a node still starting is not among them), and the
    PostFilter part (``preemption: ...``) is left out. The counts are ``{}``
    when some node has room for the pod.
    """
    gpus, cpu, memory, selector = pod.request
    nodes = [st for st in cap.nodes if st.ready]
    if not nodes:
        return "no nodes available to schedule pods", {}
    reasons: dict[str, int] = {}
    avoid = avoided_nodes(pod)
    for st in nodes:
        if not st.node.matches(selector):
            lacks = [SELECTOR_MISMATCH]
        else:
            lacks = [f"Insufficient {RESOURCE_NAMES[d]}" for d in _lacking(st, gpus, cpu, memory)]
            if not lacks and st in avoid:
                lacks = [ANTI_AFFINITY_MISMATCH]
        if not lacks:
            return "", {}
        for r in lacks:
            reasons[r] = reasons.get(r, 0) + 1
    return f"0/{len(nodes)} nodes are available: " + ", ".join(sorted(f"{n} {r}" for r, n in reasons.items())) + ".", reasons


def _lacking(st, gpus: int, cpu: float, memory: int) -> list[str]:
    """The resources a node lacks for one pod (:meth:`gangkit.model.resources.Room.fits`, one resource at a time)."""
    out = []
    if gpus > st.free_gpus:
        out.append("gpus")
    if cpu and st.free_cpu is not None and cpu > st.free_cpu + TOLERANCE:
        out.append("cpu")
    if memory and st.free_memory is not None and memory > st.free_memory:
        out.append("memory")
    return out


def _unschedulable(sim, js, waiting: list, dims: tuple, code: str, tail: str, numbers: dict, at: float) -> Diagnosis:
    """Pod-by-pod placement, no pod bound: kube-scheduler's own words for the first pod no node can take now."""
    cap = sim.capacity
    no_node = not any(st.ready for st in cap.nodes)
    stuck = next((p for p in waiting if no_node or fit_error(cap, p)[1]), None)
    if stuck is None:  # each pod would fit a node on its own now (or none waits): the layer places them at its next cycle
        return Diagnosis(js.name, at, "placement", code,
                         f"{len(waiting)} of {_n(len(js.pods), 'pod')} pending; each fits on a node now{tail}", numbers)
    words, reasons = fit_error(cap, stuck)
    short = _short_dims(cap, stuck, dims)
    return Diagnosis(js.name, at, "placement", code,
                     f"{len(waiting)} of {_n(len(js.pods), 'pod')} of {_asks([stuck], short)} unschedulable "
                     f"({_most_free(cap, short, stuck.request[3])}): {words}{tail}", {**numbers, "reasons": reasons})


def _short_dims(cap, pod, dims: tuple) -> tuple:
    """The resources that keep ``pod`` off the ready nodes (GPUs first), else ``dims``."""
    gpus, cpu, memory, selector = pod.request
    short = set()
    for st in cap.nodes:
        if st.ready and st.node.matches(selector):
            short.update(_lacking(st, gpus, cpu, memory))
    return tuple(d for d in ("gpus", "cpu", "memory") if d in short) or dims


def _gang_short_dims(cap, waiting: list, needed: int, dims: tuple) -> tuple:
    """The resources in which the ready nodes hold fewer than ``needed`` of the gang's pods, each counted alone."""
    if not waiting:
        return dims
    gpus, cpu, memory, selector = max(waiting, key=lambda p: p.request[:3]).request
    asks = {"gpus": gpus, "cpu": cpu, "memory": memory}
    fits = dict.fromkeys(d for d, x in asks.items() if x)
    for d in fits:
        fits[d] = sum(int((_free(st, d) + TOLERANCE) // asks[d]) if _free(st, d) is not None else needed
                      for st in cap.nodes if st.ready and st.node.matches(selector))
    return tuple(d for d, n in fits.items() if n < needed) or dims


def _apart(cap, waiting: list) -> str:
    """``; pods of workers go one per node ...``: a one-per-node pod set whose waiting pods outnumber its nodes.

    The nodes counted are the ready ones that have room for one pod of the set
    and hold none of its group (kube-scheduler's Filter for each pod alone:
    NodeResourcesFit, NodeAffinity and InterPodAffinity). Empty when no such
    pod set is short of nodes.
    """
    out = []
    for name in dict.fromkeys(p.pod_set.name for p in waiting if p.pod_set.one_per_node):
        pods = [p for p in waiting if p.pod_set.name == name]
        avoid = avoided_nodes(pods[0])
        free = sum(1 for st in cap.nodes if st.fits(*pods[0].request) and st not in avoid)
        if free < len(pods):
            out.append(f"; pods of {name} go one per node (required pod anti-affinity on kubernetes.io/hostname): "
                       f"{_n(len(pods), 'pod')} wait, {free} of the ready nodes have room for one and hold none")
    return "".join(out)


def _free(st, d: str):
    return {"gpus": st.free_gpus, "cpu": st.free_cpu, "memory": st.free_memory}[d]


def _asks(pods: list, dims: tuple) -> str:
    """What one of ``pods`` asks for (the largest), in ``dims``: ``8 GPUs``, ``4 cpu``."""
    p = max(pods, key=lambda p: p.request[:3])
    return in_words(Resources(p.pod_set.gpus, p.pod_set.cpu, p.pod_set.memory), dims)


def _gang_asks(pods: list, waiting: list, d: str) -> str:
    """``32 GPUs, 8 per pod``: the whole gang and its largest waiting pod, in one resource."""
    total = sum(getattr(p.pod_set, d) for p in pods)
    per = max((getattr(p.pod_set, d) for p in waiting), default=0)
    if d == "gpus":
        return f"{total} GPUs, {per} per pod"
    one = in_words(Resources(**{d: per}), (d,)).removesuffix(" cpu").removesuffix(" memory")  # 4 cpu -> 4, 16Gi memory -> 16Gi
    return f"{in_words(Resources(**{d: total}), (d,))}, {one} per pod"


def _most_free(cap, dims: tuple, selector: tuple = ()) -> str:
    """``largest free block is 0 GPUs; most free on one node is 2 cpu``: the most one ready node offers."""
    return "; ".join(_most_and_total_free(cap, d, selector, total=False) for d in dims)


def _most_and_total_free(cap, d: str, selector: tuple = (), total: bool = True) -> str:
    """The most one ready node offers in resource ``d`` (and what all of them offer), on the nodes ``selector`` allows."""
    if selector:
        amounts = [_free(st, d) for st in cap.nodes if st.ready and st.node.matches(selector)]
    elif d == "gpus":  # the running figures, no scan
        amounts = None
    else:
        amounts = [_free(st, d) for st in cap.nodes if st.ready]
    if amounts is not None:
        amounts = [a for a in amounts if a is not None]
    if d == "gpus":
        most, every = (cap.max_free_gpus(), cap.free_ready_gpus) if amounts is None else (max(amounts, default=0), sum(amounts))
        return f"largest free block is {most} GPUs" + (f", {every} GPUs free in all" if total else "")
    words = f"most free on one node is {in_words(Resources(**{d: max(amounts, default=0)}), (d,))}"
    return words + (f", {in_words(Resources(**{d: sum(amounts)}), (d,))} free in all" if total else "")


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
    if counts.get("Failed", 0):
        parts.append(f"{counts['Failed']} failed")
    waiting = [(c, int(counts[c])) for c in WAITING if c in counts]
    if waiting:
        parts.append(f"{sum(n for _, n in waiting)} waiting (" + ", ".join(f"{n} {c}" for c, n in waiting) + ")")
    g = gpus
    return (f"t={_g(t)} s: " + ", ".join(parts) + f"; GPUs: {g['capacity']} = {g['useful']} useful + "
            f"{g['held_idle']} held idle + {g['free']} free + {g['not_ready']} not ready")
