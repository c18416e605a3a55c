"""The walks of the reach by calls (:mod:`mpsready.scan.model.call_reach`), made once (issue 32, last bullet: speed).

The reach by calls ran twice on a project where some limit was not reached at the Mac's defaults: once following only
the branches a Mac takes (the guarded reach) and once following every branch, to explain the difference. Each run
walked the body of every reached definition again with ``ast.iter_child_nodes``, and one summary walked every node of
every main-path file to find its ``from`` imports and definitions; on lerobot (807 files) these walks were about 60 %
of the scan. Here:

- :func:`loads` walks a definition's body once for both reaches: the names on a side the guards skip count for the
  unguarded reach only, and the unguarded answer is kept (:class:`ReachMemo`) for the second reach;
- the walk visits children in the order ``ast.iter_child_nodes`` gives, through a per-class table of the fields that
  can hold a node (expression contexts and operators, which hold no name, are left out), so the names come out in the
  same order as before: the first reference to a name, which a call chain names, is unchanged;
- :func:`summarise` visits statements only (imports and definitions are statements), breadth first as ``ast.walk``
  does, so where two imports bind one alias the later one in that order still wins.
"""

from __future__ import annotations

import ast
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from mpsready.scan.code.astutil import walk_fields

_STATEMENT_HOLDERS = (ast.stmt, ast.excepthandler, ast.match_case)  # every node a statement can sit in
Loads = tuple[dict[str, int], dict[str, int]]


def sides(node: ast.If | ast.IfExp) -> tuple[list[Any], list[Any]]:
    """(the body, the ``else``) of an ``if`` statement, or of a conditional expression as one-element lists."""
    if isinstance(node, ast.IfExp):
        return [node.body], [node.orelse]
    return node.body, node.orelse


def _record(name: str, line: int, out: dict[str, int]) -> None:
    if name not in out or line < out[name]:
        out[name] = line


def loads(nodes: Iterable[ast.AST], rel: str = "", fn: ast.AST | None = None, guards: Any = None,
          unguarded: bool = False) -> tuple[Loads, Loads | None]:
    """((bare names loaded in ``nodes``, attributes and identifier strings loaded) -> the first line of each, the same
    for every branch or ``None``). With ``guards``, the first answer has none from the side of an ``if`` a Mac run at
    the defaults never enters (``fn``: the function around); with ``unguarded`` the second counts those sides too (it
    is what a walk without ``guards`` gives). The guards are asked about the ``if`` statements the first answer walks,
    in the same order as a walk of that answer alone."""
    bare: dict[str, int] = {}
    other: dict[str, int] = {}
    all_bare: dict[str, int] | None = {} if unguarded else None
    all_other: dict[str, int] = {}
    stack: list[tuple[ast.AST, ast.AST | None, bool]] = [(n, fn, True) for n in nodes]
    push = stack.append
    while stack:
        n, fn, live = stack.pop()
        cls = type(n)
        if (cls is ast.If or cls is ast.IfExp) and live and guards is not None:  # round 13: `a if t else b` too
            side = guards.skip(rel, n, fn)
            if side is not None:
                push((n.test, fn, True))  # type: ignore[attr-defined]
                body, orelse = sides(n)  # type: ignore[arg-type]
                if all_bare is not None:  # the skipped side too, for the unguarded answer only
                    for c in body:
                        push((c, fn, side != "body"))
                    for c in orelse:
                        push((c, fn, side != "orelse"))
                else:
                    for c in (orelse if side == "body" else body):
                        push((c, fn, True))
                continue
        elif cls is ast.FunctionDef or cls is ast.AsyncFunctionDef or cls is ast.Lambda:
            fn = n
        elif cls is ast.Name:
            if isinstance(n.ctx, ast.Load):  # type: ignore[attr-defined]
                line = getattr(n, "lineno", 0)
                if live:
                    _record(n.id, line, bare)  # type: ignore[attr-defined]
                if all_bare is not None:
                    _record(n.id, line, all_bare)  # type: ignore[attr-defined]
            continue  # a name holds no other name (its context is left out)
        elif cls is ast.Attribute or (cls is ast.Constant and isinstance(n.value, str)  # type: ignore[attr-defined]
                                      and n.value.isidentifier()):  # type: ignore[attr-defined]
            name = n.attr if cls is ast.Attribute else n.value  # type: ignore[attr-defined]
            line = getattr(n, "lineno", 0)
            if live:
                _record(name, line, other)
            if all_bare is not None:
                _record(name, line, all_other)
        for f in walk_fields(cls):
            v = getattr(n, f, None)
            if isinstance(v, ast.AST):
                push((v, fn, live))
            elif isinstance(v, list):
                for c in v:
                    if isinstance(c, ast.AST):
                        push((c, fn, live))
    return (bare, other), (None if all_bare is None else (all_bare, all_other))


@dataclass(frozen=True)
class Summary:
    """One walk of a file's tree: the names its ``from`` imports bind (alias -> name), whether it has a ``*``
    import, and the names of every function, class and method it defines (nested ones included)."""

    imported: dict[str, str]
    star: bool
    defs: frozenset[str]


def summarise(tree: ast.Module) -> Summary:
    """The :class:`Summary` of ``tree``, from its statements in ``ast.walk``'s breadth-first order."""
    imported: dict[str, str] = {}
    star = False
    defs: set[str] = set()
    queue: deque[ast.AST] = deque([tree])
    while queue:
        n = queue.popleft()
        if isinstance(n, ast.ImportFrom):
            for a in n.names:
                if a.name == "*":
                    star = True
                else:
                    imported[a.asname or a.name] = a.name
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defs.add(n.name)
        for f in walk_fields(type(n)):
            v = getattr(n, f, None)
            if isinstance(v, list):
                queue.extend(c for c in v if isinstance(c, _STATEMENT_HOLDERS))
    return Summary(imported, star, frozenset(defs))


def statements(tree: ast.AST) -> Iterable[ast.AST]:
    """Every statement (and except handler, match case) of ``tree``, in no promised order."""
    todo = [tree]
    while todo:
        n = todo.pop()
        yield n
        for f in walk_fields(type(n)):
            v = getattr(n, f, None)
            if isinstance(v, list):
                todo.extend(c for c in v if isinstance(c, _STATEMENT_HOLDERS))


def names_any(stmts: Iterable[ast.AST], names: frozenset[str]) -> bool:
    """Whether a bare name or an attribute under ``stmts`` is one of ``names`` (any context)."""
    todo = list(stmts)
    while todo:
        n = todo.pop()
        cls = type(n)
        if cls is ast.Name:
            if n.id in names:  # type: ignore[attr-defined]
                return True
            continue
        if cls is ast.Attribute and n.attr in names:  # type: ignore[attr-defined]
            return True
        for f in walk_fields(cls):
            v = getattr(n, f, None)
            if isinstance(v, ast.AST):
                todo.append(v)
            elif isinstance(v, list):
                todo.extend(c for c in v if isinstance(c, ast.AST))
    return False


@dataclass
class ReachMemo:
    """What both reaches of one project share: each file's :class:`Summary`, and the unguarded loads of each
    definition's body (by the node's id; the trees live as long as the scan's sources)."""

    summaries: dict[str, Summary] = field(default_factory=dict)
    loads: dict[int, Loads] = field(default_factory=dict)
