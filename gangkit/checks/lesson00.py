"""Checks of lesson 00 (welcome): the first exercise, which shows how an exercise cell and its check work.

Exercise 0.1 asks how many jobs of ``three-workers`` finish under stack 'gang'. As the first message
a learner reads, it points at where the count is (the rows of ``result.jobs`` whose state is
'Finished', or ``summary()['jobs_finished']``) rather than at what went wrong, and says when a
count is impossible (negative, or more jobs than the scenario has).
"""

from __future__ import annotations

from gangkit.checks.common import counts_wrong_answers, figure, fmt, not_done, number

#: First hints of "not done yet" (the recipe follows after a wrong answer: common.not_done).
HINTS = {
    "0.1": "every job ends a run in exactly one state, and the summary counts the jobs in each.",
}



@counts_wrong_answers("0.1")
def check_00_jobs_finished(answer) -> bool:
    """Exercise 0.1: how many jobs of ``three-workers`` finish under stack 'gang'."""
    ex = "0.1"
    if answer is None:
        return not_done(ex, "run gk.simulate('three-workers', stack='gang') and count the jobs whose "
                            "state is 'Finished' (result.summary()['jobs_finished'] has it too).", hint=HINTS[ex])
    value = number(ex, answer, whole=True, what="jobs")
    if value is None:
        return False
    expected = figure("three-workers", "gang", "jobs_finished")
    total = figure("three-workers", "gang", "jobs_total")
    if value == expected:
        print(f"Correct! {fmt(expected)} of {fmt(total)} jobs finish: placed gang by gang, every job "
              "eventually gets all its GPUs at once, so none is left stuck.")
        return True
    if value > total:
        print(f"Exercise {ex}: you said {fmt(value)}, but three-workers has only {fmt(total)} jobs "
              "(Z, X and Y). Look at result.jobs: one row per job, with its state.")
    elif value < 0:
        print(f"Exercise {ex}: you said {fmt(value)}; a number of jobs cannot be negative.")
    else:
        print(f"Exercise {ex}: you said {fmt(value)}. Count the rows of result.jobs whose state is "
              "'Finished' (or read result.summary()['jobs_finished']), for the run with stack='gang'.")
    return False
