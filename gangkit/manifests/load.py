"""Scenarios written as Kubernetes manifests.

A *manifest* is a Kubernetes object written down as YAML: an ``apiVersion``
and a ``kind`` saying what it is, ``metadata`` (name, namespace, labels,
annotations) and a ``spec`` saying what you want. ``kubectl apply -f`` sends
such files to a cluster; gangkit reads the same files and builds a
:class:`~gangkit.model.scenario.Scenario` from them, so a lesson's cluster can be
written the way an operator would write it::

    apiVersion: v1
    kind: Node
    metadata: {name: gpu-0, labels: {karpenter.sh/nodepool: a100}}
    status: {allocatable: {nvidia.com/gpu: "8", cpu: "96", memory: 1Ti}}
    ---
    apiVersion: batch/v1
    kind: Job
    metadata:
      name: train
      annotations: {gangkit/run-time: 1h, gangkit/progress: sync}
    spec:
      parallelism: 4
      template:
        spec:
          restartPolicy: Never
          containers:
          - name: worker
            image: trainer:1.0
            resources: {limits: {nvidia.com/gpu: "2"}}

The kinds gangkit reads (see ``docs/reference/scenario-yaml.md`` for every field):

- ``v1`` **Node**: GPUs, CPU and memory from ``status.allocatable`` (else
  ``status.capacity``), labels, the node pool from its Karpenter or GKE label;
- ``batch/v1`` **Job**: ``spec.parallelism`` pods, each asking for the sum of
  its containers' requests; ``nodeSelector``; ``priorityClassName``;
  gangkit's own annotations say how long it runs and when it is submitted;
- ``scheduling.volcano.sh/v1beta1`` **PodGroup**: the gang size
  (``spec.minMember``), queue and ``minResources`` of the Job whose pods name it;
- Volcano's ``Queue`` and ``batch.volcano.sh/v1alpha1`` **Job**: read by
  :mod:`gangkit.volcano.manifests` into ``Scenario.volcano`` and the jobs;
- the holding gang schedulers' objects (:mod:`gangkit.placement.manifests`):
  scheduler-plugins' ``scheduling.x-k8s.io/v1alpha1`` **PodGroup** (pod label
  ``scheduling.x-k8s.io/pod-group``), YuniKorn's task-group annotations on
  the pod template, and the Kubernetes ``scheduling.k8s.io/v1alpha1``
  **Workload** (pod template ``spec.workloadRef``);
- ``scheduling.k8s.io/v1`` **PriorityClass**: the priority value;
- ``gangkit/v1alpha1`` **Simulation**: the run settings (stack, ordering...);
- ``gangkit/v1alpha1`` **WorkloadGenerator**: a seeded stream of jobs described
  as data (arrivals, job classes, run-time distributions), read by
  :func:`gangkit.workloads.generators.stream_from_manifest`; its jobs join the Jobs;
- Kueue's kinds (``kueue.x-k8s.io`` ResourceFlavor, ClusterQueue, LocalQueue,
  Cohort, WorkloadPriorityClass, Workload, and the Configuration): read by
  :mod:`gangkit.kueue.manifests` into ``Scenario.kueue``.

Bad input gets every problem at once, one line each naming the object and
the field. Fields gangkit does not model are listed once in a warning
(:class:`GangkitInputWarning`), because a silently ignored ``tolerations``
or ``affinity`` would make the simulation disagree with the cluster.
"""

from __future__ import annotations

import difflib
import math
import os
import warnings
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Union

import yaml

from gangkit.model.nodes import Node
from gangkit.placement.manifests import KINDS as GANG_KINDS
from gangkit.placement.manifests import KNOWN_FIELDS as GANG_KNOWN_FIELDS
from gangkit.placement.manifests import NAMESPACED as GANG_NAMESPACED
from gangkit.placement.manifests import WORKLOAD_REF, GangObjects, read_gang
from gangkit.placement.manifests import dump_problems as gang_dump_problems
from gangkit.placement.manifests import gang_objects, holding_gang, template_metadata
from gangkit.model.errors import Problem, ScenarioError
from gangkit.workloads.generators import YAML_FIELDS as GENERATOR_FIELDS
from gangkit.workloads.generators import stream_from_manifest
from gangkit.model.quantity import (
    format_cpu,
    format_duration,
    format_memory,
    parse_cpu,
    parse_duration,
    parse_gpus,
    parse_memory,
)
from gangkit.model.scenario import RunSettings, Scenario
from gangkit.model.jobs import PROGRESS_MODES, Job, PodSet

__all__ = [
    "DEFAULT_RUN_TIME",
    "GangkitInputWarning",
    "dump_manifests",
    "load_file",
    "load_manifests",
]

DEFAULT_RUN_TIME = 3600.0
"""Seconds of run time for a Job without a ``gangkit/run-time`` annotation (reported in a warning)."""

GPU = "nvidia.com/gpu"
RUN_TIME = "gangkit/run-time"
SUBMIT_TIME = "gangkit/submit-time"
PROGRESS = "gangkit/progress"
CHECKPOINT_INTERVAL = "gangkit/checkpoint-interval"
DESCRIPTION = "gangkit/description"
GROUP_NAME = "scheduling.k8s.io/group-name"  # Volcano's pod annotation naming the pod's PodGroup
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"  # Kueue's label naming the Job's LocalQueue
POOL_LABELS = ("karpenter.sh/nodepool", "cloud.google.com/gke-nodepool")
SYSTEM_PRIORITY_CLASSES = {"system-cluster-critical": 2_000_000_000, "system-node-critical": 2_000_001_000}
HIGHEST_USER_PRIORITY = 1_000_000_000  # scheduling.HighestUserDefinablePriority

Source = Union[str, "os.PathLike[str]", Mapping[str, Any], Iterable[Mapping[str, Any]]]


class GangkitInputWarning(UserWarning):
    """Something in the input was read with a default or not read at all (the run still works)."""


# --- which fields gangkit knows ------------------------------------------------
# A tree per kind: ``ANY`` accepts the whole subtree, a dict lists the known
# keys ("*" = any key), a one-element list describes each item of a list.
# Known fields are either read by gangkit or do not change where and when pods
# run (image, command, env...). Everything else is listed in one warning.

