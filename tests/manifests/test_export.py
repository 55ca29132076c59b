"""Exporting a scenario for a target stack (gangkit.manifests.export): tables of named cases.

The export of a scenario, read back, runs under the target's stack exactly as
the scenario does; ``gangkit check`` finds nothing missing in it (a ``pod``
target is told when the scenario names gangs the default scheduler ignores); every
object is valid for the real schemas (../shared/schemas); a target that
cannot hold the scenario is one error naming the job.
"""

from __future__ import annotations

import collections
import dataclasses
import re
import warnings

import pytest
import yaml

import gangkit as gk
from gangkit.manifests import load_file, load_manifests
from gangkit.manifests.export import TARGETS, export_manifests, export_scenario
from gangkit.model.errors import ScenarioError
from gangkit.model.jobs import Job, PodSet, job
from gangkit.model.nodes import nodes
from gangkit.model.resources import Resources
from gangkit.model.scenario import Scenario
from gangkit.workloads import scenarios

from conftest import case

try:
    from schema_util import requires_schemas, validate_manifest
except ImportError:  # tests/ imported as a package
    from tests.schema_util import requires_schemas, validate_manifest
from paths import REPO

EXAMPLES = REPO / "examples"


def quiet(read, source):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return read(source)


SCENARIOS = [
    case("three-workers", scenarios.load("three-workers")),
    case("two-gangs-deadlock", scenarios.load("two-gangs-deadlock")),
    case("examples/kueue-two-teams.yaml", quiet(load_file, EXAMPLES / "kueue-two-teams.yaml")),
    case("examples/coscheduling.yaml", quiet(load_file, EXAMPLES / "coscheduling.yaml")),
]


@pytest.mark.parametrize("target", list(TARGETS))
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_an_export_runs_under_its_target_as_the_scenario_does(scenario, target):
    text = export_manifests(scenario, target)
    back = quiet(load_manifests, text)
    stack, kind = TARGETS[target]
    assert back.settings.stack == stack
    # Volcano Jobs are another kind: their controller creates pods once the PodGroup is Inqueue
    expected = export_scenario(scenario, target) if kind == "volcano" else scenario
    assert gk.simulate(back).summary() == gk.simulate(expected, stack=stack).summary()


@pytest.mark.parametrize("target", list(TARGETS))
def test_an_export_checks_clean(target):
    assert gk.check_manifests(export_manifests(scenarios.load("two-gangs-deadlock"), target)) == []


LAYER_TERMS = [
    case("the default scheduler gets no gang objects", "examples/kube-gang.yaml", "kueue+pod", set()),
    case("Volcano gets its PodGroup, not scheduler-plugins'", "examples/coscheduling.yaml", "gang",
         {"PodGroup.scheduling.volcano.sh"}),
    case("a Volcano Job carries its own gang", "examples/coscheduling.yaml", "volcano", set()),
    case("YuniKorn's task groups are annotations", "examples/coscheduling.yaml", "yunikorn", set()),
    case("scheduler-plugins gets its PodGroup", "examples/yunikorn.yaml", "coscheduling",
         {"PodGroup.scheduling.x-k8s.io"}),
    case("Kubernetes gets a Workload", "examples/yunikorn.yaml", "kube-gang", {"Workload.scheduling.k8s.io"}),
]


@pytest.mark.parametrize("path, target, gang_kinds", LAYER_TERMS)
def test_a_gang_is_exported_in_the_target_layers_terms_only(path, target, gang_kinds):
    text = export_manifests(quiet(load_file, EXAMPLES.parent / path), target)
    docs = list(yaml.safe_load_all(text))
    kinds = {f"{d['kind']}.{d['apiVersion'].split('/')[0]}" for d in docs if d["kind"] in ("PodGroup", "Workload")}
    assert kinds == gang_kinds
    assert gk.check_manifests(text) == []


def test_a_target_without_kueue_drops_the_kueue_labels():
    sc = quiet(load_file, EXAMPLES / "kueue-provisioning-request.yaml")
    jobs = [d for d in yaml.safe_load_all(export_manifests(sc, "gang")) if d["kind"] == "Job"]
    assert jobs and not any(k.startswith("kueue.x-k8s.io/") for d in jobs for k in d["metadata"].get("labels", {}))


