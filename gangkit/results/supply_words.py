"""Why no node is coming for pods that wait: a node supplier's refusal, in the words a user would see.

The diagnosis (:mod:`gangkit.results.diagnosis`) asks this only where more
nodes would help a waiting job. Every node supplier of the stack is asked
whether it would launch a node for the pods (``launch_blocked``); the first
that would not gives the code and the words: Karpenter's NodePool limits (and
a hand-made supplier's refusal) are ``NodePoolLimit``; cluster-autoscaler's
refusal to scale up for pods that consume a ProvisioningRequest is
:data:`CONSUMER_CODE`, worded with the request's conditions at that instant.
"""

from __future__ import annotations

from gangkit.model.precision import TOLERANCE
from gangkit.supply.autoscaler import ClusterAutoscaler

__all__ = ["CONSUMER_CODE", "supplier_limit"]

#: gangkit's code for pods cluster-autoscaler scales up for none of, as they consume a ProvisioningRequest (no real
#: component has a reason for it: CA's event on the pod has an empty reason; see :func:`_consumer_words`).
CONSUMER_CODE = "ConsumingProvisioningRequest"


def _g(x: float) -> str:
    """A time as the diagnosis writes it (its ``_g``): at most 3 decimals, no trailing zeros."""
    return f"{round(x, 3):.12g}"


def supplier_limit(sim, waiting: list, at: float) -> tuple[str, str]:
    """(code, plain words) when a node supplier will not launch a node for these pods, else ``("", "")``.

    cluster-autoscaler's refusal is :data:`CONSUMER_CODE` (its pods consume a ProvisioningRequest, worded by
    :func:`_consumer_words`); any other supplier's (Karpenter's NodePool limits, a hand-made supplier's
    ``launch_blocked``) is ``NodePoolLimit``.
    """
    if not waiting:
        return "", ""
    for s in sim.stack.suppliers:
        words = s.launch_blocked(waiting)
        if words:
            if isinstance(s, ClusterAutoscaler):
                return CONSUMER_CODE, _consumer_words(s, waiting, words, at)
            return "NodePoolLimit", words
    return "", ""


def _consumer_words(ca, waiting: list, event: str, at: float) -> str:
    """What a user sees when cluster-autoscaler leaves pods that consume a ProvisioningRequest out of scale-up.

    cluster-autoscaler 1.35 (``processors/provreq/pods_filter.go``, run only with
    ``--enable-provisioning-requests``) drops every unschedulable pod carrying the
    annotation ``autoscaling.x-k8s.io/consume-provisioning-request`` from the pods it
    scales up for, whatever the request's state and even when no request has that
    name, and records on the pod a ``Normal`` event with an empty reason and the
    message ``event`` ("Unschedulable pod didn't trigger scale-up, because it's
    consuming ProvisioningRequest <namespace>/<name>"; at most 50 such events per
    loop). Such a pod never reaches the scale-up orchestrator, so it gets no
    ``NotTriggerScaleUp`` event (that one, "pod didn't trigger scale-up: ...", is
    for pods no node group can help, ``processors/status/eventing_scale_up_processor.go``).
    The words add each request's conditions at ``at`` as ``kubectl get
    provisioningrequest -o yaml`` shows them (``Provisioned``, ``Failed``,
    ``BookingExpired``: types of ``apis/provisioningrequest/autoscaling.x-k8s.io/v1/types.go``,
    reasons of ``provisioningrequest/conditions/conditions.go``), from the rows of
    ``gangkit_provisioning_requests``; gangkit does not model the ``Accepted``
    condition, and ``CapacityRevoked`` is set by no code of cluster-autoscaler.
    """
    rows = ca.metrics().get("gangkit_provisioning_requests")
    names = sorted({(p.job.spec.namespace or "default", p.job.spec.consume_provisioning_request) for p in waiting})
    states = []
    for ns, name in names:
        mine = rows[(rows.provisioning_request == name) & (rows.time_s <= at + TOLERANCE)] if rows is not None else None
        if mine is None or mine.empty:
            states.append(f"ProvisioningRequest {ns}/{name} does not exist")
            continue
        last = {}  # condition type -> (status, reason, time), the latest of each
        for row in mine.itertuples():
            if row.state in ("Pending", "Provisioned"):
                last["Provisioned"] = ("True" if row.state == "Provisioned" else "False", row.reason, row.time_s)
            elif row.state in ("Failed", "BookingExpired"):
                last[row.state] = ("True", row.reason, row.time_s)
        said = [f"{c}={st} ({why}) at t={_g(t)} s" for c in ("Provisioned", "BookingExpired", "Failed")
                if c in last for st, why, t in [last[c]]]
        states.append(f"ProvisioningRequest {ns}/{name}: " + (", ".join(said) if said else "no condition yet"))
    return (f"cluster-autoscaler scales up for none of them, as they consume a ProvisioningRequest (its event on "
            f"each pod: \"{event}\"); " + "; ".join(states))
