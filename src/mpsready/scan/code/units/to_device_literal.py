"""API103 ``cuda-device-literal`` for ``x.to("cuda")``, ``x.to(f"cuda:{rank}")`` and ``x.to(dev)`` where ``dev``
was assigned such a literal (a device-named variable is reported where it is assigned instead). ``device=``
keywords are judged by :mod:`device_kwargs`."""

from __future__ import annotations

import ast

from mpsready.scan.code.astutil import cuda_text, is_cuda_literal
from mpsready.scan.code.units import on
from mpsready.scan.rules import api as A


@on(ast.Call)
def check(v, node: ast.Call, name: str, attr: str | None) -> None:
    if attr != "to":
        return
    for arg in node.args[:1]:
        value, line = v.string_value(arg)
        text = cuda_text(arg)
        value = value if value is not None else text
        if value is not None and (is_cuda_literal(value) or value == text) and not v.flagged_name(arg):
            where = f" (assigned at line {line})" if line else ""
            v.add(A.CUDA_DEVICE_LITERAL, node, f".to({value!r}){where}: a hard-coded CUDA device")
