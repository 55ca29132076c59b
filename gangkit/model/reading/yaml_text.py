"""YAML in: the text of an input, decoded, parsed and screened before anything is built from it.

The first desk of the customs officer (:mod:`gangkit.model.reading`): before any
field is read, the input as a whole is checked, and what no report could
describe is refused with one problem naming the file: a file that is not
UTF-8 (or UTF-16 with its byte order mark, which kubectl reads too: k8s.io/cli-runtime
``pkg/resource/visitor.go`` decodes files with ``unicode.BOMOverride`` over UTF-8, so a dump
Windows PowerShell 5 redirected into a file reads; UTF-16 without the mark is an error
that says so), more than :data:`MAX_INPUT_BYTES`, nesting deeper than :data:`MAX_DEPTH`,
aliases that expand a document (a "billion laughs", :data:`ALIAS_ALLOWANCE`), and YAML
that does not parse (one problem with its line and column). A key written twice in one
mapping is a warning (:class:`GangkitInputWarning`), as kubectl's strict field
validation would refuse it. This module knows no kind of object.
"""

from __future__ import annotations

import codecs
import reprlib
import warnings
from pathlib import Path
from typing import Any

import yaml

from gangkit.model.errors import Problem, ScenarioError

__all__ = [
    "ALIAS_ALLOWANCE", "MAX_DEPTH", "MAX_INPUT_BYTES", "MAX_SCENARIO_PODS", "GangkitInputWarning", "MissingFileError",
    "looks_like_path", "parse_yaml", "read_text", "short",
]


class GangkitInputWarning(UserWarning):
    """Something in the input was read with a default or not read at all (the run still works)."""


class MissingFileError(ScenarioError, FileNotFoundError):
    """A file that is not there: one problem naming it, and still the ``FileNotFoundError`` Python code expects."""


# What gangkit reads at most (docs/reference/scenario-yaml.md, "Limits"). Beyond these a file is
# refused with one problem naming it, at once, instead of a wait of minutes or a crash.

#: One input (a file, or a YAML string) holds at most this many bytes. Kubernetes takes a file one
#: object per request, each at most 3 MiB (MaxRequestBodyBytes, k8s.io/apiserver pkg/server/config.go);
#: gangkit reads a whole cluster at once, a few seconds a megabyte (8 MiB: about 50,000 Nodes).
MAX_INPUT_BYTES = 8 * 2**20
#: A document nests mappings and lists at most this deep. Kubernetes objects nest about 15 levels
#: (a pod template's container's resources); YAML parsers stop far deeper (libyaml at 1000 levels,
#: go-yaml, which kubectl uses, at 10000), deeper than Python's own recursion can follow.
MAX_DEPTH = 100
#: Aliases (``*name``) may repeat at most as many nodes as a document writes, plus this many: the
#: defence against a "billion laughs" document, whose few lines of anchors expand to a billion
#: strings (go-yaml refuses such a document with "excessive aliasing" by a ratio of the same kind).
ALIAS_ALLOWANCE = 10_000

#: The most pods all Jobs of one input may have together over a run (gangkit's limit: it simulates
#: each pod, 150,000 pods of one gang in about 6 s).
MAX_SCENARIO_PODS = 1_000_000

_MERGE = "tag:yaml.org,2002:merge"
_SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml's parser, when PyYAML was built with it


class _Loader(_SafeLoader):
    """PyYAML's safe loader, whose scalars that do not fit their tag are YAML errors with a position.

    ``2025-13-45`` (a timestamp with month 13) or an integer of 5000 digits
    would otherwise end the load with a bare ``ValueError``.
    """

    def construct_object(self, node, deep=False):
        try:
            return super().construct_object(node, deep=deep)
        except (ValueError, OverflowError) as e:
            what = short(node.value) if isinstance(node, yaml.ScalarNode) else "the value"
            raise yaml.constructor.ConstructorError(
                None, None, f"cannot read {what} as {node.tag.rsplit(':', 1)[-1]}: {e}", node.start_mark) from None


class _Shorter(reprlib.Repr):
    """``reprlib``'s short repr, which also survives integers too long for Python to write (4300 digits)."""

    def __init__(self, width: int):
        super().__init__()
        self.maxlevel, self.maxstring, self.maxother, self.maxlong = 3, width, width, width

    def repr_int(self, x: int, level: int) -> str:
        return f"<an integer of {x.bit_length()} bits>" if x.bit_length() > 4 * self.maxlong else super().repr_int(x, level)


