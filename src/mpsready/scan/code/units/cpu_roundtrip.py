"""API116 ``cpu-roundtrip``: ``f(x.cpu(), ...).to(dev)`` (or ``.cuda()``): a call on CPU copies whose result is
moved back to a device, a project-level CPU fallback paid on every call."""

from __future__ import annotations

import ast

from mpsready.scan.code.astutil import receiver
from mpsready.scan.code.units import on
from mpsready.scan.rules import api as A


@on(ast.Call)
def check(v, node: ast.Call, name: str, attr: str | None) -> None:
    if attr not in ("to", "cuda"):
        return
    inner = receiver(node)
    if not isinstance(inner, ast.Call) or isinstance(inner.func, ast.Attribute) and inner.func.attr == "cpu":
        return
    if any(isinstance(a, ast.Call) and isinstance(a.func, ast.Attribute) and a.func.attr == "cpu" for a in inner.args):
        callee = v.q(inner.func) or "a function"
        v.add(A.CPU_ROUNDTRIP, node, f"{callee}() runs on CPU copies and its result is moved back: a device "
              "round trip on every call")
