"""One owner for each piece of run state.

- Wait buckets are written only by :mod:`gangkit.engine.waits`: a layer that
  sends a job back asks the engine (``Cluster.charge_wait``).
- Volcano's shape of a job lives in Volcano's cache (``JobCache.shapes_of``),
  not on the engine's job, and is derived anew when the job reaches the layer
  again.
- Volcano's line entries are named tuples that order as plain tuples do.
- What Kueue hands the engine on admission is one value, ``JobState.admitted``
  (:class:`gangkit.engine.admitted.Admitted`): counts and node labels by pod
  set name only; labels for single pods (Kueue TAS) keyed by pod index.
- Node suppliers are built fresh for each run from a frozen configuration
  (``KarpenterSetup``, ``AutoscalerSetup``) and never reset themselves.
"""

from __future__ import annotations

import dataclasses
import heapq
import re

import pytest

import gangkit as gk
from gangkit import Node, job, nodes
from gangkit.engine.state import JobState, PodState
from gangkit.engine.waits import charge_wait
from gangkit.kueue.layer import KueueLayer
from gangkit.kueue.objects import (
    GPU,
    ClusterQueue,
    FlavorQuotas,
    KueueSetup,
    LocalQueue,
    Preemption,
    Quota,
    ResourceFlavor,
    ResourceGroup,
    Topology,
)
from gangkit.model.jobs import Job, PodSet
from gangkit.volcano.cache import CreatingJob, JobCache, PendingJob
from gangkit.workloads import scenarios

from paths import REPO

ROOT = REPO
STAGES = {"n1": {"launched": 10.0, "registered": 70.0, "initialized": 160.0}}


def waiting_job(layer: str, enter: float, started_at: float | None = None, waits=None, awaited=None) -> JobState:
    spec = job("j", 1, 1, 60.0)
    return JobState(spec, 0, layer=layer, layer_enter=enter, started_at=started_at, waits=dict(waits or {}),
                    awaited=dict(awaited or {}))


# -- waits ----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name, layer, enter, started_at, waits, awaited, now, expected, enter_after", [
    ("a job waiting in an admission check has its stretch so far counted, and a new one starts now",
     "admission_check", 100.0, None, {}, {}, 160.0, {"admission_check": 60.0}, 160.0),
    ("a second charge adds to what an earlier stretch in the same bucket counted",
     "admission_check", 200.0, None, {"quota": 5.0, "admission_check": 60.0}, {}, 230.0,
     {"quota": 5.0, "admission_check": 90.0}, 230.0),
    ("a job in placement has its stretch split by the nodes it counts on, as when it leaves",
     "placement", 0.0, None, {}, {"n1": 10.0}, 120.0,
     {"placement": 10.0, "node_registration": 60.0, "node_initialization": 50.0}, 120.0),
    ("a job that has started is charged nothing: waits end at the first start",
     "admission_check", 100.0, 50.0, {"quota": 50.0}, {}, 160.0, {"quota": 50.0}, 100.0),
    ("a job in no layer is charged nothing", "", 100.0, None, {}, {}, 160.0, {}, 100.0),
])
def test_charge_wait(name, layer, enter, started_at, waits, awaited, now, expected, enter_after):
    js = waiting_job(layer, enter, started_at, waits, awaited)
    charge_wait(js, now, STAGES)
    assert js.waits == pytest.approx(expected)
    assert js.layer_enter == enter_after
    assert js.layer == layer  # it stays where it is: the engine's eviction moves it


@pytest.mark.parametrize("package", ["kueue", "volcano", "placement", "supply"])
def test_layers_never_write_the_wait_buckets_themselves(package):
    writes = re.compile(r"\.waits\[|\.waits\.(update|setdefault|pop)\(|\.layer_enter\s*=[^=]")
    found = [f"{p.relative_to(ROOT)}:{i}" for p in sorted((ROOT / "gangkit" / package).rglob("*.py"))
             for i, line in enumerate(p.read_text().splitlines(), 1) if writes.search(line)]
    assert found == []


