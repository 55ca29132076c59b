"""Which schedulers a pod may name: the ones gangkit models, and a clear refusal of every other.

A pod's ``spec.schedulerName`` is the only scheduler that will ever place it (Kubernetes
``PodSpec.schedulerName``; default ``default-scheduler``). On a cluster where no scheduler of that
name runs, the pod stays Pending for ever: nothing else picks it up. gangkit models four names:

- ``default-scheduler``: kube-scheduler (and its 1.35 GangScheduling plugin, ``--stack kube-gang``);
- ``volcano``: Volcano's scheduler;
- ``scheduler-plugins-scheduler``: scheduler-plugins' Coscheduling run as a second scheduler, the
  name its Helm chart gives it;
- ``yunikorn``: Apache YuniKorn.

and every profile a KubeSchedulerConfiguration of the input names (``profiles[].schedulerName``),
which kube-scheduler serves. ``gangkit run`` refuses a pod template that names any other scheduler
(KAI Scheduler's ``kai-scheduler``, a custom one), saying so, rather than place its pods with the
stack's scheduler as if nothing had been said. ``gangkit check`` reports the same thing as a
finding (:mod:`gangkit.consistency.schedulers`), and ``gangkit admit`` decides Kueue's admission,
which does not depend on the scheduler.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from gangkit.model.reading import ManifestObject, Reader

__all__ = ["MODELLED", "check_scheduler_names", "scheduler_names"]

#: The schedulerNames gangkit models, and what each is.
MODELLED = {
    "default-scheduler": "kube-scheduler",
    "volcano": "Volcano",
    "scheduler-plugins-scheduler": "scheduler-plugins' Coscheduling as a second scheduler",
    "yunikorn": "Apache YuniKorn",
}


def scheduler_names(doc, path: str = "") -> Iterator[tuple[str, object]]:
    """Every ``schedulerName`` of a pod spec in ``doc`` (a mapping with ``containers``), and a Volcano
    Job's own ``spec.schedulerName``: ``(field path, value)`` pairs."""
    if isinstance(doc, Mapping):
        if "schedulerName" in doc and ("containers" in doc or path == "spec" and "tasks" in doc):
            yield (f"{path}.schedulerName" if path else "schedulerName"), doc["schedulerName"]
        for key, value in doc.items():
            if isinstance(value, (Mapping, list)) and key != "status":
                yield from scheduler_names(value, f"{path}.{key}" if path else str(key))
    elif isinstance(doc, list):
        for i, value in enumerate(doc):
            yield from scheduler_names(value, f"{path}[{i}]")


def _profiles(configurations: list[ManifestObject]) -> set[str]:
    names = set()
    for o in configurations:
        for profile in o.doc.get("profiles") or [] if isinstance(o.doc.get("profiles"), list) else []:
            if isinstance(profile, Mapping) and isinstance(profile.get("schedulerName"), str):
                names.add(profile["schedulerName"])
    return names


def check_scheduler_names(r: Reader, objects: list[ManifestObject]) -> None:
    """One error per pod template of ``objects`` whose schedulerName gangkit does not model."""
    known = set(MODELLED) | _profiles([o for o in objects if o.kind == "KubeSchedulerConfiguration"])
    for o in objects:
        if o.kind == "KubeSchedulerConfiguration":
            continue
        for field, name in scheduler_names(o.doc):
            if name is None or name in known:
                continue
            if not isinstance(name, str) or not name:
                r.error(o.label, field, f"expected a scheduler's name (a string), got {name!r}")
                continue
            r.error(o.label, field, f"names the scheduler {name!r}, which gangkit does not model; a cluster without "
                    "it leaves these pods Pending for ever, and gangkit does not place them with another scheduler "
                    f"instead. Expected one of {', '.join(sorted(known))}, or no schedulerName (default-scheduler)")
