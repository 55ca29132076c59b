"""Checks of lesson 05 (the layered stack): why each job waits, one bucket of a job's wait, and a prediction.

Exercise 5.1 asks for the reason each job of ``lesson05.CLASSIFY`` waits, as the codes of
``Result.diagnose``; 5.2 for the seconds of train-d's wait charged to node initialization; 5.3 for
the p90 of a job's start that ``gangkit predict`` gives on the repository's example dump
(``examples/snapshot/``) when the job is submitted alone. For a list of reasons the message counts
how many are right and explains each wrong one by the layer that decides it (a pod stack has no gang
layer, Kueue refuses before placement, a node is on its way); for the bucket it names the
neighbouring one the number matches; for the prediction it names the run time the number is (a job's
whole annotated run time, the time it has left, the lesson's spread with another job in the way), or that it is read off the printed text (hours, rounded).
"""

from __future__ import annotations

import functools
import warnings

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
    "5.3": "which jobs stand between wide and its start, and which of their run times does a sample draw rather than read?",
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


#: The prediction's settings of section 8 (the example dump and jobs: ``lesson05.snapshot_examples()``).
PREDICT_SETTINGS = {"stack": "kueue+gang", "samples": 50, "seed": 0, "workers": 1}


@functools.lru_cache(maxsize=None)
def _wide_starts() -> tuple:
    """wide's start (p10, p50, p90 in seconds after the snapshot) submitted alone, then with finetune (the lesson's
    run), and the dump's run times as (train-a's whole run time, how long it had run, train-b's run time)."""
    from gangkit.analysis.predict import predict
    from gangkit.analysis.predict.residual import job_age
    from gangkit.lessons.lesson05 import snapshot_examples
    from gangkit.manifests import load_files

    folder = snapshot_examples()
    dump, wide, finetune = folder / "cluster-dump.yaml", folder / "wide-job.yaml", folder / "new-job.yaml"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the reader's notes on the dump
        alone = predict(dump, [wide], **PREDICT_SETTINGS).workloads[0].start_s
        both = {w.name: w.start_s for w in predict(dump, [finetune, wide], **PREDICT_SETTINGS).workloads}["team-a/wide"]
        jobs = {j.name: j for j in load_files([dump]).jobs}
    spread = tuple(tuple(s[k] for k in ("p10", "p50", "p90")) for s in (alone, both))
    return spread + ((jobs["train-a"].run_time, job_age(jobs["train-a"]), jobs["train-b"].run_time),)


@counts_wrong_answers("5.3")
def check_05_start_alone(answer) -> bool:
    """Exercise 5.3: the p90 of wide's start, in seconds after the snapshot, submitted alone to the example dump.

    A predict-then-check task on where a prediction's spread comes from: train-a and train-b, which stand in wide's
    way, carry ``gangkit/run-time`` annotations, so no sample draws theirs and p10 = p50 = p90. Typical wrong answers
    are named: the lesson's p90 (with finetune, whose run time is drawn, in the way), the time train-a has left
    (train-b is first in the queue), train-a's whole run time, train-b's alone, hours or minutes, and what is read off
    ``print(pred)``'s rounded hours: 3.0 h (or 10800 s, 3.0 x 3600) and the lesson's 4.5 h.
    """
    ex = "5.3"
    if answer is None:
        return not_done(ex, "run predict(snapshot / 'cluster-dump.yaml', [snapshot / 'wide-job.yaml'], stack='kueue+gang', "
                            "samples=50, seed=0, workers=1) and read .workloads[0].start_s['p90'].", hint=HINTS[ex])
    if isinstance(answer, dict) and "p90" in answer:
        print(f"Exercise {ex}: that is the whole start_s (p10, p50 and p90); the exercise asks for one number of it: "
              "answer = ...start_s['p90'].")
        return False
    value = number(ex, answer, whole=False, what="seconds after the snapshot (the p90 of wide's start)")
    if value is None:
        return False
    alone, both, (a_total, a_age, b_total) = _wide_starts()
    expected = alone[2]
    a_left = a_total - a_age
    if close(value, expected, TIME_TOLERANCE_S):
        spread = "p10 = p50 = p90" if alone[0] == alone[2] else f"p10 {fmt(alone[0])} s, p50 {fmt(alone[1])} s"
        print(f"Correct! Alone, wide starts at t={fmt(expected)} s after the snapshot ({spread}). Nothing in its way "
              f"has a drawn run time: train-a ends at {fmt(a_left)} s (its gangkit/run-time of {fmt(a_total)} s less "
              f"the {fmt(a_age)} s it had run), then train-b, first in the ClusterQueue, holds 16 of the 24 GPUs of "
              f"quota for its {fmt(b_total)} s. With finetune submitted too, finetune's drawn run time spread wide's "
              f"start to a p90 of {fmt(both[2])} s: a spread shows which run times were guessed.")
        return True
    hints = [
        (both[2], "that is the lesson's p90, with finetune submitted too: finetune's run time is drawn, and in some "
                  "samples it still runs when wide could start, holding 8 GPUs of quota and gpu-node-3. Alone, look at "
                  "which run times in wide's way are drawn and which are read from an annotation"),
        (both[1], "that is the lesson's p50, with finetune submitted too; the question asks for the p90 of wide alone"),
        (a_left, f"that is when train-a ends ({fmt(a_total)} s less the {fmt(a_age)} s it had run); but train-b is "
                 "ahead of wide in the ClusterQueue (position 0) and takes 16 of the 24 GPUs of quota then"),
        (a_total, "that is train-a's whole run time (its gangkit/run-time annotation); it had already run "
                  f"{fmt(a_age)} s at the snapshot"),
        (b_total, "that is train-b's run time alone; train-b is admitted only when train-a ends"),
        (a_total + b_total, f"that adds train-a's whole run time; it had already run {fmt(a_age)} s at the snapshot"),
        (0.0, "wide asks for 24 GPUs and 8 of the ClusterQueue's 24 are unused at the snapshot: it waits for quota "
              "(QuotaExhausted)"),
        (both[2] / 3600.0, "that is the lesson's p90 in hours, as print(pred) shows it (with finetune submitted "
                           "too), rounded; the question asks for wide alone, in seconds: read start_s['p90']"),
        (expected / 3600.0, "that is the answer in hours, rounded as print(pred) shows it; start_s is in seconds "
                            "(read start_s['p90'], not the printed text)"),
        (3600.0 * round(expected / 3600.0, 1), "that is the printed hours times 3600; print(pred) rounds to a tenth of "
                                               "an hour (6 minutes), so the seconds are lost: read start_s['p90'] for "
                                               "them"),
        (expected / 60.0, "that is the answer in minutes; start_s is in seconds"),
    ]
    for v, why in hints:
        if close(value, v, TIME_TOLERANCE_S if v >= 60 or v == 0 else 0.06):  # hours or minutes: as printed, rounded
            print(f"Exercise {ex}: you said {fmt(value)}; {why}.")
            return False
    print(f"Exercise {ex}: you said {fmt(value)}. Predict with wide-job.yaml alone (stack='kueue+gang', samples=50, "
          "seed=0) and read start_s['p90'] of its one workload, in seconds after the snapshot.")
    return False
