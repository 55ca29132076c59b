"""Fuzzing the manifests: every input loads or is one clear ScenarioError, and the command line never shows a traceback.

Hypothesis mutates the project's own examples (``examples/*.yaml``, ``examples/migration/*.yaml``):
a field at any path gets another type or an extreme number, or is removed; a document takes the
kind of another; a value becomes a YAML feature (a tag, an alias, deep nesting, a key written
twice); a document of aliases is added (a billion laughs, an alias inside its own anchor); the
text is re-encoded (Latin-1, UTF-16 with and without its byte order mark, a byte order mark before
other bytes), cut off, or replaced by noise. Whatever comes out, gangkit reads it or raises
:class:`~gangkit.model.errors.ScenarioError`, one line per problem, never another exception; and
``gangkit run``, ``gangkit admit`` and ``gangkit check`` exit 0, 1 or 2, with ``error:`` lines and no
traceback. The examples are derandomized (the same ones on every run) and few, so the test runs
in seconds; tests/architecture/test_input_errors.py holds one named case per class of failure found this way.
"""

from __future__ import annotations

import codecs
import contextlib
import copy
import io
import json
import tempfile
import warnings
from pathlib import Path

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gangkit as gk
from gangkit.cli.main import main
from gangkit.consistency.check import check
from gangkit.manifests import load_file
from gangkit.manifests.kueue_snapshot import load_kueue

from paths import REPO

ROOT = REPO / "examples"
EXAMPLES = sorted(ROOT.glob("*.yaml")) + sorted((ROOT / "migration").glob("*.yaml"))
DOCS = {p.name: [d for d in yaml.safe_load_all(p.read_text(encoding="utf-8")) if d is not None] for p in EXAMPLES}
# generator-mix.yaml streams 2000 jobs: a second to simulate, so it is fuzzed through loading only
RUNNABLE = [p.name for p in EXAMPLES if p.name != "generator-mix.yaml"]


def nested(depth: int):
    value: object = 1
    for _ in range(depth):
        value = [value]
    return value


#: Values that replace a field: other types, numbers beyond every range gangkit states, edge cases.
EXTREMES = [None, True, False, 0, -1, 1, 0.5, -0.0, 2**63, 2**63 - 1, 10**400, 1e308, -1e308, float("inf"),
            float("nan"), "", "x", "-1", "0", "1e999", "1e309", "9999999999h", "500m", "16Gi", "Never", "a" * 5000,
            "\x00", [], [1, 2], ["a"], {}, {"a": [1]}, {"name": "x"}, nested(150)]
#: Numbers that are valid but make a run long (a horizon of 68 years: Kueue requeues a gang that
#: never fits once an hour for all of it); loading is fuzzed with them, the command line is not.
LONG_BUT_VALID = [2**31 - 1, 2**31]
#: YAML text put where a value was.
SNIPPETS = ["!!binary aGVsbG8=", "!!set {x: null}", "!!omap [{x: 1}]", "2025-13-45", "1" * 5000, "&x [*x]",
            "*undefined", "!custom 1", "!!python/object:os.system x", "{a: 1, a: 2}", "[" * 120 + "]" * 120,
            ".inf", "0x10", "1_000", "190:20:30", "~", "!!float 1e999", "&a [1, 2]"]
LAUGHS = "---\na: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join([f'*{chr(97 + i)}'] * 10)}]\n" for i in range(8))
#: Documents added at the end (mostly none).
APPENDED = [""] * 10 + [LAUGHS, "---\na: &x [1, *x]\n", "---\nx: " + "{a: " * 200 + "1" + "}" * 200 + "\n",
                        "---\n- - - - - -\n", "---\n? [a, b]\n: 1\n"]
ENCODINGS = {
    "UTF-8": lambda text: text.encode(),
    "Latin-1": lambda text: ("# caf\u00e9 \u00e0 la cr\u00e8me\n" + text).encode("latin-1", "replace"),
    "UTF-16": lambda text: text.encode("utf-16"),
    "UTF-16 without BOM": lambda text: text.encode("utf-16-le"),
    "BOM and other bytes": lambda text: codecs.BOM_UTF8 + b"\xff\xfe\x80" + text.encode(),
}
#: How the file is encoded: mostly UTF-8, so that most examples reach the readers of the kinds.
MOSTLY_UTF8 = ["UTF-8"] * 6 + [name for name in ENCODINGS if name != "UTF-8"]
HOLE = "gangkit-fuzz-hole"