ANY = True
_NAMES = dict.fromkeys
_META = _NAMES(
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
_POD_SPEC = {
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
KNOWN_FIELDS: dict[str, dict] = {
    "Node": {
        "apiVersion": ANY, "kind": ANY, "metadata": _META, "status": ANY,
        "spec": _NAMES(["providerID", "podCIDR", "podCIDRs", "externalID"], ANY),
    },
    "Job": {
        "apiVersion": ANY, "kind": ANY, "metadata": _META, "status": ANY,
        "spec": {
            **_NAMES(
                ["parallelism", "completions", "activeDeadlineSeconds", "backoffLimit", "backoffLimitPerIndex",
                 "maxFailedIndexes", "completionMode", "ttlSecondsAfterFinished", "suspend", "manualSelector",
                 "selector", "podFailurePolicy", "podReplacementPolicy", "successPolicy", "managedBy"],
                ANY,
            ),
            "template": {"metadata": _META, "spec": {**_POD_SPEC, "workloadRef": WORKLOAD_REF}},  # workloadRef: 1.35
        },
    },
    "PodGroup": {
        "apiVersion": ANY, "kind": ANY, "metadata": _META, "status": ANY,
        "spec": _NAMES(["minMember", "priorityClassName", "queue", "minResources"], ANY),
    },
    "PriorityClass": _NAMES(
        ["apiVersion", "kind", "metadata", "value", "globalDefault", "description", "preemptionPolicy"], ANY
    )
    | {"metadata": _META},
    "NodePool": {
        "apiVersion": ANY, "kind": ANY, "metadata": _META,
        "spec": {
            "weight": ANY, "limits": ANY,
            "template": {"metadata": _NAMES(["labels", "annotations"], ANY),
                         "spec": {"nodeClassRef": ANY, "requirements": [_NAMES(["key", "operator", "values"], ANY)]}},
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
                      "scaleDownUtilizationThreshold", "provisioningRequestExpiry"], ANY),
            "stages": _NAMES(["registered", "initialized", "imagePull"], ANY),
            "nodeGroups": [_NAMES(["name", "minSize", "maxSize", "instanceType", "capacity", "pricePerHour", "labels",
                                   "stockout"], ANY)],
        },
    },
    "Simulation": {
        "apiVersion": ANY, "kind": ANY, "metadata": _NAMES(["name", "labels", "annotations"], ANY),
        "spec": _NAMES(["stack", "ordering", "scoring", "preemption", "sessionPeriod", "seed", "horizon", "record",
                        "estimateFactor"], ANY),
    },
}
KNOWN_FIELDS.update(GANG_KNOWN_FIELDS)
KNOWN_FIELDS["WorkloadGenerator"] = {
    "apiVersion": ANY, "kind": ANY, "metadata": _NAMES(["name", "namespace", "labels", "annotations"], ANY),
    "spec": GENERATOR_FIELDS,
}
KNOWN_ANNOTATIONS = {  # gangkit's own annotations, per kind; other gangkit/* keys are reported
    "Job": (RUN_TIME, SUBMIT_TIME, PROGRESS, CHECKPOINT_INTERVAL),
    "Simulation": (DESCRIPTION,),
}
API_VERSIONS = {
    "Node": "v1",
    "Job": "batch/v1",
    "PodGroup": "scheduling.volcano.sh/v1beta1",
    "PriorityClass": "scheduling.k8s.io/v1",
    "Simulation": "gangkit/v1alpha1",
    "ClusterAutoscaler": "gangkit/v1alpha1",
    "Karpenter": "gangkit/v1alpha1",
    "NodePool": "karpenter.sh/v1",
    "WorkloadGenerator": "gangkit/v1alpha1",
    "List": "v1",
}
#: Every (apiVersion, kind) gangkit reads besides Kueue's, and the role its objects are grouped
#: under (a kind may be served by several API groups: Volcano's and scheduler-plugins' PodGroup).
KINDS_READ: dict[tuple[str, str], str] = {(api, kind): kind for kind, api in API_VERSIONS.items()}
KINDS_READ.update(GANG_KINDS)
_SIMULATION_FIELDS = {  # spec key -> RunSettings field
    "stack": "stack", "ordering": "ordering", "scoring": "scoring", "preemption": "preemption",
    "sessionPeriod": "session_period", "seed": "seed", "horizon": "horizon", "record": "record",
    "estimateFactor": "estimate_factor",
}


# --- reading ------------------------------------------------------------------


def load_manifests(source: Source, *, name: str | None = None) -> Scenario:
    """Build a :class:`Scenario` from Kubernetes manifests.

    ``source`` is a path to a YAML file, a YAML string (one or more documents
    separated by ``---``; ``kind: List`` objects are unpacked), a parsed
    manifest (dict) or a list of them. The scenario is named after the
    ``Simulation`` object, else ``name``, else the file, else ``"scenario"``.

    Raises :class:`~gangkit.model.errors.ScenarioError` listing every problem found;
    warnings go to ``Scenario.warnings`` and are emitted once each as
    :class:`GangkitInputWarning`.
    """
    scenario = _load(source, name)
    _emit(scenario.warnings)
    return scenario


def load_file(path: str | os.PathLike[str]) -> Scenario:
    """Build a :class:`Scenario` from one YAML file (see :func:`load_manifests`)."""
    scenario = _load(Path(path), None)
    _emit(scenario.warnings)
    return scenario


def _load(source: Source, name: str | None) -> Scenario:
    if isinstance(source, os.PathLike) or (isinstance(source, str) and _looks_like_path(source)):
        path = Path(source)
        text = path.read_text(encoding="utf-8")
        docs, label, default_name = _parse_yaml(text, path.name), path.name, path.stem
    elif isinstance(source, str):
        docs, label, default_name = _parse_yaml(source, "YAML input"), "YAML input", "scenario"
    elif isinstance(source, Mapping):
        docs, label, default_name = [source], "manifests", "scenario"
    else:
        docs, label, default_name = list(source), "manifests", "scenario"
    base = None
    if isinstance(source, os.PathLike) or (isinstance(source, str) and _looks_like_path(source)):
        base = Path(source).parent
    return _Reader(label, base=base).scenario(docs, name or default_name)


def _emit(messages: list[str]) -> None:
    """Each warning once, attributed to the code that called load_manifests or load_file."""
    for message in messages:
        warnings.warn(message, GangkitInputWarning, stacklevel=3)


def _looks_like_path(text: str) -> bool:
    if "\n" in text or ":" in text.split("/")[-1]:
        return False
    return text.endswith((".yaml", ".yml", ".json")) or Path(text).is_file()


def _parse_yaml(text: str, label: str) -> list:
    """Every document of a YAML stream; a syntax error becomes one problem with its position."""
    try:
        return [d for d in yaml.safe_load_all(text) if d is not None]
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        what = " ".join(str(x) for x in (getattr(e, "context", None), getattr(e, "problem", None)) if x) or str(e)
        raise ScenarioError([Problem(label, where, f"invalid YAML: {what}")]) from None


