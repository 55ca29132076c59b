"""A live cluster's snapshot: ``kubectl get ... -A -o yaml`` read as the state a run starts from.

A platform engineer's question is rarely "what would happen on an empty
cluster?" but "what happens to my queue in the next 24 hours?". The answer
starts from a dump of the cluster as it is::

    kubectl get nodes,pods,jobs,jobsets,clusterqueues,localqueues,resourceflavors,workloads -A -o yaml

That is a ``kind: List`` of live objects: the manifests their authors wrote,
plus what the API server and the controllers added (``metadata.uid``,
``resourceVersion``, ``managedFields``, ``ownerReferences``, defaulted spec
fields, ``status``). An input in which some object has a ``metadata.uid`` or
``metadata.resourceVersion`` is read as such a snapshot (:func:`split`), by
these rules:

- **The time of the snapshot** is the latest timestamp in it (creation
  times, pods' start times, conditions' transition and heartbeat times: a
  Node's ``Ready`` heartbeat is at most a few minutes old), unless given
  (``gangkit run --snapshot-time``). It is time 0 of the run.
- **Server-set fields are ignored silently**: the metadata the API server
  writes, ``status`` (read for the state, below; a Node's ``status`` gives
  its allocatable resources, as for any Node), and the spec fields the API
  server or a controller fills in (:data:`DEFAULTED`).
- **Objects made by a controller** (a ``controller: true`` owner reference
  to an object in the input) are not read as objects of their own: the
  owner is read, as it was written, and the owned object gives only its
  state. A JobSet's child Jobs, a Deployment's ReplicaSets, the PodGroups
  Volcano's controllers create and Kueue's Workloads are all left to their
  owners; Pods give their owner's state. An object whose owner is not in the
  input is read on its own (a note says so). A LeaderWorkerSet's StatefulSets
  (the leaders', owned by it; each group's workers', owned by the group's
  leader pod) are left to it, and each of its pods gives the state of the
  group its ``leaderworkerset.sigs.k8s.io/group-index`` label names, the job
  ``<name>-<index>`` (lws v0.10). Kueue's Workloads of its groups are not
  matched to the groups: their reservations come from the nodes.
- **Pods**: a pod with ``spec.nodeName`` that has not ended is bound to that
  node; a Running pod has run since the latest ``startedAt`` of its
  containers (else ``status.startTime``). Pods that ended (Succeeded,
  Failed) hold nothing and are left out. A job's pods are matched to its
  pod sets by their requests (:func:`gangkit.manifests.resume.match_pods`).
- **What could not be is an error**, one naming the object and the field: a
  Pod without a name, with a phase Kubernetes does not have
  (:data:`POD_PHASES`), with requests that are no quantity (NaN, negative,
  beyond 2^63-1), created or started after the snapshot time; a timestamp
  that is not RFC 3339; a pod bound to a node the input lacks, or one
  without room for it (:func:`gangkit.manifests.resume.check_bindings`, which ``gangkit check`` uses
  too: one reader, one verdict).
- **Kueue**: a Workload with ``status.admission`` holds that quota; its
  job is resumed as admitted, with the Workload's flavors and counts. A job
  with pods bound but no Workload in the input is given the reservation its
  nodes imply (:meth:`gangkit.kueue.layer.KueueLayer.resume`).
- **Finished jobs** (a ``Complete`` or ``Failed`` condition, a Volcano
  Job's ``Completed`` phase...) are left out with a note; so are the kinds
  a dump often holds that do not take part in scheduling (:data:`PASSIVE`).
- **Order**: jobs are submitted at time 0 in the order of their creation
  times, as the queues order them; the pods take their places in
  kube-scheduler's queue in the order they were created
  (``JobSnapshot.order``).
- **Run time**: a job's ``gangkit/run-time`` annotation (else the default)
  is its whole run time; the time its pods have run is subtracted. A job
  that ran longer than its run time finishes at time 0.

Simplified, and said so in ``docs/reference/snapshot.md``: waits before the
snapshot are not counted (a job's wait starts at 0); a running job's
checkpoints are those its ``gangkit/checkpoint-interval`` gives, counted
from its start; Kueue's ``waitForPodsReady`` timeout counts from the snapshot.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from gangkit.model.errors import Problem, ScenarioError
from gangkit.model.reading import QUEUE_LABEL, Reader, new_object, short

__all__ = ["DEFAULTED", "PASSIVE", "LivePod", "Taken", "is_snapshot", "parse_time", "split", "time_option"]

#: metadata fields only the API server writes
SERVER_METADATA = ("uid", "resourceVersion", "generation", "creationTimestamp", "managedFields", "selfLink",
                   "ownerReferences", "finalizers", "deletionTimestamp", "deletionGracePeriodSeconds")
#: annotations a client or a controller writes, never the author
SERVER_ANNOTATIONS = ("kubectl.kubernetes.io/last-applied-configuration", "deployment.kubernetes.io/revision",
                      "deployment.kubernetes.io/desired-replicas", "deployment.kubernetes.io/max-replicas",
                      "batch.kubernetes.io/job-tracking")
#: Spec fields the API server's defaulting or an admission plugin fills in (Kubernetes 1.35 ``SetDefaults_*``,
#: ``DefaultTolerationSeconds``, ``Priority``; the Job controller's selector): by the object's spec, the pod spec
#: (also a template's), and a container.
DEFAULTED = {
    "Job": ("selector", "manualSelector", "completionMode", "podReplacementPolicy"),
    "Deployment": ("progressDeadlineSeconds", "revisionHistoryLimit", "strategy"),
    "StatefulSet": ("revisionHistoryLimit", "updateStrategy", "persistentVolumeClaimRetentionPolicy"),
}
#: ... and in every pod spec: ``nodeName`` (the binding: read as state), ``priority`` and ``preemptionPolicy``
#: (the Priority admission plugin copies them from the PriorityClass), ``schedulerName: default-scheduler``,
#: and the tolerations :data:`DEFAULT_TOLERATIONS`. A Job's ``suspend`` is Kueue's doing when the Job names a
#: LocalQueue (it is dropped then); otherwise it is the author's, and read as any field.
#: Tolerations the DefaultTolerationSeconds admission plugin adds to every pod.
DEFAULT_TOLERATIONS = ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable")
#: Kinds a dump often holds that take no part in scheduling: left out with a note.
LEADERWORKERSET = "LeaderWorkerSet"
#: the label the LWS controller puts on each pod of a group (lws v0.10, GroupIndexLabelKey)
LWS_GROUP_INDEX = "leaderworkerset.sigs.k8s.io/group-index"
PASSIVE = frozenset({"Namespace", "Service", "Endpoints", "EndpointSlice", "ConfigMap", "Secret", "ServiceAccount",
                     "Event", "ControllerRevision", "Lease", "PersistentVolumeClaim", "PersistentVolume"})
#: Kinds whose objects, when a controller made them, are their owner's doing (read through the owner).
OWNED = frozenset({"Pod", "Job", "JobSet", "ReplicaSet", "PodGroup", "Workload"})
ENDED_PHASES = ("Succeeded", "Failed")
#: A Pod's ``status.phase``: the PodPhase constants of k8s.io/api core/v1 ``types.go`` (Kubernetes 1.35).
POD_PHASES = ("Pending", "Running", "Succeeded", "Failed", "Unknown")
#: RFC 3339 as metav1.Time reads it (``time.Parse(time.RFC3339, ...)`` in k8s.io/apimachinery ``time.go``): a date,
#: ``T``, a time with optional fractional seconds, and ``Z`` or an offset.
RFC3339 = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})")
#: A status condition's times that say when the cluster was seen (the latest time of a dump is its snapshot time).
TIME_FIELDS = ("lastTransitionTime", "lastHeartbeatTime", "lastProbeTime")


def parse_time(value: Any) -> datetime | None:
    """An RFC 3339 timestamp as the API server writes it (``2026-12-01T08:00:00Z``); None if it is not one.

    The form metav1.Time accepts (:data:`RFC3339`); a timestamp YAML itself read (unquoted) is taken
    as it is, in UTC when it names no zone.
    """
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=timezone.utc)
    if not isinstance(value, str) or RFC3339.fullmatch(value) is None:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:  # month 13, hour 25...
        return None


def _meta(doc: Mapping) -> Mapping:
    m = doc.get("metadata")
    return m if isinstance(m, Mapping) else {}


def _group(api: Any) -> str:
    return api.rsplit("/", 1)[0] if isinstance(api, str) and "/" in api else ""


def _unpack(docs: list, wheres: list[str]) -> tuple[list, list[str]]:
    """``kind: List`` documents unpacked into their items (other documents as they are)."""
    out, at = [], []
    for doc, where in zip(docs, wheres):
        if isinstance(doc, Mapping) and doc.get("kind") == "List" and isinstance(doc.get("items"), list):
            for i, item in enumerate(doc["items"]):
                out.append(item)
                at.append(f"{where}, items[{i}]")
        else:
            out.append(doc)
            at.append(where)
    return out, at


def is_snapshot(docs: list) -> bool:
    """Does some object of the input carry what only the API server writes (``metadata.uid`` or ``resourceVersion``)?"""
    for doc in _unpack(docs, [""] * len(docs))[0]:
        meta = _meta(doc) if isinstance(doc, Mapping) else {}
        if isinstance(meta.get("uid"), str) or isinstance(meta.get("resourceVersion"), str):
            return True
    return False


@dataclass
class LivePod:
    """One pod of the dump that has not ended: where it is bound (None: Pending) and since when it runs."""

    name: str
    node: str | None
    started: datetime | None
    created: datetime | None
    spec: Mapping
    labels: Mapping


@dataclass
class Taken:
    """What :func:`split` took out of a snapshot: the state the run starts from."""

    at: datetime
    pods: dict[tuple, list[LivePod]] = field(default_factory=dict)  # owner (namespace, name) -> its live pods
    bare: dict[tuple, LivePod] = field(default_factory=dict)  # (namespace, name) of a Pod read on its own
    admissions: dict[tuple, tuple[str, Mapping]] = field(default_factory=dict)  # owner -> (Workload label, admission)
    created: dict[tuple, datetime] = field(default_factory=dict)  # (namespace, name) of an object read -> its creation
    replicas: set[tuple] = field(default_factory=set)  # Deployments and ReplicaSets: pods spread over replica jobs
    lws: set[tuple] = field(default_factory=set)  # LeaderWorkerSets: read as jobs <name>-<group index>


class _Owners:
    """Who made what in a dump: its objects by (group, kind, namespace, name) and by uid, and each one's
    highest owner in the input (a Pod's Job's JobSet), by the ``controller: true`` ownerReference."""

    def __init__(self) -> None:
        self.index: dict[tuple, Mapping] = {}
        self.by_uid: dict[str, tuple] = {}

    def add(self, doc: Mapping, key: tuple) -> None:
        self.index[key] = doc
        uid = _meta(doc).get("uid")
        if isinstance(uid, str):
            self.by_uid[uid] = key

    def owner_of(self, doc: Mapping, key: tuple) -> tuple | None:
        """The key of the object's controller (by uid, else by kind and name in its namespace); None: none."""
        refs = _meta(doc).get("ownerReferences")
        for ref in refs if isinstance(refs, list) else ():
            if not isinstance(ref, Mapping) or ref.get("controller") is not True:
                continue
            found = self.by_uid.get(ref.get("uid")) if isinstance(ref.get("uid"), str) else None
            if found is None:
                found = (_group(ref.get("apiVersion")), ref.get("kind"), key[2], ref.get("name"))
            return found
        return None

    def top(self, key: tuple) -> tuple | None:
        """The highest owner in the input (None: the object's controller is not in the input)."""
        seen = {key}
        up = self.owner_of(self.index[key], key)
        if up is None or up not in self.index:
            return None
        while up is not None and up in self.index and up not in seen:
            seen.add(up)
            key = up
            up = self.owner_of(self.index[key], key)
        return key


