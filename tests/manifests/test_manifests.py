"""Scenarios from Kubernetes manifests: tables of named cases.

Each table row reads like a rule of the reference page
(docs/reference/scenario-yaml.md). Every manifest that loads without error
is also checked against the real Kubernetes/Volcano schemas in
../shared/schemas, so the examples never teach YAML a cluster would refuse.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import re
import warnings
from pathlib import Path

import pytest
import yaml

from gangkit.manifests import DEFAULT_RUN_TIME, GangkitInputWarning, dump_manifests, load_file, load_manifests
from gangkit.manifests.core import KNOWN_FIELDS as CORE_KNOWN_FIELDS
from gangkit.model.errors import ScenarioError
from gangkit.model.jobs import Job, PodSet, job
from gangkit.model.nodes import Node, nodes
from gangkit.model.scenario import RunSettings, Scenario
from gangkit.placement.manifests import KNOWN_FIELDS as GANG_KNOWN_FIELDS

from conftest import case, edit

try:
    from schema_util import SCHEMAS as SCHEMAS_DIR
    from schema_util import fields_missing_from, requires_schemas, schema_for, validate_manifest, validate_yaml
except ImportError:  # tests/ imported as a package
    from tests.schema_util import SCHEMAS as SCHEMAS_DIR
    from tests.schema_util import fields_missing_from, requires_schemas, schema_for, validate_manifest, validate_yaml
from paths import REPO

ROOT = REPO
EXAMPLES = sorted((ROOT / "examples").glob("*.yaml"))
GPU = "nvidia.com/gpu"



# --- building blocks: small valid manifests, changed per case ------------------


def node(name="gpu-0", gpus="2", labels=None, **status):
    doc = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}}
    if labels:
        doc["metadata"]["labels"] = labels
    doc["status"] = status or {"allocatable": {GPU: gpus}}
    return doc


def batch_job(name="train", namespace=None, pods=None, gpus="1", run_time="10m", annotations=None,
              labels=None, template_annotations=None, priority_class=None, requests=None, **spec):
    meta = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    if labels:
        meta["labels"] = labels
    ann = {} if run_time is None else {"gangkit/run-time": run_time}
    ann.update(annotations or {})
    if ann:
        meta["annotations"] = ann
    resources = {"limits": {GPU: gpus}} if gpus is not None else {}
    if requests:
        resources["requests"] = requests
    pod = {"restartPolicy": "Never", "containers": [{"name": "worker", "image": "trainer:1", "resources": resources}]}
    if priority_class:
        pod["priorityClassName"] = priority_class
    template = {"spec": pod}
    if template_annotations:
        template["metadata"] = {"annotations": template_annotations}
    body = {} if pods is None else {"parallelism": pods}
    body.update(spec)
    body["template"] = template
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": meta, "spec": body}


def pod_group(name="train", min_member=None, namespace=None, **spec):
    meta = {"name": name} | ({"namespace": namespace} if namespace else {})
    if min_member is not None:
        spec["minMember"] = min_member
    return {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup", "metadata": meta, "spec": spec}


def priority_class(name, value, default=False):
    doc = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name}, "value": value}
    if default:
        doc["globalDefault"] = True
    return doc


def simulation(name="sim", **spec):
    return {"apiVersion": "gangkit/v1alpha1", "kind": "Simulation", "metadata": {"name": name}, "spec": spec}



def container(doc, **fields):
    """A Job copy whose first container gets these fields (``resources=...`` replaces the resources)."""
    doc = copy.deepcopy(doc)
    doc["spec"]["template"]["spec"]["containers"][0].update(fields)
    return doc


def load_quietly(source, **kw) -> Scenario:
    """Load and fail on any gangkit warning: good input must load silently."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", GangkitInputWarning)
        sc = load_manifests(source, **kw)
    assert sc.warnings == []
    return sc


def load_warning(source) -> tuple[Scenario, list[str]]:
    """Load and return the GangkitInputWarnings emitted (each must be in Scenario.warnings too)."""
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        sc = load_manifests(source)
    emitted = [str(w.message) for w in seen if issubclass(w.category, GangkitInputWarning)]
    assert emitted == sc.warnings
    return sc, emitted


def docs_of(source) -> list[dict]:
    return [d for d in yaml.safe_load_all(source) if d is not None] if isinstance(source, str) else list(source)


NODE = node()

# --- what loads, and into what ---------------------------------------------------

