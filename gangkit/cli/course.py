"""Open the course: copy the notebooks into your own working folder, then start JupyterLab.

Think of a library's reference copy of a workbook: it stays on the shelf, clean, and each reader
gets a photocopy to scribble on. The notebooks in ``course/`` (the lessons) and ``exercises/``
(generated from ``solutions/``) are the reference copies: CI runs them cell by cell and compares
every stored output with a fresh run, so nobody works in them directly. ``gangkit course`` makes
your photocopy:

1. it copies ``course/``, ``exercises/`` and ``docs/`` (the reference pages the lessons link to)
   into a working folder, by default ``my-course/`` at
   the top of the source checkout (git ignores that folder, so your edits never show up as
   changes to the course);
2. it never overwrites a notebook that is already there and differs from the reference copy
   (you may have worked in it): it says it *kept* it. Pass ``overwrite=True``
   (``--overwrite``) to start that notebook again from a clean copy. Lessons added since your
   last run (after a ``git pull``) are copied in;
3. it starts JupyterLab on that folder (its file browser shows ``course/`` and ``exercises/``),
   opens the first lesson, and prints the address, where things are and how to stop.

The working folder keeps the checkout's layout (``course/...`` next to ``exercises/...``), so the
link at the end of each lesson to ``../exercises/NN_slug.ipynb`` works in both places.

The course ships with the source checkout, not with an installed wheel: install gangkit with
``pip install -e .`` from a clone of the repository, as the README's first command does.
"""

from __future__ import annotations

import argparse
import filecmp
import importlib.util
import os
import secrets
import shutil
import socket
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

#: The top of the source checkout: the folder that holds the ``gangkit`` package.
REPO_ROOT = Path(__file__).resolve().parents[2]

#: The folders copied into the working folder, in this order (the lessons link to the reference pages in docs/).
COURSE_FOLDERS = ("course", "exercises", "docs")

#: Where the working copy goes when no folder is given (relative to :data:`REPO_ROOT`).
DEFAULT_FOLDER = "my-course"

# Things that are never part of the course, even if they sit in its folders.
_SKIP_PARTS = {".ipynb_checkpoints", "__pycache__"}


class CourseNotFoundError(FileNotFoundError):
    """The course notebooks are not next to the installed package.

    This happens when gangkit was installed from a wheel or an sdist instead of from a clone of
    its repository: the library ships alone, the course lives in the checkout.
    """


@dataclass
class CopyReport:
    """What :func:`copy_course` did with each file, as paths relative to the working folder."""

    copied: list[Path] = field(default_factory=list)
    kept: list[Path] = field(default_factory=list)
    unchanged: list[Path] = field(default_factory=list)


def course_files(root: Path | None = None) -> list[Path]:
    """Every file of the course under ``root`` (default: the checkout), relative to ``root``.

    That is each notebook (and any picture or small table beside it) in ``course/`` and
    ``exercises/``, and the reference pages in ``docs/``, without Jupyter's checkpoints. Raises :class:`CourseNotFoundError` if there
    is no lesson notebook in ``root/course``.
    """
    root = Path(root) if root is not None else REPO_ROOT
    lessons = sorted((root / "course").glob("*.ipynb"))
    if not lessons:
        raise CourseNotFoundError(
            f"no course notebooks found in {root / 'course'}. The course ships with the source "
            "checkout of gangkit, not with the installed package: clone the repository and "
            "install it from there with `pip install -e \".[lab]\"` (see README.md)."
        )
    files: list[Path] = []
    for name in COURSE_FOLDERS:
        folder = root / name
        if not folder.is_dir():
            continue
        for path in sorted(folder.rglob("*")):
            rel = path.relative_to(root)
            if path.is_file() and not _SKIP_PARTS.intersection(rel.parts) and path.suffix != ".pyc":
                files.append(rel)
    return files


