"""Re-execute notebooks in place to refresh their stored outputs (what nbval compares against).

    python tools/execute_notebooks.py course/01_*.ipynb solutions/01_*.ipynb

Each notebook runs top to bottom in a fresh `python3` kernel of this environment, with its own
folder as the working directory, progress bars off (GANGKIT_NO_PROGRESS=1) and matplotlib left
to the kernel's default inline backend, as when a learner presses Run All and as nbval runs it in
CI. Then the volatile parts are stripped so that a re-run of unchanged code leaves the file
byte-identical: per-cell timings, saved widget state and widget-view model ids (random on each
run; JupyterLab shows the widget's text fallback until its cell runs again). Install with
`-c constraints.txt` first: stored outputs depend on the pinned versions.

After refreshing a solution notebook, run `python tools/make_exercises.py` too.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError
from nbconvert.preprocessors import CoalesceStreamsPreprocessor

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"


def kernel_env() -> dict[str, str]:
    """The environment for the kernel: this one, progress bars off, matplotlib not forced."""
    env = dict(os.environ)
    env["GANGKIT_NO_PROGRESS"] = "1"
    # ipykernel picks the inline backend only when MPLBACKEND is unset; an outer Agg setting
    # would drop every figure from the stored outputs (and print warnings on plt.show()).
    env.pop("MPLBACKEND", None)
    return env


def strip_volatile(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """Remove what changes from run to run without the code changing."""
    nb.metadata.pop("widgets", None)
    for cell in nb.cells:
        cell.metadata.pop("execution", None)  # per-cell timestamps (record_timing)
        for output in cell.get("outputs", []):
            data = output.get("data")
            if data:
                data.pop(WIDGET_VIEW, None)
                data.pop(WIDGET_STATE, None)
    return nb


def execute_notebook(path: Path, timeout: int = 120) -> None:
    """Execute ``path`` in place and write it back; raises CellExecutionError on an error."""
    path = Path(path).resolve()
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(
        nb,
        kernel_name="python3",
        record_timing=False,
        store_widget_state=False,
        timeout=timeout,
        resources={"metadata": {"path": str(path.parent)}},
    )
    client.execute(cwd=str(path.parent), env=kernel_env())
    nb, _ = CoalesceStreamsPreprocessor().preprocess(nb, {})  # one stdout block per cell, however the kernel flushed it
    strip_volatile(nb)
    nbformat.write(nb, path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="+", type=Path, help="notebooks to execute in place")
    parser.add_argument("--timeout", type=int, default=120, help="seconds per cell (default 120)")
    args = parser.parse_args(argv)
    failed = 0
    for path in args.notebooks:
        if path.suffix != ".ipynb" or not path.is_file():
            print(f"{path}: not a notebook file", file=sys.stderr)
            failed += 1
            continue
        print(f"executing {path} ...", flush=True)
        try:
            execute_notebook(path, timeout=args.timeout)
        except CellExecutionError as exc:
            print(f"{path}: a cell failed; the file was not rewritten\n{exc}", file=sys.stderr)
            failed += 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