@dataclass
class _Object:
    """One manifest with where it came from and how messages name it."""

    doc: dict
    kind: str
    where: str  # "document 3" or "document 2, items[0]"
    name: str | None = None
    namespace: str | None = None
    role: str = ""  # what the reader groups it under (KINDS_READ); the kind when empty

    @property
    def label(self) -> str:
        if not self.name:
            return f"{self.kind} ({self.where})"
        return f"{self.kind} {self.namespace}/{self.name}" if self.namespace else f"{self.kind} {self.name}"


@dataclass
class _Reader:
    """Reads manifests into a Scenario, collecting problems, unknown fields and warnings."""

    label: str
    problems: list[Problem] = field(default_factory=list)
    base: Path | None = None  # the YAML file's folder: relative paths inside the file start here
    unknown: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    gangs: GangObjects = field(default_factory=GangObjects)

    # small typed getters: each records a problem and returns a harmless value

    def error(self, obj: str, fieldname: str, message: str) -> None:
        self.problems.append(Problem(obj, fieldname, message))

    def attempt(self, parse: Callable[..., Any], value: Any, obj: str, fieldname: str) -> Any:
        try:
            return parse(value, obj=obj, field=fieldname)
        except ScenarioError as e:
            self.problems.extend(e.problems)
            return None

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

    # the input as a whole

    def scenario(self, docs: list, default_name: str) -> Scenario:
        objects = self.objects(docs)
        by_kind: dict[str, list[_Object]] = {k: [] for k in API_VERSIONS}
        for o in objects:
            by_kind.setdefault(o.role or o.kind, []).append(o)
        self.gangs = GangObjects.collect(by_kind)
        self.check_unique(objects)

        classes, default_priority = self.priority_classes(by_kind["PriorityClass"])
        node_list = [n for n in map(self.node, by_kind["Node"]) if n is not None]
        groups = {(o.namespace or "default", o.name): o for o in by_kind["PodGroup"] if o.name}
        used_groups: dict[tuple, str] = {}
        jobs = []
        for o in by_kind["Job"]:
            j = self.job(o, classes, default_priority, groups, used_groups)
            if j is not None:
                jobs.append(j)
        jobs.extend(self.generated_jobs(by_kind["WorkloadGenerator"], node_list, jobs))
        for key, o in groups.items():
            if key not in used_groups:
                self.notes.append(
                    f"{o.label} is not used: no Job's pod template has the annotation {GROUP_NAME}: {o.name}"
                )
        volcano = _volcano().read_for_scenario(self, objects, jobs, groups, used_groups, classes, default_priority)
        self.notes.extend(self.gangs.unused())
        kueue_input = [o for o in objects if o.role in ("", o.kind)]  # not the kinds other API groups share a name with
        kueue = _kueue().read_for_scenario(self, kueue_input, jobs, classes)  # Kueue's kinds, and what Kueue reads of Jobs
        settings, name, description = self.simulation(by_kind["Simulation"], default_name)
        autoscaler = self.cluster_autoscaler(by_kind["ClusterAutoscaler"])
        karpenter = _read_karpenter(self, by_kind["Karpenter"], by_kind["NodePool"])
        if not by_kind["Node"]:
            self.error(f"Scenario {name}", "", "expected at least one Node (apiVersion: v1, kind: Node)")
        defaulted = [j.key for j in jobs if j.run_time is None]
        for j in jobs:
            if j.run_time is None:
                j.run_time = DEFAULT_RUN_TIME
        if self.problems:
            raise ScenarioError(self.problems)

        notes = []
        if self.unknown:
            notes.append(
                f"gangkit does not read these {len(self.unknown)} field(s) (typos, or features it does not model):\n"
                + "\n".join(f"  {u}" for u in self.unknown)
            )
        notes.extend(self.notes)
        if defaulted:
            notes.append(
                f"no {RUN_TIME} annotation on {len(defaulted)} Job(s); "
                f"they run for the default {DEFAULT_RUN_TIME:g} s: {', '.join(defaulted)}"
            )
        sc = Scenario(nodes=node_list, jobs=jobs, settings=settings, name=name, description=description, warnings=notes,
                      kueue=kueue, volcano=volcano, autoscaler=autoscaler, karpenter=karpenter)
        sc.validate()
        return sc

    def generated_jobs(self, objects: list[_Object], node_list: list[Node], jobs: list[Job]) -> list[Job]:
        """The jobs of every WorkloadGenerator (gangkit.workloads.generators), in its namespace; names must not clash."""
        gpus = sum(n.gpus for n in node_list)
        taken = {j.key: "a Job" for j in jobs}
        out = []
        for o in objects:
            stream = stream_from_manifest(self, o, gpus, self.base)
            for j in stream.jobs() if stream is not None else ():
                j.namespace = o.namespace
                j.queue = o.namespace or j.queue
                if j.key in taken:
                    self.error(o.label, "spec.classes", f"its job {j.key} has the name of {taken[j.key]}; use other class names")
                    break
                taken[j.key] = o.label
                out.append(j)
        return out

    def objects(self, docs: list) -> list[_Object]:
        """Every object, ``kind: List`` unpacked, with kind and apiVersion checked."""
        out: list[_Object] = []

        def visit(doc: Any, where: str) -> None:
            if not isinstance(doc, Mapping):
                self.error(f"{self.label} {where}", "", f"expected a mapping (a Kubernetes object), got {type(doc).__name__}")
                return
            kind, api = doc.get("kind"), doc.get("apiVersion")
            meta = doc.get("metadata") if isinstance(doc.get("metadata"), Mapping) else {}
            o = _Object(dict(doc), str(kind), where, meta.get("name"), meta.get("namespace"))
            if _volcano().handles(kind, api):  # Volcano's Queue and Job: gangkit.volcano.manifests
                o = _volcano().read_object(self, doc, where)
                if o is not None:
                    out.append(o)
                return
            role = KINDS_READ.get((api, kind)) if isinstance(api, str) and isinstance(kind, str) else None
            if role is None and isinstance(kind, str) and kind in _kueue().KINDS:  # Kueue's kinds: gangkit.kueue.manifests
                o = _kueue().read_object(self, doc, where)
                if o is not None:
                    out.append(o)
                return
            if role is None:
                served = [a for a, k in KINDS_READ if k == kind]
                if served:
                    self.error(o.label, "apiVersion", f"unknown apiVersion {api!r} for kind {kind}: expected {' or '.join(served)}")
                    return
                known = ", ".join(f"{k} ({a})" for a, k in KINDS_READ)
                self.error(o.label, "kind", f"unknown kind {kind!r} (apiVersion {api!r}); gangkit reads {known}, "
                           f"Kueue's {', '.join(_kueue().KINDS)}, and Volcano's "
                           f"{', '.join(f'{k} ({v})' for k, v in _volcano().KINDS)}")
                return
            o.role = role
            if kind == "List":
                items = doc.get("items") or []
                if not isinstance(items, list):
                    self.error(o.label, "items", f"expected a list of objects, got {items!r}")
                    return
                for i, item in enumerate(items):
                    visit(item, f"{where}, items[{i}]")
                return
            if not isinstance(doc.get("metadata"), Mapping):
                self.error(o.label, "metadata", "expected a mapping with at least a name")
                return
            if not isinstance(o.name, str) or not o.name:
                self.error(o.label, "metadata.name", f"expected a non-empty name, got {o.name!r}")
                return
            if o.namespace is not None and (not isinstance(o.namespace, str) or not o.namespace):
                self.error(o.label, "metadata.namespace", f"expected a non-empty string, got {o.namespace!r}")
                return
            self.find_unknown(o.doc, KNOWN_FIELDS[role], o.label, "")
            allowed = KNOWN_ANNOTATIONS.get(kind, ())
            for where_ann, ann in (("metadata", meta), ("spec.template.metadata", _dig(doc, "spec", "template", "metadata"))):
                annotations = ann.get("annotations") if isinstance(ann, Mapping) else None
                for key in annotations if isinstance(annotations, Mapping) else ():
                    if str(key).startswith("gangkit/") and (key not in allowed or where_ann != "metadata"):
                        self.unknown.append(f"{o.label}: {where_ann}.annotations.{key}")
            out.append(o)

        for i, doc in enumerate(docs, start=1):
            visit(doc, f"document {i}")
        return out

    def find_unknown(self, node: Any, known: Any, obj: str, path: str) -> None:
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

    def check_unique(self, objects: list[_Object]) -> None:
        """Names are unique per kind (and namespace), as the API server requires; one Simulation at most."""
        seen: dict[tuple, _Object] = {}
        simulations = [o for o in objects if o.kind == "Simulation"]
        for o in simulations[1:]:
            self.error(o.label, "kind", f"expected at most one Simulation; {simulations[0].label} comes first")
        for o in objects:
            if o.name is None:  # a Kueue Configuration needs no name
                continue
            namespaced = o.kind in ("Job", "PodGroup", "LocalQueue", "Workload", "VolcanoJob") or o.role in GANG_NAMESPACED
            key = (o.role or o.kind, (o.namespace or "default") if namespaced else None, o.name)
            if key in seen:
                self.error(o.label, "metadata.name", f"expected a unique name; {seen[key].where} has the same {o.kind} name")
            else:
                seen[key] = o

    # one reader per kind

    def priority_classes(self, objects: list[_Object]) -> tuple[dict[str, int], int]:
        """PriorityClass name -> value, and the value pods get without a class (the globalDefault one, else 0).

        Models the Priority admission plugin: a user class value is at most
        1000000000, only one class may be ``globalDefault``, and the two
        ``system-*`` classes always exist.
        """
        classes = dict(SYSTEM_PRIORITY_CLASSES)
        default, default_from = 0, None
        for o in objects:
            value = o.doc.get("value")
            if isinstance(value, bool) or not isinstance(value, int) or value > HIGHEST_USER_PRIORITY:
                self.error(o.label, "value", f"expected a whole number <= {HIGHEST_USER_PRIORITY}, got {value!r}")
                continue
            classes[o.name] = value
            is_default = o.doc.get("globalDefault", False)
            if not isinstance(is_default, bool):
                self.error(o.label, "globalDefault", f"expected true or false, got {is_default!r}")
            elif is_default and default_from:
                self.error(o.label, "globalDefault", f"expected only one globalDefault PriorityClass; {default_from} is one")
            elif is_default:
                default, default_from = value, o.label
            policy = o.doc.get("preemptionPolicy", "PreemptLowerPriority")
            if policy != "PreemptLowerPriority":
                self.unknown.append(f"{o.label}: preemptionPolicy")
        return classes, default

    def node(self, o: _Object) -> Node | None:
        """A Node: the scheduler counts ``status.allocatable``; the API server defaults it to ``capacity``."""
        obj, meta = o.label, self.mapping(o.doc.get("metadata"), o.label, "metadata")
        labels = self.strings(meta.get("labels"), obj, "metadata.labels")
        status = self.mapping(o.doc.get("status"), obj, "status")
        part = "allocatable" if status.get("allocatable") is not None else "capacity"
        resources = self.mapping(status.get(part), obj, f"status.{part}")
        where = f"status.{part}."
        gpus = self.attempt(parse_gpus, resources.get(GPU, 0), obj, where + GPU)
        cpu = self.attempt(parse_cpu, resources["cpu"], obj, where + "cpu") if "cpu" in resources else None
        memory = self.attempt(parse_memory, resources["memory"], obj, where + "memory") if "memory" in resources else None
        pool = next((labels[k] for k in POOL_LABELS if k in labels), "default")
        if gpus is None:
            return None
        return Node(o.name, gpus, cpu=cpu, memory=memory, labels=labels, pool=pool)

    def job(self, o: _Object, classes: dict, default_priority: int, groups: dict, used_groups: dict) -> Job | None:
        """A batch/v1 Job: ``parallelism`` identical pods (one wave), requests summed over containers."""
        obj = o.label
        meta = self.mapping(o.doc.get("metadata"), obj, "metadata")
        labels = self.strings(meta.get("labels"), obj, "metadata.labels")
        annotations = self.strings(meta.get("annotations"), obj, "metadata.annotations")
        spec = self.mapping(o.doc.get("spec"), obj, "spec")
        pods = self.whole(spec.get("parallelism", 1), obj, "spec.parallelism", 1)
        if "completions" in spec:
            completions = self.whole(spec["completions"], obj, "spec.completions", 1)
            if completions is not None and pods is not None and completions != pods:
                self.notes.append(
                    f"{obj}: spec.completions is {completions} but spec.parallelism is {pods}; "
                    f"gangkit models one wave of {pods} pod(s) that run together"
                )
        max_run_time = None
        if "activeDeadlineSeconds" in spec:
            deadline = self.whole(spec["activeDeadlineSeconds"], obj, "spec.activeDeadlineSeconds", 1)
            max_run_time = None if deadline is None else float(deadline)

        if not isinstance(spec.get("template"), Mapping):
            self.error(obj, "spec.template", "expected a pod template (a mapping with spec.containers); it is required")
            return None
        tmeta = self.mapping(spec["template"].get("metadata"), obj, "spec.template.metadata")
        tannotations = self.strings(tmeta.get("annotations"), obj, "spec.template.metadata.annotations")
        pod = self.mapping(spec["template"].get("spec"), obj, "spec.template.spec")
        request = self.pod_request(pod, obj)
        selector = self.strings(pod.get("nodeSelector"), obj, "spec.template.spec.nodeSelector")

        def duration(key: str) -> float | None:
            if key not in annotations:
                return None
            return self.attempt(parse_duration, annotations[key], obj, f"metadata.annotations.{key}")

        run_time = duration(RUN_TIME)
        if run_time == 0:
            self.error(obj, f"metadata.annotations.{RUN_TIME}", f"expected a run time > 0, got {annotations[RUN_TIME]!r}")
        submit_time = duration(SUBMIT_TIME) or 0.0
        checkpoint = duration(CHECKPOINT_INTERVAL)
        if checkpoint == 0:
            self.error(obj, f"metadata.annotations.{CHECKPOINT_INTERVAL}", "expected an interval > 0 (leave it out for no checkpoints)")
        progress = annotations.get(PROGRESS, "sync")
        if progress not in PROGRESS_MODES:
            self.error(obj, f"metadata.annotations.{PROGRESS}", f"expected one of {', '.join(PROGRESS_MODES)}, got {progress!r}")

        # the PodGroup named by the pods (Volcano's annotation), else by the Job itself
        group_field, group_name = next(
            ((f"{w}.annotations.{GROUP_NAME}", a[GROUP_NAME]) for w, a in
             (("spec.template.metadata", tannotations), ("metadata", annotations)) if GROUP_NAME in a),
            (None, None),
        )
        group = None
        namespace = o.namespace or "default"
        if group_name is not None:
            group = groups.get((namespace, group_name))
            if group is None:
                self.error(obj, group_field, f"names PodGroup {group_name!r} in namespace {namespace!r}, which is not in the input")
            elif (namespace, group_name) in used_groups:
                self.error(obj, group_field, f"PodGroup {group_name!r} is already used by {used_groups[(namespace, group_name)]}; "
                           "gangkit models one PodGroup per Job")
                group = None
            else:
                used_groups[(namespace, group_name)] = obj
        group_spec = self.mapping(group.doc.get("spec"), group.label, "spec") if group else {}
        min_member = self.min_member(group, group_spec, pods, obj) if group else None
        priority = self.priority(pod, group, group_spec, classes, default_priority, obj)
        gang = read_gang(self, o, pods, tmeta, pod, volcano=group_name is not None)  # the holding gang schedulers
        min_member = gang.pop("min_member", min_member)

        if pods is None or request is None or priority is None:
            return None
        gpus, cpu, memory = request
        return Job(
            name=o.name,
            namespace=o.namespace,
            pod_sets=[PodSet("workers", pods, gpus, cpu, memory, selector)],
            run_time=run_time,  # None for now: the default is filled in (and reported) later
            submit_time=submit_time,
            priority=priority,
            queue=labels.get(QUEUE_LABEL) or o.namespace or "default",
            progress=progress,
            min_member=min_member,
            max_run_time=max_run_time,
            checkpoint_interval=checkpoint,
            labels=labels,
            **gang,
        )

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
            lim = self.attempt(parse_gpus, limits[GPU], obj, lim_field + GPU) if GPU in limits else None
            req = self.attempt(parse_gpus, requests[GPU], obj, req_field + GPU) if GPU in requests else None
            if GPU in requests and GPU not in limits:
                self.error(obj, lim_field + GPU, "Limit must be set for non overcommitable resources "
                           "(write the GPU count under limits; the request is copied from it)")
            elif req is not None and lim is not None and req != lim:
                self.error(obj, req_field + GPU, f"must be equal to {GPU} limit of {lim}, got {req}")
            gpus += lim or 0
            ok = ok and (GPU not in limits or lim is not None)
            for name, parse in (("cpu", parse_cpu), ("memory", parse_memory)):
                value = None
                if name in requests:
                    value = self.attempt(parse, requests[name], obj, req_field + name)
                    ok = ok and value is not None
                    top = self.attempt(parse, limits[name], obj, lim_field + name) if name in limits else None
                    if value is not None and top is not None and value > top:
                        self.error(obj, req_field + name, f"must be less than or equal to {name} limit of {limits[name]}")
                elif name in limits:
                    value = self.attempt(parse, limits[name], obj, lim_field + name)
                    ok = ok and value is not None
                if value is not None and name == "cpu":
                    cpu += value
                elif value is not None:
                    memory += value
        return (gpus, cpu, memory) if ok else None

    def min_member(self, group: _Object, spec: dict, pods: int | None, job_label: str) -> int | None:
        """Volcano's ``spec.minMember``: how many pods must start together. Absent: every pod.

        The CRD allows 0 (no gang at all); gangkit needs a gang of 1 to ``pods``.
        """
        if spec.get("minMember") is None:
            return None
        m = spec["minMember"]
        if pods is not None and (isinstance(m, bool) or not isinstance(m, int) or not 1 <= m <= pods):
            self.error(group.label, "spec.minMember",
                       f"expected a whole number from 1 to {pods} (the pod count of {job_label}), got {m!r}")
            return None
        return m

    def priority(
        self, pod: dict, group: _Object | None, group_spec: dict, classes: dict, default: int, obj: str
    ) -> int | None:
        """The Job's priority: the value of its PriorityClass (pod template, else PodGroup), else the globalDefault one."""
        values = []
        for owner, fieldname, name in (
            (obj, "spec.template.spec.priorityClassName", pod.get("priorityClassName")),
            (group.label if group else "", "spec.priorityClassName", group_spec.get("priorityClassName")),
        ):
            if name is None:
                continue
            if name not in classes:
                known = ", ".join(sorted(classes))
                self.error(owner, fieldname, f"no PriorityClass named {name!r} in the input (known: {known})")
                return None
            values.append((owner, fieldname, name, classes[name]))
        if len(values) == 2 and values[0][3] != values[1][3]:
            (_, _, pod_class, pod_value), (owner, fieldname, group_class, group_value) = values
            self.error(owner, fieldname, f"{group_class!r} (value {group_value}) differs from the pod template's "
                       f"{pod_class!r} (value {pod_value}); gangkit models one priority per Job")
            return None
        return values[0][3] if values else default

    def cluster_autoscaler(self, objects: list[_Object]):
        """gangkit's ``ClusterAutoscaler`` kind (node groups and flags), or None when the input has none."""
        return _read_cluster_autoscaler(self, objects)

    def simulation(self, objects: list[_Object], default_name: str) -> tuple[RunSettings, str, str]:
        """gangkit's ``Simulation`` kind -> :class:`RunSettings`, the scenario name and description."""
        if not objects:
            return RunSettings(), default_name, ""
        o = objects[0]
        obj = o.label
        meta = self.mapping(o.doc.get("metadata"), obj, "metadata")
        description = self.strings(meta.get("annotations"), obj, "metadata.annotations").get(DESCRIPTION, "")
        spec = self.mapping(o.doc.get("spec"), obj, "spec")
        kw: dict[str, Any] = {}
        for key, attr in _SIMULATION_FIELDS.items():
            if key not in spec:
                continue
            value, where = spec[key], f"spec.{key}"
            if key in ("sessionPeriod", "horizon"):
                value = self.attempt(parse_duration, value, obj, where)
            elif key == "preemption" and not isinstance(value, bool):
                self.error(obj, where, f"expected true or false, got {value!r}")
                value = None
            elif key == "seed":
                value = self.whole(value, obj, where, 0)
            elif key == "estimateFactor":
                if isinstance(value, bool) or not isinstance(value, (int, float)):
                    self.error(obj, where, f"expected a number >= 1, got {value!r}")
                    value = None
            elif key not in ("preemption", "seed") and not isinstance(value, str):
                self.error(obj, where, f"expected a string, got {value!r}")
                value = None
            if value is not None:
                kw[attr] = value
        settings = RunSettings(**kw)
        camel = {v: k for k, v in _SIMULATION_FIELDS.items()}
        for p in settings.problems():
            self.error(obj, f"spec.{camel.get(p.field, p.field)}", p.message)
        return settings, o.name, description


