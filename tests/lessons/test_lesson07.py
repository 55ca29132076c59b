"""Lesson 07's experiments: the decision test by job type, and what each wrong migration choice does."""

import math

import pytest
import yaml

import gangkit as gk
from gangkit.lessons import lesson07

from schema_util import requires_schemas, validate_manifest


@pytest.fixture(scope="module")
def decision():
    return lesson07.decision_table(seeds=range(2), n_jobs=150)


def test_streams_are_seeded_and_offer_the_load():
    a = lesson07.job_type_stream("synchronous training", load=0.8, n_jobs=100, seed=3).jobs()
    b = lesson07.job_type_stream("synchronous training", load=0.8, n_jobs=100, seed=3).jobs()
    assert [(j.name, j.submit_time, j.run_time) for j in a] == [(j.name, j.submit_time, j.run_time) for j in b]
    with pytest.raises(ValueError, match="unknown job type 'gpu'"):
        lesson07.job_type_stream("gpu")


def test_with_min_member_caps_at_each_jobs_pods():
    sc = lesson07.decision_scenario("independent tasks", n_jobs=20, min_member=4)
    assert {(j.pod_count, j.min_member) for j in sc.jobs} <= {(2, 2), (8, 4)}
    assert lesson07.decision_scenario("independent tasks", n_jobs=20).jobs[0].min_member is None


@pytest.mark.parametrize(
    "case, kind, better, worse",
    [
        ("one-GPU jobs: a gang layer changes nothing that matters", "one-GPU jobs", None, None),
        ("independent tasks: waiting for all pods doubles the turnaround", "independent tasks", "pod", "gang"),
        ("independent tasks: minMember 1 gives the partial start back", "independent tasks", "gang, minMember 1", "gang"),
    ],
    ids=lambda v: v if isinstance(v, str) and " " in v and ":" in v else "",
)
def test_decision_table_says_when_a_gang_layer_pays(decision, case, kind, better, worse):
    rows = decision.loc[kind]
    if better is None:
        turn = rows["mean_turnaround_s"]
        assert turn.max() - turn.min() <= 0.01 * turn.min()  # within 1%: the session period's half second
        assert rows["effective_utilization"].nunique() == 1
    else:
        assert rows.loc[better, "mean_turnaround_s"] < 0.75 * rows.loc[worse, "mean_turnaround_s"]


@pytest.mark.parametrize(
    "case, kind, stack, stalls",
    [
        ("synchronous training, pod by pod: every run deadlocks", "synchronous training", "pod", True),
        ("synchronous training, minMember 1: every run deadlocks", "synchronous training", "gang, minMember 1", True),
        ("synchronous training, gang of all pods: every job finishes", "synchronous training", "gang", False),
        ("independent tasks, pod by pod: every job finishes", "independent tasks", "pod", False),
        ("independent tasks, minMember 1: every job finishes", "independent tasks", "gang, minMember 1", False),
    ],
    ids=lambda v: v if isinstance(v, str) and ":" in v else "",
)
def test_synchronous_training_deadlocks_unless_placed_whole(decision, case, kind, stack, stalls):
    row = decision.loc[(kind, stack)]
    if stalls:
        assert row["runs_stalled"] == 2 and row["jobs_finished"] < 0.5 * 150 and row["held_idle_gpu_h"] > 100
    else:
        assert row["runs_stalled"] == 0 and row["jobs_finished"] == 150 and row["held_idle_gpu_h"] == 0.0


def test_the_gang_of_all_pods_finishes_synchronous_training_sooner_than_either_partial_set_up(decision):
    rows = decision.loc["synchronous training"]
    assert rows.loc["gang", "highest_seed_s"] < rows.loc[["pod", "gang, minMember 1"], "lowest_seed_s"].min()


def test_jobs_that_never_finish_count_to_the_end_of_the_run_not_out_of_the_mean(decision):
    """No survivorship: a deadlocked set-up's mean counts every job, the unfinished ones until the run's end."""
    stalled = [("synchronous training", "pod"), ("synchronous training", "gang, minMember 1")]
    # each never-started job counts at least from the last submission to the end of the five-day run
    last_submit = max(j.submit_time for j in lesson07.decision_scenario("synchronous training", n_jobs=150).jobs)
    others = decision.drop(stalled)
    for key in stalled:
        stuck = decision.loc[key]
        assert stuck["never_started"] > 0 and stuck["jobs_finished"] + stuck["never_started"] == 150
        assert stuck["lowest_seed_s"] > (stuck["never_started"] / 150) * (lesson07.HORIZON_S - last_submit)
        assert stuck["mean_turnaround_s"] > others["mean_turnaround_s"].max()
    assert others["never_started"].eq(0.0).all() and others["jobs_finished"].eq(150.0).all()


