"""``gangkit grade``: marks a learner cannot forge, learner code in a box, and a gradebook.

Every hostile submission below is the real exercise notebook of lesson 00 with one change a
learner could make: forged marks (a changed check call, an added last cell, a redefined check),
tampering with given code, reading secrets and files outside its folder, writing outside it,
killing processes, leaving a daemon behind, flooding its output, exhausting memory, looping, and
files that are no notebook. They are graded together, two at a time, in one batch (the
``hostile`` fixture), and each test reads its own marks: the batch must give every notebook its
marks, whatever the others did.

The tests that run kernels are marked ``exercise_run``; those that need the sandbox skip, saying
why, where bubblewrap cannot run (``.ci/run`` installs it).
"""

from __future__ import annotations

import csv
import io
import json
import os
import xml.etree.ElementTree as ET
from pathlib import Path

import nbformat
import pytest

from gangkit.cli.main import main
from gangkit.grading import Limits, Mark, grade, gradebook_csv, junit_xml, table, to_json
from gangkit.grading.answers import EXPRESSION, AnswerError, decode
from gangkit.grading.exercises import checks_of, lesson_of
from gangkit.grading.locks import inspect, lesson_locks
from gangkit.grading.marks import clean
from gangkit.grading.sandbox import available

from conftest import case
from paths import REPO

EXERCISE_00 = REPO / "exercises" / "00_welcome.ipynb"
LIMITS = Limits(cell_timeout=8, timeout=60, memory_mib=2048, output_bytes=1_000_000)
SECRET = "gangkit-test-secret-5b1c"
MARKER = "gangkit-test-daemon-9f3e"

needs_sandbox = pytest.mark.skipif(bool(available()), reason=f"no sandbox here: {available()}")


def submission(folder: Path, name: str, *, answer: str | None = None, exercise: str | None = None,
               before: list[str] = (), after: list[str] = (), given: str | None = None,
               drop_exercise: bool = False, learner: str | None = None) -> Path:
    """Lesson 00's exercise notebook with a learner's changes: an answer region, or a whole exercise cell,
    cells added before or after the exercise cell, a changed given cell, the exercise cell deleted."""
    nb = nbformat.read(EXERCISE_00, as_version=4)
    cells = nb.cells
    index = next(i for i, c in enumerate(cells) if c.get("id") == "ex-0-1-code")
    if answer is not None:
        cells[index].source = cells[index].source.replace("# YOUR CODE HERE", answer)
    if exercise is not None:
        cells[index].source = exercise
    if given is not None:
        next(c for c in cells if c.get("id") == "first-run-code").source = given
    for offset, source in enumerate(before):
        cells.insert(index + offset, nbformat.v4.new_code_cell(source))
    index += len(before)
    for offset, source in enumerate(after):
        cells.insert(index + 1 + offset, nbformat.v4.new_code_cell(source))
    if drop_exercise:
        del cells[index]
    if learner:
        nb.metadata["gangkit"] = {"learner": learner}
    path = folder / f"{name}-00.ipynb"
    nbformat.write(nb, path)
    return path


DAEMON = ("import subprocess, os\n"
          f"subprocess.Popen(['sh', '-c', '(sleep 300; echo {MARKER}) & sleep 300'], start_new_session=True,\n"
          "                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)\n"
          "answer = 3")

