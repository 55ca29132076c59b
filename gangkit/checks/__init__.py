"""Check functions for the exercises: a patient teaching assistant looking over your shoulder.

Picture a teaching assistant who walks past your desk. If your page is still blank, they do not
mark it wrong; they say "not done yet" and point at where to start. If you wrote the right kind
of thing in the wrong place (a word where a number belongs), they say what kind of answer the
question wants. If your number is off, they say what your number probably *is* (the allocated
utilization instead of the effective one, when Y starts instead of how long it waited) and where
to look. If you are right, they say why in one sentence.

Every exercise cell in ``solutions/`` and ``exercises/`` has the same shape::

    answer = None
    ### BEGIN SOLUTION
    ...your code, computing the answer with gangkit...
    answer = ...
    ### END SOLUTION
    check_01_held_idle(answer)

The exercise notebooks are generated from the solutions by clearing the region between the
markers, so an untouched exercise still runs to the end: ``answer`` stays ``None`` and each check
prints ``Exercise N: not done yet — <a hint>`` and returns ``False``.

Rules every check follows:

- the expected answer is computed *from the simulator* (never typed in), so the checks stay right
  when the model changes; simulations are cached with :func:`functools.lru_cache`, so a check
  runs in milliseconds after the first call;
- messages are plain ``print`` output and deterministic (the notebooks' stored outputs are
  compared exactly by nbval);
- each check returns ``True`` for a right answer and ``False`` otherwise.

Tolerances: counts of GPUs, nodes and jobs must be whole numbers (``4.0`` counts as ``4``);
times are accepted within 0.5 s (the small scenarios only have whole-second events); the
utilization is accepted within 0.005 of the summary figure (so ``0.667`` and ``2/3`` are right).
gangkit reports utilization as a fraction from 0 to 1; a percentage (``66.7``) is accepted too,
with a note, because it is the same understanding written in other units.
"""

from __future__ import annotations

import functools
import math
import numbers

from gangkit.model.nodes import nodes
from gangkit.model.scenario import Scenario
from gangkit.workloads.scenarios import load as load_scenario, mixed
from gangkit.simulate import simulate
from gangkit.model.jobs import job

__all__ = [
    "check_00_jobs_finished",
    "check_01_held_idle",
    "check_01_min_nodes",
    "check_01_effective_utilization",
    "check_02_y_wait_strict",
    "check_02_gang_finishes",
    "check_02_best_ordering",
]

#: Times (seconds) within this distance of the simulated value are right.
TIME_TOLERANCE_S = 0.5
#: Utilizations (fractions) within this distance of the summary figure are right.
UTILIZATION_TOLERANCE = 0.005
#: ``check_01_min_nodes`` simulates clusters of 1 to this many one-GPU nodes.
MIN_NODES_SWEEP = 16
#: ``check_01_min_nodes``: workers per job (one GPU each).
PODS_PER_JOB = 4
#: The stream of ``check_02_best_ordering``.
MIXED_ARGS = {"n_jobs": 300, "n_nodes": 32, "load": 0.9, "seed": 1}


# --------------------------------------------------------------------------------------------
# Cached simulations (plain, immutable data only, so a cached value cannot be changed by a caller)
# --------------------------------------------------------------------------------------------

@functools.lru_cache(maxsize=None)
def _figures(scenario: str, stack: str, ordering: str | None = None) -> tuple:
    """The summary figures of a built-in scenario, as sorted (name, value) pairs."""
    return tuple(sorted(simulate(scenario, stack=stack, ordering=ordering).summary().items()))


def _figure(scenario: str, stack: str, name: str, ordering: str | None = None):
    return dict(_figures(scenario, stack, ordering))[name]


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


@functools.lru_cache(maxsize=None)
def _held_by_job(scenario: str, stack: str) -> tuple:
    """(job, GPUs held without progress) for every deadlocked job, from ``Result.holders``."""
    holders = simulate(scenario, stack=stack).holders
    return tuple((r.job, int(r.gpus_held)) for r in holders.itertuples())


@functools.lru_cache(maxsize=None)
def _capacity(scenario: str) -> int:
    """GPUs in a built-in scenario's cluster."""
    return sum(n.gpus for n in load_scenario(scenario).nodes)


def two_four_worker_jobs(n_nodes: int) -> Scenario:
    """The scenario of exercise 1.2: two 4-worker sync jobs (1 GPU each) on ``n_nodes`` one-GPU nodes."""
    jobs = [job("A", pods=PODS_PER_JOB, gpus=1), job("B", pods=PODS_PER_JOB, gpus=1)]
    return Scenario(nodes(n_nodes, gpus=1), jobs, name=f"two-4-worker-jobs-on-{n_nodes}-nodes")


@functools.lru_cache(maxsize=None)
def _min_nodes_sweep() -> tuple:
    """For n = 1..MIN_NODES_SWEEP: (n, deadlock, ((job, GPUs held), ...), jobs waiting holding nothing)."""
    out = []
    for n in range(1, MIN_NODES_SWEEP + 1):
        r = simulate(two_four_worker_jobs(n), stack="pod")
        held = tuple((h.job, int(h.gpus_held)) for h in r.holders.itertuples())
        waiting = tuple(r.jobs.loc[r.jobs["state"] == "WaitingAtEnd", "job"])
        out.append((n, r.deadlock, held, waiting))
    return tuple(out)


def _min_nodes_expected() -> int:
    """The smallest n from which no cluster size up to the sweep's end deadlocks."""
    best = None
    for n, deadlock, _, _ in reversed(_min_nodes_sweep()):
        if deadlock:
            break
        best = n
    if best is None:  # cannot happen with the model as it is; say so loudly rather than guess
        raise RuntimeError(f"every cluster of 1 to {MIN_NODES_SWEEP} nodes deadlocks; widen MIN_NODES_SWEEP")
    return best


@functools.lru_cache(maxsize=None)
def _mixed_mean_waits() -> tuple:
    """(ordering, mean wait in s) for 'strict' and 'skip' on the exercise's ``mixed`` stream, under 'gang'."""
    return tuple(
        (o, simulate(mixed(**MIXED_ARGS), stack="gang", ordering=o).summary()["mean_wait_s"])
        for o in ("strict", "skip")
    )


# --------------------------------------------------------------------------------------------
# Reading an answer
# --------------------------------------------------------------------------------------------

def _fmt(x: float) -> str:
    """A number as a learner would write it: 4, 0.6667, 540."""
    if float(x).is_integer():
        return str(int(x))
    return f"{x:.6g}"


def _fmt_inf(x: float) -> str:
    return "infinity" if x > 0 else "minus infinity"


def _not_done(ex: str, hint: str) -> bool:
    print(f"Exercise {ex}: not done yet — {hint}")
    return False


def _kind(answer) -> str:
    t = type(answer)
    if t.__module__.startswith("pandas"):
        return f"a pandas {t.__name__}"
    if t.__module__.startswith("gangkit"):
        return f"a gangkit {t.__name__}"
    return {list: "a list", tuple: "a tuple", dict: "a dict", set: "a set"}.get(t, f"a value of type {t.__name__}")


def _number(ex: str, answer, *, whole: bool, what: str, nan_hint: str = "") -> float | None:
    """``answer`` as a float, or None after printing what type the exercise expects."""
    expected = f"a whole number (an int, like 4) of {what}" if whole else f"a number (like 540 or 0.5): {what}"
    if isinstance(answer, bool) or type(answer).__name__ == "bool_":
        print(f"Exercise {ex}: expected {expected}, but got {answer!r}, a True/False value. "
              "Put the number itself in answer.")
        return None
    if isinstance(answer, str):
        try:
            float(answer)
        except ValueError:
            print(f"Exercise {ex}: expected {expected}, but got the text {answer!r}. "
                  "Put the number itself in answer, without quotes.")
        else:
            print(f"Exercise {ex}: expected {expected}, but got the text {answer!r} (in quotes). "
                  f"Remove the quotes: answer = {answer.strip()}")
        return None
    if not isinstance(answer, numbers.Real):
        hint = "Put one number in answer"
        if type(answer).__name__ in ("Series", "DataFrame"):
            hint = "Pick one value out of it, for example with .iloc[0] or .item()"
        elif isinstance(answer, dict):
            hint = "Pick the one figure you need out of it, for example result.summary()['...']"
        elif type(answer).__name__ == "Result":
            hint = "Ask it for the figure, for example result.summary()['...'] or result.jobs"
        print(f"Exercise {ex}: expected {expected}, but got {_kind(answer)}. {hint}.")
        return None
    value = float(answer)
    if math.isnan(value):
        print(f"Exercise {ex}: your answer is NaN (not a number): pandas writes NaN where a value does "
              "not exist, for example the finish time of a job that never finished. "
              f"Expected {expected}.{nan_hint}")
        return None
    if math.isinf(value):
        print(f"Exercise {ex}: expected {expected}, but got {_fmt_inf(value)}; every answer here is finite.")
        return None
    if whole and not value.is_integer():
        print(f"Exercise {ex}: expected {expected}, but got {_fmt(value)}; a count has no fraction.")
        return None
    return value