def _key(doc: Mapping) -> tuple:
    meta = _meta(doc)
    return (_group(doc.get("apiVersion")), doc.get("kind"), meta.get("namespace"), meta.get("name"))


@dataclass
class _Kept:
    """What :func:`split` keeps: the objects to read and where they were, and what it noted on the way."""

    docs: list = field(default_factory=list)
    wheres: list = field(default_factory=list)
    keys: list = field(default_factory=list)  # (place in docs, object key) of the objects read
    standing_for: set = field(default_factory=set)  # jobs whose Workload is kept (keep_workloads)
    passive: list = field(default_factory=list)  # labels of objects that take no part in scheduling

    def keep(self, doc, where: str, key: tuple | None = None) -> None:
        self.docs.append(doc)
        self.wheres.append(where)
        if key is not None:
            self.keys.append((len(self.docs) - 1, key))


def split(r: Reader, docs: list, wheres: list[str], at: datetime | None = None,
          keep_workloads: bool = False) -> tuple[list, list[str], Taken]:
    """The objects to read (as their authors wrote them) and the state taken out of a snapshot (see the module).

    ``keep_workloads`` (``gangkit admit``, which reads Kueue's Workloads themselves): each Workload is kept
    with its ``status`` and stands for its job, which is left out (else the job would count twice).
    """
    docs, wheres = _unpack(docs, wheres)
    owners, stamps = _Owners(), []
    for doc, where in zip(docs, wheres):
        if isinstance(doc, Mapping):
            owners.add(doc, _key(doc))
            stamps.extend(_stamps(r, doc, new_object(doc, where).label))
    if at is None:
        at = max(stamps) if stamps else datetime(1970, 1, 1, tzinfo=timezone.utc)
    taken, kept = Taken(at), _Kept()
    for doc, where in zip(docs, wheres):
        if isinstance(doc, Mapping):
            _sort_object(r, doc, where, owners, taken, kept, keep_workloads)
        else:
            kept.keep(doc, where)
    out, out_wheres = kept.docs, kept.wheres
    if kept.standing_for:  # a job whose Workload is in the input is that Workload, once
        drop = {i for i, key in kept.keys if key in kept.standing_for}
        out = [d for i, d in enumerate(out) if i not in drop]
        out_wheres = [w for i, w in enumerate(out_wheres) if i not in drop]
    if kept.passive:
        r.notes.append(f"left out {len(kept.passive)} object(s) of kinds that take no part in scheduling: "
                       + ", ".join(kept.passive[:10]) + (", ..." if len(kept.passive) > 10 else ""))
    return out, out_wheres, taken


