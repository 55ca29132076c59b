"""The reader every family of manifests builds on: a customs officer who writes one report.

Picture a customs officer at a border. Every document that crosses (every
manifest) is checked field by field, but nobody is sent back at the first
mistake: each problem goes on the report, one line naming the document and
the field, the way the Kubernetes API server answers::

    Job default/train: spec.parallelism: expected a whole number >= 1, got 0

At the end the whole report is handed over at once (one
:class:`~gangkit.model.errors.ScenarioError`), so a learner fixes everything
in one pass. Fields the officer does not know are not refused but written
down, and listed together in one warning
(:class:`~gangkit.model.reading.yaml_text.GangkitInputWarning`): a silently
ignored ``tolerations`` would make the simulation disagree with the cluster.

Every family of kinds (the core Kubernetes kinds, the node suppliers, the
gang schedulers, Kueue, Volcano) reads its objects with one :class:`Reader`:
the parsed object (:class:`ManifestObject`), typed getters for quantities,
durations and counts, the check of an object against its field tree
(:mod:`gangkit.model.reading.fields`) and what a pod asks for. This module
knows no family.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gangkit.model.errors import Problem, ScenarioError
from gangkit.model.jobs import PodSet
from gangkit.model.quantity import (
    format_cpu,
    format_memory,
    parse_cpu,
    parse_duration,
    parse_gpus,
    parse_memory,
    parse_quantity,
)
from gangkit.model.reading.fields import ANY, GPU, MAX_INT32, STRING_FIELDS
from gangkit.model.reading.yaml_text import short

__all__ = ["ManifestObject", "Reader", "is_whole", "new_object", "pod_resources", "spec_of"]


@dataclass
class ManifestObject:
    """One manifest with where it came from and how messages name it."""

    doc: dict
    kind: str
    where: str  # "document 3" or "document 2, items[0]"
    name: str | None = None
    namespace: str | None = None
    role: str = ""  # what the reader groups it under (gangkit.manifests.kinds); the kind when empty
    namespaced: bool = False  # its name is unique per namespace (else per cluster)

    @property
    def label(self) -> str:
        if not self.name:
            return f"{self.kind} ({self.where})"
        return f"{self.kind} {self.namespace}/{self.name}" if self.namespace else f"{self.kind} {self.name}"


def new_object(doc: Mapping, where: str, kind: str | None = None) -> ManifestObject:
    """A document as a :class:`ManifestObject`; a name or namespace that is not a string is left out of its label."""
    meta = doc.get("metadata") if isinstance(doc.get("metadata"), Mapping) else {}
    name, namespace = meta.get("name"), meta.get("namespace")
    return ManifestObject(dict(doc), str(doc.get("kind")) if kind is None else kind, where,
                          name if isinstance(name, str) else None, namespace if isinstance(namespace, str) else None)


@dataclass
class Reader:
    """Reads manifests, collecting problems, unknown fields and notes for one report."""

    label: str
    problems: list[Problem] = field(default_factory=list)
    base: Path | None = None  # the YAML file's folder: relative paths inside the file start here
    unknown: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    # small typed getters: each records a problem and returns a harmless value

    def error(self, obj: str, fieldname: str, message: str) -> None:
        self.problems.append(Problem(obj, fieldname, _capped(message)))

    def attempt(self, parse: Callable[..., Any], value: Any, obj: str, fieldname: str) -> Any:
        try:
            return parse(value, obj=obj, field=fieldname)
        except ScenarioError as e:
            self.problems.extend(Problem(p.obj, p.field, _capped(p.message)) for p in e.problems)
            return None

    def duration(self, value: Any, obj: str, fieldname: str) -> float | None:
        """Seconds: a number or a Go duration (``90s``, ``1h30m``); None after recording a problem."""
        return self.attempt(parse_duration, value, obj, fieldname)

    def gpus(self, value: Any, obj: str, fieldname: str) -> int | None:
        return self.attempt(parse_gpus, value, obj, fieldname)

    def cpu(self, value: Any, obj: str, fieldname: str) -> float | None:
        return self.attempt(parse_cpu, value, obj, fieldname)

    def memory(self, value: Any, obj: str, fieldname: str) -> int | None:
        return self.attempt(parse_memory, value, obj, fieldname)

    def quantity(self, value: Any, obj: str, fieldname: str) -> Any:
        """The exact value of a Kubernetes quantity (a Fraction), or None."""
        return self.attempt(parse_quantity, value, obj, fieldname)

    def mapping(self, value: Any, obj: str, fieldname: str) -> dict:
        if value is None:
            return {}
        if not isinstance(value, Mapping):
            self.error(obj, fieldname, f"expected a mapping, got {type(value).__name__} {value!r}")
            return {}
        return dict(value)

    def named_items(self, spec: dict, key: str, obj: str, what: str) -> list[tuple[str, dict, str]] | None:
        """The entries of ``spec[key]``, a list whose entries each need a name: ``(path, entry, name)``.

        None (with an error) when the list is missing or empty; an entry
        without a name gets its own error and is left out.
        """
        raw = spec.get(key)
        if not isinstance(raw, list) or not raw:
            self.error(obj, f"spec.{key}", f"expected a list of at least one {what}, got {raw!r}")
            return None
        out = []
        for i, item in enumerate(raw):
            where = f"spec.{key}[{i}]"
            item = self.mapping(item, obj, where)
            name = item.get("name")
            if not isinstance(name, str) or not name:
                self.error(obj, f"{where}.name", f"expected a non-empty name, got {name!r}")
                continue
            out.append((where, item, name))
        return out

    def strings(self, value: Any, obj: str, fieldname: str) -> dict[str, str]:
        """A map of string to string (labels, annotations, nodeSelector): YAML ``true`` or ``8`` must be quoted."""
        out = {}
        for k, v in self.mapping(value, obj, fieldname).items():
            if isinstance(v, str):
                out[str(k)] = v
            else:
                self.error(obj, f"{fieldname}.{k}", f"expected a string, got {v!r} (quote it in YAML: \"{v}\")")
        return out

    def spec_count(self, o: ManifestObject, key: str, minimum: int) -> None:
        """Check ``spec.<key>`` of an object as its CRD does (an int32 >= ``minimum``), whether a Job uses it or not.

        The API server refuses such an object when it is created, before any
        Job names it (a PodGroup's ``minMember``); a non-mapping ``spec`` is
        refused here too. Readers that use the object later read it with
        :func:`spec_of` and :func:`is_whole`, quietly: it is reported once.
        """
        spec = self.mapping(o.doc.get("spec"), o.label, "spec")
        if spec.get(key) is not None:
            self.whole(spec[key], o.label, f"spec.{key}", minimum)

    def whole(self, value: Any, obj: str, fieldname: str, minimum: int, maximum: int = MAX_INT32) -> int | None:
        """A whole number from ``minimum`` to ``maximum``: by default an int32, as the API's counts are."""
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            self.error(obj, fieldname, f"expected a whole number >= {minimum}, got {short(value)}")
            return None
        if value > maximum:
            what = " (an int32 in the Kubernetes API)" if maximum == MAX_INT32 else ""
            self.error(obj, fieldname, f"expected a whole number <= {maximum}{what}, got {short(value)}")
            return None
        return value

    # one object

    def check_object(self, doc: Mapping, where: str, known: Any, annotations: tuple = ()) -> ManifestObject | None:
        """One object's metadata checked and its unknown fields noted; None after recording a problem.

        ``known`` is its field tree; ``annotations`` are the ``gangkit/*``
        annotations its ``metadata`` may carry (any other is an unknown field).
        """
        o = new_object(doc, where)
        meta = doc.get("metadata") if isinstance(doc.get("metadata"), Mapping) else {}
        if not isinstance(doc.get("metadata"), Mapping):
            self.error(o.label, "metadata", "expected a mapping with at least a name")
            return None
        if not isinstance(meta.get("name"), str) or not o.name:
            self.error(o.label, "metadata.name", f"expected a non-empty name, got {short(meta.get('name'))}")
            return None
        if meta.get("namespace") is not None and (not isinstance(o.namespace, str) or not o.namespace):
            self.error(o.label, "metadata.namespace", f"expected a non-empty string, got {short(meta.get('namespace'))}")
            return None
        if not self.find_unknown(o.doc, known, o.label, ""):
            return None
        template = _dig(doc, "spec", "template", "metadata")
        for where_ann, ann in (("metadata", meta), ("spec.template.metadata", template)):
            found = ann.get("annotations") if isinstance(ann, Mapping) else None
            for key in found if isinstance(found, Mapping) else ():
                if str(key).startswith("gangkit/") and (key not in annotations or where_ann != "metadata"):
                    self.unknown.append(f"{o.label}: {where_ann}.annotations.{key}")
        return o

    def find_unknown(self, node: Any, known: Any, obj: str, path: str) -> bool:
        """Note every field of ``node`` that the tree ``known`` does not list (with a close match, if any).

        Also the type rules every kind shares: a known field named in
        :data:`STRING_FIELDS` holds a string (or null), a key where any key
        is known (``"*"``: resource names) is a string, and each item of a
        list of objects (containers, tasks, pod sets...) is a mapping: the
        API server decodes ``containers: [null]`` into a container without
        a name and refuses it (``containers[0].name: Required value``).
        Returns False after recording a problem of that kind: the object is
        not read further.
        """
        if known is ANY:
            return True
        if isinstance(known, list):
            ok = True
            for i, item in enumerate(node if isinstance(node, list) else []):
                if isinstance(known[0], dict) and not isinstance(item, Mapping):
                    self.error(obj, f"{path}[{i}]", _not_an_item(path, item))
                    ok = False
                    continue
                ok = self.find_unknown(item, known[0], obj, f"{path}[{i}]") and ok
            return ok
        ok = True
        for key, value in node.items() if isinstance(node, Mapping) else ():
            sub = known.get(key, known.get("*"))
            here = f"{path}.{key}" if path else str(key)
            if sub is not None and key not in known and not isinstance(key, str):
                self.error(obj, here, f"expected a name (a string) as the key, got {type(key).__name__} {short(key)} "
                                      "(quote it in YAML)")
                ok = False
            elif sub is not None and key in STRING_FIELDS and value is not None and not isinstance(value, str):
                self.error(obj, here, f"expected a string, got {type(value).__name__} {short(value)}")
                ok = False
            elif sub is None:
                close = difflib.get_close_matches(str(key), [str(k) for k in known], n=1, cutoff=0.8)
                self.unknown.append(f"{obj}: {here}" + (f" (did you mean {close[0]}?)" if close else ""))
            else:
                ok = self.find_unknown(value, sub, obj, here) and ok
        return ok

    # what a pod asks for (a batch/v1 Job's pod template, a Volcano Job's task)

    def pod_request(self, pod: dict, obj: str) -> tuple[int, float, int] | None:
        """One pod's (GPUs, cores, bytes): the sum over its containers.

        Models the API server's rules for requests: a limit without a request
        sets the request; ``nvidia.com/gpu`` is an extended resource, so it
        needs a limit, a whole number, and a request (if given) equal to the limit.
        ``initContainers`` are not read (the warning lists them), but an item
        that is not a container is refused, as the API server refuses it.
        """
        containers = pod.get("containers")
        if not isinstance(containers, list) or not containers:
            self.error(obj, "spec.template.spec.containers", "expected a list of at least one container")
            return None
        gpus, cpu, memory, ok = 0, 0.0, 0, True
        init = pod.get("initContainers")  # not read (listed as unknown), but the API server refuses a bad one
        if init is not None and not isinstance(init, list):
            self.error(obj, "spec.template.spec.initContainers", f"expected a list of containers, got {short(init)}")
            ok = False
        for i, c in enumerate(init if isinstance(init, list) else []):
            if not isinstance(c, Mapping):
                self.error(obj, f"spec.template.spec.initContainers[{i}]", _not_an_item("initContainers", c))
                ok = False
        for i, c in enumerate(containers):
            base = f"spec.template.spec.containers[{i}]"
            c = self.mapping(c, obj, base)
            res = self.mapping(c.get("resources"), obj, f"{base}.resources")
            limits = self.mapping(res.get("limits"), obj, f"{base}.resources.limits")
            requests = self.mapping(res.get("requests"), obj, f"{base}.resources.requests")
            lim_field, req_field = f"{base}.resources.limits.", f"{base}.resources.requests."
            lim = self.gpus(limits[GPU], obj, lim_field + GPU) if GPU in limits else None
            req = self.gpus(requests[GPU], obj, req_field + GPU) if GPU in requests else None
            if GPU in requests and GPU not in limits:
                self.error(obj, lim_field + GPU, "Limit must be set for non overcommitable resources "
                           "(write the GPU count under limits; the request is copied from it)")
            elif req is not None and lim is not None and req != lim:
                self.error(obj, req_field + GPU, f"must be equal to {GPU} limit of {lim}, got {req}")
            gpus += lim or 0
            ok = ok and (GPU not in limits or lim is not None)
            for name, parse in (("cpu", self.cpu), ("memory", self.memory)):
                value = None
                if name in requests:
                    value = parse(requests[name], obj, req_field + name)
                    ok = ok and value is not None
                    top = parse(limits[name], obj, lim_field + name) if name in limits else None
                    if value is not None and top is not None and value > top:
                        self.error(obj, req_field + name, f"must be less than or equal to {name} limit of {limits[name]}")
                elif name in limits:
                    value = parse(limits[name], obj, lim_field + name)
                    ok = ok and value is not None
                if value is not None and name == "cpu":
                    cpu += value
                elif value is not None:
                    memory += value
        return (gpus, cpu, memory) if ok else None

    # the report

    def report(self) -> list[str]:
        """The warnings: first every unknown field, in one message listing their paths, then the notes."""
        notes = []
        if self.unknown:
            notes.append(
                f"gangkit does not read these {len(self.unknown)} field(s) (typos, or features it does not model):\n"
                + "\n".join(f"  {u}" for u in self.unknown)
            )
        return notes + self.notes

    def raise_problems(self) -> None:
        """Hand the report over: a ScenarioError with every problem, if there is one."""
        if self.problems:
            raise ScenarioError(self.problems)



def pod_resources(ps: PodSet) -> dict:
    """A container's ``resources`` for one pod of ``ps``: the GPUs as a limit, cpu and memory as requests.

    The way back of :meth:`Reader.pod_request` (every family writes a pod's requests this way).
    """
    resources: dict[str, dict] = {}
    if ps.gpus:
        resources["limits"] = {GPU: str(ps.gpus)}
    requests = {}
    if ps.cpu:
        requests["cpu"] = format_cpu(ps.cpu)
    if ps.memory:
        requests["memory"] = format_memory(ps.memory)
    if requests:
        resources["requests"] = requests
    return resources

#: What one item of a list of objects is, by the list's field name (for the message about an item that is not one).
_ITEM_NAMES = {
    "containers": "a container", "initContainers": "a container", "tasks": "a task", "podSets": "a pod set",
    "podGroups": "a pod group", "requirements": "a requirement", "budgets": "a budget",
    "instanceTypes": "an instance type", "nodeGroups": "a node group", "resourceGroups": "a resource group",
    "flavors": "a flavor", "resources": "a resource", "admissionChecks": "an admission check",
    "podSetAssignments": "a pod set assignment", "classes": "a job class",
}


def _not_an_item(path: str, item: Any) -> str:
    """``expected a mapping (a container), got null``: the message for a list item that is no object."""
    what = _ITEM_NAMES.get(path.rsplit(".", 1)[-1].split("[", 1)[0], "an object")
    got = "null" if item is None else f"{type(item).__name__} {short(item)}"
    return f"expected a mapping ({what}), got {got}"


def spec_of(o: ManifestObject) -> dict:
    """An object's ``spec`` (empty when it is not a mapping: :meth:`Reader.spec_count` reported that)."""
    spec = o.doc.get("spec")
    return dict(spec) if isinstance(spec, Mapping) else {}


def is_whole(value: Any, minimum: int, maximum: int = MAX_INT32) -> bool:
    """Is ``value`` a whole number from ``minimum`` to ``maximum`` (what :meth:`Reader.whole` accepts)?"""
    return isinstance(value, int) and not isinstance(value, bool) and minimum <= value <= maximum


def _capped(message: str, width: int = 2000) -> str:
    """A message of at most ``width`` characters: one line of the report, even when it quotes a huge value."""
    return message if len(message) <= width else message[: width - 3] + "..."


def _dig(doc: Any, *keys: str) -> Any:
    for k in keys:
        if not isinstance(doc, Mapping):
            return None
        doc = doc.get(k)
    return doc
