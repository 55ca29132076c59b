"""A batch/v1 Job under Volcano without a PodGroup: the annotation ``scheduling.volcano.sh/group-min-member``.

The rule (Volcano v1.15.1, ``pkg/controllers/podgroup``: ``processNextReq`` in ``pg_controller.go``,
``buildPodGroupFromPod`` and ``getMinMemberFromUpperRes`` in ``pg_controller_handler.go``): for a pod whose
``schedulerName`` is Volcano's and that names no PodGroup (``scheduling.k8s.io/group-name``), the podgroup
controller creates a PodGroup whose ``minMember`` is its owner's (the Job's) ``group-min-member`` annotation,
else 1. A pod that names a PodGroup is left alone, so the annotation then means nothing.

``dump_manifests`` writes the annotation on a Job of more than one pod that gets no PodGroup of its own
(gangkit's gang of every pod); the reader honours it (gangkit.manifests.core.read_group_min_member).
"""

from __future__ import annotations

import copy
import warnings

import pytest
import yaml

import gangkit as gk
from gangkit.manifests import GangkitInputWarning, dump_manifests, load_manifests
from gangkit.manifests.core import GROUP_MIN_MEMBER, GROUP_NAME
from gangkit.model.errors import ScenarioError

import builders
from builders import gpu_nodes, one_cluster_queue
from conftest import case

try:
    from schema_util import requires_schemas, validate_manifest
except ImportError:  # run from the repository root
    from tests.schema_util import requires_schemas, validate_manifest

GPU = "nvidia.com/gpu"


def scenario(stack: str, *jobs, kueue: bool = False) -> gk.Scenario:
    """The jobs on two 8-GPU nodes under ``stack``; with ``kueue``, behind one ClusterQueue of 16 GPUs."""
    return builders.scenario(gpu_nodes(2), jobs, kueue=one_cluster_queue(16) if kueue else None, stack=stack)


def docs(text: str) -> list[dict]:
    return [d for d in yaml.safe_load_all(text) if d]


def job_doc(text: str, name: str) -> dict:
    return next(d for d in docs(text) if d["kind"] == "Job" and d["metadata"]["name"] == name)


def load(source) -> tuple[gk.Scenario, list[str]]:
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        sc = load_manifests(source)
    return sc, [str(w.message) for w in seen if issubclass(w.category, GangkitInputWarning)]


# --- writing, then reading back -------------------------------------------------------------------------------
ROUND_TRIPS = [
    # (stack, job, kueue, the annotation written, the PodGroup's minMember written)
    case("Volcano, a gang of every pod: the annotation says all 4", "gang", gk.job("a", pods=4, gpus=2), False,
         "4", None),
    case("Volcano, a gang of 2 of 4: a PodGroup, which the controller leaves alone; no annotation", "gang",
         gk.job("a", pods=4, gpus=2, min_member=2), False, None, 2),
    case("Volcano, a gang of 1 of 4 (minMember 1 written out): a PodGroup", "gang",
         gk.job("a", pods=4, gpus=2, min_member=1), False, None, 1),
    case("Volcano, one pod: minMember 1 is the controller's default; no annotation", "gang",
         gk.job("a", pods=1, gpus=2), False, None, None),
    case("Volcano, a gang of every pod in another Volcano queue: a PodGroup, no annotation", "gang",
         gk.job("a", pods=4, gpus=2, volcano_queue="research"), False, None, None),
    case("Kueue in front of Volcano, a gang of every pod: the annotation too", "kueue+gang",
         gk.job("a", pods=3, gpus=2), True, "3", None),
    case("the default scheduler: no Volcano controller, no annotation", "pod", gk.job("a", pods=4, gpus=2), False,
         None, None),
    case("coscheduling: its own PodGroup carries the gang; no annotation", "coscheduling",
         gk.job("a", pods=4, gpus=2, min_member=3), False, None, None),
]


def _with_queue(sc: gk.Scenario) -> gk.Scenario:
    if any(j.volcano_queue != "default" for j in sc.jobs):
        from gangkit.volcano.api import Queue, VolcanoSetup
        sc.volcano = VolcanoSetup(queues=[Queue("research")])
    return sc


@pytest.mark.parametrize("stack, job, kueue, annotation, min_member", ROUND_TRIPS)
def test_dump_writes_the_annotation_and_reading_back_gives_the_same_gang(stack, job, kueue, annotation, min_member):
    sc = _with_queue(scenario(stack, job, kueue=kueue))
    text = dump_manifests(sc)
    written = job_doc(text, "a")
    assert written["metadata"]["annotations"].get(GROUP_MIN_MEMBER) == annotation
    groups = [d for d in docs(text) if d["kind"] == "PodGroup" and d["apiVersion"].startswith("scheduling.volcano.sh")]
    assert [g["spec"].get("minMember") for g in groups if "minMember" in g["spec"]] == (
        [min_member] if min_member is not None else [])
    back, emitted = load(text)
    assert emitted == []
    (j,) = back.jobs
    assert (j.min_member, j.gang_size, j.pod_count) == (job.min_member, job.gang_size, job.pod_count)
    assert dump_manifests(back) == text  # writing what was read gives the same file


