"""The instructor guide's plans add up: each plan's parts sum to its stated total, and a lesson taken whole
takes the minutes the lesson states (a part of a lesson takes no more)."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
GUIDE = ROOT / "docs" / "instructor-guide.md"
MINUTES = re.compile(r"\*Teaching: (\d+) minutes · Exercises: (\d+) minutes\*")
ROW = re.compile(r"^\|\s*(?P<part>[^|]*?)\s*\|\s*(?P<what>[^|]*?)\s*\|\s*(?P<minutes>\**\d+\**)\s*\|$")


def stated() -> dict[str, dict[str, int]]:
    """Lesson number -> {'teaching': minutes, 'exercises': minutes}, as each lesson's first cell states."""
    out = {}
    for p in sorted((ROOT / "course").glob("[0-9][0-9]_*.ipynb")):
        m = MINUTES.search(nbformat.read(p, as_version=4).cells[0].source)
        out[p.name[:2]] = {"teaching": int(m.group(1)), "exercises": int(m.group(2))}
    return out


def tables() -> list[tuple[str, list[tuple[str, str, int]], int]]:
    """Each plan table: (the heading above it, its rows (part, what, minutes), its stated total)."""
    out, heading, rows = [], "", []
    for line in GUIDE.read_text(encoding="utf-8").splitlines():
        if line.startswith("### "):
            heading = line[4:]
        m = ROW.match(line)
        if not m:
            continue
        minutes = int(m["minutes"].strip("*"))
        if m["part"].startswith("**"):
            out.append((f"{heading}, {m['part'].strip('*')}", rows, minutes))
            rows = []
        else:
            rows.append((m["part"], m["what"], minutes))
    return out


def test_the_guide_has_the_three_plans():
    headings = {h for h, _, _ in tables()}
    assert {"Plan: a 3-hour lab, total", "Plan: a 90-minute session, total"} <= headings
    assert any(h.startswith("Plan: two days") and h.endswith("day 1") for h in headings)
    assert any(h.startswith("Plan: two days") and h.endswith("day 2") for h in headings)


@pytest.mark.parametrize("heading, rows, total", tables(), ids=[h for h, _, _ in tables()])
def test_each_plan_sums_to_its_total(heading, rows, total):
    assert sum(m for _, _, m in rows) == total


@pytest.mark.parametrize("heading, rows, total", tables(), ids=[h for h, _, _ in tables()])
def test_lessons_take_the_minutes_they_state(heading, rows, total):
    minutes = stated()
    for part, _what, m in rows:
        hit = re.fullmatch(r"(\d\d) (teaching|exercises)(, part)?", part)
        if not hit:
            continue
        lesson, kind, partial = hit.groups()
        assert lesson in minutes, f"{heading}: no lesson {lesson}"
        if partial:
            assert m < minutes[lesson][kind], f"{heading}: part of lesson {lesson} {kind} takes {m}, the whole {minutes[lesson][kind]}"
        else:
            assert m == minutes[lesson][kind], f"{heading}: lesson {lesson} {kind} is {minutes[lesson][kind]} minutes, not {m}"


def test_the_two_day_plan_has_every_lesson_in_full():
    minutes = stated()
    rows = [r for h, rs, _ in tables() if h.startswith("Plan: two days") for r in rs]
    whole = {r[0] for r in rows}
    assert {f"{n} {k}" for n in minutes for k in ("teaching", "exercises")} <= whole