def _read_stages(r: "_Reader", value: Any, obj: str) -> Any:
    """``stages: {registered, initialized, imagePull}`` -> :class:`gangkit.supply.karpenter.Stages` (None when absent)."""
    from gangkit.supply.cloud import Stages

    stages = r.mapping(value, obj, "spec.stages")
    if not stages:
        return None
    st = {}
    for key, attr in (("registered", "registered"), ("initialized", "initialized"), ("imagePull", "image_pull")):
        if key in stages:
            v = r.attempt(parse_duration, stages[key], obj, f"spec.stages.{key}")
            if v is not None:
                st[attr] = v
    return Stages(**st)


def _read_capacity(r: "_Reader", g: dict, obj: str, where: str) -> tuple | None:
    """``capacity: {nvidia.com/gpu, cpu, memory}`` -> (gpus, cpu, memory), or None after reporting a problem."""
    capacity = r.mapping(g.get("capacity"), obj, f"{where}.capacity")
    gpus = r.attempt(parse_gpus, capacity.get(GPU, 0), obj, f"{where}.capacity.{GPU}")
    cpu = r.attempt(parse_cpu, capacity["cpu"], obj, f"{where}.capacity.cpu") if "cpu" in capacity else None
    memory = r.attempt(parse_memory, capacity["memory"], obj, f"{where}.capacity.memory") if "memory" in capacity else None
    if gpus is None or ("cpu" in capacity and cpu is None) or ("memory" in capacity and memory is None):
        return None
    return gpus, cpu, memory