def copy_course(folder: Path, *, overwrite: bool = False, root: Path | None = None) -> CopyReport:
    """Copy the course from ``root`` (default: the checkout) into ``folder``, keeping your work.

    A file missing from ``folder`` is copied; one identical to the reference copy is left alone;
    one that differs is *kept* unless ``overwrite`` is true. Prints one line per copied or kept
    file, and returns a :class:`CopyReport`.
    """
    root = (Path(root) if root is not None else REPO_ROOT).resolve()
    folder = Path(folder).resolve()
    for name in COURSE_FOLDERS:
        source = root / name
        if folder == root or folder == source or source in folder.parents:
            raise ValueError(
                f"the working folder {folder} would overlap the reference notebooks in {source}; "
                f"choose another folder (the default is {root / DEFAULT_FOLDER})"
            )
    report = CopyReport()
    for rel in course_files(root):
        source, target = root / rel, folder / rel
        if not target.exists():
            report.copied.append(rel)
        elif filecmp.cmp(source, target, shallow=False):
            report.unchanged.append(rel)
            continue
        elif overwrite:
            report.copied.append(rel)
        else:
            report.kept.append(rel)
            print(f"  kept    {rel.as_posix()}  (yours differs from the course; --overwrite replaces it)")
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
        print(f"  copied  {rel.as_posix()}")
    if report.unchanged:
        print(f"  ({len(report.unchanged)} file(s) already up to date)")
    return report


def free_port(start: int = 8888, tries: int = 50) -> int:
    """The first port from ``start`` on that nothing listens on at 127.0.0.1 (JupyterLab's default is 8888)."""
    for port in range(start, start + tries):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError(f"no free port between {start} and {start + tries - 1} on this machine")


def first_lesson(folder: Path) -> str | None:
    """The first lesson's path in the working folder, as Jupyter names it (``course/00_welcome.ipynb``)."""
    lessons = sorted((Path(folder) / "course").glob("*.ipynb"))
    return lessons[0].relative_to(folder).as_posix() if lessons else None


def lab_command(folder: Path, port: int, token: str, lab_args: Sequence[str] = (), *,
                open_browser: bool = True) -> list[str]:
    """The ``python -m jupyterlab`` command that serves the whole working folder and opens the first lesson.

    The server's root is the working folder itself (so the file browser shows ``course/`` and
    ``exercises/``, and a lesson's link to ``../exercises/...`` works); JupyterLab opens on the
    first lesson; its news prompt is off; the port and the token are fixed, so the address can be
    printed before the server starts. ``lab_args`` come last and win.
    """
    args = [f"--ServerApp.root_dir={Path(folder).resolve()}", f"--ServerApp.port={port}",
            "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}", "--LabApp.news_url=None"]
    lesson = first_lesson(folder)
    if lesson:
        args.append(f"--LabApp.default_url=/lab/tree/{lesson}")
    if not open_browser:
        args.append("--ServerApp.open_browser=False")
    if hasattr(os, "geteuid") and os.geteuid() == 0 and "--allow-root" not in lab_args:
        # JupyterLab refuses to start as root unless told; containers and lab VMs often are root.
        args.append("--allow-root")
    return [sys.executable, "-m", "jupyterlab", *args, *lab_args]


def launch_lab(folder: Path, lab_args: Sequence[str] = ()) -> int:
    """Run JupyterLab on the working folder with this Python; say where to go and how to stop; return its exit code.

    Ctrl-C goes to JupyterLab, which asks before it shuts down; this function waits until it
    has exited.
    """
    folder = Path(folder)
    if importlib.util.find_spec("jupyterlab") is None:
        raise RuntimeError(
            "JupyterLab is not installed in this environment; install the course extra with "
            "`pip install -c constraints.txt -e \".[lab]\"` from the top of the checkout"
        )
    port, token = free_port(), secrets.token_hex(16)
    cmd = lab_command(folder, port, token, lab_args)
    lesson = first_lesson(folder) or ""
    print(f"Open http://localhost:{port}/lab/tree/{lesson}?token={token} (your browser should open it by itself).")
    print(f"Lessons are in course/, exercises in exercises/ (the file browser on the left); your work stays in {folder}.")
    print("To stop: Ctrl-C in this terminal, then y (save your notebooks first).")
    try:
        proc = subprocess.Popen(cmd, cwd=folder)
    except OSError as exc:  # pragma: no cover - depends on the machine
        raise RuntimeError(f"could not start JupyterLab ({' '.join(cmd)}): {exc}") from exc
    while True:
        try:
            return proc.wait()
        except KeyboardInterrupt:
            # The same Ctrl-C reached JupyterLab, which asks and shuts down by itself.
            continue


