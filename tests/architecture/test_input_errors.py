"""Bad input gets one clear error naming the object, the field and what was expected."""

from __future__ import annotations

import codecs
import json
import time

import pytest

import gangkit as gk
from gangkit import Job, Node, PodSet, job, nodes
from gangkit.cli.main import main
from gangkit.manifests import GangkitInputWarning, load_file, load_manifests
from gangkit.manifests.kueue_snapshot import load_kueue
from gangkit.manifests.streams import MAX_JOBS
from gangkit.model.reading import MAX_DEPTH, MAX_INPUT_BYTES, MAX_JOB_PODS, MAX_SCENARIO_PODS
from gangkit.workloads import traces

from conftest import case, run_cli
from paths import REPO

CASES = [
    ("negative run time", [job("a", run_time=-5)], nodes(1), "Job a: run_time: expected a run time > 0 seconds, at most 9223372037, got -5"),
    ("zero pods", [Job("a", [PodSet("w", 0, 1)], 10)], nodes(1), "Job a: pod_sets[0].count: expected a whole number from 1 to 150000, got 0"),
    ("fractional GPUs", [Job("a", [PodSet("w", 1, 0.5)], 10)], nodes(1), "Job a: pod_sets[0].gpus: expected a whole number of GPUs from 0 to 2^63-1, got 0.5"),
    ("negative submit time", [job("a", submit_time=-1)], nodes(1), "Job a: submit_time: expected a submit time >= 0 seconds"),
    ("unknown progress mode", [job("a", progress="async")], nodes(1), "Job a: progress: expected one of sync, independent, got 'async'"),
    ("minMember of zero", [job("a", pods=2, min_member=0)], nodes(1), "Job a: min_member: expected a whole number from 1 to 150000, got 0"),
    ("duplicate job names", [job("a"), job("a")], nodes(1), "Job a: name: expected a unique name"),
    ("no nodes", [job("a")], [], "Scenario scenario: nodes: expected at least one Node"),
    ("negative node GPUs", [job("a")], [Node("n", -1)], "Node n: gpus: expected a whole number of GPUs from 0 to 2^63-1, got -1"),
    ("duplicate node names", [job("a")], [Node("n", 1), Node("n", 1)], "Node n: metadata.name: expected a unique name"),
    ("no pod sets", [Job("a", [], 10)], nodes(1), "Job a: pod_sets: expected at least one pod set"),
    # The Python API keeps the ranges the manifest readers keep (docs/reference/scenario-yaml.md, "Limits")
    ("node GPUs beyond int64", [job("a")], [Node("n", 10**400)],
     "Node n: gpus: expected a whole number of GPUs from 0 to 2^63-1, got an integer of 401 digits"),
    ("node memory beyond int64", [job("a")], [Node("n", 1, memory=2**63)], "Node n: memory: expected bytes from 0 to 2^63-1"),
    ("node cpu infinite", [job("a")], [Node("n", 1, cpu=float("inf"))], "Node n: cpu: expected cores from 0 to 2^63-1, got inf"),
    ("a gang beyond 150,000 pods", [job("a", pods=10**9)], nodes(1),
     "Job a: pod_sets[0].count: expected a whole number from 1 to 150000, got 1000000000"),
    ("a run time beyond Go's Duration", [job("a", run_time=1e300)], nodes(1),
     "Job a: run_time: expected a run time > 0 seconds, at most 9223372037, got 1e+300"),
    ("a submit time beyond Go's Duration", [job("a", submit_time=1e12)], nodes(1), "Job a: submit_time: expected a submit time >= 0"),
    ("pod memory beyond int64", [Job("a", [PodSet("w", 1, 1, memory=2**64)], 10)], nodes(1),
     "Job a: pod_sets[0].memory: expected bytes from 0 to 2^63-1"),
]


