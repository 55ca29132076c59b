"""Kueue's Topology-Aware Scheduling (gangkit.kueue.tas: search, cache, manifests): tables of named cases.

The search rows marked "Kueue:" are cases of Kueue v0.19.2's own tests, with their nodes, requests and
expected assignments or messages (``pkg/cache/scheduler/tas_cache_test.go`` ``TestFindTopologyAssignments``,
``pkg/scheduler/scheduler_tas_test.go`` ``TestScheduleForTAS``); the others are gangkit's: the
fragmentation lesson under simulation, the errors, and the manifests.
"""

from __future__ import annotations

import dataclasses
import re
import warnings

import pytest
import yaml

import gangkit as gk
from gangkit.kueue.dump import kueue_manifests, pod_template_annotations
from gangkit.kueue.objects import (
    GPU,
    HOSTNAME,
    Admission,
    ClusterQueue,
    FlavorQuotas,
    KueueSetup,
    LocalQueue,
    PodSetSpec,
    Preemption,
    Quota,
    ResourceFlavor,
    ResourceGroup,
    Topology,
    TopologyAssignment,
    TopologyRequest,
    Workload,
)
from gangkit.kueue.scheduler import Kueue
from gangkit.kueue.setup_manifests import TOPOLOGY_VERSIONS
from gangkit.kueue.tas.manifests import TOPOLOGY_FIELDS
from gangkit.kueue.tas.search import TASFlavorSnapshot, TopologyTree
from gangkit.manifests import GangkitInputWarning, load_file, load_manifests
from gangkit.manifests.kueue_snapshot import load_kueue
from gangkit.model.errors import ScenarioError
from gangkit.model.jobs import job
from gangkit.model.nodes import Node

from conftest import case

try:
    from schema_util import requires_schemas, schema_for, validate_manifest
except ImportError:  # tests/ imported as a package
    from tests.schema_util import requires_schemas, schema_for, validate_manifest
from paths import REPO

BLOCK, RACK = "cloud.com/topology-block", "cloud.com/topology-rack"
THREE, TWO = (BLOCK, RACK, HOSTNAME), (BLOCK, RACK)
CPU = {"cpu": 1000}  # one core per pod, in millicores


# --- 1. the search: Kueue's own cases ------------------------------------------------------------------------


def host(block: str, rack: str, name: str, cores: int, **labels) -> tuple:
    """A node of Kueue's test topologies: (name, labels, allocatable in millicores)."""
    return (f"{block}-{rack}-{name}", {BLOCK: block, RACK: rack, HOSTNAME: name, **labels}, {"cpu": cores * 1000})


#       b1                   b2        (Kueue's defaultNodes: one core each but x4, two)
#    /      \             /      \
#   r1       r2          r1       r2
#   |      /  |  \       |         |
#   x3    x5  x1  x6     x2       x4
DEFAULT_NODES = [host("b1", "r1", "x3", 1), host("b1", "r2", "x5", 1), host("b1", "r2", "x1", 1),
                 host("b1", "r2", "x6", 1), host("b2", "r1", "x2", 1), host("b2", "r2", "x4", 2)]
SCATTERED = [host("b1", "r1", "x3", 4), host("b1", "r1", "x5", 1), host("b1", "r1", "x1", 1),
             host("b2", "r1", "x6", 2), host("b2", "r1", "x2", 1)]
RACKS = [host("b1", "r1", "x3", 2), host("b1", "r2", "x5", 2)] + [host("b1", "r3", x, 1) for x in ("x1", "x6", "x2", "x4")]


def search(levels, nodes, count, request=None, implied=False, selector=()):
    tree = TopologyTree(Topology("default", levels), nodes)
    snap = TASFlavorSnapshot(tree, {leaf_id: dict(leaf.capacity) for leaf_id, leaf in tree.leaves.items()})
    ta, reason = snap.find(count, CPU, selector, request, implied)
    return reason if ta is None else [(values, n) for values, n in ta.domains]


def hosts(*pairs) -> list:
    return [((h,), n) for h, n in pairs]