def open_course(
    folder: str | Path = DEFAULT_FOLDER,
    *,
    launch: bool = True,
    overwrite: bool = False,
    lab_args: Sequence[str] = (),
) -> Path:
    """Copy the course into ``folder`` and, if ``launch``, open it in JupyterLab.

    ``folder`` is taken relative to the top of the source checkout, so the default lands in the
    git-ignored ``my-course/`` wherever you call this from. Existing notebooks that differ from
    the course are kept unless ``overwrite`` is true. ``lab_args`` go to ``jupyter lab`` as they
    are (for example ``["--port", "8890"]``). Returns the working folder.

    Raises :class:`CourseNotFoundError` when the course is not beside the package, and
    :class:`subprocess.CalledProcessError` when JupyterLab exits with an error.
    """
    folder = Path(folder).expanduser()
    if not folder.is_absolute():
        folder = REPO_ROOT / folder
    print(f"Your copy of the course: {folder}")
    copy_course(folder, overwrite=overwrite)
    if launch:
        cmd = [sys.executable, "-m", "jupyterlab", *lab_args]
        code = launch_lab(folder, lab_args)
        if code != 0:
            raise subprocess.CalledProcessError(code, cmd)
    return folder


def _course_command(args: argparse.Namespace) -> int:
    """The ``gangkit course`` handler: copy, then launch; returns the exit code."""
    lab_args = list(getattr(args, "lab_args", None) or [])
    if lab_args[:1] == ["--"]:
        lab_args = lab_args[1:]
    if getattr(args, "check", False):
        from gangkit.cli import preflight

        steps = preflight.run(REPO_ROOT)
        print(preflight.report(steps))
        return 0 if all(s.ok for s in steps) else 1
    # On the command line a relative --dir means relative to where you are, as usual.
    folder = Path(args.dir).expanduser().resolve() if args.dir else REPO_ROOT / DEFAULT_FOLDER
    try:
        open_course(folder, launch=False, overwrite=args.overwrite)
    except (CourseNotFoundError, ValueError) as exc:
        print(f"gangkit course: {exc}", file=sys.stderr)
        return 1
    if args.no_launch:
        print("Not starting JupyterLab (--no-launch).")
        return 0
    try:
        return launch_lab(folder, lab_args)
    except RuntimeError as exc:
        print(f"gangkit course: {exc}", file=sys.stderr)
        return 1


def add_course_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Register the ``course`` subcommand on ``subparsers``; its ``func`` returns an exit code."""
    parser = subparsers.add_parser(
        "course",
        help="copy the course notebooks into your working folder and open JupyterLab",
        description=(
            "Copy course/ and exercises/ into a working folder (default: my-course/ at the top "
            "of the checkout, ignored by git), keeping notebooks you have changed, then start "
            "JupyterLab there. Arguments after -- go to jupyter lab."
        ),
    )
    parser.add_argument(
        "--dir",
        metavar="DIR",
        default=None,
        help=f"working folder (default: {DEFAULT_FOLDER}/ at the top of the checkout)",
    )
    parser.add_argument(
        "--no-launch", action="store_true", help="only copy the notebooks; do not start JupyterLab"
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="check this machine before a session (Python, packages, a simulation, a notebook kernel); copy and start nothing",
    )
    parser.add_argument(
        "--overwrite",
        action="store_true",
        help="replace notebooks you have changed with clean copies from the course",
    )
    parser.add_argument(
        "lab_args",
        nargs=argparse.REMAINDER,
        metavar="-- LAB_ARGS",
        help="extra arguments for jupyter lab, after --, e.g. -- --port 8890",
    )
    parser.set_defaults(func=_course_command)
    return parser
