"""The box a learner's kernel runs in: bubblewrap, limits, a minimal environment.

A learner's notebook is untrusted code on the instructor's machine (often a CI runner holding
secrets). Its kernel is started inside a bubblewrap sandbox (``bwrap``, Debian package
``bubblewrap``), as Flatpak runs desktop programs:

- the whole file system read-only, except the notebook's own working folder (a fresh temporary
  copy); a private, empty ``/tmp``; home folders hidden, except the Python installation and the
  packages the kernel imports; the folders of the submissions being graded hidden;
- no network (a network namespace with only loopback), its own process namespace (the kernel is
  process 1's child there: when the sandbox is stopped, every process it started dies with it, a
  double-forked daemon included), no capabilities, even as root;
- a minimal environment: no variable of the grader's (no CI secret) but ``PATH``, ``LANG`` and
  ``PYTHONPATH``, and the few the kernel needs (``HOME`` is the working folder);
- limits on memory (``RLIMIT_AS``), CPU time (``RLIMIT_CPU``) and file size (``RLIMIT_FSIZE``),
  set by a small trampoline before ``bwrap`` starts, and inherited by everything inside.

The kernel talks to the grader over Unix sockets in the working folder (ZeroMQ's ``ipc``
transport), which cross the network namespace.

Without bubblewrap (:func:`available` says why), ``gangkit grade`` refuses to run unless the
instructor passes ``--no-sandbox``: then the kernel runs as an ordinary process with the same limits
and minimal environment, and can read and write what the instructor's user can.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Limits", "available", "kernel_command", "kernel_environment"]


@dataclass(frozen=True)
class Limits:
    """The limits of one notebook: seconds per cell and per notebook, MiB of memory, bytes of output."""

    cell_timeout: int = 120
    timeout: int = 900
    memory_mib: int = 4096
    output_bytes: int = 2_000_000
    file_bytes: int = 256 * 2**20


@functools.lru_cache(maxsize=1)
def available() -> str:
    """``""`` when bubblewrap can build a sandbox here, else why not (one sentence)."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return "bubblewrap (bwrap) is not installed (Debian and Ubuntu: apt-get install bubblewrap)"
    try:
        probe = subprocess.run([bwrap, *_namespaces(), "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
                                "--", "true"], stdin=subprocess.DEVNULL, capture_output=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"bubblewrap could not be started: {e}"
    if probe.returncode != 0:
        why = probe.stderr.decode(errors="replace").strip().splitlines()[-1:] or ["no message"]
        return f"bubblewrap cannot create namespaces on this machine ({why[0]})"
    return ""


def _namespaces() -> list[str]:
    return ["--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL"]


def kernel_environment(workdir: Path) -> dict[str, str]:
    """The kernel's whole environment: what Python and the course need, nothing of the grader's secrets."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "LANG": os.environ.get("LANG", "C.UTF-8"),
        "HOME": str(workdir),
        "TMPDIR": "/tmp",
        "IPYTHONDIR": str(workdir / ".ipython"),
        "MPLCONFIGDIR": str(workdir / ".matplotlib"),
        "JUPYTER_RUNTIME_DIR": str(workdir / ".jupyter"),
        "GANGKIT_NO_PROGRESS": "1",
        "PYTHONHASHSEED": "0",
    }
    if os.environ.get("PYTHONPATH"):
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    return env


def _needed_paths() -> list[Path]:
    """What the kernel must read: the interpreter, its libraries and every folder on the import path."""
    paths = {Path(sys.prefix), Path(sys.base_prefix), Path(sys.executable).resolve().parent.parent}
    for entry in sys.path + os.environ.get("PYTHONPATH", "").split(os.pathsep):
        if entry and Path(entry).exists():
            paths.add(Path(entry).resolve())
    paths.add(Path(__file__).resolve().parents[2])  # the folder that holds the gangkit package
    return sorted(paths)


def _hidden_paths(hide: list[Path]) -> list[Path]:
    """Home folders and the submissions' folders: hidden behind an empty file system in the sandbox."""
    homes = {Path.home(), Path("/root"), Path("/home")}
    return sorted(p for p in {*homes, *(Path(h).resolve() for h in hide)} if p.is_dir() and p != Path("/"))


def bwrap_arguments(workdir: Path, hide: list[Path]) -> list[str]:
    """bubblewrap's arguments for a kernel working in ``workdir`` (hiding ``hide`` and the home folders)."""
    args = [*_namespaces(), "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    hidden = _hidden_paths(hide)
    for path in hidden:
        args += ["--tmpfs", str(path)]
    covered = [*hidden, Path("/tmp").resolve()]
    for path in _needed_paths():  # back into view, read-only, where a hidden folder or the new /tmp covered them
        if any(path == h or h in path.parents for h in covered):
            args += ["--ro-bind", str(path), str(path)]
    args += ["--bind", str(workdir), str(workdir), "--chdir", str(workdir), "--clearenv"]
    for key, value in kernel_environment(workdir).items():
        args += ["--setenv", key, value]
    return args


# A few lines run by a fresh interpreter before the sandbox: set the limits, ask to die with the
# grader's worker, then become bubblewrap (or, without a sandbox, the kernel itself).
_TRAMPOLINE = """
import ctypes, os, resource, signal, sys
mem, cpu, fsize = (int(x) for x in sys.argv[1:4])
for what, value in ((resource.RLIMIT_AS, mem), (resource.RLIMIT_CPU, cpu), (resource.RLIMIT_FSIZE, fsize)):
    try:
        resource.setrlimit(what, (value, value))
    except (ValueError, OSError):
        pass
try:
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
except (OSError, AttributeError):
    pass
os.execvp(sys.argv[5], sys.argv[5:])
"""


def kernel_command(kernel_argv: list[str], workdir: Path, limits: Limits, *, sandbox: bool,
                   hide: list[Path] = ()) -> list[str]:
    """The command that starts ``kernel_argv`` within ``limits``, in the sandbox when ``sandbox``."""
    memory = limits.memory_mib * 2**20
    cpu = limits.timeout + 30
    head = [sys.executable, "-c", _TRAMPOLINE, str(memory), str(cpu), str(limits.file_bytes), "--"]
    if not sandbox:
        return head + kernel_argv
    return head + [shutil.which("bwrap") or "bwrap", *bwrap_arguments(workdir, list(hide)), "--", *kernel_argv]
