"""Who names whom: the references by name that `gangkit check` follows between objects.

A pod template names a PriorityClass, a Volcano Job or PodGroup its Queue, a Job Kueue's
WorkloadPriorityClass (by label). Each such reference is a :class:`NameRef`; the checks in
:mod:`gangkit.consistency.references` then look for the object named, the way the API server or
the controller would when the object is created.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gangkit.manifests.core import SYSTEM_PRIORITY_CLASSES
from gangkit.model.reading import ManifestObject
from gangkit.volcano.api import DEFAULT_QUEUE

PRIORITY_CLASS_LABEL = "kueue.x-k8s.io/priority-class"


def dig(doc: Any, *keys: str) -> Any:
    """``doc[k1][k2]...``, or None where a level is missing or not a mapping."""
    for k in keys:
        if not isinstance(doc, Mapping):
            return None
        doc = doc.get(k)
    return doc


@dataclass
class NameRef:
    """One object naming another by name: who, in which field, which kind and name, and what it found."""

    owner: ManifestObject
    field: str
    kind: str
    name: str
    namespace: str | None = None
    target: ManifestObject | None = None


def labels_of(o: ManifestObject) -> dict:
    """An object's metadata.labels that are strings."""
    labels = dig(o.doc, "metadata", "labels")
    return {str(k): v for k, v in labels.items() if isinstance(v, str)} if isinstance(labels, Mapping) else {}


def priority_refs(objects: list[ManifestObject]) -> list[NameRef]:
    """Every priorityClassName: pod templates, Volcano Jobs and their tasks, Volcano PodGroups."""
    out = []
    for o in objects:
        places: list[tuple[str, Any]] = []
        if o.role == "Job":
            places.append(("spec.template.spec.priorityClassName", dig(o.doc, "spec", "template", "spec", "priorityClassName")))
        elif o.role == "VolcanoJob":
            places.append(("spec.priorityClassName", dig(o.doc, "spec", "priorityClassName")))
            tasks = dig(o.doc, "spec", "tasks")
            for i, t in enumerate(tasks if isinstance(tasks, list) else []):
                places.append((f"spec.tasks[{i}].template.spec.priorityClassName",
                               dig(t, "template", "spec", "priorityClassName")))
        elif o.role == "PodGroup":
            places.append(("spec.priorityClassName", dig(o.doc, "spec", "priorityClassName")))
        elif o.role == "JobSet":
            entries = dig(o.doc, "spec", "replicatedJobs")
            for i, entry in enumerate(entries if isinstance(entries, list) else []):
                places.append((f"spec.replicatedJobs[{i}].template.spec.template.spec.priorityClassName",
                               dig(entry, "template", "spec", "template", "spec", "priorityClassName")))
        for where, name in places:
            if isinstance(name, str) and name and name not in SYSTEM_PRIORITY_CLASSES:
                out.append(NameRef(o, where, "PriorityClass", name))
    return out


def volcano_queue_refs(objects: list[ManifestObject]) -> list[NameRef]:
    """Every Volcano queue a Volcano Job or PodGroup names (``default`` always exists)."""
    out = []
    for o in objects:
        if o.role in ("VolcanoJob", "PodGroup"):
            name = dig(o.doc, "spec", "queue")
            if isinstance(name, str) and name and name != DEFAULT_QUEUE:
                out.append(NameRef(o, "spec.queue", "Queue", name))
    return out


def workload_priority_class_refs(objects: list[ManifestObject]) -> list[NameRef]:
    """Every WorkloadPriorityClass a Job or JobSet names with Kueue's priority-class label."""
    return [NameRef(o, f"metadata.labels.{PRIORITY_CLASS_LABEL}", "WorkloadPriorityClass", labels_of(o)[PRIORITY_CLASS_LABEL])
            for o in objects if o.role in ("Job", "JobSet") and PRIORITY_CLASS_LABEL in labels_of(o)]