WRITTEN = [
    case("a gang layer writes the gang of all pods a PodGroup-less job runs as", "gang", "PodGroup", 2),
    case("Volcano's own kinds: a Volcano Job per job", "volcano", "Job", 2),
    case("a kueue+ stack without Kueue objects: the default ClusterQueue", "kueue+coscheduling", "ClusterQueue", 1),
    case("... and its LocalQueue", "kueue+coscheduling", "LocalQueue", 1),
    case("Karpenter: the default NodePool", "kueue+volcano+karpenter", "NodePool", 1),
    case("a Kubernetes Workload per gang", "kueue+kube-gang", "Workload", 2),
    case("no Kueue objects for a target without Kueue", "coscheduling", "ClusterQueue", 0),
]


@pytest.mark.parametrize("target, kind, count", WRITTEN)
def test_what_an_export_writes(target, kind, count):
    sc = Scenario(nodes(3, gpus=2), [job("a", pods=4), job("b", pods=4)])
    kinds = collections.Counter(d["kind"] for d in yaml.safe_load_all(export_manifests(sc, target)))
    assert kinds[kind] == count


def test_a_target_without_kueue_drops_the_scenarios_kueue_objects():
    sc = quiet(load_file, EXAMPLES / "kueue-two-teams.yaml")
    assert sc.kueue is not None and export_scenario(sc, "gang").kueue is None


BAD = [
    case("an unknown target, with the closest name", scenarios.load("three-workers"), "volcno",
         "Export: target: unknown target 'volcno'; did you mean volcano?"),
    case("two pod sets for a batch/v1 target", Scenario(nodes(1), [Job("a", [PodSet("ps", 1, 1), PodSet("w", 2, 1)], 60)]),
         "kueue+gang", "Job a: pod_sets: target kueue+gang writes batch/v1 Jobs, which have one pod template"),
]


@pytest.mark.parametrize("scenario, target, message", BAD)
def test_a_target_that_cannot_hold_the_scenario_is_one_error(scenario, target, message):
    with pytest.raises(ScenarioError, match=re.escape(message)):
        export_manifests(scenario, target)


def test_two_pod_sets_export_to_volcano_as_two_tasks():
    sc = Scenario(nodes(2, gpus=4), [Job("a", [PodSet("ps", 1, 1), PodSet("w", 2, 1)], 60)])
    [vjob] = [d for d in yaml.safe_load_all(export_manifests(sc, "volcano")) if d["kind"] == "Job"]
    assert [t["replicas"] for t in vjob["spec"]["tasks"]] == [1, 2]


@requires_schemas
@pytest.mark.parametrize("target", list(TARGETS))
def test_every_exported_object_is_valid_for_the_real_schemas(target):
    docs = list(yaml.safe_load_all(export_manifests(scenarios.load("two-gangs-deadlock"), target)))
    assert any(validate_manifest(d) for d in docs)


# --- a LeaderWorkerSet and a CronJob: read -> export -> read gives the same jobs ------------------------------

LWS_EXAMPLE = EXAMPLES / "leaderworkerset.yaml"
CRON_EXAMPLE = EXAMPLES / "cronjob.yaml"


def _same(j: Job) -> Job:
    """A job as an export reads back: Kueue's queue label is written on every job a kueue+ target manages."""
    return dataclasses.replace(j, labels={k: v for k, v in j.labels.items() if not k.startswith("kueue.x-k8s.io/")})


