"""Generate exercises/NN_slug.ipynb from solutions/NN_slug.ipynb (never edit exercises/ by hand).

Solutions are the single source of the exercises, as in nbgrader: each answer sits between
`### BEGIN SOLUTION` and `### END SOLUTION`, and this tool clears those regions (leaving the stub
`# YOUR CODE HERE`) and every output, with nbgrader's ClearSolutions and ClearOutput
preprocessors configured in tools/nbgrader_config.py. No nbgrader database is involved.

It also locks what the learner is given, as nbgrader does: the code cells without a solution
region are read-only in JupyterLab (``editable: false``) and no code cell can be deleted
(``deletable: false``), and it writes gangkit/grading/locked.json, the table of locked cells with
their checksums that `gangkit grade` compares each submission with (gangkit/grading/locks.py).

    python tools/make_exercises.py            # rewrite exercises/ from solutions/
    python tools/make_exercises.py --check    # exit 1 if exercises/ is out of date

The output is deterministic: the same solution gives a byte-identical exercise, written with
nbformat's own JSON layout. tests/lessons/test_exercises_sync.py imports this file and calls
`check()`, so CI fails when someone changes a solution without regenerating.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import nbformat
from nbconvert.exporters import NotebookExporter
from traitlets.config import Config
from traitlets.config.loader import PyFileConfigLoader

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from gangkit.grading.locks import BEGIN, table_text  # noqa: E402

TOOLS_DIR = Path(__file__).resolve().parent
REPO_ROOT = TOOLS_DIR.parent
CONFIG_FILE = TOOLS_DIR / "nbgrader_config.py"
SOLUTIONS_DIR = REPO_ROOT / "solutions"
EXERCISES_DIR = REPO_ROOT / "exercises"
LOCKED_TABLE = REPO_ROOT / "gangkit" / "grading" / "locked.json"


def load_config(path: Path = CONFIG_FILE) -> Config:
    """The nbconvert/nbgrader configuration in ``path`` (a traitlets Python config file)."""
    return PyFileConfigLoader(path.name, path=str(path.parent)).load_config()


def solution_notebooks(solutions_dir: Path = SOLUTIONS_DIR) -> list[Path]:
    """The solution notebooks, sorted by name (``NN_slug.ipynb``; checkpoints ignored)."""
    if not solutions_dir.is_dir():
        return []
    return sorted(p for p in solutions_dir.glob("*.ipynb") if p.is_file())


def exercise_text(solution: Path, config: Config | None = None) -> str:
    """The exercise made from ``solution``, as the exact text written to disk."""
    exporter = NotebookExporter(config=config if config is not None else load_config())
    body, _ = exporter.from_filename(str(solution))
    nb = nbformat.reads(body, as_version=nbformat.NO_CONVERT)
    source = nbformat.read(solution, as_version=nbformat.NO_CONVERT)
    for cell, original in zip(nb.cells, source.cells):
        if cell.cell_type == "code":
            cell.metadata["deletable"] = False
            cell.metadata["editable"] = BEGIN in original.source
    text = nbformat.writes(nb)
    return text if text.endswith("\n") else text + "\n"


def generate(
    solutions_dir: Path = SOLUTIONS_DIR, exercises_dir: Path = EXERCISES_DIR
) -> list[Path]:
    """Write one exercise per solution into ``exercises_dir``; return the files written.

    Exercises whose solution no longer exists are left in place (``check`` reports them).
    """
    config = load_config()
    written = []
    for solution in solution_notebooks(solutions_dir):
        target = exercises_dir / solution.name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(exercise_text(solution, config).encode("utf-8"))
        written.append(target)
    return written


def write_locked_table(solutions_dir: Path = SOLUTIONS_DIR, table: Path = LOCKED_TABLE) -> str:
    """Write the table of locked cells of every solution; return its text."""
    text = table_text(solution_notebooks(solutions_dir))
    table.write_text(text, encoding="utf-8")
    return text


def check(solutions_dir: Path = SOLUTIONS_DIR, exercises_dir: Path = EXERCISES_DIR) -> list[str]:
    """Regenerate into a temporary folder and compare with ``exercises_dir``.

    Returns one line per problem (an exercise that differs, is missing, or has no solution);
    an empty list means exercises/ is up to date.
    """
    problems = []
    with tempfile.TemporaryDirectory() as tmp:
        fresh_dir = Path(tmp)
        fresh = {p.name: p for p in generate(solutions_dir, fresh_dir)}
        stored = (
            {p.name: p for p in exercises_dir.glob("*.ipynb") if p.is_file()}
            if exercises_dir.is_dir()
            else {}
        )
        for name in sorted(fresh.keys() | stored.keys()):
            rel = f"{exercises_dir.name}/{name}"
            if name not in stored:
                problems.append(f"{rel}: missing (solutions/{name} exists)")
            elif name not in fresh:
                problems.append(f"{rel}: extra (no solutions/{name} to generate it from)")
            elif fresh[name].read_bytes() != stored[name].read_bytes():
                problems.append(f"{rel}: differs from what solutions/{name} generates")
    if solutions_dir == SOLUTIONS_DIR:
        stored_table = LOCKED_TABLE.read_text(encoding="utf-8") if LOCKED_TABLE.is_file() else ""
        if stored_table != table_text(solution_notebooks(solutions_dir)):
            problems.append("gangkit/grading/locked.json: differs from what solutions/ generates")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--check",
        action="store_true",
        help="do not write; exit 1 and list exercises that are missing, extra or out of date",
    )
    args = parser.parse_args(argv)
    if args.check:
        problems = check()
        for line in problems:
            print(line)
        if problems:
            print("Run `python tools/make_exercises.py` to regenerate exercises/.", file=sys.stderr)
            return 1
        print(f"exercises/ is up to date ({len(solution_notebooks())} solution notebook(s)).")
        return 0
    written = generate()
    for path in written:
        print(f"wrote {path.relative_to(REPO_ROOT).as_posix()}")
    if written:
        write_locked_table()
        print(f"wrote {LOCKED_TABLE.relative_to(REPO_ROOT).as_posix()}")
    if not written:
        print("no notebooks in solutions/: nothing to generate")
    return 0


if __name__ == "__main__":
    sys.exit(main())
