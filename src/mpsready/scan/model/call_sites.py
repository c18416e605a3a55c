"""Whether a CUDA device default is ever used: API103 for ``def f(..., device="cuda")`` is lowered to info when
every call of ``f`` in the project passes the device (by keyword, or by position), so the default never runs.

The call sites are read here, from the sources themselves, only for the few findings that need them, and only in
the files that can hold them by the imports the analyser recorded (``CodeResult.imports``): the defining file,
files that import the name (or a method's class, or the defining module) by name, ``*`` included, and files
that import the defining module or a package above it as a module and name ``.f`` in their text. More than
:data:`MAX_FILES` such files, or any of them unreadable, keeps the finding (the work stays bounded on large
trees). The answer is "used" (the finding stays) unless the calls are all visible: at least one call; none with
``*args`` up to the parameter's position or ``**kwargs`` (except a module-level wrapper passing on exactly its own
``*args, **kwargs``, whose own calls must then all pass the parameter by keyword, two wrappers deep at most,
issue 32; round 11: also a module-level class whose ``__init__(self, **kwargs)`` passes them on, its calls deciding,
and a ``**`` argument spreading a configuration object that declares the parameter, ``Model(**config.dict())``:
:mod:`mpsready.scan.model.config_fields`); no other reference to the name (passed around,
subclassed, wrapped in ``functools.partial``); no notebook that names it. A method called through an attribute
(``self.load(...)``) is matched by its name, so an unrelated method of the same name that omits the device keeps
the finding too.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Collection, Mapping
from dataclasses import replace
from pathlib import PurePosixPath
from typing import Any

from mpsready.findings import Finding, Severity
from mpsready.scan.code.astutil import walk_spanning
from mpsready.scan.model.config_fields import ConfigFields, expands_field
from mpsready.scan.model.reread import SourceTrees


def _project_bindings(tree: ast.AST, tops: set[str], lines: list[int] | None) -> set[str]:
    """Local names a file binds to the project's own modules by import (``import pkg.fid``, ``from pkg import
    fid``, ``from . import fid``): the receivers through which a module-level function can be called. With
    ``lines`` (those holding the word ``import``), only the statements spanning one are entered."""
    out: set[str] = set()
    for node in walk_spanning(tree, lines):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] in tops:
                    out.add(a.asname or a.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").split(".")[0] in tops):
            out.update(a.asname or a.name for a in node.names)
    return out


def _root(node: ast.AST) -> str | None:
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _calls(tree: ast.AST, name: str, method: bool, modules: set[str],
           lines: list[int] | None, is_class: bool = False, own: bool = False) -> tuple[list[ast.Call], bool]:
    """(the calls of ``name`` in ``tree``, whether the name is also referenced other than as a callee; the calls
    found so far when it is). A method is matched through any attribute (``self.load``, ``model.load``); a
    function or class only as a bare name or through ``modules``, the file's names for the project's modules
    (``fid.FID``, :func:`_project_bindings`), so ``torch.load(...)`` is not a call of the project's ``load``.
    ``own``: the file defines a function or class of that name itself (:func:`_shadows`), so its bare ``name``
    is its own and only ``module.name`` can reach the one judged (issue 32, round 9).
    One walk: a call is met before its callee, so the callee is known not to be another reference."""

    def ours(attr: ast.Attribute) -> bool:
        return method or _root(attr.value) in modules

    calls: list[ast.Call] = []
    callees: set[int] = set()
    harmless = _not_uses(tree, lines, name, is_class)
    for node in walk_spanning(tree, lines):
        if id(node) in harmless or (own and isinstance(node, ast.Name)):
            continue
        if isinstance(node, ast.Call):
            f = node.func
            if (isinstance(f, ast.Name) and f.id == name and not own) or (
                    isinstance(f, ast.Attribute) and f.attr == name and ours(f)):
                calls.append(node)
                callees.add(id(f))
        elif id(node) in callees:
            continue
        elif isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load):
            return calls, True
        elif isinstance(node, ast.Attribute) and node.attr == name and isinstance(node.ctx, ast.Load) and ours(node):
            return calls, True
    return calls, False


def _shadows(tree: ast.AST, name: str, method: bool) -> bool:
    """Whether a module defines a function or class ``name`` of its own at its top level (``def init_model(args)``
    in ``eval.py`` beside the project's ``trainer/utils.py: init_model(cfg, device="cuda")``): its bare calls of
    ``name`` are of that definition, not of the one a ``from ... import *`` brings (issue 32, round 9). Methods
    are matched by attribute and are never shadowed this way."""
    return not method and any(isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                              and st.name == name for st in getattr(tree, "body", ()))


def _not_uses(tree: ast.AST, lines: list[int] | None, name: str, is_class: bool = False) -> set[int]:
    """Ids of the ``name`` references that neither call the function nor pass it on (issue 32, round 4): a class's
    bases (a subclass's own ``__init__`` is its own finding; its ``super().__init__(...)`` call is not by name), type
    annotations, the class argument of ``isinstance``/``issubclass``, and attribute reads of the function object
    (``f.cache_clear()``, ``f.__name__``) or, for a class (``is_class``), of its other members
    (``Predictor.find_folds(...)``)."""
    out: set[int] = set()

    def mark(node: ast.AST | None) -> None:
        if node is not None:
            out.update(id(n) for n in ast.walk(node) if (isinstance(n, ast.Name) and n.id == name)
                       or (isinstance(n, ast.Attribute) and n.attr == name))

    for node in walk_spanning(tree, lines):
        if isinstance(node, ast.ClassDef):
            for base in node.bases:
                mark(base)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            a = node.args
            for arg in (*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg):
                mark(arg.annotation if arg is not None else None)
            mark(node.returns)
        elif isinstance(node, ast.AnnAssign):
            mark(node.annotation)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in (
                "isinstance", "issubclass") and len(node.args) == 2:
            mark(node.args[1])
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == name \
                and (node.attr in _FUNCTION_ATTRS or (is_class and node.attr != "__call__")):
            # `compute_gaussian.cache_clear()`: the function object, not a call of it; `Predictor.find_folds(...)`:
            # another member of a class, not a construction
            out.add(id(node.value))
    return out


# attributes of a function object read without calling it (functools.lru_cache's, the function's own)
_FUNCTION_ATTRS = frozenset(("cache_clear", "cache_info", "__name__", "__qualname__", "__doc__", "__module__",
                             "__wrapped__"))


def _passes(call: ast.Call, parameter: str, position: int | None) -> bool:
    if any(k.arg == parameter for k in call.keywords):
        return True
    if position is None or any(k.arg is None for k in call.keywords):
        return False
    head = call.args[:position + 1]
    return len(call.args) > position and not any(isinstance(a, ast.Starred) for a in head)


def unused_device_defaults(findings: list[Finding], results: Mapping[str, Any],
                           sources: SourceTrees, off_path: Callable[[str], bool] | None = None,
                           main_path: bool = False, public: Collection[str] = ()) -> list[Finding]:
    """Findings with the API103 parameter defaults that no call uses lowered to info (see the module doc);
    ``results`` maps the analysed sources' relative paths to (CodeResult, cells); ``sources`` reads and parses
    the project's files again (shared with the other call-site passes). ``off_path(rel)`` says whether a file is
    off the main path (tests, examples, a secondary script, a demo notebook beside the project's modules): its
    calls and references are not read, so only the main path's calls decide (issue 32, round 4); at least one
    main-path call must pass the parameter. With ``main_path`` (the project has entries the main path starts from),
    a default no main-path file calls or names at all is info too (``evidence.default_unseen``), unless ``public``
    (the names the README's code imports: its users' API) holds the function or its class."""
    if not any(f.code == "API103" and f.evidence.get("default_of") for f in findings):
        return findings
    index = _ImportIndex(results, off_path, sources)
    tops = {rel.split("/", 1)[0].removesuffix(".py") for rel in results}  # the project's top-level modules
    bindings = _Bindings(tops, sources)
    out = []
    for f in findings:
        ev = f.evidence
        if f.code == "API103" and ev.get("default_of") and f.severity is not Severity.INFO:
            sites = _all_passing(ev["default_of"], bool(ev.get("method")), ev.get("owner"), f.location.path or "",
                                 ev["parameter"], ev.get("position"), bindings, index, sources)
            if sites == [] and main_path and ev["default_of"] not in public and ev.get("owner") not in public \
                    and (off_path is None or not off_path(f.location.path or "")):
                # no call on the main path names it (it is reached through a registry, or not at all): the main
                # path is not seen to use the default (issue 32, round 4); the README's API keeps it (users call it)
                f = replace(f, severity=Severity.INFO, message=f"{f.message}; no call of {ev['default_of']}() on the "
                            "main path omits it (none calls it by name), so the default is not seen to run") \
                    .with_evidence({**ev, "default_unseen": True})
            elif sites:
                f = replace(f, severity=Severity.INFO, message=f"{f.message}; every call of {ev['default_of']}() in "
                            f"the project passes {ev['parameter']} ({len(sites)} call{'s' if len(sites) > 1 else ''}), "
                            "so the default is never used").with_evidence({**ev, "default_unused": sites})
        out.append(f)
    return out


MAX_PROJECT_FILES = 400  # Python files of a project decided_by_callers looks at (as model/callers.py)
MAX_FILES = 40  # sources read per finding; a name imported by more files keeps its finding (bounded work)


def _module(rel: str) -> list[str]:
    parts = list(PurePosixPath(rel).with_suffix("").parts)
    return parts[:-1] if parts and parts[-1] == "__init__" else parts


class _ImportIndex:
    """The analyser's recorded imports, indexed once per scan: imported name -> files (``from x import name``,
    ``*`` included), and last part of a plainly imported module -> files (``import pkg.fid`` -> ``fid``)."""

    def __init__(self, results: Mapping[str, Any], off_path: Callable[[str], bool] | None = None,
                 sources: SourceTrees | None = None) -> None:
        self.by_name: dict[str, set[str]] = {}
        self.by_module: dict[str, set[str]] = {}
        self.fields = ConfigFields([rel for rel in results if rel.endswith(".py")], sources)
        for rel, (res, _cells) in results.items():
            if off_path is not None and off_path(rel):
                continue  # issue 32, round 4: a file off the main path neither overrides nor uses the default there
            for imp in res.imports:
                level, mod, imported = imp.level, imp.module, imp.names
                if imported:
                    for n in imported:
                        self.by_name.setdefault(n, set()).add(rel)
                elif not level:
                    self.by_module.setdefault(mod.split(".")[-1], set()).add(rel)

    def candidates(self, def_rel: str, names: set[str]) -> tuple[list[str], list[str]]:
        """(the defining file and the files that import one of ``names``, its module or ``*`` by name; the files
        that import the defining module or a package above it as a module)."""
        module = _module(def_rel)
        named = set().union(*(self.by_name.get(n, set()) for n in (*names, "*", *module[-1:])))
        plain = set().union(*(self.by_module.get(part, set()) for part in module)) - named
        return [def_rel, *sorted(named - {def_rel})], sorted(plain - {def_rel})


class _Bindings:
    """:func:`_project_bindings` of each file, found once per scan (the same files are read for many findings)."""

    def __init__(self, tops: set[str], sources: SourceTrees) -> None:
        self.tops, self.sources = tops, sources
        self.known: dict[str, set[str]] = {}

    def of(self, rel: str, tree: ast.AST) -> set[str]:
        if rel not in self.known:
            self.known[rel] = _project_bindings(tree, self.tops, self.sources.lines(rel, ("import",)))
        return self.known[rel]


def _all_passing(name: str, method: bool, owner: str | None, def_rel: str, parameter: str, position: int | None,
                 bindings: _Bindings, index: _ImportIndex, sources: SourceTrees, depth: int = 0) -> list[str] | None:
    """``path:line`` of every call of ``name``, when all of them can be seen and pass the parameter (an empty list
    when no file calls or names it); else None. Calls are looked for in the defining file and the files that import the name (or, for a
    method, its class) or the defining module, per the analyser's recorded imports."""
    sites: list[str] = []
    by_name, by_module = index.candidates(def_rel, {name} if owner is None else {name, owner})
    if len(by_name) + len(by_module) > MAX_FILES:
        return None
    for rel in by_name + by_module:
        text = sources.text(rel)
        if text is None:
            return None  # unreadable now: its calls cannot be seen
        if name not in text or (rel in by_module and "." + name not in text):
            continue
        if rel.endswith(".ipynb"):
            return None  # cells are not read here: a notebook naming the callee may rely on the default
        tree = sources.tree(rel)
        if tree is None:
            return None
        calls, other = _calls(tree, name, method, set() if method else bindings.of(rel, tree),
                              sources.lines(rel, (name,)), is_class=owner is not None and owner == name,
                              own=rel != def_rel and _shadows(tree, name, method))
        if other:
            return None
        for c in calls:
            if _passes(c, parameter, position) or expands_field(tree, c, parameter, index.fields):
                sites.append(f"{rel}:{c.lineno}")
                continue
            if _distributed_only(tree, c.lineno):
                continue  # round 4: in a multi-process function (`def run_ddp`): never the Mac's one-process command
            wrapper = _forwarder(tree, c) if depth < 2 else None
            if wrapper is None:
                return None
            # `def wrapper(*args, **kwargs): ... name(*args, **kwargs)`: the wrapper's own callers decide (issue 32);
            # round 11: so do a class's, when its `__init__(self, **kwargs)` is the wrapper
            w_name, w_owner = wrapper
            inner = _all_passing(w_name, False, w_owner, rel, parameter, None, bindings, index, sources, depth + 1)
            if not inner:
                return None
            sites += inner
    return sites


def _distributed_only(tree: ast.AST, line: int) -> bool:
    """Whether ``line`` lies in a function whose name names multi-process training (``run_ddp``,
    ``setup_distributed``: :func:`~mpsready.scan.code.astutil.is_distributed_name`), the code the analyser puts in the
    ``distributed`` scope: a Mac runs the main command as one process (issue 32, round 4)."""
    from mpsready.scan.code.astutil import is_distributed_name

    from mpsready.scan.model.reach_walk import statements

    # statements only (a definition is one): a walk of every node per call site cost ~1 s of a torch-package scan
    return any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.lineno <= line <= (n.end_lineno or n.lineno)
               and is_distributed_name(n.name) for n in statements(tree))


def _forwarder(tree: ast.AST, call: ast.Call) -> tuple[str, str | None] | None:
    """The wrapper whose body makes ``call`` passing on exactly its own ``*args`` and ``**kwargs``: ``(function,
    None)`` for a module-level function, ``(Class, Class)`` for the ``__init__`` of a module-level class (its callers
    are the calls of the class: round 11, ``class Model: def __init__(self, **kwargs): populate_args(**kwargs)``), or
    None."""
    star = [a.value.id for a in call.args if isinstance(a, ast.Starred) and isinstance(a.value, ast.Name)]
    double = [k.value.id for k in call.keywords if k.arg is None and isinstance(k.value, ast.Name)]
    if len(star) != len(call.args) or len(double) != len(call.keywords) or not double:
        return None

    def wraps(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
        args = fn.args
        return args.kwarg is not None and args.kwarg.arg == double[0] and (
            not star or (args.vararg is not None and args.vararg.arg == star[0]))

    for stmt in getattr(tree, "body", []):
        if not stmt.lineno <= call.lineno <= (stmt.end_lineno or stmt.lineno):
            continue
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and wraps(stmt):
            return stmt.name, None
        if isinstance(stmt, ast.ClassDef):
            for fn in stmt.body:
                if isinstance(fn, ast.FunctionDef) and fn.name == "__init__" and wraps(fn) \
                        and fn.lineno <= call.lineno <= (fn.end_lineno or fn.lineno):
                    return stmt.name, stmt.name
    return None


def decided_by_callers(findings: list[Finding], results: Mapping[str, Any], sources: SourceTrees,
                       off_path: Callable[[str], bool] | None = None) -> list[Finding]:
    """Findings in a branch that a parameter decides (``evidence.param_test``: ``if not is_dist: return`` in
    ``step(loader, is_dist)``) whose every call in the project passes a value the Mac's facts decide
    (``step(loader, is_dist())`` with ``is_dist()`` False on a Mac) the other way: they never run on a Mac and get
    ``behind_flag`` and ``evidence.mac_never_param`` (issue 32, inter-procedural through parameters). The calls are
    found as for :func:`unused_device_defaults` (notebooks aside: beside Python modules they are demos); a call
    that omits the argument, passes ``*args``, or a value the facts leave open keeps the finding. A project of more
    than :data:`MAX_PROJECT_FILES` Python files is left as it is (bounded work, as :mod:`.callers`).
    Issue 32, round 9: ``off_path(rel)`` (as for :func:`unused_device_defaults`): only the main path's calls decide;
    and a value built by a device helper the calling file imports from the project (``device =
    get_default_device()``) is that helper's return on a Mac (:mod:`.helper_returns`)."""
    if not any((f.evidence or {}).get("param_test") for f in findings) \
            or sum(1 for rel in results if rel.endswith(".py")) > MAX_PROJECT_FILES:
        return findings  # a large library (the torch package) is left as it is: its findings keep limiting
    from mpsready.scan.model.remedy import limits

    from mpsready.scan.model.helper_returns import HelperReturns

    index = _ImportIndex(results, off_path)
    tops = {rel.split("/", 1)[0].removesuffix(".py") for rel in results}
    bindings = _Bindings(tops, sources)
    helpers = HelperReturns([rel for rel in results if rel.endswith(".py")], sources)
    cache: dict[tuple, str | None] = {}
    out = []
    for f in findings:
        pt = (f.evidence or {}).get("param_test")
        if pt and limits(f) and f.location.path:
            key = (f.location.path, pt["function"], pt["param"], pt["line"], pt["want"])
            if key not in cache:
                try:
                    cache[key] = _never_by_callers(pt, f.location.path, index, bindings, sources, helpers)
                except RecursionError:  # an argument nested past Python's stack: the finding keeps limiting
                    cache[key] = None
            why = cache[key]
            if why is not None:
                f = f.with_state(behind_flag=f"a Mac never runs it: {why}").with_evidence(
                    {**f.evidence, "mac_never_param": why})
        out.append(f)
    return out


def _never_by_callers(pt: dict, def_rel: str, index: _ImportIndex, bindings: _Bindings,
                      sources: SourceTrees, helpers: Any) -> str | None:

    name, method = pt["function"], pt["method"]
    position = pt["position"] - (1 if method else 0)
    by_name, by_module = index.candidates(def_rel, {name})
    if len(by_name) + len(by_module) > MAX_FILES:
        return None
    values: set = set()
    sites: list[str] = []
    for rel in by_name + by_module:
        text = sources.text(rel)
        if text is None:
            return None
        if name not in text:
            continue
        if rel.endswith(".ipynb"):
            continue  # beside Python modules a notebook is a demo (graph.mark_reach), not the main path
        tree = sources.tree(rel)
        if tree is None:
            return None
        calls, other = _calls(tree, name, method, set() if method else bindings.of(rel, tree),
                              sources.lines(rel, (name,)), own=rel != def_rel and _shadows(tree, name, method))
        if other:
            return None
        mac = helpers.evaluator(rel, fresh=True)
        for c in calls:
            arg = next((k.value for k in c.keywords if k.arg == pt["param"]), None)
            if arg is None and 0 <= position < len(c.args) and not any(
                    isinstance(a, ast.Starred) for a in c.args[:position + 1]):
                arg = c.args[position]
            value = mac.eval(arg, None, None, 0) if arg is not None else None
            if value is None:
                return None
            values |= value
            sites.append(f"{rel}:{c.lineno}")
    if not sites:
        return None
    tree = sources.tree(def_rel)
    if tree is None:
        return None
    fn = next((n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
               and n.name == name and n.lineno <= pt["line"] <= (n.end_lineno or n.lineno)), None)
    test = next((n.test for n in ast.walk(fn) if isinstance(n, (ast.If, ast.IfExp)) and n.test.lineno == pt["line"]),
                None) if fn is not None else None
    if test is None:
        return None
    callee = helpers.evaluator(def_rel, fresh=True)
    callee.bindings[pt["param"]] = frozenset(values)
    truth = callee.truth(test, fn, None)
    if truth is None or truth == pt["want"]:
        return None
    shown = ", ".join(repr(v) for v in sorted(values, key=repr))
    return (f"{ast.unparse(test)[:80]} is {truth} (line {pt['line']}) because every call passes {pt['param']} = "
            f"{shown} on a Mac ({', '.join(sites[:3])})")
