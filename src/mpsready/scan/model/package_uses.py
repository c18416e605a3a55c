"""Packages that install on macOS: what the code calls of them decides, not the import (issue 32, round 13).

Two kinds of knowledge-base entry (``data/packages.yaml``) install and import on a Mac, so their import alone is
no limit (DEP107 ``degrades``, and a declaration ``degrades``):

1. **CPU builds** (``status: cpu_build``: torch_scatter, torch_sparse, torch_cluster, torch_spline_conv, pyg-lib,
   dgl). PyG's extension libraries ship macOS wheels (data.pyg.org) or build their CPU kernels from the PyPI sdist,
   and DGL has CPU builds for macOS; their compiled ops take CPU tensors, never MPS ones. When a model file's
   function uses one of those ops with no other path (the CUDA-core test of :mod:`mpsready.scan.model.core`, with its
   reach test), the import becomes a blocker whose remedy is an **edit**: run the op on CPU tensors (inputs moved to
   the CPU, the result back) or use the alternative. Never ``none``: the CPU kernels are a usable path, so such a
   project is ``mac_for_dev``, not ``stay_on_cuda``. A name the entry lists in ``pure_ops`` is plain PyTorch
   (torch_scatter's ``scatter`` with a sum or mean reduction calls ``Tensor.scatter_add_``) and costs nothing; a call
   of it with ``reduce="max"`` (or min, mul) reaches a compiled op.
2. **Imports that are harmless** (``uses_limit: true``: deepspeed, whose ops are JIT-built only when used). Each
   function or method of a file that uses a name such an import binds, with no condition around the use inside that
   definition, each class deriving from such a name, and each unconditional module-level call of one, gets a DEP107
   blocker *at the use* (``evidence.imported_at``; a swap to the entry's alternative). The reach by calls
   (:mod:`mpsready.scan.model.call_reach`) then judges each use as any other limit: a training function that nothing
   the main path runs calls is off the main path, and a module-level import on the main path no longer decides the
   headline. A declaration of such a package (DEP101) becomes ``degrades`` once the project's code imports it
   (the uses decide); declared and never imported, it is driven by a launcher or a framework's configuration
   (``deepspeed train.py``, ``TrainingArguments(deepspeed=...)``) the analysis does not see, and keeps limiting.

Imports under a try/except fallback or an availability test (``evidence.fallback``, ``evidence.optional``), and
imports that would not limit anyway (off the main path, behind an option), get nothing new. Limits: a use under an
``if`` inside the definition counts as having another path (as the CUDA-core rule reads it); calls through an
object a deepspeed call returned (``engine.backward(loss)``) are not followed: the call that made the object is the
use that limits.
"""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Callable

from mpsready.findings import Finding, Location, Severity
from mpsready.scan import knowledge
from mpsready.scan.code.astutil import TRY_NODES
from mpsready.scan.model.remedy import EDIT, limits

_CONDITIONAL = (ast.If, ast.IfExp, *TRY_NODES, ast.BoolOp, ast.While, ast.ExceptHandler)
_COMPILED_REDUCE = frozenset({"min", "max", "mul"})  # torch_scatter.scatter reductions that call torch.ops


def package_uses(findings: list[Finding], sources, core_use: Callable) -> list[Finding]:
    """``findings`` with the two rules of the module doc applied. ``core_use(finding, tree, skip)`` is the CUDA-core
    test of :mod:`mpsready.scan.model.core` with its reach test: (name, function, line) of the first unconditional
    use of a name the finding's import binds in a model file's function, ignoring the ``Name`` nodes whose ids are in
    ``skip``, or ``None``."""
    out: list[Finding] = []
    imported: dict[str, str] = {}  # a uses_limit package -> where the project's own code imports it
    for f in findings:
        entry = _entry(f)
        if entry is None or not _would_limit(f):
            out.append(f)
            continue
        tree = sources.tree(f.location.path)
        if tree is None:
            out.append(f)
            continue
        if entry.status == "cpu_build":
            out.append(_cpu_op(f, entry, tree, core_use))
            continue
        imported.setdefault(entry.name, f"{f.location.path}:{f.location.line}")
        out.append(_harmless(f, entry))
        out += _use_sites(f, entry, tree)
    return [_declared(f, imported) for f in out] if imported else out


