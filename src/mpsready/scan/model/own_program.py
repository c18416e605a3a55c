"""Code a module runs only as its own program (issue 32, round 9): reach by calls, one file deep.

The main path's reach is by imports (:mod:`mpsready.scan.model.graph`): a module the Mac's entries import is on their
path, all of it. A tool module that the main code imports for one class (``from tools.quantize import Int8Handler``)
also holds the tool's own work: functions and methods that only its ``if __name__ == "__main__":`` block calls
(``quantize()`` -> ``handler.create_state_dict()``, which moves weights to ``"cuda"``). Importing the module never runs
them; they run when the file is run as a program, and that program is no main entry.

A limiting finding is marked ``reach: off_main_path`` with ``evidence.own_program`` when:

- its file has a module-level ``__main__`` block, is imported by another file of the project, and is no main entry
  (:func:`mpsready.scan.model.graph.main_entries`: the README's scripts, the main path's starting entries, ...);
- the function or method holding it is *program-only*: every use of its name in the file lies in the ``__main__``
  block or in another program-only function (a method: in a program-only function or method, or its whole class is
  program-only), at least one such use exists, and no other file of the project names it (a name, an attribute, an
  import or a string constant; the README and packaging files count as naming it). Methods a framework or Python
  calls by name (``forward``, ``__enter__``, ...) are program-only only with their class.

**Limits.** One file: a function the ``__main__`` block reaches through another module is not followed; names are
matched by their text (an unrelated attribute of the same name elsewhere keeps the finding). A project of more than
:data:`MAX_FILES` Python files is left as it is.
"""

from __future__ import annotations

import ast
from collections.abc import Collection, Mapping
from typing import Any

from mpsready.findings import Finding
from mpsready.scan.model.remedy import limits

MAX_FILES = 400
_IMPLICIT = {"forward", "training_step", "validation_step", "test_step", "predict_step", "configure_optimizers",
             "setup", "run", "backward"}


def own_program_only(findings: list[Finding], results: Mapping[str, Any], sources: Any,
                     mains: Collection[str]) -> list[Finding]:
    """``findings`` with the limits in program-only code of a non-main module marked (see the module doc)."""
    from mpsready.scan.model.callers import _imported, _named

    if sum(1 for rel in results if rel.endswith(".py")) > MAX_FILES:
        return findings
    files = {f.location.path for f in findings if (f.location.path or "").endswith(".py") and f.location.line
             and limits(f) and f.reach is None}
    marks: dict[str, dict[str, tuple[int, int]]] = {}  # file -> program-only key -> its lines
    for rel in sorted(p for p in files if p is not None):
        res = results.get(rel, (None, None))[0]
        if res is None or not res.main_guards or rel in mains or not _imported(rel, results):
            continue
        tree = sources.tree(rel)
        if tree is None:
            continue
        only = _program_only(tree, res.main_guards)
        if not only:
            continue
        others = {r: v for r, v in results.items() if r != rel}
        # a method is named elsewhere by any attribute of its name; a module-level function or class only by an
        # import from this module (or `*`, or an attribute after importing the module), or by the README or a
        # packaging file (generic names such as `quantize` are attributes of many other objects)
        named = _named({key.rsplit(".", 1)[-1] for key in only if "." in key}, others, _Without(sources, rel))
        named |= _imported_names(rel, {k for k in only if "." not in k}, others, sources)
        kept = _close(tree, res.main_guards, {k for k in only if k.rsplit(".", 1)[-1] not in named})
        if kept:
            marks[rel] = {k: v for k, v in _spans(tree).items() if k in kept}
    if not marks:
        return findings
    out = []
    for f in findings:
        rel = f.location.path or ""
        spans = marks.get(rel)
        if spans and limits(f) and f.reach is None:
            inner = [(lo, k) for k, (lo, hi) in spans.items() if lo <= (f.location.line or 0) <= hi]
            if inner:
                key = max(inner)[1]
                why = f"{key}() runs only when {rel} is run as a program (only its `if __name__ == \"__main__\":` " \
                      f"block reaches it), and {rel} is no main entry: the modules that import it never call it"
                f = f.with_state(reach="off_main_path").with_evidence({**f.evidence, "own_program": why})
        out.append(f)
    return out


def _imported_names(rel: str, names: set[str], others: Mapping[str, Any], sources: Any) -> set[str]:
    """The ``names`` (module-level in ``rel``) that other files can reach: imported from ``rel``'s module by name
    (relative imports matched by the module's last parts), through ``*`` (all of them), or read as ``.name`` in a file
    that imports the module itself; the README and packaging files name what their text holds."""
    from mpsready.scan.model.callers import _MENTIONS
    from mpsready.scan.model.graph import module_of

    mod = module_of(rel)
    mod = mod[4:] if mod.startswith("src.") else mod
    parent, _, last = mod.rpartition(".")
    found: set[str] = set()
    for other, (res, _cells) in others.items():
        for imp in res.imports:
            same = imp.module == mod if not imp.level else bool(imp.module) and (
                mod == imp.module or mod.endswith("." + imp.module))
            if same and imp.names:
                found |= names if "*" in imp.names else names & set(imp.names)
            elif (same and not imp.names) or (imp.names and last in imp.names and (
                    imp.module == parent if not imp.level else not imp.module or parent.endswith(imp.module))):
                text = sources.text(other) or ""  # the module itself: `quantize.main()`
                found |= {n for n in names if "." + n in text}
    for m in _MENTIONS:
        text = sources.text(m) if m not in others else None
        found |= {n for n in names if text and n in text}
    return found


