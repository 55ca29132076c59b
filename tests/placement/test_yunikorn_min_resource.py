"""YuniKorn task groups whose ``minResource`` is not the size of their pods.

A placeholder asks for its task group's ``minResource`` (yunikorn-k8shim
``pkg/cache/placeholder.go``), not for what the real pods ask. At the swap
(yunikorn-core ``tryPlaceholderAllocate``) a real pod no larger than the
placeholder in any resource takes its node and the surplus is released; a
pod larger in any resource cancels the placeholders ("cancel placeholder:
resource incompatible"), and the pods are scheduled one by one, with no gang
guarantee and no Hard failure. The tables: the simulation, the manifests
(``Job.placeholder_request`` read from ``minResource`` and written back), the
Job's own check.
"""

from __future__ import annotations

import json
import math
import warnings

import pytest
import yaml

import gangkit as gk
from gangkit import Node, Scenario, job
from gangkit.manifests import dump_manifests, load_manifests
from gangkit.model.errors import ScenarioError
from gangkit.model.jobs import Job, PodSet
from gangkit.model.resources import Resources
from gangkit.placement.yunikorn import YuniKorn
from gangkit.stacks import Stack

import builders
from builders import GIB, gang, simulate_on
from conftest import case, shared_path

GPU = "nvidia.com/gpu"
GI = GIB
TIMEOUT = 600.0
POD = (1, 4.0, 16 * GI)  # one real pod: GPUs, cores, bytes
NODE = (6, 24.0, 96 * GI)  # one node: room for the 4 pods, not for 4 placeholders twice their size
DIMS = {"gpu": 0, "cpu": 1, "memory": 2}


def sized(dim: str, factor: float) -> Resources:
    """The pod's request with one resource scaled (GPUs: 0 when smaller, as a minResource without nvidia.com/gpu)."""
    out = list(POD)
    i = DIMS[dim]
    out[i] = type(POD[i])(POD[i] * factor)
    return Resources(*out)


def run(jobs, node=NODE, layer=None, **kw):
    """The jobs on one node of ``node``'s (GPUs, cores, bytes) under YuniKorn; the result and the layer (its swaps).

    ``kw`` goes to the :class:`Stack` (``suppliers=``).
    """
    layer = layer or YuniKorn()
    node_list = [Node("gpu-0", node[0], cpu=node[1], memory=node[2])]
    return simulate_on(node_list, jobs, stack=Stack(layer, name="yunikorn", **kw), horizon=10_000, name="min-resource"), layer


def big(placeholder: Resources | None, **extra) -> Job:
    """4 sync workers of POD, one task group of minMember 4, Hard, placeholderTimeoutInSeconds 600."""
    return gang("big", 4, POD[0], cpu=POD[1], memory=POD[2], run_time=100, placeholder_request=placeholder,
                placeholder_timeout=TIMEOUT, gang_style="Hard", **extra)