def _read_karpenter(r: "_Reader", settings: list, pools: list) -> Any:
    """``karpenter.sh/v1`` NodePools and gangkit's ``Karpenter`` kind (instance types, batching, stages).

    Without a ``Karpenter`` object the instance types are gangkit's defaults
    (``gpu-1``, ``gpu-2``, ``gpu-4``, ``gpu-8``, priced 1.0 per GPU-hour).
    """
    from gangkit.supply.karpenter import Karpenter, NodePool
    from gangkit.supply.cloud import GPU as KGPU, TYPE_LABEL, InstanceType

    if not settings and not pools:
        return None
    for o in settings[1:]:
        r.error(o.label, "kind", f"expected at most one Karpenter; {settings[0].label} comes first")
    kw: dict[str, Any] = {}
    types: list = []
    if settings:
        o = settings[0]
        obj = o.label
        spec = r.mapping(o.doc.get("spec"), obj, "spec")
        for key, attr in (("batchIdleDuration", "batch_idle"), ("batchMaxDuration", "batch_max")):
            if key in spec:
                v = r.attempt(parse_duration, spec[key], obj, f"spec.{key}")
                if v is not None:
                    kw[attr] = v
        stages = _read_stages(r, spec.get("stages"), obj)
        if stages is not None:
            kw["stages"] = stages
        items = r.named_items(spec, "instanceTypes", obj, "instance type")
        if items is None:
            return None
        for where, t, name in items:
            cap = _read_capacity(r, t, obj, where)
            price = t.get("pricePerHour", float(cap[0]) if cap else 0.0)
            if isinstance(price, bool) or not isinstance(price, (int, float)) or price < 0:
                r.error(obj, f"{where}.pricePerHour", f"expected a number >= 0, got {price!r}")
                continue
            if cap is not None:
                types.append(InstanceType(name, cap[0], float(price), cap[1], cap[2]))
    else:
        types = [InstanceType(f"gpu-{g}", g, float(g)) for g in (1, 2, 4, 8)]
    type_names = [t.name for t in types]
    node_pools = []
    for o in pools:
        obj = o.label
        spec = r.mapping(o.doc.get("spec"), obj, "spec")
        template = r.mapping(spec.get("template"), obj, "spec.template")
        labels = r.strings(r.mapping(template.get("metadata"), obj, "spec.template.metadata").get("labels"), obj,
                           "spec.template.metadata.labels")
        tspec = r.mapping(template.get("spec"), obj, "spec.template.spec")
        allowed = list(type_names)
        for i, req in enumerate(tspec.get("requirements") or []):
            where = f"spec.template.spec.requirements[{i}]"
            req = r.mapping(req, obj, where)
            if req.get("key") == TYPE_LABEL and req.get("operator") == "In":
                values = req.get("values") or []
                unknown = [v for v in values if v not in type_names]
                if unknown:
                    r.error(obj, f"{where}.values", f"instance types {unknown} are not among the Karpenter instance types "
                            f"({', '.join(type_names)})")
                allowed = [v for v in values if v in type_names]
            else:
                r.notes.append(f"{obj}: {where} ({req.get('key')} {req.get('operator')}) is not modelled; gangkit "
                               f"reads only {TYPE_LABEL} In [...]")
        limits = r.mapping(spec.get("limits"), obj, "spec.limits")
        lim = {}
        if KGPU in limits:
            g = r.attempt(parse_gpus, limits[KGPU], obj, f"spec.limits.{KGPU}")
            if g is not None:
                lim[KGPU] = g
        if set(limits) - {KGPU}:
            r.notes.append(f"{obj}: spec.limits {sorted(set(limits) - {KGPU})} are not enforced (only {KGPU} is)")
        disruption = r.mapping(spec.get("disruption"), obj, "spec.disruption")
        policy = disruption.get("consolidationPolicy", "WhenEmptyOrUnderutilized")
        if policy not in ("WhenEmpty", "WhenEmptyOrUnderutilized"):
            r.error(obj, "spec.disruption.consolidationPolicy", f"expected WhenEmpty or WhenEmptyOrUnderutilized, got {policy!r}")
            continue
        after_raw = disruption.get("consolidateAfter", "0s")
        after = None if after_raw == "Never" else r.attempt(parse_duration, after_raw, obj, "spec.disruption.consolidateAfter")
        if after is None and after_raw != "Never":
            continue
        budget: Any = "10%"
        budgets = disruption.get("budgets")
        if isinstance(budgets, list) and budgets:
            nodes = r.mapping(budgets[0], obj, "spec.disruption.budgets[0]").get("nodes", "10%")
            if isinstance(nodes, str) and nodes.endswith("%") and nodes[:-1].isdigit():
                budget = nodes
            elif isinstance(nodes, str) and nodes.isdigit():
                budget = int(nodes)
            else:
                r.error(obj, "spec.disruption.budgets[0].nodes", f"expected a count or a percentage like \"10%\", got {nodes!r}")
                continue
            if len(budgets) > 1:
                r.notes.append(f"{obj}: only the first disruption budget is modelled")
        weight = spec.get("weight", 0)
        if isinstance(weight, bool) or not isinstance(weight, int):
            r.error(obj, "spec.weight", f"expected a whole number, got {weight!r}")
            continue
        node_pools.append(NodePool(o.name, allowed, lim, policy, after, budget, labels, weight))
    if not pools:
        r.error(settings[0].label, "kind", "a Karpenter object needs at least one NodePool (karpenter.sh/v1)")
        return None
    if r.problems:
        return None
    return Karpenter(node_pools, types, **kw)


