"""Node choice: the kind index of ``FreeCapacity.choose`` against the plain scan over every node.

Pods that ask for CPU or memory on nodes that model them, or that carry a
node selector, are placed through an index (nodes grouped by kind and free
GPUs, sorted by free share). The plain scan (``choose_by_scan``) is the
literal Filter-and-Score; these tests check that both pick the *same node*,
on hand-made cases and on random small clusters that change under random
takes, gives, removals and additions (hypothesis, derandomized).
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gangkit.engine.capacity import FreeCapacity
from gangkit.model.nodes import Node

GIB = 2**30


def _cap(nodes, scoring="LeastAllocated"):
    cap = FreeCapacity(scoring)
    for n in nodes:
        cap.add(n)
    return cap


def _chosen(cap, gpus, cpu, memory, selector=()):
    got = cap.choose(gpus, cpu, memory, selector)
    return None if got is None else got.node.name


# ------------------------------------------------------------------------------------- hand-made cases

A = Node("a", 8, cpu=32.0, memory=256 * GIB)
B = Node("b", 8, cpu=32.0, memory=256 * GIB)
SMALL = Node("small", 2, cpu=8.0, memory=32 * GIB, labels={"gpu-model": "T4"})
BIG = Node("big", 8, cpu=96.0, memory=768 * GIB, labels={"gpu-model": "V100"})


@pytest.mark.parametrize("nodes, taken, req, scoring, expected", [
    # equal nodes, equal scores: the first node in the list wins, as in the scan
    ([A, B], [], (1, 4.0, 8 * GIB, ()), "LeastAllocated", "a"),
    ([B, A], [], (1, 4.0, 8 * GIB, ()), "LeastAllocated", "b"),
    # a busier node loses under LeastAllocated and wins under MostAllocated
    ([A, B], [("a", 1, 8.0, 0)], (1, 4.0, 8 * GIB, ()), "LeastAllocated", "b"),
    ([A, B], [("a", 1, 8.0, 0)], (1, 4.0, 8 * GIB, ()), "MostAllocated", "a"),
    # GPUs free but CPU short: the node with the most free GPUs is filtered out
    ([A, B], [("a", 0, 30.0, 0), ("b", 4, 0.0, 0)], (1, 4.0, 0, ()), "LeastAllocated", "b"),
    # memory short on every node: nothing fits
    ([A, B], [], (1, 1.0, 300 * GIB, ()), "LeastAllocated", None),
    # a node selector keeps only the nodes with that label
    ([SMALL, BIG], [], (1, 1.0, GIB, (("gpu-model", "T4"),)), "LeastAllocated", "small"),
    ([SMALL, BIG], [], (1, 1.0, GIB, (("gpu-model", "A100"),)), "LeastAllocated", None),
    # different kinds compete on the mean share left free
    ([SMALL, BIG], [], (1, 1.0, GIB, ()), "LeastAllocated", "big"),
    ([SMALL, BIG], [], (1, 1.0, GIB, ()), "MostAllocated", "small"),
    # the kind whose empty node would score best is looked at first, but a busy one loses to a lower kind
    ([SMALL, BIG], [("big", 6, 90.0, 700 * GIB)], (1, 1.0, GIB, ()), "LeastAllocated", "small"),
    ([SMALL, BIG], [("big", 8, 0.0, 0)], (1, 1.0, GIB, ()), "LeastAllocated", "small"),
    ([BIG, SMALL, Node("big2", 8, cpu=96.0, memory=768 * GIB)], [("big", 1, 0.0, 0)], (1, 1.0, GIB, ()), "LeastAllocated", "big2"),
    # too many GPUs for the small node: only the big one is scored
    ([SMALL, BIG], [("big", 6, 0.0, 0)], (2, 1.0, GIB, ()), "MostAllocated", "small"),
    ([SMALL, BIG], [("big", 6, 0.0, 0)], (3, 1.0, GIB, ()), "MostAllocated", None),
])
def test_choose_matches_scan_on_cases(nodes, taken, req, scoring, expected):
    cap = _cap(nodes, scoring)
    for name, g, c, m in taken:
        cap.take(cap.by_name[name], g, c, m)
    assert _chosen(cap, *req) == expected
    scan = cap.choose_by_scan(*req)
    assert (None if scan is None else scan.node.name) == expected


@pytest.mark.parametrize("request_, ever", [
    ((8, 96.0, 768 * GIB, ()), True),
    ((9, 0.0, 0, ()), False),
    ((1, 97.0, 0, ()), False),
    ((1, 8.0, 33 * GIB, (("gpu-model", "T4"),)), False),
    ((2, 8.0, 32 * GIB, (("gpu-model", "T4"),)), True),
])
def test_could_ever_hold_by_kind(request_, ever):
    cap = _cap([SMALL, BIG])
    cap.take(cap.by_name["big"], 8, 96.0, 768 * GIB)  # what is taken now does not matter
    assert cap.could_ever_hold(*request_) is ever


# ------------------------------------------------------------------------------------- random clusters

KINDS = [
    (8, 32.0, 256 * GIB, {}),
    (8, 96.0, 768 * GIB, {"gpu-model": "V100"}),
    (4, 16.0, 64 * GIB, {"gpu-model": "T4"}),
    (2, 8.0, None, {"gpu-model": "T4"}),
    (1, None, 32 * GIB, {}),
    (0, 64.0, 256 * GIB, {}),
    (8, None, None, {"gpu-model": "V100"}),
]
SELECTORS = [(), (), (("gpu-model", "T4"),), (("gpu-model", "V100"),)]

kinds = st.sampled_from(range(len(KINDS)))
requests = st.tuples(st.integers(0, 8), st.sampled_from([0.0, 0.5, 1.0, 4.0, 12.0, 40.0]),
                     st.sampled_from([0, GIB, 8 * GIB, 100 * GIB]), st.sampled_from(range(len(SELECTORS))))
ops = st.lists(st.tuples(st.sampled_from(["place", "place", "place", "release", "remove", "add"]), requests),
               min_size=1, max_size=40)


def _labels(lab: dict, name: str, hostnames: bool) -> dict:
    """A kind's labels, and with ``hostnames`` the node's own ``kubernetes.io/hostname`` (each node a kind)."""
    return {**lab, "kubernetes.io/hostname": name} if hostnames else lab


def _apply(cap, steps, place, hostnames=False) -> None:
    """Apply random changes to ``cap``: ``place(req)`` returns the node a pod of ``req`` goes to (or None) and
    the request taken; ``release`` gives one placed pod back, ``remove`` takes an empty node away, ``add`` adds one."""
    placed = []  # (node state, gpus, cpu, memory)
    added = len(cap.nodes)
    for op, (g, c, m, s) in steps:
        if op == "place":
            got, req = place((g, c, m, SELECTORS[s]))
            if got is not None:
                cap.take(got, *req[:3])
                placed.append((got, *req[:3]))
        elif op == "release" and placed:
            node, pg, pc, pm = placed.pop(g % len(placed))
            cap.give(node, pg, pc, pm)
        elif op == "remove":
            empty = [n for n in cap.nodes if n.ready and all(p[0] is not n for p in placed)]
            if empty:
                cap.set_gone(empty[g % len(empty)])
        elif op == "add":
            gk, cc, mm, lab = KINDS[g % len(KINDS)]
            st_ = cap.add(Node(f"n{added}", gk, cpu=cc, memory=mm, labels=_labels(lab, f"n{added}", hostnames)),
                          ready=False)
            added += 1
            cap.set_ready(st_)


@settings(max_examples=300, derandomize=True, database=None, deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(cluster=st.lists(kinds, min_size=1, max_size=10), scoring=st.sampled_from(["LeastAllocated", "MostAllocated"]),
       steps=ops)
def test_index_picks_the_scan_node_on_random_clusters(cluster, scoring, steps):
    nodes = [Node(f"n{i}", g, cpu=c, memory=m, labels=lab) for i, (g, c, m, lab) in enumerate(KINDS[k] for k in cluster)]
    cap = _cap(nodes, scoring)

    def place(req):
        if not (req[1] or req[2] or req[3]):
            req = (req[0], 1.0, req[2], req[3])  # a request that takes the index
        want = cap.choose_by_scan(*req)
        got = cap.choose(*req)
        assert got is want, f"index chose {got and got.node.name}, scan {want and want.node.name} for {req}"
        return got, req

    _apply(cap, steps, place)
    # the final state, for every request shape
    for g in (0, 1, 2, 4, 8):
        for sel in SELECTORS:
            req = (g, 2.0, 4 * GIB, sel)
            assert cap.choose(*req) is cap.choose_by_scan(*req)


@settings(max_examples=200, derandomize=True, database=None, deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(cluster=st.lists(kinds, min_size=4, max_size=24), scoring=st.sampled_from(["LeastAllocated", "MostAllocated"]),
       fill=st.integers(0, 8), steps=ops)
def test_index_picks_the_scan_node_when_each_node_is_a_kind_of_its_own(cluster, scoring, fill, steps):
    """Nodes labelled with their own hostname, most of their GPUs taken: the free-GPU buckets name the kinds
    worth a look (few of them), and the choice is still the scan's."""
    nodes = [Node(f"n{i}", g, cpu=c, memory=m, labels=_labels(lab, f"n{i}", True))
             for i, (g, c, m, lab) in enumerate(KINDS[k] for k in cluster)]
    cap = _cap(nodes, scoring)
    for i, st_ in enumerate(cap.nodes):  # a busy cluster: most nodes keep a GPU or none free
        busy = min(st_.free_gpus, max(0, st_.node.gpus - (i * fill) % 3))
        cap.take(st_, busy, 0.0, 0)

    def place(req):
        req = (req[0], req[1] or 1.0, req[2], req[3])  # a request that takes the index
        want = cap.choose_by_scan(*req)
        got = cap.choose(*req)
        assert got is want, f"index chose {got and got.node.name}, scan {want and want.node.name} for {req}"
        return got, req

    _apply(cap, steps, place, hostnames=True)
    for g in (0, 1, 2, 4, 8):
        for sel in SELECTORS + [(("kubernetes.io/hostname", "n1"),)]:
            req = (g, 2.0, 4 * GIB, sel)
            assert cap.choose(*req) is cap.choose_by_scan(*req)


