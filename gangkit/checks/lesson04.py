"""Checks of lesson 04 (utilization versus waiting): the saturation figure, a policy, the most starved gang.

Exercises 4.1 to 4.3 ask for the utilization 'strict' sustains in the saturated system (all jobs queued at
once) with 30% of whole-node gangs, the saturated-system estimate of its stability limit; the ordering that
keeps every job's mean wait under 10 minutes and bounds the big gangs' wait best; and the longest wait of a
whole-node gang under 'skip'. The answers come from long runs, so the tolerances are wider; a number that
is off is matched against the figures next to it (the naive capacity bound, the idle share, the lesson's own
mix or printed figure, a load one sweep step away, the mean wait instead of the longest, a wait in minutes or hours), and the
message says which it is.
"""

from __future__ import annotations

import functools
import numbers

from gangkit.checks.common import close, counts_wrong_answers, fmt, kind, not_done, number
from gangkit.model.precision import TOLERANCE

#: Exercise 4.1: the share of whole-node gangs in the mix whose stability limit is asked for.
SATURATION_NODE_SHARE = 0.3
#: Exercise 4.1: answers within this distance of the saturated system's utilization are right
#: (another seed or stream length moves it by about 0.01: seeds 0-2 with 1000, 2000 or 4000 jobs
#: give 0.790 to 0.809).
SATURATION_TOLERANCE = 0.03
#: Exercise 4.1: the load step of a sweep near a limit (the lesson's finest): an answer at most this much
#: further off may be an end of the bracket a sweep judged with ``lesson04.verdicts`` gives.
SWEEP_STEP = 0.05
#: Exercise 4.2: the run (load, seed) and the target: the mean wait of all jobs, in seconds, at most this.
POLICY_LOAD, POLICY_SEED, POLICY_TARGET_S = 0.6, 1, 600.0
#: Exercise 4.3: the run (load, seed) under 'skip' whose most starved gang is asked for.
STARVED_LOAD, STARVED_SEED = 0.7, 0
#: Exercise 4.3: waits (seconds) within this distance of the simulated one are right.
WAIT_TOLERANCE_S = 1.0

#: First hints of "not done yet" (the recipe follows after a wrong answer: common.not_done).
HINTS = {
    "4.1": "the saturated system never runs out of queued work: the utilization it reaches is what the policy can carry.",
    "4.2": "an ordering can serve small jobs promptly and still protect the gangs if it plans ahead for them.",
    "4.3": "under skip, small jobs keep slipping past the whole-node gangs: find the unluckiest gang.",
}



