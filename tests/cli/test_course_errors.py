"""A working folder or home folder that cannot take the course is one line `error: ...`, never a traceback; no link is written through."""

from __future__ import annotations

import argparse
import errno
import importlib.util
import os
import stat
import tempfile
from pathlib import Path

import nbformat
import pytest

from gangkit.cli import course

from conftest import case


@pytest.fixture
def checkout(tmp_path, monkeypatch):
    """A small fake source checkout: two lessons, one exercise, one reference page."""
    root = tmp_path / "repo"
    for path in ("course/00_welcome.ipynb", "course/01_deadlock.ipynb", "exercises/01_deadlock.ipynb"):
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nbformat.v4.new_notebook(), root / path)
    (root / "docs").mkdir()
    (root / "docs" / "kueue.md").write_text("# Kueue\n")
    monkeypatch.setattr(course, "REPO_ROOT", root)
    return root


def _gangkit_course(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="gangkit")
    course.add_course_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["course", *argv])
    return args.func(args)


def _read_only(path: Path) -> Path:
    """Make ``path`` (a folder) read-only; skip when this process may write there anyway (root)."""
    path.chmod(stat.S_IRUSR | stat.S_IXUSR)
    probe = path / ".probe"
    try:
        probe.write_text("")
    except OSError:
        return path
    probe.unlink()
    path.chmod(stat.S_IRWXU)
    pytest.skip("this process may write to read-only folders (root)")


# Each setup gets the test's folder and returns the folder to pass to --dir.
def dir_is_a_file(tmp):
    (tmp / "notes.txt").write_text("mine")
    return tmp / "notes.txt"


def dir_is_under_a_file(tmp):
    (tmp / "notes.txt").write_text("mine")
    return tmp / "notes.txt" / "work"


def course_folder_is_a_file(tmp):
    (tmp / "work").mkdir()
    (tmp / "work" / "course").write_text("mine")
    return tmp / "work"


def course_file_is_a_folder(tmp):
    (tmp / "work" / "course" / "00_welcome.ipynb").mkdir(parents=True)
    return tmp / "work"


def parent_is_read_only(tmp):
    (tmp / "shelf").mkdir()
    _read_only(tmp / "shelf")
    return tmp / "shelf" / "work"


def copy_is_read_only(tmp):
    work = tmp / "work"
    course.copy_course(work)
    (work / "course" / "00_welcome.ipynb").unlink()
    _read_only(work / "course")
    return work


def up_to_date_copy_is_read_only(tmp):
    work = tmp / "work"
    course.copy_course(work)
    _read_only(work)
    return work


def file_system_is_read_only(tmp, monkeypatch):
    def refuse(*args, **kwargs):
        raise OSError(errno.EROFS, os.strerror(errno.EROFS))

    monkeypatch.setattr(tempfile, "TemporaryFile", refuse)
    return tmp / "work"


def dangling_link_at_a_lesson(tmp):
    (tmp / "work" / "course").mkdir(parents=True)
    (tmp / "work" / "course" / "00_welcome.ipynb").symlink_to(tmp / "elsewhere" / "lesson.ipynb")
    return tmp / "work"


def link_to_another_file(tmp):
    (tmp / "work" / "exercises").mkdir(parents=True)
    (tmp / "elsewhere").mkdir()
    (tmp / "elsewhere" / "lesson.ipynb").write_text("not the course")
    (tmp / "work" / "exercises" / "01_deadlock.ipynb").symlink_to(tmp / "elsewhere" / "lesson.ipynb")
    return tmp / "work"


def link_at_a_folder(tmp):
    (tmp / "work").mkdir()
    (tmp / "elsewhere").mkdir()
    (tmp / "work" / "docs").symlink_to(tmp / "elsewhere", target_is_directory=True)
    return tmp / "work"


