"""Estimate how long each lesson takes, and check the minutes the lessons state.

Every lesson opens with ``*Teaching: N minutes · Exercises: M minutes*``. Instructors plan a
session with those numbers, so they must be minutes a person can keep. This tool estimates them
from the notebooks themselves, with a rule simple enough to argue with:

- **teaching**: the lesson's prose read at 120 words a minute (technical text with tables and
  plots to look at), plus one minute per code cell (run it, read its output) and four per
  explorer (a widget to try);
- **exercises**: per exercise, the prompt read at 120 words a minute plus six minutes to write,
  run and fix the code.

``python tools/lesson_minutes.py`` prints, per lesson, the estimate next to the stated minutes;
``--check`` exits with status 1 when a stated figure is outside 0.75 to 1.35 times its estimate,
or when lesson 00's stated total is not the sum of the lessons' minutes. The test suite runs it.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
WORDS_PER_MINUTE = 120
MINUTES_PER_CODE_CELL = 1.0
MINUTES_PER_EXPLORER = 4.0
MINUTES_PER_EXERCISE = 6.0
BAND = (0.75, 1.35)
STATED = re.compile(r"\*Teaching: (\d+) minutes · Exercises: (\d+) minutes\*")
TOTAL = re.compile(r"about (\d+) hours? and (\d+) minutes|(\d+) minutes in all")


def words(markdown: str) -> int:
    """Words a reader reads: inline code counts as one word, link targets and HTML tags as none."""
    text = re.sub(r"`[^`]*`", "x", markdown)
    text = re.sub(r"\]\([^)]*\)", "]", text)
    text = re.sub(r"<[^>]+>", " ", text)
    return len(text.split())


def estimate(lesson: Path, solution: Path) -> dict:
    """Stated and estimated minutes of one lesson and its exercise notebook."""
    nb = nbformat.read(lesson, as_version=4)
    prose = sum(words(c.source) for c in nb.cells if c.cell_type == "markdown")
    code = [c for c in nb.cells if c.cell_type == "code"]
    explorers = sum("_explorer(" in c.source for c in code)
    teaching = prose / WORDS_PER_MINUTE + MINUTES_PER_CODE_CELL * len(code) + MINUTES_PER_EXPLORER * explorers
    sol = nbformat.read(solution, as_version=4)
    prompts = [c for c in sol.cells if c.cell_type == "markdown" and c.source.startswith("## Exercise")]
    exercises = sum(words(c.source) for c in prompts) / WORDS_PER_MINUTE + MINUTES_PER_EXERCISE * len(prompts)
    stated = STATED.search(nb.cells[0].source)
    return {"lesson": lesson.stem, "words": prose, "code_cells": len(code), "explorers": explorers,
            "exercises": len(prompts), "teaching_estimate": round(teaching), "exercises_estimate": round(exercises),
            "teaching_stated": int(stated.group(1)) if stated else None,
            "exercises_stated": int(stated.group(2)) if stated else None}


def rows(root: Path = ROOT) -> list[dict]:
    return [estimate(p, root / "solutions" / p.name) for p in sorted((root / "course").glob("[0-9][0-9]_*.ipynb"))]


def stated_total(root: Path = ROOT) -> int | None:
    """The course's total in minutes as lesson 00 states it ("about 6 hours and 40 minutes"), or None."""
    first = sorted((root / "course").glob("00_*.ipynb"))[0]
    text = "\n".join(c.source for c in nbformat.read(first, as_version=4).cells if c.cell_type == "markdown")
    m = TOTAL.search(text)
    if m is None:
        return None
    return int(m.group(3)) if m.group(3) else 60 * int(m.group(1)) + int(m.group(2))


def problems(table: list[dict], total: int | None) -> list[str]:
    out = []
    lo, hi = BAND
    for r in table:
        for part in ("teaching", "exercises"):
            stated, est = r[f"{part}_stated"], r[f"{part}_estimate"]
            if stated is None:
                out.append(f"{r['lesson']}: no '*Teaching: N minutes · Exercises: M minutes*' line in its first cell")
                break
            if not lo * est <= stated <= hi * est:
                out.append(f"{r['lesson']}: {part} {stated} minutes stated, about {est} estimated "
                           f"(expected {lo:g} to {hi:g} times the estimate)")
    expected = sum(r["teaching_stated"] + r["exercises_stated"] for r in table if r["teaching_stated"] is not None)
    if total is None:
        out.append("lesson 00 states no total for the course ('... minutes in all' or 'about H hours and M minutes')")
    elif total != expected:
        out.append(f"lesson 00 states {total} minutes in all; the lessons state {expected}")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when stated minutes do not fit the estimate")
    args = parser.parse_args(argv)
    table = rows()
    print(f"{'lesson':<34} {'words':>5} {'code':>4} {'ex':>3}  teaching stated/est  exercises stated/est")
    for r in table:
        print(f"{r['lesson']:<34} {r['words']:>5} {r['code_cells']:>4} {r['exercises']:>3}  "
              f"{r['teaching_stated']!s:>8} / {r['teaching_estimate']:<8} {r['exercises_stated']!s:>9} / {r['exercises_estimate']}")
    total = stated_total()
    print(f"course total stated in lesson 00: {total} minutes")
    found = problems(table, total)
    for p in found:
        print("problem:", p, file=sys.stderr)
    return 1 if (args.check and found) else 0


if __name__ == "__main__":
    sys.exit(main())
