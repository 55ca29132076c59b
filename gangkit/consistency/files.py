"""The files of a stack: one source or several, each turned into its documents as gangkit's reader reads them.

Picture the mail room of an office: letters arrive one by one or in bundles,
and each is opened and its pages counted before anyone reads them. A source
is a path to a YAML file, YAML text, one parsed manifest (a dict) or a list
of them; ``gangkit check`` takes several at once (a list of paths: one
stack spread over files). Bad YAML is one problem with its line and column
(:func:`gangkit.model.reading.parse_yaml`), a missing file one problem
naming it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Union

from gangkit.model.errors import Problem
from gangkit.model.reading import looks_like_path, parse_yaml, read_text

__all__ = ["Source", "documents", "screen", "sources_of"]

Source = Union[str, "os.PathLike[str]", Mapping[str, Any], Iterable[Mapping[str, Any]]]


def sources_of(sources: Source | Iterable[Source]) -> list[Source]:
    """One source, or several: a list of paths is several files, a list of dicts is one set of documents."""
    if isinstance(sources, (str, os.PathLike, Mapping)):
        return [sources]
    items = list(sources)
    if items and all(isinstance(s, Mapping) for s in items):
        return [items]
    return items


def documents(source: Source) -> tuple[list, str, Path | None]:
    """The documents of one source, the label its messages use, and the folder its relative paths start from."""
    if isinstance(source, os.PathLike) or (isinstance(source, str) and looks_like_path(source)):
        path = Path(source)
        return parse_yaml(read_text(path), path.name), path.name, path.parent
    if isinstance(source, str):
        return parse_yaml(source, "YAML input"), "YAML input", None
    if isinstance(source, Mapping):
        return [source], "manifests", None
    return list(source), "manifests", None


def screen(docs: list, label: str) -> list[Problem]:
    """Each document's ``apiVersion`` and ``kind`` must be strings (a list or a mapping there is no kind at all).

    The registry of kinds looks documents up by these two values; checked
    here first, each one that is not a string is one problem naming its document.
    """
    problems = []

    def visit(doc: Any, where: str) -> None:
        if not isinstance(doc, Mapping):
            return
        for key in ("apiVersion", "kind"):
            value = doc.get(key)
            if value is not None and not isinstance(value, str):
                problems.append(Problem(f"{label} {where}", key, f"expected a string, got {value!r}"))
        items = doc.get("items")
        if doc.get("kind") == "List" and isinstance(items, list):
            for i, item in enumerate(items):
                visit(item, f"{where}, items[{i}]")

    for i, doc in enumerate(docs, start=1):
        visit(doc, f"document {i}")
    return problems
