"""The instructor guide's plans add up: each plan's parts sum to its stated total, and a lesson's core path,
going-further sections or exercises taken whole take the minutes the lesson states (a part takes less).
The plans keep what a lab cannot skip, bridge lesson 05 when 03 or 06 is left out, and the guide has a
pre-flight install check and a fallback for when installs fail."""

from __future__ import annotations

import re

import nbformat
import pytest

from paths import REPO

ROOT = REPO
GUIDE = ROOT / "docs" / "instructor-guide.md"
MINUTES = re.compile(r"\*Core: (\d+) minutes · Going further: (\d+) minutes · Exercises: (\d+) minutes\*")
KINDS = ("core", "going further", "exercises")
ROW = re.compile(r"^\|\s*(?P<part>[^|]*?)\s*\|\s*(?P<what>[^|]*?)\s*\|\s*(?P<minutes>\**\d+\**)\s*\|$")


def stated() -> dict[str, dict[str, int]]:
    """Lesson number -> {'core': minutes, 'going further': minutes, 'exercises': minutes}, as each lesson's
    first cell states."""
    out = {}
    for p in sorted((ROOT / "course").glob("[0-9][0-9]_*.ipynb")):
        m = MINUTES.search(nbformat.read(p, as_version=4).cells[0].source)
        out[p.name[:2]] = dict(zip(KINDS, map(int, m.groups())))
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
        hit = re.fullmatch(r"(\d\d) (core|going further|exercises)(, part)?", part)
        if not hit:
            continue
        lesson, kind, partial = hit.groups()
        assert lesson in minutes, f"{heading}: no lesson {lesson}"
        if partial:
            assert m < minutes[lesson][kind], f"{heading}: part of lesson {lesson} {kind} takes {m}, the whole {minutes[lesson][kind]}"
        else:
            assert m == minutes[lesson][kind], f"{heading}: lesson {lesson} {kind} is {minutes[lesson][kind]} minutes, not {m}"


def test_the_two_day_plan_has_every_core_path_and_every_exercise_in_full():
    minutes = stated()
    rows = [r for h, rs, _ in tables() if h.startswith("Plan: two days") for r in rs]
    whole = {r[0] for r in rows}
    assert {f"{n} {k}" for n in minutes for k in ("core", "exercises")} <= whole


def _plan(prefix: str) -> list[tuple[str, str, int]]:
    return [r for h, rs, _ in tables() if h.startswith(prefix) for r in rs]


@pytest.mark.parametrize("plan", ["Plan: a 3-hour lab", "Plan: two days"])
@pytest.mark.parametrize("must", ["later admission", "head-of-line blocking", "decision test"])
def test_a_lab_keeps_what_it_cannot_skip(plan, must):
    """The brief's later admission and head-of-line blocking (lesson 02's core) and lesson 07's decision test."""
    rows = _plan(plan)
    assert any(must in what.lower() for _, what, _ in rows), f"{plan}: nothing teaches {must!r}"


@pytest.mark.parametrize("plan", ["Plan: a 3-hour lab", "Plan: a 90-minute session", "Plan: two days"])
def test_lesson_05_without_03_or_06_comes_with_a_bridge(plan):
    rows = _plan(plan)
    taught = {part[:2] for part, _, _ in rows if re.match(r"\d\d (core|going further)", part)}
    if "05" not in taught or {"03", "06"} <= taught:
        return
    bridges = [m for part, _, m in rows if part.startswith("bridge")]
    assert bridges == [10], f"{plan}: lesson 05 is taught without 03 or 06, and needs one 10-minute bridge row"


@pytest.mark.parametrize("heading", ["## Before the session: set-up checklist", "### Pre-flight check",
                                     "### When installs fail"])
def test_the_guide_prepares_the_room(heading):
    assert heading in GUIDE.read_text(encoding="utf-8").splitlines()