@settings(max_examples=200, derandomize=True, database=None, deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(cluster=st.lists(kinds, min_size=1, max_size=10), steps=ops, most=st.integers(1, 12))
def test_pods_that_fit_is_what_one_choice_after_another_places(cluster, steps, most):
    """``pods_that_fit(g, most)`` is how many pods of ``g`` GPUs alone ``choose`` places one after another (at
    most ``most``), on random clusters after random takes, gives, removals and additions; the free room is
    left as it was."""
    nodes = [Node(f"n{i}", g, cpu=c, memory=m, labels=lab) for i, (g, c, m, lab) in enumerate(KINDS[k] for k in cluster)]
    cap = _cap(nodes)
    _apply(cap, steps, lambda req: (cap.choose(*req), req))
    for gpus in (1, 2, 3, 4, 8):
        before = [(n.free_gpus, n.free_cpu, n.free_memory) for n in cap.nodes]
        counted = cap.pods_that_fit(gpus, most)
        assert [(n.free_gpus, n.free_cpu, n.free_memory) for n in cap.nodes] == before
        taken = []
        while len(taken) < most:
            node = cap.choose(gpus, 0.0, 0, ())
            if node is None:
                break
            cap.take(node, gpus, 0.0, 0)
            taken.append(node)
        assert counted == len(taken), f"{gpus} GPUs: counted {counted}, placed {len(taken)}"
        for node in taken:
            cap.give(node, gpus, 0.0, 0)