# (id, the learner's change, status, words in the message)
HOSTILE = [
    case("a right answer passes", dict(answer="answer = 3"), "passed", "Correct!"),
    case("a wrong answer is wrong", dict(answer="answer = 2"), "wrong", "Exercise 0.1"),
    case("an untouched exercise is not done", {}, "not done", "not done yet"),
    case("a changed check call (check(answer) or True) is tampered",
         dict(exercise="answer = None\ncheck_00_jobs_finished(answer) or True"), "tampered", "locked lines"),
    case("an added last cell that looks like a check's call changes nothing",
         dict(after=["True  # check_00_jobs_finished( check_00_jobs_finished("]), "not done", "not done yet"),
    case("a check redefined in an earlier cell is not the grader's check",
         dict(before=["def check_00_jobs_finished(answer):\n    print('Correct!')\n    return True"]),
         "not done", "not done yet"),
    case("print and True redefined in the kernel change nothing",
         dict(before=["import builtins\nbuiltins.print = lambda *a, **k: None\nTrue = 1"], answer="answer = 2"),
         "wrong", "Exercise 0.1"),
    case("a value that claims to equal everything is not a number",
         dict(answer="class Always(int):\n    def __eq__(self, other):\n        return True\nanswer = Always(7)"),
         "wrong", "a value of type Always"),
    case("a numpy number is read as a number", dict(answer="import numpy as np\nanswer = np.int64(3)"), "passed",
         "Correct!"),
    case("a changed given cell above the exercise makes it tampered",
         dict(given="result = None", answer="answer = 3"), "tampered", "was changed above it"),
    case("a deleted exercise cell is missing", dict(drop_exercise=True), "missing", "is not in the notebook"),
    case("the grader's environment is not the kernel's (no secret)",
         dict(answer="import os\nraise RuntimeError(os.environ.get('GANGKIT_TEST_SECRET', 'no secret'))"),
         "error", "RuntimeError: no secret"),
    case("the folder of the submissions is hidden",
         dict(answer="import pathlib\nanswer = len(list(pathlib.Path(r'{folder}').iterdir()))"), "wrong", "you said 0"),
    case("files outside the working folder cannot be written",
         dict(answer="open(r'{outside}', 'w').write('x')"), "error", "[Errno"),
    case("the installed checks cannot be rewritten",
         dict(answer="import gangkit.checks.lesson00 as m\nopen(m.__file__, 'a').write('# changed')"),
         "error", "Read-only file system"),
    case("the network is unreachable",
         dict(answer="import socket\nsocket.create_connection(('1.1.1.1', 53), timeout=2)"), "error",
         "Network is unreachable"),
    case("killing every process it can see ends only its own kernel",
         dict(answer="import os, signal\ntry:\n    os.kill(-1, signal.SIGKILL)\nexcept ProcessLookupError:\n    pass\nanswer = 3"),
         "passed", "Correct!"),
    case("a daemon that keeps a pipe open does not hold the grader", dict(answer=DAEMON), "passed", "Correct!"),
    case("a flood of output stops the notebook",
         dict(answer="for _ in range(200_000):\n    print('x' * 500)"), "not run", "more than 1 MB of output"),
    case("memory beyond the limit is an error", dict(answer="x = bytearray(8 * 2**30)"), "error", "MemoryError"),
    case("an endless loop is stopped at the cell's time limit", dict(answer="while True:\n    pass"), "timeout",
         "time limit"),
    case("a kernel that exits leaves the exercise not run",
         dict(before=["import os\nos._exit(3)"], answer="answer = 3"), "not run", "kernel died"),
]


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    """Every hostile submission graded in one batch, two at a time: {case id: [its marks]}."""
    if available():
        pytest.skip(f"no sandbox here: {available()}")
    folder = tmp_path_factory.mktemp("submissions")
    outside = tmp_path_factory.mktemp("elsewhere") / "written.txt"
    (folder / "another-learners-notes.txt").write_text("answers")
    paths = {}
    for i, param in enumerate(HOSTILE):
        change = {k: v.format(folder=folder, outside=outside) if isinstance(v, str) else v
                  for k, v in param.values[0].items()}
        paths[param.id] = submission(folder, f"learner{i:02d}", **change)
    old = os.environ.get("GANGKIT_TEST_SECRET")
    os.environ["GANGKIT_TEST_SECRET"] = SECRET
    try:
        marks = grade(list(paths.values()), LIMITS, jobs=2)
    finally:
        os.environ.pop("GANGKIT_TEST_SECRET") if old is None else os.environ.__setitem__("GANGKIT_TEST_SECRET", old)
    by_path = {}
    for m in marks:
        by_path.setdefault(m.notebook, []).append(m)
    return {cid: by_path.get(str(p), []) for cid, p in paths.items()}, outside, marks


@pytest.mark.exercise_run
@pytest.mark.parametrize("change, status, words", HOSTILE)
def test_each_hostile_submission_gets_its_own_clear_mark(hostile, request, change, status, words):
    marks = hostile[0][request.node.callspec.id]
    assert [(m.exercise, m.check) for m in marks] == [("0.1", "check_00_jobs_finished")], marks
    assert marks[0].status == status, marks[0]
    assert words in marks[0].message, marks[0]


