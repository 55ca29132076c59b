"""Writing Kueue's setup back as manifests (gangkit.kueue.dump, called by dump_manifests): tables of named cases.

A scenario with a Kueue setup, written with ``dump_manifests`` and read back
with ``load_manifests``, must have the same Kueue setup and run the same under
a Kueue stack; every Kueue object written must be valid for Kueue's real CRD
schemas (../shared/schemas); and a setup the manifests cannot say, or that
Kueue would refuse, is one error naming the object and the field.
"""

from __future__ import annotations

import dataclasses
import io
import warnings

import pytest
import yaml

from gangkit.kueue.dump import cluster_queue_manifest, configuration_manifest, flavor_manifest, kueue_manifests
from gangkit.kueue.objects import (
    GPU,
    ClusterQueue,
    Cohort,
    FlavorFungibility,
    FlavorQuotas,
    KueueConfig,
    KueueSetup,
    LocalQueue,
    Preemption,
    Quota,
    ResourceFlavor,
    ResourceGroup,
)
from gangkit.kueue.provisioning import AdmissionCheck, ProvisioningRequestConfig
from gangkit.lessons import lesson03, lesson06
from gangkit.manifests import GangkitInputWarning, dump_manifests, load_file, load_manifests
from gangkit.model.errors import ScenarioError
from gangkit.model.jobs import Job, PodSet, job
from gangkit.model.nodes import Node, nodes
from gangkit.model.scenario import Scenario
from gangkit.simulate import simulate

from conftest import case

try:
    from schema_util import requires_schemas, validate_manifest
except ImportError:  # tests/ imported as a package
    from tests.schema_util import requires_schemas, validate_manifest
from paths import REPO

ROOT = REPO
KUEUE_EXAMPLES = sorted(p for p in (ROOT / "examples").glob("*.yaml") if "kind: ClusterQueue" in p.read_text())
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
DEFAULT = KueueConfig()


# --- building blocks ------------------------------------------------------------------------------------------


