"""The node suppliers' YAML: Karpenter's NodePools, gangkit's Karpenter and ClusterAutoscaler kinds.

Picture the purchasing office of a cluster: it does not run anything, it
buys machines when pods wait. Its orders are written down as manifests::

    apiVersion: karpenter.sh/v1
    kind: NodePool
    metadata: {name: a100}
    spec:
      limits: {nvidia.com/gpu: "32"}          # at most 32 GPUs bought
      template:
        spec:
          requirements:
          - {key: node.kubernetes.io/instance-type, operator: In, values: [gpu-8]}
      disruption: {consolidationPolicy: WhenEmpty, consolidateAfter: 5m}

What is read (see ``docs/reference/scenario-yaml.md`` for every field):

- ``karpenter.sh/v1`` **NodePool**: the instance types its requirements
  allow (every operator; which types it chooses from and how each key is
  evaluated: :mod:`gangkit.supply.catalogue`), its limits on
  ``nvidia.com/gpu``, ``cpu`` and ``memory`` (a limit on any other resource
  is noted as not modelled), its disruption policy and budget, its weight
  and node labels, and
  ``spec.replicas`` for a static NodePool (with ``limits.nodes``);
- ``gangkit/v1alpha1`` **Karpenter**: the instance types (capacity, price),
  batching windows and the stages a new node goes through (registered,
  initialized, image pull). Without one, or one that lists no
  ``spec.instanceTypes``: gangkit's default instance types, plus the
  catalogue's real types for a NodePool that names or selects them;
- ``gangkit/v1alpha1`` **ClusterAutoscaler**: cluster-autoscaler's flags
  (scan interval, expander, back-off, scale-down) and its node groups;
  ``maxEmptyBulkDelete`` is refused by name (cluster-autoscaler 1.33 removed
  ``--max-empty-bulk-delete``);
- ``autoscaling.x-k8s.io/v1`` (or ``v1beta1``) **ProvisioningRequest** with
  the ``v1`` **PodTemplates** its pod sets name: capacity a user asks
  cluster-autoscaler for directly; and on the pod template of any workload,
  the ``autoscaling.x-k8s.io/consume-provisioning-request`` annotation that
  makes its pods consumers of one (:func:`read_consumer`).

They become the suppliers' configurations, :class:`~gangkit.supply.KarpenterSetup` and
:class:`~gangkit.supply.AutoscalerSetup`, on ``Scenario.karpenter`` and
``Scenario.autoscaler`` (each run builds its supplier from them), and
:class:`~gangkit.supply.provisioning_request.ProvisioningRequestSpec` on
``Scenario.provisioning_requests``.
"""

from __future__ import annotations

from collections.abc import Mapping

from gangkit.model.errors import Problem
from gangkit.model.jobs import PodSet
from gangkit.model.reading import ANY, META, POD_SPEC, SUBMIT_TIME, ManifestObject, Reader, short
from gangkit.supply.autoscaler import EXPANDERS
from gangkit.supply.provisioning_request import (
    CONSUME_ANNOTATION,
    DEPRECATED_CONSUME_ANNOTATION,
    PROVISIONING_CLASSES,
    ProvisioningRequestSpec,
    consumed_name,
)
from gangkit.supply.setup_manifests import (  # noqa: F401 (re-exported: the configurations' kinds)
    DEFAULT_TYPES,
    MAX_PRICE,
    read_cluster_autoscaler,
    read_karpenter,
    read_nodepool,
)

__all__ = ["DEFAULT_TYPES", "EXPANDERS", "KNOWN_FIELDS", "MAX_PRICE", "read_cluster_autoscaler", "read_consumer",
           "read_karpenter", "read_nodepool", "read_object", "read_provisioning_requests"]

