"""Checks of lesson 08 (the capstone): a design of the learner's own that meets every goal, then the smallest
NodePool with which it also survives a node going down.

Exercise 8.1 asks for a :class:`~gangkit.lessons.lesson08.Design` that meets every goal of
:data:`~gangkit.lessons.lesson08.GOALS` on the three days of the trace; 8.2 for one that meets them
on the base workload *and* with one static node down (:func:`~gangkit.lessons.lesson08.stretch`),
with the smallest NodePool limit that does: the check runs the design once more with one G3 node
(8 GPUs) less of NodePool limit and accepts only if that run misses a goal. The lost node's GPUs
come back only through the NodePool; quota decides who uses the GPUs there are and adds none, so a
lendingLimit or a reclaim policy changes nothing there. The check runs the design and prints the
score's verdict goal by goal, with the score's own reason for each goal missed, and where the
longest-waiting job of a tenant that misses a wait goal waits (:meth:`gangkit.Result.diagnose`); a
copy of one of the module's worked designs is sent back to be made one's own.
"""

from __future__ import annotations

from gangkit.checks.common import counts_wrong_answers, kind, not_done
from gangkit.model.errors import ScenarioError

HINTS = {
    "8.1": "start from lesson08.NAIVE, read which goals it misses and why, and change the lever each reason names.",
    "8.2": "run your design of 8.1 on lesson08.stretch('node-down'): which goal breaks, and which layer can bring "
           "back the 8 GPUs of a node that is gone?",
}


#: Runs already made in this kernel, by (the design's repr, the stretch): a check runs a design once.
_RUNS: dict = {}
#: A G3 node's GPUs: Karpenter launches whole nodes, so a NodePool limit counts in steps of this.
NODE_GPUS = 8


def _run(design, stretch: str | None):
    """The run of ``design`` on the base workload (``stretch`` None) or on that stretch, made once."""
    from gangkit.lessons import lesson08

    key = (repr(design), stretch)
    if key not in _RUNS:
        _RUNS[key] = lesson08.run(design, lesson08.stretch(stretch) if stretch else None)
    return _RUNS[key]


def _score(design, stretch: str | None):
    """The score of ``design`` on the base workload (``stretch`` None) or on that stretch."""
    from gangkit.lessons import lesson08

    return lesson08.score(_run(design, stretch), design, window_s=lesson08.WINDOW_S)


def _where_it_waits(design, stretch: str | None, table) -> str | None:
    """The diagnosis, halfway through its wait, of the longest-waiting job of the first tenant that misses a
    wait goal in ``table`` (None when no wait goal is missed)."""
    from gangkit.lessons import lesson08

    missed = table[~table["met"] & table["goal"].isin(["p95 wait", "max wait"])]
    if missed.empty:
        return None
    result = _run(design, stretch)
    jobs = result.jobs[lesson08.tenant_of_jobs(result.jobs) == missed["tenant"].iloc[0]]
    longest = jobs.sort_values(["wait_s", "job"]).iloc[-1]
    return str(result.diagnose(job=longest["job"], at=float(longest["submit_s"]) + float(longest["wait_s"]) / 2))


def _worked(answer) -> str | None:
    """The name of the module's worked design ``answer`` equals (the same numbers), or None."""
    from gangkit.lessons import lesson08

    worked = {"lesson08.REFERENCE": lesson08.REFERENCE, "lesson08.NAIVE": lesson08.NAIVE}
    worked |= {f"lesson08.ALTERNATIVES[{k!r}]": d for k, d in lesson08.ALTERNATIVES.items()}
    for name, d in worked.items():
        if _same(answer, d):
            return name
    return None


def _same(a, b) -> bool:
    import dataclasses

    return dataclasses.replace(a, name="") == dataclasses.replace(b, name="")


def _read(ex: str, answer):
    """``answer`` as a Design (None after printing what the exercise expects)."""
    from gangkit.lessons import lesson08

    if not isinstance(answer, lesson08.Design):
        print(f"Exercise {ex}: expected a lesson08.Design (for example lesson08.Design(queues={{...}}, "
              f"placement='gang', ...)), but got {kind(answer)}.")
        return None
    try:
        answer.scenario()
    except ScenarioError as error:
        print(f"Exercise {ex}: the simulator refuses this design: {error}")
        return None
    return answer


def _report(ex: str, table, what: str) -> bool:
    missed = table[~table["met"]]
    met = len(table) - len(missed)
    if missed.empty:
        return True
    print(f"Exercise {ex}: {met} of {len(table)} goals met {what}; missed:")
    for _, row in missed.iterrows():
        print(f"  - {row['tenant']} {row['goal']}: {row['reason']}")
    return False


