"""API101: ``x.cuda()`` / ``x.cuda(i)`` -> ``x.to(device)``.

``Tensor.cuda(device=None, non_blocking=False, memory_format=...)`` and ``Module.cuda(device=None)``
(PyTorch 2.13.0 torch/_tensor_docs.py, torch/nn/modules/module.py) both equal ``.to(<that CUDA
device>, ...)``; ``Module.to`` returns the module as ``Module.cuda`` does. The device is the one the code
around it uses (:func:`mpsready.migrate.device_source.resolve`): the device in scope, a module input's
``.device``, else the helper (which keeps index ``i`` on CUDA) in a project without a selection of its own.
"""

from __future__ import annotations

import libcst as cst

from mpsready.findings import Finding
from mpsready.migrate.device_source import resolve
from mpsready.migrate.interface import Edit, FileContext, Manual, Transform, manual
from mpsready.migrate.specs.dot_cuda import SPEC


class DotCuda(Transform):
    codes = SPEC.codes  # what it answers and fixes: specs/dot_cuda.py

    def plan(self, ctx: FileContext, findings: list[Finding]) -> tuple[list[Edit], list[Manual]]:
        edits, manuals = [], []
        for f in findings:
            if (f.evidence or {}).get("guarded"):
                continue  # behind a CUDA check: never runs on a Mac, and right as it is on CUDA
            call = next((n for n in ctx.nodes_of(f)
                         if isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute)
                         and n.func.attr.value == "cuda"), None)
            if call is None:
                manuals.append(manual(f, "the .cuda() call was not found at this position"))
                continue
            index = [a for a in call.args if a.keyword is None] + [a for a in call.args if a.keyword
                                                                   and a.keyword.value == "device"]
            rest = [a for a in call.args if a.keyword is not None and a.keyword.value != "device"]
            if len(index) > 1 or any(a.star for a in call.args):
                manuals.append(manual(f, ".cuda() with unusual arguments"))
                continue
            found = resolve(ctx, call, index[0].value if index else None)
            if isinstance(found, str):
                manuals.append(manual(f, found))
                continue
            target, uses_helper, what = found.expr, found.helper, f".cuda() -> .to({found.shown})"

            def rewrite(node: cst.CSTNode, target=target, rest=rest) -> cst.CSTNode:
                assert isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)
                kept = [a for a in node.args if a.keyword is not None and a.keyword.value != "device"]
                args = [cst.Arg(target, comma=cst.MaybeSentinel.DEFAULT)] + kept
                args = [a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in args]
                return node.with_changes(func=node.func.with_changes(attr=cst.Name("to")), args=args)

            edits.append(Edit(call, rewrite, f.code, ctx.line_of(call), what, helper=uses_helper, finding=f))
        return edits, manuals
