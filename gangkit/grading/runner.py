"""Running a copy of a submission, cell by cell, in a boxed kernel, and taking out each answer as data.

The grader never executes a learner's notebook in its own process. For each submission it starts a
worker (:func:`main` in a new Python process: the grader's own code) that

1. copies the notebook into a fresh temporary folder, the only folder the kernel may write;
2. starts a ``python3`` kernel in the sandbox (:mod:`.sandbox`) with the notebook's limits, talking
   over Unix sockets in that folder;
3. runs the cells one by one with nbclient: a cell over its time limit is interrupted and the next
   cells still run; an error is kept and the next cells still run;
4. right after each exercise's cell, asks the kernel for the value of ``answer`` as plain data
   (:mod:`.answers`), and nothing else;
5. keeps of the kernel's output only what says whether a cell failed (its error's name and message,
   cut short) and counts the rest: past the output limit the kernel is stopped;
6. stops the kernel (the whole sandbox) at the notebook's time limit and at the end, and prints one
   JSON object: per cell, ``ok``, ``error``, ``timeout`` or nothing (not run); per exercise cell, its
   answer's data.

The worker's report is the grader's only source: nothing the learner's code writes to a file is read
back. The parent (:func:`run_copy`) waits for the worker at most the notebook's time limit and a
minute more, then stops it; a worker that died is reported as a problem of the whole notebook.
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from gangkit.grading.sandbox import Limits, kernel_command, kernel_environment

__all__ = ["Run", "run_copy"]

#: Seconds the parent waits for a worker beyond the notebook's time limit (kernel start and stop).
GRACE_S = 60


@dataclass
class Run:
    """What running one submission gave.

    ``cells``: index -> ``{"status": "ok"|"error"|"timeout", "error": "..."}`` for each cell that ran;
    ``answers``: index of an exercise cell -> ``{"data": json text}`` or ``{"problem": "..."}``;
    ``problem``: what stopped the notebook early, if anything.
    """

    cells: dict = field(default_factory=dict)
    answers: dict = field(default_factory=dict)
    problem: str = ""


def run_copy(path: Path, exercise_cells: list[int], limits: Limits, *, sandbox: bool,
             hide: list[Path] = ()) -> Run:
    """Run a copy of the notebook at ``path`` in a worker; take ``answer`` out after each of ``exercise_cells``."""
    job = {"notebook": str(Path(path).resolve()), "exercise_cells": list(exercise_cells),
           "limits": limits.__dict__, "sandbox": sandbox, "hide": [str(h) for h in hide]}
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "PYTHONPATH", "HOME", "TMPDIR")}
    env["GANGKIT_NO_PROGRESS"] = "1"
    worker = subprocess.Popen([sys.executable, "-c", "from gangkit.grading.runner import main; main()"], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, start_new_session=True)
    try:
        out, err = worker.communicate(json.dumps(job).encode(), timeout=limits.timeout + GRACE_S)
    except subprocess.TimeoutExpired:
        _kill_group(worker.pid)
        worker.communicate()
        return Run(problem=f"the grader's worker did not finish within the notebook's time limit "
                           f"({limits.timeout} s) and {GRACE_S} s more; it was stopped")
    try:
        report = json.loads(out.decode("utf-8").strip().splitlines()[-1])
    except (ValueError, IndexError):
        last = err.decode(errors="replace").strip().splitlines()[-1:] or [f"exit status {worker.returncode}"]
        return Run(problem=f"the grader's worker failed on this notebook: {last[0][:200]}")
    return Run(cells={int(k): v for k, v in report.get("cells", {}).items()},
               answers={int(k): v for k, v in report.get("answers", {}).items()},
               problem=str(report.get("problem", "")))


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


# ------------------------------------------------------------------------------------------- the worker
def _client_class():
    """nbclient's NotebookClient, keeping only errors and counting every byte of output."""
    from nbclient import NotebookClient

    class GradingClient(NotebookClient):
        def __init__(self, *args, output_bytes: int, on_flood, **kwargs):
            super().__init__(*args, **kwargs)
            self.output_bytes, self.on_flood = output_bytes, on_flood
            self.seen_bytes, self.errors, self.timed_out = 0, {}, set()

        def process_message(self, msg, cell, cell_index):
            content = msg.get("content") or {}
            if msg.get("msg_type") == "status":
                if content.get("execution_state") == "idle":
                    from nbclient.exceptions import CellExecutionComplete

                    raise CellExecutionComplete()
                return None
            self.seen_bytes += len(json.dumps(content, default=str)) if msg.get("msg_type") != "execute_input" else 0
            if self.seen_bytes > self.output_bytes:
                self.on_flood()
            if msg.get("msg_type") == "error":
                self.errors[cell_index] = f"{str(content.get('ename', 'Error'))[:80]}: {str(content.get('evalue', ''))[:300]}"
            if "execution_count" in content:
                cell["execution_count"] = content["execution_count"]
            return None

        async def _async_handle_timeout(self, timeout, cell=None):
            self.timed_out.add(self._current_index)
            return await super()._async_handle_timeout(timeout, cell)

    return GradingClient


