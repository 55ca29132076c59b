"""Reading a scenario written as Kubernetes manifests: the entrance where every family is known.

A *manifest* is a Kubernetes object written down as YAML: an ``apiVersion``
and a ``kind`` saying what it is, ``metadata`` (name, namespace, labels,
annotations) and a ``spec`` saying what you want. ``kubectl apply -f`` sends
such files to a cluster; gangkit reads the same files and builds a
:class:`~gangkit.model.scenario.Scenario` from them, so a lesson's cluster can be
written the way an operator would write it.

Picture a sorting office: the mail (the YAML documents) comes in at one
door, the directory board (:mod:`gangkit.manifests.kinds`) says which desk
each kind goes to, and every desk checks its own with the same reader
(:mod:`gangkit.model.reading`), which keeps one report. At the end this
module puts the answers together into one Scenario, or hands over the report
of every problem at once. The desks, and the kinds they read (see
``docs/reference/scenario-yaml.md`` for every field):

- :mod:`gangkit.manifests.core`: Node, batch/v1 Job, Volcano's PodGroup,
  PriorityClass, and gangkit's Simulation and WorkloadGenerator;
- :mod:`gangkit.manifests.training` (a package, a module per family): training jobs of several roles: the JobSet,
  Kubeflow Trainer's TrainJob with its runtimes, Kubeflow's PyTorchJob, TFJob, JAXJob, PaddleJob, XGBoostJob and MPIJob;
- :mod:`gangkit.manifests.apps`: bare Pods, Deployments, ReplicaSets and StatefulSets;
- :mod:`gangkit.manifests.lws`: the LeaderWorkerSet, a job per group;
- :mod:`gangkit.manifests.companions`: objects that configure what gangkit does not
  simulate (node classes, Kueue's Topology, MultiKueue, KubeSchedulerConfiguration),
  accepted with a warning;
- :mod:`gangkit.supply.manifests`: Karpenter's NodePool, gangkit's Karpenter
  and ClusterAutoscaler, cluster-autoscaler's ProvisioningRequest with its PodTemplates;
- :mod:`gangkit.placement.manifests`: the holding gang schedulers' objects
  (scheduler-plugins' PodGroup, YuniKorn's task groups, the Kubernetes Workload);
- :mod:`gangkit.kueue.manifests`: Kueue's kinds, into ``Scenario.kueue``;
- :mod:`gangkit.volcano.manifests`: Volcano's Queue and Job, into ``Scenario.volcano``.

Bad input gets every problem at once, one line each naming the object and
the field. Fields gangkit does not model are listed once in a warning
(:class:`~gangkit.model.reading.GangkitInputWarning`). Input beyond the
stated limits (the file's size, encoding and nesting: see
:mod:`gangkit.model.reading`; the pods of a Job and of the whole input:
:func:`check_scale`) is refused at once, before anything is simulated.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterable, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any, NamedTuple, Union

from gangkit.kueue import manifests as kueue
from gangkit.manifests import apps, companions, core, cronjob, lws, resume, simulation, snapshot, training
from gangkit.manifests.core import DEFAULT_RUN_TIME, GROUP_NAME
from gangkit.manifests.kinds import Registry
from gangkit.manifests.schedulers import check_scheduler_names
from gangkit.model.errors import Problem, ScenarioError
from gangkit.model.reading import (
    MAX_JOB_PODS,
    MAX_SCENARIO_PODS,
    RUN_TIME,
    GangkitInputWarning,
    ManifestObject,
    Reader,
    looks_like_path,
    parse_yaml,
    read_text,
)
from gangkit.model.scenario import Scenario
from gangkit.placement import manifests as placement
from gangkit.placement.manifests import GangObjects
from gangkit.supply import manifests as supply
from gangkit.volcano import manifests as volcano

__all__ = ["REGISTRY", "JobContext", "check_scale", "check_unique", "load_file", "load_files", "load_manifests"]

Source = Union[str, "os.PathLike[str]", Mapping[str, Any], Iterable[Mapping[str, Any]]]

#: The directory board with each desk's check of one object: the one place that knows every family.
REGISTRY = Registry({m.__name__: m.read_object for m in (core, cronjob, training, apps, lws, supply, placement, kueue,
                                                         volcano, companions)})


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


def load_files(paths: Iterable[str | os.PathLike[str]], *, extra: Iterable[Mapping[str, Any]] = (),
               name: str | None = None, snapshot_time: datetime | None = None) -> Scenario:
    """Build one :class:`Scenario` from several YAML files read together, as ``kubectl apply -f a -f b`` applies them.

    Kueue's examples, for instance, put the queues in one file and the job in
    another. ``extra`` manifests (``gangkit run --nodes``) are added after the
    files. Messages name each document by its file (``job.yaml document 2``);
    the scenario is named after the Simulation object, else ``name``, else the
    first file. Relative paths inside the files start at the first file's folder.

    A live cluster's dump (``kubectl get ... -o yaml``) is read as a snapshot
    (:mod:`gangkit.manifests.snapshot`): the run starts from the state it shows, at
    ``snapshot_time`` (default: its latest timestamp).
    """
    paths = [Path(p) for p in paths]
    notes: list[str] = []
    docs, wheres = [], []
    for path in paths:
        got = parse_yaml(read_text(path), path.name, notes)
        docs.extend(got)
        wheres.extend(f"{path.name} document {i}" if len(paths) > 1 else f"document {i}" for i in range(1, len(got) + 1))
    extra = list(extra)
    docs.extend(extra)
    wheres.extend(f"added document {i}" for i in range(1, len(extra) + 1))
    label = ", ".join(p.name for p in paths) or "manifests"
    default = name or (paths[0].stem if paths else "scenario")
    scenario = _scenario(Reader(label, base=paths[0].parent if paths else None, notes=notes), docs, default, wheres,
                         snapshot_time)
    _emit(scenario.warnings)
    return scenario


def check_unique(r: Reader, objects: list[ManifestObject]) -> None:
    """One Simulation at most, and names unique per kind (and namespace), as the API server requires."""
    simulation.one_simulation(r, objects)
    REGISTRY.check_unique(r, objects)


def _load(source: Source, name: str | None) -> Scenario:
    notes: list[str] = []  # what the YAML itself warns about (a key written twice)
    base = None
    if isinstance(source, os.PathLike) or (isinstance(source, str) and looks_like_path(source)):
        path = Path(source)
        docs, label, default_name = parse_yaml(read_text(path), path.name, notes), path.name, path.stem
        base = path.parent
    elif isinstance(source, str):
        docs, label, default_name = parse_yaml(source, "YAML input", notes), "YAML input", "scenario"
    elif isinstance(source, Mapping):
        docs, label, default_name = [source], "manifests", "scenario"
    elif isinstance(source, Iterable) and not isinstance(source, (bytes, bytearray)):
        docs, label, default_name = list(source), "manifests", "scenario"
    else:
        raise ScenarioError([Problem("load_manifests", "source", "expected a path, YAML text, a manifest (a dict) "
                                     f"or a list of manifests, got {type(source).__name__}")])
    return _scenario(Reader(label, base=base, notes=notes), docs, name or default_name)


def check_scale(r: Reader, jobs: list, name: str) -> None:
    """At most :data:`MAX_JOB_PODS` pods in one Job and :data:`MAX_SCENARIO_PODS` in all: beyond, a run cannot work.

    gangkit simulates every pod (about 150,000 pods of one gang in a few
    seconds); a Job of 10^7 pods would end in a MemoryError after a long wait.
    """
    total = 0
    for j in jobs:
        count = j.pod_count
        total += count
        if count > MAX_JOB_PODS:
            where = "spec.tasks" if j.controller == "volcano" else "spec.parallelism"
            r.error(f"Job {j.key}", where, f"expected at most {MAX_JOB_PODS:,} pods, got {count:,} (the most pods "
                    "Kubernetes is designed for in a whole cluster, and gangkit's limit for one Job)")
    if total > MAX_SCENARIO_PODS:
        r.error(f"Scenario {name}", "", f"expected at most {MAX_SCENARIO_PODS:,} pods in all its Jobs, got {total:,} "
                "(gangkit's limit: it simulates every pod)")


def _emit(messages: list[str]) -> None:
    """Each warning once, attributed to the code that called load_manifests or load_file."""
    for message in messages:
        warnings.warn(message, GangkitInputWarning, stacklevel=3)


def _scenario(r: Reader, docs: list, default_name: str, wheres: list[str] | None = None,
              snapshot_time: datetime | None = None) -> Scenario:
    """The input as a whole: every desk reads its kinds, in the order their answers depend on each other.

    First the objects (:func:`_collect`), the PriorityClasses and the Nodes; then the workloads, each
    into Jobs (:func:`_read_workloads`), which the layers' setups read in turn (:func:`_read_layers`);
    then the limits of the whole input and the default run time. A live cluster's dump is first split
    into the objects as written and the state they were in (:mod:`gangkit.manifests.snapshot`); that
    state is given to the jobs once they are read (:func:`_resume`).
    """
    objects, by_kind, gangs, taken = _collect(r, docs, wheres, snapshot_time)
    classes, default_priority = core.read_priority_classes(r, by_kind["PriorityClass"])
    node_list = [n for n in (core.read_node(r, o) for o in by_kind["Node"]) if n is not None]
    groups = {(o.namespace or "default", o.name): o for o in by_kind["PodGroup"] if o.name}
    ctx = JobContext(classes, default_priority, groups, {}, gangs)
    jobs = _read_workloads(r, by_kind, objects, node_list, ctx)
    for key, o in groups.items():
        if key not in ctx.used_groups:
            r.notes.append(f"{o.label} is not used: no Job's pod template has the annotation {GROUP_NAME}: {o.name}")
    layers = _read_layers(r, by_kind, objects, jobs, ctx, default_name)
    if not by_kind["Node"]:
        r.error(f"Scenario {layers.name}", "", "expected at least one Node (apiVersion: v1, kind: Node); gangkit run "
                "adds nodes with --nodes (--nodes 4x8: four nodes of 8 GPUs)")
    check_scale(r, jobs, layers.name)
    defaulted = [j.key for j in jobs if j.run_time is None]
    for j in jobs:
        if j.run_time is None:
            j.run_time = DEFAULT_RUN_TIME
    if taken is not None:
        jobs = _resume(r, taken, jobs, layers.kueue, node_list)
    r.raise_problems()

    notes = r.report()
    if defaulted:
        notes.append(
            f"no {RUN_TIME} annotation on {len(defaulted)} Job(s); "
            f"they run for the default {DEFAULT_RUN_TIME:g} s: {', '.join(defaulted)}"
        )
    sc = Scenario(nodes=node_list, jobs=jobs, settings=layers.settings, name=layers.name,
                  description=layers.description, warnings=notes, kueue=layers.kueue, volcano=layers.volcano,
                  autoscaler=layers.autoscaler, karpenter=layers.karpenter, coscheduling=layers.coscheduling,
                  provisioning_requests=layers.requests)
    sc.validate()
    return sc


#: The roles every input has a (possibly empty) list of, so the steps below can index them.
_ROLES = ("Node", "Job", "JobSet", "PyTorchJob", "MPIJob", "PodGroup", "PriorityClass", "Simulation", "ClusterAutoscaler",
          "Karpenter", "NodePool", "WorkloadGenerator")


def _collect(r: Reader, docs: list, wheres: list[str] | None, snapshot_time: datetime | None):
    """The objects of the input, by role; the gangs' own objects; the snapshot's state (None: not a dump).

    Names unique per kind and namespace, and the schedulerNames gangkit models, are checked here: a pod
    sent to a scheduler gangkit does not model is refused, never re-routed.
    """
    taken = None
    if snapshot.is_snapshot(docs):
        wheres = wheres or [f"document {i}" for i in range(1, len(docs) + 1)]
        docs, wheres, taken = snapshot.split(r, docs, wheres, snapshot_time)
    objects = REGISTRY.objects(r, docs, wheres)
    by_kind: dict[str, list[ManifestObject]] = {k: [] for k in _ROLES}
    for o in objects:
        by_kind.setdefault(o.role, []).append(o)
    gangs = GangObjects.collect(by_kind)
    check_unique(r, objects)
    check_scheduler_names(r, objects)
    return objects, by_kind, gangs, taken


class JobContext(NamedTuple):
    """What every workload reader (``core.read_job``, ``apps.read_controller``, ``training.read_jobset``...) is
    given after the object, in the order they take it: the PriorityClasses (name -> value), the default
    priority, Volcano's PodGroups by (namespace, name) and which Job uses each, and the gangs' own objects."""

    classes: dict
    default_priority: int
    groups: dict
    used_groups: dict
    gangs: GangObjects


def _read_workloads(r: Reader, by_kind: dict, objects: list[ManifestObject], node_list: list,
                    ctx: JobContext) -> list:
    """Every workload kind into Jobs, in a fixed order (batch/v1 Jobs and CronJobs, JobSets, the apps
    controllers, LeaderWorkerSets, Pods, TrainJobs, the Kubeflow kinds, WorkloadGenerators)."""
    jobs = [j for o in by_kind["Job"] if (j := core.read_job(r, o, *ctx)) is not None]
    jobs.extend(cronjob.read_cronjobs(r, by_kind.get("CronJob", []), by_kind["Simulation"],
                                      lambda o: core.read_job(r, o, *ctx)))
    jobs.extend(j for o in by_kind["JobSet"] if (j := training.read_jobset(r, o, *ctx)) is not None)
    for role in ("Deployment", "ReplicaSet", "StatefulSet"):
        for o in by_kind.get(role, []):
            jobs.extend(apps.read_controller(r, o, *ctx))
    for o in by_kind.get("LeaderWorkerSet", []):
        jobs.extend(lws.read_lws(r, o, *ctx))
    jobs.extend(apps.read_pods(r, by_kind.get("Pod", []), *ctx))
    runtimes = training.collect_runtimes(objects)
    jobs.extend(j for o in by_kind.get("TrainJob", []) if (j := training.read_trainjob(r, o, runtimes, *ctx)) is not None)
    replica_jobs = [o for kind in training.REPLICA_KINDS for o in by_kind.get(kind, [])]
    jobs.extend(j for o in replica_jobs if (j := training.read_replica_job(r, o, *ctx)) is not None)
    jobs.extend(core.read_generated_jobs(r, by_kind["WorkloadGenerator"], node_list, jobs))
    return jobs


class _Layers(NamedTuple):
    """The layers' setups and the run settings, as read from their kinds."""

    volcano: Any
    kueue: Any
    settings: Any
    name: str
    description: str
    autoscaler: Any
    karpenter: Any
    coscheduling: Any
    requests: list


