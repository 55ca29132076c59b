"""Jobs and pods sent back: evictions, releases before the start, deactivations.

A layer sends a job back when it preempts it (Kueue, Volcano's preempt and
reclaim, kube-scheduler's DefaultPreemption), when a gang's pods give up
what they hold before the job runs (pods waiting at Permit, placeholders), or
when it takes the job out for good (Kueue's ``spec.active: false``,
YuniKorn's ``Hard`` style). A sync job that loses its pods restarts from its
last checkpoint; an independent job loses only the evicted pods' work.

:class:`JobStops` is a part of :class:`gangkit.engine.simulation.Simulation`, kept here so that
the engine's main module stays about arrivals, starts, finishes and cycles.
"""

from __future__ import annotations

import math

from gangkit.engine.state import JobState, PodState
from gangkit.model.reasons import Reason

__all__ = ["JobStops"]


class JobStops:
    """Evicting, releasing and deactivating jobs (a mix-in of :class:`~gangkit.engine.simulation.Simulation`)."""

    def evict(self, js: JobState, reason: Reason, to_admission: int | None = None) -> None:
        """Stop a job and recreate its pods (preemption or eviction).

        A sync job loses all its pods and restarts from its last checkpoint
        (from zero when it has none). An independent job would only lose the
        evicted pods; use :meth:`evict_pod` for that.

        With ``to_admission`` the job goes back to that admission layer
        (Kueue suspends an evicted job and deletes its pods; the layer has
        already queued it again) instead of straight back to placement.
        """
        now = self.env.now
        self.books.advance(now)
        if js.progressing and js.spec.progress == "sync":
            done = (now - js.progress_since) * js.speed  # seconds of work at full size
            js.useful_gpu_seconds += done * sum(p.pod_set.gpus for p in js.pods)
            self.books.useful_gpus -= sum(p.pod_set.gpus for p in js.pods)
            js.remaining = self._after_checkpoint(js, js.spec.run_time - js.remaining + done)
            js.progressing = False
        js.epoch += 1
        for p in js.pods:
            if p.node is not None:
                if js.spec.progress == "independent" and p.progress_since is not None:
                    self._stop_pod(p, now)
                    p.epoch += 1  # its pending finish event is void
                self._release_pod(p, now)
        if to_admission is None:
            self._requeue(js, now, reason)
            return
        js.restarts += 1
        js.placing = False
        for p in js.pods:
            p.seq = -1  # the deleted pods' queue entries are stale
        self.stack.placement.forget(js)
        if js.started_at is None and js.layer == "placement":
            self.close_wait(js, now)
        layer = self.stack.admission[to_admission]
        if js.started_at is None:
            js.layer, js.layer_enter = layer.name, now
        self.record_event("evicted", js, layer=reason.layer, detail=reason.message)
        self.books.snapshot(now)
        self.request_cycle()

    def release(self, js: JobState, reason: Reason, pods: list[PodState] | None = None) -> None:
        """Give back what pods of a job hold *before* it runs (pods waiting at Permit, placeholders).

        Not an eviction: the job has not started, no work is lost and no
        restart is counted. The pods stay with the placement layer, which
        decides when they are tried again.
        """
        if js.progressing and js.spec.progress == "sync":
            raise RuntimeError(f"placement bug: release() of {js.name}, which is running (use evict)")
        now = self.env.now
        self.books.advance(now)
        for p in js.pods if pods is None else pods:
            if p.node is not None and p.progress_since is None:
                self._release_pod(p, now, state="Released")
        self.record_event("released", js, layer=reason.layer, detail=reason.message)
        self.books.snapshot(now)
        self.request_cycle()

    def deactivate(self, js: JobState, reason: Reason) -> None:
        """Take a job out of the run for good (Kueue's ``spec.active: false``); it holds nothing.

        When the placement layer takes it out (YuniKorn's ``Hard`` style
        fails the application), the admission layers give back what they
        gave it, as for a Job that failed (Kueue finishes the Workload of a
        failed Job): its quota is freed and Kueue's waitForPodsReady timer
        does not requeue it. An admission layer that deactivates a job has
        already given back its own (Kueue's deactivate releases the quota).
        """
        now = self.env.now
        self.books.advance(now)
        for p in js.pods:
            if p.node is not None:
                self._release_pod(p, now)
        js.placing = False
        self.stack.placement.forget(js)
        if reason.layer not in {layer.name for layer in self.stack.admission}:
            for layer in self.stack.admission:
                layer.release(js, now)
        if js.started_at is None and js.layer:
            self.close_wait(js, now)
            js.layer = ""
            self.books.waiting_jobs -= 1
        elif js.started_at is not None:
            self.books.running_jobs -= 1
        js.state = "Deactivated"
        js.reason = reason
        js.deactivated_at = now
        self.unfinished -= 1
        self.last_end = max(self.last_end, now)
        self.record_event("deactivated", js, layer=reason.layer, detail=reason.message)
        self._retire(js)
        self.books.snapshot(now)
        self.request_cycle()

    def evict_pod(self, pod: PodState, reason: Reason) -> None:
        """Evict one pod. For a sync job the whole job stops (see :meth:`evict`)."""
        js = pod.job
        if js.spec.progress == "sync":
            self.evict(js, reason)
            return
        now = self.env.now
        self.books.advance(now)
        self._stop_pod(pod, now)
        pod.epoch += 1
        self._release_pod(pod, now)
        self._requeue(js, now, reason, pods=[pod])

    def _stop_pod(self, pod: PodState, now: float) -> None:
        done = now - pod.progress_since
        pod.job.useful_gpu_seconds += done * pod.pod_set.gpus
        self.books.useful_gpus -= pod.pod_set.gpus
        js = pod.job
        pod.remaining = self._after_checkpoint(js, js.spec.run_time - pod.remaining + done)
        pod.progress_since = None

    def _after_checkpoint(self, js: JobState, progress_made: float) -> float:
        """Work left after an eviction: everything since the last checkpoint is lost."""
        every = js.spec.checkpoint_interval
        kept = 0.0 if not every else math.floor(progress_made / every) * every
        return float(js.spec.run_time) - kept

    def _requeue(self, js: JobState, now: float, reason: Reason, pods: list[PodState] | None = None) -> None:
        js.restarts += 1
        self.record_event("evicted", js, layer=reason.layer, detail=reason.message)
        for p in pods if pods is not None else js.pods:
            p.created = now
            p.seq = self._pod_seq
            self._pod_seq += 1
        self.record_event("requeued", js)
        self.stack.placement.requeue(js, now)
        self.books.snapshot(now)
        self.request_cycle()