def short(value: Any, width: int = 80) -> str:
    """``repr(value)``, cut to ``width`` characters: a message quotes what it got without copying a whole file."""
    text = _Shorter(width).repr(value)
    return text if len(text) <= width else text[: width - 3] + "..."


def looks_like_path(text: str) -> bool:
    """Is this string a file name (``cluster.yaml``) rather than YAML text?"""
    if "\n" in text or ":" in text.split("/")[-1]:
        return False
    if text.endswith((".yaml", ".yml", ".json")):
        return True
    try:
        return len(text) < 4096 and Path(text).exists()  # a directory too: then the error says what it is
    except (OSError, ValueError):  # a name too long for the file system, a NUL byte
        return False


def read_text(path: Path) -> str:
    """The text of a YAML file, decoded as YAML allows: UTF-8, or UTF-16 with a byte order mark.

    A byte order mark (BOM) starts the file, or nothing does (then UTF-8), as
    the YAML spec's "character encodings" section and PyYAML's reader decide.
    Anything else (a Latin-1 file, binary data), a missing or unreadable
    path, a directory, or more than :data:`MAX_INPUT_BYTES` is one problem
    naming the file.
    """
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_INPUT_BYTES + 1)
    except FileNotFoundError:
        raise MissingFileError([Problem(f"File {path}", "", "not found")]) from None
    except IsADirectoryError:
        raise ScenarioError([Problem(f"File {path}", "", "expected a YAML file, got a directory")]) from None
    except OSError as e:
        raise ScenarioError([Problem(f"File {path}", "", f"cannot be read: {e.strerror or e}")]) from None
    name = Path(path).name
    _check_size(len(data), name)
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError as e:
            raise ScenarioError([Problem(name, f"byte {e.start}", "expected UTF-16 text after its byte order mark, "
                                         f"got bytes that are not ({e.reason})")]) from None
    start = len(codecs.BOM_UTF8) if data.startswith(codecs.BOM_UTF8) else 0
    try:
        return data[start:].decode("utf-8")
    except UnicodeDecodeError as e:
        at = start + e.start
        line = data.count(b"\n", 0, at) + 1
        column = at - data.rfind(b"\n", 0, at)
        raise ScenarioError([Problem(name, f"line {line}, column {column}", (
            f"expected UTF-8 text (or UTF-16 with a byte order mark), got the byte 0x{data[at]:02x}, which is "
            "not UTF-8 there (a Latin-1 or binary file?); save the file as UTF-8"))]) from None


def _check_size(size: int, label: str) -> None:
    if size > MAX_INPUT_BYTES:
        raise ScenarioError([Problem(label, "", (
            f"expected at most {MAX_INPUT_BYTES // 2**20} MiB of manifests, got more (gangkit's limit for one input; "
            "a cluster that large is better described by a WorkloadGenerator or a trace)"))])


def parse_yaml(text: str, label: str, notes: list[str] | None = None) -> list:
    """Every document of a YAML stream, as PyYAML's safe loader reads it (with libyaml when available).

    A syntax error is one problem with its position. Each document is
    screened before it is built: nesting deeper than :data:`MAX_DEPTH`, an
    anchor that contains its own alias, and aliases that repeat more than
    the document writes (:data:`ALIAS_ALLOWANCE`) are refused. A key that
    appears twice in one mapping is a warning naming it, appended to
    ``notes`` (emitted as :class:`GangkitInputWarning` without ``notes``).
    """
    _check_size(len(text), label)
    found: list[str] = []
    loader = _Loader(text)
    docs = []
    try:
        while loader.check_node():
            node = loader.get_node()
            _screen(node, label, found)
            data = loader.construct_document(node)
            if data is not None:
                docs.append(data)
    except yaml.YAMLError as e:
        raise _yaml_problem(e, text, label) from None
    except RecursionError:  # PyYAML's pure-Python composer recurses once per level (libyaml stops at 1000)
        raise ScenarioError([Problem(label, "", f"expected at most {MAX_DEPTH} levels of nested mappings and lists, "
                                                "got more (gangkit's limit: Kubernetes objects nest about 15)")]) from None
    finally:
        loader.dispose()
    if notes is None:
        for message in found:
            warnings.warn(message, GangkitInputWarning, stacklevel=2)
    else:
        notes.extend(found)
    return docs


def _at(mark) -> str:
    return f"line {mark.line + 1}, column {mark.column + 1}"


