"""Kubernetes 1.36's gang manifests (``scheduling.k8s.io/v1alpha2``): read, written back, and run.

In 1.36 a gang is a standalone PodGroup with its own ``spec.schedulingPolicy``
(``gang: {minCount}`` or ``basic: {}``), optionally naming the Workload
template it was made from (``spec.podGroupTemplateRef.workload``); a Job's
pods join it by ``spec.schedulingGroup.podGroupName`` (docs pages "PodGroup
API", "Workload API", "Scheduling Group"; the 1.36 API reference). The rows
read like those rules; an input with v1alpha2 objects is a 1.36 input.

No 1.36 OpenAPI schema is in the shared test data: the v1alpha2 objects are
checked against the field lists of the 1.36 API reference (:data:`API_FIELDS`),
and the rest of a Job against the 1.35 OpenAPI, as the 1.35 tests check
``workloadRef``.
"""

from __future__ import annotations

import copy
import dataclasses
import warnings

import pytest
import yaml

import gangkit as gk
from gangkit.manifests import GangkitInputWarning, dump_manifests, load_file, load_manifests
from gangkit.model.errors import ScenarioError
from gangkit.model.jobs import Job, PodSet, job
from gangkit.model.nodes import nodes
from gangkit.model.scenario import RunSettings, Scenario
from gangkit.placement.manifests import KNOWN_FIELDS, SCHEDULING_GROUP

from conftest import case, edit

try:
    from schema_util import OPENAPI_135, _openapi_135_validator, requires_schemas
except ImportError:  # tests/ imported as a package
    from tests.schema_util import OPENAPI_135, _openapi_135_validator, requires_schemas
from paths import REPO

EXAMPLES = REPO / "examples"
EXAMPLE_135, EXAMPLE_136 = EXAMPLES / "kube-gang.yaml", EXAMPLES / "kube-gang-1.36.yaml"
API = "scheduling.k8s.io/v1alpha2"
GPU = "nvidia.com/gpu"

#: The fields of the v1alpha2 objects in the Kubernetes 1.36 API reference ("PodGroup v1alpha2", "Workload
#: v1alpha2") and of the pod's PodSchedulingGroup: (all fields, the required ones) per object type.
API_FIELDS = {
    "PodGroup": ({"apiVersion", "kind", "metadata", "spec", "status"}, {"spec"}),
    "PodGroupSpec": ({"disruptionMode", "podGroupTemplateRef", "priority", "priorityClassName", "resourceClaims",
                      "schedulingConstraints", "schedulingPolicy"}, {"schedulingPolicy"}),
    "PodGroupTemplateReference": ({"workload"}, set()),
    "WorkloadPodGroupTemplateReference": ({"workloadName", "podGroupTemplateName"},
                                          {"workloadName", "podGroupTemplateName"}),
    "PodGroupSchedulingPolicy": ({"basic", "gang"}, set()),
    "GangSchedulingPolicy": ({"minCount"}, {"minCount"}),
    "Workload": ({"apiVersion", "kind", "metadata", "spec"}, {"spec"}),
    "WorkloadSpec": ({"controllerRef", "podGroupTemplates"}, {"podGroupTemplates"}),
    "PodGroupTemplate": ({"disruptionMode", "name", "priority", "priorityClassName", "resourceClaims",
                          "schedulingConstraints", "schedulingPolicy"}, {"name", "schedulingPolicy"}),
    "PodSchedulingGroup": ({"podGroupName"}, set()),
}
#: Where each object type sits: (the object type, the path of keys to it; "[]" is every item of a list).
API_PATHS = {
    "PodGroup": [("PodGroup", ()), ("PodGroupSpec", ("spec",)),
                 ("PodGroupTemplateReference", ("spec", "podGroupTemplateRef")),
                 ("WorkloadPodGroupTemplateReference", ("spec", "podGroupTemplateRef", "workload")),
                 ("PodGroupSchedulingPolicy", ("spec", "schedulingPolicy")),
                 ("GangSchedulingPolicy", ("spec", "schedulingPolicy", "gang"))],
    "Workload": [("Workload", ()), ("WorkloadSpec", ("spec",)), ("PodGroupTemplate", ("spec", "podGroupTemplates", "[]")),
                 ("PodGroupSchedulingPolicy", ("spec", "podGroupTemplates", "[]", "schedulingPolicy")),
                 ("GangSchedulingPolicy", ("spec", "podGroupTemplates", "[]", "schedulingPolicy", "gang"))],
}


