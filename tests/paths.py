"""Where the repository's folders are, for the tests that read its files: ``from paths import REPO, EXAMPLES``.

This module sits at the top of ``tests/`` and stays there, so a test file
may live in any subfolder of ``tests/`` and still find the repository
without counting its own ``parents``.
"""

from __future__ import annotations

from pathlib import Path

#: The folder of the tests' shared modules (``conftest``, ``builders``, ``paths``): on a child process's path, they import.
TESTS = Path(__file__).resolve().parent
#: The repository's root: the folder holding ``pyproject.toml``, ``gangkit/``, ``tests/``.
REPO = Path(__file__).resolve().parents[1]
#: The library's own package folder (``gangkit/``), for the tests that read its source.
PACKAGE = REPO / "gangkit"
#: The example manifests (``examples/``) the README, the docs and the command line use.
EXAMPLES = REPO / "examples"
#: The course notebooks (``course/``).
COURSE = REPO / "course"
#: The documentation pages (``docs/``).
DOCS = REPO / "docs"
