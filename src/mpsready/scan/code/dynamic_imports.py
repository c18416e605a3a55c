"""Modules a project imports by name at run time (issue 32, round 5): ``importlib.import_module("models." + name)``,
``import_module(prefix + name)`` with ``prefix="models."`` a parameter's default, ``import_module(f"models.{name}")``.
The name comes from a config or an option, so any module of the package that the constant prefix names may be
loaded: the record ``ImportRecord(0, "models", ("**",), line, False)`` lets the main path reach every module of that
package (:func:`mpsready.scan.model.graph._reach`), as a static import of each would. A prefix that names no package
(``import_module(name)``) reaches nothing: the loaded module is unknown."""

from __future__ import annotations

import ast
from bisect import bisect_left
from collections import deque

from mpsready.scan.code.astutil import walk_fields
from mpsready.scan.code.result import ImportRecord
from mpsready.scan.code.triggers import substring_lines

ANY_MODULE = "**"  # the names of a package's record: every module under it


def dynamic_imports(tree: ast.Module, text: str | None = None) -> list[ImportRecord]:
    """The packages ``tree`` loads a module of by name (one record per call site). A call is judged with the
    defaults of the innermost function around it (its decorators and defaults included), the module's calls with
    none. The records come innermost function first: functions in the reverse of ``ast.walk``'s order, each one's
    calls in that order. One breadth-first walk finds them (before, a walk per function re-walked every nested one:
    3.8 s of a torch-package scan, on 50 files).

    With the source ``text``, the walk enters only the nodes spanning a line that holds ``import_module`` (or, in
    non-ASCII text, any non-ASCII character: ``ast`` keeps identifiers NFKC-normalised), where every such call
    sits: the nodes it skips hold none, and skipping whole subtrees keeps the breadth-first order of the rest, so
    the records are the same (issue 39: the walk of every node of the 50 torch files that name ``import_module``
    was about 4 % of the package's cold scan)."""
    lines = substring_lines(text, ("import_module",)) if text is not None else None
    funcs: list[ast.FunctionDef | ast.AsyncFunctionDef | None] = [None]  # scope number -> its function (0: module)
    found: list[tuple[int, int, ast.Call]] = []  # (-scope number, place in the walk, call)
    # (node, scope number, the lines a child must span to be entered: None, every child)
    queue: deque[tuple[ast.AST, int, list[int] | None]] = deque([(tree, 0, lines)])
    place = 0
    while queue:
        node, scope, here = queue.popleft()
        place += 1
        cls = node.__class__
        if cls is ast.FunctionDef or cls is ast.AsyncFunctionDef:
            funcs.append(node)  # type: ignore[arg-type]
            scope = len(funcs) - 1
        elif cls is ast.Call and node.args and _is_import_module(node.func):  # type: ignore[attr-defined]
            found.append((-scope, place, node))  # type: ignore[arg-type]
        elif cls is ast.JoinedStr:
            here = None  # positions inside an f-string are not to be trusted before Python 3.12: all of it entered
        for f in walk_fields(cls):
            v = getattr(node, f, None)
            if isinstance(v, ast.AST):
                if here is None or _spans(v, here):
                    queue.append((v, scope, here))
            elif isinstance(v, list):
                queue.extend((c, scope, here) for c in v if isinstance(c, ast.AST) and (here is None or _spans(c, here)))
    out = []
    for scope, _place, node in sorted(found, key=lambda t: (t[0], t[1])):
        fn = funcs[-scope]
        prefix = _prefix(node.args[0], {} if fn is None else _string_defaults(fn.args))
        package = prefix[:-1] if prefix and prefix.endswith(".") else None
        if package and all(part.isidentifier() for part in package.split(".")):
            out.append(ImportRecord(0, package, (ANY_MODULE,), node.lineno, False))
    return out


def _spans(node: ast.AST, lines: list[int]) -> bool:
    """Whether ``node`` spans one of the sorted ``lines`` (its decorators included); a node without a position
    (``arguments``, ``comprehension``, ``withitem``, ``match_case``) always does."""
    end = getattr(node, "end_lineno", None)
    if end is None:
        return True
    start = node.lineno  # type: ignore[attr-defined]
    decorators = getattr(node, "decorator_list", None)
    if decorators:
        start = min(start, *(d.lineno for d in decorators))
    i = bisect_left(lines, start)
    return i < len(lines) and lines[i] <= end


def _is_import_module(func: ast.expr) -> bool:
    if isinstance(func, ast.Attribute):
        return func.attr == "import_module" and isinstance(func.value, ast.Name) and func.value.id == "importlib"
    return isinstance(func, ast.Name) and func.id == "import_module"


def _string_defaults(args: ast.arguments) -> dict[str, str]:
    """Parameter -> its constant string default."""
    positional = [*args.posonlyargs, *args.args]
    pairs = list(zip(positional[len(positional) - len(args.defaults):], args.defaults))
    pairs += [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None]
    return {a.arg: d.value for a, d in pairs if isinstance(d, ast.Constant) and isinstance(d.value, str)}


def _prefix(arg: ast.expr, defaults: dict[str, str]) -> str | None:
    """The constant start of a module name built at run time, or None."""
    if isinstance(arg, ast.JoinedStr) and len(arg.values) > 1:
        head = arg.values[0]
        return head.value if isinstance(head, ast.Constant) and isinstance(head.value, str) else None
    if isinstance(arg, ast.BinOp) and isinstance(arg.op, ast.Add):
        left = arg.left
        if isinstance(left, ast.Constant) and isinstance(left.value, str):
            return left.value
        if isinstance(left, ast.Name):
            return defaults.get(left.id)
    return None
