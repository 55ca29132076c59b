"""Checks of lesson 02 (gang admission): waits and finish times under gang placement, orderings, timeouts.

Exercises 2.1 to 2.3 ask for Y's wait under 'strict', when the second gang of ``two-gangs-deadlock``
finishes, and which ordering waits less on a ``mixed`` stream; 2.4 when YuniKorn's Hard style fails
``big``. A time that is off is matched against its neighbours in the same run (when the job
starts rather than how long it waited, the other ordering's or stack's answer, the timeout alone,
minutes instead of seconds) and against the figure the lesson itself prints for a neighbouring
question (2.1: Y's wait in the lesson's variant with Y arriving at t=200 s), and the message names
the one it is; an ordering is a name, and its spelling is forgiven. A wrong ordering is told how to
find the right one, not which one it is.
"""

from __future__ import annotations

import dataclasses
import functools
import numbers

from gangkit.checks.common import (
    TIME_TOLERANCE_S,
    close,
    counts_wrong_answers,
    figure,
    fmt,
    kind,
    minutes_note,
    not_done,
    number,
)
from gangkit.simulate import simulate
from gangkit.workloads.scenarios import mixed

#: The stream of ``check_02_best_ordering``.
MIXED_ARGS = {"n_jobs": 300, "n_nodes": 32, "load": 0.9, "seed": 1}
#: Exercise 2.4: big's YuniKorn placeholder timeout (s), with gangSchedulingStyle Hard.
HARD_TIMEOUT_S = 1200

#: First hints of "not done yet" (the recipe follows after a wrong answer: common.not_done).
HINTS = {
    "2.1": "under strict, a job that fits still waits while an earlier job that does not fit heads the queue.",
    "2.2": "gang by gang, the second job waits until the first has finished and released all its GPUs.",
    "2.3": "run the same stream under both orderings and compare the mean wait of all jobs.",
    "2.4": "with gangSchedulingStyle Hard, YuniKorn fails the application when its placeholders time out.",
}



@functools.lru_cache(maxsize=None)
def _job_rows(scenario: str, stack: str, ordering: str | None = None) -> tuple:
    """(job, submit_s, start_s, finish_s, wait_s, state) for every job, in submission order."""
    jobs = simulate(scenario, stack=stack, ordering=ordering).jobs
    return tuple(
        (r.job, float(r.submit_s), float(r.start_s), float(r.finish_s), float(r.wait_s), r.state)
        for r in jobs.itertuples()
    )


def _job_row(scenario: str, stack: str, name: str, ordering: str | None = None) -> dict:
    for row in _job_rows(scenario, stack, ordering):
        if row[0] == name:
            return dict(zip(("job", "submit_s", "start_s", "finish_s", "wait_s", "state"), row))
    raise KeyError(name)


#: Lesson 02, section 3: Y's submission time in the lesson's own head-of-line example (the story says 60 s).
LESSON_LATE_Y_S = 200.0


@functools.lru_cache(maxsize=None)
def _lesson_late_y_wait() -> float:
    """Y's wait under 'gang', ordering 'strict', in the lesson's variant of ``three-workers`` (Y at t=200 s)."""
    from gangkit.workloads.scenarios import three_workers

    story = three_workers()
    late = dataclasses.replace(story, jobs=[dataclasses.replace(j, submit_time=LESSON_LATE_Y_S) if j.name == "Y" else j
                                            for j in story.jobs])
    return float(simulate(late, stack="gang", ordering="strict").jobs.set_index("job").loc["Y", "wait_s"])


@functools.lru_cache(maxsize=None)
def _mixed_summaries() -> tuple:
    """(ordering, mean wait, longest wait) in s for 'strict' and 'skip' on the exercise's stream, under 'gang'."""
    out = []
    for o in ("strict", "skip"):
        f = simulate(mixed(**MIXED_ARGS), stack="gang", ordering=o).summary()
        out.append((o, f["mean_wait_s"], f["max_wait_s"]))
    return tuple(out)


