"""Checks of lesson 01 (the pod-level deadlock): GPUs held idle, the cluster size that avoids it, utilization.

Exercises 1.1 to 1.3 ask for the GPUs bound to jobs that cannot progress when the two four-worker jobs
of ``two-gangs-deadlock`` get six nodes instead of four (a prediction: the lesson ran four), the smallest cluster of one-GPU nodes on which two 4-worker jobs never deadlock, and the effective
utilization of ``three-workers`` over its whole run (a prediction from the lesson's tables, then checked
by running), all under stack 'pod'. When a number is off, the message names
what it probably is (what one job holds instead of both, the lesson's four-node answer, the allocated
utilization instead of the effective one, the lesson's own figure for the first 600 s, a sum that
leaves a job out) or, for a cluster size, what the simulator says happens
on that many nodes; a utilization written as a percentage is accepted, with a note.
"""

from __future__ import annotations

import functools

from gangkit.checks.common import close, counts_wrong_answers, figure, fmt, not_done, number
from gangkit.model.jobs import job
from gangkit.model.nodes import nodes
from gangkit.model.scenario import Scenario
from gangkit.simulate import simulate

#: Utilizations (fractions) within this distance of the summary figure are right.
UTILIZATION_TOLERANCE = 0.005
#: ``check_01_min_nodes`` simulates clusters of 1 to this many one-GPU nodes.
MIN_NODES_SWEEP = 16
#: ``check_01_min_nodes``: workers per job (one GPU each).
PODS_PER_JOB = 4

#: First hints of "not done yet" (the recipe follows after a wrong answer: common.not_done).
HINTS = {
    "1.1": "two more nodes: which pods get them, in the order the pods are created, and can either job then start?",
    "1.2": "with enough nodes every pod of both jobs fits at once; with fewer, the jobs' pods can split the nodes between them.",
    "1.3": "predict before you run: effective utilization counts only the GPU-seconds of pods that make progress, "
           "out of the cluster's GPUs times the length of the run; when does each job do useful work?",
}



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


#: Exercise 1.1: the lesson's two four-worker jobs, on this many one-GPU nodes instead of four.
HELD_IDLE_NODES = 6


@functools.lru_cache(maxsize=None)
def _six_nodes() -> tuple:
    """(held idle GPUs at the end, ((job, GPUs held), ...)) for exercise 1.1's run."""
    r = simulate(two_four_worker_jobs(HELD_IDLE_NODES), stack="pod")
    return int(r.summary()["held_idle_gpus_at_end"]), tuple((h.job, int(h.gpus_held)) for h in r.holders.itertuples())


@counts_wrong_answers("1.1")
def check_01_held_idle(answer) -> bool:
    """Exercise 1.1: GPUs held idle at the end when the two four-worker jobs get six one-GPU nodes, pod by pod.

    A change-a-parameter task: the lesson ran the jobs on four nodes (``two-gangs-deadlock``, 4 GPUs held);
    with six nodes the interleaved pods still split the cluster between the jobs (3 and 3 of their 4), so
    all six GPUs are held idle. Typical wrong answers: the lesson's 4, one job's 3, the 8 GPUs both jobs
    need, and 0 (more nodes, but not enough for one whole job).
    """
    ex = "1.1"
    if answer is None:
        return not_done(ex, f"simulate gk.Scenario(gk.nodes({HELD_IDLE_NODES}, gpus=1), [gk.job('A', pods=4, gpus=1), "
                            "gk.job('B', pods=4, gpus=1)]) with stack='pod', then read "
                            "result.summary()['held_idle_gpus_at_end'] or add up result.holders['gpus_held'].",
                        hint=HINTS[ex])
    value = number(ex, answer, whole=True, what="GPUs")
    if value is None:
        return False
    expected, held = _six_nodes()
    lesson = figure("two-gangs-deadlock", "pod", "held_idle_gpus_at_end")
    shares = " and ".join(f"{j} {g}" for j, g in held)
    if value == expected:
        print(f"Correct! All {fmt(expected)} GPUs are held idle ({shares}): the pods of the two jobs are created "
              "interleaved and each takes a free node, so the jobs split the nodes between them and neither gets "
              "all four workers. Two more nodes changed nothing but the number of idle GPUs; how many does it "
              "take for one job to win (exercise 1.2)?")
        return True
    per_job = {g for _, g in held}
    if value < 0:
        print(f"Exercise {ex}: you said {fmt(value)}; a number of GPUs cannot be negative.")
    elif value > HELD_IDLE_NODES:
        print(f"Exercise {ex}: you said {fmt(value)}, but the cluster has only {HELD_IDLE_NODES} GPUs: a job cannot "
              "hold GPUs it has not got. Both jobs together ask for 8; look at result.holders.")
    elif value == lesson:
        print(f"Exercise {ex}: you said {fmt(value)}: that is the lesson's run on four nodes. With "
              f"{HELD_IDLE_NODES} nodes, which pods get the two extra nodes, and can either job then start?")
    elif value in per_job:
        print(f"Exercise {ex}: you said {fmt(value)}. That is what one job holds; both hold GPUs without "
              "progress. Add up result.holders['gpus_held'].")
    elif value == 0:
        print(f"Exercise {ex}: you said 0: with {HELD_IDLE_NODES} nodes one job could run if it got 4 of them, but "
              "the pods are created interleaved (A-0, B-0, A-1, B-1, ...), so each job gets 3. Look at "
              "result.deadlock_report().")
    else:
        print(f"Exercise {ex}: you said {fmt(value)}. Count the GPUs bound to pods of jobs that cannot "
              "progress: result.holders, or result.summary()['held_idle_gpus_at_end'].")
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


