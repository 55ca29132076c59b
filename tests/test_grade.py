"""``gangkit grade``: marks per exercise, for real exercises, solutions and hostile notebooks.

A hostile notebook (one that loops forever, exhausts memory, kills its kernel,
deletes its exercise cells, renames the check calls, raises at import, or is
no notebook at all) gets a clear mark per exercise, never a hang or a crash
of the grader. Each case runs a kernel: they are marked ``exercise_run``.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import nbformat
import pytest

from gangkit.cli.main import main
from gangkit.grading import grade, junit_xml, table, to_json
from gangkit.grading.exercises import checks_of, lesson_of

from conftest import case

REPO = Path(__file__).resolve().parents[1]
IMPORT = "from gangkit.checks import check_00_jobs_finished"
LIMITS = {"cell_timeout": 5, "timeout": 60, "memory_mib": 2048}


def notebook(folder: Path, *cells: str, name: str = "00_welcome.ipynb") -> Path:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# 00 · Welcome")] + [nbformat.v4.new_code_cell(c) for c in cells]
    path = folder / name
    nbformat.write(nb, path)
    return path


# --- which exercises a lesson has (no kernel) -------------------------------------------------------------

def test_the_checks_of_each_lesson_are_the_solutions_checks_in_order():
    for solution in sorted((REPO / "solutions").glob("*.ipynb")):
        nb = nbformat.read(solution, as_version=4)
        called = [name for c in nb.cells if c.cell_type == "code" for name in
                  [n for _, n in checks_of(lesson_of(solution, nb.cells))] if f"{name}(" in c.source]
        assert called == [n for _, n in checks_of(lesson_of(solution, nb.cells))], solution.name


@pytest.mark.parametrize("name, heading, lesson", [
    ("07_migrating.ipynb", "# 07 · Migrating", "07"),
    ("submission-anna.ipynb", "# 03 · Queues and quota", "03"),
    ("notes.ipynb", "Some notes", None),
])
def test_a_notebooks_lesson_comes_from_its_name_or_its_first_heading(name, heading, lesson):
    assert lesson_of(Path(name), [{"cell_type": "markdown", "source": heading}]) == lesson


# --- hostile and ordinary submissions (a kernel each) ----------------------------------------------------

SUBMISSIONS = [
    case("right", [IMPORT, "check_00_jobs_finished(3)"], "passed", "Correct!"),
    case("wrong", [IMPORT, "check_00_jobs_finished(2)"], "wrong", "Exercise 0.1"),
    case("untouched", [IMPORT, "answer = None\ncheck_00_jobs_finished(answer)"], "not done", "not done yet"),
    case("loops forever in its exercise cell", [IMPORT, "while True:\n    pass\ncheck_00_jobs_finished(3)"],
         "timeout", "time limit"),
    case("loops forever before it, then answers", [IMPORT, "while True:\n    pass", "check_00_jobs_finished(3)"],
         "passed", "Correct!"),
    case("exhausts memory", [IMPORT, "x = bytearray(8 * 2**30)\ncheck_00_jobs_finished(3)"], "error", "MemoryError"),
    case("kills its kernel", [IMPORT, "import os\nos._exit(3)", "check_00_jobs_finished(3)"], "not run", "kernel died"),
    case("deletes the exercise cell", [IMPORT, "print('hello')"], "missing", "no cell calls check_00_jobs_finished"),
    case("renames the check call", ["from gangkit.checks import check_00_jobs_finished as c", "c(3)"], "missing",
         "its check call renamed"),
    case("raises at import", ["import gangkit_that_does_not_exist", "check_00_jobs_finished(3)"], "error",
         "NameError: name 'check_00_jobs_finished' is not defined"),
    case("calls the check, but not last", [IMPORT, "check_00_jobs_finished(3)\nx = 1"], "wrong",
         "the cell's last line is not the call"),
]


@pytest.mark.exercise_run
@pytest.mark.parametrize("cells, status, words", SUBMISSIONS)
def test_each_submission_gets_a_clear_mark(tmp_path, cells, status, words):
    path = notebook(tmp_path, *cells)
    before = path.read_bytes()
    [mark] = grade([path], **LIMITS)
    assert (mark.exercise, mark.check, mark.status) == ("0.1", "check_00_jobs_finished", status)
    assert words in mark.message
    assert path.read_bytes() == before  # the submission itself is never changed


@pytest.mark.exercise_run
def test_a_notebook_over_its_time_limit_keeps_the_marks_so_far(tmp_path):
    # three cells of 5 s, each under the 10 s cell limit, together over the 12 s notebook limit on any machine
    nap = "import time\ntime.sleep(5)"
    path = notebook(tmp_path, IMPORT, "check_00_jobs_finished(3)", nap, nap, nap, "check_00_jobs_finished(3)")
    [mark] = grade([path], cell_timeout=10, timeout=12, memory_mib=2048)
    assert mark.status == "not run" and "time limit (12 s)" in mark.message


NOT_GRADABLE = [
    case("not JSON", "{ this is not a notebook", "not a readable notebook"),
    case("no lesson", None, "does not start with a lesson number"),
]


@pytest.mark.parametrize("text, words", NOT_GRADABLE)
def test_a_file_that_is_no_lessons_notebook_is_one_error_mark(tmp_path, text, words):
    if text is None:
        path = notebook(tmp_path, "print(1)", name="notes.ipynb")
        nb = nbformat.read(path, as_version=4)
        nb.cells[0].source = "Notes"
        nbformat.write(nb, path)
    else:
        path = tmp_path / "03_queues.ipynb"
        path.write_text(text)
    marks = grade([path], **LIMITS)
    assert marks and all(m.status == "error" and words in m.message for m in marks)


# --- the three reports and the command line ----------------------------------------------------------------

@pytest.mark.exercise_run
def test_the_table_json_and_junit_report_the_same_marks(tmp_path):
    marks = grade([notebook(tmp_path, IMPORT, "check_00_jobs_finished(2)")], **LIMITS)
    assert "0 of 1 exercises passed (1 wrong)" in table(marks)
    report = json.loads(to_json(marks))
    assert report["summary"] == {"wrong": 1} and report["passed"] is False
    suite = ET.fromstring(junit_xml(marks)).find("testsuite")
    [failure] = suite.iter("failure")
    assert (suite.get("tests"), suite.get("failures"), failure.get("type")) == ("1", "1", "wrong")


@pytest.mark.exercise_run
def test_the_command_line_exits_0_only_when_every_exercise_passed(tmp_path, capsys):
    right = notebook(tmp_path, IMPORT, "check_00_jobs_finished(3)")
    junit = tmp_path / "grades.xml"
    assert main(["grade", str(right), "--junit", str(junit), "--cell-timeout", "30"]) == 0
    assert "1 of 1 exercises passed" in capsys.readouterr().out and junit.is_file()
    wrong = notebook(tmp_path / "other", IMPORT, "check_00_jobs_finished(2)") if (tmp_path / "other").mkdir() is None else None
    assert main(["grade", str(right), str(wrong), "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["summary"] == {"passed": 1, "wrong": 1}


def test_the_command_line_refuses_a_missing_file(tmp_path, capsys):
    assert main(["grade", str(tmp_path / "nowhere.ipynb")]) == 2
    assert capsys.readouterr().err.startswith("error: ")


@pytest.mark.exercise_run
@pytest.mark.parametrize("folder, status", [("exercises", "not done"), ("solutions", "passed")])
def test_the_generated_exercises_are_not_done_and_the_solutions_pass(folder, status):
    paths = sorted((REPO / folder).glob("*.ipynb"))
    marks = grade(paths, cell_timeout=300, timeout=1200, memory_mib=8192)
    assert {m.exercise for m in marks} == {e for p in paths for e, _ in checks_of(p.name[:2])}
    assert {m.status for m in marks} == {status}, table(marks)
