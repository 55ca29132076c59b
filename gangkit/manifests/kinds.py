"""Which kinds gangkit reads, and which module reads each: the directory at the entrance.

Picture the directory board in the hall of an office building: every
(apiVersion, kind) that gangkit reads has a line saying which office (module)
handles it. A document arrives, the board is looked up, and the document is
sent to that office, which checks it (:meth:`Registry.objects`). A document
for no office is refused with one message listing the whole board::

    DaemonSet web: kind: unknown kind 'DaemonSet' (apiVersion 'apps/v1'); gangkit reads Node (v1), ...

A ``kind`` or ``apiVersion`` that is not a string (a list, a mapping) is no
line of any board: it is refused as the API server's decoding refuses it,
"expected a string".

The board is one table, :data:`KINDS`. It names the offices but does not
visit them: the offices (family modules) build on
:mod:`gangkit.model.reading` only, and :mod:`gangkit.manifests.load`,
which knows every family, hands the registry the function each module checks
one object with.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from gangkit.model.reading import ManifestObject, Reader, short

__all__ = ["KINDS", "Kind", "Registry"]

CORE = "gangkit.manifests.core"
SUPPLY = "gangkit.supply.manifests"
PLACEMENT = "gangkit.placement.manifests"
KUEUE = "gangkit.kueue.manifests"
VOLCANO = "gangkit.volcano.manifests"
TRAINING = "gangkit.manifests.training"
COMPANIONS = "gangkit.manifests.companions"
APPS = "gangkit.manifests.apps"
LWS = "gangkit.manifests.lws"
CRONJOB = "gangkit.manifests.cronjob"

#: How a module checks one object of a kind it reads: ``read(reader, doc, where, role)`` (see :attr:`Kind.name`).
ReadObject = Callable[[Reader, Mapping, str, str], "ManifestObject | None"]


@dataclass(frozen=True)
class Kind:
    """One line of the board: an (apiVersion, kind) gangkit reads and the module that reads it.

    ``role`` is the name its objects are grouped under when two API groups
    share a kind name (Volcano's Job is a ``VolcanoJob``); ``namespaced``:
    names are unique per namespace. ``other_versions`` says what an object
    of the same kind name with an unknown apiVersion means: ``"suggest"``
    this apiVersion in the error, ``"own"`` it (Kueue's kind names are
    Kueue's, whatever the version: only its versions are suggested), or
    ``"exact"`` (no suggestion: Volcano's Job and Queue share their names).
    ``title`` groups it in the unknown-kind message (``""``: gangkit's own list).
    """

    api_version: str
    kind: str
    module: str | None  # None: the registry itself reads it (a List is unpacked)
    role: str = ""
    namespaced: bool = False
    other_versions: str = "suggest"
    title: str = ""

    @property
    def name(self) -> str:
        return self.role or self.kind


def _kueue(kind: str, namespaced: bool = False) -> tuple[Kind, ...]:
    api = "config.kueue.x-k8s.io" if kind == "Configuration" else "kueue.x-k8s.io"
    return tuple(Kind(f"{api}/{v}", kind, KUEUE, namespaced=namespaced, other_versions="own", title="Kueue's")
                 for v in ("v1beta2", "v1beta1"))


#: Every kind gangkit reads, in the order the unknown-kind message lists them.
KINDS: tuple[Kind, ...] = (
    Kind("v1", "Node", CORE),
    Kind("batch/v1", "Job", CORE, namespaced=True),
    # read as the Jobs it creates; "exact": Volcano's batch.volcano.sh CronJob shares the name (not read)
    Kind("batch/v1", "CronJob", CRONJOB, namespaced=True, other_versions="exact"),
    Kind("jobset.x-k8s.io/v1alpha2", "JobSet", TRAINING, namespaced=True),
    Kind("kubeflow.org/v1", "PyTorchJob", TRAINING, namespaced=True),
    Kind("kubeflow.org/v2beta1", "MPIJob", TRAINING, namespaced=True),
    *(Kind("kubeflow.org/v1", k, TRAINING, namespaced=True) for k in ("TFJob", "JAXJob", "PaddleJob", "XGBoostJob")),
    Kind("v1", "Pod", APPS, namespaced=True),
    Kind("apps/v1", "Deployment", APPS, namespaced=True),
    Kind("apps/v1", "ReplicaSet", APPS, namespaced=True),
    Kind("apps/v1", "StatefulSet", APPS, namespaced=True),
    Kind("leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet", LWS, namespaced=True),
    Kind("trainer.kubeflow.org/v1alpha1", "TrainJob", TRAINING, namespaced=True),
    Kind("trainer.kubeflow.org/v1alpha1", "TrainingRuntime", TRAINING, namespaced=True),
    Kind("trainer.kubeflow.org/v1alpha1", "ClusterTrainingRuntime", TRAINING),
    Kind("scheduling.volcano.sh/v1beta1", "PodGroup", CORE, namespaced=True),  # read with the Job whose pods name it
    Kind("scheduling.k8s.io/v1", "PriorityClass", CORE),
    Kind("gangkit/v1alpha1", "Simulation", CORE),
    Kind("gangkit/v1alpha1", "ClusterAutoscaler", SUPPLY),
    Kind("gangkit/v1alpha1", "Karpenter", SUPPLY),
    Kind("karpenter.sh/v1", "NodePool", SUPPLY),
    Kind("autoscaling.x-k8s.io/v1", "ProvisioningRequest", SUPPLY, namespaced=True),
    Kind("autoscaling.x-k8s.io/v1beta1", "ProvisioningRequest", SUPPLY, namespaced=True),
    Kind("v1", "PodTemplate", SUPPLY, namespaced=True),  # read with the ProvisioningRequest that names it
    Kind("gangkit/v1alpha1", "WorkloadGenerator", CORE),
    Kind("v1", "List", None),
    Kind("scheduling.x-k8s.io/v1alpha1", "PodGroup", PLACEMENT, role="CoschedulingPodGroup", namespaced=True),
    Kind("scheduling.k8s.io/v1alpha1", "Workload", PLACEMENT, role="KubeWorkload", namespaced=True),  # Kubernetes 1.35
    Kind("scheduling.k8s.io/v1alpha2", "Workload", PLACEMENT, role="KubeWorkloadV1alpha2", namespaced=True),  # 1.36
    Kind("scheduling.k8s.io/v1alpha2", "PodGroup", PLACEMENT, role="KubePodGroup", namespaced=True),
    *_kueue("ResourceFlavor"), *_kueue("ClusterQueue"), *_kueue("LocalQueue", namespaced=True), *_kueue("Cohort"),
    *_kueue("WorkloadPriorityClass"), *_kueue("Workload", namespaced=True), *_kueue("AdmissionCheck"),
    *_kueue("ProvisioningRequestConfig"), *_kueue("Configuration"),
    Kind("scheduling.volcano.sh/v1beta1", "Queue", VOLCANO, other_versions="exact", title="Volcano's"),
    Kind("batch.volcano.sh/v1alpha1", "Job", VOLCANO, role="VolcanoJob", namespaced=True, other_versions="exact",
         title="Volcano's"),
    Kind("v1", "ConfigMap", VOLCANO, namespaced=True),  # Volcano's scheduler configuration (others: noted, not read)
    # accepted with a warning, not simulated (gangkit.manifests.companions)
    *(Kind(api, kind, COMPANIONS, title="companion objects (not simulated):",
           other_versions="own" if api.startswith("kueue.") else "suggest")
      for api, kind in (("karpenter.k8s.aws/v1", "EC2NodeClass"), ("karpenter.azure.com/v1beta1", "AKSNodeClass"),
                        ("karpenter.kwok.sh/v1alpha1", "KWOKNodeClass"), ("karpenter.sh/v1", "NodeClaim"),
                        ("kueue.x-k8s.io/v1beta2", "Topology"), ("kueue.x-k8s.io/v1beta1", "Topology"),
                        ("kueue.x-k8s.io/v1beta2", "MultiKueueConfig"), ("kueue.x-k8s.io/v1beta1", "MultiKueueConfig"),
                        ("kueue.x-k8s.io/v1beta2", "MultiKueueCluster"), ("kueue.x-k8s.io/v1beta1", "MultiKueueCluster"),
                        ("kubescheduler.config.k8s.io/v1", "KubeSchedulerConfiguration"))),
    # Dynamic Resource Allocation (resource.k8s.io/v1, Kubernetes 1.34 GA): accepted, its devices not counted
    *(Kind("resource.k8s.io/v1", kind, COMPANIONS, title="companion objects (not simulated):", namespaced=namespaced)
      for kind, namespaced in (("ResourceClaimTemplate", True), ("ResourceClaim", True), ("DeviceClass", False),
                               ("ResourceSlice", False))),
)


#: Kinds users submit that gangkit does not model, and what to do instead (the error's words).
NOT_MODELLED = {
    **{("flow.volcano.sh/v1alpha1", kind): (
        "Volcano's JobFlow and JobTemplate run Volcano Jobs in dependency order (a workflow), which gangkit does not "
        "simulate; submit the flow's Volcano Jobs (batch.volcano.sh/v1alpha1) themselves, each with a "
        "gangkit/submit-time annotation for when its dependencies would have finished")
       for kind in ("JobFlow", "JobTemplate")},
}


class GeneratedNames:
    """Names for objects that give ``metadata.generateName`` instead of a name, the same in every run.

    The API server makes ``<generateName><5 random characters>`` (the prefix
    cut to 58 characters so that the name fits in 63; apimachinery
    ``names.SimpleNameGenerator``); a simulation must name its jobs the same
    way every time, so gangkit appends a counter instead: ``sample-job-1``,
    ``sample-job-2``..., in the order of the input, per kind and namespace,
    skipping names the input already uses. A name given with the prefix wins
    (the API server ignores generateName then).
    """

    MAX_PREFIX = 58

    def __init__(self, docs: list):
        self.taken: set[tuple] = set()
        self.counters: dict[tuple, int] = {}
        self.made: list[str] = []

        def gather(doc: Any) -> None:
            if not isinstance(doc, Mapping):
                return
            if doc.get("kind") == "List" and isinstance(doc.get("items"), list):
                for item in doc["items"]:
                    gather(item)
                return
            meta = doc.get("metadata")
            if isinstance(meta, Mapping) and isinstance(meta.get("name"), str) and meta["name"]:
                self.taken.add(self._key(doc, meta, meta["name"]))

        for doc in docs:
            gather(doc)

    @staticmethod
    def _key(doc: Mapping, meta: Mapping, name: str) -> tuple:
        return (str(doc.get("kind")), str(meta.get("namespace") or "default"), name)

    def named(self, doc: Mapping) -> Mapping:
        """``doc`` itself, or a copy whose metadata has the generated name."""
        meta = doc.get("metadata")
        if not isinstance(meta, Mapping) or meta.get("name") not in (None, ""):
            return doc
        prefix = meta.get("generateName")
        if not isinstance(prefix, str) or not prefix:
            return doc
        prefix = prefix[: self.MAX_PREFIX]
        scope = self._key(doc, meta, prefix)
        n = self.counters.get(scope, 0)
        while True:
            n += 1
            key = self._key(doc, meta, f"{prefix}{n}")
            if key not in self.taken:
                break
        self.counters[scope] = n
        self.taken.add(key)
        self.made.append(key[2])
        return {**doc, "metadata": {**meta, "name": key[2]}}


class Registry:
    """The board of :data:`KINDS` with each module's ``read`` function: sends every object to its reader."""

    def __init__(self, readers: Mapping[str, ReadObject], kinds: Iterable[Kind] = KINDS):
        self.kinds = tuple(kinds)
        modules = {k.module for k in self.kinds} - {None}
        if modules != set(readers):
            raise ValueError(f"expected one read function per module of the table {sorted(modules)}, got {sorted(readers)}")
        self.readers = dict(readers)
        self._exact = {(k.api_version, k.kind): k for k in self.kinds}

    def find(self, api: Any, kind: Any) -> Kind | None:
        """The line of the board for this (apiVersion, kind); None for any other pair, strings or not."""
        if not isinstance(api, str) or not isinstance(kind, str):
            return None
        return self._exact.get((api, kind))

    def versions(self, kind: Any) -> list[str]:
        """The apiVersions to suggest for an object of this kind name whose apiVersion is unknown (none: unknown kind)."""
        if not isinstance(kind, str):
            return []
        owned = [k.api_version for k in self.kinds if k.kind == kind and k.other_versions == "own"]
        return owned or [k.api_version for k in self.kinds if k.kind == kind and k.other_versions == "suggest"]

    def unknown_kind(self, kind: Any, api: Any) -> str:
        """The message for a kind no module reads: what gangkit does not model about a kind users submit
        (:data:`NOT_MODELLED`), then the whole board, gangkit's own kinds first."""
        why = NOT_MODELLED.get((api, kind)) if isinstance(api, str) and isinstance(kind, str) else None
        if why:
            return f"{kind} ({api}) is not modelled: {why}"
        listed = [", ".join(f"{k.kind} ({k.api_version})" for k in self.kinds if not k.title)]
        titles = list(dict.fromkeys(k.title for k in self.kinds if k.title))
        for i, title in enumerate(titles):
            group = [k for k in self.kinds if k.title == title]
            names = list(dict.fromkeys(k.kind for k in group))
            shown = [n if sum(k.kind == n for k in group) > 1 else f"{n} ({next(k.api_version for k in group if k.kind == n)})"
                     for n in names]  # a kind with several versions is named alone
            listed.append(("and " if i == len(titles) - 1 else "") + f"{title} {', '.join(shown)}")
        return f"unknown kind {short(kind)} (apiVersion {short(api)}); gangkit reads {', '.join(listed)}"

    def objects(self, r: Reader, docs: list, wheres: list[str] | None = None) -> list[ManifestObject]:
        """Every object, ``kind: List`` unpacked, each checked by the module that reads its kind.

        An object with ``metadata.generateName`` and no name is named here (:class:`GeneratedNames`).
        ``wheres`` says where each document comes from (default: ``document 1``, ``document 2``...).
        """
        out: list[ManifestObject] = []
        names = GeneratedNames(docs)

        def visit(doc: Any, where: str) -> None:
            if not isinstance(doc, Mapping):
                r.error(f"{r.label} {where}", "", f"expected a mapping (a Kubernetes object), got {type(doc).__name__}")
                return
            kind, api = doc.get("kind"), doc.get("apiVersion")
            entry = self.find(api, kind)
            if entry is None or entry.module is None:
                meta = doc.get("metadata") if isinstance(doc.get("metadata"), Mapping) else {}
                name = meta.get("name") if isinstance(meta.get("name"), str) else None
                namespace = meta.get("namespace") if isinstance(meta.get("namespace"), str) else None
                shown = kind if isinstance(kind, str) else "object"
                label = ManifestObject(dict(doc), shown, where, name, namespace).label
            if entry is None:
                served = self.versions(kind)
                wrong = [(key, value) for key, value in (("apiVersion", api), ("kind", kind))
                         if value is not None and not isinstance(value, str)]
                for key, value in wrong:  # the API server cannot even decode it: "cannot unmarshal ... of type string"
                    r.error(label, key, f"expected a string, got {type(value).__name__} {short(value)}")
                if wrong:
                    return
                if served:
                    r.error(label, "apiVersion", f"unknown apiVersion {short(api)} for kind {kind}: expected {' or '.join(served)}")
                else:
                    r.error(label, "kind", self.unknown_kind(kind, api))
                return
            if entry.module is None:  # a List: its items are read as if they were documents
                items = doc.get("items") or []
                if not isinstance(items, list):
                    r.error(label, "items", f"expected a list of objects, got {short(items)}")
                    return
                for i, item in enumerate(items):
                    visit(item, f"{where}, items[{i}]")
                return
            doc = names.named(doc)
            o = self.readers[entry.module](r, doc, where, entry.name)
            if o is not None:
                o.role, o.namespaced = entry.name, entry.namespaced
                out.append(o)

        for i, doc in enumerate(docs, start=1):
            visit(doc, wheres[i - 1] if wheres else f"document {i}")
        if names.made:
            r.notes.append(f"metadata.generateName: gangkit named {len(names.made)} object(s) after their prefix and a "
                           f"counter (the API server adds 5 random characters instead): {', '.join(names.made)}")
        return out

    def check_unique(self, r: Reader, objects: list[ManifestObject]) -> None:
        """Names are unique per kind (and per namespace for namespaced kinds), as the API server requires."""
        seen: dict[tuple, ManifestObject] = {}
        for o in objects:
            if o.name is None:  # a Kueue Configuration needs no name
                continue
            key = (o.role, (o.namespace or "default") if o.namespaced else None, o.name)
            if key in seen:
                r.error(o.label, "metadata.name", f"expected a unique name; {seen[key].where} has the same {o.kind} name")
            else:
                seen[key] = o
