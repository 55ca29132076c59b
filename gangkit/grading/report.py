"""Grading a set of submissions, and the four ways of reporting it: a table, JSON, JUnit XML, a CSV gradebook.

JUnit XML is what CI systems show as test results: one ``testsuite`` per notebook and one
``testcase`` per exercise, a ``failure`` for every exercise that did not pass (``skipped`` for one
read by hand). The gradebook has one row per learner and, per exercise, its points and status.
Every text that may come from a learner (an error message, a learner id) is cleaned to one line
of printable characters first (:func:`gangkit.grading.marks.clean`); XML is escaped by the standard
library, and a CSV cell that a spreadsheet would read as a formula is quoted as text.
"""

from __future__ import annotations

import csv
import importlib
import io
import json
import pkgutil
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from gangkit.grading.exercises import lesson_of
from gangkit.grading.locks import inspect, lesson_locks
from gangkit.grading.marks import STATUSES, Mark, clean, judge
from gangkit.grading.runner import run_copy
from gangkit.grading.sandbox import Limits, available

__all__ = ["SandboxUnavailable", "gradebook_csv", "grade", "grade_one", "junit_xml", "learner_of", "table",
           "to_json"]


#: The limits of ``gangkit grade`` without options: 120 s a cell, 900 s a notebook, 4 GiB, 2 MB of output.
DEFAULT_LIMITS = Limits()


class SandboxUnavailable(RuntimeError):
    """No sandbox can be built here, and the instructor did not pass ``--no-sandbox``."""


def preload() -> None:
    """Import every module of gangkit now, before any learner's code runs, so that a file changed later is never read."""
    package = Path(__file__).resolve().parents[1]  # gangkit/
    for info in pkgutil.walk_packages([str(package)], "gangkit."):
        if info.name.startswith("gangkit.cli") or info.name.endswith("__main__"):
            continue
        try:
            importlib.import_module(info.name)
        except Exception:  # an optional dependency that is missing: that module is not used by the checks
            pass


def _notebook(path: Path) -> tuple[list | None, dict, str]:
    """``(cells, metadata, problem)`` of the file at ``path``: cells None when it is no notebook."""
    try:
        data = json.loads(Path(path).read_bytes())
    except (OSError, ValueError) as e:
        return None, {}, f"not a readable notebook ({type(e).__name__}: {clean(str(e), 120)})"
    if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
        return None, {}, "not a notebook: a Jupyter notebook is a JSON object with a list of cells"
    metadata = data.get("metadata") if isinstance(data.get("metadata"), dict) else {}
    return [c for c in data["cells"] if isinstance(c, dict)], metadata, ""


_ID = re.compile(r"[^\w.@-]+")


def learner_of(path: Path, metadata: dict, lesson: str | None) -> str:
    """Whose submission this is: ``metadata["gangkit"]["learner"]``, else the file name without the lesson's
    part (``anna-07.ipynb`` -> ``anna``), else the folder's name (``anna/07_pod_level_deadlock.ipynb``)."""
    given = (metadata.get("gangkit") or {}).get("learner") if isinstance(metadata.get("gangkit"), dict) else None
    if isinstance(given, str) and clean(given, 80):
        return clean(given, 80)
    stem = Path(path).stem
    own = Path(_lesson_notebook(lesson)).stem
    rest = stem[len(own):] if own and stem.startswith(own) else stem
    rest = re.sub(rf"^{re.escape(lesson or '')}(?=[-_. ]|$)|[-_. ]{re.escape(lesson or '')}$", "", rest) if lesson else rest
    rest = _ID.sub("-", rest).strip("-_. ")
    return clean(rest or Path(path).resolve().parent.name or stem, 80)


def _lesson_notebook(lesson: str | None) -> str:
    from gangkit.grading.locks import locked_table

    return (locked_table().get(lesson or "") or {}).get("notebook", "")


