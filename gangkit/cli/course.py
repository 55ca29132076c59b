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
   last run (after a ``git pull``) are copied in. It never writes through a symbolic link: a link
   anywhere on the way to a course file (a file, or a folder such as ``course/``) stops it with an
   error naming the link, before anything is copied, because writing through it would change the
   file it points to (perhaps the reference copy itself), and replacing it would undo a choice you
   made (how the copy stays safe: :mod:`gangkit.cli.safe_copy`);
3. it starts JupyterLab on that folder (its file browser shows ``course/`` and ``exercises/``),
   opens the first lesson, and prints the address, where things are and how to stop.

The working folder keeps the checkout's layout (``course/...`` next to ``exercises/...``), so the
link at the end of each lesson to ``../exercises/NN_slug.ipynb`` works in both places.

JupyterLab's login token goes to it in the environment variable ``JUPYTER_TOKEN`` (which
jupyter_server 2 reads in ``IdentityProvider._token_default``, ``jupyter_server/auth/identity.py``),
never on its command line, which every user of the machine can read in the process list. Arguments
after ``--`` go to JupyterLab and win over the launcher's own settings (``-- --port 8890`` serves on
8890, and the printed address says so). JupyterLab runs in its own session: Ctrl-C, ``SIGTERM`` or
``SIGHUP`` reach ``gangkit``, which asks JupyterLab to stop (``SIGTERM``: it shuts its kernels down
and exits), waits up to :data:`STOP_GRACE_SECONDS`, then kills it.

The course ships with the source checkout, not with an installed wheel: install gangkit with
``pip install -e .`` from a clone of the repository, as the README's first command does.
"""

from __future__ import annotations

import argparse
import contextlib
import filecmp
import importlib.util
import os
import secrets
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from gangkit.cli.safe_copy import CourseError, cannot_write, check_writable, copy_file, prepare_folder, refuse_links

#: The top of the source checkout: the folder that holds the ``gangkit`` package.
REPO_ROOT = Path(__file__).resolve().parents[2]

#: The folders copied into the working folder, in this order (the lessons link to the reference pages in docs/).
COURSE_FOLDERS = ("course", "exercises", "docs")

#: The folders of the working copy in which the learner saves notebooks: they must be writable.
WORK_FOLDERS = ("course", "exercises")

#: Where the working copy goes when no folder is given (relative to :data:`REPO_ROOT`).
DEFAULT_FOLDER = "my-course"

#: Seconds JupyterLab gets to shut its kernels down and exit once asked to stop, before it is killed.
STOP_GRACE_SECONDS = 20.0

# Things that are never part of the course, even if they sit in its folders.
_SKIP_PARTS = {".ipynb_checkpoints", "__pycache__"}

# The signals on which gangkit stops JupyterLab (SIGHUP: the terminal closed; not on Windows).
_STOP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))

# The spellings, after ``--``, of the JupyterLab settings the launcher sets or reads: the full
# ``Class.trait`` name and the short alias jupyter_server 2 defines for it (``aliases`` in
# ``jupyter_server/serverapp.py``). Giving one setting twice makes JupyterLab refuse to start
# ("port only accepts one value"), so the launcher leaves out its own value of any setting you give.
_PORT = ("ServerApp.port", "port")
_PORT_RETRIES = ("ServerApp.port_retries", "port-retries")
_ROOT_DIR = ("ServerApp.root_dir", "notebook-dir", "ServerApp.notebook_dir")
_TOKEN = ("IdentityProvider.token", "ServerApp.token")
_IP = ("ServerApp.ip", "ip")
_BASE_URL = ("ServerApp.base_url",)
_CERTFILE = ("ServerApp.certfile", "certfile")
_SOCK = ("ServerApp.sock", "sock")
_DEFAULT_URL = ("LabApp.default_url",)
_NEWS_URL = ("LabApp.news_url",)
_OPEN_BROWSER = ("ServerApp.open_browser",)


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

    Raises :class:`CourseError` (naming the path and what was expected) when ``folder`` overlaps
    the course, is a file, cannot be written, or holds a symbolic link on the way to a course file
    (checked before anything is copied).
    """
    root = (Path(root) if root is not None else REPO_ROOT).resolve()
    folder = Path(folder).resolve()
    for name in COURSE_FOLDERS:
        source = root / name
        if folder == root or folder == source or source in folder.parents:
            raise CourseError(
                f"the working folder {folder} would overlap the reference notebooks in {source}; "
                f"choose another folder (the default is {root / DEFAULT_FOLDER})"
            )
    files = course_files(root)
    prepare_folder(folder)
    refuse_links(folder, files)
    report = CopyReport()
    for rel in files:
        source, target = root / rel, folder / rel
        if not target.exists():
            report.copied.append(rel)
        else:
            try:
                same = filecmp.cmp(source, target, shallow=False)
            except OSError as exc:
                raise cannot_write(exc, target, "read it") from exc
            if same:
                report.unchanged.append(rel)
                continue
            if not overwrite:
                report.kept.append(rel)
                print(f"  kept    {rel.as_posix()}  (yours differs from the course; --overwrite replaces it)")
                continue
            report.copied.append(rel)
        try:
            copy_file(source, target)
        except OSError as exc:
            where = target.parent  # the folder that refused the new file (or the first of those to create)
            while not where.exists() and where != folder:
                where = where.parent
            raise cannot_write(exc, where) from exc
        print(f"  copied  {rel.as_posix()}")
    for name in WORK_FOLDERS:
        if (folder / name).is_dir():
            check_writable(folder / name)
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