def _read_layers(r: Reader, by_kind: dict, objects: list[ManifestObject], jobs: list, ctx: JobContext,
                 default_name: str) -> _Layers:
    """Volcano's and Kueue's setups (which read what they need of the Jobs), the Simulation, the node
    suppliers, kube-scheduler's configuration and the ProvisioningRequests."""
    volcano_setup = volcano.read_for_scenario(r, objects, jobs, ctx.groups, ctx.used_groups, ctx.classes,
                                              ctx.default_priority)
    r.notes.extend(ctx.gangs.unused())
    kueue_input = [o for o in objects if o.role == o.kind]  # not the kinds other API groups share a name with
    kueue_setup = kueue.read_for_scenario(r, kueue_input, jobs, ctx.classes)  # Kueue's kinds, and what Kueue reads of Jobs
    settings, name, description = simulation.read_simulation(r, by_kind["Simulation"], default_name)
    settings = placement.kube_gang_release(r, ctx.gangs, by_kind["Simulation"], settings)  # v1alpha2 objects: 1.36
    autoscaler = supply.read_cluster_autoscaler(r, by_kind["ClusterAutoscaler"])
    karpenter = supply.read_karpenter(r, by_kind["Karpenter"], by_kind["NodePool"])
    scheduler_configs = by_kind.get("KubeSchedulerConfiguration", [])
    coscheduling = companions.coscheduling_args(r, scheduler_configs)
    settings = companions.apply_scoring(r, scheduler_configs, by_kind["Simulation"], settings)
    requests = supply.read_provisioning_requests(r, by_kind.get("ProvisioningRequest", []),
                                                 by_kind.get("PodTemplate", []), jobs)
    return _Layers(volcano_setup, kueue_setup, settings, name, description, autoscaler, karpenter, coscheduling, requests)


def _resume(r: Reader, taken, jobs: list, kueue_setup, node_list: list) -> list:
    """The dump's state given to the jobs read (:func:`gangkit.manifests.resume.apply`), with two notes:
    when the snapshot was taken, and which jobs had already run their run time."""
    jobs = resume.apply(r, taken, jobs, kueue_setup, node_list)
    resumed = [j for j in jobs if j.snapshot is not None]
    done = [j.key for j in resumed if j.snapshot.bound == len(j.snapshot.nodes) and j.progress == "sync"
            and j.run_time <= min(j.snapshot.elapsed)]
    if jobs:  # (a dump of Nodes alone reads as any Nodes do)
        r.notes.append(f"read as a snapshot taken at {taken.at.isoformat().replace('+00:00', 'Z')} (time 0 of the run): "
                       f"{len(resumed)} job(s) admitted or running, {len(jobs) - len(resumed)} waiting")
    if done:
        r.notes.append(f"{len(done)} job(s) had run longer than their run time at the snapshot and finish at "
                       f"time 0 (give them a {RUN_TIME} annotation): {', '.join(done)}")
    return jobs
