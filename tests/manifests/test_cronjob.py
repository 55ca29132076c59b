"""A batch/v1 CronJob read as the Jobs it creates within the run (gangkit.manifests.cronjob)."""

from __future__ import annotations

import warnings
from datetime import datetime

import pytest

import gangkit as gk
from gangkit.manifests import load_manifests
from gangkit.manifests.cronjob import MAX_JOBS, parse_schedule
from gangkit.model.errors import ScenarioError

from conftest import case, edit
from schema_util import requires_schemas, validate_manifest

NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-0"},
        "status": {"allocatable": {"nvidia.com/gpu": "8", "cpu": "96", "memory": "1Ti"}}}
CRONJOB = {
    "apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "nightly", "namespace": "team-a"},
    "spec": {
        "schedule": "0 */6 * * *",
        "jobTemplate": {
            "metadata": {"labels": {"kueue.x-k8s.io/queue-name": "user-queue"},
                         "annotations": {"gangkit/run-time": "1h"}},
            "spec": {"parallelism": 2, "template": {"spec": {
                "restartPolicy": "Never",
                "containers": [{"name": "train", "image": "trainer:1",
                                "resources": {"limits": {"nvidia.com/gpu": "2"}}}]}}},
        },
    },
}
SIMULATION = {"apiVersion": "gangkit/v1alpha1", "kind": "Simulation", "metadata": {"name": "cron"},
              "spec": {"horizon": "24h"}}


