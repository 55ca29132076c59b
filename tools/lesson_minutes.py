"""Estimate how long each lesson takes, and check the minutes the lessons state.

Every lesson has a *core path*, the sections a lab teaches, and after it sections whose heading
starts with ``## Going further``, which a learner can skip without losing the thread. Its first cell
states ``*Core: N minutes · Going further: M minutes · Exercises: K minutes*``. Instructors plan a
session with those numbers, so they must be minutes a person meeting the material for the first
time can keep. This tool estimates them from the notebooks themselves, with a rule simple enough
to argue with:

- **core** and **going further**: their prose read at 100 words a minute (technical text with
  tables and plots to look at), plus two minutes per code cell (read the code, run it, read its
  output) and five per explorer cell (a widget to try);
- **exercises**: per exercise, the prompt read at 100 words a minute plus ten minutes to write,
  run and fix the code.

A going-further section runs from its heading to the next ``## `` heading that is not one; every
other cell, the first included, is on the core path. The core path of a lesson teaches in at most
45 minutes.

``python tools/lesson_minutes.py`` prints, per lesson, the words, cells and estimate of each part
next to the stated minutes; ``--check`` exits with status 1 when a stated figure is outside 0.9 to
1.2 times its estimate, when a core path states more than 45 minutes, or when lesson 00's totals
are not the sums of the lessons' minutes. The test suite runs it.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
WORDS_PER_MINUTE = 100
MINUTES_PER_CODE_CELL = 2.0
MINUTES_PER_EXPLORER = 5.0
MINUTES_PER_EXERCISE = 10.0
BAND = (0.9, 1.2)
CORE_LIMIT = 45
PARTS = ("core", "further", "exercises")
STATED = re.compile(r"\*Core: (\d+) minutes · Going further: (\d+) minutes · Exercises: (\d+) minutes\*")
FORM = "*Core: N minutes · Going further: M minutes · Exercises: K minutes*"
FURTHER = re.compile(r"^## Going further\b")
#: lesson 00's two totals: the core paths with their exercises, and what the going-further sections add
TOTAL_CORE = re.compile(r"core paths with their exercises take (\d+) minutes")
TOTAL_FURTHER = re.compile(r"going-further sections add (\d+) minutes")


def words(markdown: str) -> int:
    """Words a reader reads: inline code counts as one word, link targets and HTML tags as none."""
    text = re.sub(r"`[^`]*`", "x", markdown)
    text = re.sub(r"\]\([^)]*\)", "]", text)
    text = re.sub(r"<[^>]+>", " ", text)
    return len(text.split())


def is_explorer(cell) -> bool:
    return cell.cell_type == "code" and "_explorer(" in cell.source


def parts(cells: list) -> dict[str, list]:
    """The lesson's cells split into its core path and its going-further sections."""
    out: dict[str, list] = {"core": [], "further": []}
    further = False
    for c in cells:
        if c.cell_type == "markdown" and c.source.startswith("## "):
            further = bool(FURTHER.match(c.source))
        out["further" if further else "core"].append(c)
    return out


def reading(cells: list) -> dict:
    """Words, code cells, explorers and the estimated minutes of a run of cells."""
    prose = sum(words(c.source) for c in cells if c.cell_type == "markdown")
    code = [c for c in cells if c.cell_type == "code"]
    explorers = sum(is_explorer(c) for c in code)
    minutes = (prose / WORDS_PER_MINUTE + MINUTES_PER_CODE_CELL * (len(code) - explorers)
               + MINUTES_PER_EXPLORER * explorers)
    return {"words": prose, "code_cells": len(code), "explorers": explorers, "estimate": round(minutes)}


