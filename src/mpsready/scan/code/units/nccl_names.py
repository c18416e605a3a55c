"""API107 ``nccl-backend`` for ``cupy.cuda.nccl*`` and ``torch.distributed.nccl*`` names (scope
``distributed``); ``torch.cuda.nccl`` is judged from the torch.cuda table (:mod:`torch_cuda_names`)."""

from __future__ import annotations

import ast

from mpsready.scan.code.units import QualifiedName, on
from mpsready.scan.rules import api as A


@on(QualifiedName)
def check(v, node: ast.AST, name: str) -> bool:
    if name.startswith("cupy.cuda.nccl") or name.startswith("torch.distributed.nccl"):
        v.add(A.NCCL, node, f"{name}: NCCL is not available on macOS", scope="distributed")
        return True
    return False
