"""A gang larger than its pods, read from manifests: the examples, scheduler-plugins' install guide itself,
a Volcano PodGroup, and the Volcano Job webhook's refusals.

The API server accepts a PodGroup (scheduler-plugins', Volcano's, Kubernetes 1.36's) whose size is above the
pods that name it; the readers read it, the pods wait for a quorum that never comes, the diagnosis names the
PodGroup, and ``gangkit check`` reports ``gang-larger-than-job``. A Volcano Job's own ``minAvailable`` above
its replicas never reaches the cluster: Volcano's job webhook refuses it, and gangkit does too, in its words.
"""

from __future__ import annotations

import json
import warnings

import pytest
import yaml
from test_kube_gang_manifests_136 import api_field_problems

import gangkit as gk
from gangkit.cli.main import main
from gangkit.consistency import check
from gangkit.manifests import GangkitInputWarning, load_file, load_manifests
from gangkit.model.errors import ScenarioError

from conftest import case, shared_path
from paths import EXAMPLES
from schema_util import requires_schemas, validate_yaml

COSCHEDULING = EXAMPLES / "coscheduling-quorum-never-comes.yaml"
KUBE_136 = EXAMPLES / "kube-gang-1.36-quorum.yaml"
INSTALL_GUIDE = [shared_path("upstream_manifests", "scheduler-plugins", f"docs-install.b{i}.yaml") for i in (1, 2)]
needs_install_guide = pytest.mark.skipif(not all(p.is_file() for p in INSTALL_GUIDE),
                                         reason="scheduler-plugins' install guide manifests are absent (shared folder)")

SIBLINGS = "cannot find enough sibling pods, current pods number: 2, minMember of group: 3"  # Coscheduling's PreFilter
PRE_ENQUEUE = "waiting for minCount pods from a gang to appear in scheduling queue"  # GangScheduling's PreEnqueue
NOT_VALID = "Not enough valid tasks for gang-scheduling, valid: 2, min: 3"  # Volcano's gang plugin, JobValid
NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-0"},
        "status": {"allocatable": {"nvidia.com/gpu": "8", "cpu": "96", "memory": "1Ti"}}}


