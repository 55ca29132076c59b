"""The exercise checks: a table of answers a learner might give, and what each check must say.

Each row: the check, a name that reads like the situation, the answer, whether the check must
return True, and phrases its printed message must contain. Adding a behaviour is adding a row.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import gangkit as gk
from gangkit import checks
from gangkit.checks import (
    check_00_jobs_finished,
    check_01_effective_utilization,
    check_01_held_idle,
    check_01_min_nodes,
    check_02_best_ordering,
    check_02_gang_finishes,
    check_02_y_wait_strict,
    common,
)
from gangkit.checks import lesson01 as checks_01
from gangkit.checks import lesson02 as checks_02
from gangkit.checks import lesson03 as checks_03
from gangkit.checks import lesson04 as checks_04
from gangkit.checks import lesson05 as checks_05
from gangkit.checks import lesson06 as checks_06
from gangkit.lessons import lesson06

CHECKS = [getattr(checks, name) for name in checks.__all__]

# (check, case name, answer, passes, phrases the message must contain)
CASES = [
    # --- 0.1: jobs of three-workers that finish under 'gang'
    (check_00_jobs_finished, "right", 3, True, ["Correct!", "3 of 3 jobs finish"]),
    (check_00_jobs_finished, "right as a float", 3.0, True, ["Correct!"]),
    (check_00_jobs_finished, "right as a numpy int", np.int64(3), True, ["Correct!"]),
    (check_00_jobs_finished, "off by one", 2, False, ["you said 2", "'Finished'", "jobs_finished"]),
    (check_00_jobs_finished, "more jobs than exist", 5, False, ["only 3 jobs"]),
    (check_00_jobs_finished, "a string", "3", False, ["expected a whole number", "Remove the quotes: answer = 3"]),
    (check_00_jobs_finished, "a bool", True, False, ["True/False value"]),
    # --- 1.1: GPUs held idle at the end of two-gangs-deadlock under 'pod'
    (check_01_held_idle, "right", 6, True, ["Correct!", "All 6 GPUs", "A 3 and B 3", "exercise 1.2"]),
    (check_01_held_idle, "the lesson's four-node answer", 4, False, ["the lesson's run on four nodes"]),
    (check_01_held_idle, "what one job holds", 3, False, ["you said 3", "what one job holds", "result.holders"]),
    (check_01_held_idle, "more nodes, no deadlock", 0, False, ["created interleaved", "deadlock_report()"]),
    (check_01_held_idle, "what both jobs ask for", 8, False, ["the cluster has only 6 GPUs"]),
    (check_01_held_idle, "negative", -1, False, ["cannot be negative"]),
    (check_01_held_idle, "a fraction", 3.5, False, ["expected a whole number", "no fraction"]),
    (check_01_held_idle, "a string", "4", False, ["expected a whole number (an int, like 4) of GPUs", "got the text '4'"]),
    (check_01_held_idle, "a word", "four", False, ["got the text 'four'", "without quotes"]),
    (check_01_held_idle, "a list", [4], False, ["got a list"]),
    (check_01_held_idle, "a pandas Series", pd.Series([2, 2]), False, ["got a pandas Series", ".iloc[0]"]),
    # --- 1.2: smallest number of one-GPU nodes without deadlock
    (check_01_min_nodes, "right", 7, True, ["Correct!", "With 7 nodes", "with 6 nodes the simulator reports a deadlock"]),
    (check_01_min_nodes, "off by one below", 6, False, ["you said 6", "A has 3 of its 4 workers bound",
                                                        "B has 3 of its 4 workers bound"]),
    (check_01_min_nodes, "off by one above", 8, False, ["does not deadlock, but a smaller one does not either", "try 7"]),
    (check_01_min_nodes, "enough for one job", 4, False, ["with 4 nodes the simulator reports a deadlock",
                                                          "A has 2 of its 4 workers bound"]),
    (check_01_min_nodes, "the degenerate one-node cluster", 1, False, ["B waits holding nothing",
                                                                       "neither job could ever run", "not rejected"]),
    (check_01_min_nodes, "fewer nodes than workers", 3, False, ["with 3 nodes", "neither job could ever run"]),
    (check_01_min_nodes, "no nodes", 0, False, ["at least one node"]),
    (check_01_min_nodes, "a word", "seven", False, ["expected a whole number (an int, like 4) of nodes"]),
    # --- 1.3: effective utilization of three-workers under 'pod'
    (check_01_effective_utilization, "right", 0.6667, True, ["Correct!", "0.6667", "lower than allocated"]),
    (check_01_effective_utilization, "right as a fraction", 2 / 3, True, ["Correct!"]),
    (check_01_effective_utilization, "right within 0.005", 0.67, True, ["Correct!"]),
    (check_01_effective_utilization, "right as a percentage", 66.7, True, ["Correct!", "66.7 % is 0.6667 as a fraction",
                                                                           "gangkit reports fractions"]),
    (check_01_effective_utilization, "allocated instead of effective", 1.0, False, ["That is the allocated utilization",
                                                                                    "useful_gpu_s"]),
    (check_01_effective_utilization, "allocated as a percentage", 100, False, ["allocated utilization"]),
    (check_01_effective_utilization, "the held-idle share", 0.3333, False, ["share of GPU-seconds held idle"]),
    (check_01_effective_utilization, "close but outside the tolerance", 0.66, False, ["close, but more than 0.005 away"]),
    (check_01_effective_utilization, "the lesson's figure for the first 600 s", 0.5, False,
     ["the figure the lesson printed for the first 600 s", "whole run", "no GPU is held idle", "4 GPUs x 900 s"]),
    (check_01_effective_utilization, "the lesson's figure as a percentage", 50, False, ["first 600 s"]),
    (check_01_effective_utilization, "Y's work left out", 0.5833, False, ["some jobs only", "Y is left out"]),
    (check_01_effective_utilization, "X's and Z's work left out", 0.0833, False, ["Z and X are left out"]),
    (check_01_effective_utilization, "far off", 0.2, False, ["useful GPU-seconds divided by capacity GPU-seconds"]),
    (check_01_effective_utilization, "above 100", 150, False, ["a fraction from 0 to 1"]),
    (check_01_effective_utilization, "negative", -0.5, False, ["a fraction from 0 to 1"]),
    (check_01_effective_utilization, "a string", "0.67", False, ["expected a number", "answer = 0.67"]),
    (check_01_effective_utilization, "the whole summary", {"effective_utilization": 0.6667}, False,
     ["got a dict", "result.summary()['...']"]),
    # --- 2.1: Y's wait under 'gang' with ordering 'strict'
    (check_02_y_wait_strict, "right", 540, True, ["Correct!", "Y waits 540 s", "blocks Y"]),
    (check_02_y_wait_strict, "right as a float", 540.0, True, ["Correct!"]),
    (check_02_y_wait_strict, "the 'skip' answer", 0, False, ["under ordering='skip'", "simulate with ordering='strict'"]),
    (check_02_y_wait_strict, "the lesson's own figure, Y arriving at t=200 s", 400, False,
     ["That is the lesson's own figure (section 3)", "Y arrives at t=200 s", "Y arrives at t=60 s",
      "simulate 'three-workers' itself"]),
    (check_02_y_wait_strict, "when Y starts", 600, False, ["That is when Y starts", "submission at t=60 s"]),
    (check_02_y_wait_strict, "when Y is submitted", 60, False, ["That is when Y is submitted"]),
    (check_02_y_wait_strict, "off by one", 541, False, ["you said 541", "Y's row, column wait_s"]),
    (check_02_y_wait_strict, "minutes", 9, False, ["gangkit reports times in seconds"]),
    (check_02_y_wait_strict, "a string", "540", False, ["expected a number", "answer = 540"]),
    # --- 2.2: when the second job of two-gangs-deadlock finishes under 'gang'
    (check_02_gang_finishes, "right", 1200, True, ["Correct!", "B finishes at t=1200 s"]),
    (check_02_gang_finishes, "when the first job finishes", 600, False, ["the first job (A) finishes and B only starts"]),
    (check_02_gang_finishes, "the 'pod' horizon", 2592000, False, ["the end of the run under stack='pod'"]),
    (check_02_gang_finishes, "NaN from the 'pod' run", math.nan, False, ["NaN", "simulate with stack='gang'"]),
    (check_02_gang_finishes, "off by one", 1201, False, ["you said 1201", "the row of B, column finish_s"]),
    (check_02_gang_finishes, "minutes", 20, False, ["gangkit reports times in seconds"]),
    (check_02_gang_finishes, "a string", "1200", False, ["expected a number"]),
    # --- 2.3: the ordering with the lower mean wait on the mixed stream
    (check_02_best_ordering, "right", "skip", True, ["Correct!", "under 'skip' against", "under 'strict'"]),
    (check_02_best_ordering, "right, other spelling", " Skip", True, ["Correct!", "gangkit spells it 'skip'"]),
    (check_02_best_ordering, "'strict' instead of 'skip'", "strict", False,
     ["you said 'strict'", "not the ordering with the lower mean wait", "the shorter longest wait here",
      "seed=1", "print result.summary()['mean_wait_s'] of both runs"]),
    (check_02_best_ordering, "an ordering not compared", "easy-backfill", False, ["compares the orderings 'strict' and 'skip'"]),
    (check_02_best_ordering, "a mean wait instead of a name", 520.519, False, ["expected the name of an ordering",
                                                                                "got the number 520.519"]),
    (check_02_best_ordering, "a bool", True, False, ["expected the name of an ordering"]),
]


@pytest.mark.parametrize("check, answer, passes, phrases", [c[:1] + c[2:] for c in CASES],
                         ids=[f"{c[0].__name__}: {c[1]}" for c in CASES])
def test_check_answers(capsys, check, answer, passes, phrases):
    assert check(answer) is passes
    out = capsys.readouterr().out
    for phrase in phrases:
        assert phrase in out, f"expected {phrase!r} in:\n{out}"
    if passes:
        assert out.startswith("Correct!")
    else:
        assert "Correct" not in out


@pytest.fixture(autouse=True)
def fresh_kernel(monkeypatch):
    """Each test starts as a fresh kernel does: no wrong answer given yet."""
    monkeypatch.setattr(common, "WRONG_ANSWERS", common.Counter())


@pytest.mark.parametrize("check", CHECKS, ids=lambda f: f.__name__)
def test_none_means_not_done_yet(capsys, check):
    assert check(None) is False
    out = capsys.readouterr().out
    assert out.startswith("Exercise ")
    assert ": not done yet — hint: " in out  # first the idea, not the recipe
    assert out.count("\n") == 1  # one line: a learner sees a hint, not a wall of text


WRONG = {  # a typical wrong answer per check, to see the recipe follow the hint
    "check_00_jobs_finished": 99, "check_01_held_idle": 99, "check_01_min_nodes": 99,
    "check_01_effective_utilization": 0.99, "check_02_y_wait_strict": 99999, "check_02_gang_finishes": 99999,
    "check_02_best_ordering": "nonsense", "check_02_hard_timeout": 99999,
    "check_03_lending_limit": 99, "check_03_preempted_workload": "nobody", "check_03_strategy_for_big_job": "FIFO",
    "check_04_saturation_load": 0.01, "check_04_policy_for_big_gangs": "nonsense", "check_04_starved_gang_wait": 1,
    "check_05_classify_waits": ["Running"], "check_05_node_initialization": 99999, "check_05_start_alone": 99999, "check_06_start_with_image_pull": 1,
    "check_06_warm_nodes": 99, "check_06_nine_of_ten": 99999, "check_06_deactivated_at": 1,
    "check_07_pods_ready_timeout": 120, "check_07_independent_saving": 5,
    "check_08_design": 5, "check_08_node_down": 5,
}


@pytest.mark.parametrize("check", CHECKS, ids=lambda f: f.__name__)
def test_after_a_wrong_answer_not_done_shows_the_recipe(capsys, check):
    check(None)
    hint = capsys.readouterr().out
    assert check(WRONG[check.__name__]) is False
    capsys.readouterr()
    check(None)
    recipe = capsys.readouterr().out
    assert ": not done yet — " in recipe and "hint:" not in recipe and recipe != hint



@pytest.mark.parametrize("check", CHECKS, ids=lambda f: f.__name__)
def test_every_check_has_cases(check):
    names = {c[1] for c in CASES if c[0] is check}
    assert "right" in names and any(c[3] is False for c in CASES if c[0] is check)


def test_messages_are_deterministic(capsys):
    """nbval compares the printed text exactly: the same answer gives the same words, twice."""
    for check, _, answer, _, _ in CASES:
        check(answer)
        first = capsys.readouterr().out
        check(answer)
        assert capsys.readouterr().out == first


def test_expected_answers_come_from_the_simulator():
    """The right answers in the table above are what the library says today."""
    pod = gk.simulate("two-gangs-deadlock", stack="pod").summary()
    assert pod["held_idle_gpus_at_end"] == 4
    assert gk.simulate("three-workers", stack="pod").summary()["effective_utilization"] == 0.6667
    jobs = gk.simulate("three-workers", stack="gang", ordering="strict").jobs.set_index("job")
    assert jobs.loc["Y", "wait_s"] == 540
    jobs = gk.simulate("two-gangs-deadlock", stack="gang").jobs.set_index("job")
    assert jobs.loc["B", "finish_s"] == 1200
    sweep = {n: d for n, d, _, _ in checks_01._min_nodes_sweep()}
    assert [n for n, d in sweep.items() if not d] == list(range(7, checks_01.MIN_NODES_SWEEP + 1))
    waits = dict(checks_02._mixed_mean_waits())
    assert waits["skip"] < waits["strict"]


def test_min_nodes_below_the_gang_size_is_a_deadlock_not_a_rejection():
    """The degenerate case the hint warns about: fewer one-GPU nodes than workers."""
    for n in (1, 2, 3):
        result = gk.simulate(checks_01.two_four_worker_jobs(n), stack="pod")
        assert result.deadlock
        assert result.summary()["jobs_rejected"] == 0


def test_ordering_tie_accepts_both(capsys, monkeypatch):
    monkeypatch.setattr(checks_02, "_mixed_mean_waits", lambda: (("strict", 100.0), ("skip", 100.0)))
    for name in ("strict", "skip"):
        assert check_02_best_ordering(name) is True
        assert "Both orderings give the same mean wait here (100 s)" in capsys.readouterr().out


# --- Lesson 03: queues and quota (appended; the checks are in checks.__all__, so the generic tests above cover them)
from gangkit.checks import (  # noqa: E402
    check_03_lending_limit,
    check_03_preempted_workload,
    check_03_strategy_for_big_job,
)

CASES_03 = [
    # --- 3.1: team B's lendingLimit that keeps exactly 8 of its 12 GPUs
    (check_03_lending_limit, "right", 4, True, ["Correct!", "lendingLimit 4", "still gets 8 GPUs", "12 - 4 = 8"]),
    (check_03_lending_limit, "right as a float", 4.0, True, ["Correct!"]),
    (check_03_lending_limit, "the GPUs to keep instead of the limit", 8, False,
     ["8 is what team B must keep; lendingLimit is what it lends", "gets only 4"]),
    (check_03_lending_limit, "safe but lends too little", 2, False, ["team B keeps 10 GPUs", "try larger values"]),
    (check_03_lending_limit, "lends too much", 6, False, ["team A borrows 6", "gets only 6", "Try smaller values"]),
    (check_03_lending_limit, "above the nominal quota", 13, False, ["more than team B's nominalQuota (12)",
                                                                   "as with no lendingLimit at all", "gets 0 GPUs"]),
    (check_03_lending_limit, "negative", -1, False, ["cannot be negative"]),
    (check_03_lending_limit, "a fraction", 4.5, False, ["no fraction"]),
    (check_03_lending_limit, "a string", "4", False, ["got the text '4'", "answer = 4"]),
    # --- 3.2: the workload Kueue preempts in lesson03.reclaim_puzzle()
    (check_03_preempted_workload, "right", "a-2", True, ["Correct!", "preempts a-2", "InCohortReclamation", "minimal"]),
    (check_03_preempted_workload, "right with namespace and odd spelling", " Team-A/A-2 ", True, ["Correct!"]),
    (check_03_preempted_workload, "right as a list", ["team-a/a-2"], True, ["Correct!"]),
    (check_03_preempted_workload, "the first candidate, put back", "a-3", False,
     ["first candidate Kueue tries", "alone it frees too little for b-1", "put back"]),
    (check_03_preempted_workload, "both candidates tried", ["a-2", "a-3"], False, ["too many", "only a-2 is really preempted"]),
    (check_03_preempted_workload, "the oldest", "a-1", False, ["the last candidate Kueue would try"]),
    (check_03_preempted_workload, "the preemptor", "b-1", False, ["b-1 is the preemptor"]),
    (check_03_preempted_workload, "a name not in the setup", "a-4", False, ["no workload named 'a-4'", "a-1, a-2, a-3, b-1"]),
    (check_03_preempted_workload, "a number", 2, False, ["expected the name of a workload", "got the number 2"]),
    (check_03_preempted_workload, "an empty list", [], False, ["expected the name of a workload"]),
    # --- 3.3: the queueing strategy under which 'big' waits less
    (check_03_strategy_for_big_job, "right", "StrictFIFO", True, ["Correct!", "big waits 750 s under StrictFIFO",
                                                                  "4050 s under BestEffortFIFO", "small jobs pay"]),
    (check_03_strategy_for_big_job, "right, short spelling", "strict", True, ["Correct!", "Kueue spells it 'StrictFIFO'"]),
    (check_03_strategy_for_big_job, "the better one for the small jobs", "BestEffortFIFO", False,
     ["better strategy for the small jobs", "the question is about big"]),
    (check_03_strategy_for_big_job, "a placement ordering instead", "skip", False,
     ["Kueue's queueing strategies are 'StrictFIFO' and 'BestEffortFIFO'"]),
    (check_03_strategy_for_big_job, "a wait instead of a name", 750, False, ["expected the name of a queueing strategy",
                                                                            "got the number 750"]),
]
CASES.extend(CASES_03)  # so that test_every_check_has_cases and test_messages_are_deterministic see them


@pytest.mark.parametrize("check, answer, passes, phrases", [c[:1] + c[2:] for c in CASES_03],
                         ids=[f"{c[0].__name__}: {c[1]}" for c in CASES_03])
def test_check_answers_03(capsys, check, answer, passes, phrases):
    test_check_answers(capsys, check, answer, passes, phrases)


def test_lesson03_expected_answers_come_from_the_simulator():
    """The right answers in the table above are what the library says today."""
    from gangkit.lessons import lesson03

    assert checks_03._lending_expected() == 4 and checks_03._lending_kept(4) == 8
    sc = lesson03.reclaim_puzzle()
    assert list(lesson03.preemptions(gk.simulate(sc, stack="kueue+gang"), sc)["victim"]) == ["team-a/a-2"]
    waits = {s: big for s, big, _ in checks_03._big_waits()}
    assert waits == {"StrictFIFO": 750.0, "BestEffortFIFO": 4050.0}


def test_strategy_tie_accepts_both(capsys, monkeypatch):
    monkeypatch.setattr(checks_03, "_big_waits", lambda: (("StrictFIFO", 100.0, 5.0), ("BestEffortFIFO", 100.0, 0.0)))
    for name in ("StrictFIFO", "BestEffortFIFO"):
        assert check_03_strategy_for_big_job(name) is True
        assert "Both strategies give big the same wait here (100 s)" in capsys.readouterr().out


# --- lesson 02, exercises 2.1 and 2.3: the lesson's own figure, and a wrong ordering; 2.4: a YuniKorn Hard timeout --

CASES_02_HOLDING = [
    (checks.check_02_hard_timeout, "right", 1210, True, ["Correct!", "Deactivated at t=1210 s", "arrived at t=10 s"]),
    (checks.check_02_hard_timeout, "right as a float", 1210.0, True, ["Correct!"]),
    (checks.check_02_hard_timeout, "the timeout itself", 1200, False, ["That is the timeout itself", "arrives at t=10 s"]),
    (checks.check_02_hard_timeout, "the default 15-minute timeout", 910, False, ["default timeout of 15 minutes"]),
    (checks.check_02_hard_timeout, "the Soft start", 3600, False, ["when big starts with the Soft style", "gang_style='Hard'"]),
    (checks.check_02_hard_timeout, "a stray number", 42, False, ["you said 42", "'deactivated' event"]),
    (checks.check_02_hard_timeout, "text", "1210 s", False, ["got the text '1210 s'"]),
]
CASES.extend(CASES_02_HOLDING)


@pytest.mark.parametrize("check, answer, passes, phrases", [c[:1] + c[2:] for c in CASES_02_HOLDING],
                         ids=[f"{c[0].__name__}: {c[1]}" for c in CASES_02_HOLDING])
def test_check_answers_02_holding(capsys, check, answer, passes, phrases):
    test_check_answers(capsys, check, answer, passes, phrases)


@pytest.mark.parametrize("answer, wrong", [("strict", "strict"), (" STRICT", "strict"), ("skip", "skip")],
                         ids=["'strict' is told how to find the answer, not the answer",
                              "'strict' in capitals likewise",
                              "'skip', were 'strict' to win, likewise"])
def test_a_wrong_ordering_is_not_told_the_right_one(capsys, monkeypatch, answer, wrong):
    if wrong == "skip":  # the stream makes 'skip' right; swap the runs' figures to see the other branch
        monkeypatch.setattr(checks_02, "_mixed_summaries", lambda: (("strict", 300.0, 900.0), ("skip", 400.0, 800.0)))
    assert check_02_best_ordering(answer) is False
    out = capsys.readouterr().out
    right = "skip" if wrong == "strict" else "strict"
    assert right not in out.lower().replace(f"you said {answer!r}".lower(), ""), out
    assert "mean_wait_s" in out and "seed=1" in out


def test_lesson02_late_y_wait_is_the_lessons_printed_figure():
    """Exercise 2.1's most common wrong answer: the wait the lesson prints for Y arriving at t=200 s."""
    assert checks_02._lesson_late_y_wait() == 400.0
    assert checks_02._job_row("three-workers", "gang", "Y", "strict")["wait_s"] != 400.0


