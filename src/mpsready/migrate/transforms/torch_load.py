"""API103 (detected here): ``torch.load(f)`` without ``map_location`` -> ``torch.load(f, map_location=<device>)``.

Without ``map_location`` every tensor is restored to the device it was saved from (PyTorch 2.13.0
torch/serialization.py, ``default_restore_location``): a checkpoint saved on CUDA raises on a Mac.
No scan rule reports this (it is not visible without the checkpoint), so the transform finds the
calls itself. The device is the variable ``device`` in scope, else the helper; a result read on the
host at once (``torch.load(f).numpy()``, ``.tolist()``, ``.item()``) is mapped to ``"cpu"`` instead,
where it was before on a CUDA machine too (a CUDA tensor has no ``.numpy()``).
"""

from __future__ import annotations

import libcst as cst

from mpsready.findings import Finding
from mpsready.migrate.common import device_in_scope, helper_call
from mpsready.migrate.interface import Edit, FileContext, Manual, Transform


HOST_READS = ("numpy", "tolist", "item")


class TorchLoad(Transform):
    codes = ("API103",)
    detects = True
    words = ("load",)

    def plan(self, ctx: FileContext, findings: list[Finding]) -> tuple[list[Edit], list[Manual]]:
        edits: list[Edit] = []
        for node in list(ctx.positions):
            if not (isinstance(node, cst.Call) and "torch.load" in ctx.names(node.func)):
                continue
            if any(a.star for a in node.args) or len([a for a in node.args if a.keyword is None]) > 1 \
                    or any(a.keyword is not None and a.keyword.value == "map_location" for a in node.args):
                continue
            parent = ctx.parents.get(node)
            host = isinstance(parent, cst.Attribute) and parent.attr.value in HOST_READS
            scoped = None if host else device_in_scope(ctx, node)
            target = cst.SimpleString('"cpu"') if host else cst.Name(scoped) if scoped else helper_call()

            def rewrite(n: cst.CSTNode, target=target) -> cst.CSTNode:
                assert isinstance(n, cst.Call)
                arg = cst.Arg(target, keyword=cst.Name("map_location"),
                              equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")))
                args = [a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in n.args]
                return n.with_changes(args=[*args, arg])

            edits.append(Edit(node, rewrite, "API103", ctx.line_of(node),
                              "torch.load without map_location -> map_location="
                              + ("'cpu'" if host else scoped or "_mpsready_device()"), helper=not host and scoped is None))
        return edits, []