def _close(a: float, b: float, tol: float) -> bool:
    return abs(a - b) <= tol + 1e-12


# --------------------------------------------------------------------------------------------
# Lesson 00: welcome
# --------------------------------------------------------------------------------------------

def check_00_jobs_finished(answer) -> bool:
    """Exercise 0.1: how many jobs of ``three-workers`` finish under stack 'gang'."""
    ex = "0.1"
    if answer is None:
        return _not_done(ex, "run gk.simulate('three-workers', stack='gang') and count the jobs whose "
                             "state is 'Finished' (result.summary()['jobs_finished'] has it too).")
    value = _number(ex, answer, whole=True, what="jobs")
    if value is None:
        return False
    expected = _figure("three-workers", "gang", "jobs_finished")
    total = _figure("three-workers", "gang", "jobs_total")
    if value == expected:
        print(f"Correct! {_fmt(expected)} of {_fmt(total)} jobs finish: placed gang by gang, every job "
              "eventually gets all its GPUs at once, so none is left stuck.")
        return True
    if value > total:
        print(f"Exercise {ex}: you said {_fmt(value)}, but three-workers has only {_fmt(total)} jobs "
              "(Z, X and Y). Look at result.jobs: one row per job, with its state.")
    elif value < 0:
        print(f"Exercise {ex}: you said {_fmt(value)}; a number of jobs cannot be negative.")
    else:
        print(f"Exercise {ex}: you said {_fmt(value)}. Count the rows of result.jobs whose state is "
              "'Finished' (or read result.summary()['jobs_finished']), for the run with stack='gang'.")
    return False


# --------------------------------------------------------------------------------------------
# Lesson 01: the pod-level deadlock
# --------------------------------------------------------------------------------------------

def check_01_held_idle(answer) -> bool:
    """Exercise 1.1: GPUs held idle at the end of ``two-gangs-deadlock`` under stack 'pod'."""
    ex = "1.1"
    if answer is None:
        return _not_done(ex, "simulate 'two-gangs-deadlock' with stack='pod', then read "
                             "result.summary()['held_idle_gpus_at_end'] or add up result.holders['gpus_held'].")
    value = _number(ex, answer, whole=True, what="GPUs")
    if value is None:
        return False
    expected = _figure("two-gangs-deadlock", "pod", "held_idle_gpus_at_end")
    held = _held_by_job("two-gangs-deadlock", "pod")
    under_gang = _figure("two-gangs-deadlock", "gang", "held_idle_gpus_at_end")
    if value == expected:
        print(f"Correct! All {_fmt(expected)} GPUs are bound to workers of jobs that cannot progress: "
              "each job holds part of what it needs and waits for ever for the rest.")
        return True
    per_job = {g for _, g in held}
    capacity = _capacity("two-gangs-deadlock")
    if value < 0:
        print(f"Exercise {ex}: you said {_fmt(value)}; a number of GPUs cannot be negative.")
    elif value > capacity:
        print(f"Exercise {ex}: you said {_fmt(value)}, but the cluster has only {capacity} GPUs: a job cannot "
              "hold GPUs it has not got. Look at result.holders: what each job holds, and on which nodes.")
    elif value in per_job and len(held) > 1:
        names = " and ".join(j for j, _ in held)
        print(f"Exercise {ex}: you said {_fmt(value)}. That is what one job holds, but {names} both hold "
              "GPUs without progress. Add up result.holders['gpus_held'].")
    elif value == under_gang:
        print(f"Exercise {ex}: you said {_fmt(value)}. That is the answer under stack='gang', where the jobs "
              "run one after the other. Under stack='pod' the run ends in a deadlock: look at "
              "result.deadlock_report().")
    else:
        print(f"Exercise {ex}: you said {_fmt(value)}. Count the GPUs bound to pods of jobs that cannot "
              "progress: look at result.holders (or result.summary()['held_idle_gpus_at_end']) for the "
              "run with stack='pod'.")
    return False


def _describe_n(n: int) -> str:
    """What the simulator says about two 4-worker jobs on n one-GPU nodes, in words."""
    for m, deadlock, held, waiting in _min_nodes_sweep():
        if m != n:
            continue
        if not deadlock:
            return f"with {n} nodes there is no deadlock"
        parts = [f"{j} has {g} of its {PODS_PER_JOB} workers bound" for j, g in held]
        parts += [f"{j} waits holding nothing" for j in waiting]
        text = f"with {n} node{'s' if n != 1 else ''} the simulator reports a deadlock ({', '.join(parts)})"
        if n < PODS_PER_JOB:
            text += (f"; with fewer than {PODS_PER_JOB} one-GPU nodes neither job could ever run, even alone, yet the jobs are "
                     "not rejected (each 1-GPU pod fits some node), so their pods bind and hold GPUs for ever")
        return text
    return f"with {n} nodes there is no deadlock"


def check_01_min_nodes(answer) -> bool:
    """Exercise 1.2: the smallest cluster of one-GPU nodes on which two 4-worker jobs never deadlock.

    Computed by simulating n = 1..16 nodes (``gk.nodes(n, gpus=1)``) with two jobs of 4 one-GPU
    sync workers submitted together, under stack 'pod'; the answer is the smallest n from which
    no larger n in the sweep deadlocks either. Below 4 nodes the jobs cannot run at all, and the
    simulator still reports a deadlock (the pods bind; nothing is rejected).
    """
    ex = "1.2"
    if answer is None:
        return _not_done(ex, "for n = 1, 2, ..., 16, simulate gk.Scenario(gk.nodes(n, gpus=1), "
                             "[gk.job('A', pods=4, gpus=1), gk.job('B', pods=4, gpus=1)]) with stack='pod' and "
                             "look at result.deadlock. Careful below 4 nodes: the jobs cannot run at all there, "
                             "and the simulator reports that as a deadlock too. Answer the smallest n from "
                             "which no deadlock happens for any larger n.")
    value = _number(ex, answer, whole=True, what="nodes")
    if value is None:
        return False
    expected = _min_nodes_expected()
    n = int(value)
    if n == expected:
        print(f"Correct! With {expected} nodes, even when pod-by-pod binding alternates between the jobs, one "
              f"of them gets all {PODS_PER_JOB} workers, runs, finishes and frees its GPUs for the other; "
              f"{_describe_n(expected - 1)}.")
        return True
    if n < 1:
        print(f"Exercise {ex}: you said {n}; a cluster needs at least one node.")
    elif n < expected:
        print(f"Exercise {ex}: you said {n}, but {_describe_n(n)}. Simulate the next sizes up until "
              "result.deadlock turns False and stays False.")
    else:
        print(f"Exercise {ex}: you said {n}. That cluster does not deadlock, but a smaller one does not "
              f"either: try {n - 1}, {n - 2}, ... and stop at the first size that deadlocks.")
    return False


