"""Nodes a NodePool owns when the run starts: they count against its limits and are consolidated like its own.

Karpenter v1.14 counts every node carrying ``karpenter.sh/nodepool`` against
that pool's limits (``scheduler.go``, ``updateRemainingResources``) and
disrupts the nodes it has NodeClaims for (``pkg/controllers/disruption``).
gangkit takes a scenario node with the label of one of the run's dynamic
NodePools as such a node (:mod:`gangkit.supply.adoption`).
"""

from __future__ import annotations

import math

import pytest

import gangkit as gk
from gangkit.model.jobs import job
from gangkit.model.nodes import Node
from gangkit.model.scenario import Scenario
from gangkit.supply.adoption import instance_type_of, pool_of
from gangkit.supply.cloud import InstanceType
from gangkit.supply.karpenter import Karpenter, NodePool

GPU = "nvidia.com/gpu"
TYPES = [InstanceType("gpu-8", 8, 8.0), InstanceType("gpu-4", 4, 5.0)]
OWNED = {"karpenter.sh/nodepool": "gpu", "node.kubernetes.io/instance-type": "gpu-8"}


def karpenter(**pool) -> Karpenter:
    kw = {"consolidate_after": 60.0, "budget": "100%"} | pool
    return Karpenter([NodePool("gpu", ["gpu-8", "gpu-4"], **kw)], TYPES)


def run(labels: dict, jobs, horizon=3000.0, n=2, **pool):
    nodes = [Node(f"old-{i}", 8, labels=labels) for i in range(n)]
    return gk.simulate(Scenario(nodes, jobs, karpenter=karpenter(**pool)), stack="gang+karpenter", horizon=horizon)


def removed(result) -> dict:
    ev = result.events[result.events.event == "node_removed"]
    return dict(zip(ev.node, ev.time_s))


CASES = [
    # (id, node labels, pool settings, jobs, {node: removed at}, nodes launched)
    ("owned and empty: removed after consolidateAfter; the busy one stays (the run ends with its job)",
     OWNED, {}, [job("a", pods=1, gpus=8, run_time=100)], {"old-1": 60.0}, 0),
    ("owned and empty, but a waiting gang's pod is nominated to it: kept, and the gang starts there when a ends",
     OWNED, {"limits": {GPU: 8}}, [job("a", pods=1, gpus=8, run_time=100), job("big", pods=2, gpus=8, run_time=10)],
     {}, 0),
    ("no pool label: a plain node, never removed", {}, {}, [job("a", pods=1, gpus=8, run_time=100)], {}, 0),
    ("another pool's label: not this Karpenter's", {"karpenter.sh/nodepool": "cpu"}, {},
     [job("a", pods=1, gpus=8, run_time=100)], {}, 0),
    ("consolidation off (consolidateAfter Never): owned nodes stay", OWNED, {"consolidate_after": None},
     [job("a", pods=1, gpus=8, run_time=100)], {}, 0),
    ("the limit counts owned nodes: 16 GPUs, two owned 8-GPU nodes busy, nothing is launched for a third job",
     OWNED, {"limits": {GPU: 16}, "consolidate_after": None},
     [job("a", pods=1, gpus=8, run_time=1000), job("b", pods=1, gpus=8, run_time=1000),
      job("c", pods=1, gpus=8, run_time=100, submit_time=10)], {}, 0),
    ("without the label the same limit leaves room for two more nodes", {}, {"limits": {GPU: 16}, "consolidate_after": None},
     [job("a", pods=1, gpus=8, run_time=1000), job("b", pods=1, gpus=8, run_time=1000),
      job("c", pods=1, gpus=8, run_time=100, submit_time=10)], {}, 1),
    ("underutilized: an owned node's one-GPU pod fits on the other owned node, so it is deleted",
     OWNED, {"consolidation_policy": "WhenEmptyOrUnderutilized", "consolidate_after": 30.0},
     [job("a", pods=1, gpus=1, run_time=1000), job("b", pods=1, gpus=1, run_time=1000)], {"old-0": 30.0}, 0),
]


@pytest.mark.parametrize("labels, pool, jobs, gone, launched", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_owned_nodes(labels, pool, jobs, gone, launched):
    r = run(labels, jobs, **pool)
    assert removed(r) == gone
    assert int((r.events.event == "node_launched").sum()) == launched


def test_a_pod_the_limit_blocks_says_which_limit():
    r = run(OWNED, [job("a", pods=1, gpus=8, run_time=1000), job("b", pods=1, gpus=8, run_time=1000),
                    job("c", pods=1, gpus=8, run_time=100, submit_time=10)], horizon=500,
            limits={GPU: 16}, consolidate_after=None)
    assert math.isnan(r.jobs.set_index("job").loc["c", "start_s"])
    assert "NodePool gpu at 16 of its 16-GPU limit" in str(r.diagnose("c"))


def test_usage_counts_owned_nodes_from_the_start():
    r = run(OWNED, [job("a", pods=1, gpus=8, run_time=100)], limits={GPU: 32}, consolidate_after=None)
    usage = r.metrics["karpenter_nodepools_usage"]
    first = usage[(usage.time_s == 0.0) & (usage.resource_type == GPU)]
    assert list(first.value) == [16]


TYPE_CASES = [
    # (id, node labels, expected type name, expected price)
    ("a catalogue type", OWNED, "gpu-8", 8.0),
    ("a type the catalogue lacks: made from the node, priced 0", OWNED | {"node.kubernetes.io/instance-type": "p5"}, "p5", 0.0),
    ("no type label", {"karpenter.sh/nodepool": "gpu"}, "n-type", 0.0),
]


@pytest.mark.parametrize("labels, name, price", [c[1:] for c in TYPE_CASES], ids=[c[0] for c in TYPE_CASES])
def test_instance_type_of_an_owned_node(labels, name, price):
    it = instance_type_of(Node("n", 8, labels=labels), {t.name: t for t in TYPES})
    assert (it.name, it.price_per_hour, it.gpus) == (name, price, 8)


def test_a_static_pool_does_not_take_up_nodes():
    pools = {"gpu": NodePool("gpu", ["gpu-8"], replicas=1)}
    assert pool_of(Node("n", 8, labels=OWNED), pools) is None
