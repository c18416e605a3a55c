"""DTY102: a float64 NumPy array moved to the device before its cast -> cast first.

``torch.from_numpy(a).to(dev).float()`` -> ``torch.from_numpy(a).float().to(dev)``: the value that
reaches the device is the same float32 tensor (casting and moving commute), but MPS never sees
float64, which it refuses ("MPS framework doesn't support float64", pytorch/pytorch#79019). When no
float32 cast follows the move, the tensor stays float64 on the device and later code may need it in
float64: that case is listed for the user, never cast silently.
"""

from __future__ import annotations

import libcst as cst

from mpsready.findings import Finding
from mpsready.migrate.interface import Edit, FileContext, Manual, Transform, manual
from mpsready.migrate.specs.numpy_float64 import SPEC

CASTS = ("float",)


class NumpyFloat64(Transform):
    codes = SPEC.codes  # what it answers and fixes: specs/numpy_float64.py

    def plan(self, ctx: FileContext, findings: list[Finding]) -> tuple[list[Edit], list[Manual]]:
        edits: list[Edit] = []
        manuals: list[Manual] = []
        for f in findings:
            to_call = next((n for n in ctx.nodes_of(f)
                            if isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute)
                            and n.func.attr.value == "to"), None)
            attr = ctx.parents.get(to_call) if to_call is not None else None
            cast = ctx.parents.get(attr) if isinstance(attr, cst.Attribute) else None
            if not (isinstance(attr, cst.Attribute) and attr.attr.value in CASTS and isinstance(cast, cst.Call)
                    and cast.func is attr and not cast.args):
                manuals.append(manual(f, "float64 reaches the device with no float32 cast after it: check the value "
                                         "is not needed in float64 later, then add .float() before .to()"))
                continue
            assert to_call is not None and isinstance(to_call.func, cst.Attribute)
            name = attr.attr.value

            def rewrite(n: cst.CSTNode, name=name) -> cst.CSTNode:
                # n is X.to(dev).float(): rebuild as X.float().to(dev)
                assert isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute)
                inner = n.func.value
                assert isinstance(inner, cst.Call) and isinstance(inner.func, cst.Attribute)
                recv = inner.func.value
                casted = cst.Call(cst.Attribute(recv, cst.Name(name)))
                return inner.with_changes(func=inner.func.with_changes(value=casted))

            edits.append(Edit(cast, rewrite, f.code, ctx.line_of(cast), f".to(dev).{name}() -> .{name}().to(dev)",
                              finding=f))
        return edits, manuals
