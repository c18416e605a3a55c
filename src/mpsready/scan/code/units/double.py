"""DTY101 ``float64`` for ``.double()``: a blocker on the forward path; info on a CPU tensor made from NumPy
(``t = torch.from_numpy(w); t.double()``) or by a factory without ``device=``, where float64 works as long as it
is not moved to MPS, and on a tensor just moved to the CPU (``x.cpu().double()``, issue 32)."""

from __future__ import annotations

import ast

from mpsready.findings import Severity
from mpsready.scan.code.astutil import receiver
from mpsready.scan.code.units import on
from mpsready.scan.rules import dtypes as T


@on(ast.Call)
def check(v, node: ast.Call, name: str, attr: str | None) -> None:
    if attr != "double" or node.args or node.keywords:
        return
    recv = receiver(node)
    if on_cpu(recv):
        # issue 32: `x.cpu().double()`, `x.detach().to("cpu").double()`: float64 made on the CPU, legal on a Mac
        v.add(T.FLOAT64, node, ".double() on a tensor just moved to the CPU: float64 works on the CPU (it must not "
              "be moved to MPS)", severity=Severity.INFO, evidence={"cpu_tensor": "moved to the CPU"})
    elif isinstance(recv, ast.Name) and (recv.id in v.cpu_vars or recv.id in v.torch_f64_vars):
        made = "made from NumPy" if recv.id in v.cpu_vars else "made without device="
        v.add(T.FLOAT64, node, f".double() on {recv.id}, a CPU tensor {made}: float64 works on the "
              "CPU (it must not be moved to MPS)", severity=Severity.INFO, evidence={"cpu_tensor": recv.id})
    else:
        v.add(T.FLOAT64, node, ".double() makes a float64 tensor; MPS has no float64")


_KEEPS_DEVICE = ("detach", "clone", "contiguous", "float", "squeeze", "unsqueeze", "view", "reshape", "flatten")


def on_cpu(recv: ast.AST | None) -> bool:
    """Whether a method chain ends on the CPU: ``x.cpu()`` or ``x.to("cpu")``, possibly followed by calls that
    keep the device (``.detach()``, ``.clone()``, ``.view(...)``)."""
    while isinstance(recv, ast.Call) and isinstance(recv.func, ast.Attribute):
        attr = recv.func.attr
        if attr == "cpu" and not recv.args:
            return True
        if attr == "to" and recv.args and isinstance(recv.args[0], ast.Constant) and recv.args[0].value == "cpu":
            return True
        if attr not in _KEEPS_DEVICE:
            return False
        recv = recv.func.value
    return False