def _read_cluster_autoscaler(r: "_Reader", objects: list) -> Any:
    """gangkit's ``ClusterAutoscaler`` kind -> :class:`gangkit.supply.autoscaler.ClusterAutoscaler` (flags and node groups)."""
    from gangkit.supply.autoscaler import EXPANDERS, ClusterAutoscaler, NodeGroup
    from gangkit.supply.cloud import InstanceType, Stages

    if not objects:
        return None
    for o in objects[1:]:
        r.error(o.label, "kind", f"expected at most one ClusterAutoscaler; {objects[0].label} comes first")
    o = objects[0]
    obj = o.label
    spec = r.mapping(o.doc.get("spec"), obj, "spec")
    kw: dict[str, Any] = {}
    durations = {"scanInterval": "scan_interval", "maxNodeProvisionTime": "max_node_provision_time",
                 "initialNodeGroupBackoffDuration": "initial_backoff", "maxNodeGroupBackoffDuration": "max_backoff",
                 "scaleDownUnneededTime": "scale_down_unneeded_time", "scaleDownDelayAfterAdd": "scale_down_delay_after_add",
                 "provisioningRequestExpiry": "provisioning_request_expiry"}
    for key, attr in durations.items():
        if key in spec:
            value = r.attempt(parse_duration, spec[key], obj, f"spec.{key}")
            if value is not None:
                kw[attr] = value
    if "expander" in spec:
        if spec["expander"] in EXPANDERS:
            kw["expander"] = spec["expander"]
        else:
            r.error(obj, "spec.expander", f"expected one of {', '.join(EXPANDERS)}, got {spec['expander']!r}")
    if "scaleDownUtilizationThreshold" in spec:
        v = spec["scaleDownUtilizationThreshold"]
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 <= v <= 1:
            r.error(obj, "spec.scaleDownUtilizationThreshold", f"expected a number from 0 to 1, got {v!r}")
        else:
            kw["utilization_threshold"] = float(v)
    stages = _read_stages(r, spec.get("stages"), obj)
    if stages is not None:
        kw["stages"] = stages
    groups = []
    items = r.named_items(spec, "nodeGroups", obj, "node group")
    if items is None:
        return None
    for where, g, name in items:
        capacity = r.mapping(g.get("capacity"), obj, f"{where}.capacity")
        gpus = r.attempt(parse_gpus, capacity.get(GPU, 0), obj, f"{where}.capacity.{GPU}")
        cpu = r.attempt(parse_cpu, capacity["cpu"], obj, f"{where}.capacity.cpu") if "cpu" in capacity else None
        memory = r.attempt(parse_memory, capacity["memory"], obj, f"{where}.capacity.memory") if "memory" in capacity else None
        lo = r.whole(g.get("minSize", 0), obj, f"{where}.minSize", 0)
        hi = r.whole(g.get("maxSize", 10), obj, f"{where}.maxSize", 0)
        price = g.get("pricePerHour", float(gpus or 0))
        if isinstance(price, bool) or not isinstance(price, (int, float)) or price < 0:
            r.error(obj, f"{where}.pricePerHour", f"expected a number >= 0, got {price!r}")
            continue
        stockout = g.get("stockout", False)
        if not isinstance(stockout, bool):
            r.error(obj, f"{where}.stockout", f"expected true or false, got {stockout!r}")
            continue
        itype = g.get("instanceType", name)
        if not isinstance(itype, str) or not itype:
            r.error(obj, f"{where}.instanceType", f"expected a name, got {itype!r}")
            continue
        if None in (gpus, lo, hi) or ("cpu" in capacity and cpu is None) or ("memory" in capacity and memory is None):
            continue
        if lo > hi:
            r.error(obj, f"{where}.minSize", f"expected minSize <= maxSize ({hi}), got {lo}")
            continue
        labels = r.strings(g.get("labels"), obj, f"{where}.labels")
        groups.append(NodeGroup(name, InstanceType(itype, gpus, float(price), cpu, memory), lo, hi, labels, stockout))
    names = [g.name for g in groups]
    for n in sorted({n for n in names if names.count(n) > 1}):
        r.error(obj, "spec.nodeGroups", f"expected unique names; {n!r} is used twice")
    if r.problems:  # every skipped node group recorded its error
        return None
    try:
        return ClusterAutoscaler(groups, **kw)
    except ValueError as e:
        r.error(obj, "spec", str(e))
        return None