def _harmless(f: Finding, entry: knowledge.PackageEntry) -> Finding:
    """A uses_limit package's import: ``degrades``, its uses decide (:func:`_use_sites`)."""
    if f.severity is not Severity.BLOCKER:
        return f
    ev = {k: v for k, v in (f.evidence or {}).items() if k != "no_alternative"}
    return dataclasses.replace(f, severity=Severity.DEGRADES, message=f"{f.message}; the import itself runs on "
                               "macOS: the calls of its names on the main path are the limits").with_evidence(
        {**ev, "uses_decide": True})


def _declared(f: Finding, imported: dict[str, str]) -> Finding:
    """A limiting declaration (DEP101) of a uses_limit package the project's code imports: ``degrades``, the code's
    uses of it decide. A package declared and never imported is driven by a launcher or a framework's config
    (``deepspeed train.py``, ``TrainingArguments(deepspeed=...)``): that declaration keeps limiting."""
    package = str((f.evidence or {}).get("package") or "")
    if f.code not in ("DEP101", "DEP102") or package not in imported or not limits(f):
        return f
    return dataclasses.replace(f, severity=Severity.DEGRADES, message=f"{f.message}; it installs on macOS, and the "
                               f"code that imports it ({imported[package]}) decides").with_evidence(
        {**(f.evidence or {}), "uses_decide": imported[package]})


def _entry(f: Finding) -> knowledge.PackageEntry | None:
    """The knowledge-base entry of a DEP107 import of a package whose import alone does not limit."""
    ev = f.evidence or {}
    if f.code != "DEP107" or not (f.location.path or "").endswith(".py") or not f.location.line:
        return None
    entry = knowledge.lookup(str(ev.get("package") or ""))
    if entry is None or not (entry.status == "cpu_build" or entry.uses_limit):
        return None
    return entry


def _would_limit(f: Finding) -> bool:
    """Whether the import would limit the outlook were it a blocker: main scope and path, not behind an option,
    not under a fallback or an availability test, not optional."""
    ev = f.evidence or {}
    if ev.get("fallback") or f.fallback or ev.get("optional"):
        return False
    return limits(dataclasses.replace(f, severity=Severity.BLOCKER))


def _bound(tree: ast.Module, modules: frozenset[str]) -> dict[str, str]:
    """Every name the file's imports of the package bind (anywhere in the file), with the name it imports
    (``from torch_scatter import scatter as sc``: ``sc`` -> ``scatter``; ``import deepspeed``: ``deepspeed``)."""
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] in modules:
                    names[a.asname or a.name.split(".")[0]] = a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] in modules:
            for a in node.names:
                if a.name != "*":
                    names[a.asname or a.name] = a.name
    return names


def _modules(entry: knowledge.PackageEntry, f: Finding) -> frozenset[str]:
    return frozenset({str((f.evidence or {}).get("module") or ""), *(
        name for name in knowledge.import_names() if knowledge.lookup_import(name) is entry)} - {""})


# ------------------------------------------------------------------ 1. CPU builds
def _cpu_op(f: Finding, entry: knowledge.PackageEntry, tree: ast.Module, core_use: Callable) -> Finding:
    """The import of a CPU-build package, made a blocker with an edit as its remedy when a model file's function
    calls one of its compiled ops with no other path."""
    bound = _bound(tree, _modules(entry, f))
    op = core_use(f, tree, _pure_names(tree, bound, set(entry.pure_ops)))
    if op is None:
        return f
    where = f"{op[0]} in {op[1]} ({f.location.path}:{op[2]})"
    what = (f"run {op[0]} on CPU tensors (move its inputs to the CPU and the result back to the device), or use "
            f"{entry.alternative}")
    return dataclasses.replace(
        f, severity=Severity.BLOCKER,
        message=f"{f.message}; the model calls its compiled op {where}, which takes no MPS tensors",
        fix=f"{entry.name} has CPU kernels on macOS, no MPS ones: {what}.",
    ).with_evidence({**(f.evidence or {}), "cpu_op": where}).with_state(
        remedy={"kind": EDIT, "migrate": False, "what": what})