SEARCH = [
    case("Kueue: minimize the number of used racks before optimizing the number of nodes; BestFit",
         THREE, RACKS, 4, TopologyRequest(required=BLOCK), False, (), hosts(("x1", 1), ("x2", 1), ("x4", 1), ("x6", 1))),
    case("Kueue: choose the node that can accommodate all Pods",
         THREE, [host("b1", "r1", "x3", 2), host("b1", "r1", "x5", 1), host("b1", "r1", "x1", 1)], 2,
         TopologyRequest(required=BLOCK), False, (), hosts(("x3", 2))),
    case("Kueue: no annotation; implied default to unconstrained; 6 pods fit into hosts scattered across the whole "
         "datacenter even they could fit into single rack", THREE, SCATTERED, 6, None, True, (),
         hosts(("x1", 1), ("x3", 1), ("x5", 1), ("x2", 1), ("x6", 2))),
    case("Kueue: rack required; multiple Pods fit in a rack (racks pool their nodes' cores)",
         TWO, DEFAULT_NODES, 3, TopologyRequest(required=RACK), False, (), [(("b1", "r2"), 3)]),
    case("Kueue: rack required; too many pods to fit in any rack",
         TWO, DEFAULT_NODES, 4, TopologyRequest(required=RACK), False, (),
         'topology "default" allows to fit only 3 out of 4 pod(s)'),
    case("Kueue: block preferred; Pods fit in 2 blocks",
         (BLOCK,), [("b1", {BLOCK: "b1"}, {"cpu": 2000}), ("b2", {BLOCK: "b2"}, {"cpu": 1000}),
                    ("b3", {BLOCK: "b3"}, {"cpu": 4000})], 5, TopologyRequest(preferred=BLOCK), False, (),
         [(("b2",), 1), (("b3",), 4)]),
    case("Kueue: rack preferred; but only block can accommodate the workload",
         TWO, DEFAULT_NODES, 4, TopologyRequest(preferred=RACK), False, (), [(("b1", "r1"), 1), (("b1", "r2"), 3)]),
    case("Kueue: block preferred; but the workload cannot be accommodate in entire topology",
         TWO, DEFAULT_NODES, 10, TopologyRequest(preferred=BLOCK), False, (),
         'topology "default" allows to fit only 7 out of 10 pod(s)'),
    case("Kueue: detailed failure message with exclusion stats (its tainted node left out: gangkit has no taints)",
         (HOSTNAME,), [("x2", {HOSTNAME: "x2", "zone": "zone-b"}, {"cpu": 1000}),
                       ("x3", {HOSTNAME: "x3", "zone": "zone-b"}, {"cpu": 2000}),
                       ("x4", {HOSTNAME: "x4", "zone": "zone-a"}, {"cpu": 100})], 1,
         TopologyRequest(required=HOSTNAME), False, (("zone", "zone-a"),),
         'topology "default" doesn\'t allow to fit any of 1 pod(s). Total nodes: 3; excluded: nodeSelector: 2, '
         'resource "cpu": 1'),
    case("Kueue: unconstrained; a single pod fits into each host (LeastFreeCapacity: the fullest host first)",
         THREE, DEFAULT_NODES, 1, TopologyRequest(unconstrained=True), False, (), hosts(("x3", 1))),
    case("host required, the fullest host that holds them all: BestFit picks the tightest",
         THREE, DEFAULT_NODES, 2, TopologyRequest(required=HOSTNAME), False, (), hosts(("x4", 2))),
    case("a level the topology lacks", TWO, DEFAULT_NODES, 1, TopologyRequest(required=HOSTNAME), False, (),
         f"no requested topology level: {HOSTNAME}"),
    case("unconstrained: false names no level", TWO, DEFAULT_NODES, 1, TopologyRequest(unconstrained=False), False, (),
         "topology level not specified"),
]


@pytest.mark.parametrize("levels, nodes, count, request_, implied, selector, expected", SEARCH)
def test_the_topology_search(levels, nodes, count, request_, implied, selector, expected):
    assert search(levels, nodes, count, request_, implied, selector) == expected


def test_a_rack_as_lowest_level_pools_its_nodes_where_hosts_are_counted_one_by_one():
    # two nodes of 4 GPUs, 2 taken on one: as a rack, 6 free GPUs hold two 3-GPU pods; host by host only one
    nodes = [("n0", {RACK: "r1", HOSTNAME: "n0"}, {GPU: 2}), ("n1", {RACK: "r1", HOSTNAME: "n1"}, {GPU: 4})]
    three_gpus = {GPU: 3}
    rack = TopologyTree(Topology("racks", (RACK,)), nodes)
    by_host = TopologyTree(Topology("hosts", (RACK, HOSTNAME)), nodes)
    free = lambda tree: {k: dict(v.capacity) for k, v in tree.leaves.items()}  # noqa: E731
    pooled, _ = TASFlavorSnapshot(rack, free(rack)).find(2, three_gpus, request=TopologyRequest(required=RACK))
    _, reason = TASFlavorSnapshot(by_host, free(by_host)).find(2, three_gpus, request=TopologyRequest(required=RACK))
    assert pooled.domains == ((("r1",), 2),)
    assert reason == ('topology "hosts" allows to fit only 1 out of 2 pod(s). Total nodes: 2; '
                      'excluded: resource "nvidia.com/gpu": 1')


# --- 2. the scheduling cycle: Kueue's own cases ---------------------------------------------------------------

SINGLE_LEVEL = Topology("tas-single-level", (HOSTNAME,))
TAS_FLAVOR = ResourceFlavor("tas-default", (("tas-node", "true"),), "tas-single-level")
X1 = Node("x1", 0, cpu=1, memory=2**30, labels={"tas-node": "true", HOSTNAME: "x1"})


def tas_main(*flavors: str) -> ClusterQueue:
    """Kueue's test ClusterQueue tas-main: 50 cores and 50Gi in each flavor."""
    return ClusterQueue("tas-main", [ResourceGroup(("cpu", "memory"), tuple(
        FlavorQuotas(f, {"cpu": Quota(50_000), "memory": Quota(50 * 2**30)}) for f in flavors))])


def workload(name: str, count: int, request: TopologyRequest | None) -> Workload:
    return Workload(name, "default", "tas-main", [PodSetSpec("one", count, dict(CPU), topology=request)])


