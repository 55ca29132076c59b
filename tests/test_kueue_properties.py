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

from gangkit.kueue import ClusterQueue, FlavorQuotas, Kueue, LocalQueue, PodSetSpec, Preemption, Quota, ResourceFlavor, ResourceGroup, Workload

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
    for i, (nominal, borrow, lend, *_rest) in enumerate(qs):
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
