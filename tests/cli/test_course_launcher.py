"""`gangkit course` copies the notebooks into a working folder and never loses a learner's edits."""

from __future__ import annotations

import argparse
import importlib.util
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


class FakePopen:
    """Stands in for ``subprocess.Popen``: records each command, its folder and its environment; exits 0."""

    calls: list = []

    def __init__(self, cmd, cwd, env=None, **kwargs):
        FakePopen.calls.append((cmd, Path(cwd), env))

    def wait(self, timeout=None):
        return 0


@pytest.fixture
def fake_lab(monkeypatch, tmp_path):
    """``launch_lab`` with a fake Popen, port 8899, token ``t0k3n`` and Jupyter's folders in ``tmp_path``."""
    FakePopen.calls = []
    monkeypatch.setattr(course.subprocess, "Popen", FakePopen)
    monkeypatch.setattr(course.os, "geteuid", lambda: 1000, raising=False)
    monkeypatch.setattr(course, "free_port", lambda: 8899)
    monkeypatch.setattr(course.secrets, "token_hex", lambda n: "t0k3n")
    monkeypatch.delenv("JUPYTER_TOKEN", raising=False)
    monkeypatch.setenv("JUPYTER_DATA_DIR", str(tmp_path / "jupyter-data"))
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path / "jupyter-runtime"))
    return FakePopen.calls


def test_launch_serves_the_working_folder_and_opens_the_first_lesson(checkout, tmp_path, monkeypatch, capsys, fake_lab):
    if importlib.util.find_spec("jupyterlab") is None:
        pytest.skip("JupyterLab is not installed")
    work = tmp_path / "work"
    course.open_course(work, lab_args=["--ServerApp.port=8890"])
    (cmd, cwd, env), = fake_lab
    assert cmd[:3] == [sys.executable, "-m", "jupyterlab"] and cwd == work
    assert f"--ServerApp.root_dir={work.resolve()}" in cmd  # the folder, not course/: exercises/ is visible
    assert "--LabApp.default_url=/lab/tree/course/00_welcome.ipynb" in cmd and "--LabApp.news_url=None" in cmd
    assert cmd[-1] == "--ServerApp.port=8890"  # the learner's own arguments come last and win
    assert not any(a.startswith("--ServerApp.port=8899") for a in cmd)  # given once: JupyterLab refuses twice
    assert not any(a.endswith(".ipynb") and not a.startswith("--") for a in cmd)  # no file argument
    assert env["JUPYTER_TOKEN"] == "t0k3n" and not any("t0k3n" in a for a in cmd)
    out = capsys.readouterr().out.splitlines()
    assert out[-3:] == [
        "Open http://localhost:8890/lab/tree/course/00_welcome.ipynb?token=t0k3n (your browser should open it by itself).",
        f"Lessons are in course/, exercises in exercises/ (the file browser on the left); your work stays in {work}.",
        "To stop: Ctrl-C in this terminal (save your notebooks first).",
    ]
    fake_lab.clear()
    monkeypatch.setattr(course.os, "geteuid", lambda: 0, raising=False)
    course.open_course(work)
    assert "--allow-root" in fake_lab[0][0]


def test_the_real_server_serves_lessons_and_exercises(tmp_path):
    """Start JupyterLab as `gangkit course` does (no browser) and ask its contents API for the folders."""
    pytest.importorskip("jupyterlab")
    import json
    import os
    import re
    import subprocess
    import time
    import urllib.request

    work = course.open_course(tmp_path / "work", launch=False)
    port, token = course.free_port(), "test-token"
    # As `gangkit course -- --port N` runs it: the learner's port replaces the launcher's (JupyterLab
    # refuses a setting given twice), and the token comes in the environment, not on the command line.
    cmd = course.lab_command(work, course.free_port(port + 1), None, ["--port", str(port)], open_browser=False)
    assert token not in " ".join(cmd)
    env = course.lab_environment(token, dict(os.environ, JUPYTER_DATA_DIR=str(tmp_path / "jupyter-data"),
                                              JUPYTER_RUNTIME_DIR=str(tmp_path / "jupyter-runtime")))
    proc = subprocess.Popen(cmd, cwd=work, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    base = f"http://127.0.0.1:{port}"

    def get(path: str):
        with urllib.request.urlopen(f"{base}{path}?token={token}", timeout=5) as r:
            return r.status, r.read().decode()

    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                status, body = get("/api/contents/exercises")
                break
            except OSError as exc:
                if proc.poll() is not None or time.monotonic() > deadline:
                    said = proc.stderr.read() if proc.poll() is not None else ""
                    raise AssertionError(f"JupyterLab did not answer: {said}") from exc
                time.sleep(0.5)
        names = sorted(item["name"] for item in json.loads(body)["content"])
        assert names == sorted(p.name for p in (course.REPO_ROOT / "exercises").glob("*.ipynb"))
        lessons = {item["name"] for item in json.loads(get("/api/contents/course")[1])["content"]}
        assert "00_welcome.ipynb" in lessons
        pages = {item["name"] for item in json.loads(get("/api/contents/docs/reference")[1])["content"]}
        assert "kueue.md" in pages  # the lessons link to the reference pages
        status, page = get("/lab/tree/course/00_welcome.ipynb")
        config = re.search(r'<script id="jupyter-config-data" type="application/json">(.*?)</script>', page, re.S)
        assert status == 200 and config is not None
        assert json.loads(config.group(1))["news"] == {"disabled": True}  # no news prompt for learners
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:  # pragma: no cover
            proc.kill()


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


def test_every_link_in_the_notebooks_resolves_in_the_working_folder(tmp_path):
    """A learner who follows any relative link of a lesson or an exercise in their copy finds the file."""
    import re

    work = course.open_course(tmp_path / "work", launch=False)
    notebooks = sorted(work.glob("course/*.ipynb")) + sorted(work.glob("exercises/*.ipynb"))
    assert notebooks
    broken, seen = [], 0
    for nb_path in notebooks:
        nb = nbformat.read(nb_path, as_version=4)
        for cell in nb.cells:
            if cell.cell_type != "markdown":
                continue
            for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", cell.source):
                if "://" in target:
                    continue
                seen += 1
                if not (nb_path.parent / target).exists():
                    broken.append(f"{nb_path.relative_to(work)}: {target}")
    assert seen >= 14 and not broken, broken