def fitting(ph: Resources) -> int:
    """How many placeholders of size ``ph`` the node holds at once."""
    return min(int(n // p) if p else 4 for n, p in zip(NODE, ph))


SIZES = []
for dim in DIMS:
    SIZES += [
        case(f"{dim}: equal: the placeholders are the pods, the gang starts at once", sized(dim, 1), "Finished", 0.0, 0.0, 0),
        case(f"{dim}: smaller: the swap cancels the placeholders, the pods fit one by one, Hard does nothing",
             sized(dim, 0.5), "Finished", 0.0, 0.0, 1),
        case(f"{dim}: larger: 3 of 4 placeholders fit where the pods would, the timeout fails the application",
             sized(dim, 2), "Deactivated", math.nan, fitting(sized(dim, 2)) * sized(dim, 2).gpus * TIMEOUT, 0),
    ]


@pytest.mark.parametrize("placeholder, state, start, held, failed_swaps", SIZES)
def test_placeholders_are_sized_by_min_resource(placeholder, state, start, held, failed_swaps):
    r, layer = run([big(placeholder)])
    row = r.jobs.set_index("job").loc["big"]
    assert row["state"] == state, row["reason"]
    assert (math.isnan(start) and math.isnan(row["start_s"])) or row["start_s"] == start
    assert r.figures["held_idle_gpu_seconds"] == pytest.approx(held)
    assert row["held_idle_gpu_s"] == pytest.approx(held)  # the placeholder pods are the job's
    assert layer.swaps_failed == failed_swaps
    assert layer.timeouts == (state == "Deactivated")


def test_the_equal_size_is_the_pods_own_run_for_run():
    same, _ = run([big(Resources(*POD))])
    plain, _ = run([big(None)])
    for table in ("jobs", "pods", "events", "timeline"):
        assert getattr(same, table).equals(getattr(plain, table)), table


def contended(placeholder):
    """One node of 4 GPUs; ``small`` holds 2 of them for 1200 s; ``big`` needs 4 x 1 GPU (Hard, 600 s)."""
    return [Job("small", [PodSet("w", 1, 2)], run_time=1200),
            Job("big", [PodSet("w", 4, 1, 4.0)], run_time=100, placeholder_request=placeholder,
                placeholder_timeout=TIMEOUT, gang_style="Hard")]


FORGOTTEN = [
    # (id, minResource, big's state and start, GPU-seconds held idle)
    case("minResource with the GPU: 2 placeholders hold 2 GPUs until the timeout, then Hard fails the application",
         Resources(1, 4.0, 0), "Deactivated", math.nan, 2 * TIMEOUT),
    case("minResource without nvidia.com/gpu: the placeholders fit at once, the swap cancels them, and 2 real pods "
         "hold 2 GPUs until small ends (no gang, no Hard failure)", Resources(0, 4.0, 0), "Finished", 1200.0, 2 * 1200.0),
]


@pytest.mark.parametrize("placeholder, state, start, held", FORGOTTEN)
def test_what_a_forgotten_gpu_in_min_resource_costs(placeholder, state, start, held):
    r, _ = run(contended(placeholder), node=(4, 16.0, 64 * GI))
    row = r.jobs.set_index("job").loc["big"]
    assert row["state"] == state, row["reason"]
    assert (math.isnan(start) and math.isnan(row["start_s"])) or row["start_s"] == start
    assert r.figures["held_idle_gpu_seconds"] == pytest.approx(held)


def test_the_failed_swap_says_which_pod_is_larger_and_what_the_core_does():
    r, _ = run(contended(Resources(0, 4.0, 0)), node=(4, 16.0, 64 * GI))
    released = r.events[(r.events.event == "released") & (r.events.job == "big")]
    assert list(released.time_s) == [0.0]
    detail = released.iloc[0].detail
    assert detail.startswith("0 of 4 placeholders replaced by the real pods at the swap; pod big-0 asks for "
                             "nvidia.com/gpu 1, cpu 4, more than a placeholder's minResource (cpu 4)")
    assert "'cancel placeholder: resource incompatible', termination type TIMEOUT" in detail
    placeholders = r.pods[r.pods.pod.str.startswith("tg-big-")]
    assert list(placeholders.state) == ["Released"] * 3  # the 4th was allocated in the cycle of the swap


def test_a_larger_placeholder_releases_its_surplus_at_the_swap():
    """8 GPUs: big's 4 placeholders of 2 GPUs take them all; at the swap its 4 pods keep 4, and late (4 x 1 GPU,
    submitted at 1 s) starts at once on the surplus."""
    late = Job("late", [PodSet("workers", 4, 1)], run_time=50, submit_time=1.0)
    r, layer = run([big(Resources(2, 4.0, 16 * GI)), late], node=(8, 64.0, 256 * GI))
    rows = r.jobs.set_index("job")
    assert rows.loc["big", "start_s"] == 0.0 and rows.loc["late", "start_s"] == 1.0
    assert layer.swaps_failed == 0


@pytest.mark.parametrize("placeholder", [Resources(2, 0, 0), Resources(0, 0, 0)], ids=["larger", "without GPUs"])
def test_pods_recreated_beside_bound_ones_gather_as_the_pods_do(placeholder):
    """Restart churn (a 60 s rendezvous timeout) recreates failed pods while others stay bound: the application
    is no new one, and the run goes as with placeholders of the pods' own size."""
    def jobs(ph):
        return [Job("small", [PodSet("w", 1, 2)], run_time=1200),
                Job("big", [PodSet("w", 4, 1)], run_time=100, placeholder_request=ph, rendezvous_timeout=60,
                    placeholder_timeout=300)]
    sized_run, _ = run(jobs(placeholder), node=(4, None, None))
    plain, _ = run(jobs(None), node=(4, None, None))
    assert r_view(sized_run) == r_view(plain)


def r_view(r) -> list:
    return r.jobs[["job", "state", "start_s", "finish_s"]].values.tolist()


class Recorder(gk.NodeSupplier):
    """A node supplier that only records what it is shown (what an autoscaler would see)."""

    name = "recorder"

    def __init__(self):
        self.seen: list[list[tuple[str, int]]] = []

    def can_ever_fit(self, gpus, cpu, memory, selector):
        return False

    def observe(self, sim, now, unschedulable):
        self.seen.append([(p.name, p.pod_set.gpus) for p in unschedulable])


def test_an_autoscaler_sees_placeholders_of_the_min_resource_size():
    rec = Recorder()
    run([big(Resources(2, 4.0, 16 * GI))], suppliers=[rec])
    assert rec.seen[0] == [("tg-big-workers-3", 2)]  # 3 of 4 fit the 6 GPUs; the 4th waits, asking for 2


# --- manifests -----------------------------------------------------------------------------------------------------

TG, TGN = "yunikorn.apache.org/task-groups", "yunikorn.apache.org/task-group-name"
WHERE = f"spec.template.metadata.annotations.{TG}[workers].minResource"
ABSENT = object()


def manifests(min_resource, requests=None, gpus="1", pods=2):
    group = {"name": "workers", "minMember": pods}
    if min_resource is not ABSENT:
        group["minResource"] = min_resource
    resources = {"limits": {GPU: gpus}} | ({"requests": requests} if requests else {})
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "gpu-0"},
            "status": {"allocatable": {GPU: "8", "cpu": "32", "memory": "128Gi"}}}
    job_doc = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "train", "annotations": {"gangkit/run-time": "10m"}},
               "spec": {"parallelism": pods, "template": {
                   "metadata": {"annotations": {TG: json.dumps([group]), TGN: "workers"}},
                   "spec": {"restartPolicy": "Never", "containers": [{"name": "w", "image": "t", "resources": resources}]}}}}
    return [node, job_doc]


