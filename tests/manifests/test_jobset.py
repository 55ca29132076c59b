"""JobSets (jobset.x-k8s.io/v1alpha2) in and out, and names made from metadata.generateName: tables of cases.

A JobSet is read as one gangkit Job with a pod set per replicatedJob, of
``replicas x min(parallelism, completions)`` pods, as Kueue's JobSet
integration counts them; ``gangkit admit`` gives its Workload those pod sets;
a JobSet's gang is named by its pod templates; the ``jobset`` export targets
write JobSets valid for the real CRD that read back into the same run.
"""

from __future__ import annotations

import re
import warnings

import pytest
import yaml

import gangkit as gk
from gangkit.manifests import load_manifests
from gangkit.manifests.export import export_manifests
from gangkit.manifests.kueue_snapshot import load_kueue
from gangkit.model.errors import ScenarioError
from gangkit.model.jobs import JOBSET, Job, PodSet
from gangkit.model.nodes import nodes
from gangkit.model.scenario import Scenario

from conftest import case, shared_path

try:
    from schema_util import fields_missing_from, requires_schemas, validate_manifest
except ImportError:  # tests/ imported as a package
    from tests.schema_util import fields_missing_from, requires_schemas, validate_manifest

NODES = """
apiVersion: v1
kind: Node
metadata: {name: n0}
status: {allocatable: {nvidia.com/gpu: "8", cpu: "64"}}
---
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {nvidia.com/gpu: "8", cpu: "64"}}
"""


def pod(gpus=0, cpu=None, **spec) -> dict:
    requests = {"cpu": cpu} if cpu else {}
    limits = {"nvidia.com/gpu": str(gpus)} if gpus else {}
    return {**spec, "containers": [{"name": "c", "image": "x", "resources": {"limits": limits, "requests": requests}}]}


def role(name, replicas=None, parallelism=None, completions=None, metadata=None, **pod_spec) -> dict:
    jspec = {k: v for k, v in (("parallelism", parallelism), ("completions", completions)) if v is not None}
    template = {"spec": pod(**pod_spec)} | ({"metadata": metadata} if metadata else {})
    entry = {"name": name, "template": {"spec": jspec | {"template": template}}}
    return entry | ({"replicas": replicas} if replicas is not None else {})


def jobset(*roles, name="train", labels=None, **meta) -> dict:
    metadata = {"name": name, "annotations": {"gangkit/run-time": "1h"}} | meta
    if labels:
        metadata["labels"] = labels
    return {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "metadata": metadata,
            "spec": {"replicatedJobs": list(roles)}}


