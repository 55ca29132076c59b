"""Checks of lesson 08 (the capstone): a design of the learner's own that meets every goal, then one that also
survives a node going down.

Exercise 8.1 asks for a :class:`~gangkit.lessons.lesson08.Design` that meets every goal of
:data:`~gangkit.lessons.lesson08.GOALS` on the three days of the trace; 8.2 for one that meets them
on the base workload *and* with one static node down (:func:`~gangkit.lessons.lesson08.stretch`).
The check runs the design and prints the score's verdict goal by goal, with the score's own reason
for each goal missed; a copy of one of the module's worked designs is sent back to be made one's own.
"""

from __future__ import annotations

from gangkit.checks.common import counts_wrong_answers, kind, not_done
from gangkit.model.errors import ScenarioError

HINTS = {
    "8.1": "start from lesson08.NAIVE, read which goals it misses and why, and change the lever each reason names.",
    "8.2": "run your design of 8.1 on lesson08.stretch('node-down'): which goal breaks, and which layer can absorb "
           "a node that is gone?",
}


#: Scores already computed in this kernel, by (the design's repr, the stretch): a check runs a design once.
_SCORES: dict = {}


def _score(design, stretch: str | None):
    """The score of ``design`` on the base workload (``stretch`` None) or on that stretch, computed once."""
    from gangkit.lessons import lesson08

    key = (repr(design), stretch)
    if key not in _SCORES:
        _SCORES[key] = lesson08.evaluate(design, lesson08.stretch(stretch) if stretch else None)
    return _SCORES[key]


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


@counts_wrong_answers("8.2")
def check_08_node_down(answer) -> bool:
    """Exercise 8.2: a Design that meets every goal on the base workload and with one static node down."""
    ex = "8.2"
    if answer is None:
        return not_done(ex, "evaluate your design on lesson08.stretch('node-down') as well as on the base workload; "
                            "change it until both score every goal met.", hint=HINTS[ex])
    design = _read(ex, answer)
    if design is None:
        return False
    copied = _worked(design)
    if copied and copied != "lesson08.NAIVE":
        print(f"Exercise {ex}: that is {copied}, one of the lesson's worked designs: build your own.")
        return False
    if not _report(ex, _score(design, None), "on the base workload"):
        return False
    if not _report(ex, _score(design, "node-down"), "with one static node down"):
        return False
    print("Correct! Your design meets every goal with a node gone too: the layer that absorbs it is the one to "
          "name in your explanation (quota that keeps research's own GPUs, or nodes the NodePool may add).")
    return True
