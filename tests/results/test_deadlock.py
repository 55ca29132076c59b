"""The deadlock verdict (gangkit.results.deadlock): a job's terminal state, and which stacks reach a deadlock."""

from types import SimpleNamespace

import pytest

from gangkit import simulate
from gangkit.lessons.lesson01 import deadlock_scenario
from gangkit.lessons.lesson07 import with_min_member
from gangkit.results.deadlock import terminal_state


def job(state="Pending", bound=0, progressing=False, started_at=None):
    """The fields of a JobState the verdict reads."""
    return SimpleNamespace(state=state, bound=bound, progressing=progressing, started_at=started_at)


@pytest.mark.parametrize("js, quiescent, expected", [
    (job(bound=2), True, "Deadlocked"),
    (job(bound=2), False, "WaitingAtEnd"),
    (job(bound=2, started_at=5.0), False, "RunningAtEnd"),
    (job(bound=0), True, "WaitingAtEnd"),
    (job(bound=4, progressing=True, started_at=0.0), True, "RunningAtEnd"),
    (job(state="Finished"), True, "Finished"),
    (job(state="Failed", bound=2), True, "Failed"),
    (job(state="Deactivated"), True, "Deactivated"),
    (job(state="Rejected"), True, "Rejected"),
], ids=[
    "pods bound, gang incomplete, nothing can change: Deadlocked",
    "the same job when the horizon cuts a busy run is only WaitingAtEnd",
    "a job that started and still holds pods when the horizon cuts the run is RunningAtEnd",
    "a job that holds nothing in a quiescent run is WaitingAtEnd, not Deadlocked",
    "a job that progresses is never Deadlocked",
    "a finished job stays Finished",
    "a failed job stays Failed though it held pods",
    "a deactivated job stays Deactivated",
    "a rejected job stays Rejected",
])
def test_terminal_state(js, quiescent, expected):
    assert terminal_state(js, quiescent) == expected


@pytest.mark.parametrize("stack, min_member, deadlock, deadlocked_jobs", [
    ("pod", None, True, 2),
    ("gang", 1, True, 2),
    ("gang", None, False, 0),
    ("kueue+pod", None, False, 0),
], ids=[
    "pod by pod, two interleaved gangs each bind half and deadlock",
    "a gang whose minMember is below its pod count binds part of itself and deadlocks",
    "whole gangs never bind part of a job",
    "Kueue admits one workload at a time by quota, so pod by pod behind it finishes both",
])
def test_which_stacks_deadlock_two_gangs(stack, min_member, deadlock, deadlocked_jobs):
    r = simulate(with_min_member(deadlock_scenario(), min_member), stack=stack)
    assert (r.deadlock, r.summary()["jobs_deadlocked"], len(r.holders)) == (deadlock, deadlocked_jobs, deadlocked_jobs)


@pytest.mark.parametrize("stack, expected", [
    ("pod", "deadlock at t=0 s: 2 jobs hold GPUs without progress\n"
            "  A holds 2 GPUs on node-0:1, node-2:1; waits for A-2, A-3\n"
            "  B holds 2 GPUs on node-1:1, node-3:1; waits for B-2, B-3"),
    ("gang", "no deadlock"),
], ids=["pod by pod, the report names each holder, its nodes and its waiting pods",
        "a run without a deadlock says so"])
def test_deadlock_report(stack, expected):
    assert simulate(deadlock_scenario(), stack=stack).deadlock_report() == expected
