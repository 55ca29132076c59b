"""Locked cells: what a learner may not change in an exercise notebook, and how a change is found.

As in nbgrader, the cells a learner is given are *locked*: the code cells that set the exercise up
(imports, a table to read) and, in each exercise's cell, the lines around the answer region (the
first line ``answer = None`` and the last line, the call of the check). The learner writes between
them, and may add cells of their own anywhere. ``tools/make_exercises.py`` writes the table of
locked cells (``locked.json`` beside this module) from ``solutions/``, with a SHA-256 checksum of
each given cell and the locked lines of each exercise cell; the exercise notebooks mark the same
cells read-only for JupyterLab (``editable: false``, ``deletable: false``).

The grader trusts only the table that ships with gangkit, never a checksum inside the submission.
A submission's cell is found by its cell id, else (an older JupyterLab, a copied notebook) by its
content. An exercise is **tampered** when its own locked lines were changed, or when a given cell
above it is changed or missing: its answer may rest on changed code. An exercise whose cell cannot
be found at all is **missing**. An exercise with no check (8.3, a written answer) is marked
**manual**: it is read by hand, with the rubric of the instructor guide.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Inspection", "LessonLocks", "inspect", "lesson_locks", "locked_table", "table_text"]

TABLE = Path(__file__).with_name("locked.json")
BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"
_EXERCISE_HEADING = re.compile(r"^##\s+Exercise\s+(\d+\.\d+)\s*·\s*(.+)$", re.M)
_CHECK_CALL = re.compile(r"\b(check_\d\d_\w+)\s*\(")


def _lines(source: str) -> list[str]:
    """A cell's lines without trailing spaces and without blank lines at either end."""
    lines = [line.rstrip() for line in source.replace("\r\n", "\n").split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    while lines and not lines[0]:
        lines.pop(0)
    return lines


def checksum(source: str) -> str:
    """The SHA-256 of a given cell's source (trailing spaces and blank edge lines do not count)."""
    return hashlib.sha256("\n".join(_lines(source)).encode("utf-8")).hexdigest()


def _source(cell) -> str:
    source = cell.get("source", "") if isinstance(cell, dict) else ""
    return "".join(source) if isinstance(source, list) else str(source)


@dataclass(frozen=True)
class LessonLocks:
    """The locked cells of one lesson's exercise notebook, in order, and its exercises."""

    lesson: str
    given: tuple  # ((cell id, sha256, position among the code cells), ...)
    exercises: tuple  # ((exercise, check or "", cell id, (locked head lines), (locked tail lines), position), ...)

    def checks(self) -> list[tuple[str, str]]:
        """``[(exercise, check name or "" for a written answer), ...]`` in the notebook's order."""
        return [(e[0], e[1]) for e in self.exercises]


def locks_of_solution(nb) -> dict:
    """The locked cells of a solution notebook (a dict, as stored in the table).

    Exercises are numbered by the notebook's headings (``## Exercise 7.1 · ...``); the code cell with
    a solution region after a heading is that exercise's cell; a heading with none before the next
    heading is a written exercise (no check: marked ``manual``).
    """
    given, exercises, position = [], [], 0
    pending = None  # the exercise heading waiting for its cell: (number, title)

    def written():
        if pending is not None:
            exercises.append({"exercise": pending[0], "check": "", "title": pending[1]})

    for cell in nb["cells"]:
        source = _source(cell)
        if cell.get("cell_type") == "markdown":
            for m in _EXERCISE_HEADING.finditer(source):
                written()
                pending = (m.group(1), m.group(2).strip())
            continue
        if cell.get("cell_type") != "code":
            continue
        position += 1
        lines = source.split("\n")
        if BEGIN in source and END in source:
            begin = next(i for i, line in enumerate(lines) if line.strip() == BEGIN)
            end = next(i for i, line in enumerate(lines) if line.strip() == END)
            head, tail = _lines("\n".join(lines[:begin])), _lines("\n".join(lines[end + 1:]))
            call = next((m.group(1) for line in tail for m in [_CHECK_CALL.search(line)] if m), "")
            number, title = pending if pending is not None else (f"?{len(exercises) + 1}", "")
            exercises.append({"exercise": number, "title": title, "cell": cell.get("id", ""), "check": call,
                              "head": head, "tail": tail, "position": position})
            pending = None
        else:
            given.append({"cell": cell.get("id", ""), "sha256": checksum(source), "position": position})
    written()
    return {"given": given, "exercises": exercises}


def table_text(solutions: list[Path]) -> str:
    """The table of locked cells of every solution notebook, as the exact JSON text stored in gangkit."""
    import nbformat

    table = {}
    for path in sorted(solutions):
        nb = nbformat.read(path, as_version=4)
        table[path.name[:2]] = {"notebook": path.name, **locks_of_solution(nb)}
    return json.dumps(table, indent=1, sort_keys=True) + "\n"


@functools.lru_cache(maxsize=1)
def locked_table() -> dict:
    """The table that ships with gangkit (empty when it is missing)."""
    try:
        return json.loads(TABLE.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def lesson_locks(lesson: str | None) -> LessonLocks | None:
    """The locked cells of lesson ``lesson`` (``"07"``), or None when the lesson has no exercises."""
    entry = locked_table().get(lesson or "")
    if not entry:
        return None
    given = tuple((g["cell"], g["sha256"], g["position"]) for g in entry["given"])
    exercises = tuple((e["exercise"], e.get("check", ""), e.get("cell", ""), tuple(e.get("head", ())),
                       tuple(e.get("tail", ())), e.get("position", 0)) for e in entry["exercises"])
    return LessonLocks(lesson, given, exercises)


@dataclass
class Inspection:
    """What the locked cells of one submission say: where each exercise's cell is, and what was tampered with."""

    cell_of: dict = field(default_factory=dict)  # exercise -> index of its cell in the submission, or None
    tampered: dict = field(default_factory=dict)  # exercise -> why


def _keeps_locked_lines(lines: list[str], head: tuple, tail: tuple) -> bool:
    return (len(lines) >= len(head) + len(tail) and tuple(lines[:len(head)]) == head
            and (not tail or tuple(lines[-len(tail):]) == tail))


def inspect(cells: list, locks: LessonLocks) -> Inspection:
    """Find each exercise's cell in ``cells`` (a submission's cells) and each change to a locked cell."""
    code = [(i, c) for i, c in enumerate(cells) if isinstance(c, dict) and c.get("cell_type") == "code"]
    by_id = {}
    for i, c in code:
        by_id.setdefault(c.get("id"), (i, c))
    found = Inspection()
    # given cells: changed or missing ones, with the position (among the lesson's code cells) from which they count
    broken = []  # (position, why)
    sums = {checksum(_source(c)): i for i, c in reversed(code)}
    for cell_id, sha, position in locks.given:
        hit = by_id.get(cell_id) if cell_id else None
        if hit is not None and checksum(_source(hit[1])) == sha:
            continue
        if sha in sums:  # the same code under another id: copied into a new notebook
            continue
        why = (f"the given code cell {cell_id!r} (code cell {position}) was changed" if hit is not None
               else f"the given code cell {cell_id!r} (code cell {position}) was deleted")
        broken.append((position, why))
    for exercise, check, cell_id, head, tail, position in locks.exercises:
        if not check:
            found.cell_of[exercise] = None
            continue
        hit = by_id.get(cell_id) if cell_id else None
        if hit is None:  # by content: the cell that keeps both locked ends and calls the check
            hit = next(((i, c) for i, c in code if _keeps_locked_lines(_lines(_source(c)), head, tail)
                        and check in _source(c)), None)
        found.cell_of[exercise] = hit[0] if hit else None
        if hit is not None and not _keeps_locked_lines(_lines(_source(hit[1])), head, tail):
            found.tampered[exercise] = ("its locked lines were changed (the cell must begin with "
                                        f"{' / '.join(head) or 'nothing'} and end with {' / '.join(tail)})")
            continue
        above = [why for p, why in broken if p < position]
        if above:
            found.tampered[exercise] = above[0] + " above it"
    return found
