"""Volcano's queue-share rules (the proportion plugin, v1.15.1) as tables of cases.

Each comparison the proportion plugin registers (OverusedFn, AllocatableFn,
PreemptiveFn, ReclaimableFn, JobEnqueueableFn; Volcano
``pkg/scheduler/plugins/proportion/proportion.go``) is checked on its own,
then in small clusters where the outcome can be worked out by hand from
Volcano's rules. The central question: what happens to a gang larger than
its queue's deserved share? Volcano's allocate compares a queue against its
*deserved* share, and deserved is only what the queue's weight gives it
while other queues ask for resources. So such a gang starts in an otherwise
idle cluster, and waits (for ever, if the others never ask for less) while
other queues keep its share small. See docs/reference/volcano.md,
*Queue-share rules*.
"""

from __future__ import annotations

import math

import pytest

import gangkit as gk
from gangkit import Job, PodSet, job, nodes
from gangkit.model.resources import Resources
from gangkit.model.scenario import ORDERINGS
from gangkit.volcano.api import Queue
from gangkit.volcano.plugins.proportion import QueueAttr, proportion

from conftest import check_times, run_with_queues

NAN = math.nan
INF = math.inf


def res(g: float, cpu: float = 0.0) -> Resources:
    return Resources(float(g), float(cpu), 0.0)





def ones(queue: str, n: int, run_time: float = 100, submit_time: float = 0, first: int = 0) -> list[Job]:
    """``n`` one-GPU jobs of one queue, named queue+index."""
    return [job(f"{queue}{i}", run_time=run_time, submit_time=submit_time, volcano_queue=queue)
            for i in range(first, first + n)]


# --- each comparison on its own -------------------------------------------------------------

def attr(deserved, allocated, **kw) -> QueueAttr:
    return QueueAttr(Queue("q"), allocated=allocated, deserved=deserved, **kw)


COMPARISONS = [
    # (id, queue figures, the check, expected)
    ("OverusedFn: allocated reached deserved in the one resource asked for: overused",
     attr(res(4), res(4)), lambda a: a.overused(), True),
    ("OverusedFn: below deserved in GPUs: not overused",
     attr(res(4), res(3)), lambda a: a.overused(), False),
    ("OverusedFn: at deserved in GPUs but below in CPU: not overused (LessEqual needs every resource)",
     attr(res(4, 8), res(4, 2)), lambda a: a.overused(), False),
    ("OverusedFn: at deserved in GPUs and CPU: overused",
     attr(res(4, 8), res(4, 8)), lambda a: a.overused(), True),
    ("OverusedFn: deserving nothing and holding nothing counts as overused (0 <= 0)",
     attr(res(0), res(0)), lambda a: a.overused(), True),
    ("AllocatableFn: 3 of 4 deserved GPUs held, one more GPU fits the share",
     attr(res(4), res(3)), lambda a: a.allocatable(res(1)), True),
    ("AllocatableFn: 3 of 4 deserved GPUs held, two more do not",
     attr(res(4), res(3)), lambda a: a.allocatable(res(2)), False),
    ("AllocatableFn: compared with deserved, not with realCapability",
     attr(res(4), res(0), real_capability=res(8)), lambda a: a.allocatable(res(6)), False),
    ("AllocatableFn: GPUs at deserved, a pod asking only CPU is compared in CPU only",
     attr(res(4, 8), res(4, 2)), lambda a: a.allocatable(res(0, 4)), True),
    ("AllocatableFn: what this trial already placed counts",
     attr(res(4), res(2)), lambda a: a.allocatable(res(1), already=res(2)), False),
    ("PreemptiveFn: all 6 waiting GPUs of a job against a deserved share of 4",
     attr(res(4), res(0)), lambda a: a.preemptive(res(6)), False),
    ("PreemptiveFn: 2 waiting GPUs on 1 held of 4 deserved",
     attr(res(4), res(1)), lambda a: a.preemptive(res(2)), True),
    ("ReclaimableFn: a queue holding 6 of 4 deserved gives",
     attr(res(4), res(6)), lambda a: a.reclaimable(), True),
    ("ReclaimableFn: with 2 GPUs of it already chosen it is at its share and gives no more",
     attr(res(4), res(6)), lambda a: a.reclaimable(taken=res(2)), False),
    ("ReclaimableFn: a queue at its deserved share gives nothing",
     attr(res(4), res(4)), lambda a: a.reclaimable(), False),
    ("ReclaimableFn: above deserved in CPU alone is above deserved",
     attr(res(4, 4), res(4, 6)), lambda a: a.reclaimable(), True),
]


