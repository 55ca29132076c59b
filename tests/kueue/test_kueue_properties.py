"""Properties of the quota layer on random cohorts and workloads.

- Usage never exceeds what a ClusterQueue may take: nominal quota plus its
  borrowingLimit (or plus everything the cohort lends, without a limit).
- A lender's protected quota (nominal - lendingLimit) is never lent: the
  other queues of the cohort together never use more than the cohort's
  lendable total.
- The cohort as a whole never uses more than its members' quotas.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from gangkit.kueue import (
    ClusterQueue,
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

FR = ("default", "cpu")

queues = st.lists(
    st.tuples(st.integers(0, 8), st.one_of(st.none(), st.integers(0, 6)), st.one_of(st.none(), st.integers(0, 8)),
              st.sampled_from(["StrictFIFO", "BestEffortFIFO"]), st.sampled_from(["Never", "LowerPriority", "Any"])),
    min_size=2, max_size=4)
workloads = st.lists(st.tuples(st.integers(0, 3), st.integers(1, 6), st.integers(0, 2), st.booleans()), min_size=1, max_size=14)


def build(qs):
    out = []
    for i, (nominal, borrow, lend, strategy, reclaim) in enumerate(qs):
        lend = None if lend is None else min(lend, nominal)
        out.append(ClusterQueue(f"q{i}", [ResourceGroup(("cpu",), (FlavorQuotas("default", {"cpu": Quota(nominal, borrow, lend)}),))],
                                cohort="c", queueing_strategy=strategy,
                                preemption=Preemption("LowerPriority", reclaim)))
    return out


def check(k: Kueue, qs) -> None:
    total_lendable = 0
    for nominal, _borrow, lend, *_rest in qs:
        lend = None if lend is None else min(lend, nominal)
        total_lendable += nominal if lend is None else lend
    for i, (nominal, borrow, lend, *_rest) in enumerate(qs):
        node = k.tree.cq[f"q{i}"]
        used = node.usage[FR]
        assert used >= 0
        lend = None if lend is None else min(lend, nominal)
        protected = 0 if lend is None else nominal - lend
        others_lendable = total_lendable - (nominal if lend is None else lend)
        # what q_i may take: its protected part plus what the cohort lends, capped by borrowingLimit
        cap = protected + (nominal - protected) + others_lendable
        if borrow is not None:
            cap = min(cap, nominal + borrow)
        assert used <= cap, (i, used, cap)
        # the lender's protected quota is never used by others
        others_used_beyond_own = sum(max(0, k.tree.cq[f"q{j}"].usage[FR] - _protected(qs[j])) for j in range(len(qs)) if j != i)
        assert others_used_beyond_own + max(0, used - protected) <= total_lendable
    cohort = k.tree.cohort["c"]
    assert cohort.usage[FR] <= cohort.subtree.get(FR, 0)


def _protected(q) -> int:
    nominal, _, lend, *_ = q
    return 0 if lend is None else nominal - min(lend, nominal)


@settings(max_examples=150, deadline=None, derandomize=True)
@given(queues, workloads, st.data())
def test_quota_is_never_overrun(qs, wls, data):
    k = Kueue([ResourceFlavor("default")], build(qs), [LocalQueue(f"q{i}", "default", f"q{i}") for i in range(len(qs))])
    admitted = []
    for n, (qi, cpu, prio, finish_one) in enumerate(wls):
        w = Workload(f"w{n}", "default", f"q{qi % len(qs)}", [PodSetSpec("main", 1, {"cpu": cpu})], priority=prio, created=float(n))
        k.submit(w)
        r = k.run(now=float(n))
        admitted.extend(r.admitted)
        check(k, qs)
        live = [a for a in admitted if a.admission is not None and not a.finished]
        if finish_one and live:
            k.finish(data.draw(st.sampled_from(live)))
            k.run(now=float(n))
            check(k, qs)


# --- the whole stack: Kueue in front of the placement layers ------------------------------------

import math  # noqa: E402
import random  # noqa: E402

import pytest  # noqa: E402

import gangkit as gk  # noqa: E402
from gangkit.kueue import GPU, KueueConfig  # noqa: E402
from gangkit.kueue.objects import KueueSetup  # noqa: E402


def stack_scenario(seed: int) -> gk.Scenario:
    rng = random.Random(seed)
    teams = rng.randint(1, 3)
    cqs = [ClusterQueue(f"t{i}", [ResourceGroup((GPU,), (FlavorQuotas("f", {GPU: Quota(rng.randint(0, 8), rng.choice([None, 2]))}),))],
                        cohort="org", queueing_strategy=rng.choice(["StrictFIFO", "BestEffortFIFO"]),
                        preemption=Preemption(rng.choice(["Never", "LowerPriority"]), rng.choice(["Never", "Any"])))
           for i in range(teams)]
    config = rng.choice([KueueConfig(wait_for_pods_ready=False), KueueConfig(pods_ready_timeout=120, backoff_base=10),
                         KueueConfig(pods_ready_timeout=120, backoff_base=10, backoff_limit_count=1)])
    jobs = [gk.job(f"j{i}", pods=rng.choice([1, 2, 4]), gpus=rng.choice([1, 2]), run_time=rng.choice([30, 100, 400]),
                   submit_time=rng.choice([0, 0, 15, 50]), priority=rng.randint(0, 2), queue=f"t{rng.randrange(teams)}",
                   progress=rng.choice(["sync", "sync", "independent"]))
            for i in range(rng.randint(2, 12))]
    setup = KueueSetup([ResourceFlavor("f")], cqs, [LocalQueue(q.name, "default", q.name) for q in cqs], config=config)
    return gk.Scenario(gk.nodes(rng.randint(2, 5), gpus=rng.choice([2, 4])), jobs, kueue=setup)


@pytest.mark.parametrize("stack", ["kueue+gang", "kueue+pod"])
def test_layered_stacks_keep_every_invariant(stack):
    states = {"Finished", "Deadlocked", "WaitingAtEnd", "RunningAtEnd", "Rejected", "Deactivated"}
    waited = 0
    for seed in range(60):
        sc = stack_scenario(seed)
        r = gk.simulate(sc, stack=stack, horizon=3000)
        s = r.summary()
        parts = s["useful_gpu_seconds"] + s["held_idle_gpu_seconds"] + s["free_gpu_seconds"] + s["not_ready_gpu_seconds"]
        assert math.isclose(parts, s["capacity_gpu_seconds"], abs_tol=1e-3), seed
        assert set(r.jobs.state) <= states and len(r.jobs) == len(sc.jobs)
        ok = r.jobs[r.jobs.state != "Rejected"]
        assert (ok.wait_unattributed_s.abs() < 1e-6).all(), seed
        assert (ok.wait_s >= 0).all()
        # no node over-allocated: sweep each node's bind/release times
        size = dict(zip(r.nodes.node, r.nodes.gpus))
        for node, pods in r.pods.groupby("node"):
            moments = sorted([(b, g) for b, g in zip(pods.bound_s, pods.gpus)] +
                             [(e, -g) for e, g in zip(pods.released_s.fillna(math.inf), pods.gpus)], key=lambda x: (x[0], x[1]))
            used = 0
            for _, g in moments:
                used += g
                assert used <= size[node], (seed, node)
        if stack == "kueue+gang":
            assert not r.deadlock, seed
        # quota: reserved never above nominal + borrowing allowance of the cohort
        res = r.metrics["kueue_cluster_queue_resource_reservation"]
        cohort_total = sum(q.resource_groups[0].flavors[0].resources[GPU].nominal for q in sc.kueue.cluster_queues)
        assert (res.reserved <= cohort_total).all(), seed
        waited += bool((r.jobs.wait_quota_s > 0).any())
    assert waited >= 30
