"""API119 ``cuda-default-tensor-type``: ``torch.set_default_tensor_type("torch.cuda.FloatTensor")`` (or the
class ``torch.cuda.FloatTensor``) and ``torch.set_default_device("cuda")``: device-less factories then
allocate on CUDA."""

from __future__ import annotations

import ast

from mpsready.scan.code.astutil import is_cuda_literal
from mpsready.scan.code.units import on
from mpsready.scan.rules import api as A


@on(ast.Call)
def check(v, node: ast.Call, name: str, attr: str | None) -> None:
    if name not in ("torch.set_default_tensor_type", "torch.set_default_device") or not node.args:
        return
    arg = node.args[0]
    value, _ = v.string_value(arg)
    qual = v.q(arg) or ""
    if (value is not None and ("cuda" in value.split(".") or is_cuda_literal(value))) or qual.startswith("torch.cuda."):
        shown = value if value is not None else qual
        v.add(A.CUDA_DEFAULT_TENSOR_TYPE, node, f"{name.rsplit('.', 1)[-1]}({shown!r}): device-less factories "
              "allocate on CUDA")