def cycle(flavors, topologies, nodes, workloads, non_tas=None, admitted=()) -> Kueue:
    k = Kueue.from_setup(KueueSetup(flavors, [tas_main(*(f.name for f in flavors))],
                                    [LocalQueue("tas-main", "default", "tas-main")], topologies=topologies))
    k.tas.observe((n, (non_tas or {}).get(n.name, {})) for n in nodes)
    for wl, assignment in admitted:
        k.admit_existing(wl, Admission("tas-main", {"one": {"cpu": "tas-default"}}, {"one": 1},
                                       {("tas-default", "cpu"): 1000}, {"one": assignment}))
    for wl in workloads:
        k.submit(wl)
    k.run()
    return k


def outcome(k: Kueue, wl: Workload):
    if wl.admission is not None:
        return {ps: (flavors, wl.admission.topology.get(ps)) for ps, flavors in wl.admission.flavors.items()}
    return k.pending_state(wl)


ON_X1 = TopologyAssignment((HOSTNAME,), ((("x1",), 1),))
CUSTOM = Topology("tas-custom-topology", ("cloud.com/custom-level",))
CUSTOM_FLAVOR = ResourceFlavor("tas-custom-flavor", (("tas-node", "true"),), "tas-custom-topology")
X1_CUSTOM = Node("x1", 0, cpu=1, labels={"tas-node": "true", "cloud.com/custom-level": "x1"})

CYCLE = [
    case("Kueue: workload does not get scheduled as it does not fit within the node capacity",
         [TAS_FLAVOR], [SINGLE_LEVEL], [X1], 2, TopologyRequest(required=HOSTNAME), None, (),
         ("inadmissible", 'couldn\'t assign flavors to pod set one: topology "tas-single-level" allows to fit only 1 out of '
                          '2 pod(s)')),
    case("Kueue: workload does not get scheduled as the node capacity is already used by another TAS workload "
         "(it would fit on an empty topology: PreemptionNoCandidates)",
         [TAS_FLAVOR], [SINGLE_LEVEL], [X1], 1, TopologyRequest(required=HOSTNAME), None,
         [(workload("bar-admitted", 1, TopologyRequest(required=HOSTNAME)), ON_X1)],
         ("inadmissible", 'couldn\'t assign flavors to pod set one: topology "tas-single-level" doesn\'t allow to fit any '
                          'of 1 pod(s). Total nodes: 1; excluded: resource "cpu": 1')),
    case("Kueue: workload does not get scheduled as the node capacity is already used by a non-TAS pod",
         [TAS_FLAVOR], [SINGLE_LEVEL], [X1], 1, TopologyRequest(required=HOSTNAME), {"x1": {"cpu": 600}}, (),
         ("inadmissible", 'couldn\'t assign flavors to pod set one: topology "tas-single-level" doesn\'t allow to fit any '
                          'of 1 pod(s). Total nodes: 1; excluded: resource "cpu": 1')),
    case("Kueue: workload requests topology level which is not present in topology",
         [TAS_FLAVOR], [SINGLE_LEVEL], [X1], 1, TopologyRequest(required="cloud.com/non-existing"), None, (),
         ("inadmissible", 'couldn\'t assign flavors to pod set one: Flavor "tas-default" does not contain the requested '
                          'level')),
    case("Kueue: workload requests topology level which is only present in second flavor",
         [TAS_FLAVOR, CUSTOM_FLAVOR], [SINGLE_LEVEL, CUSTOM], [X1_CUSTOM], 1,
         TopologyRequest(required="cloud.com/custom-level"), None, (),
         {"one": ({"cpu": "tas-custom-flavor"}, TopologyAssignment(("cloud.com/custom-level",), ((("x1",), 1),)))}),
    case("a TAS-only ClusterQueue: a pod set without annotation is placed as unconstrained",
         [TAS_FLAVOR], [SINGLE_LEVEL], [X1], 1, None, None, (), {"one": ({"cpu": "tas-default"}, ON_X1)}),
]


@pytest.mark.parametrize("flavors, topologies, nodes, count, request_, non_tas, admitted, expected", CYCLE)
def test_the_scheduling_cycle_with_topology(flavors, topologies, nodes, count, request_, non_tas, admitted, expected):
    wl = workload("foo", count, request_)
    assert outcome(cycle(flavors, topologies, nodes, [wl], non_tas, admitted), wl) == expected


def test_a_flavor_without_topology_serves_no_topology_request_and_a_tas_flavor_no_plain_pod_set():
    plain = ResourceFlavor("default")
    setup = KueueSetup([plain, TAS_FLAVOR], [tas_main("default", "tas-default")], [LocalQueue("tas-main", "default", "tas-main")],
                       topologies=[SINGLE_LEVEL])
    k = Kueue.from_setup(setup)
    k.tas.observe_nodes([X1])
    asks, plain_wl = workload("asks", 1, TopologyRequest(required=HOSTNAME)), workload("plain", 1, None)
    k.submit(asks)
    k.submit(plain_wl)
    k.run()
    # the mixed ClusterQueue is not TAS-only: a pod set without annotation does not ask for TAS
    assert asks.admission.flavors == {"one": {"cpu": "tas-default"}} and asks.admission.topology == {"one": ON_X1}
    assert plain_wl.admission.flavors == {"one": {"cpu": "default"}} and plain_wl.admission.topology == {}