@pytest.mark.parametrize("figures, check_, expected", [c[1:] for c in COMPARISONS], ids=[c[0] for c in COMPARISONS])
def test_each_comparison_of_the_proportion_plugin(figures, check_, expected):
    assert check_(figures) is expected


SHARES = [
    # (id, deserved, allocated, share): updateQueueAttrShare, the key of QueueOrderFn
    ("half of its GPUs", res(4), res(2), 0.5),
    ("the largest ratio over the resources it deserves", res(4, 8), res(1, 6), 0.75),
    ("above its share", res(4), res(6), 1.5),
    ("a queue that deserves nothing has share 0 (only resources named in deserved count)", res(0), res(2), 0.0),
]


@pytest.mark.parametrize("deserved, allocated, share", [c[1:] for c in SHARES], ids=[c[0] for c in SHARES])
def test_share(deserved, allocated, share):
    a = attr(deserved, allocated)
    a.update_share()
    assert a.share == pytest.approx(share)


REAL_CAPABILITY = [
    # (id, total, queues, {queue with jobs: request}, expected {queue: (realCapability, deserved)})
    ("a guarantee is kept for its queue even while that queue holds no job",
     res(8), [Queue("a"), Queue("b", guarantee=res(4))], {"a": res(8)}, {"a": (res(8 - 4), res(4))}),
    ("without guarantees a queue alone deserves all it asks for, whatever its weight",
     res(8), [Queue("a"), Queue("b", weight=7)], {"a": res(6)}, {"a": (res(8), res(6))}),
    ("a capability that names only GPUs leaves CPU unlimited (Volcano: cpu <= 0 means no cap)",
     res(8, 32), [Queue("a", capability=res(4))], {"a": res(8, 16)}, {"a": (res(4, 32), res(4, 16))}),
    ("the own guarantee raises deserved above the weight's part",
     res(8), [Queue("a", guarantee=res(6)), Queue("b")], {"a": res(6), "b": res(8)},
     {"a": (res(8), res(6)), "b": (res(2), res(2))}),
]


@pytest.mark.parametrize("total, queues, requests, expected", [c[1:] for c in REAL_CAPABILITY],
                         ids=[c[0] for c in REAL_CAPABILITY])
def test_real_capability_and_deserved(total, queues, requests, expected):
    by_name = {q.name: q for q in queues}
    attrs = {n: QueueAttr(by_name[n], request=r) for n, r in requests.items()}
    proportion(total, attrs, queues)
    for name, (real, deserved) in expected.items():
        assert tuple(attrs[name].real_capability) == pytest.approx(tuple(real)), name
        assert tuple(attrs[name].deserved) == pytest.approx(tuple(deserved)), name


# --- a gang larger than its queue's deserved share --------------------------------------------

A6 = job("A", pods=6, run_time=100, volcano_queue="a")  # 6 of 8 GPUs: more than half, its weight's part
B6 = job("B", pods=6, run_time=100, volcano_queue="b")

OVER_SHARE = [
    # (id, queues, jobs, expected {job: (start, finish, state)}, reasons)
    ("idle cluster: A (6 GPUs, queue a of weight 1 beside b of weight 1) starts at once: "
     "only queues with jobs share, so a deserves all 6 it asks for",
     [Queue("a"), Queue("b")], [A6], {"A": (0, 100, "Finished")}, {}),
    ("queue b asks for 8 (one-GPU jobs): a deserves 4, A waits until b asks for 2 or less",
     [Queue("a"), Queue("b")], [A6] + ones("b", 8),
     {"A": (200, 300, "Finished"), "b0": (0, 100, "Finished"), "b7": (100, 200, "Finished")}, {}),
    ("b's running job asks for only 2: a deserves the other 6 and A starts beside it",
     [Queue("a"), Queue("b")], [job("R", pods=2, run_time=1000, volcano_queue="b"),
                                job("A", pods=6, run_time=100, submit_time=5, volcano_queue="a")],
     {"A": (5, 105, "Finished")}, {}),
    ("two gangs of 6 in two queues of equal weight: each deserves 4, neither ever starts (as in Volcano)",
     [Queue("a"), Queue("b")], [A6, B6],
     {"A": (NAN, NAN, "WaitingAtEnd"), "B": (NAN, NAN, "WaitingAtEnd")},
     {"A": "QueueOverDeserved", "B": "QueueOverDeserved"}),
    ("operator's fix: weight 3 for queue a makes its part 6 of 8; A starts, B waits for it",
     [Queue("a", weight=3), Queue("b")], [A6, B6],
     {"A": (0, 100, "Finished"), "B": (100, 200, "Finished")}, {}),
    ("operator's fix: a guarantee of 6 for queue a; A starts, but b's realCapability is now 8 - 6 = 2 for good",
     [Queue("a", guarantee=res(6)), Queue("b")], [A6, B6],
     {"A": (0, 100, "Finished"), "B": (NAN, NAN, "WaitingAtEnd")}, {"B": "QueueOverDeserved"}),
    ("an idle queue's guarantee is kept: A never starts in an empty cluster (b keeps 4 of 8)",
     [Queue("a"), Queue("b", guarantee=res(4))], [A6], {"A": (NAN, NAN, "WaitingAtEnd")}, {"A": "QueueOverDeserved"}),
    ("the same as a Volcano Job: refused at enqueue, its minimum is above realCapability",
     [Queue("a"), Queue("b", guarantee=res(4))], [job("A", pods=6, run_time=100, volcano_queue="a", controller="volcano")],
     {"A": (NAN, NAN, "WaitingAtEnd")}, {"A": "QueueCapabilityExceeded"}),
    ("a job of 6 pods with minMember 4 starts with the 4 its share allows; its last 2 and B start when those end",
     [Queue("a"), Queue("b")], [job("A", pods=6, run_time=100, volcano_queue="a", min_member=4, progress="independent"), B6],
     {"A": (0, 200, "Finished"), "B": (100, 200, "Finished")}, {}),
]


