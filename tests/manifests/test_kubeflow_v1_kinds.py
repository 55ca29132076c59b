"""Kubeflow training-operator v1.9's TFJob, JAXJob, PaddleJob and XGBoostJob (``kubeflow.org/v1``): tables of cases.

Each is read as the PyTorchJob is: one pod set per replica type, in the order of Kueue v0.19's integration
for the kind (TFJob Chief, Master, PS, Worker, Evaluator; JAXJob Worker; PaddleJob and XGBoostJob Master,
Worker), named in lower case; the operator's PodGroup of ``runPolicy.schedulingPolicy.minAvailable`` pods
(default every pod) when the pods go to a gang scheduler. The tests run them under the ``gang``,
``kueue+gang`` and ``pod`` stacks, give a queue-labelled one to ``gangkit admit``, write them back, and
validate every manifest they read or gangkit writes against the operator's CRDs.
"""

from __future__ import annotations

import re
import warnings
from collections import Counter

import pytest
import yaml

import gangkit as gk
from gangkit.analysis.admit import admit
from gangkit.manifests import dump_manifests, load_manifests
from gangkit.manifests.kueue_snapshot import load_kueue
from gangkit.model.errors import ScenarioError
from gangkit.model.jobs import JAXJOB, PADDLEJOB, TFJOB, XGBOOSTJOB

from conftest import case

try:
    from schema_util import requires_schemas, validate_manifest
except ImportError:  # tests/ imported as a package
    from tests.schema_util import requires_schemas, validate_manifest

FIELDS = {"TFJob": ("tfReplicaSpecs", "tensorflow"), "JAXJob": ("jaxReplicaSpecs", "jax"),
          "PaddleJob": ("paddleReplicaSpecs", "paddle"), "XGBoostJob": ("xgbReplicaSpecs", "xgboost")}
NODES = [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"n{i}"},
          "status": {"allocatable": {"nvidia.com/gpu": "8", "cpu": "64"}}} for i in range(2)]  # 16 GPUs in all