def estimate(lesson: Path, solution: Path) -> dict:
    """Stated and estimated minutes of one lesson's core path, going-further sections and exercises."""
    nb = nbformat.read(lesson, as_version=4)
    split = parts(nb.cells)
    sol = nbformat.read(solution, as_version=4)
    prompts = [c for c in sol.cells if c.cell_type == "markdown" and c.source.startswith("## Exercise")]
    exercises = sum(words(c.source) for c in prompts) / WORDS_PER_MINUTE + MINUTES_PER_EXERCISE * len(prompts)
    stated = STATED.search(nb.cells[0].source)
    row = {"lesson": lesson.stem, "exercises": len(prompts), "exercises_estimate": round(exercises)}
    for part in ("core", "further"):
        r = reading(split[part])
        row.update({f"{part}_{k}": v for k, v in r.items() if k != "estimate"})
        row[f"{part}_estimate"] = r["estimate"]
    for i, part in enumerate(PARTS, start=1):
        row[f"{part}_stated"] = int(stated.group(i)) if stated else None
    return row


def rows(root: Path = ROOT) -> list[dict]:
    return [estimate(p, root / "solutions" / p.name) for p in sorted((root / "course").glob("[0-9][0-9]_*.ipynb"))]


def stated_totals(root: Path = ROOT) -> tuple[int | None, int | None]:
    """Lesson 00's totals in minutes: the core paths with their exercises, and the going-further sections."""
    first = sorted((root / "course").glob("00_*.ipynb"))[0]
    text = " ".join(" ".join(c.source.split()) for c in nbformat.read(first, as_version=4).cells
                    if c.cell_type == "markdown")
    found = [rx.search(text) for rx in (TOTAL_CORE, TOTAL_FURTHER)]
    return tuple(int(m.group(1)) if m else None for m in found)


def problems(table: list[dict], totals: tuple[int | None, int | None]) -> list[str]:
    out = []
    lo, hi = BAND
    for r in table:
        if r["core_stated"] is None:
            out.append(f"{r['lesson']}: no '{FORM}' line in its first cell")
            continue
        for part in PARTS:
            stated, est = r[f"{part}_stated"], r[f"{part}_estimate"]
            if not (lo * est <= stated <= hi * est or stated == est):
                out.append(f"{r['lesson']}: {part} {stated} minutes stated, about {est} estimated "
                           f"(expected {lo:g} to {hi:g} times the estimate)")
        if r["core_stated"] > CORE_LIMIT:
            out.append(f"{r['lesson']}: its core path states {r['core_stated']} minutes, more than {CORE_LIMIT}")
    known = [r for r in table if r["core_stated"] is not None]
    core = sum(r["core_stated"] + r["exercises_stated"] for r in known)
    further = sum(r["further_stated"] for r in known)
    for (label, stated), expected, rx in zip((("the core paths with their exercises", totals[0]),
                                              ("the going-further sections", totals[1])),
                                             (core, further), (TOTAL_CORE, TOTAL_FURTHER)):
        if stated is None:
            out.append(f"lesson 00 states no total for {label} (expected a sentence matching {rx.pattern!r})")
        elif stated != expected:
            out.append(f"lesson 00 states {stated} minutes for {label}; the lessons state {expected}")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when stated minutes do not fit the estimate")
    args = parser.parse_args(argv)
    table = rows()
    print(f"{'lesson':<32} {'core words/cells':>16} {'stated/est':>10}  {'further words/cells':>19} "
          f"{'stated/est':>10}  {'exercises':>9} {'stated/est':>10}")
    for r in table:
        print(f"{r['lesson']:<32} {r['core_words']:>10} / {r['core_code_cells']:<3} "
              f"{r['core_stated']!s:>4} / {r['core_estimate']:<4} {r['further_words']:>13} / {r['further_code_cells']:<3} "
              f"{r['further_stated']!s:>4} / {r['further_estimate']:<4} {r['exercises']:>9} "
              f"{r['exercises_stated']!s:>4} / {r['exercises_estimate']}")
    core, further = stated_totals()
    print(f"lesson 00 states: core paths with their exercises {core} minutes, going-further sections {further} minutes")
    found = problems(table, (core, further))
    for p in found:
        print("problem:", p, file=sys.stderr)
    return 1 if (args.check and found) else 0


if __name__ == "__main__":
    sys.exit(main())