def _pure_names(tree: ast.Module, bound: dict[str, str], pure: set[str]) -> set[int]:
    """Ids of the ``Name`` nodes of ``bound`` that stand for a plain-PyTorch function of the package
    (``scatter``, ``torch_scatter.scatter_mean``), unless called with a compiled reduction (``reduce="max"``)."""
    if not pure:
        return set()
    compiled: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and any(
                k.arg == "reduce" and isinstance(k.value, ast.Constant) and k.value.value in _COMPILED_REDUCE
                for k in node.keywords):
            compiled.add(id(node.func))
    ids: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and bound.get(node.value.id) \
                == node.value.id and node.attr in pure and id(node) not in compiled:
            ids.add(id(node.value))  # torch_scatter.scatter_mean(...)
        elif isinstance(node, ast.Name) and bound.get(node.id) in pure and id(node) not in compiled:
            ids.add(id(node))  # from torch_scatter import scatter; scatter(...)
    return ids


# ------------------------------------------------------------------ 2. harmless imports: the uses limit
def _use_sites(f: Finding, entry: knowledge.PackageEntry, tree: ast.Module) -> list[Finding]:
    """One DEP107 blocker per definition (and per module-level call) that uses a name the package's imports bind."""
    bound = _bound(tree, _modules(entry, f))
    if not bound:
        return []
    out = []
    for line, col, text in _uses(tree, set(bound)):
        ev = {k: v for k, v in (f.evidence or {}).items() if k not in ("no_alternative",)}
        ev.update({"imported_at": f.location.line, "use": text})
        msg = (f"uses {text} ({entry.name}, imported at line {f.location.line}): the import is harmless on macOS, "
               f"this use needs what {entry.name} builds for CUDA")
        use = dataclasses.replace(f, severity=Severity.BLOCKER, message=msg,
                                  location=Location(path=f.location.path, line=line, column=col + 1),
                                  fix=f"Use: {entry.alternative}." if entry.alternative else f.fix)
        out.append(use.with_evidence(ev))
    return out


def _uses(tree: ast.Module, bound: set[str]) -> list[tuple[int, int, str]]:
    """(line, column, text) of the first unconditional use of a name of ``bound`` in each module-level function and
    method (nested definitions belong to the one around them), each class whose bases name one, and each
    unconditional module-level call of one."""
    found: list[tuple[int, int, str]] = []

    def first_use(body: list[ast.stmt]) -> tuple[int, int, str] | None:
        hits: list[tuple[int, int, str]] = []

        def visit(node: ast.AST, cond: bool) -> None:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.AnnAssign):  # a local annotation is never evaluated: only its value runs
                    if child.value is not None:
                        visit(ast.Expr(child.value), cond)
                    continue
                c = cond or isinstance(child, _CONDITIONAL)
                root = _root(child)
                if root is not None and root.id in bound and isinstance(root.ctx, ast.Load):
                    if not c:
                        hits.append((root.lineno, root.col_offset, ast.unparse(child)[:80]))  # where the chain starts
                    continue
                visit(child, c)

        visit(ast.Module(body=body, type_ignores=[]), False)
        return min(hits) if hits else None

    def walk(body: list[ast.stmt], conditional: bool) -> None:
        for stmt in body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                hit = first_use(stmt.body)
                if hit is not None:
                    found.append(hit)
            elif isinstance(stmt, ast.ClassDef):
                base = next((b for b in stmt.bases if (r := _root(b)) is not None and r.id in bound), None)
                if base is not None:
                    found.append((stmt.lineno, stmt.col_offset, f"class {stmt.name}({ast.unparse(base)[:60]})"))
                walk(stmt.body, conditional)
            elif isinstance(stmt, ast.Expr | ast.Assign | ast.AnnAssign) and not conditional:
                for node in ast.walk(stmt):
                    if isinstance(node, ast.Call) and (r := _root(node.func)) is not None and r.id in bound:
                        found.append((node.lineno, node.col_offset, ast.unparse(node.func)[:80]))
                        break
            elif isinstance(stmt, (ast.If, *TRY_NODES, ast.With, ast.For, ast.While)):
                for field in ("body", "orelse", "finalbody"):
                    walk(getattr(stmt, field, []) or [], conditional or not isinstance(stmt, ast.With))

    walk(tree.body, False)
    return sorted(set(found))


def _root(node: ast.AST) -> ast.Name | None:
    """The name an attribute chain starts from (``deepspeed.ops.adam`` -> ``deepspeed``), ``None`` otherwise."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return node if isinstance(node, ast.Name) else None
