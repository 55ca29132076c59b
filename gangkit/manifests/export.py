"""Exporting a scenario for a real stack: the same workloads and queues, in the kinds that stack reads.

:func:`gangkit.manifests.dump.dump_manifests` writes a scenario back as it was
read. :func:`export_manifests` writes it for a *target*: the stack a cluster
would run it with, and the form its jobs take there. Whatever the simulation
of that stack assumes is written out, so that a real cluster would do the
same and ``gangkit check`` finds nothing missing:

- a gang layer places every multi-pod job as a gang of all its pods unless
  told otherwise; the export writes that size (``minMember`` = the pods), as
  a real gang layer needs it written (Volcano's controller would make a
  PodGroup of ``minMember: 1`` for a Job without one);
- a ``kueue+`` stack without Kueue objects of its own runs with one
  ClusterQueue holding every GPU (:func:`gangkit.kueue.layer.default_objects`);
  the export writes those objects;
- a target without Kueue drops the scenario's Kueue objects and the jobs'
  Kueue labels; a gang is written in the target placement layer's terms only
  (another layer's timeouts go; the default scheduler gets no gang objects);
- the node suppliers, the pods' ``schedulerName`` and the gang's form follow
  the stack (:mod:`gangkit.manifests.dump`).

A LeaderWorkerSet's groups are written as that LeaderWorkerSet
(:func:`gangkit.manifests.lws.lws_manifests`, through ``dump_manifests``) for the
batch targets whose gang a LeaderWorkerSet can say: the default scheduler and
Volcano (each group one PodGroup through LWS's Volcano provider), with Kueue or
without (:data:`LWS_TARGETS`); its templates name no other gang layer's objects,
so the other targets write its groups as any job of their pod sets (a batch/v1
Job of one pod set, a Volcano Job, a JobSet), as before. A CronJob's Jobs are written as
those Jobs, each with its submit time: the CronJob itself is not kept (a job
read from it is a batch/v1 Job like any other), and reading the export gives
the same jobs.

Reading the export back and running it under the target's stack gives the
same results as running the scenario under that stack (tests/manifests/test_export.py),
with one exception by design: the ``volcano`` targets turn batch/v1 Jobs into
Volcano Jobs, whose controller creates the pods only once the PodGroup is
Inqueue (lesson 06), a second or two later; the export then runs as
:func:`export_scenario` of the scenario does.
"""

from __future__ import annotations

import dataclasses
import difflib

from gangkit.kueue.layer import default_objects
from gangkit.manifests.dump import dump_manifests
from gangkit.manifests.lws import LWS_PLACEMENTS
from gangkit.model.errors import Problem, ScenarioError
from gangkit.model.jobs import BATCH_JOB, DEPLOYMENT, JOBSET, LEADERWORKERSET, POD, STATEFULSET
from gangkit.model.scenario import PLACEMENTS, STACKS, Scenario
from gangkit.supply.dump import suppliers

__all__ = ["TARGETS", "export_manifests", "export_scenario"]

KUEUE_LABELS = "kueue.x-k8s.io/"  # the prefix of the labels Kueue's job integration reads

#: Export targets: every stack name (batch/v1 Jobs, the gang in the placement layer's own objects), and the
#: names of Volcano's own kinds: ``volcano`` writes Volcano Jobs (one task per pod set); ``kueue+volcano``
#: is Kueue in front of Volcano the way clusters run it, batch/v1 Jobs with a Volcano PodGroup (Kueue has
#: no Volcano Job integration).
TARGETS: dict[str, tuple[str, str]] = {
    **{stack: (stack, "batch") for stack in STACKS},
    "volcano": ("gang", "volcano"),
    "volcano+karpenter": ("gang+karpenter", "volcano"),
    "kueue+volcano": ("kueue+gang", "batch"),
    "kueue+volcano+karpenter": ("kueue+gang+karpenter", "batch"),
    "jobset": ("pod", "jobset"),
    "kueue+jobset": ("kueue+pod", "jobset"),
    "kueue+jobset+karpenter": ("kueue+pod+karpenter", "jobset"),
    "kueue+jobset+volcano": ("kueue+gang", "jobset"),
}


#: The export targets that can write a LeaderWorkerSet: batch/v1 kinds, placed by kube-scheduler or Volcano.
LWS_TARGETS = tuple(t for t, (stack, kind) in TARGETS.items() if kind == "batch"
                    and next((p for p in stack.split("+") if p in PLACEMENTS), "pod") in LWS_PLACEMENTS)


