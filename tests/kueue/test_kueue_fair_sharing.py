"""Fair sharing: dominant resource shares, admission order, and preemption by share."""

from __future__ import annotations

import pytest

from gangkit.kueue import (
    Admission,
    ClusterQueue,
    FlavorQuotas,
    Kueue,
    KueueConfig,
    LocalQueue,
    PodSetSpec,
    Preemption,
    Quota,
    ResourceFlavor,
    ResourceGroup,
    Workload,
)
from gangkit.kueue.fair_sharing import drs
from gangkit.kueue.quota import QuotaTree

GPU = "example.com/gpu"


@pytest.mark.parametrize("weight, expected", [(1.0, 200.0), (2.0, 100.0), (0.0, float("inf"))])
def test_dominant_resource_share(weight, expected):
    # Kueue fair_sharing_test "usage above nominal": borrows 1 of 10 lendable CPUs and 2 of 10 GPUs
    def q(name, cpu, gpu, w=1.0):
        return ClusterQueue(name, [ResourceGroup(("cpu", GPU), (FlavorQuotas("default", {"cpu": Quota(cpu), GPU: Quota(gpu)}),))],
                            cohort="root", fair_sharing_weight=w)

    tree = QuotaTree([q("cq", 2, 5, weight), q("lending-cq", 8, 5)], [])
    node = tree.cq["cq"]
    node.add_usage(("default", "cpu"), 3)
    node.add_usage(("default", GPU), 7)
    assert drs(node) == expected
    assert drs(tree.cohort["root"]) == 0


def team(name, nominal, weight=1.0):
    return ClusterQueue(name, [ResourceGroup(("cpu",), (FlavorQuotas("default", {"cpu": Quota(nominal)}),))], cohort="org",
                        preemption=Preemption("LowerPriority", "Any"), fair_sharing_weight=weight)


def kueue(*queues):
    return Kueue([ResourceFlavor("default")], list(queues), [LocalQueue(q.name, "default", q.name) for q in queues],
                 config=KueueConfig(fair_sharing=True))


def running(k, name, queue, cpu, at=0.0):
    w = Workload(name, "default", queue, [PodSetSpec("main", 1, {"cpu": cpu})])
    k.admit_existing(w, Admission(queue, {"main": {"cpu": "default"}}, {"main": 1}, {("default", "cpu"): cpu}), at)
    return w


def test_the_queue_borrowing_most_gives_back_to_a_queue_within_its_share():
    k = kueue(team("a", 3), team("b", 3), team("c", 3))
    for i in range(6):
        running(k, f"a-{i}", "a", 1, at=i)  # a borrows 3
    running(k, "c-0", "c", 2)
    incoming = Workload("b-0", "default", "b", [PodSetSpec("main", 1, {"cpu": 2})])
    k.submit(incoming)
    r = k.cycle()
    # b stays within its nominal quota, so it reclaims; the victim is a's most recently admitted workload
    assert [(v.name, reason) for v, reason, _ in r.preempted] == [("a-5", "InCohortReclamation")]
    assert k.cycle().admitted == [incoming]


def test_a_borrower_takes_back_by_share_with_in_cohort_fair_sharing():
    # b uses its 3 and wants 1 more (it would borrow 1); a borrows 3, and after giving one back
    # still borrows 2 >= 1: LessThanOrEqualToFinalShare allows it
    k = kueue(team("a", 3), team("b", 3), team("c", 3))
    for i in range(6):
        running(k, f"a-{i}", "a", 1, at=i)
    for i in range(3):
        running(k, f"b-{i}", "b", 1, at=i)
    k.submit(Workload("b-new", "default", "b", [PodSetSpec("main", 1, {"cpu": 1})]))
    r = k.cycle()
    assert [(v.name, reason) for v, reason, _ in r.preempted] == [("a-5", "InCohortFairSharing")]


def test_a_borrower_does_not_take_from_a_queue_that_borrows_less():
    # a borrows 2, b borrows 1: with one more CPU b would borrow as much as a does now, and more than a after
    k = kueue(team("a", 3), team("b", 3), team("c", 3))
    for i in range(5):
        running(k, f"a-{i}", "a", 1, at=i)  # a borrows 2
    for i in range(4):
        running(k, f"b-{i}", "b", 1, at=i)  # b borrows 1
    k.submit(Workload("b-new", "default", "b", [PodSetSpec("main", 1, {"cpu": 1})]))
    assert k.cycle().preempted == []


def test_admission_prefers_the_queue_with_the_lower_share():
    k = kueue(team("a", 2), team("b", 2), team("c", 4))
    running(k, "a-0", "a", 3)  # a already borrows 1
    wa = Workload("a-1", "default", "a", [PodSetSpec("main", 1, {"cpu": 2})], created=0)
    wb = Workload("b-1", "default", "b", [PodSetSpec("main", 1, {"cpu": 3})], created=1)
    k.submit(wa)
    k.submit(wb)
    r = k.cycle()
    assert r.admitted[0] is wb  # b's share after admission (1 borrowed) is below a's (3 borrowed)
