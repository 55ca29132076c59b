"""exercises/ is generated from solutions/, and an untouched exercise runs to the end.

A learner opens exercises/NN_slug.ipynb and presses Run All before writing anything: every cell
must run, and every check must answer "not done yet" instead of crashing or passing.
"""

from __future__ import annotations

import importlib.util
import os
import re
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from paths import REPO

REPO_ROOT = REPO
SOLUTIONS_DIR = REPO_ROOT / "solutions"
EXERCISES_DIR = REPO_ROOT / "exercises"

# A call of a check function: check_answer(...), checks.check_gang_fits(...), ... (not a def)
CHECK_CALL = re.compile(r"(?<!def )\bcheck_\w*\s*\(")
NOT_DONE = re.compile(r"not done yet", re.IGNORECASE)


def _load_make_exercises():
    path = REPO_ROOT / "tools" / "make_exercises.py"
    spec = importlib.util.spec_from_file_location("make_exercises", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _exercise_notebooks() -> list[Path]:
    if not EXERCISES_DIR.is_dir():
        return []
    return sorted(p for p in EXERCISES_DIR.glob("*.ipynb") if p.is_file())


def test_exercises_match_solutions():
    make_exercises = _load_make_exercises()
    if not make_exercises.solution_notebooks(SOLUTIONS_DIR):
        pytest.skip("solutions/ has no notebooks yet")
    problems = make_exercises.check(SOLUTIONS_DIR, EXERCISES_DIR)
    assert not problems, (
        "exercises/ is out of date; run `python tools/make_exercises.py`:\n" + "\n".join(problems)
    )


def test_generation_is_deterministic():
    make_exercises = _load_make_exercises()
    solutions = make_exercises.solution_notebooks(SOLUTIONS_DIR)
    if not solutions:
        pytest.skip("solutions/ has no notebooks yet")
    config = make_exercises.load_config()
    for solution in solutions:
        first = make_exercises.exercise_text(solution, config)
        second = make_exercises.exercise_text(solution, make_exercises.load_config())
        assert first == second, f"{solution.name}: two generations differ"
        assert "### BEGIN SOLUTION" not in first, f"{solution.name}: a solution region survived"


def _output_text(output) -> str:
    parts = []
    if "text" in output:
        parts.append(output["text"])
    for mime in ("text/plain", "text/markdown", "text/html"):
        value = output.get("data", {}).get(mime)
        if value:
            parts.append(value if isinstance(value, str) else "".join(value))
    if output.get("output_type") == "error":
        parts.append(f"{output.get('ename')}: {output.get('evalue')}")
    return "\n".join(parts)


@pytest.mark.exercise_run
@pytest.mark.parametrize(
    "notebook",
    _exercise_notebooks() or [pytest.param(None, marks=pytest.mark.skip("exercises/ is empty"))],
    ids=lambda p: p.name if isinstance(p, Path) else "none",
)
def test_untouched_exercise_runs_and_says_not_done_yet(notebook):
    nb = nbformat.read(notebook, as_version=4)
    env = dict(os.environ, GANGKIT_NO_PROGRESS="1")
    env.pop("MPLBACKEND", None)
    client = NotebookClient(
        nb,
        kernel_name="python3",
        record_timing=False,
        store_widget_state=False,
        timeout=120,
        resources={"metadata": {"path": str(notebook.parent)}},
    )
    # Raises CellExecutionError, naming the cell, if any cell fails.
    client.execute(cwd=str(notebook.parent), env=env)

    check_cells = [
        c for c in nb.cells if c.cell_type == "code" and CHECK_CALL.search(c.source)
    ]
    outputs = "\n".join(
        _output_text(o) for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
    )
    said = len(NOT_DONE.findall(outputs))
    assert said >= max(1, len(check_cells)), (
        f"{notebook.name}: {len(check_cells)} cell(s) call a check_ function, but the untouched "
        f"exercise says 'not done yet' {said} time(s); each check should answer 'not done yet' "
        "when the answer is still None"
    )