@pytest.mark.parametrize("jobs, node_list, message", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input_is_named(jobs, node_list, message):
    with pytest.raises(gk.ScenarioError) as err:
        gk.simulate(gk.Scenario(node_list, jobs), stack="pod")
    assert message in str(err.value)


def test_every_problem_is_reported_at_once_one_line_each():
    sc = gk.Scenario([Node("n", -1)], [job("a", run_time=0), job("b", progress="later")])
    with pytest.raises(gk.ScenarioError) as err:
        gk.simulate(sc)
    lines = str(err.value).splitlines()
    assert len(lines) == len(err.value.problems) == 3
    assert [p.obj for p in err.value.problems] == ["Node n", "Job a", "Job b"]


SETTINGS = [
    ("ordering", dict(ordering="fifo"), "Simulation settings: ordering: expected one of skip, strict, easy-backfill, "
     "conservative-backfill, volcano-backfill, largest-first, got 'fifo'"),
    ("scoring", dict(scoring="Random"), "Simulation settings: scoring: expected one of LeastAllocated, MostAllocated"),
    ("horizon", dict(horizon=0), "Simulation settings: horizon: expected seconds > 0, got 0"),
    ("record", dict(record="all"), "Simulation settings: record: expected one of summary, jobs, full"),
    ("session period", dict(session_period=-1), "Simulation settings: session_period: expected seconds >= 0"),
]


@pytest.mark.parametrize("settings, message", [c[1:] for c in SETTINGS], ids=[c[0] for c in SETTINGS])
def test_bad_settings_are_named(settings, message):
    with pytest.raises(gk.ScenarioError) as err:
        gk.simulate("three-workers", **settings)
    assert message in str(err.value)


def test_unknown_builtin_scenario():
    with pytest.raises(gk.ScenarioError, match="unknown built-in scenario"):
        gk.simulate("four-workers")


@pytest.mark.parametrize("kwargs, field", [(dict(n_jobs=0), "n_jobs"), (dict(n_nodes=-1), "n_nodes"), (dict(load=0), "load")])
def test_bad_mixed_parameters(kwargs, field):
    with pytest.raises(gk.ScenarioError, match=f"Scenario mixed: {field}"):
        gk.scenarios.mixed(**kwargs)


def test_horizon_cut_is_not_a_deadlock():
    result = gk.simulate("three-workers", stack="gang", horizon=100)
    states = result.jobs.set_index("job").state.to_dict()
    assert states == {"Z": "RunningAtEnd", "X": "WaitingAtEnd", "Y": "RunningAtEnd"}
    assert not result.deadlock and result.summary()["makespan_s"] == 100


def test_summary_recording_keeps_the_figures_of_a_full_recording():
    sc = gk.scenarios.mixed(n_jobs=1500, n_nodes=64, seed=3)  # jobs wait: every figure has something to count
    full = gk.simulate(sc, stack="gang").summary()
    assert full["mean_wait_s"] > 0
    light = gk.simulate(sc, stack="gang", record="summary")
    assert light.summary() == full and light.events.empty and light.jobs.empty


ORDERING_SETTINGS = [
    ("ordering spelled with an underscore", dict(ordering="easy_backfill"),
     "Simulation settings: ordering: expected one of skip, strict, easy-backfill"),
    ("ordering in the wrong case", dict(ordering="Largest-First"), "got 'Largest-First'"),
    ("estimate factor below 1", dict(estimate_factor=0.5), "Simulation settings: estimate_factor: expected a number >= 1, got 0.5"),
    ("estimate factor zero", dict(estimate_factor=0), "Simulation settings: estimate_factor: expected a number >= 1, got 0"),
    ("estimate factor not a number", dict(estimate_factor="2"), "Simulation settings: estimate_factor: expected a number >= 1, got '2'"),
    ("estimate factor infinite", dict(estimate_factor=float("inf")), "estimate_factor: expected a number >= 1, got inf"),
    ("estimate factor NaN", dict(estimate_factor=float("nan")), "estimate_factor: expected a number >= 1, got nan"),
    ("estimate factor a boolean", dict(estimate_factor=True), "estimate_factor: expected a number >= 1, got True"),
]


@pytest.mark.parametrize("settings, message", [c[1:] for c in ORDERING_SETTINGS], ids=[c[0] for c in ORDERING_SETTINGS])
def test_bad_ordering_settings_are_named(settings, message):
    with pytest.raises(gk.ScenarioError) as err:
        gk.simulate("three-workers", stack="gang", **settings)
    assert message in str(err.value)


SIMULATION_MANIFESTS = [
    ("unknown ordering", dict(ordering="backfill"), "spec.ordering: expected one of skip, strict, easy-backfill"),
    ("estimateFactor below 1", dict(estimateFactor=0.9), "spec.estimateFactor: expected a number >= 1, got 0.9"),
    ("estimateFactor as text", dict(estimateFactor="3x"), "spec.estimateFactor: expected a number >= 1, got '3x'"),
]


@pytest.mark.parametrize("spec, message", [c[1:] for c in SIMULATION_MANIFESTS], ids=[c[0] for c in SIMULATION_MANIFESTS])
def test_bad_ordering_fields_in_a_simulation_manifest(spec, message):
    docs = [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}, "status": {"allocatable": {"nvidia.com/gpu": "8"}}},
            {"apiVersion": "gangkit/v1alpha1", "kind": "Simulation", "metadata": {"name": "s"}, "spec": spec}]
    with pytest.raises(gk.ScenarioError) as err:
        gk.load_manifests(docs)
    assert f"Simulation s: {message}" in str(err.value)


def test_estimate_factor_is_read_from_a_simulation_manifest_and_written_back():
    docs = [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}, "status": {"allocatable": {"nvidia.com/gpu": "8"}}},
            {"apiVersion": "gangkit/v1alpha1", "kind": "Simulation", "metadata": {"name": "s"},
             "spec": {"ordering": "easy-backfill", "estimateFactor": 2.5}}]
    sc = gk.load_manifests(docs)
    assert (sc.settings.ordering, sc.settings.estimate_factor) == ("easy-backfill", 2.5)
    again = gk.load_manifests(gk.dump_manifests(sc))
    assert (again.settings.ordering, again.settings.estimate_factor) == ("easy-backfill", 2.5)


@pytest.mark.parametrize("argv, message", [
    (["--ordering", "easy"], "invalid choice: 'easy'"),
    (["--estimate-factor", "0.5"], "Simulation settings: estimate_factor: expected a number >= 1, got 0.5"),
    (["--estimate-factor", "three"], "invalid float value: 'three'"),
])
def test_bad_ordering_options_on_the_command_line(capsys, argv, message):
    from gangkit.cli.main import main

    try:
        status = main(["run", "three-workers", "--stack", "gang", *argv])
    except SystemExit as exit_:
        status = exit_.code
    assert status == 2
    assert message in capsys.readouterr().err


# -- the quick screen for plain jobs must never let a bad job through -------------------------------
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from gangkit.model.jobs import _plainly_valid  # noqa: E402

_ODD = st.sampled_from([None, -1, 0, 1, 2, 1.5, -0.0, float("nan"), float("inf"), True, "x", "", 2**63, 10**400, 1e300])


@settings(max_examples=200, deadline=None)
@given(name=st.sampled_from(["a", "", None]), count=_ODD, gpus=_ODD, cpu=_ODD, memory=_ODD, run_time=_ODD,
       submit=_ODD, priority=_ODD, progress=st.sampled_from(["sync", "independent", "x"]),
       controller=st.sampled_from(["batch", "volcano", "x"]), vq=st.sampled_from(["default", "", 3]),
       extra=st.sampled_from([{}, {"min_member": 1}, {"max_run_time": 5.0}, {"gang_style": "Soft"}]))
