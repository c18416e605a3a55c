"""API101 ``dot-cuda-call``: ``x.cuda()`` / ``model.cuda()`` on a tensor or module (not ``torch.cuda`` itself,
not a ``cuda`` attribute of an imported module such as ``numba.cuda``)."""

from __future__ import annotations

import ast

from mpsready.scan.code.units import on
from mpsready.scan.rules import api as A


@on(ast.Call)
def check(v, node: ast.Call, name: str, attr: str | None) -> None:
    func = node.func  # an Attribute whenever attr is set
    if attr == "cuda" and isinstance(func, ast.Attribute) and not name.startswith("torch.cuda") \
            and not v.is_module(func.value):
        v.add(A.DOT_CUDA, node, ".cuda() moves to CUDA; on a Mac it raises 'Torch not compiled with CUDA enabled'")
