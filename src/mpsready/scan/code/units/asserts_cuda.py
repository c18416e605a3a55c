"""API120 ``asserts-cuda-tensor``: ``assert x.is_cuda`` (alone or in an ``and`` chain) outside a CUDA guard:
the function exists only for CUDA tensors (svox2's fused renderer). Inside ``if x.is_cuda:`` it is info."""

from __future__ import annotations

import ast

from mpsready.scan.code.analyzer import _dotted
from mpsready.scan.code.units import on
from mpsready.scan.rules import api as A


@on(ast.Assert)
def check(v, node: ast.Assert) -> None:
    test = node.test
    parts = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else [test]
    for part in parts:
        if isinstance(part, ast.Attribute) and part.attr == "is_cuda":
            v.add(A.ASSERTS_CUDA, node, f"assert {_dotted(part) or 'x.is_cuda'}: this path exists only for CUDA "
                  "tensors", evidence={"no_alternative": True})
            return