def given_setting(lab_args: Sequence[str], names: Sequence[str]) -> str | None:
    """The value that ``lab_args`` (JupyterLab's arguments) give a setting under any of ``names``, else ``None``.

    Reads the forms JupyterLab's command line accepts (traitlets 5): ``--Class.trait=value``,
    ``--Class.trait value`` and the same with an alias (``--port 8890``), up to a bare ``--``.
    """
    args = list(lab_args)
    value = None
    for i, arg in enumerate(args):
        if arg == "--":
            break
        if not arg.startswith("--"):
            continue
        key, eq, rest = arg[2:].partition("=")
        if key in names:
            value = rest if eq else (args[i + 1] if i + 1 < len(args) else "")
    return value


def given_port(lab_args: Sequence[str]) -> int | None:
    """The port that ``lab_args`` ask for (``--port 8890``, ``--ServerApp.port=8890``), else ``None``.

    Raises :class:`CourseError` when the value is not a port number (0 to 65535).
    """
    value = given_setting(lab_args, _PORT)
    if value is None:
        return None
    try:
        port = int(value)
    except ValueError:
        port = -1
    if not 0 <= port <= 65535:
        raise CourseError(f"--port {value!r} (after --): expected a port number from 0 to 65535")
    return port


def lab_command(folder: Path, port: int, token: str | None = None, lab_args: Sequence[str] = (), *,
                open_browser: bool = True) -> list[str]:
    """The ``python -m jupyterlab`` command that serves the whole working folder and opens the first lesson.

    The server's root is the working folder itself (so the file browser shows ``course/`` and
    ``exercises/``, and a lesson's link to ``../exercises/...`` works); JupyterLab opens on the
    first lesson; its news prompt is off; the port is fixed (no retries on another), so the address
    can be printed before the server starts. ``lab_args`` come last, and the launcher leaves out
    each of its own settings that they give (JupyterLab refuses a setting given twice).

    ``token`` is left out of the command unless given: ``gangkit course`` passes its token in the
    environment (:func:`lab_environment`), since a command line is visible to every user of the
    machine. Give it only where that does not matter (a test on a private machine).
    """
    ours = [(_ROOT_DIR, f"--ServerApp.root_dir={Path(folder).resolve()}"), (_PORT, f"--ServerApp.port={port}"),
            (_PORT_RETRIES, "--ServerApp.port_retries=0"), (_NEWS_URL, "--LabApp.news_url=None")]
    if token is not None:
        ours.append((_TOKEN, f"--IdentityProvider.token={token}"))
    lesson = first_lesson(folder)
    if lesson:
        ours.append((_DEFAULT_URL, f"--LabApp.default_url=/lab/tree/{lesson}"))
    if not open_browser:
        ours.append((_OPEN_BROWSER, "--ServerApp.open_browser=False"))
    args = [arg for names, arg in ours if given_setting(lab_args, names) is None]
    if hasattr(os, "geteuid") and os.geteuid() == 0 and "--allow-root" not in lab_args:
        # JupyterLab refuses to start as root unless told; containers and lab VMs often are root.
        args.append("--allow-root")
    return [sys.executable, "-m", "jupyterlab", *args, *lab_args]


