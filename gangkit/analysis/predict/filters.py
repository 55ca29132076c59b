"""Why a pod fits on no node now: kube-scheduler's Filter verdict per node, in its own words.

When kube-scheduler cannot place a pod it runs every node through its Filter plugins and sums the
failures up in the pod's condition: "0/4 nodes are available: 3 Insufficient nvidia.com/gpu, 1 node(s)
had untolerated taint(s)". This module gives the rows behind that sum: per group of alike nodes, the
first plugin that rejects the pod there (the framework stops at a node's first failure), in the order of
kube-scheduler 1.35's default profile (``pkg/scheduler/framework/plugins/``):

- NodeUnschedulable: the Node's ``spec.unschedulable`` (cordoned), unless the pod tolerates
  ``node.kubernetes.io/unschedulable:NoSchedule``: "node(s) were unschedulable";
- TaintToleration (``tainttoleration/taint_toleration.go``): a ``NoSchedule``/``NoExecute`` taint the pod
  does not tolerate: "node(s) had untolerated taint(s)" (1.35 no longer names the taint there; gangkit's
  detail does). A node not ready yet carries ``node.kubernetes.io/not-ready:NoSchedule``;
- NodeAffinity: the pod's node selector: "node(s) didn't match Pod's node affinity/selector";
- NodeResourcesFit: "Insufficient <resource>" for each resource the node has too little of free.

Simplified: gangkit's run itself does not read taints or ``unschedulable`` (its nodes have none), so
these verdicts read them from the dump's Node objects for the rows only; a pod's tolerations are every
``tolerations`` list in its manifest.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from gangkit.analysis.predict.inputs import object_key

#: the Filter plugins checked per node, in the default profile's order (a node's first failing plugin is its verdict)
FILTER_ORDER = ("NodeUnschedulable", "TaintToleration", "NodeAffinity", "NodeResourcesFit")
UNSCHEDULABLE = "node(s) were unschedulable"
UNTOLERATED = "node(s) had untolerated taint(s)"
SELECTOR_MISMATCH = "node(s) didn't match Pod's node affinity/selector"
#: gangkit's resource names -> the names kube-scheduler's "Insufficient ..." uses
RESOURCE_NAMES = {"gpus": "nvidia.com/gpu", "cpu": "cpu", "memory": "memory"}
NOT_READY = {"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}


def tolerates(tolerations: list[dict], taint: dict) -> bool:
    """Kubernetes' ``Toleration.ToleratesTaint`` (``k8s.io/api/core/v1/toleration.go``): an empty effect matches
    every effect; an empty key with ``Exists`` matches every key; ``Exists`` ignores the value, ``Equal`` (the
    default operator) compares it. (The 1.35 alpha comparison operators ``Lt``/``Gt`` are not read.)"""
    for t in tolerations:
        if t.get("effect") and t.get("effect") != taint.get("effect"):
            continue
        op = t.get("operator") or "Equal"
        if not t.get("key"):
            if op == "Exists":
                return True
            continue
        if t.get("key") != taint.get("key"):
            continue
        if op == "Exists" or str(t.get("value") or "") == str(taint.get("value") or ""):
            return True
    return False


def tolerations_in(node: Any) -> list[dict]:
    """Every toleration written anywhere in a manifest (its pod templates), as a list of dicts."""
    out: list[dict] = []
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "tolerations" and isinstance(v, list):
                out.extend(t for t in v if isinstance(t, dict))
            else:
                out.extend(tolerations_in(v))
    elif isinstance(node, list):
        for v in node:
            out.extend(tolerations_in(v))
    return out


def node_marks(docs: list[dict]) -> dict[str, dict]:
    """Per Node of the dump, what gangkit's run does not read: its ``spec.taints`` and ``spec.unschedulable``."""
    out = {}
    for d in docs:
        if d.get("kind") != "Node" or not isinstance(d.get("spec"), dict):
            continue
        spec = d["spec"]
        taints = [t for t in spec.get("taints") or [] if isinstance(t, dict)
                  and t.get("effect") in ("NoSchedule", "NoExecute")]
        if taints or spec.get("unschedulable") is True:
            out[object_key(d)[1]] = {"taints": taints, "unschedulable": spec.get("unschedulable") is True}
    return out