def _kueue():
    """gangkit.kueue.manifests, which reads Kueue's kinds (imported late: it builds on this module)."""
    from gangkit.kueue import manifests

    return manifests


def _volcano():
    """gangkit.volcano.manifests, which reads Volcano's Queue and Job (imported late: it builds on this module)."""
    from gangkit.volcano import manifests as volcano_manifests

    return volcano_manifests


def _dig(doc: Any, *keys: str) -> Any:
    for k in keys:
        if not isinstance(doc, Mapping):
            return None
        doc = doc.get(k)
    return doc


# --- writing ------------------------------------------------------------------


def dump_manifests(scenario: Scenario) -> str:
    """The scenario as multi-document YAML that :func:`load_manifests` reads back.

    Writes Nodes, the PriorityClasses the jobs need (``gangkit-priority-<value>``),
    Jobs with gangkit's annotations, a PodGroup per Job with ``min_member``
    (or a Volcano queue or ``min_resources``), Volcano Queues and Volcano Jobs
    (:mod:`gangkit.volcano.manifests`), and one Simulation. A node's pool becomes a ``karpenter.sh/nodepool`` label
    and a job's queue a ``kueue.x-k8s.io/queue-name`` label when they are not
    implied already. Jobs must have one pod set (a batch/v1 Job has one pod
    template) and a whole number of seconds as ``max_run_time``.
    """
    problems = []
    for j in scenario.jobs:
        if len(j.pod_sets) != 1 and j.controller == "batch":
            problems.append(Problem(f"Job {j.key}", "pod_sets", "a batch/v1 Job has one pod template; "
                                    f"expected one pod set, got {len(j.pod_sets)}"))
        if j.max_run_time is not None and j.max_run_time != int(j.max_run_time):
            problems.append(Problem(f"Job {j.key}", "max_run_time",
                                    f"activeDeadlineSeconds is whole seconds; got {j.max_run_time!r}"))
        for name in ("schedule_timeout", "placeholder_timeout"):
            value = getattr(j, name)
            if value is not None and value != int(value):
                problems.append(Problem(f"Job {j.key}", name, f"the manifests take whole seconds; got {value!r}"))
        problems.extend(Problem(f"Job {j.key}", "gang", message) for message in gang_dump_problems(j))
    if problems:
        raise ScenarioError(problems)
    docs: list[dict] = [_node_manifest(n) for n in scenario.nodes]
    for value in sorted({j.priority for j in scenario.jobs if j.priority != 0}):
        docs.append({
            "apiVersion": API_VERSIONS["PriorityClass"], "kind": "PriorityClass",
            "metadata": {"name": _priority_class_name(value)}, "value": value, "globalDefault": False,
        })
    docs.extend(_volcano().queue_manifests(scenario.volcano))
    docs.extend(_job_manifest(j) if j.controller == "batch" else _volcano().job_manifest(j) for j in scenario.jobs)
    for j in scenario.jobs:
        docs.extend(gang_objects(j))  # a scheduler-plugins PodGroup, when the job has coscheduling settings
        if _has_pod_group(j) and holding_gang(j) is None:
            meta = {"name": j.name} | ({"namespace": j.namespace} if j.namespace else {})
            spec = {"minMember": j.min_member} if j.min_member is not None else {}
            docs.append({"apiVersion": API_VERSIONS["PodGroup"], "kind": "PodGroup", "metadata": meta,
                         "spec": spec | _volcano().pod_group_fields(j)})
    docs.append(_simulation_manifest(scenario))
    header = f"# Scenario {scenario.name}, written by gangkit.manifests.load.dump_manifests\n"
    return header + yaml.dump_all(docs, Dumper=_Dumper, sort_keys=False, default_flow_style=False,
                                  allow_unicode=True, width=100)