_NAMES = dict.fromkeys
KNOWN_FIELDS: dict[str, dict] = {
    "NodePool": {
        "apiVersion": ANY, "kind": ANY, "metadata": META,
        "spec": {
            "weight": ANY, "limits": ANY, "replicas": ANY,
            "template": {"metadata": _NAMES(["labels", "annotations"], ANY),
                         "spec": {"nodeClassRef": ANY,
                                  "requirements": [_NAMES(["key", "operator", "values", "minValues"], ANY)]}},
            "disruption": {"consolidationPolicy": ANY, "consolidateAfter": ANY, "budgets": [{"nodes": ANY}]},
        },
    },
    "Karpenter": {
        "apiVersion": ANY, "kind": ANY, "metadata": _NAMES(["name", "labels", "annotations"], ANY),
        "spec": {
            **_NAMES(["batchIdleDuration", "batchMaxDuration"], ANY),
            "stages": _NAMES(["registered", "initialized", "imagePull"], ANY),
            "instanceTypes": [_NAMES(["name", "capacity", "pricePerHour"], ANY)],
        },
    },
    "ClusterAutoscaler": {
        "apiVersion": ANY, "kind": ANY, "metadata": _NAMES(["name", "labels", "annotations"], ANY),
        "spec": {
            **_NAMES(["scanInterval", "expander", "maxNodeProvisionTime", "initialNodeGroupBackoffDuration",
                      "maxNodeGroupBackoffDuration", "scaleDownUnneededTime", "scaleDownDelayAfterAdd",
                      "scaleDownUtilizationThreshold", "provisioningRequestExpiry",
                      "maxEmptyBulkDelete"], ANY),  # read only to refuse it by name
            "stages": _NAMES(["registered", "initialized", "imagePull"], ANY),
            "nodeGroups": [_NAMES(["name", "minSize", "maxSize", "instanceType", "capacity", "pricePerHour", "labels",
                                   "stockout"], ANY)],
        },
    },
    "ProvisioningRequest": {
        "apiVersion": ANY, "kind": ANY, "metadata": META,
        "spec": {"provisioningClassName": ANY, "podSets": [{"podTemplateRef": {"name": ANY}, "count": ANY}],
                 "parameters": ANY},
    },
    "PodTemplate": {"apiVersion": ANY, "kind": ANY, "metadata": META, "template": {"metadata": META, "spec": POD_SPEC}},
}


def read_object(r: Reader, doc: Mapping, where: str, role: str) -> ManifestObject | None:
    """Check one supplier object (its metadata and unknown fields)."""
    return r.check_object(doc, where, KNOWN_FIELDS[role], (SUBMIT_TIME,) if role == "ProvisioningRequest" else ())


def read_consumer(r: Reader, template_annotations: dict, own_annotations: dict, obj: str) -> str | None:
    """The ProvisioningRequest a workload's pods consume: the annotation on its pod template (None: none).

    cluster-autoscaler reads it from the pods, so an annotation on the
    workload's own metadata (as on a Deployment) reaches no pod: noted, not used.
    """
    name = consumed_name(template_annotations)
    if name is None:
        if consumed_name(own_annotations) is not None:
            r.notes.append(f"{obj}: the {CONSUME_ANNOTATION} annotation is on its own metadata, not on its pod "
                           "template; cluster-autoscaler reads it from the pods, which do not get it, so they are "
                           "ordinary pending pods (move it to the pod template's metadata.annotations)")
        return None
    if CONSUME_ANNOTATION not in template_annotations:
        r.notes.append(f"{obj}: {DEPRECATED_CONSUME_ANNOTATION} is the deprecated spelling; cluster-autoscaler still "
                       f"reads it, as gangkit does (the current one is {CONSUME_ANNOTATION})")
    if not name:
        r.error(obj, f"metadata.annotations.{CONSUME_ANNOTATION}", "expected the name of a ProvisioningRequest, got ''")
        return None
    return name


