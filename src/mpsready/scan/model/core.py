"""The CUDA-core rule (issue 23): a CUDA-first package that the project's core computation calls with no other
path is CUDA-only for the outlook, whatever alternative the knowledge base names.

The knowledge base gives packages such as flash-attn, mamba-ssm or causal-conv1d an alternative
(``scaled_dot_product_attention``, a reference selective scan), so their import alone is a *swap*
(``mac_for_dev``). When a model file (one that defines a ``forward`` method) uses the imported name
unconditionally inside a function or method (a call, an instantiation, or passing it on, not under an ``if``,
a conditional expression, a ``try`` or a boolean operator, nor after an ``if`` whose body returns: the early
return of ``if not XFORMERS_AVAILABLE: return super().forward(x)``), the swap rewrites the model's core: the finding gets
``core_op`` (``"flash_attn_func in Attention.forward (model.py:12)"``) and ``no_alternative``, so its
remedy is ``none`` and the outlook ``stay_on_cuda``, the reason naming the core op. A use behind a condition (an
``if self.use_flash:`` beside an SDPA path), a file with no ``forward`` (a benchmark, a converter) and an import
under a try/except fallback (already ``degrades``) keep the swap. Kernels the project writes itself (Triton,
CuPy, Numba, PyCUDA: EXT103-EXT106) and compiled extensions are CUDA-only already (``no_alternative``).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable
from dataclasses import replace

from mpsready.findings import Finding, Severity
from mpsready.scan import knowledge
from mpsready.scan.code.astutil import TRY_NODES, off_by_default
from mpsready.scan.model import core_reach
from mpsready.scan.model.install_extras import required_extras
from mpsready.scan.model.package_uses import package_uses
from mpsready.scan.model.remedy import limits

_CONDITIONAL = (ast.If, ast.IfExp, *TRY_NODES, ast.BoolOp, ast.While, ast.ExceptHandler)


def core_ops(findings: Iterable[Finding], sources, files: Iterable[str] = ()) -> list[Finding]:
    """``findings`` with the CUDA-core rule applied to main-path DEP107 blockers that would be swaps (see the
    module doc); ``sources`` is a :class:`~mpsready.scan.model.reread.SourceTrees`; ``files`` the project's files,
    read only to ask whether a helper reached behind conditions in its own file is named in another
    (:mod:`mpsready.scan.model.core_reach`, issue 32, round 9)."""
    py = [rel for rel in files if rel.endswith(".py")]
    reach_cache: dict = {}  # (kernel file, package) -> its reach test (model/core_reach.py)
    findings = required_extras(list(findings), sources)  # round 11: an extra the README installs is required
    required = _required_packages(findings)
    out = []
    for f in findings:
        ev = f.evidence or {}
        empty = False
        if f.code == "DEP107" and f.severity is Severity.DEGRADES and ev.get("fallback") and f.scope == "main" \
                and not ev.get("reach") and (f.location.path or "").endswith(".py"):
            # issue 32: `try: from kernel_pkg import op` / `except: pass` binds nothing in the handler, so a core
            # use of `op` is a NameError on a Mac: no fallback at all
            text = sources.text(f.location.path) or ""
            tree = sources.tree(f.location.path) if "def forward" in text else None  # a model file, or no core use
            empty = tree is not None and _handler_binds_nothing(tree, f.location.line)
        if f.code == "DEP107" and (f.severity is Severity.BLOCKER or empty) and (ev.get("alternative") or empty) \
                and (limits(f) or empty) and (empty or not (f.fallback or ev.get("fallback"))) \
                and (f.location.path or "").endswith(".py"):
            tree = sources.tree(f.location.path)
            reach = _reach_test(f.location.path or "", str(ev.get("module") or ""), py, sources, reach_cache)
            entry = knowledge.lookup(str(ev.get("package") or ""))
            # a serving engine the project's install requires: its use anywhere on the path is the core
            engine = entry is not None and entry.engine and entry.name in required
            op = _core_use(tree, f.location.line, reach, engine) if tree is not None else None
            if op is not None and empty:
                f = replace(f, severity=Severity.BLOCKER, message=f"{f.message}; its except handler binds none of "
                            "the imported names, so the model's use of them fails on a Mac")
                ev = {k: v for k, v in ev.items() if k != "fallback"}
                ev.setdefault("alternative", "a pure-PyTorch implementation of the op")
                ev["empty_fallback"] = True
            if op is not None:
                where = f"{op[0]} in {op[1]} ({f.location.path}:{op[2]})"
                whose = "the main path runs the engine" if engine else "the model's core calls it"
                f = replace(f, message=f"{f.message}; {whose} with no other path: {where}",
                            fix=f"The core op {op[0]} needs CUDA; a Mac needs a pure-PyTorch path for it wired "
                            f"in ({ev['alternative']}), which rewrites the model's core.").with_state(core_op=where)
                f = f.with_evidence({**ev, "no_alternative": True})
        out.append(f)

    def cpu_core_use(f: Finding, tree: ast.Module, skip: set[int]) -> tuple[str, str, int] | None:
        reach = _reach_test(f.location.path or "", str((f.evidence or {}).get("module") or ""), py, sources,
                            reach_cache)
        return _core_use(tree, f.location.line, reach, skip=skip)

    # round 13: packages that install on macOS (CPU builds, harmless imports): what the code calls decides
    return package_uses(out, sources, cpu_core_use)


def _required_packages(findings: list[Finding]) -> set[str]:
    """Knowledge-base packages that a declaration on the main path requires (a limiting DEP1xx finding that is not
    optional: no extra the README's install leaves out, no container recipe, no part's own requirement file). An
    engine the project never declares is an opt-in the user installs apart (a plugin, an accelerated path): its use
    is no core of the project (issue 32, round 11)."""
    return {str(f.evidence.get("package")) for f in findings if f.code in _DECLARED and limits(f)
            and not (f.evidence or {}).get("optional") and (f.evidence or {}).get("package")}


_DECLARED = frozenset({"DEP101", "DEP102", "DEP104", "DEP111"})


def _reach_test(path: str, module: str, py: list[str], sources,
                cache: dict) -> Callable[[ast.Module], Callable[[str], bool]]:
    """Given the tree of ``path``: whether a definition of it runs unconditionally (:func:`core_reach.reached_defs`),
    only conditions about the availability of ``module`` or the device counting (:func:`core_reach.availability_test`:
    the flags the file's except handlers bind, the package's name, ``is_cuda``); another of ``py`` (at most
    :data:`core_reach.MAX_FILES`) reaching it when it imports the name or references it outside every such condition
    (:class:`core_reach.FileRefs`; a file that cannot be read or parsed reaches it). Each other file is read at most
    once per kernel file and package (``cache``, shared by the findings of one scan). A larger project, or none
    given, reaches every definition (the rule as before round 9)."""
    top = module.split(".")[0].lower()
    words = tuple(dict.fromkeys([top, *(w for w in top.split("_") if len(w) >= 5)])) if top else ()

    def test(tree: ast.Module) -> Callable[[str], bool]:
        if not py or len(py) > core_reach.MAX_FILES:
            return lambda _key: True
        if (path, top) in cache:
            return cache[(path, top)]
        flags = core_reach.handler_flags(tree, words)
        summaries: dict[str, core_reach.FileRefs | None] = {}

        def summary(rel: str) -> core_reach.FileRefs | None:
            if rel not in summaries:
                other = sources.tree(rel)
                summaries[rel] = None if other is None else core_reach.file_refs(
                    other, core_reach.availability_test(flags | core_reach.handler_flags(other, words), words))
            return summaries[rel]

        def named(names: list[str]) -> set[str]:
            found: set[str] = set()
            for rel in py:
                text = sources.text(rel) if rel != path else ""
                left = [n for n in names if n not in found and (text is None or n in text)]
                if not left:
                    continue
                refs = summary(rel)  # a file that cannot be read or parsed reaches every name it might hold
                found.update(n for n in left if refs is None or refs.reaches(n))
            return found

        cache[(path, top)] = core_reach.reached_defs(tree, named, core_reach.availability_test(flags, words))
        return cache[(path, top)]
    return test


def _handler_binds_nothing(tree: ast.Module, line: int | None) -> bool:
    """Whether the import at ``line`` sits in a ``try`` whose handlers bind none of the names it imports
    (``except ImportError: pass`` or a warning): the names are then simply missing on a Mac."""
    for node in tree.body:  # a module-level try: the imports a model file's methods use
        imports = [s for s in getattr(node, "body", ()) if isinstance(s, (ast.Import, ast.ImportFrom)) and s.lineno == line]
        if isinstance(node, TRY_NODES) and imports:
            bound = {a.asname or a.name.split(".")[0] for a in imports[0].names if a.name != "*"}
            if not bound:
                return False
            for h in node.handlers:
                for n in ast.walk(h):
                    if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store) and n.id in bound:
                        return False
                    if isinstance(n, (ast.Import, ast.ImportFrom)) and any(
                            (a.asname or a.name.split(".")[0]) in bound for a in n.names):
                        return False
                    if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n.name in bound:
                        return False
            return True
    return False


def _bound(tree: ast.Module, line: int | None) -> set[str]:
    """Names the import statement at ``line`` binds (``import a.b`` binds ``a``)."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)) and node.lineno == line:
            for a in node.names:
                if a.name != "*":
                    names.add(a.asname or a.name.split(".")[0])
    return names