def test_within_one_cycle_a_head_whose_domain_was_taken_is_computed_again():
    # two ClusterQueues share the TAS flavor's one host of 2 cores; both heads nominate x1 at the start of the
    # cycle, the first admitted takes it, the second is recomputed and finds no room
    flavors, cqs = [TAS_FLAVOR], [ClusterQueue(n, tas_main("tas-default").resource_groups) for n in ("cq-a", "cq-b")]
    k = Kueue.from_setup(KueueSetup(flavors, cqs, [LocalQueue(n, "default", n) for n in ("cq-a", "cq-b")],
                                    topologies=[SINGLE_LEVEL]))
    k.tas.observe_nodes([dataclasses.replace(X1, cpu=2)])
    a = Workload("a", "default", "cq-a", [PodSetSpec("one", 2, dict(CPU), topology=TopologyRequest(required=HOSTNAME))])
    b = Workload("b", "default", "cq-b", [PodSetSpec("one", 1, dict(CPU), topology=TopologyRequest(required=HOSTNAME))])
    k.submit(a)
    k.submit(b)
    result = k.cycle()
    assert [w.name for w in result.admitted] == ["a"]
    assert b.admission is None and "doesn't allow to fit any of 1 pod(s)" in b.pending_reason


# --- 3. simulations: the fragmentation lesson ------------------------------------------------------------------


def rack_nodes(racks: int, per_rack: int, gpus: int) -> list[Node]:
    return [Node(f"r{r}-n{i}", gpus, labels={"pool": "gpu", RACK: f"rack-{r}", HOSTNAME: f"r{r}-n{i}"})
            for r in range(racks) for i in range(per_rack)]


def tas_scenario(node_list, jobs, quota, requests=None, topology=True, levels=(RACK, HOSTNAME)) -> gk.Scenario:
    flavor = ResourceFlavor("tas-gpu", (("pool", "gpu"),), "dc" if topology else None)
    cq = ClusterQueue("team", [ResourceGroup((GPU,), (FlavorQuotas("tas-gpu", {GPU: Quota(quota)}),))])
    setup = KueueSetup([flavor], [cq], [LocalQueue("team", "team", "team")],
                       topologies=[Topology("dc", levels)] if topology else [],
                       topology_requests={(f"team/{k}", "workers"): v for k, v in (requests or {}).items()})
    return gk.Scenario(node_list, jobs, kueue=setup, name="tas")


def team(name, pods, gpus, run_time=600.0, submit_time=0.0):
    return job(name, pods, gpus, run_time, submit_time=submit_time, queue="team", namespace="team")


FRAGMENTED = ([Node(f"node-{i}", 4, labels={"pool": "gpu", RACK: "rack-1", HOSTNAME: f"node-{i}"}) for i in range(2)],
              [team("P", 1, 2, 1200.0), team("G", 2, 3, 600.0, 60.0)])

LESSON = [
    case("plain quota admits G at t=60 s, which then waits at the gang layer", "kueue+gang", False,
         {"team/G": (1200.0, 0.0, 1140.0)}),
    case("TAS keeps G pending in Kueue until P leaves room on two nodes", "kueue+gang", True,
         {"team/G": (1200.0, 1140.0, 0.0)}),
    case("plain quota, pod by pod: G's first worker starts alone and waits", "kueue+pod", False,
         {"team/G": (1200.0, 0.0, 1140.0)}),
    case("TAS, pod by pod: no partial start", "kueue+pod", True, {"team/G": (1200.0, 1140.0, 0.0)}),
]


@pytest.mark.parametrize("stack, topology, expected", LESSON)
def test_quota_cannot_see_fragmentation_and_tas_can(stack, topology, expected):
    node_list, jobs = FRAGMENTED
    result = gk.simulate(tas_scenario(node_list, jobs, 8, topology=topology), stack=stack)
    r = result.jobs.set_index("job")
    for name, (start, quota_wait, placement_wait) in expected.items():
        assert (r.loc[name, "start_s"], r.loc[name, "wait_quota_s"], r.loc[name, "wait_placement_s"]) == (
            start, quota_wait, placement_wait)
    # only quota, pod by pod, starts G's first worker alone: 3 GPUs held idle for 1140 s
    assert result.summary()["held_idle_gpu_seconds"] == (0 if topology or stack == "kueue+gang" else 3420.0)


RACK_CASES = [
    # two racks of two 4-GPU nodes; a 3 x 4-GPU gang fits the 16-GPU quota but no rack holds 3 of its pods
    case("required rack, no rack can hold the gang: never admitted, the reason Kueue's", "required", None,
         'couldn\'t assign flavors to pod set main: topology "dc" allows to fit only 2 out of 3 pod(s)'),
    case("preferred rack: spread over the two racks, fewest first", "preferred", {"rack-0": 2, "rack-1": 1}, None),
    case("without topology: admitted, and the gang layer places it across racks", None, {"rack-0": 2, "rack-1": 1}, None),
]


