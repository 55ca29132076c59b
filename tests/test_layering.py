"""The library's shape: imports run one way, no cycles, no private names across modules, no giant modules.

gangkit's packages are layers of an architecture (README, "Contributing"):

    model < engine < layers (placement, volcano, kueue, supply) < workloads, manifests
          < results < simulate, stacks < analysis < lessons, checks < cli

A module may import modules of its own tier or below, never above, also not late inside a
function (a late import is still a dependency). Every ``manifests`` module of a layer package
(``gangkit.volcano.manifests``...) belongs to the manifests tier: it reads YAML into the layer's
objects. The root package ``gangkit`` is the public surface; no module inside imports it. The
source is read with ``ast``, not imported, so a failure names the file and the line.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "gangkit"
TIERS = {
    "model": 0, "engine": 1, "placement": 2, "volcano": 2, "kueue": 2, "supply": 2, "workloads": 3, "manifests": 3,
    "results": 4, "simulate": 5, "stacks": 5, "analysis": 6, "consistency": 6, "lessons": 7, "checks": 7, "grading": 7, "cli": 8,
}
TIER_NAMES = {0: "model", 1: "engine", 2: "layers", 3: "workloads/manifests", 4: "results", 5: "simulate/stacks",
              6: "analysis", 7: "lessons/checks/grading", 8: "cli"}
#: Modules of a layer package that read or write manifests, and so sit in the manifests tier.
MANIFEST_MODULES = ("manifests", "setup_manifests", "snapshot", "dump")
MAX_LINES = 800


def module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def tier(module: str) -> int | None:
    """The tier of a gangkit module (None for the root package, the public surface)."""
    parts = module.split(".")
    if len(parts) == 1:
        return None
    t = TIERS[parts[1]]
    if t == 2 and len(parts) > 2 and parts[-1] in MANIFEST_MODULES:
        return TIERS["manifests"]
    return t


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def resolve(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".")
    if not is_package:
        base = base[:-1]
    base = base[:len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def imports_of(module: str) -> list[tuple[int, str, list[str]]]:
    """(line, imported gangkit module, names imported from it) for every import of ``module``, late ones included."""
    path = MODULES[module]
    tree = ast.parse(path.read_text())
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name, []) for a in node.names if a.name.split(".")[0] == "gangkit"]
        elif isinstance(node, ast.ImportFrom):
            target = resolve(module, path.name == "__init__.py", node)
            if target.split(".")[0] != "gangkit":
                continue
            names = [a.name for a in node.names]
            # ``from gangkit.pkg import module``: a dependency on that module, not on the package alone
            subs = [n for n in names if f"{target}.{n}" in MODULES]
            out += [(node.lineno, f"{target}.{n}", []) for n in subs]
            rest = [n for n in names if n not in subs]
            if rest or not subs:
                out.append((node.lineno, target, rest))
    return out


GRAPH = {m: imports_of(m) for m in MODULES}


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m != "gangkit"))
def test_imports_run_down_the_layers(module):
    here = tier(module)
    bad = []
    for line, target, _ in GRAPH[module]:
        if target == "gangkit":
            bad.append(f"line {line}: imports the root package gangkit (import the module it comes from)")
            continue
        if target not in MODULES:
            bad.append(f"line {line}: imports {target}, which is no module of gangkit")
            continue
        there = tier(target)
        if there is not None and there > here:
            bad.append(f"line {line}: imports {target} ({TIER_NAMES[there]}) from the {TIER_NAMES[here]} tier")
    assert not bad, f"{MODULES[module].relative_to(PACKAGE.parent)}:\n  " + "\n  ".join(bad)


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_private_name_is_imported_across_modules(module):
    bad = [f"line {line}: from {target} import {n}" for line, target, names in GRAPH[module]
           for n in names if n.startswith("_") and not n.startswith("__")]
    tree = ast.parse(MODULES[module].read_text())
    bound = {a.asname or a.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
             for a in node.names if f"{resolve(module, MODULES[module].name == '__init__.py', node)}.{a.name}" in MODULES}
    for node in ast.walk(tree):  # module._name, for a gangkit module imported by name
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in bound
                and node.attr.startswith("_") and not node.attr.startswith("__")):
            bad.append(f"line {node.lineno}: {node.value.id}.{node.attr}")
    assert not bad, f"{MODULES[module].relative_to(PACKAGE.parent)}:\n  " + "\n  ".join(bad)


def test_no_import_cycle():
    """Depth-first search over the module graph; a back edge is a cycle (package __init__ re-exports aside)."""
    edges = {m: sorted({t for _, t, _ in GRAPH[m] if t in MODULES and not _reexport(m, t)}) for m in MODULES}
    state: dict[str, int] = {}
    cycles = []

    def visit(m: str, stack: list[str]) -> None:
        state[m] = 1
        stack.append(m)
        for t in edges[m]:
            if state.get(t) == 1:
                cycles.append(" -> ".join(stack[stack.index(t):] + [t]))
            elif t not in state:
                visit(t, stack)
        stack.pop()
        state[m] = 2

    for m in sorted(MODULES):
        if m not in state:
            visit(m, [])
    assert not cycles, "import cycles:\n  " + "\n  ".join(cycles)


def _reexport(module: str, target: str) -> bool:
    """A package's __init__ importing from inside itself (its public surface) is no edge of a cycle."""
    return MODULES[module].name == "__init__.py" and target.startswith(module + ".")


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_module_is_over_800_lines(module):
    lines = MODULES[module].read_text().count("\n")
    assert lines <= MAX_LINES, f"{MODULES[module].relative_to(PACKAGE.parent)} has {lines} lines; split it by concept"


def test_every_package_is_in_the_table():
    packages = {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    modules = {p.stem for p in PACKAGE.glob("*.py") if p.stem != "__init__"}
    assert packages | modules <= set(TIERS), f"not in the tier table: {sorted((packages | modules) - set(TIERS))}"


def test_the_checks_find_what_they_look_for():
    """The walk sees late imports and names bound to modules (so the tests above can fail)."""
    late = [t for line, t, _ in GRAPH["gangkit.results.result"]]
    assert "gangkit.results.plots" in late  # imported inside the plot shortcuts
    assert tier("gangkit.volcano.manifests") == 3 and tier("gangkit.volcano.scheduler") == 2