@counts_wrong_answers("4.1")
def check_04_saturation_load(answer) -> bool:
    """Exercise 4.1: the effective utilization of ``strict`` in the saturated system, for the mix with 30% gangs.

    The expected value is ``lesson04.saturated("strict", node_share=0.3)["effective_utilization"]``
    (1000 jobs, seed 0): the saturated-system estimate of the load at which ``strict`` stops being
    stable. Answers within 0.03 are right. A percentage is accepted with a note. An answer one sweep
    step further off is recognised as a likely end of a sweep's bracket (the lesson's other method)
    and sent back to the figure the exercise asks for.
    """
    ex = "4.1"
    if answer is None:
        return not_done(ex, "measure the saturated system, gangkit.lessons.lesson04.saturated('strict', node_share=0.3), "
                            "and answer its effective_utilization, a fraction such as 0.7.", hint=HINTS[ex])
    value = number(ex, answer, whole=False, what="the saturated system's effective utilization (a fraction)")
    if value is None:
        return False
    from gangkit.lessons import lesson04

    sat = lesson04.saturated("strict", SATURATION_NODE_SHARE)
    expected = sat["effective_utilization"]
    note = ""
    if value > 1.5 and close(value / 100, expected, SATURATION_TOLERANCE):
        note = f" (You wrote a percentage; gangkit writes utilizations and loads as fractions: {fmt(round(value / 100, 4))}.)"
        value = value / 100
    if close(value, expected, SATURATION_TOLERANCE):
        print(f"Correct!{note} With every job queued, strict keeps {fmt(expected)} of the GPUs busy and leaves "
              f"{fmt(sat['idle_while_waiting'])} free while jobs wait: a whole-node gang at the head waits for a "
              "node to empty, and nobody behind it may use the GPUs that free up meanwhile. Offered more than "
              f"about {fmt(expected)}, strict cannot carry what arrives and its queue grows, although the naive "
              "capacity bound says 1. A sweep judged as the lesson does (lesson04.verdicts) should bracket this "
              "figure: stable at a load below it, unstable at a load above.")
        return True
    if close(value, lesson04.naive_bound(), TOLERANCE):
        print(f"Exercise {ex}: you said {fmt(value)}, the naive capacity bound (offered GPU demand below the "
              "cluster's GPUs). Strict ordering cannot reach it with gangs in the mix: measure the saturated "
              "system and read its effective_utilization.")
    elif close(value, sat["idle_while_waiting"], 0.005):
        print(f"Exercise {ex}: you said {fmt(value)}: that is the share of capacity left free while jobs wait "
              "(idle_while_waiting), the part strict loses. The load it can carry is the part it keeps busy.")
    elif close(value, lesson04.saturated("strict", lesson04.NODE_SHARE)["effective_utilization"], 0.005):
        print(f"Exercise {ex}: you said {fmt(value)}: that is the lesson's mix, with "
              f"{fmt(lesson04.NODE_SHARE * 100)}% whole-node gangs. This exercise asks for the mix with "
              f"{fmt(SATURATION_NODE_SHARE * 100)}%: pass node_share={SATURATION_NODE_SHARE}.")
    elif close(value, expected, SATURATION_TOLERANCE + SWEEP_STEP):
        side = "first load past the limit" if value > expected else "last stable load"
        print(f"Exercise {ex}: you said {fmt(value)}, within one sweep step ({fmt(SWEEP_STEP)}) of the saturated "
              f"figure: if it is the {side} of a sweep judged with lesson04.verdicts, your sweep agrees with the "
              "saturated system, whose figure lies inside the bracket. This exercise asks for that figure itself: "
              "lesson04.saturated('strict', node_share=0.3)['effective_utilization'].")
    elif value > expected:
        print(f"Exercise {ex}: you said {fmt(value)}; at that load strict cannot keep up with this mix: the "
              "saturated system keeps fewer GPUs busy. Measure lesson04.saturated('strict', node_share=0.3).")
    else:
        print(f"Exercise {ex}: you said {fmt(value)}; strict still keeps up above that load with this mix. "
              "Measure lesson04.saturated('strict', node_share=0.3) and read its effective_utilization.")
    return False


def policy_orderings() -> tuple[str, ...]:
    """Every placement ordering of lesson 04: the two of its story and the backfilling ones."""
    from gangkit.lessons import lesson04

    return lesson04.ORDERINGS + lesson04.BACKFILL_ORDERINGS


@functools.lru_cache(maxsize=None)
def _policy_rows() -> tuple:
    """(ordering, worst whole-node gang wait, mean wait of all jobs, window effective utilization) for 4.2's run."""
    from gangkit.lessons import lesson04
    from gangkit.results.waiting import stability, starvation, utilization

    out = []
    for ordering in policy_orderings():
        r = lesson04.run(ordering, POLICY_LOAD, seed=POLICY_SEED)
        st = stability(r)
        u = utilization(r, st.window_start_s, st.window_end_s)["effective_utilization"]
        out.append((ordering, starvation(r)["starvation_wait_s"], r.figures["mean_wait_s"], u))
    return tuple(out)