def grade_one(path: Path, limits: Limits = DEFAULT_LIMITS, *, sandbox: bool = True, hide: Iterable[Path] = ()) -> list[Mark]:
    """The marks of one submission: one per exercise of its lesson (one ``error`` mark when it is no lesson's)."""
    path = Path(path)
    cells, metadata, problem = _notebook(path)
    lesson = lesson_of(path, cells or [])
    locks = lesson_locks(lesson)
    learner = learner_of(path, metadata, lesson)

    def mark(exercise: str, check: str, status: str, message: str) -> Mark:
        return Mark(str(path), learner, lesson or "-", exercise, check, status, clean(message, 1000))

    if locks is None:
        why = problem or ("its file name does not start with a lesson number with exercises (01_...), "
                          "nor does its first heading")
        return [mark("-", "-", "error", why)]
    if cells is None:
        return [mark(e, c, "error", problem) for e, c in locks.checks()]
    found = inspect(cells, locks)
    to_run = {e: i for e, i in found.cell_of.items() if i is not None and e not in found.tampered}
    run = run_copy(path, sorted(to_run.values()), limits, sandbox=sandbox, hide=list(hide)) if to_run else None
    marks = []
    for exercise, check in locks.checks():
        index = found.cell_of.get(exercise)
        if not check:
            marks.append(mark(exercise, "-", "manual", "a written answer: read it with the rubric in the instructor "
                                                        "guide"))
        elif exercise in found.tampered:
            marks.append(mark(exercise, check, "tampered", found.tampered[exercise]))
        elif index is None:
            marks.append(mark(exercise, check, "missing", f"the exercise's cell (the one that calls {check}) is not "
                                                         "in the notebook"))
        else:
            marks.append(mark(exercise, check, *_cell_mark(run, index, check)))
    return marks


def _cell_mark(run, index: int, check: str) -> tuple[str, str]:
    """The status and words of an exercise whose cell is ``index``: what the run says, then the check's verdict."""
    cell = run.cells.get(index)
    if cell is None:
        return "not run", run.problem or "the notebook stopped before this cell"
    if cell["status"] == "timeout":
        return "timeout", "the cell was stopped at its time limit"
    if cell["status"] == "error":
        return "error", cell.get("error") or "the cell raised an error"
    answer = run.answers.get(index) or {"problem": "the answer was not taken out of the kernel"}
    if "data" not in answer:
        return "error", answer.get("problem", "the answer could not be read")
    return judge(check, answer["data"])


def grade(paths: Iterable[Path], limits: Limits = DEFAULT_LIMITS, *, sandbox: bool = True, jobs: int = 1) -> list[Mark]:
    """The marks of every submission, in the order given, grading ``jobs`` notebooks at a time.

    With ``sandbox`` (the default), raises :class:`SandboxUnavailable` when bubblewrap cannot run here.
    """
    paths = [Path(p) for p in paths]
    if sandbox and available():
        raise SandboxUnavailable(available())
    preload()
    hide = sorted({p.resolve().parent for p in paths})

    def one(path: Path) -> list[Mark]:
        try:
            return grade_one(path, limits, sandbox=sandbox, hide=hide)
        except Exception as e:  # a batch always ends with a report for every notebook
            return [Mark(str(path), Path(path).stem, "-", "-", "-", "error",
                         clean(f"the grader failed on this notebook: {type(e).__name__}: {e}"))]

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        return [m for marks in pool.map(one, paths) for m in marks]


def _counts(results: list[Mark]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for m in results:
        counts[m.status] = counts.get(m.status, 0) + 1
    return counts


def table(results: list[Mark]) -> str:
    """A plain-text table: notebook, exercise, status, and the check's words, then a count per status."""
    rows = [(clean(m.notebook), clean(m.exercise), clean(m.status), clean(m.message, 1000)) for m in results]
    heads = ("notebook", "exercise", "status")
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(heads)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(heads, widths)) + "  message"]
    lines += ["  ".join(v.ljust(w) for v, w in zip(r[:3], widths)) + "  " + r[3] for r in rows]
    counts = _counts(results)
    graded = [m for m in results if m.status != "manual"]
    passed = counts.get("passed", 0)
    others = [f"{n} {s}" for s, n in counts.items() if s not in ("passed", "manual")]
    lines += ["", f"{passed} of {len(graded)} exercises passed" + (f" ({', '.join(others)})" if others else "")
              + (f"; {counts['manual']} to read by hand" if counts.get("manual") else "")]
    return "\n".join(lines)