def _screen(root, label: str, notes: list[str]) -> None:
    """Refuse a document too deep, holding itself, or expanding through aliases; note its duplicate keys.

    One pass over the document's nodes, each node once (an alias is the
    node of its anchor, met again): ``size`` counts the nodes a node
    expands to, aliases counted at every use, so a billion laughs costs no
    more to measure than the lines that write it.
    """
    size: dict[int, int] = {}  # id(collection node) -> the nodes it expands to (scalars count 1)
    written = 1
    opened = {id(root)}
    if isinstance(root, yaml.MappingNode):
        _duplicate_keys(root, label, notes)
    stack = [(root, iter(_children(root)))]
    while stack:
        node, children = stack[-1]
        child = next(children, None)
        if child is None:
            stack.pop()
            opened.discard(id(node))
            size[id(node)] = 1 + sum(size.get(id(c), 1) for c in _children(node))
            continue
        key = id(child)
        if isinstance(child, yaml.ScalarNode):
            written += 1  # an aliased scalar counts as written: repeating it costs one node a use
            continue
        if key in size:
            continue
        if key in opened:
            raise ScenarioError([Problem(label, _at(child.start_mark), "invalid YAML: an alias inside its own "
                                         "anchor (the value would contain itself)")])
        if len(stack) >= MAX_DEPTH:
            raise ScenarioError([Problem(label, _at(child.start_mark), (
                f"expected at most {MAX_DEPTH} levels of nested mappings and lists, got more (gangkit's limit: "
                "Kubernetes objects nest about 15)"))])
        if isinstance(child, yaml.MappingNode):
            _duplicate_keys(child, label, notes)
        written += 1
        opened.add(key)
        stack.append((child, iter(_children(child))))
    total = size.get(id(root), 1)
    if total > 2 * written + ALIAS_ALLOWANCE:
        raise ScenarioError([Problem(label, _at(root.start_mark), (
            f"expected aliases to repeat at most as many nodes as the document writes ({written}, plus "
            f"{ALIAS_ALLOWANCE}), got a document of {written} nodes that expands to {_count(total)} (a \"billion "
            "laughs\" document?)"))])


def _children(node) -> list:
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    if isinstance(node, yaml.SequenceNode):
        return node.value
    return []


def _duplicate_keys(node, label: str, notes: list[str]) -> None:
    """A key written twice in one mapping: PyYAML keeps the last value; kubectl's strict field validation refuses it."""
    seen = set()
    for k, _ in node.value:
        if isinstance(k, yaml.ScalarNode) and k.tag != _MERGE:
            if (k.tag, k.value) in seen:
                notes.append(f"{label}: {_at(k.start_mark)}: the key {short(k.value)} appears twice in one mapping; "
                             "gangkit keeps the last value (kubectl's default --validate=strict refuses a duplicate field)")
            seen.add((k.tag, k.value))


def _count(n: int) -> str:
    return f"{n:,}" if n < 10**15 else f"about 10^{len(str(n)) - 1}"


def _yaml_problem(e: yaml.YAMLError, text: str, label: str) -> ScenarioError:
    """One problem for a YAML error, with its position, worded as PyYAML words it.

    libyaml words some errors differently and places a few elsewhere (at the
    end of the stream rather than at an unclosed bracket); for those, the
    pure-Python parser reads the text again, which costs time only for a
    file that does not load.
    """
    deep = "maximum nesting" in str(e)  # libyaml's own depth limit: the pure-Python parser would only recurse into it
    if _SafeLoader is not yaml.SafeLoader and not isinstance(e, yaml.constructor.ConstructorError) and not deep:
        try:
            for _ in yaml.compose_all(text, Loader=yaml.SafeLoader):
                pass
        except yaml.YAMLError as python_error:
            e = python_error
        except RecursionError:  # nesting libyaml refused and Python cannot follow: libyaml's answer stands
            pass
    if isinstance(e, yaml.reader.ReaderError):
        line = text.count("\n", 0, e.position) + 1
        column = e.position - text.rfind("\n", 0, e.position)
        what = str(e).splitlines()[0]
        if e.character in ("\0", 0):  # kubectl too reads UTF-16 only after its BOM (cli-runtime's FileVisitor)
            what += (" (a NUL byte: UTF-16 without its byte order mark? UTF-16 is read only after one, as kubectl "
                     "reads it; save the file as UTF-8)")
        return ScenarioError([Problem(label, f"line {line}, column {column}", f"invalid YAML: {what}")])
    mark = getattr(e, "problem_mark", None)
    where = _at(mark) if mark else ""
    what = " ".join(str(x) for x in (getattr(e, "context", None), getattr(e, "problem", None)) if x)
    return ScenarioError([Problem(label, where, f"invalid YAML: {what or str(e).splitlines()[0]}")])
