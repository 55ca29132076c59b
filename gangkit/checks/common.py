"""What the checks of several lessons share: reading an answer, and the cached figures of built-in scenarios.

A check reads the learner's answer with :func:`number` before it judges the value, so that a word, a
number in quotes, a pandas Series, NaN or infinity gets a message about the *kind* of answer the
exercise wants (:func:`kind` names what was given instead). :func:`not_done` is the one line an
untouched exercise prints, :func:`fmt` writes a number the way a learner would, and :func:`close`
compares within a tolerance. :func:`figures` caches the summary of a built-in scenario under a stack,
so the checks of lessons 00 to 02 simulate each one once.
"""

from __future__ import annotations

import functools
import math
import numbers
from collections import Counter

from gangkit.simulate import simulate

#: Times (seconds) within this distance of the simulated value are right.
TIME_TOLERANCE_S = 0.5


@functools.lru_cache(maxsize=None)
def figures(scenario: str, stack: str, ordering: str | None = None) -> tuple:
    """The summary figures of a built-in scenario, as sorted (name, value) pairs."""
    return tuple(sorted(simulate(scenario, stack=stack, ordering=ordering).summary().items()))


def figure(scenario: str, stack: str, name: str, ordering: str | None = None):
    """One summary figure (``name``) of a built-in scenario, from the cache of :func:`figures`."""
    return dict(figures(scenario, stack, ordering))[name]


def fmt(x: float) -> str:
    """A number as a learner would write it: 4, 0.6667, 540."""
    if float(x).is_integer():
        return str(int(x))
    return f"{x:.6g}"


def _fmt_inf(x: float) -> str:
    """An infinite number in words."""
    return "infinity" if x > 0 else "minus infinity"


#: Wrong answers given so far in this kernel, per exercise: the second "not done yet" shows the recipe.
WRONG_ANSWERS: Counter = Counter()


def not_done(ex: str, recipe: str, hint: str | None = None) -> bool:
    """Print that exercise ``ex`` is not done yet; return False.

    The first time, and until a wrong answer was given, only ``hint``: where to start thinking.
    After a wrong answer, the ``recipe``: what to run and what to read (a learner who tried gets the
    steps; one who has not yet gets the idea first). A check without a hint shows the recipe.
    """
    if hint is None or WRONG_ANSWERS[ex]:
        print(f"Exercise {ex}: not done yet — {recipe}")
    else:
        print(f"Exercise {ex}: not done yet — hint: {hint} (answer once, even a guess, and the next "
              "\"not done yet\" shows the steps)")
    return False


def counts_wrong_answers(ex: str):
    """Decorate a check of exercise ``ex``: a wrong answer (not None, check False) is counted in WRONG_ANSWERS."""
    def wrap(check):
        @functools.wraps(check)
        def checked(answer):
            ok = check(answer)
            if answer is not None and not ok:
                WRONG_ANSWERS[ex] += 1
            return ok
        return checked
    return wrap


def kind(answer) -> str:
    """What sort of value ``answer`` is, in words: 'a list', 'a pandas Series', 'a value of type int'."""
    t = type(answer)
    if t.__module__.startswith("pandas"):
        return f"a pandas {t.__name__}"
    if t.__module__.startswith("gangkit"):
        return f"a gangkit {t.__name__}"
    return {list: "a list", tuple: "a tuple", dict: "a dict", set: "a set"}.get(t, f"a value of type {t.__name__}")


def number(ex: str, answer, *, whole: bool, what: str, nan_hint: str = "") -> float | None:
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
        print(f"Exercise {ex}: expected {expected}, but got {kind(answer)}. {hint}.")
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
        print(f"Exercise {ex}: expected {expected}, but got {fmt(value)}; a count has no fraction.")
        return None
    return value


def close(a: float, b: float, tol: float) -> bool:
    """Whether ``a`` is within ``tol`` of ``b`` (with a hair of slack for floating-point rounding)."""
    return abs(a - b) <= tol + 1e-12


def minutes_note(value: float, expected: float) -> str:
    """A note for a time that is the expected one in minutes (added to a message), or ''."""
    if expected and close(value * 60, expected, TIME_TOLERANCE_S):
        return " If you meant minutes: gangkit reports times in seconds."
    return ""