def check_01_effective_utilization(answer) -> bool:
    """Exercise 1.3: the effective utilization of ``three-workers`` under stack 'pod'.

    Right within 0.005 of ``summary()['effective_utilization']``. A percentage (a value above
    1 and at most 100 that matches once divided by 100) is accepted with a note that gangkit
    reports fractions.
    """
    ex = "1.3"
    if answer is None:
        return _not_done(ex, "simulate 'three-workers' with stack='pod' and read "
                             "result.summary()['effective_utilization']: the share of GPU-seconds "
                             "that did useful work.")
    value = _number(ex, answer, whole=False, what="the effective utilization, a fraction from 0 to 1")
    if value is None:
        return False
    expected = _figure("three-workers", "pod", "effective_utilization")
    allocated = _figure("three-workers", "pod", "allocated_utilization")
    held = _figure("three-workers", "pod", "held_idle_gpu_seconds") / _figure("three-workers", "pod", "capacity_gpu_seconds")
    tol = UTILIZATION_TOLERANCE
    why = ("GPUs bound to X's waiting workers count as allocated but did no work, so effective "
           "utilization is lower than allocated.")
    if _close(value, expected, tol):
        print(f"Correct! Effective utilization is {_fmt(expected)}: {why}")
        return True
    if 1 < value <= 100 and _close(value / 100, expected, tol):
        print(f"Correct! {_fmt(value)} % is {_fmt(expected)} as a fraction, and gangkit reports fractions "
              f"(0 to 1), so write {_fmt(expected)} next time. {why}")
        return True
    if value < 0 or value > 100:
        print(f"Exercise {ex}: you said {_fmt(value)}; a utilization is a fraction from 0 to 1 "
              "(gangkit reports fractions, not percentages).")
        return False
    frac = value / 100 if value > 1 else value
    if _close(frac, allocated, tol):
        print(f"Exercise {ex}: you said {_fmt(value)}. That is the allocated utilization: it counts every GPU "
              "bound to a pod, including X's workers that sit idle waiting for their third. Effective "
              "utilization counts only GPU-seconds of jobs that progress: "
              "result.summary()['effective_utilization'].")
    elif _close(frac, held, tol):
        print(f"Exercise {ex}: you said {_fmt(value)}. That is the share of GPU-seconds held idle "
              "(held_idle_gpu_seconds / capacity_gpu_seconds). Effective utilization is the share that did "
              "useful work: result.summary()['effective_utilization'].")
    elif _close(frac, expected, 0.05):
        print(f"Exercise {ex}: you said {_fmt(value)}: close, but more than {_fmt(tol)} away. Read the figure "
              "from result.summary()['effective_utilization'] rather than from a plot.")
    else:
        print(f"Exercise {ex}: you said {_fmt(value)}. Effective utilization is useful GPU-seconds divided by "
              "capacity GPU-seconds; simulate 'three-workers' with stack='pod' and read "
              "result.summary()['effective_utilization'].")
    return False


# --------------------------------------------------------------------------------------------
# Lesson 02: gang admission
# --------------------------------------------------------------------------------------------

def _minutes_note(value: float, expected: float) -> str:
    if expected and _close(value * 60, expected, TIME_TOLERANCE_S):
        return " If you meant minutes: gangkit reports times in seconds."
    return ""


def check_02_y_wait_strict(answer) -> bool:
    """Exercise 2.1: the wait (s) of job Y in ``three-workers`` under stack 'gang', ordering 'strict'."""
    ex = "2.1"
    if answer is None:
        return _not_done(ex, "simulate 'three-workers' with stack='gang' and ordering='strict', then read "
                             "the wait_s of Y's row in result.jobs.")
    value = _number(ex, answer, whole=False, what="Y's wait in seconds")
    if value is None:
        return False
    y = _job_row("three-workers", "gang", "Y", "strict")
    x = _job_row("three-workers", "gang", "X", "strict")
    y_skip = _job_row("three-workers", "gang", "Y", "skip")
    expected = y["wait_s"]
    if _close(value, expected, TIME_TOLERANCE_S):
        print(f"Correct! Y waits {_fmt(expected)} s: under 'strict', X is ahead of Y in the queue and cannot "
              "fit yet, so it blocks Y even though Y's one GPU is free.")
        return True
    if _close(value, y_skip["wait_s"], TIME_TOLERANCE_S):
        print(f"Exercise {ex}: you said {_fmt(value)}. That is Y's wait under ordering='skip', where the gang "
              "scheduler moves past X (which does not fit) and starts Y. Under 'strict', X blocks the jobs "
              "behind it: simulate with ordering='strict'.")
    elif _close(value, y["start_s"], TIME_TOLERANCE_S):
        print(f"Exercise {ex}: you said {_fmt(value)}. That is when Y starts; its wait counts from its "
              f"submission at t={_fmt(y['submit_s'])} s (wait_s = start_s - submit_s).")
    elif _close(value, x["wait_s"], TIME_TOLERANCE_S):
        print(f"Exercise {ex}: you said {_fmt(value)}. That is X's wait; the question asks for Y's row of "
              "result.jobs.")
    elif _close(value, y["submit_s"], TIME_TOLERANCE_S):
        print(f"Exercise {ex}: you said {_fmt(value)}. That is when Y is submitted; its wait runs from "
              "then until it starts (column wait_s).")
    else:
        print(f"Exercise {ex}: you said {_fmt(value)}. Look at result.jobs for the run with stack='gang' "
              f"and ordering='strict': Y's row, column wait_s.{_minutes_note(value, expected)}")
    return False


def check_02_gang_finishes(answer) -> bool:
    """Exercise 2.2: when (s) the second job of ``two-gangs-deadlock`` finishes under stack 'gang'."""
    ex = "2.2"
    if answer is None:
        return _not_done(ex, "simulate 'two-gangs-deadlock' with stack='gang' and read the finish_s of the "
                             "second job (B) in result.jobs.")
    value = _number(ex, answer, whole=False, what="a time in seconds",
                    nan_hint=" Under stack='pod' neither job ever finishes; simulate with stack='gang'.")
    if value is None:
        return False
    rows = _job_rows("two-gangs-deadlock", "gang")
    first = dict(zip(("job", "submit_s", "start_s", "finish_s", "wait_s", "state"), rows[0]))
    second = dict(zip(("job", "submit_s", "start_s", "finish_s", "wait_s", "state"), rows[1]))
    expected = second["finish_s"]
    pod_end = _figure("two-gangs-deadlock", "pod", "makespan_s")
    if _close(value, expected, TIME_TOLERANCE_S):
        print(f"Correct! {second['job']} finishes at t={_fmt(expected)} s: the gang scheduler places "
              f"{first['job']} whole first, and {second['job']} whole when {first['job']}'s GPUs come back, "
              "one after the other instead of both stuck.")
        return True
    if _close(value, first["finish_s"], TIME_TOLERANCE_S):
        print(f"Exercise {ex}: you said {_fmt(value)}. At t={_fmt(value)} s the first job ({first['job']}) "
              f"finishes and {second['job']} only starts; {second['job']} then runs for its own run time. "
              f"Read {second['job']}'s finish_s.")
    elif _close(value, pod_end, TIME_TOLERANCE_S):
        print(f"Exercise {ex}: you said {_fmt(value)}. That is the end of the run under stack='pod' (its "
              "horizon), where nothing finishes. Simulate with stack='gang'.")
    elif _close(value, second["wait_s"], TIME_TOLERANCE_S) and value != expected:
        print(f"Exercise {ex}: you said {_fmt(value)}. That is how long {second['job']} waits before it "
              "starts; the question asks when it finishes (column finish_s).")
    else:
        print(f"Exercise {ex}: you said {_fmt(value)}. Look at result.jobs for the run with stack='gang': "
              f"the row of {second['job']}, column finish_s.{_minutes_note(value, expected)}")
    return False


