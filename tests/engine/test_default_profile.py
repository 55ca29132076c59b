"""kube-scheduler 1.35's default profile as a scoring (``scoring="default-profile"``, gangkit.engine.default_profile),
and NodeResourcesFit's scoringStrategy read from a KubeSchedulerConfiguration.

The scores are worked out by hand from the rules of ``least_allocated.go``, ``balanced_allocation.go`` and
``resource_allocation.go`` (Kubernetes 1.35): integer division for LeastAllocated, ``int((1 - std) * 100)`` for
BalancedAllocation, 100m and 200 MiB for a pod that asks for no CPU or memory.
"""

from __future__ import annotations

import itertools
import warnings

import pytest

import gangkit as gk
from gangkit import Node
from gangkit.engine import default_profile as dp
from gangkit.engine.capacity import FreeCapacity
from gangkit.manifests import dump_manifests, load_manifests
from gangkit.model.errors import ScenarioError

from conftest import case

GI = 2 ** 30
MI = 2 ** 20
CPU_MEMORY = dp.DEFAULT_RESOURCES
GPU = (("nvidia.com/gpu", 1),)

SCORES = [  # (resources, node capacity, used, defaulted pods (cpu, memory), pod) -> (Fit, BalancedAllocation)
    case("4 cores 8Gi with 1 core 2Gi used, pod 1 core 1Gi: Fit (50 + 62) // 2, shares 0.5 and 0.375",
         CPU_MEMORY, (0, 4.0, 8 * GI), (0, 1.0, 2 * GI), (0, 0), (0, 1.0, GI), (56, 93)),
    case("8 cores 8Gi empty, the same pod: Fit 87 on both, shares equal",
         CPU_MEMORY, (0, 8.0, 8 * GI), (0, 0.0, 0), (0, 0), (0, 1.0, GI), (87, 100)),
    case("a pod without requests is scored as 100m and 200Mi (BalancedAllocation skips it)",
         CPU_MEMORY, (0, 1.0, GI), (0, 0.0, 0), (0, 0), (0, 0.0, 0), ((90 + 80) // 2, 0)),
    case("two pods without requests already there add 200m and 400Mi",
         CPU_MEMORY, (0, 1.0, GI), (0, 0.0, 0), (2, 2), (0, 0.0, 0), ((70 + 41) // 2, 0)),
    case("requests beyond allocatable score 0 (100m node, one defaulted pod there)",
         CPU_MEMORY, (0, 0.1, None), (0, 0.0, 0), (1, 1), (0, 0.0, 0), (0, 0)),
    case("a node without memory: cpu alone, one share, BalancedAllocation 100",
         CPU_MEMORY, (0, 4.0, None), (0, 0.0, 0), (0, 0), (0, 1.0, GI), (75, 100)),
    case("GPU-only node, default resources: nothing to score",
         CPU_MEMORY, (8, None, None), (2, 0.0, 0), (0, 0), (2, 0.0, 0), (0, 0)),
    case("nvidia.com/gpu listed: 2 used of 8, pod 2 -> (8 - 4) * 100 // 8",
         GPU, (8, None, None), (2, 0.0, 0), (0, 0), (2, 0.0, 0), (50, 0)),
    case("nvidia.com/gpu listed, pod asks for none: the resource is skipped",
         GPU, (8, None, None), (2, 0.0, 0), (0, 0), (0, 1.0, 0), (0, 100)),
    case("weights: gpu 3 (score 50), cpu 1 (score 75): (150 + 75) // 4",
         (("nvidia.com/gpu", 3), ("cpu", 1)), (8, 4.0, None), (2, 0.0, 0), (0, 0), (2, 1.0, 0), (56, 100)),
]


@pytest.mark.parametrize("resources, capacity, used, defaulted, pod, expected", SCORES)
def test_scores_worked_out_by_hand(resources, capacity, used, defaulted, pod, expected):
    assert dp.node_score(resources, capacity, used, defaulted, pod) == expected


def capacity(scoring, nodes, used=(), resources=CPU_MEMORY):
    cap = FreeCapacity(scoring, resources=resources)
    states = [cap.add(n) for n in nodes]
    for i, request in used:
        cap.take(states[i], *request)
    return cap


GPU_NODES = [Node(f"n{i}", 8) for i in range(3)]
ONE_CORE = [Node(f"n{i}", 0, 1.0, GI) for i in range(2)]
CHOICES = [  # (scoring, resources, nodes, pods already placed (node, request), pod, chosen node)
    case("GPU-only nodes under the real default: the choice does not follow free GPUs (all tie, first wins)",
         "default-profile", CPU_MEMORY, GPU_NODES, [(0, (6, 0.0, 0))], (2, 0.0, 0), "n0"),
    case("GPU-only nodes under gangkit's LeastAllocated: the most free GPUs",
         "LeastAllocated", CPU_MEMORY, GPU_NODES, [(0, (6, 0.0, 0))], (2, 0.0, 0), "n1"),
    case("the real default with nvidia.com/gpu listed: the most free GPUs",
         "default-profile", GPU, GPU_NODES, [(0, (6, 0.0, 0)), (1, (1, 0.0, 0))], (2, 0.0, 0), "n2"),
    case("a pod without requests on n0 counts as 100m and 200Mi: n1 scores higher",
         "default-profile", CPU_MEMORY, ONE_CORE, [(0, (0, 0.0, 0))], (0, 0.0, 0), "n1"),
    case("gangkit's LeastAllocated sees nothing used on n0: a tie, n0 first",
         "LeastAllocated", CPU_MEMORY, ONE_CORE, [(0, (0, 0.0, 0))], (0, 0.0, 0), "n0"),
    case("BalancedAllocation breaks a Fit tie (25 each): n1 is left balanced (100 against 75)",
         "default-profile", CPU_MEMORY, ONE_CORE, [(0, (0, 0.25, GI // 2)), (1, (0, 0.5, GI // 4))],
         (0, 0.25, GI // 2), "n1"),
]


@pytest.mark.parametrize("scoring, resources, nodes, used, pod, chosen", CHOICES)
def test_the_node_chosen(scoring, resources, nodes, used, pod, chosen):
    cap = capacity(scoring, nodes, used, resources)
    assert cap.choose(*pod).node.name == chosen
    assert cap.choose_by_scan(*pod).node.name == chosen


def test_giving_back_a_pod_without_requests_takes_back_its_100m():
    cap = capacity("default-profile", ONE_CORE, [(0, (0, 0.0, 0))])
    cap.give(cap.nodes[0], 0, 0.0, 0)
    assert cap.choose(0, 0.0, 0).node.name == "n0"  # both empty again: a tie, the first node


def gpu_states():
    """Every (free GPUs on an 8-GPU node, on a 16-GPU node) pair a 1-GPU pod fits on, both nodes."""
    return [(a, b) for a, b in itertools.product(range(1, 9), range(1, 17))]


def test_gangkits_least_allocated_ranks_gpu_only_nodes_as_the_real_strategy_with_nvidia_gpu_listed():
    """Where kube-scheduler's integer scores differ, gangkit's exact shares put the same node first; where they
    tie (less than a point apart), kube-scheduler picks at random and gangkit ranks by the exact share."""
    differing = 0
    for a, b in gpu_states():
        nodes = [Node("n8", 8), Node("n16", 16)]
        used = [(0, (8 - a, 0.0, 0)), (1, (16 - b, 0.0, 0))]
        real = [dp.node_score(GPU, (n.gpus, None, None), (n.gpus - free, 0.0, 0), (0, 0), (1, 0.0, 0))[0]
                for n, free in zip(nodes, (a, b))]
        if real[0] == real[1]:
            continue
        differing += 1
        expected = "n8" if real[0] > real[1] else "n16"
        assert capacity("LeastAllocated", nodes, used).choose(1).node.name == expected, (a, b)
    assert differing > 100


# ---------------------------------------------------------------------------- reading a KubeSchedulerConfiguration
NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n0"}, "status": {"allocatable": {"nvidia.com/gpu": "8"}}}


def config(strategy=None, profiles=None, fit_args=None, **profile):
    args = dict(fit_args or {})
    if strategy is not None:
        args["scoringStrategy"] = strategy
    plugin_config = [{"name": "NodeResourcesFit", "args": args}] if args else []
    return {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
            "profiles": profiles or [{"schedulerName": "default-scheduler", "pluginConfig": plugin_config, **profile}]}


def load(*docs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load_manifests([NODE, *docs])


SHAPE = [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]
READ = [  # (scoringStrategy, expected (scoring, scoring_resources, scoring_shape))
    case("LeastAllocated with nvidia.com/gpu weight 1: the default profile spreading by free GPUs",
         {"type": "LeastAllocated", "resources": [{"name": "nvidia.com/gpu", "weight": 1}]},
         ("default-profile", GPU, ((0, 0), (100, 10)))),
    case("LeastAllocated without resources: kube-scheduler's defaults, cpu and memory",
         {"type": "LeastAllocated"}, ("default-profile", CPU_MEMORY, ((0, 0), (100, 10)))),
    case("a weight of 0 is defaulted to 1",
         {"type": "LeastAllocated", "resources": [{"name": "cpu", "weight": 0}, {"name": "nvidia.com/gpu", "weight": 5}]},
         ("default-profile", (("cpu", 1), ("nvidia.com/gpu", 5)), ((0, 0), (100, 10)))),
    case("MostAllocated: gangkit's packing",
         {"type": "MostAllocated", "resources": [{"name": "nvidia.com/gpu", "weight": 1}]},
         ("MostAllocated", CPU_MEMORY, ((0, 0), (100, 10)))),
    case("RequestedToCapacityRatio: its shape and resources",
         {"type": "RequestedToCapacityRatio", "resources": [{"name": "nvidia.com/gpu", "weight": 2}],
          "requestedToCapacityRatio": {"shape": SHAPE}},
         ("RequestedToCapacityRatio", (("nvidia.com/gpu", 2),), ((0, 0), (100, 10)))),
]


@pytest.mark.parametrize("strategy, expected", READ)
def test_a_scoring_strategy_sets_the_scoring(strategy, expected):
    s = load(config(strategy)).settings
    assert (s.scoring, s.scoring_resources, s.scoring_shape) == expected


def test_least_allocated_on_gpus_read_from_a_configuration_spreads_by_free_gpus():
    sc = load(config({"type": "LeastAllocated", "resources": [{"name": "nvidia.com/gpu", "weight": 1}]}))
    cap = capacity(sc.settings.scoring, GPU_NODES, [(0, (6, 0.0, 0)), (1, (1, 0.0, 0))], sc.settings.scoring_resources)
    assert cap.choose(2).node.name == "n2"


def test_no_scoring_strategy_leaves_the_scoring_as_it_was():
    assert load(config(None)).settings.scoring == "LeastAllocated"


BAD = [  # (document(s), error naming the field and what was expected)
    case("an unknown type", [config({"type": "BinPack"})],
         "scoringStrategy.type: expected one of LeastAllocated, MostAllocated, RequestedToCapacityRatio, got 'BinPack'"),
    case("no type", [config({"resources": [{"name": "cpu"}]})], "scoringStrategy.type: expected one of"),
    case("RequestedToCapacityRatio without a shape", [config({"type": "RequestedToCapacityRatio"})],
         "scoringStrategy.requestedToCapacityRatio.shape: expected a list of"),
    case("a shape score above 10", [config({"type": "RequestedToCapacityRatio", "requestedToCapacityRatio":
                                            {"shape": [{"utilization": 0, "score": 11}]}})],
         "scoringStrategy.requestedToCapacityRatio.shape: expected 1 to 10"),
    case("a weight above 100", [config({"type": "LeastAllocated", "resources": [{"name": "cpu", "weight": 101}]})],
         "scoringStrategy.resources[0].weight"),
    case("only resources gangkit does not model", [config({"type": "LeastAllocated",
                                                           "resources": [{"name": "ephemeral-storage"}]})],
         "scoringStrategy.resources: expected at least one of nvidia.com/gpu, cpu, memory"),
    case("two profiles with different strategies",
         [config(profiles=[{"schedulerName": name, "pluginConfig": [{"name": "NodeResourcesFit", "args": {
             "scoringStrategy": {"type": kind}}}]} for name, kind in (("a", "LeastAllocated"), ("b", "MostAllocated"))])],
         "profiles[1].pluginConfig[0].args.scoringStrategy: a scoring strategy that differs"),
    case("a Simulation that names another scoring",
         [config({"type": "MostAllocated"}), {"apiVersion": "gangkit/v1alpha1", "kind": "Simulation",
                                              "metadata": {"name": "s"}, "spec": {"scoring": "LeastAllocated"}}],
         "spec.scoring: expected 'MostAllocated', the scoring the KubeSchedulerConfiguration"),
]


@pytest.mark.parametrize("docs, message", BAD)
def test_a_bad_scoring_strategy_is_refused_naming_the_field(docs, message):
    with pytest.raises(ScenarioError) as e:
        load(*docs)
    assert message in str(e.value)


WARNED = [  # (document, words of the one warning that names what is not modelled)
    case("a changed plugin weight", config({"type": "LeastAllocated"}, plugins={"score": {"enabled": [
        {"name": "NodeResourcesBalancedAllocation", "weight": 5}]}}),
         "profiles[0].plugins.score.enabled[0].weight 5 for NodeResourcesBalancedAllocation is not modelled"),
    case("a disabled plugin", config({"type": "LeastAllocated"}, plugins={"multiPoint": {"disabled": [
        {"name": "NodeResourcesBalancedAllocation"}]}}),
         "profiles[0].plugins.multiPoint.disabled[0] disables NodeResourcesBalancedAllocation"),
    case("BalancedAllocation's arguments", config(profiles=[{"pluginConfig": [
        {"name": "NodeResourcesBalancedAllocation", "args": {"resources": [{"name": "cpu", "weight": 1}]}}]}]),
         "profiles[0].pluginConfig[0].args (NodeResourcesBalancedAllocation) is not modelled"),
    case("ignoredResources", config({"type": "LeastAllocated"}, fit_args={"ignoredResources": ["example.com/foo"]}),
         "profiles[0].pluginConfig[0].args.ignoredResources is not modelled"),
    case("a resource gangkit does not model", config({"type": "LeastAllocated", "resources": [
        {"name": "cpu"}, {"name": "ephemeral-storage"}]}), "resources: ephemeral-storage left out of the scoring"),
    case("MostAllocated's resources", config({"type": "MostAllocated"}),
         "type MostAllocated is simulated by gangkit's MostAllocated"),
    case("several profiles", config(profiles=[{"schedulerName": "a"}, {"schedulerName": "b"}]),
         "2 profiles; gangkit scores nodes one way for every pod"),
]


@pytest.mark.parametrize("doc, words", WARNED)
def test_what_is_not_modelled_is_named_in_a_warning(doc, words):
    assert len([w for w in load(doc).warnings if words in w]) == 1


@pytest.mark.parametrize("settings", [
    case("the default profile with GPUs listed", dict(scoring="default-profile", scoring_resources=GPU)),
    case("the default profile as it comes", dict(scoring="default-profile")),
])
def test_the_scoring_is_written_back_and_read_again(settings):
    sc = gk.Scenario([Node("n0", 8)], [gk.job("a", gpus=1)], settings=gk.RunSettings(**settings))
    again = load_manifests(dump_manifests(sc)).settings
    assert (again.scoring, again.scoring_resources) == (sc.settings.scoring, sc.settings.scoring_resources)


def test_a_misspelt_scoring_is_refused_with_the_choices():
    problems = gk.RunSettings(scoring="default").problems()
    assert [p.field for p in problems] == ["scoring"] and "default-profile" in problems[0].message


def test_a_run_under_the_default_profile_fills_gpu_only_nodes_in_list_order():
    """Four one-GPU jobs, two empty 4-GPU nodes: LeastAllocated spreads them, the default profile (GPUs not
    scored, every node ties) puts them all on the first node."""
    nodes = [Node("n0", 4), Node("n1", 4)]
    jobs = [gk.job(f"j{i}", gpus=1, run_time=100.0) for i in range(4)]

    def used_nodes(scoring):
        r = gk.simulate(gk.Scenario(nodes, jobs, settings=gk.RunSettings(stack="pod", scoring=scoring)), record="full")
        return sorted(set(r.pods.node))

    assert used_nodes("LeastAllocated") == ["n0", "n1"]
    assert used_nodes("default-profile") == ["n0"]


@pytest.mark.parametrize("stack, ordering", [
    case("Volcano's allocate, no ordering", "gang", "skip"),
    case("a backfilling book that plans with the scoring", "gang", "conservative-backfill"),
    case("kube-scheduler with preemption", "pod", "skip"),
])
def test_every_layer_runs_under_the_default_profile_and_repeats_itself(stack, ordering):
    sc = gk.scenarios.mixed(n_jobs=60, n_nodes=6, load=0.9, seed=1)
    runs = [gk.simulate(sc, stack=stack, ordering=ordering, scoring="default-profile", preemption=stack == "pod",
                        record="jobs").summary() for _ in range(2)]
    assert runs[0] == runs[1] and runs[0]["jobs_finished"] == 60