def api_field_problems(doc: dict) -> list[str]:
    """Fields of a v1alpha2 object that the 1.36 API reference does not list, and required ones it lacks."""
    out = []
    for type_name, path in API_PATHS[doc["kind"]]:
        for node in _nodes(doc, path):
            fields, required = API_FIELDS[type_name]
            out += [f"{type_name}.{k}: not in the API reference" for k in set(node) - fields]
            out += [f"{type_name}.{k}: required" for k in required - set(node)]
    return out


def _nodes(doc, path):
    here = [doc]
    for key in path:
        here = [x for n in here for x in (n if key == "[]" else [n.get(key)]) if x is not None]
    return [n for n in here if isinstance(n, dict)]


# --- building blocks --------------------------------------------------------------------------------------------


def node(gpus="4"):
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "gpu-0"}, "status": {"allocatable": {GPU: gpus}}}


def pod_group(name="train", policy=None, template=None, namespace=None, **spec):
    meta = {"name": name} | ({"namespace": namespace} if namespace else {})
    body = {"schedulingPolicy": {"gang": {"minCount": 2}} if policy is None else policy}
    if template is not None:
        body["podGroupTemplateRef"] = {"workload": {"workloadName": template[0], "podGroupTemplateName": template[1]}}
    return {"apiVersion": API, "kind": "PodGroup", "metadata": meta, "spec": body | spec}


def workload(name="train", templates=None):
    templates = [{"name": "workers", "schedulingPolicy": {"gang": {"minCount": 2}}}] if templates is None else templates
    return {"apiVersion": API, "kind": "Workload", "metadata": {"name": name}, "spec": {"podGroupTemplates": templates}}


def group_job(name="train", pods=4, group="train", namespace=None):
    """A batch/v1 Job whose pod template joins PodGroup ``group`` (``spec.schedulingGroup.podGroupName``)."""
    meta = {"name": name, "annotations": {"gangkit/run-time": "10m"}} | ({"namespace": namespace} if namespace else {})
    pod = {"restartPolicy": "Never", "containers": [{"name": "worker", "image": "trainer:1",
                                                     "resources": {"limits": {GPU: "1"}}}]}
    if group is not None:
        pod["schedulingGroup"] = {"podGroupName": group}
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": meta,
            "spec": {"parallelism": pods, "template": {"spec": pod}}}


def simulation(**spec):
    return {"apiVersion": "gangkit/v1alpha1", "kind": "Simulation", "metadata": {"name": "sim"}, "spec": spec}


def v1alpha1_workload(name="old"):
    return {"apiVersion": "scheduling.k8s.io/v1alpha1", "kind": "Workload", "metadata": {"name": name},
            "spec": {"podGroups": [{"name": "workers", "policy": {"gang": {"minCount": 2}}}]}}


def load_noting(source):
    """Load, returning the scenario and its warnings (each also emitted once as a GangkitInputWarning)."""
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        sc = load_manifests(source)
    assert [str(w.message) for w in seen if issubclass(w.category, GangkitInputWarning)] == sc.warnings
    return sc, sc.warnings


def example_docs(path=EXAMPLE_136) -> list[dict]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d is not None]


# --- reading: what loads, and into what --------------------------------------------------------------------------

