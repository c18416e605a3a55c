"""Modules a project imports by name at run time (issue 32, round 5): ``importlib.import_module("models." + name)``,
``import_module(prefix + name)`` with ``prefix="models."`` a parameter's default, ``import_module(f"models.{name}")``.
The name comes from a config or an option, so any module of the package that the constant prefix names may be
loaded: the record ``ImportRecord(0, "models", ("**",), line, False)`` lets the main path reach every module of that
package (:func:`mpsready.scan.model.graph._reach`), as a static import of each would. A prefix that names no package
(``import_module(name)``) reaches nothing: the loaded module is unknown."""

from __future__ import annotations

import ast

from mpsready.scan.code.result import ImportRecord

ANY_MODULE = "**"  # the names of a package's record: every module under it


def dynamic_imports(tree: ast.Module) -> list[ImportRecord]:
    """The packages ``tree`` loads a module of by name (one record per call site)."""
    out = []
    scopes: list[tuple[ast.AST, dict[str, str]]] = [(tree, {})]
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            scopes.append((node, _string_defaults(node.args)))
    seen: set[int] = set()
    for scope, defaults in reversed(scopes):  # functions first: a call is judged with its own function's defaults
        for node in ast.walk(scope):
            if id(node) in seen or not isinstance(node, ast.Call) or not node.args or not _is_import_module(node.func):
                continue
            seen.add(id(node))
            prefix = _prefix(node.args[0], defaults)
            package = prefix[:-1] if prefix and prefix.endswith(".") else None
            if package and all(part.isidentifier() for part in package.split(".")):
                out.append(ImportRecord(0, package, (ANY_MODULE,), node.lineno, False))
    return out


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