# -- Volcano's line entries -----------------------------------------------------------------------------------
@pytest.mark.parametrize("name, entries", [
    ("higher priority first", [(0, 5, 5), (-3, 9, 9), (-1, 2, 2)]),
    ("within a priority, the job that reached placement first", [(-1, 7, 3), (-1, 2, 8), (-1, 4, 1)]),
])
def test_pending_entries_keep_the_order_of_plain_tuples(name, entries):
    jobs = {i: JobState(job(f"j{i}", 1, 1, 60.0), i) for _, _, i in entries}
    named = [tuple.__new__(PendingJob, (p, s, i, jobs[i])) for p, s, i in entries]
    plain = [(p, s, i, jobs[i]) for p, s, i in entries]
    heapq.heapify(named)
    heapq.heapify(plain)
    popped = [heapq.heappop(named) for _ in entries]
    assert [e.index for e in popped] == [heapq.heappop(plain)[2] for _ in entries]
    assert all(e.job is jobs[e.index] and e.neg_priority == p and e.seq == s
               for e, (p, s, _, _) in zip(popped, sorted(plain)))


def test_a_creating_entry_reads_by_name():
    js = JobState(job("j", 1, 1, 60.0), 4)
    e = tuple.__new__(CreatingJob, (12.5, 3, 4, js))
    assert (e.at, e.seq, e.index, e.job) == (12.5, 3, 4, js)


# -- Volcano's shapes -------------------------------------------------------------------------------------------
def with_pods(js: JobState, count: int) -> JobState:
    ps = js.spec.pod_sets[0]
    js.pods = [PodState(js, k, ps, f"{js.spec.name}-{k}") for k in range(count)]
    return js


@pytest.mark.parametrize("name, again, derived_anew", [
    ("a job that reaches the layer again with other pods gets the shape of its new pods", "add", True),
    ("a job resumed from a snapshot gets the shape of its pods", "drop_shape", True),
    ("a job whose pods are unchanged keeps its shape between look-ups", None, False),
])
def test_a_shape_is_kept_in_volcanos_cache_until_the_job_reaches_it_again(name, again, derived_anew):
    c = JobCache()
    js = with_pods(JobState(Job("g", [PodSet("workers", 4, 1, min_count=1)], 60.0), 0), 4)
    c.add(js)
    first = c.shape(js)
    with_pods(js, 2)  # as partial admission may make fewer pods
    if again is not None:
        getattr(c, again)(js)
    assert (c.shape(js) != first) is derived_anew
    assert not hasattr(js, "shape")


def test_a_job_that_ends_leaves_no_shape_behind():
    c = JobCache()
    js = with_pods(JobState(job("g", 3, 1, 60.0), 0), 3)
    c.add(js)
    c.shape(js)
    c.forget(js)
    assert c.shapes_of == {}


def mixed(**settings) -> gk.Scenario:
    return scenarios.mixed(n_jobs=120, n_nodes=5, load=0.95, seed=4, **settings)


def partial_admission() -> gk.Scenario:
    """Gangs Kueue may admit with fewer pods, preempting by priority: pods are made again with other counts."""
    jobs = [Job(f"j{k}", [PodSet("workers", 2 + k % 3, 2, min_count=1)], run_time=float(50 + 11 * (k % 5)),
                submit_time=float(k), priority=k % 3, queue="team") for k in range(40)]
    cq = ClusterQueue("cq", [ResourceGroup((GPU,), (FlavorQuotas("default", {GPU: Quota(12)}),))],
                      preemption=Preemption(within_cluster_queue="LowerPriority"))
    kueue = KueueSetup([ResourceFlavor("default")], [cq], [LocalQueue("team", "default", "cq")])
    return gk.Scenario(nodes(2, gpus=8), jobs, kueue=kueue)


@pytest.mark.parametrize("name, build, stack", [
    ("a busy stream under Volcano alone, with preemption", lambda: mixed(preemption=True), "gang"),
    ("a busy stream behind Kueue", lambda: mixed(), "kueue+gang"),
    ("gangs admitted with fewer pods and preempted", partial_admission, "kueue+gang"),
])
def test_after_a_run_volcano_keeps_shapes_only_of_jobs_it_holds(monkeypatch, name, build, stack):
    caches = []
    init = JobCache.__init__

    def recording(self, *args, **kwargs):
        init(self, *args, **kwargs)
        caches.append(self)

    monkeypatch.setattr(JobCache, "__init__", recording)
    gk.simulate(build(), stack=stack, engine="general", horizon=300.0)
    assert caches and all(c.shapes_of and set(c.shapes_of) <= set(c.jobs) for c in caches)


# -- extra_selector -------------------------------------------------------------------------------------------
RACK, HOSTNAME = "cloud.provider.com/topology-rack", "kubernetes.io/hostname"