class _Without:
    """The project's sources less one file (its own uses are judged by :func:`_program_only`, not as a mention)."""

    def __init__(self, sources: Any, rel: str) -> None:
        self.sources, self.rel = sources, rel

    def text(self, rel: str) -> str | None:
        return None if rel == self.rel else self.sources.text(rel)

    def tree(self, rel: str) -> Any:
        return None if rel == self.rel else self.sources.tree(rel)


def _spans(tree: ast.Module) -> dict[str, tuple[int, int]]:
    """Key (``f`` for a module-level function or class, ``C.m`` for a method) -> (first, last line)."""
    out: dict[str, tuple[int, int]] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out[node.name] = (node.lineno, node.end_lineno or node.lineno)
        if isinstance(node, ast.ClassDef):
            for m in node.body:
                if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    out[f"{node.name}.{m.name}"] = (m.lineno, m.end_lineno or m.lineno)
    return out


def _uses(tree: ast.Module, guards: list[Any]) -> dict[str, set[str]]:
    """Name -> where the file uses it: ``"__main__"`` (the guard), ``"<module>"`` (other module-level code) or the key
    of the innermost function or method holding the use (:func:`_spans`)."""
    spans = _spans(tree)
    out: dict[str, set[str]] = {}

    def where(line: int) -> str:
        if any(g.first <= line <= g.last for g in guards):
            return "__main__"
        inner = [(lo, k) for k, (lo, hi) in spans.items() if lo <= line <= hi and "." in k] or \
            [(lo, k) for k, (lo, hi) in spans.items() if lo <= line <= hi]
        return max(inner)[1] if inner else "<module>"

    for node in ast.walk(tree):
        name = node.id if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Store) else \
            node.attr if isinstance(node, ast.Attribute) else \
            node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None
        if name is not None and name.isidentifier():
            out.setdefault(name, set()).add(where(getattr(node, "lineno", 0)))
    return out


def _program_only(tree: ast.Module, guards: list[Any]) -> set[str]:
    """Keys of :func:`_spans` whose every use in the file is in the ``__main__`` block or in program-only code (the
    greatest such set with at least one use each); the names other files use are taken out by the caller."""
    return _close(tree, guards, set(_spans(tree)))


def _close(tree: ast.Module, guards: list[Any], keys: set[str]) -> set[str]:
    uses = _uses(tree, guards)
    only = set(keys)
    changed = True
    while changed:
        changed = False
        for key in sorted(only):
            cls, _, meth = key.rpartition(".")
            name = meth or key
            if cls and cls in only:
                continue  # a method of a program-only class runs only with its class
            if cls and (name.startswith("__") or name in _IMPLICIT):
                only.discard(key)  # called by Python or a framework: only with its class
                changed = True
                continue
            sites = uses.get(name, set()) - {key}
            if not sites or any(s != "__main__" and s not in only and s.split(".")[0] not in only for s in sites):
                only.discard(key)
                changed = True
    return only


def main_programs(results: Mapping[str, Any], declared: Any) -> set[str] | None:
    """The files whose ``__main__`` block is a main entry (:func:`~mpsready.scan.model.graph.main_entries`); without
    a main path, the main entries of :func:`~mpsready.scan.model.selection.select_first` (main-named programs, the
    README's scripts, console modules); None when there are none (then nothing is marked)."""
    from pathlib import PurePosixPath

    from mpsready.scan.model.graph import PRIMARY, SKIP_ENTRIES, main_entries, main_path

    on_path, roots = main_path(results, declared.readme, declared.imports, declared.console, None, declared.features)
    if on_path is not None:
        return set(main_entries(results, roots, declared)) | set(declared.readme)
    named = {rel for rel, (res, _cells) in results.items() if rel.endswith(".py") and res.entry
             and PurePosixPath(rel).name not in SKIP_ENTRIES and PurePosixPath(rel).name.startswith(PRIMARY)}
    mains = named | {rel for rel in [*declared.readme, *declared.console] if rel in results}
    return mains or None


def own_program_pass(findings: list[Finding], results: Mapping[str, Any], sources: Any, declared: Any) -> list[Finding]:
    """:func:`own_program_only` with the project's main programs (:func:`main_programs`); unchanged without any."""
    def in_program(f: Finding) -> bool:
        rel = f.location.path or ""
        res = results.get(rel, (None,))[0] if rel.endswith(".py") else None
        return res is not None and bool(res.main_guards) and limits(f) and f.reach is None

    if sum(1 for rel in results if rel.endswith(".py")) > MAX_FILES or not any(in_program(f) for f in findings):
        return findings  # a large package (bounded work), or no limit in a module with a __main__ block
    mains = main_programs(results, declared)
    return findings if mains is None else own_program_only(findings, results, sources, mains)
