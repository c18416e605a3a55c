"""API102 (detected here too): ``torch.set_default_tensor_type(torch.cuda.FloatTensor)`` -> ``torch.set_default_device(...)``.

``set_default_tensor_type`` is deprecated since PyTorch 2.1 in favour of ``torch.set_default_dtype`` and
``torch.set_default_device`` (PyTorch 2.13.0 torch/__init__.py); the float32 default dtype is already
the default, so only the device remains. Both the class form and the string form
(``"torch.cuda.FloatTensor"``, which no scan rule locates) are rewritten; other legacy CUDA tensor
types change the dtype too and are manual.
"""

from __future__ import annotations

import libcst as cst

from mpsready.findings import Finding
from mpsready.migrate.common import device_in_scope, expr, helper_call, string_value
from mpsready.migrate.interface import Edit, FileContext, Manual, Transform


class DefaultTensorType(Transform):
    codes = ("API102",)
    detects = True
    words = ("set_default_tensor_type",)

    def plan(self, ctx: FileContext, findings: list[Finding]) -> tuple[list[Edit], list[Manual]]:
        edits: list[Edit] = []
        by_pos = {(f.location.line, f.location.column): f for f in findings}
        for node in list(ctx.positions):
            if not (isinstance(node, cst.Call) and len(node.args) == 1  # the cheap syntactic test first
                    and (cst.helpers.get_full_name_for_node(node.func) or "").endswith("set_default_tensor_type")
                    and "torch.set_default_tensor_type" in ctx.names(node.func)):
                continue
            arg = node.args[0].value
            if not (string_value(arg) == "torch.cuda.FloatTensor" or "torch.cuda.FloatTensor" in ctx.names(arg)):
                continue
            pos = ctx.positions[arg].start
            finding = by_pos.get((pos.line, pos.column + 1))
            scoped = device_in_scope(ctx, node)
            target = cst.Name(scoped) if scoped else helper_call()
            new = cst.Call(expr("torch.set_default_device"), [cst.Arg(target)])
            edits.append(Edit(node, lambda n, new=new: new, "API102", ctx.line_of(node),
                              f"set_default_tensor_type(torch.cuda.FloatTensor) -> set_default_device({scoped or '_mpsready_device()'})",
                              helper=scoped is None, finding=finding))
        return edits, []