GOOD = [
    # (id, documents, {job: min_member}, kube_gang_release, stack, words every warning together must hold)
    case("a gang PodGroup: its minCount is the Job's gang size, and the input is a 1.36 one",
         [node(), pod_group(), group_job()], {"train": 2}, "1.36", "gang", []),
    case("a standalone PodGroup needs no Workload; the template reference is optional",
         [node(), pod_group(policy={"gang": {"minCount": 4}}), group_job()], {"train": 4}, "1.36", "gang", []),
    case("the basic policy: pods placed one by one, as 1.35's basic",
         [node(), pod_group(policy={"basic": {}}), group_job()], {"train": 1}, "1.36", "gang", []),
    case("a PodGroup made from a Workload template: the PodGroup's own policy counts",
         [node(), workload(), pod_group(template=("train", "workers")), group_job()], {"train": 2}, "1.36", "gang", []),
    case("a policy that differs from the template's: the PodGroup's is used, and the difference noted",
         [node(), workload(), pod_group(policy={"gang": {"minCount": 3}}, template=("train", "workers")), group_job()],
         {"train": 3}, "1.36", "gang", ["differs from that of template 'workers'", "applies the PodGroup's own"]),
    case("a minCount above the Job's pods is read quietly, as the API server accepts it (the pods will wait)",
         [node(), pod_group(policy={"gang": {"minCount": 5}}), group_job()], {"train": 5}, "1.36", "gang", []),
    case("PodGroup and Job in one namespace",
         [node(), pod_group(namespace="team-a"), group_job(namespace="team-a")], {"train": 2}, "1.36", "gang", []),
    case("an explicit kubeGangRelease 1.36 agrees", [node(), pod_group(), group_job(), simulation(kubeGangRelease="1.36")],
         {"train": 2}, "1.36", "gang", []),
    case("the stack is the Simulation's: v1alpha2 objects set the release, not the stack",
         [node(), pod_group(), group_job(), simulation(stack="kueue+kube-gang")], {"train": 2}, "1.36",
         "kueue+kube-gang", []),
    case("fields of features gangkit does not model are listed as not read",
         [node(), pod_group(priorityClassName="high", disruptionMode="PodGroup"), group_job()], {"train": 2}, "1.36",
         "gang", ["PodGroup train: spec.priorityClassName", "PodGroup train: spec.disruptionMode"]),
    case("a typo inside schedulingGroup is listed, with the field it resembles",
         [node(), pod_group(), edit(group_job(), "spec.template.spec.schedulingGroup.podGroupNme", "x")],
         {"train": 2}, "1.36", "gang", ["schedulingGroup.podGroupNme (did you mean podGroupName?)"]),
    case("a PodGroup no Job names is noted as unused (so is the Workload only it names)",
         [node(), workload(), pod_group(template=("train", "workers")), group_job(group=None)], {"train": None}, "1.36",
         "gang", ["PodGroup train (scheduling.k8s.io/v1alpha2) is not used",
                  "Workload train (scheduling.k8s.io/v1alpha2) is not used"]),
    case("schedulingGroup in a StatefulSet: its pods are one gang of the PodGroup",
         [node(), pod_group(), {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "s"},
                                "spec": {"replicas": 2, "podManagementPolicy": "Parallel",
                                         "template": group_job()["spec"]["template"]}}],
         {"s": 2}, "1.36", "gang", ["its pods serve until the run's horizon"]),
    case("bare Pods that name one PodGroup are one gang",
         [node(), pod_group()] + [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{i}"},
                                   "spec": group_job()["spec"]["template"]["spec"]} for i in range(3)],
         {"train": 2}, "1.36", "gang", ["no gangkit/run-time annotation"]),
    case("schedulingGroup in a JobSet is not read (its CRD's pod spec has no such field): listed, its PodGroup unused",
         [node(), pod_group(), {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "metadata": {"name": "s"},
                                "spec": {"replicatedJobs": [{"name": "w", "template": {"spec": {
                                    "parallelism": 2, "template": group_job()["spec"]["template"]}}}]}}],
         {"s": None}, "1.36", "gang", ["spec.template.spec.schedulingGroup", "PodGroup train"]),
    case("1.35's manifests under an explicit 1.36: read as the PodGroups they would be, with a note",
         example_docs(EXAMPLE_135)[:-1] + [simulation(stack="kube-gang", kubeGangRelease="1.36")],
         {"small": None, "big": 4}, "1.36", "kube-gang", ["1.36 no longer serves"]),
    case("1.35's manifests stay a 1.35 input", example_docs(EXAMPLE_135), {"small": None, "big": 4}, "1.35",
         "kube-gang", []),
]


