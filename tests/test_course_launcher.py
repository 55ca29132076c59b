"""`gangkit course` copies the notebooks into a working folder and never loses a learner's edits."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import nbformat
import pytest

from gangkit.cli import course


def _notebook(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    nb = nbformat.v4.new_notebook()
    nb.cells.append(nbformat.v4.new_markdown_cell(text))
    nbformat.write(nb, path)


@pytest.fixture
def checkout(tmp_path, monkeypatch):
    """A small fake source checkout with two lessons and one exercise."""
    root = tmp_path / "repo"
    _notebook(root / "course" / "00_welcome.ipynb", "welcome")
    _notebook(root / "course" / "01_deadlock.ipynb", "lesson one")
    _notebook(root / "course" / ".ipynb_checkpoints" / "01_deadlock-checkpoint.ipynb", "old")
    _notebook(root / "exercises" / "01_deadlock.ipynb", "exercise one")
    monkeypatch.setattr(course, "REPO_ROOT", root)
    return root


def test_copies_course_and_exercises(checkout, tmp_path, capsys):
    folder = course.open_course(tmp_path / "work", launch=False)
    assert folder == tmp_path / "work"
    copied = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*.ipynb"))
    assert copied == [
        "course/00_welcome.ipynb",
        "course/01_deadlock.ipynb",
        "exercises/01_deadlock.ipynb",
    ]
    assert (folder / "exercises/01_deadlock.ipynb").read_bytes() == (
        checkout / "exercises/01_deadlock.ipynb"
    ).read_bytes()
    assert "copied  course/00_welcome.ipynb" in capsys.readouterr().out


def test_default_folder_is_my_course_in_the_checkout(checkout):
    assert course.open_course(launch=False) == checkout / "my-course"
    assert (checkout / "my-course" / "course" / "00_welcome.ipynb").is_file()


def test_keeps_an_edited_notebook_unless_overwrite(checkout, tmp_path, capsys):
    work = tmp_path / "work"
    course.open_course(work, launch=False)
    mine = work / "course" / "01_deadlock.ipynb"
    _notebook(mine, "my notes")
    (work / "course" / "00_welcome.ipynb").unlink()
    capsys.readouterr()

    course.open_course(work, launch=False)
    out = capsys.readouterr().out
    assert "my notes" in mine.read_text()
    assert "kept    course/01_deadlock.ipynb" in out
    assert "copied  course/00_welcome.ipynb" in out  # a missing one comes back
    assert "up to date" in out

    course.open_course(work, launch=False, overwrite=True)
    assert "my notes" not in mine.read_text()
    assert mine.read_bytes() == (checkout / "course" / "01_deadlock.ipynb").read_bytes()


def test_missing_course_says_it_ships_with_the_checkout(tmp_path, monkeypatch):
    monkeypatch.setattr(course, "REPO_ROOT", tmp_path / "site-packages")
    with pytest.raises(course.CourseNotFoundError, match="source checkout"):
        course.open_course(tmp_path / "work", launch=False)


def test_refuses_to_copy_onto_the_course_itself(checkout):
    with pytest.raises(ValueError, match="overlap"):
        course.open_course(checkout, launch=False)


def test_launch_runs_jupyterlab_in_the_folder(checkout, tmp_path, monkeypatch):
    calls = []

    class FakePopen:
        def __init__(self, cmd, cwd):
            calls.append((cmd, Path(cwd)))

        def wait(self):
            return 0

    monkeypatch.setattr(course.subprocess, "Popen", FakePopen)
    monkeypatch.setattr(course.os, "geteuid", lambda: 1000, raising=False)
    course.open_course(tmp_path / "work", lab_args=["--port", "8890"])
    assert calls == [
        ([sys.executable, "-m", "jupyterlab", "--port", "8890"], tmp_path / "work")
    ]
    calls.clear()
    course.open_course(tmp_path / "work")
    assert calls[0][0][-1] == "course/00_welcome.ipynb"  # opens on the first lesson

    calls.clear()
    monkeypatch.setattr(course.os, "geteuid", lambda: 0, raising=False)
    course.open_course(tmp_path / "work")
    assert calls[0][0][-2:] == ["course/00_welcome.ipynb", "--allow-root"]


def test_course_subcommand(checkout, tmp_path, monkeypatch):
    parser = argparse.ArgumentParser(prog="gangkit")
    course.add_course_parser(parser.add_subparsers(dest="command"))

    args = parser.parse_args(["course", "--dir", str(tmp_path / "w"), "--no-launch"])
    assert args.func(args) == 0
    assert (tmp_path / "w" / "course" / "01_deadlock.ipynb").is_file()

    launched = []
    monkeypatch.setattr(course, "launch_lab", lambda folder, lab_args: launched.append(
        (folder, lab_args)) or 3)
    args = parser.parse_args(["course", "--dir", str(tmp_path / "w"), "--", "--port", "1"])
    assert args.func(args) == 3
    assert launched == [(tmp_path / "w", ["--port", "1"])]

    monkeypatch.setattr(course, "REPO_ROOT", tmp_path / "nothing-here")
    args = parser.parse_args(["course", "--no-launch", "--dir", str(tmp_path / "x")])
    assert args.func(args) == 1