def lab_environment(token: str, environ: dict[str, str] | None = None) -> dict[str, str]:
    """JupyterLab's environment: ``environ`` (default: this process's) with ``JUPYTER_TOKEN`` set to ``token``.

    jupyter_server 2 takes its token from ``JUPYTER_TOKEN`` when no ``--IdentityProvider.token``
    is given (``IdentityProvider._token_default``). A process's environment is readable only by its
    own user, unlike its command line.
    """
    env = dict(os.environ if environ is None else environ)
    env["JUPYTER_TOKEN"] = token
    return env


def lab_address(port: int, token: str, lesson: str, lab_args: Sequence[str] = ()) -> str | None:
    """The address of ``lesson`` in the JupyterLab that :func:`lab_command` starts, with ``lab_args`` taken into account.

    The host, port, path prefix, scheme and token are those ``lab_args`` give, if they do
    (``--port``, ``--ip``, ``--ServerApp.base_url``, ``--certfile``, ``--IdentityProvider.token``);
    ``None`` when only JupyterLab can tell (a Unix socket, or port 0: any free port).
    """
    if given_setting(lab_args, _SOCK) or port == 0:
        return None
    ip = given_setting(lab_args, _IP)
    host = "localhost" if ip in (None, "", "0.0.0.0", "::", "*") else ip
    if ":" in host:
        host = f"[{host}]"
    scheme = "https" if given_setting(lab_args, _CERTFILE) else "http"
    prefix = (given_setting(lab_args, _BASE_URL) or "").strip("/")
    path = f"/{prefix}/" if prefix else "/"
    theirs = given_setting(lab_args, _TOKEN)
    token = theirs if theirs is not None else token
    return f"{scheme}://{host}:{port}{path}lab/tree/{lesson}" + (f"?token={token}" if token else "")


def check_jupyter_dirs() -> None:
    """Raise :class:`CourseError` unless JupyterLab can write its data and runtime folders (under the home folder
    by default; see :func:`gangkit.cli.preflight.jupyter_dirs_problem`)."""
    from gangkit.cli.preflight import jupyter_dirs_problem

    problem = jupyter_dirs_problem()
    if problem:
        raise CourseError(problem)


