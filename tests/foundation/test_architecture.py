"""The shape of the code, checked over the source with ``ast`` (nothing is imported): no import cycle between
packages, no package reaching into another's private names, small modules and functions (docs/architecture.md)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"
PKG = SRC / "mpsready"
MAX_MODULE_LINES = 600
MAX_FUNCTION_LINES = 80
# the bundled demo project is a user's program that mpsready scans and runs, not mpsready's code
SKIP = ("examples",)


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted(PKG.rglob("*.py")):
        rel = path.relative_to(SRC).with_suffix("")
        parts = list(rel.parts)
        if parts[1:2] and parts[1] in SKIP:
            continue
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


MODULES = _modules()
TREES = {name: ast.parse(path.read_text(encoding="utf-8"), str(path)) for name, path in MODULES.items()}


def unit(module: str) -> str:
    """The architectural unit a module belongs to: ``mpsready.scan.code.analyzer`` -> ``scan``; a top-level
    module (``mpsready.findings``) is a unit of its own."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def _absolute(module: str, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    is_pkg = MODULES[module].name == "__init__.py"
    base = module.split(".")[: len(module.split(".")) - node.level + (1 if is_pkg else 0)]
    return ".".join(base + ([node.module] if node.module else []))


def imports(module: str) -> list[tuple[str, list[str], int]]:
    """(imported module, names taken from it, line) for every import in ``module``, at any depth (a function's
    lazy import is a dependency too)."""
    out = []
    for node in ast.walk(TREES[module]):
        if isinstance(node, ast.Import):
            out += [(a.name, [], node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            out.append((_absolute(module, node), [a.name for a in node.names], node.lineno))
    return [(m, names, line) for m, names, line in out if m == "mpsready" or m.startswith("mpsready.")]


def _target(imported: str, name: str) -> str:
    """``from mpsready.scan import engine`` names a module: the dependency is on it, not on the package."""
    sub = f"{imported}.{name}"
    return sub if sub in MODULES else imported


def unit_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for module in MODULES:
        src = unit(module)
        for imported, names, _ in imports(module):
            for target in [_target(imported, n) for n in names] or [imported]:
                dst = unit(target)
                if dst != src and target != "mpsready":
                    graph.setdefault(src, set()).add(dst)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one unit (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_cycle_finder_finds_a_planted_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_units_are_resolved_as_expected():
    assert unit("mpsready.scan.code.analyzer") == "scan"
    assert unit("mpsready.findings") == "findings"
    graph = unit_graph()
    assert "findings" in graph["scan"]  # every stage reports through the shared findings model


def test_no_import_cycle_between_packages():
    assert _cycles(unit_graph()) == []


def test_no_package_imports_another_packages_private_names():
    bad = []
    for module in MODULES:
        src = unit(module)
        bound: dict[str, str] = {}  # local name -> mpsready module it stands for
        for imported, names, line in imports(module):
            for name in names:
                target = _target(imported, name)
                if unit(target) == src:
                    continue
                if name.startswith("_") and not name.startswith("__"):
                    bad.append(f"{module}:{line} imports {imported}.{name}")
                if target in MODULES:
                    bound[name] = target
        for node in ast.walk(TREES[module]):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in bound \
                    and node.attr.startswith("_") and not node.attr.startswith("__"):
                bad.append(f"{module}:{node.lineno} reads {bound[node.value.id]}.{node.attr}")
    assert bad == []


def test_no_module_over_the_size_limit():
    big = {name: n for name, path in MODULES.items()
           if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES}
    assert big == {}


def _long_functions() -> list[str]:
    out = []
    for module, tree in TREES.items():
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = (node.end_lineno or node.lineno) - node.lineno + 1
                doc = ast.get_docstring(node) or ""
                if n > MAX_FUNCTION_LINES and "Long because" not in doc:
                    out.append(f"{module}.{node.name} ({n} lines)")
    return sorted(out)


def test_no_long_function_without_a_reason():
    # a function may be longer when its docstring says why, in a sentence starting "Long because"
    assert _long_functions() == []


@pytest.mark.parametrize("name", ["mpsready.findings", "mpsready.versions"])
def test_shared_modules_import_no_stage(name):
    stages = {unit(m) for m in MODULES} - {"findings", "versions", "errors", "schema", "safeio"}
    assert {unit(m) for m, _, _ in imports(name)} & stages == set()


# The support data and curated tables are read by the judge (ops/judge.py, ops/api_judge.py) and the ops stage
# only: the emulated device observes and forwards, so it never opens them itself (issue 20, "one judge").
DATA_READERS = ("mpsready.ops.build", "mpsready.ops.build.curated")


def test_the_emulated_device_reads_no_support_data_itself():
    readers = sorted((m, line) for m in MODULES if unit(m) == "emulate"
                     for imported, names, line in imports(m)
                     if imported in DATA_READERS or imported == "mpsready.ops.api"
                     or (imported == "mpsready.ops" and {"api", "build"} & set(names)))
    assert readers == []


def test_the_judge_and_the_emulator_depend_one_way():
    # the emulator asks the judge, trace runs on the emulator; neither the judge nor the emulator knows trace
    g = unit_graph()
    assert {"ops"} <= g["emulate"] and {"emulate", "ops"} <= g["trace"]
    assert "trace" not in g["emulate"] and not {"trace", "emulate"} & g.get("ops", set())
