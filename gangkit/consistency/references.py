"""Names that must resolve: every object that names another must find it in the files.

Picture the signposts of a town: each one points to a street, and a
signpost to a street that was never built sends everybody nowhere. A stack
of manifests is full of such signposts: a Job's ``kueue.x-k8s.io/queue-name``
label points to a LocalQueue, a LocalQueue to a ClusterQueue, a
ClusterQueue to ResourceFlavors and AdmissionChecks, a pod template to a
PriorityClass and to its PodGroup, a PodGroup to a Volcano Queue. Each
dangling one is a finding (codes and rules: :data:`gangkit.consistency.findings.CATALOGUE`);
so is the other way round, a PodGroup that no pod points to.

The check judges the files as the whole stack: a name counts as present
only when its object is in the files, except what every cluster has (the
``system-*`` PriorityClasses, Volcano's ``default`` queue).
"""

from __future__ import annotations

from collections.abc import Mapping

from gangkit.consistency.findings import Finding
from gangkit.consistency.inventory import Inventory, dig, display, labels_of
from gangkit.kueue.setup_manifests import V1BETA1
from gangkit.manifests import training
from gangkit.model.reading import QUEUE_LABEL
from gangkit.supply.provisioning_request import CONSUME_ANNOTATION

__all__ = ["findings"]


def findings(inv: Inventory) -> list[Finding]:
    return [*_local_queues(inv), *_cluster_queues(inv), *_flavors(inv), *_admission_checks(inv),
            *_namespace_selectors(inv), *_named(inv), *_gang_objects(inv), *_unused_gang_objects(inv),
            *_consumed_requests(inv)]


def _close(names) -> str:
    names = sorted(set(names))
    return ", ".join(names) if names else "none"


def _local_queues(inv: Inventory) -> list[Finding]:
    """A Job's queue-name label (a Workload's spec.queueName) must name a LocalQueue of its namespace."""
    known = {(q.namespace, q.name) for q in inv.kueue.local_queues}
    wanted = [(e.obj, f"metadata.labels.{QUEUE_LABEL}", labels_of(e.obj).get(QUEUE_LABEL)) for e in inv.jobs
              if e.obj.role in ("Job", "JobSet", "TrainJob", *training.REPLICA_KINDS)]
    wanted += [(o, "spec.queueName", lw.workload.queue_name) for o, lw in inv.kueue_workloads
               if lw.admission is None and not lw.out_of_queue]
    out = []
    for o, where, queue in wanted:
        ns = o.namespace or "default"
        if not queue or (ns, queue) in known:
            continue
        here = [name for n, name in known if n == ns]
        out.append(Finding(
            "kueue-local-queue-missing", (display(o),),
            f"{display(o)} names LocalQueue {queue!r} in namespace {ns!r} ({where}), which is not in the files: "
            f"Kueue keeps its workload pending (\"LocalQueue {queue} doesn't exist\").",
            f"create LocalQueue {ns}/{queue}, or name one of the namespace's LocalQueues ({_close(here)})",
            ((o.label, where),), {"namespace": ns, "local_queue": queue}))
    return out


def _cluster_queues(inv: Inventory) -> list[Finding]:
    names = {o.name for o in inv.of_role("ClusterQueue")}
    out = []
    for o in inv.of_role("LocalQueue"):
        cq = dig(o.doc, "spec", "clusterQueue")
        if isinstance(cq, str) and cq and cq not in names:
            out.append(Finding(
                "kueue-cluster-queue-missing", (display(o),),
                f"{display(o)} sends its workloads to ClusterQueue {cq!r} (spec.clusterQueue), which is not in the "
                f"files: they stay pending (\"ClusterQueue {cq} doesn't exist\").",
                f"create ClusterQueue {cq}, or point spec.clusterQueue at one of {_close(names)}",
                ((o.label, "spec.clusterQueue"),), {"cluster_queue": cq}))
    return out


def _flavors(inv: Inventory) -> list[Finding]:
    names = {o.name for o in inv.of_role("ResourceFlavor")}
    out = []
    for o in inv.of_role("ClusterQueue"):
        groups = dig(o.doc, "spec", "resourceGroups")
        for i, rg in enumerate(groups if isinstance(groups, list) else []):
            flavors = rg.get("flavors") if isinstance(rg, Mapping) else None
            for j, fq in enumerate(flavors if isinstance(flavors, list) else []):
                name = fq.get("name") if isinstance(fq, Mapping) else None
                if isinstance(name, str) and name and name not in names:
                    where = f"spec.resourceGroups[{i}].flavors[{j}].name"
                    out.append(Finding(
                        "kueue-flavor-missing", (display(o),),
                        f"{display(o)} names ResourceFlavor {name!r} ({where}), which is not in the files: the "
                        "ClusterQueue stays inactive (FlavorNotFound) and admits nothing.",
                        f"create ResourceFlavor {name}, or name one of {_close(names)}",
                        ((o.label, where),), {"flavor": name}, explains={(o.label, where)}))
    return out