# (file, target, kinds written, whether the target keeps every job as read: a target without Kueue drops the
# CronJob's queue label, a gang target writes the gang size it assumes)
@pytest.mark.parametrize("path, target, kinds, as_read", [
    case("a LeaderWorkerSet to the default scheduler", LWS_EXAMPLE, "pod", {"LeaderWorkerSet": 1}, True),
    case("a LeaderWorkerSet behind Kueue", LWS_EXAMPLE, "kueue+pod", {"LeaderWorkerSet": 1, "ClusterQueue": 1}, True),
    case("a LeaderWorkerSet under Volcano (a PodGroup per group by LWS's provider)", LWS_EXAMPLE, "gang",
         {"LeaderWorkerSet": 1, "PodGroup": 0}, True),
    case("a LeaderWorkerSet behind Kueue, under Volcano", LWS_EXAMPLE, "kueue+volcano", {"LeaderWorkerSet": 1}, True),
    case("a CronJob's Jobs behind Kueue", CRON_EXAMPLE, "kueue+pod", {"Job": 3, "LocalQueue": 1, "CronJob": 0}, True),
    case("a CronJob's Jobs without Kueue lose its queue", CRON_EXAMPLE, "pod", {"Job": 3, "CronJob": 0}, False),
    case("a CronJob's Jobs under Volcano, each with its PodGroup", CRON_EXAMPLE, "gang", {"Job": 3, "PodGroup": 3}, False),
])
def test_a_leaderworkerset_and_a_cronjob_read_back_as_the_jobs_exported(path, target, kinds, as_read):
    sc = quiet(load_file, path)
    text = export_manifests(sc, target)
    written = collections.Counter(d["kind"] for d in yaml.safe_load_all(text))
    assert {k: written[k] for k in kinds} == kinds
    back = [_same(j) for j in quiet(load_manifests, text).jobs]
    assert back == [_same(j) for j in export_scenario(sc, target).jobs]
    assert (back == [_same(j) for j in sc.jobs]) is as_read


def test_a_leader_ready_leaderworkerset_keeps_its_startup_policy():
    sc = quiet(load_file, LWS_EXAMPLE)
    ready = dataclasses.replace(sc, jobs=[dataclasses.replace(j, min_member=1, min_resources=Resources(
        *(sum(getattr(ps, k) * ps.count for ps in j.pod_sets) for k in ("gpus", "cpu", "memory")))) for j in sc.jobs])
    [doc] = [d for d in yaml.safe_load_all(export_manifests(ready, "gang")) if d["kind"] == "LeaderWorkerSet"]
    assert doc["spec"]["startupPolicy"] == "LeaderReady"
    assert quiet(load_manifests, export_manifests(ready, "gang")).jobs == ready.jobs


LWS_BAD = [
    case("a coscheduling target cannot say a two-pod-set group's gang", LWS_EXAMPLE, "coscheduling",
         "Job llm-0: pod_sets: target coscheduling writes batch/v1 Jobs, which have one pod template; got 2 pod sets"),
]


@pytest.mark.parametrize("path, target, message", LWS_BAD)
def test_a_leaderworkerset_a_target_cannot_write_is_one_error(path, target, message):
    with pytest.raises(ScenarioError, match=re.escape(message)):
        export_manifests(quiet(load_file, path), target)


@pytest.mark.parametrize("names, words", [
    case("a group missing from the set", ["llm-0", "llm-2"], "expected llm-0 to llm-1"),
    case("a job not named <name>-<index>", ["llm"], "named <name>-<index>"),
])
def test_groups_that_do_not_make_a_whole_leaderworkerset_are_refused(names, words):
    sc = quiet(load_file, LWS_EXAMPLE)
    jobs = [dataclasses.replace(sc.jobs[0], name=n) for n in names]
    with pytest.raises(ScenarioError, match=re.escape(words)):
        export_manifests(dataclasses.replace(sc, jobs=jobs), "pod")


@requires_schemas
@pytest.mark.parametrize("path, target", [case("LeaderWorkerSet, kueue+volcano", LWS_EXAMPLE, "kueue+volcano"),
                                          case("LeaderWorkerSet, pod", LWS_EXAMPLE, "pod"),
                                          case("CronJob, kueue+pod", CRON_EXAMPLE, "kueue+pod")])
def test_the_exported_leaderworkerset_and_jobs_are_valid_for_the_real_schemas(path, target):
    docs = list(yaml.safe_load_all(export_manifests(quiet(load_file, path), target)))
    assert [validate_manifest(d) for d in docs if d["kind"] in ("LeaderWorkerSet", "Job")]
    assert all(validate_manifest(d) is not None for d in docs if d["kind"] in ("LeaderWorkerSet", "Job"))