@pytest.mark.exercise_run
def test_nothing_of_a_hostile_batch_leaks_or_lingers(hostile):
    _, outside, marks = hostile
    assert not outside.exists()
    assert all(SECRET not in m.message for m in marks)
    assert all(clean(m.message, 1000) == m.message for m in marks)
    lingering = []
    for proc in Path("/proc").iterdir():
        try:
            if MARKER.encode() in (proc / "cmdline").read_bytes():
                lingering.append(proc.name)
        except OSError:
            pass
    assert not lingering, "a learner's daemon outlived the grading"
    source = (REPO / "gangkit" / "checks" / "lesson00.py").read_text()
    assert "# changed" not in source


# --- files that are no notebook, and notebooks of no lesson (no kernel) --------------------------------------

NOT_GRADABLE = [
    case("not JSON", "{ this is not a notebook", "00_welcome.ipynb", "not a readable notebook"),
    case("an empty JSON object", "{}", "00_welcome.ipynb", "not a notebook"),
    case("a JSON list", "[]", "00_welcome.ipynb", "not a notebook"),
    case("a notebook of no lesson", None, "notes.ipynb", "does not start with a lesson number"),
]


@pytest.mark.parametrize("text, name, words", NOT_GRADABLE)
def test_a_file_that_is_no_lessons_notebook_gets_error_marks(tmp_path, text, name, words):
    path = tmp_path / name
    if text is None:
        nb = nbformat.v4.new_notebook()
        nb.cells = [nbformat.v4.new_markdown_cell("Notes"), nbformat.v4.new_code_cell("print(1)")]
        nbformat.write(nb, path)
    else:
        path.write_text(text)
    marks = grade([path], LIMITS, sandbox=False)
    assert marks and all(m.status == "error" and words in m.message for m in marks)


# --- locked cells (no kernel) ----------------------------------------------------------------------------------

def _cells(path: Path) -> list:
    return json.loads(path.read_text())["cells"]


LOCKS = [
    case("an untouched exercise", {}, {}, True),
    case("an answer written in its region", dict(answer="x = 1\nanswer = x + 2"), {}, True),
    case("cells added anywhere", dict(before=["y = 2"], after=["z = 3"]), {}, True),
    case("the first line changed", dict(exercise="answer = 3\ncheck_00_jobs_finished(answer)"),
         {"0.1": "locked lines"}, True),
    case("the check call commented out", dict(exercise="answer = None\n# check_00_jobs_finished(answer)"),
         {"0.1": "locked lines"}, True),
    case("a given cell changed", dict(given="result = 1"), {"0.1": "changed above it"}, True),
    case("the exercise cell deleted", dict(drop_exercise=True), {}, False),
]


@pytest.mark.parametrize("change, tampered, present", LOCKS)
def test_locked_cells_find_each_exercise_and_each_change(tmp_path, change, tampered, present):
    path = submission(tmp_path, "x", **change)
    cells = _cells(path)
    found = inspect(cells, lesson_locks("00"))
    assert found.tampered.keys() == tampered.keys()
    assert all(words in found.tampered[e] for e, words in tampered.items())
    index = found.cell_of["0.1"]
    assert (index is not None) == present
    assert index is None or cells[index]["id"] == "ex-0-1-code"


def test_a_notebook_without_cell_ids_is_matched_by_content(tmp_path):
    path = submission(tmp_path, "x", answer="answer = 3")
    cells = _cells(path)
    for c in cells:
        c.pop("id", None)
    found = inspect(cells, lesson_locks("00"))
    assert found.tampered == {} and "answer = 3" in "".join(cells[found.cell_of["0.1"]]["source"])