class _Dumper(yaml.SafeDumper):
    """Plain YAML without ``&anchors``/``*aliases``, which would puzzle a reader."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def _has_pod_group(j: Job) -> bool:
    """A batch/v1 Job is written with a PodGroup when it has a gang size, a Volcano queue or minResources."""
    return j.controller == "batch" and (
        j.min_member is not None or j.volcano_queue != "default" or j.min_resources is not None)


def _priority_class_name(value: int) -> str:
    return f"gangkit-priority-{value}" if value >= 0 else f"gangkit-priority-minus-{-value}"


def _node_manifest(n: Node) -> dict:
    labels = dict(n.labels)
    if next((labels[k] for k in POOL_LABELS if k in labels), "default") != n.pool:
        labels[POOL_LABELS[0]] = n.pool
    allocatable: dict[str, str] = {GPU: str(n.gpus)}
    if n.cpu is not None:
        allocatable["cpu"] = format_cpu(n.cpu)
    if n.memory is not None:
        allocatable["memory"] = format_memory(n.memory)
    meta: dict[str, Any] = {"name": n.name} | ({"labels": labels} if labels else {})
    return {"apiVersion": "v1", "kind": "Node", "metadata": meta, "status": {"allocatable": allocatable}}


def _job_manifest(j: Job) -> dict:
    ps = j.pod_sets[0]
    labels = dict(j.labels)
    if (labels.get(QUEUE_LABEL) or j.namespace or "default") != j.queue:
        labels[QUEUE_LABEL] = j.queue
    annotations = {RUN_TIME: format_duration(j.run_time)}
    if j.submit_time:
        annotations[SUBMIT_TIME] = format_duration(j.submit_time)
    annotations[PROGRESS] = j.progress
    if j.checkpoint_interval is not None:
        annotations[CHECKPOINT_INTERVAL] = format_duration(j.checkpoint_interval)
    meta: dict[str, Any] = {"name": j.name}
    if j.namespace:
        meta["namespace"] = j.namespace
    if labels:
        meta["labels"] = labels
    meta["annotations"] = annotations

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
    container = {"name": "worker", "image": "busybox:1.36", "command": ["sleep", str(math.ceil(j.run_time))],
                 "resources": resources}
    pod: dict[str, Any] = {"restartPolicy": "Never"}
    if j.priority != 0:
        pod["priorityClassName"] = _priority_class_name(j.priority)
    if ps.node_selector:
        pod["nodeSelector"] = dict(ps.node_selector)
    pod["containers"] = [container]
    template: dict[str, Any] = {"spec": pod}
    if holding_gang(j) is not None:
        template = {"metadata": template_metadata(j), "spec": pod}
    elif _has_pod_group(j):
        template = {"metadata": {"annotations": {GROUP_NAME: j.name}}, "spec": pod}
    spec: dict[str, Any] = {"parallelism": ps.count, "completions": ps.count}
    if j.max_run_time is not None:
        spec["activeDeadlineSeconds"] = int(j.max_run_time)
    spec["template"] = template
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": meta, "spec": spec}


def _simulation_manifest(scenario: Scenario) -> dict:
    s = scenario.settings
    meta: dict[str, Any] = {"name": scenario.name}
    if scenario.description:
        meta["annotations"] = {DESCRIPTION: scenario.description}
    spec = {
        "stack": s.stack, "ordering": s.ordering, "scoring": s.scoring, "preemption": s.preemption,
        "sessionPeriod": format_duration(s.session_period), "seed": s.seed,
        "horizon": format_duration(s.horizon), "record": s.record,
    }
    if s.estimate_factor != 1.0:
        spec["estimateFactor"] = s.estimate_factor
    return {"apiVersion": API_VERSIONS["Simulation"], "kind": "Simulation", "metadata": meta, "spec": spec}