def field_paths(node, prefix=()):
    """Every path into a document: keys of mappings, indexes of lists."""
    if prefix:
        yield prefix
    if isinstance(node, dict):
        for k, v in node.items():
            yield from field_paths(v, (*prefix, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from field_paths(v, (*prefix, i))


@st.composite
def mutated(draw, files: list[str], values: list, encodings: list[str], fewest: int = 1) -> tuple[bytes, str]:
    """An example file with ``fewest`` to 2 fields mutated, as bytes, and the encoding they are in."""
    docs = copy.deepcopy(DOCS[draw(st.sampled_from(files))])
    snippet = None
    for _ in range(draw(st.integers(fewest, 2))):
        doc = docs[draw(st.integers(0, len(docs) - 1))]
        path = draw(st.sampled_from(list(field_paths(doc))))
        parent = doc
        for key in path[:-1]:
            parent = parent[key]
        what = draw(st.sampled_from(["value", "value", "value", "remove", "snippet", "kind"]))
        if what == "remove":
            del parent[path[-1]]
        elif what == "snippet":
            parent[path[-1]], snippet = HOLE, draw(st.sampled_from(SNIPPETS))
        elif what == "kind":
            other = draw(st.sampled_from([d for ds in DOCS.values() for d in ds]))
            doc["apiVersion"], doc["kind"] = other.get("apiVersion"), other.get("kind")
        else:
            parent[path[-1]] = copy.deepcopy(draw(st.sampled_from(values)))
    text = yaml.safe_dump_all(docs, sort_keys=False, allow_unicode=True) + draw(st.sampled_from(APPENDED))
    if snippet is not None:
        text = text.replace(f"'{HOLE}'", snippet).replace(HOLE, snippet)
    encoding = draw(st.sampled_from(encodings))
    data = ENCODINGS[encoding](text)
    ending = draw(st.sampled_from(["whole"] * 12 + ["cut", "noise"]))
    if ending == "cut":
        data = data[: draw(st.integers(0, len(data)))]
    elif ending == "noise":
        data = draw(st.binary(min_size=1, max_size=300))
    return data, encoding if ending != "noise" else "noise"


def one_line_per_problem(error: gk.ScenarioError) -> None:
    """The error is the report gangkit promises: each problem names its object, says what was expected, in one line."""
    lines = str(error).splitlines()
    assert error.problems and len(lines) == len(error.problems)
    assert all(p.obj and p.message for p in error.problems)


@settings(max_examples=150, derandomize=True, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(case=mutated(list(DOCS), EXTREMES + LONG_BUT_VALID, MOSTLY_UTF8))
def test_every_mutated_manifest_loads_or_is_one_scenario_error(case):
    data, encoding = case
    with tempfile.TemporaryDirectory() as folder, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        path = Path(folder) / "fuzz.yaml"
        path.write_bytes(data)
        readers = [load_file, load_kueue, lambda p: check([p])]
        for read in readers:
            try:
                read(path)
            except gk.ScenarioError as e:
                one_line_per_problem(e)


def run_cli(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            status = main(argv)
        except SystemExit as exit_:
            status = exit_.code
    return status, out.getvalue(), err.getvalue()


def no_infinity(constant: str):
    raise AssertionError(f"--json printed {constant}, which is not JSON")


@settings(max_examples=40, derandomize=True, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(case=mutated(RUNNABLE, EXTREMES, MOSTLY_UTF8, fewest=0))  # unmutated files too: runs that work print JSON
def test_the_command_line_never_ends_in_a_traceback(case):
    data, encoding = case
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "fuzz.yaml"
        path.write_bytes(data)
        commands = [["run", str(path), "--json"], ["admit", str(path), "--json"], ["check", str(path), "--json"]]
        for argv in commands:
            status, out, err = run_cli(argv)
            assert status in (0, 1, 2) and "Traceback" not in err, (argv[0], status, err[-500:])
            if status == 2:
                assert out == "" and err.startswith(("error: ", "warning: ")), (argv[0], err[-500:])
                assert any(line.startswith("error: ") for line in err.splitlines())
            else:
                json.loads(out, parse_constant=no_infinity)
