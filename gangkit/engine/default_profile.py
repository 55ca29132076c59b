"""kube-scheduler's default profile, as it scores nodes: ``scoring="default-profile"``.

What a stock kube-scheduler 1.35 does with a pod's feasible nodes, for the
resources gangkit models. The default profile
(``pkg/scheduler/apis/config/v1/default_plugins.go``) enables these score
plugins, with these weights: TaintToleration 3, NodeAffinity 2,
NodeResourcesFit 1, PodTopologySpread 2, InterPodAffinity 2,
NodeResourcesBalancedAllocation 1, ImageLocality 1. A node's final score is
the sum over plugins of the plugin's score (0..100) times its weight
(``pkg/scheduler/framework/runtime/framework.go``, ``RunScorePlugins``);
the scheduler binds to a node of the highest sum, chosen at random among
equal ones (``schedule_one.go``, ``selectHost``). gangkit keeps a fixed rule
instead: the first such node in the cluster's node list, so that runs are
reproducible without touching the random stream.

The two resource plugins, in kube-scheduler's integer arithmetic
(``pkg/scheduler/framework/plugins/noderesources``: ``fit.go``,
``least_allocated.go``, ``balanced_allocation.go``, ``resource_allocation.go``;
defaults in ``pkg/scheduler/apis/config/v1/defaults.go``):

- NodeResourcesFit, scoring strategy ``LeastAllocated`` on ``resources``
  (default ``cpu`` and ``memory``, weight 1 each): for each resource the node
  has (allocatable > 0), ``(allocatable - requested) * 100 // allocatable``
  (0 when requested exceeds allocatable), where requested is what the node's
  pods ask for plus the new pod; the node's score is the weighted sum of these
  divided, as integers, by the sum of the weights counted. CPU counts in
  millicores, memory in bytes. Here a pod that asks for no CPU counts as
  100m and one that asks for no memory as 200 MiB, for the new pod and for
  every pod already on the node (``GetNonZeroRequested``;
  ``pkg/scheduler/util``: ``DefaultMilliCPURequest``, ``DefaultMemoryRequest``).
  An extended resource such as ``nvidia.com/gpu`` counts only when it is in
  ``resources``, the node has it, and the pod asks for it.
- NodeResourcesBalancedAllocation on ``cpu`` and ``memory``: the shares
  ``requested / allocatable`` (capped at 1; requested is what pods really
  ask for, without the defaults above, plus the new pod), and
  ``int((1 - std) * 100)`` where ``std`` is half the difference of the two
  shares (0 with one share or none). A pod that asks for neither CPU nor
  memory skips the plugin (its PreScore returns Skip: every node gets 0 from it).

So GPUs do not steer the default profile: nodes are ranked by CPU and
memory alone, and a pod that asks for no CPU or memory still adds 100m and
200 MiB to its node. Listing ``nvidia.com/gpu`` in NodeResourcesFit's
``scoringStrategy.resources`` (gangkit's ``scoring_resources``) adds it.

Nodes that do not model CPU or memory (gangkit's ``None``): the real node
has some, gangkit does not know how much. gangkit scores such a resource as
a node without it (allocatable 0: left out, as kube-scheduler leaves out a
resource the node lacks). On nodes that model neither, with the default
resources, every node scores alike (Fit 0, BalancedAllocation 100 or
skipped) and the first node with room wins: pods fill the node list in
order, whatever the free GPUs. The real scheduler would rank those nodes by
the 100m/200 MiB each pod adds (fewer pods, higher score), ties at random;
model CPU and memory on the nodes to see that.

The other score plugins are left out; for gangkit's input they give every
node the same score or do not apply, except where said:

- TaintToleration (3): counts a node's ``PreferNoSchedule`` taints the pod
  does not tolerate; gangkit models no taints.
- NodeAffinity (2): scores *preferred* node affinity terms; gangkit's pods
  have a required ``nodeSelector`` (a filter) and no preferred terms.
- InterPodAffinity (2): scores preferred pod (anti-)affinity terms and
  existing pods' required *affinity*; gangkit's one-per-node rule is a
  required anti-affinity, a filter only.
- PodTopologySpread (2): the pod's own ``topologySpreadConstraints``, which
  gangkit does not read, or, for a pod that a Service, ReplicationController,
  ReplicaSet or StatefulSet selects, the system defaults (``ScheduleAnyway``
  on ``kubernetes.io/hostname``, maxSkew 3, and ``topology.kubernetes.io/zone``,
  maxSkew 5). A Job's pods are selected by none of these unless a Service
  selects them (a JobSet's headless Service does): then the real scheduler
  also spreads them over nodes and zones, which gangkit does not model.
- ImageLocality (1): prefers nodes that already hold the pod's images, by
  image size; gangkit models no images. In a real cluster with large images
  pulled on some nodes only, it can outweigh a few points of resource score.

Simplified: a container that states ``cpu: 0`` is counted as 0, not 100m, by
kube-scheduler (only a *missing* request is defaulted); gangkit cannot tell
the two apart and defaults both. kube-scheduler 1.36 changes
BalancedAllocation to score the change in balance the pod makes
(kubernetes/kubernetes pull request 135573); this module follows 1.35.
"""

