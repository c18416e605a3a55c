"""No import cycle between the packages ``mpsready.emulate``, ``mpsready.trace`` and ``mpsready.ops``, read from
the source with :mod:`ast`: every ``import`` and ``from ... import`` counts, at module level and inside functions
(a lazy import is still a dependency: the cycle only moves to run time)."""
from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"
WATCHED = ("mpsready.emulate", "mpsready.trace", "mpsready.ops")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imported(tree: ast.AST, module: str, is_package: bool) -> set[str]:
    """The ``mpsready`` modules named by every import in ``tree`` (relative imports resolved)."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".")
                base = base[:len(base) - node.level + (1 if is_package else 0)]
                name = ".".join(base + ([node.module] if node.module else []))
            else:
                name = node.module or ""
            out.add(name)
            out.update(f"{name}.{a.name}" for a in node.names)  # ``from mpsready import frames``
    return {m for m in out if m == "mpsready" or m.startswith("mpsready.")}


def _package(module: str) -> str:
    """``mpsready.trace.predict`` -> ``mpsready.trace``; a top-level module (``mpsready.frames``) is its own node."""
    return ".".join(module.split(".")[:2])


def package_graph() -> dict[str, set[str]]:
    modules = {_module_name(p): p for p in SRC.joinpath("mpsready").rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        src = _package(name)
        for dep in _imported(tree, name, path.name == "__init__.py"):
            # ``from mpsready.ops import judge`` names both ``mpsready.ops`` and ``mpsready.ops.judge``: keep
            # the names that are modules or packages of the tree
            while dep not in modules and "." in dep:
                dep = dep.rsplit(".", 1)[0]
            dst = _package(dep)
            if dst != src and dst != "mpsready":
                graph.setdefault(src, set()).add(dst)
    return graph


def _reaches(graph: dict[str, set[str]], start: str, goal: str) -> list[str] | None:
    """A path of package imports from ``start`` to ``goal`` (through any package), or None."""
    seen = {start}
    stack = [[start]]
    while stack:
        path = stack.pop()
        for nxt in sorted(graph.get(path[-1], ())):
            if nxt == goal:
                return path + [nxt]
            if nxt not in seen:
                seen.add(nxt)
                stack.append(path + [nxt])
    return None


def test_graph_reads_the_known_edges():
    g = package_graph()
    assert "mpsready.ops" in g["mpsready.emulate"]  # the emulator asks the judge
    assert "mpsready.emulate" in g["mpsready.trace"]  # trace on the emulated device
    assert "mpsready.ops" in g["mpsready.trace"]


def test_no_cycle_between_emulate_trace_and_ops():
    g = package_graph()
    cycles = []
    for a in WATCHED:
        for b in WATCHED:
            if a < b:
                there, back = _reaches(g, a, b), _reaches(g, b, a)
                if there and back:
                    cycles.append(there + back[1:])
    assert cycles == []


def test_emulate_and_ops_import_no_trace_module():
    g = package_graph()
    assert "mpsready.trace" not in g["mpsready.emulate"]
    assert "mpsready.trace" not in g.get("mpsready.ops", set())
    assert "mpsready.emulate" not in g.get("mpsready.ops", set())
