"""Which exercises a lesson's notebook holds: the check functions of :mod:`gangkit.checks`, in order.

Each exercise cell ends with a call of its check (``check_07_pods_ready_timeout(answer)``,
:mod:`gangkit.checks`); the checks of lesson ``NN`` are the functions ``check_NN_*`` of
``gangkit.checks.lessonNN``, defined in the order of the exercises (a test holds the
solutions to that order). A notebook's lesson is the number its file name starts with
(``07_migrating_to_gang_admission.ipynb``) or ends with (``anna-07.ipynb``), else the number of
its first heading
(``# 07 · Migrating ...``), so a renamed submission is still recognised.
"""

from __future__ import annotations

import importlib
import inspect
import re
from pathlib import Path

__all__ = ["checks_of", "lesson_of"]

_FILE = re.compile(r"^(\d\d)_|[-_](\d\d)$")
_HEADING = re.compile(r"^#\s+(\d\d)\b")


def lesson_of(path: Path, cells: list) -> str | None:
    """The lesson number (``"07"``) of a notebook, from its file name or its first heading; None if neither says."""
    m = _FILE.search(Path(path).stem)
    if m:
        return m.group(1) or m.group(2)
    for cell in cells:
        if cell.get("cell_type") == "markdown":
            m = _HEADING.match("".join(cell.get("source", "")).lstrip())
            return m.group(1) if m else None
    return None


def checks_of(lesson: str) -> list[tuple[str, str]]:
    """``[(exercise, check name), ...]`` of a lesson, e.g. ``[("7.1", "check_07_pods_ready_timeout"), ...]``."""
    try:
        module = importlib.import_module(f"gangkit.checks.lesson{lesson}")
    except ModuleNotFoundError:
        return []
    prefix = f"check_{lesson}_"
    found = [(inspect.getsourcelines(f)[1], name) for name, f in vars(module).items()
             if name.startswith(prefix) and inspect.isfunction(f) and f.__module__ == module.__name__]
    return [(f"{int(lesson)}.{i}", name) for i, (_, name) in enumerate(sorted(found), start=1)]