def _admission_checks(inv: Inventory) -> list[Finding]:
    names = {o.name for o in inv.of_role("AdmissionCheck")}
    out = []
    for o in inv.of_role("ClusterQueue"):
        spec = o.doc.get("spec") if isinstance(o.doc.get("spec"), Mapping) else {}
        named = []
        entries = dig(spec, "admissionChecksStrategy", "admissionChecks")
        for i, entry in enumerate(entries if isinstance(entries, list) else []):
            named.append((f"spec.admissionChecksStrategy.admissionChecks[{i}].name",
                          entry.get("name") if isinstance(entry, Mapping) else None))
        if o.doc.get("apiVersion") == V1BETA1:
            old = spec.get("admissionChecks")
            named += [(f"spec.admissionChecks[{i}]", n) for i, n in enumerate(old if isinstance(old, list) else [])]
        for where, name in named:
            if isinstance(name, str) and name and name not in names:
                out.append(Finding(
                    "kueue-admission-check-missing", (display(o),),
                    f"{display(o)} names AdmissionCheck {name!r} ({where}), which is not in the files: the ClusterQueue "
                    "stays inactive (AdmissionCheckNotFound) and admits nothing.",
                    f"create AdmissionCheck {name}, or remove it from the ClusterQueue",
                    ((o.label, where),), {"admission_check": name}, explains={(o.label, where)}))
    return out


def _namespace_selectors(inv: Inventory) -> list[Finding]:
    out = []
    for o in inv.of_role("ClusterQueue"):
        spec = o.doc.get("spec") if isinstance(o.doc.get("spec"), Mapping) else {}
        if spec.get("namespaceSelector") is None:
            out.append(Finding(
                "kueue-cluster-queue-selects-no-namespace", (display(o),),
                f"{display(o)} has no spec.namespaceSelector: a null selector matches no namespace, so Kueue admits "
                "no workload through it (gangkit's run admits from every namespace).",
                "add namespaceSelector: {} (every namespace) or a selector for the teams' namespaces",
                ((o.label, "spec.namespaceSelector"),)))
    return out


def _named(inv: Inventory) -> list[Finding]:
    """PriorityClasses, WorkloadPriorityClasses and Volcano Queues named by Jobs and PodGroups."""
    out = []
    what = {
        "PriorityClass": ("priority-class-missing", "the Priority admission plugin refuses its pods "
                          "(\"no PriorityClass with name {name} was found\")", "priority_class"),
        "WorkloadPriorityClass": ("kueue-workload-priority-class-missing", "Kueue cannot create its Workload, so it "
                                  "never runs", "workload_priority_class"),
        "Queue": ("volcano-queue-missing", "Volcano refuses it (its queue does not exist), so it is never enqueued",
                  "queue"),
    }
    existing = {kind: sorted(o.name for o in inv.objects if o.role == kind) for kind in what}
    for ref in inv.name_refs:
        if ref.target is not None:
            continue
        code, why, key = what[ref.kind]
        kind = ref.kind
        known = existing[kind] + (["default"] if kind == "Queue" else [])
        out.append(Finding(
            code, (display(ref.owner),),
            f"{display(ref.owner)} names {kind} {ref.name!r} ({ref.field}), which is not in the files: "
            + why.format(name=ref.name) + ".",
            f"create {kind} {ref.name}, or name one of {_close(known)}",
            ((ref.owner.label, ref.field),), {key: ref.name}, explains={(ref.owner.label, ref.field)}))
    return out


def _gang_objects(inv: Inventory) -> list[Finding]:
    out = []
    for e in inv.jobs:
        g = e.gang
        if g is None or not g.missing:
            continue
        names = {"volcano": "Volcano never schedules the pods of a missing PodGroup",
                 "coscheduling": "Coscheduling's PreFilter refuses pods whose PodGroup does not exist",
                 "kube-gang": "the GangScheduling plugin cannot find the pods' gang",
                 "yunikorn": "YuniKorn refuses a task group name that is not among the task groups"}
        objects = (e.name,) + ((display(g.target),) if g.target is not None else ())
        out.append(Finding(
            "gang-object-missing", objects,
            f"{e.name} names {g.missing} ({g.field}), which is not in the files: {names[g.layer]}.",
            "create the gang object, or correct the name the pod template gives",
            ((e.obj.label, g.field),), {"name": g.name}, explains={(e.obj.label, g.field)}))
    return out


def _unused_gang_objects(inv: Inventory) -> list[Finding]:
    used = {id(e.gang.target) for e in inv.jobs if e.gang is not None and e.gang.target is not None}
    how = {"PodGroup": "the annotation scheduling.k8s.io/group-name: <name> on a pod template",
           "CoschedulingPodGroup": "the label scheduling.x-k8s.io/pod-group: <name> on a pod template",
           "KubeWorkload": "spec.workloadRef in a pod template",
           "KubePodGroup": "spec.schedulingGroup.podGroupName: <name> in a pod template"}
    out = []
    for role, joined_by in how.items():
        for o in inv.of_role(role):
            if id(o) not in used:
                out.append(Finding(
                    "gang-object-unused", (display(o),),
                    f"{display(o)} gangs no pod: no Job in the files names it with {joined_by}.",
                    f"name it from the Job's pod template ({joined_by.replace('<name>', o.name)}), or remove it",
                    ((o.label, "metadata.name"),)))
    return out


def _consumed_requests(inv: Inventory) -> list[Finding]:
    """Pods that consume a ProvisioningRequest the files do not have: cluster-autoscaler never scales up for them."""
    have = {(o.namespace or "default", o.name) for o in inv.of_role("ProvisioningRequest")}
    out = []
    for e in inv.jobs:
        name = e.job.consume_provisioning_request if e.job is not None else None
        if name is None or (e.job.namespace or "default", name) in have:
            continue
        out.append(Finding(
            "provisioning-request-missing", (e.name,),
            f"{e.name}'s pods consume ProvisioningRequest {name!r} ({CONSUME_ANNOTATION}), which is not in the files: "
            "cluster-autoscaler never scales up for them, so they run only on room that exists.",
            "apply the ProvisioningRequest (with the PodTemplates it names), or correct the name in the pod "
            "template's annotation",
            ((e.obj.label, f"spec.template.metadata.annotations.{CONSUME_ANNOTATION}"),), {"name": name}))
    return out
