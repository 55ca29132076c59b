"""Checks of lesson 05 (the layered stack): why each job waits, and one bucket of a job's wait.

Exercise 5.1 asks for the reason each job of ``lesson05.CLASSIFY`` waits, as the codes of
``Result.diagnose``; 5.2 for the seconds of train-d's wait charged to node initialization. For a
list of reasons the message counts how many are right and explains each wrong one by the layer that
decides it (a pod stack has no gang layer, Kueue refuses before placement, a node is on its way);
for the bucket it names the neighbouring one the number matches.
"""

from __future__ import annotations

import functools

from gangkit.checks.common import TIME_TOLERANCE_S, close, counts_wrong_answers, fmt, kind, not_done, number
from gangkit.simulate import simulate

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
                                         "of waiting helps: it stays pending, inadmissible (Kueue never rejects a "
                                         "workload for lack of quota)",
    ("WaitingForNodes", "GangCannotFit"): "Karpenter has launched nodes for it: the job waits for those nodes' "
                                          "stages, not for room on the old nodes",
}
_QUOTA_CODES = ("QuotaExhausted", "QuotaTooSmall")
_PLACEMENT_CODES = ("Unschedulable", "PartiallyPlaced", "GangCannotFit")

#: First hints of "not done yet" (the recipe follows after a wrong answer: common.not_done).
HINTS = {
    "5.1": "each layer holds a job back for its own reason: ask the simulator which layer holds it at that instant.",
    "5.2": "a slower GPU driver lengthens one stage of the nodes train-d waits for; which bucket does the wait land in, and by how much?",
}



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
        return ("Kueue refuses first: a workload without quota is not admitted and its Job stays suspended, so "
                "its pods never reach the placement layer")
    if given == "WaitingForNodes" and "karpenter" not in stack:
        return f"stack {stack!r} has no node supplier: no node is coming"
    return "ask the simulator: result.diagnose(job=..., at=...)"


@counts_wrong_answers("5.1")
def check_05_classify_waits(answer) -> bool:
    """Exercise 5.1: the reason each job of ``lesson05.CLASSIFY`` waits, in that order.

    The expected reasons are the codes of :meth:`gangkit.Result.diagnose` for each (stack, job,
    time) of the lesson's story; spellings are compared without case, spaces or punctuation.
    """
    from gangkit.lessons.lesson05 import REASONS

    ex = "5.1"
    expected = _classified()
    if answer is None:
        return not_done(ex, "for each (stack, job, time) in lesson05.CLASSIFY, simulate lesson05.layered_story() "
                            "with that stack and read result.diagnose(job=..., at=...).code; answer the list of codes.", hint=HINTS[ex])
    if isinstance(answer, str) or not isinstance(answer, (list, tuple)):
        print(f"Exercise {ex}: expected a list of {len(expected)} reason names (texts such as 'GangCannotFit'), one "
              f"per line of lesson05.CLASSIFY, but got {kind(answer) if not isinstance(answer, str) else 'one text'}.")
        return False
    if len(answer) != len(expected):
        print(f"Exercise {ex}: expected {len(expected)} reasons, one per line of lesson05.CLASSIFY, but got {len(answer)}.")
        return False
    wrong = []
    for (stack, name, at, code), given in zip(expected, answer):
        if not isinstance(given, str):
            wrong.append(f"{name} under {stack} at t={fmt(at)} s: expected a reason name in quotes, got {kind(given)}")
            continue
        got = _reason_name(given)
        if got is None:
            wrong.append(f"{name} under {stack} at t={fmt(at)} s: {given!r} is not one of {', '.join(REASONS)}")
        elif got != code:
            wrong.append(f"{name} under {stack} at t={fmt(at)} s is not {got}: {_why_wrong(stack, code, got)}")
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


#: Exercise 5.2: the GPU driver takes this long to initialize (seconds after the node registers; default 90).
SLOW_DRIVER_S = 300.0


@functools.lru_cache(maxsize=None)
def _train_d_waits(initialized: float | None = SLOW_DRIVER_S) -> tuple:
    """train-d's wait columns under 'kueue+gang+karpenter' in lesson 05's story, as (bucket, seconds) pairs;
    ``initialized``: the node stage's duration (None: the lesson's default stages)."""
    from gangkit.lessons import lesson05
    from gangkit.supply.cloud import Stages

    sc = lesson05.layered_story(None if initialized is None else Stages(initialized=initialized))
    row = simulate(sc, stack="kueue+gang+karpenter").jobs.set_index("job").loc["train-d"]
    return tuple((c[5:-2] if c != "wait_s" else "total", float(row[c])) for c in row.index
                 if c.startswith("wait_") and c.endswith("_s")) + (("start", float(row["start_s"])),)


@counts_wrong_answers("5.2")
def check_05_node_initialization(answer) -> bool:
    """Exercise 5.2: with a 300 s GPU driver, seconds of train-d's wait charged to ``node_initialization``.

    A change-a-parameter task: the lesson's stages give 90 s; ``Stages(initialized=300)`` moves the
    bucket to 300 s and train-d's start by 210 s. Typical wrong answers are named: the lesson's 90, the
    whole wait, another bucket, registration plus initialization, the start time, minutes.
    """
    ex = "5.2"
    if answer is None:
        return not_done(ex, f"simulate lesson05.layered_story(Stages(initialized={fmt(SLOW_DRIVER_S)})) with "
                            "stack='kueue+gang+karpenter' (Stages from gangkit.supply) and read the column "
                            "wait_node_initialization_s of train-d's row in result.jobs.", hint=HINTS[ex])
    value = number(ex, answer, whole=False, what="seconds of train-d's wait in the node_initialization bucket")
    if value is None:
        return False
    w = dict(_train_d_waits())
    lesson = dict(_train_d_waits(None))
    expected = w["node_initialization"]
    if close(value, expected, TIME_TOLERANCE_S):
        print(f"Correct! train-d waited {fmt(w['total'])} s in all: {fmt(w['placement'])} s in placement (Karpenter's "
              f"batching window), {fmt(w['node_registration'])} s while its nodes booted and registered, and "
              f"{fmt(expected)} s while their GPU driver and device plugin initialized, against "
              f"{fmt(lesson['node_initialization'])} s with the lesson's stages. The slower driver moved its start "
              f"from t={fmt(lesson['start'])} s to t={fmt(w['start'])} s, and nothing else: quota cost it "
              f"{fmt(w['quota'])} s either way. The bucket names the stage, so an operator sees where to look.")
        return True
    hints = [
        (lesson["node_initialization"], "that is the bucket with the lesson's stages (90 s to initialize); "
                                        f"the exercise gives the driver {fmt(SLOW_DRIVER_S)} s"),
        (w["total"], "that is train-d's whole wait (wait_s); the question asks for one bucket of it"),
        (w["node_registration"], "that is the node_registration bucket (boot and kubelet registration)"),
        (w["node_registration"] + expected, "that is registration and initialization together: the node's "
                                            "launch-to-ready time; the question asks for initialization only"),
        (w["start"], "that is when train-d started (start_s), not how long it waited for initialization"),
        (expected / 60.0, "that is the answer in minutes; gangkit reports times in seconds"),
    ]
    for v, why in hints:
        if close(value, v, TIME_TOLERANCE_S if v != expected / 60.0 else 0.01):
            print(f"Exercise {ex}: you said {fmt(value)}; {why}.")
            return False
    print(f"Exercise {ex}: you said {fmt(value)}. Look at train-d's row in result.jobs, column "
          "wait_node_initialization_s, for the run with the slower driver.")
    return False