def tas_run(topology: bool, monkeypatch) -> list[tuple[dict, dict | None]]:
    node_list = [Node(f"node-{i}", 4, labels={"pool": "gpu", RACK: "rack-1", HOSTNAME: f"node-{i}"})
                 for i in range(2)]
    jobs = [job("P", 1, 2, 1200.0, queue="team", namespace="team"),
            job("G", 2, 3, 600.0, submit_time=60.0, queue="team", namespace="team")]
    flavor = ResourceFlavor("tas-gpu", (("pool", "gpu"),), "dc" if topology else None)
    cq = ClusterQueue("team", [ResourceGroup((GPU,), (FlavorQuotas("tas-gpu", {GPU: Quota(8)}),))])
    setup = KueueSetup([flavor], [cq], [LocalQueue("team", "team", "team")],
                       topologies=[Topology("dc", (RACK, HOSTNAME))] if topology else [])
    seen = []
    apply = KueueLayer._apply_flavors

    def recording(self, wl):
        apply(self, wl)
        seen.append((wl.job.admitted.node_selector, wl.job.admitted.pod_node_selector))

    monkeypatch.setattr(KueueLayer, "_apply_flavors", recording)
    gk.simulate(gk.Scenario(node_list, jobs, kueue=setup), stack="kueue+gang")
    return seen


@pytest.mark.parametrize("name, topology, per_pod", [
    ("a flavor's labels are keyed by pod set name, and no pod has labels of its own", False,
     [None, None]),
    ("with a topology, each pod also gets its domain's labels, keyed by its index", True,
     [{0: "node-0"}, {0: "node-0", 1: "node-1"}]),
])
def test_extra_selector_has_one_key_type(monkeypatch, name, topology, per_pod):
    seen = tas_run(topology, monkeypatch)
    assert [sel for sel, _ in seen] == [{"workers": {"pool": "gpu"}}] * 2
    got = [None if pods is None else {k: v[HOSTNAME] for k, v in pods.items()} for _, pods in seen]
    assert got == per_pod
    assert all(pods is None or all(v["pool"] == "gpu" for v in pods.values()) for _, pods in seen)


def test_the_engines_job_has_no_field_for_volcanos_shape():
    assert "shape" not in {f.name for f in dataclasses.fields(JobState)}


# -- suppliers built fresh for each run ---------------------------------------------------------------------
import pandas as pd  # noqa: E402

from gangkit.engine.simulation import Simulation  # noqa: E402
from gangkit.placement.kube_scheduler import KubeScheduler  # noqa: E402
from gangkit.stacks import build_stack  # noqa: E402
from gangkit.supply import (  # noqa: E402
    AutoscalerSetup,
    ClusterAutoscaler,
    InstanceType,
    Karpenter,
    KarpenterSetup,
    NodeGroup,
    NodePool,
    Stages,
    lognormal,
)
from gangkit.supply.provisioning_request import ProvisioningRequestSpec  # noqa: E402

G8 = InstanceType("g8", 8, 8.0)
SUPPLY_TYPES = [InstanceType("g2", 2, 2.5), InstanceType("g4", 4, 3.5), G8]
SYSTEM = [Node("system-0", 0)]


def karpenter_setup() -> KarpenterSetup:
    """A static pool, a limited dynamic pool that consolidates, random stages: every part of Karpenter's run state."""
    pools = [NodePool("warm", ["g8"], replicas=1),
             NodePool("gpu", ["g2", "g4", "g8"], limits={"nvidia.com/gpu": 24}, consolidate_after=30.0,
                      consolidation_policy="WhenEmptyOrUnderutilized")]
    return KarpenterSetup(pools, SUPPLY_TYPES, stages=Stages(registered=lognormal(60.0, 0.3)))


def autoscaler_setup() -> AutoscalerSetup:
    return AutoscalerSetup((NodeGroup("g4", InstanceType("g4", 4, 3.5), max_size=4), NodeGroup("g8", G8, max_size=3)),
                           scale_down_unneeded_time=60.0, scale_down_delay_after_add=60.0)


def supplier_jobs() -> list:
    return [job("a", pods=2, gpus=8, run_time=300), job("b", pods=3, gpus=4, run_time=200, submit_time=50.0),
            job("c", gpus=2, run_time=100, submit_time=400.0), job("d", pods=2, gpus=8, run_time=100, submit_time=900.0)]


def karpenter_scenario(setup=None) -> gk.Scenario:
    return gk.Scenario(list(SYSTEM), supplier_jobs(), karpenter=setup or karpenter_setup(),
                       settings=gk.RunSettings(stack="kueue+gang+karpenter", seed=3))


def autoscaler_scenario(setup=None) -> gk.Scenario:
    return gk.Scenario(list(SYSTEM), supplier_jobs(), autoscaler=setup or autoscaler_setup(),
                       settings=gk.RunSettings(stack="kueue+provreq+autoscaler", seed=3))


