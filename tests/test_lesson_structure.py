"""What every lesson shares, checked on the notebooks themselves.

Each lesson opens with its minutes and objectives, says what it shows, runs an experiment, offers
an explorer, asks the learner to predict before at least one run, points to its exercises, and
ends with a key-points box and a link to the next lesson. Its exercise notebook states the same
exercise minutes. The stated minutes must be ones a person can keep (``tools/lesson_minutes.py``).
"""

from __future__ import annotations

import re
import runpy
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
LESSONS = sorted((ROOT / "course").glob("[0-9][0-9]_*.ipynb"))
IDS = [p.stem for p in LESSONS]
MINUTES = re.compile(r"\*Teaching: (\d+) minutes · Exercises: (\d+) minutes\*")


def cells(path: Path) -> list:
    return nbformat.read(path, as_version=4).cells


@pytest.mark.parametrize("lesson", LESSONS, ids=IDS)
def test_opens_with_minutes_objectives_and_what_it_shows(lesson):
    first = cells(lesson)[0].source
    assert first.startswith("# "), "the first cell is the lesson's title"
    assert MINUTES.search(first), "the first cell states '*Teaching: N minutes · Exercises: M minutes*'"
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
    solution = ROOT / "solutions" / lesson.name
    assert solution.exists(), f"no solutions/{lesson.name}"
    m = re.search(r"\*Exercises: (\d+) minutes", cells(solution)[0].source)
    assert m and m.group(1) == stated.group(2), "the lesson and its exercise notebook state different exercise minutes"


def test_stated_minutes_are_minutes_a_person_can_keep():
    tool = runpy.run_path(str(ROOT / "tools" / "lesson_minutes.py"))
    table = tool["rows"]()
    problems = tool["problems"](table, tool["stated_total"]())
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("stated, estimate, ok", [(40, 40, True), (30, 40, True), (29, 40, False), (54, 40, True),
                                                    (55, 40, False)])
def test_the_minutes_band(stated, estimate, ok):
    tool = runpy.run_path(str(ROOT / "tools" / "lesson_minutes.py"))
    row = {"lesson": "x", "teaching_stated": stated, "teaching_estimate": estimate,
           "exercises_stated": 10, "exercises_estimate": 10}
    found = tool["problems"]([row], stated + 10)
    assert (not found) is ok, found