def quiet(source) -> Scenario:
    """Load and fail on any gangkit warning: what gangkit writes must read back silently."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", GangkitInputWarning)
        sc = load_manifests(source)
    assert sc.warnings == []
    return sc


def effective(setup: KueueSetup) -> KueueSetup:
    """The setup with the settings that take no effect at their defaults: the pods-ready settings while
    waitForPodsReady is off, the preemption strategies while fair sharing is off."""
    c = setup.config
    if not c.wait_for_pods_ready:
        c = dataclasses.replace(c, pods_ready_timeout=DEFAULT.pods_ready_timeout, block_admission=DEFAULT.block_admission,
                                backoff_base=DEFAULT.backoff_base, backoff_max=DEFAULT.backoff_max,
                                backoff_limit_count=DEFAULT.backoff_limit_count,
                                requeuing_timestamp=DEFAULT.requeuing_timestamp)
    if not c.fair_sharing:
        c = dataclasses.replace(c, fair_sharing_strategies=DEFAULT.fair_sharing_strategies)
    return dataclasses.replace(setup, config=c)


def tables(result) -> dict[str, str]:
    """Everything a run produced, as text: its figures, tables and metric tables."""
    out = {"figures": repr(sorted(result.figures.items()))}
    for name in ("jobs", "pods", "events", "timeline", "holders", "nodes"):
        buf = io.StringIO()
        getattr(result, name).to_csv(buf, index=False)
        out[name] = buf.getvalue()
    for name, frame in result.metrics.items():
        buf = io.StringIO()
        frame.to_csv(buf, index=False)
        out[f"metric {name}"] = buf.getvalue()
    return out


def without_labels(j: Job) -> Job:
    return dataclasses.replace(j, labels={})


def gpu_group(*flavors: tuple[str, Quota]) -> list[ResourceGroup]:
    return [ResourceGroup((GPU,), tuple(FlavorQuotas(f, {GPU: q}) for f, q in flavors))]


def queue_scenario(setup: KueueSetup, *jobs: Job, node_list=None) -> Scenario:
    """A scenario around a hand-made setup; by default one 1-GPU job per LocalQueue."""
    if not jobs:
        jobs = tuple(job(f"j-{q.namespace}-{q.name}", gpus=1, run_time=600, queue=q.name, namespace=q.namespace)
                     for q in setup.local_queues)
    node_list = node_list or [Node("a100-0", 8, cpu=96.0, memory=768 * 2**30, labels={"gpu": "a100"}),
                              Node("h100-0", 8, cpu=96.0, memory=768 * 2**30, labels={"gpu": "h100"})]
    return Scenario(node_list, list(jobs), kueue=setup, name="hand-made")


TWO_FLAVORS = (ResourceFlavor("a100", {"gpu": "a100"}), ResourceFlavor("h100", {"gpu": "h100"}))


def two_queues(a: ClusterQueue, b: ClusterQueue | None = None, cohorts=(), config=DEFAULT, checks=(),
               flavors=TWO_FLAVORS) -> KueueSetup:
    queues = [a] + ([b] if b is not None else [])
    return KueueSetup(list(flavors), queues, [LocalQueue(q.name, q.name, q.name) for q in queues], list(cohorts),
                      config, list(checks))


# --- every built-in scenario with a Kueue setup --------------------------------------------------------------

# (scenario, stacks it is simulated under; None: the stack of its own Simulation)
BUILT_IN = [
    case("lesson03 two_teams", lesson03.two_teams(), ["kueue+gang", "kueue+pod"]),
    case("lesson03 two_teams, limits and reclaim",
         lesson03.two_teams(a_borrowing_limit=4, b_lending_limit=4, reclaim="Any"), ["kueue+gang"]),
    case("lesson03 two_teams, a 10-minute pods-ready timeout",
         lesson03.two_teams(config=KueueConfig(pods_ready_timeout=600.0)), ["kueue+gang"]),
    case("lesson03 fifo_story StrictFIFO", lesson03.fifo_story("StrictFIFO"), ["kueue+gang"]),
    case("lesson03 fifo_story BestEffortFIFO", lesson03.fifo_story("BestEffortFIFO"), ["kueue+gang"]),
    case("lesson03 priority_story LowerPriority", lesson03.priority_story("LowerPriority"), ["kueue+gang"]),
    case("lesson03 priority_story LowerOrNewerEqualPriority", lesson03.priority_story("LowerOrNewerEqualPriority"),
         ["kueue+gang"]),
    case("lesson03 fragmented_story, waitForPodsReady off", lesson03.fragmented_story(), ["kueue+pod", "kueue+gang"]),
    case("lesson03 fragmented_story with S, pods-ready on",
         lesson03.fragmented_story(KueueConfig(pods_ready_timeout=300.0), with_s=True), ["kueue+pod"]),
    case("lesson03 quota_for three-workers", lesson03.quota_for("three-workers", 4), ["kueue+pod", "kueue+gang"]),
    case("lesson03 lending_story, lendingLimit 4", lesson03.lending_story(4), ["kueue+gang"]),
    case("lesson03 lending_story, no lendingLimit", lesson03.lending_story(None), ["kueue+gang"]),
    case("lesson03 reclaim_puzzle", lesson03.reclaim_puzzle(), ["kueue+gang"]),
    case("lesson03 starvation_story StrictFIFO", lesson03.starvation_story("StrictFIFO"), ["kueue+gang"]),
    case("lesson03 starvation_story BestEffortFIFO", lesson03.starvation_story("BestEffortFIFO"), ["kueue+gang"]),
    case("lesson03 fair_story, fair sharing off", lesson03.fair_story(False), ["kueue+gang"]),
    case("lesson03 fair_story, fair sharing on", lesson03.fair_story(True), ["kueue+gang"]),
    case("lesson06 from_zero", lesson06.from_zero(), ["kueue+gang+karpenter"]),
    case("lesson06 from_zero, NodePool limit 16", lesson06.from_zero(limit=16), ["kueue+gang+karpenter"]),
    *[case(f"examples/{p.name}", load_file(p), [None]) for p in KUEUE_EXAMPLES],
]


@pytest.mark.parametrize("scenario, stacks", BUILT_IN)
def test_a_built_in_kueue_setup_reads_back_the_same(scenario, stacks):
    again = quiet(dump_manifests(scenario))
    assert effective(again.kueue) == effective(scenario.kueue)
    assert [without_labels(j) for j in again.jobs] == [without_labels(j) for j in scenario.jobs]
    assert all(j.labels[QUEUE_LABEL] == j.queue for j in again.jobs)


@pytest.mark.parametrize("scenario, stacks", BUILT_IN)
def test_a_built_in_kueue_scenario_runs_the_same_after_a_round_trip(scenario, stacks):
    # dump_manifests writes no node suppliers (Karpenter, cluster-autoscaler): they are carried over by hand
    again = dataclasses.replace(quiet(dump_manifests(scenario)), karpenter=scenario.karpenter,
                                autoscaler=scenario.autoscaler)
    for stack in stacks:
        assert tables(simulate(again, stack=stack)) == tables(simulate(scenario, stack=stack)), stack


# --- hand-made setups, one field at a time ----------------------------------------------------------------

TEAM_QUOTA = Quota(8, borrowing_limit=4, lending_limit=2)
CPU_MEMORY_GPU = ResourceGroup(("cpu", "memory", GPU), (  # CPU in millicores, memory in bytes
    FlavorQuotas("a100", {"cpu": Quota(95_500), "memory": Quota(768 * 2**30), GPU: Quota(8)}),
    FlavorQuotas("h100", {"cpu": Quota(1_500), "memory": Quota(10**9 + 1), GPU: Quota(4)}),
))

HAND_MADE = [
    case("borrowing and lending limits in a cohort",
         two_queues(ClusterQueue("team-a", gpu_group(("a100", TEAM_QUOTA)), cohort="research"),
                    ClusterQueue("team-b", gpu_group(("a100", Quota(8, lending_limit=0))), cohort="research"))),
    case("two flavors with node labels, cpu in millicores, memory in bytes",
         two_queues(ClusterQueue("team-a", [CPU_MEMORY_GPU]))),
    case("two resource groups",
         two_queues(ClusterQueue("team-a", [ResourceGroup(("cpu", "memory"), (FlavorQuotas("a100", {
             "cpu": Quota(96_000), "memory": Quota(2**40)}),)), *gpu_group(("h100", Quota(8)))]))),
    case("every preemption policy",
         two_queues(ClusterQueue("team-a", gpu_group(("a100", Quota(8))), cohort="research",
                                 preemption=Preemption("LowerOrNewerEqualPriority", "LowerPriority", "LowerPriority", 100)),
                    ClusterQueue("team-b", gpu_group(("a100", Quota(8))), cohort="research",
                                 preemption=Preemption("LowerPriority", "Any", "Never", None)))),
    case("a borrowWithinCohort threshold alone",
         two_queues(ClusterQueue("team-a", gpu_group(("a100", Quota(8))), cohort="research",
                                 preemption=Preemption(reclaim_within_cohort="Any", max_priority_threshold=-5)))),
    case("StrictFIFO", two_queues(ClusterQueue("team-a", gpu_group(("a100", Quota(8))), queueing_strategy="StrictFIFO"))),
    case("flavor fungibility with a preference",
         two_queues(ClusterQueue("team-a", gpu_group(("a100", Quota(4)), ("h100", Quota(4))), cohort="research",
                                 flavor_fungibility=FlavorFungibility("TryNextFlavor", "TryNextFlavor",
                                                                      "PreemptionOverBorrowing")))),
    case("flavor fungibility: stop at a flavor that needs preemption",
         two_queues(ClusterQueue("team-a", gpu_group(("a100", Quota(4)), ("h100", Quota(4))),
                                 flavor_fungibility=FlavorFungibility("TryNextFlavor", "MayStopSearch")))),
    case("a cohort with a parent, quota of its own and weights",
         two_queues(ClusterQueue("team-a", gpu_group(("a100", Quota(4, borrowing_limit=8))), cohort="research",
                                 fair_sharing_weight=0.5),
                    ClusterQueue("team-b", gpu_group(("a100", Quota(4))), cohort="research", fair_sharing_weight=0.0),
                    cohorts=[Cohort("org", None, gpu_group(("a100", Quota(8)))),
                             Cohort("research", "org", gpu_group(("a100", Quota(2, lending_limit=1))),
                                    fair_sharing_weight=2.0)],
                    config=KueueConfig(fair_sharing=True, fair_sharing_strategies=("LessThanInitialShare",)))),
    case("a fair-sharing weight that is not a round decimal",
         two_queues(ClusterQueue("team-a", gpu_group(("a100", Quota(8))), cohort="research", fair_sharing_weight=1 / 3),
                    config=KueueConfig(fair_sharing=True))),
    case("a 10-minute pods-ready timeout",
         two_queues(ClusterQueue("team-a", gpu_group(("a100", Quota(8)))), config=KueueConfig(pods_ready_timeout=600.0))),
    case("every pods-ready setting",
         two_queues(ClusterQueue("team-a", gpu_group(("a100", Quota(8)))),
                    config=KueueConfig(pods_ready_timeout=90.0, block_admission=True, backoff_base=30.0, backoff_max=600.0,
                                       backoff_limit_count=2, requeuing_timestamp="Creation"))),
    case("waitForPodsReady off, fair sharing on, equivalence hashing off",
         two_queues(ClusterQueue("team-a", gpu_group(("a100", Quota(8))), cohort="research"),
                    config=KueueConfig(wait_for_pods_ready=False, fair_sharing=True, equivalence_hashing=False))),
    case("waitForPodsReady off, one fair-sharing strategy",
         two_queues(ClusterQueue("team-a", gpu_group(("a100", Quota(8))), cohort="research"),
                    config=KueueConfig(wait_for_pods_ready=False, fair_sharing=True,
                                       fair_sharing_strategies=("LessThanOrEqualToFinalShare",)))),
    case("an admission check with its ProvisioningRequestConfig",
         two_queues(ClusterQueue("team-a", gpu_group(("a100", Quota(8)))),
                    ClusterQueue("team-b", gpu_group(("h100", Quota(8)))),
                    checks=[AdmissionCheck("capacity", config=ProvisioningRequestConfig(
                        "atomic", backoff_limit_count=1, backoff_base_seconds=30.0, backoff_max_seconds=120.0))])),
    case("a LocalQueue in the default namespace, a flavor without labels",
         KueueSetup([ResourceFlavor("default-flavor")], [ClusterQueue("cq", gpu_group(("default-flavor", Quota(16))))],
                    [LocalQueue("user-queue", "default", "cq")])),
]


@pytest.mark.parametrize("setup", HAND_MADE)
def test_a_hand_made_setup_reads_back_the_same(setup):
    sc = queue_scenario(setup)
    again = quiet(dump_manifests(sc))
    assert effective(again.kueue) == effective(setup)
    assert tables(simulate(again, stack="kueue+gang")) == tables(simulate(sc, stack="kueue+gang"))


@pytest.mark.parametrize("jobs, expected", [
    case("a WorkloadPriorityClass a job names is written with the job's priority",
         [dataclasses.replace(job("a", priority=900, queue="q"), labels={"kueue.x-k8s.io/priority-class": "urgent"})],
         [(1, None)]),
    case("a partial-admission minimum becomes kueue.x-k8s.io/job-min-parallelism",
         [Job("a", [PodSet("workers", 4, 1, min_count=2)], run_time=600.0, queue="q")], [(4, 2)]),
    case("a minimum of every pod admits all or nothing, as no minimum does",
         [Job("a", [PodSet("workers", 4, 1, min_count=4)], run_time=600.0, queue="q")], [(4, None)]),
])
def test_what_kueue_reads_of_a_job_reads_back(jobs, expected):
    setup = KueueSetup([ResourceFlavor("f")], [ClusterQueue("cq", gpu_group(("f", Quota(8))))], [LocalQueue("q", "default", "cq")])
    again = quiet(dump_manifests(queue_scenario(setup, *jobs)))
    assert [(j.pod_sets[0].count, j.pod_sets[0].min_count) for j in again.jobs] == expected
    assert [j.priority for j in again.jobs] == [j.priority for j in jobs]


def test_a_scenario_without_kueue_setup_still_writes_the_workload_priority_classes_its_jobs_name():
    j = dataclasses.replace(job("a", priority=900), labels={"kueue.x-k8s.io/priority-class": "urgent"})
    again = quiet(dump_manifests(Scenario(nodes(1, gpus=8), [j])))
    assert again.kueue is None
    assert [(x.priority, x.labels) for x in again.jobs] == [(900, j.labels)]


# --- where the documents go, and what is left out -------------------------------------------------------------


def test_kueue_documents_come_after_nodes_and_priority_classes_and_before_jobs():
    setup = two_queues(ClusterQueue("team-a", gpu_group(("a100", Quota(8)))),
                       ClusterQueue("team-b", gpu_group(("h100", Quota(8)))), checks=[AdmissionCheck("capacity")])
    sc = queue_scenario(setup, job("a", priority=5, queue="team-a", namespace="team-a"))
    kinds = [d["kind"] for d in yaml.safe_load_all(dump_manifests(sc))]
    assert kinds == ["Node", "Node", "PriorityClass", "ResourceFlavor", "ResourceFlavor", "ClusterQueue", "ClusterQueue",
                     "LocalQueue", "LocalQueue", "ProvisioningRequestConfig", "AdmissionCheck", "Job", "Simulation"]


@pytest.mark.parametrize("namespace, queue", [
    case("queue named after the namespace", "team-a", "team-a"),
    case("no namespace, the default queue", None, "default"),
    case("a queue other than the namespace", "team-a", "shared"),
])
def test_with_a_kueue_setup_every_job_names_its_local_queue(namespace, queue):
    setup = KueueSetup([ResourceFlavor("f")], [ClusterQueue("cq", gpu_group(("f", Quota(8))))],
                       [LocalQueue(queue, namespace or "default", "cq")])
    text = dump_manifests(queue_scenario(setup, job("a", queue=queue, namespace=namespace)))
    [doc] = [d for d in yaml.safe_load_all(text) if d["kind"] == "Job"]
    assert doc["metadata"]["labels"][QUEUE_LABEL] == queue


@pytest.mark.parametrize("doc, expected", [
    case("a ClusterQueue with Kueue's defaults: only the selector and the quota",
         cluster_queue_manifest(ClusterQueue("cq", gpu_group(("f", Quota(8))))),
         {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue", "metadata": {"name": "cq"},
          "spec": {"namespaceSelector": {}, "resourceGroups": [{"coveredResources": [GPU], "flavors": [
              {"name": "f", "resources": [{"name": GPU, "nominalQuota": 8}]}]}]}}),
    case("a ResourceFlavor without node labels has no spec", flavor_manifest(ResourceFlavor("f")),
         {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor", "metadata": {"name": "f"}}),
    case("Kueue's default Configuration is not written", configuration_manifest(KueueConfig()), None),
    case("fair-sharing strategies are not written while fair sharing is off",
         configuration_manifest(KueueConfig(fair_sharing_strategies=("LessThanInitialShare",))), None),
    case("a waitForPodsReady section always has its timeout",
         configuration_manifest(KueueConfig(block_admission=True)),
         {"apiVersion": "config.kueue.x-k8s.io/v1beta2", "kind": "Configuration",
          "waitForPodsReady": {"timeout": "30m", "blockAdmission": True}}),
    case("waitForPodsReady off needs the v1beta1 Configuration, and its other settings take no effect",
         configuration_manifest(KueueConfig(wait_for_pods_ready=False, pods_ready_timeout=60.0)),
         {"apiVersion": "config.kueue.x-k8s.io/v1beta1", "kind": "Configuration", "waitForPodsReady": {"enable": False}}),
    case("fair sharing in v1beta2 always names its strategies",
         configuration_manifest(KueueConfig(fair_sharing=True)),
         {"apiVersion": "config.kueue.x-k8s.io/v1beta2", "kind": "Configuration",
          "fairSharing": {"preemptionStrategies": ["LessThanOrEqualToFinalShare", "LessThanInitialShare"]}}),
])
def test_only_what_differs_from_kueues_defaults_is_written(doc, expected):
    assert doc == expected


# --- the real schemas -----------------------------------------------------------------------------------------


def kueue_documents(sc: Scenario) -> list[dict]:
    return [d for d in yaml.safe_load_all(dump_manifests(sc)) if d["apiVersion"].startswith("kueue.x-k8s.io/")]


@requires_schemas
@pytest.mark.parametrize("scenario", [p.values[0] for p in BUILT_IN] + [queue_scenario(p.values[0]) for p in HAND_MADE],
                         ids=[p.id for p in BUILT_IN] + [p.id for p in HAND_MADE])
def test_every_written_kueue_object_is_valid_for_the_real_schemas(scenario):
    docs = kueue_documents(scenario)
    assert docs
    for doc in docs:  # Kueue ships no schema for its Configuration, which is not an API object
        assert validate_manifest(doc) is not None


@requires_schemas
def test_a_written_workload_priority_class_is_valid_for_the_real_schema():
    j = dataclasses.replace(job("a", priority=900), labels={"kueue.x-k8s.io/priority-class": "urgent"})
    [doc] = kueue_documents(Scenario(nodes(1, gpus=8), [j]))
    assert validate_manifest(doc) is not None


# --- what cannot be written -----------------------------------------------------------------------------------

ONE_FLAVOR = [ResourceFlavor("f")]


def one_queue(q: ClusterQueue, **kw) -> KueueSetup:
    return KueueSetup(ONE_FLAVOR, [q], [LocalQueue("q", "default", q.name)], **kw)


@pytest.mark.parametrize("setup, obj, field, words", [
    case("a borrowingLimit without a cohort (Kueue's CEL rule)",
         one_queue(ClusterQueue("cq", gpu_group(("f", Quota(8, borrowing_limit=2))))),
         "ClusterQueue cq", r"spec.resourceGroups\[0\].flavors\[0\].resources\[0\].borrowingLimit", "must be nil when cohort is empty"),
    case("a lendingLimit above the nominalQuota (Kueue's webhook)",
         one_queue(ClusterQueue("cq", gpu_group(("f", Quota(4, lending_limit=6))), cohort="c")),
         "ClusterQueue cq", r"spec.resourceGroups\[0\].flavors\[0\].resources\[0\].lendingLimit", "less than or equal"),
    case("borrowWithinCohort without reclaimWithinCohort",
         one_queue(ClusterQueue("cq", gpu_group(("f", Quota(8))), cohort="c",
                                preemption=Preemption(borrow_within_cohort="LowerPriority"))),
         "ClusterQueue cq", "spec.preemption", "reclaimWithinCohort=Never"),
    case("a fungibility preference without TryNextFlavor",
         one_queue(ClusterQueue("cq", gpu_group(("f", Quota(8))),
                                flavor_fungibility=FlavorFungibility(preference="BorrowingOverPreemption"))),
         "ClusterQueue cq", "spec.flavorFungibility.preference", "requires both"),
    case("an unknown queueing strategy",
         one_queue(ClusterQueue("cq", gpu_group(("f", Quota(8))), queueing_strategy="FIFO")),
         "ClusterQueue cq", "spec.queueingStrategy", "expected one of StrictFIFO, BestEffortFIFO"),
    case("a negative fair-sharing weight",
         one_queue(ClusterQueue("cq", gpu_group(("f", Quota(8))), fair_sharing_weight=-1.0)),
         "ClusterQueue cq", "spec.fairSharing.weight", "expected 0 or a weight"),
    case("a cycle of cohort parents",
         one_queue(ClusterQueue("cq", gpu_group(("f", Quota(8))), cohort="a"),
                   cohorts=[Cohort("a", "b"), Cohort("b", "a")]),
         "Cohort a", "spec.parentName", "cycle"),
    case("a quota that is not a whole number of Kueue's units",
         one_queue(ClusterQueue("cq", gpu_group(("f", Quota(1.5))))),
         "ClusterQueue cq", r"resource_groups\[0\].flavors\[0\].resources\[nvidia.com/gpu\].nominal", "whole number"),
    case("a flavor without a quota for a covered resource",
         one_queue(ClusterQueue("cq", [ResourceGroup(("cpu", GPU), (FlavorQuotas("f", {GPU: Quota(8)}),))])),
         "ClusterQueue cq", r"resource_groups\[0\].flavors\[0\].resources", "one quota per covered resource"),
    case("two ClusterQueues of one name",
         KueueSetup(ONE_FLAVOR, [ClusterQueue("cq", gpu_group(("f", Quota(8))))] * 2, [LocalQueue("q", "default", "cq")]),
         "ClusterQueue cq", "name", "appears twice"),
    case("two LocalQueues of one name in one namespace",
         KueueSetup(ONE_FLAVOR, [ClusterQueue("cq", gpu_group(("f", Quota(8))))], [LocalQueue("q", "team-a", "cq")] * 2),
         "LocalQueue team-a/q", "name", "appears twice; a LocalQueue name is unique in its namespace"),
    case("no ClusterQueue", KueueSetup(ONE_FLAVOR, [], []), "Kueue setup", "cluster_queues", "at least one ClusterQueue"),
    case("a zero pods-ready timeout, which Kueue reads as its default",
         one_queue(ClusterQueue("cq", gpu_group(("f", Quota(8)))), config=KueueConfig(pods_ready_timeout=0.0)),
         "Kueue Configuration", "pods_ready_timeout", "expected seconds > 0"),
    case("backoff in fractions of a second",
         one_queue(ClusterQueue("cq", gpu_group(("f", Quota(8)))), config=KueueConfig(backoff_base=1.5)),
         "Kueue Configuration", r"waitForPodsReady.requeuingStrategy.backoffBaseSeconds", "expected a whole number"),
    case("an unknown fair-sharing strategy",
         one_queue(ClusterQueue("cq", gpu_group(("f", Quota(8)))),
                   config=KueueConfig(fair_sharing=True, fair_sharing_strategies=("Any",))),
         "Kueue Configuration", "fairSharing.preemptionStrategies", "expected one of"),
    case("two admission checks naming one ProvisioningRequestConfig with other settings",
         one_queue(ClusterQueue("cq", gpu_group(("f", Quota(8)))),
                   admission_checks=[AdmissionCheck("a", config=ProvisioningRequestConfig("p")),
                                     AdmissionCheck("b", config=ProvisioningRequestConfig("p", backoff_limit_count=0))]),
         "AdmissionCheck b", "config", "ProvisioningRequestConfig 'p' with other settings"),
])
def test_a_setup_the_manifests_cannot_say_is_one_error_naming_object_and_field(setup, obj, field, words):
    with pytest.raises(ScenarioError, match=f"{obj}: {field}: .*{words}"):
        kueue_manifests(setup)


def test_a_flavor_that_is_not_in_the_setup_is_written_and_reads_back_as_an_inactive_queue():
    """Kueue accepts such a ClusterQueue and keeps it inactive (FlavorNotFound); so does gangkit, with a warning."""
    import warnings

    from gangkit.manifests import GangkitInputWarning, load_manifests

    setup = one_queue(ClusterQueue("cq", gpu_group(("h100", Quota(8)))))
    text = yaml.safe_dump_all(kueue_manifests(setup))
    node = "apiVersion: v1\nkind: Node\nmetadata: {name: n}\nstatus: {allocatable: {nvidia.com/gpu: '8'}}\n---\n"
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always", GangkitInputWarning)
        sc = load_manifests(node + text)
    assert [q.inactive.split(":")[0] for q in sc.kueue.cluster_queues] == ["FlavorNotFound"]
    assert any("ClusterQueue cq is inactive" in str(w.message) for w in seen)


def test_two_jobs_giving_one_workload_priority_class_two_values_is_an_error():
    label = {"kueue.x-k8s.io/priority-class": "urgent"}
    jobs = [dataclasses.replace(job("a", priority=900), labels=label), dataclasses.replace(job("b", priority=5), labels=label)]
    with pytest.raises(ScenarioError, match="Job b: labels.kueue.x-k8s.io/priority-class: .*Job a gives it 900"):
        dump_manifests(Scenario(nodes(1, gpus=8), jobs))
