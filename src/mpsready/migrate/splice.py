"""The new text of an edited module without generating the code of what no edit touched.

``Module.code`` of the edited tree generates every token of the file again (about a quarter of libcst's
parse, measured on the synthetic tree of ``benchmarks/migrate_bench.py``), though an edit changes a few
statements. The index (:mod:`mpsready.migrate.index`) kept the tokens each statement wrote, and a statement
of a module or an indented block always writes whole lines whose text depends only on its own nodes and the
indentation of the blocks around it (libcst ``Module._codegen_impl`` and ``IndentedBlock._codegen_impl``
write their children one after another, with nothing passed to them). So :func:`spliced` writes

- a statement no edit reached: its tokens as the index kept them;
- a statement an edit reached only inside a nested statement: its tokens, with each such nested statement
  replaced by its new code;
- a statement holding an edit (the nearest statement around the edited node): its new code, generated with
  the indentation of the blocks around it; a statement only the helper insertion changed (blank lines before
  it): the new blank lines, then its old text after its old leading lines;
- anything else (the import and the helper :func:`mpsready.migrate.helper.add_requirements` inserts): its code.

It answers ``None`` where it cannot be sure (a statement removed, a module without a trailing newline, an edit
outside any statement): the caller then uses ``Module.code``. ``tests/migrate/test_splice.py`` checks the text
equals ``Module.code`` on every fixture and project.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import cast

import libcst as cst
from libcst._nodes.internal import CodegenState  # noqa: PLC2701 - the state libcst's code generation writes to

from mpsready.migrate.index import IndexState


def unit(node: cst.CSTNode, state: IndexState) -> cst.CSTNode | None:
    """The nearest statement of a module or an indented block at or around ``node``; ``None`` outside one."""
    parents, extents = state.parents, state.extents
    while node is not None:
        if node in extents and isinstance(node, cst.BaseStatement):
            return node
        node = parents.get(node)  # type: ignore[assignment]
    return None


def topmost(units: Iterable[cst.CSTNode], state: IndexState) -> set[cst.CSTNode]:
    """The units no other unit of ``units`` contains."""
    chosen = set(units)
    out = set()
    for u in chosen:
        p = state.parents.get(u)
        while p is not None and p not in chosen:
            p = state.parents.get(p)
        if p is None:
            out.add(u)
    return out


def _indent(node: cst.CSTNode, state: IndexState, default: str) -> list[str]:
    """The indentation tokens libcst holds while it writes ``node``: one per indented block around it."""
    out = []
    p = state.parents.get(node)
    while p is not None:
        if isinstance(p, cst.IndentedBlock):
            out.append(default if p.indent is None else p.indent)
        p = state.parents.get(p)
    return out[::-1]


def _code(nodes: Sequence[cst.CSTNode], module: cst.Module, indent: list[str]) -> str:
    state = CodegenState(default_indent=module.default_indent, default_newline=module.default_newline)
    state.indent_tokens = list(indent)
    for n in nodes:
        n._codegen(state)
    return "".join(state.tokens)


def _same(a: Sequence[cst.CSTNode], b: Sequence[cst.CSTNode]) -> bool:
    return len(a) == len(b) and all(x is y for x, y in zip(a, b))


def spliced(final: cst.Module, original: cst.Module, state: IndexState, rewritten: dict[cst.CSTNode, object],
            rebuilt: list[tuple[cst.CSTNode, cst.CSTNode]]) -> str | None:
    """``final.code``, from the index's tokens where nothing changed. ``rewritten``: each topmost edited unit of
    ``original`` and what the rewrite turned it into (a node or a ``FlattenSentinel``); ``rebuilt``: (new
    top-level statement, the original one it was rebuilt from because a unit inside it changed)."""
    if not final.has_trailing_newline or not _same(final.header, original.header) or \
            not _same(final.footer, original.footer):
        return None
    tokens, extents = state.tokens, state.extents
    inner: dict[cst.CSTNode, list[cst.CSTNode]] = {}  # top-level statement -> the rewritten units inside it
    for u in rewritten:
        top = u
        while state.parents.get(top) is not original:
            top = state.parents.get(top)  # type: ignore[assignment]
            if top is None:
                return None
        if top is not u:
            inner.setdefault(top, []).append(u)
    texts: dict[int, str] = {}  # id of a post-edit top-level statement -> its text
    for stmt in original.body:
        if stmt not in rewritten and stmt not in inner:
            a, b = extents[stmt]
            texts[id(stmt)] = "".join(tokens[a:b])
    for new_stmt, old in rebuilt:
        if old in rewritten:
            continue
        pieces, at = [], extents[old][0]
        for u in sorted(inner.get(old, ()), key=lambda n: extents[n][0]):
            a, b = extents[u]
            new = rewritten[u]
            nodes = list(new.nodes) if isinstance(new, cst.FlattenSentinel) else [new]
            if not nodes or not all(isinstance(n, cst.CSTNode) for n in nodes):
                return None  # removed: a block left empty gets a `pass` only the whole code writes
            indent = _indent(u, state, final.default_indent)
            pieces += ["".join(tokens[at:a]), _code(cast("list[cst.CSTNode]", nodes), final, indent)]
            at = b
        pieces.append("".join(tokens[at:extents[old][1]]))
        texts[id(new_stmt)] = "".join(pieces)
    kept = [s for s in original.body if id(s) in texts] + [new for new, _ in rebuilt if id(new) in texts]
    by_body = {id(getattr(s, "body", None)): s for s in kept}  # add_requirements keeps each field but leading_lines
    out = [_code(final.header, final, [])]
    for stmt in final.body:
        text = texts.get(id(stmt))
        if text is None:
            text = _relined(stmt, by_body.get(id(getattr(stmt, "body", None))), texts, final)
        out.append(text)
    out.append(_code(final.footer, final, []))
    code = "".join(out)
    return code or final.default_newline


def _relined(stmt: cst.CSTNode, before: cst.CSTNode | None, texts: dict[int, str], module: cst.Module) -> str:
    """The text of a top-level statement not kept as it was: where it is ``before`` with other leading lines only
    (the helper inserted above it), the new lines and ``before``'s text after its old ones; else its code."""
    if before is not None and type(before) is type(stmt) and id(before) in texts and all(
            getattr(stmt, f) is getattr(before, f) for f in stmt.__dataclass_fields__ if f != "leading_lines"):
        old, text = _code(before.leading_lines, module, []), texts[id(before)]  # type: ignore[attr-defined]
        if text.startswith(old):
            return _code(stmt.leading_lines, module, []) + text[len(old):]  # type: ignore[attr-defined]
    return _code([stmt], module, [])