def test_lesson02_hard_timeout_comes_from_the_simulator():
    """The right answer above is what the yunikorn layer says today: arrival (10 s) + the 1200 s timeout."""
    assert checks_02._big_under_yunikorn(1200.0, "Hard") == ("Deactivated", 1210.0, 10.0)
    assert checks_02._big_under_yunikorn(1200.0, "Soft")[:2] == ("Finished", 3600.0)


# --- Lesson 04: utilization versus waiting (appended; the checks are in checks.__all__, so the generic tests above cover them)
from gangkit.checks import (  # noqa: E402
    check_04_policy_for_big_gangs,
    check_04_saturation_load,
    check_04_starved_gang_wait,
)
from gangkit.lessons import lesson04  # noqa: E402

_SAT = lesson04.saturated("strict", checks_04.SATURATION_NODE_SHARE)["effective_utilization"]
_SAT_IDLE = lesson04.saturated("strict", checks_04.SATURATION_NODE_SHARE)["idle_while_waiting"]
_SAT_LESSON = lesson04.saturated("strict", lesson04.NODE_SHARE)["effective_utilization"]
_STARVED = checks_04._starved()  # (job, wait under skip, mean gang wait under skip, same job under strict, strict's worst)

CASES_04 = [
    # --- 4.1: strict's utilization in the saturated system (its stability limit), mix with 30% whole-node gangs
    (check_04_saturation_load, "right", _SAT, True, ["Correct!", "strict keeps", "naive capacity bound says 1",
                                                     "lesson04.verdicts"]),
    (check_04_saturation_load, "right, rounded", round(_SAT, 2), True, ["Correct!"]),
    (check_04_saturation_load, "right as a percentage", round(_SAT * 100, 1), True, ["Correct!", "percentage"]),
    (check_04_saturation_load, "the naive bound", 1, False, ["naive capacity bound", "saturated"]),
    (check_04_saturation_load, "the idle share", _SAT_IDLE, False, ["left free while jobs wait"]),
    (check_04_saturation_load, "the lesson's mix", _SAT_LESSON, False, ["lesson's mix", "node_share=0.3"]),
    (check_04_saturation_load, "a sweep's first load past the limit", round(_SAT + 0.07, 2), False,
     ["within one sweep step", "first load past the limit", "asks for that figure itself"]),
    (check_04_saturation_load, "a sweep's last stable load", round(_SAT - 0.07, 2), False,
     ["within one sweep step", "last stable load"]),
    (check_04_saturation_load, "too high", 0.95, False, ["cannot keep up"]),
    (check_04_saturation_load, "too low", 0.5, False, ["still keeps up"]),
    (check_04_saturation_load, "a word", "stable", False, ["got the text 'stable'"]),
    # --- 4.2: the ordering that bounds the big gangs' wait while keeping every job's mean wait <= 600 s
    (check_04_policy_for_big_gangs, "right", "conservative-backfill", True,
     ["Correct!", "shortest worst wait", "holds a reservation", "A utilization target could not have picked it"]),
    (check_04_policy_for_big_gangs, "right, odd spelling", " Conservative-Backfill ", True, ["Correct!"]),
    (check_04_policy_for_big_gangs, "the gang-first policy: head-of-line blocking", "strict", False,
     ["you said 'strict'", "on average, above the target of 600 s", "blocks the small jobs"]),
    (check_04_policy_for_big_gangs, "the utilization-first policy", "skip", False,
     ["you said 'skip'", "above the target of 600 s"]),
    (check_04_policy_for_big_gangs, "backfilling with one reservation", "easy-backfill", False,
     ["meets the mean-wait target", "another ordering that meets the target does better"]),
    (check_04_policy_for_big_gangs, "a queue-layer strategy", "StrictFIFO", False,
     ["the orderings to compare are", "Kueue's queueing strategies"]),
    (check_04_policy_for_big_gangs, "a number", 0.6, False, ["expected the name of an ordering", "the number 0.6"]),
    # --- 4.3: the longest wait of a whole-node gang under skip, load 0.7, seed 0
    (check_04_starved_gang_wait, "right", _STARVED[1], True, ["Correct!", _STARVED[0], "under skip", "under strict"]),
    (check_04_starved_gang_wait, "right, rounded", round(_STARVED[1]), True, ["Correct!"]),
    (check_04_starved_gang_wait, "in minutes", round(_STARVED[1] / 60, 1), False, ["in minutes", "seconds"]),
    (check_04_starved_gang_wait, "in hours", round(_STARVED[1] / 3600, 2), False, ["in hours"]),
    (check_04_starved_gang_wait, "the mean gang wait", _STARVED[2], False, ["mean wait of the whole-node gangs"]),
    (check_04_starved_gang_wait, "the same job under strict", _STARVED[3], False, ["a wait under strict"]),
    (check_04_starved_gang_wait, "the lesson's own printed figure", 19870, False,
     ["the lesson's own figure", "at load 0.6", "lesson04.run('skip', 0.7, seed=0)"]),
    (check_04_starved_gang_wait, "too short", 100.0, False, ["is longer"]),
    (check_04_starved_gang_wait, "a string", "16300", False, ["Remove the quotes"]),
]
CASES.extend(CASES_04)