@counts_wrong_answers("1.2")
def check_01_min_nodes(answer) -> bool:
    """Exercise 1.2: the smallest cluster of one-GPU nodes on which two 4-worker jobs never deadlock.

    Computed by simulating n = 1..16 nodes (``gk.nodes(n, gpus=1)``) with two jobs of 4 one-GPU
    sync workers submitted together, under stack 'pod'; the answer is the smallest n from which
    no larger n in the sweep deadlocks either. Below 4 nodes the jobs cannot run at all, and the
    simulator still reports a deadlock (the pods bind; nothing is rejected).
    """
    ex = "1.2"
    if answer is None:
        return not_done(ex, "for n = 1, 2, ..., 16, simulate gk.Scenario(gk.nodes(n, gpus=1), "
                            "[gk.job('A', pods=4, gpus=1), gk.job('B', pods=4, gpus=1)]) with stack='pod' and "
                            "look at result.deadlock. Careful below 4 nodes: the jobs cannot run at all there, "
                            "and the simulator reports that as a deadlock too. Answer the smallest n from "
                            "which no deadlock happens for any larger n.", hint=HINTS[ex])
    value = number(ex, answer, whole=True, what="nodes")
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


#: The effective utilization lesson 01 prints for the first 600 s of ``three-workers`` (cell "Over the first
#: 600 s"): the most common wrong answer to exercise 1.3, which asks for the whole run.
FIRST_STRETCH_EFFECTIVE = 0.5


@functools.lru_cache(maxsize=None)
def _three_workers_useful() -> tuple:
    """``three-workers`` under 'pod': ((job, useful GPU-seconds), ...) and the run's capacity in GPU-seconds."""
    r = simulate("three-workers", stack="pod")
    useful = tuple((str(j.job), float(j.useful_gpu_s)) for j in r.jobs.itertuples())
    return useful, float(r.summary()["capacity_gpu_seconds"])


def _left_out(frac: float, tol: float) -> tuple[str, ...] | None:
    """The jobs a prediction of ``frac`` leaves out, if it is the useful GPU-seconds of only some of them."""
    import itertools

    useful, capacity = _three_workers_useful()
    for k in range(1, len(useful)):
        for kept in itertools.combinations(useful, k):
            if close(frac, sum(u for _, u in kept) / capacity, tol):
                return tuple(name for name, _ in useful if name not in {n for n, _ in kept})
    return None


