"""Volcano's sla plugin: a job past its ``sla-waiting-time`` goes first, is let in, and (in a tier before gang's) keeps room.

Volcano v1.15.1 ``pkg/scheduler/plugins/sla/sla.go`` registers JobOrderFn
(jobs with a waiting time first, earliest deadline first), JobEnqueueableFn
and JobPipelinedFn (Permit once the job has waited its waiting time). The
rows below take their cases from the plugin's own test (``sla_test.go``:
the order of a job without a waiting time and one with an hour, under a
global 3m, none, or a value that does not parse) and from Volcano's e2e
test ``test/e2e/schedulingbase/sla.go`` ("sla permits job to be inqueue",
"sla adjusts job order"). The reservation rows check where the plugin sits
in the tiers (``session_plugins.go``: a Reject in the same tier wins).
"""

from __future__ import annotations

import pytest

from gangkit.manifests import dump_manifests, load_manifests
from gangkit.model.errors import ScenarioError
from gangkit.model.fast_paths import FastPaths
from gangkit.model.jobs import Job, PodSet
from gangkit.volcano.api import VolcanoSetup
from gangkit.volcano.plugins.sla import SlaPlugin

from builders import gang, gpu_nodes, simulate_on

DOC = SlaPlugin()  # the placement of Volcano's sla design page: after priority and gang, in their tier
FIRST = SlaPlugin(first_tier=True)  # a tier of its own before gang's


def run(jobs, sla, n_nodes=1, gpus=4, **settings):
    """The jobs under ``gang`` on ``n_nodes`` nodes of ``gpus`` GPUs, with this sla plugin (``None``: without it)."""
    return simulate_on(gpu_nodes(n_nodes, gpus), jobs, stack="gang", volcano=VolcanoSetup(sla=sla), **settings)


def starts(result) -> dict:
    return result.jobs.set_index("job").start_s.to_dict()


def one_gpu(name, submit, run_time=100, **kw) -> Job:
    return gang(name, 1, 1, run_time=run_time, submit=submit, pod_set="main", **kw)


# --- JobOrderFn (sla_test.go): one GPU, a blocker, then two jobs that wait for it --------------------------------

ORDER = [
    # (id, plugin, job2's and job1's priorities, expected first to start after the blocker)
    ("no plugin: creation order", None, (0, 0), "job2"),
    ("a global 3m: job1 (3m) before job2 (its own 1h), as sla_test.go's 'sla normal placement'",
     SlaPlugin(waiting_time=180), (0, 0), "job1"),
    ("no global: only job2 has a waiting time and goes first ('none placement', 'sla error type placement')",
     DOC, (0, 0), "job2"),
    ("after priority in its tier: the higher priority of job1 still goes first", DOC, (0, 10), "job1"),
    ("a tier before priority's: job2's waiting time goes before job1's priority", FIRST, (0, 10), "job2"),
]


@pytest.mark.parametrize("sla, priorities, first", [c[1:] for c in ORDER], ids=[c[0] for c in ORDER])
def test_job_order(sla, priorities, first):
    jobs = [one_gpu("blocker", 0), one_gpu("job2", 1, sla_waiting_time=3600, priority=priorities[0]),
            one_gpu("job1", 2, priority=priorities[1])]
    s = starts(run(jobs, sla, gpus=1))
    other = "job1" if first == "job2" else "job2"
    assert (s[first], s[other]) == (s["blocker"] + 100, s["blocker"] + 200)


# --- JobEnqueueableFn (e2e "sla permits job to be inqueue") --------------------------------------------------------

def test_a_job_larger_than_the_cluster_is_let_in_after_its_waiting_time():
    """A Volcano Job asking for twice the cluster stays Pending without the plugin; with it, after 3 s its
    PodGroup is Inqueue and its pods exist (Pending: they cannot all fit). Nothing else happens in the run,
    so the session at 3 s is the plugin's deadline."""
    over = [Job("over", [PodSet("main", 8, 1)], 100, controller="volcano", sla_waiting_time=3)]
    without = run(over, None, horizon=30).jobs.iloc[0].reason
    assert "QueueCapabilityExceeded" in without and "PodGroup stays Pending" in without
    for horizon, code in ((2, "QueueCapabilityExceeded"), (30, "GangCannotFit")):
        reason = run(over, DOC, horizon=horizon).jobs.iloc[0].reason
        assert code in reason, (horizon, reason)


# --- JobOrderFn at the enqueue door (e2e "sla adjusts job order") --------------------------------------------------