QUEUES = [
    {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor", "metadata": {"name": "default-flavor"}},
    {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue", "metadata": {"name": "cq"},
     "spec": {"namespaceSelector": {}, "resourceGroups": [{"coveredResources": ["nvidia.com/gpu"], "flavors": [
         {"name": "default-flavor", "resources": [{"name": "nvidia.com/gpu", "nominalQuota": 32}]}]}]}},
    {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue", "metadata": {"name": "lq", "namespace": "default"},
     "spec": {"clusterQueue": "cq"}},
]
QUEUED = {"kueue.x-k8s.io/queue-name": "lq"}


def job(kind: str, policy: dict | None = None, scheduler: str | None = "volcano", labels: dict | None = None,
        name: str = "train", **replicas) -> dict:
    """A job of ``kind`` with one replica spec per keyword: ``Worker=(replicas, gpus)``, in the order given."""
    field, container = FIELDS[kind]
    extra = {"schedulerName": scheduler} if scheduler else {}
    specs = {rtype: {"replicas": n, "template": {"spec": {**extra, "containers": [
        {"name": container, "image": "trainer:1.0", "resources": {"limits": {"nvidia.com/gpu": str(gpus)}}}]}}}
        for rtype, (n, gpus) in replicas.items()}
    spec = {field: specs} | ({"runPolicy": {"schedulingPolicy": policy}} if policy is not None else {})
    meta = {"name": name, "namespace": "default", "annotations": {"gangkit/run-time": "1h"}}
    return {"apiVersion": "kubeflow.org/v1", "kind": kind, "metadata": meta | ({"labels": labels} if labels else {}),
            "spec": spec}


def read(*docs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load_manifests([*NODES, *docs])


# (document, pod sets (name, pods, GPUs each), the operator's gang size (None: every pod), framework)
KINDS = [
    case("a TFJob: chief, ps, worker, evaluator, whatever the order written",
         job("TFJob", Evaluator=(1, 1), Worker=(2, 2), PS=(1, 0), Chief=(1, 1)),
         [("chief", 1, 1), ("ps", 1, 0), ("worker", 2, 2), ("evaluator", 1, 1)], None, TFJOB),
    case("a TFJob with the legacy Master instead of a Chief", job("TFJob", Worker=(2, 1), Master=(1, 1)),
         [("master", 1, 1), ("worker", 2, 1)], None, TFJOB),
    case("a TFJob's replica types in lower case are renamed, as the operator's defaulting does",
         job("TFJob", worker=(2, 1), ps=(1, 0)), [("ps", 1, 0), ("worker", 2, 1)], None, TFJOB),
    case("a TFJob gangs minAvailable of its pods", job("TFJob", policy={"minAvailable": 3}, PS=(1, 0), Worker=(3, 1)),
         [("ps", 1, 0), ("worker", 3, 1)], 3, TFJOB),
    case("a JAXJob: workers only", job("JAXJob", Worker=(4, 2)), [("worker", 4, 2)], None, JAXJOB),
    case("a JAXJob gangs minAvailable of its workers", job("JAXJob", policy={"minAvailable": 2}, Worker=(4, 2)),
         [("worker", 4, 2)], 2, JAXJOB),
    case("a PaddleJob: master then worker", job("PaddleJob", Worker=(2, 2), Master=(1, 1)),
         [("master", 1, 1), ("worker", 2, 2)], None, PADDLEJOB),
    case("a PaddleJob of workers alone", job("PaddleJob", Worker=(3, 2)), [("worker", 3, 2)], None, PADDLEJOB),
    case("an XGBoostJob: master then worker", job("XGBoostJob", Worker=(3, 1), Master=(1, 0)),
         [("master", 1, 0), ("worker", 3, 1)], None, XGBOOSTJOB),
    case("an XGBoostJob gangs minAvailable of its pods",
         job("XGBoostJob", policy={"minAvailable": 2}, Master=(1, 0), Worker=(3, 1)),
         [("master", 1, 0), ("worker", 3, 1)], 2, XGBOOSTJOB),
]


@pytest.mark.parametrize("doc, pod_sets, min_member, framework", KINDS)
def test_a_job_has_a_pod_set_per_replica_type_and_the_operators_gang(doc, pod_sets, min_member, framework):
    [j] = read(doc).jobs
    assert [(ps.name, ps.count, ps.gpus) for ps in j.pod_sets] == pod_sets
    assert (j.min_member, j.framework) == (min_member, framework)


@pytest.mark.parametrize("doc, pod_sets, min_member, framework", KINDS)
@pytest.mark.parametrize("stack", ["gang", "kueue+gang", "pod"])
def test_each_stack_runs_the_job_with_its_gang_size_and_pod_sets(stack, doc, pod_sets, min_member, framework):
    queued = job(**{**_args(doc), "labels": QUEUED}) if stack.startswith("kueue") else doc
    result = gk.simulate(read(*(QUEUES if stack.startswith("kueue") else []), queued), stack=stack)
    [row] = result.jobs.to_dict("records")
    pods = sum(n for _, n, _ in pod_sets)
    assert (row["pods"], row["gang_size"], row["state"]) == (pods, min_member or pods, "Finished")
    assert Counter(result.pods["pod_set"]) == {name: n for name, n, _ in pod_sets}


def _args(doc: dict) -> dict:
    """The arguments of :func:`job` that made ``doc`` (to make it again with a queue label)."""
    spec = doc["spec"]
    specs = spec[FIELDS[doc["kind"]][0]]
    gpus = {t: int(s["template"]["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"]) for t, s in specs.items()}
    return {"kind": doc["kind"], "policy": spec.get("runPolicy", {}).get("schedulingPolicy"),
            **{t: (s["replicas"], gpus[t]) for t, s in specs.items()}}


# (stack, pods bound): 24 GPUs of workers on 16 GPUs of nodes
TOO_BIG = job("TFJob", PS=(1, 0), Worker=(3, 8))
TOO_BIG_RUNS = [
    case("a gang scheduler binds none of a gang that does not fit", "gang", 0),
    case("Kueue admits it (quota 32 GPUs), and the gang scheduler still binds none", "kueue+gang", 0),
    case("pod by pod, the scheduler binds what fits and the rest wait", "pod", 3),
]


@pytest.mark.parametrize("stack, bound", TOO_BIG_RUNS)
def test_a_job_larger_than_the_cluster_is_gang_scheduled_only_by_a_gang_stack(stack, bound):
    doc = job(**{**_args(TOO_BIG), "labels": QUEUED}) if stack.startswith("kueue") else TOO_BIG
    result = gk.simulate(read(*(QUEUES if stack.startswith("kueue") else []), doc), stack=stack, horizon=7200.0)
    assert int(result.pods["bound_s"].notna().sum()) == bound
    assert result.jobs["state"].tolist() != ["Finished"]


BAD = [
    case("a TFJob with a Chief and a Master",
         job("TFJob", Chief=(1, 1), Master=(1, 1)),
         "TFJob default/train: spec.tfReplicaSpecs: expected at most one of Chief and Master"),
    case("a replica type the TFJob API does not define",
         job("TFJob", Launcher=(1, 1)),
         "TFJob default/train: spec.tfReplicaSpecs.Launcher: expected a replica type Chief or Master or PS or Worker "
         "or Evaluator (the TFJob API defines no other"),
    case("a JAXJob Master (the JAXJob webhook allows Worker only)", job("JAXJob", Master=(1, 1)),
         "JAXJob default/train: spec.jaxReplicaSpecs.Master: expected a replica type Worker (the JAXJob webhook"),
    case("a PaddleJob Chief", job("PaddleJob", Chief=(1, 1)),
         "PaddleJob default/train: spec.paddleReplicaSpecs.Chief: expected a replica type Master or Worker"),
    case("a PaddleJob naming its workers twice, in two cases", job("PaddleJob", worker=(1, 1), Worker=(1, 1)),
         "PaddleJob default/train: spec.paddleReplicaSpecs.Worker: expected one replica spec per replica type"),
    case("an XGBoostJob without a Master", job("XGBoostJob", Worker=(2, 1)),
         "XGBoostJob default/train: spec.xgbReplicaSpecs.Master: expected a Master replica spec"),
    case("an XGBoostJob of two Masters", job("XGBoostJob", Master=(2, 1), Worker=(2, 1)),
         "XGBoostJob default/train: spec.xgbReplicaSpecs.Master.replicas: expected 1 Master replica"),
    case("minAvailable above the pods", job("JAXJob", policy={"minAvailable": 5}, Worker=(4, 1)),
         "JAXJob default/train: spec.runPolicy.schedulingPolicy.minAvailable: expected a whole number"),
    case("a bad GPU count names its replica spec", job("PaddleJob", Worker=(2, "x")),
         "PaddleJob default/train: spec.paddleReplicaSpecs.Worker.template.spec.containers[0].resources.limits."
         "nvidia.com/gpu"),
]


@pytest.mark.parametrize("doc, message", BAD)
def test_a_bad_job_is_one_error_naming_the_field(doc, message):
    with pytest.raises(ScenarioError, match=re.escape(message)):
        read(doc)


UNMODELLED = [
    case("a TFJob's successPolicy", "TFJob", "successPolicy", "AllWorkers"),
    case("a TFJob's enableDynamicWorker", "TFJob", "enableDynamicWorker", True),
    case("a PaddleJob's elasticPolicy", "PaddleJob", "elasticPolicy", {"minReplicas": 1, "maxReplicas": 2}),
]


@pytest.mark.parametrize("kind, key, value", UNMODELLED)
def test_a_field_gangkit_does_not_model_is_named_in_a_warning(kind, key, value):
    doc = job(kind, Worker=(2, 1))
    doc["spec"][key] = value
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        load_manifests([*NODES, doc])
    assert any(f"spec.{key}" in str(w.message) for w in caught), [str(w.message) for w in caught]


ADMITTED = [  # (document, pod sets of its Workload); the ClusterQueue has 32 GPUs
    case("a TFJob's Workload has its replica types in Kueue's order",
         job("TFJob", labels=QUEUED, Worker=(2, 2), Chief=(1, 1), PS=(1, 0)), {"chief": 1, "ps": 1, "worker": 2}),
    case("a JAXJob's one pod set is worker, not main", job("JAXJob", labels=QUEUED, Worker=(4, 2)), {"worker": 4}),
    case("a PaddleJob's Workload", job("PaddleJob", labels=QUEUED, Master=(1, 1), Worker=(2, 2)),
         {"master": 1, "worker": 2}),
    case("an XGBoostJob's Workload", job("XGBoostJob", labels=QUEUED, Master=(1, 0), Worker=(3, 1)),
         {"master": 1, "worker": 3}),
]


@pytest.mark.parametrize("doc, counts", ADMITTED)
def test_gangkit_admit_gives_a_queue_labelled_job_kueues_workload(doc, counts):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = admit(load_kueue(QUEUES + [doc]), cycles=None)
    assert {k: v["counts"] for k, v in report["admitted"].items()} == {"default/train": counts}


def test_a_job_over_quota_waits_whole_in_gangkit_admit():
    doc = job("JAXJob", labels=QUEUED, Worker=(5, 8))  # 40 GPUs on a quota of 32
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = admit(load_kueue(QUEUES + [doc]), cycles=None)
    assert (report["admitted"], list(report["pending"])) == ({}, ["default/train"])


@pytest.mark.parametrize("doc, pod_sets, min_member, framework", KINDS)
def test_a_job_reads_back_from_its_dump_as_the_same_kind(doc, pod_sets, min_member, framework):
    sc = read(doc)
    written = [d for d in yaml.safe_load_all(dump_manifests(sc)) if d["kind"] == doc["kind"]]
    assert len(written) == 1
    assert read(*written).jobs == sc.jobs


READ_DOCS = [pytest.param(d, id=f"read: {i}") for i, d in
             [(p.id, p.values[0]) for p in KINDS + ADMITTED] + [("too big", TOO_BIG)]]
WRITTEN_DOCS = [pytest.param(d, id=f"written: {p.id}") for p in KINDS
                for d in yaml.safe_load_all(dump_manifests(read(p.values[0]))) if d["kind"] in FIELDS]


@requires_schemas
@pytest.mark.parametrize("doc", READ_DOCS + WRITTEN_DOCS)
def test_every_manifest_read_or_written_is_valid_for_the_operators_crd(doc):
    assert validate_manifest(yaml.safe_load(yaml.safe_dump(doc))) is not None


@requires_schemas
@pytest.mark.parametrize("doc", [pytest.param(d, id=f"{d['kind']} {d['metadata']['name']}") for d in QUEUES])
def test_the_queues_of_these_cases_are_valid_kueue_objects(doc):
    assert validate_manifest(doc) is not None


@requires_schemas
@pytest.mark.parametrize("kind", sorted(FIELDS))
def test_every_field_gangkit_knows_is_in_the_operators_crd(kind):
    from gangkit.manifests.training import KNOWN_FIELDS

    from conftest import shared_path

    crd = yaml.safe_load(shared_path("schemas", "kubeflow", f"kubeflow.org_{kind.lower()}s.yaml").read_text())
    [served] = [v for v in crd["spec"]["versions"] if v["name"] == "v1"]
    spec = served["schema"]["openAPIV3Schema"]["properties"]["spec"]
    known = KNOWN_FIELDS[kind]["spec"]
    run_policy = spec["properties"]["runPolicy"]["properties"]
    assert set(known) <= set(spec["properties"])
    assert set(known["runPolicy"]) <= set(run_policy)
    assert set(known["runPolicy"]["schedulingPolicy"]) <= set(run_policy["schedulingPolicy"]["properties"])
    replica = spec["properties"][FIELDS[kind][0]]["additionalProperties"]["properties"]
    assert set(known[FIELDS[kind][0]]["*"]) <= set(replica)


CHECKED = [  # 16 GPUs of nodes; a sync job of Workers of 8 GPUs that needs 3 at once can never start
    case("a PyTorchJob too big for the nodes", "PyTorchJob"),
    case("a TFJob too big for the nodes", "TFJob"),
    case("a JAXJob too big for the nodes", "JAXJob"),
    case("a PaddleJob too big for the nodes", "PaddleJob"),
    case("an XGBoostJob too big for the nodes", "XGBoostJob"),
]


def _check_workers(kind: str, replicas: int, gpus: int) -> tuple[str, list]:
    """``gangkit check`` on the NODES and one ``kind`` of ``replicas`` Workers of ``gpus`` GPUs (an XGBoostJob
    also gets its required Master): the replica specs' field, and the findings."""
    from gangkit.consistency import check

    field, container = {**FIELDS, "PyTorchJob": ("pytorchReplicaSpecs", "pytorch")}[kind]
    doc = {"apiVersion": "kubeflow.org/v1", "kind": kind, "metadata": {"name": "big", "namespace": "default"},
           "spec": {field: {"Worker": {"replicas": replicas, "template": {"spec": {"containers": [
               {"name": container, "image": "trainer:1.0", "resources": {"limits": {"nvidia.com/gpu": str(gpus)}}}]}}}}}}
    if kind == "XGBoostJob":
        doc["spec"]["xgbReplicaSpecs"]["Master"] = {"replicas": 1, "template": {"spec": {"containers": [
            {"name": "xgboost", "image": "trainer:1.0"}]}}}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return field, check([*NODES, doc]).findings


@pytest.mark.parametrize("kind", CHECKED)
def test_gangkit_check_finds_that_the_gang_can_never_start(kind):
    field, findings = _check_workers(kind, replicas=3, gpus=8)
    too_small = [f for f in findings if f.code == "supply-too-small"]
    assert [(f.code, f.objects) for f in too_small] == [("supply-too-small", (f"{kind} default/big",))]
    assert (f"{kind} default/big", f"spec.{field}.Worker.replicas") in too_small[0].fields, too_small[0].fields


@pytest.mark.parametrize("kind", CHECKED)
def test_gangkit_check_names_the_replica_specs_containers_of_a_pod_no_node_holds(kind):
    field, findings = _check_workers(kind, replicas=1, gpus=16)
    fits_no_node = [f for f in findings if f.code == "pod-fits-no-node"]
    assert len(fits_no_node) == 1, [f.message for f in findings]
    assert (f"{kind} default/big", f"spec.{field}.Worker.template.spec.containers") in fits_no_node[0].fields


DUMP_GAP = ("dump_manifests (gangkit/manifests/dump.py, _documents) also writes the PodGroup the training operator "
            "makes, and reading it back finds it unused")
WHOLE_DUMPS = [
    case("a gang of every pod: no PodGroup is written", job("TFJob", Worker=(3, 1))),
    case("a Volcano gang of minAvailable pods", job("TFJob", policy={"minAvailable": 2}, Worker=(3, 1)), xfail=DUMP_GAP),
    case("a scheduler-plugins gang of every pod", job("PaddleJob", scheduler="scheduler-plugins-scheduler", Worker=(3, 1))),
    case("a scheduler-plugins gang with a timeout", job("PaddleJob", scheduler="scheduler-plugins-scheduler",
                                                        policy={"scheduleTimeoutSeconds": 120}, Worker=(3, 1)),
         xfail=DUMP_GAP),
]


@pytest.mark.parametrize("doc", WHOLE_DUMPS)
def test_a_whole_dump_reads_back_without_a_warning(doc):
    sc = read(doc)
    text = dump_manifests(sc)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert load_manifests(text).jobs == sc.jobs


@requires_schemas
@pytest.mark.parametrize("doc", [pytest.param(d, id=f"{p.id}: {d['kind']} {d['metadata']['name']}") for p in WHOLE_DUMPS
                                 for d in yaml.safe_load_all(dump_manifests(read(p.values[0])))
                                 if d["kind"] not in ("Node", "Simulation")])
def test_every_object_of_a_whole_dump_is_valid_for_its_schema(doc):
    assert validate_manifest(doc) is not None


CASES_OF_TYPES = [  # the operator's defaulting (training-operator v1.9 setTypeNameToCamelCase) runs for every v1 kind
    case("a PyTorchJob's master and worker in lower case", "PyTorchJob", "pytorchReplicaSpecs",
         {"worker": 2, "MASTER": 1}, [("master", 1), ("worker", 2)]),
    case("an XGBoostJob's master in lower case", "XGBoostJob", "xgbReplicaSpecs", {"master": 1, "Worker": 2},
         [("master", 1), ("worker", 2)]),
]


@pytest.mark.parametrize("kind, field, replicas, pod_sets", CASES_OF_TYPES)
def test_replica_types_in_another_case_are_renamed(kind, field, replicas, pod_sets):
    doc = {"apiVersion": "kubeflow.org/v1", "kind": kind, "metadata": {"name": "t", "namespace": "default"},
           "spec": {field: {t: {"replicas": n, "template": {"spec": {"containers": [{"name": "c", "image": "x"}]}}}
                            for t, n in replicas.items()}}}
    [j] = read(doc).jobs
    assert [(ps.name, ps.count) for ps in j.pod_sets] == pod_sets