@pytest.mark.parametrize("ask, racks, reason", RACK_CASES)
def test_a_gang_that_no_rack_holds(ask, racks, reason):
    request = {"required": TopologyRequest(required=RACK), "preferred": TopologyRequest(preferred=RACK)}.get(ask)
    sc = tas_scenario(rack_nodes(2, 2, 4), [team("big", 3, 4)], 16, {"big": request} if request else None,
                      topology=ask is not None)
    r = gk.simulate(sc, stack="kueue+gang", horizon=3600)
    jobs, pods = r.jobs.set_index("job"), r.pods
    if reason is not None:
        assert jobs.loc["team/big", "state"] == "WaitingAtEnd" and reason in jobs.loc["team/big", "reason"]
        return
    placed = pods[pods.job == "team/big"].node.str.split("-n").str[0].map(lambda rk: f"rack-{rk[1:]}")
    assert placed.value_counts().to_dict() == racks


GANG_IN_A_RACK = [
    # two racks of two 4-GPU nodes; "small" (no annotation: unconstrained, the fullest node first) takes 2 GPUs
    # of r0-n0 at t=0; "pair" asks for one rack at t=10 s
    case("two 2-GPU pods: BestFit takes the tightest rack that holds them (rack-0: 1 + 2 pods), then the tightest "
         "host (r0-n1 holds both)", 2, ["r0-n1", "r0-n1"]),
    case("two 3-GPU pods: rack-0 holds one (2 and 4 GPUs free), so rack-1, one pod per host", 3, ["r1-n0", "r1-n1"]),
]


@pytest.mark.parametrize("gpus, expected", GANG_IN_A_RACK)
def test_a_gang_is_placed_inside_the_rack_kueue_chose_host_by_host(gpus, expected):
    sc = tas_scenario(rack_nodes(2, 2, 4), [team("small", 1, 2, 3600.0), team("pair", 2, gpus, 600.0, 10.0)], 16,
                      {"pair": TopologyRequest(required=RACK)})
    r = gk.simulate(sc, stack="kueue+gang")
    pods = r.pods.set_index("pod")
    assert pods.loc["small-0", "node"] == "r0-n0"
    assert sorted(pods.loc[["pair-0", "pair-1"], "node"]) == expected
    assert r.jobs.set_index("job").loc["team/pair", "start_s"] == 10.0


def test_each_pod_gets_its_own_host_by_rank():
    # preferred rack, 5 one-GPU pods on two racks of two 2-GPU nodes: rack-0 takes 4, rack-1 one
    sc = tas_scenario(rack_nodes(2, 2, 2), [team("five", 5, 1)], 8, {"five": TopologyRequest(preferred=RACK)})
    r = gk.simulate(sc, stack="kueue+pod")
    nodes_used = r.pods.set_index("pod").node.to_dict()
    assert sorted(nodes_used.values()) == ["r0-n0", "r0-n0", "r0-n1", "r0-n1", "r1-n0"]
    assert nodes_used["five-4"] == "r1-n0"  # by rank: the last domain in Kueue's order gets the last pod


# --- 4. errors ---------------------------------------------------------------------------------------------------

CQ = ClusterQueue("team", [ResourceGroup((GPU,), (FlavorQuotas("tas-gpu", {GPU: Quota(8)}),))])
PYTHON_ERRORS = [
    case("a flavor naming a missing Topology", [ResourceFlavor("tas-gpu", (("pool", "gpu"),), "dc")], [], CQ,
         "ResourceFlavor tas-gpu: topology_name: names Topology 'dc', which is not in the input"),
    case("a TAS flavor without nodeLabels", [ResourceFlavor("tas-gpu", (), "dc")], [Topology("dc", (RACK,))], CQ,
         "ResourceFlavor tas-gpu: node_labels: at least one nodeLabel is required when topology is set"),
    case("the hostname above another level", [ResourceFlavor("tas-gpu", (("pool", "gpu"),), "dc")],
         [Topology("dc", (HOSTNAME, RACK))], CQ,
         f"Topology dc: levels: the {HOSTNAME} label can only be used at the lowest level of topology"),
    case("a level twice", [ResourceFlavor("tas-gpu", (("pool", "gpu"),), "dc")], [Topology("dc", (RACK, RACK))], CQ,
         "Topology dc: levels: must be unique"),
    case("preemption in a ClusterQueue with a TAS flavor is not modelled yet",
         [ResourceFlavor("tas-gpu", (("pool", "gpu"),), "dc")], [Topology("dc", (RACK,))],
         dataclasses.replace(CQ, preemption=Preemption(within_cluster_queue="LowerPriority")),
         "ClusterQueue team: preemption: it uses the TAS flavor(s) tas-gpu: preemption by topology-aware workloads is "
         "not modelled yet"),
]


@pytest.mark.parametrize("flavors, topologies, cq, message", PYTHON_ERRORS)
def test_a_bad_tas_setup_in_python_is_one_error(flavors, topologies, cq, message):
    with pytest.raises(ScenarioError, match=re.escape(message)):
        Kueue.from_setup(KueueSetup(flavors, [cq], [LocalQueue("team", "team", "team")], topologies=topologies))


def test_the_provisioning_request_stack_refuses_a_tas_setup():
    node_list, jobs = FRAGMENTED
    with pytest.raises(ScenarioError, match=re.escape("a ProvisioningRequest admission check together with "
                                                      "topology-aware scheduling is not modelled yet")):
        gk.simulate(tas_scenario(node_list, jobs, 8), stack="kueue+provreq+autoscaler")


