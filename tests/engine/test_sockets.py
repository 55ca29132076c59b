"""The two sockets later layers plug into: an admission layer and a node supplier.

A dummy quota layer (at most N GPUs admitted at once, first come first
served) and a dummy node supplier (one 4-GPU node per unschedulable pod,
usable after fixed stages) must show their reasons and timestamps in the
result: that is the contract the Kueue and Karpenter layers build on.
"""

from __future__ import annotations

import pytest

import gangkit as gk
from gangkit import Node, Reason, Stack, job, nodes
from gangkit.placement.kube_scheduler import KubeScheduler
from gangkit.volcano.scheduler import VolcanoGang


class DummyQuota(gk.AdmissionLayer):
    """Admit jobs in arrival order while their GPUs fit under ``limit``."""

    name = "quota"

    def __init__(self, limit: int):
        self.limit, self.used, self.queue = limit, 0, []

    def submit(self, js, now):
        self.queue.append(js)

    def cycle(self, sim, now):
        admitted = []
        while self.queue and self.used + self.queue[0].spec.gpus <= self.limit:
            js = self.queue.pop(0)
            self.used += js.spec.gpus
            admitted.append(js)
        return admitted

    def release(self, js, now):
        self.used -= js.spec.gpus

    def pending_reason(self, js):
        return Reason("quota", "QuotaExhausted", f"{js.spec.gpus} GPUs requested, {self.limit - self.used} free", {})


class DummySupplier(gk.NodeSupplier):
    """Launch one 4-GPU node per unschedulable pod: registered after 30 s, initialized after 90 s."""

    name = "supplier"

    def __init__(self, max_nodes: int = 4):
        self.max_nodes, self.launched, self.asked = max_nodes, 0, set()

    def can_ever_fit(self, gpus, cpu, memory, selector):
        return gpus <= 4

    def observe(self, sim, now, unschedulable):
        for pod in unschedulable:
            if pod.name in self.asked or self.launched >= self.max_nodes:
                continue
            self.asked.add(pod.name)
            sim.launch_node(Node(f"new-{self.launched}", 4), {"launched": now, "registered": now + 30, "initialized": now + 90}, supplier=self.name)
            self.launched += 1


def test_all_layer_kinds_satisfy_their_protocols():
    assert isinstance(DummyQuota(1), gk.AdmissionLayer)
    assert isinstance(DummySupplier(), gk.NodeSupplier)
    assert isinstance(KubeScheduler(), gk.PlacementLayer)
    assert isinstance(VolcanoGang(), gk.PlacementLayer)


@pytest.mark.parametrize("placement", [KubeScheduler(), VolcanoGang(period=0.0)], ids=["pod", "gang"])
def test_a_quota_layer_delays_admission_and_its_wait_has_its_own_bucket(placement):
    sc = gk.Scenario(nodes(2, gpus=4), [job("a", gpus=4, run_time=100), job("b", gpus=4, run_time=100)])
    result = gk.simulate(sc, stack=Stack(placement, admission=[DummyQuota(limit=4)], name="quota+test"))
    jobs = result.jobs.set_index("job")
    assert jobs.loc["b", "start_s"] == 100  # room on the nodes, but no quota until a finishes
    assert jobs.loc["b", "wait_quota_s"] == 100 and jobs.loc["b", "wait_placement_s"] == 0
    assert (result.jobs.wait_unattributed_s == 0).all()
    admitted = result.events[result.events.event == "admitted"]
    assert list(zip(admitted.job, admitted.time_s, admitted.layer)) == [("a", 0.0, "quota"), ("b", 100.0, "quota")]


def test_a_job_still_in_the_quota_layer_at_the_end_gets_its_reason():
    sc = gk.Scenario(nodes(2, gpus=4), [job("a", gpus=4, run_time=100), job("b", gpus=4, run_time=100)])
    result = gk.simulate(sc, stack=Stack(KubeScheduler(), admission=[DummyQuota(limit=4)]), horizon=50)
    row = result.jobs.set_index("job").loc["b"]
    assert row["state"] == "WaitingAtEnd" and row["wait_quota_s"] == 50
    assert row["reason"] == "[quota] QuotaExhausted: 4 GPUs requested, 0 free"


@pytest.mark.parametrize("placement", [KubeScheduler(), VolcanoGang(period=0.0)], ids=["pod", "gang"])
def test_a_node_supplier_adds_nodes_with_stage_timestamps(placement):
    sc = gk.Scenario(nodes(1, gpus=4), [job("a", gpus=4, run_time=1000), job("b", gpus=4, run_time=100, submit_time=10)])
    result = gk.simulate(sc, stack=Stack(placement, suppliers=[DummySupplier()]))
    jobs = result.jobs.set_index("job")
    assert jobs.loc["b", "start_s"] == 100  # launched at 10, initialized at 100
    ev = result.events[result.events.node == "new-0"]
    assert list(zip(ev.event, ev.time_s)) == [
        ("node_launched", 10.0), ("node_registered", 40.0), ("node_initialized", 100.0), ("node_ready", 100.0), ("pod_bound", 100.0)]
    s = result.summary()
    assert s["not_ready_gpu_seconds"] == 4 * 90
    assert s["useful_gpu_seconds"] + s["held_idle_gpu_seconds"] + s["free_gpu_seconds"] + s["not_ready_gpu_seconds"] == s["capacity_gpu_seconds"]


def test_a_supplier_that_could_hold_a_pod_prevents_its_rejection():
    sc = gk.Scenario(nodes(1, gpus=2), [job("needs-4", gpus=4, run_time=10)])
    assert gk.simulate(sc, stack="pod").jobs.state.tolist() == ["Rejected"]
    result = gk.simulate(sc, stack=Stack(KubeScheduler(), suppliers=[DummySupplier()]))
    assert result.jobs.state.tolist() == ["Finished"] and result.jobs.start_s.tolist() == [90.0]


def test_stack_names_that_are_not_built_are_refused_clearly():
    with pytest.raises(gk.ScenarioError, match="stack 'yunikorn\\+autoscaler' combines layers gangkit has .* not in this combination"):
        gk.simulate("three-workers", stack="yunikorn+autoscaler")
    with pytest.raises(gk.ScenarioError, match="unknown stack 'volcano'"):
        gk.simulate("three-workers", stack="volcano")


class Bare:
    """A placement layer written without the protocol: no idle(), metrics(), period, ... of its own."""

    name = "placement"

    def enqueue(self, jobs, now): ...
    def requeue(self, job, now): ...
    def cycle(self, sim, now): ...
    def forget(self, job): ...
    def unschedulable(self): return []
    def pending_reason(self, sim, job): return None


class HalfQuota(gk.AdmissionLayer):
    """Subclasses the protocol but leaves out a required method."""

    name = "quota"

    def submit(self, js, now): ...
    def cycle(self, sim, now): return []
    def release(self, js, now): ...


def test_a_layer_missing_a_socket_member_is_refused_by_name():
    with pytest.raises(gk.ScenarioError, match=r"Stack custom: placement: Bare has no period, pending_metrics, idle, "
                                               r"metrics: a PlacementLayer needs them "
                                               r"\(subclass gangkit.PlacementLayer"):
        Stack(Bare())
    with pytest.raises(TypeError, match="abstract method pending_reason"):
        HalfQuota()


def test_a_subclass_gets_the_optional_members_defaults():
    q = DummyQuota(1)
    assert (q.idle(), q.metrics()) == (False, {})
    assert list(DummySupplier().awaited_nodes()) == []