@pytest.mark.parametrize("check, answer, passes, phrases", [c[:1] + c[2:] for c in CASES_04],
                         ids=[f"{c[0].__name__}: {c[1]}" for c in CASES_04])
def test_check_answers_04(capsys, check, answer, passes, phrases):
    test_check_answers(capsys, check, answer, passes, phrases)


def test_lesson04_expected_answers_come_from_the_simulator():
    """The story the exercises rely on: strict saturates below the naive bound; skip starves the big gang."""
    assert 0.5 < _SAT < lesson04.naive_bound()
    rows = {o: (w, m) for o, w, m, _ in checks_04._policy_rows()}
    assert rows["strict"][0] < rows["skip"][0]  # strict bounds the gangs' wait better ...
    assert rows["strict"][1] > rows["skip"][1] > 600 >= rows["conservative-backfill"][1]  # ... at every job's expense
    job, wait, mean, same_strict, _ = _STARVED
    assert wait > same_strict and wait > mean and job.startswith("whole-node-")


def test_the_policy_check_says_its_right_answer_in_two_sentences(capsys):
    assert check_04_policy_for_big_gangs("conservative-backfill") is True
    message = capsys.readouterr().out.strip()
    assert message.count(". ") + 1 == 2 and len(message) < 500, message


def test_the_starved_gang_check_knows_the_lesson_prints_19870():
    """The lesson's story (skip at load 0.6, seed 0) prints 19870 s; 4.3 asks for load 0.7, another figure."""
    job, wait = checks_04._lesson_starved()
    assert round(wait) == 19870 and not math.isclose(wait, _STARVED[1], abs_tol=checks_04.WAIT_TOLERANCE_S)


