"""A snapshot's state given to the jobs read: who is admitted, which pods are bound where, since when.

:func:`gangkit.manifests.snapshot.split` reads a live cluster's dump into the
objects as written and the state they were in (a :class:`~gangkit.manifests.snapshot.Taken`);
once the loader has read the jobs from those objects, :func:`apply` gives each
job its :class:`~gangkit.model.snapshot.JobSnapshot`:

- its live pods, found by owner (a Job's, a JobSet's child Jobs', a bare pod
  group's) and matched to its pod sets by their requests (:func:`match_pods`);
  each bound pod keeps its node and the seconds it has run;
- its Kueue admission, from the Workload's ``status.admission`` (flavors and
  counts per pod set);
- its place in the queues: jobs in the order of their creation times, pods in
  kube-scheduler's queue in the order they were created.

A pod bound to a node the input lacks, to one without room left for it (the
pods bound before it, in the order the run binds them, fill its
``allocatable``), or to one whose labels its ``nodeSelector`` does not match,
is an error naming the Pod (:func:`check_bindings`, which ``gangkit check``
uses too, without giving the jobs their state: one reader, one verdict).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from datetime import datetime, timezone

from gangkit.manifests.snapshot import LivePod, Taken
from gangkit.model.reading import Reader, new_object
from gangkit.model.snapshot import JobSnapshot, KueueAdmission

__all__ = ["apply", "check_bindings", "match_pods"]


def apply(r: Reader, taken: Taken, jobs: list, kueue_setup, nodes: list) -> list:
    """Give each job the state the snapshot shows (a :class:`JobSnapshot` when it was admitted or has pods
    bound), and put the jobs in the order of their creation times. Returns the jobs, in that order.

    ``nodes``: the input's :class:`~gangkit.model.nodes.Node` objects. A pod bound to a node that is not
    among them, or to one without room for it, is an error (:func:`check_bindings`)."""
    slots_of: dict[tuple, list] = {}
    sets_of: dict[tuple, list] = {}
    for j, admission, live, slots, sets in _placed(r, taken, jobs):
        key = (j.namespace or "default", j.name)
        sets_of[key] = sets
        nodes_of = tuple(p.node if p is not None else None for p in slots)
        elapsed = tuple(max(0.0, (taken.at - p.started).total_seconds()) if p is not None and p.started else 0.0
                        for p in slots)
        left = len(live) - sum(1 for p in slots if p is not None)
        if left:
            r.notes.append(f"Job {j.key}: {left} of its pods in the snapshot are beyond its pod sets' counts: left out")
        j.snapshot = JobSnapshot(nodes_of, elapsed, admission)
        slots_of[key] = slots
    order = {(j.namespace or "default", j.name): i for i, j in enumerate(jobs)}
    origin = taken.at
    jobs = sorted(jobs, key=lambda j: (-(origin - _created(taken, j)).total_seconds(), order[(j.namespace or "default", j.name)]))
    _check_room(r, jobs, slots_of, sets_of, nodes)
    _rank_pods(jobs, slots_of, origin)
    return jobs


def check_bindings(r: Reader, taken: Taken, jobs: list, nodes: list) -> None:
    """The problems of the snapshot's bindings, as :func:`apply` finds them, without giving the jobs their state
    (``gangkit check``, which reads the jobs as their authors wrote them, finds what ``gangkit run`` refuses).

    A pod bound (``spec.nodeName``) to a node that is not in the input, or to one that has no room left for it
    (the requests of the pods bound to it before it, in the order the run binds them, fill the node's
    ``allocatable``), or whose labels do not match the pod's ``nodeSelector``, is an error naming the Pod.
    """
    slots_of, sets_of = {}, {}
    for j, _, _, slots, sets in _placed(r, taken, jobs):
        slots_of[(j.namespace or "default", j.name)], sets_of[(j.namespace or "default", j.name)] = slots, sets
    order = {(j.namespace or "default", j.name): i for i, j in enumerate(jobs)}
    origin = taken.at
    jobs = sorted(jobs, key=lambda j: (-(origin - _created(taken, j)).total_seconds(), order[(j.namespace or "default", j.name)]))
    _check_room(r, jobs, slots_of, sets_of, nodes)


def _placed(r: Reader, taken: Taken, jobs: list):
    """Each job with a state in the snapshot: (job, its Kueue admission, its live pods, the pods in its slots,
    the pod set of each slot)."""
    pods_of = _pods_by_job(taken, jobs)
    for j in jobs:
        key = (j.namespace or "default", j.name)
        admission = _admission(r, taken.admissions.get(_owner_key(taken, j)), j)
        live = pods_of.get(key, [])
        if not live and admission is None:
            continue
        counts = [ps.count for ps in j.pod_sets] if admission is None else list(admission.counts)
        sets = [ps for ps, n in zip(j.pod_sets, counts) for _ in range(n)]
        yield j, admission, live, match_pods(j.pod_sets, counts, live), sets


def _check_room(r: Reader, jobs: list, slots_of: dict, sets_of: dict, nodes: list) -> None:
    """Every bound pod on a node of the input, with room for it and labels its node selector asks for.

    The engine binds the snapshot's pods job by job in this order (:func:`gangkit.engine.resume.resume_job`), with
    each pod's pod-set request; the first pod that does not fit on its node is named (one error a node).
    """
    from gangkit.model.resources import Room

    by_name = {n.name: n for n in nodes}
    room = {n.name: Room(n.gpus, n.cpu, n.memory) for n in nodes}
    asked: dict[str, list] = {}  # node -> [GPUs, cores, bytes] of the pods bound to it
    full: set[str] = set()
    for j in jobs:
        key = (j.namespace or "default", j.name)
        for p, ps in zip(slots_of.get(key, ()), sets_of.get(key, ())):
            if p is None or p.node is None:
                continue
            label = f"Pod {j.namespace or 'default'}/{p.name}"
            node = by_name.get(p.node)
            if node is None:
                r.error(label, "spec.nodeName", f"names node {p.node!r}, which is not in the input (add the Nodes to "
                                                "the dump)")
                continue
            total = asked.setdefault(p.node, [0, 0.0, 0])
            total[0], total[1], total[2] = total[0] + ps.gpus, total[1] + ps.cpu, total[2] + ps.memory
            if not room[p.node].fits(ps.gpus, ps.cpu, ps.memory):
                if p.node not in full:
                    full.add(p.node)
                    r.error(label, "spec.nodeName", f"bound to node {p.node}, which has no room left for it: the "
                            "dump's pods bound to that node ask for "
                            f"{_amount(total[0], None if node.cpu is None else total[1], None if node.memory is None else total[2])} "
                            "up to this one, "
                            f"and the node has {_amount(node.gpus, node.cpu, node.memory)} (expected at most what "
                            "the node has)")
                continue
            room[p.node].take(ps.gpus, ps.cpu, ps.memory)
            if not node.matches(ps.node_selector):
                r.error(label, "spec.nodeName", f"bound to node {p.node}, whose labels do not match the pod's node "
                                                f"selector {dict(ps.node_selector)}")


def _amount(gpus, cpu, memory) -> str:
    """``16 GPUs, 16 cores, 137438953472 bytes`` (an unmodelled resource left out)."""
    parts = [f"{gpus} GPUs"]
    if cpu is not None:
        parts.append(f"{cpu:g} cores")
    if memory is not None:
        parts.append(f"{memory} bytes")
    return ", ".join(parts)


def _rank_pods(jobs: list, slots_of: dict, at: datetime) -> None:
    """Each live pod's place in creation order (``JobSnapshot.order``): by creationTimestamp, then pod index, then
    the job's place (pods of one second interleave, as gangkit's job controllers create them)."""
    keyed = []
    for jpos, j in enumerate(jobs):
        for i, p in enumerate(slots_of.get((j.namespace or "default", j.name), ())):
            if p is not None:
                keyed.append(((p.created or at), i, jpos, j, i))
    keyed.sort(key=lambda k: k[:3])
    ranks: dict[int, dict[int, int]] = {}
    for rank, (_, _, _, j, i) in enumerate(keyed):
        ranks.setdefault(id(j), {})[i] = rank
    for j in jobs:
        if j.snapshot is not None:
            mine = ranks.get(id(j), {})
            j.snapshot = replace(j.snapshot, order=tuple(mine.get(i) for i in range(len(j.snapshot.nodes))))


def _created(taken: Taken, j) -> datetime:
    return taken.created.get(_owner_key(taken, j), taken.at)


def _owner_key(taken: Taken, j) -> tuple:
    """The object a job was read from: itself, or the Deployment or ReplicaSet whose replica it is, or the
    LeaderWorkerSet whose group it is."""
    ns = j.namespace or "default"
    if (ns, j.name) in taken.created:
        return (ns, j.name)
    base, _, suffix = j.name.rpartition("-")
    if suffix.isdigit() and ((ns, base) in taken.replicas or (ns, base) in taken.lws):
        return (ns, base)
    return (ns, j.name)


def _pods_by_job(taken: Taken, jobs: list) -> dict[tuple, list[LivePod]]:
    """Each job's live pods: its controller's, a replica's share of its Deployment's, or its bare Pods."""
    names = {(j.namespace or "default", j.name) for j in jobs}
    out: dict[tuple, list[LivePod]] = {}
    for key, pods in taken.pods.items():
        if key in names:
            out[key] = list(pods)
        elif key in taken.replicas:  # replicas read as jobs <name>-0, <name>-1...: pods in their creation order
            ordered = sorted(pods, key=lambda p: (p.created or taken.at, p.name))
            for i, p in enumerate(ordered):
                out.setdefault((key[0], f"{key[1]}-{i}"), []).append(p)
    for (ns, name), pod in taken.bare.items():
        if (ns, name) in names:
            out.setdefault((ns, name), []).append(pod)
            continue
        group = _bare_group(pod)
        if group is not None and (ns, group) in names:
            out.setdefault((ns, group), []).append(pod)
    return out


def _bare_group(pod: LivePod) -> str | None:
    """The gang a bare Pod names (its job is named after it; see :func:`gangkit.manifests.apps.group_key`)."""
    from gangkit.manifests.apps import group_key

    key = group_key(new_object({"kind": "Pod", "metadata": {"name": pod.name, "labels": dict(pod.labels),
                                                            "annotations": {}}, "spec": dict(pod.spec)}, ""))
    return None if key[0] == "pod" else key[2]


def match_pods(pod_sets: list, counts: list[int], live: list[LivePod]) -> list[LivePod | None]:
    """Each pod slot of the job (pod sets in order, ``counts`` of each) filled with a live pod, or None.

    A pod goes to the first free slot of a pod set asking for what it asks
    for (GPUs, cores, bytes), else to the first free slot: the pods of a
    JobSet's or a PyTorchJob's roles differ in their requests. Bound pods are
    placed first, so that a job with more live pods than slots (a Job whose
    failed pods were replaced) keeps those holding nodes.
    """
    slots: list[LivePod | None] = []
    shapes = []
    for ps, n in zip(pod_sets, counts):
        slots.extend([None] * n)
        shapes.extend([(ps.gpus, ps.cpu, ps.memory)] * n)
    for p in sorted(live, key=lambda p: (p.node is None, p.created or datetime.max.replace(tzinfo=timezone.utc), p.name)):
        want = _request(p)
        free = [i for i, s in enumerate(slots) if s is None]
        if not free:
            break
        same = next((i for i in free if shapes[i] == want), free[0])
        slots[same] = p
    return slots


def _request(p: LivePod) -> tuple:
    sub = Reader("snapshot")
    got = sub.pod_request(dict(p.spec), f"Pod {p.name}")
    return got if got is not None else (None, None, None)


def _admission(r: Reader, found: tuple[str, Mapping] | None, j) -> KueueAdmission | None:
    """A Workload's ``status.admission`` for the job's pod sets (Kueue lists them in the job's order)."""
    if found is None:
        return None
    label, adm = found
    cq = adm.get("clusterQueue")
    psas = adm.get("podSetAssignments")
    if not isinstance(cq, str) or not isinstance(psas, list) or len(psas) != len(j.pod_sets):
        r.error(label, "status.admission", f"expected a clusterQueue and one podSetAssignment for each of the "
                f"{len(j.pod_sets)} pod sets of Job {j.key}, got {len(psas) if isinstance(psas, list) else 'none'}")
        return None
    flavors, counts = [], []
    for i, (psa, ps) in enumerate(zip(psas, j.pod_sets)):
        psa = psa if isinstance(psa, Mapping) else {}
        f = psa.get("flavors") if isinstance(psa.get("flavors"), Mapping) else {}
        flavors.append({str(k): str(v) for k, v in f.items()})
        count = psa.get("count", ps.count)
        if not isinstance(count, int) or isinstance(count, bool) or not 0 < count <= ps.count:
            r.error(label, f"status.admission.podSetAssignments[{i}].count",
                    f"expected a whole number from 1 to {ps.count}, got {count!r}")
            return None
        counts.append(count)
    return KueueAdmission(cq, tuple(flavors), tuple(counts))
