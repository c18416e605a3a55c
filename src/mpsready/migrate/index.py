"""One traversal of a parsed file: every node's position and parent, in libcst's own order, at codegen cost.

The transforms need each node's position (to find the scan's findings in the tree and to report lines) and
its parent (to climb to the statement or the call around a node). libcst's ``PositionProvider`` computes
the positions with a code generation pass whose per-token regular expression, generator context managers
and ``CodeRange`` objects cost about 6 times the pass itself (measured on the synthetic tree of
``benchmarks/migrate_bench.py``: 6.5 s against 1.0 s of plain ``Module.code`` for 200 files), and
``ParentNodeProvider`` rebuilds every node on the way. :func:`index` runs libcst's code generation once
with a :class:`IndexState` that records the same ranges (syntactic where the node records one, whitespace
inclusive otherwise: exactly ``PositionProvider``'s rule, in the same insertion order) and each node's
parent, as plain tuples; :class:`Positions` turns a tuple into libcst's ``CodeRange`` only when asked.
``tests/migrate/test_index.py`` checks the result equals both providers on the fixtures and a synthetic tree.

A tree deeper than :data:`MAX_DEPTH` nodes raises ``RecursionError`` here, as ``PositionProvider`` did
from about that depth at Python's default recursion limit (measured with libcst 1.9: 140 nested lists,
depth 284; 140 nested calls, depth 283), so the same hostile files are listed as too deep, whatever the
caller's recursion limit, and the recursive libcst passes that follow (the rewrite, code generation) stay
well inside it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from types import TracebackType

import libcst as cst
from libcst.metadata import CodePosition, CodeRange
from libcst._nodes.internal import CodegenState  # noqa: PLC2701 - the documented hook code generation calls

MAX_DEPTH = 280
Span = tuple[int, int, int, int]  # start line (1-based), start column (0-based), end line, end column

_BODIES = {cst.Module, cst.IndentedBlock}
# what libcst's position provider splits tokens on (libcst/metadata/position_provider.py NEWLINE_RE)
_NEWLINE = re.compile(r"\r\n?|\n")


class IndexState(CodegenState):
    """A code generation state that tracks the line and column of every token, the span of every node,
    every node's parent and the nodes in order, each subtree a slice of it (libcst calls
    ``before_codegen``/``after_codegen`` around each node)."""

    def __init__(self, module: cst.Module) -> None:
        super().__init__(default_indent=module.default_indent, default_newline=module.default_newline)
        self.line, self.column = 1, 0
        self.spans: dict[cst.CSTNode, Span] = {}
        self.parents: dict[cst.CSTNode, cst.CSTNode] = {}
        self.order: list[cst.CSTNode] = []  # every node, in the order libcst's visitors meet them
        self.at: dict[cst.CSTNode, int] = {}  # a node's place in ``order``
        self.ends: list[int] = []  # per place in ``order``: the place after that node's last descendant
        # the tokens each child of a module or an indented block wrote (its statements: whole lines each), so
        # the new text can keep the tokens of every statement no edit touched (mpsready.migrate.splice)
        self.extents: dict[cst.CSTNode, tuple[int, int]] = {}
        # the nodes whose syntactic part is being written, innermost last, each with the nodes its range starts and
        # ends with and where it starts (see record_syntactic_position)
        self._syntactic: list[tuple[cst.CSTNode, cst.CSTNode | None, cst.CSTNode | None, int, int]] = []
        # the open nodes, outermost first, each with the line, column, token and place where it starts
        self._open: list[tuple[cst.CSTNode, int, int, int, int]] = []

    def add_indent_tokens(self) -> None:
        for token in self.indent_tokens:
            self.add_token(token)

    def add_token(self, value: str) -> None:
        self.tokens.append(value)
        if "\n" in value or "\r" in value:
            parts = _NEWLINE.split(value)
            self.line += len(parts) - 1
            self.column = len(parts[-1])
        else:
            self.column += len(value)

    # Both hooks run once per node of the file (the index's whole cost beyond code generation): a node is hashed
    # by a Python-level __hash__ in libcst, so each keeps to one dict write per table it fills, and one stack holds
    # each open node with where it starts.
    def before_codegen(self, node: cst.CSTNode) -> None:
        stack = self._open
        if stack:
            if len(stack) >= MAX_DEPTH:
                raise RecursionError(f"syntax tree deeper than {MAX_DEPTH} nodes")
            self.parents[node] = stack[-1][0]
        order = self.order
        place = len(order)
        stack.append((node, self.line, self.column, len(self.tokens), place))
        self.at[node] = place
        order.append(node)
        self.ends.append(0)

    def after_codegen(self, node: cst.CSTNode) -> None:
        stack = self._open
        _, line, column, token, place = stack.pop()
        self.ends[place] = len(self.order)
        if not stack or type(stack[-1][0]) in _BODIES:
            self.extents[node] = (token, len(self.tokens))
        # no syntactic range recorded: the whitespace-inclusive one, as libcst
        self.spans.setdefault(node, (line, column, self.line, self.column))

    # The context manager libcst's nodes enter around their syntactic part is the state itself, reused at every
    # depth: libcst enters it at once (every call is a ``with`` statement), so record_syntactic_position pushes the
    # node and where its syntactic part starts, and __exit__ pops them and records the range. (A separate manager
    # holding the state made a reference cycle: each file's tree then waited for the cyclic collector.)
    def record_syntactic_position(  # type: ignore[override]  # a context manager as libcst's, without a generator
            self, node: cst.CSTNode, *, start_node: cst.CSTNode | None = None,
            end_node: cst.CSTNode | None = None) -> IndexState:
        self._syntactic.append((node, start_node, end_node, self.line, self.column))
        return self

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        node, start_node, end_node, line, column = self._syntactic.pop()
        spans = self.spans
        start = spans[start_node][:2] if start_node is not None else (line, column)
        end = spans[end_node][2:] if end_node is not None else (self.line, self.column)
        spans[node] = start + end


class Positions(Mapping[cst.CSTNode, CodeRange]):
    """``{node: CodeRange}`` as ``PositionProvider`` gives it (same keys, same order), built from spans."""

    def __init__(self, spans: dict[cst.CSTNode, Span]) -> None:
        self.spans = spans

    def __getitem__(self, node: cst.CSTNode) -> CodeRange:
        a, b, c, d = self.spans[node]
        return CodeRange(CodePosition(a, b), CodePosition(c, d))

    def __iter__(self) -> Iterator[cst.CSTNode]:
        return iter(self.spans)

    def __len__(self) -> int:
        return len(self.spans)

    def __contains__(self, node: object) -> bool:
        return node in self.spans


def index(module: cst.Module) -> IndexState:
    """Spans and parents of every node of ``module`` (one code generation pass; raises ``RecursionError``
    on a tree nested too deeply for it, as libcst's own passes do)."""
    state = IndexState(module)
    module._codegen(state)
    return state


def walk(state: IndexState, root: cst.CSTNode, visitor: cst.CSTVisitor) -> None:
    """``root.visit(visitor)`` for a read-only visitor (``visit_*`` methods only, no ``leave_*``) over a node of
    the indexed tree: the same nodes in the same order (code generation order: in a few nodes, ``import a as b``,
    it meets a whitespace or comment node before a sibling libcst's visitor visits first; the other nodes keep
    libcst's order: tests/migrate/test_index.py on the fixtures, and 512 files of torch/nn, torch/optim and the
    benchmark's tree by hand), a subtree skipped where ``visit_*`` returns False, without
    libcst's rebuild of every node on the way (its visitors reconstruct each node they pass). A node that is
    not in the index (built by a transform) is visited by libcst."""
    i = state.at.get(root)
    if i is None:
        root.visit(visitor)
        return
    order, ends = state.order, state.ends
    end = ends[i]
    while i < end:
        i = i + 1 if visitor.on_visit(order[i]) else ends[i]