def test_policy_check_follows_the_target(capsys, monkeypatch):
    rows = (("strict", 100.0, 900.0, 0.7), ("skip", 900.0, 500.0, 0.6), ("easy-backfill", 950.0, 400.0, 0.6),
            ("conservative-backfill", 990.0, 300.0, 0.6), ("largest-first", 999.0, 700.0, 0.6),
            ("volcano-backfill", 999.0, 700.0, 0.6))
    monkeypatch.setattr(checks_04, "_policy_rows", lambda: rows)
    assert check_04_policy_for_big_gangs("skip") is True  # strict misses the mean-wait target
    assert check_04_policy_for_big_gangs("strict") is False
    assert "above the target of 600 s" in capsys.readouterr().out


# ------------------------------------------------------------------------------ lesson 05
from gangkit.checks import check_05_classify_waits, check_05_node_initialization, check_05_start_alone  # noqa: E402

RIGHT_05 = ["PartiallyPlaced", "Unschedulable", "GangCannotFit", "QuotaExhausted", "QuotaTooSmall", "WaitingForNodes"]

CASES_05 = [
    # --- 5.1: why each job of lesson05.CLASSIFY waits
    (check_05_classify_waits, "right", RIGHT_05, True, ["Correct!", "All 6 right", "the failure point moves"]),
    (check_05_classify_waits, "right, loose spelling", ["partially placed", "UNSCHEDULABLE", "gang-cannot-fit",
                                                        "quota exhausted", "Quota too small", "waiting_for_nodes"],
     True, ["Correct!"]),
    (check_05_classify_waits, "right as a tuple", tuple(RIGHT_05), True, ["Correct!"]),
    (check_05_classify_waits, "a held pod called unschedulable", ["Unschedulable"] + RIGHT_05[1:], False,
     ["5 of 6 right", "train-b under pod at t=300 s is not Unschedulable", "already bound"]),
    (check_05_classify_waits, "gang reasons under the pod stack", ["GangCannotFit", "GangCannotFit"] + RIGHT_05[2:], False,
     ["4 of 6 right", "the pod stack has no gang layer"]),
    (check_05_classify_waits, "placement reasons under Kueue", RIGHT_05[:3] + ["GangCannotFit", "GangCannotFit"] + RIGHT_05[5:],
     False, ["Kueue refuses first"]),
    (check_05_classify_waits, "the two quota reasons swapped", RIGHT_05[:3] + ["QuotaTooSmall", "QuotaExhausted"] + RIGHT_05[5:],
     False, ["the quota is only used by others right now", "no amount of waiting helps"]),
    (check_05_classify_waits, "nodes coming called a gang that cannot fit", RIGHT_05[:5] + ["GangCannotFit"], False,
     ["Karpenter has launched nodes for it"]),
    (check_05_classify_waits, "a quota reason without Kueue", RIGHT_05[:2] + ["QuotaExhausted"] + RIGHT_05[3:], False,
     ["stack 'gang' has no quota layer"]),
    (check_05_classify_waits, "a reason that does not exist", RIGHT_05[:5] + ["Booting"], False,
     ["'Booting' is not one of Unschedulable, PartiallyPlaced"]),
    (check_05_classify_waits, "too few", RIGHT_05[:4], False, ["expected 6 reasons", "got 4"]),
    (check_05_classify_waits, "one text", "GangCannotFit", False, ["expected a list of 6 reason names", "got one text"]),
    (check_05_classify_waits, "a number in the list", RIGHT_05[:5] + [3], False, ["expected a reason name in quotes"]),
    # --- 5.2: seconds of train-d's wait in node_initialization under kueue+gang+karpenter
    (check_05_node_initialization, "right", 300, True,
     ["Correct!", "train-d waited 361 s in all", "against 90 s with the lesson's stages", "from t=271 s to t=481 s"]),
    (check_05_node_initialization, "right as a float", 300.0, True, ["Correct!"]),
    (check_05_node_initialization, "the lesson's default stages", 90, False, ["with the lesson's stages"]),
    (check_05_node_initialization, "the whole wait", 361, False, ["that is train-d's whole wait"]),
    (check_05_node_initialization, "registration instead", 60, False, ["that is the node_registration bucket"]),
    (check_05_node_initialization, "launch to ready", 360, False, ["the node's launch-to-ready time"]),
    (check_05_node_initialization, "the start time", 481, False, ["that is when train-d started"]),
    (check_05_node_initialization, "minutes", 5, False, ["in minutes"]),
    (check_05_node_initialization, "something else", 42, False, ["you said 42", "wait_node_initialization_s"]),
    (check_05_node_initialization, "a string", "300", False, ["got the text '300'", "answer = 300"]),
    # --- 5.3: the p90 of wide's start, submitted alone to the example dump
    (check_05_start_alone, "right", 10860, True, ["Correct!", "t=10860 s", "p10 = p50 = p90", "a p90 of 16348.3 s"]),
    (check_05_start_alone, "right as a float", 10860.0, True, ["Correct!"]),
    (check_05_start_alone, "the lesson's p90 with finetune in the way", 16348.3, False, ["the lesson's p90",
                                                                                         "finetune's run time is drawn"]),
    (check_05_start_alone, "when train-a ends", 3660, False, ["when train-a ends", "train-b is ahead of wide"]),
    (check_05_start_alone, "train-a's whole run time", 14400, False, ["train-a's whole run time", "10740 s"]),
    (check_05_start_alone, "train-b's run time alone", 7200, False, ["train-b's run time alone"]),
    (check_05_start_alone, "both whole run times added", 21600, False, ["adds train-a's whole run time"]),
    (check_05_start_alone, "at once", 0, False, ["waits for quota (QuotaExhausted)"]),
    (check_05_start_alone, "hours", 3.0167, False, ["in hours"]),
    (check_05_start_alone, "hours as printed", 3, False, ["in hours, rounded as print(pred) shows it", "start_s['p90']"]),
    (check_05_start_alone, "hours as printed, with a decimal", 3.0, False, ["in hours, rounded"]),
    (check_05_start_alone, "the printed hours times 3600", 10800, False, ["the printed hours times 3600",
                                                                          "rounds to a tenth of an hour"]),
    (check_05_start_alone, "the lesson's printed p90 in hours", 4.5, False, ["the lesson's p90 in hours",
                                                                              "with finetune submitted too"]),
    (check_05_start_alone, "minutes", 181, False, ["in minutes"]),
    (check_05_start_alone, "something else", 42, False, ["you said 42", "start_s['p90']"]),
    (check_05_start_alone, "the whole start_s", {"p10": 10860.0, "p50": 10860.0, "p90": 10860.0}, False,
     ["the whole start_s", "start_s['p90']"]),
    (check_05_start_alone, "a string", "10860", False, ["got the text '10860'", "answer = 10860"]),
]
CASES.extend(CASES_05)