def load(*docs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load_manifests([NODE, *docs])


# --- the schedule ---------------------------------------------------------------------------


@pytest.mark.parametrize("text, start, expected", [
    case("every minute fires at the next minute", "* * * * *", "2026-01-01 00:00", "2026-01-01 00:01"),
    case("a step over the hours fires at the next multiple", "0 */6 * * *", "2026-01-01 00:00", "2026-01-01 06:00"),
    case("a start with a step runs to the field's end", "5/20 * * * *", "2026-01-01 00:30", "2026-01-01 00:45"),
    case("day names read as numbers, Sunday 0", "30 2 * * MON", "2026-01-01 00:00", "2026-01-05 02:30"),
    case("month names read as numbers", "0 0 1 mar *", "2026-01-01 00:00", "2026-03-01 00:00"),
    case("two restricted day fields match either day", "0 0 15 * FRI", "2026-01-01 00:00", "2026-01-02 00:00"),
    case("a star day of month makes the day of week decide alone", "0 0 * * 0", "2026-01-01 00:00", "2026-01-04 00:00"),
    case("a question mark is a star", "0 0 ? * 0", "2026-01-01 00:00", "2026-01-04 00:00"),
    case("@daily is midnight", "@daily", "2026-01-01 00:00", "2026-01-02 00:00"),
    case("@weekly is Sunday midnight", "@weekly", "2026-01-01 00:00", "2026-01-04 00:00"),
    case("@monthly is the first of the month", "@monthly", "2026-01-01 00:00", "2026-02-01 00:00"),
    case("a list of minutes", "10,40 * * * *", "2026-01-01 00:15", "2026-01-01 00:40"),
    case("a range of hours on weekdays skips the weekend", "0 9-17/4 * * 1-5", "2026-01-02 17:00", "2026-01-05 09:00"),
    case("the 31st skips months without one", "0 0 31 * *", "2026-01-31 00:00", "2026-03-31 00:00"),
    case("February 29th waits for a leap year", "0 0 29 2 *", "2026-01-01 00:00", "2028-02-29 00:00"),
    case("February 30th never comes", "0 0 30 2 *", "2026-01-01 00:00", None),
])
def test_a_schedule_fires_at_the_next_time_it_matches(text, start, expected):
    t = parse_schedule(text).next_after(datetime.fromisoformat(start))
    assert (None if t is None else t.strftime("%Y-%m-%d %H:%M")) == expected


@pytest.mark.parametrize("text, words", [
    case("four fields are too few", "0 * * *", "expected 5 fields"),
    case("six fields (with seconds) are too many", "0 0 * * * *", "expected 5 fields"),
    case("a minute of 60 is out of range", "60 * * * *", "minute: expected 0-59"),
    case("a day of week of 7 is out of range, as in robfig/cron", "0 0 * * 7", "day of week: expected 0-6"),
    case("a backwards range", "0 5-2 * * *", "runs backwards"),
    case("a step of 0", "*/0 * * * *", "a step of 1 or more"),
    case("an unknown month name", "0 0 1 FOO *", "month: expected 1-12 or JAN-DEC"),
    case("a time zone prefix belongs in spec.timeZone", "TZ=UTC 0 * * * *", "set spec.timeZone"),
    case("@every is not modelled", "@every 5m", "@every is not modelled"),
    case("an unknown descriptor", "@sometimes", "unknown descriptor"),
])
def test_a_bad_schedule_says_what_is_wrong(text, words):
    with pytest.raises(ValueError, match=words):
        parse_schedule(text)


# --- the Jobs of a run -----------------------------------------------------------------------


def cron(**spec):
    doc = CRONJOB
    for path, value in spec.items():
        doc = edit(doc, path.replace("__", "."), value)
    return doc


@pytest.mark.parametrize("docs, expected", [
    case("every six hours over a day makes four Jobs from second 0",
         [cron(), SIMULATION], [("team-a/nightly-29453760", 0.0), ("team-a/nightly-29454120", 21600.0),
                                ("team-a/nightly-29454480", 43200.0), ("team-a/nightly-29454840", 64800.0)]),
    case("second 0 is the first schedule time at or after the origin",
         [cron(spec__schedule="30 1 * * *"), SIMULATION], [("team-a/nightly-29453850", 0.0)]),
    case("second 0 is the earliest first time over all CronJobs",
         [cron(spec__schedule="0 3 * * *"), edit(cron(spec__schedule="0 1 * * *"), "metadata.name", "early"),
          SIMULATION],
         [("team-a/nightly-29453940", 7200.0), ("team-a/early-29453820", 0.0)]),
    case("a time zone moves the wall clock: 01:00 in Paris is 00:00 UTC in January",
         [cron(spec__schedule="0 1 * * *", spec__timeZone="Europe/Paris"), SIMULATION],
         [("team-a/nightly-29453760", 0.0)]),
    case("suspend: true makes no Job", [cron(spec__suspend=True), SIMULATION], []),
    case("Forbid with one Job in the run is read as that Job",
         [cron(spec__schedule="0 0 * * *", spec__concurrencyPolicy="Forbid", spec__startingDeadlineSeconds=60),
          SIMULATION], [("team-a/nightly-29453760", 0.0)]),
    case("without a Simulation the default horizon of 30 days bounds the Jobs",
         [cron(spec__schedule="0 0 * * *")], [(f"team-a/nightly-{29453760 + 1440 * d}", 86400.0 * d) for d in range(30)]),
])
def test_a_cronjob_is_read_as_the_jobs_its_schedule_creates_within_the_run(docs, expected):
    sc = load(*docs)
    assert [(j.key, j.submit_time) for j in sc.jobs] == expected


def test_the_jobs_carry_the_templates_labels_so_kueue_queues_them():
    sc = load(cron(), SIMULATION)
    assert {j.queue for j in sc.jobs} == {"user-queue"} and {j.pod_count for j in sc.jobs} == {2}
    assert [j.run_time for j in sc.jobs] == [3600.0] * 4


def test_a_schedule_of_every_minute_is_capped():
    sc = load(cron(spec__schedule="* * * * *"))
    assert len(sc.jobs) == MAX_JOBS and any(f"at most {MAX_JOBS:,} Jobs" in w for w in sc.warnings)


def test_the_jobs_of_a_cronjob_run_and_finish():
    r = gk.simulate(load(cron(), SIMULATION).with_settings(stack="pod"))
    s = r.summary()
    assert (s["jobs_finished"], s["jobs_total"]) == (4, 4)


@pytest.mark.parametrize("doc, where, words", [
    case("no schedule", cron(spec__schedule=None), "spec.schedule", "it is required"),
    case("a bad schedule", cron(spec__schedule="0 25 * * *"), "spec.schedule", "hour: expected 0-23"),
    case("an unknown time zone", cron(spec__timeZone="Mars/Olympus"), "spec.timeZone", "a time zone name"),
    case("an unknown concurrency policy", cron(spec__concurrencyPolicy="Sometimes"), "spec.concurrencyPolicy",
         "expected one of Allow, Forbid, Replace"),
    case("Forbid over several Jobs is not modelled", cron(spec__concurrencyPolicy="Forbid"), "spec.concurrencyPolicy",
         "not modelled when more than one Job"),
    case("Replace over several Jobs is not modelled", cron(spec__concurrencyPolicy="Replace"),
         "spec.concurrencyPolicy", "not modelled when more than one Job"),
    case("a negative starting deadline", cron(spec__startingDeadlineSeconds=-1), "spec.startingDeadlineSeconds",
         "expected a whole number >= 0"),
    case("suspend that is not a boolean", cron(spec__suspend="yes"), "spec.suspend", "expected true or false"),
    case("no job template", cron(spec__jobTemplate=None), "spec.jobTemplate", "it is required"),
    case("a named PodGroup shared by every Job",
         cron(**{"spec__jobTemplate__spec__template__metadata__labels": {"scheduling.x-k8s.io/pod-group": "pg"}}),
         "spec.jobTemplate.spec.template.metadata.labels.scheduling.x-k8s.io/pod-group", "one gang per Job"),
])
def test_a_cronjob_gangkit_cannot_read_is_refused_naming_the_field(doc, where, words):
    with pytest.raises(ScenarioError) as e:
        load(doc, SIMULATION)
    p = e.value.problems[0]
    assert (p.obj, p.field) == ("CronJob team-a/nightly", where) and words in p.message


def test_a_bad_job_template_is_refused_once_naming_the_job_it_makes():
    with pytest.raises(ScenarioError) as e:
        load(cron(spec__jobTemplate__spec__parallelism=0), SIMULATION)
    assert [(p.obj, p.field) for p in e.value.problems] == [("Job team-a/nightly-29453760", "spec.parallelism")]


@requires_schemas
@pytest.mark.parametrize("doc", [
    case("the plain CronJob", cron()),
    case("with a time zone, a deadline and Forbid",
         cron(spec__timeZone="Europe/Paris", spec__startingDeadlineSeconds=60, spec__concurrencyPolicy="Forbid")),
    case("suspended", cron(spec__suspend=True)),
])
def test_the_cronjobs_these_tests_read_are_valid_kubernetes_1_35(doc):
    assert validate_manifest(doc) is not None


def test_an_unknown_field_of_the_job_template_is_named_as_the_cronjobs():
    sc = load(cron(spec__jobTemplate__spec__bogus=1), SIMULATION)
    assert any("CronJob team-a/nightly: spec.jobTemplate.spec.bogus" in w for w in sc.warnings)
