"""The transform interface: one small class per rule code, one module per transform.

A :class:`Transform` receives one parsed file (:class:`FileContext`) and the scan findings of its
codes in that file, and answers with :class:`Edit` objects (a node of the original tree and a
function that rewrites it) and :class:`Manual` entries (a finding it will not touch, with the reason).
The engine applies every edit of a file in one pass, innermost nodes first, so edits nest.

Adding a rule code: write one module in :mod:`mpsready.migrate.transforms` with a subclass and list
it in ``TRANSFORM_MODULES`` there.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass, field
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TypeVar

import libcst as cst
from libcst.metadata import CodeRange

from mpsready.findings import Finding
from mpsready.migrate.index import IndexState, Positions, walk

N = TypeVar("N", bound=cst.CSTNode)
Rewrite = Callable[..., cst.CSTNode]  # called with the updated node (lambdas bind their values as defaults)


class MigrateError(Exception):
    """A file could not be migrated (it does not parse with libcst); the other files still are."""


@dataclass
class Edit:
    """Rewrite ``node`` (a node of the original tree) with ``rewrite(updated_node)``.

    ``code`` is the rule code the edit answers, ``line`` its 1-based line in the original file,
    ``what`` one sentence for the reviewer. ``finding`` is the scan finding it fixes (``None``: found by the
    transform itself), ``covers`` other findings on the same node it fixes too. ``helper`` is True when the rewritten code calls the
    module-level device helper (:mod:`mpsready.migrate.helper`), which the engine then adds once.
    """

    node: cst.CSTNode
    rewrite: Rewrite
    code: str
    line: int
    what: str
    helper: bool = False
    finding: Finding | None = None  # None: detected by the transform itself (no scan rule locates it)
    covers: tuple[Finding, ...] = ()  # other findings the same edit resolves (another rule's view of the same call)
    review: str | None = None  # how the edit changes what a Mac runs where the original already ran there
    needs_torch: str | None = None  # with ``review``: first PyTorch release where what it turns on works on MPS

    def resolves(self) -> list[Finding]:
        """The scan findings this edit fixes: ``finding`` and ``covers``."""
        return ([self.finding] if self.finding is not None else []) + list(self.covers)


@dataclass(frozen=True)
class Manual:
    """A finding left for a person, with the reason the tool does not fix it."""

    code: str
    line: int | None
    reason: str
    finding: Finding | None = None
    kept: bool = False  # nothing to do (already behind a CUDA check): reported apart from the manual work


@dataclass
class FileContext:
    """One file as the transforms see it.

    ``module`` is the libcst tree, ``positions`` and ``parents`` every node's range (as libcst's
    ``PositionProvider`` gives it) and parent (:mod:`mpsready.migrate.index`), ``torch_floor`` the lowest PyTorch
    version the project allows (``None``:
    not declared), ``path`` the file's path relative to the scan root.
    """

    path: str
    module: cst.Module
    torch_floor: tuple[int, int] | None = None
    positions: Mapping[cst.CSTNode, CodeRange] = field(default_factory=dict)
    parents: dict[cst.CSTNode, cst.CSTNode] = field(default_factory=dict)
    qualified: dict[str, str] | None = None  # local name -> what the file's imports bind it to
    # the places ("train.py:4") where the project selects its device itself (its API104 findings): code that
    # cannot see that choice must not make an independent one (mpsready.migrate.device_source)
    selections: tuple[str, ...] = ()
    findings: list[Finding] = field(default_factory=list)  # every scan finding of this file, all codes
    # device names the selection transform binds: (scope node, name, first line where it is bound)
    introduced: list[tuple[cst.CSTNode, str, int]] = field(default_factory=list)
    _starts: dict[tuple[int, int], list[cst.CSTNode]] = field(default_factory=dict, repr=False)
    # the lines ``_starts`` covers (``None``: every line); ``_starts`` is not built while ``_started`` is False
    _start_lines: set[int] | None = field(default=None, repr=False)
    _started: bool = field(default=False, repr=False)
    memo: dict = field(default_factory=dict, repr=False)  # per-file results an analysis repeats per finding
    index: IndexState | None = field(default=None, repr=False)  # the node order that :meth:`visit` walks

    def visit(self, root: cst.CSTNode, visitor: cst.CSTVisitor) -> None:
        """``root.visit(visitor)`` for a read-only visitor, walking the file's index (no rebuild of each node:
        :func:`mpsready.migrate.index.walk`)."""
        if self.index is None:
            root.visit(visitor)
        else:
            walk(self.index, root, visitor)

    @property
    def accelerator_api(self) -> bool:
        """Whether the project's PyTorch floor has ``torch.accelerator`` with ``is_available`` and
        ``current_accelerator`` (added in PyTorch 2.6: https://pytorch.org/docs/2.6/accelerator.html)."""
        return self.torch_floor is not None and self.torch_floor >= (2, 6)

    def of_type(self, kind: type[N]) -> Sequence[N]:
        """The nodes of ``positions`` that are instances of ``kind``, in its order (what ``[n for n in
        ctx.positions if isinstance(n, kind)]`` gives), listed once per file and kind: several transforms look for
        every call, and ``isinstance`` against libcst's node classes goes through ``ABCMeta.__instancecheck__``, so
        the classes of the file's nodes are each tested once and the nodes sorted by class in one pass."""
        key = ("of_type", kind)
        found = self.memo.get(key)
        if found is None:
            classes = self.classes_of(kind)
            if len(classes) <= 1:
                found = tuple(self._by_class()[next(iter(classes))]) if classes else ()
            else:
                found = tuple(n for n in self.positions if type(n) in classes)
            self.memo[key] = found
        return found

    def classes_of(self, kind: type | tuple[type, ...]) -> frozenset[type]:
        """The classes of the file's nodes that are subclasses of ``kind`` (a class or a tuple, as
        ``isinstance`` takes): ``type(n) in ctx.classes_of(kind)`` is ``isinstance(n, kind)`` for a node ``n`` of
        the file, without ``ABCMeta.__instancecheck__``."""
        key = ("classes", kind)
        classes = self.memo.get(key)
        if classes is None:
            classes = self.memo[key] = frozenset(c for c in self._by_class() if issubclass(c, kind))
        return classes

    def _by_class(self) -> dict[type, list[cst.CSTNode]]:
        """The nodes of ``positions`` by class, each list in ``positions``' order (once per file)."""
        by_class = self.memo.get("by_class")
        if by_class is None:
            by_class = self.memo["by_class"] = {}
            for n in self.positions:
                group = by_class.get(type(n))
                if group is None:
                    by_class[type(n)] = [n]
                else:
                    group.append(n)
        return by_class

    def nodes_at(self, line: int, column: int) -> list[cst.CSTNode]:
        """Nodes starting at a 1-based ``line`` and 1-based ``column`` (the scan's convention), outermost first."""
        if not self._started or (self._start_lines is not None and line not in self._start_lines):
            self._list_starts(line)
        return sorted(self._starts.get((line, column - 1), ()), key=lambda n: -self._size(n))

    def _list_starts(self, line: int) -> None:
        """``_starts`` of the lines of the file's findings and ``line`` at first (the lines the transforms look up:
        a test per node instead of a list entry per node), of every line when a later call asks another line;
        each list in ``positions``' order either way."""
        starts: dict[tuple[int, int], list[cst.CSTNode]] = {}
        if self._started:
            self._start_lines = None
            for n, (a, b, _, _) in self._spans().items():
                starts.setdefault((a, b), []).append(n)
        else:
            lines = self._start_lines = {f.location.line or 0 for f in self.findings} | {line}
            for n, span in self._spans().items():
                if span[0] in lines:
                    starts.setdefault(span[:2], []).append(n)  # type: ignore[arg-type]  # a 2-tuple
        self._starts, self._started = starts, True

    def _spans(self) -> Mapping[cst.CSTNode, tuple[int, int, int, int]]:
        if isinstance(self.positions, Positions):
            return self.positions.spans
        return {n: (r.start.line, r.start.column, r.end.line, r.end.column) for n, r in self.positions.items()}

    def nodes_of(self, f: Finding) -> list[cst.CSTNode]:
        """:meth:`nodes_at` the finding's line and column (its location; line 0 when it has none)."""
        return self.nodes_at(f.location.line or 0, f.location.column or 0)

    def _size(self, node: cst.CSTNode) -> int:
        a, b, c, d = self._spans()[node]
        return (c - a) * 100000 + (d - b)

    def line_of(self, node: cst.CSTNode) -> int:
        """The 1-based line where ``node`` starts."""
        return self._spans()[node][0]

    def names(self, node: cst.CSTNode) -> set[str]:
        """Qualified names of a Name/Attribute (``torch.cuda.synchronize``), resolved through the file's imports:
        the dotted name with its first part replaced by what an import binds it to (``nn.Linear`` ->
        ``torch.nn.Linear`` after ``import torch.nn as nn``). Local shadowing is not followed, as in the scan's alias
        map; libcst's scope analysis (``QualifiedNameProvider``) gave the same answers on the fixtures at several
        times the cost of the whole parse."""
        if self.qualified is None:
            self.qualified = _import_aliases(self)
        dotted = cst.helpers.get_full_name_for_node(node) if isinstance(node, (cst.Name, cst.Attribute)) else None
        if not dotted:
            return set()
        head, dot, rest = dotted.partition(".")
        base = self.qualified.get(head)
        return {f"{base}{dot}{rest}" if base else dotted}

    def ancestors(self, node: cst.CSTNode) -> Iterable[cst.CSTNode]:
        while node in self.parents:
            node = self.parents[node]
            yield node


class _ImportAliases(cst.CSTVisitor):
    """``out``: ``{local name: dotted module or object}`` of the import statements visited. (A class of the module:
    one made per call is garbage only the cyclic collector frees, keeping what it saw alive until then.)"""

    def __init__(self) -> None:
        super().__init__()
        self.out: dict[str, str] = {}

    def visit_Import(self, node: cst.Import) -> None:
        for alias in node.names:
            full = cst.helpers.get_full_name_for_node(alias.name) or ""
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                self.out[alias.asname.name.value] = full
            else:
                self.out.setdefault(full.split(".")[0], full.split(".")[0])

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if isinstance(node.names, cst.ImportStar):
            return
        base = cst.helpers.get_full_name_for_node(node.module) if node.module is not None else ""
        base = "." * len(node.relative) + (base or "")
        for alias in node.names:
            name = cst.helpers.get_full_name_for_node(alias.name) or ""
            asname = alias.asname.name if alias.asname is not None else None
            local = asname.value if isinstance(asname, cst.Name) else name
            self.out[local] = f"{base}.{name}" if base and not base.endswith(".") else f"{base}{name}"


def _import_aliases(ctx: FileContext) -> dict[str, str]:
    """``{local name: dotted module or object}`` for every import statement of ``module``, at any depth."""
    v = _ImportAliases()
    if ctx.index is None:
        ctx.visit(ctx.module, v)
        return v.out
    # the visit of the whole module, without a call per node: import statements do not nest, so the visitor
    # meets them in the index's order, and its methods skip no subtree
    for node in ctx.index.order:
        if type(node) is cst.Import:
            v.visit_Import(node)  # type: ignore[arg-type]
        elif type(node) is cst.ImportFrom:
            v.visit_ImportFrom(node)  # type: ignore[arg-type]
    return v.out


class Transform(abc.ABC):
    """Turns the findings of ``codes`` in one file into edits and manual entries.

    ``detects`` is True for a transform that also finds its own targets (where the scan has no rule
    that locates them); it is then called on files without findings of its codes too.
    """

    codes: tuple[str, ...] = ()
    detects: bool = False
    words: tuple[str, ...] = ()  # for a detecting transform: a file without any of these words is not parsed

    def wants(self, text: str) -> bool:
        """Whether a file without findings of ``codes`` is worth parsing for this (detecting) transform."""
        return self.detects and any(w in text for w in self.words)

    @abc.abstractmethod
    def plan(self, ctx: FileContext, findings: list[Finding]) -> tuple[list[Edit], list[Manual]]:
        """Edits and manual entries for ``findings`` (all of this transform's codes, in this file)."""


def manual(f: Finding, reason: str, line: int | None = None) -> Manual:
    return Manual(f.code, line if line is not None else f.location.line, reason, f)


def kept(f: Finding, reason: str) -> Manual:
    return Manual(f.code, f.location.line, reason, f, kept=True)
