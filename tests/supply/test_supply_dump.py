"""Writing a scenario for its stack: the node suppliers, the gang's objects and the pods' schedulerName.

``dump_manifests`` writes what a run of the scenario uses, so that the file
runs the same and ``gangkit check`` finds nothing a real cluster would do
differently: the Karpenter NodePools and gangkit's Karpenter and
ClusterAutoscaler kinds (the scenario's own, or the stack's default), the
gang in the form the stack's placement layer reads, and the
``schedulerName`` of the stack's gang scheduler. Every object written is
valid for the real schemas (../shared/schemas).
"""

from __future__ import annotations

import collections
import dataclasses
import warnings

import pytest
import yaml

import gangkit as gk
from gangkit.lessons import lesson08
from gangkit.manifests import dump_manifests, load_manifests
from gangkit.model.errors import ScenarioError
from gangkit.model.jobs import job
from gangkit.model.nodes import nodes
from gangkit.model.scenario import Scenario
from gangkit.placement.manifests import gang_form, scheduler_name
from gangkit.supply import ClusterAutoscaler, InstanceType, Karpenter, NodeGroup, NodePool, Stages, uniform

from conftest import case

try:
    from schema_util import requires_schemas, validate_manifest
except ImportError:  # tests/ imported as a package
    from tests.schema_util import requires_schemas, validate_manifest

A100 = InstanceType("p4d", 8, 32.77, cpu=96.0, memory=1152 * 2**30)


def read_back(text: str) -> Scenario:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load_manifests(text)


def gangs(stack: str, **job_fields) -> Scenario:
    """Two gangs of 4 one-GPU workers on 6 GPUs: the deadlock story, for ``stack``."""
    jobs = [job(name, pods=4, gpus=1, run_time=600, min_member=4, **job_fields) for name in ("a", "b")]
    return Scenario(nodes(3, gpus=2), jobs, name="two-gangs").with_settings(stack=stack)


def karpenter_scenario(k: Karpenter | None, stack: str = "gang+karpenter") -> Scenario:
    return Scenario(nodes(1, gpus=8), [job("a", pods=4, gpus=8, run_time=900, min_member=4)],
                    karpenter=k).with_settings(stack=stack)


def autoscaler_scenario(ca: ClusterAutoscaler | None) -> Scenario:
    return Scenario(nodes(1, gpus=8), [job("a", pods=2, gpus=8, run_time=900)],
                    autoscaler=ca).with_settings(stack="kueue+provreq+autoscaler")


def pools(k: Karpenter) -> list[tuple]:
    return [(p.name, tuple(p.instance_types), p.limits, p.consolidation_policy, p.consolidate_after, p.budget,
             dict(p.labels), p.weight) for p in sorted(k.nodepools, key=lambda p: p.name)]


def groups(ca: ClusterAutoscaler) -> list[tuple]:
    return [(g.name, g.instance_type, g.min_size, g.max_size, dict(g.labels), g.stockout) for g in ca.node_groups]


# --- the suppliers round-trip -------------------------------------------------------------------------------

KARPENTERS = [
    case("the stack's default (no NodePools of the scenario's own)", None),
    case("two NodePools, weights, limits, labels, budgets, Never",
         Karpenter([NodePool("a100", ["p4d"], {"nvidia.com/gpu": 24}, "WhenEmpty", 300.0, 2,
                             {"nvidia.com/gpu.product": "A100"}, weight=10),
                    NodePool("spare", ["p4d", "gpu-1"], {}, "WhenEmptyOrUnderutilized", None, "20%")],
                   [A100, InstanceType("gpu-1", 1, 1.5)], batch_idle=2.0, batch_max=20.0,
                   stages=Stages(45.0, 120.0, 30.0))),
    case("fractional batching seconds (gangkit's own kind)", Karpenter([NodePool("p", ["p4d"])], [A100], batch_idle=0.25)),
    # the gang needs 3 new p4d (96 cores, 1152Gi each): each row's limits allow them, so the gang starts
    case("a NodePool limit on CPU, written as a quantity of cores",
         Karpenter([NodePool("p", ["p4d"], {"cpu": 288})], [A100])),
    case("a NodePool limit on memory, written in the largest binary unit that divides it",
         Karpenter([NodePool("p", ["p4d"], {"memory": 3456 * 2**30})], [A100])),
    case("limits on GPUs, CPU (in millicores) and memory together",
         Karpenter([NodePool("p", ["p4d"], {"nvidia.com/gpu": 24, "cpu": 288.5, "memory": 4 * 2**40})], [A100])),
]


