"""The node suppliers written back as manifests: the mirror of :mod:`gangkit.supply.manifests`.

Picture the purchasing office's standing orders copied out again: which
machines it may buy (instance types and prices), how many GPUs, cores and
bytes of memory each order book may hold (a NodePool's ``limits`` on
``nvidia.com/gpu``, ``cpu`` and ``memory``, the ones gangkit enforces,
written as Kubernetes quantities), when it sells an idle machine
(``disruption``), and how long a new machine takes to be usable (stages).
:func:`supply_manifests` writes a scenario's
:class:`~gangkit.supply.karpenter.Karpenter` as ``karpenter.sh/v1`` NodePools
plus gangkit's ``Karpenter`` kind, and its
:class:`~gangkit.supply.autoscaler.ClusterAutoscaler` as gangkit's
``ClusterAutoscaler`` kind, and the ProvisioningRequests a scenario applies
directly as ``autoscaling.x-k8s.io/v1`` ProvisioningRequests with a ``v1``
PodTemplate per pod set (:func:`provisioning_request_manifests`)::

    apiVersion: karpenter.sh/v1
    kind: NodePool
    metadata: {name: a100}
    spec:
      template:
        spec:
          nodeClassRef: {group: karpenter.kwok.sh, kind: KWOKNodeClass, name: default}
          requirements:
          - {key: node.kubernetes.io/instance-type, operator: In, values: [p4d.24xlarge]}
      limits: {nvidia.com/gpu: "24", cpu: "288", memory: 3456Gi}
      disruption: {consolidationPolicy: WhenEmpty, consolidateAfter: 0s, budgets: [{nodes: 10%}]}

A Karpenter v1 NodePool must name its NodeClass (``nodeClassRef`` is a
required field of the CRD); gangkit's nodes are simulated, so the NodePool
names Karpenter's own simulated provider, KWOK (``KWOKNodeClass`` of
``karpenter.kwok.sh``, the provider Karpenter's repository tests with).

A scenario whose stack names ``karpenter`` or ``autoscaler`` but brings no
supplier of its own runs with the default one
(:func:`~gangkit.supply.karpenter.default_karpenter`,
:func:`~gangkit.supply.autoscaler.default_autoscaler`); that default is
written, so that the file says what the run used. What YAML cannot say (a
stage whose duration is drawn at random, a cluster-autoscaler setting its
kind does not read, a limit no quantity reads back the same: infinite, a
fraction of a GPU or of a byte) is refused by name (:func:`dump_problems`).
"""

from __future__ import annotations

import math
from typing import Any

from gangkit.model.errors import Problem
from gangkit.model.quantity import MAX_QUANTITY, format_cpu, format_duration, format_memory
from gangkit.model.reading import GPU, SUBMIT_TIME, pod_resources
from gangkit.supply.autoscaler import ClusterAutoscaler, default_autoscaler
from gangkit.supply.cloud import TYPE_LABEL, InstanceType, Stages
from gangkit.supply.fit import CPU, MEMORY
from gangkit.supply.karpenter import Karpenter, NodePool, default_karpenter

__all__ = ["NODE_CLASS_REF", "dump_problems", "suppliers", "supply_manifests"]

KARPENTER_API = "karpenter.sh/v1"
GANGKIT_API = "gangkit/v1alpha1"
#: The NodeClass a written NodePool names: Karpenter's simulated (KWOK) provider.
NODE_CLASS_REF = {"group": "karpenter.kwok.sh", "kind": "KWOKNodeClass", "name": "default"}

#: cluster-autoscaler settings the ClusterAutoscaler kind does not read, with the defaults a file implies.
_UNREAD_AUTOSCALER = {"backoff_reset": 10800.0, "max_node_startup_time": 900.0, "scale_down": True,
                      "max_scale_down_parallelism": 10,
                      "max_drain_parallelism": 1,
                      "provisioning_request_initial_backoff": 60.0, "provisioning_request_max_backoff": 600.0}
#: The flags the ClusterAutoscaler kind reads, as (field, attribute); durations unless named below.
_AUTOSCALER_FLAGS = (("scanInterval", "scan_interval"), ("expander", "expander"),
                     ("maxNodeProvisionTime", "max_node_provision_time"),
                     ("initialNodeGroupBackoffDuration", "initial_backoff"),
                     ("maxNodeGroupBackoffDuration", "max_backoff"),
                     ("scaleDownUnneededTime", "scale_down_unneeded_time"),
                     ("scaleDownDelayAfterAdd", "scale_down_delay_after_add"),
                     ("scaleDownUtilizationThreshold", "utilization_threshold"),
                     ("provisioningRequestExpiry", "provisioning_request_expiry"))


def suppliers(scenario) -> tuple[Karpenter | None, ClusterAutoscaler | None]:
    """The Karpenter and the cluster-autoscaler a run of ``scenario`` uses (its own, or its stack's default)."""
    parts = scenario.settings.stack.split("+")
    karpenter = scenario.karpenter or (default_karpenter(scenario) if "karpenter" in parts else None)
    autoscaler = scenario.autoscaler or (default_autoscaler(scenario) if "autoscaler" in parts else None)
    return karpenter, autoscaler


