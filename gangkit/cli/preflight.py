"""The pre-flight check of a learner's machine: ``gangkit course --check``.

A lab of thirty laptops loses its first half hour to installs that half worked: a package
missing, a kernel that does not start, widgets that draw nothing. This check runs, on the
learner's machine and before the session, the same steps the first lesson takes, and says for
each one *ok* or what is wrong and the command that fixes it:

1. the Python version (3.11 or newer);
2. the course notebooks beside the package (a clone of the repository, not a wheel);
3. the packages the lessons import, and the widget front end JupyterLab needs to draw the explorers;
4. the versions pinned in ``constraints.txt`` (a different version still runs the lessons, but
   their stored outputs may print differently: a note, not a failure);
5. a simulation of the built-in ``two-gangs-deadlock`` scenario, which must deadlock pod by pod;
6. a Jupyter kernel started as JupyterLab starts one, which must import gangkit and ipywidgets.

Nothing is written and no server is started. Exit status 0 when every step passed, 1 otherwise.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

#: The packages the lessons and JupyterLab need, with what each is for.
NEEDED = {
    "jupyterlab": "JupyterLab itself",
    "ipykernel": "the Python kernel the notebooks run in",
    "ipywidgets": "the explorers (sliders and menus)",
    "jupyterlab_widgets": "JupyterLab's side of the explorers (without it they draw nothing)",
    "matplotlib": "the lessons' figures",
    "pandas": "the lessons' tables",
    "simpy": "the simulator's event engine",
}
INSTALL = 'pip install -c constraints.txt -e ".[lab]"  (from the top of your clone)'
#: How long the kernel may take to start and answer (a slow laptop's first start compiles caches).
KERNEL_TIMEOUT_S = 120


@dataclass(frozen=True)
class Step:
    """One pre-flight step's outcome: ``ok``, or a ``problem`` and the ``fix``; ``note`` for what is not a failure."""

    name: str
    ok: bool
    detail: str = ""
    fix: str = ""


def python_version(version: tuple[int, ...] = tuple(sys.version_info[:3])) -> Step:
    shown = ".".join(map(str, version))
    if version >= (3, 11):
        return Step("Python 3.11 or newer", True, f"Python {shown}")
    return Step("Python 3.11 or newer", False, f"this is Python {shown}",
                "install Python 3.11 or newer, then make the virtual environment again with it")


def course_beside_package(root: Path) -> Step:
    lessons = sorted((root / "course").glob("[0-9][0-9]_*.ipynb"))
    if not lessons:
        return Step("the course notebooks", False, f"no lessons in {root / 'course'}",
                    "clone the repository and install gangkit from the clone (pip install -e .)")
    return Step("the course notebooks", True, f"{len(lessons)} lessons")


def packages(find: Callable[[str], object] = importlib.util.find_spec) -> Step:
    missing = [name for name in NEEDED if find(name) is None]
    if not missing:
        return Step("the packages the lessons use", True, ", ".join(NEEDED))
    what = "; ".join(f"{name} ({NEEDED[name]})" for name in missing)
    return Step("the packages the lessons use", False, f"missing: {what}", INSTALL)


def pinned_versions(constraints: Path, version: Callable[[str], str] = importlib.metadata.version) -> Step:
    """The installed versions of the packages in :data:`NEEDED` against the pins (a note, never a failure)."""
    if not constraints.is_file():
        return Step("versions as pinned", True, "no constraints.txt beside the course: not compared")
    pins = dict(re.findall(r"^([A-Za-z0-9_.-]+)==(\S+)$", constraints.read_text(encoding="utf-8"), re.M))
    pins = {k.lower().replace("_", "-"): v for k, v in pins.items()}
    differ = []
    for name in NEEDED:
        key = name.replace("_", "-")
        try:
            have = version(key)
        except importlib.metadata.PackageNotFoundError:
            continue  # the packages step reports it
        if key in pins and pins[key] != have:
            differ.append(f"{key} {have} (pinned {pins[key]})")
    if not differ:
        return Step("versions as pinned", True, "as in constraints.txt")
    return Step("versions as pinned", True, "note: " + ", ".join(differ)
                + "; the lessons run, but some stored outputs may print differently")


def simulation() -> Step:
    from gangkit.simulate import simulate

    try:
        r = simulate("two-gangs-deadlock", stack="pod")
    except Exception as exc:  # noqa: BLE001 - any failure here is what the learner must see
        return Step("a simulation", False, f"gangkit failed: {type(exc).__name__}: {exc}", INSTALL)
    if not r.summary()["deadlock"]:
        return Step("a simulation", False, "two-gangs-deadlock did not deadlock pod by pod", "reinstall: " + INSTALL)
    return Step("a simulation", True, "two-gangs-deadlock deadlocks pod by pod, as lesson 00 shows")


