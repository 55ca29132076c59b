"""Kubeflow Trainer v2: a TrainJob names a (Cluster)TrainingRuntime, whose JobSet template it fills in.

See :func:`read_trainjob` for the rules, as Trainer's runtime framework (``pkg/runtime``) applies them.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from gangkit.manifests.training.jobset import JOBSET_API, read_jobset, shown, within
from gangkit.manifests.training.jobset import KNOWN_FIELDS as JOBSET_FIELDS
from gangkit.model.jobs import Job
from gangkit.model.reading import (
    ANY,
    META,
    ManifestObject,
    Reader,
    spec_of,
)
from gangkit.placement.manifests import GangObjects

__all__ = ["KNOWN_FIELDS", "collect_runtimes", "read_trainjob"]

_NAMES = dict.fromkeys
KNOWN_FIELDS: dict[str, dict] = {}
TRAINER_API = "trainer.kubeflow.org/v1alpha1"
ANCESTOR = "trainer.kubeflow.org/trainjob-ancestor-step"  # the label that marks a runtime's steps
VOLCANO_QUEUE = "scheduling.volcano.sh/queue-name"  # the annotation Trainer's volcano plugin reads the queue from
DEFAULT_TIMEOUT = 60  # podGroupPolicy.coscheduling.scheduleTimeoutSeconds default
STAND_INS = {"torch-distributed"}  # default ClusterTrainingRuntimes Trainer installs, which gangkit can stand in for
KNOWN_FIELDS["TrainJob"] = {
    "apiVersion": ANY, "kind": ANY, "metadata": META, "status": ANY,
    "spec": {"runtimeRef": _NAMES(["apiGroup", "kind", "name"], ANY), "suspend": ANY, "managedBy": ANY,
             "activeDeadlineSeconds": ANY,
             "trainer": _NAMES(["image", "command", "args", "env", "numNodes", "numProcPerNode", "resourcesPerNode"], ANY)},
}
for _kind in ("TrainingRuntime", "ClusterTrainingRuntime"):
    KNOWN_FIELDS[_kind] = {
        "apiVersion": ANY, "kind": ANY, "metadata": META,
        "spec": {"mlPolicy": _NAMES(["numNodes", "torch", "mpi", "jax", "xgboost", "flux"], ANY),
                 "podGroupPolicy": {"coscheduling": {"scheduleTimeoutSeconds": ANY}, "volcano": {}},
                 "template": {"metadata": META, "spec": JOBSET_FIELDS["JobSet"]["spec"]}},
    }


def read_trainjob(r: Reader, o: ManifestObject, runtimes: dict, classes: dict, default_priority: int, groups: dict,
                  used_groups: dict, gangs: GangObjects) -> Job | None:
    """A Kubeflow Trainer TrainJob as the JobSet its runtime makes (Trainer v2, ``pkg/runtime``).

    ``runtimes`` are the input's TrainingRuntimes and ClusterTrainingRuntimes by
    (kind, namespace or None, name). The rules, as Trainer's runtime framework applies them:

    - the runtime's ``template`` is the JobSet; its step labelled
      ``trainer.kubeflow.org/trainjob-ancestor-step: trainer`` runs ``numNodes``
      pods (the TrainJob's ``trainer.numNodes``, else the runtime's
      ``mlPolicy.numNodes``, else 1; Trainer sets that step's parallelism and
      completions), and the TrainJob's ``trainer.resourcesPerNode`` replaces
      the resources of its container named ``node``;
    - the dataset and model initializer steps run before the trainer
      (``dependsOn``); gangkit leaves them out (reported): it starts the
      trainer step at submission;
    - ``podGroupPolicy.volcano``: Trainer makes a Volcano PodGroup of every pod
      (``minMember`` = all), in the queue of the annotation
      ``scheduling.volcano.sh/queue-name`` (TrainJob, else runtime template);
      ``podGroupPolicy.coscheduling``: a scheduler-plugins PodGroup of every pod
      with ``scheduleTimeoutSeconds`` (default 60 s);
    - a TrainJob naming ``torch-distributed``, Trainer's default runtime, that
      the input does not hold runs on a stand-in of it (one step ``node``, one
      node; reported).
    """
    obj = o.label
    spec = r.mapping(o.doc.get("spec"), obj, "spec")
    runtime = _runtime_of(r, o, spec, runtimes)
    if runtime is None:
        return None
    rspec = spec_of(runtime)
    rlabel = runtime.label
    template = r.mapping(rspec.get("template"), rlabel, "spec.template")
    jobset_spec = copy.deepcopy(r.mapping(template.get("spec"), rlabel, "spec.template.spec"))
    trainer = r.mapping(spec.get("trainer"), obj, "spec.trainer")
    ml_policy = r.mapping(rspec.get("mlPolicy"), rlabel, "spec.mlPolicy")
    nodes = trainer.get("numNodes", ml_policy.get("numNodes", 1))
    where_nodes = "spec.trainer.numNodes" if "numNodes" in trainer else f"{rlabel} spec.mlPolicy.numNodes"
    nodes = r.whole(nodes, obj, where_nodes, 0)
    kept = _trainer_steps(r, obj, rlabel, jobset_spec.get("replicatedJobs"), nodes, trainer.get("resourcesPerNode"))
    jobset_spec["replicatedJobs"] = kept
    policy = r.mapping(rspec.get("podGroupPolicy"), rlabel, "spec.podGroupPolicy")
    scheduler = "volcano" if "volcano" in policy else "scheduler-plugins-scheduler" if "coscheduling" in policy else None
    for entry in kept:
        pod = _dig_map(entry, "template", "spec", "template", "spec")
        if scheduler and isinstance(entry.get("template"), Mapping) and pod is not None:
            entry["template"]["spec"]["template"]["spec"] = {**pod, "schedulerName": scheduler}
    meta = o.doc.get("metadata") if isinstance(o.doc.get("metadata"), Mapping) else {}
    view = ManifestObject({"apiVersion": JOBSET_API, "kind": "JobSet", "metadata": dict(meta), "spec": jobset_spec},
                          o.kind, o.where, o.name, o.namespace, o.role, o.namespaced)
    job = within(r, obj, f"{rlabel} spec.template.spec",
                  lambda sub: read_jobset(sub, view, classes, default_priority, groups, used_groups, gangs))
    if job is None or nodes is None:
        return None
    _apply_trainjob_settings(r, o, spec, job, template, policy, rlabel, scheduler)
    return job


def _runtime_of(r: Reader, o: ManifestObject, spec: Mapping, runtimes: dict) -> ManifestObject | None:
    """The runtime ``spec.runtimeRef`` names (kind ClusterTrainingRuntime by default; a TrainingRuntime in the
    TrainJob's namespace), a stand-in for Trainer's default runtime when the input lacks it, or None after
    an error."""
    obj = o.label
    ref = r.mapping(spec.get("runtimeRef"), obj, "spec.runtimeRef")
    kind = ref.get("kind", "ClusterTrainingRuntime")
    name = ref.get("name")
    if kind not in ("ClusterTrainingRuntime", "TrainingRuntime") or not isinstance(name, str) or not name:
        r.error(obj, "spec.runtimeRef", "expected the name and kind (ClusterTrainingRuntime or TrainingRuntime) of a "
                f"runtime, got {shown(dict(ref))}")
        return None
    key = (kind, (o.namespace or "default") if kind == "TrainingRuntime" else None, name)
    runtime = runtimes.get(key)
    if runtime is None and kind == "ClusterTrainingRuntime" and name in STAND_INS:
        runtime = _stand_in(name)
        r.notes.append(f"{obj}: ClusterTrainingRuntime {name!r} is not in the input: gangkit runs it on a stand-in for "
                       "Trainer's default runtime (one trainer step 'node' of mlPolicy.numNodes 1; add your "
                       "installation's runtime to simulate its own steps)")
    if runtime is None:
        where = f"in namespace {key[1]!r}" if key[1] else "in the input"
        r.error(obj, "spec.runtimeRef.name", f"names {kind} {name!r}, which is not {where} (Trainer's default "
                f"runtimes come with its installation; add the runtime's manifest)")
        return None
    return runtime


def _trainer_steps(r: Reader, obj: str, rlabel: str, entries, nodes: int | None, resources) -> list:
    """The runtime's replicatedJobs as Trainer runs them for this TrainJob: the initializer steps left out
    (reported), the trainer step's parallelism and completions set to ``nodes`` and its container ``node``
    given ``resources`` (``trainer.resourcesPerNode``), when given."""
    kept, left_out = [], []
    for entry in entries if isinstance(entries, list) else []:
        labels = _dig_map(entry, "template", "metadata", "labels")
        step = labels.get(ANCESTOR)
        if step in ("dataset-initializer", "model-initializer"):
            left_out.append(str(entry.get("name")))
            continue
        if step == "trainer" and nodes is not None and isinstance(entry.get("template"), Mapping):
            jspec = entry["template"].setdefault("spec", {})
            if isinstance(jspec, dict):
                jspec["parallelism"] = jspec["completions"] = nodes
                containers = _dig_map(jspec, "template", "spec").get("containers")
                for c in containers if isinstance(containers, list) else []:
                    if isinstance(c, dict) and c.get("name") == "node" and resources is not None:
                        c["resources"] = resources
        kept.append(entry)
    if left_out:
        r.notes.append(f"{obj}: the initializer steps {', '.join(left_out)} of {rlabel} run before the trainer; gangkit "
                       "leaves them out and starts the trainer step at submission")
    return kept


def _apply_trainjob_settings(r: Reader, o: ManifestObject, spec: Mapping, job: Job, template: Mapping, policy: Mapping,
                             rlabel: str, scheduler: str | None) -> None:
    """The TrainJob's settings on the job read from its JobSet: ``activeDeadlineSeconds``; with
    ``podGroupPolicy.volcano`` the queue of the ``scheduling.volcano.sh/queue-name`` annotation (TrainJob,
    else runtime template); with ``podGroupPolicy.coscheduling`` its ``scheduleTimeoutSeconds``."""
    obj = o.label
    if "activeDeadlineSeconds" in spec:
        deadline = r.whole(spec["activeDeadlineSeconds"], obj, "spec.activeDeadlineSeconds", 1)
        job.max_run_time = None if deadline is None else float(deadline)
    if scheduler == "volcano":
        queue = _dig_map(o.doc, "metadata", "annotations").get(VOLCANO_QUEUE) or \
            _dig_map(template, "metadata", "annotations").get(VOLCANO_QUEUE)
        if isinstance(queue, str) and queue:
            job.volcano_queue = queue
    if scheduler == "scheduler-plugins-scheduler":
        timeout = r.mapping(policy.get("coscheduling"), rlabel, "spec.podGroupPolicy.coscheduling").get(
            "scheduleTimeoutSeconds", DEFAULT_TIMEOUT)
        timeout = r.whole(timeout, rlabel, "spec.podGroupPolicy.coscheduling.scheduleTimeoutSeconds", 1)
        job.schedule_timeout = None if timeout is None else float(timeout)

def _stand_in(name: str) -> ManifestObject:
    """gangkit's stand-in for a default runtime of Trainer's installation (the torch-distributed shape)."""
    doc = {"apiVersion": TRAINER_API, "kind": "ClusterTrainingRuntime", "metadata": {"name": name},
           "spec": {"mlPolicy": {"numNodes": 1, "torch": {}}, "template": {"spec": {"replicatedJobs": [{
               "name": "node", "template": {"metadata": {"labels": {ANCESTOR: "trainer"}}, "spec": {"template": {
                   "spec": {"containers": [{"name": "node", "image": "pytorch/pytorch"}]}}}}}]}}}}
    return ManifestObject(doc, "ClusterTrainingRuntime", "gangkit's stand-in", name, None, "ClusterTrainingRuntime")


def collect_runtimes(objects: list[ManifestObject]) -> dict:
    """The input's TrainingRuntimes and ClusterTrainingRuntimes by (kind, namespace or None, name)."""
    return {(o.role, (o.namespace or "default") if o.role == "TrainingRuntime" else None, o.name): o
            for o in objects if o.role in ("TrainingRuntime", "ClusterTrainingRuntime") and o.name}


def _dig_map(doc: Any, *keys: str) -> dict:
    for k in keys:
        doc = doc.get(k) if isinstance(doc, Mapping) else None
    return doc if isinstance(doc, dict) else {}
