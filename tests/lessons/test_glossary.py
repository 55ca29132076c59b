"""The glossary (docs/glossary.md): every term a lesson sets in bold is in it, and each entry names the lesson that uses it.

A term in bold inside a sentence is a glossary term. Bold that is not a term is left out of the
rule: run-in headings (ending in '.', ':' or '?'), labels at the start of a list item, exercise
numbers, code names in backticks, and keys or menus (Shift+Enter, File > Save).
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from paths import REPO

LESSONS = sorted((REPO / "course").glob("[0-9][0-9]_*.ipynb"))
GLOSSARY = REPO / "docs" / "glossary.md"
BOLD = re.compile(r"\*\*(.+?)\*\*", re.S)
ROW = re.compile(r"^\| (?P<term>[^|]+?) \| (?P<definition>[^|]+?) \| (?P<lesson>\d\d) \|$", re.M)


def entries() -> dict[str, tuple[str, str]]:
    """term (lower case, backticks and a bracketed note removed) -> (definition, lesson)."""
    out = {}
    for m in ROW.finditer(GLOSSARY.read_text(encoding="utf-8")):
        out[_key(m["term"])] = (m["definition"], m["lesson"])
    return out


def _key(term: str) -> str:
    term = re.sub(r"\s*\(.*?\)", "", term.replace("`", "")).strip().lower()
    return " ".join(term.split())


def _markdown(lesson: Path) -> str:
    return "\n\n".join(c.source for c in nbformat.read(lesson, as_version=4).cells if c.cell_type == "markdown")


def bold_terms(text: str) -> set[str]:
    """The terms set in bold inside sentences of ``text`` (see the module docstring for what is left out)."""
    found = set()
    for m in BOLD.finditer(text):
        span = " ".join(m.group(1).split())
        line_start = text.rfind("\n", 0, m.start()) + 1
        before = text[line_start:m.start()].strip()
        if (span[-1] in ".:?…" or "`" in span or span.startswith("Exercise") or re.search(r"[>+]|^Esc$|^\d", span)
                or len(span) <= 2 or before in ("-", "*", ">", "> -") or re.fullmatch(r"\d+\.", before or "x")):
            continue
        found.add(span)
    return found


def _known(term: str, glossary: dict) -> bool:
    k = _key(term)
    return k in glossary or k.rstrip("s") in glossary or f"{k}s" in glossary


@pytest.mark.parametrize("lesson", LESSONS, ids=[p.stem for p in LESSONS])
def test_every_bold_term_of_a_lesson_is_in_the_glossary(lesson):
    glossary = entries()
    missing = sorted(t for t in bold_terms(_markdown(lesson)) if not _known(t, glossary))
    assert not missing, f"bold in {lesson.name} but not in docs/glossary.md: {missing}"


@pytest.mark.parametrize("lesson", LESSONS, ids=[p.stem for p in LESSONS])
def test_every_lesson_links_to_the_glossary(lesson):
    assert "](../docs/glossary.md)" in _markdown(lesson)


def test_each_entry_names_a_lesson_that_uses_the_term():
    texts = {p.name[:2]: " ".join(_markdown(p).lower().replace("`", "").split()) for p in LESSONS}
    wrong = []
    for term, (_, lesson) in entries().items():
        words = term.replace(" (wait bucket)", "")
        if lesson not in texts:
            wrong.append(f"{term!r}: no lesson {lesson}")
        elif words.lower() not in texts[lesson] and words.lower().rstrip("s") not in texts[lesson]:
            wrong.append(f"{term!r} is not in lesson {lesson}")
    assert not wrong, "\n".join(wrong)


def test_the_glossary_is_sorted_and_has_no_duplicates():
    text = GLOSSARY.read_text(encoding="utf-8")
    terms = [_key(m["term"]) for m in ROW.finditer(text)]
    assert len(terms) >= 60 and len(terms) == len(set(terms))
    assert terms == sorted(terms, key=lambda t: t.lower().lstrip("`")), "entries in alphabetical order"


@pytest.mark.parametrize(
    "text, terms",
    [
        ("A gang holds **nothing** while it waits.", {"nothing"}),
        ("**Objectives.** After this lesson", set()),
        ("- **Karpenter**: launches nodes", set()),
        ("the **`gang`** stack", set()),
        ("press **Shift+Enter**", set()),
        ("**Exercise 1.1 · Two more nodes**", set()),
        ("a **cohort** of\n**ClusterQueues**", {"cohort", "ClusterQueues"}),
    ],
)
def test_what_counts_as_a_bold_term(text, terms):
    assert bold_terms(text) == terms
