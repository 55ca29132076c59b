"""Kueue's ProvisioningRequest admission check: capacity for the whole gang before admission.

Quota is a budget, not machines. With an AdmissionCheck of controller
``kueue.x-k8s.io/provisioning-request``, a workload that got its quota
(QuotaReserved) is not admitted yet: Kueue first asks the node autoscaler
for room for *all* its pods at once, through a ProvisioningRequest, and
admits the workload (its pods are created) only when the request reports
``Provisioned``. The wait in between is the *admission check* wait::

    quota reserved ──> ProvisioningRequest (all pods) ──> Provisioned ──> Admitted: pods created,
        │                     │                                          placed on the new nodes
        │                     └── Failed ──> check Retry: workload evicted, quota released,
        │                                    requeued after backoff (60 s, 120 s, 240 s, ...);
        │                                    Rejected after backoffLimitCount retries ──> Deactivated
        └── the quota stays reserved while the request waits (Kueue never admits part of it)

Rules, and the Kueue behaviour each one models
(``pkg/controller/admissionchecks/provisioning/controller.go``,
``pkg/workload/admissionchecks.go``, ``pkg/controller/core/workload_controller.go``):

- **One request per attempt**: when the workload reserves quota, a
  ProvisioningRequest named ``<workload>-<check>-<attempt>`` is created
  (attempt = the check's retry count + 1: a preemption starts the same
  attempt again, only a Retry counts) with
  one pod per admitted pod (the pods' requests and the node labels of the
  assigned flavor), class from the :class:`ProvisioningRequestConfig`.
- **Provisioned** -> the check is Ready -> the workload is Admitted (and
  waitForPodsReady's timer starts then, not at quota reservation).
- **Failed** on attempt ``n``: if ``n <= backoffLimitCount`` the check goes
  to Retry with ``requeueAfterSeconds = min(backoffBaseSeconds * 2**(n-1),
  backoffMaxSeconds)``; the workload is evicted (reason
  ``AdmissionCheck``), its quota released, and it queues again by its
  eviction time once the backoff is over; its next quota reservation creates
  attempt ``n + 1``. Otherwise the check is Rejected and the workload is
  deactivated (``spec.active: false``).
- Defaults are the ProvisioningRequestConfig CRD's: ``backoffLimitCount``
  3, ``backoffBaseSeconds`` 60, ``backoffMaxSeconds`` 1800 (so a request may
  be tried 4 times, waiting 60, 120 and 240 s between attempts).

Simplifications: no jitter on the backoff; ``managedResources`` and
``podSetMergePolicy`` are not modelled (every pod set is in the request);
``podSetUpdates`` are not modelled (the request's nodes carry no extra
labels, as with ``best-effort-atomic-scale-up``); ``BookingExpired`` and
``CapacityRevoked`` are not modelled for admitted workloads (Kueue ignores
them once the workload is admitted, unless it is later evicted).
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from gangkit.engine.sockets import AdmissionLayer
from gangkit.model.backoff import doubling
from gangkit.model.errors import Problem, ScenarioError
from gangkit.model.reasons import Reason
from gangkit.supply.provisioning_request import BEST_EFFORT_ATOMIC, PROVISIONING_CLASSES, ProvisioningRequest

CONTROLLER = "kueue.x-k8s.io/provisioning-request"
EVICTED_BY_ADMISSION_CHECK = "AdmissionCheck"


@dataclass(frozen=True)
class ProvisioningRequestConfig:
    """Kueue's ProvisioningRequestConfig ``spec`` (the parts gangkit models), with the CRD's defaults."""

    name: str = "provreq-config"
    provisioning_class: str = BEST_EFFORT_ATOMIC
    backoff_limit_count: int = 3
    backoff_base_seconds: float = 60.0
    backoff_max_seconds: float = 1800.0

    def __post_init__(self) -> None:
        if self.provisioning_class not in PROVISIONING_CLASSES:
            raise ValueError(f"ProvisioningRequestConfig {self.name}: spec.provisioningClassName: expected one of "
                             f"{', '.join(PROVISIONING_CLASSES)}, got {self.provisioning_class!r}")
        if not isinstance(self.backoff_limit_count, int) or self.backoff_limit_count < 0:
            raise ValueError(f"ProvisioningRequestConfig {self.name}: spec.retryStrategy.backoffLimitCount: "
                             f"expected a whole number >= 0, got {self.backoff_limit_count!r}")

    def retry_after(self, attempt: int) -> float:
        """Seconds the workload waits after its ``attempt``-th request failed (attempt >= 1)."""
        return doubling(self.backoff_base_seconds, attempt, self.backoff_max_seconds)


@dataclass(frozen=True)
class AdmissionCheck:
    """Kueue's AdmissionCheck: a named check, its controller and its parameters (a ProvisioningRequestConfig)."""

    name: str = "provisioning"
    controller_name: str = CONTROLLER
    config: ProvisioningRequestConfig = ProvisioningRequestConfig()