NODES_YAML = [{"apiVersion": "v1", "kind": "Node",
               "metadata": {"name": f"n{i}", "labels": {"pool": "gpu", RACK: "r1", HOSTNAME: f"n{i}"}},
               "status": {"allocatable": {GPU: "4", "cpu": "16"}}} for i in range(2)]
TOPOLOGY = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Topology", "metadata": {"name": "dc"},
            "spec": {"levels": [{"nodeLabel": RACK}, {"nodeLabel": HOSTNAME}]}}
FLAVOR = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor", "metadata": {"name": "tas-gpu"},
          "spec": {"nodeLabels": {"pool": "gpu"}, "topologyName": "dc"}}
PLAIN_FLAVOR = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor", "metadata": {"name": "plain"}}
QUEUE = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue", "metadata": {"name": "team-cq"},
         "spec": {"namespaceSelector": {}, "resourceGroups": [{"coveredResources": [GPU], "flavors": [
             {"name": "tas-gpu", "resources": [{"name": GPU, "nominalQuota": 8}]}]}]}}
LOCAL = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue", "metadata": {"name": "gpu", "namespace": "team"},
         "spec": {"clusterQueue": "team-cq"}}


def batch_job(name: str, pods: int, gpus: int, annotations: dict | None = None) -> dict:
    template: dict = {"spec": {"restartPolicy": "Never", "containers": [
        {"name": "w", "image": "trainer:1.0", "resources": {"limits": {GPU: str(gpus)}}}]}}
    if annotations:
        template["metadata"] = {"annotations": annotations}
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {
        "name": name, "namespace": "team", "labels": {"kueue.x-k8s.io/queue-name": "gpu"},
        "annotations": {"gangkit/run-time": "10m"}}, "spec": {"parallelism": pods, "completions": pods,
                                                             "suspend": True, "template": template}}


def jobset_doc(name: str, roles: dict[str, dict]) -> dict:
    replicated = [{"name": role, "template": {"spec": {"parallelism": 2, "completions": 2, "template": {
        "metadata": {"annotations": ann}, "spec": {"restartPolicy": "Never", "containers": [
            {"name": "w", "image": "trainer:1.0", "resources": {"limits": {GPU: "1"}}}]}}}}} for role, ann in roles.items()]
    return {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "metadata": {
        "name": name, "namespace": "team", "labels": {"kueue.x-k8s.io/queue-name": "gpu"},
        "annotations": {"gangkit/run-time": "10m"}}, "spec": {"replicatedJobs": replicated}}


def text(*docs) -> str:
    return "".join("---\n" + yaml.safe_dump(d, sort_keys=False) for d in docs)


def load(*docs) -> gk.Scenario:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load_manifests(text(*docs))


REQUIRED = "kueue.x-k8s.io/podset-required-topology"
PREFERRED = "kueue.x-k8s.io/podset-preferred-topology"
UNCONSTRAINED = "kueue.x-k8s.io/podset-unconstrained-topology"
BASE = [*NODES_YAML, TOPOLOGY, FLAVOR, QUEUE, LOCAL]
ANN = "spec.template.metadata.annotations"

MANIFEST_ERRORS = [
    case("a flavor naming a Topology that is not in the input", [*NODES_YAML, FLAVOR, QUEUE, LOCAL],
         "ResourceFlavor tas-gpu: spec.topologyName: names Topology 'dc', which is not in the input (Kueue keeps every "
         "ClusterQueue using this flavor inactive: TopologyNotFound)"),
    case("a level that is no label key", [*NODES_YAML, {**TOPOLOGY, "spec": {"levels": [{"nodeLabel": "Rack Label"}]}},
                                          FLAVOR, QUEUE, LOCAL],
         "Topology dc: spec.levels[0].nodeLabel: expected a node label key"),
    case("a Topology without levels", [*NODES_YAML, {**TOPOLOGY, "spec": {"levels": []}}, FLAVOR, QUEUE, LOCAL],
         "Topology dc: spec.levels: expected 1 to 16 levels, got 0"),
    case("a topologyName without nodeLabels", [*NODES_YAML, TOPOLOGY, {**FLAVOR, "spec": {"topologyName": "dc"}}, QUEUE, LOCAL],
         "ResourceFlavor tas-gpu: spec: at least one nodeLabel is required when topology is set"),
    case("a level the ClusterQueue's topology lacks", [*BASE, batch_job("j", 2, 1, {REQUIRED: BLOCK})],
         f"Job team/j: {ANN}: asks for level {BLOCK}, which no TAS flavor of ClusterQueue team-cq has (tas-gpu: {RACK}, "
         f"{HOSTNAME}); Kueue would keep it pending"),
    case("two topology annotations", [*BASE, batch_job("j", 2, 1, {REQUIRED: RACK, PREFERRED: RACK})],
         f'Job team/j: {ANN}: must not contain more than one topology annotation: ["{REQUIRED}", "{PREFERRED}", '
         f'"{UNCONSTRAINED}"]'),
    case("unconstrained that is no boolean", [*BASE, batch_job("j", 2, 1, {UNCONSTRAINED: "yes"})],
         f"Job team/j: {ANN}.{UNCONSTRAINED}: must be a boolean value, got 'yes'"),
    case("a level that is no label name", [*BASE, batch_job("j", 2, 1, {REQUIRED: "-rack"})],
         f"Job team/j: {ANN}.{REQUIRED}: expected a node label name"),
    case("TAS asked of a ClusterQueue without TAS flavor",
         [*NODES_YAML, TOPOLOGY, PLAIN_FLAVOR, {**QUEUE, "spec": {**QUEUE["spec"], "resourceGroups": [
             {"coveredResources": [GPU], "flavors": [{"name": "plain", "resources": [{"name": GPU, "nominalQuota": 8}]}]}]}},
          LOCAL, batch_job("j", 2, 1, {REQUIRED: RACK})],
         f"Job team/j: {ANN}: asks for topology-aware scheduling, but ClusterQueue team-cq has no TAS flavor"),
    case("preemption in a ClusterQueue with a TAS flavor",
         [*NODES_YAML, TOPOLOGY, FLAVOR, {**QUEUE, "spec": {**QUEUE["spec"], "preemption": {"withinClusterQueue": "LowerPriority"}}},
          LOCAL], "ClusterQueue team-cq: spec.preemption: it uses the TAS flavor(s) tas-gpu: preemption by "
                  "topology-aware workloads is not modelled yet"),
]


