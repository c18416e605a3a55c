"""API114 ``torch-compile`` for ``torch.compile`` used as a name or called, and as a decorator (before any kernel
decorator, which decides the function's finding instead)."""

from __future__ import annotations

import ast

from mpsready.scan.code.units import QualifiedName, on
from mpsready.scan.code.units.kernel_decorators import kernel_library
from mpsready.scan.rules import api as A


@on(ast.FunctionDef, ast.AsyncFunctionDef)
def check_decorators(v, fn: ast.FunctionDef) -> None:
    for dec in fn.decorator_list:
        if kernel_library(v, dec) is not None:
            return
        target = dec.func if isinstance(dec, ast.Call) else dec
        if (v.q(target) or "") == "torch.compile":
            v.add(A.TORCH_COMPILE, dec, f"@torch.compile on {fn.name}()")


@on(QualifiedName)
def check(v, node: ast.AST, name: str) -> bool:
    if name == "torch.compile":
        v.add(A.TORCH_COMPILE, node, "torch.compile: MPS support depends on the PyTorch version")
        return True
    return False
