"""API103 ``cuda-device-literal`` for a device-named variable assigned a CUDA device: ``device = "cuda"``,
``dev: str = "cuda:0"``, ``map_location = f"cuda:{rank}"`` (names only; an attribute such as ``self.device``
is not reported here). Later uses of the name (``.to(device)``) are not reported again."""

from __future__ import annotations

import ast

from mpsready.scan.code.astutil import cuda_text, device_like_name, is_cuda_literal
from mpsready.scan.code.units import on
from mpsready.scan.rules import api as A


@on(ast.Assign)
def check(v, node: ast.Assign) -> None:
    lit = v.literal(node.value)
    for target in node.targets:
        if not isinstance(target, ast.Name) or not device_like_name(target.id):
            continue
        if lit is not None and is_cuda_literal(lit):
            v.add(A.CUDA_DEVICE_LITERAL, node, f"{target.id} = {lit!r}: a hard-coded CUDA device")
        elif lit is None and cuda_text(node.value):
            v.add(A.CUDA_DEVICE_LITERAL, node, f"{target.id} = {cuda_text(node.value)!r}: a hard-coded "
                  "CUDA device")


@on(ast.AnnAssign)
def check_annotated(v, node: ast.AnnAssign) -> None:
    if isinstance(node.target, ast.Name) and node.value is not None:
        lit = v.literal(node.value)
        if lit is not None and is_cuda_literal(lit) and device_like_name(node.target.id):
            v.add(A.CUDA_DEVICE_LITERAL, node, f"{node.target.id} = {lit!r}: a hard-coded CUDA device")