def kernel(timeout: float = KERNEL_TIMEOUT_S) -> Step:
    """Start the default Python kernel as JupyterLab would and ask it to import what the lessons import."""
    if importlib.util.find_spec("jupyter_client") is None or importlib.util.find_spec("ipykernel") is None:
        return Step("a notebook kernel", False, "jupyter_client or ipykernel is not installed", INSTALL)
    from jupyter_client.manager import start_new_kernel

    code = "import gangkit, ipywidgets, matplotlib, pandas; print('kernel ok')"
    try:
        manager, client = start_new_kernel(kernel_name="python3", startup_timeout=timeout,
                                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    except Exception as exc:  # noqa: BLE001
        return Step("a notebook kernel", False, f"the kernel did not start: {type(exc).__name__}: {exc}",
                    "python -m ipykernel install --user, then run this check again")
    out: list[str] = []
    try:
        reply = client.execute_interactive(code, timeout=timeout, output_hook=lambda m: out.append(
            m["content"].get("text", "") if m["msg_type"] == "stream" else ""))
        status = reply["content"]["status"]
    except Exception as exc:  # noqa: BLE001 - a timeout or a dead kernel
        status, out = "error", [f"{type(exc).__name__}: {exc}"]
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
    if status == "ok" and "kernel ok" in "".join(out):
        return Step("a notebook kernel", True, "starts and imports gangkit and ipywidgets")
    return Step("a notebook kernel", False, "the kernel could not import the lessons' packages: " + "".join(out)[-300:],
                "the kernel runs another Python than this one: python -m ipykernel install --user, or " + INSTALL)


def jupyter_dirs_problem() -> str:
    """Why JupyterLab could not write its data and runtime folders (it stops with a traceback then); "" when it can.

    As it starts, JupyterLab creates its data folder (jupyter_core 5's ``jupyter_data_dir``:
    ``~/.local/share/jupyter`` on Linux, ``JUPYTER_DATA_DIR`` if set) and writes its connection
    files into its runtime folder (``jupyter_runtime_dir``: ``runtime/`` in the data folder,
    ``JUPYTER_RUNTIME_DIR`` if set), both with mode 0700 (``JupyterApp._data_dir_default`` and
    ``_runtime_dir_default``, ``jupyter_core/application.py``). Creates both as JupyterLab would;
    says nothing when jupyter_core is not installed.
    """
    try:
        from jupyter_core.paths import jupyter_data_dir, jupyter_runtime_dir
    except ImportError:  # pragma: no cover - jupyter_core comes with JupyterLab
        return ""
    for variable, where in (("JUPYTER_DATA_DIR", jupyter_data_dir()), ("JUPYTER_RUNTIME_DIR", jupyter_runtime_dir())):
        folder = Path(where)
        try:
            folder.mkdir(parents=True, exist_ok=True, mode=0o700)
            with tempfile.TemporaryFile(dir=folder):
                pass
        except OSError as exc:
            return (f"{folder}: JupyterLab cannot write its files there ({exc.strerror or exc}); expected a folder "
                    f"you can write to: make your home folder ({os.environ.get('HOME', '~')}) writable, or set "
                    f"{variable} to a folder you can write to")
    return ""


def jupyter_folders() -> Step:
    """Whether JupyterLab can write its data and runtime folders."""
    problem = jupyter_dirs_problem()
    if problem:
        return Step("JupyterLab's folders", False, problem.split(";")[0],
                    "make your home folder writable, or set JUPYTER_DATA_DIR and JUPYTER_RUNTIME_DIR")
    return Step("JupyterLab's folders", True, "its data and runtime folders can be written")


def run(root: Path, *, start_kernel: bool = True) -> list[Step]:
    steps = [python_version(), course_beside_package(root), packages(),
             pinned_versions(root / "constraints.txt"), jupyter_folders()]
    if steps[2].ok:
        steps.append(simulation())
        if start_kernel:
            steps.append(kernel())
    return steps


def report(steps: list[Step]) -> str:
    lines = []
    for s in steps:
        mark = "ok    " if s.ok else "FAILED"
        lines.append(f"{mark} {s.name}: {s.detail}")
        if not s.ok:
            lines.append(f"       fix: {s.fix}")
    failed = [s for s in steps if not s.ok]
    lines.append("Ready for the course: run `gangkit course`." if not failed
                 else f"{len(failed)} step(s) failed: fix them, then run `gangkit course --check` again.")
    return "\n".join(lines)
