"""What the API server and the controllers add to objects: live objects, as ``kubectl get -o yaml`` shows them.

The snapshot tests (``tests/manifests/test_snapshot.py``) build their dumps here from
manifests as authors write them (the upstream corpus's, or the tests' own):

- :func:`served` adds the server-set metadata (uid, resourceVersion,
  generation, creationTimestamp, managedFields, ownerReferences) and the
  spec fields the API server defaults (Kubernetes 1.35: a Job's selector,
  completionMode, podReplacementPolicy; a pod template's dnsPolicy,
  schedulerName, terminationGracePeriodSeconds, containers' imagePullPolicy
  and terminationMessagePath...);
- :func:`pod_of` makes one of a controller's pods, owned by it, bound or not,
  with the status the kubelet writes (phase, startTime, containerStatuses);
- :func:`workload_of` makes the Workload Kueue creates for a job, owned by
  it, with ``status.admission`` when it holds quota;
- :func:`node` is a Node as the kubelet registers it (status.capacity and
  allocatable, conditions with heartbeats, nodeInfo).
"""

from __future__ import annotations

import copy
import hashlib
from datetime import datetime, timedelta, timezone

T0 = datetime(2026, 12, 1, 8, 0, 0, tzinfo=timezone.utc)


def stamp(minutes: float) -> str:
    """``T0 + minutes`` as the API server writes times (RFC 3339, seconds, UTC)."""
    return (T0 + timedelta(minutes=minutes)).strftime("%Y-%m-%dT%H:%M:%SZ")


def uid(*parts: str) -> str:
    h = hashlib.sha256("/".join(parts).encode()).hexdigest()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


def _default_pod_spec(spec: dict) -> dict:
    spec = copy.deepcopy(spec)
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("schedulerName", "default-scheduler")
    spec.setdefault("securityContext", {})
    spec.setdefault("terminationGracePeriodSeconds", 30)
    for c in spec.get("containers", []):
        c.setdefault("imagePullPolicy", "IfNotPresent")
        c.setdefault("terminationMessagePath", "/dev/termination-log")
        c.setdefault("terminationMessagePolicy", "File")
        c.setdefault("resources", {})
    return spec


def _default_templates(node):
    if isinstance(node, list):
        return [_default_templates(x) for x in node]
    if not isinstance(node, dict):
        return node
    out = {}
    for k, v in node.items():
        if k == "template" and isinstance(v, dict) and isinstance(v.get("spec"), dict) and "containers" in v["spec"]:
            t = copy.deepcopy(v)
            t.setdefault("metadata", {})["creationTimestamp"] = None
            t["spec"] = _default_pod_spec(t["spec"])
            out[k] = t
        else:
            out[k] = _default_templates(v)
    return out


def served(obj: dict, created: float = 0.0, owner: dict | None = None, status: dict | None = None) -> dict:
    """``obj`` as the API server returns it: server-set metadata, defaulted spec fields, ``status``."""
    obj = copy.deepcopy(obj)
    meta = obj.setdefault("metadata", {})
    name, ns = meta.get("name", ""), meta.get("namespace", "")
    meta["uid"] = uid(obj["kind"], ns, name)
    meta["resourceVersion"] = str(1000 + int(created * 7))
    meta["generation"] = 1
    meta["creationTimestamp"] = stamp(created)
    meta["managedFields"] = [{"apiVersion": obj["apiVersion"], "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {}},
                              "manager": "kubectl-client-side-apply", "operation": "Update", "time": stamp(created)}]
    meta.setdefault("annotations", {})["kubectl.kubernetes.io/last-applied-configuration"] = "{}\n"
    if owner is not None:
        meta["ownerReferences"] = [{"apiVersion": owner["apiVersion"], "kind": owner["kind"],
                                    "name": owner["metadata"]["name"], "uid": owner["metadata"]["uid"],
                                    "controller": True, "blockOwnerDeletion": True}]
    if obj["kind"] == "Job" and obj["apiVersion"] == "batch/v1":
        spec = obj.setdefault("spec", {})
        spec.setdefault("backoffLimit", 6)
        spec.setdefault("completionMode", "NonIndexed")
        spec.setdefault("manualSelector", False)
        spec.setdefault("podReplacementPolicy", "TerminatingOrFailed")
        spec["selector"] = {"matchLabels": {"batch.kubernetes.io/controller-uid": meta["uid"]}}
        labels = spec.setdefault("template", {}).setdefault("metadata", {}).setdefault("labels", {})
        labels.update({"batch.kubernetes.io/controller-uid": meta["uid"], "batch.kubernetes.io/job-name": name,
                       "controller-uid": meta["uid"], "job-name": name})
    if obj["kind"] == "Deployment":
        spec = obj.setdefault("spec", {})
        spec.setdefault("progressDeadlineSeconds", 600)
        spec.setdefault("revisionHistoryLimit", 10)
        spec.setdefault("strategy", {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}})
    if "spec" in obj and obj["kind"] != "Workload":  # (Kueue copies a Workload's pod templates already defaulted)
        obj["spec"] = _default_templates(obj["spec"])
    if status is not None:
        obj["status"] = status
    return obj