@pytest.mark.parametrize("check, answer, passes, phrases", [c[:1] + c[2:] for c in CASES_05],
                         ids=[f"{c[0].__name__}: {c[1]}" for c in CASES_05])
def test_check_answers_05(capsys, check, answer, passes, phrases):
    test_check_answers(capsys, check, answer, passes, phrases)


def test_lesson05_expected_answers_come_from_the_simulator():
    from gangkit.lessons import lesson05

    assert [code for *_, code in checks_05._classified()] == RIGHT_05
    lesson = dict(checks_05._train_d_waits(None))  # the lesson's stages
    assert (lesson["node_initialization"], lesson["node_registration"], lesson["total"]) == (90.0, 60.0, 151.0)
    slow = dict(checks_05._train_d_waits())  # the exercise's 300 s driver: only that bucket and the start move
    assert (slow["node_initialization"], slow["node_registration"], slow["total"]) == (300.0, 60.0, 361.0)
    assert set(RIGHT_05) == set(lesson05.REASONS)
    alone, both, (a_total, a_age, b_total) = checks_05._wide_starts()  # 5.3: wide alone, then with finetune
    assert alone == (10860.0, 10860.0, 10860.0) and a_total - a_age + b_total == 10860.0
    assert both[:2] == (10860.0, 10860.0) and both[2] == 16348.3


