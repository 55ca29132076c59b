"""Checks of lesson 03 (queues and quota, Kueue): a lendingLimit, a preemption victim, a queueing strategy.

Exercises 3.1 to 3.3 ask for team B's lendingLimit that keeps 8 of its GPUs, the workload Kueue
preempts when team B reclaims its quota, and the queueingStrategy under which the big job waits
less. The messages speak Kueue's words and forgive a learner's spelling (saying how Kueue spells
it); a wrong answer is explained by Kueue's own rule: what lendingLimit lends, the order in which
Kueue tries preemption candidates and puts back those it can spare, who pays under each strategy.
"""

from __future__ import annotations

import functools
import math
import numbers

from gangkit.checks.common import counts_wrong_answers, fmt, kind, not_done, number
from gangkit.simulate import simulate

#: Exercise 3.1: the GPUs team B must keep for itself.
LENDING_KEEP = 8
#: Kueue's two queueing strategies, as Kueue spells them.
QUEUEING_STRATEGIES = ("StrictFIFO", "BestEffortFIFO")

#: First hints of "not done yet" (the recipe follows after a wrong answer: common.not_done).
HINTS = {
    "3.1": "lendingLimit caps how much of a team's own quota the cohort may borrow; team B needs 8 GPUs when its jobs come.",
    "3.2": "Kueue takes quota back from the borrowing team's workloads, the lowest priority first, then the most recently admitted.",
    "3.3": "one strategy lets a small job pass a big head that does not fit yet: which of the two protects the big job?",
}



@functools.lru_cache(maxsize=None)
def _lending_kept(limit: int | None) -> int:
    """GPUs team B gets the moment its jobs arrive in ``lesson03.lending_story(limit)`` (stack kueue+gang)."""
    from gangkit.lessons import lesson03

    result = simulate(lesson03.lending_story(limit), stack="kueue+gang")
    return lesson03.gpus_admitted_at(result, "team-b", lesson03.LENDING_B_ARRIVAL_S)


def _lending_expected() -> int:
    """The largest lendingLimit (0 .. team B's nominalQuota) that still leaves team B LENDING_KEEP GPUs."""
    from gangkit.lessons.lesson03 import LENDING_B_NOMINAL

    fits = [n for n in range(LENDING_B_NOMINAL + 1) if _lending_kept(n) >= LENDING_KEEP]
    if not fits:  # cannot happen with the model as it is; say so loudly rather than guess
        raise RuntimeError(f"no lendingLimit leaves team B {LENDING_KEEP} GPUs in lesson03.lending_story")
    return max(fits)


@counts_wrong_answers("3.1")
def check_03_lending_limit(answer) -> bool:
    """Exercise 3.1: team B's lendingLimit that keeps exactly 8 of its 12 GPUs for itself.

    Computed by simulating ``lesson03.lending_story(L)`` for L = 0 .. 12 under stack
    'kueue+gang' and counting the GPUs team B gets at t=600 s, when team A has borrowed all it
    may; the answer is the largest L that still leaves team B 8 GPUs.
    """
    ex = "3.1"
    if answer is None:
        return not_done(ex, "for a few lendingLimits L, simulate gangkit.lessons.lesson03.lending_story(L) with "
                            "stack='kueue+gang' and count the GPUs team B gets when its jobs arrive, "
                            "lesson03.gpus_admitted_at(result, 'team-b', 600); answer the L that leaves team B 8.", hint=HINTS[ex])
    value = number(ex, answer, whole=True, what="GPUs (the lendingLimit)")
    if value is None:
        return False
    from gangkit.lessons.lesson03 import LENDING_B_ARRIVAL_S, LENDING_B_NOMINAL

    expected = _lending_expected()
    n = int(value)
    at = fmt(LENDING_B_ARRIVAL_S)
    if n == expected:
        print(f"Correct! With lendingLimit {n}, team B lends at most {n} of its {LENDING_B_NOMINAL} GPUs: when team A "
              f"has borrowed all it may, team B still gets {_lending_kept(n)} GPUs the moment its jobs arrive "
              f"(t={at} s), without preempting anyone. Its guaranteed share is nominalQuota - lendingLimit = "
              f"{LENDING_B_NOMINAL} - {n} = {LENDING_B_NOMINAL - n}.")
        return True
    if n < 0:
        print(f"Exercise {ex}: you said {n}; a lendingLimit cannot be negative (0 means team B lends nothing).")
    elif n == LENDING_KEEP:
        print(f"Exercise {ex}: you said {n}. {LENDING_KEEP} is what team B must keep; lendingLimit is what it lends. "
              f"With lendingLimit {n}, team A can borrow {n} of team B's GPUs, and team B gets only "
              f"{_lending_kept(n)} when its jobs arrive at t={at} s.")
    elif n > LENDING_B_NOMINAL:
        print(f"Exercise {ex}: you said {n}, more than team B's nominalQuota ({LENDING_B_NOMINAL}): team B then lends "
              f"everything, as with no lendingLimit at all, and gets {_lending_kept(n)} GPUs at t={at} s.")
    elif n < expected:
        print(f"Exercise {ex}: you said {n}. With lendingLimit {n}, team B keeps {_lending_kept(n)} GPUs: at least "
              f"{LENDING_KEEP}, so it is safe, but team A may borrow only {n} of them. The question asks for the "
              f"lendingLimit that keeps exactly {LENDING_KEEP}, lending all the rest: try larger values.")
    else:
        print(f"Exercise {ex}: you said {n}. With lendingLimit {n}, team A borrows {n} of team B's GPUs, and team B "
              f"gets only {_lending_kept(n)} when its jobs arrive at t={at} s, fewer than {LENDING_KEEP}. "
              "Try smaller values.")
    return False


