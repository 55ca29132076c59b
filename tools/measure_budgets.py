"""Measure the time budgets of DESIGN.md and print them as a table (nothing is written to the notebooks).

    python tools/measure_budgets.py                   # lessons, nbval, unit and property tests
    python tools/measure_budgets.py --statistical     # also the statistical validation tests
    python tools/measure_budgets.py --only lessons    # one part: lessons, nbval, tests, statistical

Budgets on a 2-core machine: each lesson runs in under 6 s after its kernel starts (10 s at most);
nbval over course/ and solutions/, and the exercise run, in under 5 minutes; unit and property
tests in under 3 minutes; statistical validation tests in under 10 minutes.

- *lessons*: every notebook of ``course/`` and ``solutions/`` is executed in a fresh kernel
  (progress bars off, as in CI), and the clock runs from the moment the kernel is ready to the end
  of its last cell. The notebook on disk is not changed.
- *nbval*: ``python -m pytest course solutions`` with the project's nbval options, then the
  exercise run (``python -m pytest tests -m exercise_run -o addopts=""``: every generated exercise
  notebook in a kernel), wall times added.
- *tests*: ``python -m pytest tests -m "not statistical and not exercise_run" -o addopts=""``, wall time.
- *statistical*: ``python -m pytest tests -m statistical -o addopts=""``, wall time.

Wall times depend on the machine and on what else it runs: the table also gives CPU seconds (the
lesson's kernel; a command and all its child processes, which on 2 cores can exceed the wall time)
and the load average. ``--cpu`` judges by the smaller of the two, for a machine shared with other
work; the budgets themselves are wall times on an otherwise idle 2-core machine.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BUDGETS = {"lesson": 6.0, "lesson_max": 10.0, "nbval": 300.0, "tests": 180.0, "statistical": 600.0}


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["GANGKIT_NO_PROGRESS"] = "1"
    env.pop("MPLBACKEND", None)  # as CI: the kernel's inline backend
    env["PYTHONPATH"] = str(REPO) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


CPU_PROBE = "import resource as _r; _u = _r.getrusage(_r.RUSAGE_SELF); print(_u.ru_utime + _u.ru_stime)"


def lesson_seconds(path: Path, timeout: int = 120) -> tuple[float, float]:
    """(wall, CPU) seconds from kernel ready to the end of the notebook's last cell, in a fresh kernel.

    The kernel's CPU seconds are read by a probe cell before and after the notebook's cells
    (the probe's outputs are discarded; the file is not written).
    """
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, kernel_name="python3", timeout=timeout, resources={"metadata": {"path": str(path.parent)}})
    env = _env()

    def kernel_cpu() -> float:
        probe = nbformat.v4.new_code_cell(CPU_PROBE)
        client.execute_cell(probe, 0)
        return float("".join(o.get("text", "") for o in probe.outputs).strip())

    with client.setup_kernel(cwd=str(path.parent), env=env):
        c0 = kernel_cpu()
        t0 = time.perf_counter()
        for index, cell in enumerate(nb.cells):
            client.execute_cell(cell, index)
        wall = time.perf_counter() - t0
        return wall, kernel_cpu() - c0


def command_seconds(cmd: list[str]) -> tuple[float, float, int, str]:
    """Wall seconds, CPU seconds (the command and its children), exit code and last output line."""
    import resource

    def children_cpu() -> float:
        u = resource.getrusage(resource.RUSAGE_CHILDREN)
        return u.ru_utime + u.ru_stime

    c0 = children_cpu()
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=REPO, env=_env(), capture_output=True, text=True)
    wall = time.perf_counter() - t0
    lines = (proc.stdout.strip() or proc.stderr.strip()).splitlines()
    return wall, children_cpu() - c0, proc.returncode, lines[-1] if lines else ""


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--statistical", action="store_true", help="also time the statistical tests (about 10 minutes)")
    p.add_argument("--only", choices=["lessons", "nbval", "tests", "statistical"], help="measure one part only")
    p.add_argument("--cpu", action="store_true",
                   help="judge by CPU seconds where they are lower than wall seconds (a machine shared with other work)")
    args = p.parse_args(argv)
    parts = [args.only] if args.only else ["lessons", "nbval", "tests"] + (["statistical"] if args.statistical else [])
    rows: list[tuple[str, str, str, str, str]] = []
    py = sys.executable
    if "lessons" in parts:
        for folder in ("course", "solutions"):
            for nb in sorted((REPO / folder).glob("*.ipynb")):
                wall, cpu = lesson_seconds(nb)
                s = min(wall, cpu) if args.cpu else wall
                verdict = "met" if s < BUDGETS["lesson"] else ("within 10 s" if s < BUDGETS["lesson_max"] else "missed")
                rows.append((f"{folder}/{nb.name}", f"{wall:.1f} s", f"{cpu:.1f} s", f"< {BUDGETS['lesson']:g} s after kernel start", verdict))
                print(f"# {rows[-1][0]}: {rows[-1][1]}", file=sys.stderr, flush=True)
    commands = {  # a part's commands run one after the other, and their times add up
        "nbval": [[py, "-m", "pytest", "course", "solutions", "-q", "-p", "no:cacheprovider"],
                  [py, "-m", "pytest", "tests", "-q", "-m", "exercise_run", "-o", "addopts=", "-p", "no:cacheprovider"]],
        "tests": [[py, "-m", "pytest", "tests", "-q", "-m", "not statistical and not exercise_run", "-o", "addopts=",
                   "-p", "no:cacheprovider"]],
        "statistical": [[py, "-m", "pytest", "tests", "-q", "-m", "statistical", "-o", "addopts=", "-p", "no:cacheprovider"]],
    }
    for part in ("nbval", "tests", "statistical"):
        if part in parts:
            wall = cpu = 0.0
            codes, lasts = [], []
            for cmd in commands[part]:
                w, c, code, last = command_seconds(cmd)
                wall, cpu = wall + w, cpu + c
                codes.append(code)
                lasts.append(last)
            s = min(wall, cpu) if args.cpu else wall
            bad = [c for c in codes if c != 0]
            verdict = ("met" if s < BUDGETS[part] else "missed") + (f" (exit {bad[0]})" if bad else "")
            what = " + ".join(" ".join(["python"] + cmd[1:]) for cmd in commands[part])
            rows.append((what, f"{wall:.0f} s", f"{cpu:.0f} s", f"< {BUDGETS[part] / 60:g} min", verdict))
            print(f"# {part}: {wall:.0f} s, {'; '.join(lasts)}", file=sys.stderr, flush=True)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"budgets: python {sys.version.split()[0]}, {os.cpu_count()} cores, load average {load:.1f} at the end")
    width = max(len(r[0]) for r in rows) if rows else 10
    print(f"{'what':{width}s}  {'wall':>7s}  {'cpu':>7s}  {'budget':28s}  verdict ({'CPU' if args.cpu else 'wall'} time)")
    for what, wall, cpu, budget, verdict in rows:
        print(f"{what:{width}s}  {wall:>7s}  {cpu:>7s}  {budget:28s}  {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