@pytest.mark.parametrize("source, gangs, release, stack, words", GOOD)
def test_reading_good_input(source, gangs, release, stack, words):
    sc, notes = load_noting(source)
    assert {j.name: j.min_member for j in sc.jobs} == gangs
    assert (sc.settings.kube_gang_release, sc.settings.stack) == (release, stack)
    text = "\n".join(notes)
    assert all(w in text for w in words), notes
    assert bool(notes) == bool(words), notes


BAD = [
    # (id, documents, the one problem: object, field, words)
    case("a Job naming a PodGroup the input lacks", [node(), group_job(group="nope")],
         "Job train", "spec.template.spec.schedulingGroup.podGroupName", "names PodGroup 'nope' (scheduling.k8s.io/v1alpha2)"),
    case("the PodGroup in another namespace is not the Job's", [node(), pod_group(namespace="team-b"), group_job()],
         "Job train", "spec.template.spec.schedulingGroup.podGroupName", "in namespace 'default', which is not in the input"),
    case("schedulingGroup that is no mapping", [node(), pod_group(), edit(group_job(), "spec.template.spec.schedulingGroup", "x")],
         "Job train", "spec.template.spec.schedulingGroup", "expected a mapping with podGroupName"),
    case("a podGroupName that is no name", [node(), pod_group(),
                                             edit(group_job(), "spec.template.spec.schedulingGroup.podGroupName", 7)],
         "Job train", "spec.template.spec.schedulingGroup.podGroupName", "expected the name of a PodGroup"),
    case("minCount 0", [node(), pod_group(policy={"gang": {"minCount": 0}}), group_job()],
         "PodGroup train", "spec.schedulingPolicy.gang.minCount", "expected a whole number >= 1, got 0"),
    case("minCount that is not whole", [node(), pod_group(policy={"gang": {"minCount": 2.5}}), group_job()],
         "PodGroup train", "spec.schedulingPolicy.gang.minCount", "expected a whole number >= 1, got 2.5"),
    case("minCount as a string", [node(), pod_group(policy={"gang": {"minCount": "2"}}), group_job()],
         "PodGroup train", "spec.schedulingPolicy.gang.minCount", "expected a whole number >= 1, got '2'"),
    case("minCount as YAML true", [node(), pod_group(policy={"gang": {"minCount": True}}), group_job()],
         "PodGroup train", "spec.schedulingPolicy.gang.minCount", "expected a whole number >= 1, got True"),
    case("a gang without minCount", [node(), pod_group(policy={"gang": {}}), group_job()],
         "PodGroup train", "spec.schedulingPolicy.gang.minCount", "expected a whole number >= 1, got None"),
    case("minCount beyond an int32", [node(), pod_group(policy={"gang": {"minCount": 2**31}}), group_job()],
         "PodGroup train", "spec.schedulingPolicy.gang.minCount", "(an int32 in the Kubernetes API)"),
    case("both policies", [node(), pod_group(policy={"gang": {"minCount": 2}, "basic": {}}), group_job()],
         "PodGroup train", "spec.schedulingPolicy", "expected exactly one of gang or basic"),
    case("no policy at all (it is required)", [node(), edit(pod_group(), "spec", {}), group_job()],
         "PodGroup train", "spec.schedulingPolicy", "(schedulingPolicy is required)"),
    case("a basic policy that is no mapping", [node(), pod_group(policy={"basic": "yes"}), group_job()],
         "PodGroup train", "spec.schedulingPolicy.basic", "expected an empty mapping"),
    case("a template reference to a Workload the input lacks", [node(), pod_group(template=("nope", "workers")), group_job()],
         "PodGroup train", "spec.podGroupTemplateRef.workload.workloadName", "names Workload 'nope'"),
    case("a template reference to a template the Workload lacks",
         [node(), workload(), pod_group(template=("train", "ps")), group_job()],
         "PodGroup train", "spec.podGroupTemplateRef.workload.podGroupTemplateName",
         "names template 'ps', which Workload 'train' does not list (it lists 'workers')"),
    case("a template reference without its workload", [node(), pod_group(podGroupTemplateRef={}), group_job()],
         "PodGroup train", "spec.podGroupTemplateRef.workload", "expected workload: {workloadName, podGroupTemplateName}"),
    case("a template reference with an empty template name",
         [node(), workload(), pod_group(template=("train", "")), group_job()],
         "PodGroup train", "spec.podGroupTemplateRef.workload.podGroupTemplateName", "expected a non-empty name"),
    case("a Workload without templates", [node(), edit(workload(), "spec", {})],
         "Workload train", "spec.podGroupTemplates", "expected a list of at least one pod group template"),
    case("a Workload with nine templates",
         [node(), workload(templates=[{"name": f"t{i}", "schedulingPolicy": {"basic": {}}} for i in range(9)])],
         "Workload train", "spec.podGroupTemplates", "expected at most 8 pod group templates"),
    case("two templates of one name",
         [node(), workload(templates=[{"name": "w", "schedulingPolicy": {"basic": {}}}] * 2)],
         "Workload train", "spec.podGroupTemplates[1].name", "expected a unique name"),
    case("a template without a policy", [node(), workload(templates=[{"name": "w"}])],
         "Workload train", "spec.podGroupTemplates[0].schedulingPolicy", "(schedulingPolicy is required)"),
    case("v1alpha2 objects under an explicit 1.35", [node(), pod_group(), group_job(), simulation(kubeGangRelease="1.35")],
         "Simulation sim", "spec.kubeGangRelease", "PodGroup train is scheduling.k8s.io/v1alpha2, which Kubernetes "
                                                   "1.35 does not serve"),
    case("v1alpha1 and v1alpha2 gang objects in one input", [node(), v1alpha1_workload(), pod_group(), group_job()],
         "PodGroup train", "apiVersion", "got scheduling.k8s.io/v1alpha2 here and scheduling.k8s.io/v1alpha1 in "
                                         "Workload old"),
    case("workloadRef and schedulingGroup in one pod template",
         [node(), pod_group(), edit(group_job(), "spec.template.spec.workloadRef", {"name": "old", "podGroup": "w"})],
         "Job train", "spec.template.spec.schedulingGroup", "or spec.workloadRef (1.35, v1alpha1, which 1.36 replaced), "
                                                            "not both"),
    case("two Jobs in one PodGroup", [node(), pod_group(), group_job(), group_job(name="other")],
         "Job other", "spec.template.spec.schedulingGroup.podGroupName", "'train' is already used by Job train"),
    case("a Volcano PodGroup and a 1.36 PodGroup on one Job",
         [node(), {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup", "metadata": {"name": "train"},
                   "spec": {"minMember": 2}}, pod_group(),
          edit(group_job(), "spec.template.metadata.annotations", {"scheduling.k8s.io/group-name": "train"})],
         "Job train", "spec.template.spec.schedulingGroup", "names a second gang"),
]


