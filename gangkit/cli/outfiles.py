"""The files a command writes (``gangkit run --out DIR``, ``gangkit export --out FILE``): new ones, never through a link.

A command's output never replaces what is there by surprise: a file that
exists is refused unless ``--force`` says to replace it, and a symbolic link
(even one that points nowhere) is refused always, since writing through it
would change a file elsewhere, one the command line does not name. Each
refusal is one :class:`~gangkit.model.errors.Problem` naming the files, in
the words ``gangkit export`` has always used::

    File out.yaml: --out: exists; expected a new file (or --force to replace it)

The files are checked before the work (a long run is not wasted on an
output it may not write) and opened without following a link and, without
``--force``, only if they are still new (``O_NOFOLLOW``, ``O_EXCL``), so a
file or a link that appears in between is refused too.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

from gangkit.model.errors import Problem

__all__ = ["blocked", "open_new", "why_not"]


def blocked(paths: list[Path], force: bool) -> list[Problem]:
    """Why the command may not write ``paths``: links (always), then files that exist (without ``force``). One
    problem for all the files of each kind, naming them, so that the error is one line."""
    links = [p for p in paths if p.is_symlink()]
    there = [p for p in paths if not p.is_symlink() and p.exists()] if not force else []
    out = []
    if links:
        out.append(_link_problem(links))
    if there:
        names = ", ".join(str(p) for p in there)
        if len(there) == 1:
            out.append(Problem(f"File {names}", "--out", "exists; expected a new file (or --force to replace it)"))
        else:
            out.append(Problem(f"Files {names}", "--out", "exist; expected new files (or --force to replace them)"))
    return out


def _link_problem(links: list[Path]) -> Problem:
    shown = ", ".join(f"{p} (to {os.readlink(p)})" for p in links)
    what = "is a symbolic link" if len(links) == 1 else "are symbolic links"
    return Problem(f"File{'s' if len(links) > 1 else ''} {shown}", "--out", f"{what}; expected a regular file "
                   "(gangkit does not write through a link: remove it, or name another file)")


def open_new(path: Path, force: bool):
    """``path`` opened for writing text (UTF-8, ``\\n`` line ends): created new, or replaced with ``force``;
    never through a symbolic link. Raises :class:`OSError` (see :func:`why_not` for its message)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0) | (0 if force else os.O_EXCL)
    if path.is_symlink():  # (where O_NOFOLLOW does not exist)
        raise OSError(errno.ELOOP, "is a symbolic link", str(path))
    fd = os.open(path, flags, 0o666)
    return os.fdopen(fd, "w", encoding="utf-8", newline="")


def why_not(path: Path, e: OSError, force: bool) -> Problem:
    """The problem an :class:`OSError` of :func:`open_new` or of the write stands for."""
    if path.is_symlink():
        return _link_problem([path])
    if e.errno == errno.EEXIST and not force:
        return blocked([path], False)[0]
    return Problem(f"File {path}", "--out", f"cannot be written: {e.strerror or e}")
