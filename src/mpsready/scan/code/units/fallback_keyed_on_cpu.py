"""EXT108 ``fallback-keyed-on-cpu``: ``if x.device.type == "cpu": <pure path>`` with a custom autograd Function
(``X.apply(...)``) in the other branch (or after the ``if``): MPS tensors take the CUDA branch."""

from __future__ import annotations

import ast

from mpsready.scan.code.analyzer import _is_cpu_test, _walk
from mpsready.scan.code.units import on
from mpsready.scan.rules import extensions as E


@on(ast.FunctionDef, ast.AsyncFunctionDef)
def check(v, fn: ast.FunctionDef) -> None:
    body = fn.body
    for i, st in enumerate(body):
        if not (isinstance(st, ast.If) and _is_cpu_test(st.test)):
            continue
        rest = st.orelse or body[i + 1:]
        if any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "apply"
               for part in rest for n in _walk(part)):
            v.add(E.FALLBACK_KEYED_ON_CPU, st, f"{fn.name}(): the pure-PyTorch path is chosen by a 'cpu' test, "
                  "so MPS tensors reach the CUDA kernel", evidence={"function": fn.name})