def dump_problems(scenario) -> list[Problem]:
    """Why the suppliers of ``scenario`` cannot be written as manifests (empty when they can)."""
    karpenter, autoscaler = suppliers(scenario)
    out: list[Problem] = []
    if karpenter is not None:
        out.extend(_stage_problems(karpenter.stages, "Karpenter karpenter"))
        if not karpenter.nodepools:
            out.append(Problem("Karpenter karpenter", "nodepools", "expected at least one NodePool to write"))
        out.extend(problem for p in karpenter.nodepools for problem in _limit_problems(p))
        out.extend(Problem(f"NodePool {p.name}", "min_values", f"minValues on {m.key} cannot be written: the Karpenter "
                           "object gangkit writes lists its instance types by name and figures, without their labels")
                   for p in karpenter.nodepools for m in p.min_values if m.key != TYPE_LABEL)
        out.extend(Problem(f"NodePool {p.name}", "consolidate_after", "the NodePool CRD takes whole seconds "
                           f"(^(([0-9]+(s|m|h))+|Never)$); got {p.consolidate_after!r}")
                   for p in karpenter.nodepools
                   if p.consolidate_after is not None and p.consolidate_after != int(p.consolidate_after))
    if autoscaler is not None:
        obj = "ClusterAutoscaler cluster-autoscaler"
        out.extend(_stage_problems(autoscaler.stages, obj))
        for attr, default in _UNREAD_AUTOSCALER.items():
            if getattr(autoscaler, attr) != default:
                out.append(Problem(obj, attr, f"the ClusterAutoscaler kind does not read this setting; "
                                              f"expected its default {default!r}, got {getattr(autoscaler, attr)!r}"))
    return out


def supply_manifests(scenario) -> list[dict]:
    """The NodePools and gangkit's Karpenter and ClusterAutoscaler objects of ``scenario``'s suppliers.

    Call :func:`dump_problems` first: this writes what it is given.
    """
    karpenter, autoscaler = suppliers(scenario)
    docs: list[dict] = []
    if karpenter is not None:
        docs.append(karpenter_manifest(karpenter))
        docs.extend(nodepool_manifest(p) for p in sorted(karpenter.nodepools, key=lambda p: p.name))
    if autoscaler is not None:
        docs.append(autoscaler_manifest(autoscaler))
    docs.extend(provisioning_request_manifests(getattr(scenario, "provisioning_requests", ())))
    return docs


def provisioning_request_manifests(requests) -> list[dict]:
    """Each ProvisioningRequest with the PodTemplates its pod sets name (a pod set's name, or
    ``<request>-<pod set>`` where another template of that name differs): what
    :func:`gangkit.supply.manifests.read_provisioning_requests` reads back."""
    docs: list[dict] = []
    written: dict[tuple, dict] = {}  # (namespace, name) -> the template's pod
    for pr in requests:
        meta: dict[str, Any] = {"name": pr.name}
        if pr.namespace:
            meta["namespace"] = pr.namespace
        sets = []
        for ps in pr.pod_sets:
            pod, name = _template_pod(ps), ps.name
            if written.get((pr.namespace, name), pod) != pod:
                name = f"{pr.name}-{ps.name}"
            if (pr.namespace, name) not in written:
                written[(pr.namespace, name)] = pod
                docs.append({"apiVersion": "v1", "kind": "PodTemplate", "metadata": {**meta, "name": name},
                             "template": {"spec": pod}})
            sets.append({"podTemplateRef": {"name": name}, "count": ps.count})
        if pr.create_time:
            meta["annotations"] = {SUBMIT_TIME: format_duration(pr.create_time)}
        docs.append({"apiVersion": "autoscaling.x-k8s.io/v1", "kind": "ProvisioningRequest", "metadata": meta,
                     "spec": {"provisioningClassName": pr.provisioning_class, "podSets": sets}})
    return docs


def _template_pod(ps) -> dict:
    """The pod of a PodTemplate: one container with the pod set's requests, and its node selector."""
    resources = pod_resources(ps)
    pod: dict[str, Any] = {}
    if ps.node_selector:
        pod["nodeSelector"] = dict(ps.node_selector)
    pod["containers"] = [{"name": "worker", "image": "busybox:1.36", "resources": resources}]
    return pod


def karpenter_manifest(k: Karpenter) -> dict:
    """gangkit's ``Karpenter`` kind: the instance types on offer, the batching window, the node stages."""
    spec: dict[str, Any] = {"batchIdleDuration": format_duration(k.batch_idle),
                            "batchMaxDuration": format_duration(k.batch_max),
                            "stages": _stages(k.stages),
                            "instanceTypes": [_instance_type(t) for t in k.instance_types.values()]}
    return {"apiVersion": GANGKIT_API, "kind": "Karpenter", "metadata": {"name": "karpenter"}, "spec": spec}