def all_passed(results: list[Mark]) -> bool:
    """Whether every exercise that is checked passed (a written one, read by hand, neither passes nor fails)."""
    graded = [m for m in results if m.status != "manual"]
    return bool(graded) and all(m.passed for m in graded)


def to_json(results: list[Mark]) -> str:
    """One JSON object: every mark (with its points), and the count per status."""
    return json.dumps({"exercises": [{**m.__dict__, "points": m.points} for m in results],
                       "summary": _counts(results), "passed": all_passed(results)}, indent=2)


def junit_xml(results: list[Mark]) -> str:
    """JUnit XML: a testsuite per notebook, a testcase per exercise, a failure for each that did not pass."""
    suites = ET.Element("testsuites", name="gangkit grade")
    by_notebook: dict[str, list[Mark]] = {}
    for m in results:
        by_notebook.setdefault(m.notebook, []).append(m)
    for notebook, group in by_notebook.items():
        failures = sum(not m.passed and m.status != "manual" for m in group)
        skipped = sum(m.status == "manual" for m in group)
        suite = ET.SubElement(suites, "testsuite", name=clean(notebook), tests=str(len(group)),
                              failures=str(failures), errors="0", skipped=str(skipped))
        for m in group:
            case = ET.SubElement(suite, "testcase", classname=clean(f"{m.learner}.{Path(notebook).stem}"),
                                 name=f"exercise {m.exercise} ({m.check})")
            if m.status == "manual":
                ET.SubElement(case, "skipped", message=f"manual: {m.message}")
            elif not m.passed:
                failure = ET.SubElement(case, "failure", type=m.status, message=f"{m.status}: {m.message}")
                failure.text = m.message
    suites.set("tests", str(len(results)))
    suites.set("failures", str(sum(not m.passed and m.status != "manual" for m in results)))
    return ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"


def _cell(value) -> str:
    """A CSV cell a spreadsheet shows as the text it is (never runs as a formula)."""
    text = "" if value is None else clean(str(value), 200)
    return "'" + text if text[:1] in ("=", "+", "-", "@") else text


def gradebook_csv(results: list[Mark]) -> str:
    """The gradebook: a row per learner; per exercise its points and status; the total and the most possible.

    Written answers (8.3) have status ``manual`` and no points yet. An exercise a learner did not
    hand in is empty. Two notebooks of the same lesson from one learner are both kept, as two rows,
    with a note: the instructor decides which counts.
    """
    exercises = sorted({m.exercise for m in results if m.exercise != "-"},
                       key=lambda e: tuple(int(x) for x in e.split(".")) if re.fullmatch(r"\d+\.\d+", e) else (99, 0))
    rows: dict[tuple[str, int], dict] = {}
    for m in results:
        copy = 0
        while (m.learner, copy) in rows and rows[(m.learner, copy)]["_files"].get(m.lesson, m.notebook) != m.notebook:
            copy += 1
        row = rows.setdefault((m.learner, copy), {"_files": {}, "_notes": []})
        row["_files"][m.lesson] = m.notebook
        if m.exercise == "-":
            row["_notes"].append(f"{Path(m.notebook).name}: {m.message}")
        else:
            row[m.exercise] = m
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["learner", *[f"{e} {what}" for e in exercises for what in ("points", "status")],
                     "total", "possible", "notes"])
    for (learner, copy), row in sorted(rows.items()):
        marks = [row.get(e) for e in exercises]
        total = sum(m.points or 0 for m in marks if m is not None)
        possible = sum(1 for m in marks if m is not None and m.points is not None)
        notes = list(row["_notes"]) + (["a second notebook of the same lesson: see the rows of this learner"]
                                       if copy else [])
        writer.writerow([_cell(learner), *[x for m in marks for x in
                                           (("", "") if m is None else ("" if m.points is None else m.points,
                                                                        m.status))],
                         total, possible, _cell("; ".join(notes))])
    return out.getvalue()


__all__ += ["STATUSES", "all_passed", "preload"]