@counts_wrong_answers("4.2")
def check_04_policy_for_big_gangs(answer) -> bool:
    """Exercise 4.2: among the orderings whose mean wait is at most 600 s, the one whose worst gang waits least.

    Each ordering of :func:`policy_orderings` runs ``lesson04.run(ordering, 0.6, seed=1)``; the mean
    wait is ``result.figures["mean_wait_s"]``, the gang's wait ``gk.starvation(result)["starvation_wait_s"]``.
    Case and spaces are forgiven. The message on the right answer is two sentences: why this ordering,
    and why utilization cannot choose here (at a load every ordering carries, each one's long-run
    utilization is the offered load).
    """
    ex = "4.2"
    names = ", ".join(repr(o) for o in policy_orderings())
    if answer is None:
        return not_done(ex, f"for each ordering ({names}) run gangkit.lessons.lesson04.run(ordering, 0.6, seed=1) "
                            "and read result.figures['mean_wait_s'] and gk.starvation(result)['starvation_wait_s']; "
                            "answer the ordering's name.", hint=HINTS[ex])
    if not isinstance(answer, str):
        got = kind(answer)
        if isinstance(answer, numbers.Real) and not isinstance(answer, bool):
            got = f"the number {fmt(float(answer))}"
        print(f"Exercise {ex}: expected the name of an ordering ({names}, in quotes), but got {got}.")
        return False
    name = answer.strip().lower()
    rows = {o: (w, m, u) for o, w, m, u in _policy_rows()}
    if name not in rows:
        hint = (" StrictFIFO and BestEffortFIFO are Kueue's queueing strategies (lesson 03): they order the queue "
                "layer, not the placement of pods." if name in ("strictfifo", "besteffortfifo") else "")
        print(f"Exercise {ex}: you said {answer!r}; the orderings to compare are {names}.{hint}")
        return False
    ok = {o: v for o, v in rows.items() if v[1] <= POLICY_TARGET_S}
    best = min(w for w, _, _ in ok.values()) if ok else None
    if name in ok and ok[name][0] == best:
        w, m, _ = rows[name]
        print(f"Correct! {name!r} keeps the mean wait within {fmt(POLICY_TARGET_S)} s ({fmt(round(m))} s) and gives "
              f"the whole-node gangs the shortest worst wait of the orderings that do ({fmt(round(w))} s), because "
              "every waiting gang holds a reservation and small jobs start only where they delay none. "
              "A utilization target could not have picked it: at a load every ordering carries, each one's "
              f"long-run utilization is the offered load, {fmt(POLICY_LOAD)}.")
        return True
    w, m, _ = rows[name]
    if m > POLICY_TARGET_S and w < max(v[0] for v in rows.values()):
        print(f"Exercise {ex}: you said {name!r}: its worst whole-node gang waits only {fmt(w)} s, but every job "
              f"waits {fmt(m)} s on average, above the target of {fmt(POLICY_TARGET_S)} s: the gang at the head "
              "blocks the small jobs behind it. Look for an ordering that lets them pass without delaying the gang.")
    elif m > POLICY_TARGET_S:
        print(f"Exercise {ex}: you said {name!r}: the mean wait is {fmt(m)} s, above the target of "
              f"{fmt(POLICY_TARGET_S)} s, and its worst whole-node gang waits {fmt(w)} s.")
    else:
        print(f"Exercise {ex}: you said {name!r}: it meets the mean-wait target ({fmt(m)} s), but its worst "
              f"whole-node gang waits {fmt(w)} s; another ordering that meets the target does better: compare "
              "gk.starvation(result) of each run.")
    return False


@functools.lru_cache(maxsize=None)
def _starved() -> tuple:
    """(job, its wait under skip, the mean whole-node wait under skip, the same job's wait under strict, strict's worst)."""
    from gangkit.lessons import lesson04
    from gangkit.results.waiting import starvation

    skip = lesson04.run("skip", STARVED_LOAD, seed=STARVED_SEED)
    strict = lesson04.run("strict", STARVED_LOAD, seed=STARVED_SEED)
    s = starvation(skip)
    gangs = lesson04.gang_waits(skip)
    same = lesson04.gang_waits(strict).set_index("job").loc[s["starved_job"], "wait_s"]
    return (s["starved_job"], s["starvation_wait_s"], round(float(gangs["wait_s"].mean()), 3), round(float(same), 3),
            starvation(strict)["starvation_wait_s"])