def _mixed_mean_waits() -> tuple:
    """(ordering, mean wait in s) for 'strict' and 'skip' on the exercise's ``mixed`` stream, under 'gang'."""
    return tuple((o, mean) for o, mean, _ in _mixed_summaries())


@counts_wrong_answers("2.1")
def check_02_y_wait_strict(answer) -> bool:
    """Exercise 2.1: the wait (s) of job Y in ``three-workers`` under stack 'gang', ordering 'strict'."""
    ex = "2.1"
    if answer is None:
        return not_done(ex, "simulate 'three-workers' with stack='gang' and ordering='strict', then read "
                            "the wait_s of Y's row in result.jobs.", hint=HINTS[ex])
    value = number(ex, answer, whole=False, what="Y's wait in seconds")
    if value is None:
        return False
    y = _job_row("three-workers", "gang", "Y", "strict")
    x = _job_row("three-workers", "gang", "X", "strict")
    y_skip = _job_row("three-workers", "gang", "Y", "skip")
    expected = y["wait_s"]
    if close(value, expected, TIME_TOLERANCE_S):
        print(f"Correct! Y waits {fmt(expected)} s: under 'strict', X is ahead of Y in the queue and cannot "
              "fit yet, so it blocks Y even though Y's one GPU is free.")
        return True
    if close(value, y_skip["wait_s"], TIME_TOLERANCE_S):
        print(f"Exercise {ex}: you said {fmt(value)}. That is Y's wait under ordering='skip', where the gang "
              "scheduler moves past X (which does not fit) and starts Y. Under 'strict', X blocks the jobs "
              "behind it: simulate with ordering='strict'.")
    elif close(value, _lesson_late_y_wait(), TIME_TOLERANCE_S):
        longer = "longer" if expected > value else "a different time"
        print(f"Exercise {ex}: you said {fmt(value)}. That is the lesson's own figure (section 3), for a "
              f"variant of the story where Y arrives at t={fmt(LESSON_LATE_Y_S)} s. In the original "
              f"'three-workers', Y arrives at t={fmt(y['submit_s'])} s, so it waits behind X for {longer}: simulate "
              "'three-workers' itself with stack='gang' and ordering='strict', and read Y's wait_s.")
    elif close(value, y["start_s"], TIME_TOLERANCE_S):
        print(f"Exercise {ex}: you said {fmt(value)}. That is when Y starts; its wait counts from its "
              f"submission at t={fmt(y['submit_s'])} s (wait_s = start_s - submit_s).")
    elif close(value, x["wait_s"], TIME_TOLERANCE_S):
        print(f"Exercise {ex}: you said {fmt(value)}. That is X's wait; the question asks for Y's row of "
              "result.jobs.")
    elif close(value, y["submit_s"], TIME_TOLERANCE_S):
        print(f"Exercise {ex}: you said {fmt(value)}. That is when Y is submitted; its wait runs from "
              "then until it starts (column wait_s).")
    else:
        print(f"Exercise {ex}: you said {fmt(value)}. Look at result.jobs for the run with stack='gang' "
              f"and ordering='strict': Y's row, column wait_s.{minutes_note(value, expected)}")
    return False


