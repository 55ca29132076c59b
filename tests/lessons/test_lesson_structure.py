"""What every lesson shares, checked on the notebooks themselves.

Each lesson opens with its minutes and objectives, says what it shows, runs an experiment, offers
an explorer, asks the learner to predict before at least one run, points to its exercises, and
ends with a key-points box and a link to the next lesson. Its core path comes first; its
going-further sections follow the explorer, each marked in its heading, and the first cell says
which they are. Its exercise notebook states the same exercise minutes. The stated minutes must be
ones a person can keep (``tools/lesson_minutes.py``).
"""

from __future__ import annotations

import re
import runpy
from pathlib import Path

import nbformat
import pytest

from paths import REPO

LESSONS = sorted((REPO / "course").glob("[0-9][0-9]_*.ipynb"))
IDS = [p.stem for p in LESSONS]
MINUTES = re.compile(r"\*Core: (\d+) minutes · Going further: (\d+) minutes · Exercises: (\d+) minutes\*")


def cells(path: Path) -> list:
    return nbformat.read(path, as_version=4).cells


@pytest.mark.parametrize("lesson", LESSONS, ids=IDS)
def test_opens_with_minutes_objectives_and_what_it_shows(lesson):
    first = cells(lesson)[0].source
    assert first.startswith("# "), "the first cell is the lesson's title"
    assert MINUTES.search(first), "the first cell states '*Core: N minutes · Going further: M minutes · Exercises: K minutes*'"
    assert "**Objectives.** After this lesson you can" in first
    if not lesson.name.startswith("00_"):
        assert "**What this lesson shows" in first


@pytest.mark.parametrize("lesson", LESSONS, ids=IDS)
def test_ends_with_a_key_points_box_and_the_way_on(lesson):
    last = cells(lesson)[-1]
    assert last.cell_type == "markdown" and last.source.startswith("## Key points\n"), "the last cell is the key points"
    bullets = [line for line in last.source.splitlines() if line.startswith("> - ")]
    assert 3 <= len(bullets) <= 6, f"{len(bullets)} key points; expected 3 to 6, in a '> - ' box"
    assert re.search(r"Next: \[lesson \d\d · [^]]+\]\(\d\d_[a-z0-9_]+\.ipynb\)\.|This is the last lesson( for now)?[.:;]", last.source)


@pytest.mark.parametrize("lesson", [p for p in LESSONS if not p.name.startswith("00_")],
                         ids=[i for i in IDS if not i.startswith("00_")])
def test_asks_for_a_prediction_before_a_run(lesson):
    cs = cells(lesson)
    prompts = [i for i, c in enumerate(cs) if c.cell_type == "markdown" and "**Predict, then run.**" in c.source]
    assert prompts, "no '**Predict, then run.**' prompt"
    assert all(i + 1 < len(cs) and cs[i + 1].cell_type == "code" for i in prompts), "a prediction prompt is followed by the run"


@pytest.mark.parametrize("lesson", [p for p in LESSONS if not p.name.startswith("00_")],
                         ids=[i for i in IDS if not i.startswith("00_")])
def test_has_an_explorer_and_points_to_its_exercises(lesson):
    cs = cells(lesson)
    assert any(c.cell_type == "code" and re.search(r"\w+_explorer\(", c.source) for c in cs), "no explorer widget"
    assert any(re.search(r"(^|\n)## Exercises?\n", c.source) for c in cs if c.cell_type == "markdown"), "no exercises section"


@pytest.mark.parametrize("lesson", LESSONS, ids=IDS)
def test_the_exercise_notebook_states_the_same_exercise_minutes(lesson):
    stated = MINUTES.search(cells(lesson)[0].source)
    solution = REPO / "solutions" / lesson.name
    assert solution.exists(), f"no solutions/{lesson.name}"
    m = re.search(r"\*Exercises: (\d+) minutes", cells(solution)[0].source)
    assert m and m.group(1) == stated.group(3), "the lesson and its exercise notebook state different exercise minutes"


def test_stated_minutes_are_minutes_a_person_can_keep():
    tool = runpy.run_path(str(REPO / "tools" / "lesson_minutes.py"))
    table = tool["rows"]()
    problems = tool["problems"](table, tool["stated_totals"]())
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("stated, estimate, ok", [
    (40, 40, True), (36, 40, True), (35, 40, False), (45, 40, True), (44, 37, True), (45, 37, False),
    (46, 40, False), (0, 0, True)],
    ids=["as estimated", "0.9 of the estimate", "below 0.9 of it", "1.125 of it", "just under 1.2 of it",
         "above 1.2 of it", "a core path over 45 minutes", "no going further, none stated"])
def test_the_minutes_band_and_the_core_limit(stated, estimate, ok):
    tool = runpy.run_path(str(REPO / "tools" / "lesson_minutes.py"))
    row = {"lesson": "x", "core_stated": stated, "core_estimate": estimate, "further_stated": 10,
           "further_estimate": 10, "exercises_stated": 10, "exercises_estimate": 10}
    found = tool["problems"]([row], (stated + 10, 10))
    assert (not found) is ok, found


@pytest.mark.parametrize("headings, core, further", [
    (["# T", "## 1. A", "## Going further: 2. B", "## What gangkit simplifies here", "## Key points"],
     ["# T", "## 1. A", "## What gangkit simplifies here", "## Key points"], ["## Going further: 2. B"]),
    (["# T", "## 1. A", "## Key points"], ["# T", "## 1. A", "## Key points"], []),
    (["# T", "## Going further: 1. A", "text", "## Going further: 2. B", "more", "## Exercises"],
     ["# T", "## Exercises"], ["## Going further: 1. A", "text", "## Going further: 2. B", "more"]),
], ids=["a going-further section ends at the next heading", "a lesson without going further is all core",
        "going-further sections in a row, with their cells"])
def test_the_core_path_and_going_further_split(headings, core, further):
    tool = runpy.run_path(str(REPO / "tools" / "lesson_minutes.py"))
    split = tool["parts"]([nbformat.v4.new_markdown_cell(h) for h in headings])
    assert [c.source for c in split["core"]] == core and [c.source for c in split["further"]] == further


CLOSING = ("## What gangkit simplifies here", "## Exercises", "## Key points")


@pytest.mark.parametrize("lesson", LESSONS, ids=IDS)
def test_going_further_comes_after_the_core_path_and_the_first_cell_names_it(lesson):
    cs = cells(lesson)
    heads = [c.source.splitlines()[0] for c in cs if c.cell_type == "markdown" and c.source.startswith("## ")]
    further = [i for i, h in enumerate(heads) if h.startswith("## Going further")]
    if not further:
        assert MINUTES.search(cs[0].source).group(2) == "0", "no going-further section, yet minutes stated for one"
        return
    after = heads[further[0]:]
    stray = [h for h in after if not h.startswith("## Going further") and not h.startswith(CLOSING)]
    assert not stray, f"core sections after the first going-further section: {stray}"
    explorer = max((i for i, c in enumerate(cs) if c.cell_type == "code" and "_explorer(" in c.source), default=-1)
    first_further = next(i for i, c in enumerate(cs) if c.cell_type == "markdown" and c.source.startswith("## Going further"))
    assert explorer < first_further, "the explorer is on the core path, before the going-further sections"
    assert "**Core path.**" in cs[0].source, "the first cell says which sections are the core path ('**Core path.**')"
