"""No function in gangkit/ is longer than 80 lines: no exception, the lean engines' event loops included.

A function's length is its lines from ``def`` (decorators not counted) to its last line, docstring
and comments included: what a reader has to hold at once. A long function is split into named steps
(a helper with a docstring saying which rule it applies) or, for a list of checks, a table of rows.
"""

from __future__ import annotations

import ast
from functools import cache

import pytest

from paths import REPO

ROOT = REPO
PACKAGE = ROOT / "gangkit"
MAX_LINES = 80

def function_lengths(source: str, path: str) -> dict[str, int]:
    """``path::qualified.name`` -> lines of every function and method in ``source`` (nested ones too)."""
    out: dict[str, int] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = f"{prefix}{child.name}"
                out[f"{path}::{name}"] = child.end_lineno - child.lineno + 1
                visit(child, f"{name}.")
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            else:
                visit(child, prefix)

    visit(ast.parse(source), "")
    return out


@cache
def package_lengths() -> dict[str, int]:
    """The lengths of every function in gangkit/ (read once per test session)."""
    out: dict[str, int] = {}
    for file in sorted(PACKAGE.rglob("*.py")):
        out.update(function_lengths(file.read_text(encoding="utf-8"), file.relative_to(ROOT).as_posix()))
    return out


@pytest.mark.parametrize("source, expected", [
    pytest.param("def f():\n    return 1\n", {"m.py::f": 2}, id="a two-line function is two lines long"),
    pytest.param('@decorator\ndef f():\n    """Doc."""\n\n    # note\n    return 1\n', {"m.py::f": 5},
                 id="the docstring, comments and blank lines inside count, the decorator does not"),
    pytest.param("class C:\n    def m(self):\n        def inner():\n            pass\n        return inner\n",
                 {"m.py::C.m": 4, "m.py::C.m.inner": 2}, id="methods and nested functions are named by their path"),
    pytest.param("if True:\n    def f():\n        pass\n", {"m.py::f": 2}, id="a function defined under an if is found"),
])
def test_function_lengths_are_measured_from_def_to_last_line(source, expected):
    assert function_lengths(source, "m.py") == expected


def test_no_function_is_longer_than_80_lines():
    too_long = {name: n for name, n in package_lengths().items() if n > MAX_LINES}
    assert not too_long, f"functions over {MAX_LINES} lines (split them into named steps): {too_long}"
