"""Checks of lesson 07 (migrating to gang admission): an admission timeout that nodes can meet, and a gang size.

Exercise 7.1 asks for the shortest ``waitForPodsReady`` timeout (whole seconds) with which the
lesson's ``train`` finishes when its nodes come from Karpenter; 7.2 for how many seconds of mean
turnaround ``minMember: 1`` saves a stream of independent tasks at a higher load. Both answers
are computed from the simulator; wrong answers are recognised by the mistake they come from (a
stage of the node's start left out, a timeout equal to the nodes' start instead of longer, the
lesson's load instead of the exercise's, the time to the first pod instead of the turnaround).

Why 7.1's answer is one second more than the nodes' start (151 s): Kueue evicts an admitted
workload whose PodsReady condition is not true once the time since admission *reaches* the
timeout (``admittedNotReadyWorkload`` returns ``max(timeout - elapsed, 0)`` and the reconciler
evicts unless that is above zero: ``pkg/controller/core/workload_controller.go``, Kueue v0.19.2),
and a pod can be ready only after its node is. In gangkit the nodes become ready at t = 151 s and
the pods bind in the scheduling cycle of that instant, which runs after the instant's other
events (:mod:`gangkit.engine.events`), Kueue's timer among them: a 151 s timeout fires first and
evicts ``train``; 152 s is the shortest whole-second timeout that lets it start.
"""

from __future__ import annotations

import functools
import statistics

from gangkit.checks.common import close, counts_wrong_answers, fmt, not_done, number
from gangkit.simulate import simulate

#: The lesson's deliberately short timeout, and the range of timeouts the check searches (seconds).
LESSON_TIMEOUT_S = 120
SEARCH_S = range(1, 1801)


def _finishes(timeout: float) -> bool:
    from gangkit.kueue.objects import KueueConfig
    from gangkit.lessons import lesson07

    sc = lesson07.mistake_scenario("waitForPodsReady shorter than node start")
    sc.kueue = lesson07.team_kueue(64, KueueConfig(pods_ready_timeout=float(timeout), backoff_limit_count=3))
    r = simulate(sc, stack="kueue+gang+karpenter", horizon=lesson07.MISTAKE_HORIZON)
    return r.summary()["jobs_finished"] == 1


@functools.lru_cache(maxsize=None)
def _shortest_timeout() -> tuple[int, float]:
    """(the shortest whole-second timeout with which train finishes, the instant its pods become ready)."""
    lo, hi = SEARCH_S.start, SEARCH_S.stop - 1  # finishing is monotone in the timeout: bisect
    while lo < hi:
        mid = (lo + hi) // 2
        if _finishes(mid):
            hi = mid
        else:
            lo = mid + 1
    from gangkit.lessons import lesson07

    sc = lesson07.mistake_scenario("waitForPodsReady shorter than node start")
    stages = sc.karpenter.stages
    ready = sc.karpenter.batch_idle + stages.registered + stages.initialized
    return lo, float(ready)


HINTS = {
    "7.1": "the timeout counts from admission; what must happen before the pods can be ready, and how long does each step take?",
    "7.2": "run the lesson's decision_table for 'independent tasks' at the higher load and compare two of its rows.",
}


@counts_wrong_answers("7.1")
def check_07_pods_ready_timeout(answer) -> bool:
    """Exercise 7.1: the shortest waitForPodsReady timeout (whole seconds) with which ``train`` finishes."""
    ex = "7.1"
    if answer is None:
        return not_done(ex, "build lesson07.mistake_scenario('waitForPodsReady shorter than node start'), set "
                            "sc.kueue = lesson07.team_kueue(64, KueueConfig(pods_ready_timeout=T, backoff_limit_count=3)) "
                            "for a few T, simulate under 'kueue+gang+karpenter' and find the smallest T with which "
                            "train finishes; or add up the stages of its nodes.", hint=HINTS[ex])
    value = number(ex, answer, whole=True, what="seconds")
    if value is None:
        return False
    shortest, ready = _shortest_timeout()
    if value == shortest:
        print(f"Correct! The nodes are ready {fmt(ready)} s after admission: Karpenter's 1 s batch window (its "
              f"BATCH_IDLE_DURATION default), then lesson 06's assumed 60 s to register and 90 s to initialize; the "
              "pods bind just after, and the timeout must not run out before they do. Any shorter timeout evicts "
              "train before its pods are ready, each time. On a real cluster leave minutes of margin: node start "
              "times vary.")
        return True
    if ready <= value < shortest:
        short = shortest - value
        print(f"Exercise {ex}: {fmt(value)} s is {fmt(short)} second{'s' if short != 1 else ''} short. The nodes are "
              f"ready at t={fmt(ready)} s, but a pod is ready only once it is bound to a ready node, and Kueue evicts "
              "a workload whose pods are not all ready as soon as the time since admission reaches the timeout (not "
              f"only once it passes it). At t={fmt(ready)} s Kueue's check comes first: gangkit binds the pods in the "
              "scheduling cycle after that instant's other events, so train is evicted with its nodes just up. "
              "A timeout must be longer than the nodes take, not equal to it.")
        return False
    if close(value, ready - 1, 0.0):
        print(f"Exercise {ex}: you said {fmt(value)}: that leaves out Karpenter's batching window (1 s after the "
              f"last pod arrives it launches); the nodes are ready at t={fmt(ready)} s.")
    elif close(value, LESSON_TIMEOUT_S, 0.0):
        print(f"Exercise {ex}: {fmt(value)} s is the lesson's timeout, the one that fails: train is evicted four "
              "times. How long do its nodes take?")
    elif value < ready:
        print(f"Exercise {ex}: with {fmt(value)} s train is evicted before its nodes are ready; a stage is missing "
              "(batch window, registration, initialization: see lesson 06).")
    else:
        print(f"Exercise {ex}: with {fmt(value)} s train finishes, but a shorter timeout works too: the shortest is "
              "what the exercise asks for.")
    return False