@functools.lru_cache(maxsize=None)
def _reclaim_puzzle() -> tuple:
    """What happens in ``lesson03.reclaim_puzzle()`` under stack 'kueue+gang'.

    (workload keys, victims, reasons, preemptors, candidates): the candidates are the other
    team's workloads running when the preemption happens, in the order Kueue tries them
    (lowest priority first, then the most recently admitted).
    """
    from gangkit.lessons import lesson03

    sc = lesson03.reclaim_puzzle()
    result = simulate(sc, stack="kueue+gang")
    pre = lesson03.preemptions(result, sc)
    by = tuple(sorted(set(pre["by"])))
    at = float(pre["time_s"].min()) if len(pre) else math.inf
    team = lesson03.team_of(sc)
    preemptor_teams = {team[k] for k in by}
    table = lesson03.job_table(result, sc)
    prio = {j.key: j.priority for j in sc.jobs}
    running = [k for k, row in table.iterrows()
               if team[k] not in preemptor_teams and row["first_admitted_s"] <= at]
    candidates = tuple(sorted(running, key=lambda k: (prio[k], -table.loc[k, "first_admitted_s"])))
    return (tuple(j.key for j in sc.jobs), tuple(pre["victim"]), tuple(sorted(set(pre["reason"]))), by, candidates)


def _workload_names(answer) -> list[str] | None:
    """The names in an answer (a string, or a list, tuple or set of strings); None if it is not that."""
    if isinstance(answer, str):
        return [answer]
    if isinstance(answer, (list, tuple, set, frozenset)) and all(isinstance(a, str) for a in answer):
        return list(answer)
    return None


def _bare(key: str) -> str:
    return key.rsplit("/", 1)[-1]


@counts_wrong_answers("3.2")
def check_03_preempted_workload(answer) -> bool:
    """Exercise 3.2: which workload Kueue preempts when team B reclaims its quota in ``lesson03.reclaim_puzzle()``.

    The answer is a workload's name (``'a-2'`` or ``'team-a/a-2'``), or a list of names if
    several are preempted; it must equal the set of victims of the simulation under stack
    'kueue+gang'. Surrounding spaces and case are forgiven.
    """
    ex = "3.2"
    if answer is None:
        return not_done(ex, "predict first, then simulate gangkit.lessons.lesson03.reclaim_puzzle() with stack='kueue+gang' "
                            "and read lesson03.preemptions(result, scenario): answer the victim's name, like 'a-1'.", hint=HINTS[ex])
    names = _workload_names(answer)
    if names is None or not names:
        got = kind(answer)
        if isinstance(answer, numbers.Real) and not isinstance(answer, bool):
            got = f"the number {fmt(float(answer))}"
        print(f"Exercise {ex}: expected the name of a workload, as text in quotes like 'a-1' (or a list of names), "
              f"but got {got}.")
        return False
    keys, victims, reasons, by, candidates = _reclaim_puzzle()
    lookup = {k.lower(): k for k in keys}
    lookup.update({_bare(k).lower(): k for k in keys})
    chosen = []
    for name in names:
        key = lookup.get(name.strip().lower())
        if key is None:
            print(f"Exercise {ex}: there is no workload named {name!r} in this setup; its workloads are "
                  f"{', '.join(_bare(k) for k in keys)}.")
            return False
        chosen.append(key)
    chosen_set, victim_set = set(chosen), set(victims)
    shown = ", ".join(_bare(v) for v in victims) or "none"
    preemptor = ", ".join(_bare(k) for k in by)
    why = ("Kueue tries candidates from the lowest priority and the most recently admitted, removes them until the "
           "preemptor fits, then puts back each victim picked before the last that the preemptor can do without (Kueue v0.19.2, "
           "fillBackWorkloads in pkg/scheduler/preemption/preemption.go).")
    if chosen_set == victim_set:
        print(f"Correct! Kueue preempts {shown} (reason {', '.join(reasons)}). It tries candidates from the lowest "
              "priority and the most recently admitted, removes them until the preemptor fits, then puts back each "
              "victim picked before the last that the preemptor can do without; here that leaves a minimal set. Team B takes back its own "
              "nominal quota, which team A had borrowed.")
        return True
    one = chosen[0] if len(chosen_set) == 1 else None
    if chosen_set & set(by):
        print(f"Exercise {ex}: {preemptor} is the preemptor: team B's workload that needs its GPUs back. Which of "
              "team A's workloads has to go?")
    elif chosen_set > victim_set:
        extra = ", ".join(_bare(k) for k in sorted(chosen_set - victim_set))
        print(f"Exercise {ex}: too many. Kueue may pick {extra} on the way, but it then puts back each victim picked before the last that "
              f"{preemptor} can do without; only {shown} is really preempted.")
    elif chosen_set < victim_set:
        print(f"Exercise {ex}: not enough: preempting only {', '.join(_bare(k) for k in chosen)} does not free enough "
              f"quota and room for {preemptor}.")
    elif one is not None and candidates and one == candidates[0]:
        print(f"Exercise {ex}: you said {_bare(one)}. It is the first candidate Kueue tries (lowest priority, most "
              f"recently admitted), but alone it frees too little for {preemptor}, so Kueue goes on to the next one; "
              f"then it checks which victims it can put back, and {_bare(one)} is one of them.")
    elif one is not None and candidates and one == candidates[-1]:
        print(f"Exercise {ex}: you said {_bare(one)}. It is the last candidate Kueue would try: admitted first. "
              f"{why}")
    else:
        print(f"Exercise {ex}: you said {', '.join(_bare(k) for k in chosen)}. {why} Count the GPUs: how many are "
              f"free when {preemptor} arrives, how many does it need, and which workloads free enough? Then check with "
              "lesson03.preemptions(result, scenario).")
    return False


