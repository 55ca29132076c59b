"""Kueue's rules, case by case, on Python objects (the manifests have their own tests).

Cases follow Kueue's concept pages (ClusterQueue borrowingLimit and
lendingLimit, Cohort) and the vectors of Kueue's own scheduler and
preemption unit tests.
"""

from __future__ import annotations

import pytest

from gangkit.kueue import (
    Admission,
    ClusterQueue,
    Cohort,
    FlavorQuotas,
    Kueue,
    LocalQueue,
    PodSetSpec,
    Preemption,
    Quota,
    ResourceFlavor,
    ResourceGroup,
    Workload,
)
from gangkit.kueue.quota import QuotaTree

CPU = "cpu"


def cq(name, flavors, cohort=None, **kw):
    """A ClusterQueue covering cpu with ``flavors`` = [(flavor, nominal, borrowingLimit, lendingLimit), ...]."""
    fq = tuple(FlavorQuotas(f, {CPU: Quota(n, b, l)}) for f, n, b, l in flavors)
    return ClusterQueue(name, [ResourceGroup((CPU,), fq)], cohort=cohort, **kw)


def wl(name, queue, cpu, priority=0, created=0.0, count=1):
    return Workload(name, "default", queue, [PodSetSpec("main", count, {CPU: cpu})], priority=priority, created=created)


def kueue(queues, flavors=("default",), cohorts=()):
    return Kueue([ResourceFlavor(f) for f in flavors], queues, [LocalQueue(q.name, "default", q.name) for q in queues], list(cohorts))


def admitted(k, name, queue, cpu, priority=0, flavor="default", at=0.0, created=0.0):
    w = wl(name, queue, cpu, priority, created)
    k.admit_existing(w, Admission(queue, {"main": {CPU: flavor}}, {"main": 1}, {(flavor, CPU): cpu}), at)
    return w


# --- quota arithmetic (ClusterQueue concept page) ------------------------------------------

QUOTA = [
    ("borrowingLimit caps team-a at nominal + limit", [("a", 9, 1, None), ("b", 12, None, None)], {"a": 10, "b": 21}),
    ("lendingLimit hides the rest of team-b's quota", [("a", 9, None, None), ("b", 12, None, 1)], {"a": 10, "b": 21}),
    ("without limits each team may use the whole cohort", [("a", 9, None, None), ("b", 12, None, None)], {"a": 21, "b": 21}),
]


@pytest.mark.parametrize("queues, potential", [c[1:] for c in QUOTA], ids=[c[0] for c in QUOTA])
def test_potential_available(queues, potential):
    tree = QuotaTree([cq(n, [("default", nom, b, l)], cohort="team-ab") for n, nom, b, l in queues], [])
    assert {n: tree.cq[n].potential_available(("default", CPU)) for n in potential} == potential


def test_lending_limit_leaves_the_hidden_part_to_its_owner():
    tree = QuotaTree([cq("a", [("default", 9, None, None)], "ab"), cq("b", [("default", 12, None, 1)], "ab")], [])
    fr = ("default", CPU)
    tree.cq["b"].add_usage(fr, 11)
    assert tree.cq["a"].available(fr) == 10  # b's 11 came from its hidden part
    tree.cq["b"].add_usage(fr, 1)
    assert tree.cq["a"].available(fr) == 9  # b's twelfth CPU is borrowed from the lent part


def test_a_cohort_with_its_own_quota_lends_it():
    tree = QuotaTree([cq("my-cluster-queue", [("default", 0, None, None)], "hello-cohort")],
                     [Cohort("hello-cohort", resource_groups=[ResourceGroup((CPU,), (FlavorQuotas("default", {CPU: Quota(12)}),))])])
    node = tree.cq["my-cluster-queue"]
    assert node.available(("default", CPU)) == 12
    assert node.borrowing_level(("default", CPU), 12) == (1, False)


def test_borrowing_level_is_the_height_of_the_lowest_subtree_that_fits():
    tree = QuotaTree([cq("a", [("default", 4, None, None)], "child"), cq("b", [("default", 4, None, None)], "root")],
                     [Cohort("child", parent="root"), Cohort("root")])
    a = tree.cq["a"]
    fr = ("default", CPU)
    assert a.borrowing_level(fr, 4)[0] == 0
    assert a.borrowing_level(fr, 6)[0] == 2  # child holds only a's 4: the root (height 2) must lend


# --- the scheduling cycle -------------------------------------------------------------------

