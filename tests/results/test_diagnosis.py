"""Diagnosis: one case per reason, each a small story whose sentence we can check by hand."""

from __future__ import annotations

import pytest

import gangkit as gk
from gangkit import Reason, Stack, job, nodes
from gangkit.engine.simulation import Simulation
from gangkit.kueue import GPU, ClusterQueue, FlavorQuotas, KueueConfig, LocalQueue, Quota, ResourceFlavor, ResourceGroup
from gangkit.kueue.layer import KueueLayer, default_setup
from gangkit.kueue.objects import KueueSetup
from gangkit.model.jobs import Job, PodSet
from gangkit.results.diagnosis import CODES, LAYER_CODES, WAITING, diagnose_job
from gangkit.supply.autoscaler import ClusterAutoscaler, NodeGroup
from gangkit.supply.cloud import InstanceType
from gangkit.supply.karpenter import Karpenter, NodePool
from gangkit.supply.provisioning_request import ProvisioningRequestSpec
from gangkit.volcano.scheduler import VolcanoGang


def team_a(gpus: int = 8, config: KueueConfig | None = None) -> KueueSetup:
    """One ClusterQueue ``team-a`` with ``gpus`` GPUs of quota, fed by the LocalQueue ``default``."""
    return KueueSetup([ResourceFlavor("default-flavor")],
                      [ClusterQueue("team-a", [ResourceGroup((GPU,), (FlavorQuotas("default-flavor", {GPU: Quota(gpus)}),))])],
                      [LocalQueue("default", "default", "team-a")], config=config or KueueConfig(wait_for_pods_ready=False))


def busy(*jobs_, gpus=8, count=1, **kw):
    """``count`` nodes, the first kept busy by Z for 1000 s."""
    return gk.Scenario(nodes(count, gpus=gpus), [job("Z", pods=1, gpus=gpus, run_time=1000), *jobs_], **kw)


def karpenter(limit=None):
    return Karpenter([NodePool("gpu", ["g8"], limits={} if limit is None else {GPU: limit}, consolidate_after=None)],
                     [InstanceType("g8", 8, 8.0)])


def with_karpenter(sc, limit=None):
    sc.karpenter = karpenter(limit)
    return sc


def fragmented(config):
    setup = KueueSetup([ResourceFlavor("default-flavor")],
                       [ClusterQueue("cq", [ResourceGroup((GPU,), (FlavorQuotas("default-flavor", {GPU: Quota(6)}),))])],
                       [LocalQueue("default", "default", "cq")], config=config)
    jobs = [job("fill-a", gpus=1, run_time=7200), job("fill-b", gpus=1, run_time=7200),
            job("gang", pods=2, gpus=2, run_time=600, submit_time=10)]
    return gk.Scenario(nodes(3, gpus=2), jobs, kueue=setup)


def consumers_too_late():
    """A ProvisioningRequest for 2 x 8 GPUs at t=0; A's pods consume it at t=1500 s, after its booking (600 s) and the
    scale-down of its empty nodes (10 min unneeded): cluster-autoscaler scales up for none of them."""
    ca = ClusterAutoscaler([NodeGroup("g8", InstanceType("g8", 8, 8.0), max_size=2)])
    request = ProvisioningRequestSpec("cap", (PodSet("workers", 2, 8),))
    a = Job("A", [PodSet("workers", 2, 8)], 600.0, submit_time=1500.0, consume_provisioning_request="cap")
    return gk.Scenario([gk.Node("system-0", 0)], [a], autoscaler=ca, provisioning_requests=[request])


def churning():
    """Lesson 01's two-gangs deadlock with a 600 s rendezvous timeout: restart churn, then both Jobs fail."""
    import dataclasses

    sc = gk.scenarios.two_gangs_deadlock()
    return dataclasses.replace(sc, jobs=[dataclasses.replace(j, rendezvous_timeout=600.0) for j in sc.jobs])


