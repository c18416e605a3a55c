"""DTY101 ``float64`` (``torch.float64``/``torch.double``), DTY104 ``complex-dtype`` (complex128 is a blocker,
complex64/32 need macOS 14 and a supported operator) and DTY103 ``bfloat16`` for dtype names; a dtype named
in a comparison or a dict (``x.dtype == torch.float64``, ``{np.float64: torch.float64}``) makes no tensor and
is not reported. A float64 tensor made by a factory without ``device=`` (a CPU tensor, legal on a Mac) is DTY101
info; the analyser reports its move to a device before a cast as the blocker instead."""

from __future__ import annotations

import ast

from mpsready.findings import Severity
from mpsready.scan.code.astutil import DTYPE_NAMES
from mpsready.scan.code.units import QualifiedName, on
from mpsready.scan.rules import dtypes as T


@on(QualifiedName)
def check(v, node: ast.AST, name: str) -> bool:
    if name not in DTYPE_NAMES:
        return False
    if v.passive_dtype:
        return True
    if name in ("torch.float64", "torch.double") and id(node) in v.cpu_f64_nodes:
        v.add(T.FLOAT64, node, f"{name} tensor made on the CPU (no device=): fine on a Mac unless it moves to MPS "
              "before a cast", severity=Severity.INFO, evidence={"cpu_tensor": v.cpu_f64_nodes[id(node)]})
    elif name in ("torch.float64", "torch.double"):
        v.add(T.FLOAT64, node, f"{name}: MPS has no float64")
    elif name in ("torch.complex128", "torch.cdouble"):
        v.add(T.COMPLEX, node, f"{name}: MPS has no complex128", severity=Severity.BLOCKER)
    elif name in ("torch.complex64", "torch.cfloat", "torch.complex32", "torch.chalf"):
        v.add(T.COMPLEX, node, f"{name}: complex on MPS needs macOS 14 and a supported operator")
    else:
        v.add(T.BFLOAT16, node, "torch.bfloat16: MPS needs PyTorch >= 2.3 and macOS 14")
    return True