@pytest.mark.parametrize("k", KARPENTERS)
def test_a_karpenter_is_written_and_read_back_the_same(k):
    sc = karpenter_scenario(k)
    back = read_back(dump_manifests(sc))
    used = k or gk.supply.default_karpenter(sc)
    assert pools(back.karpenter) == pools(used)
    assert back.karpenter.instance_types == used.instance_types
    assert (back.karpenter.batch_idle, back.karpenter.batch_max, back.karpenter.stages) == \
        (used.batch_idle, used.batch_max, used.stages)
    assert gk.simulate(back).summary() == gk.simulate(sc).summary()


AUTOSCALERS = [
    case("the stack's default", None),
    case("every flag the kind reads, labels, a stockout group",
         ClusterAutoscaler([NodeGroup("a100", A100, 0, 4, {"pool": "a100"}),
                            NodeGroup("gpu-8", InstanceType("gpu-8", 8, 8.0), 1, 2, stockout=True)],
                           scan_interval=15.0, expander="random", max_node_provision_time=600.0,
                           initial_backoff=120.0, max_backoff=900.0, scale_down_unneeded_time=300.0,
                           scale_down_delay_after_add=120.0, utilization_threshold=0.4,
                           provisioning_request_expiry=1800.0, stages=Stages(30.0, 60.0))),
]


@pytest.mark.parametrize("ca", AUTOSCALERS)
def test_a_cluster_autoscaler_is_written_and_read_back_the_same(ca):
    sc = autoscaler_scenario(ca)
    back = read_back(dump_manifests(sc))
    used = ca or gk.supply.default_autoscaler(sc)
    assert groups(back.autoscaler) == groups(used)
    flags = ("scan_interval", "expander", "max_node_provision_time", "initial_backoff", "max_backoff",
             "scale_down_unneeded_time", "scale_down_delay_after_add", "utilization_threshold",
             "provisioning_request_expiry", "stages")
    assert [getattr(back.autoscaler, f) for f in flags] == [getattr(used, f) for f in flags]
    assert gk.simulate(back).summary() == gk.simulate(sc).summary()


def test_a_stack_without_a_supplier_writes_none():
    kinds = [d["kind"] for d in yaml.safe_load_all(dump_manifests(karpenter_scenario(None, stack="gang")))]
    assert not {"NodePool", "Karpenter", "ClusterAutoscaler"} & set(kinds)


UNWRITABLE = [
    case("a random stage", karpenter_scenario(Karpenter([NodePool("p", ["p4d"])], [A100],
                                                        stages=Stages(registered=uniform(30, 90)))),
         "Karpenter karpenter: stages.registered: a duration drawn at random cannot be written as YAML"),
    case("a cluster-autoscaler setting its kind does not read",
         autoscaler_scenario(ClusterAutoscaler([NodeGroup("g", A100)], scale_down=False)),
         "ClusterAutoscaler cluster-autoscaler: scale_down: the ClusterAutoscaler kind does not read this setting"),
    case("a scale-down parallelism the kind does not read",
         autoscaler_scenario(ClusterAutoscaler([NodeGroup("g", A100)], max_drain_parallelism=2)),
         "ClusterAutoscaler cluster-autoscaler: max_drain_parallelism: the ClusterAutoscaler kind does not read this "
         "setting; expected its default 1, got 2"),
    case("a max-node-startup-time the kind does not read",
         autoscaler_scenario(ClusterAutoscaler([NodeGroup("g", A100)], max_node_startup_time=300.0)),
         "ClusterAutoscaler cluster-autoscaler: max_node_startup_time: the ClusterAutoscaler kind does not read this "
         "setting; expected its default 900.0, got 300.0"),
    case("a consolidateAfter of a fraction of a second (the CRD takes whole s, m, h)",
         karpenter_scenario(Karpenter([NodePool("p", ["p4d"], consolidate_after=0.5)], [A100])),
         r"NodePool p: consolidate_after: the NodePool CRD takes whole seconds \(\^\(\(\[0-9\]\+"),
    case("a memory limit of a fraction of a byte (the reader would round it up)",
         karpenter_scenario(Karpenter([NodePool("p", ["p4d"], {"memory": 1.5 * 2**40 + 0.5})], [A100])),
         r"NodePool p: limits.memory: expected a whole number of bytes"),
    case("an infinite cpu limit (no limit is written by leaving it out)",
         karpenter_scenario(Karpenter([NodePool("p", ["p4d"], {"cpu": float("inf")})], [A100])),
         "NodePool p: limits.cpu: expected a finite amount"),
]