def load(docs):
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        sc = load_manifests(docs)
    return sc, [str(w.message) for w in seen]


READ = [
    # (id, minResource, the pods' requests, placeholder_request, words of the warning ("" for none))
    case("the pods' own size: no placeholder_request, no warning", {GPU: "1", "cpu": "2", "memory": "8Gi"},
         {"cpu": "2", "memory": "8Gi"}, None, ""),
    case("the same size in other words (2000m, 8192Mi)", {GPU: 1, "cpu": "2000m", "memory": "8192Mi"},
         {"cpu": "2", "memory": "8Gi"}, None, ""),
    case("without nvidia.com/gpu: placeholders of 0 GPUs", {"cpu": "2"}, {"cpu": "2"}, Resources(0, 2.0, 0),
         "its pods ask for {nvidia.com/gpu: 1, cpu: 2, memory: 0}"),
    case("smaller in memory", {GPU: "1", "memory": "4Gi"}, {"memory": "8Gi"}, Resources(1, 0.0, 4 * GI),
         "has minResource {nvidia.com/gpu: 1, cpu: 0, memory: 4Gi}"),
    case("larger in GPUs (JSON numbers are quantities too)", {GPU: 2, "cpu": 0.5}, {"cpu": "500m"}, Resources(2, 0.5, 0),
         "a pod larger than them in any resource cancels them at the swap"),
    case("an empty minResource asks for nothing", {}, None, Resources(0, 0.0, 0), "sizes the placeholders by minResource"),
]


@pytest.mark.parametrize("min_resource, requests, expected, words", READ)
def test_min_resource_is_read_into_the_placeholder_request(min_resource, requests, expected, words):
    sc, messages = load(manifests(min_resource, requests))
    assert sc.jobs[0].placeholder_request == expected
    notes = [m for m in messages if "task group 'workers' has minResource" in m]
    assert (words in notes[0]) if words else notes == []


def test_a_resource_gangkit_does_not_model_is_reported_as_not_read():
    sc, messages = load(manifests({GPU: "1", "ephemeral-storage": "10Gi"}))
    assert sc.jobs[0].placeholder_request is None
    assert any(f"Job train: {WHERE}.ephemeral-storage" in m for m in messages)


BAD = [
    # (id, minResource, field, words of the problem)
    case("a quantity that is no quantity", {"cpu": "lots"}, f"{WHERE}.cpu",
         "expected a Kubernetes quantity such as 8, 500m, 1.5 or 16Gi, got 'lots'"),
    case("half a GPU", {GPU: "0.5"}, f"{WHERE}.{GPU}", "must be an integer (a whole number of GPUs), got '0.5'"),
    case("negative memory", {"memory": "-1Gi"}, f"{WHERE}.memory", "must be greater than or equal to 0, got '-1Gi'"),
    case("no minResource (the shim refuses the task groups)", ABSENT, WHERE,
         "expected the placeholders' requests, a mapping of resource name to quantity"),
    case("minResource that is no mapping", "4", WHERE, "got str '4'"),
    case("a pods count", {"pods": "1"}, f"{WHERE}.pods", "every placeholder counts as one pod"),
]


@pytest.mark.parametrize("min_resource, fieldname, words", BAD)
def test_a_bad_min_resource_is_one_clear_error(min_resource, fieldname, words):
    with pytest.raises(ScenarioError) as e:
        load(manifests(min_resource))
    problems = [(p.obj, p.field) for p in e.value.problems]
    assert problems == [("Job train", fieldname)]
    assert words in e.value.problems[0].message


