"""DEP107 / EXT102 (detected here): a hard import of a CUDA-only module whose file already has a fallback -> a guarded import.

``import fused_gelu_cuda`` at module level fails on a Mac (the extension is never built there, and CUDA
packages have no macOS wheels) even when the same file already falls back when the name is ``None``
(``if fused_gelu_cuda is not None and x.is_cuda: ...``). The import becomes
``try: import X`` / ``except ImportError: X = None``, which is exactly the case that fallback handles.

Rewritten only when both hold: the module is CUDA-only (a DEP107 finding at the import, or a module
name an extension build gives: ``*_cuda``, ``*cuda_ext``, ``*_C`` under a ``cuda`` package part), and
the file tests every name the import binds against ``None``. Anything else stays manual.
"""

from __future__ import annotations

import libcst as cst

from mpsready.findings import Finding
from mpsready.migrate.interface import Edit, FileContext, Manual, Transform
from mpsready.migrate.specs.guarded_import import SPEC


def _cuda_module(name: str) -> bool:
    parts = name.split(".")
    return parts[-1].endswith(("_cuda", "cuda_ext", "_cuda_ext")) or (parts[-1] == "_C" and any("cuda" in p for p in parts))


def _bound(stmt: cst.Import | cst.ImportFrom) -> list[tuple[str, str]] | None:
    """``(bound name, module)`` pairs, or ``None`` for a star import or a dotted ``import a.b``."""
    if isinstance(stmt.names, cst.ImportStar):
        return None
    out = []
    for alias in stmt.names:
        full = cst.helpers.get_full_name_for_node(alias.name) or ""
        bound = cst.helpers.get_full_name_for_node(alias.asname.name) if alias.asname else full
        if isinstance(stmt, cst.Import):
            if "." in full and alias.asname is None:
                return None
            module = full
        else:
            base = cst.helpers.get_full_name_for_node(stmt.module) if stmt.module else ""
            module = f"{base}.{full}" if base else full
        out.append((bound or full, module))
    return out


class _NoneTests(cst.CSTVisitor):
    """``names``: the names compared with ``is None`` / ``is not None``. (A class of the module: one made per call
    is garbage only the cyclic collector frees.)"""

    def __init__(self) -> None:
        super().__init__()
        self.names: set[str] = set()

    def visit_Comparison(self, node: cst.Comparison) -> None:
        if isinstance(node.left, cst.Name) and len(node.comparisons) == 1 \
                and isinstance(node.comparisons[0].operator, (cst.Is, cst.IsNot)) \
                and isinstance(node.comparisons[0].comparator, cst.Name) \
                and node.comparisons[0].comparator.value == "None":
            self.names.add(node.left.value)


def _none_tested(ctx: FileContext) -> set[str]:
    v = _NoneTests()
    ctx.visit(ctx.module, v)
    return v.names


class GuardedImport(Transform):
    codes = SPEC.codes  # what it answers and fixes: specs/guarded_import.py
    detects = True
    words = ("is not None", "is None")

    def wants(self, text: str) -> bool:
        # self-detected only for in-repo extension modules (DEP107 findings reach plan() anyway): a file needs both
        # a None test and a name an extension build gives (the prefilter that keeps migrate near the parse floor)
        return "is" in text and ("is None" in text or "is not None" in text) and (
            "_cuda" in text or "cuda_ext" in text or "_C" in text)

    def plan(self, ctx: FileContext, findings: list[Finding]) -> tuple[list[Edit], list[Manual]]:
        edits: list[Edit] = []
        tested = None
        by_line = {f.location.line: f for f in findings if f.code == "DEP107"}
        for stmt in ctx.module.body:
            if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1
                    and isinstance(stmt.body[0], (cst.Import, cst.ImportFrom))):
                continue
            line = ctx.line_of(stmt)
            bound = _bound(stmt.body[0])
            finding = by_line.get(line)
            if not bound or not (finding or all(_cuda_module(m) for _b, m in bound)):
                continue
            tested = _none_tested(ctx) if tested is None else tested
            if not all(b in tested for b, _m in bound):
                continue
            names = [b for b, _m in bound]

            def rewrite(n: cst.CSTNode, names=names) -> cst.CSTNode:
                assert isinstance(n, cst.SimpleStatementLine)
                fallback = cst.parse_statement("".join(f"{b} = None\n" for b in names) if len(names) == 1
                                               else " = ".join(names) + " = None\n")
                return cst.Try(body=cst.IndentedBlock([n.with_changes(leading_lines=[])]),
                               handlers=[cst.ExceptHandler(body=cst.IndentedBlock([fallback]),
                                                           type=cst.Name("ImportError"))],
                               leading_lines=n.leading_lines)

            edits.append(Edit(stmt, rewrite, finding.code if finding else "EXT102", line,
                              f"import of CUDA-only {', '.join(m for _b, m in bound)} guarded: None when absent, "
                              "which the file's fallback already handles", finding=finding))
        return edits, []