@pytest.mark.parametrize("scenario, message", UNWRITABLE)
def test_what_the_supplier_kinds_cannot_say_is_one_error_naming_it(scenario, message):
    with pytest.raises(ScenarioError, match=message):
        dump_manifests(scenario)


# --- the gang in the stack's own form, and the pods' schedulerName ---------------------------------------------

FORMS = [
    case("pod: a Volcano PodGroup, the default scheduler", "pod", None, None, "PodGroup"),
    case("Volcano: its PodGroup, schedulerName volcano", "kueue+gang", None, "volcano", "PodGroup"),
    case("coscheduling: a scheduler-plugins PodGroup", "coscheduling", "coscheduling", "scheduler-plugins-scheduler",
         "PodGroup"),
    case("YuniKorn: task groups on the pod template", "yunikorn", "yunikorn", None, None),
    case("kube-gang: a Workload and the pod's workloadRef", "kueue+kube-gang", "kube-gang", None, "Workload"),
]


@pytest.mark.parametrize("stack, form, scheduler, gang_kind", FORMS)
def test_a_gang_is_written_in_the_form_its_stack_reads(stack, form, scheduler, gang_kind):
    sc = gangs(stack)
    assert (gang_form(sc.jobs[0], stack), scheduler_name(stack)) == (form, scheduler)
    docs = list(yaml.safe_load_all(dump_manifests(sc)))
    batch = [d for d in docs if d["kind"] == "Job"]
    assert [d["spec"]["template"]["spec"].get("schedulerName") for d in batch] == [scheduler] * 2
    assert collections.Counter(d["kind"] for d in docs if d["kind"] in ("PodGroup", "Workload")) == \
        (collections.Counter({gang_kind: 2}) if gang_kind else collections.Counter())
    back = read_back(dump_manifests(sc))
    assert [j.min_member for j in back.jobs] == [4, 4]
    assert gk.simulate(back).summary() == gk.simulate(sc).summary()
    assert gk.check_manifests(dump_manifests(sc)) == [] or stack == "pod"


def test_settings_only_one_layer_has_keep_that_layers_form_under_any_stack():
    sc = gangs("kube-gang", schedule_timeout=60.0)
    assert gang_form(sc.jobs[0], "kube-gang") == "coscheduling"
    assert [j.schedule_timeout for j in read_back(dump_manifests(sc)).jobs] == [60.0, 60.0]


def test_a_volcano_queue_keeps_the_volcano_podgroup_under_another_stack():
    j = dataclasses.replace(job("a", pods=4, min_member=4), volcano_queue="research")
    assert gang_form(j, "coscheduling") is None


DESIGNS = [case(name, design) for name, design in
           [("reference", lesson08.REFERENCE), ("naive", lesson08.NAIVE), *lesson08.ALTERNATIVES.items()]]


@pytest.mark.parametrize("design", DESIGNS)
def test_lesson_08s_designs_check_clean_unless_their_pods_skip_the_gang(design):
    """A design that places pod by pod is told its gangs are ignored; every other design checks clean."""
    findings = gk.check_manifests(dump_manifests(design.scenario()))
    codes = {f.code for f in findings}
    assert codes == ({"gang-scheduler-mismatch"} if design.placement == "pod" else set())


# --- the real schemas -----------------------------------------------------------------------------------------

SCHEMA_SCENARIOS = [case(f"stack {stack}", gangs(stack)) for stack in
                    ("gang", "coscheduling", "yunikorn", "kube-gang")] + [
    case(f"Karpenter: {p.id}", karpenter_scenario(p.values[0])) for p in KARPENTERS]


@requires_schemas
@pytest.mark.parametrize("scenario", SCHEMA_SCENARIOS)
def test_every_object_written_for_a_stack_is_valid_for_the_real_schemas(scenario):
    checked = [validate_manifest(d) for d in yaml.safe_load_all(dump_manifests(scenario))]
    assert any(checked)