# --- Lesson 06: node provisioning latency (appended; the checks are in checks.__all__, so the generic tests cover them)
from gangkit.checks import (  # noqa: E402
    check_06_deactivated_at,
    check_06_start_with_image_pull,
    check_06_warm_nodes,
)

CASES_06 = [
    # --- 6.1: when train starts when each new node pulls a 300 s image
    (check_06_start_with_image_pull, "right", 311, True, ["Correct!", "t=311 s", "batch window closes at t=1 s",
                                                          "registered 100 s", "120 s image_pull"]),
    (check_06_start_with_image_pull, "right, as a float", 311.0, True, ["Correct!"]),
    (check_06_start_with_image_pull, "the lesson's 300 s pull", 451, False, ["one of the lesson's runs"]),
    (check_06_start_with_image_pull, "the lesson's default stages", 151, False, ["one of the lesson's runs"]),
    (check_06_start_with_image_pull, "without the batch window", 310, False, ["batch window closes"]),
    (check_06_start_with_image_pull, "the pull left out", 191, False, ["a stage is missing"]),
    (check_06_start_with_image_pull, "the registration left out", 211, False, ["a stage is missing"]),
    (check_06_start_with_image_pull, "the pull alone", 120, False, ["the pull alone"]),
    (check_06_start_with_image_pull, "text", "311", False, ["got the text '311' (in quotes)"]),
    # --- 6.2: the fewest warm nodes for a mean wait under 360 s when new nodes pull a 600 s image
    (check_06_warm_nodes, "right", 2, True, ["Correct!", "2 warm nodes", "312.9 s", "477 GPU-hours instead of 299.7", "against 62.9 s without it"]),
    (check_06_warm_nodes, "one too few", 1, False, ["with 1 warm node the mean wait is 751 s, not under 360 s"]),
    (check_06_warm_nodes, "more than needed", 3, False, ["so do fewer", "617.3 GPU-hours against 477"]),
    (check_06_warm_nodes, "the lesson's answer without the pull", 4, False, ["so do fewer", "768 GPU-hours"]),
    (check_06_warm_nodes, "outside the table", 9, False, ["tries 0 to 4 warm nodes"]),
    (check_06_warm_nodes, "a fraction", 2.5, False, ["a count has no fraction"]),
    # --- 6.3: when the ProvisioningRequest check deactivates train
    (check_06_deactivated_at, "right", 7620, True, ["Correct!", "4 x 1800 + 420 = 7620 s", "60, 120, 240 s"]),
    (check_06_deactivated_at, "backoffs forgotten", 7200, False, ["waits out a backoff"]),
    (check_06_deactivated_at, "one attempt short", 5580, False, ["one attempt short", "4 requests"]),
    (check_06_deactivated_at, "the first failure", 1800, False, ["sends the check to Retry, not Rejected"]),
    (check_06_deactivated_at, "something else", 999, False, ["'deactivated' event"]),
]
CASES.extend(CASES_06)


