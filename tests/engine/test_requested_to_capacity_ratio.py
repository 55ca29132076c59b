"""kube-scheduler's RequestedToCapacityRatio scoring (``scoring="RequestedToCapacityRatio"``, gangkit.engine.ratio).

Cases from Kubernetes' own tests (``pkg/scheduler/framework/plugins/noderesources/requested_to_capacity_ratio_test.go``:
TestBrokenLinearFunction, TestResourceBinPackingSingleExtended with ``nvidia.com/gpu`` as the extended resource), then
node choices, the settings' checks and the YAML fields.
"""

from __future__ import annotations

import warnings

import pytest

import gangkit as gk
from gangkit import Node
from gangkit.engine import ratio
from gangkit.engine.capacity import FreeCapacity
from gangkit.manifests import load_manifests
from gangkit.manifests.dump import dump_manifests
from gangkit.model.errors import ScenarioError

from conftest import case

BROKEN_LINEAR = [  # (shape, [(utilization, expected score)]): TestBrokenLinearFunction's three cases
    case("rising", ((10, 1), (90, 9)), [(-10, 1), (0, 1), (9, 1), (10, 1), (15, 1), (19, 1), (20, 2), (89, 8), (90, 9),
                                        (99, 9), (100, 9), (110, 9)]),
    case("bump", ((0, 2), (40, 10), (100, 0)), [(-10, 2), (0, 2), (20, 6), (30, 8), (40, 10), (70, 5), (100, 0),
                                                (110, 0)]),
    case("flat", ((0, 2), (40, 2), (100, 2)), [(p, 2) for p in (-10, 0, 20, 30, 40, 70, 100, 110)]),
]


@pytest.mark.parametrize("shape, points", BROKEN_LINEAR)
def test_the_broken_linear_function(shape, points):
    assert [ratio.broken_linear(shape, p) for p, _ in points] == [s for _, s in points]


GPU_ONLY = (("nvidia.com/gpu", 1),)
ONE = ((0, 0), (100, 1))  # the shape of TestResourceBinPackingSingleExtended
SINGLE_EXTENDED = [  # (node GPUs, GPUs already used, pod GPUs, expected score): its node1 (8) and node2 (4)
    case("pod asks for no GPU: the resource is skipped", 8, 0, 0, 0),
    case("2 of 8", 8, 0, 2, 2),
    case("2 of 4", 4, 0, 2, 5),
    case("2 more on a node with 2 of 4 used", 4, 2, 2, 10),
    case("4 of 8", 8, 0, 4, 5),
    case("4 of 4", 4, 0, 4, 10),
]


@pytest.mark.parametrize("cap, used, pod, expected", SINGLE_EXTENDED)
def test_kubernetes_single_extended_resource_cases(cap, used, pod, expected):
    # the shape's top score 1 is scaled x 10 (MaxNodeScore / MaxCustomPriorityScore): node scores run 0..10 here
    assert ratio.score(ONE, GPU_ONLY, (cap, None, None), (used + pod, 0, 0), (pod, 0, 0)) == expected


def test_a_resource_scoring_zero_leaves_the_weighted_mean():
    """GPUs 4 of 8 (score 50 on the packing shape) and cpu 0 of 16 (score 0): the mean is 50, not 25."""
    shape, resources = ratio.PACKING, (("nvidia.com/gpu", 1), ("cpu", 1))
    assert ratio.score(shape, resources, (8, 16.0, None), (4, 0.0, 0), (4, 0.0, 0)) == 50
    assert ratio.score(shape, resources, (8, 16.0, None), (4, 8.0, 0), (4, 8.0, 0)) == 50  # (50 + 50) / 2
    assert ratio.score(shape, (("nvidia.com/gpu", 3), ("cpu", 1)), (8, 16.0, None), (8, 4.0, 0), (8, 4.0, 0)) == 81


def cluster(scoring, shape=ratio.PACKING, resources=GPU_ONLY, used=(0, 2, 6)):
    cap = FreeCapacity(scoring, shape, resources)
    for i, u in enumerate(used):
        st = cap.add(Node(f"n{i}", 8), ready=True)
        if u:
            cap.take(st, u, 0.0, 0)
    return cap


