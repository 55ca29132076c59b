"""Restart churn: started pods that give up waiting for their siblings, and the Job controller that replaces them.

Picture a relay team at the start line. Each runner who arrives waits for
the whole team; a runner kept waiting longer than the rules allow is sent
off, and the coach sends a new runner after a pause that doubles each time.
A team that loses more runners than its allowance is out of the race. While
the coach waits, the lane the runner stood in is free for anyone else.

That is what follows a pod-level deadlock in a real cluster, where a sync
job holds some of its pods and waits for the others:

1. **The launcher gives up.** A distributed training launcher (PyTorch 2's
   ``torchrun``, c10d rendezvous backend) waits in each pod until every
   worker has joined the rendezvous, and raises ``RendezvousTimeoutError``
   when its join timeout passes (``--rdzv-conf join_timeout=...``, 600 s by
   default: PyTorch ``torch/distributed/elastic/rendezvous/dynamic_rendezvous.py``,
   ``RendezvousTimeout``; the deadline is taken when the pod's agent starts
   its ``next_rendezvous``). The container exits non-zero and the pod
   (``restartPolicy: Never``) is Failed. gangkit: each pod of a ``sync`` job
   with a ``rendezvous_timeout`` starts its clock when it starts running;
   when the clock runs out and the job's pods are not all running, the pod
   fails (reason ``RendezvousTimeout``, gangkit's code) and its GPUs are
   free at once, a capacity change after which waiting work is tried again.
   Once all pods run, the rendezvous is complete and no clock matters any
   more, until an eviction restarts the job (its pods' clocks start again
   when they run again).
2. **The Job controller counts and replaces** (Kubernetes 1.35,
   ``pkg/controller/job``: ``job_controller.go`` and ``backoff_utils.go``;
   concepts/workloads/controllers/job, "Pod backoff failure policy"). Every
   failed pod adds one to the Job's ``status.failed``; when that count
   exceeds ``spec.backoffLimit`` (default 6) the Job is Failed with reason
   ``BackoffLimitExceeded`` and its remaining pods are deleted. Otherwise
   the pods that are missing are created again, together, once the backoff
   since the *last* failure has passed: 10 s x 2**(n-1) for the n-th failure
   since the last pod success, capped (:func:`backoff_delay`). A replacement
   is a new Pending pod: every layer sees it as a new pod of that job
   (``PlacementLayer.requeue``, as for any recreated pod).

The cap: the documentation says "capped at six minutes"; the controller's
code in 1.35 caps at ``MaxJobPodFailureBackOff`` = 10 minutes
(``job_controller.go``). gangkit follows the code (:data:`MAX_POD_FAILURE_BACKOFF`).
With the default backoffLimit of 6 the cap is never reached (the sixth delay
is 320 s).

How it is wired: this module is part of the engine. :class:`RestartChurn`
is made by :meth:`~gangkit.engine.simulation.Simulation.run` only when a job
of the scenario has a rendezvous timeout; it then takes the engine's
``bind``, ``evict``, ``deactivate`` and scheduling cycle and adds its timers
around them, and uses the engine's own calls (release one pod, give a pod
its place in the creation order, retire a job). A run without rendezvous
timeouts executes none of this module.

A pod whose replacement is not created yet is kept in its job's pod list,
unbound, with ``done`` set: no layer places it (every layer skips done pods)
and the job cannot start without it. Its replacement clears the flag.

Simplified (docs/reference/simulator.md, "Restart churn"): a Volcano Job
(``controller: volcano``) gets the same batch/v1 rule (Volcano's ``maxRetry``
and lifecycle policies are not modelled); only rendezvous
timeouts fail pods (an eviction or preemption restarts the job as before and
counts no failure, although Kubernetes counts a preempted pod as failed unless
a podFailurePolicy ignores it); ``restartPolicy: OnFailure`` (container
restarts, CrashLoopBackOff), ``backoffLimitPerIndex``, ``podFailurePolicy``,
``podReplacementPolicy`` and the pods' termination grace period are not
modelled; the pods deleted when the Job fails are not added to its failure
count (Kubernetes counts them in ``status.failed`` too); an eviction recreates
every pod at once, without the Job controller's backoff; a pod counts as
started when it is bound, unless its placement layer says that it holds the
job's bound pods before their start (the optional
:meth:`~gangkit.engine.sockets.PlacementLayer.started`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from gangkit.model.reasons import Reason

if TYPE_CHECKING:  # pragma: no cover
    from gangkit.engine.state import JobState, NodeState, PodState

#: The first pod failure backoff, seconds (``DefaultJobPodFailureBackOff``, Kubernetes 1.35 job controller).
POD_FAILURE_BACKOFF = 10.0
#: The longest pod failure backoff, seconds (``MaxJobPodFailureBackOff``: 10 minutes in the controller's code).
MAX_POD_FAILURE_BACKOFF = 600.0
#: Doublings after which the backoff is at its cap: the least k with 10 s x 2**k >= the cap.
_DOUBLINGS_TO_CAP = next(k for k in range(64) if POD_FAILURE_BACKOFF * 2 ** k >= MAX_POD_FAILURE_BACKOFF)


def backoff_delay(failures: int) -> float:
    """Seconds the Job controller waits after the ``failures``-th failed pod before creating pods again.

    min(10 s x 2**(failures-1), cap), with the exponent cut at the cap first,
    so that any count is cheap and cannot overflow.

    >>> [backoff_delay(n) for n in (1, 2, 3, 6, 7, 10**9)]
    [10.0, 20.0, 40.0, 320.0, 600.0, 600.0]
    """
    if failures < 1:
        return 0.0
    return min(POD_FAILURE_BACKOFF * 2 ** min(failures - 1, _DOUBLINGS_TO_CAP), MAX_POD_FAILURE_BACKOFF)


@dataclass
class JobFailures:
    """What the Job controller knows of one job: its failed pods, and the pods it has yet to create again."""

    count: int = 0  # status.failed: pods failed so far (never reset: a sync job has no pod success before its end)
    failed_pod_gpu_seconds: float = 0.0  # GPU-seconds its pods held before they failed (all held idle)
    failed_at: float | None = None  # when the Job was Failed for good
    create_at: float | None = None  # when the missing pods are created again (None: none missing)
    missing: list = field(default_factory=list)  # failed pods whose replacement is not created yet
    token: int = 0  # bumped to void a pending creation (a newer failure, an eviction, the Job's end)


class RestartChurn:
    """Rendezvous clocks for the started pods of sync jobs, and the Job controller's failure handling (module doc)."""

    def __init__(self, sim):
        self.sim = sim  # the engine (gangkit.engine.simulation.Simulation), whose own calls this module uses
        self.jobs: dict[int, JobFailures] = {}  # job index -> its record, from its first failure on
        self.pod_failures = 0
        self.failed_pod_gpu_seconds = 0.0
        self._armed: dict = {}  # pod -> the bind instant its pending clock belongs to
        self._held: dict[int, "JobState"] = {}  # jobs with bound pods their placement layer holds before the start
        self._started = getattr(sim.stack.placement, "started", None)
        # the engine's calls this module adds to (instance attributes shadow the methods for this run only)
        self._bind, self._evict, self._deactivate, self._cycle = sim.bind, sim.evict, sim.deactivate, sim._cycle
        sim.bind, sim.evict, sim.deactivate, sim._cycle = self.bind, self.evict, self.deactivate, self.cycle

    def record(self, js: "JobState") -> JobFailures | None:
        """The job's failure record (None while none of its pods has failed)."""
        return self.jobs.get(js.index)

    # ------------------------------------------------------------ the clocks
    def bind(self, pod: "PodState", node: "NodeState", taken: bool = False) -> None:
        """Bind as the engine does; a pod of a sync job whose rendezvous is not complete starts its clock."""
        self._bind(pod, node, taken)
        js = pod.job
        timeout = js.spec.rendezvous_timeout
        if timeout is None or js.progressing or js.spec.progress != "sync":
            return
        if self._started is None or self._started(js):
            self._arm(pod, self.sim.now + timeout)
        else:
            self._held[js.index] = js

    def cycle(self, now: float) -> None:
        """The engine's scheduling cycle; then the pods a placement layer stopped holding start their clocks."""
        self._cycle(now)
        if not self._held:
            return
        for index, js in list(self._held.items()):
            if js.state != "Pending" or js.progressing or not js.bound:
                del self._held[index]  # ended, complete, or released (a later bind looks again)
            elif self._started(js):
                del self._held[index]
                for p in js.pods:
                    if p.node is not None and self._armed.get(p) != p.bound_at:
                        self._arm(p, now + js.spec.rendezvous_timeout)

    def _arm(self, pod: "PodState", at: float) -> None:
        bound_at, epoch = pod.bound_at, pod.job.epoch
        self._armed[pod] = bound_at
        self.sim.call_at(at, lambda t: self._timed_out(pod, bound_at, epoch, t))

    def _timed_out(self, pod: "PodState", bound_at: float, epoch: int, now: float) -> None:
        if self._armed.get(pod) == bound_at:
            del self._armed[pod]
        js = pod.job
        if (pod.node is None or pod.bound_at != bound_at or js.epoch != epoch or js.progressing
                or js.state != "Pending"):
            return  # released, rebound, evicted, complete or ended since: this clock no longer counts
        self.fail_pod(pod, now)

    # ------------------------------------------------------- the Job controller
    def fail_pod(self, pod: "PodState", now: float) -> None:
        """The pod's launcher gave up: the pod fails, its GPUs are free, the Job counts it and backs off."""
        sim = self.sim
        js = pod.job
        rec = self.jobs.setdefault(js.index, JobFailures())
        held = pod.pod_set.gpus * (now - pod.bound_at)
        node = pod.node.node.name
        running = js.bound
        sim.books.advance(now)
        sim._release_pod(pod, now, state="Failed")
        pod.done = True  # it no longer exists: no layer places it until the Job controller creates it again
        rec.missing.append(pod)
        rec.count += 1
        rec.failed_pod_gpu_seconds += held
        self.pod_failures += 1
        self.failed_pod_gpu_seconds += held
        sim.last_progress = now  # churn moves the job towards an end (its backoffLimit): not a stall
        why = Reason("launcher", "RendezvousTimeout",
                     f"{pod.name} waited {js.spec.rendezvous_timeout:g} s for the rendezvous with {running} of "
                     f"{len(js.pods)} pods running; failed pod {rec.count} of the Job (backoffLimit "
                     f"{js.spec.backoff_limit})", {"running": running, "pods": len(js.pods), "failed": rec.count})
        sim.record_event("pod_failed", js, pod=pod.name, node=node, layer=why.layer, detail=why.message)
        if rec.count > js.spec.backoff_limit:
            self._fail_job(js, rec, now)
            return
        rec.token += 1
        token = rec.token
        rec.create_at = now + backoff_delay(rec.count)
        sim.call_at(rec.create_at, lambda t: self._recreate(js, token, t))
        sim.books.snapshot(now)
        sim.request_cycle()

    def _recreate(self, js: "JobState", token: int, now: float) -> None:
        """The backoff has passed: the missing pods are created again, together, as new Pending pods."""
        rec = self.jobs.get(js.index)
        if rec is None or rec.token != token or not rec.missing or js.state != "Pending" or not js.placing:
            return
        sim = self.sim
        for p in sorted(rec.missing, key=lambda p: p.index):
            p.done = False
            p.created = now
            p.seq = sim._pod_seq
            sim._pod_seq += 1
            sim.record_event("pod_created", js, pod=p.name, layer="job-controller")
        rec.missing = []
        rec.create_at = None
        sim.stack.placement.requeue(js, now)
        sim.request_cycle()

    def _fail_job(self, js: "JobState", rec: JobFailures, now: float) -> None:
        """More pods failed than the backoffLimit: the Job is Failed, its pods are deleted, it never runs again."""
        sim = self.sim
        books = sim.books
        for p in js.pods:
            if p.node is not None:
                sim._release_pod(p, now, state="Deleted")
            p.done = True  # deleted, the pending ones too
        rec.missing = []
        rec.create_at = None
        rec.token += 1
        rec.failed_at = now
        self._held.pop(js.index, None)
        js.placing = False
        sim.stack.placement.forget(js)
        for layer in sim.stack.admission:
            layer.release(js, now)
        if js.started_at is None and js.layer:
            sim.close_wait(js, now)
            js.layer = ""
            books.waiting_jobs -= 1
        elif js.started_at is not None:
            books.running_jobs -= 1
        js.state = "Failed"
        js.reason = Reason("job-controller", "BackoffLimitExceeded",
                           f"Job has reached the specified backoff limit: {rec.count} failed pods, backoffLimit "
                           f"{js.spec.backoff_limit}", {"failed": rec.count, "backoff_limit": js.spec.backoff_limit})
        sim.unfinished -= 1
        sim.last_end = max(sim.last_end, now)
        sim.last_progress = now
        sim.record_event("failed", js, layer=js.reason.layer, detail=js.reason.message)
        sim._retire(js, ended_at=now)
        books.snapshot(now)
        sim.request_cycle()

    # -------------------------------------------- a restart or an end from elsewhere
    def evict(self, js: "JobState", reason: Reason, to_admission: int | None = None) -> None:
        """An eviction restarts the whole job: its missing pods come back with the others, no backoff pending."""
        self._restore(js)
        self._evict(js, reason, to_admission)

    def deactivate(self, js: "JobState", reason: Reason) -> None:
        self._restore(js)
        self._deactivate(js, reason)

    def _restore(self, js: "JobState") -> None:
        self._held.pop(js.index, None)
        rec = self.jobs.get(js.index)
        if rec is None:
            return
        rec.token += 1
        for p in rec.missing:
            p.done = False
        rec.missing = []
        rec.create_at = None