def test_plain_screen_passes_only_valid_jobs(name, count, gpus, cpu, memory, run_time, submit, priority,
                                             progress, controller, vq, extra):
    j = Job(name, [PodSet(count=count, gpus=gpus, cpu=cpu, memory=memory)], run_time=run_time, submit_time=submit,
            priority=priority, progress=progress, controller=controller, volcano_queue=vq, **extra)
    if _plainly_valid(j):
        assert j.problems() == []


@pytest.mark.parametrize("j", [job("a", run_time=5.0), job("b", pods=3, gpus=8, run_time=60, submit_time=2)])
def test_plain_screen_passes_plain_jobs(j):
    assert _plainly_valid(j) and j.problems() == []


# == hostile input: every class of failure ends in one ScenarioError naming the object and field =====
NODE = "apiVersion: v1\nkind: Node\nmetadata: {name: n}\nstatus: {allocatable: {nvidia.com/gpu: '8'}}\n"


def job_yaml(limits="{nvidia.com/gpu: 1}", spec="", pod="", annotations="{gangkit/run-time: 10m}", name="j", labels="{}"):
    return (f"---\napiVersion: batch/v1\nkind: Job\nmetadata: {{name: {name}, annotations: {annotations}, labels: {labels}}}\n"
            f"spec:\n  {spec or 'parallelism: 1'}\n  template:\n    spec:\n      {pod or 'restartPolicy: Never'}\n"
            f"      containers: [{{name: c, resources: {{limits: {limits}}}}}]\n")


cli = run_cli  # the command line in this process (tests/conftest.py)


ENCODINGS = [
    case("Latin-1", ("# caf\u00e9\n" + NODE).encode("latin-1"), "bad.yaml: line 1, column 6: expected UTF-8 text"),
    case("a UTF-8 BOM followed by other bytes", codecs.BOM_UTF8 + b"\xff\xfe" + NODE.encode(),
         "bad.yaml: line 1, column 4: expected UTF-8 text"),
    case("binary", bytes(range(256)), "bad.yaml: line 2, column 118: expected UTF-8 text"),
    case("UTF-16 without a byte order mark", NODE.encode("utf-16-le"), "bad.yaml: line 1, column 2: invalid YAML: "
         "unacceptable character #x0000"),
    case("UTF-16 with a BOM and then broken", codecs.BOM_UTF16_LE + NODE.encode("utf-16-le") + b"\x00\xd8",
         "bad.yaml: byte"),
]


@pytest.mark.parametrize("data, message", ENCODINGS)
def test_a_file_that_is_not_utf8_is_one_error_naming_where(tmp_path, data, message):
    path = tmp_path / "bad.yaml"
    path.write_bytes(data)
    for load in (load_file, load_kueue):
        with pytest.raises(gk.ScenarioError) as err:
            load(path)
        assert str(err.value).startswith(message) and len(err.value.problems) == 1


@pytest.mark.parametrize("encode", [
    case("UTF-16 with its byte order mark", lambda text: text.encode("utf-16")),
    case("UTF-16 big-endian with its byte order mark", lambda text: codecs.BOM_UTF16_BE + text.encode("utf-16-be")),
    case("UTF-8 with a byte order mark", lambda text: codecs.BOM_UTF8 + text.encode()),
])
def test_the_encodings_yaml_allows_read_as_utf8_does(tmp_path, encode):
    text = NODE + job_yaml()
    plain, other = tmp_path / "plain.yaml", tmp_path / "other.yaml"
    plain.write_text(text, encoding="utf-8")
    other.write_bytes(encode(text))
    assert load_file(other).jobs == load_file(plain).jobs and load_file(other).nodes == load_file(plain).nodes


LAUGHS = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join([f'*{chr(97 + i)}'] * 10)}]\n" for i in range(8))

YAML_LIMITS = [
    case("flow lists nested 300 deep", NODE + "---\nx: " + "[" * 300 + "]" * 300 + "\n",
         f"YAML input: line 6, column {MAX_DEPTH + 3}: expected at most {MAX_DEPTH} levels of nested mappings and lists"),
    case("mappings nested 300 deep in a label", NODE.replace("{name: n}", "{name: n, labels: " + "{a: " * 300 + "1"
                                                             + "}" * 300 + "}"), "levels of nested mappings and lists"),
    case("block lists nested 300 deep", NODE + "---\n" + "".join("  " * i + "-\n" for i in range(300)),
         "levels of nested mappings and lists"),
    case("nested deeper than libyaml follows", NODE + "---\nx: " + "[" * 1500 + "]" * 1500 + "\n", "invalid YAML"),
    case("a billion laughs", NODE + "---\n" + LAUGHS, "nodes that expands to 1,234,567,909"),
    case("merge keys that double at every level", NODE + "---\na: &a {x: 1, y: 2}\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} {{<<: [*{chr(97 + i)}, *{chr(97 + i)}]}}\n" for i in range(20)),
         "expected aliases to repeat at most as many nodes as the document writes"),
    case("an alias inside its own anchor", NODE + "---\na: &x [1, *x]\n", "an alias inside its own anchor"),
    case("a timestamp with month 13", NODE + "---\na: 2025-13-45\n", "line 6, column 4: invalid YAML: cannot read "
         "'2025-13-45' as timestamp: month must be in 1..12"),
    case("an integer of 5000 digits", NODE + "---\na: " + "1" * 5000 + "\n", "as int: Exceeds the limit"),
    case("more than the input limit", "#" * (MAX_INPUT_BYTES + 1), f"expected at most {MAX_INPUT_BYTES // 2**20} MiB"),
]


