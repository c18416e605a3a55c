"""API103 (detected here): ``torch.load(f)`` without ``map_location`` -> ``map_location=None if CUDA else "cpu"``.

Without ``map_location`` every tensor is restored to the device it was saved from (PyTorch 2.13.0
torch/serialization.py, ``default_restore_location``): a checkpoint saved on CUDA raises on a Mac.
No scan rule reports this (it is not visible without the checkpoint), so the transform finds the
calls itself. On a CUDA machine ``None`` keeps the original behaviour exactly; elsewhere everything
is restored to the CPU, from where ``load_state_dict`` (and the code's own ``.to(device)``) moves it.
Mapping straight to the selected device was tried and is wrong: data sets and arrays read with
``torch.load`` are then on the GPU, and host code (``.numpy()``, PIL, DataLoader workers) breaks.
"""

from __future__ import annotations

import libcst as cst

from mpsready.findings import Finding
from mpsready.migrate.common import append_arg, expr, kwarg
from mpsready.migrate.interface import Edit, FileContext, Manual, Transform
from mpsready.migrate.specs.torch_load import SPEC


MAP_LOCATION = 'None if torch.cuda.is_available() else "cpu"'


class TorchLoad(Transform):
    codes = SPEC.codes  # what it answers and fixes: specs/torch_load.py
    detects = True
    words = ("torch.load", "import load")

    def plan(self, ctx: FileContext, findings: list[Finding]) -> tuple[list[Edit], list[Manual]]:
        edits: list[Edit] = []
        for node in ctx.of_type(cst.Call):
            if not ((cst.helpers.get_full_name_for_node(node.func) or "").endswith("load")
                    and "torch.load" in ctx.names(node.func)):
                continue
            if any(a.star for a in node.args) or len([a for a in node.args if a.keyword is None]) > 1 \
                    or any(a.keyword is not None and a.keyword.value == "map_location" for a in node.args):
                continue
            def rewrite(n: cst.CSTNode) -> cst.CSTNode:
                assert isinstance(n, cst.Call)
                return n.with_changes(args=append_arg(list(n.args), kwarg("map_location", expr(MAP_LOCATION))))

            edits.append(Edit(node, rewrite, "API103", ctx.line_of(node),
                              f"torch.load without map_location -> map_location={MAP_LOCATION}"))
        return edits, []