def read_provisioning_requests(r: Reader, requests: list[ManifestObject], templates: list[ManifestObject],
                               jobs: list) -> list[ProvisioningRequestSpec]:
    """ProvisioningRequests, each with the pods of the PodTemplates its ``spec.podSets`` name (same namespace).

    A PodTemplate that is missing is an error (cluster-autoscaler would mark
    the request Failed, ``FailedToCreatePods``); ``spec.parameters`` are noted
    as not modelled. Jobs whose pods consume a request the input does not have
    are noted: cluster-autoscaler never scales up for them.
    """
    by_key = {(o.namespace or "default", o.name): o for o in templates}
    used: set = set()
    out = []
    for o in requests:
        obj = o.label
        spec = r.mapping(o.doc.get("spec"), obj, "spec")
        cls = spec.get("provisioningClassName")
        if cls not in PROVISIONING_CLASSES:
            r.error(obj, "spec.provisioningClassName", f"expected one of {', '.join(PROVISIONING_CLASSES)} (the classes "
                    f"cluster-autoscaler serves), got {short(cls)}")
        if spec.get("parameters"):
            r.notes.append(f"{obj}: spec.parameters are not modelled")
        items = spec.get("podSets")
        if not isinstance(items, list) or not items:
            r.error(obj, "spec.podSets", f"expected a list of at least one pod set, got {short(items)}")
            continue
        pod_sets = []
        for i, item in enumerate(items):
            where = f"spec.podSets[{i}]"
            item = r.mapping(item, obj, where)
            count = r.whole(item.get("count"), obj, f"{where}.count", 1)
            ref = r.mapping(item.get("podTemplateRef"), obj, f"{where}.podTemplateRef").get("name")
            template = by_key.get((o.namespace or "default", ref))
            if template is None:
                r.error(obj, f"{where}.podTemplateRef.name", f"no PodTemplate {short(ref)} in namespace "
                        f"{o.namespace or 'default'}; cluster-autoscaler could not make the pods "
                        "(its condition: Failed, FailedToCreatePods)")
                continue
            used.add((o.namespace or "default", ref))
            shape = _template_pods(r, template)
            if count is not None and shape is not None:
                pod_sets.append(PodSet(ref, count, *shape))
        annotations = r.strings(r.mapping(o.doc.get("metadata"), obj, "metadata").get("annotations"), obj,
                                "metadata.annotations")
        created = r.duration(annotations[SUBMIT_TIME], obj, f"metadata.annotations.{SUBMIT_TIME}") \
            if SUBMIT_TIME in annotations else 0.0
        if len(pod_sets) == len(items) and cls in PROVISIONING_CLASSES and created is not None:
            pr = ProvisioningRequestSpec(o.name, tuple(pod_sets), cls, o.namespace, float(created))
            for p in pr.problems():
                r.problems.append(Problem(obj, p.field, p.message))
            out.append(pr)
    for key, t in by_key.items():
        if key not in used:
            r.notes.append(f"{t.label} is not used: no ProvisioningRequest's spec.podSets names it")
    names = {(pr.namespace or "default", pr.name) for pr in out}
    for j in jobs:
        wanted = j.consume_provisioning_request
        if wanted is not None and (j.namespace or "default", wanted) not in names:
            r.notes.append(f"Job {j.key}: its pods consume ProvisioningRequest {wanted!r}, which the input does not "
                           "have; cluster-autoscaler never scales up for them, so they run only on room that exists")
    return out


def _template_pods(r: Reader, o: ManifestObject) -> tuple | None:
    """A PodTemplate's pod: (GPUs, cores, bytes, node selector), its fields named as the PodTemplate has them."""
    template = r.mapping(o.doc.get("template"), o.label, "template")
    pod = r.mapping(template.get("spec"), o.label, "template.spec")
    sub = Reader(r.label, base=r.base)
    request = sub.pod_request(pod, o.label)
    r.problems.extend(Problem(p.obj, p.field.replace("spec.template.", "template.", 1), p.message) for p in sub.problems)
    selector = r.strings(pod.get("nodeSelector"), o.label, "template.spec.nodeSelector")
    if request is None:
        return None
    return (*request, selector)