@pytest.mark.parametrize("text, message", YAML_LIMITS)
def test_yaml_beyond_the_stated_limits_is_refused_at_once(text, message):
    started = time.perf_counter()
    with pytest.raises(gk.ScenarioError) as err:
        load_manifests(text)
    assert message in str(err.value) and len(err.value.problems) == 1
    assert time.perf_counter() - started < 5  # refused, not expanded


def test_a_key_written_twice_is_a_warning_naming_it():
    text = NODE.replace("{name: n}", "{name: n, name: m}")
    with pytest.warns(GangkitInputWarning, match="YAML input: line 3, column 21: the key 'name' appears twice"):
        sc = load_manifests(text)
    assert sc.nodes[0].name == "m"  # the last value, as PyYAML (and Kubernetes' lenient decoding) keeps


def test_aliases_that_repeat_little_still_load():
    container = "{name: c, resources: {limits: {nvidia.com/gpu: 1}}}"
    items = [f"{{apiVersion: batch/v1, kind: Job, metadata: {{name: {n}, annotations: {{gangkit/run-time: 1m}}}}, spec: {{template: {{spec: {{containers: [{c}]}}}}}}}}"
             for n, c in (("a", "&worker " + container), ("b", "*worker"))]
    text = NODE + f"---\napiVersion: v1\nkind: List\nitems: [{', '.join(items)}]\n"
    assert [j.pod_sets[0].gpus for j in load_manifests(text).jobs] == [1, 1]


KARPENTER = """---
apiVersion: gangkit/v1alpha1
kind: Karpenter
metadata: {{name: k}}
spec:
  instanceTypes: [{{name: gpu-8, capacity: {{nvidia.com/gpu: 8}}}}]
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {{name: p}}
spec: {{template: {{spec: {{requirements: {requirements}}}}}}}
"""

NOT_A_STRING = [
    case("a list as apiVersion", NODE + "---\napiVersion: [v1]\nkind: Node\nmetadata: {name: m}\n",
         "Node m: apiVersion: expected a string, got list ['v1']"),
    case("a mapping as kind", NODE + "---\napiVersion: v1\nkind: {a: 1}\nmetadata: {name: m}\n",
         "object m: kind: expected a string, got dict {'a': 1}"),
    case("a list as priorityClassName", NODE + job_yaml(pod="priorityClassName: [high]"),
         "Job j: spec.template.spec.priorityClassName: expected a string, got list ['high']"),
    case("a list as a container's name", NODE + job_yaml().replace("name: c", "name: [c]"),
         "Job j: spec.template.spec.containers[0].name: expected a string, got list ['c']"),
    case("a mapping as a Volcano task name", NODE + """---
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: v}
spec:
  tasks: [{name: {a: 1}, replicas: 1, template: {spec: {containers: [{name: c}]}}}]
""", "Job v: spec.tasks[0].name: expected a string, got dict {'a': 1}"),
    case("a number as a Volcano Queue's spec", NODE + "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\n"
         "metadata: {name: q}\nspec: 7\n", "Queue q: spec: expected a mapping, got int 7"),
    case("a number as a NodePool's requirements", NODE + KARPENTER.format(requirements="7"),
         "NodePool p: spec.template.spec.requirements: expected a list of requirements, got 7"),
    case("a string as a requirement's values", NODE + KARPENTER.format(
        requirements="[{key: node.kubernetes.io/instance-type, operator: In, values: gpu-8}]"),
         "NodePool p: spec.template.spec.requirements[0].values: expected a list of instance type names, got 'gpu-8'"),
    case("lists among a requirement's values", NODE + KARPENTER.format(
        requirements="[{key: node.kubernetes.io/instance-type, operator: In, values: [[gpu-8]]}]"),
         "requirements[0].values: expected a list of instance type names, got [['gpu-8']]"),
    case("a mapping as a generator's distribution", NODE + """---
apiVersion: gangkit/v1alpha1
kind: WorkloadGenerator
metadata: {name: g}
spec:
  arrivals: {rate: 0.01}
  classes: [{name: a, probability: 1, runTime: {distribution: {kind: Exponential}, mean: 10m}}]
""", "WorkloadGenerator g: spec.classes[0].runTime.distribution: expected a string, got dict"),
    case("a list of lists as a v1beta1 ClusterQueue's admission checks", NODE + """---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: q}
spec: {namespaceSelector: {}, admissionChecks: [[a]]}
""", "ClusterQueue q: spec.admissionChecks[0]: expected the name of an AdmissionCheck, got ['a']"),
    case("a number as a resource name Kueue reads", NODE + """---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {name: w}
spec:
  podSets: [{name: main, count: 1, template: {spec: {containers: [{name: c, resources: {requests: {1: 2}}}]}}}]
""", "Workload w: spec.podSets[0].template.spec.containers[0].resources.requests.1: expected a name (a string) as the key"),
]


@pytest.mark.parametrize("text, message", NOT_A_STRING)
def test_a_list_or_mapping_where_a_name_is_expected_is_named(text, message):
    with pytest.raises(gk.ScenarioError) as err:
        load_manifests(text)
    assert message in str(err.value)


WORKLOAD_ADMITTED = """
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: f}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: q}
spec:
  namespaceSelector: {}
  resourceGroups: [{coveredResources: [nvidia.com/gpu], flavors: [{name: f, resources: [{name: nvidia.com/gpu, nominalQuota: 8}]}]}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {name: w}
spec:
  queueName: lq
  podSets: [{name: main, count: 1, template: {spec: {containers: [{name: c, resources: {requests: {nvidia.com/gpu: 1}}}]}}}]
status:
  conditions: [{type: QuotaReserved, status: "True", lastTransitionTime: "2025-01-01T00:00:00Z"}]
  admission: {clusterQueue: q, podSetAssignments: [{name: NAME, flavors: {nvidia.com/gpu: f}, count: 1}]}
"""