GOOD = [
    # Nodes
    case("node GPUs come from status.allocatable",
         [node(gpus="4")], lambda s: s.nodes[0].gpus, 4),
    case("allocatable wins over capacity",
         [node(allocatable={GPU: "7"}, capacity={GPU: "8"})], lambda s: s.nodes[0].gpus, 7),
    case("capacity is used when allocatable is absent",
         [node(capacity={GPU: "8", "cpu": "16"})], lambda s: (s.nodes[0].gpus, s.nodes[0].cpu), (8, 16.0)),
    case("allocatable replaces capacity as a whole, as the API server defaults it",
         [node(allocatable={"cpu": "16"}, capacity={GPU: "8"})], lambda s: s.nodes[0].gpus, 0),
    case("a node without GPUs has 0",
         [node(allocatable={"cpu": "64", "memory": "256Gi"})], lambda s: s.nodes[0].gpus, 0),
    case("node cpu and memory are quantities",
         [node(allocatable={GPU: 8, "cpu": "95500m", "memory": "1Ti"})],
         lambda s: (s.nodes[0].cpu, s.nodes[0].memory), (95.5, 2**40)),
    case("node cpu and memory not given are not modelled",
         [NODE], lambda s: (s.nodes[0].cpu, s.nodes[0].memory), (None, None)),
    case("pool from the Karpenter label",
         [node(labels={"karpenter.sh/nodepool": "a100"})], lambda s: s.nodes[0].pool, "a100"),
    case("pool from the GKE label",
         [node(labels={"cloud.google.com/gke-nodepool": "h100-pool"})], lambda s: s.nodes[0].pool, "h100-pool"),
    case("pool is default without a pool label",
         [node(labels={"zone": "a"})], lambda s: (s.nodes[0].pool, dict(s.nodes[0].labels)), ("default", {"zone": "a"})),
    case("nodes keep their input order",
         [node("b"), node("a")], lambda s: [n.name for n in s.nodes], ["b", "a"]),
    case("status.conditions and nodeInfo are read and ignored",
         [node(allocatable={GPU: "1"}, conditions=[{"type": "Ready", "status": "True"}],
               nodeInfo={"kubeletVersion": "v1.32.2", "architecture": "amd64", "bootID": "", "containerRuntimeVersion": "",
                         "kernelVersion": "", "kubeProxyVersion": "", "machineID": "", "operatingSystem": "linux",
                         "osImage": "", "systemUUID": ""})],
         lambda s: s.nodes[0].gpus, 1),
    # Jobs
    case("parallelism is the pod count",
         [NODE, batch_job(pods=3)], lambda s: (s.jobs[0].pod_count, s.jobs[0].gpus), (3, 3)),
    case("parallelism defaults to 1",
         [NODE, batch_job()], lambda s: s.jobs[0].pod_count, 1),
    case("completions equal to parallelism is one wave, no warning",
         [NODE, batch_job(pods=4, completions=4)], lambda s: s.jobs[0].pod_count, 4),
    case("GPU limit is the per-pod GPU request",
         [NODE, batch_job(gpus="2")], lambda s: s.jobs[0].pod_sets[0].gpus, 2),
    case("GPU request equal to the limit is fine",
         [NODE, container(batch_job(), resources={"limits": {GPU: "2"}, "requests": {GPU: 2}})],
         lambda s: s.jobs[0].pod_sets[0].gpus, 2),
    case("a job without GPUs asks for 0",
         [NODE, batch_job(gpus=None, requests={"cpu": "1"})], lambda s: s.jobs[0].gpus, 0),
    case("requests are summed over containers",
         [NODE, edit(batch_job(requests={"cpu": "500m", "memory": "1Gi"}), "spec.template.spec.containers.1",
                     {"name": "sidecar", "resources": {"limits": {GPU: "1"}, "requests": {"cpu": "1500m", "memory": "512Mi"}}})],
         lambda s: (s.jobs[0].pod_sets[0].gpus, s.jobs[0].pod_sets[0].cpu, s.jobs[0].pod_sets[0].memory),
         (2, 2.0, 3 * 2**29)),
    case("a cpu or memory limit without a request sets the request",
         [NODE, container(batch_job(), resources={"limits": {GPU: "1", "cpu": "2", "memory": "4Gi"}})],
         lambda s: (s.jobs[0].pod_sets[0].cpu, s.jobs[0].pod_sets[0].memory), (2.0, 4 * 2**30)),
    case("a cpu request below its limit is the request",
         [NODE, container(batch_job(), resources={"limits": {GPU: "1", "cpu": "4"}, "requests": {"cpu": "1"}})],
         lambda s: s.jobs[0].pod_sets[0].cpu, 1.0),
    case("nodeSelector restricts the pods",
         [node(labels={"karpenter.sh/nodepool": "a100"}),
          edit(batch_job(), "spec.template.spec.nodeSelector", {"karpenter.sh/nodepool": "a100"})],
         lambda s: s.jobs[0].pod_sets[0].node_selector, (("karpenter.sh/nodepool", "a100"),)),
    case("run time, submit time, progress and checkpoint interval from gangkit annotations",
         [NODE, batch_job(run_time="1h30m", annotations={"gangkit/submit-time": "90s", "gangkit/progress": "independent",
                                                         "gangkit/checkpoint-interval": "15m"})],
         lambda s: (s.jobs[0].run_time, s.jobs[0].submit_time, s.jobs[0].progress, s.jobs[0].checkpoint_interval),
         (5400.0, 90.0, "independent", 900.0)),
    case("a run time in plain seconds",
         [NODE, batch_job(run_time="600")], lambda s: s.jobs[0].run_time, 600.0),
    case("defaults: submitted at 0, sync, no checkpoints, no deadline",
         [NODE, batch_job()],
         lambda s: (s.jobs[0].submit_time, s.jobs[0].progress, s.jobs[0].checkpoint_interval, s.jobs[0].max_run_time),
         (0.0, "sync", None, None)),
    case("activeDeadlineSeconds is the declared maximum run time",
         [NODE, batch_job(activeDeadlineSeconds=7200)], lambda s: s.jobs[0].max_run_time, 7200.0),
    case("name, namespace and labels are kept",
         [NODE, batch_job("bert", namespace="team-a", labels={"team": "nlp"})],
         lambda s: (s.jobs[0].name, s.jobs[0].namespace, s.jobs[0].key, s.jobs[0].labels),
         ("bert", "team-a", "team-a/bert", {"team": "nlp"})),
    case("queue from the Kueue queue-name label",
         [NODE, batch_job(namespace="team-a", labels={"kueue.x-k8s.io/queue-name": "gpu-queue"})],
         lambda s: s.jobs[0].queue, "gpu-queue"),
    case("queue is the namespace without a Kueue label",
         [NODE, batch_job(namespace="team-b")], lambda s: s.jobs[0].queue, "team-b"),
    case("queue is default without label or namespace",
         [NODE, batch_job()], lambda s: (s.jobs[0].queue, s.jobs[0].namespace), ("default", None)),
    case("the same name in two namespaces is two jobs",
         [NODE, batch_job(namespace="a"), batch_job(namespace="b")], lambda s: [j.key for j in s.jobs], ["a/train", "b/train"]),
    case("jobs keep their input order",
         [NODE, batch_job("z"), batch_job("a")], lambda s: [j.name for j in s.jobs], ["z", "a"]),
    case("standard fields that do not change scheduling are accepted silently",
         [NODE, container(batch_job(backoffLimit=0, ttlSecondsAfterFinished=60, completionMode="Indexed", suspend=True),
                          command=["python", "train.py"], args=["--epochs", "3"], env=[{"name": "A", "value": "1"}],
                          imagePullPolicy="IfNotPresent")],
         lambda s: s.jobs[0].pod_count, 1),
    # priorities
    case("priorityClassName gives the PriorityClass value",
         [NODE, priority_class("high", 1000), batch_job(priority_class="high")], lambda s: s.jobs[0].priority, 1000),
    case("without a class a job gets the globalDefault value",
         [NODE, priority_class("normal", 10, default=True), batch_job()], lambda s: s.jobs[0].priority, 10),
    case("without a class or a global default the priority is 0",
         [NODE, priority_class("high", 1000), batch_job()], lambda s: s.jobs[0].priority, 0),
    case("negative priorities are allowed",
         [NODE, priority_class("scavenger", -10), batch_job(priority_class="scavenger")], lambda s: s.jobs[0].priority, -10),
    case("the system classes always exist",
         [NODE, batch_job(priority_class="system-cluster-critical")], lambda s: s.jobs[0].priority, 2_000_000_000),
    case("a PriorityClass may come after the Job that uses it",
         [NODE, batch_job(priority_class="late"), priority_class("late", 5)], lambda s: s.jobs[0].priority, 5),
    # PodGroups
    case("a PodGroup named by the pod template sets min_member",
         [NODE, batch_job(pods=4, template_annotations={"scheduling.k8s.io/group-name": "pg"}), pod_group("pg", 3)],
         lambda s: (s.jobs[0].min_member, s.jobs[0].gang_size), (3, 3)),
    case("the group-name annotation may sit on the Job itself",
         [NODE, batch_job(pods=4, annotations={"scheduling.k8s.io/group-name": "pg"}), pod_group("pg", 2)],
         lambda s: s.jobs[0].min_member, 2),
    case("a PodGroup without minMember means every pod (the CRD has no default)",
         [NODE, batch_job(pods=4, template_annotations={"scheduling.k8s.io/group-name": "pg"}), pod_group("pg")],
         lambda s: (s.jobs[0].min_member, s.jobs[0].gang_size), (None, 4)),
    case("a PodGroup is found in the Job's namespace",
         [NODE, batch_job(pods=2, namespace="t", template_annotations={"scheduling.k8s.io/group-name": "pg"}),
          batch_job(pods=2, namespace="u", template_annotations={"scheduling.k8s.io/group-name": "pg"}),
          pod_group("pg", 1, namespace="u"), pod_group("pg", 2, namespace="t")],
         lambda s: [j.min_member for j in s.jobs], [2, 1]),
    case("no namespace and namespace default are the same namespace",
         [NODE, batch_job(pods=2, template_annotations={"scheduling.k8s.io/group-name": "pg"}),
          pod_group("pg", 2, namespace="default")],
         lambda s: s.jobs[0].min_member, 2),
    case("the PodGroup's priorityClassName gives the priority when the pods name none",
         [NODE, priority_class("high", 100), batch_job(pods=2, template_annotations={"scheduling.k8s.io/group-name": "pg"}),
          pod_group("pg", 2, priorityClassName="high")],
         lambda s: s.jobs[0].priority, 100),
    case("the PodGroup's Volcano queue is its Volcano queue (gangkit's queue is the Kueue label or namespace)",
         [NODE, {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": "research"}},
          batch_job(pods=2, template_annotations={"scheduling.k8s.io/group-name": "pg"}), pod_group("pg", 2, queue="research")],
         lambda s: (s.jobs[0].queue, s.jobs[0].volcano_queue), ("default", "research")),
    # Simulation
    case("a Simulation sets the run settings",
         [NODE, simulation("lesson-3", stack="pod", ordering="strict", scoring="MostAllocated", preemption=True,
                           sessionPeriod="5s", seed=7, horizon="48h", record="jobs")],
         lambda s: (s.name, s.settings),
         ("lesson-3", RunSettings(stack="pod", ordering="strict", scoring="MostAllocated", preemption=True,
                                  session_period=5.0, seed=7, horizon=172800.0, record="jobs"))),
    case("Simulation durations may be plain seconds",
         [NODE, simulation(sessionPeriod=0, horizon=3600)], lambda s: (s.settings.session_period, s.settings.horizon), (0.0, 3600.0)),
    case("without a Simulation the settings are the defaults",
         [NODE], lambda s: s.settings, RunSettings()),
    case("the Simulation's gangkit/description annotation describes the scenario",
         [NODE, edit(simulation(), "metadata.annotations", {"gangkit/description": "two teams"})],
         lambda s: s.description, "two teams"),
    case("a scenario without jobs is fine",
         [NODE], lambda s: s.jobs, []),
    # containers: kind List and multi-document YAML
    case("kind: List is unpacked",
         [{"apiVersion": "v1", "kind": "List", "items": [node("a"), node("b"), batch_job()]}],
         lambda s: ([n.name for n in s.nodes], len(s.jobs)), (["a", "b"], 1)),
    case("a List may hold a List",
         [{"apiVersion": "v1", "kind": "List", "items": [{"apiVersion": "v1", "kind": "List", "items": [node("a")]}]}],
         lambda s: [n.name for n in s.nodes], ["a"]),
    case("multi-document YAML",
         "---\n" + yaml.safe_dump(node("a")) + "---\n" + yaml.safe_dump(node("b")) + "---\n"
         + yaml.safe_dump(batch_job(pods=2)) + "...\n",
         lambda s: ([n.name for n in s.nodes], s.jobs[0].pod_count), (["a", "b"], 2)),
    case("YAML as people write it: quoted GPU counts, unquoted durations and memory",
         """
apiVersion: v1
kind: Node
metadata: {name: gpu-0, labels: {karpenter.sh/nodepool: a100}}
status: {allocatable: {nvidia.com/gpu: "8", cpu: 96, memory: 1Ti}}
---
apiVersion: batch/v1
kind: Job
metadata:
  name: train
  annotations: {gangkit/run-time: 2h, gangkit/progress: sync}
spec:
  parallelism: 2
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: worker
        image: trainer:1
        resources: {limits: {nvidia.com/gpu: 4}, requests: {cpu: 500m, memory: 32Gi}}
""",
         lambda s: (s.nodes[0].gpus, s.nodes[0].cpu, s.jobs[0].gpus, s.jobs[0].run_time, s.jobs[0].pod_sets[0].cpu),
         (8, 96.0, 8, 7200.0, 0.5)),
]


@pytest.mark.parametrize("source, get, expected", GOOD)
def test_manifests_load_into_the_scenario(source, get, expected):
    assert get(load_quietly(source)) == expected


@requires_schemas
@pytest.mark.parametrize("source, get, expected", GOOD)
def test_every_good_manifest_is_valid_for_the_real_schemas(source, get, expected):
    for doc in docs_of(source):
        validate_manifest(doc)


# --- sources -----------------------------------------------------------------------

SMALL = [node("gpu-0", "4"), batch_job("train", pods=2)]


@pytest.mark.parametrize(
    "make_source, name",
    [
        case("a list of dicts", lambda tmp: SMALL, "scenario"),
        case("a single dict", lambda tmp: SMALL[0], "scenario"),
        case("a YAML string", lambda tmp: yaml.safe_dump_all(SMALL), "scenario"),
        case("a path string", lambda tmp: str(_write(tmp / "small.yaml", SMALL)), "small"),
        case("a Path", lambda tmp: _write(tmp / "tiny.yml", SMALL), "tiny"),
    ],
)
def test_load_manifests_accepts_paths_strings_and_parsed_documents(make_source, name, tmp_path):
    sc = load_quietly(make_source(tmp_path))
    assert sc.nodes[0] == Node("gpu-0", 4)
    assert sc.name == name


def test_load_file_names_the_scenario_after_the_file_unless_a_simulation_names_it(tmp_path):
    assert load_file(_write(tmp_path / "cluster.yaml", SMALL)).name == "cluster"
    assert load_file(_write(tmp_path / "other.yaml", SMALL + [simulation("lesson")])).name == "lesson"


def test_a_missing_file_is_reported_as_such(tmp_path):
    with pytest.raises(FileNotFoundError):
        load_file(tmp_path / "absent.yaml")


def _write(path: Path, docs) -> Path:
    path.write_text(yaml.safe_dump_all(docs), encoding="utf-8")
    return path


# --- errors: one line per problem, naming object and field ----------------------

BAD = [
    # (input, object, field, words in the message, schema accepts the input?)
    case("fractional GPUs", [NODE, batch_job("a", namespace="t", gpus="0.5")],
         "Job t/a", f"spec.template.spec.containers[0].resources.limits.{GPU}", "must be an integer", True),
    case("GPUs in millis", [NODE, batch_job("a", gpus="500m")],
         "Job a", f"spec.template.spec.containers[0].resources.limits.{GPU}", "must be an integer", True),
    case("GPU request without a limit",
         [NODE, container(batch_job("a"), resources={"requests": {GPU: "1"}})],
         "Job a", f"spec.template.spec.containers[0].resources.limits.{GPU}",
         "Limit must be set for non overcommitable resources", True),
    case("GPU request different from the limit",
         [NODE, container(batch_job("a"), resources={"limits": {GPU: "2"}, "requests": {GPU: "1"}})],
         "Job a", f"spec.template.spec.containers[0].resources.requests.{GPU}", f"must be equal to {GPU} limit of 2", True),
    case("negative GPUs on a node", [node("n", gpus="-1")],
         "Node n", f"status.allocatable.{GPU}", "must be greater than or equal to 0", True),
    case("fractional GPUs on a node", [node("n", gpus="1.5")],
         "Node n", f"status.allocatable.{GPU}", "must be an integer", True),
    case("malformed node memory", [node("n", allocatable={GPU: "1", "memory": "16 GB"})],
         "Node n", "status.allocatable.memory", "expected a Kubernetes quantity", True),
    case("malformed cpu request", [NODE, batch_job("a", requests={"cpu": "two"})],
         "Job a", "spec.template.spec.containers[0].resources.requests.cpu", "expected a Kubernetes quantity", True),
    case("cpu request above its limit",
         [NODE, container(batch_job("a"), resources={"limits": {GPU: "1", "cpu": "1"}, "requests": {"cpu": "2"}})],
         "Job a", "spec.template.spec.containers[0].resources.requests.cpu", "must be less than or equal to cpu limit", True),
    case("negative run time", [NODE, batch_job("a", run_time="-10m")],
         "Job a", "metadata.annotations.gangkit/run-time", "expected a duration >= 0", True),
    case("zero run time", [NODE, batch_job("a", run_time="0s")],
         "Job a", "metadata.annotations.gangkit/run-time", "expected a run time > 0", True),
    case("malformed run time", [NODE, batch_job("a", run_time="1 day")],
         "Job a", "metadata.annotations.gangkit/run-time", "Go duration", True),
    case("days are not a Go duration", [NODE, batch_job("a", run_time="2d")],
         "Job a", "metadata.annotations.gangkit/run-time", "Go duration", True),
    case("negative submit time", [NODE, batch_job("a", annotations={"gangkit/submit-time": "-1s"})],
         "Job a", "metadata.annotations.gangkit/submit-time", "expected a duration >= 0", True),
    case("zero checkpoint interval", [NODE, batch_job("a", annotations={"gangkit/checkpoint-interval": "0"})],
         "Job a", "metadata.annotations.gangkit/checkpoint-interval", "expected an interval > 0", True),
    case("unknown progress mode", [NODE, batch_job("a", annotations={"gangkit/progress": "async"})],
         "Job a", "metadata.annotations.gangkit/progress", "expected one of sync, independent", True),
    case("parallelism below 1", [NODE, batch_job("a", pods=0)],
         "Job a", "spec.parallelism", "expected a whole number >= 1, got 0", True),
    case("negative parallelism", [NODE, batch_job("a", pods=-2)],
         "Job a", "spec.parallelism", "expected a whole number >= 1, got -2", True),
    case("parallelism not an integer", [NODE, batch_job("a", pods="four")],
         "Job a", "spec.parallelism", "expected a whole number >= 1, got 'four'", False),
    case("parallelism as a float", [NODE, batch_job("a", pods=2.5)],
         "Job a", "spec.parallelism", "expected a whole number >= 1, got 2.5", False),
    case("completions below 1", [NODE, batch_job("a", completions=0)],
         "Job a", "spec.completions", "expected a whole number >= 1", True),
    case("activeDeadlineSeconds not positive", [NODE, batch_job("a", activeDeadlineSeconds=0)],
         "Job a", "spec.activeDeadlineSeconds", "expected a whole number >= 1", True),
    case("no containers", [NODE, edit(batch_job("a"), "spec.template.spec.containers", [])],
         "Job a", "spec.template.spec.containers", "expected a list of at least one container", True),
    case("no pod template", [NODE, edit(batch_job("a"), "spec", {"parallelism": 1})],
         "Job a", "spec.template", "expected a pod template", False),
    case("unquoted boolean label value", [node("n", labels={"gpu": True})],
         "Node n", "metadata.labels.gpu", "expected a string", False),
    case("unquoted number in a nodeSelector", [NODE, edit(batch_job("a"), "spec.template.spec.nodeSelector", {"gpus": 8})],
         "Job a", "spec.template.spec.nodeSelector.gpus", "quote it", False),
    case("missing metadata.name", [NODE, edit(batch_job(), "metadata", {"namespace": "t"})],
         "Job (document 2)", "metadata.name", "expected a non-empty name", True),
    case("missing metadata", [{"apiVersion": "v1", "kind": "Node", "status": {}}],
         "Node (document 1)", "metadata", "expected a mapping with at least a name", True),
    case("no Node at all", [batch_job("a")],
         "Scenario scenario", "", "expected at least one Node", True),
    case("duplicate node names", [node("n"), node("n")],
         "Node n", "metadata.name", "expected a unique name; document 1 has the same Node name", True),
    case("duplicate job names in one namespace", [NODE, batch_job("a", namespace="default"), batch_job("a")],
         "Job a", "metadata.name", "expected a unique name", True),
    case("duplicate PriorityClass names", [NODE, priority_class("p", 1), priority_class("p", 2)],
         "PriorityClass p", "metadata.name", "expected a unique name", True),
    case("two Simulations", [NODE, simulation("one"), simulation("two")],
         "Simulation two", "kind", "expected at most one Simulation", True),
    case("unknown kind", [NODE, {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "web"}}],
         "DaemonSet web", "kind", "unknown kind 'DaemonSet'", False),
    case("a Volcano vcjob is read as one, and needs tasks",
         [NODE, {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": "vc"}, "spec": {}}],
         "VolcanoJob vc", "spec.tasks", "expected a list of at least one task", True),
    case("a Job of another apiVersion is refused",
         [NODE, {"apiVersion": "batch/v2", "kind": "Job", "metadata": {"name": "vc"}, "spec": {}}],
         "Job vc", "apiVersion", "unknown apiVersion 'batch/v2' for kind Job: expected batch/v1", False),
    case("a PodGroup of an API version no scheduler serves",
         [NODE, {"apiVersion": "scheduling.x-k8s.io/v1beta1", "kind": "PodGroup", "metadata": {"name": "pg"},
                 "spec": {"minMember": 2}}],
         "PodGroup pg", "apiVersion", "expected scheduling.volcano.sh/v1beta1 or scheduling.x-k8s.io/v1alpha1", False),
    case("a document that is not a mapping", [NODE, ["not", "an", "object"]],
         "manifests document 2", "", "expected a mapping (a Kubernetes object), got list", False),
    case("a YAML document that is a plain string", yaml.safe_dump(NODE) + "---\njust words\n",
         "YAML input document 2", "", "expected a mapping", False),
    case("unknown priority class", [NODE, batch_job("a", namespace="t", priority_class="urgent")],
         "Job t/a", "spec.template.spec.priorityClassName", "no PriorityClass named 'urgent'", True),
    case("unknown priority class on a PodGroup",
         [NODE, batch_job("a", template_annotations={"scheduling.k8s.io/group-name": "pg"}),
          pod_group("pg", priorityClassName="urgent")],
         "PodGroup pg", "spec.priorityClassName", "no PriorityClass named 'urgent'", True),
    case("PodGroup and pods with different priorities",
         [NODE, priority_class("low", 1), priority_class("high", 2),
          batch_job("a", priority_class="low", template_annotations={"scheduling.k8s.io/group-name": "pg"}),
          pod_group("pg", priorityClassName="high")],
         "PodGroup pg", "spec.priorityClassName", "gangkit models one priority per Job", True),
    case("a PriorityClass value above the user limit", [NODE, priority_class("big", 2_000_000_000)],
         "PriorityClass big", "value", "expected a whole number <= 1000000000", True),
    case("two globalDefault classes", [NODE, priority_class("a", 1, True), priority_class("b", 2, True)],
         "PriorityClass b", "globalDefault", "expected only one globalDefault", True),
    case("minMember 0 (Volcano's 'no gang') is out of gangkit's range",
         [NODE, batch_job("a", pods=2, template_annotations={"scheduling.k8s.io/group-name": "pg"}), pod_group("pg", 0)],
         "PodGroup pg", "spec.minMember", "expected a whole number >= 1 (0 is Volcano's 'no gang'", True),
    case("a Job naming an absent PodGroup",
         [NODE, batch_job("a", namespace="t", template_annotations={"scheduling.k8s.io/group-name": "pg"}), pod_group("pg")],
         "Job t/a", "spec.template.metadata.annotations.scheduling.k8s.io/group-name",
         "names PodGroup 'pg' in namespace 't', which is not in the input", True),
    case("two Jobs sharing one PodGroup",
         [NODE, batch_job("a", template_annotations={"scheduling.k8s.io/group-name": "pg"}),
          batch_job("b", template_annotations={"scheduling.k8s.io/group-name": "pg"}), pod_group("pg")],
         "Job b", "spec.template.metadata.annotations.scheduling.k8s.io/group-name", "already used by Job a", True),
    case("a Simulation with an unknown ordering", [NODE, simulation(ordering="fifo")],
         "Simulation sim", "spec.ordering", "expected one of skip, strict", True),
    case("a Simulation with a negative session period", [NODE, simulation(sessionPeriod="-1s")],
         "Simulation sim", "spec.sessionPeriod", "expected a duration >= 0", True),
    case("a Simulation with a zero horizon", [NODE, simulation(horizon=0)],
         "Simulation sim", "spec.horizon", "expected seconds > 0", True),
    case("a Simulation with preemption as a string", [NODE, simulation(preemption="yes")],
         "Simulation sim", "spec.preemption", "expected true or false", True),
    case("a Simulation with a fractional seed", [NODE, simulation(seed=1.5)],
         "Simulation sim", "spec.seed", "expected a whole number >= 0", True),
]


@pytest.mark.parametrize("source, obj, field, words, schema_ok", BAD)
def test_bad_input_is_one_error_naming_object_and_field(source, obj, field, words, schema_ok):
    with pytest.raises(ScenarioError) as info:
        load_manifests(source)
    lines = str(info.value).splitlines()
    where = f"{obj}: {field}: " if field else f"{obj}: "
    assert any(line.startswith(where) and words in line for line in lines), lines


@requires_schemas
@pytest.mark.parametrize("source, obj, field, words, schema_ok", BAD)
def test_the_schemas_catch_some_bad_input_and_gangkit_the_rest(source, obj, field, words, schema_ok):
    """Built-in schemas carry no value rules (parallelism: -2 passes), so gangkit must check values itself."""
    verdicts = []
    for doc in docs_of(source):
        try:
            validate_manifest(doc)
            verdicts.append(True)
        except (AssertionError, AttributeError):
            verdicts.append(False)
    assert all(verdicts) == schema_ok


def test_all_problems_are_reported_at_once_one_line_each():
    source = [node("n", gpus="0.5"), batch_job("a", pods=0, run_time="-1s"), {"apiVersion": "v1", "kind": "Pod"}]  # no metadata
    with pytest.raises(ScenarioError) as info:
        load_manifests(source)
    assert [str(p) for p in info.value.problems] == str(info.value).splitlines()
    assert [(p.obj, p.field) for p in info.value.problems] == [
        ("Pod (document 3)", "metadata"),
        ("Node n", f"status.allocatable.{GPU}"),
        ("Job a", "spec.parallelism"),
        ("Job a", "metadata.annotations.gangkit/run-time"),
    ]


@pytest.mark.parametrize(
    "text, position",
    [
        case("unclosed bracket", "apiVersion: v1\nkind: Node\nmetadata: {name: [a\n", "line 4, column 1"),
        case("bad indentation", "apiVersion: v1\nkind: Node\n  metadata: x\n", "line 3, column 11"),
        case("tab for indentation", "apiVersion: v1\nkind: Node\nmetadata:\n\tname: a\n", "line 4, column 1"),
        case("error in a later document", yaml.safe_dump(NODE) + "---\nkind: [\n", "line"),
    ],
)
def test_a_yaml_syntax_error_is_one_line_with_its_position(text, position):
    with pytest.raises(ScenarioError) as info:
        load_manifests(text)
    [problem] = info.value.problems
    assert problem.obj == "YAML input"
    assert position in problem.field
    assert "invalid YAML" in problem.message


def test_a_yaml_syntax_error_in_a_file_names_the_file(tmp_path):
    path = tmp_path / "broken.yaml"
    path.write_text("kind: [\n")
    with pytest.raises(ScenarioError, match=r"^broken.yaml: line 2, column 1: invalid YAML"):
        load_file(path)


# --- warnings: said once, listing everything ------------------------------------

WARN = [
    # (input, words each warning must contain (one warning per entry), schema accepts the input?)
    case("a misspelt field is listed",
         [NODE, edit(batch_job("a", namespace="t"), "spec.paralelism", 4)],
         [["1 field(s)", "Job t/a: spec.paralelism (did you mean parallelism?)"]], False),
    case("scheduling fields gangkit does not model are listed",
         [NODE, edit(edit(batch_job("a"), "spec.template.spec.tolerations", [{"operator": "Exists"}]),
                     "spec.template.spec.affinity", {})],
         [["2 field(s)", "Job a: spec.template.spec.tolerations\n", "Job a: spec.template.spec.affinity"]], True),
    case("unknown fields of many objects make one warning",
         [edit(NODE, "spec.taints", [{"key": "gpu", "effect": "NoSchedule"}]), edit(NODE, "metadata.name", "gpu-1") | {"extra": 1},
          edit(batch_job("a"), "spec.template.spec.initContainers", [{"name": "init"}]),
          edit(pod_group("pg"), "spec.minTaskMember", {"workers": 1}),
          edit(simulation(), "spec.speed", "fast")],
         [["5 field(s)", "Node gpu-0: spec.taints", "Node gpu-1: extra", "Job a: spec.template.spec.initContainers",
           "PodGroup pg: spec.minTaskMember", "Simulation sim: spec.speed"],
          ["PodGroup pg is not used"]], False),
    case("other extended resources are listed (only nvidia.com/gpu is counted)",
         [NODE, container(batch_job("a"), resources={"limits": {GPU: "1", "rdma/ib": "1"}})],
         [["Job a: spec.template.spec.containers[0].resources.limits.rdma/ib"]], True),
    case("a misspelt gangkit annotation is listed",
         [NODE, batch_job("a", annotations={"gangkit/runtime": "5m"})],
         [["Job a: metadata.annotations.gangkit/runtime"]], True),
    case("gangkit annotations on the pod template are listed (they belong on the Job)",
         [NODE, batch_job("a", template_annotations={"gangkit/progress": "independent"})],
         [["Job a: spec.template.metadata.annotations.gangkit/progress"]], True),
    case("a non-default preemptionPolicy is listed",
         [NODE, priority_class("p", 1) | {"preemptionPolicy": "Never"}],
         [["PriorityClass p: preemptionPolicy"]], True),
    case("completions different from parallelism",
         [NODE, batch_job("a", pods=2, completions=8)],
         [["Job a: spec.completions is 8 but spec.parallelism is 2", "one wave of 2 pod(s)"]], True),
    case("a PodGroup no Job uses",
         [NODE, batch_job("a"), pod_group("lonely", 1)],
         [["PodGroup lonely is not used", "scheduling.k8s.io/group-name: lonely"]], True),
    case("jobs without a run time get the default, listed in one warning",
         [NODE, batch_job("a", run_time=None), batch_job("b"), batch_job("c", namespace="t", run_time=None)],
         [["no gangkit/run-time annotation on 2 Job(s)", f"default {DEFAULT_RUN_TIME:g} s", "a, t/c"]], True),
]


@pytest.mark.parametrize("source, expected, schema_ok", WARN)
def test_warnings_are_emitted_once_each_and_kept_on_the_scenario(source, expected, schema_ok):
    sc, emitted = load_warning(source)
    assert len(emitted) == len(expected), emitted
    for message, words in zip(emitted, expected):
        for w in words:
            assert w in message, message


@requires_schemas
@pytest.mark.parametrize("source, expected, schema_ok", WARN)
def test_warned_fields_that_exist_in_kubernetes_pass_the_schema_and_typos_do_not(source, expected, schema_ok):
    verdicts = []
    for doc in docs_of(source):
        try:
            validate_manifest(doc)
            verdicts.append(True)
        except AssertionError:
            verdicts.append(False)
    assert all(verdicts) == schema_ok


def test_the_default_run_time_is_applied():
    sc, _ = load_warning([NODE, batch_job("a", run_time=None)])
    assert sc.jobs[0].run_time == DEFAULT_RUN_TIME == 3600.0


def test_a_real_kubectl_node_dump_loads_without_warnings():
    """A Node as ``kubectl get node -o yaml`` prints it: many status fields, all harmless."""
    doc = node(
        "ip-10-0-1-23",
        labels={"karpenter.sh/nodepool": "gpu", "kubernetes.io/arch": "amd64"},
        allocatable={GPU: "8", "cpu": "191450m", "memory": "2003568996Ki", "pods": "737", "ephemeral-storage": "1Ti",
                     "hugepages-1Gi": "0"},
        capacity={GPU: "8", "cpu": "192", "memory": "2097152000Ki", "pods": "737"},
        addresses=[{"type": "InternalIP", "address": "10.0.1.23"}],
        conditions=[{"type": "Ready", "status": "True"}],
    )
    doc["metadata"].update(uid="f00", resourceVersion="42", creationTimestamp="2026-01-01T00:00:00Z",
                           annotations={"node.alpha.kubernetes.io/ttl": "0"})
    doc["spec"] = {"providerID": "aws:///us-east-1a/i-0abc"}
    sc = load_quietly([doc])
    assert (sc.nodes[0].gpus, sc.nodes[0].cpu, sc.nodes[0].memory, sc.nodes[0].pool) == (8, 191.45, 2003568996 * 1024, "gpu")


# --- the examples -------------------------------------------------------------------


def _shape(sc: Scenario):
    return [(n.name, n.gpus) for n in sc.nodes], [
        (j.key, j.pod_count, j.pod_sets[0].gpus, j.run_time, j.submit_time, j.progress, j.priority, j.gang_size)
        for j in sc.jobs
    ]


@pytest.mark.parametrize(
    "filename, node_shape, job_shape",
    [
        case("three workers: 2 nodes x 2 GPUs; Z, X (3 sync workers, a gang), Y at 60 s",
             "three-workers.yaml",
             [("gpu-node-0", 2), ("gpu-node-1", 2)],
             [("Z", 1, 2, 600.0, 0.0, "sync", 100, 1),
              ("X", 3, 1, 300.0, 0.0, "sync", 100, 3),
              ("Y", 1, 1, 300.0, 60.0, "sync", 100, 1)]),
        case("two gangs deadlock: 4 nodes x 1 GPU; A and B, 4 sync workers each, equal priority",
             "two-gangs-deadlock.yaml",
             [("gpu-0", 1), ("gpu-1", 1), ("gpu-2", 1), ("gpu-3", 1)],
             [("team-a/A", 4, 1, 600.0, 0.0, "sync", 1000, 4),
              ("team-b/B", 4, 1, 600.0, 0.0, "sync", 1000, 4)]),
    ],
)
def test_the_examples_describe_their_scenario(filename, node_shape, job_shape):
    sc = load_quietly(ROOT / "examples" / filename)
    assert _shape(sc) == (node_shape, job_shape)
    assert sc.name == Path(filename).stem


def test_three_workers_sets_its_gang_with_a_podgroup():
    sc = load_quietly(ROOT / "examples" / "three-workers.yaml")
    assert {j.name: j.min_member for j in sc.jobs} == {"Z": None, "X": 3, "Y": None}


@requires_schemas
@pytest.mark.parametrize("path", [pytest.param(p, id=p.name) for p in EXAMPLES])
def test_the_examples_are_valid_for_the_real_schemas(path):
    assert validate_yaml(path.read_text()) >= 1


# --- writing back: dump_manifests ---------------------------------------------------


def _python_scenario(*jobs: Job, node_list=None, **settings) -> Scenario:
    return Scenario(nodes=node_list or nodes(2, gpus=4), jobs=list(jobs), settings=RunSettings(**settings), name="py")


ROUND_TRIP = [
    case("a plain job", _python_scenario(job("a", pods=3, gpus=2, run_time=300))),
    case("submit time, independent progress, checkpoints",
         _python_scenario(job("a", submit_time=12.5, progress="independent", checkpoint_interval=900.0))),
    case("priorities, negative ones too",
         _python_scenario(job("a", priority=100), job("b", priority=-5), job("c", priority=100))),
    case("namespace and queue", _python_scenario(job("a", queue="team-a", namespace="team-a"),
                                                 job("b", queue="shared", namespace="team-b"))),
    case("a gang smaller than the job", _python_scenario(job("a", pods=8, min_member=6))),
    case("a gang of every pod", _python_scenario(job("a", pods=4, min_member=4))),
    case("a declared maximum run time", _python_scenario(job("a", max_run_time=7200.0))),
    case("cpu, memory and a node selector",
         _python_scenario(Job("a", [PodSet("workers", 2, 1, 0.25, 3 * 2**30, {"pool": "a100"})], run_time=60.0),
                          node_list=[Node("n", 8, cpu=95.5, memory=2**40, labels={"pool": "a100"})])),
    case("nodes with pools and labels",
         _python_scenario(node_list=[Node("a", 8, labels={"karpenter.sh/nodepool": "h100"}, pool="h100"),
                                     Node("b", 0, cpu=16.0, memory=64 * 2**30)])),
    case("every run setting",
         _python_scenario(job("a"), stack="kueue+gang", ordering="strict", scoring="MostAllocated", preemption=True,
                          session_period=0.5, seed=3, horizon=90000.0, record="summary")),
]


@pytest.mark.parametrize("scenario", ROUND_TRIP)
def test_dump_then_load_gives_back_nodes_jobs_and_settings(scenario):
    again = load_quietly(dump_manifests(scenario))
    assert again.nodes == scenario.nodes
    assert again.settings == scenario.settings
    assert again.name == scenario.name
    assert [_without_labels(j) for j in again.jobs] == [_without_labels(j) for j in scenario.jobs]


def _without_labels(j: Job) -> Job:
    return dataclasses.replace(j, labels={})


@pytest.mark.parametrize(
    "before, after",
    [
        case("a pool becomes a karpenter.sh/nodepool label",
             Node("n", 1, pool="a100"), Node("n", 1, pool="a100", labels={"karpenter.sh/nodepool": "a100"})),
    ],
)
def test_dump_writes_pools_as_labels(before, after):
    assert load_quietly(dump_manifests(_python_scenario(node_list=[before]))).nodes == [after]


@pytest.mark.parametrize(
    "queue, namespace, label",
    [
        case("queue is the namespace: no label needed", "team-a", "team-a", None),
        case("queue differs from the namespace: Kueue label", "shared", "team-a", "shared"),
        case("no namespace, default queue: no label", "default", None, None),
    ],
)
def test_dump_writes_a_queue_label_only_when_needed(queue, namespace, label):
    text = dump_manifests(_python_scenario(job("a", queue=queue, namespace=namespace)))
    [doc] = [d for d in yaml.safe_load_all(text) if d["kind"] == "Job"]
    assert (doc["metadata"].get("labels") or {}).get("kueue.x-k8s.io/queue-name") == label


MAX_DUMPED_JOBS = 200  # a generator example holds thousands of jobs; their manifests all have the same shape


def trimmed(sc: Scenario) -> Scenario:
    """The scenario with at most its first MAX_DUMPED_JOBS jobs (dumping and validating more only takes longer)."""
    return dataclasses.replace(sc, jobs=sc.jobs[:MAX_DUMPED_JOBS])


@pytest.mark.parametrize("path", [pytest.param(p, id=p.name) for p in EXAMPLES])
def test_examples_round_trip_through_dump(path):
    sc = trimmed(load_quietly(path))
    again = load_quietly(dump_manifests(sc))
    assert (again.nodes, again.jobs, again.settings, again.name, again.description) == (
        sc.nodes, sc.jobs, sc.settings, sc.name, sc.description)


@requires_schemas
@pytest.mark.parametrize("scenario", ROUND_TRIP + [pytest.param(trimmed(load_file(p)), id=p.name) for p in EXAMPLES])
def test_dump_output_is_valid_for_the_real_schemas(scenario):
    assert validate_yaml(dump_manifests(scenario)) >= len(scenario.nodes) + len(scenario.jobs)


def test_dump_writes_one_simulation_and_a_podgroup_per_gang():
    text = dump_manifests(_python_scenario(job("a", pods=4, min_member=2), job("b")))
    kinds = [d["kind"] for d in yaml.safe_load_all(text)]
    assert kinds == ["Node", "Node", "Job", "Job", "PodGroup", "Simulation"]


@pytest.mark.parametrize(
    "scenario, field, words",
    [
        case("two pod sets do not fit one batch/v1 Job",
             _python_scenario(Job("a", [PodSet("master", 1, 0), PodSet("workers", 2, 1)], run_time=1.0)),
             "pod_sets", "expected one pod set, got 2"),
        case("activeDeadlineSeconds is whole seconds",
             _python_scenario(job("a", max_run_time=1.5)), "max_run_time", "whole seconds"),
    ],
)
def test_dump_refuses_what_manifests_cannot_say(scenario, field, words):
    with pytest.raises(ScenarioError, match=f"Job a: {field}: .*{words}"):
        dump_manifests(scenario)


# --- the known-field lists match the real schemas ----------------------------------


@requires_schemas
@pytest.mark.parametrize(
    "kind, api_version",
    [
        case("Node", "Node", "v1"),
        case("Job (Kubernetes 1.35: pod template spec.workloadRef)", "Job", "batch/v1@1.35"),
        case("PriorityClass", "PriorityClass", "scheduling.k8s.io/v1"),
        case("PodGroup", "PodGroup", "scheduling.volcano.sh/v1beta1"),
        case("scheduler-plugins PodGroup", "CoschedulingPodGroup", "scheduling.x-k8s.io/v1alpha1"),
        case("Kubernetes Workload", "KubeWorkload", "scheduling.k8s.io/v1alpha1@1.35"),
    ],
)
def test_every_field_gangkit_knows_exists_in_the_real_schema(kind, api_version):
    """A typo in gangkit's own list of known fields would hide a user's typo: check it against the schema."""
    components: dict = {}
    if api_version.endswith("@1.35"):  # the official 1.35 OpenAPI (set B), whose objects use $ref
        api_version = api_version[: -len("@1.35")]
        schema, components = openapi_135(api_version, {"Job": "io.k8s.api.batch.v1.Job"}.get(
            kind, "io.k8s.api.scheduling.v1alpha1.Workload"))
    else:
        schema = schema_for(api_version, "PodGroup" if kind == "CoschedulingPodGroup" else kind)

    def deref(schema):
        while "$ref" in schema or ("allOf" in schema and len(schema["allOf"]) == 1):
            schema = components[schema["$ref"].rsplit("/", 1)[1]] if "$ref" in schema else schema["allOf"][0]
        return schema

    missing = fields_missing_from({**CORE_KNOWN_FIELDS, **GANG_KNOWN_FIELDS}[kind], schema, kind, deref=deref)
    # Kubernetes 1.36's pod field is not in the 1.35 OpenAPI; its own fields are checked against the 1.36 API
    # reference's lists in tests/placement/test_kube_gang_manifests_136.py
    later = {"Job.spec.template.spec.schedulingGroup"}
    assert [m for m in missing if m not in later] == []
    if kind == "Job":
        assert set(missing) == later  # the allowance is not stale: the 1.35 schema still lacks it


def openapi_135(api_version: str, name: str) -> tuple[dict, dict]:
    """One object's schema in the Kubernetes 1.35 OpenAPI v3 files of the shared schema folder, and its components."""
    import json

    group = "api__v1" if api_version == "v1" else "apis__" + api_version.replace("/", "__")
    path = SCHEMAS_DIR / "kubernetes" / "openapi-v3-1.35" / f"{group}_openapi.json"
    components = json.loads(path.read_text())["components"]["schemas"]
    return components[name], components


def test_the_full_example_on_the_reference_page_is_the_three_workers_example():
    page = (ROOT / "docs" / "reference" / "scenario-yaml.md").read_text()
    block = page.split("## Full example")[1].split("```yaml\n")[1].split("```")[0]
    from_page, from_file = load_quietly(block), load_quietly(ROOT / "examples" / "three-workers.yaml")
    assert (from_page.nodes, from_page.jobs, from_page.settings) == (from_file.nodes, from_file.jobs, from_file.settings)


# --- Volcano's Queue and Job (gangkit.volcano.manifests) ----------------------------------

from gangkit.manifests.apps import KNOWN_FIELDS as APPS_KNOWN_FIELDS  # noqa: E402
from gangkit.manifests.companions import COMPANIONS as COMPANION_KINDS  # noqa: E402
from gangkit.manifests.cronjob import KNOWN_FIELDS as CRONJOB_KNOWN_FIELDS  # noqa: E402
from gangkit.manifests.lws import KNOWN_FIELDS as LWS_KNOWN_FIELDS  # noqa: E402
from gangkit.manifests.training import KNOWN_FIELDS as TRAINING_KNOWN_FIELDS  # noqa: E402
from gangkit.model.resources import Resources  # noqa: E402
from gangkit.volcano.api import Queue  # noqa: E402
from gangkit.volcano.manifests import KNOWN_FIELDS as VOLCANO_KNOWN_FIELDS  # noqa: E402

INF = float("inf")


def vc_queue(name="research", **spec):
    doc = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": name}}
    if spec:
        doc["spec"] = spec
    return doc


def vc_task(name="worker", replicas=2, gpus="1", min_available=None, **pod):
    container = {"name": name, "image": "trainer:1.0", "resources": {"limits": {GPU: gpus}}}
    task = {"name": name, "replicas": replicas}
    if min_available is not None:
        task["minAvailable"] = min_available
    task["template"] = {"spec": {"restartPolicy": "Never", "containers": [container], **pod}}
    return task


def vc_job(name="train", tasks=None, annotations=None, **spec):
    meta = {"name": name, "annotations": annotations or {"gangkit/run-time": "10m"}}
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": meta,
            "spec": {**spec, "tasks": tasks if tasks is not None else [vc_task()]}}


def pod_group(name="train", **spec):
    return {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup", "metadata": {"name": name}, "spec": spec}


def grouped_batch_job(name="train"):
    return batch_job(name, pods=2, template_annotations={"scheduling.k8s.io/group-name": name})


def _queues(sc):
    return {q.name: q for q in sc.volcano.queues}


def _job(sc, name="train"):
    return next(j for j in sc.jobs if j.name == name)


VOLCANO_GOOD = [
    case("a Queue's weight, capability, guarantee, reclaimable and priority",
         [NODE, vc_queue(weight=3, capability={GPU: "8", "cpu": "64"}, guarantee={"resource": {GPU: "2"}},
                         reclaimable=False, priority=5)],
         lambda sc: _queues(sc)["research"],
         Queue("research", weight=3, capability=Resources(8, 64, INF), guarantee=Resources(2, 0, 0),
               reclaimable=False, priority=5)),
    case("a Queue without spec: weight 1, no capability, reclaimable",
         [NODE, vc_queue()], lambda sc: _queues(sc)["research"], Queue("research")),
    case("a Volcano Job: one pod set per task, the task's minAvailable as the role minimum",
         [NODE, vc_queue(), vc_job(queue="research", minAvailable=3,
                                   tasks=[vc_task("master", 1, "2", min_available=1), vc_task("worker", 4)])],
         lambda sc: (_job(sc).pod_sets, _job(sc).min_member, _job(sc).volcano_queue, _job(sc).controller),
         ([PodSet("master", 1, 2, min_member=1), PodSet("worker", 4, 1)], 3, "research", "volcano")),
    case("a Volcano Job's minAvailable defaults to the tasks' minAvailable, each defaulting to its replicas",
         [NODE, vc_job(tasks=[vc_task("ps", 2, min_available=1), vc_task("worker", 3)])],
         lambda sc: (_job(sc).min_member, _job(sc).volcano_queue), (4, "default")),
    case("a Volcano Job's task without a name is default<index>, as Volcano's webhook names it",
         [NODE, vc_job(tasks=[{k: v for k, v in vc_task().items() if k != "name"}])],
         lambda sc: _job(sc).pod_sets[0].name, "default0"),
    case("a Volcano Job's priorityClassName gives its priority",
         [NODE, priority_class("high", 100), vc_job(priorityClassName="high")],
         lambda sc: _job(sc).priority, 100),
    case("a Volcano Job's nodeSelector and CPU/memory requests",
         [NODE, vc_job(tasks=[{**vc_task(), "template": {"spec": {
             "nodeSelector": {"pool": "a100"}, "restartPolicy": "Never",
             "containers": [{"name": "w", "image": "t", "resources": {"limits": {GPU: "1"},
                                                                      "requests": {"cpu": "4", "memory": "16Gi"}}}]}}}])],
         lambda sc: _job(sc).pod_sets[0], PodSet("worker", 2, 1, 4.0, 16 * 2**30, {"pool": "a100"})),
    case("a PodGroup's queue and minResources go to the batch/v1 Job that names it",
         [NODE, vc_queue(), grouped_batch_job(), pod_group(minMember=2, queue="research", minResources={GPU: "2"})],
         lambda sc: (_job(sc).volcano_queue, _job(sc).min_resources, _job(sc).controller),
         ("research", Resources(2, 0, 0), "batch")),
    case("without any Volcano queue or Job the scenario has no Volcano setup (one default queue)",
         [NODE, grouped_batch_job(), pod_group(minMember=2)], lambda sc: sc.volcano, None),
]


@pytest.mark.parametrize("source, get, expected", VOLCANO_GOOD)
def test_volcano_manifests_load_into_the_scenario(source, get, expected):
    assert get(load_quietly(source)) == expected


@requires_schemas
@pytest.mark.parametrize("source, get, expected", VOLCANO_GOOD)
def test_every_good_volcano_manifest_is_valid_for_the_real_schemas(source, get, expected):
    for doc in docs_of(source):
        validate_manifest(doc)


VOLCANO_BAD = [
    case("a Queue weight of zero", [NODE, vc_queue(weight=0)], "Queue research", "spec.weight", ">= 1", False),
    case("a Queue guarantee above its capability",
         [NODE, vc_queue(capability={GPU: "2"}, guarantee={"resource": {GPU: "4"}})],
         "Queue research", "spec.guarantee.resource", "at most the capability", True),
    case("a fractional GPU capability", [NODE, vc_queue(capability={GPU: "1.5"})],
         "Queue research", f"spec.capability.{GPU}", "must be an integer", True),
    case("a Volcano Job naming a Queue that is not in the input", [NODE, vc_job(queue="nope")],
         "VolcanoJob train", "spec.queue", "names Queue 'nope'", True),
    case("a PodGroup naming a Queue that is not in the input",
         [NODE, grouped_batch_job(), pod_group(minMember=2, queue="nope")],
         "PodGroup train", "spec.queue", "names Queue 'nope'", True),
    case("a Volcano Job without tasks", [NODE, vc_job(tasks=[])], "VolcanoJob train", "spec.tasks",
         "at least one task", False),
    case("a task's minAvailable above its replicas", [NODE, vc_job(tasks=[vc_task(replicas=2, min_available=3)])],
         "VolcanoJob train", "spec.tasks[0].minAvailable", "at most the task's replicas (2)", True),
    case("a job's minAvailable above all replicas", [NODE, vc_job(minAvailable=5)],
         "VolcanoJob train", "spec.minAvailable", "at most the total replicas", True),
    case("a fractional GPU in a task names the task's field", [NODE, vc_job(tasks=[vc_task(gpus="0.5")])],
         "VolcanoJob train", f"spec.tasks[0].template.spec.containers[0].resources.limits.{GPU}", "must be an integer", True),
    case("two tasks of one name", [NODE, vc_job(tasks=[vc_task("w"), vc_task("w")])],
         "VolcanoJob train", "spec.tasks[1].name", "unique", True),
    # Volcano's job webhook on lifecycle policies (validatePolicies): the schema accepts each of these
    case("one event in two policies", [NODE, vc_job(policies=[{"event": "PodFailed", "action": "RestartJob"},
                                                              {"event": "PodFailed", "action": "AbortJob"}])],
         "VolcanoJob train", "spec.policies[1].event", "duplicate event PodFailed across different policy", True),
    case("an event and an exit code in one policy", [NODE, vc_job(policies=[{"event": "PodFailed", "exitCode": 3,
                                                                             "action": "RestartJob"}])],
         "VolcanoJob train", "spec.policies[0]", "must not specify event and exitCode simultaneously", True),
    case("exit code 0", [NODE, vc_job(policies=[{"exitCode": 0, "action": "RestartJob"}])],
         "VolcanoJob train", "spec.policies[0].exitCode", "0 is not a valid error code", True),
    case("* beside another event", [NODE, vc_job(policies=[{"event": "*", "action": "RestartJob"},
                                                           {"event": "PodEvicted", "action": "RestartJob"}])],
         "VolcanoJob train", "spec.policies", "if there's * here, no other policy should be here", True),
    case("an internal action", [NODE, vc_job(tasks=[{**vc_task(), "policies": [{"event": "PodFailed", "action": "SyncJob"}]}])],
         "VolcanoJob train", "spec.tasks[0].policies[0].action", "invalid policy action 'SyncJob'", True),
]


@pytest.mark.parametrize("source, obj, field, words, schema_ok", VOLCANO_BAD)
def test_bad_volcano_input_is_one_error_naming_object_and_field(source, obj, field, words, schema_ok):
    with pytest.raises(ScenarioError) as info:
        load_manifests(source)
    lines = str(info.value).splitlines()
    assert any(line.startswith(f"{obj}: {field}: ") and words in line for line in lines), lines


# --- the holding gang schedulers' objects (gangkit.placement.manifests) ---------------------------------


def cos_pod_group(name="train", **spec):
    return {"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup", "metadata": {"name": name}, "spec": spec}


def workload(name="train", groups=None):
    groups = [{"name": "workers", "policy": {"gang": {"minCount": 2}}}] if groups is None else groups
    return {"apiVersion": "scheduling.k8s.io/v1alpha1", "kind": "Workload", "metadata": {"name": name},
            "spec": {"podGroups": groups}}


def gang_job(pods=4, labels=None, annotations=None, workload_ref=None, name="train"):
    doc = batch_job(name, pods=pods)
    meta = doc["spec"]["template"].setdefault("metadata", {})
    if labels:
        meta["labels"] = labels
    if annotations:
        meta["annotations"] = annotations
    if workload_ref is not None:
        doc["spec"]["template"]["spec"]["workloadRef"] = workload_ref
    return doc


def task_groups(min_member=3, name="workers"):
    return json.dumps([{"name": name, "minMember": min_member, "minResource": {GPU: "1"}}])


COS = "scheduling.x-k8s.io/pod-group"
TG, TGN, POLICY = "yunikorn.apache.org/task-groups", "yunikorn.apache.org/task-group-name", "yunikorn.apache.org/schedulingPolicyParameters"

GANG_GOOD = [
    case("a scheduler-plugins PodGroup gives minMember and scheduleTimeoutSeconds",
         [NODE, cos_pod_group(minMember=3, scheduleTimeoutSeconds=30), gang_job(labels={COS: "train"})],
         {"min_member": 3, "schedule_timeout": 30.0}),
    case("a scheduler-plugins PodGroup without minMember gangs every pod",
         [NODE, cos_pod_group(), gang_job(labels={COS: "train"})], {"min_member": None, "schedule_timeout": None}),
    case("YuniKorn task groups: minMember, placeholder timeout and style",
         [NODE, gang_job(annotations={TG: task_groups(3), TGN: "workers",
                                      POLICY: "placeholderTimeoutInSeconds=60 gangSchedulingStyle=Hard"})],
         {"min_member": 3, "placeholder_timeout": 60.0, "gang_style": "Hard"}),
    case("YuniKorn without policy parameters keeps the scheduler's defaults",
         [NODE, gang_job(annotations={TG: task_groups(4), TGN: "workers"})],
         {"min_member": 4, "placeholder_timeout": None, "gang_style": None}),
    case("a Workload pod group with a gang policy gives minCount",
         [NODE, workload(), gang_job(workload_ref={"name": "train", "podGroup": "workers"})], {"min_member": 2}),
    case("a Workload pod group with the basic policy schedules pods one by one",
         [NODE, workload(groups=[{"name": "workers", "policy": {"basic": {}}}]),
          gang_job(workload_ref={"name": "train", "podGroup": "workers"})], {"min_member": 1}),
]


@pytest.mark.parametrize("source, expected", GANG_GOOD)
def test_holding_gang_objects_load_into_the_job(source, expected):
    j = load_quietly(source).jobs[0]
    assert {k: getattr(j, k) for k in expected} == expected


@requires_schemas
@pytest.mark.parametrize("source, expected", GANG_GOOD)
def test_holding_gang_objects_are_valid_for_the_real_schemas(source, expected):
    for doc in source:
        validate_manifest(doc)


GANG_BAD = [
    case("the pod-group label names a PodGroup that is not there", [NODE, gang_job(labels={COS: "nope"})],
         "Job train", f"spec.template.metadata.labels.{COS}", "names PodGroup 'nope' (scheduling.x-k8s.io/v1alpha1)"),
    case("scheduleTimeoutSeconds 0", [NODE, cos_pod_group(scheduleTimeoutSeconds=0), gang_job(labels={COS: "train"})],
         "PodGroup train", "spec.scheduleTimeoutSeconds", "expected whole seconds >= 1, got 0"),
    case("task-groups that are not JSON", [NODE, gang_job(annotations={TG: "[{name: workers}", TGN: "workers"})],
         "Job train", f"spec.template.metadata.annotations.{TG}", "expected a JSON list of task groups"),
    case("a task-group-name that no task group has", [NODE, gang_job(annotations={TG: task_groups(), TGN: "other"})],
         "Job train", f"spec.template.metadata.annotations.{TGN}", "names task group 'other', which is not among"),
    case("task groups without a task-group-name", [NODE, gang_job(annotations={TG: task_groups()})],
         "Job train", f"spec.template.metadata.annotations.{TGN}", "needs both task-groups and task-group-name"),
    case("an unknown gangSchedulingStyle",
         [NODE, gang_job(annotations={TG: task_groups(), TGN: "workers", POLICY: "gangSchedulingStyle=Medium"})],
         "Job train", f"spec.template.metadata.annotations.{POLICY}", "expected one of Soft, Hard, got 'Medium'"),
    case("a placeholder timeout that is not whole seconds",
         [NODE, gang_job(annotations={TG: task_groups(), TGN: "workers", POLICY: "placeholderTimeoutInSeconds=1m"})],
         "Job train", f"spec.template.metadata.annotations.{POLICY}", "expected whole seconds > 0, got '1m'"),
    case("a workloadRef to a missing Workload", [NODE, gang_job(workload_ref={"name": "nope", "podGroup": "workers"})],
         "Job train", "spec.template.spec.workloadRef.name", "names Workload 'nope'"),
    case("a workloadRef to a pod group the Workload does not list",
         [NODE, workload(), gang_job(workload_ref={"name": "train", "podGroup": "ps"})],
         "Job train", "spec.template.spec.workloadRef.podGroup", "names pod group 'ps', which Workload 'train' does not list"),
    case("a pod group with both policies",
         [NODE, workload(groups=[{"name": "workers", "policy": {"basic": {}, "gang": {"minCount": 2}}}]),
          gang_job(workload_ref={"name": "train", "podGroup": "workers"})],
         "Workload train", "spec.podGroups[0].policy", "expected exactly one of gang or basic"),
    case("two gangs on one Job", [NODE, cos_pod_group(), gang_job(labels={COS: "train"}, annotations={TG: task_groups(), TGN: "workers"})],
         "Job train", f"spec.template.metadata.annotations.{TGN}", "names a second gang"),
    case("a Volcano PodGroup and a Workload on one Job",
         [NODE, pod_group("train"), workload(),
          edit(gang_job(workload_ref={"name": "train", "podGroup": "workers"}),
               "spec.template.metadata.annotations", {"scheduling.k8s.io/group-name": "train"})],
         "Job train", "spec.template.spec.workloadRef", "names a second gang"),
    case("two Jobs in one scheduler-plugins PodGroup",
         [NODE, cos_pod_group(), gang_job(labels={COS: "train"}), gang_job(labels={COS: "train"}, name="other")],
         "Job other", f"spec.template.metadata.labels.{COS}", "'train' is already used by Job train"),
]


@pytest.mark.parametrize("source, obj, field, words", GANG_BAD)
def test_bad_gang_objects_are_one_error_naming_object_and_field(source, obj, field, words):
    with pytest.raises(ScenarioError) as info:
        load_manifests(source)
    lines = str(info.value).splitlines()
    assert any(line.startswith(f"{obj}: {field}: ") and words in line for line in lines), lines


@requires_schemas
@pytest.mark.parametrize("source, obj, field, words, schema_ok", VOLCANO_BAD)
def test_the_volcano_schemas_catch_some_bad_input_and_gangkit_the_rest(source, obj, field, words, schema_ok):
    verdicts = []
    for doc in docs_of(source):
        try:
            validate_manifest(doc)
            verdicts.append(True)
        except (AssertionError, AttributeError):
            verdicts.append(False)
    assert all(verdicts) == schema_ok


def test_a_queue_deserved_is_reported_as_read_by_the_capacity_plugin():
    with pytest.warns(GangkitInputWarning, match="capacity plugin"):
        sc = load_manifests([NODE, vc_queue(deserved={GPU: "2"})])
    assert _queues(sc)["research"].deserved == Resources(2, 0, 0)


@requires_schemas
@pytest.mark.parametrize("kind, api_version", [case("Queue", "Queue", "scheduling.volcano.sh/v1beta1"),
                                               case("VolcanoJob", "VolcanoJob", "batch.volcano.sh/v1alpha1")])
def test_every_volcano_field_gangkit_knows_exists_in_the_real_schema(kind, api_version):
    missing = fields_missing_from(VOLCANO_KNOWN_FIELDS[kind], schema_for(api_version, "Job" if kind == "VolcanoJob" else kind), kind)
    assert missing == []


def test_volcano_jobs_and_queues_round_trip_through_dump():
    sc = load_quietly(ROOT / "examples" / "volcano-two-queues.yaml")
    again = load_quietly(dump_manifests(sc))
    assert (again.jobs, again.volcano) == (sc.jobs, sc.volcano)
    assert [j.controller for j in again.jobs] == ["batch", "volcano"]


def test_unused_gang_objects_and_unread_fields_are_reported():
    source = [NODE, cos_pod_group("lonely", minResources={GPU: "4"}), workload("idle"), batch_job("a")]
    sc, messages = load_warning(source)
    text = "\n".join(messages)
    assert "PodGroup lonely: spec.minResources" in text  # read by the plugin's PreFilter, not by gangkit
    assert "PodGroup lonely (scheduling.x-k8s.io/v1alpha1) is not used" in text
    assert "Workload idle (scheduling.k8s.io/v1alpha1) is not used" in text


@pytest.mark.parametrize(
    "filename, stack, fields",
    [
        case("coscheduling", "coscheduling.yaml", "coscheduling", {"min_member": 4, "schedule_timeout": 120.0}),
        case("yunikorn", "yunikorn.yaml", "yunikorn", {"min_member": 4, "placeholder_timeout": 600.0, "gang_style": "Hard"}),
        case("kube-gang", "kube-gang.yaml", "kube-gang", {"min_member": 4}),
    ],
)
def test_the_holding_gang_examples_load_and_run_by_stack_name(filename, stack, fields):
    sc = load_quietly(ROOT / "examples" / filename)
    big = {j.name: j for j in sc.jobs}["big"]
    assert {k: getattr(big, k) for k in fields} == fields
    assert sc.settings.stack == stack
    from gangkit import simulate

    assert simulate(sc).stack == stack


@pytest.mark.parametrize(
    "j",
    [
        case("coscheduling settings", job("a", pods=3, min_member=2, schedule_timeout=30)),
        case("YuniKorn settings", job("a", pods=3, min_member=3, placeholder_timeout=120, gang_style="Hard")),
    ],
)
def test_holding_gang_settings_round_trip_through_dump(j):
    sc = _python_scenario(j)
    text = dump_manifests(sc)
    assert load_quietly(text).jobs == sc.jobs
    if SCHEMAS_DIR.is_dir():
        validate_yaml(text)


def test_dump_refuses_two_gangs_on_one_job():
    with pytest.raises(ScenarioError, match="Job a: gang: schedule_timeout .* name two gangs"):
        dump_manifests(_python_scenario(job("a", schedule_timeout=30, gang_style="Soft")))


# --- the registry of kinds, and the way the manifest modules depend on each other ---------------

import ast  # noqa: E402

from gangkit.kueue import manifests as kueue_manifests  # noqa: E402
from gangkit.manifests.kinds import KINDS, Registry  # noqa: E402
from gangkit.manifests.load import REGISTRY  # noqa: E402
from gangkit.supply import ClusterAutoscaler, InstanceType, NodeGroup  # noqa: E402
from gangkit.supply.manifests import EXPANDERS  # noqa: E402
from gangkit.supply.manifests import KNOWN_FIELDS as SUPPLY_KNOWN_FIELDS  # noqa: E402

MANIFEST_MODULES = ["gangkit/model/reading/reader.py", "gangkit/model/reading/yaml_text.py", "gangkit/manifests/kinds.py", "gangkit/manifests/core.py",
                    "gangkit/manifests/load.py", "gangkit/manifests/dump.py", "gangkit/supply/manifests.py",
                    "gangkit/placement/manifests.py", "gangkit/volcano/manifests.py", "gangkit/kueue/manifests.py",
                    "gangkit/kueue/setup_manifests.py", "gangkit/manifests/kueue_snapshot.py",
                    "gangkit/manifests/core_dump.py", "gangkit/manifests/simulation.py", "gangkit/manifests/streams.py",
                    "gangkit/manifests/resume.py"]
FAMILIES = ("gangkit.supply.manifests", "gangkit.placement.manifests", "gangkit.volcano.manifests",
            "gangkit.kueue.manifests", "gangkit.kueue.setup_manifests", "gangkit.manifests.core")


def _imports(path: str) -> list[tuple[str, str]]:
    """(module, name) of every ``from gangkit... import name`` in a file, late ones too."""
    tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
    return [(n.module, a.name) for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and (n.module or "").startswith("gangkit")
            for a in n.names]


def test_every_kind_of_the_registry_is_read_by_a_module_that_knows_its_fields():
    known = {"gangkit.manifests.core": CORE_KNOWN_FIELDS, "gangkit.supply.manifests": SUPPLY_KNOWN_FIELDS,
             "gangkit.placement.manifests": GANG_KNOWN_FIELDS, "gangkit.volcano.manifests": VOLCANO_KNOWN_FIELDS,
             "gangkit.manifests.training": TRAINING_KNOWN_FIELDS, "gangkit.manifests.apps": APPS_KNOWN_FIELDS,
             "gangkit.manifests.lws": LWS_KNOWN_FIELDS, "gangkit.manifests.cronjob": CRONJOB_KNOWN_FIELDS}
    for k in KINDS:
        if k.module == "gangkit.kueue.manifests":
            assert k.api_version in kueue_manifests.API_VERSIONS[k.kind]
            kueue_manifests.known_fields(k.kind, k.api_version)
        elif k.module == "gangkit.manifests.companions":
            assert (k.api_version, k.kind) in COMPANION_KINDS, k
        elif k.module is not None:
            assert k.name in known[k.module], k
    kueue_rows = {(k.api_version, k.kind) for k in KINDS if k.module == "gangkit.kueue.manifests"}
    assert kueue_rows == {(v, kind) for kind, versions in kueue_manifests.API_VERSIONS.items() for v in versions}
    assert set(REGISTRY.readers) == {k.module for k in KINDS} - {None}
    with pytest.raises(ValueError, match="one read function per module"):
        Registry({"gangkit.manifests.core": lambda *a: None})


def test_an_unknown_kind_is_told_the_whole_board():
    with pytest.raises(ScenarioError) as e:
        load_manifests([{"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "web"}}])
    assert str(e.value).splitlines()[0] == (
        "DaemonSet web: kind: unknown kind 'DaemonSet' (apiVersion 'apps/v1'); gangkit reads Node (v1), Job (batch/v1), CronJob (batch/v1), "
        "JobSet (jobset.x-k8s.io/v1alpha2), PyTorchJob (kubeflow.org/v1), MPIJob (kubeflow.org/v2beta1), "
        "TFJob (kubeflow.org/v1), JAXJob (kubeflow.org/v1), PaddleJob (kubeflow.org/v1), XGBoostJob (kubeflow.org/v1), "
        "Pod (v1), Deployment (apps/v1), ReplicaSet (apps/v1), StatefulSet (apps/v1), "
        "LeaderWorkerSet (leaderworkerset.x-k8s.io/v1), TrainJob (trainer.kubeflow.org/v1alpha1), TrainingRuntime (trainer.kubeflow.org/v1alpha1), "
        "ClusterTrainingRuntime (trainer.kubeflow.org/v1alpha1), "
        "PodGroup (scheduling.volcano.sh/v1beta1), PriorityClass (scheduling.k8s.io/v1), "
        "Simulation (gangkit/v1alpha1), "
        "ClusterAutoscaler (gangkit/v1alpha1), Karpenter (gangkit/v1alpha1), NodePool (karpenter.sh/v1), "
        "ProvisioningRequest (autoscaling.x-k8s.io/v1), ProvisioningRequest (autoscaling.x-k8s.io/v1beta1), "
        "PodTemplate (v1), "
        "WorkloadGenerator (gangkit/v1alpha1), List (v1), PodGroup (scheduling.x-k8s.io/v1alpha1), "
        "Workload (scheduling.k8s.io/v1alpha1), Workload (scheduling.k8s.io/v1alpha2), "
        "PodGroup (scheduling.k8s.io/v1alpha2), ConfigMap (v1), Kueue's ResourceFlavor, ClusterQueue, LocalQueue, Cohort, "
        "WorkloadPriorityClass, Workload, AdmissionCheck, ProvisioningRequestConfig, Configuration, Volcano's "
        "Queue (scheduling.volcano.sh/v1beta1), Job (batch.volcano.sh/v1alpha1), and companion objects (not "
        "simulated): EC2NodeClass (karpenter.k8s.aws/v1), AKSNodeClass (karpenter.azure.com/v1beta1), KWOKNodeClass "
        "(karpenter.kwok.sh/v1alpha1), NodeClaim (karpenter.sh/v1), Topology, MultiKueueConfig, MultiKueueCluster, "
        "KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1), ResourceClaimTemplate (resource.k8s.io/v1), "
        "ResourceClaim (resource.k8s.io/v1), DeviceClass (resource.k8s.io/v1), ResourceSlice (resource.k8s.io/v1)")


@pytest.mark.parametrize(
    "api, kind, expected",
    [
        case("a Job of another version: batch/v1's", "batch/v2", "Job", "expected batch/v1"),
        case("a Workload of another group: Kueue's", "foo/v1", "Workload",
             "expected kueue.x-k8s.io/v1beta2 or kueue.x-k8s.io/v1beta1"),
        case("a PodGroup: both groups'", "foo/v1", "PodGroup",
             "expected scheduling.volcano.sh/v1beta1 or scheduling.x-k8s.io/v1alpha1"),
        case("a Queue of another version: an unknown kind", "foo/v1", "Queue", "unknown kind 'Queue'"),
    ],
)
def test_an_unknown_api_version_is_told_the_versions_of_its_kind(api, kind, expected):
    with pytest.raises(ScenarioError, match=expected):
        load_manifests([{"apiVersion": api, "kind": kind, "metadata": {"name": "x"}}])


def test_the_expanders_read_are_the_ones_cluster_autoscaler_accepts():
    group = [NodeGroup("g", InstanceType("gpu-8", 8, 8.0))]
    for expander in EXPANDERS:
        ClusterAutoscaler(group, expander=expander)
    with pytest.raises(ValueError, match=", ".join(EXPANDERS)):
        ClusterAutoscaler(group, expander="priority")


@pytest.mark.parametrize("path", MANIFEST_MODULES)
def test_manifest_modules_import_public_names_only(path):
    private = [f"{m}.{n}" for m, n in _imports(path) if n.startswith("_")]
    assert private == []


def test_the_reader_knows_no_family_and_families_do_not_know_load():
    for path in ("gangkit/model/reading/reader.py", "gangkit/model/reading/yaml_text.py", "gangkit/model/reading/fields.py"):
        assert all(m.startswith("gangkit.model.") for m, _ in _imports(path)), path  # plain data only
    assert {m for m, _ in _imports("gangkit/manifests/kinds.py")} == {"gangkit.model.reading"}
    for path in MANIFEST_MODULES:
        modules = {m for m, _ in _imports(path)}
        if path.replace("/", ".")[:-3] in FAMILIES:
            assert not modules & {"gangkit.manifests.load", "gangkit.manifests.dump", "gangkit.manifests.kinds"}, path


VOLCANO_NOT_MODELLED = [
    case("a task's own priorityClassName",
         [NODE, {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "hi"}, "value": 10},
          vc_job(tasks=[{**vc_task(), "template": {"spec": {**vc_task()["template"]["spec"], "priorityClassName": "hi"}}}])],
         "spec.tasks[0].template.spec.priorityClassName (hi) is not modelled"),
    case("hierarchical queues", [NODE, edit(vc_queue(), "metadata.annotations", {"volcano.sh/hierarchy": "root/eng"})],
         "metadata.annotations.volcano.sh/hierarchy not modelled"),
]


@pytest.mark.parametrize("source, words", VOLCANO_NOT_MODELLED)
def test_what_volcano_reads_and_gangkit_does_not_model_is_said(source, words):
    with pytest.warns(GangkitInputWarning, match=re.escape(words)):
        load_manifests(source)
