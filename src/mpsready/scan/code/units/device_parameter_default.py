"""API103 ``cuda-device-literal`` for a device-named parameter whose default is a CUDA literal
(``def load(path, device="cuda")``, positional or keyword-only)."""

from __future__ import annotations

import ast

from mpsready.scan.code.analyzer import _device_like_name, is_cuda_literal
from mpsready.scan.code.units import on
from mpsready.scan.rules import api as A


@on(ast.FunctionDef, ast.AsyncFunctionDef)
def check(v, fn: ast.FunctionDef) -> None:
    args = fn.args
    positional = [*args.posonlyargs, *args.args]
    pairs = list(zip(positional[len(positional) - len(args.defaults):], args.defaults))
    pairs += [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None]
    for arg, default in pairs:
        lit = v._literal(default)
        if lit is not None and is_cuda_literal(lit) and _device_like_name(arg.arg):
            v.add(A.CUDA_DEVICE_LITERAL, default, f"parameter {arg.arg} defaults to {lit!r}")