def check_02_best_ordering(answer) -> bool:
    """Exercise 2.3: the ordering ('strict' or 'skip') with the lower mean wait on a ``mixed`` stream.

    The stream is ``gk.scenarios.mixed(n_jobs=300, n_nodes=32, load=0.9, seed=1)`` under stack
    'gang'; both orderings are simulated and compared on ``summary()['mean_wait_s']``; if they
    tie, both answers are right. Case and surrounding spaces are forgiven.
    """
    ex = "2.3"
    if answer is None:
        return _not_done(ex, "simulate gk.scenarios.mixed(n_jobs=300, n_nodes=32, load=0.9, seed=1) with "
                             "stack='gang' twice, once with ordering='strict' and once with ordering='skip', "
                             "and compare result.summary()['mean_wait_s'].")
    if not isinstance(answer, str):
        got = _kind(answer)
        if isinstance(answer, numbers.Real) and not isinstance(answer, bool):
            got = f"the number {_fmt(float(answer))}"
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
            print(f"Correct!{spelled} Both orderings give the same mean wait here ({_fmt(best)} s), so either "
                  "answer is right.")
        else:
            other = next(o for o in waits if o != name)
            print(f"Correct!{spelled} Mean wait {_fmt(waits[name])} s under {name!r} against "
                  f"{_fmt(waits[other])} s under {other!r}: 'skip' starts the small jobs that fit while a "
                  "large gang waits for room, instead of letting that gang block the whole queue.")
        return True
    if name == "strict":
        print(f"Exercise {ex}: you said 'strict'. Under 'strict', a gang that cannot fit yet blocks every job "
              "behind it, even small ones that would fit now. Compare result.summary()['mean_wait_s'] of "
              "both runs again: which one is lower?")
    else:
        print(f"Exercise {ex}: you said 'skip'. Under 'skip', small jobs can keep passing a big gang that "
              "waits for room. Compare result.summary()['mean_wait_s'] of both runs again: which one is lower?")
    return False


__all__ += ["check_02_hard_timeout"]

#: Exercise 2.4: big's YuniKorn placeholder timeout (s), with gangSchedulingStyle Hard.
HARD_TIMEOUT_S = 1200


@functools.lru_cache(maxsize=None)
def _big_under_yunikorn(timeout: float | None, style: str | None) -> tuple:
    """(state, time the run took big out or started it, submit time) of big in lesson02.contended()."""
    from gangkit.lessons import lesson02

    sc = lesson02.with_big(lesson02.contended(), placeholder_timeout=timeout, gang_style=style)
    r = simulate(sc, stack="yunikorn")
    big = r.jobs.set_index("job").loc["big"]
    gone = r.events[(r.events["event"] == "deactivated") & (r.events["job"] == "big")]["time_s"]
    return big["state"], float(gone.iloc[0]) if len(gone) else float(big["start_s"]), float(big["submit_s"])


def check_02_hard_timeout(answer) -> bool:
    """Exercise 2.4: when (s) ``big`` of ``lesson02.contended()`` fails under stack 'yunikorn'
    with ``placeholder_timeout=1200`` and ``gang_style='Hard'``."""
    ex = "2.4"
    if answer is None:
        return _not_done(ex, "make the scenario with lesson02.with_big(lesson02.contended(), placeholder_timeout=1200, "
                             "gang_style='Hard'), simulate it with stack='yunikorn', and read when big is deactivated "
                             "(result.events, event 'deactivated').")
    value = _number(ex, answer, whole=False, what="a time in seconds",
                    nan_hint=" big never starts, so its start_s is NaN; look for its 'deactivated' event instead.")
    if value is None:
        return False
    state, expected, submit = _big_under_yunikorn(float(HARD_TIMEOUT_S), "Hard")
    if _close(value, expected, TIME_TOLERANCE_S):
        print(f"Correct! big is {state} at t={_fmt(expected)} s: its first placeholder was allocated when it "
              f"arrived at t={_fmt(submit)} s, and {HARD_TIMEOUT_S} s later, with its placeholders still not "
              "complete, the Hard style fails the application and releases what it held.")
        return True
    _, soft_start, _ = _big_under_yunikorn(float(HARD_TIMEOUT_S), "Soft")
    _, default_end, _ = _big_under_yunikorn(None, "Hard")
    if _close(value, HARD_TIMEOUT_S, TIME_TOLERANCE_S):
        print(f"Exercise {ex}: you said {_fmt(value)}. That is the timeout itself; the timer starts when the "
              f"first placeholder is allocated, and big arrives at t={_fmt(submit)} s.")
    elif _close(value, default_end, TIME_TOLERANCE_S):
        print(f"Exercise {ex}: you said {_fmt(value)}. That is the failure time with the default timeout of "
              f"15 minutes; set placeholder_timeout={HARD_TIMEOUT_S} on big.")
    elif _close(value, soft_start, TIME_TOLERANCE_S):
        print(f"Exercise {ex}: you said {_fmt(value)}. That is when big starts with the Soft style, which falls "
              "back to normal scheduling after the timeout; set gang_style='Hard'.")
    else:
        print(f"Exercise {ex}: you said {_fmt(value)}. Look for big's 'deactivated' event in result.events of "
              f"the yunikorn run.{_minutes_note(value, expected)}")
    return False


# --------------------------------------------------------------------------------------------
# Lesson 03: queues and quota (Kueue)
# --------------------------------------------------------------------------------------------

__all__ += [
    "check_03_lending_limit",
    "check_03_preempted_workload",
    "check_03_strategy_for_big_job",
]

#: Exercise 3.1: the GPUs team B must keep for itself.
LENDING_KEEP = 8
#: Kueue's two queueing strategies, as Kueue spells them.
QUEUEING_STRATEGIES = ("StrictFIFO", "BestEffortFIFO")


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


def check_03_lending_limit(answer) -> bool:
    """Exercise 3.1: team B's lendingLimit that keeps exactly 8 of its 12 GPUs for itself.

    Computed by simulating ``lesson03.lending_story(L)`` for L = 0 .. 12 under stack
    'kueue+gang' and counting the GPUs team B gets at t=600 s, when team A has borrowed all it
    may; the answer is the largest L that still leaves team B 8 GPUs.
    """
    ex = "3.1"
    if answer is None:
        return _not_done(ex, "for a few lendingLimits L, simulate gangkit.lessons.lesson03.lending_story(L) with "
                             "stack='kueue+gang' and count the GPUs team B gets when its jobs arrive, "
                             "lesson03.gpus_admitted_at(result, 'team-b', 600); answer the L that leaves team B 8.")
    value = _number(ex, answer, whole=True, what="GPUs (the lendingLimit)")
    if value is None:
        return False
    from gangkit.lessons.lesson03 import LENDING_B_ARRIVAL_S, LENDING_B_NOMINAL

    expected = _lending_expected()
    n = int(value)
    at = _fmt(LENDING_B_ARRIVAL_S)
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


