"""Errors and warnings that gangkit raises about its input.

Bad input gets *one* clear message that names the object, the field and what
was expected, the way the Kubernetes API server answers a bad manifest::

    Job default/train-a: spec.parallelism: expected a whole number >= 1, got -2

When several things are wrong at once, :class:`ScenarioError` carries every
problem found, one line each, so a learner fixes them in one pass.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Problem:
    """One thing wrong with the input: which object, which field, what was expected."""

    obj: str
    field: str
    message: str

    def __str__(self) -> str:
        where = f"{self.obj}: {self.field}" if self.field else self.obj
        return f"{where}: {self.message}"


class ScenarioError(ValueError):
    """The scenario (Python objects or YAML manifests) is not valid.

    ``problems`` lists every problem found; ``str(error)`` shows one per line.
    """

    def __init__(self, problems: list[Problem] | Problem | str):
        if isinstance(problems, str):
            problems = [Problem(problems, "", "invalid")]
        elif isinstance(problems, Problem):
            problems = [problems]
        self.problems: list[Problem] = list(problems)
        super().__init__("\n".join(str(p) for p in self.problems))


def problem(obj: str, field: str, message: str) -> ScenarioError:
    """A ScenarioError holding a single problem (shorthand for ``raise problem(...)``)."""
    return ScenarioError([Problem(obj, field, message)])


def load_reporting(load):
    """Call ``load()`` for a command line: print its warnings, and its errors one per line, on stderr.

    Returns ``(value, None)``, or ``(None, 2)`` when the input was bad (the exit status).
    """
    import sys
    import warnings

    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            value = load()
    except ScenarioError as e:
        for line in str(e).splitlines():
            print(f"error: {line}", file=sys.stderr)
        return None, 2
    for w in caught:
        print(f"warning: {w.message}", file=sys.stderr)
    return value, None