def _sort_object(r: Reader, doc: Mapping, where: str, owners: _Owners, taken: Taken, kept: _Kept,
                 keep_workloads: bool) -> None:
    """One object of a dump: left out (passive, ended, read through its owner), taken as state (a live Pod,
    a Workload's admission), or kept to be read as its author wrote it."""
    meta = _meta(doc)
    kind = doc.get("kind")
    key = _key(doc)
    label = new_object(doc, where).label
    if kind in PASSIVE and _group(doc.get("apiVersion")) in ("", "discovery.k8s.io", "events.k8s.io", "apps",
                                                              "coordination.k8s.io"):
        kept.passive.append(label)
        return
    made_by = owners.owner_of(doc, key)
    owner = owners.top(key) if kind in OWNED and made_by is not None else None
    if made_by is not None and kind in OWNED and owner is None:
        r.notes.append(f"{label} was made by a controller that is not in the input: read on its own")
    lws_owner = owners.top(key) if made_by is not None and kind in ("Pod", "StatefulSet") else None
    if lws_owner is not None and owners.index[lws_owner].get("kind") != LEADERWORKERSET:
        lws_owner = None
    if kind == "StatefulSet" and lws_owner is not None:
        return  # a group's leader or worker StatefulSet: read through its LeaderWorkerSet
    if kind == "Pod":
        pod = _live_pod(r, doc, taken.at, label)
        if pod is None:
            return  # it ended (it holds nothing), or it is refused
        if lws_owner is not None:
            taken.pods.setdefault(_group_key(r, doc, owners.index[lws_owner], label), []).append(pod)
            return
        if owner is not None:
            taken.pods.setdefault(_job_key(owners.index[owner]), []).append(pod)
            return
        taken.bare[(meta.get("namespace") or "default", meta.get("name"))] = pod
    elif kind == "Workload" and _group(doc.get("apiVersion")) == "kueue.x-k8s.io":
        status = doc.get("status") if isinstance(doc.get("status"), Mapping) else {}
        if owner is not None and isinstance(status.get("admission"), Mapping) and _holds_quota(status):
            taken.admissions[_job_key(owners.index[owner])] = (label, status["admission"])
        if keep_workloads:  # gangkit admit: the Workload as Kueue keeps it (status included) stands for its job
            if owner is not None:
                kept.standing_for.add(owner)
            kept.keep({**doc, "metadata": _authored_meta(meta)}, where)
            return
        if owner is not None or meta.get("ownerReferences"):
            return  # Kueue made it for its job: the job is read
    elif owner is not None:
        return  # a child Job, a ReplicaSet, a controller's PodGroup: read through its owner
    ended = _ended(doc)
    if ended:
        r.notes.append(f"{label} had ended at the snapshot ({ended}): left out")
        return
    if kind in ("Deployment", "ReplicaSet"):
        taken.replicas.add((meta.get("namespace") or "default", meta.get("name")))
    if kind == LEADERWORKERSET:
        taken.lws.add((meta.get("namespace") or "default", meta.get("name")))
    created = parse_time(meta.get("creationTimestamp"))
    if created is not None and meta.get("name") is not None:
        taken.created.setdefault((meta.get("namespace") or "default", meta.get("name")), created)
    kept.keep(_authored(doc, kind), where, key)