@pytest.mark.parametrize("docs, message", MANIFEST_ERRORS)
def test_a_bad_tas_manifest_is_one_error_naming_the_field(docs, message):
    with pytest.raises(ScenarioError, match=re.escape(message)):
        load(*docs)


# --- 5. manifests: reading, writing back, the real schemas -------------------------------------------------------

READ = [
    case("a batch/v1 Job's required level", [batch_job("j", 2, 1, {REQUIRED: RACK})],
         {("team/j", "workers"): TopologyRequest(required=RACK)}),
    case("preferred", [batch_job("j", 2, 1, {PREFERRED: HOSTNAME})], {("team/j", "workers"): TopologyRequest(preferred=HOSTNAME)}),
    case("unconstrained, in Go's boolean spellings", [batch_job("j", 2, 1, {UNCONSTRAINED: "True"})],
         {("team/j", "workers"): TopologyRequest(unconstrained=True)}),
    case("a JobSet: each replicatedJob's pod template",
         [jobset_doc("js", {"launcher": {}, "workers": {REQUIRED: RACK}})], {("team/js", "workers"): TopologyRequest(required=RACK)}),
    case("no annotation: nothing asked (a TAS-only ClusterQueue implies unconstrained)", [batch_job("j", 2, 1)], {}),
]


@pytest.mark.parametrize("jobs, expected", READ)
def test_the_pod_templates_topology_requests_are_read(jobs, expected):
    assert load(*BASE, *jobs).kueue.topology_requests == expected


def test_a_required_rack_from_yaml_runs_inside_one_rack():
    nodes = [{**n, "metadata": {**n["metadata"], "name": f"{rk}-n{i}", "labels": {
        "pool": "gpu", RACK: rk, HOSTNAME: f"{rk}-n{i}"}}} for rk in ("r1", "r2") for i, n in enumerate(NODES_YAML)]
    sc = load(*nodes, TOPOLOGY, FLAVOR, {**QUEUE, "spec": {**QUEUE["spec"], "resourceGroups": [{"coveredResources": [GPU],
              "flavors": [{"name": "tas-gpu", "resources": [{"name": GPU, "nominalQuota": 16}]}]}]}}, LOCAL,
              batch_job("j", 3, 2, {REQUIRED: RACK}))
    pods = gk.simulate(sc, stack="kueue+gang").pods
    assert len({n.split("-")[0] for n in pods.node}) == 1 and len(pods) == 3


BARE_POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {
    "name": "p", "namespace": "team", "labels": {"kueue.x-k8s.io/queue-name": "gpu"},
    "annotations": {REQUIRED: RACK, "gangkit/run-time": "10m"}},
    "spec": {"containers": [{"name": "w", "image": "trainer:1.0", "resources": {"limits": {GPU: "1"}}}]}}
WARNINGS = [
    case("a slice size", [*BASE, batch_job("j", 2, 1, {REQUIRED: RACK, "kueue.x-k8s.io/podset-slice-size": "2"})],
         f"Job team/j: {ANN}.kueue.x-k8s.io/podset-slice-size (pod set slices and groups of topology-aware scheduling "
         "are not modelled)"),
    case("a bare Pod's annotation", [*BASE, BARE_POD],
         "Pod team/p: its pod templates' topology annotations (read on batch/v1 Jobs and JobSets only)"),
    case("a TAS flavor whose nodeLabels select no node carrying every level (Kueue's samples come without nodes)",
         [*NODES_YAML, TOPOLOGY, {**FLAVOR, "spec": {"nodeLabels": {"pool": "cpu"}, "topologyName": "dc"}}, QUEUE, LOCAL],
         "ResourceFlavor tas-gpu: no Node matches its nodeLabels {'pool': 'cpu'} and carries a label for every level of "
         f"Topology dc ({RACK}, {HOSTNAME}): Kueue finds no topology domain, and its topology-aware workloads stay pending"),
    case("a Topology no flavor names keeps the board's warning: it has no effect", [*NODES_YAML, PLAIN_FLAVOR, TOPOLOGY],
         "Topology dc (kueue.x-k8s.io/v1beta2) is accepted and not simulated: no ResourceFlavor names it"),
]