@pytest.mark.parametrize("check, answer, passes, phrases", [c[:1] + c[2:] for c in CASES_06],
                         ids=[f"{c[0].__name__}: {c[1]}" for c in CASES_06])
def test_check_answers_06(capsys, check, answer, passes, phrases):
    test_check_answers(capsys, check, answer, passes, phrases)


def test_lesson06_expected_answers_come_from_the_simulator():
    assert checks_06._train_run(60.0, 300.0)[0] == 451.0 and checks_06._train_run(60.0, 0.0)[0] == 151.0
    start, waits = checks_06._train_run(100.0, 120.0)
    assert start == 311.0 and dict(waits) == {"quota": 0.0, "placement": 1.0, "node_launch": 0.0,
                                              "node_registration": 100.0, "node_initialization": 90.0,
                                              "image_pull": 120.0, "total": 311.0}
    assert [n for n, wait, _ in checks_06._warm_pool_waits(0.0) if wait < 60][0] == 3
    assert [n for n, wait, _ in checks_06._warm_pool_waits() if wait < 360][0] == 2
    assert checks_06._provreq_deactivated()[0] == 7620.0


# --- lesson 06, exercise 6.4: nine of ten nodes at scale-to-zero (coscheduling + Karpenter) --------------

CASES_06_ZERO = [
    (checks.check_06_nine_of_ten, "right", 135.38, True, ["Correct!", "135.38 GPU-hours", "10 % threshold", "112 rounds"]),
    (checks.check_06_nine_of_ten, "right, unrounded", 135.3827, True, ["Correct!", "nearly what pod by pod holds"]),
    (checks.check_06_nine_of_ten, "one round only, as if the timeout ended the holding", 1.2, False,
     ["That is one round", "What happens after the timeout?"]),
    (checks.check_06_nine_of_ten, "one round in GPU-seconds", 4320, False,
     ["wrong unit, and one round only", "in GPU-seconds", "asks for GPU-hours", "/ 3600"]),
    (checks.check_06_nine_of_ten, "nothing held, as if PostFilter rejected", 0, False, ["you said 0", "exactly 10 %"]),
    (checks.check_06_nine_of_ten, "the right amount in GPU-seconds", 487377.8, False,
     ["wrong unit", "right amount in GPU-seconds", "asks for GPU-hours", "Divide by 3600"]),
    (checks.check_06_nine_of_ten, "the right amount in GPU-seconds, rounded", 487400, False, ["wrong unit", "Divide by 3600"]),
    (checks.check_06_nine_of_ten, "the right amount in GPU-minutes", 8123, False,
     ["wrong unit", "right amount in GPU-minutes", "asks for GPU-hours", "Divide by 60"]),
    (checks.check_06_nine_of_ten, "the right amount rounded to one decimal", 135.4, False, ["two decimals"]),
    (checks.check_06_nine_of_ten, "the nodes' cost", 143.98, False, ["what the 9 nodes cost"]),
    (checks.check_06_nine_of_ten, "pod by pod's figure", 138.66, False, ["pod-by-pod placement holds", "kube-gang"]),
    (checks.check_06_nine_of_ten, "a stray number", 3, False, ["you said 3", "held_idle_gpu_seconds"]),
    (checks.check_06_nine_of_ten, "text", "1.2", False, ["got the text '1.2'"]),
]
CASES.extend(CASES_06_ZERO)


@pytest.mark.parametrize("check, answer, passes, phrases", [c[:1] + c[2:] for c in CASES_06_ZERO],
                         ids=[f"{c[0].__name__}: {c[1]}" for c in CASES_06_ZERO])
def test_check_answers_06_zero(capsys, check, answer, passes, phrases):
    test_check_answers(capsys, check, answer, passes, phrases)


def test_lesson06_nine_of_ten_comes_from_the_simulator():
    """9 pods x 8 GPUs wait at Permit for 60 s, are rejected and take the same nodes again at once, round after
    round, until the run ends: nearly all of what pod by pod holds; the 9 nodes run for the whole run."""
    held, paid, rounds = checks_06._nine_of_ten("coscheduling+karpenter")
    pod_held, _, _ = checks_06._nine_of_ten("pod+karpenter")
    r = gk.simulate(lesson06.scale_to_zero(limit=72), stack="coscheduling+karpenter", seed=3)
    released = r.events.loc[r.events.event == "released", "time_s"].to_numpy()
    assert len(released) == rounds and rounds > 100
    assert set(np.diff(released)) == {60.0}  # each retry follows its timeout at once
    assert held * 3600 >= 72 * (7200 - released[0]) + 72 * 60  # held without a gap from the first wait to the end
    assert 0.95 * pod_held < held < pod_held
    assert paid == pytest.approx(9 * 8 * (7200 - 1) / 3600)  # launched at the end of Karpenter's 1 s batch window


# --- lesson 07: migrating to gang admission -------------------------------------------------------
from gangkit.checks import lesson07 as checks_07  # noqa: E402

