"""Which scripts' device selections a Python file can run under: the programs it is part of.

A ``.cuda()`` that cannot see the project's selection is left for a person when the project selects its device
itself (:mod:`mpsready.migrate.selections`): an independent choice there could put one tensor on MPS while the
selection (forced to the CPU by ``--no-cuda``) keeps the model on the CPU. That danger exists only inside one
process. A standalone script that no other file imports and that imports nothing holding the selection
(pyGAT's ``visualize_graph.py`` beside ``train.py``'s ``args.cuda`` switch) runs as a program of its own: the
selection never runs in its process, so the helper's choice there mixes with nothing.

So a file follows the selections of the files of every program it can run in: each *root* that runs as a program
(a ``.py`` file no other project file imports, with a ``__main__`` guard or module-level work: the scan's
:func:`~mpsready.scan.code.summaries.is_entry`) with everything it imports, transitively. A root that is only a
library (definitions, no work of its own) is no program: it is loaded some way the imports do not show (a Hydra
``_target_``, a registry, a config string), so it and everything it imports follow every script's selection.
Imports are over-approximated, the safe direction (a file followed in error only leaves a fix for a person): an
absolute import matches every project
module whose dotted path equals it or ends with it (``sys.path`` additions and ``src/`` layouts), a relative one its
package's module, and each matches its parent packages' ``__init__``. Where the project loads code some other
way (``importlib.import_module``, ``__import__``, ``exec``, ``runpy``, ``spec_from_file_location``,
``load_source``) or a file does not parse, the answer is ``None`` for the whole project: every script then follows
every script's selection, as before; so does a file reached from no root (an import cycle).
Imports are read from the files with :mod:`ast`; nothing is imported or run.
"""

from __future__ import annotations

import ast
from pathlib import PurePosixPath

# names whose call loads code the static imports do not show (exec(open("configurator.py").read()): nanoGPT)
_DYNAMIC = frozenset({"import_module", "__import__", "exec", "execfile", "run_path", "run_module",
                      "spec_from_file_location", "load_source", "SourceFileLoader"})


def _module(rel: str) -> tuple[str, ...]:
    parts = PurePosixPath(rel).with_suffix("").parts
    return parts[:-1] if parts and parts[-1] == "__init__" else parts


def _targets(rel: str, tree: ast.Module) -> list[tuple[str, ...]] | None:
    """The dotted names ``rel`` imports (with ``from X import n``: ``X`` and ``X.n``), or ``None`` when it loads
    code dynamically."""
    out: list[tuple[str, ...]] = []
    package = _module(rel) if rel.endswith("__init__.py") else _module(rel)[:-1]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [tuple(a.name.split(".")) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - (node.level - 1)] if node.level - 1 <= len(package) else ()
            else:
                base = ()
            full = base + (tuple(node.module.split(".")) if node.module else ())
            out += [full] + [full + (a.name,) for a in node.names if a.name != "*"]
        elif isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            if name in _DYNAMIC:
                return None
    return out


def imports_of(rel: str, data: bytes) -> tuple[list[tuple[str, ...]], bool] | None:
    """What the ``.py`` file ``rel`` imports (:func:`_targets`) and whether it runs as a program, or ``None`` when it
    loads code dynamically or does not parse. (Kept by the engine per file content across rounds.)"""
    from mpsready.scan.code.summaries import is_entry

    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    targets = _targets(rel, tree)
    return None if targets is None else (targets, is_entry(tree))


def followed(imports: dict[str, tuple[list[tuple[str, ...]], bool] | None],
             selecting: set[str]) -> dict[str, frozenset[str]] | None:
    """For each ``.py`` file of ``imports`` (its :func:`imports_of`) whose programs can be told: the files of
    ``selecting`` (those holding a selection) in the programs it runs in; ``None`` where nothing can be told (see
    the module docstring). A file left out follows every script's selection."""
    if any(v is None for v in imports.values()):
        return None
    by_suffix: dict[tuple[str, ...], set[str]] = {}
    for rel in imports:
        mod = _module(rel)
        for i in range(len(mod)):
            by_suffix.setdefault(mod[i:], set()).add(rel)
    edges: dict[str, set[str]] = {}
    for rel, found in imports.items():
        wanted = {t[:i] for t in (found[0] if found else ()) for i in range(1, len(t) + 1)}
        edges[rel] = {o for w in wanted for o in by_suffix.get(w, ())} - {rel}
    imported = {o for targets in edges.values() for o in targets}
    out: dict[str, set[str]] = {}
    unknown: set[str] = set()  # reached from a library root: loaded in ways the imports do not show
    for root in (rel for rel in imports if rel not in imported):
        seen, stack = set(), [root]
        while stack:
            rel = stack.pop()
            if rel not in seen:
                seen.add(rel)
                stack += edges[rel] - seen
        found = imports[root]
        if not (found and found[1]):
            unknown |= seen
            continue
        held = seen & selecting
        for rel in seen:
            out.setdefault(rel, set()).update(held)
    return {rel: frozenset(v) for rel, v in out.items() if rel not in unknown}