@counts_wrong_answers("8.1")
def check_08_design(answer) -> bool:
    """Exercise 8.1: a Design of one's own that meets every goal on the three days of the trace."""
    ex = "8.1"
    if answer is None:
        return not_done(ex, "answer = lesson08.Design(queues={'production': lesson08.QueueDesign(...), ...}, "
                            "placement=..., scoring=..., pool_limit=...); check it with lesson08.evaluate(answer) "
                            "until every goal is met.", hint=HINTS[ex])
    design = _read(ex, answer)
    if design is None:
        return False
    copied = _worked(design)
    if copied == "lesson08.NAIVE":
        print(f"Exercise {ex}: that is lesson08.NAIVE, the design that misses three goals; change its levers.")
        return False
    if copied:
        print(f"Exercise {ex}: that is {copied}, one of the lesson's worked designs: build your own (change at "
              "least one number and keep every goal met).")
        return False
    table = _score(design, None)
    if not _report(ex, table, "on the three days"):
        return False
    print(f"Correct! Your design ({design.stack()}, scoring {design.scoring}) meets all {len(table)} goals. Now "
          "write down, in three sentences, which lever meets which goal and what it costs (exercise 8.3).")
    return True


def _quota_words(design, stretch: str) -> str:
    """Quota against the GPUs the cluster can hold with ``stretch``: quota rations GPUs, it adds none."""
    from gangkit.lessons import lesson08

    gpus = sum(n.gpus for n in lesson08.stretch(stretch).nodes) + design.pool_limit // NODE_GPUS * NODE_GPUS
    if not design.queues:
        return f"with a node down the cluster holds at most {gpus} GPUs, static nodes and NodePool together"
    quota = sum(q.nominal for q in design.queues.values())
    return (f"with a node down the cluster holds at most {gpus} GPUs, static nodes and NodePool together; your "
            f"ClusterQueues' nominalQuota adds up to {quota}: quota (nominalQuota, lendingLimit, reclaim) decides "
            "who uses the GPUs there are, it adds none")


@counts_wrong_answers("8.2")
def check_08_node_down(answer) -> bool:
    """Exercise 8.2: a Design that meets every goal on the base workload and with one static node down, with the
    smallest NodePool limit that does (one G3 node less of limit misses a goal)."""
    import dataclasses

    ex = "8.2"
    if answer is None:
        return not_done(ex, "evaluate your design on lesson08.stretch('node-down') as well as on the base workload, "
                            "and read where research's longest wait is spent (lesson08.run(design, workload)"
                            ".diagnose(job=..., at=...)); change the design until both score every goal met, then "
                            "lower pool_limit by 8 GPUs at a time until a goal breaks, and answer the last design "
                            "that met them all.", hint=HINTS[ex])
    design = _read(ex, answer)
    if design is None:
        return False
    copied = _worked(design)
    if copied and copied != "lesson08.NAIVE":
        print(f"Exercise {ex}: that is {copied}, one of the lesson's worked designs: build your own.")
        return False
    if not _report(ex, _score(design, None), "on the base workload"):
        return False
    down = _score(design, "node-down")
    if not _report(ex, down, "with one static node down"):
        where = _where_it_waits(design, "node-down", down)
        if where:
            print(f"  where it waits: {where}")
        print(f"  ({_quota_words(design, 'node-down')}.)")
        return False
    nodes = design.pool_limit // NODE_GPUS
    whole = "" if design.pool_limit % NODE_GPUS == 0 else (
        f" (Karpenter launches whole G3 nodes of {NODE_GPUS} GPUs: a limit of {design.pool_limit} buys what "
        f"{nodes * NODE_GPUS} does)")
    if nodes == 0:
        print(f"Correct! Your design meets every goal with a node down and no NodePool at all{whole}.")
        return True
    smaller = dataclasses.replace(design, pool_limit=(nodes - 1) * NODE_GPUS)
    base_smaller, down_smaller = _score(smaller, None), _score(smaller, "node-down")
    if base_smaller["met"].all() and down_smaller["met"].all():
        print(f"Exercise {ex}: your design meets every goal on both, but so does it with pool_limit "
              f"{smaller.pool_limit} (one G3 node fewer){whole}: the exercise asks for the smallest NodePool limit "
              "that does; lower it until a goal breaks.")
        return False
    missed = down_smaller[~down_smaller["met"]]
    first = missed.iloc[0] if not missed.empty else base_smaller[~base_smaller["met"]].iloc[0]
    where = "with a node down" if not missed.empty else "on the base workload"
    unit = " s" if "wait" in first["goal"] else ""
    hours = f" ({first['measured'] / 3600:.2f} h)" if unit else ""
    print(f"Correct! {nodes} G3 node{'s' if nodes > 1 else ''} of NodePool (pool_limit {design.pool_limit}) is the "
          f"least with which your design meets every goal with a node down{whole}; with pool_limit "
          f"{smaller.pool_limit}, {where}, {first['tenant']} {first['goal']} is {first['measured']:g}{unit}{hours} "
          f"(target {first['target']:g}{unit}). The node that is gone comes back only through the NodePool: Karpenter "
          "launches a node for pods that wait, up to its limit; quota (nominalQuota, lendingLimit, reclaim) decides "
          "who uses the GPUs there are and adds none. Name that lever and what its nodes cost in exercise 8.3.")
    return True
