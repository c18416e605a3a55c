"""API115 (detected here): a fallback keyed on ``device.type == "cpu"`` -> keyed on "not CUDA".

``if x.device.type == "cpu": <pure PyTorch path> else: <CUDA kernel>`` sends an MPS tensor down the CUDA
kernel path, which fails on a Mac; ``!= "cuda"`` sends it to the portable path, and on CUDA and the CPU
the choice is the same as before. Only tests of a ``.type`` attribute against ``"cpu"`` are rewritten,
and only when the branch taken off the CPU (the ``else``, or the statements after an early ``return``)
calls something CUDA-only: a name with ``cuda``/``triton`` in it, an extension module (``_C``, ``*_ext``,
``*_cuda``) or ``.cuda()``. No scan rule reports this shape yet (the scan's API115 covers the string test),
so the transform finds it itself and reports it under API115, the rule for a device type that misroutes MPS.
"""

from __future__ import annotations

import libcst as cst

from mpsready.findings import Finding
from mpsready.migrate.common import quote_like, string_value
from mpsready.migrate.interface import Edit, FileContext, Manual, Transform


def _type_test(test: cst.BaseExpression) -> tuple[cst.Comparison, bool] | None:
    """(comparison, is_equal) for ``<...>.type == "cpu"`` / ``!= "cpu"``."""
    if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1):
        return None
    op = test.comparisons[0].operator
    left, right = test.left, test.comparisons[0].comparator
    if isinstance(left, cst.Attribute) and left.attr.value == "type" and string_value(right) == "cpu" \
            and isinstance(op, (cst.Equal, cst.NotEqual)):
        return test, isinstance(op, cst.Equal)
    return None


def _cuda_only_name(name: str) -> bool:
    for part in name.split("."):
        low = part.lower()
        if "cuda" in low or "triton" in low or part == "_C" or low.endswith(("_ext", "_cuda")) or low.startswith("cupy"):
            return True
    return False


def _calls_cuda_only(nodes: list[cst.CSTNode]) -> bool:
    found = []

    class V(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            name = cst.helpers.get_full_name_for_node(node.func) or ""
            if _cuda_only_name(name):
                found.append(node)

    for n in nodes:
        n.visit(V())
    return bool(found)


def _returns(block: cst.BaseSuite) -> bool:
    body = block.body if isinstance(block, cst.IndentedBlock) else []
    last = body[-1] if body else None
    return isinstance(last, cst.SimpleStatementLine) and any(isinstance(s, (cst.Return, cst.Raise)) for s in last.body)


class CpuKeyedFallback(Transform):
    codes = ("API115",)
    detects = True
    words = ("cpu",)

    def wants(self, text: str) -> bool:
        return "cpu" in text and ".type" in text
    def plan(self, ctx: FileContext, findings: list[Finding]) -> tuple[list[Edit], list[Manual]]:
        edits: list[Edit] = []
        for node in list(ctx.positions):
            if not isinstance(node, cst.If):
                continue
            found = _type_test(node.test)
            if found is None:
                continue
            test, is_equal = found
            off_cpu = self._off_cpu_branch(ctx, node, is_equal)
            if not off_cpu or not _calls_cuda_only(off_cpu):
                continue

            def rewrite(n: cst.CSTNode, is_equal=is_equal) -> cst.CSTNode:
                assert isinstance(n, cst.Comparison)
                comp = n.comparisons[0]
                lit = comp.comparator
                assert isinstance(lit, cst.SimpleString)
                op = (cst.NotEqual(whitespace_before=comp.operator.whitespace_before,
                                   whitespace_after=comp.operator.whitespace_after) if is_equal
                      else cst.Equal(whitespace_before=comp.operator.whitespace_before,
                                     whitespace_after=comp.operator.whitespace_after))
                return n.with_changes(comparisons=[comp.with_changes(operator=op, comparator=quote_like(lit, "cuda"))])

            what = ("fallback keyed on .type == 'cpu' -> .type != 'cuda'" if is_equal
                    else "CUDA path keyed on .type != 'cpu' -> .type == 'cuda'")
            edits.append(Edit(test, rewrite, "API115", ctx.line_of(node), what))
        return edits, []

    def _off_cpu_branch(self, ctx: FileContext, node: cst.If, is_equal: bool) -> list[cst.CSTNode]:
        if not is_equal:
            return [node.body]
        if isinstance(node.orelse, cst.Else):
            return [node.orelse.body]
        if node.orelse is None and _returns(node.body):
            block = ctx.parents.get(node)
            if isinstance(block, (cst.IndentedBlock, cst.Module)):
                body = list(block.body)
                return body[body.index(node) + 1:]
        return []
