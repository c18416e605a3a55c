"""API113: ``pin_memory=True`` -> ``pin_memory=torch.cuda.is_available()``.

Pinned memory speeds up host-to-CUDA copies only; on MPS it warns or does nothing (the ``_pin_memory``
MPS kernel was removed in PyTorch 2.5, native_functions.yaml). On a CUDA machine the value stays True.
``.pin_memory()`` method calls are listed as manual (the tensor would have to be named twice).
"""

from __future__ import annotations

import libcst as cst

from mpsready.findings import Finding
from mpsready.migrate.common import expr, under_cuda_guard
from mpsready.migrate.interface import Edit, FileContext, Manual, Transform, kept, manual
from mpsready.migrate.specs.pin_memory import SPEC


class PinMemory(Transform):
    codes = SPEC.codes  # what it answers and fixes: specs/pin_memory.py

    def plan(self, ctx: FileContext, findings: list[Finding]) -> tuple[list[Edit], list[Manual]]:
        edits: list[Edit] = []
        manuals: list[Manual] = []
        for f in findings:
            node = next((n for n in ctx.nodes_of(f)
                         if isinstance(n, cst.Name) and n.value == "True"), None)
            arg = ctx.parents.get(node) if node is not None else None
            if not (isinstance(arg, cst.Arg) and arg.keyword is not None and arg.keyword.value == "pin_memory"):
                call = next((n for n in ctx.nodes_of(f)
                             if isinstance(n, cst.Call)), None)
                if call is not None and under_cuda_guard(ctx, call):
                    manuals.append(kept(f, ".pin_memory() already runs only when CUDA is used"))
                    continue
                manuals.append(manual(f, "Tensor.pin_memory() raises without an accelerator: call it only when "
                                         "torch.cuda.is_available()"))
                continue
            assert node is not None  # the Arg test above failed for None
            edits.append(Edit(node, lambda _n: expr("torch.cuda.is_available()"), f.code, ctx.line_of(node),
                              "pin_memory=True -> pin_memory=torch.cuda.is_available()", finding=f))
        return edits, manuals