@pytest.mark.parametrize("queues, jobs, expected, reasons", [c[1:] for c in OVER_SHARE], ids=[c[0] for c in OVER_SHARE])
def test_a_gang_larger_than_its_deserved_share(queues, jobs, expected, reasons):
    result = run_with_queues(nodes(1, gpus=8), jobs, queues, horizon=5000)
    check_times(result, expected, reasons)
    assert result.summary()["held_idle_gpus_at_end"] == 0  # a waiting gang holds nothing


@pytest.mark.parametrize("ordering", ORDERINGS)
@pytest.mark.parametrize("preemption", [False, True], ids=["without preemption", "with preempt and reclaim"])
def test_two_gangs_above_their_shares_wait_under_every_ordering(ordering, preemption):
    """Volcano's AllocatableFn compares every pod with the queue's *deserved* share (4 of 8 GPUs each here).

    A gang of 6 gets 4 pods into its trial, is not ready, and the trial is
    discarded, session after session, whatever the ordering inside the
    queue; reclaim does not help either (PreemptiveFn refuses 6 against 4,
    and nothing runs to take from). This is Volcano's behaviour: an operator
    gives one queue more weight or a guarantee (rows above).
    """
    result = run_with_queues(nodes(1, gpus=8), [A6, B6], [Queue("a"), Queue("b")], horizon=5000, ordering=ordering, preemption=preemption)
    check_times(result, {"A": (NAN, NAN, "WaitingAtEnd"), "B": (NAN, NAN, "WaitingAtEnd")})


# --- an overused queue in allocate -----------------------------------------------------------

def cpu_node():
    return [gk.Node("n", 8, cpu=32.0)]


def gpu_cpu_job(name, pods, queue, run_time, submit_time=0, gpus=1, cpu=1.0):
    return Job(name, [PodSet("w", pods, gpus, cpu=cpu)], run_time, submit_time=submit_time, volcano_queue=queue)


OVERUSED = [
    # (id, nodes, jobs, horizon, expected, reasons)
    ("queue a holds its deserved 4 GPUs: its 1-GPU job waits though 4 GPUs are free (b's gang of 6 "
     "is above b's share of 4), until a's big job ends",
     nodes(1, gpus=8),
     [job("big", pods=4, run_time=1000, volcano_queue="a"), job("small", run_time=100, submit_time=10, volcano_queue="a"),
      job("G", pods=6, run_time=100, submit_time=10, volcano_queue="b")],
     None, {"small": (1000, 1100, "Finished"), "G": (1000, 1100, "Finished")}, {}),
    ("the same at t=500: the reason names the deserved share",
     nodes(1, gpus=8),
     [job("big", pods=4, run_time=1000, volcano_queue="a"), job("small", run_time=100, submit_time=10, volcano_queue="a"),
      job("G", pods=6, run_time=100, submit_time=10, volcano_queue="b")],
     500, {"small": (NAN, NAN, "WaitingAtEnd")}, {"small": "QueueOverDeserved"}),
    ("at its GPU share but below its CPU share queue a is not overused: a CPU-only job starts",
     cpu_node(),
     [gpu_cpu_job("big", 4, "a", 1000), gpu_cpu_job("cpu-only", 1, "a", 100, submit_time=10, gpus=0, cpu=4.0),
      gpu_cpu_job("G", 6, "b", 100, submit_time=10)],
     None, {"cpu-only": (10, 110, "Finished"), "G": (1000, 1100, "Finished")}, {}),
    ("while a 1-GPU job of the same queue waits for a's GPU share",
     cpu_node(),
     [gpu_cpu_job("big", 4, "a", 1000), gpu_cpu_job("one-gpu", 1, "a", 100, submit_time=10),
      gpu_cpu_job("G", 6, "b", 100, submit_time=10)],
     None, {"one-gpu": (1000, 1100, "Finished")}, {}),
]