def lesson04_story_load() -> float:
    """The load of the lesson's starvation story (``lesson04.STORY``)."""
    from gangkit.lessons import lesson04

    return lesson04.STORY["load"]


@functools.lru_cache(maxsize=None)
def _lesson_starved() -> tuple:
    """(job, wait) of the most starved gang under skip in the lesson's own story run (load 0.6, seed 0): the
    figure the lesson prints, and the likeliest wrong answer to 4.3."""
    from gangkit.lessons import lesson04
    from gangkit.results.waiting import starvation

    s = starvation(lesson04.run("skip", lesson04.STORY["load"], n_jobs=lesson04.STORY["n_jobs"],
                                seed=lesson04.STORY["seed"]))
    return s["starved_job"], s["starvation_wait_s"]


@counts_wrong_answers("4.3")
def check_04_starved_gang_wait(answer) -> bool:
    """Exercise 4.3: the longest wait of a whole-node gang under ``skip`` at load 0.7, seed 0, in seconds.

    From ``gk.starvation(lesson04.run("skip", 0.7, seed=0))``; answers within 1 s are right. The lesson's
    own figure (its story run at load 0.6) is recognised and sent back to the run the exercise asks for.
    """
    ex = "4.3"
    if answer is None:
        return not_done(ex, "run gangkit.lessons.lesson04.run('skip', 0.7, seed=0) and read gk.starvation(result), or the "
                            "first row of lesson04.gang_waits(result); answer the wait in seconds.", hint=HINTS[ex])
    value = number(ex, answer, whole=False, what="seconds (the longest wait of a whole-node gang)")
    if value is None:
        return False
    job, wait, mean, same_strict, worst_strict = _starved()
    lesson_job, lesson_wait = _lesson_starved()
    if close(value, wait, WAIT_TOLERANCE_S):
        print(f"Correct! {job} waits {fmt(wait)} s (about {fmt(round(wait / 3600, 1))} h) under skip; the same "
              f"job waits {fmt(same_strict)} s under strict. Under skip the one-GPU jobs keep taking the GPUs "
              "that free up, so a gang needs a node that happens to empty completely.")
        return True
    minutes, hours = close(value * 60, wait, 60.0), close(value * 3600, wait, 360.0)  # within a minute / 0.1 h
    if close(value, lesson_wait, WAIT_TOLERANCE_S):
        print(f"Exercise {ex}: you said {fmt(value)}: that is the lesson's own figure, {lesson_job}'s wait in the "
              f"lesson's run at load {fmt(lesson04_story_load())}. This exercise asks for another run, load "
              f"{fmt(STARVED_LOAD)} with seed {STARVED_SEED}: lesson04.run('skip', {fmt(STARVED_LOAD)}, "
              f"seed={STARVED_SEED}).")
    elif minutes or hours:
        unit = "minutes" if minutes else "hours"
        print(f"Exercise {ex}: you said {fmt(value)}: that looks like the wait in {unit}; gangkit counts in "
              f"seconds. Answer in seconds.")
    elif close(value, mean, WAIT_TOLERANCE_S):
        print(f"Exercise {ex}: you said {fmt(value)}, the mean wait of the whole-node gangs. The question asks "
              "for the longest one: starvation is about the unluckiest gang.")
    elif close(value, same_strict, WAIT_TOLERANCE_S) or close(value, worst_strict, WAIT_TOLERANCE_S):
        print(f"Exercise {ex}: you said {fmt(value)}: that is a wait under strict. Run the ordering 'skip'.")
    else:
        print(f"Exercise {ex}: you said {fmt(value)}; the longest wait of a whole-node gang under skip is "
              f"{'longer' if value < wait else 'shorter'}. Look at gk.starvation(result)['starvation_wait_s'].")
    return False