@pytest.mark.parametrize("sla, first", [(None, "j2"), (DOC, "j3")], ids=["no plugin: creation order", "sla: j3's 30m first"])
def test_the_earlier_deadline_is_enqueued_first(sla, first):
    """Two Volcano Jobs the size of the cluster wait behind a third; only one fits through the overcommit
    door at a time. With the plugin, j3 (30m) goes in before j2 (1h), although j2 was created first."""
    jobs = [Job("j1", [PodSet("main", 4, 1)], 100, controller="volcano"),
            Job("j2", [PodSet("main", 4, 1)], 100, submit_time=1, controller="volcano", sla_waiting_time=3600),
            Job("j3", [PodSet("main", 4, 1)], 100, submit_time=2, controller="volcano", sla_waiting_time=1800)]
    s = starts(run(jobs, sla))
    other = "j3" if first == "j2" else "j2"
    end_of_j1 = s["j1"] + 100
    assert s[first] == end_of_j1 + 1  # Inqueue at the session when j1 ends, pods placed from the next one
    assert s[other] == s[first] + 100 + 1


# --- JobPipelinedFn: what the tier decides ------------------------------------------------------------------------

def starved_gang(sla) -> float:
    """Eight one-GPU jobs fill 2 nodes x 4 GPUs and end one by one (700 s .. 1400 s); a gang of 8 arrives at 1 s
    with a waiting time of 600 s; from 650 s a one-GPU job arrives every 50 s. The gang's start."""
    jobs = [one_gpu(f"s{i}", 0, run_time=700 + 100 * i) for i in range(8)]
    jobs.append(Job("big", [PodSet("main", 8, 1)], 100, submit_time=1, sla_waiting_time=600))
    jobs += [one_gpu(f"a{k}", 650 + 50 * k, run_time=2000) for k in range(40)]
    return starts(run(jobs, sla, n_nodes=2))["big"]


def test_in_a_tier_before_gang_a_late_gang_keeps_the_room_it_finds():
    """From 600 s on, each session keeps what the gang's trial finds, so no later one-GPU job takes a GPU that
    frees up: the gang starts when the last of the eight first jobs ends."""
    assert starved_gang(FIRST) == 1400


def test_after_gang_in_its_tier_nothing_is_kept():
    """gang's JobPipelinedFn votes Reject first for an incomplete gang: the plugin orders the gang first but
    its trial is discarded, the one-GPU jobs take each freed GPU, and the gang starts as late as without it."""
    without = starved_gang(None)
    assert starved_gang(DOC) == without > 1400


@pytest.mark.parametrize("flag", ["skip_repeated_failures", "remember_shortfall"])
def test_allocate_shortcuts_change_nothing_with_the_plugin(flag):
    """A stream of one-GPU jobs and gangs of 2 to 8 pods, half with a waiting time, under both placements and
    both orderings: the allocate shortcuts off give the same run."""
    jobs = []
    for k in range(60):
        size = 1 if k % 3 else 2 + k % 7
        jobs.append(Job(f"j{k}", [PodSet("main", size, 1)], 300 + 37 * (k % 11), submit_time=20 * k,
                        sla_waiting_time=400.0 if k % 2 else None))
    for sla in (DOC, FIRST, SlaPlugin(waiting_time=900, first_tier=True)):
        for ordering in ("skip", "strict"):
            fast = run(jobs, sla, n_nodes=3, ordering=ordering).jobs
            slow = run(jobs, sla, n_nodes=3, ordering=ordering, fast_paths=FastPaths(**{flag: False})).jobs
            assert fast.equals(slow), (sla, ordering)


# --- settings: one clear error -------------------------------------------------------------------------------------

BAD_SETTINGS = [
    ("a waiting time of zero", VolcanoSetup(sla=SlaPlugin(waiting_time=0)), "Volcano sla plugin", "waiting_time"),
    ("a waiting time as text", VolcanoSetup(sla=SlaPlugin(waiting_time="1h")), "Volcano sla plugin", "waiting_time"),
    ("first_tier not a bool", VolcanoSetup(sla=SlaPlugin(first_tier=1)), "Volcano sla plugin", "first_tier"),
    ("not a SlaPlugin", VolcanoSetup(sla={"waiting_time": 60}), "Volcano setup", "sla"),
]