def test_lower_borrowing_level_goes_first_and_a_later_borrower_no_longer_fits():
    # Kueue scheduler_test "cannot borrow if cohort was assigned and would result in overadmission"
    alpha = cq("eng-alpha", [("on-demand", 50, 50, None), ("spot", 100, 0, None)], "eng")
    beta = cq("eng-beta", [("on-demand", 50, 10, None), ("spot", 0, 100, None)], "eng")
    k = kueue([alpha, beta], flavors=("on-demand", "spot"))
    a, b = wl("a", "eng-alpha", 1, count=45), wl("b", "eng-beta", 1, count=56)
    k.submit(a)
    k.submit(b)
    r = k.cycle()
    assert r.admitted == [a]
    assert a.admission.flavors == {"main": {CPU: "on-demand"}}
    assert b.pending_reason == "Workload no longer fits after processing another workload"


def test_two_borrowers_can_both_be_admitted_in_one_cycle_if_the_cohort_has_room():
    alpha = cq("eng-alpha", [("on-demand", 50, 50, None), ("spot", 100, 0, None)], "eng")
    beta = cq("eng-beta", [("on-demand", 50, 10, None), ("spot", 0, 100, None)], "eng")
    k = kueue([alpha, beta], flavors=("on-demand", "spot"))
    a, b = wl("a", "eng-alpha", 1, count=45), wl("b", "eng-beta", 1, count=55)
    k.submit(a)
    k.submit(b)
    assert k.cycle().admitted == [a, b]


def test_workload_exceeding_the_lending_limit_is_inadmissible():
    k = kueue([cq("lend-a", [("default", 3, None, 2)], "lend"), cq("lend-b", [("default", 2, None, 2)], "lend")])
    admitted(k, "holder", "lend-b", 2)
    new = wl("new", "lend-b", 3)
    k.submit(new)
    assert k.cycle().admitted == []
    assert k.pending_state(new)[0] == "inadmissible"


STRATEGIES = [("StrictFIFO", []), ("BestEffortFIFO", ["small"])]


@pytest.mark.parametrize("strategy, admitted_names", STRATEGIES, ids=[s for s, _ in STRATEGIES])
def test_a_head_that_cannot_fit_blocks_its_queue_only_under_strict_fifo(strategy, admitted_names):
    k = kueue([cq("team", [("default", 4, None, None)], queueing_strategy=strategy)])
    admitted(k, "running", "team", 3)
    k.submit(wl("big", "team", 2, created=1))
    k.submit(wl("small", "team", 1, created=2))
    assert [w.name for w in k.run().admitted] == admitted_names


def test_best_effort_fifo_retries_parked_workloads_when_quota_is_released():
    k = kueue([cq("team", [("default", 4, None, None)])])
    running = admitted(k, "running", "team", 3)
    big = wl("big", "team", 2)
    k.submit(big)
    k.run()
    assert k.pending_state(big)[0] == "inadmissible"
    k.finish(running)
    assert k.run().admitted == [big]


# --- preemption (Kueue preemption_test vectors) -----------------------------------------------

def standalone():
    return kueue([cq("standalone", [("default", 6, None, None)], preemption=Preemption(within_cluster_queue="LowerPriority"))])


PREEMPT_IN_CQ = [
    ("preempts only the lowest priority", [("low", -1, 2), ("mid", 0, 2), ("high", 1, 2)], 2, 1, ["low"]),
    ("preempts two when one is not enough", [("low", -1, 2), ("mid", 0, 2), ("high", 1, 2)], 3, 1, ["low", "mid"]),
    ("never preempts equal or higher priority", [("low", -1, 3), ("mid", 0, 3)], 1, -1, []),
    ("the minimal set leaves the low priority workload", [("low", -1, 1), ("mid", 0, 2), ("high", 1, 3)], 2, 1, ["mid"]),
]


@pytest.mark.parametrize("running, cpu, priority, victims", [c[1:] for c in PREEMPT_IN_CQ], ids=[c[0] for c in PREEMPT_IN_CQ])
def test_preemption_within_cluster_queue(running, cpu, priority, victims):
    k = standalone()
    for i, (name, prio, c) in enumerate(running):
        admitted(k, name, "standalone", c, prio, at=float(i))
    incoming = wl("incoming", "standalone", cpu, priority)
    k.submit(incoming)
    r = k.cycle(10.0)
    assert sorted(v.name for v, _, _ in r.preempted) == victims
    assert all(reason == "InClusterQueue" for _, reason, _ in r.preempted)
    assert r.admitted == []  # never in the same cycle as its preemptions
    if victims:
        assert k.cycle(10.0).admitted == [incoming]


def cohort_pair():
    both = dict(cohort="cohort")
    c1 = cq("c1", [("default", 6, 6, None)], preemption=Preemption("LowerPriority", "LowerPriority"), **both)
    c2 = cq("c2", [("default", 6, 6, None)], preemption=Preemption("Never", "Any"), **both)
    return kueue([c1, c2])


