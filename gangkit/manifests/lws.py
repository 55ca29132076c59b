"""The LeaderWorkerSet (``leaderworkerset.x-k8s.io/v1``): groups of a leader and its workers, each group a gang.

Multi-host inference (a model too large for one node, served by a leader
pod and its workers) and some training runs are written as a LeaderWorkerSet
(kubernetes-sigs/lws v0.10, ``api/leaderworkerset/v1/leaderworkerset_types.go``)::

    apiVersion: leaderworkerset.x-k8s.io/v1
    kind: LeaderWorkerSet
    metadata:
      name: llm
      labels: {kueue.x-k8s.io/queue-name: team-a}
    spec:
      replicas: 2                 # groups (default 1)
      startupPolicy: LeaderCreated
      leaderWorkerTemplate:
        size: 4                   # pods per group, the leader included (default 1)
        leaderTemplate: {spec: {containers: [...]}}   # optional: else the workers' template
        workerTemplate: {spec: {containers: [...]}}

The LWS controller creates, for each group ``i`` of ``spec.replicas``, a
leader pod ``<name>-<i>`` (the group's name) and a StatefulSet
``<name>-<i>`` of ``size - 1`` workers ``<name>-<i>-1``...; the leader uses
``leaderTemplate``, or ``workerTemplate`` when there is none.

How gangkit reads it:

- **One job per group**, named ``<name>-<i>`` (the leader pod's name), of
  ``size`` pods. With a ``leaderTemplate`` it has two pod sets, ``leader`` (1
  pod) and ``worker`` (``size - 1`` pods; none when ``size`` is 1); without,
  one pod set ``main`` of ``size`` pods of the workers' template. These are
  the pod sets and names of the Workload Kueue's LeaderWorkerSet integration
  creates for each group (Kueue v0.19 ``pkg/controller/jobs/leaderworkerset``,
  ``podSets``: ``leader`` and ``worker``, or ``kueue.DefaultPodSetName``
  ``main``). Kueue names the Workload ``leaderworkerset-<name>-<i>-<hash>``;
  gangkit names it after the group.
- **Each group is one gang**: with ``startupPolicy: LeaderCreated`` (the
  default) all ``size`` pods are placed together or not at all. That is the
  PodGroup LWS's Volcano provider creates per group (lws v0.10
  ``pkg/schedulerprovider/volcano_provider.go``: ``minMember`` = ``size``).
  With ``LeaderReady`` LWS creates the workers only once the leader is Ready:
  the provider's PodGroup has ``minMember`` 1 and the ``minResources`` of the
  whole group, and so has gangkit's job (``min_member`` 1, ``min_resources``
  the group's total). Simplified: gangkit creates the workers with the
  leader, not once it is Ready. The provider puts the PodGroup in the Volcano
  queue of the LeaderWorkerSet's ``scheduling.volcano.sh/queue-name``
  annotation (``Job.volcano_queue``; else ``default``). gangkit assumes the
  LWS controller runs with that provider (``gangSchedulingManagement:
  schedulerProvider: volcano``; without it Volcano's own podgroup controller
  would give each pod's owner a PodGroup of ``minMember`` 1).
- **Long-running**: a group serves until it is deleted. Without a
  ``gangkit/run-time`` annotation its pods run until the run's horizon, as
  those of a Deployment or StatefulSet do (:mod:`gangkit.manifests.apps`).
  A group progresses only while all its pods run (``gangkit/progress:
  sync``, the default: the model is sharded over the group).
- **Priority and scheduler**: one per group; the leader's and the workers'
  templates must name the same ``priorityClassName`` and ``schedulerName``.
  Kueue's queue label sits on the LeaderWorkerSet's own metadata, gangkit's
  annotations too.
- **Gangs named by the pods are refused**: a template naming a PodGroup
  (``scheduling.x-k8s.io/pod-group``, Volcano's
  ``scheduling.k8s.io/group-name``, Kueue's ``pod-group-name``, YuniKorn task
  groups, a 1.36 ``schedulingGroup``) would put every group's pods in one
  gang; the group is the gang here.

Not modelled (listed in the warning of fields gangkit does not read, or
noted): rolling updates (``rolloutStrategy``), scaling, ``networkConfig``
(headless services), ``subGroupPolicy``, ``volumeClaimTemplates``, the
exclusive-topology annotations, Kueue's topology-aware scheduling annotations
on the templates (read on batch/v1 Jobs and JobSets only). ``restartPolicy``: gangkit restarts a
``sync`` group whole when one of its pods is evicted or preempted
(``Simulation.evict_pod``), which is what ``RecreateGroupOnPodRestart`` (the
default) does; ``None`` (and the deprecated ``Default``: only the failed pod
is recreated) is noted and read as the default (``gangkit/progress:
independent`` recreates only the evicted pod). Containers that exit and
restart are not modelled.

The job's ``framework`` is Kueue's integration name,
``leaderworkerset.x-k8s.io/leaderworkerset`` (its pods exist from
submission, as a StatefulSet's do, so the simulation is the same).

**Written back** (:func:`lws_manifests`, used by ``gangkit export``): the
jobs of one LeaderWorkerSet (``<name>-0`` ... ``<name>-<n-1>``, alike but for
their names) become that LeaderWorkerSet again, ``replicas`` n, ``size`` the
group's pods, the ``leader``/``worker`` pod sets as ``leaderTemplate`` and
``workerTemplate`` (``main`` as ``workerTemplate`` alone),
``startupPolicy: LeaderReady`` for a gang of ``min_member`` 1 with the
group's ``min_resources``, gangkit's annotations and Kueue's queue label on
its metadata. Reading it gives the same jobs.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

from gangkit.manifests import core
from gangkit.manifests.apps import LONG_RUNNING
from gangkit.manifests.core_dump import job_manifest
from gangkit.model.errors import Problem
from gangkit.model.jobs import LEADERWORKERSET, Job, PodSet
from gangkit.model.reading import (
    ANY,
    JOB_ANNOTATIONS,
    MAX_INT32,
    META,
    POD_SPEC,
    PROGRESS,
    QUEUE_LABEL,
    RUN_TIME,
    ManifestObject,
    Reader,
    short,
)
from gangkit.model.resources import Resources
from gangkit.model.scenario import PLACEMENTS
from gangkit.placement.manifests import POD_GROUP_LABEL, TASK_GROUP_NAME, TASK_GROUPS, GangObjects

__all__ = ["KNOWN_FIELDS", "LWS_API", "lws_manifests", "lws_problems", "read_lws", "read_object"]

LWS_API = "leaderworkerset.x-k8s.io/v1"
MAX_REPLICAS = 1_000_000  # the CRD's maximum of spec.replicas (lws v0.10)
STARTUP_POLICIES = ("LeaderCreated", "LeaderReady")  # the CRD's enum; LeaderCreated is the default
RESTART_POLICIES = ("RecreateGroupOnPodRestart", "RecreateGroupAfterStart", "None", "Default")
KUEUE_GROUP = "kueue.x-k8s.io/pod-group-name"
LEADER, WORKER, MAIN = "leader", "worker", "main"  # Kueue's pod set names (leaderPodSetName, workerPodSetName)
VOLCANO_QUEUE = "scheduling.volcano.sh/queue-name"  # on the LWS: the queue of the provider's PodGroups
EXCLUSIVE = ("leaderworkerset.sigs.k8s.io/exclusive-topology", "leaderworkerset.sigs.k8s.io/subgroup-exclusive-topology")
_TEMPLATE = {"metadata": META, "spec": POD_SPEC}
KNOWN_FIELDS: dict[str, dict] = {
    "LeaderWorkerSet": {
        "apiVersion": ANY, "kind": ANY, "metadata": META, "status": ANY,
        # read; rolloutStrategy, networkConfig and the template's subGroupPolicy, volumeClaimTemplates and
        # persistentVolumeClaimRetentionPolicy are listed in the warning as not modelled
        "spec": {"replicas": ANY, "startupPolicy": ANY,
                 "leaderWorkerTemplate": {"size": ANY, "restartPolicy": ANY,
                                          "leaderTemplate": _TEMPLATE, "workerTemplate": _TEMPLATE}},
    },
}
KNOWN_ANNOTATIONS = JOB_ANNOTATIONS
LWT = "spec.leaderWorkerTemplate"


def read_object(r: Reader, doc: Mapping, where: str, role: str) -> ManifestObject | None:
    """Check one LeaderWorkerSet (its metadata, unknown fields and gangkit annotations)."""
    return r.check_object(doc, where, KNOWN_FIELDS[role], KNOWN_ANNOTATIONS)


def read_lws(r: Reader, o: ManifestObject, classes: dict, default_priority: int, groups: dict, used_groups: dict,
             gangs: GangObjects) -> list[Job]:
    """A LeaderWorkerSet as one job per group (see the module for every rule).

    ``groups``, ``used_groups`` and ``gangs`` (the input's gang objects) are
    taken as the other readers take them; a group names none of them.
    """
    obj = o.label
    before = len(r.problems)
    meta = r.mapping(o.doc.get("metadata"), obj, "metadata")
    labels = r.strings(meta.get("labels"), obj, "metadata.labels")
    annotations = r.strings(meta.get("annotations"), obj, "metadata.annotations")
    spec = r.mapping(o.doc.get("spec"), obj, "spec")
    lwt = spec.get("leaderWorkerTemplate")
    if not isinstance(lwt, Mapping):
        r.error(obj, LWT, f"expected a mapping with workerTemplate (and size, leaderTemplate); got {_shown(lwt)}")
        return []
    replicas = r.whole(spec.get("replicas", 1), obj, "spec.replicas", 0, MAX_REPLICAS)
    size = r.whole(lwt.get("size", 1), obj, f"{LWT}.size", 1)
    startup = _choice(r, obj, "spec.startupPolicy", spec.get("startupPolicy", "LeaderCreated"), STARTUP_POLICIES)
    restart = _choice(r, obj, f"{LWT}.restartPolicy", lwt.get("restartPolicy", RESTART_POLICIES[0]), RESTART_POLICIES)
    roles = _roles(r, obj, lwt, size)
    if None in (replicas, size, startup, restart) or roles is None:
        return []
    if replicas * size > MAX_INT32:
        r.error(obj, "spec.replicas", f"expected replicas x size at most {MAX_INT32} (the LWS webhook's rule), "
                f"got {replicas} x {size}")
        return []
    pod_sets, priority = _group(r, obj, roles, classes, default_priority)
    timing = core.read_timing(r, annotations, obj)
    if pod_sets is None or priority is None or len(r.problems) > before:
        return []
    if timing.pop("elastic"):
        r.error(obj, f"metadata.annotations.{PROGRESS}", "expected sync or independent: a LeaderWorkerSet "
                "group has no partial admission, so it cannot be elastic")
        return []
    _notes(r, obj, annotations, replicas, startup, restart)
    if replicas == 0:
        return []
    gang: dict[str, Any] = {}
    if VOLCANO_QUEUE in annotations:
        if not annotations[VOLCANO_QUEUE]:
            r.error(obj, f"metadata.annotations.{VOLCANO_QUEUE}", "expected a Volcano Queue's name, got ''")
            return []
        gang["volcano_queue"] = annotations[VOLCANO_QUEUE]
    if startup == "LeaderReady":
        total = Resources(*(sum(getattr(ps, k) * ps.count for ps in pod_sets) for k in ("gpus", "cpu", "memory")))
        gang |= {"min_member": 1, "min_resources": total}
    if timing["run_time"] is None:
        timing["run_time"] = LONG_RUNNING
        r.notes.append(f"{obj}: no {RUN_TIME} annotation; its groups serve until the run's horizon")
    return [Job(name=f"{o.name}-{i}", namespace=o.namespace, pod_sets=list(pod_sets),
                priority=priority, queue=labels.get(QUEUE_LABEL) or o.namespace or "default", labels=dict(labels),
                framework=LEADERWORKERSET, **timing, **gang)
            for i in range(replicas)]


def _roles(r: Reader, obj: str, lwt: Mapping, size: int | None) -> list[tuple] | None:
    """(pod set name, count, field of the template, template metadata, pod spec) per pod set of a group."""
    worker = lwt.get("workerTemplate")
    leader = lwt.get("leaderTemplate")
    ok = True
    for name, template, required in (("workerTemplate", worker, True), ("leaderTemplate", leader, False)):
        if (required or template is not None) and not isinstance(template, Mapping):
            r.error(obj, f"{LWT}.{name}", "expected a pod template (a mapping with spec.containers)"
                    + ("; it is required" if required else f", got {_shown(template)}"))
            ok = False
    if not ok or size is None:
        return None
    if leader is None:
        wanted = [(MAIN, size, f"{LWT}.workerTemplate", worker)]
    else:
        wanted = [(LEADER, 1, f"{LWT}.leaderTemplate", leader), (WORKER, size - 1, f"{LWT}.workerTemplate", worker)]
    roles = []
    for name, count, where, template in wanted:
        tmeta = r.mapping(template.get("metadata"), obj, f"{where}.metadata")
        pod = r.mapping(template.get("spec"), obj, f"{where}.spec")
        named = _named_gang(tmeta, pod)
        if named is not None:
            r.error(obj, f"{where}.{named}", "names a gang for the pods of every group; each LeaderWorkerSet group "
                    "is a gang of its own (one PodGroup per group, as LWS's Volcano provider makes), and gangkit "
                    "does not model one gang across groups")
            ok = False
        if count:
            roles.append((name, count, where, tmeta, pod))
    return roles if ok else None


def _group(r: Reader, obj: str, roles: list[tuple], classes: dict,
           default_priority: int) -> tuple[list[PodSet] | None, int | None]:
    """A group's pod sets and its priority (the templates must agree on the priority class and the scheduler)."""
    pod_sets: list[PodSet] | None = []
    priorities = []
    first_name, _, first_where, _, first_pod = roles[0]
    for name, count, where, _tmeta, pod in roles:
        request = _moved(r, obj, where, lambda sub, pod=pod: sub.pod_request(pod, obj))
        selector = r.strings(pod.get("nodeSelector"), obj, f"{where}.spec.nodeSelector")
        priorities.append(_moved(r, obj, where, lambda sub, pod=pod: core.pod_priority(
            sub, pod, None, {}, classes, default_priority, obj)))
        for key in ("priorityClassName", "schedulerName"):
            if pod.get(key) != first_pod.get(key):
                r.error(obj, f"{where}.spec.{key}", f"expected {_shown(first_pod.get(key))}, as in {first_where}: "
                        f"gangkit models one {key} per group, the same in both templates; got {_shown(pod.get(key))}")
                pod_sets = None
        if request is None:
            pod_sets = None
        if pod_sets is not None:
            pod_sets.append(PodSet(name, count, *request, selector))
    priority = priorities[0] if all(p is not None for p in priorities) else None
    return pod_sets, priority


def _notes(r: Reader, obj: str, annotations: dict, replicas: int, startup: str, restart: str) -> None:
    """What gangkit reports about a LeaderWorkerSet it reads but does not model in full."""
    if replicas == 0:
        r.notes.append(f"{obj} has spec.replicas 0: no groups, no pods")
    if startup == "LeaderReady":
        r.notes.append(f"{obj}: startupPolicy LeaderReady creates each group's workers once its leader is Ready; "
                       "gangkit creates them with the leader, each group a gang of minMember 1 with the minResources "
                       "of the whole group (the PodGroup of LWS's Volcano provider)")
    if restart in ("None", "Default"):
        r.notes.append(f"{obj}: spec.leaderWorkerTemplate.restartPolicy {restart} (recreate only the failed pod) is "
                       "read as the default: gangkit restarts an evicted group whole, as RecreateGroupOnPodRestart does "
                       "(gangkit/progress: independent recreates only the evicted pod)")
    for key in EXCLUSIVE:
        if key in annotations:
            r.notes.append(f"{obj}: metadata.annotations.{key} (one group per topology domain) is not modelled")


def _named_gang(tmeta: Mapping, pod: Mapping) -> str | None:
    """The field under a pod template that names a gang, if any."""
    labels = tmeta.get("labels") if isinstance(tmeta.get("labels"), Mapping) else {}
    ann = tmeta.get("annotations") if isinstance(tmeta.get("annotations"), Mapping) else {}
    for key, found in ((f"metadata.labels.{POD_GROUP_LABEL}", POD_GROUP_LABEL in labels),
                       (f"metadata.labels.{KUEUE_GROUP}", KUEUE_GROUP in labels),
                       (f"metadata.annotations.{core.GROUP_NAME}", core.GROUP_NAME in ann),
                       (f"metadata.annotations.{TASK_GROUP_NAME}", TASK_GROUPS in ann or TASK_GROUP_NAME in ann),
                       ("spec.schedulingGroup", pod.get("schedulingGroup") is not None),
                       ("spec.workloadRef", pod.get("workloadRef") is not None)):
        if found:
            return key
    return None


def _choice(r: Reader, obj: str, fieldname: str, value: Any, allowed: tuple[str, ...]) -> str | None:
    if value not in allowed:
        r.error(obj, fieldname, f"expected one of {', '.join(allowed)} (the CRD's enum), got {_shown(value)}")
        return None
    return value


def _moved(r: Reader, obj: str, where: str, read: Callable[[Reader], Any]) -> Any:
    """``read`` with a scratch reader; the batch/v1 readers' ``spec.template`` fields moved to the template at ``where``."""
    sub = Reader(r.label, base=r.base)
    value = read(sub)
    for p in sub.problems:
        field = p.field
        if p.obj == obj and (field == "spec.template" or field.startswith("spec.template.")):
            field = where + field[len("spec.template"):]
        r.problems.append(Problem(p.obj, field, p.message))
    r.unknown.extend(sub.unknown)
    r.notes.extend(sub.notes)
    return value


def _shown(value: Any) -> str:
    return "nothing" if value is None else short(value)


# --- writing back (gangkit export) ------------------------------------------------------------------------------

def _sets(jobs: list[Job]) -> tuple[dict[tuple, list[Job]], list[Problem]]:
    """The jobs of each LeaderWorkerSet, by (namespace, name): a group is named ``<name>-<i>``."""
    sets: dict[tuple, list[Job]] = {}
    problems = []
    for j in jobs:
        base, _, index = j.name.rpartition("-")
        if not base or not index.isdigit():
            problems.append(Problem(f"Job {j.key}", "name", "a LeaderWorkerSet's group is named <name>-<index>; "
                                    f"got {j.name!r}"))
            continue
        sets.setdefault((j.namespace, base), []).append(j)
    for (_, base), group in sets.items():
        first = group[0]
        names = sorted(j.name for j in group)
        alike = [dataclasses.replace(j, name=first.name) for j in group]
        if names != sorted(f"{base}-{i}" for i in range(len(group))) or any(a != alike[0] for a in alike):
            problems.append(Problem(f"Job {first.key}", "name", f"the groups of LeaderWorkerSet {base} are written as "
                                    f"one object: expected {base}-0 to {base}-{len(group) - 1}, alike but for their "
                                    f"names; got {', '.join(names)}"))
    return sets, problems


#: The placement layers whose gang a LeaderWorkerSet can say: none (kube-scheduler) and Volcano's (a PodGroup
#: per group, made by LWS's Volcano provider); its pod templates name no other layer's gang objects.
LWS_PLACEMENTS = ("pod", "gang")


def lws_problems(j: Job, stack: str = "pod") -> list[str]:
    """What keeps one group from being written, for ``stack``, as a LeaderWorkerSet that reads back the same."""
    out = []
    placement = next((p for p in stack.split("+") if p in PLACEMENTS), "pod")
    if placement not in LWS_PLACEMENTS:
        out.append(f"a LeaderWorkerSet group is a gang only through LWS's Volcano provider (its pod templates name "
                   f"no gang object); stack {stack!r} places with {placement}: write it for a pod or gang stack")
    names = [ps.name for ps in j.pod_sets]
    if names not in ([MAIN], [LEADER], [LEADER, WORKER]) or j.pod_sets[0].name == LEADER and j.pod_sets[0].count != 1:
        out.append(f"expected the pod sets of a LeaderWorkerSet group (main; or leader of 1 pod and worker), got "
                   f"{', '.join(f'{ps.name} x{ps.count}' for ps in j.pod_sets)}")
    leader_ready = j.min_member == 1 and j.min_resources is not None
    if j.min_member is not None and not leader_ready:
        out.append(f"a LeaderWorkerSet group is a gang of all its pods, or (LeaderReady) of minMember 1 with the "
                   f"group's minResources; got min_member {j.min_member}")
    if any(ps.min_count is not None or ps.min_member is not None or ps.one_per_node for ps in j.pod_sets) or j.elastic:
        out.append("a LeaderWorkerSet group has no partial admission, task minimum or one-per-node rule")
    if j.max_run_time is not None or j.controller != "batch":
        out.append("a LeaderWorkerSet has no activeDeadlineSeconds and makes its pods itself (controller 'batch')")
    return out


def lws_manifests(jobs: list[Job], kueue_managed: bool, scheduler: str | None) -> list[dict]:
    """The LeaderWorkerSets of ``jobs`` (all of framework ``leaderworkerset``; see the module's "Written back").

    ``kueue_managed``: every job carries Kueue's queue label; ``scheduler``: the pods'
    ``schedulerName`` (None: the default scheduler). Each job is checked first
    (:func:`lws_problems`); raises one :class:`~gangkit.model.errors.ScenarioError`
    when the jobs do not make whole LeaderWorkerSets.
    """
    from gangkit.model.errors import ScenarioError

    sets, problems = _sets(jobs)
    if problems:
        raise ScenarioError(problems)
    return [_lws_manifest(base, group, kueue_managed, scheduler) for (_, base), group in sets.items()]


def _lws_manifest(base: str, group: list[Job], kueue_managed: bool, scheduler: str | None) -> dict:
    j = group[0]
    templates = {}
    for ps in j.pod_sets:
        one = job_manifest(dataclasses.replace(j, pod_sets=[ps], min_member=None, min_resources=None,
                                                    volcano_queue="default"), None)
        pod = one["spec"]["template"]["spec"]
        pod.pop("restartPolicy", None)  # a LeaderWorkerSet's pods restart (the API default, Always)
        if scheduler is not None:
            pod = {"schedulerName": scheduler} | pod
        templates["leaderTemplate" if ps.name == LEADER else "workerTemplate"] = {"spec": pod}
    meta = one["metadata"]
    meta["name"] = base
    labels = {**j.labels, QUEUE_LABEL: j.queue} if kueue_managed else dict(meta.get("labels", {}))
    if labels:
        meta["labels"] = labels
    else:
        meta.pop("labels", None)
    annotations = meta["annotations"]
    if j.volcano_queue != "default":
        annotations[VOLCANO_QUEUE] = j.volcano_queue
    meta = {k: meta[k] for k in ("name", "namespace", "labels", "annotations") if k in meta}
    spec: dict[str, Any] = {"replicas": len(group)}
    if j.min_member == 1 and j.min_resources is not None:
        spec["startupPolicy"] = "LeaderReady"
    spec["leaderWorkerTemplate"] = {"size": j.pod_count, **templates}
    return {"apiVersion": LWS_API, "kind": "LeaderWorkerSet", "metadata": meta, "spec": spec}