#: Exercise 7.2's load (the lesson ran 0.8) and seeds.
LOAD_72 = 0.9
SEEDS_72 = range(5)


@functools.lru_cache(maxsize=None)
def _turnarounds(load: float) -> dict:
    """Mean over seeds of each set-up's mean turnaround and mean wait, for independent tasks at ``load``."""
    from gangkit.lessons import lesson07

    out = {}
    for variant, (stack, min_member) in lesson07.DECISION_VARIANTS.items():
        turn, wait = [], []
        for seed in SEEDS_72:
            r = lesson07.decision_run("independent tasks", stack, float(load), 300, seed, min_member)
            turn.append(lesson07.run_figures(r)["mean_turnaround_s"])
            wait.append(r.summary()["mean_wait_s"])
        out[variant] = (statistics.fmean(turn), statistics.fmean(wait))
    return out


@counts_wrong_answers("7.2")
def check_07_independent_saving(answer) -> bool:
    """Exercise 7.2: seconds of mean turnaround that minMember 1 saves independent tasks at load 0.9 (vs all pods)."""
    ex = "7.2"
    if answer is None:
        return not_done(ex, "t = lesson07.decision_table(load=0.9, kinds=['independent tasks']); answer = "
                            "t.loc[('independent tasks', 'gang'), 'mean_turnaround_s'] - "
                            "t.loc[('independent tasks', 'gang, minMember 1'), 'mean_turnaround_s'].", hint=HINTS[ex])
    value = number(ex, answer, whole=False, what="seconds of mean turnaround saved")
    if value is None:
        return False
    at = _turnarounds(LOAD_72)
    expected = at["gang"][0] - at["gang, minMember 1"][0]
    if close(value, expected, 1.0):
        lesson = _turnarounds(0.8)
        saved_08 = lesson["gang"][0] - lesson["gang, minMember 1"][0]
        print(f"Correct! At load {LOAD_72:g} minMember 1 saves {fmt(round(expected))} s of mean turnaround "
              f"({fmt(round(at['gang'][0]))} s against {fmt(round(at['gang, minMember 1'][0]))} s), against "
              f"{fmt(round(saved_08))} s at the lesson's 0.8: the busier the cluster, the longer a job that waits for "
              "all its pods waits, and a job of independent tasks gains nothing by waiting.")
        return True
    lesson = _turnarounds(0.8)
    if close(value, lesson["gang"][0] - lesson["gang, minMember 1"][0], 1.0):
        print(f"Exercise {ex}: {fmt(round(value))} s is the saving at the lesson's load 0.8; the exercise asks for "
              f"load {LOAD_72:g}.")
    elif close(value, -expected, 1.0):
        print(f"Exercise {ex}: the sign is reversed: the all-pods gang takes longer; answer how much minMember 1 saves.")
    elif close(value, at["gang"][1] - at["gang, minMember 1"][1], 1.0):
        print(f"Exercise {ex}: that is the saving in *wait* (time to the first pod); for a job of independent tasks "
              "what its owner waits for is the turnaround, submission to finish.")
    elif close(value, at["gang"][0] - at["pod"][0], 1.0):
        print(f"Exercise {ex}: that compares the gang with the default scheduler (pod); the exercise compares the "
              "gang with all pods against the gang with minMember 1.")
    elif close(value * 3600, expected, 3600 * 0.01):
        print(f"Exercise {ex}: that looks like hours; gangkit reports seconds.")
    else:
        print(f"Exercise {ex}: you said {fmt(value)}; compare the rows 'gang' and 'gang, minMember 1' of "
              f"decision_table(load={LOAD_72:g}, kinds=['independent tasks']), column mean_turnaround_s.")
    return False