def test_run_figures_count_an_unfinished_job_until_the_end_of_the_run():
    r = lesson07.decision_run("synchronous training", "gang", 0.8, 150, 0, 1)
    jobs = r.jobs
    end = r.summary()["makespan_s"]
    expected = ((jobs["finish_s"].fillna(end) - jobs["submit_s"]).sum()) / len(jobs)
    figures = lesson07.run_figures(r)
    assert end == lesson07.HORIZON_S
    assert figures["mean_turnaround_s"] == pytest.approx(expected)
    assert figures["never_started"] == int(jobs["censored"].sum()) == len(jobs) - figures["jobs_finished"]


@pytest.mark.parametrize(
    "case, stack, deadlocked, most_at_once",
    [
        ("kube-scheduler: a younger job takes the freed nodes, several jobs hold parts, every run deadlocks", "pod", 2, (2, 8)),
        ("gang of all pods: no job ever holds part of its pods", "gang", 0, (0, 0)),
        ("minMember 1: newcomers go first, several jobs hold parts, every run deadlocks", "gang, minMember 1", 2, (2, 8)),
    ],
    ids=lambda v: v if isinstance(v, str) and ":" in v else "",
)
def test_partial_placements_explain_which_set_up_deadlocks(case, stack, deadlocked, most_at_once):
    table = lesson07.partial_placements(seeds=range(2), n_jobs=150)
    row = table.loc[stack]
    assert row["runs_deadlocked"] == deadlocked
    assert most_at_once[0] <= row["most_partly_placed_at_once"] <= most_at_once[1]


@pytest.mark.parametrize("stack", ["pod", "gang, minMember 1"])
def test_deadlock_story_gives_the_freed_nodes_to_a_younger_job_while_an_older_one_holds_part(stack):
    story = lesson07.deadlock_story(seed=0).reset_index()
    rows = story[story["stack"] == stack]
    assert rows["job"].nunique() >= 2 and (rows["pods_held_of_8"] < 8).all()  # every job shown never starts
    first, last = rows.iloc[0], rows.iloc[-1]
    assert last["submitted_s"] > first["submitted_s"] and first["job"] in last["others holding part of their pods"]
    assert last["older big jobs waiting"] >= 1
    # together the jobs left holding part hold every node: nothing can start again
    assert rows.groupby("job")["pods_held_of_8"].max().sum() == lesson07.NODES


@pytest.mark.parametrize(
    "mistake, outcome, layer, code",
    [
        ("minMember below what the job needs", "deadlock", "placement", "PodsCannotFit"),
        ("quota smaller than the gang", "never started", "quota", "QuotaTooSmall"),
        ("waitForPodsReady shorter than node start", "deactivated", "quota", "Deactivated"),
        ("NodePool limit below the gang", "never started", "placement", "NodePoolLimit"),
        ("pod larger than any instance type", "never started", "placement", "Rejected"),
        ("ProvisioningRequest that cannot hold the gang", "never started", "admission_check", "AdmissionCheck"),
    ],
)
def test_each_mistake_fails_the_way_the_lesson_says(mistake, outcome, layer, code):
    row = lesson07.mistake_table().loc[mistake]
    assert (row["outcome"], row["layer"], row["code"]) == (outcome, layer, code)


def test_two_quotas_that_disagree_never_start_the_gang():
    row = lesson07.mistake_table().loc["Volcano queue smaller than Kueue's quota"]
    assert row["outcome"] == "never started" and row["layer"] == "placement"
    assert row["evictions"] >= 1  # Kueue admitted it and its waitForPodsReady gave up


def test_pods_ready_shorter_than_node_start_evicts_every_attempt_and_pays_for_nodes():
    row = lesson07.mistake_table().loc["waitForPodsReady shorter than node start"]
    assert row["evictions"] == 4  # backoffLimitCount 3: the fourth eviction deactivates
    assert row["nodes_launched"] == 16  # four nodes launched for each admission, removed at once (consolidateAfter 0s)


def test_unknown_mistake_is_refused_with_the_known_ones():
    with pytest.raises(ValueError, match="unknown mistake 'typo'; expected one of minMember"):
        lesson07.mistake_scenario("typo")


@pytest.mark.parametrize(
    "target, objects, gang",
    [
        ("default scheduler", {("batch/v1", "Job")}, 4),
        ("Kueue + Volcano PodGroup", {("batch/v1", "Job"), ("scheduling.volcano.sh/v1beta1", "PodGroup"),
                                      ("kueue.x-k8s.io/v1beta2", "ClusterQueue"), ("kueue.x-k8s.io/v1beta2", "LocalQueue")}, 4),
        ("Volcano Job", {("batch.volcano.sh/v1alpha1", "Job")}, 4),
        ("scheduler-plugins PodGroup", {("batch/v1", "Job"), ("scheduling.x-k8s.io/v1alpha1", "PodGroup")}, 4),
        ("YuniKorn task group", {("batch/v1", "Job")}, 4),
        ("Kueue + JobSet", {("jobset.x-k8s.io/v1alpha2", "JobSet"), ("kueue.x-k8s.io/v1beta2", "ClusterQueue")}, 4),
    ],
)
def test_each_migration_form_reads_back_as_the_same_job(target, objects, gang):
    text = lesson07.migration_manifests(target=target)
    docs = [d for d in yaml.safe_load_all(text) if d]
    assert objects <= {(d["apiVersion"], d["kind"]) for d in docs}
    (train,) = gk.load_manifests(text).jobs
    assert (train.name, train.pod_count, train.gpus, train.gang_size) == ("train", 4, 32, gang)