@functools.lru_cache(maxsize=None)
def _big_waits() -> tuple:
    """(strategy, wait of 'big', mean wait of the small jobs) in ``lesson03.starvation_story`` under 'kueue+gang'."""
    from gangkit.lessons import lesson03

    out = []
    for strategy in QUEUEING_STRATEGIES:
        jobs = simulate(lesson03.starvation_story(strategy), stack="kueue+gang").jobs.set_index("job")
        small = jobs.loc[[k for k in jobs.index if _bare(k) != "big"], "wait_s"]
        out.append((strategy, float(jobs.loc["team-a/big", "wait_s"]), round(float(small.mean()), 1)))
    return tuple(out)


def _strategy_name(text: str) -> str | None:
    """A queueing strategy as Kueue spells it, from a learner's spelling ('strict', 'best-effort fifo', ...)."""
    squeezed = "".join(ch for ch in text.lower() if ch.isalpha())
    if squeezed in ("strictfifo", "strict"):
        return "StrictFIFO"
    if squeezed in ("besteffortfifo", "besteffort"):
        return "BestEffortFIFO"
    return None


@counts_wrong_answers("3.3")
def check_03_strategy_for_big_job(answer) -> bool:
    """Exercise 3.3: the queueingStrategy under which job 'big' of ``lesson03.starvation_story`` waits less.

    Both strategies are simulated under stack 'kueue+gang'; if they tie, both answers are right.
    Spellings such as 'strict' or 'best effort' are accepted, with Kueue's spelling in the message.
    """
    ex = "3.3"
    if answer is None:
        return not_done(ex, "simulate gangkit.lessons.lesson03.starvation_story('StrictFIFO') and "
                            "starvation_story('BestEffortFIFO') with stack='kueue+gang' and compare the wait_s of "
                            "'team-a/big' in result.jobs; answer the strategy's name.", hint=HINTS[ex])
    if not isinstance(answer, str):
        got = kind(answer)
        if isinstance(answer, numbers.Real) and not isinstance(answer, bool):
            got = f"the number {fmt(float(answer))}"
        print(f"Exercise {ex}: expected the name of a queueing strategy, the text 'StrictFIFO' or 'BestEffortFIFO' "
              f"(in quotes), but got {got}.")
        return False
    name = _strategy_name(answer)
    if name is None:
        print(f"Exercise {ex}: you said {answer!r}; Kueue's queueing strategies are 'StrictFIFO' and 'BestEffortFIFO'.")
        return False
    rows = {s: (big, small) for s, big, small in _big_waits()}
    best = min(big for big, _ in rows.values())
    winners = [s for s, (big, _) in rows.items() if big == best]
    spelled = "" if answer == name else f" (Kueue spells it {name!r})"
    other = next(s for s in rows if s != name)
    if name in winners:
        if len(winners) > 1:
            print(f"Correct!{spelled} Both strategies give big the same wait here ({fmt(best)} s), so either answer "
                  "is right.")
        else:
            print(f"Correct!{spelled} big waits {fmt(rows[name][0])} s under {name} against {fmt(rows[other][0])} s "
                  f"under {other}. Under StrictFIFO nobody passes the head of the queue, so big starts as soon as "
                  "enough quota is free; under BestEffortFIFO it is parked whenever it does not fit and the small "
                  f"jobs behind it keep taking the GPUs that free up. The small jobs pay instead: their mean wait is "
                  f"{fmt(rows[name][1])} s under {name} against {fmt(rows[other][1])} s under {other}.")
        return True
    print(f"Exercise {ex}: you said {name}{spelled}. That is the better strategy for the small jobs (mean wait "
          f"{fmt(rows[name][1])} s against {fmt(rows[other][1])} s), but the question is about big: compare the "
          "wait_s of 'team-a/big' in both runs.")
    return False