CHOICES = [  # (scoring, shape, chosen node for a 2-GPU pod on nodes with 0, 2, 6 of 8 GPUs used)
    case("packing shape: the fullest node, as MostAllocated", "RequestedToCapacityRatio", ratio.PACKING, "n2"),
    case("MostAllocated itself", "MostAllocated", ratio.PACKING, "n2"),
    case("spreading shape: the emptiest, as LeastAllocated", "RequestedToCapacityRatio", ((0, 10), (100, 0)), "n0"),
    case("a bump at 50 %: the node that ends half full", "RequestedToCapacityRatio", ((0, 0), (50, 10), (100, 0)), "n1"),
]


@pytest.mark.parametrize("scoring, shape, node", CHOICES)
def test_the_node_chosen_follows_the_shape(scoring, shape, node):
    cap = cluster(scoring, shape)
    assert cap.choose(2).node.name == node
    assert cap.choose_avoiding((2, 0.0, 0, ()), {cap.by_name[node]}).node.name != node


def test_without_the_resource_every_node_scores_0_and_the_first_wins():
    """kube-scheduler's default resources are cpu and memory: on nodes that model neither, all tie."""
    cap = cluster("RequestedToCapacityRatio", resources=ratio.DEFAULT_RESOURCES)
    assert cap.choose(2).node.name == "n0"


def test_a_run_packs_with_the_shape():
    """Four one-GPU jobs on two 4-GPU nodes, one long job already on n1: packing puts them next to it."""
    nodes = [Node("n0", 4), Node("n1", 4)]
    jobs = [gk.job("long", gpus=1, run_time=5000.0)] + [gk.job(f"j{i}", gpus=1, submit_time=10.0) for i in range(3)]
    def first_nodes(**kw):
        r = gk.simulate(gk.Scenario(nodes, jobs, settings=gk.RunSettings(stack="pod", **kw)), record="full")
        return sorted(set(r.pods[r.pods.job != "long"].node))
    packed = first_nodes(scoring="RequestedToCapacityRatio", scoring_resources=GPU_ONLY)
    assert packed == first_nodes(scoring="MostAllocated") == ["n0"]
    assert first_nodes(scoring="RequestedToCapacityRatio", scoring_resources=GPU_ONLY,
                       scoring_shape=((0, 10), (100, 0))) == ["n0", "n1"]


@pytest.mark.parametrize("field, value", [
    case("unsorted shape", "scoring_shape", ((50, 1), (10, 2))),
    case("score above 10", "scoring_shape", ((0, 11),)),
    case("no points", "scoring_shape", ()),
    case("unknown resource", "scoring_resources", (("pods", 1),)),
    case("weight 0", "scoring_resources", (("nvidia.com/gpu", 0),)),
    case("a resource twice", "scoring_resources", (("cpu", 1), ("cpu", 2))),
])
def test_bad_shapes_and_resources_are_refused_by_field(field, value):
    problems = gk.RunSettings(scoring="RequestedToCapacityRatio", **{field: value}).problems()
    assert [p.field for p in problems] == [field]


SIMULATION = """
apiVersion: v1
kind: Node
metadata: {name: n0}
status: {allocatable: {nvidia.com/gpu: "8"}}
---
apiVersion: gangkit/v1alpha1
kind: Simulation
metadata: {name: ratio}
spec:
  stack: pod
  scoring: RequestedToCapacityRatio
  scoringResources: [{name: nvidia.com/gpu, weight: 2}]
  requestedToCapacityRatio:
    shape: [{utilization: 0, score: 0}, {utilization: 100, score: 10}]
"""


def test_the_yaml_fields_read_and_write_back():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sc = load_manifests(SIMULATION)
        again = load_manifests(dump_manifests(sc))
    assert sc.settings.scoring_resources == (("nvidia.com/gpu", 2),)
    assert sc.settings.scoring_shape == ((0, 0), (100, 10))
    assert again.settings == sc.settings


def test_a_bad_yaml_shape_is_one_error_naming_the_field():
    with pytest.raises(ScenarioError) as e:
        load_manifests(SIMULATION.replace("{utilization: 100, score: 10}", "{utilization: 100, score: 20}"))
    assert [p.field for p in e.value.problems] == ["spec.requestedToCapacityRatio.shape"]