def _group_key(r: Reader, pod: Mapping, lws: Mapping, label: str) -> tuple:
    """The job of a LeaderWorkerSet's pod: ``<lws>-<group index>``, from the labels the LWS controller puts
    on every pod of a group (lws v0.10 ``api/leaderworkerset/v1/leaderworkerset_types.go``:
    ``leaderworkerset.sigs.k8s.io/group-index``). A pod without it is the set's, and matches no group."""
    ns, name = _job_key(lws)
    labels = _meta(pod).get("labels") if isinstance(_meta(pod).get("labels"), Mapping) else {}
    index = labels.get(LWS_GROUP_INDEX)
    if not isinstance(index, str) or not index.isdigit():
        r.notes.append(f"{label}: made for LeaderWorkerSet {name} but without a whole-number {LWS_GROUP_INDEX} "
                       "label, so no group of it is known: its state is left out")
        return (ns, name)
    return (ns, f"{name}-{int(index)}")


def _job_key(doc: Mapping) -> tuple:
    meta = _meta(doc)
    return (meta.get("namespace") or "default", meta.get("name"))


def _stamps(r: Reader, doc: Mapping, label: str) -> list[datetime]:
    """Every timestamp of an object that says the cluster was seen then; one that is not RFC 3339 is an error."""
    out = []

    def read(value: Any, fieldname: str) -> None:
        if value is None:
            return
        t = parse_time(value)
        if t is None:
            r.error(label, fieldname, f"expected an RFC 3339 time such as 2026-12-01T08:00:00Z, got {short(value)}")
        else:
            out.append(t)

    meta = _meta(doc)
    read(meta.get("creationTimestamp"), "metadata.creationTimestamp")
    status = doc.get("status") if isinstance(doc.get("status"), Mapping) else {}
    read(status.get("startTime"), "status.startTime")
    for i, c in enumerate(status.get("conditions") if isinstance(status.get("conditions"), list) else ()):
        if isinstance(c, Mapping):
            for k in TIME_FIELDS:
                read(c.get(k), f"status.conditions[{i}].{k}")
    for i, cs in enumerate(status.get("containerStatuses") if isinstance(status.get("containerStatuses"), list) else ()):
        running = cs.get("state", {}).get("running") if isinstance(cs, Mapping) and isinstance(cs.get("state"), Mapping) else None
        if isinstance(running, Mapping):
            read(running.get("startedAt"), f"status.containerStatuses[{i}].state.running.startedAt")
    return out


