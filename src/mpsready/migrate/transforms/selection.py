"""API104: cuda-if-available-else-cpu -> CUDA, then MPS, then the CPU.

* ``X if <cuda test> else Y`` (Y naming ``"cpu"``) -> ``X if <cuda test> else Y' if torch.backends.mps.is_available() else Y``
  where Y' is Y with ``"cpu"`` replaced by ``"mps"``; so ``torch.device("cuda" if ... else "cpu")`` and
  ``torch.device("cuda") if ... else torch.device("cpu")`` both keep their shape and type.
* With a PyTorch floor of 2.6 or newer and the plain test ``torch.cuda.is_available()``, the whole
  choice becomes ``torch.accelerator.current_accelerator() if torch.accelerator.is_available() else
  torch.device("cpu")`` (``.type`` for a string; PyTorch 2.6 torch/accelerator/__init__.py).
* ``if <cuda test>: d = X`` / ``else: d = Y`` -> an ``elif torch.backends.mps.is_available(): d = Y'`` branch.

CUDA keeps priority and its exact test (``and not args.no_cuda`` stays), so a CUDA machine chooses as before.
"""

from __future__ import annotations

import libcst as cst

from mpsready.findings import Finding
from mpsready.migrate.common import MPS_AVAILABLE, expr, quote_like, string_value
from mpsready.migrate.interface import Edit, FileContext, Manual, Transform, manual


class _CpuToMps(cst.CSTTransformer):
    def __init__(self) -> None:
        self.replaced = 0

    def leave_SimpleString(self, original_node, updated_node):  # type: ignore[override]
        if string_value(updated_node) == "cpu":
            self.replaced += 1
            return quote_like(updated_node, "mps")
        return updated_node


def mps_variant(node: cst.BaseExpression) -> cst.BaseExpression | None:
    """``node`` with its ``"cpu"`` literal turned into ``"mps"``; ``None`` when it has none (or several)."""
    t = _CpuToMps()
    out = node.visit(t)
    return out if t.replaced == 1 else None  # type: ignore[return-value]


def _plain_cuda_test(ctx: FileContext, test: cst.BaseExpression) -> bool:
    return isinstance(test, cst.Call) and not test.args and "torch.cuda.is_available" in ctx.names(test.func)


def _is_str(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.SimpleString)


class Selection(Transform):
    codes = ("API104",)

    def plan(self, ctx: FileContext, findings: list[Finding]) -> tuple[list[Edit], list[Manual]]:
        edits: list[Edit] = []
        manuals: list[Manual] = []
        for f in findings:
            nodes = ctx.nodes_of(f)
            node = next((n for n in nodes if isinstance(n, (cst.IfExp, cst.If))), None)
            if isinstance(node, cst.IfExp):
                edit = self._ifexp(ctx, f, node)
            elif isinstance(node, cst.If):
                edit = self._if(ctx, f, node)
            else:
                edit = "the device selection was not found at this position"
            if isinstance(edit, Edit):
                edits.append(edit)
            else:
                manuals.append(manual(f, edit))
        return edits, manuals

    def _ifexp(self, ctx: FileContext, f: Finding, node: cst.IfExp) -> Edit | str:
        if ctx.accelerator_api and _plain_cuda_test(ctx, node.test) and mps_variant(node.orelse) is not None:
            as_str = _is_str(node.body)
            acc = "torch.accelerator.current_accelerator()" + (".type" if as_str else "")
            cpu = cst.Module([]).code_for_node(node.orelse)
            new = expr(f"{acc} if torch.accelerator.is_available() else {cpu}")
            return Edit(node, lambda n: new.with_changes(lpar=n.lpar, rpar=n.rpar), f.code, ctx.line_of(node),
                        "cuda-or-cpu -> torch.accelerator (CUDA, MPS or another accelerator), else the CPU", finding=f)
        mps = mps_variant(node.orelse)
        if mps is None:
            return "the CPU side of the selection names 'cpu' indirectly; add an MPS branch by hand"

        def rewrite(n: cst.CSTNode) -> cst.CSTNode:
            assert isinstance(n, cst.IfExp)
            return n.with_changes(orelse=cst.IfExp(test=expr(MPS_AVAILABLE), body=mps, orelse=n.orelse,
                                                   whitespace_before_if=cst.SimpleWhitespace(" "),
                                                   whitespace_after_if=cst.SimpleWhitespace(" "),
                                                   whitespace_before_else=cst.SimpleWhitespace(" "),
                                                   whitespace_after_else=cst.SimpleWhitespace(" ")))

        return Edit(node, rewrite, f.code, ctx.line_of(node), "cuda-or-cpu -> cuda, else mps, else cpu", finding=f)

    def _if(self, ctx: FileContext, f: Finding, node: cst.If) -> Edit | str:
        if not isinstance(node.orelse, cst.Else) or not isinstance(node.orelse.body, cst.IndentedBlock):
            return "an if/elif chain: add the MPS branch by hand"
        stmts = node.orelse.body.body
        if len(stmts) != 1 or not isinstance(stmts[0], cst.SimpleStatementLine):
            return "the else branch does more than one assignment"
        mps_stmt = mps_variant(stmts[0])  # type: ignore[arg-type]
        if mps_stmt is None:
            return "the else branch names 'cpu' indirectly; add an MPS branch by hand"

        def rewrite(n: cst.CSTNode) -> cst.CSTNode:
            assert isinstance(n, cst.If) and isinstance(n.orelse, cst.Else)
            elif_ = cst.If(test=expr(MPS_AVAILABLE), body=cst.IndentedBlock([mps_stmt.with_changes(leading_lines=[])]),
                           orelse=n.orelse)
            return n.with_changes(orelse=elif_)

        return Edit(node, rewrite, f.code, ctx.line_of(node), "if cuda / else cpu -> elif torch.backends.mps.is_available()",
                    finding=f)