#: Each row: the setup; extra arguments; the path the error names (relative to the test's folder); what it says.
FOLDERS = [
    case("--dir naming a file", dir_is_a_file, [], "notes.txt", "expected a folder for your copy of the course, got a file"),
    case("--dir under a file", dir_is_under_a_file, [], "notes.txt", "expected a folder on the way to your working folder"),
    case("a file where the course/ folder goes", course_folder_is_a_file, [], "work/course",
         "expected a folder of the course, got a file"),
    case("a folder where a lesson goes", course_file_is_a_folder, [], "work/course/00_welcome.ipynb",
         "expected the course file course/00_welcome.ipynb, got a folder"),
    case("a working folder in a read-only folder", parent_is_read_only, [], "shelf/work",
         "cannot create the folder (Permission denied); expected a working folder you can write to"),
    case("a read-only course/ in an existing copy", copy_is_read_only, [], "work/course",
         "cannot write there (Permission denied); expected a working folder you can write to"),
    case("a read-only copy with nothing to copy (no notebook could be saved)", up_to_date_copy_is_read_only, [], "work",
         "cannot write there (Permission denied); expected a working folder you can write to"),
    case("a read-only file system", file_system_is_read_only, [], "work",
         "cannot write there (Read-only file system); expected a working folder you can write to"),
    case("a dangling link at a lesson is not written through", dangling_link_at_a_lesson, [],
         "work/course/00_welcome.ipynb", "expected a plain file of the course, got a symbolic link (to "),
    case("a link to another file is not overwritten through", link_to_another_file, ["--overwrite"],
         "work/exercises/01_deadlock.ipynb", "expected a plain file of the course, got a symbolic link (to "),
    case("a link at docs/ is not written through", link_at_a_folder, [], "work/docs",
         "expected a plain folder of the course, got a symbolic link (to "),
]


@pytest.mark.parametrize("setup, extra, named, says", FOLDERS)
def test_a_folder_that_cannot_take_the_course_is_one_error_line(checkout, tmp_path, monkeypatch, capsys, setup, extra,
                                                                 named, says):
    tmp = tmp_path / "t"
    tmp.mkdir()
    try:
        folder = setup(tmp, monkeypatch) if setup is file_system_is_read_only else setup(tmp)
    except (NotImplementedError, OSError) as exc:  # no symbolic links here
        pytest.skip(f"cannot set up: {exc}")
    before = sorted(p.relative_to(tmp).as_posix() for p in tmp.rglob("*"))
    contents = {p: p.read_bytes() for p in tmp.rglob("*") if p.is_file() and not p.is_symlink()}
    capsys.readouterr()
    try:
        assert _gangkit_course(["--dir", str(folder), "--no-launch", *extra]) == 1
    finally:
        for path in tmp.rglob("*"):
            if path.is_dir() and not path.is_symlink():
                path.chmod(stat.S_IRWXU)
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"error: {tmp / named}: ") and says in err, err
    if "symbolic link" in says:  # refused before anything was copied; the link and its target untouched
        assert sorted(p.relative_to(tmp).as_posix() for p in tmp.rglob("*")) == before
        assert {p: p.read_bytes() for p in contents} == contents


#: Each row: how the home folder is unusable; the Jupyter folder the error names (relative to it); its variable.
HOMES = [
    case("a home folder that is a file", "file", ".local/share/jupyter", "JUPYTER_DATA_DIR"),
    case("a read-only home folder", "read-only", ".local/share/jupyter", "JUPYTER_DATA_DIR"),
    case("a runtime folder set where nobody can write", "runtime in a file", "notes.txt/runtime", "JUPYTER_RUNTIME_DIR"),
]


@pytest.mark.parametrize("how, named, variable", HOMES)
def test_a_home_folder_jupyterlab_cannot_write_is_one_error_line(checkout, tmp_path, monkeypatch, capsys, how, named,
                                                                 variable):
    """JupyterLab writes its data and runtime folders under the home folder as it starts; without them it ends in a traceback."""
    if importlib.util.find_spec("jupyterlab") is None:
        pytest.skip("JupyterLab is not installed")
    home = tmp_path / "home"
    if how == "file":
        home.write_text("not a folder")
    else:
        home.mkdir()
    if how == "read-only":
        _read_only(home)
    if how == "runtime in a file":
        (home / "notes.txt").write_text("mine")
        monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(home / "notes.txt" / "runtime"))
    else:
        monkeypatch.delenv("JUPYTER_RUNTIME_DIR", raising=False)
    monkeypatch.setenv("HOME", str(home))
    for name in ("JUPYTER_DATA_DIR", "XDG_DATA_HOME", "JUPYTER_PLATFORM_DIRS"):
        monkeypatch.delenv(name, raising=False)
    started = []
    monkeypatch.setattr(course.subprocess, "Popen", lambda *a, **k: started.append(a))
    try:
        status = _gangkit_course(["--dir", str(tmp_path / "work")])
    finally:
        if home.is_dir():
            home.chmod(stat.S_IRWXU)
    err = capsys.readouterr().err
    assert status == 1 and started == []
    assert err.count("\n") == 1 and err.startswith(f"error: {home / named}: JupyterLab cannot write its files there")
    assert f"set {variable} to a folder you can write to" in err