def _live_pod(r: Reader, doc: Mapping, at: datetime, label: str) -> LivePod | None:
    """The pod as the snapshot shows it, or None when it has ended (or is refused: the problems go to ``r``).

    A dump's Pod is checked as the API server would have checked it: a name, a phase among
    :data:`POD_PHASES`, a node name that is a string, requests that are quantities (finite, not
    negative: the pod's own spec, which its controller's template does not show), and starts
    (``creationTimestamp``, ``startTime``, the containers' ``startedAt``) no later than the snapshot.
    """
    meta = _meta(doc)
    spec = doc.get("spec") if isinstance(doc.get("spec"), Mapping) else {}
    status = doc.get("status") if isinstance(doc.get("status"), Mapping) else {}
    problems = len(r.problems)
    name = meta.get("name")
    if not isinstance(name, str) or not name:
        if isinstance(meta.get("generateName"), str) and meta["generateName"]:  # named as the manifests' readers do
            name = meta["generateName"]
        else:
            r.error(label, "metadata.name", "expected the Pod's name (a non-empty string), got "
                                            f"{'null' if name is None else short(name)}")
    phase = status.get("phase")
    if phase is not None and phase not in POD_PHASES:
        r.error(label, "status.phase", f"expected one of {', '.join(POD_PHASES)} (a Pod's phase), got {short(phase)}")
    if phase in ENDED_PHASES or meta.get("deletionTimestamp") is not None:
        return None
    node = spec.get("nodeName")
    if node is not None and not isinstance(node, str):
        r.error(label, "spec.nodeName", f"expected the name of a Node (a string), got {short(node)}")
    node = node if isinstance(node, str) and node else None
    sub = Reader(r.label)
    sub.pod_request(dict(spec), label)
    r.problems.extend(Problem(p.obj, p.field.replace("spec.template.spec", "spec", 1), p.message) for p in sub.problems)
    created = parse_time(meta.get("creationTimestamp"))
    starts = []
    for i, cs in enumerate(status.get("containerStatuses") if isinstance(status.get("containerStatuses"), list) else ()):
        state = cs.get("state") if isinstance(cs, Mapping) and isinstance(cs.get("state"), Mapping) else {}
        if isinstance(state.get("running"), Mapping):
            starts.append((parse_time(state["running"].get("startedAt")),
                           f"status.containerStatuses[{i}].state.running.startedAt"))
    for t, fieldname in [(created, "metadata.creationTimestamp"), (parse_time(status.get("startTime")), "status.startTime"),
                         *starts]:
        if t is not None and t > at:
            r.error(label, fieldname, f"expected a time no later than the snapshot's, {_rfc3339(at)} (--snapshot-time, "
                                      f"else the dump's latest timestamp), got {_rfc3339(t)}: the Pod did not exist "
                                      "or had not started yet when the snapshot was taken")
            break  # one error a pod: its first time after the snapshot
    if len(r.problems) > problems:
        return None
    started = None
    if node is not None and phase == "Running":
        found = [t for t, _ in starts if t is not None]
        started = max(found) if found else parse_time(status.get("startTime"))
    labels = meta.get("labels") if isinstance(meta.get("labels"), Mapping) else {}
    return LivePod(name, node, started, created, spec, labels)