def export_scenario(scenario: Scenario, target: str) -> Scenario:
    """``scenario`` as ``target`` runs it, with every assumption of that stack made explicit (see the module)."""
    if target not in TARGETS:
        close = difflib.get_close_matches(target, TARGETS, n=1)
        expected = f"did you mean {close[0]}?" if close else f"expected one of {', '.join(TARGETS)}"
        raise ScenarioError([Problem("Export", "target", f"unknown target {target!r}; {expected}")])
    stack, controller = TARGETS[target]
    parts = stack.split("+")
    placement = next((p for p in parts if p in PLACEMENTS), "pod")  # kueue+provreq+autoscaler places pod by pod
    problems, jobs = [], []
    for j in scenario.jobs:
        if j.framework == LEADERWORKERSET and controller == "batch" and placement in LWS_PLACEMENTS:
            jobs.append(_for_layer(j, placement, kueue="kueue" in parts))  # written as its LeaderWorkerSet
            continue
        if controller == "volcano" and j.controller == "batch":
            j = dataclasses.replace(j, controller="volcano", framework=BATCH_JOB)
        elif controller == "jobset":
            j = dataclasses.replace(j, controller="batch", framework=JOBSET)
            if any(ps.min_count is not None for ps in j.pod_sets):
                problems.append(Problem(f"Job {j.key}", "pod_sets", f"target {target} writes JobSets; Kueue's partial "
                                        "admission (min_count) is for batch/v1 Jobs only (export to kueue+pod keeps it)"))
        elif controller == "batch" and j.framework in (POD, DEPLOYMENT, STATEFULSET, LEADERWORKERSET) and len(j.pod_sets) == 1:
            j = dataclasses.replace(j, framework=BATCH_JOB)  # the same pods as a batch/v1 Job
        elif controller == "batch" and len(j.pod_sets) != 1 and j.framework != JOBSET:
            lws = (f", or to one of {', '.join(LWS_TARGETS)}: a LeaderWorkerSet" if j.framework == LEADERWORKERSET
                   else "")
            problems.append(Problem(f"Job {j.key}", "pod_sets", f"target {target} writes batch/v1 Jobs, which have one "
                                    f"pod template; got {len(j.pod_sets)} pod sets (export to volcano: one task each, or to a jobset target: one "
                                    f"replicatedJob each{lws})"))
        jobs.append(_for_layer(j, placement, kueue="kueue" in parts))
    if problems:
        raise ScenarioError(problems)
    out = dataclasses.replace(scenario, jobs=jobs).with_settings(stack=stack)
    if "kueue" not in parts:
        out = dataclasses.replace(out, kueue=None)
    elif out.kueue is None:
        karpenter, autoscaler = suppliers(out)
        gpus = sum(n.gpus for n in out.nodes)
        gpus += sum(s.provisionable_gpus(out) for s in (karpenter, autoscaler) if s is not None)
        out = dataclasses.replace(out, kueue=default_objects(out, gpus))
    return out


def _for_layer(j, placement: str, kueue: bool):
    """A job's settings as the target's layers read them: its gang in the placement layer's terms, Kueue's labels.

    The gang size stays (written out when a gang layer would otherwise guess it);
    the settings of other gang layers go (a scheduler-plugins timeout means nothing
    to Volcano), and the default scheduler gets no gang at all. Without Kueue, the
    Kueue labels and the LocalQueue go too.
    """
    changes: dict = {}
    if placement == "pod":
        changes |= {"min_member": None, "min_resources": None, "volcano_queue": "default"}
    elif j.controller == "batch" and j.min_member is None and j.pod_count > 1 and j.framework != LEADERWORKERSET:
        changes["min_member"] = j.pod_count
    if placement != "coscheduling":
        changes["schedule_timeout"] = None
    if placement != "yunikorn":
        changes |= {"placeholder_timeout": None, "gang_style": None}
    if placement not in ("gang",) and j.controller == "batch":
        changes |= {"volcano_queue": "default", "min_resources": None}
    if not kueue:
        changes["labels"] = {k: v for k, v in j.labels.items() if not k.startswith(KUEUE_LABELS)}
        changes["queue"] = j.namespace or "default"
    return dataclasses.replace(j, **changes)


def export_manifests(scenario: Scenario, target: str) -> str:
    """The manifests of :func:`export_scenario`, as multi-document YAML."""
    text = dump_manifests(export_scenario(scenario, target))
    return text.replace("written by gangkit.manifests.dump_manifests", f"exported by gangkit for {target}", 1)
