"""Migrate one Python source text: parse with libcst, ask each transform, apply the edits in one pass.

The rewrite happens on libcst's concrete syntax tree, so everything the transforms do not touch
(formatting, comments, blank lines, quotes) comes back byte for byte.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field

import libcst as cst

from mpsready.findings import Finding
from mpsready.migrate.guard import check_nesting, on_big_stack
from mpsready.migrate.helper import add_requirements
from mpsready.migrate.index import Positions, index
from mpsready.migrate.interface import Edit, FileContext, Manual, MigrateError, Transform
from mpsready.migrate.splice import spliced, topmost, unit


TOO_DEEP = "{path}: nested too deeply for libcst (RecursionError); left as it is"


@dataclass
class SourceResult:
    """The new text of one source, the edits made (in line order) and the findings left for a person."""

    text: str
    edits: list[Edit] = field(default_factory=list)
    manual: list[Manual] = field(default_factory=list)
    needs_helper: bool = False


def context(text: str, path: str, torch_floor: tuple[int, int] | None) -> FileContext:
    """Parse ``text`` and index it (positions and parents in one pass, :mod:`mpsready.migrate.index`); raises
    :class:`MigrateError` when libcst cannot parse it, or when it is nested too deeply to parse safely
    (:mod:`mpsready.migrate.guard`)."""
    check_nesting(text, path)
    try:
        module = on_big_stack(lambda: cst.parse_module(text))
    except cst.ParserSyntaxError as exc:
        raise MigrateError(f"{path}: libcst cannot parse it ({str(exc).splitlines()[0]})") from None
    try:
        state = index(module)
    except RecursionError:
        raise MigrateError(TOO_DEEP.format(path=path)) from None
    return FileContext(path, module, torch_floor, Positions(state.spans), state.parents, index=state)


def migrate_source(text: str, path: str, findings: list[Finding], transforms: list[Transform], *,
                   torch_floor: tuple[int, int] | None = None, add_helper: bool = True,
                   selections: tuple[str, ...] = (), time_limit: float | None = None,
                   clock: Callable[[], float] = time.monotonic) -> SourceResult:
    """Apply ``transforms`` to ``text`` for ``findings`` (this file's, any codes). ``add_helper=False`` leaves
    the device helper and ``import torch`` out even when an edit needs them (a notebook adds them once, to its
    first code cell). ``selections``: where the project selects its device itself (see
    :attr:`FileContext.selections`).
    ``time_limit``: seconds the planning may take, checked after the parse and after each transform
    (``clock`` returns seconds; tests pass a fake one).
    Raises :class:`MigrateError` when the text does not parse, is nested too deeply for libcst's
    recursion (at any step: parse, transforms, code generation), or passes ``time_limit``."""
    deadline = None if time_limit is None else clock() + time_limit

    def in_time() -> None:
        if deadline is not None and clock() > deadline:
            raise MigrateError(f"{path}: planning took longer than {time_limit:g} s (the per-file limit); left as it is")

    try:
        return _migrate(text, path, findings, transforms, torch_floor, add_helper, selections, in_time)
    except RecursionError:
        raise MigrateError(TOO_DEEP.format(path=path)) from None


class _Apply(cst.CSTTransformer):
    """Every edit, innermost first, in one pass over the edited nodes and their ancestors. A class of the module,
    not of :func:`_migrate`: a class made per call is garbage only the cyclic collector frees, and it would keep
    the file's whole tree alive until then (issue 25: the collector's passes over those trees cost about a fifth
    of migrate on the benchmark's synthetic tree)."""

    def __init__(self, by_node: dict[cst.CSTNode, list[Edit]], on_path: set[cst.CSTNode],
                 tops: set[cst.CSTNode] | None, top_level: set[cst.CSTNode]) -> None:
        super().__init__()
        self.by_node, self.on_path, self.tops, self.top_level = by_node, on_path, tops, top_level
        self.rewritten: dict[cst.CSTNode, object] = {}  # what each topmost edited statement became
        self.rebuilt: list[tuple[cst.CSTNode, cst.CSTNode]] = []  # (new, old) top-level statements holding one

    def on_visit(self, node):  # type: ignore[override]
        return node in self.on_path  # a subtree without edits is kept as it is, not rebuilt

    def on_leave(self, original_node, updated_node):  # type: ignore[override]
        for e in self.by_node.get(original_node, ()):
            updated_node = e.rewrite(updated_node)
        if self.tops is not None and original_node in self.tops:
            self.rewritten[original_node] = updated_node
        elif updated_node is not original_node and original_node in self.top_level:
            self.rebuilt.append((updated_node, original_node))
        return updated_node


def _migrate(text: str, path: str, findings: list[Finding], transforms: list[Transform],
             torch_floor: tuple[int, int] | None, add_helper: bool, selections: tuple[str, ...],
             in_time: Callable[[], None]) -> SourceResult:
    ctx = context(text, path, torch_floor)
    in_time()
    ctx.selections, ctx.findings = selections, list(findings)
    edits: list[Edit] = []
    manual: list[Manual] = []
    for t in transforms:
        mine = [f for f in findings if f.code in t.codes]
        if not mine and not t.wants(text):
            continue
        planned, left = t.plan(ctx, mine)
        edits += planned
        manual += left
        in_time()
    if not edits:
        return SourceResult(text, [], manual)
    by_node: dict[cst.CSTNode, list[Edit]] = defaultdict(list)
    on_path: set[cst.CSTNode] = set()  # the edited nodes and their ancestors: the only subtrees visited
    for e in edits:
        by_node[e.node].append(e)
        on_path.add(e.node)
        on_path.update(ctx.ancestors(e.node))
    state = ctx.index
    units = [unit(e.node, state) for e in edits] if state is not None else [None]
    found = [u for u in units if u is not None]
    # an edit outside any statement: the whole code, as before
    tops = topmost(found, state) if state is not None and len(found) == len(units) else None
    apply = _Apply(by_node, on_path, tops, set(ctx.module.body))
    module = ctx.module.visit(apply)
    rewritten, rebuilt = apply.rewritten, apply.rebuilt
    needs_helper = any(e.helper for e in edits)
    if add_helper:
        module = add_requirements(module, helper=needs_helper, torch=True, accelerator=ctx.accelerator_api)
    edits.sort(key=lambda e: (e.line, e.code))
    new = spliced(module, ctx.module, state, rewritten, rebuilt) if tops is not None and state is not None else None
    return SourceResult(module.code if new is None else new, edits, manual, needs_helper)