def test_reclaim_quota_from_a_borrower():
    k = cohort_pair()
    admitted(k, "c1-low", "c1", 3, -1)
    admitted(k, "c2-mid", "c2", 3, 0, at=1)
    admitted(k, "c2-high", "c2", 6, 1, at=2)
    k.submit(wl("incoming", "c1", 3, 1))
    r = k.cycle()
    assert [(v.name, reason) for v, reason, _ in r.preempted] == [("c2-mid", "InCohortReclamation")]


def test_preempt_locally_rather_than_reclaim_a_same_resource():
    k = cohort_pair()
    admitted(k, "c1-med", "c1", 4, 0)
    admitted(k, "c1-low", "c1", 4, -1, at=1)
    admitted(k, "c2-low-1", "c2", 4, -1, at=2)
    k.submit(wl("incoming", "c1", 4, 1))
    r = k.cycle()
    assert [(v.name, reason) for v, reason, _ in r.preempted] == [("c1-low", "InClusterQueue")]


def test_no_preemption_when_not_enough_workloads_borrow():
    k = cohort_pair()
    admitted(k, "c1-high", "c1", 4, 1)
    admitted(k, "c2-low-1", "c2", 4, -1, at=1)
    admitted(k, "c2-low-2", "c2", 4, -1, at=2)
    k.submit(wl("incoming", "c1", 4, 1))
    assert k.cycle().preempted == []


def test_reclaim_while_borrowing_needs_borrow_within_cohort():
    shared = dict(cohort="with_shared_cq")
    pol = Preemption("Never", "LowerPriority", "LowerPriority", 0)
    queues = [cq("a_standard", [("default", 1, 12, None)], preemption=pol, **shared),
              cq("a_best_effort", [("default", 1, 12, None)], preemption=pol, **shared),
              cq("b_best_effort", [("default", 0, 13, None)], preemption=pol, **shared),
              cq("shared", [("default", 10, None, None)], **shared)]
    k = kueue(queues)
    admitted(k, "a_best_effort_low", "a_best_effort", 10, -1)
    admitted(k, "b_best_effort_low", "b_best_effort", 1, -1, at=1)
    k.submit(wl("incoming", "a_standard", 10, 0))
    r = k.cycle()
    assert [(v.name, reason) for v, reason, _ in r.preempted] == [("a_best_effort_low", "InCohortReclaimWhileBorrowing")]


def test_a_head_needing_preemption_without_victims_reserves_its_capacity_for_the_cycle():
    # team-a cannot preempt anyone (Never), so its head reserves what it may take of its nominal
    # quota: a lower-ranked borrower from team-b does not get it in the same cycle.
    a = cq("team-a", [("default", 4, None, None)], "c")
    b = cq("team-b", [("default", 0, None, None)], "c")
    k = kueue([a, b])
    admitted(k, "a-running", "team-a", 2)
    k.submit(wl("a-big", "team-a", 4, priority=5))
    k.submit(wl("b-small", "team-b", 2))
    r = k.cycle()
    assert r.admitted == []


# --- partial admission -------------------------------------------------------------------------

PARTIAL = [
    ("the largest count that fits is admitted", 10, 4, 6, {"main": 6}),
    ("all pods when they fit", 10, 4, 12, {"main": 10}),
    ("nothing below minCount", 10, 8, 6, None),
]


@pytest.mark.parametrize("count, min_count, free, counts", [c[1:] for c in PARTIAL], ids=[c[0] for c in PARTIAL])
def test_partial_admission(count, min_count, free, counts):
    k = kueue([cq("team", [("default", free, None, None)])])
    w = Workload("elastic", "default", "team", [PodSetSpec("main", count, {CPU: 1}, min_count=min_count)])
    k.submit(w)
    k.run()
    assert (w.admission.counts if w.admission else None) == counts


def test_partial_admission_runs_fewer_pods_in_the_simulation():
    import gangkit as gk
    from gangkit.kueue import GPU
    from gangkit.kueue.objects import KueueSetup

    setup = KueueSetup([ResourceFlavor("default-flavor")],
                       [ClusterQueue("cq", [ResourceGroup((GPU,), (FlavorQuotas("default-flavor", {GPU: Quota(6)}),))])],
                       [LocalQueue("default", "default", "cq")])
    job = gk.Job("elastic", [gk.PodSet("workers", 8, 1, min_count=4)], run_time=100)
    r = gk.simulate(gk.Scenario(gk.nodes(8, gpus=1), [job], kueue=setup), stack="kueue+gang")
    assert r.jobs.iloc[0]["state"] == "Finished"
    assert len(r.pods) == 6
