"""API117 ``device-generator``: ``torch.Generator(device)`` on anything but the CPU (a literal other than
'cpu', or a device variable): each backend has its own random stream."""

from __future__ import annotations

import ast

from mpsready.scan.code.astutil import kwarg
from mpsready.scan.code.units import on
from mpsready.scan.rules import api as A


@on(ast.Call)
def check(v, node: ast.Call, name: str, attr: str | None) -> None:
    if name != "torch.Generator":
        return
    dev = node.args[0] if node.args else kwarg(node, "device")
    value, _ = v.string_value(dev) if dev is not None else (None, None)
    if dev is not None and value != "cpu":
        v.add(A.DEVICE_GENERATOR, node, "torch.Generator on a device: its random stream differs between MPS "
              "and CUDA for the same seed")
