"""The files a prediction reads, and what it needs from them that the scenario does not keep.

``gangkit run`` reads a dump and workload files into a scenario (:func:`gangkit.manifests.load_files`).
A prediction needs a little more of the manifests themselves: which scenario jobs came from the
workload files (the new ones, and their kind), which objects carry their own ``gangkit/run-time``
annotation (their run time is not drawn), a pod's tolerations and a Node's taints (for the filter
rows). So the YAML is read a second time, as plain objects, and a scenario job is matched to the object
it came from by namespace and name.
"""

from __future__ import annotations

import os
from pathlib import Path

import yaml

from gangkit.model.errors import Problem, ScenarioError


def yaml_paths(value, what: str) -> list[Path]:
    """One path or several, each an existing file (else an error naming ``what`` and the path)."""
    items = [value] if isinstance(value, (str, os.PathLike)) else list(value)
    out = []
    for item in items:
        p = Path(item)
        if not p.is_file():
            raise ScenarioError([Problem(f"{what} {item}", "", "not found (expected a YAML file)")])
        out.append(p)
    return out


def yaml_objects(path: Path) -> list[dict]:
    """The objects of one YAML file, a ``kind: List`` unpacked (for the fields the scenario does not keep)."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        docs = [d for d in yaml.load_all(path.read_text(), Loader=loader) if isinstance(d, dict)]
    except yaml.YAMLError:
        return []  # the scenario's reader has refused it already, with the line
    out = []
    for d in docs:
        items = d.get("items") if d.get("kind") == "List" else None
        out.extend(i for i in items if isinstance(i, dict)) if isinstance(items, list) else out.append(d)
    return out


def worth_reading(path: Path) -> bool:
    """Whether a dump holds what the scenario does not keep (a ``gangkit/run-time`` annotation, a Node's taints or
    ``unschedulable``): reading a large dump's YAML again costs as much as reading it once, so only then."""
    text = path.read_text()
    return any(word in text for word in ("gangkit/run-time", "taints", "unschedulable"))


def object_key(doc: dict) -> tuple[str, str]:
    """(namespace, name) of a manifest object (namespace ``default`` when it names none)."""
    meta = doc.get("metadata") if isinstance(doc.get("metadata"), dict) else {}
    return str(meta.get("namespace") or "default"), str(meta.get("name") or "")


def owns(doc_key: tuple[str, str], job) -> bool:
    """Whether the scenario job ``job`` was read from the object ``doc_key`` (a Deployment's pods are ``name-i``)."""
    ns, name = doc_key
    if (job.namespace or "default") != ns:
        return False
    rest = job.name[len(name) + 1:] if job.name.startswith(name + "-") else None
    return job.name == name or (rest is not None and rest.isdigit())


def annotated(docs: list[dict]) -> set[tuple[str, str]]:
    """(namespace, name) of the objects whose metadata carries ``gangkit/run-time``."""
    from gangkit.manifests import RUN_TIME

    out = set()
    for d in docs:
        ann = (d.get("metadata") or {}).get("annotations") if isinstance(d.get("metadata"), dict) else None
        if isinstance(ann, dict) and RUN_TIME in ann:
            out.add(object_key(d))
    return out
