"""The reader every family of manifests builds on: a customs officer who writes one report.

Picture a customs officer at a border. Every document that crosses (every
manifest) is checked field by field, but nobody is sent back at the first
mistake: each problem goes on the report, one line naming the document and
the field, the way the Kubernetes API server answers::

    Job default/train: spec.parallelism: expected a whole number >= 1, got 0

At the end the whole report is handed over at once (one
:class:`~gangkit.model.errors.ScenarioError`), so a learner fixes everything
in one pass. Fields the officer does not know are not refused but written
down, and listed together in one warning (:class:`GangkitInputWarning`): a
silently ignored ``tolerations`` would make the simulation disagree with the
cluster.

Every family of kinds (the core Kubernetes kinds, the node suppliers, the
gang schedulers, Kueue, Volcano) reads its objects with one :class:`Reader`
and the shared pieces here: the field schemas (:data:`META`,
:data:`POD_SPEC`, :data:`ANY`), gangkit's annotations, quantities and
durations, the parsed object (:class:`ManifestObject`) and YAML parsing.
This module knows no family.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from gangkit.model.errors import Problem, ScenarioError
from gangkit.model.quantity import parse_cpu, parse_duration, parse_gpus, parse_memory, parse_quantity

__all__ = [
    "ANY", "CHECKPOINT_INTERVAL", "GPU", "JOB_ANNOTATIONS", "META", "POD_SPEC", "PROGRESS", "QUEUE_LABEL", "RUN_TIME",
    "SUBMIT_TIME", "GangkitInputWarning", "ManifestObject", "Reader", "looks_like_path", "parse_yaml",
]

GPU = "nvidia.com/gpu"
RUN_TIME = "gangkit/run-time"
SUBMIT_TIME = "gangkit/submit-time"
PROGRESS = "gangkit/progress"
CHECKPOINT_INTERVAL = "gangkit/checkpoint-interval"
JOB_ANNOTATIONS = (RUN_TIME, SUBMIT_TIME, PROGRESS, CHECKPOINT_INTERVAL)  # gangkit's annotations on a Job
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"  # Kueue's label naming the Job's LocalQueue


class GangkitInputWarning(UserWarning):
    """Something in the input was read with a default or not read at all (the run still works)."""


# --- which fields gangkit knows ------------------------------------------------
# A tree per kind: ``ANY`` accepts the whole subtree, a dict lists the known
# keys ("*" = any key), a one-element list describes each item of a list.
# Known fields are either read by gangkit or do not change where and when pods
# run (image, command, env...). Everything else is listed in one warning.

ANY = True
_NAMES = dict.fromkeys
META = _NAMES(
    ["name", "namespace", "labels", "annotations", "uid", "generateName", "creationTimestamp",
     "resourceVersion", "generation", "managedFields", "ownerReferences", "finalizers", "selfLink"],
    ANY,
)
_RESOURCE_NAMES = _NAMES(["cpu", "memory", GPU, "ephemeral-storage"], ANY)
_CONTAINER = {
    **_NAMES(
        ["name", "image", "imagePullPolicy", "command", "args", "env", "envFrom", "workingDir", "ports",
         "volumeMounts", "volumeDevices", "livenessProbe", "readinessProbe", "startupProbe", "lifecycle",
         "securityContext", "terminationMessagePath", "terminationMessagePolicy", "stdin", "stdinOnce",
         "tty", "resizePolicy"],
        ANY,
    ),
    "resources": {"limits": _RESOURCE_NAMES, "requests": _RESOURCE_NAMES},
}
POD_SPEC = {
    **_NAMES(
        ["nodeSelector", "priorityClassName", "restartPolicy", "schedulerName", "serviceAccount",
         "serviceAccountName", "automountServiceAccountToken", "volumes", "terminationGracePeriodSeconds",
         "imagePullSecrets", "securityContext", "hostname", "subdomain", "dnsPolicy", "dnsConfig",
         "enableServiceLinks", "hostAliases", "setHostnameAsFQDN", "shareProcessNamespace", "hostIPC",
         "hostPID", "hostNetwork"],
        ANY,
    ),
    "containers": [_CONTAINER],
}


# --- YAML in -------------------------------------------------------------------


def looks_like_path(text: str) -> bool:
    """Is this string a file name (``cluster.yaml``) rather than YAML text?"""
    if "\n" in text or ":" in text.split("/")[-1]:
        return False
    return text.endswith((".yaml", ".yml", ".json")) or Path(text).is_file()


def parse_yaml(text: str, label: str) -> list:
    """Every document of a YAML stream; a syntax error becomes one problem with its position."""
    try:
        return [d for d in yaml.safe_load_all(text) if d is not None]
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        what = " ".join(str(x) for x in (getattr(e, "context", None), getattr(e, "problem", None)) if x) or str(e)
        raise ScenarioError([Problem(label, where, f"invalid YAML: {what}")]) from None


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
        self.problems.append(Problem(obj, fieldname, message))

    def attempt(self, parse: Callable[..., Any], value: Any, obj: str, fieldname: str) -> Any:
        try:
            return parse(value, obj=obj, field=fieldname)
        except ScenarioError as e:
            self.problems.extend(e.problems)
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

    def whole(self, value: Any, obj: str, fieldname: str, minimum: int) -> int | None:
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            self.error(obj, fieldname, f"expected a whole number >= {minimum}, got {value!r}")
            return None
        return value

    # one object

    def check_object(self, doc: Mapping, where: str, known: Any, annotations: tuple = ()) -> ManifestObject | None:
        """One object's metadata checked and its unknown fields noted; None after recording a problem.

        ``known`` is its field tree; ``annotations`` are the ``gangkit/*``
        annotations its ``metadata`` may carry (any other is an unknown field).
        """
        meta = doc.get("metadata") if isinstance(doc.get("metadata"), Mapping) else {}
        o = ManifestObject(dict(doc), str(doc.get("kind")), where, meta.get("name"), meta.get("namespace"))
        if not isinstance(doc.get("metadata"), Mapping):
            self.error(o.label, "metadata", "expected a mapping with at least a name")
            return None
        if not isinstance(o.name, str) or not o.name:
            self.error(o.label, "metadata.name", f"expected a non-empty name, got {o.name!r}")
            return None
        if o.namespace is not None and (not isinstance(o.namespace, str) or not o.namespace):
            self.error(o.label, "metadata.namespace", f"expected a non-empty string, got {o.namespace!r}")
            return None
        self.find_unknown(o.doc, known, o.label, "")
        template = _dig(doc, "spec", "template", "metadata")
        for where_ann, ann in (("metadata", meta), ("spec.template.metadata", template)):
            found = ann.get("annotations") if isinstance(ann, Mapping) else None
            for key in found if isinstance(found, Mapping) else ():
                if str(key).startswith("gangkit/") and (key not in annotations or where_ann != "metadata"):
                    self.unknown.append(f"{o.label}: {where_ann}.annotations.{key}")
        return o

    def find_unknown(self, node: Any, known: Any, obj: str, path: str) -> None:
        """Note every field of ``node`` that the tree ``known`` does not list (with a close match, if any)."""
        if known is ANY:
            return
        if isinstance(known, list):
            for i, item in enumerate(node if isinstance(node, list) else []):
                self.find_unknown(item, known[0], obj, f"{path}[{i}]")
            return
        for key, value in node.items() if isinstance(node, Mapping) else ():
            sub = known.get(key, known.get("*"))
            here = f"{path}.{key}" if path else str(key)
            if sub is None:
                close = difflib.get_close_matches(str(key), [str(k) for k in known], n=1, cutoff=0.8)
                self.unknown.append(f"{obj}: {here}" + (f" (did you mean {close[0]}?)" if close else ""))
            else:
                self.find_unknown(value, sub, obj, here)

    # what a pod asks for (a batch/v1 Job's pod template, a Volcano Job's task)

    def pod_request(self, pod: dict, obj: str) -> tuple[int, float, int] | None:
        """One pod's (GPUs, cores, bytes): the sum over its containers.

        Models the API server's rules for requests: a limit without a request
        sets the request; ``nvidia.com/gpu`` is an extended resource, so it
        needs a limit, a whole number, and a request (if given) equal to the limit.
        """
        containers = pod.get("containers")
        if not isinstance(containers, list) or not containers:
            self.error(obj, "spec.template.spec.containers", "expected a list of at least one container")
            return None
        gpus, cpu, memory, ok = 0, 0.0, 0, True
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


def _dig(doc: Any, *keys: str) -> Any:
    for k in keys:
        if not isinstance(doc, Mapping):
            return None
        doc = doc.get(k)
    return doc