@pytest.mark.parametrize("setup, obj, field", [c[1:] for c in BAD_SETTINGS], ids=[c[0] for c in BAD_SETTINGS])
def test_bad_settings_are_one_clear_error(setup, obj, field):
    with pytest.raises(ScenarioError) as info:
        setup.validate()
    assert [(p.obj, p.field) for p in info.value.problems] == [(obj, field)]


def test_a_bad_waiting_time_on_a_job():
    problems = Job("j", [PodSet("main", 1, 1)], 10, sla_waiting_time=-5).problems()
    assert [p.field for p in problems] == ["sla_waiting_time"]


# --- manifests -----------------------------------------------------------------------------------------------------

NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
        "status": {"capacity": {"nvidia.com/gpu": "4"}, "allocatable": {"nvidia.com/gpu": "4"}}}


def pod_spec() -> dict:
    return {"schedulerName": "volcano", "containers": [
        {"name": "c", "image": "trainer", "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}


def volcano_job(annotations: dict) -> dict:
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
            "metadata": {"name": "vj", "annotations": {"gangkit/run-time": "100s", **annotations}},
            "spec": {"minAvailable": 2, "tasks": [{"name": "worker", "replicas": 2, "template": {"spec": pod_spec()}}]}}


def batch_job_with_group(annotations: dict) -> list[dict]:
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "train", "annotations": {"gangkit/run-time": "100s"}},
           "spec": {"parallelism": 2, "completions": 2, "template": {
               "metadata": {"annotations": {"scheduling.k8s.io/group-name": "pg"}}, "spec": pod_spec()}}}
    group = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
             "metadata": {"name": "pg", "annotations": annotations}, "spec": {"minMember": 2}}
    return [job, group]


READ = [
    # (id, documents, Job.sla_waiting_time)
    ("a Volcano Job says nothing", [volcano_job({})], None),
    ("a Volcano Job's sla-waiting-time (its controller passes it to the PodGroup)", [volcano_job({"sla-waiting-time": "3s"})], 3.0),
    ("the volcano.sh/ spelling", [volcano_job({"volcano.sh/sla-waiting-time": "1h"})], 3600.0),
    ("both: volcano.sh/ is read first", [volcano_job({"volcano.sh/sla-waiting-time": "30m", "sla-waiting-time": "1h"})], 1800.0),
    ("a Go duration with every unit, as the plugin's own doc writes it",
     [volcano_job({"sla-waiting-time": "1h2m3s4ms5us6ns"})], 3723.004005006),
    ("a PodGroup of a batch/v1 Job", batch_job_with_group({"sla-waiting-time": "10m"}), 600.0),
]


@pytest.mark.parametrize("docs, expected", [c[1:] for c in READ], ids=[c[0] for c in READ])
def test_reading(docs, expected):
    sc = load_manifests([NODE, *docs])
    assert sc.jobs[0].sla_waiting_time == pytest.approx(expected) if expected else sc.jobs[0].sla_waiting_time is None


BAD = [
    # (id, documents, object, field, words)
    ("a number without a unit (Go's ParseDuration refuses it)", [volcano_job({"sla-waiting-time": "5"})],
     "VolcanoJob vj", "metadata.annotations.sla-waiting-time", "expected a Go duration above zero"),
    ("zero", [volcano_job({"volcano.sh/sla-waiting-time": "0s"})],
     "VolcanoJob vj", "metadata.annotations.volcano.sh/sla-waiting-time", "expected a Go duration above zero"),
    ("a word", batch_job_with_group({"sla-waiting-time": "soon"}),
     "PodGroup pg", "metadata.annotations.sla-waiting-time", "expected a Go duration above zero"),
]


@pytest.mark.parametrize("docs, obj, field, words", [c[1:] for c in BAD], ids=[c[0] for c in BAD])
def test_a_bad_annotation_is_one_clear_error(docs, obj, field, words):
    with pytest.raises(ScenarioError) as info:
        load_manifests([NODE, *docs])
    lines = [line for line in str(info.value).splitlines() if "sla-waiting-time" in line]
    assert len(lines) == 1 and lines[0].startswith(f"{obj}: {field}: ") and words in lines[0], lines


@pytest.mark.parametrize("docs", [[volcano_job({"sla-waiting-time": "90s"})], batch_job_with_group({"sla-waiting-time": "90s"})],
                         ids=["Volcano Job", "batch/v1 Job and its PodGroup"])
def test_the_waiting_time_is_written_back(docs):
    sc = load_manifests([NODE, *docs])
    again = load_manifests(dump_manifests(sc))
    assert [j.sla_waiting_time for j in again.jobs] == [90.0]