def _rfc3339(t: datetime) -> str:
    return t.isoformat().replace("+00:00", "Z")


def _holds_quota(status: Mapping) -> bool:
    """A Workload holds quota while its ``QuotaReserved`` condition is True (and it is not Finished)."""
    conditions = {c.get("type"): c.get("status") for c in status.get("conditions") or () if isinstance(c, Mapping)}
    if conditions.get("Finished") == "True":
        return False
    return conditions.get("QuotaReserved", "True") == "True"


#: How each kind's status says it ended: (condition types that end it, phase field path, phases that end it).
_END_CONDITIONS = ("Complete", "Failed", "Completed", "Succeeded", "Finished")


def _ended(doc: Mapping) -> str:
    """Why the object had ended at the snapshot ("" when it had not)."""
    status = doc.get("status") if isinstance(doc.get("status"), Mapping) else {}
    for c in status.get("conditions") if isinstance(status.get("conditions"), list) else ():
        if isinstance(c, Mapping) and c.get("status") == "True" and c.get("type") in _END_CONDITIONS:
            if doc.get("kind") in ("Node", "Pod"):
                continue
            return f"condition {c['type']}"
    state = status.get("state") if isinstance(status.get("state"), Mapping) else {}
    if _group(doc.get("apiVersion")) == "batch.volcano.sh" and state.get("phase") in (
            "Completed", "Failed", "Terminated", "Aborted"):
        return f"phase {state['phase']}"
    return ""


