"""Grading a set of submissions, and the three ways of reporting it: a table, JSON, JUnit XML.

JUnit XML is what CI systems show as test results: one ``testsuite`` per
notebook and one ``testcase`` per exercise, a ``failure`` for every exercise
that did not pass (with the check's words as its message), so that a CI job
lists each learner's exercises as tests.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from pathlib import Path

from gangkit.grading.exercises import checks_of, lesson_of
from gangkit.grading.marks import Mark, marks
from gangkit.grading.runner import run_copy

__all__ = ["grade", "grade_one", "junit_xml", "table", "to_json"]


def grade_one(path: Path, *, cell_timeout: int = 120, timeout: int = 900, memory_mib: int = 4096) -> list[Mark]:
    """The marks of one submission (one per exercise of its lesson; one ``error`` mark when it is no lesson's)."""
    path = Path(path)
    run = run_copy(path, cell_timeout=cell_timeout, timeout=timeout, memory_mib=memory_mib)
    lesson = lesson_of(path, run.cells or [])
    expected = checks_of(lesson) if lesson else []
    if not expected:
        why = run.problem or ("its file name does not start with a lesson number with exercises (01_...), "
                              "nor does its first heading")
        return [Mark(str(path), "-", "-", "error", why)]
    return marks(str(path), expected, run.cells, run.problem)


def grade(paths: Iterable[Path], **limits) -> list[Mark]:
    """The marks of every submission, in the order given."""
    return [m for p in paths for m in grade_one(Path(p), **limits)]


def table(results: list[Mark]) -> str:
    """A plain-text table: notebook, exercise, status, and the check's words, then a count per status."""
    rows = [(m.notebook, m.exercise, m.status, m.message) for m in results]
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(("notebook", "exercise", "status"))]
    lines = ["  ".join(h.ljust(w) for h, w in zip(("notebook", "exercise", "status"), widths)) + "  message"]
    for r in rows:
        lines.append("  ".join(v.ljust(w) for v, w in zip(r[:3], widths)) + "  " + r[3])
    counts: dict[str, int] = {}
    for m in results:
        counts[m.status] = counts.get(m.status, 0) + 1
    passed = counts.get("passed", 0)
    lines.append("")
    lines.append(f"{passed} of {len(results)} exercises passed"
                 + (f" ({', '.join(f'{n} {s}' for s, n in counts.items() if s != 'passed')})" if passed < len(results) else ""))
    return "\n".join(lines)


def to_json(results: list[Mark]) -> str:
    """One JSON object: every mark, and the count per status."""
    counts: dict[str, int] = {}
    for m in results:
        counts[m.status] = counts.get(m.status, 0) + 1
    return json.dumps({"exercises": [m.__dict__ for m in results], "summary": counts,
                       "passed": all(m.passed for m in results) and bool(results)}, indent=2)


def junit_xml(results: list[Mark]) -> str:
    """JUnit XML: a testsuite per notebook, a testcase per exercise, a failure for each that did not pass."""
    suites = ET.Element("testsuites", name="gangkit grade")
    by_notebook: dict[str, list[Mark]] = {}
    for m in results:
        by_notebook.setdefault(m.notebook, []).append(m)
    for notebook, group in by_notebook.items():
        failures = sum(not m.passed for m in group)
        suite = ET.SubElement(suites, "testsuite", name=notebook, tests=str(len(group)), failures=str(failures),
                              errors="0", skipped="0")
        for m in group:
            case = ET.SubElement(suite, "testcase", classname=Path(notebook).stem,
                                 name=f"exercise {m.exercise} ({m.check})")
            if not m.passed:
                failure = ET.SubElement(case, "failure", type=m.status, message=f"{m.status}: {m.message}")
                failure.text = m.message
    suites.set("tests", str(len(results)))
    suites.set("failures", str(sum(not m.passed for m in results)))
    return ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"
