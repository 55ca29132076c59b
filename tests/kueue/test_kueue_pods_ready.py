"""waitForPodsReady: a workload whose pods are not all ready in time is evicted, backs off, or is deactivated."""

from __future__ import annotations

import pytest

import gangkit as gk
from gangkit.kueue import GPU, ClusterQueue, FlavorQuotas, KueueConfig, LocalQueue, Quota, ResourceFlavor, ResourceGroup
from gangkit.kueue.objects import KueueSetup
from gangkit.kueue.pods_ready import backoff


def fragmented(config: KueueConfig) -> gk.Scenario:
    """Quota (6 GPUs) admits a 2 x 2-GPU gang that the nodes can place only partly until t=7200."""
    setup = KueueSetup([ResourceFlavor("default-flavor")],
                       [ClusterQueue("cq", [ResourceGroup((GPU,), (FlavorQuotas("default-flavor", {GPU: Quota(6)}),))])],
                       [LocalQueue("default", "default", "cq")], config=config)
    jobs = [gk.job("fill-a", gpus=1, run_time=7200), gk.job("fill-b", gpus=1, run_time=7200),
            gk.job("gang", pods=2, gpus=2, run_time=600, submit_time=10)]
    return gk.Scenario(gk.nodes(3, gpus=2), jobs, kueue=setup)


@pytest.mark.parametrize("n, base, cap, expected", [
    (1, 60, 3600, 60), (2, 60, 3600, 120), (6, 60, 3600, 1920), (7, 60, 3600, 3600), (12, 60, 3600, 3600), (3, 10, 0, 40),
])
def test_backoff_doubles_up_to_its_cap(n, base, cap, expected):
    assert backoff(KueueConfig(backoff_base=base, backoff_max=cap), n) == expected


CASES = [
    # (id, config, stack, held idle GPU-s, gang start, gang state, evictions)
    ("without the guard the partly placed gang holds 2 GPUs until it can start",
     KueueConfig(wait_for_pods_ready=False), "kueue+pod", 2 * 7190, 7200, "Finished", 0),
    ("with the guard the partial start is evicted after each timeout",
     KueueConfig(pods_ready_timeout=600), "kueue+pod", 6 * 600 * 2, 7390, "Finished", 6),
    ("a gang scheduler never holds anything, guard or not",
     KueueConfig(pods_ready_timeout=600), "kueue+gang", 0, 7390, "Finished", 6),
    ("after backoffLimitCount requeues the workload is deactivated",
     KueueConfig(pods_ready_timeout=600, backoff_limit_count=2), "kueue+pod", 3 * 600 * 2, None, "Deactivated", 3),
]


@pytest.mark.parametrize("config, stack, held, start, state, evictions", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_wait_for_pods_ready(config, stack, held, start, state, evictions):
    result = gk.simulate(fragmented(config), stack=stack)
    row = result.jobs.set_index("job").loc["gang"]
    assert row["state"] == state
    assert (start is None and row["start_s"] != row["start_s"]) or row["start_s"] == start
    assert result.summary()["held_idle_gpu_seconds"] == held
    assert (result.events[(result.events.job == "gang")].event == "evicted").sum() == evictions
    assert row["wait_unattributed_s"] == 0


def test_the_requeued_workload_waits_out_its_backoff_as_inadmissible():
    result = gk.simulate(fragmented(KueueConfig(pods_ready_timeout=600)), stack="kueue+pod", horizon=650)
    row = result.jobs.set_index("job").loc["gang"]
    assert row["state"] == "WaitingAtEnd"
    assert "waiting for the requeue backoff after PodsReadyTimeout (until t=670 s)" in row["reason"]


def test_block_admission_admits_one_unready_workload_at_a_time():
    setup = KueueSetup([ResourceFlavor("default-flavor")],
                       [ClusterQueue("cq", [ResourceGroup((GPU,), (FlavorQuotas("default-flavor", {GPU: Quota(8)}),))])],
                       [LocalQueue("default", "default", "cq")], config=KueueConfig(block_admission=True))
    sc = gk.Scenario(gk.nodes(4, gpus=1), [gk.job("A", pods=4, run_time=600), gk.job("B", pods=4, run_time=600)], kueue=setup)
    free = gk.simulate(sc.with_settings(), stack="kueue+pod", horizon=100)
    assert free.deadlock is False  # quota 8 would admit both; blockAdmission waits for A's pods first
    jobs = free.jobs.set_index("job")
    assert jobs.loc["A", "start_s"] == 0 and jobs.loc["B", "state"] == "WaitingAtEnd"
    unblocked = gk.simulate(gk.Scenario(sc.nodes, sc.jobs, kueue=KueueSetup(setup.flavors, setup.cluster_queues, setup.local_queues,
                                                                          config=KueueConfig(wait_for_pods_ready=False))),
                            stack="kueue+pod")
    assert unblocked.deadlock  # both admitted by quota, placed pod by pod: the old deadlock is back


def test_kueue_metrics_tell_reclaim_apart_from_waiting():
    from gangkit.kueue import Preemption

    def team(name):
        return ClusterQueue(name, [ResourceGroup((GPU,), (FlavorQuotas("default-flavor", {GPU: Quota(4)}),))], cohort="org",
                            preemption=Preemption(reclaim_within_cohort="Any"))

    setup = KueueSetup([ResourceFlavor("default-flavor")], [team("team-a"), team("team-b")],
                       [LocalQueue("a", "default", "team-a"), LocalQueue("b", "default", "team-b")])
    jobs = [gk.job("a1", pods=8, run_time=3600, queue="a"), gk.job("b1", pods=4, run_time=600, queue="b", submit_time=100)]
    r = gk.simulate(gk.Scenario(gk.nodes(8, gpus=1), jobs, kueue=setup), stack="kueue+gang")
    m = r.metrics
    assert m["kueue_preempted_workloads_total"].to_dict("records") == [
        {"preempting_cluster_queue": "team-b", "reason": "InCohortReclamation", "count": 1}]
    res = m["kueue_cluster_queue_resource_reservation"]
    borrowed = res[(res.cluster_queue == "team-a") & (res.time_s == 0)].borrowed.max()
    assert borrowed == 4  # team-a borrowed team-b's idle quota until team-b came back
    jobs_table = r.jobs.set_index("job")
    assert jobs_table.loc["a1", "restarts"] == 1 and jobs_table.loc["a1", "wait_quota_s"] == 0  # waits end at the first start
    pending = m["kueue_pending_workloads"]
    assert ((pending.cluster_queue == "team-a") & (pending.inadmissible == 1)).any()
