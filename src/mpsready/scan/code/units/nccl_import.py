"""API107 ``nccl-backend`` for ``from torch.cuda import nccl`` and ``from torch.cuda.nccl import ...``
(scope ``distributed``); other ``torch.cuda`` names are judged where they are used (:mod:`torch_cuda_names`)."""

from __future__ import annotations

import ast

from mpsready.scan.code.units import ImportedModule, on
from mpsready.scan.rules import api as A


@on(ImportedModule)
def check(v, node: ast.Import | ast.ImportFrom, module: str, guard: str | None) -> None:
    if not isinstance(node, ast.ImportFrom):
        return
    if (module == "torch.cuda" and any(a.name == "nccl" for a in node.names)) or module.startswith("torch.cuda.nccl"):
        v.add(A.NCCL, node, "imports torch.cuda.nccl (NCCL is not built into macOS PyTorch)", scope="distributed")