@counts_wrong_answers("1.3")
def check_01_effective_utilization(answer) -> bool:
    """Exercise 1.3: predict the effective utilization of ``three-workers`` under stack 'pod' over the whole run.

    A prediction made from the lesson's tables (each job's useful GPU-seconds over 4 GPUs for the
    900 s the run lasts), then checked by running the simulator. Right within 0.005 of
    ``summary()['effective_utilization']``. A percentage (a value above 1 and at most 100 that
    matches once divided by 100) is accepted with a note that gangkit reports fractions. The
    lesson's own figure for the first 600 s (0.5) is recognised and explained, as are the
    allocated utilization, the share held idle and a sum that leaves a job out.
    """
    ex = "1.3"
    if answer is None:
        return not_done(ex, "predict it before you run anything: add up the useful GPU-seconds of Z, X and Y "
                            "(the lesson's jobs table, column useful_gpu_s) and divide by the capacity, 4 GPUs "
                            "for the 900 s the run lasts; set answer to that fraction, then simulate "
                            "'three-workers' with stack='pod' and compare with what its summary() reports.",
                        hint=HINTS[ex])
    value = number(ex, answer, whole=False, what="the effective utilization, a fraction from 0 to 1")
    if value is None:
        return False
    expected = figure("three-workers", "pod", "effective_utilization")
    allocated = figure("three-workers", "pod", "allocated_utilization")
    held = figure("three-workers", "pod", "held_idle_gpu_seconds") / figure("three-workers", "pod", "capacity_gpu_seconds")
    tol = UTILIZATION_TOLERANCE
    why = ("GPUs bound to X's waiting workers count as allocated but did no work, so effective "
           "utilization is lower than allocated. Now run it: gk.simulate('three-workers', stack='pod').summary() "
           "gives allocated_utilization and effective_utilization side by side.")
    if close(value, expected, tol):
        print(f"Correct! Over the whole run effective utilization is {fmt(expected)}: {why}")
        return True
    if 1 < value <= 100 and close(value / 100, expected, tol):
        print(f"Correct! {fmt(value)} % is {fmt(expected)} as a fraction, and gangkit reports fractions "
              f"(0 to 1), so write {fmt(expected)} next time. {why}")
        return True
    if value < 0 or value > 100:
        print(f"Exercise {ex}: you said {fmt(value)}; a utilization is a fraction from 0 to 1 "
              "(gangkit reports fractions, not percentages).")
        return False
    frac = value / 100 if value > 1 else value
    missing = _left_out(frac, tol)
    if close(frac, FIRST_STRETCH_EFFECTIVE, tol):
        print(f"Exercise {ex}: you said {fmt(value)}. That is the figure the lesson printed for the first 600 s "
              "only, while Z ran and X's two bound workers waited for their third: half the cluster did work. "
              "The exercise asks for the whole run, which goes on for 300 s after Z finishes, and in those "
              "300 s no GPU is held idle. Count the useful GPU-seconds of every job over the whole 900 s "
              "(the jobs table's useful_gpu_s) and divide by 4 GPUs x 900 s.")
    elif close(frac, allocated, tol):
        print(f"Exercise {ex}: you said {fmt(value)}. That is the allocated utilization: it counts every GPU "
              "bound to a pod, including X's workers that sit idle waiting for their third. Effective "
              "utilization counts only the GPU-seconds of jobs that progress: the jobs table's useful_gpu_s, "
              "over 4 GPUs x 900 s.")
    elif close(frac, held, tol):
        print(f"Exercise {ex}: you said {fmt(value)}. That is the share of GPU-seconds held idle "
              "(the jobs table's held_idle_gpu_s over 4 GPUs x 900 s). Effective utilization is the share "
              "that did useful work: useful_gpu_s.")
    elif missing:
        print(f"Exercise {ex}: you said {fmt(value)}. That counts the useful GPU-seconds of some jobs only: "
              f"{' and '.join(missing)} {'is' if len(missing) == 1 else 'are'} left out. Every job that ran did "
              "useful work; add each job's useful_gpu_s before dividing by 4 GPUs x 900 s.")
    elif close(frac, expected, 0.05):
        print(f"Exercise {ex}: you said {fmt(value)}: close, but more than {fmt(tol)} away. Work with the "
              "tables' GPU-seconds rather than a reading of the plot: useful_gpu_s of each job over 4 GPUs x 900 s.")
    else:
        print(f"Exercise {ex}: you said {fmt(value)}. Effective utilization is useful GPU-seconds divided by "
              "capacity GPU-seconds: each job's useful_gpu_s (the lesson's jobs table) over the cluster's "
              "4 GPUs for the 900 s the run lasts.")
    return False
