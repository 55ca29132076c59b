"""Reading each exercise's mark from the executed cells of a submission.

An exercise's cell ends with its check's call, whose value (``True`` or
``False``) is the cell's result and whose words are the cell's printed output
(:mod:`gangkit.checks`). The mark of an exercise is:

| status | when |
|---|---|
| ``passed`` | the check returned True |
| ``not done`` | the check said "not done yet" (the answer is still ``None``) |
| ``wrong`` | the check returned False with its explanation |
| ``error`` | the cell raised (the error's type and message), or nothing ran (the file is no notebook) |
| ``timeout`` | the cell was interrupted at its time limit |
| ``missing`` | no cell calls the check: the cell was deleted, or the call renamed |
| ``not run`` | the notebook stopped before the cell (its time limit, or a dead kernel) |
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["STATUSES", "Mark", "marks"]

STATUSES = ("passed", "not done", "wrong", "error", "timeout", "missing", "not run")
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


@dataclass(frozen=True)
class Mark:
    """One exercise of one submission: its status and the words that explain it."""

    notebook: str
    exercise: str
    check: str
    status: str
    message: str

    @property
    def passed(self) -> bool:
        return self.status == "passed"


def _calls(source: str, check: str) -> bool:
    return re.search(rf"(?<![\w.]){re.escape(check)}\s*\(", source) is not None


def _check_words(text: str) -> str:
    """The check's own paragraph: from its last line that starts with ``Correct!`` or ``Exercise``."""
    lines = [line for line in text.splitlines() if line.strip()]
    for i in range(len(lines) - 1, -1, -1):
        if lines[i].startswith(("Correct!", "Exercise ")):
            return " ".join(lines[i:])
    return lines[-1] if lines else ""


def mark_cell(notebook: str, exercise: str, check: str, cell) -> Mark:
    """The mark of one executed exercise cell."""
    outputs = cell.get("outputs", [])
    text = "".join("".join(o.get("text", "")) for o in outputs if o.get("output_type") == "stream")
    errors = [o for o in outputs if o.get("output_type") == "error"]
    result = next(("".join(o["data"].get("text/plain", "")) for o in outputs
                   if o.get("output_type") == "execute_result" and "data" in o), None)

    def mark(status: str, message: str) -> Mark:
        return Mark(notebook, exercise, check, status, message)

    if errors:
        e = errors[-1]
        if e.get("ename") == "KeyboardInterrupt":
            return mark("timeout", "the cell was stopped at its time limit")
        value = _ANSI.sub("", str(e.get("evalue", "")))
        return mark("error", f"{e.get('ename', 'Error')}: {value}"[:300])
    if cell.get("execution_count") is None and not outputs:
        return mark("not run", "the notebook stopped before this cell")
    words = _check_words(text)
    if result == "True":
        return mark("passed", words)
    if "not done yet" in words:
        return mark("not done", words)
    if result == "False":
        return mark("wrong", words)
    return mark("wrong", f"the cell's last line is not the call of {check}; its check did not give the result"
                         + (f" (it printed: {words})" if words else ""))


def marks(notebook: str, expected: list[tuple[str, str]], cells: list | None, problem: str) -> list[Mark]:
    """One mark per expected exercise ``(exercise, check)``, read from the executed ``cells``."""
    out = []
    for exercise, check in expected:
        cell = next((c for c in reversed(cells or []) if c.get("cell_type") == "code"
                     and _calls("".join(c.get("source", "")), check)), None)
        if cells is None:  # nothing ran: the file is no notebook, or no kernel started
            out.append(Mark(notebook, exercise, check, "error", problem or "the notebook did not run"))
        elif cell is None:
            out.append(Mark(notebook, exercise, check, "missing",
                            f"no cell calls {check}: the exercise's cell was deleted, or its check call renamed"))
        else:
            m = mark_cell(notebook, exercise, check, cell)
            if m.status == "not run" and problem:
                m = Mark(notebook, exercise, check, "not run", problem)
            out.append(m)
    return out
