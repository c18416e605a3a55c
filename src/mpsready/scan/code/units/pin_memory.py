"""API113 ``pin-memory`` for the ``x.pin_memory()`` method (the ``pin_memory=True`` keyword is checked with
the device keywords of every call)."""

from __future__ import annotations

import ast

from mpsready.scan.code.units import on
from mpsready.scan.rules import api as A


@on(ast.Call)
def check(v, node: ast.Call, name: str, attr: str | None) -> None:
    if attr == "pin_memory" and not node.args:
        v.add(A.PIN_MEMORY, node, ".pin_memory(): pinned host memory helps CUDA copies only")
