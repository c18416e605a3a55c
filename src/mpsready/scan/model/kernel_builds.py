"""CUDA sources built only where a kernel switch selects them (issue 32, round 9).

EXT101 (a folder of ``.cu`` files) limits the outlook when the main path builds them: a Python file on the path names
them (a JIT ``load(sources=[...])``). Many projects load such a kernel lazily, beside a pure-PyTorch path::

    if self.h.get("use_cuda_kernel", False):
        from .alias_free_activation.cuda.activation1d import Activation1d   # imports the JIT builder
    else:
        from .alias_free_activation.torch import Activation1d

The builder module is then imported only there: by default, and on a Mac, the kernel is never built. This pass
marks such an EXT101 (and the builder's own EXT102, a ``load(...)`` at its module level) ``behind_flag`` (it stops
limiting, like code behind an option off by default) when every file that names the sources
(:attr:`~mpsready.scan.code.result.CodeResult.cu_refs`) is reached only *lazily*: each import of it sits inside an
``if`` whose test is about the kernel or the device (:func:`mpsready.scan.model.core_reach.availability_test` with the
words ``cuda`` and ``kernel``: ``use_cuda_kernel``, ``device.type == "cuda"``, ``x.is_cuda``; an ``if`` whose
``elif``/``else`` only raises offers no path) and whose switch is not on by default (round 4's rule: a kernel built
behind a switch on by default limits; ``cfg.get("use_cuda_kernel", True)``, a true constant assigned to it or its
parameter's true default), or under a try/except fallback, or in a file that is itself reached only lazily.

Never lazily built: sources a ``setup.py`` names (an install builds them), a file on the way that the README or a
console command runs, a builder nothing imports (loaded by path or by a command line: unknown), and an import in a function under no such
test (a function called on the main path builds it).
"""

from __future__ import annotations

import ast
import posixpath
from collections.abc import Callable, Mapping
from pathlib import PurePosixPath
from typing import Any

from mpsready.findings import Finding, Scope
from mpsready.scan.model import core_reach
from mpsready.scan.model.fallbacks import _imports, _ImportIndex, module_name
from mpsready.scan.model.remedy import limits

WORDS = ("cuda", "kernel")
MAX_DEPTH = 6  # importer levels followed upwards from a builder


def lazily_built(findings: list[Finding], results: Mapping[str, Any], sources: Any, declared: Any) -> list[Finding]:
    """``findings`` with each limiting EXT101 whose builders are reached only lazily marked ``behind_flag`` (see the
    module doc); ``declared`` (:class:`~mpsready.scan.model.entries.DeclaredEntries`) gives the folders' ``.cu`` file
    names and the scripts the README and console commands run."""
    cu_sources: Mapping[str, list[str]] = declared.cu_sources
    started = set(declared.all())
    todo = {id(f) for f in findings if limits(f) and f.scope is Scope.MAIN and f.location.path and (
        f.code == "EXT101" or (f.code == "EXT102" and f.location.path.endswith(".py")))}
    if not todo:
        return findings
    index = _ImportIndex(_imports(results))
    guard = core_reach.availability_test(frozenset(), WORDS)
    memo: dict[str, str | None] = {}

    def lazy_site(rel: str, line: int) -> str | None:
        """Where the import at ``rel:line`` is made lazy (``rel:LINE if TEST``), or None."""
        tree = sources.tree(rel)
        if tree is None:
            return None
        return _guarded_import(tree, line, guard, rel)

    def lazy(rel: str, depth: int, seen: frozenset[str], again: Callable[..., str | None]) -> str | None:
        """Why ``rel`` is reached only lazily (the first lazy import), or None. It recurses through ``again`` (itself),
        not through its own name: a closure naming itself is a reference cycle, which held the project's parsed
        trees (``sources``) to the end of the scan, the collector being paused for it (engine.gc_paused)."""
        if rel in memo:
            return memo[rel]
        if depth > MAX_DEPTH or rel in started:
            return None
        sites = [s for s in index.importers(module_name(rel)) if s[0] != rel]
        if not sites:
            return None
        why = None
        for other, line, fallback in sites:
            here = lazy_site(other, line) or (f"{other}:{line} under try/except" if fallback is True else None)
            if here is None and other not in seen:
                here = again(other, depth + 1, seen | {rel}, again)
            if here is None:
                memo[rel] = None
                return None
            why = why or here
        memo[rel] = why
        return why

    out = []
    for f in findings:
        if id(f) in todo:
            names = set(cu_sources.get(posixpath.dirname(f.location.path or ""), ()))
            builders = [f.location.path or ""] if f.code == "EXT102" else \
                sorted({rel for rel, (res, _c) in results.items() for ref in res.cu_refs if ref.name in names})
            if builders and not any(PurePosixPath(b).name == "setup.py" for b in builders):
                whys = [lazy(b, 0, frozenset(), lazy) for b in builders]
                if all(whys):
                    f = f.with_state(behind_flag=f"built only where a kernel switch selects it: {whys[0]}")
        out.append(f)
    return out


def _truthy(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Constant) and bool(node.value)


def _on_by_default(test: ast.AST, tree: ast.Module) -> bool:
    """Whether the switch ``test`` reads is on by default (round 4: a kernel built behind a switch on by default
    limits): ``cfg.get("use_cuda_kernel", True)``, or a name or attribute the file assigns a true constant or whose
    parameter default is one (``def __init__(self, use_cuda_kernel=True)``)."""
    names: set[str] = set()
    for n in ast.walk(test):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "get" \
                and len(n.args) >= 2 and _truthy(n.args[1]):
            return True
        if isinstance(n, ast.Name):
            names.add(n.id)
        elif isinstance(n, ast.Attribute):
            names.add(n.attr)
    for n in ast.walk(tree):
        if isinstance(n, ast.Assign) and _truthy(n.value) and any(
                (isinstance(t, ast.Name) and t.id in names) or (isinstance(t, ast.Attribute) and t.attr in names)
                for t in n.targets):
            return True
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
            args = [*n.args.posonlyargs, *n.args.args]
            pairs = list(zip(args[len(args) - len(n.args.defaults):], n.args.defaults))
            pairs += [(a, d) for a, d in zip(n.args.kwonlyargs, n.args.kw_defaults) if d is not None]
            if any(a.arg in names and _truthy(d) for a, d in pairs):
                return True
    return False


def _guarded_import(tree: ast.Module, line: int, guard, rel: str) -> str | None:
    """``rel:LINE if TEST`` of the innermost ``if`` with a kernel or device test around the import at ``line`` (no
    ``elif``/``else`` of it only raising), or None."""
    found: list[str] = []

    def walk(node: ast.AST, tests: list[tuple[int, str]]) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.Import, ast.ImportFrom)) and child.lineno == line and tests:
                found.append(f"{rel}:{tests[-1][0]} if {tests[-1][1]}")
            if isinstance(child, ast.If) and guard(child.test) and not core_reach.other_case_raises(child) \
                    and not _on_by_default(child.test, tree):
                for stmt in child.body:
                    walk(ast.Module([stmt], []), [*tests, (child.lineno, ast.unparse(child.test)[:80])])
                for stmt in child.orelse:
                    walk(ast.Module([stmt], []), tests)
            else:
                walk(child, tests)

    walk(tree, [])
    return found[0] if found else None
