"""One catalogue of reason codes (gangkit.model.reasons): every code the layers give is in it, with a meaning.

The layers' source is read, not run: every ``Reason(layer, code, ...)`` written in gangkit/ must
name a code of the catalogue, given by the layer the catalogue says, so that a new reason cannot
be added without saying what it means and where its time is counted.
"""

from __future__ import annotations

import ast

import pytest

from gangkit.model.reasons import CATALOGUE, JOB_STATES, Code, Reason, describe
from gangkit.results.diagnosis import CODES, WAITING

from paths import PACKAGE


def _constants(tree: ast.Module) -> dict[str, str]:
    """Module-level NAME = "string" assignments (codes are sometimes named constants)."""
    out = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    out[target.id] = node.value.value
    return out


def _values(node: ast.expr, names: dict[str, str]) -> list[str]:
    """The strings an argument can be: a literal, a named constant, or either branch of ``a if c else b``."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.Name) and node.id in names:
        return [names[node.id]]
    if isinstance(node, ast.IfExp):
        return _values(node.body, names) + _values(node.orelse, names)
    return []


def reasons_in_source() -> list[tuple[str, int, str, str]]:
    """(file, line, layer, code) of every Reason(...) call with a layer and code gangkit can read off the source."""
    imported: dict[str, str] = {}
    for path in PACKAGE.rglob("*.py"):  # named constants of every module, for codes imported by name
        imported.update(_constants(ast.parse(path.read_text())))
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text())
        names = {**imported, **_constants(tree)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Reason" and len(node.args) >= 2:
                for layer in _values(node.args[0], names):
                    for code in _values(node.args[1], names):
                        out.append((str(path.relative_to(PACKAGE)), node.lineno, layer, code))
    return out


FOUND = reasons_in_source()


def test_the_source_scan_finds_the_layers_reasons():
    codes = {code for *_, code in FOUND}
    assert len(FOUND) > 30 and {"GangCannotFit", "Unschedulable", "PodsReadyTimeout", "Consolidation"} <= codes


@pytest.mark.parametrize("where, line, layer, code", FOUND, ids=[f"{w}:{n}:{c}" for w, n, _, c in FOUND])
def test_every_reason_a_layer_gives_is_catalogued_under_its_layer(where, line, layer, code):
    entry = describe(code, layer)
    assert entry.layer == layer, f"{where}:{line}: {code} is catalogued for layer {entry.layer}, given by {layer}"
    assert entry.meaning and entry.source


@pytest.mark.parametrize("code", CODES)
def test_every_diagnosis_code_is_catalogued(code):
    entry = describe(code)
    assert entry.meaning
    assert (entry.bucket != "") == (code in WAITING), f"{code}: a waiting code has a bucket, others none"


def test_catalogue_entries_are_complete_and_buckets_are_known():
    buckets = {"", "quota", "admission_check", "placement", "node_*"}
    for key, entry in CATALOGUE.items():
        assert isinstance(entry, Code) and key.endswith(entry.code)
        assert entry.bucket in buckets, key
    assert set(JOB_STATES) == {"Finished", "Deadlocked", "WaitingAtEnd", "RunningAtEnd", "Rejected", "Deactivated",
                               "Failed"}


@pytest.mark.parametrize("cause", ["QuotaExhausted", "QuotaTooSmall"])
def test_kueue_causes_are_catalogued(cause):
    assert describe(cause).bucket == "quota"


def test_a_cause_does_not_change_how_a_reason_prints_or_compares():
    plain = Reason("quota", "Pending", "insufficient unused quota", {"state": "active"})
    caused = Reason("quota", "Pending", "insufficient unused quota", {"state": "active"}, cause="QuotaExhausted")
    assert (str(plain), repr(plain)) == (str(caused), repr(caused)) and plain == caused