def node_verdict(st, mark: dict, pod_set, tolerations: list[dict]) -> tuple[str, str, str] | None:
    """(plugin, kube-scheduler's reason, gangkit's detail) of the first Filter plugin that rejects one pod of
    ``pod_set`` on the node of ``st`` (its state in the run), None if the node takes it now."""
    if mark.get("unschedulable") and not tolerates(tolerations, {"key": "node.kubernetes.io/unschedulable",
                                                                    "effect": "NoSchedule"}):
        return ("NodeUnschedulable", UNSCHEDULABLE, "spec.unschedulable: true (cordoned)")
    taints = list(mark.get("taints", ()))
    if not st.ready:
        taints.insert(0, NOT_READY)
    bad = next((t for t in taints if not tolerates(tolerations, t)), None)
    if bad is not None:
        words = "not ready" if bad["key"] == NOT_READY["key"] and not st.ready else "taint"
        return ("TaintToleration", UNTOLERATED,
                f"{words} {bad['key']}{'=' + str(bad['value']) if bad.get('value') else ''}:{bad['effect']}")
    if not st.node.matches(pod_set.node_selector):
        return ("NodeAffinity", SELECTOR_MISMATCH, f"labels do not match {dict(pod_set.node_selector)}")
    short = _short(st, pod_set.gpus, pod_set.cpu, pod_set.memory)
    if not short:
        return None
    return ("NodeResourcesFit", ", ".join(f"Insufficient {RESOURCE_NAMES[d]}" for d in short),
            _room(st, short, pod_set.gpus, pod_set.cpu, pod_set.memory))


def node_filters(cap_nodes: Iterable, pod_set, tolerations: list[dict], marks: dict[str, dict]) -> list[dict]:
    """kube-scheduler's Filter verdict for one pod of ``pod_set`` on each node (:func:`node_verdict`), grouped:
    one row per group of nodes with the same verdict and capacity, the groups in plugin order, largest first.
    Empty when some node takes the pod now."""
    groups: dict[tuple, dict] = {}
    for st in cap_nodes:
        node = st.node
        verdict = node_verdict(st, marks.get(node.name, {}), pod_set, tolerations)
        if verdict is None:
            return []
        key = (verdict, node.gpus, node.cpu, node.memory)
        row = groups.get(key)
        if row is None:
            groups[key] = {"pod_set": pod_set.name, "node": node.name, "count": 1, "filter": verdict[0],
                           "reason": verdict[1], "detail": verdict[2]}
        else:
            row["count"] += 1
    return sorted(groups.values(), key=lambda r: (FILTER_ORDER.index(r["filter"]), -r["count"], r["node"]))


def _short(st, gpus: int, cpu: float, memory: int) -> list[str]:
    """The resources the node has too little of free for the pod (NodeResourcesFit's check)."""
    out = []
    if gpus > st.free_gpus:
        out.append("gpus")
    if cpu and st.free_cpu is not None and cpu > st.free_cpu + 1e-9:
        out.append("cpu")
    if memory and st.free_memory is not None and memory > st.free_memory:
        out.append("memory")
    return out


def _room(st, short: list[str], gpus: int, cpu: float, memory: int) -> str:
    """What the pod asks for and what the node has free, for each resource short."""
    parts = []
    for d in short:
        if d == "gpus":
            parts.append(f"asks {gpus} GPUs, {st.free_gpus} of {st.node.gpus} free")
        elif d == "cpu":
            parts.append(f"asks {cpu:g} cores, {st.free_cpu:g} of {st.node.cpu:g} free")
        else:
            parts.append(f"asks {memory} bytes, {st.free_memory} of {st.node.memory} free")
    return "; ".join(parts)