def _model_file(tree: ast.Module) -> bool:
    """Whether a file holds model code: it defines a ``forward`` method, or a module-level function whose first
    parameter is ``self`` (a method written outside its class, to be bound onto a model's modules: the patch idiom
    ``module.forward = types.MethodType(llama_attention_forward, module)``; issue 32, round 7)."""
    for n in ast.walk(tree):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == "forward":
            return True
    return any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.args.args and n.args.args[0].arg == "self"
               for n in tree.body)


def _core_use(tree: ast.Module, line: int | None,
              reach: Callable[[ast.Module], Callable[[str], bool]] | None = None,
              engine: bool = False, skip: set[int] | frozenset[int] = frozenset()) -> tuple[str, str, int] | None:
    """(name, function, line) of the first unconditional use of a name the import at ``line`` binds, inside a
    function or method of a model file (:func:`_model_file`; any file for an ``engine`` package, knowledge-base
    field ``engine``: a serving engine is driven from a worker or a script, not from ``forward``) that itself runs
    unconditionally (``reach``, given the tree: :func:`_reach_test`); ``None`` otherwise. ``Name`` nodes whose ids
    are in ``skip`` are no use (plain-PyTorch functions of a CPU-build package: model/package_uses.py)."""
    if not engine and not _model_file(tree):
        return None
    bound = _bound(tree, line)
    if not bound:
        return None
    hits: list[tuple[int, str, str]] = []

    def visit(node: ast.AST, where: str | None, conditional: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                for stmt in child.body:
                    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        visit_function(stmt, f"{child.name}.{stmt.name}", where, conditional)
                    else:
                        visit(stmt, where, conditional)
                continue
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                visit_function(child, child.name if where is None else f"{where}.{child.name}", where, conditional)
                continue
            cond = conditional or isinstance(child, _CONDITIONAL)
            if where is not None and not cond and isinstance(child, ast.Name) and child.id in bound \
                    and isinstance(child.ctx, ast.Load) and id(child) not in skip:
                hits.append((child.lineno, child.id, where))
            if isinstance(child, (ast.If, ast.IfExp)):
                visit(child, where, True)  # both branches and the test: a path exists beside it
            else:
                visit(child, where, cond)

    def visit_function(fn: ast.FunctionDef | ast.AsyncFunctionDef, name: str, outer: str | None, conditional: bool) -> None:
        # decorators and defaults run where the function is defined (`@triton.jit` is no use inside the kernel)
        for dec in [*fn.decorator_list, *fn.args.defaults, *(d for d in fn.args.kw_defaults if d is not None)]:
            visit(ast.Expr(dec), outer, conditional)
        # after `if not HAVE_KERNEL: return other_path(x)` the rest of the body runs only when the test is false:
        # a path exists beside it, as for a use under the `if` itself (a raise is no path: it stays a core use)
        beside = False
        for stmt in fn.body:
            visit(ast.Module([stmt], []), name, beside)
            beside = beside or (isinstance(stmt, ast.If) and any(isinstance(s, ast.Return) for s in stmt.body))

    visit(tree, None, False)
    if hits and reach is not None:
        reached = reach(tree)
        hits = [h for h in hits if reached(h[2])]
    if not hits:
        return None
    lineno, name, where = min(hits)
    return name, where, lineno


def behind_off_params(findings: list[Finding], results, sources) -> list[Finding]:
    """Findings behind a function parameter whose default is off (``evidence["param_guard"]``: ``if self.flash:``
    with ``__init__(self, flash=False)``) get ``behind_flag`` (``flash=False (the default)``) and stop limiting,
    unless a main-path file of the project passes that keyword a true constant (``Attend(flash=True)``): a library's
    opt-in path is not its main path (issue 23). Files are read again only when such a finding limits."""
    findings = [_import_param_guard(f, sources) for f in findings]
    names = {f.evidence["param_guard"] for f in findings if (f.evidence or {}).get("param_guard") and limits(f)}
    if not names:
        return findings
    turned_on = _keywords_set_on(names, results, sources)
    out = []
    for f in findings:
        name = (f.evidence or {}).get("param_guard")
        if name and name not in turned_on and limits(f):
            f = f.with_state(behind_flag=f"{name}=False (the default)")
        out.append(f)
    return out


def _keywords_set_on(names: set[str], results, sources) -> set[str]:
    """The names among ``names`` that some main-scope Python file passes as a keyword with a true constant."""
    from mpsready.findings import Scope
    from mpsready.scan.scope import scope_of

    on: set[str] = set()
    for rel in results:
        if not rel.endswith(".py") or scope_of(rel) is not Scope.MAIN:
            continue
        text = sources.text(rel)
        if text is None or not any(n in text for n in names - on):
            continue
        tree = sources.tree(rel)
        for node in ast.walk(tree) if tree is not None else ():
            if isinstance(node, ast.keyword) and node.arg in names and isinstance(node.value, ast.Constant) \
                    and node.value.value not in (False, None, 0, ""):
                on.add(node.arg)
        if on == names:
            break
    return on


def _import_param_guard(f: Finding, sources) -> Finding:
    """A limiting DEP107 import inside ``if self.x:`` / ``if x:`` where ``x`` is an off-by-default parameter of the
    enclosing function or of its class's ``__init__`` gets ``param_guard`` (imports are judged before the
    analyser knows their function, so this is read from the file again, for such findings only)."""
    ev = f.evidence or {}
    if f.code != "DEP107" or ev.get("param_guard") or not limits(f) or not (f.location.path or "").endswith(".py"):
        return f
    tree = sources.tree(f.location.path)
    if tree is None:
        return f
    name = _guard_param(tree, f.location.line)
    if name is None:
        return f
    return f.with_evidence({**ev, "param_guard": name})


def _guard_param(tree: ast.Module, line: int | None) -> str | None:
    found: list[str] = []

    def walk(node: ast.AST, tests: list[str], fns: list[ast.AST], cls: ast.ClassDef | None) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.Import, ast.ImportFrom)) and child.lineno == line and tests and fns:
                inits = [s for s in (cls.body if cls is not None else ()) if
                         isinstance(s, ast.FunctionDef) and s.name == "__init__"]
                if off_by_default(tests[-1], [*fns, *inits]):
                    found.append(tests[-1])
            if isinstance(child, ast.ClassDef):
                walk(child, tests, fns, child)
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                walk(child, tests, [*fns, child], cls)
            elif isinstance(child, ast.If):
                t = child.test
                name = t.attr if isinstance(t, ast.Attribute) else t.id if isinstance(t, ast.Name) else None
                for stmt in child.body:
                    walk(ast.Module([stmt], []), [*tests, name] if name else tests, fns, cls)
                for stmt in child.orelse:
                    walk(ast.Module([stmt], []), tests, fns, cls)
            else:
                walk(child, tests, fns, cls)

    walk(tree, [], [], None)
    return found[0] if found else None


