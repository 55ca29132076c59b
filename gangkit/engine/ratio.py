"""kube-scheduler's ``RequestedToCapacityRatio`` score: a node's utilization after placement, through a shape.

``MostAllocated`` packs and ``LeastAllocated`` spreads; ``RequestedToCapacityRatio``
lets the operator draw the curve. Its ``shape`` is a list of points
(utilization 0 to 100 %, score 0 to 10); between points the score is a
straight line, outside them the nearest point's. Packing GPUs is the shape
``(0, 0), (100, 10)`` on ``nvidia.com/gpu``; a bump at 50 % prefers half-full nodes.

The rules, from Kubernetes 1.35 ``pkg/scheduler/framework/plugins/noderesources``
(``requested_to_capacity_ratio.go``, ``resource_allocation.go``, and
``helper.BuildBrokenLinearFunction``), in the integer arithmetic kube-scheduler uses:

- per resource of ``resources`` (name, weight): utilization =
  ``requested x 100 // allocatable``, where requested is what the node's pods
  ask for plus the new pod, clamped to 100; a node that does not have the
  resource (allocatable 0) is skipped, and so is an extended resource
  (``nvidia.com/gpu``) the pod does not ask for;
- the shape's scores are scaled to 0..100 (x 10) and interpolated with Go's
  truncating integer division;
- a resource whose score is 0 leaves the weighted mean (it counts neither in
  the sum nor in the weights); the node's score is the rounded weighted mean.

Simplified: kube-scheduler counts a pod without a cpu or memory request as
100m and 200 MiB; gangkit counts what the pods ask for. A node that does not
model cpu or memory (gangkit's ``None``) has none to score.
"""

from __future__ import annotations

import math

#: the resources gangkit's nodes have, by their Kubernetes names
RESOURCES = ("nvidia.com/gpu", "cpu", "memory")
#: kube-scheduler's defaults: NodeResourcesFit scores cpu and memory, weight 1 each
DEFAULT_RESOURCES = (("cpu", 1), ("memory", 1))
#: a packing shape: the fuller the node, the higher the score
PACKING = ((0, 0), (100, 10))
MAX_SHAPE_SCORE = 10  # config.MaxCustomPriorityScore
MAX_NODE_SCORE = 100  # framework.MaxNodeScore


def _div(a: int, b: int) -> int:
    """Go's integer division: truncated toward zero."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def broken_linear(shape: tuple, p: int) -> int:
    """The shape's score at utilization ``p``: the first point's below it, the last point's above it, a straight
    line (integer arithmetic) between two points (``helper.BuildBrokenLinearFunction``)."""
    for i, (u, s) in enumerate(shape):
        if p <= u:
            if i == 0:
                return s
            u0, s0 = shape[i - 1]
            return s0 + _div((s - s0) * (p - u0), u - u0)
    return shape[-1][1]


def score(shape: tuple, resources: tuple, allocatable: tuple, requested: tuple, pod: tuple) -> int:
    """The node's score, 0 to 100. ``allocatable``, ``requested`` (with the pod) and ``pod`` (the pod's own
    request) are (GPUs, cores, bytes); ``shape`` and ``resources`` as in the module docstring."""
    scaled = tuple((u, s * (MAX_NODE_SCORE // MAX_SHAPE_SCORE)) for u, s in shape)
    total = weights = 0
    for name, weight in resources:
        i = RESOURCES.index(name)
        alloc, req = allocatable[i], requested[i]
        if name == "cpu":  # kube-scheduler counts cpu in millicores
            alloc, req = round((alloc or 0) * 1000), round(req * 1000)
        alloc = int(alloc or 0)
        if alloc == 0 or (i == 0 and pod[0] == 0):  # no such resource, or an extended resource not asked for
            continue
        util = 100 if req >= alloc else (0 if req <= 0 else int(req) * 100 // alloc)
        s = broken_linear(scaled, util)
        if s > 0:
            total += s * weight
            weights += weight
    return 0 if weights == 0 else math.floor(total / weights + 0.5)  # Go's math.Round, for scores >= 0
