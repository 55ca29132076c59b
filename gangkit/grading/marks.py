"""Marking each exercise: the check, run by the grader on the answer's data, and the other statuses.

The grader judges an answer in its own interpreter, never in the learner's kernel: it rebuilds the
value of ``answer`` taken out of the kernel right after the exercise's cell ran (:mod:`.answers`)
and calls the exercise's check (:mod:`gangkit.checks`), imported before any learner's code ran, on
it. The check's printed words become the mark's message. The mark of an exercise is:

| status | when |
|---|---|
| ``passed`` | the check, run by the grader, returned True |
| ``not done`` | the answer is still ``None``: the check said "not done yet" |
| ``wrong`` | the check returned False, with its explanation |
| ``error`` | the exercise's cell raised (the error's type and message), or its answer could not be read |
| ``timeout`` | the cell was interrupted at its time limit |
| ``tampered`` | a locked cell was changed: the exercise's own first or last line, or given code above it (:mod:`.locks`) |
| ``missing`` | the exercise's cell is not in the notebook |
| ``not run`` | the notebook stopped before the cell (its time limit, its output limit, a dead kernel) |
| ``manual`` | a written answer (8.3): read by hand, with the instructor guide's rubric |

Every message is one line of printable text, cut at 300 characters: a learner's text in an error
cannot start a new line of a report or send escape codes to the instructor's terminal.
"""

from __future__ import annotations

import contextlib
import io
import re
import threading
from dataclasses import dataclass

__all__ = ["STATUSES", "Mark", "clean", "judge"]

STATUSES = ("passed", "not done", "wrong", "error", "timeout", "tampered", "missing", "not run", "manual")
_ESCAPES = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[@-_]|[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_JUDGING = threading.Lock()  # the checks print: one at a time, so each mark gets its own words


def clean(text: str, limit: int = 300) -> str:
    """``text`` as one line of printable characters, at most ``limit`` long."""
    text = _ESCAPES.sub("", str(text)).replace("\r", " ").replace("\n", " ").replace("\t", " ")
    text = text.encode("utf-8", "replace").decode("utf-8", "replace")
    text = "".join(ch if ch.isprintable() else "?" for ch in text)
    text = re.sub(r" {2,}", " ", text).strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass(frozen=True)
class Mark:
    """One exercise of one submission: its status and the words that explain it."""

    notebook: str
    learner: str
    lesson: str
    exercise: str
    check: str
    status: str
    message: str

    @property
    def passed(self) -> bool:
        return self.status == "passed"

    @property
    def points(self) -> int | None:
        """1 for a passed exercise, 0 otherwise; None for one read by hand."""
        return None if self.status == "manual" else int(self.passed)


def _check_words(text: str) -> str:
    """The check's own paragraph: from its last line that starts with ``Correct!`` or ``Exercise``."""
    lines = [line for line in text.splitlines() if line.strip()]
    for i in range(len(lines) - 1, -1, -1):
        if lines[i].startswith(("Correct!", "Exercise ")):
            return " ".join(lines[i:])
    return " ".join(lines)


def judge(check_name: str, data: str) -> tuple[str, str]:
    """``(status, message)`` of the answer whose data is ``data``, judged by ``check_name`` in this interpreter."""
    import gangkit.checks as checks
    from gangkit.checks.common import WRONG_ANSWERS
    from gangkit.grading.answers import AnswerError, decode

    check = getattr(checks, check_name, None)
    if check is None:
        return "error", f"the grader has no check named {check_name}"
    try:
        answer = decode(data)
    except AnswerError as e:
        return "error", clean(str(e))
    with _JUDGING:
        WRONG_ANSWERS.clear()
        words = io.StringIO()
        try:
            with contextlib.redirect_stdout(words):
                ok = check(answer)
        except Exception as e:  # a check that cannot read an odd value: the mark says so
            return "error", clean(f"the check could not read the answer ({type(e).__name__}: {e})")
        finally:
            WRONG_ANSWERS.clear()
    said = clean(_check_words(words.getvalue()), 1000)
    if ok is True:
        return "passed", said
    if answer is None or "not done yet" in said:
        return "not done", said
    return "wrong", said