@pytest.mark.parametrize("name, message", [
    case("a list", "[main]", "Workload w: status.admission.podSetAssignments[0].name: expected a string, got list"),
    case("a mapping", "{a: main}", "Workload w: status.admission.podSetAssignments[0].name: expected a string, got dict"),
    case("a pod set that does not exist", "other", "podSetAssignments[0].name: Not found: 'other'"),
])
def test_a_bad_pod_set_assignment_name_is_named(name, message):
    with pytest.raises(gk.ScenarioError) as err:
        load_kueue(WORKLOAD_ADMITTED.replace("NAME", name))
    assert message in str(err.value)


OUT_OF_RANGE = [
    case("GPUs written 1e999", NODE + job_yaml(limits="{nvidia.com/gpu: '1e999'}"),
         "Job j: spec.template.spec.containers[0].resources.limits.nvidia.com/gpu: expected a quantity of at most 2^63-1"),
    case("GPUs written 1e309", NODE + job_yaml(limits="{nvidia.com/gpu: '1e309'}"), "expected a quantity of at most 2^63-1"),
    case("GPUs as the YAML float 1e308", NODE.replace("'8'", "1.0e+308") + job_yaml(),
         "Node n: status.allocatable.nvidia.com/gpu: expected a quantity of at most 2^63-1"),
    case("GPUs one above 2^63-1", NODE.replace("'8'", str(2**63)) + job_yaml(), "expected a quantity of at most 2^63-1"),
    case("cores written 1e309", NODE.replace("nvidia.com/gpu: '8'", "cpu: '1e309'"),
         "Node n: status.allocatable.cpu: expected a quantity of at most 2^63-1"),
    case("memory written 1e999", NODE + job_yaml(limits="{nvidia.com/gpu: 1, memory: '1e999'}"),
         "resources.limits.memory: expected a quantity of at most 2^63-1"),
    case("memory in a thousand exbibytes of exbibytes", NODE + job_yaml(limits="{memory: 9999999999Ei}"),
         "resources.limits.memory: expected a quantity of at most 2^63-1"),
    case("an exponent far below a nano", NODE + job_yaml(limits="{cpu: '1e-5000'}"), "with an exponent from -1000"),
    case("a quantity of 200 digits", NODE + job_yaml(limits="{cpu: '" + "1" * 200 + "'}"), "of at most 100 characters"),
    case("a run time of 1e20 s", NODE + job_yaml(annotations="{gangkit/run-time: '100000000000000000000'}"),
         "Job j: metadata.annotations.gangkit/run-time: expected a duration of at most 2562047h47m16.854775807s"),
    case("a run time of a million years", NODE + job_yaml(annotations="{gangkit/run-time: 9000000000h}"),
         "expected a duration of at most 2562047h47m16.854775807s"),
    case("a horizon of 1.8e308 s", NODE + "---\napiVersion: gangkit/v1alpha1\nkind: Simulation\nmetadata: {name: s}\n"
         "spec: {horizon: 1.8e+308}\n", "Simulation s: spec.horizon: expected seconds (a number) or a Go duration"),
    case("a horizon of 1e20 s", NODE + "---\napiVersion: gangkit/v1alpha1\nkind: Simulation\nmetadata: {name: s}\n"
         f"spec: {{horizon: {10**20}}}\n", "Simulation s: spec.horizon: expected a duration of at most"),
    case("a node stage of 1e20 s", NODE + """---
apiVersion: gangkit/v1alpha1
kind: Karpenter
metadata: {name: k}
spec:
  stages: {registered: 100000000000000000000}
  instanceTypes: [{name: gpu-8, capacity: {nvidia.com/gpu: 8}}]
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: p}
spec: {template: {spec: {requirements: []}}}
""", "Karpenter k: spec.stages.registered: expected a duration of at most"),
    case("an infinite price", NODE + """---
apiVersion: gangkit/v1alpha1
kind: ClusterAutoscaler
metadata: {name: ca}
spec:
  nodeGroups: [{name: g, capacity: {nvidia.com/gpu: 8}, pricePerHour: .inf}]
""", "ClusterAutoscaler ca: spec.nodeGroups[0].pricePerHour: expected a number from 0 to 1e+12, got inf"),
    case("a parallelism beyond int32", NODE + job_yaml(spec=f"parallelism: {2**31}"),
         "Job j: spec.parallelism: expected a whole number <= 2147483647 (an int32 in the Kubernetes API)"),
    case("a Kueue backoff beyond int32", NODE + """---
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
waitForPodsReady: {requeuingStrategy: {backoffBaseSeconds: 100000000000000000000}}
""", "Configuration (document 2): waitForPodsReady.requeuingStrategy.backoffBaseSeconds: expected a whole number from"),
    case("a lognormal sigma of 1e300", NODE + """---
apiVersion: gangkit/v1alpha1
kind: WorkloadGenerator
metadata: {name: g}
spec:
  arrivals: {rate: 0.01}
  classes: [{name: a, probability: 1, runTime: {distribution: Lognormal, median: 10m, sigma: 1.0e+300}}]
""", "WorkloadGenerator g: spec.classes[0].runTime.sigma: expected a number >= 0 and <= 20"),
    case("a load of CPU-only jobs", NODE + """---
apiVersion: gangkit/v1alpha1
kind: WorkloadGenerator
metadata: {name: g}
spec:
  arrivals: {load: 0.5}
  classes: [{name: a, probability: 1, gpusPerPod: 0, runTime: {distribution: Constant, value: 10m}}]
""", "WorkloadGenerator g: spec.arrivals.load: a load needs job classes that ask for GPUs"),
]


@pytest.mark.parametrize("text, message", OUT_OF_RANGE)
def test_a_number_outside_the_range_the_model_uses_is_named(text, message):
    with pytest.raises(gk.ScenarioError) as err:
        load_manifests(text)
    assert message in str(err.value)


