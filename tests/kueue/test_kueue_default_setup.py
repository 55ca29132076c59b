"""The default Kueue setup of a ``kueue+`` stack run without Kueue objects (gangkit.kueue.layer.default_objects).

One ClusterQueue with one flavor: all the cluster's GPUs, and, for cpu and memory when a job asks for them, a
quota that never binds before the nodes do (the larger of the nodes' total and what all the jobs ask for).
A ClusterQueue that does not cover a resource a workload asks for admits it never ("resource cpu unavailable").
"""

from __future__ import annotations

import pytest

import gangkit as gk
from gangkit import Job, Node, PodSet, Scenario, job
from gangkit.kueue.layer import default_objects

from conftest import case

GIB = 2**30


def quotas(sc, gpus=None):
    (cq,) = default_objects(sc, gpus).cluster_queues
    (group,) = cq.resource_groups
    (flavor,) = group.flavors
    assert group.covered == tuple(flavor.resources) and flavor.flavor == "default-flavor"
    return {r: q.nominal for r, q in flavor.resources.items()}


def cpu_job(name="t", pods=2, cpu=2.0, memory=0):
    return Job(name, [PodSet("node", pods, 0, cpu=cpu, memory=memory)], 100)


@pytest.mark.parametrize("node_list, jobs, gpus, expected", [
    case("GPU-only jobs: the ClusterQueue covers GPUs only, as before",
         [Node("n0", 4, cpu=32), Node("n1", 4, cpu=32)], [job("g", pods=2)], None, {"nvidia.com/gpu": 8}),
    case("a job asking for cpu: cpu is covered with the nodes' total (millicores) when it is larger",
         [Node("n0", 4, cpu=32), Node("n1", 4, cpu=32)], [cpu_job()], None, {"nvidia.com/gpu": 8, "cpu": 64_000}),
    case("nodes that model no cpu: the quota is what all the jobs ask for together",
         [Node("n0", 4), Node("n1", 4)], [cpu_job(pods=3), cpu_job("u", pods=1, cpu=0.5)], None,
         {"nvidia.com/gpu": 8, "cpu": 6_500}),
    case("jobs asking for more cpu than the nodes have (a supplier adds nodes): what the jobs ask for",
         [Node("n0", 0, cpu=4)], [cpu_job(pods=4)], None, {"nvidia.com/gpu": 0, "cpu": 8_000}),
    case("memory is covered the same way, in bytes",
         [Node("n0", 1, cpu=8, memory=64 * GIB)], [cpu_job(pods=1, memory=GIB)], None,
         {"nvidia.com/gpu": 1, "cpu": 8_000, "memory": 64 * GIB}),
    case("a supplier's GPUs override the GPU quota and leave cpu as it was",
         [Node("n0", 4, cpu=32)], [cpu_job()], 20, {"nvidia.com/gpu": 20, "cpu": 32_000}),
])
def test_the_default_cluster_queue_covers_every_resource_the_jobs_ask_for(node_list, jobs, gpus, expected):
    assert quotas(Scenario(node_list, jobs, name="case"), gpus) == expected


@pytest.mark.parametrize("stack", [case("behind Kueue with kube-scheduler", "kueue+pod"),
                                   case("behind Kueue with Volcano", "kueue+gang"),
                                   case("behind Kueue with Karpenter adding nodes", "kueue+pod+karpenter")])
def test_a_job_asking_for_cpu_is_admitted_under_the_default_setup(stack):
    sc = Scenario([Node("n0", 0, cpu=8)], [cpu_job(pods=2, cpu=2.0), job("g", pods=1, gpus=0)], name="case")
    rows = gk.simulate(sc, stack=stack, horizon=3600).jobs.set_index("job")
    assert list(rows.state) == ["Finished", "Finished"]