def _authored(doc: Mapping, kind: Any) -> dict:
    """The object as its author wrote it: server-set metadata, ``status`` and defaulted spec fields removed."""
    out = {k: v for k, v in doc.items() if k != "status" or kind == "Node"}
    if kind == "Node" and isinstance(doc.get("status"), Mapping):
        out["status"] = {k: v for k, v in doc["status"].items() if k in ("capacity", "allocatable")}
        spec = out.get("spec")
        if isinstance(spec, Mapping):
            out["spec"] = {k: v for k, v in spec.items() if k not in ("podCIDR", "podCIDRs", "providerID")}
    out["metadata"] = _authored_meta(_meta(doc))
    spec = out.get("spec")
    if isinstance(spec, Mapping) and kind != "Node":
        spec = {k: v for k, v in spec.items() if k not in DEFAULTED.get(kind, ())}
        labels = _meta(doc).get("labels") if isinstance(_meta(doc).get("labels"), Mapping) else {}
        if kind == "Job" and (spec.get("suspend") is False or QUEUE_LABEL in labels):
            spec.pop("suspend", None)  # the default, or Kueue's (it suspends the Jobs it queues)
        if kind == "Pod":
            spec = _authored_pod(spec)
        out["spec"] = _templates(spec)
    return out


def _authored_meta(meta: Mapping) -> dict:
    out = {k: v for k, v in meta.items() if k not in SERVER_METADATA}
    if isinstance(meta.get("annotations"), Mapping):
        kept = {k: v for k, v in meta["annotations"].items() if k not in SERVER_ANNOTATIONS}
        if kept:
            out["annotations"] = kept
        else:
            out.pop("annotations", None)
    return out


def _templates(node: Any) -> Any:
    """Every pod template inside a spec (a Job's, a JobSet's replicated Jobs', a TrainJob runtime's...), cleaned."""
    if isinstance(node, list):
        return [_templates(x) for x in node]
    if not isinstance(node, Mapping):
        return node
    out = {}
    for k, v in node.items():
        if k == "template" and isinstance(v, Mapping):
            t = dict(v)
            if isinstance(t.get("metadata"), Mapping):
                t["metadata"] = _authored_meta(t["metadata"])
                if not t["metadata"]:
                    t.pop("metadata")
            if isinstance(t.get("spec"), Mapping):
                inner = t["spec"]
                t["spec"] = _authored_pod(inner) if "containers" in inner else _templates(
                    {k2: v2 for k2, v2 in inner.items() if k2 not in DEFAULTED["Job"]})
            out[k] = t
        else:
            out[k] = _templates(v)
    return out


def _authored_pod(spec: Mapping) -> dict:
    """A pod spec without what the API server and its admission plugins add."""
    out = {k: v for k, v in spec.items() if k not in ("nodeName", "priority", "preemptionPolicy")}
    if out.get("schedulerName") == "default-scheduler":
        out.pop("schedulerName")
    tol = out.get("tolerations")
    if isinstance(tol, list):
        kept = [t for t in tol if not (isinstance(t, Mapping) and t.get("key") in DEFAULT_TOLERATIONS
                                       and t.get("tolerationSeconds") == 300)]
        if kept:
            out["tolerations"] = kept
        else:
            out.pop("tolerations")
    return out


def time_option(text: str) -> datetime:
    """``--snapshot-time``: an RFC 3339 timestamp, else one clear error."""
    t = parse_time(text)
    if t is None:
        raise ScenarioError([Problem("--snapshot-time", "", f"expected an RFC 3339 time such as "
                                     f"2026-12-01T08:00:00Z, got {text!r}")])
    return t

