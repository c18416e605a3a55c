"""API113 ``pin-memory`` for the ``x.pin_memory()`` method and the ``pin_memory=True`` keyword of any call
(``DataLoader(..., pin_memory=True)``)."""

from __future__ import annotations

import ast

from mpsready.scan.code.units import on
from mpsready.scan.rules import api as A


@on(ast.Call)
def check(v, node: ast.Call, name: str, attr: str | None) -> None:
    if attr == "pin_memory" and not node.args:
        v.add(A.PIN_MEMORY, node, ".pin_memory(): pinned host memory helps CUDA copies only")
    for kw in node.keywords:
        if kw.arg == "pin_memory" and isinstance(kw.value, ast.Constant) and kw.value.value is True:
            v.add(A.PIN_MEMORY, kw.value, "pin_memory=True: pinned host memory helps CUDA copies only")
