"""The library's shape: imports run one way, no cycles, no private names across modules, no giant modules.

gangkit's packages are layers of an architecture (README, "Contributing"):

    model < engine < layers (placement, volcano, kueue, supply) < workloads, manifests
          < results < simulate, stacks < analysis < lessons, checks < cli

A module may import modules of its own tier or below, never above, also not late inside a
function (a late import is still a dependency). There is no exemption: the reader every family
of manifests builds on is in the lowest tier (``gangkit.model.reading``), so a layer's manifest
module (``gangkit.volcano.manifests``...) reads YAML into the layer's objects in the layer's own
tier; what needs more (the loader, ``gangkit admit``'s snapshot) is in ``gangkit.manifests``.
Tiers alone would let two packages of one tier import each other; the package cycle check
forbids that too. The root package ``gangkit`` is the public surface; no module inside imports
it. The source is read with ``ast``, not imported, so a failure names the file and the line.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from paths import REPO

PACKAGE = REPO / "gangkit"
TIERS = {
    "model": 0, "engine": 1, "placement": 2, "volcano": 2, "kueue": 2, "supply": 2, "workloads": 3, "manifests": 3,
    "results": 4, "simulate": 5, "stacks": 5, "analysis": 6, "consistency": 6, "lessons": 7, "checks": 7, "grading": 7, "cli": 8,
}
TIER_NAMES = {0: "model", 1: "engine", 2: "layers", 3: "workloads/manifests", 4: "results", 5: "simulate/stacks",
              6: "analysis", 7: "lessons/checks/grading", 8: "cli"}
MAX_LINES = 600


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
    return TIERS[parts[1]]


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


def package_of(module: str) -> str:
    """The package of the library a module belongs to: ``gangkit.kueue.tas.cache`` -> ``gangkit.kueue``."""
    return ".".join(module.split(".")[:2])


def package_graph(graph: dict[str, list[tuple[int, str, list[str]]]]) -> dict[str, set[str]]:
    """Which packages each package imports (the root package, the public surface, aside)."""
    edges: dict[str, set[str]] = {}
    for module, imports in graph.items():
        if module == "gangkit":
            continue
        here = edges.setdefault(package_of(module), set())
        here |= {package_of(t) for _, t, _ in imports if t != "gangkit" and package_of(t) != package_of(module)}
    return edges


def package_cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The groups of packages that import each other, directly or through others (Tarjan's strongly connected
    components of more than one package), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups = []

    def visit(p: str) -> None:
        index[p] = low[p] = len(index)
        stack.append(p)
        for q in sorted(edges.get(p, ())):
            if q not in index:
                visit(q)
                low[p] = min(low[p], low[q])
            elif q in stack:
                low[p] = min(low[p], index[q])
        if low[p] == index[p]:
            group = []
            while not group or group[-1] != p:
                group.append(stack.pop())
            if len(group) > 1:
                groups.append(sorted(group))

    for p in sorted(edges):
        if p not in index:
            visit(p)
    return sorted(groups)


def test_no_two_packages_import_each_other():
    """Tiers let two packages of one tier import each other (``manifests`` and ``workloads``, two layers); this does not."""
    cycles = package_cycles(package_graph(GRAPH))
    assert not cycles, "packages that import each other:\n  " + "\n  ".join(" <-> ".join(c) for c in cycles)


def _fake(*edges: str) -> dict[str, list[tuple[int, str, list[str]]]]:
    """A module graph from ``"a.x -> b.y"`` rows (module names without the ``gangkit.`` prefix)."""
    graph: dict[str, list[tuple[int, str, list[str]]]] = {}
    for row in edges:
        src, dst = (f"gangkit.{m.strip()}" if m.strip() != "gangkit" else "gangkit" for m in row.split("->"))
        graph.setdefault(src, []).append((1, dst, []))
        graph.setdefault(dst, [])
    return graph


@pytest.mark.parametrize("edges, expected", [
    pytest.param(["kueue.layer -> manifests.load", "manifests.load -> kueue.manifests"],
                 [["gangkit.kueue", "gangkit.manifests"]], id="two packages importing each other are a cycle"),
    pytest.param(["a.x -> b.x", "b.y -> c.x", "c.z -> a.w"], [["gangkit.a", "gangkit.b", "gangkit.c"]],
                 id="a cycle through a third package is found"),
    pytest.param(["a.x -> b.x", "b.y -> c.x", "a.w -> c.z"], [], id="imports that run one way are no cycle"),
    pytest.param(["a.x -> a.y", "a.y -> a.tools.z", "a.tools.z -> a.x"], [],
                 id="modules of one package importing each other are no package cycle"),
    pytest.param(["gangkit -> a.x", "a.x -> b.y"], [], id="the root package re-exporting is no cycle"),
    pytest.param(["a.x -> b.x", "b.x -> a.y", "c.x -> d.x", "d.y -> c.y"], [["gangkit.a", "gangkit.b"], ["gangkit.c", "gangkit.d"]],
                 id="two separate cycles are both named"),
])
def test_the_package_cycle_check_can_fail(edges, expected):
    assert package_cycles(package_graph(_fake(*edges))) == expected


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_module_is_over_600_lines(module):
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
    assert tier("gangkit.volcano.manifests") == 2 and tier("gangkit.model.reading.reader") == 0