CASES_07 = [
    # --- 7.1: the shortest waitForPodsReady timeout with which train finishes (nodes from Karpenter)
    (checks.check_07_pods_ready_timeout, "right", 152, True, ["Correct!", "ready 151 s after admission",
                                                              "1 s batch window", "leave minutes of margin"]),
    (checks.check_07_pods_ready_timeout, "equal to the nodes' start, one second short", 151, False,
     ["151 s is 1 second short", "nodes are ready at t=151 s", "reaches the timeout", "longer than the nodes take"]),
    (checks.check_07_pods_ready_timeout, "the batch window left out", 150, False, ["batching window", "t=151 s"]),
    (checks.check_07_pods_ready_timeout, "the lesson's failing timeout", 120, False, ["the lesson's timeout"]),
    (checks.check_07_pods_ready_timeout, "initialization alone", 90, False, ["a stage is missing"]),
    (checks.check_07_pods_ready_timeout, "long enough but not the shortest", 300, False, ["a shorter timeout works"]),
    (checks.check_07_pods_ready_timeout, "a fraction", 151.5, False, ["a count has no fraction"]),
    (checks.check_07_pods_ready_timeout, "text", "152", False, ["got the text '152'"]),
    # --- 7.2: seconds of mean turnaround that minMember 1 saves independent tasks at load 0.9
    (checks.check_07_independent_saving, "right", 10128, True, ["Correct!", "saves 10128 s", "7883 s at the lesson's 0.8"]),
    (checks.check_07_independent_saving, "right, unrounded", 10128.227, True, ["Correct!"]),
    (checks.check_07_independent_saving, "the lesson's load", 7883, False, ["the lesson's load 0.8"]),
    (checks.check_07_independent_saving, "sign reversed", -10128, False, ["sign is reversed"]),
    (checks.check_07_independent_saving, "the wait instead of the turnaround", 14373.4, False, ["saving in *wait*"]),
    (checks.check_07_independent_saving, "gang against pod", 9332.1, False, ["compares the gang with the default"]),
    (checks.check_07_independent_saving, "hours", 2.813, False, ["looks like hours"]),
    (checks.check_07_independent_saving, "a stray number", 5, False, ["you said 5", "mean_turnaround_s"]),
]
CASES.extend(CASES_07)


@pytest.mark.parametrize("check, answer, passes, phrases", [c[:1] + c[2:] for c in CASES_07],
                         ids=[f"{c[0].__name__}: {c[1]}" for c in CASES_07])
def test_check_answers_07(capsys, check, answer, passes, phrases):
    test_check_answers(capsys, check, answer, passes, phrases)


def test_lesson07_expected_answers_come_from_the_simulator():
    assert checks_07._shortest_timeout() == (152, 151.0)
    assert not checks_07._finishes(151) and checks_07._finishes(152)
    at = checks_07._turnarounds(0.9)
    assert at["gang"][0] > 2 * at["gang, minMember 1"][0]  # waiting for all pods doubles a task job's turnaround


# --- lesson 08: the capstone --------------------------------------------------------------------
import dataclasses  # noqa: E402

from gangkit.lessons import lesson08  # noqa: E402

MINE_08 = dataclasses.replace(lesson08.REFERENCE, pool_limit=32, name="mine")
SMALL_POOL_08 = dataclasses.replace(lesson08.ALTERNATIVES["autoscaler only"], pool_limit=16, consolidate_after=60.0, name="small pool")

CASES_08 = [
    (checks.check_08_design, "right", MINE_08, True, ["Correct!", "meets all 6 goals", "exercise 8.3"]),
    (checks.check_08_design, "right without Kueue", dataclasses.replace(SMALL_POOL_08, pool_limit=24), True,
     ["Correct!", "pod+karpenter"]),
    (checks.check_08_design, "the naive design", lesson08.NAIVE, False, ["lesson08.NAIVE", "misses three goals"]),
    (checks.check_08_design, "the worked reference, copied", dataclasses.replace(lesson08.REFERENCE, name="x"), False,
     ["lesson08.REFERENCE", "build your own"]),
    (checks.check_08_design, "no NodePool for research's whole-node pods",
     dataclasses.replace(MINE_08, pool_limit=0), False, ["goals met on the three days", "research max wait",
                                                       " h), above the target 1800 s", "no NodePool"]),
    (checks.check_08_design, "not a design", 5, False, ["expected a lesson08.Design"]),
    (checks.check_08_node_down, "right", dataclasses.replace(MINE_08, pool_limit=24, consolidate_after=300.0), True,
     ["Correct!", "3 G3 nodes of NodePool (pool_limit 24)", "with pool_limit 16, with a node down, research max wait",
      "85074 s (23.63 h) (target 1800 s)", "comes back only through the NodePool"]),
    (checks.check_08_node_down, "right without Kueue", dataclasses.replace(SMALL_POOL_08, pool_limit=24), True,
     ["Correct!", "pool_limit 24"]),
    (checks.check_08_node_down, "right, with a limit between whole nodes", dataclasses.replace(MINE_08, pool_limit=30),
     True, ["Correct!", "a limit of 30 buys what 24 does"]),
    (checks.check_08_node_down, "a node more than needed", MINE_08, False,
     ["so does it with pool_limit 24", "the smallest NodePool limit"]),
    (checks.check_08_node_down, "meets the base, not a node down", SMALL_POOL_08, False,
     ["with one static node down", "research max wait", "no node coming: NodePool g3 at 16 of its 16-GPU limit"]),
    (checks.check_08_node_down, "research keeps its GPUs with a lendingLimit, no more nodes",
     dataclasses.replace(MINE_08, pool_limit=16, queues={**MINE_08.queues, "research": lesson08.QueueDesign(
         16, lending_limit=0, reclaim_within_cohort="Any")}), False,
     ["with one static node down", "research max wait", "at most 24 GPUs", "nominalQuota adds up to 36",
      "adds none"]),
    (checks.check_08_node_down, "misses the base already", lesson08.NAIVE, False, ["on the base workload"]),
    (checks.check_08_node_down, "a copied alternative", lesson08.ALTERNATIVES["one queue with priorities"], False,
     ["one of the lesson's worked designs"]),
]
CASES.extend(CASES_08)


@pytest.mark.parametrize("check, answer, passes, phrases", [c[:1] + c[2:] for c in CASES_08],
                         ids=[f"{c[0].__name__}: {c[1]}" for c in CASES_08])
def test_check_answers_08(capsys, check, answer, passes, phrases):
    test_check_answers(capsys, check, answer, passes, phrases)
