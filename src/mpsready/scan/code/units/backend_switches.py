"""API105 ``cudnn-flags`` and API106 ``tf32-switch`` for ``torch.backends.cudnn.*`` / ``torch.backends.cuda.*``
settings and ``torch.set_float32_matmul_precision``: the TF32 and reduced-precision switches are API106, the
other backend settings (``benchmark``, ``deterministic``, ``sdp_kernel``) API105; none has an effect on MPS."""

from __future__ import annotations

import ast

from mpsready.scan.code.units import QualifiedName, on
from mpsready.scan.rules import api as A

PRECISION = ("allow_tf32", "allow_fp16_reduced_precision_reduction", "allow_bf16_reduced_precision_reduction")


@on(QualifiedName)
def check(v, node: ast.AST, name: str) -> bool:
    if name.startswith("torch.backends.cudnn.") or name.startswith("torch.backends.cuda."):
        if name.endswith(PRECISION):
            v.add(A.TF32_SWITCH, node, f"{name}: a CUDA precision switch with no effect on MPS")
        elif name == "torch.backends.cuda.sdp_kernel":
            # The reproducibility hint of API105 does not fit an attention-backend switch. PyTorch 2.13.0
            # torch/backends/cuda/__init__.py: sdp_kernel is deprecated (FutureWarning) and wraps
            # torch.nn.attention.sdpa_kernel, which takes a list of SDPBackend values on every device.
            v.add(A.CUDNN_FLAGS, node, f"{name}: a cuDNN/CUDA backend setting with no effect on MPS",
                  fix="Use torch.nn.attention.sdpa_kernel([SDPBackend....]) (sdp_kernel is deprecated); "
                      "keep SDPBackend.MATH in the list so devices without flash attention have a path.")
        else:
            v.add(A.CUDNN_FLAGS, node, f"{name}: a cuDNN/CUDA backend setting with no effect on MPS")
        return True
    if name == "torch.set_float32_matmul_precision":
        v.add(A.TF32_SWITCH, node, "torch.set_float32_matmul_precision: selects TF32 on CUDA; MPS matmuls stay float32")
        return True
    return False
