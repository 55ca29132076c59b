"""Which scheduler places a Job's pods, and whether that scheduler reads the Job's gang.

Picture a building with several porters, each answering to one name. A
parcel addressed to a porter who does not work here waits at the door for
ever; a parcel marked "deliver these twelve together" but addressed to a
porter who ignores such marks is delivered piece by piece. A pod's
``spec.schedulerName`` is that address (default: ``default-scheduler``).

**Which schedulers the files provide** (the check cannot see the cluster's
Deployments, so it decides from what the files imply):

- ``default-scheduler``: always (Kubernetes' own kube-scheduler; its 1.35
  GangScheduling plugin reads the Workload API);
- ``volcano``: when the files hold a Volcano object (Queue, Volcano Job,
  ``scheduling.volcano.sh`` PodGroup);
- ``scheduler-plugins-scheduler``: when they hold a ``scheduling.x-k8s.io``
  PodGroup (the name scheduler-plugins' "as a second scheduler" install
  gives it);
- ``yunikorn``: when a pod template carries YuniKorn's task-group
  annotations or names a YuniKorn application (``applicationId``,
  ``yunikorn.apache.org/app-id``);
- and each layer a ``Simulation``'s ``spec.stack`` names.

**Which names each gang layer answers to**: Volcano only ``volcano``;
Coscheduling ``scheduler-plugins-scheduler``, or ``default-scheduler`` when
installed as the only scheduler; YuniKorn ``yunikorn``, and
``default-scheduler`` pods too, since its admission controller rewrites
their schedulerName; the Kubernetes GangScheduling plugin
``default-scheduler``.

gangkit's own run ignores ``schedulerName``: the stack decides who places
every pod. These findings say where a real cluster would differ.
"""

from __future__ import annotations

from collections.abc import Mapping

from gangkit.consistency.findings import Finding
from gangkit.consistency.inventory import DEFAULT_SCHEDULER, Inventory, dig, display
from gangkit.placement.manifests import TASK_GROUPS

__all__ = ["ANSWERS_TO", "findings", "provided"]

SCHEDULER_PLUGINS = "scheduler-plugins-scheduler"
APP_ID = "yunikorn.apache.org/app-id"  # YuniKorn's application id (the older label: applicationId)
#: The schedulerNames each gang layer places pods for.
ANSWERS_TO = {
    "volcano": ("volcano",),
    "coscheduling": (SCHEDULER_PLUGINS, DEFAULT_SCHEDULER),
    "yunikorn": ("yunikorn", DEFAULT_SCHEDULER),
    "kube-gang": (DEFAULT_SCHEDULER,),
}
LAYER_WORDS = {"volcano": "Volcano", "coscheduling": "scheduler-plugins Coscheduling", "yunikorn": "YuniKorn",
               "kube-gang": "Kubernetes' GangScheduling plugin"}
STACK_LAYERS = {"gang": "volcano", "coscheduling": SCHEDULER_PLUGINS, "yunikorn": "yunikorn"}


def provided(inv: Inventory) -> dict[str, str]:
    """The schedulers the files imply, each with the reason it counts as provided."""
    out = {DEFAULT_SCHEDULER: "Kubernetes' default scheduler"}
    volcano = next((o for o in inv.objects if o.role in ("Queue", "VolcanoJob", "PodGroup")), None)
    if volcano is not None:
        out["volcano"] = f"the files hold {volcano.label}"
    pg = next(iter(inv.of_role("CoschedulingPodGroup")), None)
    if pg is not None:
        out[SCHEDULER_PLUGINS] = f"the files hold {pg.label} (scheduling.x-k8s.io)"
    yk = next((e for e in inv.jobs if _yunikorn_marks(e.obj.doc)), None)
    if yk is not None:
        out["yunikorn"] = f"{yk.obj.label} carries YuniKorn's application labels or task groups"
    if inv.has_simulation:
        for layer in inv.settings.stack.split("+"):
            if layer in STACK_LAYERS:
                out.setdefault(STACK_LAYERS[layer], f"the Simulation's stack {inv.settings.stack}")
    return out


def _yunikorn_marks(doc) -> bool:
    """A pod template with YuniKorn's own marks: task groups, or the labels naming a YuniKorn application."""
    meta = dig(doc, "spec", "template", "metadata")
    ann = meta.get("annotations") if isinstance(meta, Mapping) else None
    labels = meta.get("labels") if isinstance(meta, Mapping) else None
    ann = ann if isinstance(ann, Mapping) else {}
    labels = labels if isinstance(labels, Mapping) else {}
    return TASK_GROUPS in ann or APP_ID in ann or any(k in labels for k in (APP_ID, "applicationId"))


def findings(inv: Inventory) -> list[Finding]:
    schedulers = provided(inv)
    out = []
    for e in inv.jobs:
        where = {"VolcanoJob": "spec.schedulerName", "TrainJob": "spec.runtimeRef",
                 "LeaderWorkerSet": "spec.leaderWorkerTemplate.workerTemplate.spec.schedulerName",
                 "CronJob": "spec.jobTemplate.spec.template.spec.schedulerName"}.get(e.obj.role,
                                                                                     "spec.template.spec.schedulerName")
        if e.scheduler not in schedulers:
            out.append(Finding(
                "scheduler-not-provided", (e.name,),
                f"{e.name}'s pods go to scheduler {e.scheduler!r} ({where}), which no layer in the files provides "
                f"(they provide {', '.join(sorted(schedulers))}): without it the pods stay Pending; gangkit's run "
                "places them with its stack anyway.",
                f"add the {e.scheduler} layer's objects to the files, or set {where} to one of {', '.join(sorted(schedulers))}",
                ((e.obj.label, where),), {"scheduler": e.scheduler}))
            continue
        g = e.gang
        if g is None or g.missing or e.scheduler in ANSWERS_TO[g.layer]:
            continue
        objects = (e.name,) + ((display(g.target),) if g.target is not None and g.target is not e.obj else ())
        out.append(Finding(
            "gang-scheduler-mismatch", tuple(dict.fromkeys(objects)),
            f"{e.name} names a gang for {LAYER_WORDS[g.layer]} ({g.field}), but its pods go to {e.scheduler!r} "
            f"({where}), which ignores it: the pods are placed one by one, without the gang.",
            f"set {where} to {ANSWERS_TO[g.layer][0]}",
            ((e.obj.label, where), (e.obj.label, g.field)), {"scheduler": e.scheduler, "gang_layer": g.layer}))
    return out