@counts_wrong_answers("2.2")
def check_02_gang_finishes(answer) -> bool:
    """Exercise 2.2: when (s) the second job of ``two-gangs-deadlock`` finishes under stack 'gang'."""
    ex = "2.2"
    if answer is None:
        return not_done(ex, "simulate 'two-gangs-deadlock' with stack='gang' and read the finish_s of the "
                            "second job (B) in result.jobs.", hint=HINTS[ex])
    value = number(ex, answer, whole=False, what="a time in seconds",
                   nan_hint=" Under stack='pod' neither job ever finishes; simulate with stack='gang'.")
    if value is None:
        return False
    rows = _job_rows("two-gangs-deadlock", "gang")
    first = dict(zip(("job", "submit_s", "start_s", "finish_s", "wait_s", "state"), rows[0]))
    second = dict(zip(("job", "submit_s", "start_s", "finish_s", "wait_s", "state"), rows[1]))
    expected = second["finish_s"]
    pod_end = figure("two-gangs-deadlock", "pod", "makespan_s")
    if close(value, expected, TIME_TOLERANCE_S):
        print(f"Correct! {second['job']} finishes at t={fmt(expected)} s: the gang scheduler places "
              f"{first['job']} whole first, and {second['job']} whole when {first['job']}'s GPUs come back, "
              "one after the other instead of both stuck.")
        return True
    if close(value, first["finish_s"], TIME_TOLERANCE_S):
        print(f"Exercise {ex}: you said {fmt(value)}. At t={fmt(value)} s the first job ({first['job']}) "
              f"finishes and {second['job']} only starts; {second['job']} then runs for its own run time. "
              f"Read {second['job']}'s finish_s.")
    elif close(value, pod_end, TIME_TOLERANCE_S):
        print(f"Exercise {ex}: you said {fmt(value)}. That is the end of the run under stack='pod' (its "
              "horizon), where nothing finishes. Simulate with stack='gang'.")
    elif close(value, second["wait_s"], TIME_TOLERANCE_S) and value != expected:
        print(f"Exercise {ex}: you said {fmt(value)}. That is how long {second['job']} waits before it "
              "starts; the question asks when it finishes (column finish_s).")
    else:
        print(f"Exercise {ex}: you said {fmt(value)}. Look at result.jobs for the run with stack='gang': "
              f"the row of {second['job']}, column finish_s.{minutes_note(value, expected)}")
    return False


@counts_wrong_answers("2.3")
def check_02_best_ordering(answer) -> bool:
    """Exercise 2.3: the ordering ('strict' or 'skip') with the lower mean wait on a ``mixed`` stream.

    The stream is ``gk.scenarios.mixed(n_jobs=300, n_nodes=32, load=0.9, seed=1)`` under stack
    'gang'; both orderings are simulated and compared on ``summary()['mean_wait_s']``; if they
    tie, both answers are right. Case and surrounding spaces are forgiven.
    """
    ex = "2.3"
    if answer is None:
        return not_done(ex, "simulate gk.scenarios.mixed(n_jobs=300, n_nodes=32, load=0.9, seed=1) with "
                            "stack='gang' twice, once with ordering='strict' and once with ordering='skip', "
                            "and compare result.summary()['mean_wait_s'].", hint=HINTS[ex])
    if not isinstance(answer, str):
        got = kind(answer)
        if isinstance(answer, numbers.Real) and not isinstance(answer, bool):
            got = f"the number {fmt(float(answer))}"
        print(f"Exercise {ex}: expected the name of an ordering, the text 'strict' or 'skip' (in quotes), "
              f"but got {got}. Compare the two mean waits and answer with the name of the better ordering.")
        return False
    name = answer.strip().lower()
    waits = dict(_mixed_mean_waits())
    if name not in waits:
        print(f"Exercise {ex}: you said {answer!r}; the question compares the orderings 'strict' and 'skip'.")
        return False
    best = min(waits.values())
    winners = [o for o, w in waits.items() if w == best]
    spelled = "" if answer == name else f" (gangkit spells it {name!r})"
    if name in winners:
        if len(winners) > 1:
            print(f"Correct!{spelled} Both orderings give the same mean wait here ({fmt(best)} s), so either "
                  "answer is right.")
        else:
            other = next(o for o in waits if o != name)
            print(f"Correct!{spelled} Mean wait {fmt(waits[name])} s under {name!r} against "
                  f"{fmt(waits[other])} s under {other!r}: 'skip' starts the small jobs that fit while a "
                  "large gang waits for room, instead of letting that gang block the whole queue.")
        return True
    longest = {o: m for o, _, m in _mixed_summaries()}
    other = next(o for o in waits if o != name)
    aside = ""
    if longest[name] < longest[other]:
        aside = (f" It does give the shorter longest wait here (max_wait_s {fmt(longest[name])} s against "
                 f"{fmt(longest[other])} s), but the question is about the mean wait of all jobs.")
    print(f"Exercise {ex}: you said {name!r}: that is not the ordering with the lower mean wait on this "
          f"stream.{aside} Build the stream with seed=1 (the lesson's section 3 used seed 0), simulate it "
          "once per ordering with stack='gang', print result.summary()['mean_wait_s'] of both runs, and "
          "answer with the ordering whose mean is lower.")
    return False