@pytest.mark.parametrize("docs, warning", WARNINGS)
def test_what_gangkit_does_not_read_or_cannot_use_is_a_warning(docs, warning):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        load_manifests(text(*docs))
    assert any(warning in str(w.message) for w in caught), [str(w.message) for w in caught]


def test_a_topology_and_its_flavor_read_back_the_same_and_run_the_same():
    sc = load(*BASE, batch_job("j", 2, 3))
    docs = kueue_manifests(sc.kueue, sc.jobs)
    assert [d["kind"] for d in docs][:2] == ["Topology", "ResourceFlavor"]
    again = load(*NODES_YAML, *docs, batch_job("j", 2, 3))
    assert (again.kueue.topologies, again.kueue.flavors) == (sc.kueue.topologies, sc.kueue.flavors)
    run = lambda s: gk.simulate(s, stack="kueue+gang").pods[["pod", "node", "bound_s"]].to_dict("records")  # noqa: E731
    assert run(again) == run(sc)


@pytest.mark.parametrize("request_", [{REQUIRED: RACK}, {PREFERRED: RACK}], ids=["required", "preferred"])
def test_topology_requests_are_written_on_the_pod_template_and_read_back(request_):
    sc = load(*BASE, batch_job("j", 2, 1, request_))
    assert pod_template_annotations(sc.kueue, sc.jobs[0]) == {"workers": request_}
    text_out = gk.manifests.dump_manifests(sc)
    job_doc = next(d for d in yaml.safe_load_all(text_out) if d and d["kind"] == "Job")
    assert request_.items() <= job_doc["spec"]["template"]["metadata"]["annotations"].items()
    again = load_manifests(text_out)
    assert again.kueue.topology_requests == sc.kueue.topology_requests
    run = lambda s: gk.simulate(s, stack="kueue+gang").pods[["pod", "node", "bound_s"]].to_dict("records")  # noqa: E731
    assert run(again) == run(sc)


def test_the_board_warning_that_topologies_are_not_simulated_is_taken_back():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        load_manifests(text(*BASE, batch_job("j", 2, 1)))
    assert not [w for w in caught if "Topology" in str(w.message)]


@requires_schemas
@pytest.mark.parametrize("doc", [TOPOLOGY, FLAVOR, QUEUE, batch_job("j", 2, 1, {REQUIRED: RACK}),
                                 jobset_doc("js", {"workers": {PREFERRED: RACK}})],
                         ids=["Topology", "ResourceFlavor", "ClusterQueue", "Job", "JobSet"])
def test_the_test_manifests_are_valid_for_the_real_schemas(doc):
    assert validate_manifest(doc) is not None


@requires_schemas
def test_the_written_tas_objects_are_valid_for_the_real_schemas():
    sc = load(*BASE, batch_job("j", 2, 3))
    assert [validate_manifest(doc) is not None for doc in kueue_manifests(sc.kueue, sc.jobs)] == [True] * 4


@requires_schemas
@pytest.mark.parametrize("api_version", TOPOLOGY_VERSIONS)
def test_every_topology_field_gangkit_reads_exists_in_the_real_schema(api_version):
    def missing(known, schema, path):
        if known is True:
            return []
        if isinstance(known, list):
            return missing(known[0], schema.get("items", {}), path + "[]")
        props = schema.get("properties")
        if props is None:  # an open object (metadata) or a map
            return []
        return [m for key, sub in known.items()
                for m in ([f"{path}.{key}"] if key not in props else missing(sub, props[key], f"{path}.{key}"))]

    assert missing(TOPOLOGY_FIELDS, schema_for(api_version, "Topology"), "Topology") == []


# --- 6. the example ----------------------------------------------------------------------------------------------

EXAMPLE = REPO / "examples" / "tas-fragmentation.yaml"


def test_the_example_keeps_g_pending_in_kueue_with_kueues_message():
    with warnings.catch_warnings():
        warnings.simplefilter("error", GangkitInputWarning)
        sc = load_file(EXAMPLE)
    at_300 = gk.simulate(sc, horizon=300).jobs.set_index("job")
    assert at_300.loc["team-a/G", "reason"] == (
        '[quota] Inadmissible: couldn\'t assign flavors to pod set main: topology "default" allows to fit only 1 out of '
        '2 pod(s). Total nodes: 2; excluded: resource "nvidia.com/gpu": 1')
    done = gk.simulate(sc).jobs.set_index("job")
    assert (done.loc["team-a/G", "start_s"], done.loc["team-a/G", "wait_quota_s"]) == (1200.0, 1140.0)


def test_gangkit_admit_does_not_model_tas_and_says_so():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        snapshot = load_kueue(EXAMPLE)
    assert any("Topology default" in str(w.message) and "not modelled" in str(w.message) for w in caught)
    assert [f.topology_name for f in snapshot.setup.flavors] == [None] and snapshot.setup.topologies == []