def provreq_scenario(setup=None) -> gk.Scenario:
    """A ProvisioningRequest applied directly: the autoscaler's own work from time 0 (its ``start``)."""
    request = ProvisioningRequestSpec("capacity", (PodSet("w", 2, 8),), create_time=10.0)
    jobs = [dataclasses.replace(j, consume_provisioning_request="capacity" if j.name == "a" else None)
            for j in supplier_jobs()]
    return gk.Scenario(list(SYSTEM), jobs, autoscaler=setup or autoscaler_setup(),
                       provisioning_requests=[request], settings=gk.RunSettings(stack="pod+autoscaler", seed=3))


SUPPLIED = {"Karpenter": karpenter_scenario, "cluster-autoscaler": autoscaler_scenario,
            "cluster-autoscaler with a ProvisioningRequest applied": provreq_scenario}


def same_run(one, two) -> None:
    pd.testing.assert_frame_equal(one.events, two.events)
    pd.testing.assert_frame_equal(one.jobs, two.jobs)
    assert sorted(one.metrics) == sorted(two.metrics)
    for name in one.metrics:
        pd.testing.assert_frame_equal(one.metrics[name], two.metrics[name])


@pytest.mark.parametrize("name", list(SUPPLIED))
def test_one_configuration_run_twice_in_a_row_gives_the_results_of_fresh_ones(name):
    build = SUPPLIED[name]
    shared = build()
    first, second = gk.simulate(shared), gk.simulate(shared)
    fresh = gk.simulate(build())
    same_run(first, fresh)
    same_run(second, fresh)
    assert len(first.events[first.events.event == "node_launched"]) > 0  # the supplier did work in the run


def _supplier_state(s) -> dict:
    """What a supplier's metrics say (a snapshot of its run state)."""
    return {k: v.copy() for k, v in s.metrics().items()}


@pytest.mark.parametrize("name", list(SUPPLIED))
def test_two_runs_of_one_configuration_side_by_side_keep_apart(name):
    """One run stops half way, a second run of the same configuration runs whole: the second gives a fresh run's
    results, and the first's supplier is as it was (the old reset-on-new-run would have wiped it)."""
    sc = SUPPLIED[name]()
    settings = sc.settings
    halfway = Simulation(sc, build_stack(settings.stack, settings, sc))
    halfway.run(until=450.0)
    supplier = halfway.stack.suppliers[0]
    before = _supplier_state(supplier)
    assert any(len(v) for v in before.values())
    whole = gk.simulate(sc)
    same_run(whole, gk.simulate(SUPPLIED[name]()))
    after = _supplier_state(supplier)
    assert sorted(before) == sorted(after)
    for k in before:
        pd.testing.assert_frame_equal(before[k], after[k])
    assert whole.jobs.equals(gk.simulate(sc).jobs)


@pytest.mark.parametrize("name, build", [
    ("Karpenter", lambda: Karpenter.from_setup(karpenter_setup())),
    ("cluster-autoscaler", lambda: ClusterAutoscaler.from_setup(autoscaler_setup())),
])
def test_a_supplier_serves_one_run_and_refuses_a_second_instead_of_starting_afresh(name, build):
    supplier = build()
    sc = gk.Scenario(list(SYSTEM), supplier_jobs())
    gk.simulate(sc, stack=gk.Stack(_kube(), suppliers=[supplier]))
    with pytest.raises(ValueError, match="has already served a run; build a fresh one for each run"):
        gk.simulate(sc, stack=gk.Stack(_kube(), suppliers=[supplier]))
    fresh = type(supplier).from_setup(supplier)
    assert fresh is not supplier and fresh.setup is supplier.setup
    gk.simulate(sc, stack=gk.Stack(_kube(), suppliers=[fresh]))


def _kube():
    return KubeScheduler()


@pytest.mark.parametrize("name, setup, field_name, value", [
    ("Karpenter's batch window", karpenter_setup, "batch_idle", 5.0),
    ("Karpenter's NodePools", karpenter_setup, "nodepools", ()),
    ("cluster-autoscaler's scan interval", autoscaler_setup, "scan_interval", 1.0),
    ("cluster-autoscaler's node groups", autoscaler_setup, "node_groups", ()),
])
def test_a_suppliers_configuration_is_frozen(name, setup, field_name, value):
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(setup(), field_name, value)