def quiet(read, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("error", GangkitInputWarning)
        return read(*args)


def install_guide() -> str:
    return "---\n".join(p.read_text() for p in INSTALL_GUIDE)


# --- the examples: read quietly, the pods wait, the diagnosis names the PodGroup -------------------------------


@pytest.mark.parametrize("path, stack, code, words", [
    case("Coscheduling's PreFilter refuses each pod of the install guide's shape", COSCHEDULING, None,
         "NotEnoughPods", SIBLINGS),
    case("behind Kueue the Job is admitted and its pods still wait at PreFilter", COSCHEDULING, "kueue+coscheduling",
         "NotEnoughPods", SIBLINGS),
    case("Kubernetes 1.36's GangScheduling holds the pods at PreEnqueue", KUBE_136, None, "WaitingForPods",
         PRE_ENQUEUE),
    case("the 1.36 example behind Kueue", KUBE_136, "kueue+kube-gang", "WaitingForPods", PRE_ENQUEUE),
])
def test_an_example_waits_for_ever_and_its_diagnosis_names_the_podgroup(path, stack, code, words):
    sc = quiet(load_file, path)
    (j,) = sc.jobs
    assert (j.pod_count, j.min_member, j.gang_larger_than_pods, j.gang_object) == (2, 3, True, "PodGroup pg1")
    r = gk.simulate(sc, stack=stack) if stack else gk.simulate(sc)
    row = r.jobs.set_index("job").loc["pause"]
    d = r.diagnose("pause")
    assert (row.state, row.pods, row.gang_size) == ("WaitingAtEnd", 2, 3)
    assert d.code == code and words in d.message and d.message.startswith("PodGroup pg1 (of pause)"), d.message


@pytest.mark.parametrize("path", [case("the Coscheduling example", COSCHEDULING), case("the 1.36 example", KUBE_136)])
def test_gangkit_run_ends_with_the_job_waiting_and_check_reports_it(capsys, path):
    assert main(["run", str(path), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["jobs_waiting_at_end"], out["jobs_finished"], out["deadlock"]) == (1, 0, False)
    report = check(list(yaml.safe_load_all(path.read_text())))
    assert [f.code for f in report.findings] == ["gang-larger-than-job"]
    assert (report.findings[0].numbers["gang_size"], report.findings[0].numbers["pods"]) == (3, 2)


@requires_schemas
@pytest.mark.parametrize("path", [case("the Coscheduling example", COSCHEDULING), case("the 1.36 example", KUBE_136)])
def test_the_examples_are_valid_for_the_schemas_and_the_api_reference(path):
    text = path.read_text()
    assert validate_yaml(text) >= 2  # the Node and the Job (and scheduler-plugins' PodGroup against its CRD)
    v1alpha2 = [d for d in yaml.safe_load_all(text) if d and d["apiVersion"] == "scheduling.k8s.io/v1alpha2"]
    assert [p for d in v1alpha2 for p in api_field_problems(d)] == []  # no schema: the API reference's fields


# --- scheduler-plugins' install guide itself: a Deployment of 2 replicas in a PodGroup of minMember 3 -----------


@needs_install_guide
def test_the_install_guides_own_files_simulate_as_the_guide_says():
    """"the pods stay pending": the guide's PodGroup and Deployment, read together, under Coscheduling."""
    docs = [NODE, *yaml.safe_load_all(install_guide())]  # the guide's cluster: a Node of our own
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GangkitInputWarning)  # the Deployment has no gangkit/run-time
        sc = load_manifests(docs)
        report = check(docs)
    (j,) = sc.jobs
    assert (j.name, j.pod_count, j.min_member, j.gang_object) == ("pause", 2, 3, "PodGroup pg1")
    r = gk.simulate(sc, stack="coscheduling", horizon=3600.0)
    assert r.jobs.set_index("job").loc["pause"].state == "WaitingAtEnd"
    assert r.diagnose("pause").code == "NotEnoughPods" and SIBLINGS in r.diagnose("pause").message
    assert [f.code for f in report.findings] == ["gang-larger-than-job"]


@requires_schemas
@needs_install_guide
def test_the_install_guides_files_are_valid_for_their_schemas():
    assert validate_yaml(install_guide()) == 2  # the PodGroup (its CRD) and the Deployment (its pod template, fields)


# --- Volcano: a PodGroup above its pods is read; a Job's minAvailable above its replicas is refused -------------


def volcano_pod_group(min_member):
    return {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup", "metadata": {"name": "pg"},
            "spec": {"minMember": min_member}}


def batch_job(pods=2):
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "train", "annotations": {"gangkit/run-time": "10m"}},
            "spec": {"parallelism": pods, "template": {
                "metadata": {"annotations": {"scheduling.k8s.io/group-name": "pg"}},
                "spec": {"schedulerName": "volcano", "restartPolicy": "Never", "containers": [
                    {"name": "w", "image": "trainer:1", "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}}}}


def test_a_volcano_podgroup_above_its_pods_is_read_and_the_gang_plugin_keeps_the_job_pending():
    sc = quiet(load_manifests, [NODE, volcano_pod_group(3), batch_job(2)])
    (j,) = sc.jobs
    assert (j.min_member, j.pod_count, j.gang_object) == (3, 2, "PodGroup pg")
    r = gk.simulate(sc, stack="gang", horizon=3600.0)
    d = r.diagnose("train")
    assert r.jobs.set_index("job").loc["train"].state == "WaitingAtEnd"
    assert d.code == "NotEnoughPods" and NOT_VALID in d.message and d.message.startswith("PodGroup pg (of train)")


def volcano_job(min_available=None, task_min=None):
    task = {"name": "worker", "replicas": 2, "template": {"spec": {"containers": [
        {"name": "w", "image": "trainer:1", "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}}}
    if task_min is not None:
        task["minAvailable"] = task_min
    spec = {"tasks": [task]} | ({"minAvailable": min_available} if min_available is not None else {})
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
            "metadata": {"name": "vj", "annotations": {"gangkit/run-time": "10m"}}, "spec": spec}


@pytest.mark.parametrize("doc, field, words", [
    case("a job minAvailable above the tasks' replicas", volcano_job(min_available=3), "spec.minAvailable",
         "job 'minAvailable' should not be greater than total replicas in tasks"),
    case("a task's minAvailable above its replicas", volcano_job(task_min=3), "spec.tasks[0].minAvailable",
         "'minAvailable' is greater than 'replicas' in task: worker, job: vj"),
])
def test_a_volcano_job_above_its_replicas_is_refused_in_the_webhooks_words(doc, field, words):
    with pytest.raises(ScenarioError) as err:
        load_manifests([NODE, doc])
    message = str(err.value)
    assert f"Job vj: {field}:" in message and words in message and "Volcano's job webhook refuses it" in message, message


def test_a_volcano_job_whose_minimum_its_replicas_fill_is_read():
    (j,) = quiet(load_manifests, [NODE, volcano_job(min_available=2, task_min=2)]).jobs
    assert (j.min_member, j.pod_count) == (2, 2)