def test_the_largest_quantities_and_durations_still_load():
    text = NODE.replace("'8'", str(2**63 - 1)) + job_yaml(annotations="{gangkit/run-time: 2562047h47m16s}")
    sc = load_manifests(text)
    assert sc.nodes[0].gpus == 2**63 - 1 and sc.jobs[0].run_time == 2562047 * 3600 + 47 * 60 + 16


SCALE = [
    case("one Job of more pods than a cluster holds", NODE + job_yaml(spec=f"parallelism: {MAX_JOB_PODS + 1}"),
         f"Job j: spec.parallelism: expected at most {MAX_JOB_PODS:,} pods, got {MAX_JOB_PODS + 1:,}"),
    case("ten million pods in one Job", NODE + job_yaml(spec="parallelism: 10000000"), "expected at most 150,000 pods"),
    case("more pods in all than a run can simulate", NODE + "".join(
        job_yaml(spec=f"parallelism: {MAX_JOB_PODS}", name=f"j{i}") for i in range(MAX_SCENARIO_PODS // MAX_JOB_PODS + 1)),
         f"Scenario scenario: expected at most {MAX_SCENARIO_PODS:,} pods in all its Jobs"),
    case("a generator of more jobs than gangkit makes", NODE + f"""---
apiVersion: gangkit/v1alpha1
kind: WorkloadGenerator
metadata: {{name: g}}
spec:
  jobs: {MAX_JOBS + 1}
  arrivals: {{rate: 0.01}}
  classes: [{{name: a, probability: 1, runTime: {{distribution: Constant, value: 10m}}}}]
""", f"WorkloadGenerator g: spec.jobs: expected a whole number <= {MAX_JOBS}"),
    case("a chain of 3000 cohorts", NODE + "".join(
        f"---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata: {{name: c{i}}}\n"
        + (f"spec: {{parentName: c{i - 1}}}\n" if i else "") for i in range(3000)),
         "Cohort c2999: spec.parentName: expected a cohort tree at most 100 levels deep, got 3000 levels"),
    case("a hundred thousand Nodes", "".join(NODE.replace("name: n", f"name: n{i}") + "---\n" for i in range(100_000)),
         f"YAML input: expected at most {MAX_INPUT_BYTES // 2**20} MiB of manifests"),
]


@pytest.mark.parametrize("text, message", SCALE)
def test_beyond_the_stated_scale_limits_is_refused_quickly(text, message):
    started = time.perf_counter()
    with pytest.raises(gk.ScenarioError) as err:
        load_manifests(text)
    assert message in str(err.value)
    assert time.perf_counter() - started < 10  # linear: thousands of objects in a few seconds, at most


def test_a_cohort_cycle_is_still_named_once_by_its_first_cohort():
    text = NODE + "".join(f"---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata: {{name: {a}}}\n"
                          f"spec: {{parentName: {b}}}\n" for a, b in (("x", "b"), ("b", "a"), ("a", "b")))
    with pytest.raises(gk.ScenarioError) as err:
        load_manifests(text)
    assert [str(p) for p in err.value.problems] == [
        "Cohort b: spec.parentName: the parent chain forms a cycle: b -> a -> b (Kueue would admit nothing in this tree)"]


def test_admit_checks_a_kubernetes_workload_and_leaves_it_to_run(tmp_path, capsys):
    example = REPO / "examples" / "kube-gang.yaml"
    status, out, err = cli(["admit", str(example), "--json"], capsys)
    assert status == 0 and json.loads(out) == {"admitted": {}, "preempted": [], "pending": {}}
    assert "warning: Workload big (scheduling.k8s.io/v1alpha1) was checked and left out" in err
    broken = tmp_path / "broken.yaml"
    broken.write_text(example.read_text().replace("minCount: 4", "minCount: [4]").replace("name: big\nspec:\n  controllerRef",
                                                                                              "name: [big]\nspec:\n  controllerRef"))
    status, out, err = cli(["admit", str(broken)], capsys)
    assert status == 2 and "error: Workload (document 3): metadata.name: expected a non-empty name, got ['big']" in err


CSV_POD_HEADER = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,creation_time,deletion_time,scheduled_time\n"
TRACE_LOADERS = [
    case("Alibaba pods", lambda p, pods: traces.load_alibaba_openb(p)),
    case("Alibaba nodes", lambda p, pods: traces.load_alibaba_nodes(p)),
    case("Alibaba node list of a pod list", lambda p, pods: traces.load_alibaba_openb(pods, p)),
    case("Philly run times", lambda p, pods: traces.load_philly_runtimes(p)),
    case("SWF", lambda p, pods: traces.load_swf(p)),
]
BAD_TRACE_FILES = [
    case("a directory", lambda tmp: tmp, "expected a", "got a directory"),
    case("a missing file", lambda tmp: tmp / "absent.csv", "no such file", ""),
    case("binary data", lambda tmp: _write_bytes(tmp / "bin.csv", bytes(range(256)) * 4), "", ""),
    case("numbers that are infinite", lambda tmp: _write_bytes(tmp / "inf.csv", b"sn,cpu_milli,memory_mib,gpu,runtime\n"
                                                                 b"n,1,inf,1,inf\n"), "", ""),
]


def _write_bytes(path, data):
    path.write_bytes(data)
    return path


@pytest.mark.parametrize("load", TRACE_LOADERS)
@pytest.mark.parametrize("make, expected, detail", BAD_TRACE_FILES)
def test_a_trace_path_that_is_not_the_expected_file_is_one_error_naming_it(tmp_path, load, make, expected, detail):
    pods = tmp_path / "pods.csv"
    pods.write_text(CSV_POD_HEADER + "p,1000,1024,1,1000,0,10,1\n")
    path = make(tmp_path)
    with pytest.raises(gk.ScenarioError) as err:
        load(path, pods)
    message = str(err.value)
    assert f"file {path}" in message and expected in message and detail in message


@pytest.mark.parametrize("row, message", [
    case("memory beyond 2^63 bytes", "p,1000,1e400,1,1000,0,10,1", "memory_mib: expected a number from"),
    case("an integer of 400 digits", "p,1000,1" + "0" * 400 + ",1,1000,0,10,1", "memory_mib: expected a number from"),
    case("a creation time of 1e300 s", "p,1000,1024,1,1000,1e300,10,1", "creation_time: expected a number from"),
])
def test_a_trace_number_outside_the_range_is_named_with_its_line(tmp_path, row, message):
    path = tmp_path / "pods.csv"
    path.write_text(CSV_POD_HEADER + row + "\n")
    with pytest.raises(gk.ScenarioError, match=f"file {path}: {message}") as err:
        traces.load_alibaba_openb(path)
    assert "on data line 1" in str(err.value)


@pytest.mark.parametrize("line, field", [
    case("a NaN job number", "nan 0 0 10 1 -1 -1 1 -1 -1 1 1 1 1 1 1 -1 -1", "job_number"),
    case("an infinite run time", "1 0 0 1e400 1 -1 -1 1 -1 -1 1 1 1 1 1 1 -1 -1", "run_time"),
])
def test_an_swf_field_that_is_no_usable_number_is_named(tmp_path, line, field):
    path = tmp_path / "log.swf"
    path.write_text("; MaxProcs: 8\n" + line + "\n")
    with pytest.raises(gk.ScenarioError, match=f"file {path}: {field}: expected a number .* on line 2"):
        traces.load_swf(path)


@pytest.mark.parametrize("command", ["run", "admit"])
@pytest.mark.parametrize("make, message", [
    case("a directory", lambda tmp: tmp, "expected a YAML file, got a directory"),
    case("a Latin-1 file", lambda tmp: _write_bytes(tmp / "x.yaml", ("# caf\u00e9\n" + NODE).encode("latin-1")),
         "x.yaml: line 1, column 6: expected UTF-8 text"),
    case("deep nesting", lambda tmp: _write_bytes(tmp / "x.yaml", (NODE + "---\nx: " + "[" * 400 + "]" * 400).encode()),
         "levels of nested mappings and lists"),
    case("a billion laughs", lambda tmp: _write_bytes(tmp / "x.yaml", (NODE + "---\n" + LAUGHS).encode()),
         "nodes that expands to 1,234,567,909"),
    case("GPUs of 1e308", lambda tmp: _write_bytes(tmp / "x.yaml", (NODE + job_yaml(
        limits="{nvidia.com/gpu: '1e308'}", labels="{kueue.x-k8s.io/queue-name: lq}")).encode()),
         "expected a quantity of at most 2^63-1"),
])
def test_the_command_line_answers_bad_files_with_one_line_and_exit_2(tmp_path, capsys, command, make, message):
    status, out, err = cli([command, str(make(tmp_path)), "--json"], capsys)
    assert status == 2 and out == "" and "Traceback" not in err
    assert err.startswith("error: ") and message in err and len(err.splitlines()) == 1


# -- accepted before, refused now: what the API server refuses at creation, used by a Job or not ----------------
def volcano_job(tasks: str) -> str:
    return f"---\napiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {{name: v}}\nspec: {{tasks: {tasks}}}\n"


def pod_group(api: str, spec: str, namespace: str = "t") -> str:
    return f"---\napiVersion: {api}\nkind: PodGroup\nmetadata: {{name: g, namespace: {namespace}}}\nspec: {spec}\n"


VOLCANO_PG, COSCHEDULING_PG = "scheduling.volcano.sh/v1beta1", "scheduling.x-k8s.io/v1alpha1"
REFUSED_AT_CREATION = [
    case("a Volcano PodGroup with a negative minMember that no Job uses", NODE + pod_group(VOLCANO_PG, "{minMember: -1}"),
         "PodGroup t/g: spec.minMember: expected a whole number >= 0, got -1"),
    case("a Volcano PodGroup with a negative minMember that a Job uses", NODE + pod_group(VOLCANO_PG, "{minMember: -2}") +
         job_yaml().replace("    spec:\n", "    metadata: {annotations: {scheduling.k8s.io/group-name: g}}\n    spec:\n", 1)
         .replace("metadata: {name: j,", "metadata: {name: j, namespace: t,"),
         "PodGroup t/g: spec.minMember: expected a whole number >= 0, got -2"),
    case("a Volcano PodGroup whose minMember is a word", NODE + pod_group(VOLCANO_PG, "{minMember: all}"),
         "PodGroup t/g: spec.minMember: expected a whole number >= 0, got 'all'"),
    case("a Volcano PodGroup whose minMember is beyond int32", NODE + pod_group(VOLCANO_PG, f"{{minMember: {2**31}}}"),
         "PodGroup t/g: spec.minMember: expected a whole number <= 2147483647"),
    case("a Volcano PodGroup whose spec is a number", NODE + pod_group(VOLCANO_PG, "7"),
         "PodGroup t/g: spec: expected a mapping, got int 7"),
    case("a scheduler-plugins PodGroup with minMember 0 (its CRD's minimum is 1)",
         NODE + pod_group(COSCHEDULING_PG, "{minMember: 0}"), "PodGroup t/g: spec.minMember: expected a whole number >= 1, got 0"),
    case("a scheduler-plugins PodGroup with a negative minMember that a Job uses",
         NODE + pod_group(COSCHEDULING_PG, "{minMember: -1}", namespace="default") + job_yaml().replace(
             "    spec:\n", "    metadata: {labels: {scheduling.x-k8s.io/pod-group: g}}\n    spec:\n", 1),
         "PodGroup default/g: spec.minMember: expected a whole number >= 1, got -1"),
    case("containers: [null] in a Job's pod template", NODE + job_yaml().replace(
        "containers: [{name: c, resources: {limits: {nvidia.com/gpu: 1}}}]", "containers: [null]"),
         "Job j: spec.template.spec.containers[0]: expected a mapping (a container), got null"),
    case("a null container after a real one", NODE + job_yaml().replace("}}}]", "}}}, null]"),
         "Job j: spec.template.spec.containers[1]: expected a mapping (a container), got null"),
    case("initContainers: [null] in a Job's pod template", NODE + job_yaml(pod="initContainers: [null]"),
         "Job j: spec.template.spec.initContainers[0]: expected a mapping (a container), got null"),
    case("initContainers that are no list", NODE + job_yaml(pod="initContainers: {name: i}"),
         "Job j: spec.template.spec.initContainers: expected a list of containers, got {'name': 'i'}"),
    case("a Volcano Job's tasks: [null]", NODE + volcano_job("[null]"),
         "Job v: spec.tasks[0]: expected a mapping (a task), got null"),
    case("containers: [null] in a Volcano task", NODE + volcano_job("[{name: t, replicas: 1, template: {spec: {containers: [null]}}}]"),
         "Job v: spec.tasks[0].template.spec.containers[0]: expected a mapping (a container), got null"),
    case("initContainers: [7] in a Volcano task", NODE + volcano_job(
        "[{name: t, replicas: 1, template: {spec: {initContainers: [7], containers: [{name: c}]}}}]"),
         "Job v: spec.tasks[0].template.spec.initContainers[0]: expected a mapping (a container), got int 7"),
    case("containers: [null] in a Kueue Workload's pod set", NODE + "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\n"
         "metadata: {name: w}\nspec: {queueName: lq, podSets: [{name: main, count: 1, template: {spec: {containers: [null]}}}]}\n",
         "Workload w: spec.podSets[0].template.spec.containers[0]: expected a mapping (a container), got null"),
    case("podSets: [null] in a Kueue Workload", NODE + "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\n"
         "metadata: {name: w}\nspec: {queueName: lq, podSets: [null]}\n",
         "Workload w: spec.podSets[0]: expected a mapping (a pod set), got null"),
    case("podGroups: [null] in a Kubernetes Workload", NODE + "---\napiVersion: scheduling.k8s.io/v1alpha1\nkind: Workload\n"
         "metadata: {name: w}\nspec: {controllerRef: {apiGroup: batch, kind: Job, name: j}, podGroups: [null]}\n",
         "Workload w: spec.podGroups[0]: expected a mapping (a pod group), got null"),
    case("resourceGroups: [null] in a ClusterQueue", NODE + "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\n"
         "metadata: {name: q}\nspec: {namespaceSelector: {}, resourceGroups: [null]}\n",
         "ClusterQueue q: spec.resourceGroups[0]: expected a mapping (a resource group), got null"),
    case("nodeGroups: [null] in a ClusterAutoscaler", NODE + "---\napiVersion: gangkit/v1alpha1\nkind: ClusterAutoscaler\n"
         "metadata: {name: ca}\nspec: {nodeGroups: [null]}\n",
         "ClusterAutoscaler ca: spec.nodeGroups[0]: expected a mapping (a node group), got null"),
]


@pytest.mark.parametrize("text, message", REFUSED_AT_CREATION)
def test_what_the_api_server_refuses_at_creation_is_one_error(text, message):
    with pytest.raises(gk.ScenarioError) as err:
        load_manifests(text)
    assert message in str(err.value) and len(err.value.problems) == 1, str(err.value)


def simulation_yaml(spec: str) -> str:
    return f"---\napiVersion: gangkit/v1alpha1\nkind: Simulation\nmetadata: {{name: s}}\nspec: {spec}\n"


BAD_SIMULATION = [
    case("a misspelt stack", "{stack: gnag}", "Simulation s: spec.stack: unknown stack 'gnag'; did you mean gang?"),
    case("an unknown stack", "{stack: warp}", "Simulation s: spec.stack: unknown stack 'warp'; expected one of pod, gang"),
    case("layers gangkit has, not in this combination", "{stack: gang+autoscaler}",
         "Simulation s: spec.stack: stack 'gang+autoscaler' combines layers gangkit has (gang, autoscaler), but not in "
         "this combination"),
    case("a misspelt ordering", "{ordering: stirct}", "Simulation s: spec.ordering: expected one of skip, strict"),
    case("a horizon of zero", "{horizon: 0}", "Simulation s: spec.horizon: expected seconds > 0, got 0"),
]


@pytest.mark.parametrize("spec, message", BAD_SIMULATION)
@pytest.mark.parametrize("override", [
    case("the Python API overrides the stack", lambda path: gk.simulate(load_file(path), stack="gang", ordering="skip")),
    case("gangkit run --stack overrides it", lambda path: main(["run", str(path), "--stack", "gang", "--ordering", "skip"])),
    case("gangkit check --simulate --stack overrides it", lambda path: main(["check", str(path), "--simulate", "--stack", "gang"])),
])
def test_a_bad_simulation_in_a_file_is_reported_even_when_overridden(tmp_path, capsys, override, spec, message):
    path = tmp_path / "s.yaml"
    path.write_text(NODE + job_yaml() + simulation_yaml(spec))
    try:
        status = override(path)
    except gk.ScenarioError as e:
        assert message in str(e) and len(e.problems) == 1, str(e)
        return
    err = capsys.readouterr().err
    assert status == 2 and message in err and len(err.splitlines()) == 1, err