@requires_schemas
@pytest.mark.parametrize("stack, job, kueue, annotation, min_member", ROUND_TRIPS)
def test_what_dump_writes_is_valid_for_the_real_schemas(stack, job, kueue, annotation, min_member):
    for doc in docs(dump_manifests(_with_queue(scenario(stack, job, kueue=kueue)))):
        validate_manifest(doc)


# --- reading hand-written Jobs ----------------------------------------------------------------------------------
def volcano_job(pods=4, annotation=None, scheduler="volcano", group=None) -> list[dict]:
    """A batch/v1 Job of ``pods`` one-GPU pods for Volcano, with the group-min-member annotation ``annotation``."""
    meta = {"name": "train", "annotations": {"gangkit/run-time": "10m"}}
    if annotation is not None:
        meta["annotations"][GROUP_MIN_MEMBER] = annotation
    pod = {"restartPolicy": "Never", "containers": [{"name": "w", "image": "trainer:1",
                                                      "resources": {"limits": {GPU: "1"}}}]}
    if scheduler is not None:
        pod["schedulerName"] = scheduler
    template = {"spec": pod}
    out = [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n0"}, "status": {"allocatable": {GPU: "8"}}}]
    if group is not None:
        template["metadata"] = {"annotations": {GROUP_NAME: "train"}}
        out.append({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup", "metadata": {"name": "train"},
                    "spec": {"minMember": group}})
    out.append({"apiVersion": "batch/v1", "kind": "Job", "metadata": meta,
                "spec": {"parallelism": pods, "completions": pods, "template": template}})
    return out


@pytest.mark.parametrize("manifests, min_member, gang, note", [
    case("the annotation gives the PodGroup's minMember", volcano_job(annotation="2"), 2, 2, None),
    case("an annotation of every pod is gangkit's default gang", volcano_job(annotation="4"), None, 4, None),
    case("an annotation above the Job's pods is read quietly (the controller copies it; the job will wait)",
         volcano_job(annotation="5"), 5, 5, None),
    case("no annotation: the controller's PodGroup has minMember 1, and a note says so", volcano_job(), 1, 1,
         "gives them a PodGroup of minMember 1"),
    case("no annotation on a one-pod Job: nothing to say", volcano_job(pods=1), None, 1, None),
    case("pods that name a PodGroup: the controller makes none, the annotation is ignored",
         volcano_job(annotation="2", group=3), 3, 3, "is ignored: its pods name PodGroup 'train'"),
    case("pods for the default scheduler: Volcano's controller does not serve them, the annotation is ignored",
         volcano_job(annotation="2", scheduler=None), None, 4, "serves only pods with spec.template.spec.schedulerName"),
])
def test_the_reader_honours_the_annotation_as_volcanos_podgroup_controller_does(manifests, min_member, gang, note):
    sc, emitted = load(manifests)
    (j,) = sc.jobs
    assert (j.min_member, j.gang_size) == (min_member, gang)
    if note is None:
        assert emitted == []
    else:
        assert len(emitted) == 1 and note in emitted[0], emitted


@pytest.mark.parametrize("value", [
    case("zero: Volcano's 'no gang', out of gangkit's range", "0"),
    case("not a number (Volcano would log it and use 1)", "two"),
    case("negative (Volcano would log it and use 1)", "-2"),
])
def test_an_annotation_out_of_range_is_one_clear_error(value):
    with pytest.raises(ScenarioError) as err:
        load_manifests(volcano_job(annotation=value))
    message = str(err.value)
    assert f"metadata.annotations.{GROUP_MIN_MEMBER}" in message and "Job train" in message
    assert "expected a whole number >= 1 as a string" in message, message


def test_without_the_annotation_volcano_places_the_pods_one_by_one():
    """Two nodes of 2 GPUs, one busy: a 4-pod Job of 1 GPU each starts 2 pods at once without a gang (minMember 1),
    none with the annotation (a gang of 4 needs the busy node)."""
    nodes = [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"n{i}"}, "status": {"allocatable": {GPU: "2"}}}
             for i in range(2)]
    busy = copy.deepcopy(volcano_job(pods=2, annotation="2")[-1])
    busy["metadata"]["name"] = "busy"
    busy["metadata"]["annotations"]["gangkit/run-time"] = "1h"
    sim = {"apiVersion": "gangkit/v1alpha1", "kind": "Simulation", "metadata": {"name": "s"}, "spec": {"stack": "gang"}}
    started = {}
    for annotation in (None, "4"):
        train = copy.deepcopy(volcano_job(annotation=annotation)[-1])
        train["metadata"]["annotations"]["gangkit/submit-time"] = "10s"
        sc, _ = load([*nodes, busy, train, sim])
        r = gk.simulate(sc, stack="gang", horizon=600)
        started[annotation] = int(((r.events.job == "train") & (r.events.event == "pod_bound")).sum())
    assert started == {None: 2, "4": 0}
