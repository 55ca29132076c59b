"""Topology-Aware Scheduling in YAML: Topologies, TAS flavors, and the pod templates' topology annotations.

An administrator describes the data centre once::

    apiVersion: kueue.x-k8s.io/v1beta2
    kind: Topology
    metadata: {name: default}
    spec:
      levels:                              # coarse to fine, each a node label
      - nodeLabel: cloud.provider.com/topology-rack
      - nodeLabel: kubernetes.io/hostname
    ---
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: ResourceFlavor
    metadata: {name: tas-gpu}
    spec:
      nodeLabels: {node-pool: gpu}         # a TAS flavor needs at least one
      topologyName: default

and a job asks, on its pod template, for its pods to share a domain::

    spec:
      template:
        metadata:
          annotations:
            kueue.x-k8s.io/podset-required-topology: cloud.provider.com/topology-rack

This module reads them with Kueue's rules: the Topology CRD's
(``apis/kueue/v1beta2/topology_types.go``: 1 to 16 levels, unique,
``kubernetes.io/hostname`` only last, each a label key), the
ResourceFlavor's CEL rule (a ``topologyName`` needs ``nodeLabels``), and the
Job webhook's (``pkg/controller/jobframework/tas_validation.go``: at most one
of the three annotations, a level that is a label name,
``podset-unconstrained-topology`` a boolean). For batch/v1 Jobs (their one
pod template) and JobSets (each replicatedJob's).

Three mistakes that Kueue accepts but would never admit are errors here, as
gangkit makes a missing ResourceFlavor one: a flavor naming a Topology that
is not in the input (Kueue keeps its ClusterQueues inactive), a job asking
for a level no TAS flavor of its ClusterQueue has, or for TAS in a
ClusterQueue without a TAS flavor (Kueue keeps it pending: "Flavor ... does
not contain the requested level", "... does not support
TopologyAwareScheduling"). A TAS flavor whose nodeLabels select no Node
that carries every level (Kueue finds no domain) gets a warning: Kueue's own
samples come without nodes. The slice and group annotations
(``podset-slice-required-topology``, ``podset-slice-size``,
``podset-slice-required-topology-constraints``, ``podset-group-name``) are
reported as not modelled.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from gangkit.kueue.objects import KueueSetup, Topology, TopologyRequest
from gangkit.kueue.tas.cache import matches_flavor
from gangkit.model.jobs import JOBSET
from gangkit.model.reading import ANY, META, ManifestObject, Reader, short

__all__ = ["ANNOTATIONS", "PREFERRED", "REQUIRED", "TOPOLOGY_FIELDS", "UNCONSTRAINED", "UNNAMED_TOPOLOGY", "read_topology",
           "read_topology_requests", "template_annotations", "topology_manifest"]

REQUIRED = "kueue.x-k8s.io/podset-required-topology"
PREFERRED = "kueue.x-k8s.io/podset-preferred-topology"
UNCONSTRAINED = "kueue.x-k8s.io/podset-unconstrained-topology"
ANNOTATIONS = (REQUIRED, PREFERRED, UNCONSTRAINED)
NOT_MODELLED = ("kueue.x-k8s.io/podset-slice-required-topology", "kueue.x-k8s.io/podset-slice-size",
                "kueue.x-k8s.io/podset-slice-required-topology-constraints", "kueue.x-k8s.io/podset-group-name")
TOPOLOGY_FIELDS = {"apiVersion": ANY, "kind": ANY, "metadata": META, "spec": {"levels": [{"nodeLabel": ANY}]}}

# the Topology CRD's pattern for spec.levels[].nodeLabel (a label key), at most 316 characters
_LABEL_KEY = re.compile(r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$")
_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_BOOLEANS = {"1": True, "t": True, "T": True, "TRUE": True, "true": True, "True": True,
             "0": False, "f": False, "F": False, "FALSE": False, "false": False, "False": False}  # Go's ParseBool
NODE_SUPPLIERS = ("NodePool", "Karpenter", "ClusterAutoscaler")


def read_topology(r: Reader, o: ManifestObject) -> Topology | None:
    """A Topology's ``spec.levels`` (the count, uniqueness and hostname rules: :func:`~gangkit.kueue.tas.cache.topology_problems`)."""
    r.find_unknown(o.doc, TOPOLOGY_FIELDS, o.label, "")
    spec = r.mapping(o.doc.get("spec"), o.label, "spec")
    levels = spec.get("levels")
    if not isinstance(levels, list):
        r.error(o.label, "spec.levels", f"expected a list of levels ({{nodeLabel: <label key>}}), got {short(levels)}")
        return None
    out = []
    for i, level in enumerate(levels):
        where = f"spec.levels[{i}].nodeLabel"
        label = r.mapping(level, o.label, f"spec.levels[{i}]").get("nodeLabel")
        if not isinstance(label, str) or not label or len(label) > 316 or not _LABEL_KEY.match(label):
            r.error(o.label, where, f"expected a node label key such as cloud.provider.com/topology-rack, got {short(label)}")
            return None
        out.append(label)
    return Topology(o.name, tuple(out))