def read(*docs, extra=""):
    text = NODES + extra + "".join("---\n" + yaml.safe_dump(d) for d in docs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load_manifests(text)


PODS = [
    case("one role of one pod", [role("workers", gpus=1)], [("workers", 1, 1)]),
    case("replicas x parallelism", [role("workers", replicas=3, parallelism=2, gpus=2)], [("workers", 6, 2)]),
    case("completions below parallelism: Kueue counts min(parallelism, completions)",
         [role("workers", replicas=2, parallelism=4, completions=3, gpus=1)], [("workers", 6, 1)]),
    case("a driver and its workers: one pod set each, named after the replicatedJob",
         [role("driver", cpu="2"), role("workers", replicas=2, parallelism=2, gpus=4)],
         [("driver", 1, 0), ("workers", 4, 4)]),
    case("replicas 0 makes no pods and no pod set", [role("idle", replicas=0, gpus=1), role("workers", gpus=1)],
         [("workers", 1, 1)]),
]


@pytest.mark.parametrize("roles, expected", PODS)
def test_a_jobset_has_a_pod_set_per_replicated_job(roles, expected):
    [j] = read(jobset(*roles)).jobs
    assert j.framework == JOBSET and j.controller == "batch"
    assert [(ps.name, ps.count, ps.gpus) for ps in j.pod_sets] == expected


GANG = """
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: pg}
spec: {minMember: 5}
"""
VOLCANO_POD = {"annotations": {"scheduling.k8s.io/group-name": "pg"}}


def test_a_volcano_podgroup_named_by_every_template_is_the_jobsets_gang():
    js = jobset(role("driver", metadata=VOLCANO_POD, gpus=1, schedulerName="volcano"),
                role("workers", replicas=2, parallelism=2, metadata=VOLCANO_POD, gpus=1, schedulerName="volcano"))
    [j] = read(js, extra=GANG).jobs
    assert (j.pod_count, j.min_member) == (5, 5)
    result = gk.simulate(read(js, extra=GANG), stack="gang")
    assert result.summary()["jobs_finished"] == 1


BAD = [
    case("no replicatedJobs", jobset(), "JobSet train: spec.replicatedJobs: expected a list of at least one"),
    case("two replicatedJobs of one name", jobset(role("w", gpus=1), role("w", gpus=1)),
         "JobSet train: spec.replicatedJobs[1].name: Duplicate value: 'w'"),
    case("negative replicas (the CRD's minimum is 0)", jobset(role("w", replicas=-1, gpus=1)),
         "JobSet train: spec.replicatedJobs[0].replicas: expected a whole number"),
    case("no pods at all", jobset(role("w", replicas=0, gpus=1)),
         "JobSet train: spec.replicatedJobs: expected at least one pod"),
    case("a bad GPU count names the field under its replicatedJob",
         jobset(role("w", gpus="x")),
         "JobSet train: spec.replicatedJobs[0].template.spec.template.spec.containers[0].resources.limits.nvidia.com/gpu"),
    case("two templates naming two gangs",
         jobset(role("a", metadata=VOLCANO_POD, gpus=1), role("b", gpus=1)),
         "JobSet train: spec.replicatedJobs[1].template.spec.template.metadata.annotations.scheduling.k8s.io/group-name: "
         "expected 'pg', as in spec.replicatedJobs[0]: gangkit models one Volcano PodGroup per JobSet"),
    case("two priority classes", jobset(role("a", gpus=1, priorityClassName="high"), role("b", gpus=1)),
         "spec.replicatedJobs[1].template.spec.template.spec.priorityClassName: expected 'high'"),
]


@pytest.mark.parametrize("doc, message", BAD)
def test_a_bad_jobset_is_one_error_naming_the_field(doc, message):
    with pytest.raises(ScenarioError, match=re.escape(message)):
        read(doc, extra=GANG)


NAMES = [
    case("the prefix and a counter, in input order", [{"generateName": "job-"}, {"generateName": "job-"}],
         ["job-1", "job-2"]),
    case("a name the input already uses is skipped", [{"name": "job-1"}, {"generateName": "job-"}],
         ["job-1", "job-2"]),
    case("a name wins over generateName", [{"name": "mine", "generateName": "job-"}], ["mine"]),
    case("one counter per namespace", [{"generateName": "j-", "namespace": "a"}, {"generateName": "j-", "namespace": "b"}],
         ["a/j-1", "b/j-1"]),
    case("the prefix is cut to 58 characters, as the API server cuts it", [{"generateName": "x" * 70}],
         ["x" * 58 + "1"]),
]


@pytest.mark.parametrize("metas, names", NAMES)
def test_generate_name_gives_the_same_name_in_every_run(metas, names):
    docs = [jobset(role("w", gpus=1), name=None) for _ in metas]
    for d, meta in zip(docs, metas):
        d["metadata"].pop("name")
        d["metadata"].update(meta)
    sc = read(*docs)
    assert [j.key for j in sc.jobs] == names
    assert any("metadata.generateName" in w for w in sc.warnings) == any("generateName" in m and "name" not in m
                                                                          for m in metas)


KUEUE_SETUP = """
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: default-flavor}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu, nvidia.com/gpu]
    flavors:
    - name: default-flavor
      resources: [{name: cpu, nominalQuota: 9}, {name: nvidia.com/gpu, nominalQuota: 16}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: user-queue, namespace: default}
spec: {clusterQueue: cq}
"""


def test_kueue_admits_a_jobset_as_one_workload_with_a_pod_set_per_replicated_job():
    js = jobset(role("driver", cpu="2"), role("workers", replicas=2, parallelism=2, gpus=4),
                labels={"kueue.x-k8s.io/queue-name": "user-queue"})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = load_kueue(KUEUE_SETUP, yaml.safe_dump(js))
    [lw] = got.workloads
    assert [(ps.name, ps.count) for ps in lw.workload.pod_sets] == [("driver", 1), ("workers", 4)]
    assert lw.workload.queue_name == "user-queue"


UPSTREAM = shared_path("upstream_manifests", "kueue", "sample-jobset.yaml")


@pytest.mark.skipif(not UPSTREAM.is_file(), reason=f"the upstream manifests ({UPSTREAM}) are absent")
def test_kueues_own_sample_jobset_is_admitted_with_its_two_pod_sets():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = load_kueue(KUEUE_SETUP, UPSTREAM)
    [lw] = got.workloads
    assert lw.workload.name == "sleep-job-1"
    assert [(ps.name, ps.count) for ps in lw.workload.pod_sets] == [("workers", 1), ("driver", 1)]


TWO_ROLES = Scenario(nodes(2, gpus=8), [Job("train", [PodSet("driver", 1, 1), PodSet("workers", 3, 4)], 600),
                                        Job("other", [PodSet("workers", 2, 4)], 300, submit_time=10)])


@pytest.mark.parametrize("target", ["jobset", "kueue+jobset", "kueue+jobset+volcano", "kueue+jobset+karpenter"])
def test_a_jobset_export_reads_back_into_the_same_run(target):
    text = export_manifests(TWO_ROLES, target)
    assert text.count("kind: JobSet") == 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        back = load_manifests(text)
    assert [[(ps.name, ps.count) for ps in j.pod_sets] for j in back.jobs] == [[("driver", 1), ("workers", 3)],
                                                                             [("workers", 2)]]
    from gangkit.manifests.export import TARGETS
    assert gk.simulate(back).summary() == gk.simulate(TWO_ROLES, stack=TARGETS[target][0]).summary()
    assert gk.check_manifests(text) == []


def test_partial_admission_cannot_be_written_as_a_jobset():
    sc = Scenario(nodes(1), [Job("a", [PodSet("w", 4, 1, min_count=2)], 60)])
    with pytest.raises(ScenarioError, match="partial admission"):
        export_manifests(sc, "kueue+jobset")


@requires_schemas
@pytest.mark.parametrize("target", ["jobset", "kueue+jobset+volcano"])
def test_an_exported_jobset_is_valid_for_the_real_crd(target):
    docs = [d for d in yaml.safe_load_all(export_manifests(TWO_ROLES, target)) if d["kind"] == "JobSet"]
    assert [validate_manifest(d) for d in docs] and all(validate_manifest(d) for d in docs)


@requires_schemas
@pytest.mark.parametrize("kind, folder, crd_file, version", [
    case("JobSet", "JobSet", "jobset", "jobset.x-k8s.io_jobsets.yaml", "v1alpha2"),
    case("PyTorchJob", "PyTorchJob", "kubeflow", "kubeflow.org_pytorchjobs.yaml", "v1"),
    case("MPIJob", "MPIJob", "mpi-operator", "kubeflow.org_mpijobs.yaml", "v2beta1"),
    case("TrainJob", "TrainJob", "kubeflow-trainer", "trainer.kubeflow.org_trainjobs.yaml", "v1alpha1"),
    case("TrainingRuntime", "TrainingRuntime", "kubeflow-trainer", "trainer.kubeflow.org_trainingruntimes.yaml", "v1alpha1"),
    case("ClusterTrainingRuntime", "ClusterTrainingRuntime", "kubeflow-trainer",
         "trainer.kubeflow.org_clustertrainingruntimes.yaml", "v1alpha1"),
])
def test_every_training_job_field_gangkit_knows_exists_in_the_real_crd(kind, folder, crd_file, version):
    from gangkit.manifests.training import KNOWN_FIELDS

    crd = yaml.safe_load((shared_path("schemas", folder, crd_file)).read_text())
    [version] = [v for v in crd["spec"]["versions"] if v["name"] == version]
    missing = fields_missing_from(KNOWN_FIELDS[kind], version["schema"]["openAPIV3Schema"], kind, metadata_is_open=True)
    assert missing == []


# --- Kubeflow's PyTorchJob and MPIJob ----------------------------------------------------------------------------


def kubeflow(kind="PyTorchJob", policy=None, scheduler=None, name="pt", **replicas) -> dict:
    field, api = {"PyTorchJob": ("pytorchReplicaSpecs", "kubeflow.org/v1"),
                  "MPIJob": ("mpiReplicaSpecs", "kubeflow.org/v2beta1")}[kind]
    extra = {"schedulerName": scheduler} if scheduler else {}
    specs = {rtype: {"replicas": n, "template": {"spec": pod(gpus=gpus, **extra)}} for rtype, (n, gpus) in replicas.items()}
    spec = {field: specs} | ({"runPolicy": {"schedulingPolicy": policy}} if policy is not None else {})
    return {"apiVersion": api, "kind": kind, "metadata": {"name": name, "annotations": {"gangkit/run-time": "1h"}},
            "spec": spec}


KUBEFLOW = [
    case("a PyTorchJob: master then worker, named in lower case", kubeflow(Worker=(3, 2), Master=(1, 2)),
         [("master", 1, 2), ("worker", 3, 2)], None),
    case("an MPIJob: launcher then worker", kubeflow("MPIJob", Launcher=(1, 0), Worker=(2, 4)),
         [("launcher", 1, 0), ("worker", 2, 4)], None),
    case("with Volcano the operator's PodGroup gangs every pod", kubeflow(scheduler="volcano", Master=(1, 1), Worker=(3, 1)),
         [("master", 1, 1), ("worker", 3, 1)], None),
    case("... or minAvailable of them", kubeflow(scheduler="volcano", policy={"minAvailable": 2}, Master=(1, 1),
                                                 Worker=(3, 1)), [("master", 1, 1), ("worker", 3, 1)], 2),
]


@pytest.mark.parametrize("doc, pod_sets, min_member", KUBEFLOW)
def test_a_kubeflow_job_has_a_pod_set_per_replica_type(doc, pod_sets, min_member):
    [j] = read(doc).jobs
    assert [(ps.name, ps.count, ps.gpus) for ps in j.pod_sets] == pod_sets
    assert j.min_member == min_member


KUBEFLOW_BAD = [
    case("a replica type the webhook does not allow", kubeflow(Chief=(1, 1)),
         "PyTorchJob pt: spec.pytorchReplicaSpecs.Chief: expected a replica type Master or Worker"),
    case("two masters", kubeflow(Master=(2, 1)), "PyTorchJob pt: spec.pytorchReplicaSpecs.Master.replicas: expected at most 1"),
    case("minAvailable above the pods", kubeflow(scheduler="volcano", policy={"minAvailable": 9}, Worker=(2, 1)),
         "PyTorchJob pt: spec.runPolicy.schedulingPolicy.minAvailable: expected a whole number"),
    case("a bad GPU count names its replica spec", kubeflow(Worker=(2, "x")),
         "PyTorchJob pt: spec.pytorchReplicaSpecs.Worker.template.spec.containers[0].resources.limits.nvidia.com/gpu"),
]


@pytest.mark.parametrize("doc, message", KUBEFLOW_BAD)
def test_a_bad_kubeflow_job_is_one_error_naming_the_field(doc, message):
    with pytest.raises(ScenarioError, match=re.escape(message)):
        read(doc)


def test_a_scheduling_policy_without_a_gang_scheduler_is_reported():
    sc = read(kubeflow(policy={"minAvailable": 1}, Worker=(2, 1)))
    assert sc.jobs[0].min_member is None
    assert any("schedulingPolicy has no effect" in w for w in sc.warnings)


@pytest.mark.parametrize("doc", [kubeflow(scheduler="volcano", policy={"minAvailable": 2}, Master=(1, 1), Worker=(3, 1)),
                                 kubeflow("MPIJob", Launcher=(1, 0), Worker=(2, 4))], ids=["PyTorchJob", "MPIJob"])
def test_a_kubeflow_job_reads_back_from_its_dump(doc):
    from gangkit.manifests import dump_manifests

    sc = read(doc)
    text = dump_manifests(sc)
    back = read(*[d for d in yaml.safe_load_all(text) if d["kind"] in ("PyTorchJob", "MPIJob")])
    assert back.jobs == sc.jobs


@requires_schemas
@pytest.mark.parametrize("doc", [kubeflow(scheduler="volcano", policy={"minAvailable": 2}, Master=(1, 1), Worker=(3, 1)),
                                 kubeflow("MPIJob", Launcher=(1, 0), Worker=(2, 4))], ids=["PyTorchJob", "MPIJob"])
def test_a_written_kubeflow_job_is_valid_for_its_crd(doc):
    from gangkit.manifests import dump_manifests

    docs = [d for d in yaml.safe_load_all(dump_manifests(read(doc))) if d["kind"] in ("PyTorchJob", "MPIJob")]
    assert docs and all(validate_manifest(d) for d in docs)


@pytest.mark.skipif(not UPSTREAM.is_file(), reason=f"the upstream manifests ({UPSTREAM}) are absent")
@pytest.mark.parametrize("name, pod_sets", [("sample-pytorchjob.yaml", [("master", 1), ("worker", 1)]),
                                            ("sample-mpijob.yaml", [("launcher", 1), ("worker", 2)])])
def test_kueues_own_kubeflow_samples_get_their_workload(name, pod_sets):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = load_kueue(KUEUE_SETUP, UPSTREAM.parent / name)
    [lw] = got.workloads
    assert [(ps.name, ps.count) for ps in lw.workload.pod_sets] == pod_sets


# --- Kubeflow Trainer's TrainJob ----------------------------------------------------------------------------------


def runtime(name="gpu-runtime", kind="ClusterTrainingRuntime", nodes=None, policy=None, steps=None, namespace=None):
    steps = steps or [{"name": "node", "template": {
        "metadata": {"labels": {"trainer.kubeflow.org/trainjob-ancestor-step": "trainer"}},
        "spec": {"template": {"spec": {"containers": [{"name": "node", "image": "x",
                                                        "resources": {"limits": {"nvidia.com/gpu": "8"}}}]}}}}}]
    spec = {"mlPolicy": {"torch": {}} | ({"numNodes": nodes} if nodes is not None else {}),
            "template": {"spec": {"replicatedJobs": steps}}}
    if policy is not None:
        spec["podGroupPolicy"] = policy
    meta = {"name": name} | ({"namespace": namespace} if namespace else {})
    return {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": kind, "metadata": meta, "spec": spec}


def trainjob(runtime_name="gpu-runtime", kind=None, name="tj", **trainer) -> dict:
    ref = {"name": runtime_name} | ({"kind": kind} if kind else {})
    return {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
            "metadata": {"name": name, "annotations": {"gangkit/run-time": "1h"}},
            "spec": {"runtimeRef": ref} | ({"trainer": trainer} if trainer else {})}


INITIALIZER = {"name": "dataset-initializer", "template": {
    "metadata": {"labels": {"trainer.kubeflow.org/trainjob-ancestor-step": "dataset-initializer"}},
    "spec": {"template": {"spec": {"containers": [{"name": "init", "image": "x"}]}}}}}

TRAINJOBS = [
    case("the runtime's numNodes", [runtime(nodes=2), trainjob()], [("node", 2, 8)], None),
    case("the TrainJob's numNodes wins", [runtime(nodes=2), trainjob(numNodes=4)], [("node", 4, 8)], None),
    case("resourcesPerNode replaces the node container's resources",
         [runtime(), trainjob(numNodes=2, resourcesPerNode={"limits": {"nvidia.com/gpu": "4"}})], [("node", 2, 4)], None),
    case("a namespaced TrainingRuntime", [runtime(kind="TrainingRuntime", namespace="default"),
                                          trainjob(kind="TrainingRuntime", numNodes=2)], [("node", 2, 8)], None),
    case("initializer steps are left out", [runtime(steps=[INITIALIZER, runtime()["spec"]["template"]["spec"]
                                                           ["replicatedJobs"][0]]), trainjob(numNodes=2)],
         [("node", 2, 8)], None),
    case("podGroupPolicy coscheduling: every pod, its timeout", [runtime(policy={"coscheduling": {"scheduleTimeoutSeconds": 30}}),
                                                                 trainjob(numNodes=2)], [("node", 2, 8)], 30.0),
]


@pytest.mark.parametrize("docs, pod_sets, timeout", TRAINJOBS)
def test_a_trainjob_runs_as_the_jobset_its_runtime_makes(docs, pod_sets, timeout):
    [j] = read(*docs).jobs
    assert [(ps.name, ps.count, ps.gpus) for ps in j.pod_sets] == pod_sets
    assert j.framework == JOBSET and j.schedule_timeout == timeout


def test_trainers_default_runtime_has_a_stand_in_and_it_is_said():
    sc = read(trainjob("torch-distributed", numNodes=3))
    assert [(ps.name, ps.count) for ps in sc.jobs[0].pod_sets] == [("node", 3)]
    assert any("stand-in" in w for w in sc.warnings)


def test_a_volcano_runtime_gangs_every_pod_in_the_annotated_queue():
    tj = trainjob(numNodes=2)
    tj["metadata"]["annotations"]["scheduling.volcano.sh/queue-name"] = "research"
    queue = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": "research"},
             "spec": {"weight": 1}}
    sc = read(runtime(policy={"volcano": {}}), tj, queue)
    [j] = sc.jobs
    assert (j.volcano_queue, j.min_member, j.gang_size) == ("research", None, 2)
    assert gk.simulate(sc, stack="gang").summary()["jobs_finished"] == 1


@pytest.mark.parametrize("docs, message", [
    case("a runtime not in the input", [trainjob("mine")],
         "TrainJob tj: spec.runtimeRef.name: names ClusterTrainingRuntime 'mine', which is not in the input"),
    case("a TrainingRuntime of another namespace", [runtime(kind="TrainingRuntime", namespace="other"),
                                                    trainjob(kind="TrainingRuntime")],
         "names TrainingRuntime 'gpu-runtime', which is not in namespace 'default'"),
    case("a negative numNodes", [runtime(), trainjob(numNodes=-1)], "TrainJob tj: spec.trainer.numNodes: expected a whole"),
])
def test_a_bad_trainjob_is_one_error(docs, message):
    with pytest.raises(ScenarioError, match=re.escape(message)):
        read(*docs)


UPSTREAM_TRAINER = shared_path("upstream_manifests", "kubeflow-trainer")


@pytest.mark.skipif(not UPSTREAM_TRAINER.is_dir(), reason=f"the upstream manifests ({UPSTREAM_TRAINER}) are absent")
@pytest.mark.parametrize("name, nodes", [("01-multi-node.yaml", 3), ("03-kueue-integration.yaml", 3),
                                         ("04-volcano-integration.yaml", 4)])
def test_kubeflow_trainers_own_examples_run(name, nodes):
    from gangkit.manifests import load_files

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sc = load_files([UPSTREAM_TRAINER / name], extra=yaml.safe_load_all(NODES))
    assert [(ps.name, ps.count) for ps in sc.jobs[0].pod_sets] == [("node", nodes)]
    assert gk.simulate(sc).summary()["jobs_finished"] == 1