from __future__ import annotations

DEFAULT_MILLI_CPU = 100  # pkg/scheduler/util: DefaultMilliCPURequest
DEFAULT_MEMORY = 200 * 1024 * 1024  # pkg/scheduler/util: DefaultMemoryRequest (200 MiB)
MAX_NODE_SCORE = 100  # framework.MaxNodeScore
#: NodeResourcesFit's and NodeResourcesBalancedAllocation's default resources (defaults.go, defaultResourceSpec)
DEFAULT_RESOURCES = (("cpu", 1), ("memory", 1))
#: the default profile's weights of the two plugins gangkit scores (default_plugins.go)
FIT_WEIGHT = 1
BALANCED_WEIGHT = 1


def millicores(cores) -> int:
    """Cores (gangkit) -> millicores (kube-scheduler's unit for cpu)."""
    return round((cores or 0) * 1000)


def least_requested(requested: int, allocatable: int) -> int:
    """One resource's LeastAllocated score: ``(allocatable - requested) * 100 // allocatable``, 0 when over."""
    if allocatable == 0 or requested > allocatable:
        return 0
    return (allocatable - requested) * MAX_NODE_SCORE // allocatable


def fit_score(resources: tuple, allocatable: dict, requested: dict) -> int:
    """NodeResourcesFit's LeastAllocated score: the integer weighted mean over the resources the node has.

    ``allocatable`` and ``requested`` map a resource name to its integer amount (0 or absent: left out).
    """
    total = weights = 0
    for name, weight in resources:
        alloc = allocatable.get(name, 0)
        if alloc == 0:
            continue
        total += least_requested(requested.get(name, 0), alloc) * weight
        weights += weight
    return total // weights if weights else 0


def balanced_score(allocatable: tuple, requested: tuple) -> int:
    """NodeResourcesBalancedAllocation's score on (cpu millicores, memory bytes): ``int((1 - std) * 100)``."""
    fractions = []
    for alloc, req in zip(allocatable, requested):
        if alloc == 0:
            continue
        fractions.append(min(req / alloc, 1.0))
    std = abs((fractions[0] - fractions[1]) / 2) if len(fractions) == 2 else 0.0
    return int((1 - std) * MAX_NODE_SCORE)


def node_score(resources: tuple, capacity: tuple, used: tuple, defaulted: tuple, pod: tuple) -> tuple[int, int]:
    """(NodeResourcesFit, NodeResourcesBalancedAllocation) scores of one node for one pod; the node's total is
    ``FIT_WEIGHT * fit + BALANCED_WEIGHT * balanced``.

    ``capacity``: the node's (GPUs, cores or None, bytes or None); ``used``: what its pods ask for (GPUs,
    cores, bytes); ``defaulted``: how many of its pods ask for no CPU, and for no memory; ``pod``: the pod's
    (GPUs, cores, bytes).
    """
    cap_gpus, cap_cpu, cap_memory = capacity
    gpus, cpu, memory = pod
    alloc_cpu, alloc_memory = millicores(cap_cpu), int(cap_memory or 0)
    used_cpu, used_memory = millicores(used[1]), int(used[2] or 0)
    pod_cpu, pod_memory = millicores(cpu), int(memory or 0)
    allocatable = {"cpu": alloc_cpu, "memory": alloc_memory}
    requested = {  # non-zero requests: a pod asking for none counts as 100m and 200 MiB
        "cpu": used_cpu + DEFAULT_MILLI_CPU * defaulted[0] + (pod_cpu or DEFAULT_MILLI_CPU),
        "memory": used_memory + DEFAULT_MEMORY * defaulted[1] + (pod_memory or DEFAULT_MEMORY),
    }
    if gpus and cap_gpus:  # an extended resource counts only when the pod asks for it and the node has it
        allocatable["nvidia.com/gpu"] = cap_gpus
        requested["nvidia.com/gpu"] = used[0] + gpus
    fit = fit_score(resources, allocatable, requested)
    if not pod_cpu and not pod_memory:  # a best-effort pod: BalancedAllocation's PreScore skips it
        return fit, 0
    return fit, balanced_score((alloc_cpu, alloc_memory), (used_cpu + pod_cpu, used_memory + pod_memory))


def total(resources: tuple, capacity: tuple, used: tuple, defaulted: tuple, pod: tuple) -> int:
    """The node's default-profile score: NodeResourcesFit x 1 + NodeResourcesBalancedAllocation x 1."""
    fit, balanced = node_score(resources, capacity, used, defaulted, pod)
    return FIT_WEIGHT * fit + BALANCED_WEIGHT * balanced