@pytest.mark.parametrize("source, obj, field, words", BAD)
def test_bad_input_is_one_clear_error(source, obj, field, words):
    with pytest.raises(ScenarioError) as info:
        load_manifests(source)
    problems = [(p.obj, p.field, p.message) for p in info.value.problems]
    assert len(problems) == 1 and problems[0][:2] == (obj, field) and words in problems[0][2], problems


def test_the_registry_reads_both_v1alpha2_kinds_with_a_field_list():
    from gangkit.manifests.load import REGISTRY

    assert {(k.kind, k.name) for k in REGISTRY.kinds if k.api_version == API} == {
        ("Workload", "KubeWorkloadV1alpha2"), ("PodGroup", "KubePodGroup")}
    assert {"KubeWorkloadV1alpha2", "KubePodGroup"} <= set(KNOWN_FIELDS)


# --- the known fields are the API reference's ---------------------------------------------------------------------

KNOWN = [
    case("PodGroup", "KubePodGroup", "PodGroup"),
    case("Workload", "KubeWorkloadV1alpha2", "Workload"),
]


@pytest.mark.parametrize("role, kind", KNOWN)
def test_every_field_gangkit_knows_is_in_the_api_reference(role, kind):
    """gangkit's field tree, written as an object, has no field the 1.36 API reference lacks."""
    def instance(tree):
        if tree is True:
            return {}
        if isinstance(tree, list):
            return [instance(tree[0])]
        return {k: instance(v) for k, v in tree.items()}

    doc = instance(KNOWN_FIELDS[role]) | {"kind": kind}
    assert [p for p in api_field_problems(doc) if p.endswith("not in the API reference")] == []
    assert set(SCHEDULING_GROUP) == API_FIELDS["PodSchedulingGroup"][0]