def _label_name(value: str) -> bool:
    """Kubernetes' ``ValidateLabelName``: an optional DNS-subdomain prefix and a name of at most 63 characters."""
    prefix, _, name = value.rpartition("/")
    return bool(_NAME.match(name)) and len(name) <= 63 and (not prefix or (len(prefix) <= 253 and bool(_LABEL_KEY.match(prefix + "/x"))))


def topology_request(r: Reader, annotations: Mapping, obj: str, where: str) -> TopologyRequest | None:
    """A pod template's topology request (Kueue's ``NewPodSetTopologyRequest``), checked as Kueue's webhook does."""
    found = [a for a in ANNOTATIONS if a in annotations]
    for a in NOT_MODELLED:
        if a in annotations:
            r.unknown.append(f"{obj}: {where}.{a} (pod set slices and groups of topology-aware scheduling are not modelled)")
    if not found:
        return None
    if len(found) > 1:
        r.error(obj, where, "must not contain more than one topology annotation: "
                f'["{REQUIRED}", "{PREFERRED}", "{UNCONSTRAINED}"]')
        return None
    key, value = found[0], annotations[found[0]]
    if not isinstance(value, str):
        return None  # the Job's reader reports annotations that are not strings
    if key == UNCONSTRAINED:
        if value not in _BOOLEANS:
            r.error(obj, f"{where}.{key}", f"must be a boolean value, got {value!r}")
            return None
        return TopologyRequest(unconstrained=_BOOLEANS[value])
    if not _label_name(value):
        r.error(obj, f"{where}.{key}", f"expected a node label name such as kubernetes.io/hostname, got {value!r}")
        return None
    return TopologyRequest(required=value) if key == REQUIRED else TopologyRequest(preferred=value)


def _templates(o: ManifestObject) -> list[tuple[str | None, Any, str]]:
    """(pod set name, pod template metadata, its path) of a batch/v1 Job (pod set name None: its one) or a JobSet."""
    spec = o.doc.get("spec") if isinstance(o.doc.get("spec"), Mapping) else {}
    if o.kind == "Job":
        template = spec.get("template") if isinstance(spec.get("template"), Mapping) else {}
        return [(None, template.get("metadata"), "spec.template.metadata.annotations")]
    out = []
    for i, rj in enumerate(spec.get("replicatedJobs") or []):
        if not isinstance(rj, Mapping):
            continue
        job = rj.get("template") if isinstance(rj.get("template"), Mapping) else {}
        job_spec = job.get("spec") if isinstance(job.get("spec"), Mapping) else {}
        template = job_spec.get("template") if isinstance(job_spec.get("template"), Mapping) else {}
        out.append((rj.get("name"), template.get("metadata"),
                    f"spec.replicatedJobs[{i}].template.spec.template.metadata.annotations"))
    return out


OTHER_JOB_KINDS = ("PyTorchJob", "MPIJob", "TFJob", "JAXJob", "PaddleJob", "XGBoostJob", "TrainJob", "Pod", "Deployment",
                   "ReplicaSet", "StatefulSet", "LeaderWorkerSet")


def _asks_topology(node: Any) -> bool:
    """Does a document carry a topology annotation anywhere (a pod template of a kind whose templates are not read)?"""
    if isinstance(node, Mapping):
        return any(k in ANNOTATIONS for k in node) or any(_asks_topology(v) for v in node.values())
    if isinstance(node, list):
        return any(_asks_topology(v) for v in node)
    return False


