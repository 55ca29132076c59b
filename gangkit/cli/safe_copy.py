"""Writing into the learner's working folder safely: never through a link, each file replaced whole.

``gangkit course`` copies the reference notebooks into a folder the learner owns
(:mod:`gangkit.cli.course`). That folder is theirs, so the copy must not surprise them:

- before anything is written, every path from the folder down to each course file is checked
  (:func:`refuse_links`): a symbolic link anywhere on the way, or a file where a folder should be,
  stops the copy with an error naming it, because writing through a link would change the file it
  points to (perhaps the reference copy itself);
- the folder is created if needed and must take a new file (:func:`prepare_folder`), so a read-only
  folder is refused before any copy, not halfway through;
- each file is written to a fresh file beside its target that then replaces it (:func:`copy_file`,
  ``os.replace``), so a link made after the check is replaced, never written through, and an
  interrupted copy leaves no half-written notebook.

Every refusal is a :class:`CourseError` whose message names the path and what was expected.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path

__all__ = ["CourseError", "cannot_write", "check_writable", "copy_file", "prepare_folder", "refuse_links"]


class CourseError(ValueError):
    """The course cannot be copied or opened as asked; the message names the path or argument and what was expected."""


def cannot_write(exc: OSError, path: Path, doing: str = "write there") -> CourseError:
    """The error for an operating-system refusal (a read-only folder, a full disk) to ``doing`` at ``path``."""
    return CourseError(
        f"{path}: cannot {doing} ({exc.strerror or exc}); expected a working folder you can "
        "write to (choose another with --dir)"
    )


def check_writable(folder: Path) -> None:
    """Raise :class:`CourseError` unless a file can be created in ``folder`` (else no notebook could be saved)."""
    try:
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as exc:
        raise cannot_write(exc, folder) from exc


def prepare_folder(folder: Path) -> None:
    """Create the working folder ``folder`` (absolute) if needed; :class:`CourseError` if it cannot be one."""
    existing = folder
    while not os.path.lexists(existing) and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        if existing == folder:
            raise CourseError(f"{folder}: expected a folder for your copy of the course, got a file")
        raise CourseError(f"{existing}: expected a folder on the way to your working folder {folder}, got a file")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise cannot_write(exc, Path(exc.filename) if exc.filename else folder, "create the folder") from exc
    check_writable(folder)


def refuse_links(folder: Path, files: Sequence[Path]) -> None:
    """Raise :class:`CourseError` if any path from ``folder`` down to a course file is a symbolic link or of the wrong kind.

    Checked for every file before anything is written, so a refusal leaves the folder as it was.
    """
    seen: set[Path] = set()
    for rel in files:
        path = folder
        for depth, part in enumerate(rel.parts, start=1):
            path = path / part
            if path in seen:
                continue
            seen.add(path)
            if path.is_symlink():
                raise CourseError(
                    f"{path}: expected a plain {'file' if depth == len(rel.parts) else 'folder'} of the course, "
                    f"got a symbolic link (to {os.readlink(path)}); gangkit course never writes through a link: "
                    "move the link away, or choose another working folder with --dir"
                )
            if not path.exists():
                continue
            if depth < len(rel.parts) and not path.is_dir():
                raise CourseError(f"{path}: expected a folder of the course, got a file: move it away, or "
                                  "choose another working folder with --dir")
            if depth == len(rel.parts) and not path.is_file():
                raise CourseError(f"{path}: expected the course file {rel.as_posix()}, got "
                                  f"{'a folder' if path.is_dir() else 'something else'}: move it away, or "
                                  "choose another working folder with --dir")


def copy_file(source: Path, target: Path) -> None:
    """Copy ``source`` to ``target`` through a fresh file beside it that then replaces ``target``.

    ``os.replace`` swaps the directory entry itself, so even a link made at ``target`` after
    :func:`refuse_links` looked is replaced, never written through.
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    temporary = target.with_name(f".{target.name}.{os.getpid()}.gangkit-copy")
    with contextlib.suppress(FileNotFoundError):
        os.unlink(temporary)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
    fd = os.open(temporary, flags, 0o666)
    try:
        with os.fdopen(fd, "wb") as out, open(source, "rb") as data:
            shutil.copyfileobj(data, out)
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