def test_the_field_check_finds_what_it_looks_for():
    bad = pod_group(template=("w", "t"), colour="blue")
    del bad["spec"]["schedulingPolicy"]
    assert sorted(api_field_problems(bad)) == ["PodGroupSpec.colour: not in the API reference",
                                               "PodGroupSpec.schedulingPolicy: required"]


# --- writing back: dump_manifests ---------------------------------------------------------------------------------


def _scenario(*jobs: Job, release="1.36", stack="kube-gang") -> Scenario:
    return Scenario(nodes(2, gpus=4), list(jobs), settings=RunSettings(stack=stack, kube_gang_release=release), name="rt")


ROUND_TRIP = [
    # (id, scenario, the (apiVersion, kind) of the gang objects written, the pod field naming the gang)
    case("1.36: a PodGroup per gang, and the pods' schedulingGroup",
         _scenario(job("a", pods=4, min_member=4), job("b", pods=3, min_member=2)),
         [(API, "PodGroup"), (API, "PodGroup")], "schedulingGroup"),
    case("1.36 in a namespace, behind Kueue's stack",
         _scenario(job("a", pods=2, min_member=2, namespace="team-a", queue="team-a"), stack="kueue+kube-gang"),
         [(API, "PodGroup")], "schedulingGroup"),
    case("1.36: a job of one pod gang is a gang of 1",
         _scenario(Job("a", [PodSet("workers", 3, 1)], run_time=60.0, min_member=1)), [(API, "PodGroup")],
         "schedulingGroup"),
    case("1.35 as before: a v1alpha1 Workload and workloadRef", _scenario(job("a", pods=4, min_member=4), release="1.35"),
         [("scheduling.k8s.io/v1alpha1", "Workload")], "workloadRef"),
    case("1.36 with a stack without kube-gang: no Kubernetes gang objects",
         _scenario(job("a", pods=4, min_member=4), stack="pod"), [], None),
]


@pytest.mark.parametrize("scenario, objects, pod_field", ROUND_TRIP)
def test_dump_then_load_gives_the_same_jobs_and_settings(scenario, objects, pod_field):
    text = dump_manifests(scenario)
    docs = list(yaml.safe_load_all(text))
    written = [(d["apiVersion"], d["kind"]) for d in docs if d["apiVersion"].startswith("scheduling.k8s.io/v1alpha")]
    assert written == objects
    pods = [d["spec"]["template"]["spec"] for d in docs if d["kind"] == "Job"]
    assert [next((k for k in ("schedulingGroup", "workloadRef") if k in p), None) for p in pods] == [pod_field] * len(pods)
    again = load_manifests(text)
    assert again.warnings == []
    assert [dataclasses.replace(j, labels={}) for j in again.jobs] == [dataclasses.replace(j, labels={}) for j in scenario.jobs]
    assert again.settings == scenario.settings


def test_the_example_round_trips_and_is_written_as_1_36():
    sc = load_file(EXAMPLE_136)
    text = dump_manifests(sc)
    again = load_manifests(text)
    assert (again.jobs, again.settings, again.warnings) == (sc.jobs, sc.settings, [])
    assert f"apiVersion: {API}" in text and "workloadRef" not in text


