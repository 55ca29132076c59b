"""Running a copy of a submission in a process and a kernel of its own, within limits.

The grader never executes a learner's notebook itself. For each one it starts
a child process (``python -m gangkit.grading.runner``) in a fresh temporary
folder holding a copy of the notebook; the child limits its own address space
(``RLIMIT_AS``, inherited by the kernel it starts), starts a ``python3`` kernel
of this environment, and runs the cells one by one with nbclient:

- a cell over its time limit is interrupted (its output ends in
  ``KeyboardInterrupt``) and the next cells still run;
- an error in a cell is kept as the cell's output (``allow_errors``), as
  JupyterLab would show it, and the next cells still run;
- after every cell the executed copy is written out, so a notebook stopped at
  its overall limit, or whose kernel died (memory), keeps the results so far.

The parent waits at most the notebook's time limit, then stops the child and
its kernel. Nothing of the submission is changed: only the copy runs.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Run", "run_copy"]


@dataclass
class Run:
    """What running one submission gave: its executed cells (None: nothing ran), and a problem of the whole notebook."""

    cells: list | None
    problem: str = ""


def _kernel_env() -> dict[str, str]:
    env = dict(os.environ)
    env["GANGKIT_NO_PROGRESS"] = "1"
    env.pop("MPLBACKEND", None)
    return env


def run_copy(path: Path, *, cell_timeout: int = 120, timeout: int = 900, memory_mib: int = 4096) -> Run:
    """Run a copy of the notebook at ``path`` within the limits (seconds per cell, per notebook; MiB of memory)."""
    import nbformat

    path = Path(path)
    try:
        nb = nbformat.read(path, as_version=4)
    except FileNotFoundError:
        return Run(None, "not found")
    except (OSError, ValueError, nbformat.reader.NotJSONError) as e:  # not JSON, or JSON that is no notebook
        return Run(None, f"not a readable notebook ({type(e).__name__}: {str(e).splitlines()[0][:120]})")
    with tempfile.TemporaryDirectory(prefix="gangkit-grade-") as folder:
        copy, out, status = Path(folder) / path.name, Path(folder) / "executed.ipynb", Path(folder) / "status.json"
        nbformat.write(nb, copy)
        cmd = [sys.executable, "-m", "gangkit.grading.runner", str(copy), str(out), str(status),
               str(cell_timeout), str(memory_mib)]
        child = subprocess.Popen(cmd, cwd=folder, env=_kernel_env(), start_new_session=True,
                                 stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        problem = ""
        try:
            _, err = child.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            _stop(child, status)
            child.communicate()
            problem = f"stopped at the notebook's time limit ({timeout} s); the cells after the last result did not run"
        else:
            if child.returncode != 0 and not status.exists():
                problem = f"the grader's kernel could not start: {err.decode(errors='replace').strip().splitlines()[-1:]}"
        state = json.loads(status.read_text()) if status.exists() else {}
        problem = problem or state.get("problem", "")
        if not out.exists():
            return Run(None, problem or "nothing ran")
        return Run(nbformat.read(out, as_version=4).cells, problem)


def _stop(child: subprocess.Popen, status: Path) -> None:
    """Stop the child process and its kernel (a process of its own session, whose pid the child wrote down)."""
    pids = []
    try:
        pids.append(int(json.loads(status.read_text()).get("kernel_pid") or 0))
    except (OSError, ValueError):
        pass
    for pid in pids:
        if pid > 0:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    try:
        os.killpg(child.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


# ------------------------------------------------------------------------------------------- the child
def _child(notebook: str, out: str, status: str, cell_timeout: int, memory_mib: int) -> int:
    """Run the cells of ``notebook`` one by one, writing the executed copy ``out`` after each."""
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import DeadKernelError

    try:
        import resource

        limit = memory_mib * 2**20
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    except (ImportError, ValueError, OSError):  # no RLIMIT_AS on this system: time limits only
        pass
    state: dict = {"problem": ""}

    def save() -> None:
        Path(status).write_text(json.dumps(state))

    nb = nbformat.read(notebook, as_version=4)
    client = NotebookClient(nb, kernel_name="python3", timeout=cell_timeout, allow_errors=True,
                            interrupt_on_timeout=True, record_timing=False, store_widget_state=False,
                            resources={"metadata": {"path": str(Path(notebook).parent)}})
    with client.setup_kernel(cwd=str(Path(notebook).parent)):
        provisioner = getattr(client.km, "provisioner", None)
        state["kernel_pid"] = getattr(provisioner, "pid", None)
        save()
        for index, cell in enumerate(nb.cells):
            try:
                client.execute_cell(cell, index)
            except DeadKernelError:
                state["problem"] = (f"the kernel died in cell {index + 1} (over the memory limit of {memory_mib} MiB, "
                                    "or it exited); the cells after it did not run")
                break
            finally:
                nbformat.write(nb, out)
                save()
    return 0


if __name__ == "__main__":
    sys.exit(_child(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])))