UPSTREAM = shared_path("upstream_manifests", "yunikorn-site", "docs-gang_scheduling.b1.yaml")


def upstream_example(memory: str | None = None) -> list[dict]:
    """YuniKorn's gang scheduling example (2 pods, minResource cpu 100m, memory 50M), with a Node to run on;
    ``memory``: the containers' memory request changed to that."""
    if not UPSTREAM.is_file():
        pytest.skip(f"the upstream example {UPSTREAM} is absent (it sits beside the repository)")
    docs = list(yaml.safe_load_all(UPSTREAM.read_text()))
    if memory is not None:
        docs[0]["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"]["memory"] = memory
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-0"},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi"}}}
    return [node, *docs]


UPSTREAM_CASES = [
    # (id, the pods' memory request, placeholder_request, swaps cancelled)
    case("as documented: minResource is the pods' requests", None, None, 0),
    case("pods asking for 100M, twice minResource's memory: the swap cancels the placeholders", "100M",
         Resources(0, 0.1, 50_000_000), 1),
]


@pytest.mark.parametrize("memory, expected, failed_swaps", UPSTREAM_CASES)
def test_the_documentation_example(memory, expected, failed_swaps):
    sc, _ = load(upstream_example(memory))
    j = sc.jobs[0]
    assert (j.name, j.gang_size, j.placeholder_request) == ("gang-scheduling-job-example", 2, expected)
    layer = YuniKorn()
    r = gk.simulate(sc, stack=Stack(layer, name="yunikorn"))
    assert r.jobs.set_index("job").loc[j.name, "start_s"] == 0.0  # the node holds both pods either way
    assert layer.swaps_failed == failed_swaps


def scenario(j: Job, stack: str) -> Scenario:
    return builders.scenario([Node("gpu-0", 8, cpu=32.0, memory=128 * GI)], [j], stack=stack, name="py")


ROUND_TRIP = [
    # (id, job, stack, placeholder_request read back, minResource written ({} : no task group))
    case("pods with CPU and memory: minResource is written whole, so the placeholders stay their size",
         Job("a", [PodSet("workers", 2, 1, 4.0, 16 * GI)], run_time=600, min_member=2), "yunikorn", None,
         {GPU: "1", "cpu": "4", "memory": "16Gi"}),
    case("a placeholder_request is written as minResource and read back",
         Job("a", [PodSet("workers", 2, 1, 4.0)], run_time=600, placeholder_request=Resources(2, 0.5, 2 * GI)),
         "kueue+yunikorn", Resources(2, 0.5, 2 * GI), {GPU: "2", "cpu": "500m", "memory": "2Gi"}),
    case("other placement layers have no placeholders: none is written",
         Job("a", [PodSet("workers", 2, 1)], run_time=600, placeholder_request=Resources(2, 0, 0)), "gang", None, {}),
]


@pytest.mark.parametrize("the_job, stack, expected, written", ROUND_TRIP)
def test_the_placeholder_size_is_written_back(the_job, stack, expected, written):
    text = dump_manifests(scenario(the_job, stack))
    job_doc = next(d for d in yaml.safe_load_all(text) if d["kind"] == "Job")
    groups = job_doc["spec"]["template"].get("metadata", {}).get("annotations", {}).get(TG)
    assert (json.loads(groups)[0]["minResource"] if groups else {}) == written
    sc, _ = load(text)
    assert sc.jobs[0].placeholder_request == expected


# --- the Job's own check -------------------------------------------------------------------------------------------

JOBS_BAD = [
    case("half a GPU", Resources(0.5, 0, 0)),
    case("negative cores", Resources(1, -1.0, 0)),
    case("infinite memory (a resource that is not modelled is no request)", Resources(1, 0, math.inf)),
    case("not Resources", {"gpus": 1}),
]


@pytest.mark.parametrize("value", JOBS_BAD)
def test_a_bad_placeholder_request_is_one_clear_problem(value):
    with pytest.raises(ScenarioError) as e:
        gk.simulate(Scenario([Node("n", 8)], [job("a", pods=2, placeholder_request=value)], name="bad"), stack="yunikorn")
    (p,) = e.value.problems
    assert (p.obj, p.field) == ("Job a", "placeholder_request")
    assert p.message.startswith("expected Resources of one pod (whole GPUs, cores and whole bytes, each from 0 to 2^63-1)")


def test_a_good_placeholder_request_passes_the_check():
    assert job("a", pods=2, placeholder_request=Resources(0, 0.25, 2**20)).problems() == []