CASES = [
    # (id, scenario, stack, job, at, code, layer, words in the message)
    ("not yet submitted", gk.scenarios.three_workers(), "gang", "Y", 30, "NotSubmitted", "", ["submitted at t=60 s"]),
    ("a pod no node can hold", gk.Scenario(nodes(1, gpus=8), [job("big", gpus=16)]), "gang", "big", 0, "Rejected",
     "placement", ["asks for 16 GPUs", "largest node has 8"]),
    ("its LocalQueue does not exist", gk.Scenario(nodes(1, gpus=8), [job("A", gpus=8, queue="nowhere")], kueue=team_a(8)),
     "kueue+gang", "A", 0, "QueueMissing", "quota", ["in no ClusterQueue", "LocalQueue nowhere doesn't exist"]),
    ("quota exhausted in team-a", busy(job("A", gpus=8), count=2, kueue=team_a(8)), "kueue+gang", "A", 100,
     "QuotaExhausted", "quota", ["quota exhausted in ClusterQueue team-a", "asks for 8 GPUs", "insufficient unused quota"]),
    ("more than the ClusterQueue can ever have", gk.Scenario(nodes(2, gpus=8), [job("A", pods=2, gpus=8)], kueue=team_a(8)),
     "kueue+gang", "A", 0, "QuotaTooSmall", "quota", ["asks for 16 GPUs, more than ClusterQueue team-a can ever have",
                                                      "current podset request (16) > maximum capacity (8)"]),
    ("Kueue backoff after a PodsReady timeout", fragmented(KueueConfig(pods_ready_timeout=600)), "kueue+pod", "gang", 650,
     "Queued", "quota", ["queued in ClusterQueue cq", "requeue backoff"]),
    ("quota reserved, ProvisioningRequest not provisioned yet", gk.scenarios.two_gangs_deadlock(), "kueue+provreq+autoscaler",
     "B", 5, "AdmissionCheck", "admission_check", ["quota reserved; admission check not ready: waiting for ProvisioningRequest"]),
    ("admitted, nodes initializing", with_karpenter(busy(job("A", pods=2, gpus=8))), "kueue+gang+karpenter", "A", 100,
     "WaitingForNodes", "node_initialization", ["admitted; 2 of 2 nodes launched for it still initializing", "ready at t=151 s"]),
    ("no admission layer, nodes booting", with_karpenter(busy(job("A", pods=2, gpus=8))), "gang+karpenter", "A", 30,
     "WaitingForNodes", "node_registration", ["pods pending; 2 of 2 nodes launched for it still booting and registering"]),
    ("the NodePool limit stops the provisioner", with_karpenter(busy(job("A", pods=2, gpus=8)), limit=8), "gang+karpenter",
     "A", 500, "NodePoolLimit", "placement", ["gang of 2 pods (16 GPUs, 8 per pod) cannot fit",
                                              "no node coming: NodePool gpu at 8 of its 8-GPU limit"]),
    ("consumers of a ProvisioningRequest whose nodes are gone: no scale-up", consumers_too_late(), "pod+autoscaler",
     "A", 3000, "ConsumingProvisioningRequest", "placement",
     ["2 of 2 pods of 8 GPUs unschedulable", "cluster-autoscaler scales up for none of them",
      "\"Unschedulable pod didn't trigger scale-up, because it's consuming ProvisioningRequest default/cap\"",
      "BookingExpired=True (CapacityReservationTimeExpired) at t=600 s"]),
    ("gang of 16 GPUs, largest free block 4", gk.Scenario(nodes(2, gpus=8), [job("Z", gpus=4, run_time=1000),
                                                                            job("Y", gpus=8, run_time=1000),
                                                                            job("A", pods=2, gpus=8)]),
     "gang", "A", 10, "GangCannotFit", "placement",
     ["gang of 2 pods (16 GPUs, 8 per pod) cannot fit: largest free block is 4 GPUs, 4 GPUs free in all"]),
    ("pod by pod: half a gang holds GPUs", gk.scenarios.two_gangs_deadlock(), "pod", "A", 100, "PartiallyPlaced",
     "placement", ["2 of 4 pods bound hold 2 GPUs without progress", "deadlock"]),
    ("pod by pod: nothing fits", busy(job("A", pods=2, gpus=8)), "pod", "A", 100, "Unschedulable", "placement",
     ["2 of 2 pods of 8 GPUs unschedulable (largest free block is 0 GPUs): "
      "0/1 nodes are available: 1 Insufficient nvidia.com/gpu."]),
    ("fits now, waits for the next Volcano session", busy(job("A", gpus=8)).with_settings(session_period=7.0), "gang", "A",
     1000, "WaitingForSession", "placement", ["fits now; placed at the next session"]),
    ("running", gk.scenarios.three_workers(), "gang", "Z", 100, "Running", "", ["running since t=0 s on 2 GPUs"]),
    ("finished: where the wait went", with_karpenter(busy(job("A", pods=2, gpus=8))), "gang+karpenter", "A", None,
     "Finished", "", ["finished at t=751 s; waited 151 s, mostly in node_initialization (90 s)"]),
    ("deactivated after its requeues", fragmented(KueueConfig(pods_ready_timeout=600, backoff_limit_count=2)), "kueue+pod",
     "gang", None, "Deactivated", "quota", ["deactivated at t=", "requeues used up"]),
    ("restart churn: failed pods wait for the Job controller's backoff", churning(), "pod", "A", 610,
     "PodRestartBackoff", "placement", ["2 pods failed their rendezvous", "creates them again at t=620 s"]),
    ("the Job failed: more pod failures than its backoffLimit", churning(), "pod", "A", 2500, "Failed",
     "job-controller", ["the Job failed at t=2400 s (BackoffLimitExceeded): 7 pods failed", "backoffLimit 6"]),
]


