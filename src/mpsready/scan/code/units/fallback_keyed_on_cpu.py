"""EXT108 ``fallback-keyed-on-cpu``: ``if x.device.type == "cpu": <pure path>`` with a custom autograd Function
(``X.apply(...)``) in the other branch (or after the ``if``): MPS tensors take the CUDA branch."""

from __future__ import annotations

import ast

from mpsready.scan.code.astutil import is_cpu_test, is_cuda_type_test, walk
from mpsready.scan.code.units import on
from mpsready.scan.rules import extensions as E


@on(ast.FunctionDef, ast.AsyncFunctionDef)
def check(v, fn: ast.FunctionDef) -> None:
    body = fn.body
    for i, st in enumerate(body):
        if not isinstance(st, ast.If):
            continue
        cuda_body = is_cuda_type_test(st.test)
        if cuda_body is not None:  # keyed on CUDA: the portable path serves MPS tensors (recorded, no finding)
            cuda_side = st.body if cuda_body else (st.orelse or body[i + 1:])
            if _applies(cuda_side):
                v.result.device_dispatch.append(st.lineno)
            continue
        if not is_cpu_test(st.test):
            continue
        rest = st.orelse or body[i + 1:]
        if _applies(rest):
            v.add(E.FALLBACK_KEYED_ON_CPU, st, f"{fn.name}(): the pure-PyTorch path is chosen by a 'cpu' test, "
                  "so MPS tensors reach the CUDA kernel", evidence={"function": fn.name})


def _applies(stmts: list[ast.stmt]) -> bool:
    """Whether the statements call a custom autograd Function (``X.apply(...)``)."""
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "apply"
               for part in stmts for n in walk(part))