@pytest.mark.parametrize("name, build, kind, supplier", [
    ("a Karpenter built directly has its configuration", lambda: Karpenter([NodePool("p", ["g8"])], [G8]),
     KarpenterSetup, Karpenter),
    ("a cluster-autoscaler built directly has its configuration", lambda: ClusterAutoscaler([NodeGroup("g8", G8)]),
     AutoscalerSetup, ClusterAutoscaler),
    ("the +karpenter stacks' default is a configuration", lambda: gk.supply.default_karpenter(), KarpenterSetup,
     Karpenter),
    ("the +autoscaler stacks' default is a configuration", lambda: gk.supply.default_autoscaler(), AutoscalerSetup,
     ClusterAutoscaler),
])
def test_configurations_and_run_objects(name, build, kind, supplier):
    made = build()
    setup = made if isinstance(made, kind) else made.setup
    assert isinstance(setup, kind)
    run = supplier.from_setup(made)
    assert isinstance(run, gk.NodeSupplier) and run.setup is setup and run is not supplier.from_setup(setup)


@pytest.mark.parametrize("cls", [Karpenter, ClusterAutoscaler], ids=["Karpenter", "ClusterAutoscaler"])
def test_no_supplier_class_keeps_a_reset_path(cls):
    """A supplier's run state is made once, in ``from_setup``; nothing wipes it when another run shows up."""
    import inspect

    source = inspect.getsource(inspect.getmodule(cls))
    assert not re.search(r"def _?reset\b|\._?reset\(|start afresh|new run with the same object", source)
    assert not any(re.fullmatch(r"_?reset\w*", name) for name in dir(cls))
    assert isinstance(inspect.getattr_static(cls, "from_setup"), classmethod)


# -- the admission handed over -------------------------------------------------------------------------------
from gangkit.engine.admitted import Admitted  # noqa: E402


@pytest.mark.parametrize("name, admitted, pod_set, pod_index, count, labels", [
    ("a pod set named in the counts gets its count, partial admission's fewer pods",
     Admitted({"workers": 2}, {}), PodSet("workers", 4, 1), 0, 2, None),
    ("a pod set not named keeps its own count", Admitted({"workers": 2}, {}), PodSet("launcher", 1, 0), 0, 1, None),
    ("a flavor's labels go to every pod of the pod set",
     Admitted({"workers": 4}, {"workers": {"pool": "gpu"}}), PodSet("workers", 4, 1), 3, 4, {"pool": "gpu"}),
    ("a pod's own labels (TAS) win over its pod set's",
     Admitted({"workers": 2}, {"workers": {"pool": "gpu"}}, {1: {"pool": "gpu", HOSTNAME: "node-1"}}),
     PodSet("workers", 2, 1), 1, 2, {"pool": "gpu", HOSTNAME: "node-1"}),
    ("a pod without labels of its own under TAS gets its pod set's",
     Admitted({"workers": 2}, {"workers": {"pool": "gpu"}}, {1: {HOSTNAME: "node-1"}}),
     PodSet("workers", 2, 1), 0, 2, {"pool": "gpu"}),
])
def test_the_admission_handed_to_the_engine_reads_by_name(name, admitted, pod_set, pod_index, count, labels):
    assert admitted.count(pod_set) == count
    pod = PodState(waiting_job("placement", 0.0), pod_index, pod_set, f"j-{pod_index}")
    assert admitted.labels(pod) == labels
    with pytest.raises(dataclasses.FrozenInstanceError):
        admitted.counts = {}


def test_partial_admission_hands_over_fewer_pods(monkeypatch):
    """A gang Kueue admits with fewer pods (partial admission) is handed over with that count, by pod set name."""
    seen = []
    apply = KueueLayer._apply_flavors

    def recording(self, wl):
        apply(self, wl)
        seen.append((wl.job.admitted, wl.job.spec.pod_sets[0]))

    monkeypatch.setattr(KueueLayer, "_apply_flavors", recording)
    gk.simulate(partial_admission(), stack="kueue+gang")
    assert seen and all(isinstance(a, Admitted) and set(a.counts) == {"workers"} for a, _ in seen)
    assert any(a.count(ps) < ps.count for a, ps in seen)
    assert all(ps.min_count <= a.count(ps) <= ps.count for a, ps in seen)


@pytest.mark.parametrize("field_name", ["extra_selector", "pod_extra_selector", "admitted_counts"])
def test_the_engines_job_has_no_loose_admission_fields(field_name):
    assert field_name not in {f.name for f in dataclasses.fields(JobState)}
    assert "admitted" in {f.name for f in dataclasses.fields(JobState)}
