"""API115: ``"cuda" if "cuda" in device else "cpu"`` -> ``torch.device(device).type``.

The string test sends an ``"mps"`` device down the CPU path (autocast, pin_memory, dtype choices);
``torch.device(s).type`` is ``"cuda"``, ``"mps"`` or ``"cpu"`` for every valid device string (PyTorch
2.13.0 c10/core/Device.cpp parses ``type[:index]``). Tests of the forms ``"cuda" in s``,
``s == "cuda"`` and ``s.startswith("cuda")`` are rewritten; anything else is manual.
"""

from __future__ import annotations

import libcst as cst

from mpsready.findings import Finding
from mpsready.migrate.common import string_value
from mpsready.migrate.interface import Edit, FileContext, Manual, Transform, manual


def _subject(test: cst.BaseExpression) -> cst.BaseExpression | None:
    """The device string tested against ``"cuda"``, or ``None``."""
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        op = test.comparisons[0].operator
        left, right = test.left, test.comparisons[0].comparator
        if isinstance(op, cst.In) and string_value(left) == "cuda":
            return right
        if isinstance(op, cst.Equal):
            if string_value(left) == "cuda":
                return right
            if string_value(right) == "cuda":
                return left
    if isinstance(test, cst.Call) and isinstance(test.func, cst.Attribute) and test.func.attr.value == "startswith" \
            and len(test.args) == 1 and string_value(test.args[0].value) == "cuda":
        return test.func.value
    return None


class DeviceStringTest(Transform):
    codes = ("API115",)

    def plan(self, ctx: FileContext, findings: list[Finding]) -> tuple[list[Edit], list[Manual]]:
        edits: list[Edit] = []
        manuals: list[Manual] = []
        for f in findings:
            node = next((n for n in ctx.nodes_at(f.location.line or 0, f.location.column or 0)
                         if isinstance(n, cst.IfExp)), None)
            subject = _subject(node.test) if node is not None else None
            if node is None or subject is None or string_value(node.body) != "cuda" or string_value(node.orelse) != "cpu":
                manuals.append(manual(f, "the test has an unusual shape; derive the type with torch.device(...).type"))
                continue

            def rewrite(n: cst.CSTNode, subject=subject) -> cst.CSTNode:
                assert isinstance(n, cst.IfExp)
                call = cst.Call(cst.Attribute(cst.Name("torch"), cst.Name("device")), [cst.Arg(subject)])
                return cst.Attribute(call, cst.Name("type"), lpar=n.lpar, rpar=n.rpar)

            edits.append(Edit(node, rewrite, f.code, ctx.line_of(node), "'cuda'-string test -> torch.device(...).type",
                              finding=f))
        return edits, manuals
