"""EXT104 ``cupy-kernel`` and EXT106 ``pycuda-kernel``: CUDA C compiled at run time (``cupy.RawKernel``,
``RawModule``, ``ElementwiseKernel``, ``ReductionKernel``; ``pycuda.compiler.SourceModule``). Lowered to
degrades when the library is imported under try/except with a fallback (``visitor.kernel``)."""

from __future__ import annotations

import ast

from mpsready.scan.code.units import on
from mpsready.scan.rules import extensions as E

CUPY = ("cupy.RawKernel", "cupy.RawModule", "cupy.ElementwiseKernel", "cupy.ReductionKernel")


@on(ast.Call)
def check(v, node: ast.Call, name: str, attr: str | None) -> None:
    if name in CUPY:
        v.kernel(E.CUPY_KERNEL, node, f"CuPy {name.rsplit('.', 1)[-1]}", "cupy")
    elif name == "pycuda.compiler.SourceModule":
        v.kernel(E.PYCUDA_KERNEL, node, "PyCUDA SourceModule compiles CUDA C at run time", "pycuda")