@pytest.mark.parametrize("source", [case("the example", EXAMPLE_136), case("what dump_manifests writes", "dump")])
def test_v1alpha2_objects_use_only_the_api_references_fields(source):
    text = EXAMPLE_136.read_text() if source != "dump" else dump_manifests(load_file(EXAMPLE_136))
    docs = [d for d in yaml.safe_load_all(text) if d is not None and d.get("apiVersion") == API]
    assert docs and [p for d in docs for p in api_field_problems(d)] == []
    groups = [d["spec"]["template"]["spec"]["schedulingGroup"] for d in yaml.safe_load_all(text)
              if d and d["kind"] == "Job" and "schedulingGroup" in d["spec"]["template"]["spec"]]
    assert groups and all(set(g) <= API_FIELDS["PodSchedulingGroup"][0] for g in groups)


@requires_schemas
@pytest.mark.parametrize("source", [case("the example", EXAMPLE_136), case("what dump_manifests writes", "dump")])
def test_the_jobs_without_schedulinggroup_are_valid_for_the_1_35_schema(source):
    """What the 1.35 OpenAPI knows of a 1.36 Job (all but the new field) is valid for it, strictly."""
    text = EXAMPLE_136.read_text() if source != "dump" else dump_manifests(load_file(EXAMPLE_136))
    name, validator = _openapi_135_validator(*OPENAPI_135[("batch/v1", "Job")])
    jobs = [copy.deepcopy(d) for d in yaml.safe_load_all(text) if d and d["kind"] == "Job"]
    assert any("schedulingGroup" in d["spec"]["template"]["spec"] for d in jobs)
    for doc in jobs:
        doc["spec"]["template"]["spec"].pop("schedulingGroup", None)
        errors = [e.message for e in validator.iter_errors(doc)]
        assert errors == [], (name, errors)
    with_field = next(d for d in yaml.safe_load_all(text) if d and d["kind"] == "Job"
                      and "schedulingGroup" in d["spec"]["template"]["spec"])
    assert list(validator.iter_errors(with_field)), "the 1.35 schema should not know schedulingGroup"


# --- the example, and what 1.36 changes ---------------------------------------------------------------------------


def test_the_example_loads_quietly_with_the_1_35_examples_jobs():
    with warnings.catch_warnings():
        warnings.simplefilter("error", GangkitInputWarning)
        old, new = load_file(EXAMPLE_135), load_file(EXAMPLE_136)
    assert (new.warnings, new.settings.kube_gang_release, old.settings.kube_gang_release) == ([], "1.36", "1.35")
    assert new.jobs == old.jobs and new.nodes == old.nodes and new.settings.stack == old.settings.stack == "kube-gang"


def _held_at_permit_135(sc: Scenario) -> float:
    """GPU-seconds 1.35 holds idle on the example: the big gang's workers that fit beside small wait at Permit,
    holding their GPUs, until small ends (each 5-minute rejection is followed at once by the same placement)."""
    small = next(j for j in sc.jobs if j.name == "small")
    free = sum(n.gpus for n in sc.nodes) - small.pod_sets[0].gpus * small.pod_sets[0].count
    return free * small.run_time


RELEASES = [
    # (id, example, what the same jobs hold idle)
    case("read from the 1.35 example: two workers hold the free GPUs at Permit until small ends",
         EXAMPLE_135, _held_at_permit_135),
    case("read from the 1.36 example: the PodGroup cycle binds none of them, nothing is held", EXAMPLE_136,
         lambda sc: 0.0),
]


@pytest.mark.parametrize("path, held", RELEASES)
def test_the_same_jobs_from_each_example_run_as_their_release_does(path, held):
    sc = load_file(path)
    r = gk.simulate(sc)
    rows = r.jobs.set_index("job")
    assert r.figures["held_idle_gpu_seconds"] == pytest.approx(held(sc))
    small = next(j for j in sc.jobs if j.name == "small")
    assert rows.loc["big", "state"] == "Finished" and rows.loc["big", "start_s"] == small.run_time
    if sc.settings.kube_gang_release == "1.36":
        assert rows.loc["big", "held_idle_gpu_s"] == 0
