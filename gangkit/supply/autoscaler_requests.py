"""cluster-autoscaler's ProvisioningRequests: created, served on its scans, booked, expired.

The rules (cluster-autoscaler 1.36 with ``--enable-provisioning-requests``;
the module docstring of :mod:`gangkit.supply.autoscaler` tells them in full,
:mod:`gangkit.supply.provisioning_request` gives the objects and sources):
a ProvisioningRequest scan serves the oldest request; class
``best-effort-atomic-scale-up`` is Provisioned when its pods fit on existing
or upcoming capacity, or when one node group can take all of the rest within
``max_size`` (all or nothing, the scale-up requested at once); class
``check-capacity`` counts existing ready capacity only. A request not
provisioned is tried again after a doubling backoff (1 min to 10 min) and
Failed (``Expired``) after ``provisioning_request_expiry``; a Provisioned
request's booking ends with ``BookingExpired`` (10 minutes, or its pods
bound).

:class:`ProvisioningRequests` is the part of
:class:`~gangkit.supply.autoscaler.ClusterAutoscaler` that does it; its run
state (the requests, the rows of its table) is the autoscaler run object's.
"""

from __future__ import annotations

from gangkit.model.backoff import doubling
from gangkit.model.precision import TOLERANCE
from gangkit.supply.binpacking import place
from gangkit.supply.expander import choose
from gangkit.supply.provisioning_request import (
    BEST_EFFORT_ATOMIC,
    BOOKING,
    BOOKING_CONSUMED,
    PROVISIONING_CLASSES,
    RESERVATION_EXPIRED,
    ProvisioningRequest,
)