@pytest.mark.parametrize("scenario, stack, name, at, code, layer, words", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_each_reason(scenario, stack, name, at, code, layer, words):
    d = gk.simulate(scenario, stack=stack).diagnose(job=name, at=at)
    assert (d.code, d.layer) == (code, layer), str(d)
    for w in words:
        assert w in d.message, str(d)
    assert d.waiting == (code in WAITING)


def test_every_code_has_a_case():
    """The diagnosis's own codes here; the placement layers' codes it passes on in tests/results/test_diagnosis_layers.py."""
    assert {c[5] for c in CASES} | {"AdmissionCheck"} | set(LAYER_CODES) == set(CODES)


class Check(gk.AdmissionLayer):
    """An admission check that is never Ready (a ProvisioningRequest that waits for capacity)."""

    name = "admission_check"

    def submit(self, js, now):
        pass

    def cycle(self, sim, now):
        return []

    def release(self, js, now):
        pass

    def pending_reason(self, js):
        return Reason("admission_check", "Pending", "ProvisioningRequest: capacity not available yet")


def test_an_admission_check_by_its_layer_name():
    sc = gk.Scenario(nodes(1, gpus=8), [job("A", gpus=8)])
    sim = Simulation(sc, Stack(VolcanoGang(), admission=[KueueLayer(default_setup(sc)), Check()], name="kueue+check+gang"))
    sim.run(until=50)
    d = diagnose_job(sim, sim.jobs[0], 50.0)
    assert (d.code, d.layer) == ("AdmissionCheck", "admission_check")
    assert d.message == "quota reserved; admission check not ready: ProvisioningRequest: capacity not available yet"


def test_the_cluster_at_one_instant():
    sc = gk.scenarios.two_gangs_deadlock()
    view = gk.simulate(sc, stack="pod").diagnose(at=100)
    assert view.headline == ("t=100 s: 0 running, 0 finished, 2 waiting (2 PartiallyPlaced); "
                             "GPUs: 4 = 0 useful + 4 held idle + 0 free + 0 not ready")
    assert view.table.code.tolist() == ["PartiallyPlaced", "PartiallyPlaced"]
    assert str(view).splitlines()[1].startswith("  A: [placement] 2 of 4 pods bound")


@pytest.mark.parametrize("stack, at, headline", [
    ("gang", 100, "t=100 s: 1 running, 0 finished, 1 waiting (1 GangCannotFit)"),
    ("kueue+gang", 100, "t=100 s: 1 running, 0 finished, 1 waiting (1 QuotaExhausted)"),
    ("kueue+gang+karpenter", 100, "t=100 s: 1 running, 0 finished, 1 waiting (1 WaitingForNodes)"),
])
def test_the_failure_point_moves_with_the_stack(stack, at, headline):
    sc = with_karpenter(busy(job("A", pods=2, gpus=8), count=2))
    assert gk.simulate(sc, stack=stack).diagnose(at=at).headline.startswith(headline)


def test_a_past_instant_is_the_same_whatever_the_recording_level():
    sc = with_karpenter(busy(job("A", pods=2, gpus=8)))
    full = gk.simulate(sc, stack="gang+karpenter").diagnose("A", at=100)
    lean = gk.simulate(sc, stack="gang+karpenter", record="summary").diagnose("A", at=100)
    assert full == lean


@pytest.mark.parametrize("call, words", [
    (lambda r: r.diagnose(job="nobody"), "no job named 'nobody'; jobs are X, Y, Z"),
    (lambda r: r.diagnose(at=-1), "at: expected a time in seconds >= 0, got -1"),
    (lambda r: r.diagnose(at="soon"), "at: expected a time in seconds >= 0, got 'soon'"),
])
def test_bad_questions_get_one_clear_error(call, words):
    result = gk.simulate(gk.scenarios.three_workers(), stack="gang")
    with pytest.raises(gk.ScenarioError, match=words):
        call(result)


def test_a_hand_made_stack_cannot_be_replayed():
    result = gk.simulate(gk.scenarios.three_workers(), stack=Stack(VolcanoGang(), name="mine"))
    with pytest.raises(gk.ScenarioError, match="built by hand"):
        result.diagnose(at=10)


@pytest.mark.parametrize("stack, time_s, codes", [
    ("kueue+gang+karpenter", 100, ["Running", "WaitingForNodes", "WaitingForNodes", "NotSubmitted"]),
    ("pod", 300, ["PartiallyPlaced", "PartiallyPlaced", "Unschedulable", "Unschedulable"]),
    ("kueue+gang", 300, ["Running", "QuotaExhausted", "QuotaExhausted", "QuotaTooSmall"]),
])
def test_the_diagnosis_explorer_follows_its_controls(stack, time_s, codes):
    from gangkit.lessons.lesson05 import diagnosis_explorer

    explorer = diagnosis_explorer()
    assert repr(explorer) == "Diagnosis explorer (run this cell to use it)"
    explorer.controls["stack"].value = stack
    explorer.controls["time_s"].value = time_s
    assert explorer.table["code"].tolist() == codes
    assert len(explorer.output.outputs) == 2  # the table, then the figure