@pytest.mark.parametrize("node_list, jobs, horizon, expected, reasons", [c[1:] for c in OVERUSED], ids=[c[0] for c in OVERUSED])
def test_an_overused_queue_is_skipped_in_allocate(node_list, jobs, horizon, expected, reasons):
    settings = {} if horizon is None else {"horizon": horizon}
    check_times(run_with_queues(node_list, jobs, [Queue("a"), Queue("b")], **settings), expected, reasons)


# --- enqueue against realCapability ------------------------------------------------------------

ENQUEUE = [
    # (id, queues, jobs, expected, reasons)
    ("a queue at its capability keeps the next PodGroup Pending",
     [Queue("a", capability=res(4))],
     [job("V1", pods=4, run_time=100, volcano_queue="a", controller="volcano"),
      job("V2", pods=1, run_time=100, volcano_queue="a", controller="volcano")],
     {"V1": (1, 101, "Finished"), "V2": (102, 202, "Finished")}, {}),
    ("a capability in GPUs only: pods asking for CPU are not held back by CPU",
     [Queue("a", capability=res(4))],
     [Job("V", [PodSet("w", 2, 1, cpu=2.0)], 100, volcano_queue="a", controller="volcano")],
     {"V": (1, 101, "Finished")}, {}),
    ("another queue's guarantee lowers realCapability at enqueue",
     [Queue("a"), Queue("b", guarantee=res(6))],
     [job("V", pods=4, run_time=100, volcano_queue="a", controller="volcano")],
     {"V": (NAN, NAN, "WaitingAtEnd")}, {"V": "QueueCapabilityExceeded"}),
]


@pytest.mark.parametrize("queues, jobs, expected, reasons", [c[1:] for c in ENQUEUE], ids=[c[0] for c in ENQUEUE])
def test_enqueue_against_real_capability(queues, jobs, expected, reasons):
    check_times(run_with_queues([gk.Node("n", 8, cpu=32.0)], jobs, queues, horizon=1000), expected, reasons)


# --- reclaim ------------------------------------------------------------------------------------

def evicted(result) -> dict:
    pods = result.pods
    return pods[pods.state == "Evicted"].job.value_counts().to_dict()


THREE = [Queue("a"), Queue("b"), Queue("c")]

RECLAIM = [
    # (id, jobs, expected, pods evicted {job: count})
    ("victims only from the queue above its deserved share (c: 6 of 4), not from a (2 of 2) though a's jobs are newer",
     ones("c", 6, run_time=1000) + ones("a", 2, run_time=1000, submit_time=5)
     + [job("G", pods=2, run_time=100, submit_time=10, volcano_queue="b")],
     {"G": (10, 110, "Finished"), "a0": (5, 1005, "Finished")}, {"c5": 1, "c4": 1}),
    ("never below minMember: c's job of 6 pods (minMember 4) gives its 2 surplus pods and keeps running",
     [job("C", pods=6, run_time=1000, volcano_queue="c", min_member=4, progress="independent")]
     + ones("a", 2, run_time=1000, submit_time=5) + [job("G", pods=2, run_time=100, submit_time=10, volcano_queue="b")],
     {"G": (10, 110, "Finished")}, {"C": 2}),
    ("one more GPU would take queue b above its share (3 held + 1 > 3.5): nothing reclaimed, though a holds 4 of 3.5",
     ones("a", 4, run_time=1000) + ones("c", 1, run_time=1000) + ones("b", 3, run_time=1000)
     + [job("G", run_time=100, submit_time=10, volcano_queue="b")],
     {"G": (1000, 1100, "Finished")}, {}),
    ("a job asking more than its queue's deserved share (b: 4 waiting GPUs, deserved 3) reclaims nothing",
     ones("c", 6, run_time=1000) + ones("a", 2, run_time=1000, submit_time=5)
     + [job("G", pods=4, run_time=100, submit_time=10, volcano_queue="b")],
     {"G": (1000, 1100, "Finished")}, {}),
]


@pytest.mark.parametrize("jobs, expected, pods_evicted", [c[1:] for c in RECLAIM], ids=[c[0] for c in RECLAIM])
def test_reclaim_takes_only_what_is_above_deserved(jobs, expected, pods_evicted):
    result = run_with_queues(nodes(1, gpus=8), jobs, THREE, preemption=True)
    check_times(result, expected)
    assert evicted(result) == pods_evicted