class ProvisioningRequestCheck(AdmissionLayer):
    """The ``admission_check`` layer of ``kueue+provreq+autoscaler``: Kueue's provisioning admission check.

    It sits behind the :class:`~gangkit.kueue.layer.KueueLayer` (which
    reserves quota) and in front of placement; ``autoscaler`` is the
    :class:`~gangkit.supply.autoscaler.ClusterAutoscaler` that serves the requests.
    """

    name = "admission_check"

    def __init__(self, kueue_layer, autoscaler, check: AdmissionCheck | None = None):
        if kueue_layer.kueue.tas is not None:
            raise ScenarioError([Problem("Kueue setup", "flavors", "a ProvisioningRequest admission check together with "
                                         "topology-aware scheduling is not modelled yet (Kueue assigns the topology "
                                         "after provisioning): use a stack without the check")])
        self.kueue_layer = kueue_layer
        self.autoscaler = autoscaler
        self.check = check or AdmissionCheck()
        self.config = self.check.config
        kueue_layer.admission_checks = True  # waitForPodsReady counts from admission, after this check
        self._arrived: list = []  # jobs whose quota was just reserved: a request is made in the next cycle
        self._waiting: dict[int, tuple] = {}  # job index -> (job, request, entered)
        self._attempts: dict[int, int] = {}  # job index -> attempt number of its current request
        self._retries: dict[int, int] = {}  # job index -> times the check went to Retry
        self._rows: list[tuple] = []
        self._wait_rows: list[tuple] = []

    # -- the AdmissionLayer socket ------------------------------------------------------
    def submit(self, js, now: float) -> None:
        self._arrived.append((js, now))

    def cycle(self, sim, now: float):
        for js, entered in self._arrived:
            self._request(sim, js, entered, now)
        self._arrived = []
        admitted, done = [], []
        for idx, (js, pr, entered) in self._waiting.items():
            wl = self.kueue_layer.workloads.get(js.index)
            if wl is None or wl.admission is None or js.layer != self.name:  # preempted or gone meanwhile
                done.append(idx)
                self.autoscaler.cancel_request(pr)
                continue
            if pr.state == "Provisioned":
                done.append(idx)
                admitted.append(js)
                self._rows.append((now, wl.key, pr.name, "Ready", pr.message))
                self._wait_rows.append((now, wl.key, wl.admission.cluster_queue, now - entered))
                self.kueue_layer.checks_ready(sim, wl, now)
            elif pr.state == "Failed":
                done.append(idx)
                self._failed(sim, js, wl, pr, now)
        for idx in done:
            self._waiting.pop(idx, None)
        return admitted

    def resume(self, sim, js, now: float) -> None:
        """A job a live cluster's snapshot shows admitted: its check is Ready (its ProvisioningRequest, if any,
        was provisioned before the snapshot and is not modelled); waitForPodsReady counts from now."""
        wl = self.kueue_layer.workloads.get(js.index)
        if wl is not None and wl.admission is not None and js.spec.snapshot.bound < len(js.spec.snapshot.nodes):
            self.kueue_layer.checks_ready(sim, wl, now)

    def release(self, js, now: float) -> None:
        entry = self._waiting.pop(js.index, None)
        if entry is not None:
            self.autoscaler.cancel_request(entry[1])
        for pr in self.autoscaler.requests_of(js):
            self.autoscaler.cancel_request(pr)
        self._attempts.pop(js.index, None)
        self._retries.pop(js.index, None)

    def pending_reason(self, js) -> Reason | None:
        entry = self._waiting.get(js.index)
        if entry is None:
            return None
        pr = entry[1]
        gpus = sum(p[0] for p in pr.pods)
        detail = f": {pr.message}; CA retries at t={pr.next_try:g} s" if pr.message else ""
        waiting_for = f"waiting for ProvisioningRequest {pr.name} ({len(pr.pods)} pods, {gpus} GPUs) to be provisioned{detail}"
        return Reason("admission_check", "ProvisioningRequestPending", f"quota reserved; {waiting_for}",
                      {"attempt": self._attempts.get(js.index, 0), "waiting_for": waiting_for})

    # -- the controller --------------------------------------------------------------------
    def _request(self, sim, js, entered: float, now: float) -> None:
        attempt = self._retries.get(js.index, 0) + 1  # Kueue: the check's retryCount + 1 (a preemption does not count)
        self._attempts[js.index] = attempt
        wl = self.kueue_layer.workloads.get(js.index)
        admitted = js.admitted  # the counts and flavors' labels of the quota reserved (gangkit.engine.admitted)
        counted = admitted is not None and wl is not None and wl.admission is not None
        pods, groups = [], []
        for ps in js.spec.pod_sets:
            selector = dict(ps.node_selector)
            if admitted is not None:
                selector.update(admitted.node_selector.get(ps.name, {}))
            req = (ps.gpus, ps.cpu or 0.0, ps.memory or 0, tuple(sorted(selector.items())))
            n = admitted.count(ps) if counted else ps.count
            pods.extend([req] * n)
            groups.extend([(js.index, ps.name) if ps.one_per_node else None] * n)  # as gangkit.supply.apart.group_of
        pr = ProvisioningRequest(f"{js.spec.name}-{self.check.name}-{attempt}", pods, self.config.provisioning_class, job=js,
                                 on_change=lambda _pr: sim.request_cycle(), groups=groups if any(groups) else None)
        self._waiting[js.index] = (js, pr, entered)
        self._rows.append((now, wl.key if wl is not None else js.name, pr.name, "Pending", f"attempt {attempt}"))
        self.autoscaler.submit_request(sim, pr, now)

    def _failed(self, sim, js, wl, pr, now: float) -> None:
        attempt = self._attempts.get(js.index, 1)
        sim.charge_wait(js, now)  # the wait in this check so far, before the job goes back to the queue
        if attempt <= self.config.backoff_limit_count:
            self._retries[js.index] = attempt
            after = self.config.retry_after(attempt)
            requeue_at = now + after
            message = (f'AdmissionCheck "{self.check.name}" in Retry state: attempt {attempt} failed ({pr.reason}: {pr.message}); '
                       f"retry {attempt} of {self.config.backoff_limit_count} after {after:g} s")
            self._rows.append((now, wl.key, pr.name, "Retry", message))
            why = Reason("admission_check", "AdmissionCheckRetry", message, {"requeue_at": requeue_at, "attempt": attempt})
            kueue, recorder = self.kueue_layer.kueue, self.kueue_layer.recorder
            cq = wl.admission.cluster_queue
            sim.evict(js, why, to_admission=0)
            recorder.eviction(cq, EVICTED_BY_ADMISSION_CHECK)
            kueue.now = max(kueue.now, now)
            kueue.evict(wl, EVICTED_BY_ADMISSION_CHECK, requeue_at=requeue_at, order_time=now)
            recorder.sample(now)
            sim.call_at(requeue_at, lambda t: (kueue.backoff_expired(wl, t), sim.request_cycle()))
            return
        message = (f'AdmissionCheck "{self.check.name}" in Rejected state: attempt {attempt} failed ({pr.reason}: {pr.message}); '
                   f"backoffLimitCount {self.config.backoff_limit_count} used up")
        self._rows.append((now, wl.key, pr.name, "Rejected", message))
        why = Reason("admission_check", "AdmissionCheckRejected", message, {"attempt": attempt})
        self.kueue_layer.kueue.deactivate(wl, message)
        self.kueue_layer.recorder.sample(now)
        sim.deactivate(js, why)

    # -- metrics ------------------------------------------------------------------------------
    def metrics(self) -> dict:
        """Kueue's admission check wait time, and the check's state changes (gangkit's own table)."""
        return {
            "kueue_admission_checks_wait_time_seconds": pd.DataFrame(
                self._wait_rows, columns=["time_s", "workload", "cluster_queue", "wait_s"]).astype({"time_s": float}),
            "gangkit_admission_check_states": pd.DataFrame(
                self._rows, columns=["time_s", "workload", "provisioning_request", "state", "message"]).astype({"time_s": float}),
        }