def pod_of(owner: dict, name: str, pod_spec: dict, node: str | None, started: float | None, created: float = 0.0,
           phase: str | None = None, labels: dict | None = None) -> dict:
    """One pod of ``owner`` (a live object), bound to ``node`` (None: Pending) and Running since ``started``."""
    ns = owner["metadata"].get("namespace", "default")
    spec = _default_pod_spec(pod_spec)
    spec["priority"] = 0
    spec["preemptionPolicy"] = "PreemptLowerPriority"
    spec["serviceAccountName"] = "default"
    spec["tolerations"] = [{"effect": "NoExecute", "key": k, "operator": "Exists", "tolerationSeconds": 300}
                           for k in ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable")]
    if node is not None:
        spec["nodeName"] = node
    phase = phase or ("Running" if started is not None else "Pending")
    status: dict = {"phase": phase, "qosClass": "Burstable"}
    if node is not None:
        status["hostIP"] = "10.0.0.1"
        status["conditions"] = [{"type": "PodScheduled", "status": "True", "lastTransitionTime": stamp(created)}]
    else:
        status["conditions"] = [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                                 "lastTransitionTime": stamp(created),
                                 "message": "0/4 nodes are available: 4 Insufficient nvidia.com/gpu."}]
    if started is not None:
        status["startTime"] = stamp(started - 0.5)
        status["containerStatuses"] = [{"name": c["name"], "ready": True, "restartCount": 0, "image": c.get("image", ""),
                                        "imageID": f"{c.get('image', '')}@sha256:{uid(c.get('image', ''))}",
                                        "state": {"running": {"startedAt": stamp(started)}}}
                                       for c in spec["containers"]]
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": name, "namespace": ns, "labels": dict(labels or {})}, "spec": spec}
    out = served(pod, created, owner, status)
    out["metadata"]["annotations"].pop("kubectl.kubernetes.io/last-applied-configuration")
    return out


def workload_of(owner: dict, pod_sets: list[tuple[str, int, dict]], queue: str, cluster_queue: str | None = None,
                flavors: list[dict] | None = None, counts: list[int] | None = None, created: float = 0.0,
                admitted_at: float | None = None) -> dict:
    """The Workload Kueue makes for ``owner``: ``pod_sets`` as (name, count, pod spec); admitted to
    ``cluster_queue`` with ``flavors`` per pod set when given."""
    name = f"{owner['kind'].lower()}-{owner['metadata']['name']}-{uid(owner['metadata']['name'])[:5]}"
    wl = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload",
          "metadata": {"name": name, "namespace": owner["metadata"].get("namespace", "default"),
                       "labels": {"kueue.x-k8s.io/job-uid": owner["metadata"]["uid"]}},
          "spec": {"queueName": queue, "active": True, "priority": 0,
                   "podSets": [{"name": n, "count": c, "template": {"spec": s}} for n, c, s in pod_sets]}}
    status: dict = {"conditions": []}
    if cluster_queue is not None:
        when = stamp(created if admitted_at is None else admitted_at)
        status["admission"] = {"clusterQueue": cluster_queue, "podSetAssignments": [
            {"name": n, "flavors": f, "count": k} for (n, _, _), f, k in
            zip(pod_sets, flavors or [{}] * len(pod_sets), counts or [c for _, c, _ in pod_sets])]}
        status["conditions"] = [
            {"type": "QuotaReserved", "status": "True", "reason": "QuotaReserved", "lastTransitionTime": when,
             "message": f"Quota reserved in ClusterQueue {cluster_queue}"},
            {"type": "Admitted", "status": "True", "reason": "Admitted", "lastTransitionTime": when,
             "message": "The workload is admitted"}]
    else:
        status["conditions"] = [{"type": "QuotaReserved", "status": "False", "reason": "Pending",
                                 "lastTransitionTime": stamp(created),
                                 "message": f"couldn't assign flavors to pod set {pod_sets[0][0]}: insufficient "
                                            "unused quota for nvidia.com/gpu in flavor default-flavor"}]
    return served(wl, created, owner, status)


def node(name: str, gpus: int, cpu: str = "96", memory: str = "1024Gi", labels: dict | None = None,
         heartbeat: float = 0.0) -> dict:
    """A Node as the kubelet registers it, its Ready heartbeat at ``T0 + heartbeat`` minutes."""
    capacity = {"cpu": cpu, "memory": memory, "nvidia.com/gpu": str(gpus), "pods": "110", "ephemeral-storage": "500Gi"}
    obj = {"apiVersion": "v1", "kind": "Node",
           "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
                                                 **(labels or {})}},
           "spec": {"podCIDR": "10.244.0.0/24", "podCIDRs": ["10.244.0.0/24"], "providerID": f"aws:///{name}"}}
    status = {"capacity": capacity, "allocatable": dict(capacity),
              "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                              "lastHeartbeatTime": stamp(heartbeat), "lastTransitionTime": stamp(-600),
                              "message": "kubelet is posting ready status"}],
              "nodeInfo": {"kubeletVersion": "v1.35.0", "kubeProxyVersion": "v1.35.0",
                           "containerRuntimeVersion": "containerd://2.1.0", "architecture": "amd64",
                           "operatingSystem": "linux", "osImage": "Ubuntu 24.04 LTS", "kernelVersion": "6.8.0",
                           "machineID": uid("machine", name), "systemUUID": uid("system", name),
                           "bootID": uid("boot", name)},
              "addresses": [{"type": "InternalIP", "address": "10.0.0.1"}]}
    out = served(obj, -600.0, None, status)
    out["metadata"]["annotations"].pop("kubectl.kubernetes.io/last-applied-configuration")
    return out


def as_list(items: list[dict]) -> dict:
    """What ``kubectl get ... -o yaml`` prints: one ``kind: List``."""
    return {"apiVersion": "v1", "kind": "List", "items": items, "metadata": {"resourceVersion": ""}}
