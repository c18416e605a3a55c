"""EXT103 ``triton-kernel`` and EXT105 ``numba-cuda-kernel`` for functions decorated ``@triton.jit``
(``autotune``, ``heuristics``) or ``@numba.cuda.jit`` (``cuda.jit`` when ``cuda`` is numba's); degrades when the
library is imported under a try/except with a fallback (``visitor.kernel``). The first kernel decorator decides."""

from __future__ import annotations

import ast

from mpsready.scan.code.units import on
from mpsready.scan.rules import extensions as E

TRITON = ("triton.jit", "triton.autotune", "triton.heuristics")
NUMBA = ("numba.cuda.jit", "numba.cuda.reduce")


def kernel_library(v, decorator: ast.AST) -> str | None:
    """'triton' or 'numba' for a kernel decorator, else None."""
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    name = v.q(target) or ""
    if name in TRITON:
        return "triton"
    if name in NUMBA or (name == "cuda.jit" and not v.aliases.is_imported("cuda")):
        return "numba"
    return None


@on(ast.FunctionDef, ast.AsyncFunctionDef)
def check(v, fn: ast.FunctionDef) -> None:
    for dec in fn.decorator_list:
        lib = kernel_library(v, dec)
        if lib == "triton":
            v.kernel(E.TRITON_KERNEL, fn, f"Triton kernel {fn.name}()", lib)
            return
        if lib == "numba":
            v.kernel(E.NUMBA_CUDA_KERNEL, fn, f"Numba CUDA kernel {fn.name}()", lib)
            return