def nodepool_manifest(p: NodePool) -> dict:
    """A ``karpenter.sh/v1`` NodePool: its instance types (and their minValues), its limits on ``nvidia.com/gpu``,
    ``cpu`` and ``memory`` (:func:`_limit`), disruption policy and budget, weight, labels; a static pool's
    ``replicas`` and ``limits.nodes``."""
    template: dict[str, Any] = {}
    if p.labels:
        template["metadata"] = {"labels": dict(p.labels)}
    requirement: dict[str, Any] = {"key": TYPE_LABEL, "operator": "In", "values": list(p.instance_types)}
    for m in p.min_values:
        if m.key == TYPE_LABEL:
            requirement["minValues"] = max(m.count, requirement.get("minValues", 0))
    template["spec"] = {"nodeClassRef": dict(NODE_CLASS_REF), "requirements": [requirement]}
    spec: dict[str, Any] = {}
    if p.static:
        spec["replicas"] = p.replicas
    elif p.weight:
        spec["weight"] = p.weight
    spec["template"] = template
    if p.static and "nodes" in p.limits:
        spec["limits"] = {"nodes": str(p.limits["nodes"])}
    elif not p.static and p.enforced:
        spec["limits"] = {r: _limit(r, v) for r, v in p.enforced.items()}
    after = "Never" if p.consolidate_after is None else format_duration(p.consolidate_after)
    spec["disruption"] = {"consolidationPolicy": p.consolidation_policy, "consolidateAfter": after,
                          "budgets": [{"nodes": str(p.budget)}]}
    return {"apiVersion": KARPENTER_API, "kind": "NodePool", "metadata": {"name": p.name}, "spec": spec}


def _limit(resource: str, amount) -> str:
    """One limit as the quantity the reader reads back the same: GPUs as a whole number (``"24"``), cores as
    :func:`~gangkit.model.quantity.format_cpu` writes them (``"288"``, ``"1500m"``), bytes in the largest binary
    unit that divides them (``"3Ti"``)."""
    if resource == MEMORY:
        return format_memory(int(amount))
    return format_cpu(amount) if resource == CPU else str(int(amount))


def _limit_problems(p: NodePool) -> list[Problem]:
    """The limits of a dynamic pool that no quantity says as the reader would read it back: an infinite one
    (no limit is written by leaving it out), one above the largest quantity, a fraction of a GPU or of a byte
    (the API server refuses the one, the reader rounds the other up)."""
    out = []
    for r, v in p.enforced.items():
        why = None
        if not math.isfinite(v):
            why = f"expected a finite amount (a pool without a {r} limit leaves it out), got {v!r}"
        elif v > MAX_QUANTITY:
            why = f"expected at most 2^63-1 ({MAX_QUANTITY}), the largest quantity Kubernetes represents, got {v!r}"
        elif r != CPU and v != int(v):
            unit = "bytes (a quantity's fraction of a byte is rounded up when read)" if r == MEMORY else "GPUs"
            why = f"expected a whole number of {unit}, got {v!r}"
        if why:
            out.append(Problem(f"NodePool {p.name}", f"limits.{r}", why))
    return out


def autoscaler_manifest(ca: ClusterAutoscaler) -> dict:
    """gangkit's ``ClusterAutoscaler`` kind: cluster-autoscaler's flags, its node stages and node groups."""
    spec: dict[str, Any] = {}
    for key, attr in _AUTOSCALER_FLAGS:
        value = getattr(ca, attr)
        spec[key] = value if key in ("expander", "scaleDownUtilizationThreshold") else format_duration(value)
    spec["stages"] = _stages(ca.stages)
    groups = []
    for g in ca.node_groups:
        t = g.instance_type
        group: dict[str, Any] = {"name": g.name}
        if t.name != g.name:
            group["instanceType"] = t.name
        group |= {"capacity": _capacity(t), "pricePerHour": t.price_per_hour, "minSize": g.min_size,
                  "maxSize": g.max_size}
        if g.labels:
            group["labels"] = dict(g.labels)
        if g.stockout:
            group["stockout"] = True
        groups.append(group)
    spec["nodeGroups"] = groups
    return {"apiVersion": GANGKIT_API, "kind": "ClusterAutoscaler", "metadata": {"name": "cluster-autoscaler"},
            "spec": spec}


def _stages(st: Stages) -> dict:
    out = {"registered": format_duration(st.registered), "initialized": format_duration(st.initialized)}
    if st.image_pull:
        out["imagePull"] = format_duration(st.image_pull)
    return out


def _stage_problems(st: Stages, obj: str) -> list[Problem]:
    return [Problem(obj, f"stages.{name}", "a duration drawn at random cannot be written as YAML; expected seconds, "
                                           f"got {value!r}")
            for name, value in (("registered", st.registered), ("initialized", st.initialized),
                                ("imagePull", st.image_pull))
            if callable(value) or not isinstance(value, (int, float)) or isinstance(value, bool)]


def _capacity(t: InstanceType) -> dict:
    cap: dict[str, str] = {GPU: str(t.gpus)}
    if t.cpu is not None:
        cap["cpu"] = format_cpu(t.cpu)
    if t.memory is not None:
        cap["memory"] = format_memory(t.memory)
    return cap


def _instance_type(t: InstanceType) -> dict:
    return {"name": t.name, "capacity": _capacity(t), "pricePerHour": t.price_per_hour}