def read_topology_requests(r: Reader, objects: list[ManifestObject], jobs: list, setup: KueueSetup) -> None:
    """Each Job's and JobSet's pod set topology requests, into ``setup.topology_requests``; the errors above."""
    docs = {(o.kind, o.namespace, o.name): o for o in objects if o.kind in ("Job", "JobSet")}
    for o in objects:
        if o.kind in OTHER_JOB_KINDS and _asks_topology(o.doc):
            r.unknown.append(f"{o.label}: its pod templates' topology annotations (read on batch/v1 Jobs and JobSets only)")
    flavors = {f.name: f for f in setup.flavors}
    topologies = {t.name: t for t in setup.topologies}
    queues = {q.name: q for q in setup.cluster_queues}
    local = {(lq.namespace, lq.name): lq.cluster_queue for lq in setup.local_queues}
    for j in jobs:
        o = docs.get(("JobSet" if j.framework == JOBSET else "Job", j.namespace, j.name))
        if o is None or not j.kueue_managed:
            continue
        obj = f"Job {j.key}"
        for rj_name, meta, where in _templates(o):
            annotations = meta.get("annotations") if isinstance(meta, Mapping) else None
            request = topology_request(r, annotations if isinstance(annotations, Mapping) else {}, obj, where)
            if request is None or not request.explicit:
                continue
            pod_set = j.pod_sets[0].name if rj_name is None else rj_name
            setup.topology_requests[(j.key, pod_set)] = request
            cq = queues.get(local.get((j.namespace or "default", j.queue)))
            if cq is None:
                continue  # no such LocalQueue or ClusterQueue: reported by the queue checks
            tas = [flavors[fq.flavor] for rg in cq.resource_groups for fq in rg.flavors
                   if fq.flavor in flavors and flavors[fq.flavor].topology_name in topologies]
            level = request.required or request.preferred
            if not tas:
                r.error(obj, where, f"asks for topology-aware scheduling, but ClusterQueue {cq.name} has no TAS "
                        "flavor (Kueue would keep it pending: Flavor ... does not support TopologyAwareScheduling)")
            elif request.unconstrained is False and level is None:
                r.error(obj, f"{where}.{UNCONSTRAINED}", "false names no level: Kueue would keep the job pending "
                        "(Flavor ... does not contain the requested level)")
            elif request.unconstrained is not True and not any(level in topologies[f.topology_name].levels for f in tas):
                names = "; ".join(f"{f.name}: {', '.join(topologies[f.topology_name].levels)}" for f in tas)
                r.error(obj, where, f"asks for level {level}, which no TAS flavor of ClusterQueue {cq.name} has "
                        f"({names}); Kueue would keep it pending (Flavor ... does not contain the requested level)")


def check_tas_nodes(r: Reader, objects: list[ManifestObject], setup: KueueSetup) -> None:
    """A note for a TAS flavor whose nodeLabels select no Node carrying every level of its Topology."""
    topologies = {t.name: t for t in setup.topologies}
    labels = []
    for o in objects:
        if o.kind == "Node":
            meta = o.doc.get("metadata") if isinstance(o.doc.get("metadata"), Mapping) else {}
            found = meta.get("labels") if isinstance(meta.get("labels"), Mapping) else {}
            labels.append({str(k): v for k, v in found.items()})
    supplied = any(o.kind in NODE_SUPPLIERS for o in objects)
    for f in setup.flavors:
        t = topologies.get(f.topology_name)
        if t is None or any(matches_flavor(node, f, t) for node in labels):
            continue
        why = (f"ResourceFlavor {f.name}: no Node matches its nodeLabels {dict(f.node_labels)} and carries a label for "
               f"every level of Topology {t.name} ({', '.join(t.levels)})")
        r.notes.append(f"{why}: its topology-aware workloads wait until a node supplier adds such nodes" if supplied
                       else f"{why}: Kueue finds no topology domain, and its topology-aware workloads stay pending")


#: The board's words for a Topology no ResourceFlavor names (:mod:`gangkit.manifests.companions` warns with them).
UNNAMED_TOPOLOGY = ("no ResourceFlavor names it (spec.topologyName), so it has no effect; topology-aware scheduling "
                    "is simulated only for flavors that name a Topology")


def drop_companion_notes(r: Reader, objects: list[ManifestObject], setup: KueueSetup, text: str) -> None:
    """Take back the board's warning that Topology objects are not simulated (``text``) for those a flavor names:
    ``gangkit run`` simulates them (a Topology no flavor names keeps the warning: it has no effect)."""
    named = {f.topology_name for f in setup.flavors}
    said = {f"{o.label} ({o.doc.get('apiVersion')}) is accepted and not simulated: {text}"
            for o in objects if o.kind == "Topology" and o.name in named}
    r.notes[:] = [n for n in r.notes if n not in said]


def topology_manifest(t: Topology, api_version: str) -> dict:
    return {"apiVersion": api_version, "kind": "Topology", "metadata": {"name": t.name},
            "spec": {"levels": [{"nodeLabel": level} for level in t.levels]}}


def template_annotations(request: TopologyRequest) -> dict[str, str]:
    """The pod template annotation that asks for ``request``."""
    if request.required is not None:
        return {REQUIRED: request.required}
    if request.preferred is not None:
        return {PREFERRED: request.preferred}
    return {UNCONSTRAINED: "true" if request.unconstrained else "false"}