def check_03_preempted_workload(answer) -> bool:
    """Exercise 3.2: which workload Kueue preempts when team B reclaims its quota in ``lesson03.reclaim_puzzle()``.

    The answer is a workload's name (``'a-2'`` or ``'team-a/a-2'``), or a list of names if
    several are preempted; it must equal the set of victims of the simulation under stack
    'kueue+gang'. Surrounding spaces and case are forgiven.
    """
    ex = "3.2"
    if answer is None:
        return _not_done(ex, "predict first, then simulate gangkit.lessons.lesson03.reclaim_puzzle() with stack='kueue+gang' "
                             "and read lesson03.preemptions(result, scenario): answer the victim's name, like 'a-1'.")
    names = _workload_names(answer)
    if names is None or not names:
        got = _kind(answer)
        if isinstance(answer, numbers.Real) and not isinstance(answer, bool):
            got = f"the number {_fmt(float(answer))}"
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
           "preemptor fits, then puts back every victim it can spare, so the set of victims is minimal.")
    if chosen_set == victim_set:
        print(f"Correct! Kueue preempts {shown} (reason {', '.join(reasons)}). It tries candidates from the lowest "
              "priority and the most recently admitted, removes them until the preemptor fits, then puts back every "
              "victim it can spare, so the set of victims is minimal. Team B takes back its own "
              "nominal quota, which team A had borrowed.")
        return True
    one = chosen[0] if len(chosen_set) == 1 else None
    if chosen_set & set(by):
        print(f"Exercise {ex}: {preemptor} is the preemptor: team B's workload that needs its GPUs back. Which of "
              "team A's workloads has to go?")
    elif chosen_set > victim_set:
        extra = ", ".join(_bare(k) for k in sorted(chosen_set - victim_set))
        print(f"Exercise {ex}: too many. Kueue may pick {extra} on the way, but it then puts back every victim "
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


def check_03_strategy_for_big_job(answer) -> bool:
    """Exercise 3.3: the queueingStrategy under which job 'big' of ``lesson03.starvation_story`` waits less.

    Both strategies are simulated under stack 'kueue+gang'; if they tie, both answers are right.
    Spellings such as 'strict' or 'best effort' are accepted, with Kueue's spelling in the message.
    """
    ex = "3.3"
    if answer is None:
        return _not_done(ex, "simulate gangkit.lessons.lesson03.starvation_story('StrictFIFO') and "
                             "starvation_story('BestEffortFIFO') with stack='kueue+gang' and compare the wait_s of "
                             "'team-a/big' in result.jobs; answer the strategy's name.")
    if not isinstance(answer, str):
        got = _kind(answer)
        if isinstance(answer, numbers.Real) and not isinstance(answer, bool):
            got = f"the number {_fmt(float(answer))}"
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
            print(f"Correct!{spelled} Both strategies give big the same wait here ({_fmt(best)} s), so either answer "
                  "is right.")
        else:
            print(f"Correct!{spelled} big waits {_fmt(rows[name][0])} s under {name} against {_fmt(rows[other][0])} s "
                  f"under {other}. Under StrictFIFO nobody passes the head of the queue, so big starts as soon as "
                  "enough quota is free; under BestEffortFIFO it is parked whenever it does not fit and the small "
                  f"jobs behind it keep taking the GPUs that free up. The small jobs pay instead: their mean wait is "
                  f"{_fmt(rows[name][1])} s under {name} against {_fmt(rows[other][1])} s under {other}.")
        return True
    print(f"Exercise {ex}: you said {name}{spelled}. That is the better strategy for the small jobs (mean wait "
          f"{_fmt(rows[name][1])} s against {_fmt(rows[other][1])} s), but the question is about big: compare the "
          "wait_s of 'team-a/big' in both runs.")
    return False


# --------------------------------------------------------------------------------------------
# Lesson 04: utilization versus waiting
# --------------------------------------------------------------------------------------------

__all__ += [
    "check_04_saturation_load",
    "check_04_policy_for_big_gangs",
    "check_04_starved_gang_wait",
]

#: Exercise 4.1: the share of whole-node gangs in the mix whose stability limit is asked for.
SATURATION_NODE_SHARE = 0.3
#: Exercise 4.1: loads within this distance of the saturated system's utilization are right
#: (another seed or stream length moves the estimate by about 0.02).
SATURATION_TOLERANCE = 0.03
#: Exercise 4.2: the run (load, seed) and the utilization target.
POLICY_LOAD, POLICY_SEED, POLICY_TARGET = 0.6, 1, 0.6
#: Exercise 4.3: the run (load, seed) under 'skip' whose most starved gang is asked for.
STARVED_LOAD, STARVED_SEED = 0.7, 0
#: Exercise 4.3: waits (seconds) within this distance of the simulated one are right.
WAIT_TOLERANCE_S = 1.0


def check_04_saturation_load(answer) -> bool:
    """Exercise 4.1: the offered load at which ``strict`` stops being stable, for the mix with 30% gangs.

    The expected value is the effective utilization of the saturated system,
    ``lesson04.saturated("strict", node_share=0.3)`` (1000 jobs, seed 0); answers within 0.03 are
    right. A percentage is accepted with a note.
    """
    ex = "4.1"
    if answer is None:
        return _not_done(ex, "measure the saturated system, gangkit.lessons.lesson04.saturated('strict', node_share=0.3), "
                             "and answer its effective_utilization, a load such as 0.7.")
    value = _number(ex, answer, whole=False, what="the offered load (a fraction of the cluster's GPUs)")
    if value is None:
        return False
    from gangkit.lessons import lesson04

    sat = lesson04.saturated("strict", SATURATION_NODE_SHARE)
    expected = sat["effective_utilization"]
    note = ""
    if value > 1.5 and _close(value / 100, expected, SATURATION_TOLERANCE):
        note = f" (You wrote a percentage; gangkit writes loads as fractions: {_fmt(round(value / 100, 4))}.)"
        value = value / 100
    if _close(value, expected, SATURATION_TOLERANCE):
        print(f"Correct!{note} With every job queued, strict keeps {_fmt(expected)} of the GPUs busy and leaves "
              f"{_fmt(sat['idle_while_waiting'])} free while jobs wait: a whole-node gang at the head waits for a "
              "node to empty, and nobody behind it may use the GPUs that free up meanwhile. Offer more than "
              f"about {_fmt(expected)} and the queue grows without bound, although the naive capacity bound says 1.")
        return True
    if _close(value, lesson04.naive_bound(), 1e-9):
        print(f"Exercise {ex}: you said {_fmt(value)}, the naive capacity bound (offered GPU demand below the "
              "cluster's GPUs). Strict ordering cannot reach it with gangs in the mix: measure the saturated "
              "system and read its effective_utilization.")
    elif _close(value, sat["idle_while_waiting"], 0.005):
        print(f"Exercise {ex}: you said {_fmt(value)}: that is the share of capacity left free while jobs wait "
              "(idle_while_waiting), the part strict loses. The load it can carry is the part it keeps busy.")
    elif _close(value, lesson04.saturated("strict", lesson04.NODE_SHARE)["effective_utilization"], 0.005):
        print(f"Exercise {ex}: you said {_fmt(value)}: that is the lesson's mix, with "
              f"{_fmt(lesson04.NODE_SHARE * 100)}% whole-node gangs. This exercise asks for the mix with "
              f"{_fmt(SATURATION_NODE_SHARE * 100)}%: pass node_share={SATURATION_NODE_SHARE}.")
    elif value > expected:
        print(f"Exercise {ex}: you said {_fmt(value)}; at that load strict cannot keep up with this mix: the "
              "saturated system keeps fewer GPUs busy. Measure lesson04.saturated('strict', node_share=0.3).")
    else:
        print(f"Exercise {ex}: you said {_fmt(value)}; strict still keeps up above that load with this mix. "
              "Measure lesson04.saturated('strict', node_share=0.3) and read its effective_utilization.")
    return False


@functools.lru_cache(maxsize=None)
def _policy_rows() -> tuple:
    """(ordering, worst whole-node gang wait, window effective utilization) for exercise 4.2's run."""
    from gangkit.lessons import lesson04
    from gangkit.results.waiting import stability, starvation, utilization

    out = []
    for ordering in lesson04.ORDERINGS:
        r = lesson04.run(ordering, POLICY_LOAD, seed=POLICY_SEED)
        st = stability(r)
        u = utilization(r, st.window_start_s, st.window_end_s)["effective_utilization"]
        out.append((ordering, starvation(r)["starvation_wait_s"], u))
    return tuple(out)


def check_04_policy_for_big_gangs(answer) -> bool:
    """Exercise 4.2: among the orderings that keep utilization >= 0.6, the one whose worst gang waits least.

    Each ordering of ``lesson04.ORDERINGS`` runs ``lesson04.run(ordering, 0.6, seed=1)``; utilization
    is the effective utilization over the stability window, the gang's wait
    ``gk.starvation(result)["starvation_wait_s"]``. Case and spaces are forgiven.
    """
    ex = "4.2"
    from gangkit.lessons import lesson04

    names = ", ".join(repr(o) for o in lesson04.ORDERINGS)
    if answer is None:
        return _not_done(ex, f"for each ordering ({names}) run gangkit.lessons.lesson04.run(ordering, 0.6, seed=1), read "
                             "gk.starvation(result) and the effective utilization in the stability window; answer "
                             "the ordering's name.")
    if not isinstance(answer, str):
        got = _kind(answer)
        if isinstance(answer, numbers.Real) and not isinstance(answer, bool):
            got = f"the number {_fmt(float(answer))}"
        print(f"Exercise {ex}: expected the name of an ordering ({names}, in quotes), but got {got}.")
        return False
    name = answer.strip().lower()
    rows = {o: (w, u) for o, w, u in _policy_rows()}
    if name not in rows:
        print(f"Exercise {ex}: you said {answer!r}; the orderings to compare are {names}.")
        return False
    ok = {o: v for o, v in rows.items() if v[1] >= POLICY_TARGET}
    best = min(w for w, _ in ok.values()) if ok else None
    table = "; ".join(f"{o}: worst gang wait {_fmt(w)} s, utilization {_fmt(u)}" for o, (w, u) in rows.items())
    if name in ok and ok[name][0] == best:
        print(f"Correct! {table}. {name!r} keeps the utilization at or above {_fmt(POLICY_TARGET)} and bounds the "
              "whole-node gangs' wait best.")
        return True
    w, u = rows[name]
    if u < POLICY_TARGET:
        print(f"Exercise {ex}: you said {name!r}: its utilization in the stability window is {_fmt(u)}, below the "
              f"target {_fmt(POLICY_TARGET)}.")
    else:
        print(f"Exercise {ex}: you said {name!r}: it keeps the utilization ({_fmt(u)}), but its worst whole-node "
              f"gang waits {_fmt(w)} s; another ordering does better: compare gk.starvation(result) of each run.")
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


def check_04_starved_gang_wait(answer) -> bool:
    """Exercise 4.3: the longest wait of a whole-node gang under ``skip`` at load 0.7, seed 0, in seconds.

    From ``gk.starvation(lesson04.run("skip", 0.7, seed=0))``; answers within 1 s are right.
    """
    ex = "4.3"
    if answer is None:
        return _not_done(ex, "run gangkit.lessons.lesson04.run('skip', 0.7, seed=0) and read gk.starvation(result), or the "
                             "first row of lesson04.gang_waits(result); answer the wait in seconds.")
    value = _number(ex, answer, whole=False, what="seconds (the longest wait of a whole-node gang)")
    if value is None:
        return False
    job, wait, mean, same_strict, worst_strict = _starved()
    if _close(value, wait, WAIT_TOLERANCE_S):
        print(f"Correct! {job} waits {_fmt(wait)} s (about {_fmt(round(wait / 3600, 1))} h) under skip; the same "
              f"job waits {_fmt(same_strict)} s under strict. Under skip the one-GPU jobs keep taking the GPUs "
              "that free up, so a gang needs a node that happens to empty completely.")
        return True
    minutes, hours = _close(value * 60, wait, 60.0), _close(value * 3600, wait, 360.0)  # within a minute / 0.1 h
    if minutes or hours:
        unit = "minutes" if minutes else "hours"
        print(f"Exercise {ex}: you said {_fmt(value)}: that looks like the wait in {unit}; gangkit counts in "
              f"seconds. Answer in seconds.")
    elif _close(value, mean, WAIT_TOLERANCE_S):
        print(f"Exercise {ex}: you said {_fmt(value)}, the mean wait of the whole-node gangs. The question asks "
              "for the longest one: starvation is about the unluckiest gang.")
    elif _close(value, same_strict, WAIT_TOLERANCE_S) or _close(value, worst_strict, WAIT_TOLERANCE_S):
        print(f"Exercise {ex}: you said {_fmt(value)}: that is a wait under strict. Run the ordering 'skip'.")
    else:
        print(f"Exercise {ex}: you said {_fmt(value)}; the longest wait of a whole-node gang under skip is "
              f"{'longer' if value < wait else 'shorter'}. Look at gk.starvation(result)['starvation_wait_s'].")
    return False


# --------------------------------------------------------------------------------------------
# Lesson 05: the layered stack
# --------------------------------------------------------------------------------------------

__all__ += [
    "check_05_classify_waits",
    "check_05_node_initialization",
]

#: Why a learner's reason is wrong, for the usual confusions: (expected, given) -> the explanation.
_CONFUSIONS = {
    ("PartiallyPlaced", "Unschedulable"): "one of its pods is already bound and holds GPUs without progress: "
                                         "Unschedulable is for a job none of whose pods is bound",
    ("Unschedulable", "PartiallyPlaced"): "none of its pods is bound, so it holds nothing",
    ("PartiallyPlaced", "GangCannotFit"): "the pod stack has no gang layer: it binds pods one by one, so the job "
                                          "holds part of what it needs",
    ("Unschedulable", "GangCannotFit"): "the pod stack has no gang layer: kube-scheduler looks at one pod at a time",
    ("GangCannotFit", "PartiallyPlaced"): "a gang scheduler never binds part of a gang: the job waits whole and "
                                          "holds nothing",
    ("GangCannotFit", "Unschedulable"): "under gang placement the whole gang is tried at once: the reason is the "
                                        "gang's, not one pod's",
    ("QuotaExhausted", "QuotaTooSmall"): "its GPUs fit in the ClusterQueue's quota; the quota is only used by "
                                         "others right now, so it will be admitted when they finish",
    ("QuotaTooSmall", "QuotaExhausted"): "it asks for more GPUs than the ClusterQueue's whole quota, so no amount "
                                         "of waiting helps: it stays inadmissible (Kueue never rejects)",
    ("WaitingForNodes", "GangCannotFit"): "Karpenter has launched nodes for it: the job waits for those nodes' "
                                          "stages, not for room on the old nodes",
}
_QUOTA_CODES = ("QuotaExhausted", "QuotaTooSmall")
_PLACEMENT_CODES = ("Unschedulable", "PartiallyPlaced", "GangCannotFit")


@functools.lru_cache(maxsize=None)
def _classified() -> tuple:
    """(stack, job, time, code) for each line of ``lesson05.CLASSIFY``, from the simulator's diagnosis."""
    from gangkit.lessons import lesson05

    sc = lesson05.layered_story()
    runs = {stack: simulate(sc, stack=stack) for stack in dict.fromkeys(s for s, _, _ in lesson05.CLASSIFY)}
    return tuple((stack, name, at, runs[stack].diagnose(job=name, at=at).code) for stack, name, at in lesson05.CLASSIFY)


def _reason_name(text: str) -> str | None:
    from gangkit.lessons.lesson05 import REASONS

    squeezed = "".join(ch for ch in text.lower() if ch.isalpha())
    return next((r for r in REASONS if r.lower() == squeezed), None)


def _why_wrong(stack: str, expected: str, given: str) -> str:
    known = _CONFUSIONS.get((expected, given))
    if known:
        return known
    if given in _QUOTA_CODES and "kueue" not in stack:
        return f"stack {stack!r} has no quota layer"
    if expected in _QUOTA_CODES and given in _PLACEMENT_CODES:
        return "Kueue refuses first: a workload without quota never reaches the placement layer"
    if given == "WaitingForNodes" and "karpenter" not in stack:
        return f"stack {stack!r} has no node supplier: no node is coming"
    return "ask the simulator: result.diagnose(job=..., at=...)"


def check_05_classify_waits(answer) -> bool:
    """Exercise 5.1: the reason each job of ``lesson05.CLASSIFY`` waits, in that order.

    The expected reasons are the codes of :meth:`gangkit.Result.diagnose` for each (stack, job,
    time) of the lesson's story; spellings are compared without case, spaces or punctuation.
    """
    from gangkit.lessons.lesson05 import REASONS

    ex = "5.1"
    expected = _classified()
    if answer is None:
        return _not_done(ex, "for each (stack, job, time) in lesson05.CLASSIFY, simulate lesson05.layered_story() "
                             "with that stack and read result.diagnose(job=..., at=...).code; answer the list of codes.")
    if isinstance(answer, str) or not isinstance(answer, (list, tuple)):
        print(f"Exercise {ex}: expected a list of {len(expected)} reason names (texts such as 'GangCannotFit'), one "
              f"per line of lesson05.CLASSIFY, but got {_kind(answer) if not isinstance(answer, str) else 'one text'}.")
        return False
    if len(answer) != len(expected):
        print(f"Exercise {ex}: expected {len(expected)} reasons, one per line of lesson05.CLASSIFY, but got {len(answer)}.")
        return False
    wrong = []
    for (stack, name, at, code), given in zip(expected, answer):
        if not isinstance(given, str):
            wrong.append(f"{name} under {stack} at t={_fmt(at)} s: expected a reason name in quotes, got {_kind(given)}")
            continue
        got = _reason_name(given)
        if got is None:
            wrong.append(f"{name} under {stack} at t={_fmt(at)} s: {given!r} is not one of {', '.join(REASONS)}")
        elif got != code:
            wrong.append(f"{name} under {stack} at t={_fmt(at)} s is not {got}: {_why_wrong(stack, code, got)}")
    if wrong:
        print(f"Exercise {ex}: {len(expected) - len(wrong)} of {len(expected)} right.")
        for line in wrong:
            print(f"  - {line}")
        return False
    stacks = " -> ".join(dict.fromkeys(s for s, _, _, _ in expected))
    print(f"Correct! All {len(expected)} right. Along {stacks} the failure point moves: from pods that hold GPUs "
          "without progress, to a gang that waits whole, to a workload Kueue refuses with a reason, to an admitted "
          "gang waiting for its nodes.")
    return True


@functools.lru_cache(maxsize=None)
def _train_d_waits() -> tuple:
    """train-d's wait columns under 'kueue+gang+karpenter' in lesson 05's story, as (bucket, seconds) pairs."""
    from gangkit.lessons import lesson05

    row = simulate(lesson05.layered_story(), stack="kueue+gang+karpenter").jobs.set_index("job").loc["train-d"]
    return tuple((c[5:-2] if c != "wait_s" else "total", float(row[c])) for c in row.index
                 if c.startswith("wait_") and c.endswith("_s")) + (("start", float(row["start_s"])),)


def check_05_node_initialization(answer) -> bool:
    """Exercise 5.2: seconds of train-d's wait charged to ``node_initialization`` under 'kueue+gang+karpenter'."""
    ex = "5.2"
    if answer is None:
        return _not_done(ex, "simulate lesson05.layered_story() with stack='kueue+gang+karpenter' and read the "
                             "column wait_node_initialization_s of train-d's row in result.jobs.")
    value = _number(ex, answer, whole=False, what="seconds of train-d's wait in the node_initialization bucket")
    if value is None:
        return False
    w = dict(_train_d_waits())
    expected = w["node_initialization"]
    if _close(value, expected, TIME_TOLERANCE_S):
        print(f"Correct! train-d waited {_fmt(w['total'])} s in all: {_fmt(w['placement'])} s in placement (Karpenter's "
              f"batching window), {_fmt(w['node_registration'])} s while its nodes booted and registered, and "
              f"{_fmt(expected)} s while their GPU device plugin initialized. Quota cost it {_fmt(w['quota'])} s.")
        return True
    hints = [
        (w["total"], f"that is train-d's whole wait (wait_s); the question asks for one bucket of it"),
        (w["node_registration"], "that is the node_registration bucket (boot and kubelet registration)"),
        (w["node_registration"] + expected, "that is registration and initialization together: the node's "
                                            "launch-to-ready time; the question asks for initialization only"),
        (w["start"], "that is when train-d started (start_s), not how long it waited for initialization"),
        (expected / 60.0, "that is the answer in minutes; gangkit reports times in seconds"),
    ]
    for v, why in hints:
        if _close(value, v, TIME_TOLERANCE_S if v != expected / 60.0 else 0.01):
            print(f"Exercise {ex}: you said {_fmt(value)}; {why}.")
            return False
    print(f"Exercise {ex}: you said {_fmt(value)}. Look at train-d's row in result.jobs, column "
          "wait_node_initialization_s.")
    return False


# ------------------------------------------------------------------ lesson 06: node provisioning latency
__all__ += [
    "check_06_start_with_image_pull",
    "check_06_warm_nodes",
    "check_06_deactivated_at",
]

IMAGE_PULL_S = 300.0  # exercise 6.1's image pull stage
WAIT_TARGET_S = 60.0  # exercise 6.2's target mean wait
PROVREQ_HORIZON_S = 10000.0  # exercise 6.3's run length
PROVREQ_EXPIRY_S = 1800.0  # exercise 6.3: cluster-autoscaler gives a request up after this long


@functools.lru_cache(maxsize=None)
def _train_start_with_pull(pull: float) -> float:
    """When ``train`` of ``lesson06.from_zero`` starts under 'kueue+gang+karpenter' with an image pull stage."""
    from gangkit.lessons import lesson06
    from gangkit.supply.karpenter import Stages

    result = simulate(lesson06.from_zero(Stages(image_pull=pull)), stack="kueue+gang+karpenter")
    return float(result.jobs.set_index("job").loc["train", "start_s"])


@functools.lru_cache(maxsize=None)
def _train_waits_with_pull(pull: float) -> dict:
    """``train``'s wait buckets (``lesson06.wait_stages``) in the run of :func:`_train_start_with_pull`."""
    from gangkit.lessons import lesson06
    from gangkit.supply.karpenter import Stages

    result = simulate(lesson06.from_zero(Stages(image_pull=pull)), stack="kueue+gang+karpenter")
    return lesson06.wait_stages(result, "train").to_dict()


def check_06_start_with_image_pull(answer) -> bool:
    """Exercise 6.1: when (s) ``train`` starts when every new node must also pull a 300 s image."""
    ex = "6.1"
    if answer is None:
        return _not_done(ex, "simulate lesson06.from_zero(Stages(image_pull=300)) with stack='kueue+gang+karpenter' "
                             "and read train's start_s in result.jobs.")
    value = _number(ex, answer, whole=False, what="a time in seconds")
    if value is None:
        return False
    expected = _train_start_with_pull(IMAGE_PULL_S)
    without = _train_start_with_pull(0.0)
    if _close(value, expected, TIME_TOLERANCE_S):
        w = _train_waits_with_pull(IMAGE_PULL_S)
        print(f"Correct! train starts at t={_fmt(expected)} s: the batch window closes at t=1 s, each node is "
              f"registered 60 s and initialized 90 s later, then pulls the image for {_fmt(IMAGE_PULL_S)} s; the "
              "gang starts when its last node is ready. Quota was reserved at t=0, and the wait splits by stage: "
              f"{_fmt(w['placement'])} s in placement (no node coming yet: the batch window), then "
              f"{_fmt(w['node_registration'])} s node_registration, {_fmt(w['node_initialization'])} s "
              f"node_initialization and {_fmt(w['image_pull'])} s image_pull, waiting for nodes on their way.")
        return True
    if _close(value, without, TIME_TOLERANCE_S):
        print(f"Exercise {ex}: you said {_fmt(value)}. That is the start without an image pull; the pull adds "
              f"{_fmt(IMAGE_PULL_S)} s after initialization, on every new node.")
    elif _close(value, expected - 1.0, TIME_TOLERANCE_S):
        print(f"Exercise {ex}: you said {_fmt(value)}: the stages add up, but Karpenter launches the nodes only when "
              "its batch window closes (batchIdleDuration, 1 s after the last pod it saw).")
    elif _close(value, expected - 60.0, TIME_TOLERANCE_S) or _close(value, expected - 90.0, TIME_TOLERANCE_S):
        print(f"Exercise {ex}: you said {_fmt(value)}: a stage is missing. A node is launched, registered (+60 s), "
              f"initialized (+90 s), then pulls the image (+{_fmt(IMAGE_PULL_S)} s).")
    elif _close(value, IMAGE_PULL_S, TIME_TOLERANCE_S):
        print(f"Exercise {ex}: you said {_fmt(value)}, the pull alone; the node must be launched, registered and "
              "initialized before it pulls the image.")
    else:
        print(f"Exercise {ex}: you said {_fmt(value)}. Look at train's row of result.jobs (start_s), or at "
              f"lesson06.stage_breakdown(result) for when each node is ready.{_minutes_note(value, expected)}")
    return False


@functools.lru_cache(maxsize=None)
def _warm_pool_waits() -> tuple:
    """(warm nodes, mean wait, GPU-hours paid) for 0 to 4 warm nodes in ``lesson06.warm_pool``."""
    from gangkit.lessons import lesson06

    table = lesson06.warm_pool_table(range(0, 5))
    return tuple((int(n), float(row.mean_wait_s), float(row.gpu_hours_paid)) for n, row in table.iterrows())


def check_06_warm_nodes(answer) -> bool:
    """Exercise 6.2: the fewest warm nodes for which the day's gangs wait under 60 s on average."""
    ex = "6.2"
    if answer is None:
        return _not_done(ex, "call lesson06.warm_pool_table() and find the smallest warm_nodes whose mean_wait_s "
                             "is below 60.")
    value = _number(ex, answer, whole=True, what="warm nodes")
    if value is None:
        return False
    rows = {n: (wait, paid) for n, wait, paid in _warm_pool_waits()}
    good = [n for n, (wait, _) in rows.items() if wait < WAIT_TARGET_S]
    expected = min(good)
    n = int(value)
    if n == expected:
        print(f"Correct! With {n} warm nodes the gangs wait {_fmt(rows[n][0])} s on average, against "
              f"{_fmt(rows[0][0])} s with none; the day then costs {_fmt(rows[n][1])} GPU-hours instead of "
              f"{_fmt(rows[0][1])}, for the same useful work. A warm node is paid all day, used or not.")
        return True
    if n in rows and n > expected:
        print(f"Exercise {ex}: {n} warm nodes do keep the mean wait under {_fmt(WAIT_TARGET_S)} s "
              f"({_fmt(rows[n][0])} s), but so do fewer, for less: {_fmt(rows[n][1])} GPU-hours against "
              f"{_fmt(rows[expected][1])}. The question asks for the fewest.")
    elif n in rows:
        print(f"Exercise {ex}: with {n} warm nodes the mean wait is {_fmt(rows[n][0])} s, not under "
              f"{_fmt(WAIT_TARGET_S)} s: most gangs need more 8-GPU nodes than that and still wait for new ones "
              "(a gang starts only when all its workers can).")
    else:
        print(f"Exercise {ex}: you said {n}; lesson06.warm_pool_table() tries 0 to 4 warm nodes. Pick the smallest "
              f"row whose mean_wait_s is below {_fmt(WAIT_TARGET_S)}.")
    return False


@functools.lru_cache(maxsize=None)
def _provreq_deactivated() -> tuple:
    """(deactivation time, expiry, backoffs) of ``train`` in ``lesson06.provreq_story(2)``."""
    from gangkit.lessons import lesson06
    from gangkit.kueue.provisioning import ProvisioningRequestConfig

    result = lesson06.provreq_story(max_size=2, expiry=PROVREQ_EXPIRY_S, horizon=PROVREQ_HORIZON_S)
    ev = result.events
    t = float(ev[(ev.job == "train") & (ev.event == "deactivated")].time_s.iloc[0])
    config = ProvisioningRequestConfig()
    backoffs = tuple(config.retry_after(n) for n in range(1, config.backoff_limit_count + 1))
    return t, PROVREQ_EXPIRY_S, backoffs


def check_06_deactivated_at(answer) -> bool:
    """Exercise 6.3: when (s) Kueue deactivates ``train`` of ``lesson06.provreq_story(max_size=2)``."""
    ex = "6.3"
    if answer is None:
        return _not_done(ex, "simulate lesson06.provreq_story(max_size=2, horizon=10000) and find the time of "
                             "train's 'deactivated' event in result.events.")
    value = _number(ex, answer, whole=False, what="a time in seconds")
    if value is None:
        return False
    expected, expiry, backoffs = _provreq_deactivated()
    attempts = len(backoffs) + 1
    if _close(value, expected, TIME_TOLERANCE_S):
        print(f"Correct! {attempts} ProvisioningRequests of {_fmt(expiry)} s each fail (no node group can hold all "
              f"4 pods at once), with {', '.join(_fmt(b) for b in backoffs)} s of backoff between them, quota "
              f"released meanwhile: t = {attempts} x {_fmt(expiry)} + {_fmt(sum(backoffs))} = {_fmt(expected)} s. "
              "Not one node was launched.")
        return True
    if _close(value, attempts * expiry, TIME_TOLERANCE_S):
        print(f"Exercise {ex}: you said {_fmt(value)}: {attempts} failed attempts, but between them the workload "
              f"waits out a backoff ({', '.join(_fmt(b) for b in backoffs)} s) before it can reserve quota again.")
    elif _close(value, (attempts - 1) * expiry + sum(backoffs[:-1]), TIME_TOLERANCE_S) or _close(value, (attempts - 1) * expiry, TIME_TOLERANCE_S):
        print(f"Exercise {ex}: you said {_fmt(value)}: one attempt short. backoffLimitCount {len(backoffs)} counts "
              f"the retries, so there are {attempts} requests; the last failure is the one that rejects the check.")
    elif _close(value, expiry, TIME_TOLERANCE_S):
        print(f"Exercise {ex}: you said {_fmt(value)}, when the first request fails. A failed request sends the check "
              "to Retry, not Rejected: the workload is evicted and tries again after a backoff.")
    else:
        print(f"Exercise {ex}: you said {_fmt(value)}. Look for the 'deactivated' event of train in result.events, "
              f"or at result.metrics['kueue_admission_check_states'].{_minutes_note(value, expected)}")
    return False


# --------------------------------------------------------------------------------------------
# Lesson 02, continued: at scale-to-zero
# --------------------------------------------------------------------------------------------

__all__ += ["check_02_nine_of_ten"]

#: Exercise 2.5: the NodePool limit (GPUs) and seed of the scale-to-zero scenario.
NINE_OF_TEN_LIMIT = 72
NINE_OF_TEN_SEED = 3
#: Tolerance for an answer in GPU-hours (the check's numbers are rounded to 0.01).
GPU_HOURS_TOLERANCE = 0.01


@functools.lru_cache(maxsize=None)
def _nine_of_ten(stack: str) -> tuple:
    """(GPU-hours held idle, GPU-hours of nodes paid) for ``lesson02.scale_to_zero(limit=72)`` under ``stack``, seed 3."""
    from gangkit.lessons import lesson02

    r = simulate(lesson02.scale_to_zero(limit=NINE_OF_TEN_LIMIT), stack=stack, seed=NINE_OF_TEN_SEED)
    return r.figures["held_idle_gpu_seconds"] / 3600.0, r.figures["capacity_gpu_seconds"] / 3600.0


def check_02_nine_of_ten(answer) -> bool:
    """Exercise 2.5: GPU-hours ``big`` holds idle on ``lesson02.scale_to_zero(limit=72)`` under
    'coscheduling+karpenter' with seed 3 (the NodePool allows 9 of its 10 nodes)."""
    ex = "2.5"
    stack = "coscheduling+karpenter"
    if answer is None:
        return _not_done(ex, f"simulate lesson02.scale_to_zero(limit={NINE_OF_TEN_LIMIT}) with stack='{stack}' and "
                             f"seed={NINE_OF_TEN_SEED}, then divide result.figures['held_idle_gpu_seconds'] by 3600.")
    value = _number(ex, answer, whole=False, what="GPU-hours")
    if value is None:
        return False
    expected, paid = _nine_of_ten(stack)
    if _close(value, expected, GPU_HOURS_TOLERANCE):
        print(f"Correct! big holds {expected:.2f} GPU-hours idle: with 9 of its 10 nodes, 1 of minMember 10 is "
              "missing, which is within coscheduling's 10 % threshold, so PostFilter does not reject the group; "
              "its 9 pods wait at Permit holding 72 GPUs for 60 s, are rejected, and then wait holding nothing, "
              "because no 10th node can come.")
        return True
    pod_held, _ = _nine_of_ten("pod+karpenter")
    kube_held, _ = _nine_of_ten("kube-gang+karpenter")
    if _close(value, 0.0, GPU_HOURS_TOLERANCE):
        print(f"Exercise {ex}: you said 0. Coscheduling gives the seats back at once only when more than 10 % of "
              "minMember is missing; here 1 of 10 is (exactly 10 %), so the placed pods wait at Permit until "
              "the timeout.")
    elif _close(value, expected * 3600.0, 0.5):
        print(f"Exercise {ex}: you said {_fmt(value)}. That is in GPU-seconds; the question asks for GPU-hours "
              "(divide by 3600).")
    elif _close(value, paid, GPU_HOURS_TOLERANCE):
        print(f"Exercise {ex}: you said {_fmt(value)}. That is what the 9 nodes cost over the run "
              "(capacity_gpu_seconds); held idle counts only GPUs bound to big while it does not progress.")
    elif _close(value, pod_held, GPU_HOURS_TOLERANCE):
        print(f"Exercise {ex}: you said {_fmt(value)}. That is what pod-by-pod placement holds (for ever); "
              f"simulate with stack='{stack}'.")
    elif _close(value, kube_held, GPU_HOURS_TOLERANCE):
        print(f"Exercise {ex}: you said {_fmt(value)}. That is kube-gang's figure (5-minute timeout); "
              f"simulate with stack='{stack}'.")
    else:
        print(f"Exercise {ex}: you said {_fmt(value)}. Simulate lesson02.scale_to_zero(limit={NINE_OF_TEN_LIMIT}) "
              f"with stack='{stack}' and seed={NINE_OF_TEN_SEED}, and read result.figures['held_idle_gpu_seconds'] "
              "(in GPU-seconds).")
    return False
