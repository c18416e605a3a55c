"""The file index (one code generation pass) gives what libcst's providers and visitors give, exactly."""

from pathlib import Path

import libcst as cst
import pytest
from libcst.metadata import ParentNodeProvider, PositionProvider

from mpsready.migrate.index import MAX_DEPTH, index, walk

HERE = Path(__file__).parent
SOURCES = sorted(p for p in (HERE / "fixtures").rglob("*.py")) + sorted((HERE / "projects").rglob("*.py"))
EXTRA = ["x = {'a': [1, (2, 3)]}\r\nif x:\r\n    y = f'{x!r:>10}' if x else lambda q, *r, k=1, **s: q\r\n",
         "@dec(1)\nclass C(B, metaclass=M):\n    def f(self, /, a, *, b=2) -> int:\n        return (a\n"
         "                + b)  # comment\n", "x = 1"]


def _texts():
    return [p.read_text(encoding="utf-8") for p in SOURCES] + EXTRA


def test_positions_parents_and_code_equal_libcst_providers():
    assert len(SOURCES) == 29  # 7 of tests/migrate/projects/research_like (issue 35)
    for text in _texts():
        module = cst.parse_module(text)
        state = index(module)
        wrapper = cst.MetadataWrapper(module, unsafe_skip_copy=True)
        positions = dict(wrapper.resolve(PositionProvider))
        assert list(state.spans) == list(positions)  # the same keys in the same order
        assert state.spans == {n: (r.start.line, r.start.column, r.end.line, r.end.column) for n, r in positions.items()}
        assert state.parents == dict(wrapper.resolve(ParentNodeProvider))
        assert "".join(state.tokens) == module.code == text


class _Collect(cst.CSTVisitor):
    def __init__(self, skip: type) -> None:
        self.seen: list[cst.CSTNode] = []
        self.skip = skip

    def on_visit(self, node: cst.CSTNode) -> bool:
        self.seen.append(node)
        return not isinstance(node, self.skip)


WHITESPACE = (cst.SimpleWhitespace, cst.ParenthesizedWhitespace, cst.TrailingWhitespace, cst.EmptyLine, cst.Newline,
              cst.Comment)


def test_the_walk_meets_the_nodes_libcst_visitors_meet_in_the_same_order():
    """The same nodes; the same order but for whitespace and comments, which code generation emits in a few
    places (``import a as b``) before a sibling the visitor visits first and which no transform looks at."""
    for text in _texts():
        module = cst.parse_module(text)
        state = index(module)
        for skip in (cst.FunctionDef, cst.Call, type(None)):
            ours, theirs = _Collect(skip), _Collect(skip)
            walk(state, module, ours)
            module.visit(theirs)
            assert sorted(map(id, ours.seen)) == sorted(map(id, theirs.seen))
            assert [n for n in ours.seen if not isinstance(n, WHITESPACE)] == \
                [n for n in theirs.seen if not isinstance(n, WHITESPACE)]


def test_a_tree_deeper_than_the_limit_raises_recursion_error():
    depth_ok = "y = " + "[" * 130 + "]" * 130 + "\n"
    index(cst.parse_module(depth_ok))
    with pytest.raises(RecursionError, match=f"deeper than {MAX_DEPTH}"):
        index(cst.parse_module("y = " + "[" * 150 + "]" * 150 + "\n"))


# classes and tuples as the transforms pass them to ``isinstance``: concrete nodes, libcst's abstract bases, a mix
KINDS = [cst.Call, cst.If, cst.ImportFrom, cst.Name, cst.BaseExpression, cst.BaseStatement, cst.BaseSmallStatement,
         (cst.IfExp, cst.If), (cst.Name, cst.BaseCompOp), cst.CSTNode, cst.Lambda]


@pytest.mark.parametrize("kind", KINDS, ids=str)
def test_nodes_of_a_kind_are_what_isinstance_picks_in_the_same_order(kind):
    from mpsready.migrate.source import context
    from mpsready.migrate.transforms.selection import _nodes_in

    for text in _texts():
        ctx = context(text, "x.py", None)
        every = [n for n in ctx.positions if isinstance(n, kind)]
        assert all(isinstance(n, kind) == (type(n) in ctx.classes_of(kind)) for n in ctx.positions)
        if isinstance(kind, type):
            assert list(ctx.of_type(kind)) == every
            assert ctx.of_type(kind) is ctx.of_type(kind)  # listed once per file
        for root in ctx.module.body:
            assert _nodes_in(ctx, root, kind) == [n for n in ctx.index.order if isinstance(n, kind)  # type: ignore[union-attr]
                                                  and (n is root or root in set(ctx.ancestors(n)))]


def _starts_reference(ctx, line, column):
    found = [n for n, (a, b, _, _) in ctx.positions.spans.items() if (a, b) == (line, column - 1)]
    return sorted(found, key=lambda n: -ctx._size(n))


@pytest.mark.parametrize("finding_lines", [(), (1,), (2, 5, 9)])
def test_nodes_at_answers_any_line_whichever_lines_the_findings_name(finding_lines):
    """nodes_at first lists the nodes of the findings' lines only; a line outside them lists every line."""
    from types import SimpleNamespace

    from mpsready.migrate.source import context

    for text in _texts():
        ctx = context(text, "x.py", None)
        ctx.findings = [SimpleNamespace(location=SimpleNamespace(line=n)) for n in finding_lines]  # type: ignore[misc]
        starts = sorted({(a, b + 1) for a, b, _, _ in ctx.positions.spans.values()})
        asked = [s for s in starts if s[0] in finding_lines] + starts + [(10**6, 1)]
        for line, column in asked:
            assert ctx.nodes_at(line, column) == _starts_reference(ctx, line, column)


def test_import_aliases_read_from_the_index_equal_the_visit_of_the_module():
    from mpsready.migrate.interface import FileContext, _import_aliases
    from mpsready.migrate.source import context

    nested = ("import torch as t, os.path\nfrom . import a as b\ndef f():\n    from torch import cuda as t\n"
              "    import numpy as t\nclass C:\n    from .x.y import (z, w as t)\nfrom m import *\n")
    for text in _texts() + [nested]:
        ctx = context(text, "x.py", None)
        visited = _import_aliases(FileContext("x.py", ctx.module))  # no index: libcst's visit
        assert list(_import_aliases(ctx).items()) == list(visited.items())
    assert _import_aliases(context(nested, "x.py", None))["t"] == ".x.y.w"