@functools.lru_cache(maxsize=None)
def _big_under_yunikorn(timeout: float | None, style: str | None) -> tuple:
    """(state, time the run took big out or started it, submit time) of big in lesson02.contended()."""
    from gangkit.lessons import lesson02

    sc = lesson02.with_big(lesson02.contended(), placeholder_timeout=timeout, gang_style=style)
    r = simulate(sc, stack="yunikorn")
    big = r.jobs.set_index("job").loc["big"]
    gone = r.events[(r.events["event"] == "deactivated") & (r.events["job"] == "big")]["time_s"]
    return big["state"], float(gone.iloc[0]) if len(gone) else float(big["start_s"]), float(big["submit_s"])


@counts_wrong_answers("2.4")
def check_02_hard_timeout(answer) -> bool:
    """Exercise 2.4: when (s) ``big`` of ``lesson02.contended()`` fails under stack 'yunikorn'
    with ``placeholder_timeout=1200`` and ``gang_style='Hard'``."""
    ex = "2.4"
    if answer is None:
        return not_done(ex, "make the scenario with lesson02.with_big(lesson02.contended(), placeholder_timeout=1200, "
                            "gang_style='Hard'), simulate it with stack='yunikorn', and read when big is deactivated "
                            "(result.events, event 'deactivated').", hint=HINTS[ex])
    value = number(ex, answer, whole=False, what="a time in seconds",
                   nan_hint=" big never starts, so its start_s is NaN; look for its 'deactivated' event instead.")
    if value is None:
        return False
    state, expected, submit = _big_under_yunikorn(float(HARD_TIMEOUT_S), "Hard")
    if close(value, expected, TIME_TOLERANCE_S):
        print(f"Correct! big is {state} at t={fmt(expected)} s: its first placeholder was allocated when it "
              f"arrived at t={fmt(submit)} s, and {HARD_TIMEOUT_S} s later, with its placeholders still not "
              "complete, the Hard style fails the application and releases what it held.")
        return True
    _, soft_start, _ = _big_under_yunikorn(float(HARD_TIMEOUT_S), "Soft")
    _, default_end, _ = _big_under_yunikorn(None, "Hard")
    if close(value, HARD_TIMEOUT_S, TIME_TOLERANCE_S):
        print(f"Exercise {ex}: you said {fmt(value)}. That is the timeout itself; the timer starts when the "
              f"first placeholder is allocated, and big arrives at t={fmt(submit)} s.")
    elif close(value, default_end, TIME_TOLERANCE_S):
        print(f"Exercise {ex}: you said {fmt(value)}. That is the failure time with the default timeout of "
              f"15 minutes; set placeholder_timeout={HARD_TIMEOUT_S} on big.")
    elif close(value, soft_start, TIME_TOLERANCE_S):
        print(f"Exercise {ex}: you said {fmt(value)}. That is when big starts with the Soft style, which falls "
              "back to normal scheduling after the timeout; set gang_style='Hard'.")
    else:
        print(f"Exercise {ex}: you said {fmt(value)}. Look for big's 'deactivated' event in result.events of "
              f"the yunikorn run.{minutes_note(value, expected)}")
    return False