def test_the_exercise_notebooks_lock_the_given_cells_for_jupyterlab():
    for path in sorted((REPO / "exercises").glob("*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type == "code":
                assert cell.metadata.get("deletable") is False, (path.name, cell.id)
                assert cell.metadata.get("editable") is cell.source.startswith("answer = None"), (path.name, cell.id)


def test_every_solution_and_exercise_keeps_its_locked_cells():
    for folder in ("solutions", "exercises"):
        for path in sorted((REPO / folder).glob("*.ipynb")):
            cells = _cells(path)
            locks = lesson_locks(lesson_of(path, cells))
            found = inspect(cells, locks)
            assert found.tampered == {}, (path, found.tampered)
            assert [e for e, i in found.cell_of.items() if i is None] == [e for e, c in locks.checks() if not c]


def test_the_lock_table_has_the_checks_of_each_lesson_in_order():
    for path in sorted((REPO / "solutions").glob("*.ipynb")):
        locks = lesson_locks(path.name[:2])
        assert [c for _, c in locks.checks() if c] == [c for _, c in checks_of(path.name[:2])], path.name


# --- answers travel as data (no kernel) -----------------------------------------------------------------------

ANSWERS = [
    case("None", None),
    case("a whole number", 3),
    case("a number", 0.6667),
    case("NaN", float("nan")),
    case("infinity", float("inf")),
    case("text", "strict"),
    case("a list of codes", ["GangWaiting", "Quota"]),
    case("a tuple", (1, 2)),
    case("a set", {"a", "b"}),
    case("a dict", {"x": 1, 2: [3]}),
    case("True", True),
]


def _through_kernel_encoding(value):
    namespace = {"answer": value}
    return eval(EXPRESSION, namespace)


@pytest.mark.parametrize("value", ANSWERS)
def test_an_answer_comes_back_as_the_same_value(value):
    back = decode(_through_kernel_encoding(value))
    if isinstance(value, float) and value != value:
        assert back != back
    else:
        assert back == value and type(back) is type(value)


def test_pandas_numpy_and_gangkit_values_come_back_with_their_types():
    import numpy as np
    import pandas as pd

    from gangkit.lessons import lesson08

    series = pd.Series([1.5, 2.0], index=["a", "b"], name="wait_s")
    back = decode(_through_kernel_encoding(series))
    assert isinstance(back, pd.Series) and back.equals(series) and back.name == "wait_s"
    frame = pd.DataFrame({"job": ["a"], "wait_s": [3.0]})
    assert decode(_through_kernel_encoding(frame)).equals(frame)
    assert type(decode(_through_kernel_encoding(np.bool_(True)))) is np.bool_
    design = lesson08.NAIVE
    assert decode(_through_kernel_encoding(design)) == design
    result = decode(_through_kernel_encoding(object()))
    assert type(result).__name__ == "object" and type(result).__module__ == "builtins"


@pytest.mark.parametrize("text", [
    case("not JSON", "{"),
    case("an unknown tag", '["pickle", "..."]'),
    case("a dataclass of a module that is not gangkit", '["dataclass", "os", "system", [["x", ["str", "id"]]]]'),
])
def test_answer_data_that_is_not_an_answer_is_refused_or_harmless(text):
    try:
        value = decode(text)
    except AnswerError:
        return
    assert not callable(value)


def test_an_answer_too_large_to_grade_is_refused_in_the_kernel():
    with pytest.raises(ValueError, match="too large"):
        _through_kernel_encoding(list(range(300_000)))


# --- the reports -----------------------------------------------------------------------------------------------

def _mark(learner, exercise, status, message="", lesson="00", notebook=None):
    return Mark(notebook or f"{learner}-{lesson}.ipynb", learner, lesson, exercise, "check", status, message)


def test_the_gradebook_has_a_row_per_learner_and_points_and_status_per_exercise():
    marks = [_mark("anna", "0.1", "passed"), _mark("anna", "8.1", "wrong", lesson="08"),
             _mark("anna", "8.3", "manual", lesson="08"), _mark("ben", "0.1", "tampered")]
    rows = list(csv.DictReader(io.StringIO(gradebook_csv(marks))))
    assert [r["learner"] for r in rows] == ["anna", "ben"]
    anna, ben = rows
    assert (anna["0.1 points"], anna["0.1 status"], anna["8.3 points"], anna["8.3 status"]) == ("1", "passed", "", "manual")
    assert (anna["total"], anna["possible"]) == ("1", "2")
    assert (ben["0.1 status"], ben["8.1 status"], ben["total"]) == ("tampered", "", "0")


def test_no_learner_text_can_forge_a_row_a_formula_or_a_terminal_escape():
    evil = "x\n\"forged\",1,passed\r\n=HYPERLINK(\"http://e\")\x1b[2J\x00"
    marks = [_mark("=cmd|calc", "0.1", "error", evil)]
    text = gradebook_csv(marks)
    rows = list(csv.reader(io.StringIO(text)))
    assert len(rows) == 2 and rows[1][0] == "'=cmd|calc"
    assert "\x1b" not in table(marks) and "\x00" not in table(marks)
    ET.fromstring(junit_xml([_mark("a", "0.1", "error", clean(evil))]))
    assert json.loads(to_json(marks))["exercises"][0]["points"] == 0


def test_junit_is_well_formed_and_counts_a_written_answer_as_skipped():
    suite = ET.fromstring(junit_xml([_mark("a", "8.1", "passed", lesson="08"),
                                     _mark("a", "8.3", "manual", lesson="08")])).find("testsuite")
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("2", "0", "1")


LEARNERS = [
    case("the file name without the lesson", "anna-00.ipynb", None, "anna"),
    case("the lesson's own name in a learner's folder", "anna/00_welcome.ipynb", None, "anna"),
    case("the id in the notebook's metadata", "submission.ipynb", "s1234", "s1234"),
]


@pytest.mark.parametrize("name, given, learner", LEARNERS)
def test_each_submission_names_its_learner(name, given, learner):
    from gangkit.grading.report import learner_of

    metadata = {"gangkit": {"learner": given}} if given else {}
    assert learner_of(Path("/submissions") / name, metadata, "00") == learner


# --- the command line ------------------------------------------------------------------------------------------

@pytest.mark.exercise_run
@needs_sandbox
def test_the_command_line_grades_in_parallel_and_writes_every_report(tmp_path, capsys):
    right = submission(tmp_path, "anna", answer="answer = 3")
    wrong = submission(tmp_path, "ben", answer="answer = 2")
    junit, book = tmp_path / "grades.xml", tmp_path / "book.csv"
    args = ["grade", str(right), str(wrong), "--jobs", "2", "--junit", str(junit), "--csv", str(book),
            "--cell-timeout", "60"]
    assert main(args) == 1
    assert "1 of 2 exercises passed (1 wrong)" in capsys.readouterr().out
    assert [r["0.1 status"] for r in csv.DictReader(book.open())] == ["passed", "wrong"]
    assert main(args) == 2 and "pass --force" in capsys.readouterr().err
    assert main(["grade", str(right), "--json", "--force", "--csv", str(book)]) == 0
    assert json.loads(capsys.readouterr().out)["summary"] == {"passed": 1}


REFUSED = [
    case("a missing notebook", ["{tmp}/nowhere.ipynb"], "not found"),
    case("a report over a symbolic link", ["{nb}", "--csv", "{tmp}/link.csv"], "symbolic link"),
    case("a report into a missing folder", ["{nb}", "--junit", "{tmp}/no/such/grades.xml"], "does not exist"),
    case("an empty report name", ["{nb}", "--csv", ""], "expected a file name"),
]


@pytest.mark.parametrize("args, words", REFUSED)
def test_the_command_line_refuses_bad_arguments_before_running_anything(tmp_path, capsys, args, words):
    nb = submission(tmp_path, "anna")
    (tmp_path / "link.csv").symlink_to(tmp_path / "nowhere.csv")
    assert main(["grade", *[a.format(tmp=tmp_path, nb=nb) for a in args]]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and words in err and not (tmp_path / "nowhere.csv").exists()


def test_without_a_sandbox_the_grader_refuses_unless_told(tmp_path, capsys, monkeypatch):
    from gangkit.grading import sandbox

    monkeypatch.setattr(sandbox, "available", lambda: "bubblewrap (bwrap) is not installed")
    monkeypatch.setattr("gangkit.grading.report.available", sandbox.available)
    assert main(["grade", str(submission(tmp_path, "anna"))]) == 2
    err = capsys.readouterr().err
    assert "bubblewrap (bwrap) is not installed" in err and "--no-sandbox" in err


@pytest.mark.exercise_run
def test_without_a_sandbox_the_grader_still_judges_in_its_own_interpreter(tmp_path):
    forged = submission(tmp_path, "anna", before=["def check_00_jobs_finished(answer):\n    return True"],
                        answer="answer = 2")
    [mark] = grade([forged], LIMITS, sandbox=False)
    assert mark.status == "wrong"


@pytest.mark.exercise_run
@needs_sandbox
@pytest.mark.parametrize("folder, status", [("exercises", "not done"), ("solutions", "passed")])
def test_the_generated_exercises_are_not_done_and_the_solutions_pass(folder, status):
    paths = sorted((REPO / folder).glob("*.ipynb"))
    marks = grade(paths, Limits(cell_timeout=300, timeout=1200, memory_mib=8192), jobs=2)
    checked = [m for m in marks if m.status != "manual"]
    assert {m.exercise for m in checked} == {e for p in paths for e, _ in checks_of(p.name[:2])}
    assert {m.status for m in checked} == {status}, table(marks)
    assert [m.exercise for m in marks if m.status == "manual"] == ["8.3"]