@requires_schemas
@pytest.mark.parametrize("target", list(lesson07.MIGRATION_TARGETS))
def test_each_migration_form_is_valid_against_the_real_schemas(target):
    for doc in yaml.safe_load_all(lesson07.migration_manifests(target=target)):
        if doc:
            validate_manifest(doc)


@requires_schemas
def test_the_printed_after_manifests_are_complete_and_valid():
    """What the lesson prints of the after-form: every flavor a ClusterQueue names is among the printed objects."""
    docs = [d for d in yaml.safe_load_all(lesson07.manifest_docs(lesson07.migration_manifests())) if d]
    flavors = {d["metadata"]["name"] for d in docs if d["kind"] == "ResourceFlavor"}
    named = {f["name"] for d in docs if d["kind"] == "ClusterQueue"
             for group in d["spec"]["resourceGroups"] for f in group["flavors"]}
    assert named and named <= flavors
    assert [d["kind"] for d in docs] == ["ResourceFlavor", "ClusterQueue", "LocalQueue", "Job", "PodGroup"]
    for doc in docs:
        validate_manifest(doc)


def test_before_is_the_default_scheduler_form_and_unknown_targets_are_refused():
    assert lesson07.migration_manifests(before=True) == lesson07.migration_manifests(target="default scheduler")
    with pytest.raises(ValueError, match="unknown target 'slurm'; expected one of default scheduler"):
        lesson07.migration_manifests(target="slurm")


def test_render_decision_draws_both_stacks_outside_pyplot():
    table, fig = lesson07.render_decision("independent tasks", 0.7, 1, 0)
    assert list(table.index) == ["pod", "gang"]
    assert len(fig.axes) == 2 and all(not math.isnan(v) for v in table["mean_turnaround_s"])


def test_decision_explorer_follows_its_controls():
    ex = lesson07.decision_explorer()
    ex.controls["kind"].value = "one-GPU jobs"
    ex.controls["min_member"].value = 1
    assert ex.table is not None and ex.table["held_idle_gpu_h"].eq(0.0).all()
    assert ex.updates == 3


@pytest.mark.parametrize(
    "name, static, simulated",
    [
        ("after.yaml", set(), {"run-waited-for-nodes"}),
        ("min-member-too-small.yaml", {"gang-smaller-than-sync-job"}, {"run-waited-for-nodes"}),
        ("quota-too-small.yaml", {"kueue-quota-never-fits"}, set()),
        ("pods-ready-too-short.yaml", {"kueue-pods-ready-timeout"}, {"run-never-admitted"}),
        ("two-quotas.yaml", {"volcano-capability-too-small"}, set()),
        ("nodepool-limit.yaml", {"supply-too-small", "kueue-quota-exceeds-supply"}, set()),
        ("pod-too-big.yaml", {"pod-fits-no-node"}, set()),
    ],
)
def test_gangkit_check_finds_each_mistake_of_the_migration_examples(name, static, simulated):
    path = lesson07.migration_examples() / name
    assert {f.code for f in gk.check_manifests(path)} == static
    assert {f.code for f in gk.check_manifests(path, simulate=True)} == static | simulated


def test_every_migration_example_is_in_the_lesson_table_and_valid_against_the_schemas():
    files = {p.name for p in lesson07.migration_examples().glob("*.yaml")}
    assert files == set(lesson07.MIGRATION_FILES)
    assert list(lesson07.check_table().index) == list(lesson07.MIGRATION_FILES)


@requires_schemas
@pytest.mark.parametrize("name", list(lesson07.MIGRATION_FILES))
def test_migration_examples_validate_against_the_real_schemas(name):
    text = (lesson07.migration_examples() / name).read_text()
    for doc in yaml.safe_load_all(text):
        if doc and not doc["apiVersion"].startswith("config.kueue.x-k8s.io"):  # Kueue ships no schema for it
            validate_manifest(doc)


def test_partial_admission_of_elastic_training_starts_jobs_smaller_and_sooner():
    table = lesson07.elastic_table(0.8, seeds=range(1), n_jobs=120)
    whole, partial = table.loc["all workers or none"], table.loc["partial admission, at least half"]
    assert whole["jobs_admitted_smaller"] == 0 < partial["jobs_admitted_smaller"]
    assert partial["mean_turnaround_s"] < whole["mean_turnaround_s"]