class ProvisioningRequests:
    """The ProvisioningRequests a cluster-autoscaler serves (see the module docstring)."""

    def start(self, sim, jobs: list) -> None:
        """The ProvisioningRequests the scenario applies directly: each created at its ``create_time``, its
        consumers the jobs of its namespace whose pods name it."""
        self._bind(sim)
        by_key = {}
        for spec in getattr(sim.scenario, "provisioning_requests", ()):
            pr = spec.request()
            by_key[(spec.namespace or "default", spec.name)] = pr
            sim.call_at(spec.create_time, lambda t, pr=pr: self.submit_request(sim, pr, t))
        for i, j in enumerate(jobs):
            pr = by_key.get((j.namespace or "default", j.consume_provisioning_request))
            if pr is not None:
                pr.consumers.append(i)

    def submit_request(self, sim, pr: ProvisioningRequest, now: float) -> None:
        """A new ProvisioningRequest (Kueue's admission check created it, or a user applied it)."""
        self._bind(sim)
        if pr.provisioning_class not in PROVISIONING_CLASSES:
            raise ValueError(f"ProvisioningRequest {pr.name}: provisioningClassName: expected one of "
                             f"{', '.join(PROVISIONING_CLASSES)}, got {pr.provisioning_class!r}")
        pr.created = now
        pr.next_try = now
        self._requests.append(pr)
        self._provreq_rows.append((now, pr.name, "Created", "", len(pr.pods)))
        self._wake(sim, now)

    def cancel_request(self, pr: ProvisioningRequest) -> None:
        """The request's workload finished or left: forget it and release its booking."""
        if pr in self._requests:
            self._requests.remove(pr)
        for n in self._nodes.values():
            if n.request is pr:
                n.request = None

    def requests_of(self, js) -> list[ProvisioningRequest]:
        """The ProvisioningRequests this autoscaler holds for job ``js``."""
        return [pr for pr in self._requests if pr.job is js]

    def _consumer_jobs(self, pr: ProvisioningRequest) -> list:
        """The job states whose pods consume ``pr``: its Kueue workload's job, or the jobs naming it."""
        if pr.job is not None:
            return [pr.job]
        sim = self._sim
        jobs = [sim.jobs[i] if sim.jobs else sim.live.get(i) for i in pr.consumers]
        return [js for js in jobs if js is not None]

    def _consumed(self, pr: ProvisioningRequest) -> int:
        """How many pods consuming ``pr`` are bound (CA counts the pods on nodes that name it)."""
        return sum(1 for js in self._consumer_jobs(pr) for p in js.pods if p.node is not None)

    def _kueue_consumers(self) -> set:
        """The jobs (their ids) of Kueue's requests: their pods carry the consume annotation (Kueue's podSetUpdates)."""
        return {id(pr.job) for pr in self._requests if pr.job is not None}

    def _expire_bookings(self, now: float) -> None:
        """CA's BookingExpired: the 10-minute reservation is over, or as many pods as asked for are bound."""
        for pr in self._requests:
            if pr.state != "Provisioned" or pr.booking_expired:
                continue
            if now >= pr.provisioned_at + BOOKING - TOLERANCE:
                pr.booking_expired = RESERVATION_EXPIRED
            elif self._consumed(pr) >= len(pr.pods):
                pr.booking_expired = BOOKING_CONSUMED
            else:
                continue
            self._provreq_rows.append((now, pr.name, "BookingExpired", pr.booking_expired, len(pr.pods)))

    def _set_state(self, pr: ProvisioningRequest, state: str, reason: str, message: str, now: float) -> None:
        pr.state, pr.reason, pr.message = state, reason, message
        if state == "Provisioned":
            pr.provisioned_at = now
        elif state == "Failed":
            pr.failed_at = now
        self._provreq_rows.append((now, pr.name, state, reason, len(pr.pods)))
        if pr.on_change is not None:
            pr.on_change(pr)

    def _booked(self, pr: ProvisioningRequest, now: float) -> bool:
        """Is the capacity found for ``pr`` still booked for its pods (until BookingExpired, while its nodes live)?"""
        return (pr.state == "Provisioned" and not pr.booking_lost and not pr.booking_expired
                and now < pr.provisioned_at + BOOKING - TOLERANCE)

    def _serve_request(self, sim, pr: ProvisioningRequest, now: float) -> bool:
        pr.tries += 1
        rooms = self._room(sim, include_upcoming=pr.provisioning_class == BEST_EFFORT_ATOMIC)
        held = {st.node.name: st.pods for st in sim.capacity.nodes} if pr.groups else None
        left, where = place(rooms, pr.pods, pr.groups, held)
        if not left:
            pr.nodes = sorted(set(where.values()))
            for name in pr.nodes:
                if name in self._nodes:
                    self._nodes[name].request = pr
            self._set_state(pr, "Provisioned", "CapacityIsFound", "capacity is found in the cluster", now)
            return False
        if pr.provisioning_class == BEST_EFFORT_ATOMIC:
            rest = [pr.pods[i] for i in left]
            options = self._options(rest, now, atomic=True, groups=[pr.groups[i] for i in left] if pr.groups else None)
            if options:
                g, count, _, _ = choose(self.expander, options, sim.rng)
                names = self._launch(sim, g, count, now, request=pr)
                for name in set(where.values()):
                    if name in self._nodes:
                        self._nodes[name].request = pr
                pr.nodes = sorted(set(where.values())) + names
                self._set_state(pr, "Provisioned", "CapacityIsProvisioned",
                                f"scale-up of node group {g.name} by {count} requested for all {len(pr.pods)} pods", now)
                return True
        gpus = sum(pr.pods[i][0] for i in left)
        backoff = doubling(self.provisioning_request_initial_backoff, pr.tries, self.provisioning_request_max_backoff)
        pr.next_try = now + backoff
        why = ("no node group can hold all of them within its max size" if pr.provisioning_class == BEST_EFFORT_ATOMIC
               else "check-capacity only counts existing nodes")
        pr.reason, pr.message = "CapacityIsNotFound", f"{len(left)} of {len(pr.pods)} pods ({gpus} GPUs) do not fit: {why}"
        self._provreq_rows.append((now, pr.name, "Pending", "CapacityIsNotFound", len(pr.pods)))
        return False

    def _expire_requests(self, now: float) -> None:
        for pr in list(self._requests):
            if pr.state == "Pending" and now >= pr.created + self.provisioning_request_expiry - TOLERANCE:
                self._requests.remove(pr)
                self._set_state(pr, "Failed", "Expired",
                                f"not provisioned within {self.provisioning_request_expiry:g} s; {pr.message or 'no capacity'}", now)
