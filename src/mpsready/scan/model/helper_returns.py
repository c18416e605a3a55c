"""A device helper imported from another module of the project, read as a Mac runs it (issue 32, item 1, round 9).

The Mac-facts evaluation (:mod:`mpsready.scan.code.macfacts`) follows a function defined in the same file; a project
that keeps its device choice in a helper module (``utils/device.py: get_default_device()``: CUDA if available, else
MPS if available, else the CPU) and calls it from its scripts (``device = get_default_device()``) left the value
unknown, so a parameter test on it (``if device is not None:``) was undecided. Here a call without arguments of a
name the file imports from the project (``from pkg.utils.device import get_default_device``, ``from .device import
get_device``, one re-export through a package's ``__init__`` followed) is the join of that function's return values,
evaluated in its own file under the same facts (its branches decided as there, its own helpers followed up to
:data:`~mpsready.scan.code.macfacts.MAX_DEPTH` calls deep). Used by the call-site passes of
:mod:`mpsready.scan.model.call_sites`, which read several files; the per-file analysis stays one file at a time.

**Limits.** Only module-level functions called with no arguments (a helper whose answer depends on its arguments is
left unknown), only imports by name (``import pkg.device as d; d.pick()`` is not followed), and a function whose
returns the facts leave open stays unknown: the pass only ever removes limits a Mac provably never reaches.
"""

from __future__ import annotations

import ast
import posixpath
from collections.abc import Collection
from typing import Any

from mpsready.scan.model.reread import SourceTrees


def _module_files(module: str) -> tuple[str, ...]:
    base = module.replace(".", "/")
    return (f"{base}.py", f"{base}/__init__.py", f"src/{base}.py", f"src/{base}/__init__.py")


class HelperReturns:
    """Evaluators of the project's files whose calls of imported project helpers are followed (see the module doc)."""

    def __init__(self, py: Collection[str], sources: SourceTrees) -> None:
        self.py = set(py)
        self.sources = sources
        self._evals: dict[str, Any] = {}

    def evaluator(self, rel: str, fresh: bool = False) -> Any:
        """A :class:`~mpsready.scan.code.macfacts.MacEval` of ``rel`` that follows imported helpers, or None when the
        file cannot be parsed; ``fresh``: a new one (its parameter bindings are the caller's own)."""
        from mpsready.scan.code.macfacts import MacEval
        from mpsready.scan.code.names import build_alias_map
        from mpsready.scan.code.valueflow import ValueFlow

        if not fresh and rel in self._evals:
            return self._evals[rel]
        tree = self.sources.tree(rel)
        if tree is None:
            return None
        mac = MacEval(ValueFlow(build_alias_map(tree), tree))
        mac.resolve = lambda name, depth: self.value(rel, name, depth)
        if not fresh:
            self._evals[rel] = mac
        return mac

    def _target(self, rel: str, name: str, hops: int = 1) -> tuple[str, ast.FunctionDef] | None:
        """(the project file defining the function ``rel`` imports as ``name``, its definition), or None."""
        tree = self.sources.tree(rel)
        if tree is None:
            return None
        for st in tree.body:
            if isinstance(st, ast.ImportFrom):
                alias = next((a for a in st.names if (a.asname or a.name) == name), None)
                if alias is None:
                    continue
                if st.level:
                    base = posixpath.dirname(rel).split("/") if posixpath.dirname(rel) else []
                    base = base[:len(base) - (st.level - 1)] if st.level > 1 else base
                    module = ".".join([*base, *((st.module or "").split(".") if st.module else [])])
                else:
                    module = st.module or ""
                found = next((c for c in _module_files(module) if c in self.py), None)
                if found is None:
                    return None
                other = self.sources.tree(found)
                if other is None:
                    return None
                fn = next((d for d in other.body if isinstance(d, (ast.FunctionDef, ast.AsyncFunctionDef))
                           and d.name == alias.name and not d.decorator_list), None)
                if fn is not None:
                    return found, fn  # type: ignore[return-value]
                return self._target(found, alias.name, hops - 1) if hops > 0 else None  # a package's re-export
        return None

    def value(self, rel: str, name: str, depth: int) -> tuple[frozenset, list[str]] | None:
        """(the values ``name()`` returns on a Mac, the facts that decided them) for a helper ``rel`` imports."""
        hit = self._target(rel, name)
        if hit is None:
            return None
        where, fn = hit
        callee = self.evaluator(where)
        if callee is None:
            return None
        callee.facts = []
        value = callee.returns(fn, None, depth)
        if value is None:
            return None
        return value, [f"{where}: {fact}" for fact in callee.facts]