class _Stop(BaseException):
    """Raised in the main thread by a stop signal, to leave ``Popen.wait``."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


def _say(text: str) -> None:
    """Print ``text`` to stderr, unless the terminal is gone (after SIGHUP)."""
    with contextlib.suppress(OSError, ValueError):
        print(text, file=sys.stderr, flush=True)


def run_lab(cmd: Sequence[str], cwd: Path, env: dict[str, str] | None = None, *,
            grace: float = STOP_GRACE_SECONDS) -> int:
    """Run the server command ``cmd`` until it exits or this process gets SIGINT, SIGTERM or SIGHUP; return an exit status.

    The server runs in a session of its own, with no input, so the terminal's signals (Ctrl-C, or
    SIGHUP when the terminal closes) reach this process only, as ``kill`` does. On any of the three
    this process sends the server ``SIGTERM`` (on which jupyter_server shuts its kernels down and
    exits: ``ServerApp._signal_stop`` in ``jupyter_server/serverapp.py``), waits up to ``grace``
    seconds, then kills it; a second signal kills it at once. A signal this process was started
    ignoring (SIGHUP under ``nohup``) stays ignored.

    Returns, after Ctrl-C (the way to stop the course), the server's exit status (0 when it stopped
    cleanly); after SIGTERM or SIGHUP, 128 plus that signal's number, as a shell reports a command
    such a signal ended; else the server's exit status. A server ended by a signal counts as 128
    plus its number, too.
    """
    received: list[int] = []
    armed = False  # whether a stop signal raises _Stop now; it disarms itself, so one signal raises once

    def on_signal(signum: int, frame: object) -> None:
        nonlocal armed
        received.append(signum)
        if armed:
            armed = False
            raise _Stop(signum)

    def wait(timeout: float | None, signals_before: int) -> int | None:
        """The server's exit status, or None if a stop signal beyond the first ``signals_before`` came first, or time ran out."""
        nonlocal armed
        try:
            try:
                armed = True
                if len(received) > signals_before:
                    raise _Stop(received[-1])
                return proc.wait(timeout)
            finally:
                armed = False  # a signal just before this line raises here, and is caught below
        except (_Stop, subprocess.TimeoutExpired):
            return None

    previous = {}
    if threading.current_thread() is threading.main_thread():
        for signum in _STOP_SIGNALS:
            if signal.getsignal(signum) is not signal.SIG_IGN:
                previous[signum] = signal.signal(signum, on_signal)
    try:
        try:
            proc = subprocess.Popen(list(cmd), cwd=cwd, env=env, stdin=subprocess.DEVNULL, start_new_session=True)
        except OSError as exc:
            raise RuntimeError(f"could not start JupyterLab ({' '.join(cmd)}): {exc}") from exc
        code = wait(None, 0)
        if code is not None:
            return 128 - code if code < 0 else code
        first = received[0]
        _say(f"gangkit: {signal.Signals(first).name}: stopping JupyterLab (it has {grace:g} s to shut its kernels down)")
        proc.terminate()
        code = wait(grace, 1)
        if code is None:
            _say("gangkit: killing JupyterLab " + ("(a second signal)" if len(received) > 1
                                                    else f"(still running after {grace:g} s)"))
            proc.kill()
            code = proc.wait()
        if first == signal.SIGINT:
            return 128 - code if code < 0 else code
        return 128 + first
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def launch_lab(folder: Path, lab_args: Sequence[str] = ()) -> int:
    """Run JupyterLab on the working folder with this Python; say where to go and how to stop; return its exit code.

    ``lab_args`` (the arguments after ``--``) go to JupyterLab last; a port among them replaces
    the free port the launcher would pick, and the printed address uses it. The token goes in the
    environment (``JUPYTER_TOKEN``; one already set there is kept), never on the command line.
    Raises :class:`CourseError` for a bad port or a Jupyter folder JupyterLab could not write,
    :class:`RuntimeError` when JupyterLab is not installed or does not start.
    """
    folder = Path(folder)
    if importlib.util.find_spec("jupyterlab") is None:
        raise RuntimeError(
            "JupyterLab is not installed in this environment; install the course extra with "
            "`pip install -c constraints.txt -e \".[lab]\"` from the top of the checkout"
        )
    check_jupyter_dirs()
    port = given_port(lab_args)
    if port is None:
        port = free_port()
    token = os.environ.get("JUPYTER_TOKEN") or secrets.token_hex(16)
    cmd = lab_command(folder, port, None, lab_args)
    address = lab_address(port, token, first_lesson(folder) or "", lab_args)
    if address:
        print(f"Open {address} (your browser should open it by itself).")
    else:
        print("Open the address JupyterLab prints below (your browser should open it by itself).")
    print(f"Lessons are in course/, exercises in exercises/ (the file browser on the left); your work stays in {folder}.")
    print("To stop: Ctrl-C in this terminal (save your notebooks first).")
    sys.stdout.flush()
    return run_lab(cmd, folder, lab_environment(token))


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

    Raises :class:`CourseNotFoundError` when the course is not beside the package,
    :class:`CourseError` when the working folder cannot take it, and
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
    """The ``gangkit course`` handler: copy, then launch; returns the exit code.

    A problem the learner can fix (the folder, their home folder, an argument after ``--``) ends
    in one line ``error: ...`` on stderr and exit status 1.
    """
    lab_args = list(getattr(args, "lab_args", None) or [])
    if lab_args[:1] == ["--"]:
        lab_args = lab_args[1:]
    if getattr(args, "check", False):
        from gangkit.cli import preflight

        steps = preflight.run(REPO_ROOT)
        print(preflight.report(steps))
        return 0 if all(s.ok for s in steps) else 1
    try:
        # On the command line a relative --dir means relative to where you are, as usual.
        folder = Path(args.dir).expanduser().resolve() if args.dir else REPO_ROOT / DEFAULT_FOLDER
        open_course(folder, launch=False, overwrite=args.overwrite)
        if args.no_launch:
            print("Not starting JupyterLab (--no-launch).")
            return 0
        return launch_lab(folder, lab_args)
    except (CourseNotFoundError, CourseError, RuntimeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
    except OSError as exc:  # anything the checks above did not foresee: still one line, with the path
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"error: {where}{exc.strerror or exc}", file=sys.stderr)
    return 1


def add_course_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Register the ``course`` subcommand on ``subparsers``; its ``func`` returns an exit code."""
    parser = subparsers.add_parser(
        "course",
        help="copy the course notebooks into your working folder and open JupyterLab",
        description=(
            "Copy course/ and exercises/ into a working folder (default: my-course/ at the top "
            "of the checkout, ignored by git), keeping notebooks you have changed, then start "
            "JupyterLab there; Ctrl-C stops it. Arguments after -- go to jupyter lab and win over the "
            "launcher's own settings (-- --port 8890 serves on port 8890)."
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