def _kernel_manager(workdir: Path, limits: Limits, sandbox: bool, hide: list[Path]):
    from jupyter_client.manager import AsyncKernelManager

    class BoxedKernelManager(AsyncKernelManager):
        def format_kernel_cmd(self, extra_arguments=None):
            argv = [sys.executable, "-m", "ipykernel_launcher", "-f", str(self.connection_file)]
            return kernel_command(argv + list(extra_arguments or []), workdir, limits, sandbox=sandbox, hide=hide)

    km = BoxedKernelManager(kernel_name="python3", transport="ipc", ip=str(workdir / "k"),
                            connection_file=str(workdir / "kernel.json"))
    km.kernel_spec.interrupt_mode = "message"  # the kernel is inside the sandbox: interrupt it by a message
    return km


async def _answer(client, timeout: float) -> dict:
    """The value of ``answer`` in the kernel, as the JSON text of :mod:`.answers`; or the problem."""
    from gangkit.grading.answers import EXPRESSION

    msg_id = client.kc.execute("", silent=True, store_history=False, user_expressions={"answer": EXPRESSION})
    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return {"problem": "the kernel did not give the answer's value in time"}
        try:
            reply = await client.kc.get_shell_msg(timeout=left)
        except Exception:  # queue.Empty, or the kernel is gone
            return {"problem": "the kernel did not give the answer's value"}
        if reply.get("parent_header", {}).get("msg_id") == msg_id:
            break
    value = (reply.get("content") or {}).get("user_expressions", {}).get("answer") or {}
    if value.get("status") != "ok":
        return {"problem": f"the answer could not be read ({str(value.get('ename', 'Error'))[:80]}: "
                           f"{str(value.get('evalue', ''))[:200]})"}
    text = (value.get("data") or {}).get("text/plain", "")
    if not isinstance(text, str) or len(text) > 10_000_000:
        return {"problem": "the answer is too large to grade"}
    try:
        data = ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return {"problem": "the answer's data could not be read"}
    return {"data": data} if isinstance(data, str) else {"problem": "the answer's data could not be read"}


async def _work(job: dict) -> dict:
    import nbformat
    from nbclient.exceptions import DeadKernelError

    limits = Limits(**job["limits"])
    started = time.monotonic()
    report: dict = {"cells": {}, "answers": {}, "problem": ""}
    nb = nbformat.read(job["notebook"], as_version=4)
    exercise_cells = set(job["exercise_cells"])
    with tempfile.TemporaryDirectory(prefix="gangkit-grade-") as tmp:
        workdir = Path(tmp) / "w"
        workdir.mkdir()
        for sub in (".ipython", ".matplotlib", ".jupyter"):
            (workdir / sub).mkdir()
        shutil.copyfile(job["notebook"], workdir / Path(job["notebook"]).name)
        km = _kernel_manager(workdir, limits, job["sandbox"], [Path(h) for h in job["hide"]])
        stop = threading.Event()
        why: list[str] = []

        def kill(reason: str) -> None:
            if not why:
                why.append(reason)
            process = getattr(getattr(km, "provisioner", None), "process", None)
            if process is not None:
                _kill_group(process.pid)

        def flood() -> None:
            kill(f"the notebook wrote more than {limits.output_bytes // 1_000_000} MB of output; it was stopped there")

        client = _client_class()(nb, km=km, timeout=limits.cell_timeout, allow_errors=True, interrupt_on_timeout=True,
                                 record_timing=False, store_widget_state=False, iopub_timeout=4,
                                 output_bytes=limits.output_bytes, on_flood=flood)

        def watchdog() -> None:
            if not stop.wait(limits.timeout - (time.monotonic() - started)):
                kill(f"stopped at the notebook's time limit ({limits.timeout} s); the cells after the last "
                     "result did not run")

        threading.Thread(target=watchdog, daemon=True).start()
        env = kernel_environment(workdir)
        try:
            async with client.async_setup_kernel(cwd=str(workdir), env=env, stdout=subprocess.DEVNULL,
                                                 stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL):
                for index, cell in enumerate(nb.cells):
                    if cell.cell_type != "code" or why:
                        continue
                    client._current_index = index
                    client.timeout = max(1, min(limits.cell_timeout, int(limits.timeout - (time.monotonic() - started))))
                    try:
                        await client.async_execute_cell(cell, index)
                    except DeadKernelError:
                        if not why:
                            why.append(f"the kernel died in cell {index + 1} (over the memory limit of "
                                       f"{limits.memory_mib} MiB, or it exited); the cells after it did not run")
                        break
                    if why:
                        break
                    status = ("timeout" if index in client.timed_out else "error" if index in client.errors else "ok")
                    report["cells"][index] = {"status": status, "error": client.errors.get(index, "")}
                    if index in exercise_cells and status == "ok":
                        report["answers"][index] = await _answer(client, min(60, limits.cell_timeout))
        except DeadKernelError:
            why.append(why[0] if why else "the kernel could not be started, or died at once")
        except Exception as e:  # the kernel could not start, or its messages broke the client
            if not why:
                why.append(f"the notebook could not be run: {type(e).__name__}: {str(e)[:200]}")
        finally:
            stop.set()
            kill("")
        report["problem"] = next((w for w in why if w), "")
    return report


def main() -> int:
    import asyncio

    job = json.loads(sys.stdin.read())
    report = asyncio.run(_work(job))
    sys.stdout.write(json.dumps(report) + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
