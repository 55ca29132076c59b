"""The fast path against the literal algorithm: same decisions.

Kueue requeues every inadmissible workload of a cohort tree on each cohort
event, and each scheduling cycle tries one head per ClusterQueue. gangkit
parks equivalent workloads together (Kueue's SchedulingEquivalenceHashing,
on by default), so that a cycle costs a step per class of workloads rather
than per workload. With the feature off, every workload is parked and
retried on its own: the literal cycle-by-cycle reference. Both must admit
the same workloads at the same times.
"""

from __future__ import annotations

import random

import pandas as pd
import pytest

import gangkit as gk
from gangkit.kueue import (
    GPU,
    ClusterQueue,
    FlavorQuotas,
    KueueConfig,
    LocalQueue,
    Preemption,
    Quota,
    ResourceFlavor,
    ResourceGroup,
)
from gangkit.kueue.objects import KueueSetup


def scenario(seed: int, equivalence: bool, strategy: str) -> gk.Scenario:
    rng = random.Random(seed)
    teams = rng.randint(1, 3)
    queues = []
    for t in range(teams):
        nominal = rng.randint(0, 8)
        borrow = rng.choice([None, rng.randint(0, 8)])
        queues.append(ClusterQueue(f"team-{t}", [ResourceGroup((GPU,), (FlavorQuotas("default-flavor", {GPU: Quota(nominal, borrow)}),))],
                                   cohort="org", queueing_strategy=strategy,
                                   preemption=Preemption(rng.choice(["Never", "LowerPriority"]), rng.choice(["Never", "Any"]))))
    jobs = []
    for i in range(rng.randint(3, 14)):
        pods = rng.choice([1, 1, 2, 4])
        jobs.append(gk.job(f"j{i}", pods=pods, gpus=rng.choice([1, 2]), run_time=rng.choice([50, 100, 300]),
                           submit_time=rng.choice([0, 0, 10, 20, 60]), priority=rng.randint(0, 2), queue=f"team-{rng.randrange(teams)}"))
    setup = KueueSetup([ResourceFlavor("default-flavor")], queues, [LocalQueue(q.name, "default", q.name) for q in queues],
                       config=KueueConfig(wait_for_pods_ready=False, equivalence_hashing=equivalence))
    return gk.Scenario(gk.nodes(rng.randint(2, 6), gpus=rng.choice([2, 4])), jobs, kueue=setup)


@pytest.mark.parametrize("strategy", ["BestEffortFIFO", "StrictFIFO"])
@pytest.mark.parametrize("stack", ["kueue+gang", "kueue+pod"])
def test_equivalence_classes_change_nothing_but_speed(stack, strategy):
    contended = 0
    for seed in range(24):
        fast = gk.simulate(scenario(seed, True, strategy), stack=stack, horizon=5000)
        literal = gk.simulate(scenario(seed, False, strategy), stack=stack, horizon=5000)
        pd.testing.assert_frame_equal(fast.jobs, literal.jobs, obj=f"jobs (seed {seed})")
        pd.testing.assert_frame_equal(fast.events, literal.events, obj=f"events (seed {seed})")
        contended += bool((fast.jobs.wait_quota_s > 0).any())
    assert contended >= 12, "most cases should make some workload wait for quota"
